// The elementwise byte copy in runs (`ElementRuns` in the layout crate): each thread
// moves a group of 4 consecutive bytes of the plan's last axis (contiguous in the
// destination, stepping SS = 1 or -1 in the source), so that one index decomposition
// serves the group; groups start on the destination's 4-byte words, so a whole group is
// one aligned store. Compiled with ELEM (unsigned char), NDIM, PMAX, UNR, IDX, FASTDIV
// (32-bit indices), OFF (the type of element offsets) and SS defined before the prelude. `p.shape[NDIM - 1]` counts groups
// per row (`p.n` groups in all); `len` is the row's length. Only a group's bytes inside
// [0, len) are read or written.
extern "C" __global__ void __launch_bounds__(256) element_runs(const ELEM* __restrict__ src, ELEM* __restrict__ dst,
                                                              const Params p, const long long len) {
    const IDX n = (IDX)p.n;
    const IDX chunk = (IDX)blockDim.x * UNR;
    for (IDX b = (IDX)blockIdx.x * chunk; b < n; b += (IDX)gridDim.x * chunk) {
        unsigned int v[UNR];
        OFF at[UNR];
        int lo[UNR], hi[UNR];
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
            const IDX i = b + (IDX)u * blockDim.x + threadIdx.x;
            lo[u] = 0;
            hi[u] = 0;
            at[u] = 0;
            v[u] = 0;
            if (i < n) {
                IDX rem = i;
                OFF so = 0, d = 0, c0 = 0;
#pragma unroll
                for (int k = NDIM - 1; k >= 0; --k) {
                    const IDX q = div_extent(p, k, rem);
                    const IDX j = rem - q * (IDX)p.shape[k];
                    rem = q;
                    if (k == NDIM - 1) {
                        c0 = (OFF)j * 4;
                    } else {
                        so += (OFF)j * (OFF)p.src[k];
                        d += (OFF)j * (OFF)p.dst[k];
                    }
                }
                c0 -= (OFF)((unsigned long long)(dst + d) & 3u);
                const int l0 = c0 < 0 ? (int)-c0 : 0;
                const int h0 = len - c0 < 4 ? (int)(len - c0) : 4;
                lo[u] = l0;
                hi[u] = h0;
                so += c0 * SS;
                at[u] = d + c0;
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (e >= l0 && e < h0) v[u] |= (unsigned int)src[so + e * SS] << (8 * e);
            }
        }
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
            if (lo[u] == 0 && hi[u] == 4) {
                *reinterpret_cast<unsigned int*>(dst + at[u]) = v[u];
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (e >= lo[u] && e < hi[u]) dst[at[u] + e] = (ELEM)(v[u] >> (8 * e));
            }
        }
    }
}
