// Overlapping copies of one run in ordered chunks (`CopyPlan::ordered_chunks`). Each block
// takes the next ticket (flags[0]), which names its chunk (ascending when the source lies
// above the destination, else descending), reads the chunk whole into shared memory,
// marks it read (flags[1 + chunk]), waits until every chunk whose source its destination
// overlaps is marked read (chunks taken earlier, so already running: no block ever waits
// for one begun after it), then writes. Every byte is thus read before it is overwritten.
// Neither pointer is __restrict__ (they overlap). Compiled with ELEM defined before the
// prelude and `staged_runs.cu` (1- and 2-byte elements move as aligned words); blocks of
// 256 threads; `chunk` is a whole number of elements; shared memory: a chunk plus 16.
__device__ __forceinline__ long long floor_div(long long a, long long b) {
    const long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
extern "C" __global__ void __launch_bounds__(256, 3) ordered_copy(const ELEM* src, ELEM* dst, long long bytes,
                                                                 long long chunk, long long chunks,
                                                                 long long delta, unsigned int* flags) {
    extern __shared__ __align__(16) unsigned char smem[];
    ELEM* staged = reinterpret_cast<ELEM*>(smem);
    __shared__ long long taken;
    if (threadIdx.x == 0) {
        const long long t = atomicAdd(flags, 1u);
        taken = delta > 0 ? t : chunks - 1 - t;
    }
    __syncthreads();
    const long long m = taken;
    const long long start = m * chunk, end = min(start + chunk, bytes);
    const int n = (int)((end - start) / (long long)sizeof(ELEM));
    const long long e0 = start / (long long)sizeof(ELEM);
    const int head = (int)((unsigned long long)(src + e0) & 3);
    if (sizeof(ELEM) < 4) {
        stage_run(reinterpret_cast<const unsigned char*>(src + e0), n * (int)sizeof(ELEM),
                  reinterpret_cast<unsigned int*>(smem));
    } else {
        stage_elems(src + e0, 1, n, staged);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // The chunk's values are in shared memory: it may be overwritten from now on.
        atomicExch(&flags[1 + m], 1u);
        // Chunk j reads [j * chunk + delta, (j + 1) * chunk + delta); this one writes
        // [start, end) (`OrderedChunks::waits`).
        const long long lo = max(floor_div(start - delta, chunk), 0LL);
        const long long hi = min(floor_div(end - delta - 1, chunk), chunks - 1);
        for (long long j = lo; j <= hi; ++j) {
            if (j == m) continue;
            while (atomicAdd(&flags[1 + j], 0u) == 0u) __nanosleep(64);
        }
        __threadfence();
    }
    __syncthreads();
    if (sizeof(ELEM) < 4) {
        write_run(reinterpret_cast<unsigned char*>(dst + e0), n * (int)sizeof(ELEM),
                  reinterpret_cast<const unsigned int*>(smem), head);
        return;
    }
    write_elems(dst + e0, 1, n, staged);
}
