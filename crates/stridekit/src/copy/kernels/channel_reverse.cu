// Channels reversed within each pixel (RGB -> BGR, `x[..., ::-1]`) for 1- and 2-byte
// elements. Compiled with ELEM, EB (1 or 2), CH (channels, 2..16), NDIM and PMAX defined
// before the prelude; `load_run` and `store_run` come from channel_runs.cu.
//
// With CH 1 and EB 1 it is the shifted-rows copy: each row's bytes in and out as runs of
// aligned chunks, realigned in shared memory (`px_axis` and `ch_axis` are then the same
// axis, the rows).
//
// Axis `p` (pixels) is CH elements apart on both sides, axis `c` (channels) has stride
// -1 in the source and 1 in the destination; other axes are batches. A tile is P pixels:
// their source bytes arrive as one run of 16-byte aligned chunks (from the tile's lowest
// address), each thread takes K pixels (CH words, realigned with a funnel shift),
// reverses every pixel's channels in registers and writes CH words; the destination's
// P * CH elements leave as one run of aligned chunks.
#define K (4 / EB)
#define RUN (CH == 1 ? 8192 : CH <= 4 ? 4096 : (16384 / CH) / 16 * 16)  // bytes per channel of a tile
#define P (RUN / EB)                                   // pixels per tile
#define BYTES (RUN * CH)                               // bytes of a tile

extern "C" __global__ void __launch_bounds__(256) channel_reverse(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int px_axis, int ch_axis, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[BYTES + 32];
    __shared__ __align__(16) unsigned char tout[BYTES + 4];
    __shared__ int shift;
    __shared__ long long tile_at[3];  // the next tile: source and destination offsets, first pixel
    const long long n = p.shape[px_axis];
    const long long tiles_per = (n + P - 1) / P, total = tiles_per * batches;
    if (threadIdx.x == 0 && blockIdx.x < total) locate_tile(p, px_axis, ch_axis, blockIdx.x, tiles_per, P, tile_at);
    __syncthreads();
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        const long long so = tile_at[0], d = tile_at[1], x0 = tile_at[2];
        const int px = (int)min((long long)P, n - x0);  // pixels in this tile
        // Element 0 of a source pixel is its last channel: the tile starts CH - 1 lower.
        const unsigned char* s0 = src + (so + x0 * CH - (CH - 1)) * EB;
        if (threadIdx.x == 0) shift = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
        load_run(s0, px * CH * EB, tin, lo, hi, threadIdx.x, blockDim.x);
        __syncthreads();
        const unsigned int* row = reinterpret_cast<const unsigned int*>(tin);
        const int sh = shift;
        for (int g = threadIdx.x; g * K < px; g += blockDim.x) {
            unsigned int w[CH];
#pragma unroll
            for (int j = 0; j < CH; ++j) {
                const int o = sh + 4 * (g * CH + j);
                w[j] = (o & 3) == 0 ? row[o >> 2] : __funnelshift_r(row[o >> 2], row[(o >> 2) + 1], 8 * (o & 3));
            }
            unsigned int out[CH];
#pragma unroll
            for (int j = 0; j < CH; ++j) out[j] = 0;
#pragma unroll
            for (int k = 0; k < K * CH; ++k) {
                // Element k (pixel k / CH, channel k % CH) comes from the same pixel's
                // channel CH - 1 - k % CH.
                const int from = (k / CH) * CH + (CH - 1 - k % CH);
                const unsigned int e = (w[from / K] >> (8 * EB * (from % K))) & ((1u << (8 * EB)) - 1u);
                out[k / K] |= e << (8 * EB * (k % K));
            }
#pragma unroll
            for (int j = 0; j < CH; ++j)
                *reinterpret_cast<unsigned int*>(tout + 4 * (g * CH + j)) = out[j];
        }
        __syncthreads();
        store_run(dst + (d + x0 * CH) * EB, px * CH * EB, tout, threadIdx.x, blockDim.x);
        __syncthreads();
        if (threadIdx.x == 0 && t + gridDim.x < total) locate_tile(p, px_axis, ch_axis, t + gridDim.x, tiles_per, P, tile_at);
        __syncthreads();
    }
}
