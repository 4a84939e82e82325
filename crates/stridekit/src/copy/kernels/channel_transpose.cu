// Transposes with one short side, for 1- and 2-byte elements: channel layouts such as
// RGB interleaved <-> planar and NHWC <-> NCHW. Compiled with ELEM, EB (1 or 2), CH (the
// short extent, 2..16), MODE, NDIM and PMAX defined before the prelude.
//
// MODE 0, deinterleave: the short axis `a` is the source's unit-stride axis (channels of
// a pixel), `l` the long one (pixels, the destination's unit-stride axis); a pixel's
// channels sit `sl` elements apart from the next pixel's (sl >= CH: gaps are read, never
// written). A tile is P pixels: their source span arrives as one run of 16-byte aligned
// chunks; each destination plane's P elements leave as 16-byte aligned chunks.
// MODE 1, interleave: the long axis `a` (pixels) is the source's unit-stride axis, the
// short axis `l` (channels) the destination's, and the destination's pixels are dense
// (da == CH): CH source planes arrive as chunked rows; the destination's P * CH
// elements leave as one run of chunks.
// Realignment (any start of either side) is a funnel shift of two aligned words; a run's
// first and last partial chunks are written in words and bytes. Aligned chunks are
// loaded whole only inside [lo, hi), the source memory the copy was checked against.
#define K (4 / EB)
#define P (1024 / EB)                 // pixels per tile
#define RUN (P * EB)                  // bytes per plane of a tile
#if MODE == 0
#define INROWS 1
#define INB (P * SLB)                 // source bytes of a tile (SLB: bytes between pixels)
#define OUTROWS CH
#define OUTB RUN
#else
#define INROWS CH
#define INB RUN
#define OUTROWS 1
#define OUTB (RUN * CH)
#endif
#define PITCHI (INB + 32)             // in-row pitch: shift, bytes, a chunk's slack
#define PITCHO (OUTB + 4)             // out-row pitch: bytes and a word for funnel reads

// The `n` bytes of a run that starts at `s0` into shared memory at `to` (16-byte aligned):
// chunk c holds bytes [16c - shift, 16c - shift + 16) of the run. Returns the shift.
__device__ __forceinline__ void load_run(const unsigned char* s0, int n, unsigned char* to,
                                         unsigned long long lo, unsigned long long hi, int tid, int nthreads) {
    const int sh = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
    const int chunks = (sh + n + 15) / 16;
    for (int c = tid; c < chunks; c += nthreads) {
        const unsigned char* ca = s0 - sh + 16 * c;
        const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
        if (cav >= lo && cav + 16 <= hi) {
            *reinterpret_cast<uint4*>(to + 16 * c) = __ldg(reinterpret_cast<const uint4*>(ca));
        } else {
            for (int k = 0; k < 16; ++k) {
                const int at = 16 * c + k - sh;
                if (at >= 0 && at < n) to[16 * c + k] = s0[at];
            }
        }
    }
}

// The `n` bytes at `from` (shared memory, 4-byte aligned, one spare word after) to `D`,
// in 16-byte aligned chunks; partial first and last chunks in words and bytes.
__device__ __forceinline__ void store_run(unsigned char* D, int n, const unsigned char* from, int tid, int nthreads) {
    const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 15);
    const int chunks = (dsh + n + 15) / 16;
    const unsigned int* row = reinterpret_cast<const unsigned int*>(from);
    for (int c = tid; c < chunks; c += nthreads) {
        const int p0 = 16 * c - dsh;
        unsigned char* chunk = D + p0;
        if (p0 >= 0 && p0 + 16 <= n) {
            uint4 x;
            unsigned int* xs = reinterpret_cast<unsigned int*>(&x);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int pp = p0 + 4 * j;
                xs[j] = __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
            }
            *reinterpret_cast<uint4*>(chunk) = x;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int pp = p0 + 4 * j;
                if (pp >= 0 && pp + 4 <= n) {
                    *reinterpret_cast<unsigned int*>(chunk + 4 * j) =
                        __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
                } else {
                    for (int k = max(pp, 0); k < min(pp + 4, n); ++k) chunk[k - p0] = from[k];
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) channel_transpose(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[INROWS * PITCHI];
    __shared__ __align__(16) unsigned char tout[OUTROWS * PITCHO];
    __shared__ int shift[INROWS];
    // The long axis and its tiles.
    const int lng = MODE == 0 ? l : a;
    const long long n = p.shape[lng];
    const long long tiles_per = (n + P - 1) / P, total = tiles_per * batches;
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        const long long b = t / tiles_per, x0 = (t - b * tiles_per) * P;
        long long rem = b, so = 0, d = 0;
        for (int k = NDIM - 1; k >= 0; --k) {
            if (k == a || k == l) continue;
            const long long e = p.shape[k];
            const long long j = rem % e;
            rem /= e;
            so += j * p.src[k];
            d += j * p.dst[k];
        }
        const int px = (int)min((long long)P, n - x0);  // pixels in this tile
#if MODE == 0
        const long long sl = p.src[l];
        const unsigned char* s0 = src + (so + x0 * sl) * EB;
        const int nin = ((px - 1) * (int)sl + CH) * EB;
        if (threadIdx.x == 0) shift[0] = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
        load_run(s0, nin, tin, lo, hi, threadIdx.x, blockDim.x);
        __syncthreads();
        // Out plane c, word j: pixels 4j/EB .. +K-1 of channel c.
        const int sh = shift[0];
        for (int q = threadIdx.x; q < CH * (RUN / 4); q += blockDim.x) {
            const int c = q / (RUN / 4), j = q - c * (RUN / 4);
            unsigned int w = 0;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int pix = j * K + k;
                const int at = sh + (pix * (int)sl + c) * EB;
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
#else
        const long long sl = p.src[l];
        // Each plane's run with a share of the threads.
        const int per = blockDim.x / CH;
        const int c = threadIdx.x / per;
        if (c < CH) {
            const unsigned char* s0 = src + (so + c * sl + x0) * EB;
            if (threadIdx.x == c * per) shift[c] = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
            load_run(s0, px * EB, tin + c * PITCHI, lo, hi, threadIdx.x - c * per, per);
        }
        __syncthreads();
        // Out word j of the interleaved run: elements 4j/EB .. +K-1.
        for (int j = threadIdx.x; j < OUTB / 4; j += blockDim.x) {
            unsigned int w = 0;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int e = j * K + k;
                const int pix = e / CH, ch = e - pix * CH;
                const int at = shift[ch] + pix * EB;
                const unsigned int v = pix < px ? (EB == 1 ? (unsigned int)tin[ch * PITCHI + at]
                                                           : (unsigned int)*reinterpret_cast<const unsigned short*>(tin + ch * PITCHI + at))
                                                : 0u;
                w |= v << (8 * EB * k);
            }
            *reinterpret_cast<unsigned int*>(tout + 4 * j) = w;
        }
        __syncthreads();
        store_run(dst + (d + x0 * CH) * EB, px * CH * EB, tout, threadIdx.x, blockDim.x);
#endif
        __syncthreads();
    }
}
