// The one-element-a-thread kernel (`strided_copy.cu`) on the random set's byte cases
// where PyTorch is ahead: unroll depth, offset width and grid shape. Build one binary per
// compile-time variant, e.g.
//   nvcc -O3 -arch=sm_90 -DLAB_UNR=16 -DLAB_OFF="long long" -o /tmp/el16 bench/kernel_lab/elementwise_lab.cu
// and run each: every case is checked byte for byte against a plain reference kernel,
// then timed with a persistent grid (the engine's) and with one block per chunk.
#include "lab_common.h"
#include <cstring>
#include <string>
#define STR2(x) #x
#define STR(x) STR2(x)
#define ELEM unsigned char
#define NDIM_MAX 8
#define PMAX 8
#define UNR LAB_UNR
#define FASTDIV 1
#define IDX unsigned int
#define OFF LAB_OFF
#include "../../crates/stridekit/src/copy/kernels/prelude.cu"
#define NDIM 1
#define strided_copy strided_copy_1
#include "../../crates/stridekit/src/copy/kernels/strided_copy.cu"
#undef strided_copy
#undef NDIM
#define NDIM 2
#define strided_copy strided_copy_2
#include "../../crates/stridekit/src/copy/kernels/strided_copy.cu"
#undef strided_copy
#undef NDIM
#define NDIM 4
#define strided_copy strided_copy_4
#include "../../crates/stridekit/src/copy/kernels/strided_copy.cu"
#undef strided_copy
#undef NDIM

// Plain reference: one element a thread, 64-bit arithmetic.
__global__ void reference(const ELEM* src, ELEM* dst, Params p, int nd) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < (unsigned long long)p.n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long rem = i;
        long long so = 0, d = 0;
        for (int k = nd - 1; k >= 0; --k) {
            const long long j = rem % p.shape[k];
            rem /= p.shape[k];
            so += j * p.src[k];
            d += j * p.dst[k];
        }
        dst[d] = src[so];
    }
}

struct Case { const char* name; int nd; long long shape[4], dst[4], src[4], soff, doff; };

static void fastdiv(unsigned d, unsigned& mul, unsigned& sh) {
    unsigned l = 0;
    while ((1ull << l) < d) ++l;
    const unsigned long long m = (((1ull << 32) * ((1ull << l) - d)) / d) + 1;
    mul = (unsigned)m;
    sh = (l < 1 ? l : 1) | ((l > 0 ? l - 1 : 0) << 8);
}

int main() {
    Lab lab;
    const Case cases[] = {
        {"random case 2 (broadcast source, 13-byte runs)", 4, {2, 1712932, 3, 13}, {267217392, 156, 26, 1}, {39, 0, 1, 3}, 0, 0},
        {"random case 16 (rows into every other byte)", 2, {15, 8475868}, {33903476, 2}, {8475868, 1}, 0, 0},
        {"random case 154 (every other byte)", 1, {71441666}, {2}, {2}, 0, 0},
        {"random case 120 (57 bytes every other, broadcast)", 2, {1336282, 57}, {114, 2}, {-1, 0}, 1336281, 0},
    };
    for (const Case& c : cases) {
        Params p{};
        long long n = 1, slo = 0, shi = 0, dhi = 0;
        for (int k = 0; k < PMAX; ++k) { p.shape[k] = 1; p.mul[k] = 1; p.sh[k] = 0; }
        for (int k = 0; k < c.nd; ++k) {
            p.shape[k] = c.shape[k]; p.src[k] = c.src[k]; p.dst[k] = c.dst[k];
            fastdiv((unsigned)c.shape[k], p.mul[k], p.sh[k]);
            n *= c.shape[k];
            const long long r = (c.shape[k] - 1) * c.src[k];
            if (r < 0) slo += r; else shi += r;
            dhi += (c.shape[k] - 1) * c.dst[k];
        }
        p.n = n;
        const size_t sbytes = (size_t)(c.soff + shi + 1), dbytes = (size_t)(c.doff + dhi + 1);
        unsigned char *s, *d, *want;
        CK(cudaMalloc(&s, sbytes)); CK(cudaMalloc(&d, dbytes)); CK(cudaMalloc(&want, dbytes));
        fill_random<<<4096, 256, 0, lab.st>>>(s, sbytes, 1);
        fill_random<<<4096, 256, 0, lab.st>>>(want, dbytes, 2);
        CK(cudaMemcpyAsync(d, want, dbytes, cudaMemcpyDeviceToDevice, lab.st));
        reference<<<4096, 256, 0, lab.st>>>(s + c.soff, want + c.doff, p, c.nd);
        auto kern = c.nd == 1 ? (void (*)(const ELEM*, ELEM*, const Params))strided_copy_1
                  : c.nd == 2 ? strided_copy_2 : strided_copy_4;
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 256, 0));
        const long long chunks = (n + 256LL * UNR - 1) / (256LL * UNR);
        const long long persistent = std::min<long long>(chunks, (long long)lab.prop.multiProcessorCount * per_sm);
        // Written sectors read and written back, source sectors read (a small source once).
        const double traffic = 2.0 * (double)dbytes + (shi - slo + 1 < (long long)dbytes / 4 ? 0.0 : (double)sbytes);
        for (long long grid : {persistent, chunks}) {
            kern<<<(unsigned)grid, 256, 0, lab.st>>>(s + c.soff, d + c.doff, p);
            CK(cudaGetLastError());
            const unsigned long long bad = lab.differing(d, want, dbytes);
            const double ms = lab.median_ms([&] { kern<<<(unsigned)grid, 256, 0, lab.st>>>(s + c.soff, d + c.doff, p); });
            printf("%-50s UNR %2d OFF %-9s grid %8lld (%d/SM): %.3f ms, %.2f of the sector roofline, %llu bad bytes\n",
                   c.name, UNR, STR(LAB_OFF), grid, per_sm, ms,
                   traffic / (lab.mem_gbs * 1e6) / ms, bad);
        }
        CK(cudaFree(s)); CK(cudaFree(d)); CK(cudaFree(want));
    }
    return 0;
}
