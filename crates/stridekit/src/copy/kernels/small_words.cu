// Batches of small matrices of 4-byte elements transposed, (B, NL, NA) -> (B, NA, NL), both
// sides dense (the batch is one run of words on either side). Compiled with NA (the source
// rows' length, the source's unit-stride axis) and NL (the destination rows') defined, NA *
// NL at most 512; the prelude comes first.
//
// Each warp works alone on its own slice of shared memory, no block barrier: it reads WM
// whole matrices as one run of words (coalesced, every load of the run in flight at once),
// keeps them with source rows PA words apart (PA odd, so that a column's words sit in
// different banks), and writes the run of their transposes (coalesced); then the next WM.
#define MAT (NA * NL)                                  // words a matrix
#define PA (NA | 1)                                    // words from one source row to the next
#define WM ((512 / MAT) > 0 ? (512 / MAT) : 1)         // matrices a warp takes at once
#define RUNW (WM * MAT)                                // words of a whole run
#define SW (WM * NL * PA)                              // words of a warp's slice
#ifndef SW_WARPS
#define SW_WARPS 8                                     // warps a block
#endif

// Word `w` of a run (source order) to its place in the slice.
__device__ __forceinline__ int sw_in(int w) {
    const int row = w / NA;
    return row * PA + (w - row * NA);
}
// The slice's word that destination word `e` of a run takes.
__device__ __forceinline__ int sw_out(int e) {
    const int m = e / MAT, r = e - m * MAT;
    const int a = r / NL, l = r - a * NL;
    return (m * NL + l) * PA + a;
}

extern "C" __global__ void __launch_bounds__(32 * SW_WARPS) small_words(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ unsigned int slices[SW_WARPS * SW];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned int* sl = slices + warp * SW;
    const unsigned int* s = reinterpret_cast<const unsigned int*>(src);
    unsigned int* d = reinterpret_cast<unsigned int*>(dst);
    const long long runs = (batches + WM - 1) / WM;
    const long long warps = (long long)gridDim.x * SW_WARPS;
    for (long long r = (long long)blockIdx.x * SW_WARPS + warp; r < runs; r += warps) {
        const long long w0 = r * RUNW;  // the run's first word
        if ((r + 1) * WM <= batches) {
            unsigned int v[(RUNW + 31) / 32];
#pragma unroll
            for (int k = 0; k < (RUNW + 31) / 32; ++k)
                if (RUNW % 32 == 0 || 32 * k + lane < RUNW) v[k] = __ldg(s + w0 + 32 * k + lane);
#pragma unroll
            for (int k = 0; k < (RUNW + 31) / 32; ++k)
                if (RUNW % 32 == 0 || 32 * k + lane < RUNW) sl[sw_in(32 * k + lane)] = v[k];
            __syncwarp();
#pragma unroll
            for (int k = 0; k < (RUNW + 31) / 32; ++k)
                if (RUNW % 32 == 0 || 32 * k + lane < RUNW) d[w0 + 32 * k + lane] = sl[sw_out(32 * k + lane)];
        } else {
            // The last, partial run.
            const int words = (int)(batches - r * WM) * MAT;
            for (int w = lane; w < words; w += 32) sl[sw_in(w)] = s[w0 + w];
            __syncwarp();
            for (int e = lane; e < words; e += 32) d[w0 + e] = sl[sw_out(e)];
        }
        __syncwarp();
    }
    (void)p;
    (void)a;
    (void)l;
    (void)lo;
    (void)hi;
}
