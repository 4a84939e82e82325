// A stand-in for libcuda that does nothing: every driver call returns at once, so that
// stridekit's own host path (checks, planning, the record of GPU work, launches) can be
// timed and profiled on a machine without a GPU. Device "memory" is host memory that no
// kernel ever touches; nothing is copied. Build and use:
//   gcc -O2 -shared -fPIC -o /tmp/standin/libcuda.so.1 tools/standin_driver/libcuda_standin.c
//   ln -sf libcuda.so.1 /tmp/standin/libcuda.so
//   export LD_LIBRARY_PATH=/tmp/standin:<nvidia-cuda-nvrtc wheel>/nvidia/cu13/lib
//   STRIDEKIT_KERNEL_CACHE=/tmp/kc cargo run --release --example cold_start
// Timings with it are host time only: never compare them with a GPU's.
//
// `STANDIN_COUNT=1` counts the calls of each entry point and prints the counts to stderr
// when the process exits: run a program with N small copies and with 2N, and the
// difference over N is what one copy asks of the driver.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int CUresult;
static __thread void* cur_ctx = 0;
static char ctx_obj[64];
static long next_handle = 0x1000;

// Call counts: one slot per entry point, found by the address of its name (`__func__` is
// one array per function), filled under a lock only when counting is on.
#define STANDIN_SLOTS 160
static const char* count_names[STANDIN_SLOTS];
static unsigned long long count_calls[STANDIN_SLOTS];
static int counting = -1;
static void print_counts(void) {
  for (int i = 0; i < STANDIN_SLOTS && count_names[i]; i++)
    fprintf(stderr, "standin %-40s %llu\n", count_names[i], count_calls[i]);
}
static void count(const char* name) {
  if (counting < 0) {
    const char* v = getenv("STANDIN_COUNT");
    counting = v && *v && strcmp(v, "0") != 0;
    if (counting) atexit(print_counts);
  }
  if (!counting) return;
  static int lock = 0;
  while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) {}
  for (int i = 0; i < STANDIN_SLOTS; i++) {
    if (count_names[i] == name || !count_names[i]) {
      count_names[i] = name;
      count_calls[i]++;
      break;
    }
  }
  __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}
#define OK do { count(__func__); return 0; } while (0)
CUresult cuInit(unsigned f) { OK; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; OK; }
CUresult cuDeviceGetCount(int* n) { *n = 1; OK; }
CUresult cuDeviceGet(int* d, int o) { *d = o; OK; }
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  switch (attr) {
    case 75: *v = 9; break; case 76: *v = 0; break;  // compute capability
    case 1: *v = 1024; break; case 16: *v = 132; break; case 8: *v = 49152; break;
    case 97: *v = 232448; break; case 81: *v = 233472; break; case 82: *v = 65536; break;
    case 39: *v = 2048; break; case 10: *v = 32; break; case 106: *v = 32; break;
    default: *v = 1;
  }
  OK;
}
CUresult cuDeviceGetName(char* n, int len, int d) { strncpy(n, "Fake GPU", len); OK; }
CUresult cuDeviceTotalMem_v2(size_t* b, int d) { *b = 80ull << 30; OK; }
CUresult cuDeviceGetUuid(char* u, int d) { memset(u, 7, 16); OK; }
CUresult cuDeviceGetUuid_v2(char* u, int d) { memset(u, 7, 16); OK; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = ctx_obj; OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { OK; }
CUresult cuDevicePrimaryCtxRelease(int d) { OK; }
CUresult cuDevicePrimaryCtxGetState(int d, unsigned* f, int* a) { *f = 0; *a = 1; OK; }
CUresult cuDevicePrimaryCtxSetFlags_v2(int d, unsigned f) { OK; }
CUresult cuCtxSetCurrent(void* c) { cur_ctx = c; OK; }
CUresult cuCtxGetCurrent(void** c) { *c = cur_ctx; OK; }
CUresult cuCtxPushCurrent_v2(void* c) { cur_ctx = c; OK; }
CUresult cuCtxPopCurrent_v2(void** c) { if (c) *c = cur_ctx; OK; }
CUresult cuCtxGetDevice(int* d) { *d = 0; OK; }
CUresult cuCtxSynchronize(void) { OK; }
CUresult cuCtxGetFlags(unsigned* f) { *f = 0; OK; }
CUresult cuCtxSetFlags(unsigned f) { OK; }
CUresult cuCtxGetApiVersion(void* c, unsigned* v) { *v = 13000; OK; }
CUresult cuCtxGetLimit(size_t* v, int l) { *v = 0; OK; }
CUresult cuCtxEnablePeerAccess(void* c, unsigned f) { OK; }
CUresult cuCtxDisablePeerAccess(void* c) { OK; }
CUresult cuDeviceCanAccessPeer(int* v, int a, int b) { *v = 0; OK; }
CUresult cuStreamCreate(void** s, unsigned f) { *s = (void*)(next_handle += 16); OK; }
CUresult cuStreamCreateWithPriority(void** s, unsigned f, int p) { *s = (void*)(next_handle += 16); OK; }
CUresult cuStreamDestroy_v2(void* s) { OK; }
CUresult cuStreamSynchronize(void* s) { OK; }
CUresult cuStreamQuery(void* s) { OK; }
CUresult cuStreamWaitEvent(void* s, void* e, unsigned f) { OK; }
CUresult cuStreamIsCapturing(void* s, int* st) { *st = 0; OK; }
CUresult cuStreamGetCaptureInfo_v2(void* s, int* st, unsigned long long* id, void* g, void* d, size_t* n) { *st = 0; OK; }
CUresult cuStreamGetCaptureInfo_v3(void* s, int* st, unsigned long long* id, void* g, void* d, void* e, size_t* n) { *st = 0; OK; }
CUresult cuStreamGetCtx(void* s, void** c) { *c = ctx_obj; OK; }
CUresult cuStreamGetCtx_v2(void* s, void** c, void** g) { *c = ctx_obj; if (g) *g = 0; OK; }
CUresult cuStreamGetId(void* s, unsigned long long* id) { *id = (unsigned long long)s; OK; }
CUresult cuStreamGetFlags(void* s, unsigned* f) { *f = 0; OK; }
CUresult cuStreamGetPriority(void* s, int* p) { *p = 0; OK; }
CUresult cuEventCreate(void** e, unsigned f) { *e = (void*)(next_handle += 16); OK; }
CUresult cuEventDestroy_v2(void* e) { OK; }
CUresult cuEventRecord(void* e, void* s) { OK; }
CUresult cuEventRecordWithFlags(void* e, void* s, unsigned f) { OK; }
CUresult cuEventQuery(void* e) { OK; }
CUresult cuEventSynchronize(void* e) { OK; }
CUresult cuEventElapsedTime(float* ms, void* a, void* b) { *ms = 1.0f; OK; }
CUresult cuEventElapsedTime_v2(float* ms, void* a, void* b) { *ms = 1.0f; OK; }
CUresult cuMemAlloc_v2(uint64_t* p, size_t n) { *p = (uint64_t)aligned_alloc(256, (n + 255) / 256 * 256); OK; }
CUresult cuMemFree_v2(uint64_t p) { free((void*)p); OK; }
CUresult cuMemAllocAsync(uint64_t* p, size_t n, void* s) { return cuMemAlloc_v2(p, n); }
CUresult cuMemAllocFromPoolAsync(uint64_t* p, size_t n, void* pool, void* s) { return cuMemAlloc_v2(p, n); }
CUresult cuMemFreeAsync(uint64_t p, void* s) { free((void*)p); OK; }
CUresult cuMemHostAlloc(void** p, size_t n, unsigned f) { *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096); OK; }
CUresult cuMemFreeHost(void* p) { free(p); OK; }
CUresult cuMemAllocManaged(uint64_t* p, size_t n, unsigned f) { return cuMemAlloc_v2(p, n); }
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) { *f = 70ull << 30; *t = 80ull << 30; OK; }
CUresult cuMemcpyAsync(uint64_t d, uint64_t s, size_t n, void* st) { OK; }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void* st) { OK; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void* s, size_t n, void* st) { OK; }
CUresult cuMemcpyDtoHAsync_v2(void* d, uint64_t s, size_t n, void* st) { OK; }
CUresult cuMemcpyPeerAsync(uint64_t d, void* dc, uint64_t s, void* sc, size_t n, void* st) { OK; }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void* s) { OK; }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void* s) { OK; }
CUresult cuDeviceGetDefaultMemPool(void** p, int d) { *p = (void*)0x77; OK; }
CUresult cuDeviceGetMemPool(void** p, int d) { *p = (void*)0x77; OK; }
CUresult cuMemPoolCreate(void** p, const void* props) { *p = (void*)(next_handle += 16); OK; }
CUresult cuMemPoolDestroy(void* p) { OK; }
CUresult cuMemPoolSetAttribute(void* p, int a, void* v) { OK; }
CUresult cuMemPoolGetAttribute(void* p, int a, void* v) { memset(v, 0, 8); OK; }
CUresult cuMemPoolTrimTo(void* p, size_t n) { OK; }
CUresult cuMemPoolSetAccess(void* p, const void* m, size_t n) { OK; }
// Every pointer is this process's device memory on device 0.
CUresult cuPointerGetAttribute(void* data, int attr, uint64_t p) { memset(data, 0, 8); if (attr == 2) *(int*)data = 2; OK; }
CUresult cuPointerGetAttributes(unsigned n, int* attrs, void** data, uint64_t p) {
  for (unsigned i = 0; i < n; i++) {
    switch (attrs[i]) {
      case 2: *(unsigned*)data[i] = 2; break;           // memory type: device
      case 1: *(void**)data[i] = ctx_obj; break;        // context
      case 3: case 4: *(uint64_t*)data[i] = p; break;   // device / host pointer
      case 8: *(int*)data[i] = 0; break;                // device ordinal
      case 9: *(int*)data[i] = 0; break;                // managed
      case 11: case 12: *(uint64_t*)data[i] = p; break; // range start / size
      default: memset(data[i], 0, 4);
    }
  }
  OK;
}
CUresult cuModuleLoadData(void** m, const void* img) { *m = (void*)(next_handle += 16); OK; }
CUresult cuModuleLoadDataEx(void** m, const void* img, unsigned n, void* o, void** v) { *m = (void*)(next_handle += 16); OK; }
CUresult cuModuleUnload(void* m) { OK; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { *f = (void*)(next_handle += 16); OK; }
CUresult cuModuleGetGlobal_v2(uint64_t* p, size_t* b, void* m, const char* n) { OK; }
CUresult cuFuncGetAttribute(int* v, int a, void* f) { *v = (a == 0) ? 1024 : 0; OK; }
CUresult cuFuncSetAttribute(void* f, int a, int v) { OK; }
CUresult cuFuncSetCacheConfig(void* f, int c) { OK; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void* f, int b, size_t s) { *n = 8; OK; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, void* f, int b, size_t s, unsigned fl) { *n = 8; OK; }
CUresult cuLaunchKernel(void* f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned sm, void* s, void** p, void** x) { OK; }
CUresult cuLaunchKernelEx(const void* cfg, void* f, void** p, void** x) { OK; }
CUresult cuGetErrorString(int e, const char** s) { *s = "fake error"; OK; }
CUresult cuGetErrorName(int e, const char** s) { *s = "CUDA_ERROR_FAKE"; OK; }
CUresult cuMemAdvise_v2(uint64_t p, size_t n, int a, int loc_type, int loc_id) { OK; }
CUresult cuMemPrefetchAsync_v2(uint64_t p, size_t n, int lt, int li, unsigned f, void* s) { OK; }
CUresult cuMemRangeGetAttribute(void* d, size_t ds, int a, uint64_t p, size_t n) { memset(d, 0, ds); OK; }
CUresult cuThreadExchangeStreamCaptureMode(int* m) { OK; }
CUresult cuGetExportTable(const void** t, const void* id) { *t = 0; return 801; }
CUresult cuGetProcAddress_v2(const char* s, void** p, int v, unsigned long long f, int* st) { *p = 0; if (st) *st = 1; return 500; }
CUresult cuGetProcAddress(const char* s, void** p, int v, unsigned long long f) { *p = 0; return 500; }
