// A short pattern written over and over into one contiguous destination
// (`CopyPlan::repeated_pattern`: `x.expand(n, c).contiguous()`, a constant fill, a small
// block tiled). Compiled with ELEM and PMAX defined before the prelude.
//
// The plan's leading axes are broadcast in the source; its other `nin` axes (`p`, the
// pattern's own plan, its last axis fastest) hold the pattern of `pe` elements, `pb`
// bytes. Each block first gathers the pattern into shared memory, repeated until it holds
// `pb + 32` bytes, so that the 16 bytes from any position in the pattern lie there
// unbroken. Then each thread writes aligned 16-byte chunks of the destination's `total`
// bytes: its chunk's first byte is at position `ph` of the pattern, whose five words it
// reads and shifts together (funnel shifts), and stores the chunk whole; the partial
// first and last chunks of the destination go byte by byte. A thread's position advances
// by the same step each turn (the grid's chunks, modulo the pattern), one subtraction
// at most.
extern "C" __global__ void __launch_bounds__(256) repeat_pattern(const ELEM* __restrict__ src, unsigned char* __restrict__ dst,
                                                                 const Params p, int nin, int pe, int pb, long long total) {
    extern __shared__ __align__(16) unsigned char smem[];
    ELEM* pat = reinterpret_cast<ELEM*>(smem);
    const int nel = (pb + 32 + (int)sizeof(ELEM) - 1) / (int)sizeof(ELEM);
    for (int i = threadIdx.x; i < nel; i += blockDim.x) {
        long long e = i % pe, off = 0;
        for (int k = nin - 1; k >= 0; --k) {
            const long long c = e % p.shape[k];
            e /= p.shape[k];
            off += c * p.src[k];
        }
        pat[i] = src[off];
    }
    __syncthreads();
    const unsigned int* const sm = reinterpret_cast<const unsigned int*>(smem);
    const int a0 = (int)(reinterpret_cast<unsigned long long>(dst) & 15ull);
    unsigned char* const base = dst - a0;  // 16-byte aligned; chunk g starts at base + 16 g
    const long long nch = (a0 + total + 15) / 16;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nch) return;
    long long o = 16 * g - a0;  // the chunk's first byte, counted from the destination's
    int ph = (int)(((o % pb) + pb) % pb);
    const int step = (int)((16 * stride) % pb);
#pragma unroll 4
    for (; g < nch; g += stride, o += 16 * stride) {
        const int q = ph >> 2, sh = 8 * (ph & 3);
        const unsigned int u0 = sm[q], u1 = sm[q + 1], u2 = sm[q + 2], u3 = sm[q + 3], u4 = sm[q + 4];
        const unsigned int w[4] = {__funnelshift_r(u0, u1, sh), __funnelshift_r(u1, u2, sh), __funnelshift_r(u2, u3, sh),
                                   __funnelshift_r(u3, u4, sh)};
        if (o >= 0 && o + 16 <= total) {
            *reinterpret_cast<uint4*>(base + 16 * g) = make_uint4(w[0], w[1], w[2], w[3]);
        } else {
            for (int i = 0; i < 16; ++i) {
                if (o + i >= 0 && o + i < total) base[16 * g + i] = (unsigned char)(w[i >> 2] >> (8 * (i & 3)));
            }
        }
        ph += step;
        if (ph >= pb) ph -= pb;
    }
}
