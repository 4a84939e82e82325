// Kernel lab: a ladder from a plain copy to the tile kernels' block structure, on a
// contiguous byte copy, to find the step that caps it. The image-tile lab
// (image_tile_lab.cu) showed a contiguous copy through the tile structure (a ~4 KB tile a
// block, 3 blocks of 256 threads an SM, loads, a barrier, a shared-memory round trip, the
// write-out, tile after tile) reaching 0.43 of the sector roofline, the level of the
// engine's one-element byte tiles. Each rung adds one step to the one before:
//   R1 direct:   a block takes a chunk of 256 * W words a round; each thread loads its W
//                words (coalesced), then stores them. No shared memory, no barrier.
//   R2 barrier:  R1 + a barrier after the loads, every round.
//   R3 shared:   the words go through shared memory (store, barrier, load, store to
//                global, barrier), each thread its own words back.
//   R4 pipelined: R3 with the next round's loads issued before this round's write-out
//                (the tile kernels' order).
//   R5 bytes:    R4 with one-byte loads and stores (the one-element byte tiles' width),
//                4 * W bytes a thread.
//   R6, R7:      R5 with one side in words: bytes in and words out (the written word's
//                shared load and store), or words in and bytes out.
//   R8, R9:      R7 with the written bytes gathered through a table (identity here), as
//                a permuting tile's are: bytes out, or words assembled from four bytes.
// Each rung runs at several blocks an SM (the grid: that many blocks an SM, each walking
// the chunks grid-stride) and words a thread; every run is checked byte for byte against
// the source, then timed (median of 20, L2 evicted before each run: lab_common.h) and
// rated on the sector-exact roofline (a contiguous copy: read + write of its bytes at the
// same run's 1 GiB memcpy rate).
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/ladder bench/kernel_lab/tile_ladder_lab.cu && /tmp/ladder
#include "lab_common.h"

template <int W>
__global__ void __launch_bounds__(256) r1_direct(const unsigned* __restrict__ s, unsigned* __restrict__ d, long long n) {
    const long long chunk = 256LL * W;
    for (long long c = blockIdx.x * chunk; c < n; c += (long long)gridDim.x * chunk) {
        unsigned v[W];
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) v[u] = s[i];
        }
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) d[i] = v[u];
        }
    }
}

template <int W>
__global__ void __launch_bounds__(256) r2_barrier(const unsigned* __restrict__ s, unsigned* __restrict__ d, long long n) {
    const long long chunk = 256LL * W;
    for (long long c = blockIdx.x * chunk; c < n; c += (long long)gridDim.x * chunk) {
        unsigned v[W];
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) v[u] = s[i];
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) d[i] = v[u];
        }
    }
}

template <int W>
__global__ void __launch_bounds__(256) r3_shared(const unsigned* __restrict__ s, unsigned* __restrict__ d, long long n) {
    __shared__ unsigned img[256 * W];
    const long long chunk = 256LL * W;
    for (long long c = blockIdx.x * chunk; c < n; c += (long long)gridDim.x * chunk) {
        unsigned v[W];
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) v[u] = s[i];
        }
#pragma unroll
        for (int u = 0; u < W; ++u) img[u * 256 + threadIdx.x] = v[u];
        __syncthreads();
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) d[i] = img[u * 256 + threadIdx.x];
        }
        __syncthreads();
    }
}

template <int W>
__global__ void __launch_bounds__(256) r4_pipelined(const unsigned* __restrict__ s, unsigned* __restrict__ d, long long n) {
    __shared__ unsigned img[256 * W];
    const long long chunk = 256LL * W, step = (long long)gridDim.x * chunk;
    long long c = blockIdx.x * chunk;
    if (c >= n) return;
    unsigned v[W];
#pragma unroll
    for (int u = 0; u < W; ++u) {
        const long long i = c + u * 256 + threadIdx.x;
        if (i < n) v[u] = s[i];
    }
    for (;;) {
#pragma unroll
        for (int u = 0; u < W; ++u) img[u * 256 + threadIdx.x] = v[u];
        __syncthreads();
        const long long next = c + step;
        if (next < n) {
#pragma unroll
            for (int u = 0; u < W; ++u) {
                const long long i = next + u * 256 + threadIdx.x;
                if (i < n) v[u] = s[i];
            }
        }
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) d[i] = img[u * 256 + threadIdx.x];
        }
        __syncthreads();
        if (next >= n) break;
        c = next;
    }
}

// R4 with bytes: a chunk of 256 * 4W bytes, one byte a thread an access.
template <int W>
__global__ void __launch_bounds__(256) r5_bytes(const unsigned char* __restrict__ s, unsigned char* __restrict__ d, long long n) {
    constexpr int B = 4 * W;
    __shared__ unsigned char img[256 * B];
    const long long chunk = 256LL * B, step = (long long)gridDim.x * chunk;
    long long c = blockIdx.x * chunk;
    if (c >= n) return;
    unsigned char v[B];
#pragma unroll
    for (int u = 0; u < B; ++u) {
        const long long i = c + u * 256 + threadIdx.x;
        if (i < n) v[u] = s[i];
    }
    for (;;) {
#pragma unroll
        for (int u = 0; u < B; ++u) img[u * 256 + threadIdx.x] = v[u];
        __syncthreads();
        const long long next = c + step;
        if (next < n) {
#pragma unroll
            for (int u = 0; u < B; ++u) {
                const long long i = next + u * 256 + threadIdx.x;
                if (i < n) v[u] = s[i];
            }
        }
#pragma unroll
        for (int u = 0; u < B; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) d[i] = img[u * 256 + threadIdx.x];
        }
        __syncthreads();
        if (next >= n) break;
        c = next;
    }
}


// R6: bytes in (one-byte loads and shared stores), words out (a word's shared load and
// store): what widening only the write side of a byte tile allows.
template <int W>
__global__ void __launch_bounds__(256) r6_bytes_in_words_out(const unsigned char* __restrict__ s, unsigned char* __restrict__ d, long long n) {
    constexpr int B = 4 * W;
    __shared__ __align__(16) unsigned char img[256 * B];
    const long long chunk = 256LL * B, step = (long long)gridDim.x * chunk;
    long long c = blockIdx.x * chunk;
    if (c >= n) return;
    unsigned char v[B];
#pragma unroll
    for (int u = 0; u < B; ++u) {
        const long long i = c + u * 256 + threadIdx.x;
        if (i < n) v[u] = s[i];
    }
    for (;;) {
#pragma unroll
        for (int u = 0; u < B; ++u) img[u * 256 + threadIdx.x] = v[u];
        __syncthreads();
        const long long next = c + step;
        if (next < n) {
#pragma unroll
            for (int u = 0; u < B; ++u) {
                const long long i = next + u * 256 + threadIdx.x;
                if (i < n) v[u] = s[i];
            }
        }
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const long long i = c + 4 * (u * 256 + threadIdx.x);
            if (i + 4 <= n) *reinterpret_cast<unsigned*>(d + i) = *reinterpret_cast<const unsigned*>(img + 4 * (u * 256 + threadIdx.x));
        }
        __syncthreads();
        if (next >= n) break;
        c = next;
    }
}

// R7: words in (a word's load and shared store), bytes out (one-byte shared loads and
// stores): what widening only the read side allows.
template <int W>
__global__ void __launch_bounds__(256) r7_words_in_bytes_out(const unsigned char* __restrict__ s, unsigned char* __restrict__ d, long long n) {
    constexpr int B = 4 * W;
    __shared__ __align__(16) unsigned char img[256 * B];
    const long long chunk = 256LL * B, step = (long long)gridDim.x * chunk;
    long long c = blockIdx.x * chunk;
    if (c >= n) return;
    unsigned v[W];
#pragma unroll
    for (int u = 0; u < W; ++u) {
        const long long i = c + 4 * (u * 256 + threadIdx.x);
        if (i + 4 <= n) v[u] = *reinterpret_cast<const unsigned*>(s + i);
    }
    for (;;) {
#pragma unroll
        for (int u = 0; u < W; ++u) *reinterpret_cast<unsigned*>(img + 4 * (u * 256 + threadIdx.x)) = v[u];
        __syncthreads();
        const long long next = c + step;
        if (next < n) {
#pragma unroll
            for (int u = 0; u < W; ++u) {
                const long long i = next + 4 * (u * 256 + threadIdx.x);
                if (i + 4 <= n) v[u] = *reinterpret_cast<const unsigned*>(s + i);
            }
        }
#pragma unroll
        for (int u = 0; u < B; ++u) {
            const long long i = c + u * 256 + threadIdx.x;
            if (i < n) d[i] = img[u * 256 + threadIdx.x];
        }
        __syncthreads();
        if (next >= n) break;
        c = next;
    }
}


// R8: R7 with the write side's bytes gathered through a table (an identity one here), as a
// permuting tile must: for each written byte a 16-bit table load, then the byte's load.
// R9: the same gather assembling written words (four table and four byte loads, one word
// store): the image-tile lab's write side, here at any blocks an SM.
template <int W, bool WORDS>
__global__ void __launch_bounds__(256) r8_gather(const unsigned char* __restrict__ s, unsigned char* __restrict__ d, long long n,
                                                const unsigned short* __restrict__ table) {
    constexpr int B = 4 * W;
    __shared__ __align__(16) unsigned char img[256 * B];
    __shared__ unsigned short tab[256 * B];
    for (int i = threadIdx.x; i < 256 * B; i += 256) tab[i] = table[i];
    const long long chunk = 256LL * B, step = (long long)gridDim.x * chunk;
    long long c = blockIdx.x * chunk;
    if (c >= n) return;
    unsigned v[W];
#pragma unroll
    for (int u = 0; u < W; ++u) {
        const long long i = c + 4 * (u * 256 + threadIdx.x);
        if (i + 4 <= n) v[u] = *reinterpret_cast<const unsigned*>(s + i);
    }
    for (;;) {
#pragma unroll
        for (int u = 0; u < W; ++u) *reinterpret_cast<unsigned*>(img + 4 * (u * 256 + threadIdx.x)) = v[u];
        __syncthreads();
        const long long next = c + step;
        if (next < n) {
#pragma unroll
            for (int u = 0; u < W; ++u) {
                const long long i = next + 4 * (u * 256 + threadIdx.x);
                if (i + 4 <= n) v[u] = *reinterpret_cast<const unsigned*>(s + i);
            }
        }
        if (WORDS) {
#pragma unroll
            for (int u = 0; u < W; ++u) {
                const int p = 4 * (u * 256 + threadIdx.x);
                const long long i = c + p;
                unsigned w = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b) w |= (unsigned)img[tab[p + b]] << (8 * b);
                if (i + 4 <= n) *reinterpret_cast<unsigned*>(d + i) = w;
            }
        } else {
#pragma unroll
            for (int u = 0; u < B; ++u) {
                const int p = u * 256 + threadIdx.x;
                const long long i = c + p;
                if (i < n) d[i] = img[tab[p]];
            }
        }
        __syncthreads();
        if (next >= n) break;
        c = next;
    }
}

int main() {
    Lab lab;
    const long long bytes = 84488192;  // case 106's 84.5 MB, a multiple of 4
    const long long n = bytes / 4;
    unsigned char *s, *d;
    CK(cudaMalloc(&s, bytes)); CK(cudaMalloc(&d, bytes));
    fill_random<<<4096, 256>>>(s, bytes, 0x1adde4);
    CK(cudaDeviceSynchronize());
    const double roof_ms = 2.0 * bytes / lab.mem_gbs / 1e6;
    auto rung = [&](const char* name, int w, auto launch) {
        for (int per_sm : {3, 4, 6, 8}) {
            const int grid = per_sm * lab.prop.multiProcessorCount;
            CK(cudaMemsetAsync(d, 0xA5, bytes, lab.st));
            launch(grid);
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(lab.st));
            const unsigned long long bad = lab.differing(s, d, bytes);
            const double ms = lab.median_ms([&] { launch(grid); });
            printf("%-22s W %2d (%5d B a block a round), %d blocks an SM: %.4f ms, %.3f of the roofline, %llu bad bytes\n", name, w,
                   1024 * w, per_sm, ms, roof_ms / ms, bad);
        }
    };
    const double mms = lab.median_ms([&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, lab.st)); });
    printf("memcpy of the same bytes: %.4f ms, %.3f of the roofline\n", mms, roof_ms / mms);
    const unsigned* sw = (const unsigned*)s;
    unsigned* dw = (unsigned*)d;
#define RUNG(K, W) rung(#K, W, [&](int g) { K<W><<<g, 256, 0, lab.st>>>(sw, dw, n); })
    RUNG(r1_direct, 4); RUNG(r1_direct, 16);
    RUNG(r2_barrier, 4); RUNG(r2_barrier, 16);
    RUNG(r3_shared, 4); RUNG(r3_shared, 16);
    RUNG(r4_pipelined, 4); RUNG(r4_pipelined, 16);
#undef RUNG
    rung("r5_bytes", 4, [&](int g) { r5_bytes<4><<<g, 256, 0, lab.st>>>(s, d, bytes); });
    rung("r5_bytes", 16, [&](int g) { r5_bytes<16><<<g, 256, 0, lab.st>>>(s, d, bytes); });
    rung("r6_bytes_in_words_out", 4, [&](int g) { r6_bytes_in_words_out<4><<<g, 256, 0, lab.st>>>(s, d, bytes); });
    rung("r7_words_in_bytes_out", 4, [&](int g) { r7_words_in_bytes_out<4><<<g, 256, 0, lab.st>>>(s, d, bytes); });
    {
        std::vector<unsigned short> ident(4096);
        for (int i = 0; i < 4096; ++i) ident[i] = (unsigned short)i;
        unsigned short* tab;
        CK(cudaMalloc(&tab, 2 * 4096));
        CK(cudaMemcpy(tab, ident.data(), 2 * 4096, cudaMemcpyHostToDevice));
        rung("r8_gather_bytes", 4, [&](int g) { r8_gather<4, false><<<g, 256, 0, lab.st>>>(s, d, bytes, tab); });
        rung("r9_gather_words", 4, [&](int g) { r8_gather<4, true><<<g, 256, 0, lab.st>>>(s, d, bytes, tab); });
    }
    return 0;
}
