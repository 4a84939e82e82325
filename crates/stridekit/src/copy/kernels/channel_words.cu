// Channel layouts of 1- and 2-byte elements with every run 16-byte aligned, in registers:
// RGB interleaved <-> planar, NHWC <-> NCHW, RGBA (M, 4) -> (4, M), and the channels
// picked out of interleaved pixels (x[..., 0] of RGB; x[::2] of bytes). Compiled with ELEM,
// EB (1 or 2), CH (channels, 1..4), SPLIT (1: interleaved pixels in, planes out; 0: planes
// in, interleaved pixels out), NDIM and PMAX defined before the prelude, and for SPLIT
// optionally SL (elements from one interleaved pixel to the next, CH..4; CH by default:
// the channels past CH are read, never written).
//
// A thread moves a group of G pixels: the group's SL * 16 interleaved bytes (dense
// pixels) and 16 bytes of each of the CH planes, all as aligned 16-byte accesses, the
// elements regrouped in registers (byte selects); no shared memory, no barrier. The host
// takes this kernel only where every batch's interleaved run and every plane start at a
// multiple of 16 bytes, so that each whole group is aligned; a batch's last, partial
// group goes element by element. The interleaved side passes through a warp's slice of
// shared memory, so that its global accesses are whole 512-byte lines per instruction.
//
// Axes: with SPLIT, `a` holds the channels (the source's unit-stride axis) and `l` the
// pixels; without, `a` holds the pixels and `l` the channels. One block's row of the grid
// (blockIdx.y, blockIdx.z) is one batch (every axis but `a` and `l`).
#define G (16 / EB)  // pixels of a group: 16 bytes of each plane
#ifndef SL
#define SL CH  // elements from one interleaved pixel to the next
#endif
#ifndef CW_THREADS
#define CW_THREADS 256  // threads a block at most (a launch may take fewer whole warps)
#endif
// Chunk q of a warp's staged interleaved run, swizzled so that both the line-wise and the
// group-wise accesses of 8 lanes hit distinct banks (odd SL needs no swizzle).
#ifndef CW_STAGE
#define CW_STAGE 1  // 0: the interleaved side group by group (a lab variant)
#endif
#define CW_SWZ(q) ((SL & 1) ? (q) : ((q) ^ (((q) >> 3) & 7)))

// Element `e` (a compile-time index once unrolled) of the words `w`.
__device__ __forceinline__ unsigned int cw_elem(const unsigned int* w, int e) {
    const int byte = e * EB;
    return (w[byte >> 2] >> (8 * (byte & 3))) & (EB == 1 ? 0xffu : 0xffffu);
}

// The CH planes' words `pw` (plane c's word j at pw[4 * c + j]) from the interleaved words
// `iw`, or the other way round.
__device__ __forceinline__ void cw_split(const unsigned int* iw, unsigned int* pw) {
#pragma unroll
    for (int c = 0; c < CH; ++c)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unsigned int r = 0;
#pragma unroll
            for (int k = 0; k < 4 / EB; ++k) r |= cw_elem(iw, (j * (4 / EB) + k) * SL + c) << (8 * EB * k);
            pw[4 * c + j] = r;
        }
}
__device__ __forceinline__ void cw_merge(const unsigned int* pw, unsigned int* iw) {
#pragma unroll
    for (int m = 0; m < 4 * CH; ++m) {
        unsigned int r = 0;
#pragma unroll
        for (int k = 0; k < 4 / EB; ++k) {
            const int e = m * (4 / EB) + k;  // interleaved element: pixel e / CH, channel e % CH
            r |= cw_elem(pw + 4 * (e % CH), e / CH) << (8 * EB * k);
        }
        iw[m] = r;
    }
}

extern "C" __global__ void __launch_bounds__(CW_THREADS) channel_words(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ uint4 stage[CW_THREADS * SL];
    __shared__ long long at[2];
    const long long b = blockIdx.y + (long long)gridDim.y * blockIdx.z;
    if (b >= batches) return;  // the whole block
    if (threadIdx.x == 0) batch_offsets(p, a, l, b, at[0], at[1]);
    __syncthreads();
    const long long n = SPLIT ? p.shape[l] : p.shape[a];       // pixels
    const long long plane = SPLIT ? p.dst[a] : p.src[l];       // elements from plane to plane
    const unsigned char* s = src + at[0] * EB;
    unsigned char* d = dst + at[1] * EB;
    unsigned char* inter = SPLIT ? (unsigned char*)s : d;     // the interleaved run
    unsigned char* planar = SPLIT ? d : (unsigned char*)s;     // plane 0
    const int lane = threadIdx.x & 31;
    const long long g0 = (long long)blockIdx.x * blockDim.x + (threadIdx.x - lane);  // the warp's first group
    const long long x0 = (g0 + lane) * G;                                            // this thread's first pixel
    uint4* slice = stage + (threadIdx.x - lane) * SL;
    // Whole warps of whole groups stage the interleaved side; others go group by group.
    // With a gap after each pixel's channels (SL > CH) a whole group also reads its last
    // pixel's gap: only inside [lo, hi), the source memory; else element by element.
    const unsigned long long wfrom = reinterpret_cast<unsigned long long>(inter + g0 * G * SL * EB);
    const unsigned long long gfrom = wfrom + 16ull * SL * lane;
    const bool staged = CW_STAGE && (g0 + 32) * G <= n && (SL == CH || (wfrom >= lo && wfrom + 512ull * SL <= hi));
    const bool whole = x0 + G <= n && (SL == CH || (gfrom >= lo && gfrom + 16ull * SL <= hi));
    unsigned int iw[4 * SL], pw[4 * CH];
    if (staged || whole) {
        const uint4* ig = reinterpret_cast<const uint4*>(inter + g0 * G * SL * EB);
        if (SPLIT) {
            if (staged) {
#pragma unroll
                for (int i = 0; i < SL; ++i) slice[CW_SWZ(32 * i + lane)] = __ldg(ig + 32 * i + lane);
                __syncwarp();
#pragma unroll
                for (int i = 0; i < SL; ++i) *reinterpret_cast<uint4*>(iw + 4 * i) = slice[CW_SWZ(SL * lane + i)];
            } else {
#pragma unroll
                for (int i = 0; i < SL; ++i) *reinterpret_cast<uint4*>(iw + 4 * i) = __ldg(ig + SL * lane + i);
            }
            cw_split(iw, pw);
#pragma unroll
            for (int c = 0; c < CH; ++c)
                *reinterpret_cast<uint4*>(planar + (c * plane + x0) * EB) = *reinterpret_cast<const uint4*>(pw + 4 * c);
        } else {
#pragma unroll
            for (int c = 0; c < CH; ++c)
                *reinterpret_cast<uint4*>(pw + 4 * c) =
                    __ldg(reinterpret_cast<const uint4*>(planar + (c * plane + x0) * EB));
            cw_merge(pw, iw);
            uint4* og = reinterpret_cast<uint4*>(inter + g0 * G * SL * EB);
            if (staged) {
#pragma unroll
                for (int i = 0; i < SL; ++i) slice[CW_SWZ(SL * lane + i)] = *reinterpret_cast<const uint4*>(iw + 4 * i);
                __syncwarp();
#pragma unroll
                for (int i = 0; i < SL; ++i) og[32 * i + lane] = slice[CW_SWZ(32 * i + lane)];
            } else {
#pragma unroll
                for (int i = 0; i < SL; ++i) og[SL * lane + i] = *reinterpret_cast<const uint4*>(iw + 4 * i);
            }
        }
    } else if (x0 < n) {
        // The batch's last, partial group (or a group at the source memory's end).
        for (long long x = x0; x < min(n, x0 + G); ++x)
#pragma unroll
            for (int c = 0; c < CH; ++c) {
                const ELEM* from = reinterpret_cast<const ELEM*>(SPLIT ? inter + (x * SL + c) * EB : planar + (c * plane + x) * EB);
                ELEM* to = reinterpret_cast<ELEM*>(SPLIT ? planar + (c * plane + x) * EB : inter + (x * SL + c) * EB);
                *to = *from;
            }
    }
}
