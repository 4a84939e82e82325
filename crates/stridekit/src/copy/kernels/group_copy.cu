// Overlapping copies in independent groups (`CopyPlan::overlap_groups`): a group is the
// plan's last axis at one index of the others. A block reads a whole group into shared
// memory before writing any of it, and no two groups reach the same bytes, so the copy
// equals copying the source out first. Neither pointer is __restrict__ (they overlap),
// so the source is never read through the read-only cache.
// Compiled with ELEM, NDIM and PMAX defined before the prelude and `staged_runs.cu`;
// blocks of 256 threads; shared memory: a group's bytes plus 16.
extern "C" __global__ void __launch_bounds__(256, 3) group_copy(const ELEM* src, ELEM* dst, const Params p,
                                                               long long groups) {
    extern __shared__ __align__(16) unsigned char smem[];
    ELEM* staged = reinterpret_cast<ELEM*>(smem);
    const int l = NDIM - 1;
    const int n = (int)p.shape[l];  // at most GROUP_MAX_BYTES / sizeof(ELEM)
    const long long ss = p.src[l], ds = p.dst[l];
    for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
        long long so, d;
        batch_offsets(p, -1, l, g, so, d);
        if (sizeof(ELEM) < 4 && ss == 1 && ds == 1) {
            // Runs of bytes on both sides: aligned words (`staged_runs.cu`).
            const unsigned char* sr = reinterpret_cast<const unsigned char*>(src + so);
            stage_run(sr, n * (int)sizeof(ELEM), reinterpret_cast<unsigned int*>(smem));
            __syncthreads();
            write_run(reinterpret_cast<unsigned char*>(dst + d), n * (int)sizeof(ELEM),
                      reinterpret_cast<const unsigned int*>(smem), (int)((unsigned long long)sr & 3));
            __syncthreads();
            continue;
        }
        stage_elems(src + so, ss, n, staged);
        __syncthreads();
        write_elems(dst + d, ds, n, staged);
        __syncthreads();
    }
}
