// Kernel lab: batches of small matrices of 4-byte elements transposed, (B, NL, NA) -> (B, NA,
// NL), by the warp kernel crates/stridekit/src/copy/kernels/small_words.cu (engine: 8 warps
// a block; variant: 4), beside the tile kernel small_matrices.cu compiled for 4-byte
// elements and a memcpy of the same bytes. Every variant is checked byte for byte against a
// naive kernel first (random data, poisoned destinations, partial last runs), then timed
// (median of 20, CUDA events, each run queued behind an L2-evicting read pass) and rated on
// the roofline (dense runs: bytes read plus bytes written, at the rate of a 1 GiB memcpy of
// the same run). On the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/smlab bench/kernel_lab/small_lab.cu && /tmp/smlab
// The variant list, small_lab_variants.h, is written by small_lab_variants.py.
#include <cstring>
#include "lab_common.h"

#define NDIM 3
#define PMAX 8
#define ELEM unsigned char
#include "../../crates/stridekit/src/copy/kernels/prelude.cu"
#include "../../crates/stridekit/src/copy/kernels/channel_runs.cu"
#undef ELEM

typedef void (*Kern)(const unsigned char*, unsigned char*, const Params, int, int, long long,
                     unsigned long long, unsigned long long);
// (name, NA, NL, threads a block, persistent tile kernel, kernel)
struct Variant { const char* name; int na, nl, threads, tiles; Kern k; };
#include "small_lab_variants.h"

__global__ void naive(const unsigned* src, unsigned* dst, long long batches, int na, int nl) {
    const long long mat = (long long)na * nl, total = batches * mat;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
        const long long b = t / mat, r = t % mat, a = r / nl, l = r % nl;
        dst[t] = src[b * mat + l * na + a];
    }
}

struct Case { long long batches; int na, nl; bool time; };

int main() {
    Lab lab;
    const cudaDeviceProp& prop = lab.prop;
    cudaStream_t st = lab.st;
    const double mem_gbs = lab.mem_gbs;
    auto median_ms = [&](auto&& f) { return lab.median_ms(f); };
    for (auto& v : variants) {
        int r = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, v.k, v.threads, 0));
        cudaFuncAttributes at; CK(cudaFuncGetAttributes(&at, v.k));
        printf("%dx%d %-36s %d blocks per SM, %d registers, %zu bytes shared\n", v.nl, v.na, v.name, r, at.numRegs, at.sharedSizeBytes);
    }
    std::vector<Case> cases;
    for (auto& v : variants)
        for (long long b : {1LL, 2LL, 7LL, 33LL, 1003LL}) {
            bool seen = false;
            for (auto& c : cases) seen |= c.na == v.na && c.nl == v.nl && c.batches == b;
            if (!seen) cases.push_back({b, v.na, v.nl, false});
        }
    // The timed batches: 64 MiB of words each (the engine's bench case is (65536, 16, 16)).
    for (auto [na, nl] : std::vector<std::pair<int, int>>{{16, 16}, {32, 8}, {8, 32}, {4, 64}, {64, 4}, {16, 32}, {3, 100}, {24, 20}})
        cases.push_back({(16LL << 20) / (na * nl), na, nl, true});
    int failures = 0;
    for (auto& c : cases) {
        const size_t bytes = (size_t)c.batches * c.na * c.nl * 4;
        unsigned char *s, *d, *r;
        CK(cudaMalloc(&s, bytes)); CK(cudaMalloc(&d, bytes)); CK(cudaMalloc(&r, bytes));
        fill_random<<<1024, 256, 0, st>>>(s, bytes, 777 + c.batches * 31 + c.na);
        naive<<<4096, 256, 0, st>>>((const unsigned*)s, (unsigned*)r, c.batches, c.na, c.nl);
        Params p; memset(&p, 0, sizeof p);
        const unsigned long long lo = (unsigned long long)s, hi = lo + bytes;
        if (c.time) printf("(%lld, %d, %d) u32 -> (%lld, %d, %d) (%.1f MB each way)\n", c.batches, c.nl, c.na, c.batches, c.na, c.nl, bytes / 1e6);
        for (auto& v : variants) {
            if (v.na != c.na || v.nl != c.nl) continue;
            int res = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res, v.k, v.threads, 0));
            long long work;
            if (v.tiles) {
                const long long per = std::max(1, 8192 / (c.na * c.nl * 4));
                work = (c.batches + per - 1) / per;
            } else {
                const long long wm = std::max(1, 512 / (c.na * c.nl));
                work = ((c.batches + wm - 1) / wm + v.threads / 32 - 1) / (v.threads / 32);
            }
            const unsigned grid = (unsigned)std::max(1LL, std::min<long long>(work, (long long)prop.multiProcessorCount * std::max(res, 1)));
            auto launch = [&] { v.k<<<grid, v.threads, 0, st>>>(s, d, p, 1, 2, c.batches, lo, hi); };
            CK(cudaMemsetAsync(d, 0xA5, bytes, st));
            launch(); CK(cudaGetLastError());
            const unsigned long long nbad = lab.differing(d, r, bytes);
            if (nbad) { ++failures; printf("MISMATCH %s (%lld, %d, %d): %llu bytes\n", v.name, c.batches, c.nl, c.na, nbad); }
            if (c.time) {
                const double ms = median_ms(launch);
                printf("    %-36s %.3f ms %.2f\n", v.name, ms, 2.0 * bytes / ms / 1e6 / mem_gbs);
            }
        }
        if (c.time) {
            const double ms = median_ms([&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, st)); });
            printf("    %-36s %.3f ms %.2f\n", "memcpy of the same bytes", ms, 2.0 * bytes / ms / 1e6 / mem_gbs);
        }
        CK(cudaFree(s)); CK(cudaFree(d)); CK(cudaFree(r));
    }
    printf("lab: %d failures\n", failures);
    return failures != 0;
}
