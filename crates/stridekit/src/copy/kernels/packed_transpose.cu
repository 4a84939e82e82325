// A transpose of 1-, 2- and 4-byte elements that moves words, not elements, whatever
// the alignment of the two sides. Axis `a` is the source's unit-stride axis, `l` the
// destination's; the other axes are batches. Compiled with ELEM, EB (its size: 1, 2 or
// 4), NDIM and PMAX defined before the prelude.
//
// One tile is TL source rows (along l) of TAB bytes (along a):
// 1. load: every row's bytes arrive as the 16-byte aligned chunks that cover them
//    (16-byte loads; a row may start at any byte, its shift within the first chunk is
//    kept), into registers, then into shared memory;
// 2. transpose: each thread takes K x K elements (K = 4 / EB: one 32-bit word from each
//    of K rows, realigned with a funnel shift), transposes them in registers with
//    `__byte_perm` and writes K words, one per destination row, into the out tile;
// 3. store: every destination row's bytes leave as the 16-byte aligned chunks of the
//    destination (realigned from shared memory with funnel shifts); only a row's first
//    and last partial chunks are written in words and bytes.
// The grid is persistent: while a block stores one tile, the next tile's chunks are in
// flight into its registers. Aligned chunks may reach past a row's elements: a chunk is
// loaded whole only where it lies inside [lo, hi), the source memory the copy was
// checked against; otherwise byte by byte. Edges (partial tiles) are handled in the
// same launch.
#define K (4 / EB)
#define TAB 64                          // source bytes per tile row
#define TA (TAB / EB)                   // tile extent along a: rows of the out tile
#ifndef PT_TL
#define PT_TL 128
#endif
#define TL PT_TL                        // tile extent along l: rows of the in tile
#define LB (TL * EB)                    // bytes per out-tile row
#define PIN 80                          // in-tile row pitch: shift, 64 bytes, a word
#define POUT (LB + 4)                   // out-tile row pitch: LB bytes and a word (odd word count)
#define NCHI 5                          // 16-byte chunks covering TAB bytes at any shift
#define NCHO (LB / 16 + 1)              // 16-byte chunks covering LB bytes at any shift
#define LOADS ((TL * NCHI + 255) / 256) // chunks a thread loads per tile

struct PTile {
    long long so, d, a0, l0;
    int rows, outs;
};

__device__ __forceinline__ PTile ptile(long long t, const Params& p, int a, int l, long long ntl, long long nta) {
    // Tiles along l run fastest: neighbours that share a destination sector are written
    // close together in time, so the L2 merges the sector's parts.
    const long long tl = t % ntl, rest = t / ntl;
    const long long ta = rest % nta, b = rest / nta;
    long long so, d;
    batch_offsets(p, a, l, b, so, d);
    PTile T;
    T.so = so;
    T.d = d;
    T.a0 = ta * TA;
    T.l0 = tl * TL;
    T.rows = (int)min((long long)TL, p.shape[l] - T.l0);
    T.outs = (int)min((long long)TA, p.shape[a] - T.a0);
    return T;
}

// A thread's chunks of tile T, loaded into registers: `slot` is each chunk's place in
// the in tile (-1: none), `srow`/`sval` a row's shift for the thread that loads its
// first chunk (-1: none).
__device__ __forceinline__ void fetch(const PTile& T, const unsigned char* __restrict__ src, long long sl,
                                      unsigned long long lo, unsigned long long hi, uint4 (&buf)[LOADS],
                                      int (&slot)[LOADS], int (&srow)[LOADS], int (&sval)[LOADS]) {
    const int abytes = T.outs * EB;
#pragma unroll
    for (int u = 0; u < LOADS; ++u) {
        const int i = u * 256 + threadIdx.x;
        const int r = i / NCHI, c = i - r * NCHI;
        slot[u] = -1;
        srow[u] = -1;
        if (i >= TL * NCHI || r >= T.rows) continue;
        // Pointer arithmetic from the kernel's arguments keeps the accesses global.
        const unsigned char* s0 = src + (T.so + (T.l0 + r) * sl + T.a0) * EB;
        const int sh = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
        if (c == 0) {
            srow[u] = r;
            sval[u] = sh;
        }
        if (c * 16 >= sh + abytes) continue;
        slot[u] = r * PIN + 16 * c;
        const unsigned char* ca = s0 - sh + 16 * c;
        const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
        if (cav >= lo && cav + 16 <= hi) {
            buf[u] = __ldg(reinterpret_cast<const uint4*>(ca));
        } else {
            union { uint4 v; unsigned char b[16]; } x;
            x.v = make_uint4(0, 0, 0, 0);
            for (int k = 0; k < 16; ++k) {
                const int at = 16 * c + k - sh;  // byte of the row
                if (at >= 0 && at < abytes) x.b[k] = s0[at];
            }
            buf[u] = x.v;
        }
    }
}

// Writes bytes [pp, pp + n) of an out-tile row (n < 4, inside the row's valid bytes).
__device__ __forceinline__ void store_part(unsigned char* to, const unsigned char* orow, int pp, int n) {
    for (int k = 0; k < n; ++k) to[k] = orow[pp + k];
}

#ifndef PT_MINB
#define PT_MINB 4
#endif
extern "C" __global__ void __launch_bounds__(256, PT_MINB) packed_transpose(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[TL * PIN];
    __shared__ __align__(16) unsigned char tout[TA * POUT];
    __shared__ int shift[TL];
    __shared__ long long orow_at[TA];  // each out row's destination byte offset from dst
    __shared__ PTile shared_tile;      // the next tile, worked out once per block
    const long long sl = p.src[l], da = p.dst[a];
    const long long ntl = (p.shape[l] + TL - 1) / TL, nta = (p.shape[a] + TA - 1) / TA;
    const long long total = ntl * nta * batches;
    long long t = blockIdx.x;
    if (t >= total) return;
    uint4 buf[LOADS];
    int slot[LOADS], srow[LOADS], sval[LOADS];
    // Tile coordinates take 64-bit divisions: one thread works them out for the block.
    if (threadIdx.x == 0) shared_tile = ptile(t, p, a, l, ntl, nta);
    __syncthreads();
    PTile T = shared_tile;
    fetch(T, src, sl, lo, hi, buf, slot, srow, sval);
    for (;;) {
        // 1. The fetched chunks into shared memory.
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            if (slot[u] >= 0) *reinterpret_cast<uint4*>(tin + slot[u]) = buf[u];
            if (srow[u] >= 0) shift[srow[u]] = sval[u];
        }
        __syncthreads();
        // 2. Transpose K x K blocks in registers.
        for (int q = threadIdx.x; q < (TL / K) * (TAB / 4); q += blockDim.x) {
            const int w = q % (TAB / 4), r0 = (q / (TAB / 4)) * K;
            unsigned int v[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int r = r0 + k;
                const int sh = r < T.rows ? shift[r] : 0;
                const int o = sh + 4 * w;
                const unsigned int* row = reinterpret_cast<const unsigned int*>(tin + r * PIN);
                v[k] = (sh & 3) == 0 ? row[o >> 2] : __funnelshift_r(row[o >> 2], row[(o >> 2) + 1], 8 * (o & 3));
            }
            unsigned int u[K];
#if EB == 1
            const unsigned int t0 = __byte_perm(v[0], v[1], 0x5140), t1 = __byte_perm(v[2], v[3], 0x5140);
            const unsigned int t2 = __byte_perm(v[0], v[1], 0x7362), t3 = __byte_perm(v[2], v[3], 0x7362);
            u[0] = __byte_perm(t0, t1, 0x5410);
            u[1] = __byte_perm(t0, t1, 0x7632);
            u[2] = __byte_perm(t2, t3, 0x5410);
            u[3] = __byte_perm(t2, t3, 0x7632);
#elif EB == 2
            u[0] = __byte_perm(v[0], v[1], 0x5410);
            u[1] = __byte_perm(v[0], v[1], 0x7632);
#else
            u[0] = v[0];
#endif
#pragma unroll
            for (int j = 0; j < K; ++j)
                *reinterpret_cast<unsigned int*>(tout + (w * K + j) * POUT + r0 * EB) = u[j];
        }
        // Each out row's destination, computed once per tile; the next tile.
        for (int qr = threadIdx.x; qr < TA; qr += blockDim.x)
            orow_at[qr] = (T.d + (T.a0 + qr) * da + T.l0) * EB;
        const long long next = t + gridDim.x;
        if (threadIdx.x == 0 && next < total) shared_tile = ptile(next, p, a, l, ntl, nta);
        __syncthreads();
        // The next tile's chunks are in flight while this one is stored.
        PTile N;
        if (next < total) {
            N = shared_tile;
            fetch(N, src, sl, lo, hi, buf, slot, srow, sval);
        }
        // 3. Store.
        const int lbytes = T.rows * EB;
        for (int i = threadIdx.x; i < TA * NCHO; i += blockDim.x) {
            const int qr = i / NCHO, c = i - qr * NCHO;
            if (qr >= T.outs) break;
            unsigned char* D = dst + orow_at[qr];
            const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 15);
            const int p0 = 16 * c - dsh;  // out-row byte of the chunk's first byte
            if (p0 >= lbytes || p0 + 16 <= 0) continue;
            unsigned char* chunk = D + p0;
            const unsigned char* orow = tout + qr * POUT;
            const unsigned int* row = reinterpret_cast<const unsigned int*>(orow);
            if (p0 >= 0 && p0 + 16 <= lbytes) {
                uint4 x;
                unsigned int* xs = reinterpret_cast<unsigned int*>(&x);
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int pp = p0 + 4 * j;
                    xs[j] = (dsh & 3) == 0 ? row[pp >> 2]
                                           : __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
                }
                *reinterpret_cast<uint4*>(chunk) = x;
            } else {
                // A row's first or last chunk: whole aligned words where all four bytes
                // are the row's, single bytes at the ends.
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int pp = p0 + 4 * j;
                    if (pp >= 0 && pp + 4 <= lbytes) {
                        *reinterpret_cast<unsigned int*>(chunk + 4 * j) =
                            __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
                    } else if (pp + 4 > 0 && pp < lbytes) {
                        const int from = max(pp, 0), to = min(pp + 4, lbytes);
                        store_part(chunk + (from - p0), orow, from, to - from);
                    }
                }
            }
        }
        if (next >= total) break;
        t = next;
        T = N;
    }
}
