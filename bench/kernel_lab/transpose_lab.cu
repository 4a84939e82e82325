// Kernel lab: the word transpose (crates/stridekit/src/copy/kernels/word_transpose.cu) for
// 1- and 2-byte elements whose rows start anywhere, in the engine's configuration and in
// variants (rows per tile, blocks per SM), checked byte for byte against a naive kernel on
// random data with poisoned destinations (odd sizes, every start alignment 0..15 on both
// sides, source words near the end of the source region), then timed (median of 20, CUDA
// events, each run queued behind an L2-evicting read pass) against the 32 x 32 tiles and a
// memcpy of the same bytes, and rated on the sector-exact roofline (a 1 GiB device memcpy
// of the same run). Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/lab bench/kernel_lab/transpose_lab.cu && /tmp/lab
// LAB_ONLY=i times only the i-th timed case (for ncu:
//   LAB_ONLY=0 ncu --kernel-name regex:word_transpose_e1 --launch-skip 3 --launch-count 1 /tmp/lab).
#include <cstring>
#include "lab_common.h"

#define NDIM 2
#define PMAX 8
#define ELEM unsigned char
#include "../../crates/stridekit/src/copy/kernels/prelude.cu"
#undef ELEM

#define word_transpose word_transpose_e1
#define ELEM unsigned char
#define EB 1
#define WT_MINB 4
namespace e1 {
#include "../../crates/stridekit/src/copy/kernels/word_transpose.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_e2
#define ELEM unsigned char
#define EB 2
#define WT_MINB 8
namespace e2 {
#include "../../crates/stridekit/src/copy/kernels/word_transpose.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_w1s
#define ELEM unsigned char
#define EB 1
#define WT_TR 64
#define WT_MINB 4
namespace w1s {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_w1m
#define ELEM unsigned char
#define EB 1
#define WT_TR 128
#define WT_MINB 6
namespace w1m {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_w2
#define ELEM unsigned char
#define EB 2
#define WT_TR 64
#define WT_MINB 4
namespace w2 {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_w2m
#define ELEM unsigned char
#define EB 2
#define WT_TR 64
#define WT_MINB 6
namespace w2m {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_w1s8
#define ELEM unsigned char
#define EB 1
#define WT_TR 64
#define WT_MINB 8
namespace w1s8 {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_c1m
#define ELEM unsigned char
#define EB 1
#define WT_MINB 5
namespace c1m {
#include "../../crates/stridekit/src/copy/kernels/word_transpose.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_c2m
#define ELEM unsigned char
#define EB 2
#define WT_MINB 4
namespace c2m {
#include "../../crates/stridekit/src/copy/kernels/word_transpose.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_l1
#define ELEM unsigned char
#define EB 1
#define WT_MINB 4
#define WT_TR 128
namespace l1 {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#define word_transpose word_transpose_l2
#define ELEM unsigned char
#define EB 2
#define WT_MINB 8
#define WT_TR 64
namespace l2 {
#include "word_transpose_lanes.cu"
}
#undef word_transpose
#undef K
#undef WT_TA
#undef WT_TR
#undef WT_OW
#undef WT_G
#undef WT_PER
#undef FULL
#undef WT_MINB
#undef WT_BEFORE
#undef EB
#undef ELEM
#undef K
#define tiled_transpose tiled_transpose_1b
#define ELEM unsigned char
#define WORD unsigned char
namespace o1b {
#include "../../crates/stridekit/src/copy/kernels/tiled_transpose.cu"
}
#undef tiled_transpose
#undef ELEM
#undef WORD
#undef V
#undef T
#define tiled_transpose tiled_transpose_1w
#define ELEM unsigned char
#define WORD unsigned int
namespace o1w {
#include "../../crates/stridekit/src/copy/kernels/tiled_transpose.cu"
}
#undef tiled_transpose
#undef ELEM
#undef WORD
#undef V
#undef T
#define tiled_transpose tiled_transpose_2b
#define ELEM unsigned short
#define WORD unsigned short
namespace o2b {
#include "../../crates/stridekit/src/copy/kernels/tiled_transpose.cu"
}
#undef tiled_transpose
#undef ELEM
#undef WORD
#undef V
#undef T
#define tiled_transpose tiled_transpose_2w
#define ELEM unsigned short
#define WORD unsigned int
namespace o2w {
#include "../../crates/stridekit/src/copy/kernels/tiled_transpose.cu"
}
#undef tiled_transpose
#undef ELEM
#undef WORD
#undef V
#undef T
#define tiled_transpose tiled_transpose_4b
#define ELEM unsigned int
#define WORD unsigned int
namespace o4b {
#include "../../crates/stridekit/src/copy/kernels/tiled_transpose.cu"
}
#undef tiled_transpose
#undef ELEM
#undef WORD
#undef V
#undef T
#define tiled_transpose tiled_transpose_4w
#define ELEM unsigned int
#define WORD unsigned long long
namespace o4w {
#include "../../crates/stridekit/src/copy/kernels/tiled_transpose.cu"
}
#undef tiled_transpose
#undef ELEM
#undef WORD
typedef void (*Kern)(const unsigned char*, unsigned char*, const Params, int, int, long long,
                     unsigned long long, unsigned long long);
typedef void (*Old)(const void*, void*, const Params, int, int, long long);

// dst[j * dp + i] = src[i * 1 + j * sp]   (i < na along a, j < nl along l), bytes of size eb
__global__ void naive(const unsigned char* src, unsigned char* dst, long long na, long long nl,
                      long long sp, long long dp, int eb) {
    long long n = na * nl;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n; t += (long long)gridDim.x * blockDim.x) {
        long long i = t / nl, j = t % nl;
        for (int b = 0; b < eb; ++b) dst[(i * dp + j) * eb + b] = src[(i + j * sp) * eb + b];
    }
}

struct Case { int eb; long long na, nl; int soff, doff; long long sp, dp; };

static long long sectors_of_rows(long long base, long long rows, long long pitch, long long len, std::vector<unsigned char>& seen) {
    long long n = 0;
    for (long long r = 0; r < rows; ++r) {
        long long s = base + r * pitch, e = s + len;
        for (long long q = s / 32; q <= (e - 1) / 32; ++q) if (!seen[q]) { seen[q] = 1; ++n; }
    }
    return n;
}

// Sector-exact bytes: source sectors read, destination sectors written, partially written
// destination sectors read and written.
static double roofline_bytes(const Case& c, size_t sbytes, size_t dbytes) {
    std::vector<unsigned char> s((sbytes + 31) / 32 + 2, 0), d((dbytes + 31) / 32 + 2, 0);
    long long rs = sectors_of_rows(c.soff, c.nl, c.sp * c.eb, c.na * c.eb, s);
    long long ws = sectors_of_rows(c.doff, c.na, c.dp * c.eb, c.nl * c.eb, d);
    // Partial destination sectors: count bytes written per sector.
    std::vector<unsigned char> cnt((dbytes + 31) / 32 + 2, 0);
    long long partial = 0;
    for (long long r = 0; r < c.na; ++r) {
        long long st = c.doff + r * c.dp * c.eb, e = st + c.nl * c.eb;
        long long q0 = st / 32, q1 = (e - 1) / 32;
        for (long long q = q0; q <= q1; ++q) {
            long long lo = std::max(st, q * 32), hi = std::min(e, q * 32 + 32);
            cnt[q] = (unsigned char)std::min<long long>(32, cnt[q] + (hi - lo));
        }
    }
    for (size_t q = 0; q < cnt.size(); ++q) if (d[q] && cnt[q] < 32) ++partial;
    return 32.0 * (rs + ws + partial);
}

int main(int argc, char** argv) {
    Lab lab;
    cudaStream_t st = lab.st;
    const double mem_gbs = lab.mem_gbs;
    auto median_ms = [&](auto&& f) { return lab.median_ms(f); };
    // (name, element size, rows per tile, kernel): the engine's configuration first.
    struct Word { const char* name; int eb; int tr; Kern k; };
    std::vector<Word> words = {
        {"engine: chunks, 4/SM", 1, 128, e1::word_transpose_e1}, {"chunks, 5/SM", 1, 128, c1m::word_transpose_c1m},
        {"lanes, TR 128, 4/SM", 1, 128, l1::word_transpose_l1}, {"lanes, TR 64, 8/SM", 1, 64, w1s8::word_transpose_w1s8},
        {"engine: chunks, 8/SM", 2, 64, e2::word_transpose_e2}, {"chunks, 4/SM", 2, 64, c2m::word_transpose_c2m},
        {"lanes, TR 64, 8/SM", 2, 64, l2::word_transpose_l2}, {"lanes, TR 64, 6/SM", 2, 64, w2m::word_transpose_w2m}};
    for (auto& w : words) {
        int r = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, w.k, 256, 0));
        printf("u%d %s: %d blocks per SM\n", 8 * w.eb, w.name, r);
    }
    std::vector<Case> checks, timed;
    for (int eb : {1, 2})
        for (int so = 0; so < 16; so += eb)
            for (int d = 0; d < 16; d += 3)
                checks.push_back({eb, 67 + so, 45 + d, so, (d / eb) * eb, 67 + so + 5, 45 + d + 3});
    for (int eb : {1, 2}) {
        checks.push_back({eb, 1, 1, 0, 0, 1, 1});
        checks.push_back({eb, 1, 300, 3 * (eb == 1), 0, 1, 300});
        checks.push_back({eb, 300, 1, 0, eb == 1 ? 7 : 0, 300, 1});
        checks.push_back({eb, 129, 257, 0, 0, 129, 257});
        checks.push_back({eb, 300, 260, 5 * eb, 3 * eb, 301, 263});
        checks.push_back({eb, 256, 256, 1 * eb, 0, 257, 256});
    }
    for (int eb : {1, 2}) {
        timed.push_back({eb, 8192, 8192, 0, 0, 8192, 8192});
        timed.push_back({eb, 4097, 3001, 0, 0, 4097, 3001});
        timed.push_back({eb, 3001, 4097, 0, 0, 3001, 4097});
    }
    timed.push_back({1, 5000, 7001, 0, 0, 5000, 7001});
    timed.push_back({2, 6007, 2049, 0, 0, 6007, 2049});
    timed.push_back({1, 8192, 8192, 1, 3, 8193, 8195});
    timed.push_back({2, 8192, 8192, 2, 6, 8193, 8195});
    timed.push_back({1, 8192, 8192, 1, 0, 8193, 8192});
    timed.push_back({2, 8192, 8192, 2, 0, 8193, 8192});
    int failures = 0, timed_index = -1;
    auto run = [&](const Case& c, bool time) {
        if (time) ++timed_index;
        if (time && getenv("LAB_ONLY") && atoi(getenv("LAB_ONLY")) != timed_index) return;
        size_t sbytes = (size_t)(c.soff + ((c.nl - 1) * c.sp + c.na) * c.eb) + 16;
        size_t dbytes = (size_t)(c.doff + ((c.na - 1) * c.dp + c.nl) * c.eb) + 16;
        unsigned char *s, *d, *r;
        CK(cudaMalloc(&s, sbytes)); CK(cudaMalloc(&d, dbytes)); CK(cudaMalloc(&r, dbytes));
        fill_random<<<1024, 256, 0, st>>>(s, sbytes, 12345 + c.na * 7 + c.nl);
        CK(cudaMemsetAsync(r, 0xA5, dbytes, st));
        naive<<<2048, 256, 0, st>>>(s + c.soff, r + c.doff, c.na, c.nl, c.sp, c.dp, c.eb);
        Params p; memset(&p, 0, sizeof p);
        p.shape[0] = c.na; p.shape[1] = c.nl; p.src[0] = 1; p.src[1] = c.sp; p.dst[0] = c.dp; p.dst[1] = 1;
        p.n = c.na * c.nl;
        // The source region ends 16 bytes before the allocation: words past it go byte by byte.
        unsigned long long lo = (unsigned long long)s, hi = lo + sbytes - 16;
        std::vector<unsigned char> hd(dbytes), hr(dbytes);
        CK(cudaMemcpy(hr.data(), r, dbytes, cudaMemcpyDeviceToHost));
        std::vector<std::pair<const char*, double>> times;
        for (auto& w : words) {
            if (w.eb != c.eb) continue;
            dim3 g((unsigned)((c.nl + w.tr - 1) / w.tr), (unsigned)((c.na + 128 / c.eb - 1) / (128 / c.eb)), 1);
            auto launch = [&] { w.k<<<g, 256, 0, st>>>(s + c.soff, d + c.doff, p, 0, 1, 1, lo, hi); };
            CK(cudaMemsetAsync(d, 0xA5, dbytes, st));
            launch(); CK(cudaGetLastError()); CK(cudaStreamSynchronize(st));
            CK(cudaMemcpy(hd.data(), d, dbytes, cudaMemcpyDeviceToHost));
            size_t bad = 0; for (size_t i = 0; i < dbytes; ++i) bad += hd[i] != hr[i];
            if (bad) { ++failures; printf("MISMATCH %s eb=%d %lldx%lld soff=%d doff=%d sp=%lld dp=%lld: %zu bytes\n", w.name, c.eb, c.na, c.nl, c.soff, c.doff, c.sp, c.dp, bad); }
            if (time) times.push_back({w.name, median_ms(launch)});
        }
        if (time) {
            bool aligned = (c.soff * c.eb) % 4 == 0 && (c.doff * c.eb) % 4 == 0 && (c.sp * c.eb) % 4 == 0 && (c.dp * c.eb) % 4 == 0;
            Old old = c.eb == 1 ? (aligned ? (Old)o1w::tiled_transpose_1w : (Old)o1b::tiled_transpose_1b)
                                : (aligned ? (Old)o2w::tiled_transpose_2w : (Old)o2b::tiled_transpose_2b);
            int vw = aligned ? 4 / c.eb : 1;
            long long tside = 32 * vw;
            dim3 og((unsigned)((c.nl + tside - 1) / tside), (unsigned)((c.na + tside - 1) / tside), 1);
            double oms = median_ms([&] { old<<<og, dim3(32, 8), 0, st>>>(s + c.soff, d + c.doff, p, 0, 1, 1); });
            size_t same = (size_t)(c.na * c.nl * c.eb);
            double cms = median_ms([&] { CK(cudaMemcpyAsync(r, s, same, cudaMemcpyDeviceToDevice, st)); });
            double roof = roofline_bytes(c, sbytes, dbytes);
            double moved = 2.0 * c.na * c.nl * c.eb;
            printf("u%-2d %5lldx%-5lld starts %2d/%2d bytes  32x32 tiles (word %d) %.3f ms %.2f | memcpy of the bytes %.3f ms %.2f\n",
                   8 * c.eb, c.na, c.nl, c.soff, c.doff, vw * c.eb, oms, roof / oms / 1e6 / mem_gbs, cms, moved / cms / 1e6 / mem_gbs);
            for (auto& t : times) printf("      word transpose %-24s %.3f ms %.2f\n", t.first, t.second, roof / t.second / 1e6 / mem_gbs);
        }
        CK(cudaFree(s)); CK(cudaFree(d)); CK(cudaFree(r));
    };
    if (!getenv("LAB_ONLY"))
        for (auto& c : checks) run(c, false);
    printf("checked %zu layouts byte for byte, every variant: %d mismatches\n", checks.size(), failures);
    for (auto& c : timed) run(c, true);
    printf("lab: %d failures\n", failures);
    return failures != 0;
}
