// Multi-axis tiles whose runs start anywhere (`TileRuns` in the layout crate), moved as
// aligned 16-byte chunks on both sides. Compiled with ELEM defined before the prelude;
// tile_params.cu comes first.
//
// A tile's source elements form runs (along its source-contiguous axes), its destination
// elements runs of their own. Every source run is read as the aligned 16-byte chunks that
// cover it into a slot of a shared-memory image, placed so that a run byte's position is
// its table entry plus the tile's source address mod 16, whatever the run's alignment.
// Every destination run is written as aligned 16-byte chunks gathered from the image
// through the table (`pos`, one entry per destination element): the chunks inside the run
// whole, the (at most three) chunks at its ends a word at a time where the word lies inside
// the run, else an element at a time. Whole chunks are read only inside [lo, hi), the source
// memory the copy was checked against (elsewhere the run's bytes alone); only the
// destination's elements are written.
//
// Each block first builds the table and every thread's share of a tile (its source chunks,
// whole destination chunks and edge chunks); then it loops over tiles, the next tile's
// chunks in flight while this one is written.
#define CE (16 / (int)sizeof(ELEM))  // elements in a 16-byte chunk
#define LPER 4                       // source chunks a thread (TileRuns: at most 4 x 256 a group)
#define FPER 4                       // whole destination chunks a thread (the same)
#define EPER 4                       // edge chunks a thread (the same)
#define WB ((int)sizeof(ELEM) > 4 ? (int)sizeof(ELEM) : 4)  // bytes in an edge chunk's word
#define WE (WB / (int)sizeof(ELEM))                          // elements in that word
#define NO_CHUNK (-0x7fffffff - 1)                           // a chunk outside its run
struct RunParams {
    int rs, rd;        // source and destination run, elements
    int ms;            // chunks a source run's aligned cover may take
    int slot;          // image bytes a source run
    int nrs, nrd;      // runs a tile
    int nf;            // chunks every destination run holds whole (chunks 1 to nf)
    int image_bytes;   // a tile's image (a 16-byte multiple)
    int group;         // tiles a block moves at once (their images one after another; the
                       // table follows)
    int row;           // table entries a destination run (rd or more, 2 mod 4: the rows
                       // neighbouring lanes read fall in different banks)
};
union Chunk { uint4 v; ELEM e[CE]; unsigned char b[16]; };
union Word { unsigned int w[WB / 4]; ELEM e[WE]; };

// The bytes of source run [a, a + ls) inside the aligned chunk at `ca`, where the chunk
// reaches outside [lo, hi) (the run's own bytes are inside: they are elements).
__device__ __noinline__ uint4 edge_chunk(const unsigned char* ca, unsigned long long a, int ls) {
    Chunk c;
    c.v = make_uint4(0, 0, 0, 0);
    const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
    for (int k = 0; k < 16; ++k)
        if (cav + k >= a && cav + k < a + (unsigned long long)ls) c.b[k] = ca[k];
    return c.v;
}

// The chunk of source run u of the tile whose lowest source byte is `ts`, where the run's
// aligned cover holds it (`lrun`: the run's bytes from `ts`; `lk`: the chunk's bytes from
// the cover's start).
__device__ __forceinline__ void load_chunk(uint4& to, const unsigned char* ts, int lrun, int lk, int ls,
                                           unsigned long long lo, unsigned long long hi) {
    const unsigned char* a = ts + lrun;
    const int a15 = (int)(reinterpret_cast<unsigned long long>(a) & 15);
    if (lk >= a15 + ls) return;
    const unsigned char* ca = a - a15 + lk;
    const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
    to = cav >= lo && cav + 16 <= hi ? __ldg(reinterpret_cast<const uint4*>(ca))
                                     : edge_chunk(ca, reinterpret_cast<unsigned long long>(a), ls);
}

extern "C" __global__ void __launch_bounds__(256, 2) tile_runs(const ELEM* __restrict__ src, ELEM* __restrict__ dst,
                                                             const TileParams p, const RunParams r,
                                                             unsigned long long lo, unsigned long long hi) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned char* image = smem;
    unsigned short* pos = reinterpret_cast<unsigned short*>(smem + r.group * r.image_bytes);
    int* first = reinterpret_cast<int*>(pos + ((r.nrd * r.row + 7) & ~7));
    int* doff = first + r.nrs;
    const int isz = (int)sizeof(ELEM), ls = r.rs * isz;
    // The table: destination element j's source byte in the image, less the tile's source
    // address mod 16 (run * slot + the run's start mod 16 + its byte in the run). Each source
    // run's start (elements from the tile's lowest source element) goes to `first`, each
    // destination run's offset to `doff`.
    for (int i = threadIdx.x; i < p.vol; i += blockDim.x) {
        unsigned int rem = i;
        int so = 0, j = p.jbase;
        for (int q = 0; q < p.nt; ++q) {
            const int k = p.sorder[q];
            const unsigned int quo = tile_div(p, k, rem);
            const int c = (int)(rem - quo * (unsigned int)p.ext[k]);
            rem = quo;
            so += c * p.sstr[k];
            j += c * p.wgt[k];
        }
        const int run = i / r.rs, b = i - run * r.rs, start = so - b;
        const int q = j / r.rd;
        pos[q * r.row + j - q * r.rd] = (unsigned short)(run * r.slot + ((start * isz) & 15) + b * isz);
        if (b == 0) first[run] = start;
    }
    for (int q = threadIdx.x; q < r.nrd; q += blockDim.x) {
        unsigned int rem = q * r.rd;
        int d = 0;
        for (int k = 0; k < p.nt; ++k) {
            const unsigned int quo = tile_div(p, k, rem);
            d += (int)(rem - quo * (unsigned int)p.ext[k]) * p.dstr[k];
            rem = quo;
        }
        doff[q] = d;
    }
    __syncthreads();
    // This thread's share of every group of tiles (tile g of the group). Source chunk u:
    // its tile, its run's bytes from the tile's lowest source byte (-1: none), the run's
    // slot (in its tile's image) plus its phase plus the chunk's place in the run's cover
    // (`lsk`), that place (`lk`). Whole chunk n and edge chunk n of a destination run: its
    // tile, the run's destination bytes from the tile's first, and its table row with the
    // chunk's index in the high half (-1: none).
    const int nchunks = r.nrs * r.ms, nfull = r.nrd * r.nf, nedge = r.nrd * 3;
    int lg[LPER], lrun[LPER], lsk[LPER], lk[LPER], fg[FPER], fdst[FPER], frk[FPER], eg[EPER], edst[EPER], erk[EPER];
#pragma unroll
    for (int u = 0; u < LPER; ++u) {
        const int c = u * blockDim.x + threadIdx.x;
        const int g = c / nchunks, cc = c - g * nchunks;
        const int run = cc / r.ms, k = cc - run * r.ms;
        const bool mine = g < r.group;
        lg[u] = mine ? g : 0;
        lrun[u] = mine ? first[run] * isz : -1;
        lk[u] = 16 * k;
        lsk[u] = mine ? g * r.image_bytes + run * r.slot + ((first[run] * isz) & 15) + 16 * k : 0;
    }
#pragma unroll
    for (int n = 0; n < FPER; ++n) {
        const int f = n * blockDim.x + threadIdx.x;
        const int g = nfull > 0 ? f / nfull : r.group, ff = f - g * nfull;
        // Neighbouring lanes take the same chunk of neighbouring runs.
        const int kk = g < r.group ? ff / r.nrd : 0, q = ff - kk * r.nrd;
        fg[n] = g < r.group ? g : 0;
        fdst[n] = doff[g < r.group ? q : 0] * isz;
        frk[n] = g < r.group ? q * r.row | (1 + kk) << 16 : -1;
    }
#pragma unroll
    for (int n = 0; n < EPER; ++n) {
        const int f = n * blockDim.x + threadIdx.x;
        const int g = f / nedge, ff = f - g * nedge;
        const int kind = g < r.group ? ff / r.nrd : 0, q = ff - kind * r.nrd;
        eg[n] = g < r.group ? g : 0;
        edst[n] = doff[g < r.group ? q : 0] * isz;
        erk[n] = g < r.group ? q * r.row | (kind == 0 ? 0 : r.nf + kind) << 16 : -1;
    }
    const unsigned char* s8 = reinterpret_cast<const unsigned char*>(src);
    unsigned char* d8 = reinterpret_cast<unsigned char*>(dst);
    // The lowest source byte of tile t (and its first destination byte, in `td`).
    auto bases = [&](unsigned int t, unsigned char*& td) {
        long long sb, db;
        tile_base(p, t, sb, db);
        td = d8 + db * isz;
        return s8 + (sb + p.sbase) * isz;
    };
    // A chunk's image position less its slot (`lsk`): the tile's source address mod 16 less
    // the run's; out of its run's cover: NO_CHUNK.
    uint4 buf[LPER];
    int lsh[LPER];
    auto issue = [&](unsigned int t0) {
#pragma unroll
        for (int u = 0; u < LPER; ++u) {
            lsh[u] = NO_CHUNK;
            const unsigned int t = t0 + lg[u];
            if (lrun[u] < 0 || t >= p.ntiles) continue;
            unsigned char* td;
            const unsigned char* ts = bases(t, td);
            const unsigned char* a = ts + lrun[u];
            const int a15 = (int)(reinterpret_cast<unsigned long long>(a) & 15);
            if (lk[u] >= a15 + ls) continue;
            lsh[u] = (int)(reinterpret_cast<unsigned long long>(ts) & 15) - a15;
            const unsigned char* ca = a - a15 + lk[u];
            const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
            buf[u] = cav >= lo && cav + 16 <= hi ? __ldg(reinterpret_cast<const uint4*>(ca))
                                                 : edge_chunk(ca, reinterpret_cast<unsigned long long>(a), ls);
        }
    };
    const unsigned int stride = gridDim.x * (unsigned int)r.group;
    unsigned int t0 = blockIdx.x * (unsigned int)r.group;
    if (t0 >= p.ntiles) return;
    issue(t0);
    for (;;) {
        // This group's chunks into their slots: a run's byte lands at its table entry plus
        // its tile's source address mod 16, in its tile's image.
#pragma unroll
        for (int u = 0; u < LPER; ++u)
            if (lsh[u] != NO_CHUNK) *reinterpret_cast<uint4*>(image + lsk[u] + lsh[u]) = buf[u];
        __syncthreads();
        // The next group's chunks in flight while this one is written.
        const unsigned int next = t0 + stride;
        if (next < p.ntiles) issue(next);
        // Whole chunks: chunk k of a run whose first element is e elements past a 16-byte
        // boundary holds the run's elements k * CE - e to k * CE - e + CE - 1.
#pragma unroll
        for (int n = 0; n < FPER; ++n) {
            const unsigned int t = t0 + fg[n];
            if (frk[n] < 0 || t >= p.ntiles) continue;
            unsigned char* td;
            const unsigned char* ts = bases(t, td);
            const unsigned char* img = image + fg[n] * r.image_bytes + (reinterpret_cast<unsigned long long>(ts) & 15);
            unsigned char* d = td + fdst[n];
            const int d15 = (int)(reinterpret_cast<unsigned long long>(d) & 15), k = frk[n] >> 16;
            const unsigned short* row = pos + (frk[n] & 0xffff) + k * CE - d15 / isz;
            Chunk c;
#pragma unroll
            for (int m = 0; m < CE; ++m) c.e[m] = *reinterpret_cast<const ELEM*>(img + row[m]);
            *reinterpret_cast<uint4*>(d - d15 + 16 * k) = c.v;
        }
        // Edge chunks (0, nf + 1 and nf + 2): a word where it lies inside the run, else the
        // run's elements in it one at a time.
#pragma unroll
        for (int n = 0; n < EPER; ++n) {
            const unsigned int t = t0 + eg[n];
            if (erk[n] < 0 || t >= p.ntiles) continue;
            unsigned char* td;
            const unsigned char* ts = bases(t, td);
            const unsigned char* img = image + eg[n] * r.image_bytes + (reinterpret_cast<unsigned long long>(ts) & 15);
            unsigned char* d = td + edst[n];
            const int d15 = (int)(reinterpret_cast<unsigned long long>(d) & 15), k = erk[n] >> 16;
            const unsigned short* row = pos + (erk[n] & 0xffff);
            const int i0 = k * CE - d15 / isz;  // the chunk's first element in the run
            unsigned char* cb = d - d15 + 16 * k;
#pragma unroll
            for (int w = 0; w < 16 / WB; ++w) {
                const int iw = i0 + w * WE;
                if (iw >= r.rd || iw + WE <= 0) continue;
                if (iw >= 0 && iw + WE <= r.rd) {
                    Word x;
#pragma unroll
                    for (int m = 0; m < WE; ++m) x.e[m] = *reinterpret_cast<const ELEM*>(img + row[iw + m]);
                    *reinterpret_cast<Word*>(cb + w * WB) = x;
                } else {
#pragma unroll
                    for (int m = 0; m < WE; ++m)
                        if (iw + m >= 0 && iw + m < r.rd)
                            reinterpret_cast<ELEM*>(cb + w * WB)[m] = *reinterpret_cast<const ELEM*>(img + row[iw + m]);
                }
            }
        }
        __syncthreads();
        if (next >= p.ntiles) break;
        t0 = next;
    }
}
