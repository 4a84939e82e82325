// Kernel lab: the register channel kernel (crates/stridekit/src/copy/kernels/channel_words.cu)
// for channel layouts of 1- and 2-byte elements (interleaved <-> planar, C = 2, 3, 4) in
// the engine's configuration and in variants (the interleaved side group by group instead
// of staged through a warp's shared memory; 128 threads a block), beside the earlier
// channel tiles (channel_transpose.cu, channel_interleave.cu). Every variant is first
// checked byte for byte against a naive kernel on random data with poisoned destinations
// (partial groups and warps, padded planes and batches, several batches), then timed
// (median of 20, CUDA events, each run queued behind an L2-evicting read pass) on the
// issue's channel layouts and rated on the roofline (aligned dense runs: bytes read plus
// bytes written, at the rate of a 1 GiB device memcpy of the same run). On the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/chlab bench/kernel_lab/channel_lab.cu && /tmp/chlab
// The variant list, channel_lab_variants.h, is written by channel_lab_variants.py.
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
// (name, element bytes, channels, split, threads a block, earlier tiles, kernel)
struct Variant { const char* name; int eb, ch, split, threads, tiles; Kern k; };
#include "channel_lab_variants.h"

// A channel layout: `batches` batches of `n` pixels of `ch` channels; planes `plane`
// elements apart; batches `bi` elements apart on the interleaved side, `bp` on the planar.
struct Case { const char* what; int eb, ch, split; long long batches, n, plane, bi, bp; };

__global__ void naive(const unsigned char* src, unsigned char* dst, Case c) {
    const long long total = c.batches * c.n * c.ch;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
        const long long b = t / (c.n * c.ch), r = t % (c.n * c.ch), x = r / c.ch, ch = r % c.ch;
        const long long ii = b * c.bi + x * c.ch + ch, pp = b * c.bp + ch * c.plane + x;
        const long long from = c.split ? ii : pp, to = c.split ? pp : ii;
        for (int k = 0; k < c.eb; ++k) dst[to * c.eb + k] = src[from * c.eb + k];
    }
}

// Pads `e` elements of `eb` bytes up to a multiple of 16 bytes, plus `extra` 16-byte chunks.
static long long pad16(long long e, int eb, int extra) { return ((e * eb + 15) / 16 + extra) * 16 / eb; }

static Case dense(const char* what, int eb, int ch, int split, long long batches, long long n) {
    return {what, eb, ch, split, batches, n, n, n * ch, n * ch};
}

int main() {
    Lab lab;
    const cudaDeviceProp& prop = lab.prop;
    cudaStream_t st = lab.st;
    const double mem_gbs = lab.mem_gbs;
    auto median_ms = [&](auto&& f) { return lab.median_ms(f); };
    for (auto& v : variants) {
        int r = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, v.k, v.threads, 0));
        cudaFuncAttributes at; CK(cudaFuncGetAttributes(&at, v.k));
        printf("u%d C=%d %s %-30s %d blocks per SM, %d registers\n", 8 * v.eb, v.ch, v.split ? "split" : "merge", v.name, r, at.numRegs);
    }
    std::vector<Case> checks, timed;
    for (int eb : {1, 2})
        for (int ch : {2, 3, 4})
            for (int split : {0, 1})
                for (long long n : {1LL, 5LL, 17LL, 100LL, 515LL, 1024LL + 3, 4096LL * 3 + 40}) {
                    const long long plane = pad16(n, eb, 1 + (int)(n % 3));
                    const long long bi = pad16(n * ch, eb, 2), bp = pad16(ch * plane, eb, 1);
                    checks.push_back({"check", eb, ch, split, 3, n, plane, bi, bp});
                    checks.push_back(dense("check", eb, ch, split, 2, n * 16 / eb));
                }
    timed.push_back(dense("RGB interleaved -> planar (4096,4096,3)", 1, 3, 1, 1, 4096LL * 4096));
    timed.push_back(dense("RGB planar -> interleaved (4096,4096,3)", 1, 3, 0, 1, 4096LL * 4096));
    timed.push_back(dense("NCHW -> NHWC (256,3,224,224)", 1, 3, 0, 256, 224 * 224));
    timed.push_back(dense("NHWC -> NCHW (128,96,96,3)", 1, 3, 1, 128, 96 * 96));
    timed.push_back(dense("video NHWC -> NCHW (360,1080,1920,3)", 1, 3, 1, 360, 1080LL * 1920));
    timed.push_back(dense("RGBA (M,4) -> (4,M), M = 2^24", 1, 4, 1, 1, 1LL << 24));
    timed.push_back(dense("planar -> RGBA (4,M) -> (M,4), M = 2^24", 1, 4, 0, 1, 1LL << 24));
    timed.push_back(dense("(M,2) -> (2,M) u8, M = 2^24", 1, 2, 1, 1, 1LL << 24));
    timed.push_back(dense("f16 RGB interleaved -> planar (4096,2048,3)", 2, 3, 1, 1, 4096LL * 2048));
    timed.push_back(dense("f16 RGB planar -> interleaved (4096,2048,3)", 2, 3, 0, 1, 4096LL * 2048));
    int failures = 0;
    auto run = [&](const Case& c, bool time) {
        const long long in_el = (c.batches - 1) * c.bi + c.n * c.ch, pl_el = (c.batches - 1) * c.bp + (c.ch - 1) * c.plane + c.n;
        const size_t sbytes = (size_t)((c.split ? in_el : pl_el) * c.eb), dbytes = (size_t)((c.split ? pl_el : in_el) * c.eb);
        unsigned char *s, *d, *r;
        CK(cudaMalloc(&s, sbytes)); CK(cudaMalloc(&d, dbytes)); CK(cudaMalloc(&r, dbytes));
        fill_random<<<1024, 256, 0, st>>>(s, sbytes, 12345 + c.n * 7 + c.ch);
        CK(cudaMemsetAsync(r, 0xA5, dbytes, st));
        naive<<<4096, 256, 0, st>>>(s, r, c);
        Params p; memset(&p, 0, sizeof p);
        p.shape[0] = c.batches; p.n = c.batches * c.n * c.ch;
        if (c.split) {
            p.shape[1] = c.ch; p.shape[2] = c.n;
            p.src[0] = c.bi; p.src[1] = 1; p.src[2] = c.ch;
            p.dst[0] = c.bp; p.dst[1] = c.plane; p.dst[2] = 1;
        } else {
            p.shape[1] = c.n; p.shape[2] = c.ch;
            p.src[0] = c.bp; p.src[1] = 1; p.src[2] = c.plane;
            p.dst[0] = c.bi; p.dst[1] = c.ch; p.dst[2] = 1;
        }
        const unsigned long long lo = (unsigned long long)s, hi = lo + sbytes;
        if (time) printf("%s (%.1f MB each way)\n", c.what, c.batches * c.n * c.ch * c.eb / 1e6);
        for (auto& v : variants) {
            if (v.eb != c.eb || v.ch != c.ch || v.split != c.split) continue;
            dim3 g; int threads = v.threads;
            if (v.tiles) {
                int res = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res, v.k, 256, 0));
                const long long tiles = (c.n + 4096 / c.eb - 1) / (4096 / c.eb) * c.batches;
                g = dim3((unsigned)std::min<long long>(tiles, (long long)prop.multiProcessorCount * std::max(res, 1)), 1, 1);
            } else {
                const long long groups = (c.n + 16 / c.eb - 1) / (16 / c.eb);
                const long long y = std::min<long long>(c.batches, 65535);
                g = dim3((unsigned)((groups + threads - 1) / threads), (unsigned)y, (unsigned)((c.batches + y - 1) / y));
            }
            auto launch = [&] { v.k<<<g, threads, 0, st>>>(s, d, p, 1, 2, c.batches, lo, hi); };
            CK(cudaMemsetAsync(d, 0xA5, dbytes, st));
            launch(); CK(cudaGetLastError());
            const unsigned long long nbad = lab.differing(d, r, dbytes);
            if (nbad) { ++failures; printf("MISMATCH %s u%d C=%d %s batches %lld n %lld plane %lld: %llu bytes\n", v.name, 8 * c.eb, c.ch, c.split ? "split" : "merge", c.batches, c.n, c.plane, nbad); }
            if (time) {
                const double ms = median_ms(launch);
                printf("    %-32s %.3f ms %.2f\n", v.name, ms, 2.0 * sbytes / ms / 1e6 / mem_gbs);
            }
        }
        if (time) {
            const double ms = median_ms([&] { CK(cudaMemcpyAsync(d, s, sbytes, cudaMemcpyDeviceToDevice, st)); });
            printf("    %-32s %.3f ms %.2f\n", "memcpy of the same bytes", ms, 2.0 * sbytes / ms / 1e6 / mem_gbs);
        }
        CK(cudaFree(s)); CK(cudaFree(d)); CK(cudaFree(r));
    };
    for (auto& c : checks) run(c, false);
    printf("checked %zu layouts byte for byte, every variant: %d mismatches\n", checks.size(), failures);
    for (auto& c : timed) run(c, true);
    printf("lab: %d failures\n", failures);
    return failures != 0;
}
