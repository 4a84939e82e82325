// The generic strided copy, any layouts: consecutive threads take consecutive
// destination-order elements (coalesced writes, and coalesced reads where the source
// shares the fast axis). Each thread loads UNR elements, a block's width apart, before it
// stores any, so that enough bytes are in flight to cover memory latency. With 32-bit
// indices (FASTDIV) each division by an extent is a multiply-high, an add and a shift, and the
// first (slowest) axis takes none: a copy of one or two axes is bound by instructions,
// not by memory, when it moves 2-byte elements into gaps. OFF is
// the type of element offsets (int where both sides' offsets fit 32 bits, fewer registers
// and instructions; else long long).
extern "C" __global__ void __launch_bounds__(256) strided_copy(const ELEM* __restrict__ src, ELEM* __restrict__ dst, const Params p) {
    const IDX n = (IDX)p.n;
    const IDX chunk = (IDX)blockDim.x * UNR;
    for (IDX b = (IDX)blockIdx.x * chunk; b < n; b += (IDX)gridDim.x * chunk) {
        ELEM v[UNR];
        OFF at[UNR];
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
            const IDX i = b + (IDX)u * blockDim.x + threadIdx.x;
            at[u] = -1;
#ifdef FASTDIV
            // 32-bit indices: the index math runs for every thread, an index past the end
            // as 0, and only the load is conditional. Predicated, the compiler fetches the
            // magic numbers from constant memory again for every element (18-73 loads a
            // round at two axes, and such copies ran up to 1.5x slower).
            IDX rem = i < n ? i : 0;
#else
            if (i >= n) continue;
            IDX rem = i;
#endif
            OFF so = 0, d = 0;
#pragma unroll
            for (int k = NDIM - 1; k > 0; --k) {
                const IDX q = div_extent(p, k, rem);
                const IDX j = rem - q * (IDX)p.shape[k];
                rem = q;
                so += (OFF)j * (OFF)p.src[k];
                d += (OFF)j * (OFF)p.dst[k];
            }
            // rem < n, the product of the extents: what is left is the first axis's
            // coordinate, no division needed.
            so += (OFF)rem * (OFF)p.src[0];
            d += (OFF)rem * (OFF)p.dst[0];
            if (i < n) {
                v[u] = src[so];
                at[u] = d;
            }
        }
#pragma unroll
        for (int u = 0; u < UNR; ++u)
            if (at[u] >= 0) dst[at[u]] = v[u];
    }
}
