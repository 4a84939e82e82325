// Runs of bytes between global and shared memory in 16-byte aligned chunks, whatever the
// run's alignment: what the channel kernels share. Realignment is a funnel shift of two
// aligned words; a run's first and last partial chunks are written in words and bytes;
// aligned chunks are loaded whole only inside [lo, hi), the memory the copy was checked
// against.

// Tile `t` of a channel kernel (tiles_per tiles of per_tile pixels in each batch, batches
// over every axis but `a` and `l`): source and destination offsets of its batch and its
// first pixel, into `at`; one thread works them out for the block (64-bit divisions).
__device__ __forceinline__ void locate_tile(const Params& p, int a, int l, long long t, long long tiles_per,
                                            long long per_tile, long long* at) {
    const long long b = t / tiles_per;
    batch_offsets(p, a, l, b, at[0], at[1]);
    at[2] = (t - b * tiles_per) * per_tile;
}

// The `n` bytes of a run that starts at `s0` into shared memory at `to` (16-byte aligned):
// chunk c holds bytes [16c - shift, 16c - shift + 16) of the run, shift = s0 % 16.
__device__ __forceinline__ void load_run(const unsigned char* s0, int n, unsigned char* to,
                                         unsigned long long lo, unsigned long long hi, int tid, int nthreads) {
    const int sh = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
    const int chunks = (sh + n + 15) / 16;
    for (int c = tid; c < chunks; c += nthreads) {
        const unsigned char* ca = s0 - sh + 16 * c;
        const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
        if (cav >= lo && cav + 16 <= hi) {
            *reinterpret_cast<uint4*>(to + 16 * c) = __ldg(reinterpret_cast<const uint4*>(ca));
        } else {
            for (int k = 0; k < 16; ++k) {
                const int at = 16 * c + k - sh;
                if (at >= 0 && at < n) to[16 * c + k] = s0[at];
            }
        }
    }
}

// The `n` bytes at `from` (shared memory, 4-byte aligned, one spare word after) to `D`,
// in 16-byte aligned chunks; partial first and last chunks in words and bytes.
__device__ __forceinline__ void store_run(unsigned char* D, int n, const unsigned char* from, int tid, int nthreads) {
    const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 15);
    const int chunks = (dsh + n + 15) / 16;
    const unsigned int* row = reinterpret_cast<const unsigned int*>(from);
    for (int c = tid; c < chunks; c += nthreads) {
        const int p0 = 16 * c - dsh;
        unsigned char* chunk = D + p0;
        if (p0 >= 0 && p0 + 16 <= n) {
            uint4 x;
            unsigned int* xs = reinterpret_cast<unsigned int*>(&x);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int pp = p0 + 4 * j;
                xs[j] = __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
            }
            *reinterpret_cast<uint4*>(chunk) = x;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int pp = p0 + 4 * j;
                if (pp >= 0 && pp + 4 <= n) {
                    *reinterpret_cast<unsigned int*>(chunk + 4 * j) =
                        __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
                } else {
                    for (int k = max(pp, 0); k < min(pp + 4, n); ++k) chunk[k - p0] = from[k];
                }
            }
        }
    }
}

