// The elementwise copy in runs (`ElementRuns` in the layout crate): each thread moves a
// group of VEC consecutive elements of the plan's last axis (the destination's fastest),
// so that one index decomposition serves VEC elements, and a group that lies whole on an
// aligned word of its side moves as one word. Compiled with ELEM, NDIM, PMAX, UNR, IDX,
// FASTDIV (32-bit indices), VEC, VWORD (a word of VEC elements) and ALIGN defined before
// the prelude:
//   ALIGN 0: a row's groups start at its first element;
//   ALIGN 1: groups start on VEC-element boundaries of the destination's addresses (its
//            last axis is contiguous: whole groups are single aligned stores);
//   ALIGN 2: the same on the source's addresses (whole groups are single aligned loads).
// `p.shape[NDIM - 1]` counts groups per row (`p.n` groups in all); `len` is the row's
// length in elements. Only a group's elements inside [0, len) are read or written.
union VecU { VWORD w; ELEM e[VEC]; };
extern "C" __global__ void __launch_bounds__(256) element_runs(const ELEM* __restrict__ src, ELEM* __restrict__ dst,
                                                              const Params p, const long long len) {
    const IDX n = (IDX)p.n;
    const long long ss = p.src[NDIM - 1], ds = p.dst[NDIM - 1];
    const IDX chunk = (IDX)blockDim.x * UNR;
    for (IDX b = (IDX)blockIdx.x * chunk; b < n; b += (IDX)gridDim.x * chunk) {
        VecU v[UNR];
        long long at[UNR];
        int lo[UNR], hi[UNR];
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
            const IDX i = b + (IDX)u * blockDim.x + threadIdx.x;
            lo[u] = 0;
            hi[u] = 0;
            at[u] = 0;
            if (i < n) {
                IDX rem = i;
                long long so = 0, d = 0, c0 = 0;
#pragma unroll
                for (int k = NDIM - 1; k >= 0; --k) {
#ifdef FASTDIV
                    const unsigned t = __umulhi(rem, p.mul[k]);
                    const IDX q = (t + ((rem - t) >> (p.sh[k] & 0xffu))) >> (p.sh[k] >> 8);
#else
                    const IDX q = rem / (IDX)p.shape[k];
#endif
                    const IDX j = rem - q * (IDX)p.shape[k];
                    rem = q;
                    if (k == NDIM - 1) {
                        c0 = (long long)j * VEC;
                    } else {
                        so += (long long)j * p.src[k];
                        d += (long long)j * p.dst[k];
                    }
                }
#if ALIGN == 1
                c0 -= (long long)(((unsigned long long)(dst + d) / sizeof(ELEM)) & (VEC - 1));
#elif ALIGN == 2
                c0 -= (long long)(((unsigned long long)(src + so) / sizeof(ELEM)) & (VEC - 1));
#endif
                const long long l0 = c0 < 0 ? -c0 : 0;
                const long long h0 = len - c0 < VEC ? len - c0 : VEC;
                lo[u] = (int)l0;
                hi[u] = (int)h0;
                so += c0 * ss;
                d += c0 * ds;
                at[u] = d;
#if ALIGN == 2
                if (l0 == 0 && h0 == VEC) {
                    v[u].w = *reinterpret_cast<const VWORD*>(src + so);
                } else
#endif
                {
#pragma unroll
                    for (int e = 0; e < VEC; ++e)
                        if (e >= l0 && e < h0) v[u].e[e] = src[so + e * ss];
                }
            }
        }
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
#if ALIGN == 1
            if (lo[u] == 0 && hi[u] == VEC) {
                *reinterpret_cast<VWORD*>(dst + at[u]) = v[u].w;
                continue;
            }
#endif
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                if (e >= lo[u] && e < hi[u]) dst[at[u] + e * ds] = v[u].e[e];
        }
    }
}
