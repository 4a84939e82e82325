// Probe: how driver calls answer forged and dangling stream handles (each in a child).
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>

static CUcontext ctx;
typedef CUresult (*probe_fn)(CUstream);
static CUresult p_getctx(CUstream s) { CUcontext c; return cuStreamGetCtx(s, &c); }
static CUresult p_getid(CUstream s) { unsigned long long id; return cuStreamGetId(s, &id); }
static CUresult p_flags(CUstream s) { unsigned f; return cuStreamGetFlags(s, &f); }
static CUresult p_query(CUstream s) { return cuStreamQuery(s); }
static CUresult p_getdev(CUstream s) { CUdevice d; return cuStreamGetDevice(s, &d); }

static void run(const char *what, const char *call, probe_fn f, CUstream s) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        cuCtxSetCurrent(ctx);
        CUresult r = f(s);
        const char *n = "?"; cuGetErrorName(r, &n);
        printf("%-22s %-18s -> %s\n", what, call, n);
        fflush(stdout);
        _exit(0);
    }
    int st; waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) printf("%-22s %-18s -> SIGNAL %d\n", what, call, WTERMSIG(st));
}

int main(void) {
    cuInit(0);
    CUdevice d; cuDeviceGet(&d, 0);
    cuDevicePrimaryCtxRetain(&ctx, d);
    cuCtxSetCurrent(ctx);
    CUstream live, dead;
    cuStreamCreate(&live, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&dead, CU_STREAM_NON_BLOCKING);
    cuStreamDestroy(dead);
    void *zeros = calloc(1, 4096);
    void *junk = malloc(4096); for (int i = 0; i < 4096; i++) ((unsigned char*)junk)[i] = rand();
    struct { const char *n; CUstream s; } cases[] = {
        {"live", live}, {"destroyed", dead}, {"0x1234", (CUstream)0x1234},
        {"0xdeadbeef000", (CUstream)0xdeadbeef000ULL}, {"heap zeros", (CUstream)zeros},
        {"heap junk", (CUstream)junk}, {"legacy 1", (CUstream)1}, {"per-thread 2", (CUstream)2},
        {"-1", (CUstream)(intptr_t)-1}, {"fn pointer", (CUstream)(void*)&main},
    };
    struct { const char *n; probe_fn f; } calls[] = {
        {"cuStreamGetCtx", p_getctx}, {"cuStreamGetId", p_getid}, {"cuStreamGetFlags", p_flags},
        {"cuStreamQuery", p_query}, {"cuStreamGetDevice", p_getdev},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t j = 0; j < sizeof calls / sizeof *calls; j++)
            run(cases[i].n, calls[j].n, calls[j].f, cases[i].s);
    // A stream of a second context (non-primary) destroyed with its context.
    CUcontext c2; cuCtxCreate(&c2, NULL, 0, d); CUstream s2; cuStreamCreate(&s2, 0); cuCtxDestroy(c2);
    run("ctx destroyed", "cuStreamGetCtx", p_getctx, s2);
    return 0;
}
