// What the kernel labs share: checked CUDA calls, random fill, byte comparison, and the
// timing rule (median of 20 runs by CUDA events, each queued behind a read pass over
// 256 MiB that evicts the L2 and keeps the GPU busy while the host queues the run), with
// the device's 1 GiB memcpy rate, the roofline's bandwidth, measured first.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void fill_random(unsigned char* p, size_t n, unsigned long long seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 32;
        p[i] = (unsigned char)x;
    }
}

__global__ void count_diff(const unsigned char* x, const unsigned char* y, size_t n, unsigned long long* bad) {
    unsigned long long m = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) m += x[i] != y[i];
    if (m) atomicAdd(bad, m);
}

__global__ void l2_flush(const uint4* p, unsigned long long n, unsigned* sink) {
    unsigned acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;
}

struct Lab {
    cudaDeviceProp prop;
    cudaStream_t st;
    cudaEvent_t e0, e1;
    unsigned char* flush;
    size_t flush_bytes = 256ull << 20;
    unsigned long long* bad;
    double mem_gbs = 0;  // the 1 GiB device memcpy rate (read + write), GB/s

    Lab() {
        CK(cudaSetDevice(0));
        CK(cudaGetDeviceProperties(&prop, 0));
        printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
        CK(cudaStreamCreate(&st));
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        CK(cudaMalloc(&flush, flush_bytes)); CK(cudaMemset(flush, 0x5A, flush_bytes));
        CK(cudaMalloc(&bad, 8));
        const size_t gib = 1ull << 30; unsigned char *ma, *mb;
        CK(cudaMalloc(&ma, gib)); CK(cudaMalloc(&mb, gib));
        const double ms = median_ms([&] { CK(cudaMemcpyAsync(mb, ma, gib, cudaMemcpyDeviceToDevice, st)); });
        mem_gbs = 2.0 * gib / ms / 1e6;
        printf("memcpy: %.0f GB/s (read + write)\n", mem_gbs);
        CK(cudaFree(ma)); CK(cudaFree(mb));
    }

    // Median time of `f` (queued on `st`), ms.
    template <class F> double median_ms(F&& f) {
        for (int i = 0; i < 3; ++i) f();
        std::vector<float> t;
        for (int i = 0; i < 20; ++i) {
            l2_flush<<<prop.multiProcessorCount * 8, 256, 0, st>>>((const uint4*)flush, flush_bytes / 16, (unsigned*)flush);
            CK(cudaEventRecord(e0, st)); f(); CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms);
        }
        std::sort(t.begin(), t.end()); return (double)t[t.size() / 2];
    }

    // Bytes of `x` and `y` (device memory, `n` bytes) that differ.
    unsigned long long differing(const unsigned char* x, const unsigned char* y, size_t n) {
        CK(cudaMemsetAsync(bad, 0, 8, st));
        count_diff<<<4096, 256, 0, st>>>(x, y, n, bad);
        unsigned long long nbad = 0;
        CK(cudaMemcpyAsync(&nbad, bad, 8, cudaMemcpyDeviceToHost, st)); CK(cudaStreamSynchronize(st));
        return nbad;
    }
};
