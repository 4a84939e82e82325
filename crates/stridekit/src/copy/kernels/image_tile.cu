// Byte tiles moved in aligned 4-byte words on both sides, through a
// shared-memory image of the tile's source runs (`ImageTile` in the layout crate).
// Compiled with UR, UI, UE (read, interior and edge words a thread holds of a tile) and
// MINB (blocks an SM the registers are kept for) defined before the prelude; `TileParams`
// and `tile_base` come from tile_params.cu.
//
// The source side loads the aligned words holding each word of a run and funnel-shifts
// them, so that the run's bytes sit in the image from a word boundary of their own
// whatever the tile's phase: the gather table holds image bytes with no phase term. The
// destination side writes each run's interior words (whole at every phase) in a
// branch-free loop, and its few edge words byte by byte where they fall inside the run.
// A thread's items are the same in every tile and stay in registers; the next tile's
// words are in flight while this one is written.
struct ImageArgs {
    const int* rrel; const unsigned int* rmeta;   // read: offset of run byte 4k; image word | bytes << 16
    const int* irel; const unsigned int* ibase;   // interior write: offset of run position 4m; its table index
    const int* erel; const unsigned int* emeta;   // edge write: table | first << 15 | (left + 8) << 16
    const unsigned short* dtab;                   // image byte of each destination position
    int nread, ninner, nedge, ndtab, img_words, pad;
};
// A thread's items of one kind (`mine` of them: every 256th from its index), the same in
// every tile, into registers; the slots past `mine` hold zeros and are never used.
template <int U>
__device__ __forceinline__ void load_items(int (&rel)[U], unsigned int (&meta)[U], const int* g_rel,
                                           const unsigned int* g_meta, int mine, int tid) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int w = u * 256 + tid;
        rel[u] = u < mine ? g_rel[w] : 0;
        meta[u] = u < mine ? g_meta[w] : 0u;
    }
}
extern "C" __global__ void __launch_bounds__(256, MINB) image_tile(const unsigned char* __restrict__ src,
                                                                 unsigned char* __restrict__ dst, const TileParams p,
                                                                 const ImageArgs a) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned int* img = reinterpret_cast<unsigned int*>(smem);
    const unsigned char* ib = smem;
    unsigned short* dtab = reinterpret_cast<unsigned short*>(smem + 4 * a.img_words);
    for (int i = threadIdx.x; i < a.ndtab; i += blockDim.x) dtab[i] = a.dtab[i];
    const int tid = threadIdx.x;
    const int mine_r = a.nread > tid ? (a.nread - 1 - tid) / 256 + 1 : 0;
    const int mine_i = a.ninner > tid ? (a.ninner - 1 - tid) / 256 + 1 : 0;
    const int mine_e = a.nedge > tid ? (a.nedge - 1 - tid) / 256 + 1 : 0;
    int rrel[UR]; unsigned int rmeta[UR];
    load_items<UR>(rrel, rmeta, a.rrel, a.rmeta, mine_r, tid);
    int irel[UI]; unsigned int ibase[UI];
    load_items<UI>(irel, ibase, a.irel, a.ibase, mine_i, tid);
    int erel[UE]; unsigned int emeta[UE];
    load_items<UE>(erel, emeta, a.erel, a.emeta, mine_e, tid);
    __syncthreads();
    unsigned int t = blockIdx.x;
    if (t >= p.ntiles) return;
    unsigned int lo[UR], hi[UR];
    // The aligned words holding read u's run bytes: the second only where they reach it.
    auto load = [&](const unsigned char* s) {
#pragma unroll
        for (int u = 0; u < UR; ++u) {
            if (u < mine_r) {
                const size_t at = reinterpret_cast<size_t>(s + rrel[u]);
                const unsigned int* w = reinterpret_cast<const unsigned int*>(at & ~(size_t)3);
                lo[u] = w[0];
                hi[u] = (unsigned int)(at & 3u) + (rmeta[u] >> 16) > 4u ? w[1] : 0u;
            }
        }
    };
    long long sb, db;
    tile_base(p, t, sb, db);
    const unsigned char* ls = src + sb;  // the tile whose words are in flight
    load(ls);
    for (;;) {
#pragma unroll
        for (int u = 0; u < UR; ++u) {
            if (u < mine_r) {
                const unsigned int ph = (unsigned int)reinterpret_cast<size_t>(ls + rrel[u]) & 3u;
                img[rmeta[u] & 0xffffu] = __funnelshift_r(lo[u], hi[u], 8 * ph);
            }
        }
        __syncthreads();
        // Below 2^31 tiles (`MAX_TILES` in params.rs), so the sum never wraps.
        const unsigned int next = t + gridDim.x;
        long long nsb = 0, ndb = 0;
        if (next < p.ntiles) {
            tile_base(p, next, nsb, ndb);
            ls = src + nsb;
            load(ls);
        }
        unsigned char* o = dst + db;
#pragma unroll
        for (int u = 0; u < UI; ++u) {
            if (u < mine_i) {
                unsigned char* w = o + irel[u];
                const int ph = (int)(reinterpret_cast<size_t>(w) & 3u);
                const int tb = (int)ibase[u] - ph;
                const unsigned int v = (unsigned int)ib[dtab[tb]] | (unsigned int)ib[dtab[tb + 1]] << 8 |
                                       (unsigned int)ib[dtab[tb + 2]] << 16 | (unsigned int)ib[dtab[tb + 3]] << 24;
                *reinterpret_cast<unsigned int*>(w - ph) = v;
            }
        }
#pragma unroll
        for (int u = 0; u < UE; ++u) {
            if (u < mine_e) {
                unsigned char* w = o + erel[u];
                const int ph = (int)(reinterpret_cast<size_t>(w) & 3u);
                const int lim = (int)(emeta[u] >> 16) - 8;
                const int first = (int)((emeta[u] >> 15) & 1u);
                const int tb = (int)(emeta[u] & 0x7fffu) - ph;
                unsigned char* wa = w - ph;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int q = b - ph;
                    if ((!first || q >= 0) && q < lim) wa[b] = ib[dtab[tb + b]];
                }
            }
        }
        __syncthreads();
        if (next >= p.ntiles) break;
        t = next;
        db = ndb;
    }
}
