// Declarations every copy kernel shares; `Params` mirrors the Rust struct in kernel.rs.
// Compiled with ELEM (the element type), WORD, NDIM, PMAX and IDX defined before it.
struct __align__(16) b16 { unsigned long long lo, hi; };
// mul/sh: per-axis magic numbers that divide a 32-bit index below 2^31 by the extent with
// a multiply-high, an add and a shift (sh: the shift); see `FastDiv` in params.rs.
// PMAX (8, or 64 for ranks above 8) sizes the arrays, so that a launch passes a few hundred
// bytes of parameters, not 2 KiB.
struct Params { long long shape[PMAX]; long long src[PMAX]; long long dst[PMAX]; long long n;
                unsigned int mul[PMAX]; unsigned int sh[PMAX]; };
#ifdef NDIM
// The source and destination offsets of batch `b`: its coordinates over every axis but
// `a` and `l` (the last axis fastest). (Kernels of a plan's own rank define NDIM.)
__device__ __forceinline__ void batch_offsets(const Params& p, int a, int l, long long b, long long& so, long long& d) {
    so = 0;
    d = 0;
    for (int k = NDIM - 1; k >= 0; --k) {
        if (k == a || k == l) continue;
        const long long e = p.shape[k];
        const long long j = b % e;
        b /= e;
        so += j * p.src[k];
        d += j * p.dst[k];
    }
}
#endif
#ifdef IDX
// The quotient of index `rem` by extent `k` (the elementwise kernels' decomposition; the
// coordinate is rem - q * shape[k]): with 32-bit indices (FASTDIV) a multiply-high, an add
// and a shift. The kernels index 32-bit only below 2^30 (`NARROW_INDICES_UP_TO`), so
// t + rem (t <= rem) does not wrap.
__device__ __forceinline__ IDX div_extent(const Params& p, int k, IDX rem) {
#ifdef FASTDIV
    const unsigned t = __umulhi(rem, p.mul[k]);
    return (t + rem) >> p.sh[k];
#else
    return rem / (IDX)p.shape[k];
#endif
}
#endif
