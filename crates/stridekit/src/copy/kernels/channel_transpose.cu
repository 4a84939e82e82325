// Deinterleaving transposes of 1- and 2-byte elements: channel layouts such as RGB
// interleaved -> planar and NHWC -> NCHW. Compiled with ELEM, EB (1 or 2), CH (channels,
// 2..16), SLB (bytes from one source pixel to the next, at most 8), NDIM and PMAX defined
// before the prelude; `load_run` and `store_run` come from channel_runs.cu.
//
// The short axis `a` is the source's unit-stride axis (channels of a pixel), `l` the long
// one (pixels, the destination's unit-stride axis); a pixel's channels sit SLB bytes from
// the next pixel's (SLB >= CH * EB: gaps are read, never written). A tile is P pixels:
// their source span arrives as one run of 16-byte aligned chunks; each destination
// plane's P elements leave as 16-byte aligned chunks.
// Realignment (any start of either side) is a funnel shift of two aligned words; a run's
// first and last partial chunks are written in words and bytes. Aligned chunks are
// loaded whole only inside [lo, hi), the source memory the copy was checked against.
#define K (4 / EB)
// Bytes per plane of a tile: 4 KiB, less for many channels (16 KiB a tile at most),
// halved where the tile's source span and planes would not fit 48 KiB of shared memory
// (4 byte channels out of 8-byte pixels). `deinterleave_run` in runs.rs mirrors it.
#define RUN0 (CH <= 4 ? 4096 : (16384 / CH) / 16 * 16)
#define RUN ((RUN0 / EB) * SLB + 32 + CH * (RUN0 + 4) <= 49152 ? RUN0 : RUN0 / 2)
#define P (RUN / EB)                  // pixels per tile
#define INB (P * SLB)                 // source bytes of a tile
#define PITCHI (INB + 32)             // in-row pitch: shift, bytes, a chunk's slack
#define PITCHO (RUN + 4)             // out-row pitch: bytes and a word for funnel reads

extern "C" __global__ void __launch_bounds__(256) channel_transpose(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[PITCHI];
    __shared__ __align__(16) unsigned char tout[CH * PITCHO];
    __shared__ int shift;
    __shared__ long long tile_at[3];  // the next tile: source and destination offsets, first pixel
    // Pixels and their tiles.
    const long long n = p.shape[l];
    const long long tiles_per = (n + P - 1) / P, total = tiles_per * batches;
    if (threadIdx.x == 0 && blockIdx.x < total) locate_tile(p, a, l, blockIdx.x, tiles_per, P, tile_at);
    __syncthreads();
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        const long long so = tile_at[0], d = tile_at[1], x0 = tile_at[2];
        const int px = (int)min((long long)P, n - x0);  // pixels in this tile
        const int sl = SLB / EB;  // source elements from pixel to pixel
        const unsigned char* s0 = src + (so + x0 * sl) * EB;
        const int nin = ((px - 1) * sl + CH) * EB;
        if (threadIdx.x == 0) shift = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
        load_run(s0, nin, tin, lo, hi, threadIdx.x, blockDim.x);
        __syncthreads();
        // Out plane c, word j: pixels 4j/EB .. +K-1 of channel c.
        const int sh = shift;
        for (int q = threadIdx.x; q < CH * (RUN / 4); q += blockDim.x) {
            const int c = q / (RUN / 4), j = q - c * (RUN / 4);
            unsigned int w = 0;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int pix = j * K + k;
                const int at = sh + (pix * sl + c) * EB;
                const unsigned int e = pix < px ? (EB == 1 ? (unsigned int)tin[at]
                                                            : (unsigned int)*reinterpret_cast<const unsigned short*>(tin + at))
                                                : 0u;
                w |= e << (8 * EB * k);
            }
            *reinterpret_cast<unsigned int*>(tout + c * PITCHO + 4 * j) = w;
        }
        __syncthreads();
        const long long da = p.dst[a];
        // Each plane's run with a share of the threads.
        const int per = blockDim.x / CH;
        const int c = threadIdx.x / per;
        if (c < CH) store_run(dst + (d + c * da + x0) * EB, px * EB, tout + c * PITCHO, threadIdx.x - c * per, per);
        __syncthreads();
        if (threadIdx.x == 0 && t + gridDim.x < total) locate_tile(p, a, l, t + gridDim.x, tiles_per, P, tile_at);
        __syncthreads();
    }
}
