// What the overlap kernels stage through shared memory: a group's or chunk's elements in
// order (`stage_elems`, `write_elems`), and runs of 1- and 2-byte elements contiguous on
// both sides as aligned 4-byte words (`stage_run`, `write_run`). Compiled with ELEM
// defined before it.
//
// Runs of 1- and 2-byte elements: A run's source is read
// as the aligned words inside it, and its edge words byte by byte (no byte outside the
// run is read); `staged` then holds the run's byte i at byte `head + i`, head = the
// source's address mod 4. Its destination is written as aligned words wherever a whole
// word lies inside the run (realigned from shared memory with a funnel shift), and byte
// by byte at its edges (no byte outside the run is written). Blocks of 256 threads;
// `staged` holds the run's bytes plus 8.
#define SRUNR 8
__device__ __forceinline__ void stage_run(const unsigned char* src, int nbytes, unsigned int* staged) {
    const unsigned long long a = (unsigned long long)src;
    const unsigned long long w0 = a & ~3ull;
    const int nw = (int)((((a + nbytes + 3) & ~3ull) - w0) / 4);
    const unsigned int* ws = reinterpret_cast<const unsigned int*>(w0);
    for (int k0 = threadIdx.x; k0 < nw; k0 += SRUNR * 256) {
        unsigned int v[SRUNR];
#pragma unroll
        for (int u = 0; u < SRUNR; ++u) {
            const int k = k0 + u * 256;
            if (k >= nw) continue;
            const long long i0 = (long long)(w0 + 4ull * k) - (long long)a;  // run byte of the word's first
            if (i0 >= 0 && i0 + 4 <= nbytes) {
                v[u] = ws[k];
            } else {
                unsigned int x = 0;
                for (int b = 0; b < 4; ++b)
                    if (i0 + b >= 0 && i0 + b < nbytes) x |= (unsigned int)src[i0 + b] << (8 * b);
                v[u] = x;
            }
        }
#pragma unroll
        for (int u = 0; u < SRUNR; ++u)
            if (k0 + u * 256 < nw) staged[k0 + u * 256] = v[u];
    }
}
__device__ __forceinline__ void write_run(unsigned char* dst, int nbytes, const unsigned int* staged, int head) {
    const unsigned long long a = (unsigned long long)dst;
    const unsigned long long w0 = a & ~3ull;
    const int nw = (int)((((a + nbytes + 3) & ~3ull) - w0) / 4);
    const unsigned char* sb = reinterpret_cast<const unsigned char*>(staged);
    unsigned int* wd = reinterpret_cast<unsigned int*>(w0);
    for (int k0 = threadIdx.x; k0 < nw; k0 += SRUNR * 256) {
#pragma unroll
        for (int u = 0; u < SRUNR; ++u) {
            const int k = k0 + u * 256;
            if (k >= nw) continue;
            const long long i0 = (long long)(w0 + 4ull * k) - (long long)a;
            if (i0 >= 0 && i0 + 4 <= nbytes) {
                const int p = head + (int)i0, q = p >> 2, r = p & 3;
                const unsigned int lo = staged[q];
                const unsigned int hi = r ? staged[q + 1] : 0u;
                wd[k] = __funnelshift_r(lo, hi, 8 * r);
            } else {
                for (int b = 0; b < 4; ++b)
                    if (i0 + b >= 0 && i0 + b < nbytes) dst[i0 + b] = sb[head + i0 + b];
            }
        }
    }
}

// `n` elements `stride` apart from `s` into `staged`, in order: SRUNR loads of a thread in
// flight before any lands in shared memory.
__device__ __forceinline__ void stage_elems(const ELEM* s, long long stride, int n, ELEM* staged) {
    for (int j0 = threadIdx.x; j0 < n; j0 += SRUNR * 256) {
        ELEM v[SRUNR];
#pragma unroll
        for (int u = 0; u < SRUNR; ++u)
            if (j0 + u * 256 < n) v[u] = s[(long long)(j0 + u * 256) * stride];
#pragma unroll
        for (int u = 0; u < SRUNR; ++u)
            if (j0 + u * 256 < n) staged[j0 + u * 256] = v[u];
    }
}
// The `n` staged elements out to `o`, `stride` apart.
__device__ __forceinline__ void write_elems(ELEM* o, long long stride, int n, const ELEM* staged) {
    for (int j0 = threadIdx.x; j0 < n; j0 += SRUNR * 256) {
        ELEM v[SRUNR];
#pragma unroll
        for (int u = 0; u < SRUNR; ++u)
            if (j0 + u * 256 < n) v[u] = staged[j0 + u * 256];
#pragma unroll
        for (int u = 0; u < SRUNR; ++u)
            if (j0 + u * 256 < n) o[(long long)(j0 + u * 256) * stride] = v[u];
    }
}
