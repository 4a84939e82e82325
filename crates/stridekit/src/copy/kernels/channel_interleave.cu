// Interleaving transposes of 1- and 2-byte elements: channel layouts such as RGB planar
// -> interleaved and NCHW -> NHWC. Compiled with ELEM, EB (1 or 2), CH (channels, 2..16),
// NDIM and PMAX defined before the prelude; `load_run` and `store_run` come from
// channel_runs.cu.
//
// The long axis `a` (pixels) is the source's unit-stride axis, the short axis `l`
// (channels) the destination's, and the destination's pixels are dense (CH elements
// apart: no gaps to preserve). A tile is P pixels: each of the CH source planes arrives
// as a run of 16-byte aligned chunks; each thread takes K pixels (one 32-bit word of
// every plane, realigned with a funnel shift) and writes their CH words of interleaved
// output; the destination's P * CH elements leave as one run of aligned chunks.
#define K (4 / EB)
#define RUN (CH <= 4 ? 4096 : (16384 / CH) / 16 * 16)  // bytes per plane of a tile
#define P (RUN / EB)                                   // pixels per tile
#define PITCHI (RUN + 32)                              // plane pitch: shift, bytes, slack
#define OUTB (RUN * CH)                                // interleaved bytes of a tile

extern "C" __global__ void __launch_bounds__(256) channel_interleave(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[CH * PITCHI];
    __shared__ __align__(16) unsigned char tout[OUTB + 4];
    __shared__ int shift[CH];
    __shared__ long long tile_at[3];  // the next tile: source and destination offsets, first pixel
    const long long n = p.shape[a];
    const long long tiles_per = (n + P - 1) / P, total = tiles_per * batches;
    if (threadIdx.x == 0 && blockIdx.x < total) locate_tile(p, a, l, blockIdx.x, tiles_per, P, tile_at);
    __syncthreads();
    const long long sl = p.src[l];
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        const long long so = tile_at[0], d = tile_at[1], x0 = tile_at[2];
        const int px = (int)min((long long)P, n - x0);  // pixels in this tile
        // Each plane's run with a share of the threads.
        {
            const int per = blockDim.x / CH;
            const int c = threadIdx.x / per;
            if (c < CH) {
                const unsigned char* s0 = src + (so + c * sl + x0) * EB;
                if (threadIdx.x == c * per) shift[c] = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
                load_run(s0, px * EB, tin + c * PITCHI, lo, hi, threadIdx.x - c * per, per);
            }
        }
        __syncthreads();
        // K pixels a thread: a word of each plane in, CH words of interleaved elements out.
        for (int g = threadIdx.x; g * K < px; g += blockDim.x) {
            unsigned int w[CH];
#pragma unroll
            for (int c = 0; c < CH; ++c) {
                const int o = shift[c] + 4 * g;
                const unsigned int* row = reinterpret_cast<const unsigned int*>(tin + c * PITCHI);
                w[c] = (o & 3) == 0 ? row[o >> 2] : __funnelshift_r(row[o >> 2], row[(o >> 2) + 1], 8 * (o & 3));
            }
            unsigned int out[CH];
#pragma unroll
            for (int j = 0; j < CH; ++j) out[j] = 0;
#pragma unroll
            for (int k = 0; k < K * CH; ++k) {
                // Interleaved element k: channel k % CH of the group's pixel k / CH.
                const unsigned int e = (w[k % CH] >> (8 * EB * (k / CH))) & ((1u << (8 * EB)) - 1u);
                out[k / K] |= e << (8 * EB * (k % K));
            }
#pragma unroll
            for (int j = 0; j < CH; ++j)
                *reinterpret_cast<unsigned int*>(tout + 4 * (g * CH + j)) = out[j];
        }
        __syncthreads();
        store_run(dst + (d + x0 * CH) * EB, px * CH * EB, tout, threadIdx.x, blockDim.x);
        __syncthreads();
        if (threadIdx.x == 0 && t + gridDim.x < total) locate_tile(p, a, l, t + gridDim.x, tiles_per, P, tile_at);
        __syncthreads();
    }
}
