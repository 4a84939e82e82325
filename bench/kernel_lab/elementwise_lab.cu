// The one-element-a-thread kernel (`strided_copy.cu`) on the random set's cases where
// PyTorch is ahead or close: unroll depth, offset width, block size and grid shape. Build
// one binary per compile-time variant, e.g.
//   nvcc -O3 -arch=sm_90 -DLAB_UNR=16 -DLAB_OFF="long long" -o /tmp/el16 bench/kernel_lab/elementwise_lab.cu
// (byte cases; -DLAB_ELEM="unsigned short", "unsigned int", "unsigned long long" or E16 runs
// the 2-, 4-, 8- or 16-byte ones; bench/kernel_lab/elementwise_lab.sh builds and runs them
// all and prints each variant's time against the engine's) and run each, with
// the block size as its argument (256, the engine's, unless given; `small` after it: the
// small permutes PyTorch copies faster, 4- and 8-byte builds): every case is checked
// byte for byte against a plain reference kernel, then timed with a persistent grid and
// with one block per chunk (the engine's).
#include "lab_common.h"
#include <cstring>
#include <string>
#define STR2(x) #x
#define STR(x) STR2(x)
// 16-byte elements: -DLAB_ELEM=E16.
struct __align__(16) E16 { unsigned long long lo, hi; };
#ifndef LAB_ELEM
#define LAB_ELEM unsigned char
#endif
#define ELEM LAB_ELEM
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
#define NDIM 3
#define strided_copy strided_copy_3
#include "../../crates/stridekit/src/copy/kernels/strided_copy.cu"
#undef strided_copy
#undef NDIM
#define NDIM 4
#define strided_copy strided_copy_4
#include "../../crates/stridekit/src/copy/kernels/strided_copy.cu"
#undef strided_copy
#undef NDIM
#define NDIM 5
#define strided_copy strided_copy_5
#include "../../crates/stridekit/src/copy/kernels/strided_copy.cu"
#undef strided_copy
#undef NDIM
#define NDIM 6
#define strided_copy strided_copy_6
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

// `sectors`: the sector-exact roofline's bytes where `random_bench` printed them (else
// the byte cases' estimate below).
struct Case { const char* name; int nd; long long shape[6], dst[6], src[6], soff, doff; double sectors; };

static void fastdiv(unsigned d, unsigned& mul, unsigned& sh) {
    unsigned l = 0;
    while ((1ull << l) < d) ++l;
    const unsigned long long m = (((1ull << 32) * ((1ull << l) - d)) / d) + 1;
    mul = (unsigned)m;
    sh = l;  // div_extent's shift (prelude.cu): q = (mulhi(n, mul) + n) >> l
}

int main(int argc, char** argv) {
    Lab lab;
    const int block = argc > 1 ? atoi(argv[1]) : 256;
    const Case byte_cases[] = {
        {"random case 2 (broadcast source, 13-byte runs)", 4, {2, 1712932, 3, 13}, {267217392, 156, 26, 1}, {39, 0, 1, 3}, 0, 0},
        {"random case 16 (rows into every other byte)", 2, {15, 8475868}, {33903476, 2}, {8475868, 1}, 0, 0},
        {"random case 154 (every other byte)", 1, {71441666}, {2}, {2}, 0, 0},
        {"random case 120 (57 bytes every other, broadcast)", 2, {1336282, 57}, {114, 2}, {-1, 0}, 1336281, 0},
        // The elementwise byte cases below 0.65 at 401ad85 that the one-element kernel runs
        // (axes as the engine orders them).
        {"random case 151 (3 planes of 55-byte rows into 165-byte pixels)", 4, {2, 262728, 55, 3}, {43350285, 165, 3, 1}, {55, 1320, 1, -220}, 440, 0},
        {"random case 31 (5-D, 31-byte rows every 32)", 5, {3, 126065, 3, 3, 31}, {145226880, 1152, 192, 32, 1}, {279, 837, -3, -1, -9}, 278, 0},
        {"random case 76 (25-byte rows reversed into every other byte)", 2, {5002896, 25}, {100, 2}, {-25, 1}, 125072375, 0},
        {"random case 94 (reversed into every other byte)", 1, {68635825}, {2}, {-1}, 68635824, 0},
        {"random case 133 (3 planes into every other byte)", 2, {44331269, 3}, {12, 2}, {-1, -88662542}, 221656352, 0},
    };
    // The random set's elementwise cases of 8- and 16-byte elements below 0.9 of the
    // sector-exact roofline (axes as the engine orders them: destination strides falling,
    // each made positive, size-1 axes dropped, neighbours that merge merged).
    const Case word_cases[] = {
        {"random case 9 (8-byte, 5-D)", 5, {63, 49, 5, 51, 21}, {1049580, 10710, 2142, 21, 1}, {-21, -1323, 64827, 324135, -1}, 64826, 0, 265603488.0},
        {"random case 11 (8-byte, 3-D)", 3, {1318044, 3, 3}, {18, 3, 1}, {3, 1, 4031664}, 0, 0, 284697504.0},
        {"random case 109 (8-byte, 5-D)", 5, {13, 15, 2, 390, 57}, {1333800, 88920, 44460, 114, 1}, {-1337220, -44574, 17383860, -114, -2}, 16715134, 0, 219029824.0},
        {"random case 160 (8-byte, 4-D)", 4, {9, 18205, 47, 2}, {6845080, 376, 8, 2}, {98, 882, 2, -1}, 1, 0, 618678720.0},
        {"random case 196 (8-byte, 4-D)", 4, {37, 382, 11, 63}, {1271296, 3328, 128, 2}, {65, -31265, 2405, -1}, 11912027, 0, 399260288.0},
    };
    const Case wide_cases[] = {
        {"random case 13 (16-byte, 3-D)", 3, {3, 97881, 17}, {3328022, 17, 1}, {-293643, -1, 0}, 685166, 0, 84569376.0},
        {"random case 29 (16-byte, 3-D)", 3, {9, 210415, 3}, {1262490, 6, 1}, {2524980, -1, 420830}, 210414, 0, 272698272.0},
        {"random case 42 (16-byte, 4-D)", 4, {7, 8134, 3, 45}, {2196180, 270, 90, 1}, {-270, 0, 90, 2}, 1620, 0, 131215392.0},
        {"random case 50 (16-byte, 4-D)", 4, {94089, 3, 9, 3}, {324, 108, 12, 1}, {-3, -5080806, 282267, 1}, 10443876, 0, 365818080.0},
        {"random case 108 (16-byte, 4-D)", 4, {2, 3, 35915, 27}, {11636460, 3878820, 108, 2}, {0, -1, 0, 3}, 2, 0, 372368032.0},
        {"random case 152 (16-byte, 6-D)", 6, {27, 3, 3, 3434, 3, 3}, {1112616, 370872, 123624, 36, 6, 2}, {1112616, -61812, 10302, -3, 370872, 1}, 133923, 0, 600812640.0},
        {"random case 184 (16-byte, 2-D)", 2, {735426, 9}, {18, 1}, {-1, -1470852}, 12502241, 0, 247103136.0},
        {"random case 192 (16-byte, 2-D)", 2, {438465, 13}, {26, 1}, {14, -1}, 12, 0, 210463200.0},
    };
    // The same for 2- and 4-byte elements (runs of consecutive elements on both sides
    // left out: the engine copies those with the run kernel).
    const Case half_cases[] = {
        {"random 8-16 MiB case 92 (a halfword into every other)", 1, {6792321}, {2}, {0}, 0, 0, 54338656.0},
        {"random case 37 (2-byte, 5-D)", 5, {2, 13, 3, 3, 220381}, {111072024, 7933716, 2644572, 440762, 2}, {-3966858, 15867432, 220381, -661143, 1}, 5289144, 0, 515696448.0},
        {"random case 38 (2-byte, 5-D)", 5, {61, 3, 160, 43, 51}, {4335408, 1445136, 4488, 102, 2}, {26832, -8944, 1636752, -104, 1}, 22256, 0, 676485120.0},
        {"random case 46 (2-byte, 4-D)", 4, {2061114, 3, 3, 3}, {108, 18, 6, 2}, {36, 12, 74200104, 2}, 0, 0, 1005823680.0},
        {"random case 47 (2-byte, 4-D)", 4, {41, 2, 45931, 11}, {2020964, 1010482, 22, 2}, {-22, 924, -1848, 2}, 84879520, 0, 499729344.0},
        {"random case 117 (2-byte, 3-D)", 3, {550860, 25, 3}, {75, 3, 1}, {0, 3, 0}, 0, 0, 82629216.0},
        {"random case 137 (2-byte, 3-D)", 3, {31, 3, 491067}, {2946402, 982134, 1}, {2946402, 2, 6}, 0, 0, 274023744.0},
        {"random case 140 (2-byte, 3-D)", 3, {4671236, 3, 3}, {36, 6, 2}, {3, 1, 28027416}, 0, 0, 682000512.0},
        {"random case 163 (2-byte, 5-D)", 5, {3, 3, 49074, 41, 3}, {74199888, 24733296, 504, 12, 2}, {82, -246, -1476, 2, 72433224}, 72432240, 0, 1097687232.0},
        {"random case 175 (2-byte, 3-D)", 3, {206030, 3, 87}, {261, 87, 1}, {261, 1, 3}, 0, 0, 215095392.0},
    };
    const Case word4_cases[] = {
        {"random case 6 (4-byte, 2-D)", 2, {1408509, 13}, {30, 1}, {-26, 2}, 36621208, 0, 338042144.0},
        {"random case 8 (4-byte, 2-D)", 2, {2520004, 13}, {26, 1}, {-1, 2520004}, 2520003, 0, 473760768.0},
        {"random case 19 (4-byte, 2-D)", 2, {3, 5852249}, {23409000, 2}, {-5852249, 1}, 11704498, 0, 351135104.0},
        {"random case 126 (4-byte, 4-D)", 4, {2500, 25, 13, 21}, {29400, 1176, 84, 2}, {42, -2730000, 210000, -2}, 65520040, 0, 448500000.0},
        {"random case 142 (4-byte, 5-D)", 5, {47, 43, 70, 33, 5}, {1986600, 23100, 330, 10, 2}, {33, 3102, -1333860, 1, -266772}, 93103428, 0, 467271104.0},
    };
    // `small` as the second argument: the small many-axis permutes of `small_bench` that
    // PyTorch copies faster (a quarter of a wave of threads or less; on the H200 every
    // depth and block size took the same time, BENCHMARKS.md). Axes as the engine orders
    // them.
    const Case small_word4_cases[] = {
        {"small 6-D 8^6 f32 permute [5,3,1,4,2,0]", 6, {8, 8, 8, 8, 8, 8}, {32768, 4096, 512, 64, 8, 1}, {1, 64, 4096, 8, 512, 32768}, 0, 0, 2097152.0},
        {"small 6-D 10^6 f32 permute [5,3,1,4,2,0]", 6, {10, 10, 10, 10, 10, 10}, {100000, 10000, 1000, 100, 10, 1}, {1, 100, 10000, 10, 1000, 100000}, 0, 0, 8000000.0},
    };
    const Case small_word8_cases[] = {
        {"small 5-D (12,20,3,24,18) f64 permute [3,1,4,0,2]", 5, {24, 20, 18, 12, 3}, {12960, 648, 36, 3, 1}, {18, 1296, 1, 25920, 432}, 0, 0, 4976640.0},
        {"small 5-D (6,10,3,12,9) f64 permute [3,1,4,0,2]", 5, {12, 10, 9, 6, 3}, {1620, 162, 18, 3, 1}, {9, 324, 1, 3240, 108}, 0, 0, 311040.0},
    };
#define LAB_CASES(a) cases = a, ncases = (int)(sizeof(a) / sizeof(Case))
    const Case* cases = byte_cases;
    int ncases = 4;
    const bool small = argc > 2 && std::string(argv[2]) == "small";
    switch (sizeof(ELEM)) {
    case 2: LAB_CASES(half_cases); break;
    case 4: if (small) LAB_CASES(small_word4_cases); else LAB_CASES(word4_cases); break;
    case 8: if (small) LAB_CASES(small_word8_cases); else LAB_CASES(word_cases); break;
    case 16: LAB_CASES(wide_cases); break;
    default: break;
    }
    for (int ci = 0; ci < ncases; ++ci) {
        const Case& c = cases[ci];
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
        const size_t sbytes = (size_t)(c.soff + shi + 1) * sizeof(ELEM), dbytes = (size_t)(c.doff + dhi + 1) * sizeof(ELEM);
        ELEM *s, *d, *want;
        CK(cudaMalloc(&s, sbytes)); CK(cudaMalloc(&d, dbytes)); CK(cudaMalloc(&want, dbytes));
        fill_random<<<4096, 256, 0, lab.st>>>((unsigned char*)s, sbytes, 1);
        fill_random<<<4096, 256, 0, lab.st>>>((unsigned char*)want, dbytes, 2);
        CK(cudaMemcpyAsync(d, want, dbytes, cudaMemcpyDeviceToDevice, lab.st));
        reference<<<4096, 256, 0, lab.st>>>(s + c.soff, want + c.doff, p, c.nd);
        void (*const kernels[])(const ELEM*, ELEM*, const Params) = {
            strided_copy_1, strided_copy_2, strided_copy_3, strided_copy_4, strided_copy_5, strided_copy_6};
        auto kern = kernels[c.nd - 1];
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, block, 0));
        const long long chunks = (n + (long long)block * UNR - 1) / ((long long)block * UNR);
        const long long persistent = std::min<long long>(chunks, (long long)lab.prop.multiProcessorCount * per_sm);
        // Written sectors read and written back, source sectors read (a small source once).
        const double traffic = c.sectors > 0 ? c.sectors : 2.0 * (double)dbytes + (shi - slo + 1 < (long long)dbytes / 4 ? 0.0 : (double)sbytes);
        for (long long grid : {persistent, chunks}) {
            kern<<<(unsigned)grid, block, 0, lab.st>>>(s + c.soff, d + c.doff, p);
            CK(cudaGetLastError());
            const unsigned long long bad = lab.differing((unsigned char*)d, (unsigned char*)want, dbytes);
            const double ms = lab.median_ms([&] { kern<<<(unsigned)grid, block, 0, lab.st>>>(s + c.soff, d + c.doff, p); });
            printf("%-50s %zu-byte UNR %2d OFF %-9s block %3d grid %8lld (%d/SM): %.4f ms, %.2f of the sector roofline, %llu bad bytes\n",
                   c.name, sizeof(ELEM), UNR, STR(LAB_OFF), block, grid, per_sm, ms,
                   traffic / (lab.mem_gbs * 1e6) / ms, bad);
        }
        CK(cudaFree(s)); CK(cudaFree(d)); CK(cudaFree(want));
    }
    return 0;
}
