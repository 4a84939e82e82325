// Rows read backwards (`x[..., ::-1]`, a whole array reversed) for 1- and 2-byte
// elements. Compiled with EB (1 or 2), NDIM and PMAX defined before the prelude;
// `locate_tile`, `load_run` and `store_run` come from channel_runs.cu.
//
// Axis `l` has stride -1 in the source and 1 in the destination; other axes are batches.
// A tile is P elements of a destination row: their source is one run (the mirror image,
// from its lowest address) that arrives as aligned 16-byte chunks; each thread builds
// destination words from the run's words read backwards (realigned with a funnel shift,
// their elements reversed with a byte permute), and the tile leaves as one run of aligned
// chunks.
#define RUN 8192         // bytes of a tile
#define P (RUN / EB)     // elements of a tile
#define FRONT 16         // spare bytes before the run: a tile's last partial word reads there

extern "C" __global__ void __launch_bounds__(256) row_reverse(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int axis, int same_axis, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[FRONT + RUN + 32];
    __shared__ __align__(16) unsigned char tout[RUN + 4];
    __shared__ int shift;
    __shared__ long long tile_at[3];  // the next tile: source and destination offsets, first element
    const long long n = p.shape[axis];
    const long long tiles_per = (n + P - 1) / P, total = tiles_per * batches;
    if (threadIdx.x == 0 && blockIdx.x < total) locate_tile(p, axis, same_axis, blockIdx.x, tiles_per, P, tile_at);
    __syncthreads();
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        const long long so = tile_at[0], d = tile_at[1], x0 = tile_at[2];
        const int px = (int)min((long long)P, n - x0);  // elements in this tile
        const int bytes = px * EB;
        // Destination elements x0 .. x0 + px - 1 come from source elements x0 + px - 1 .. x0
        // of the row, which lie upwards in memory from the last of them.
        const unsigned char* s0 = src + (so - (x0 + px - 1)) * EB;
        if (threadIdx.x == 0) shift = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
        load_run(s0, bytes, tin + FRONT, lo, hi, threadIdx.x, blockDim.x);
        __syncthreads();
        const unsigned int* row = reinterpret_cast<const unsigned int*>(tin);
        const int sh = FRONT + shift;
        for (int g = threadIdx.x; 4 * g < bytes; g += blockDim.x) {
            // Destination bytes 4g .. 4g + 3 are the run's bytes bytes - 4 - 4g .. bytes - 1 - 4g,
            // elements reversed (a tile's last partial word reads up to 3 spare bytes before
            // the run, which store_run never writes out).
            const int o = sh + bytes - 4 - 4 * g;
            const unsigned int w = (o & 3) == 0 ? row[o >> 2] : __funnelshift_r(row[o >> 2], row[(o >> 2) + 1], 8 * (o & 3));
            *reinterpret_cast<unsigned int*>(tout + 4 * g) = __byte_perm(w, 0, EB == 1 ? 0x0123 : 0x1032);
        }
        __syncthreads();
        store_run(dst + (d + x0) * EB, bytes, tout, threadIdx.x, blockDim.x);
        __syncthreads();
        if (threadIdx.x == 0 && t + gridDim.x < total) locate_tile(p, axis, same_axis, t + gridDim.x, tiles_per, P, tile_at);
        __syncthreads();
    }
}
