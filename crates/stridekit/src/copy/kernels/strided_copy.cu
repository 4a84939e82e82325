// One thread per element, any layouts: the generic strided copy. With 32-bit indices
// (FASTDIV) each division by an extent is a multiply-high and two shifts.
extern "C" __global__ void __launch_bounds__(256) strided_copy(const ELEM* __restrict__ src, ELEM* __restrict__ dst, const Params p) {
    const IDX n = (IDX)p.n;
    const IDX step = (IDX)gridDim.x * blockDim.x;
    for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        IDX rem = i;
        long long so = 0, d = 0;
#pragma unroll
        for (int k = NDIM - 1; k >= 0; --k) {
            const IDX e = (IDX)p.shape[k];
#ifdef FASTDIV
            const unsigned t = __umulhi(rem, p.mul[k]);
            const IDX q = (t + ((rem - t) >> (p.sh[k] & 0xffu))) >> (p.sh[k] >> 8);
#else
            const IDX q = rem / e;
#endif
            const IDX j = rem - q * e;
            rem = q;
            so += (long long)j * p.src[k];
            d += (long long)j * p.dst[k];
        }
        dst[d] = src[so];
    }
}
