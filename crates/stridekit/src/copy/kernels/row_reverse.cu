// Rows read backwards (`x[..., ::-1]`, a whole array reversed) for 1- and 2-byte
// elements. Compiled with EB (1 or 2), NDIM and PMAX defined before the prelude;
// `locate_tile` comes from channel_runs.cu.
//
// Axis `l` has stride -1 in the source and 1 in the destination; other axes are batches.
// A tile is P elements of a destination row; their source is one run, the tile's mirror
// image. Each thread writes aligned 16-byte chunks of the destination: it reads the two
// aligned source chunks that hold the chunk's mirror image (neighbouring lanes share one,
// from L1), realigns the 16 bytes with funnel shifts, reverses their elements with byte
// permutes and stores the chunk whole; a tile's partial first and last chunks go element
// by element. Whole source chunks are read only inside [lo, hi).
#define RUN 32768        // bytes of a tile
#define P (RUN / EB)     // elements of a tile

// The 16 bytes at `a` (any alignment, all of them in [lo, hi)) as four words, the first
// byte lowest.
__device__ __forceinline__ void load16(const unsigned char* a, unsigned long long lo, unsigned long long hi,
                                       unsigned int (&v)[4]) {
    const unsigned long long av = reinterpret_cast<unsigned long long>(a);
    const unsigned long long al = av & ~15ull;
    const int sh = (int)(av & 15);
    if (al >= lo && al + 32 <= hi) {
        const uint4 c0 = __ldg(reinterpret_cast<const uint4*>(al));
        const uint4 c1 = sh == 0 ? c0 : __ldg(reinterpret_cast<const uint4*>(al + 16));
        const unsigned int w[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
        unsigned int s[5];
        // Words q .. q + 4 of the two chunks (q is the same for a whole tile).
        switch (sh >> 2) {
        case 0: s[0] = w[0]; s[1] = w[1]; s[2] = w[2]; s[3] = w[3]; s[4] = w[4]; break;
        case 1: s[0] = w[1]; s[1] = w[2]; s[2] = w[3]; s[3] = w[4]; s[4] = w[5]; break;
        case 2: s[0] = w[2]; s[1] = w[3]; s[2] = w[4]; s[3] = w[5]; s[4] = w[6]; break;
        default: s[0] = w[3]; s[1] = w[4]; s[2] = w[5]; s[3] = w[6]; s[4] = w[7]; break;
        }
        const int r = 8 * (sh & 3);
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = __funnelshift_r(s[k], s[k + 1], r);
    } else {
        // Near the ends of the source memory: byte by byte.
#pragma unroll
        for (int k = 0; k < 4; ++k)
            v[k] = (unsigned int)a[4 * k] | (unsigned int)a[4 * k + 1] << 8 | (unsigned int)a[4 * k + 2] << 16 |
                   (unsigned int)a[4 * k + 3] << 24;
    }
}

extern "C" __global__ void __launch_bounds__(256) row_reverse(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int axis, int same_axis, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ long long tile_at[3];  // the next tile: source and destination offsets, first element
    const long long n = p.shape[axis];
    const long long tiles_per = (n + P - 1) / P, total = tiles_per * batches;
    if (threadIdx.x == 0 && blockIdx.x < total) locate_tile(p, axis, same_axis, blockIdx.x, tiles_per, P, tile_at);
    __syncthreads();
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        const long long so = tile_at[0], d = tile_at[1], x0 = tile_at[2];
        __syncthreads();
        if (threadIdx.x == 0 && t + gridDim.x < total) locate_tile(p, axis, same_axis, t + gridDim.x, tiles_per, P, tile_at);
        const int px = (int)min((long long)P, n - x0);  // elements in this tile
        const int bytes = px * EB;
        // Destination elements x0 .. x0 + px - 1 come from source elements x0 + px - 1 .. x0
        // of the row: the run upwards in memory from s0. Destination byte i (element i / EB,
        // byte i % EB of it) is the run's byte bytes - EB - (i - i % EB) + i % EB.
        const unsigned char* s0 = src + (so - (x0 + px - 1)) * EB;
        unsigned char* D = dst + (d + x0) * EB;
        const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 15);
        const int chunks = (dsh + bytes + 15) / 16;
        for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
            const int p0 = 16 * c - dsh;  // the chunk's first byte in the tile
            if (p0 >= 0 && p0 + 16 <= bytes) {
                // Its mirror image: the run's bytes bytes - 16 - p0 .. bytes - 1 - p0.
                unsigned int v[4];
                load16(s0 + (bytes - 16 - p0), lo, hi, v);
                uint4 out;
                out.x = __byte_perm(v[3], 0, EB == 1 ? 0x0123 : 0x1032);
                out.y = __byte_perm(v[2], 0, EB == 1 ? 0x0123 : 0x1032);
                out.z = __byte_perm(v[1], 0, EB == 1 ? 0x0123 : 0x1032);
                out.w = __byte_perm(v[0], 0, EB == 1 ? 0x0123 : 0x1032);
                *reinterpret_cast<uint4*>(D + p0) = out;
            } else {
                for (int i = max(p0, 0); i < min(p0 + 16, bytes); ++i) {
                    const int b = i % EB;
                    D[i] = s0[bytes - EB - (i - b) + b];
                }
            }
        }
        __syncthreads();
    }
}
