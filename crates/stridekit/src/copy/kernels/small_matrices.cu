// Batches of small matrices transposed, many per tile, for 1- and 2-byte elements (the
// kernel takes 4-byte ones too):
// (B, NL, NA) -> (B, NA, NL) with both sides dense, so that the batch is one run of bytes
// on either side. Compiled with ELEM, EB, NA (the source rows' length, the source's unit-
// stride axis), NL (the destination rows' length), NDIM and PMAX defined before the
// prelude; `load_run` and `store_run` come from channel_runs.cu.
//
// A tile is NB whole matrices: their bytes arrive as one run of 16-byte aligned chunks,
// each thread assembles 32-bit words of the destination (K = 4 / EB elements of one
// destination row) from shared memory, and the tile leaves as one run of aligned chunks.
// The extents are compile-time constants, so every index is a multiply and a shift.
#define K (4 / EB)
#define MAT (NA * NL)                                       // elements per matrix
#define NB ((8192 / (MAT * EB)) > 0 ? (8192 / (MAT * EB)) : 1)  // matrices per tile
#define BYTES (NB * MAT * EB)                               // bytes of a tile

extern "C" __global__ void __launch_bounds__(256) small_matrices(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    // The extents are compile-time; the parameter list is the other run kernels' (its
    // batches are one dense run: only `batches` is read).
    __shared__ __align__(16) unsigned char tin[BYTES + 32];
    __shared__ __align__(16) unsigned char tout[BYTES + 4];
    __shared__ int shift;
    const long long tiles = (batches + NB - 1) / NB;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const long long b0 = t * NB;
        const int nb = (int)min((long long)NB, batches - b0);  // matrices in this tile
        const int n = nb * MAT * EB;
        const unsigned char* s0 = src + b0 * MAT * EB;
        if (threadIdx.x == 0) shift = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
        load_run(s0, n, tin, lo, hi, threadIdx.x, blockDim.x);
        __syncthreads();
        const unsigned char* in = tin + shift;
        for (int q = threadIdx.x; q * 4 < n; q += blockDim.x) {
            // Destination element e = q * K: matrix m, row a (of NL elements), column l.
            // Rows are taken along diagonals (row a' of the order is row (a' + l / K) % NA),
            // so that the threads of a warp read and write different shared-memory banks
            // where both extents are powers of two.
            const int e = q * K;
            const int m = e / MAT, r = e - m * MAT;
            const int a0 = r / NL, l = r - a0 * NL;
            const int a = (a0 + l / K) % NA;
            const int qo = (m * MAT + a * NL + l) / K;  // the destination word
            const unsigned char* from = in + (m * MAT + l * NA + a) * EB;
            unsigned int w;
#if EB == 1
            w = (unsigned int)from[0] | (unsigned int)from[NA] << 8 | (unsigned int)from[2 * NA] << 16 |
                (unsigned int)from[3 * NA] << 24;
#elif EB == 2
            // Element-aligned halfwords (the run keeps the elements' alignment).
            w = (unsigned int)*reinterpret_cast<const unsigned short*>(from) |
                (unsigned int)*reinterpret_cast<const unsigned short*>(from + 2 * NA) << 16;
#else
            w = *reinterpret_cast<const unsigned int*>(from);
#endif
            *reinterpret_cast<unsigned int*>(tout + 4 * qo) = w;
        }
        __syncthreads();
        store_run(dst + b0 * MAT * EB, n, tout, threadIdx.x, blockDim.x);
        __syncthreads();
    }
}
