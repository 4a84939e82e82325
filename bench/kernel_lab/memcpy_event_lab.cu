// What an event recorded after a contiguous device copy costs the GPU. The engine runs a
// contiguous device-to-device copy as one `cuMemcpyAsync` and records the copy on both
// sides' memory with one pooled `cuEventRecord` (CU_EVENT_DISABLE_TIMING) right after it;
// PyTorch's `copy_` is the runtime's `cudaMemcpyAsync` alone. Each variant is timed as the
// benchmarks time a copy (queued behind a 256 MiB read pass, CUDA events around it) and
// as 100 copies back to back (the events around the batch), the variants alternating in
// rounds, medians of the rounds. Build and run (on the GPU machine):
//   nvcc -O3 -arch=sm_90 -o memcpy_event_lab bench/kernel_lab/memcpy_event_lab.cu -lcuda
//   ./memcpy_event_lab
#include "lab_common.h"
#include <cuda.h>

#define CKD(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = 0; \
    cuGetErrorString(r_, &s_); fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1); } } while (0)

enum Variant { RUNTIME, DRIVER, DRIVER_EVENT, DRIVER_EVENT_TIMING, DRIVER_TWO_EVENTS, NVARIANTS };
static const char* NAMES[NVARIANTS] = {"cudaMemcpyAsync", "cuMemcpyAsync", "cuMemcpyAsync + event",
                                       "cuMemcpyAsync + timing event", "cuMemcpyAsync + 2 events"};

int main() {
    Lab lab;
    CKD(cuInit(0));
    CUstream st = (CUstream)lab.st;
    CUevent pool[2];
    CKD(cuEventCreate(&pool[0], CU_EVENT_DISABLE_TIMING));
    CKD(cuEventCreate(&pool[1], CU_EVENT_DISABLE_TIMING));
    CUevent timing;
    CKD(cuEventCreate(&timing, CU_EVENT_DEFAULT));
    const size_t sizes[] = {64 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 64 << 20, 256 << 20};
    const size_t maxb = 256 << 20;
    unsigned char *a, *b;
    CK(cudaMalloc(&a, maxb)); CK(cudaMalloc(&b, maxb));
    fill_random<<<4096, 256, 0, lab.st>>>(a, maxb, 7);
    CK(cudaMemsetAsync(b, 0xEE, maxb, lab.st));
    auto one = [&](int v, size_t n) {
        switch (v) {
        case RUNTIME: CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, lab.st)); break;
        case DRIVER: CKD(cuMemcpyAsync((CUdeviceptr)b, (CUdeviceptr)a, n, st)); break;
        case DRIVER_EVENT:
            CKD(cuMemcpyAsync((CUdeviceptr)b, (CUdeviceptr)a, n, st));
            CKD(cuEventRecord(pool[0], st));
            break;
        case DRIVER_EVENT_TIMING:
            CKD(cuMemcpyAsync((CUdeviceptr)b, (CUdeviceptr)a, n, st));
            CKD(cuEventRecord(timing, st));
            break;
        case DRIVER_TWO_EVENTS:
            CKD(cuMemcpyAsync((CUdeviceptr)b, (CUdeviceptr)a, n, st));
            CKD(cuEventRecord(pool[0], st));
            CKD(cuEventRecord(pool[1], st));
            break;
        }
    };
    printf("%-10s %-30s %12s %12s %14s\n", "bytes", "variant", "single us", "vs runtime", "batch us/copy");
    for (size_t n : sizes) {
        const int rounds = 9;
        std::vector<double> single[NVARIANTS], batch[NVARIANTS];
        for (int r = 0; r < rounds; ++r) {
            for (int v = 0; v < NVARIANTS; ++v) {
                single[v].push_back(1e3 * lab.median_ms([&] { one(v, n); }));
                for (int w = 0; w < 3; ++w) one(v, n);
                CK(cudaStreamSynchronize(lab.st));
                CK(cudaEventRecord(lab.e0, lab.st));
                for (int i = 0; i < 100; ++i) one(v, n);
                CK(cudaEventRecord(lab.e1, lab.st));
                CK(cudaEventSynchronize(lab.e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, lab.e0, lab.e1));
                batch[v].push_back(1e3 * ms / 100);
            }
        }
        auto med = [](std::vector<double> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
        const double base = med(single[RUNTIME]);
        for (int v = 0; v < NVARIANTS; ++v)
            printf("%-10zu %-30s %12.3f %12.3f %14.3f\n", n, NAMES[v], med(single[v]), base / med(single[v]),
                   med(batch[v]));
        if (lab.differing(a, b, n)) { printf("WRONG BYTES at %zu\n", n); return 1; }
    }
    printf("memcpy_event_lab: done\n");
    return 0;
}
