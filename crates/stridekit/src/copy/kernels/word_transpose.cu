// A transpose of 1- and 2-byte elements that moves 16-byte chunks and 4-byte words, not
// elements, whatever the alignment of the two sides. Axis `a` is the source's unit-stride
// axis, `l` the destination's; the other axes are batches. Compiled with EB (the element
// size: 1 or 2), NDIM and PMAX defined before the prelude.
//
// One tile is WT_TR source rows (along l) of 128 bytes (along a); eight lanes read a row,
// lane k its k-th 16-byte chunk:
// 1. load: a thread reads chunk k of K = 4 / EB consecutive rows, each row as the aligned
//    chunks that cover it (the last lane also reads the ninth), realigned to the row's
//    first byte with word selects and funnel shifts over the next lane's chunk
//    (`__shfl_down_sync`);
// 2. transpose: the thread transposes its four K x K blocks in registers with
//    `__byte_perm` and writes 4K words into the out tile, one per destination row, at
//    XOR-swizzled places (no bank conflicts either way);
// 3. store: where every destination row of the tile starts 16-byte aligned, eight lanes
//    take a row's 32 words and store them as 16-byte chunks; else a warp takes a row,
//    realigns its words to the destination's alignment over the previous lane's word
//    (`__shfl_up_sync`) and stores whole aligned words: a tile writes each row from the
//    aligned word that holds its first element (whose first bytes come from the K rows
//    before the tile, transposed by one warp) to the next tile's; only a row's very first
//    and last words go byte by byte.
// No chunk or word is read outside [lo, hi), the source memory the copy was checked
// against (the words there go byte by byte); no byte outside the destination's elements is
// written. Edges (partial tiles) are handled in the same launch. The grid is (tiles along
// l, tiles along a, batches), strided over batches beyond 65535.
#define K (4 / EB)
#define WT_TA (128 / EB)  // tile extent along a: rows of the out tile
#define WT_TR (32 * K)    // tile extent along l: source rows (32 groups of K)
#define FULL 0xffffffffu

struct WTile {
    long long so, d, a0, l0;
    int rows, outs;
};

// Tile (blockIdx.x along l, blockIdx.y along a) of batch `b`.
__device__ __forceinline__ WTile wtile(long long b, const Params& p, int a, int l) {
    long long so, d;
    batch_offsets(p, a, l, b, so, d);
    WTile T;
    T.so = so;
    T.d = d;
    T.a0 = (long long)blockIdx.y * WT_TA;
    T.l0 = (long long)blockIdx.x * WT_TR;
    T.rows = (int)min((long long)WT_TR, p.shape[l] - T.l0);
    T.outs = (int)min((long long)WT_TA, p.shape[a] - T.a0);
    return T;
}

// Word `g` of out row `arow` (32 words a row), swizzled: the eight chunk lanes of a load
// step write to eight different rows, four groups each; a storing warp reads a whole row.
// Both touch 32 different banks.
__device__ __forceinline__ int wt_slot(int arow, int g) {
    return arow * 32 + (g ^ (((arow / (4 * K)) << 2) & 31));
}

// The row's bytes off .. off + 3 that lie in 0 .. n, one by one (zeros elsewhere): out
// of line, as only words at the edges of the source memory take it (inlined into every
// unrolled load, it made a third of the kernel's code and compile time).
__device__ __noinline__ unsigned int wt_load_bytes(const unsigned char* row, int off, int n) {
    unsigned int x = 0;
    for (int b = 0; b < 4; ++b)
        if (off + b >= 0 && off + b < n) x |= (unsigned int)row[off + b] << (8 * b);
    return x;
}

// The aligned word at `w`, whose first byte is byte `off` of a row of `n` bytes starting
// at `row`: whole where it lies inside [lo, hi), else the row's bytes one by one (zeros
// elsewhere). Words that hold none of the row's bytes are not read.
__device__ __forceinline__ unsigned int wt_load(const unsigned char* w, const unsigned char* row, int off, int n,
                                                unsigned long long lo, unsigned long long hi) {
    if (off >= n || off + 4 <= 0) return 0u;
    const unsigned long long at = reinterpret_cast<unsigned long long>(w);
    if (at >= lo && at + 4 <= hi) return __ldg(reinterpret_cast<const unsigned int*>(w));
    return wt_load_bytes(row, off, n);
}

// Stores word `x` at the aligned `w`, whose first byte is byte `off` of a row: whole
// where all four bytes lie in [from, to), the row's bytes this tile writes, else only
// those bytes.
__device__ __forceinline__ void wt_store(unsigned char* w, int off, int from, int to, unsigned int x) {
    if (off >= from && off + 4 <= to) {
        *reinterpret_cast<unsigned int*>(w) = x;
    } else {
#if EB == 2
        // Halfwords: offsets and bounds are even, so a word's part is a whole half.
        if (off >= from && off + 2 <= to) *reinterpret_cast<unsigned short*>(w) = (unsigned short)x;
        if (off + 2 >= from && off + 4 <= to) *reinterpret_cast<unsigned short*>(w + 2) = (unsigned short)(x >> 16);
#else
        for (int b = 0; b < 4; ++b)
            if (off + b >= from && off + b < to) w[b] = (unsigned char)(x >> (8 * b));
#endif
    }
}

// Word q + s of the eight words w (s in 0..3, any thread's own).
__device__ __forceinline__ unsigned int wt_pick(const unsigned int (&w)[8], int q, int s) {
    const unsigned int x01 = s & 1 ? w[q + 1] : w[q], x23 = s & 1 ? w[q + 3] : w[q + 2];
    return s & 2 ? x23 : x01;
}

// Chunk k (words 0..3) and, for k == 7, the ninth chunk (words 4..7) of rows r0 .. r0 +
// K - 1 of the tile (row r at base + r slb, `n` bytes), word by word, inside [lo, hi)
// only; rows at or past `rows` are zeros.
__device__ __forceinline__ void wt_load_checked(unsigned int (&c)[K][8], const unsigned char* base, long long slb, int r0,
                                                int rows, int k, int n, unsigned long long lo, unsigned long long hi) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const int r = r0 + j;
#pragma unroll
        for (int q = 0; q < 8; ++q) c[j][q] = 0u;
        if (r < rows) {
            const unsigned char* s0 = base + r * slb;
            const int sh = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
            const unsigned char* w = s0 - sh + 16 * k;
#pragma unroll
            for (int q = 0; q < 4; ++q) c[j][q] = wt_load(w + 4 * q, s0, 16 * k + 4 * q - sh, n, lo, hi);
            if (k == 7) {
#pragma unroll
                for (int q = 0; q < 4; ++q) c[j][4 + q] = wt_load(w + 16 + 4 * q, s0, 128 + 4 * q - sh, n, lo, hi);
            }
        }
    }
}

// As wt_load_checked, for rows whose covering chunks all lie inside the source memory:
// whole 16-byte chunks.
__device__ __forceinline__ void wt_load_whole(unsigned int (&c)[K][8], const unsigned char* base, long long slb, int r0,
                                              int k) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const uint4* w = reinterpret_cast<const uint4*>(reinterpret_cast<unsigned long long>(base + (r0 + j) * slb) & ~15ull);
        const uint4 x = __ldg(w + k);
        c[j][0] = x.x;
        c[j][1] = x.y;
        c[j][2] = x.z;
        c[j][3] = x.w;
        const uint4 y = k == 7 ? __ldg(w + 8) : make_uint4(0, 0, 0, 0);
        c[j][4] = y.x;
        c[j][5] = y.y;
        c[j][6] = y.z;
        c[j][7] = y.w;
    }
}

// Rows r0 .. r0 + K - 1 realigned: rw[j][q] is bytes 16k + 4q .. + 3 of row r0 + j, from
// this lane's chunk and the next lane's (the last lane's own ninth). All 32 lanes call it.
__device__ __forceinline__ void wt_realign(unsigned int (&c)[K][8], const unsigned char* base, long long slb, int r0, int k,
                                           unsigned int (&rw)[K][4]) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const unsigned int nx = __shfl_down_sync(FULL, c[j][q], 1, 8);
            if (k != 7) c[j][4 + q] = nx;
        }
        const int sh = (int)(reinterpret_cast<unsigned long long>(base + (r0 + j) * slb) & 15);
        const int ws = sh >> 2, bs = 8 * (sh & 3);
        unsigned int al[5];
#pragma unroll
        for (int q = 0; q < 5; ++q) al[q] = wt_pick(c[j], q, ws);
#pragma unroll
        for (int q = 0; q < 4; ++q) rw[j][q] = __funnelshift_r(al[q], al[q + 1], bs);
    }
}

// Word q of K realigned rows transposed: u[jj] holds element K q + jj of the chunk's
// words along a, across the K rows (one word of an out row).
__device__ __forceinline__ void wt_transpose(const unsigned int (&rw)[K][4], int q, unsigned int (&u)[K]) {
#if EB == 1
    const unsigned int t0 = __byte_perm(rw[0][q], rw[1][q], 0x5140), t1 = __byte_perm(rw[2][q], rw[3][q], 0x5140);
    const unsigned int t2 = __byte_perm(rw[0][q], rw[1][q], 0x7362), t3 = __byte_perm(rw[2][q], rw[3][q], 0x7362);
    u[0] = __byte_perm(t0, t1, 0x5410);
    u[1] = __byte_perm(t0, t1, 0x7632);
    u[2] = __byte_perm(t2, t3, 0x5410);
    u[3] = __byte_perm(t2, t3, 0x7632);
#else
    u[0] = __byte_perm(rw[0][q], rw[1][q], 0x5410);
    u[1] = __byte_perm(rw[0][q], rw[1][q], 0x7632);
#endif
}

#ifndef WT_MINB
#define WT_MINB 4
#endif
// Whether rows are stored from aligned word to aligned word with the K rows before the
// tile (measured faster for bytes, slower for the smaller tiles of halfwords).
#ifndef WT_BEFORE
#define WT_BEFORE (EB == 1)
#endif
extern "C" __global__ void __launch_bounds__(256, WT_MINB) word_transpose(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned int tout[WT_TA * 32];
#if WT_BEFORE
    __shared__ unsigned int tex[WT_TA];  // each out row's word of the K rows before the tile
#endif
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int k = lane & 7;                // this thread's chunk of a row
    const int g = warp * 4 + (lane >> 3);  // its group: rows g K .. g K + K - 1
    const long long sl = p.src[l], da = p.dst[a];
    for (long long b = blockIdx.z; b < batches; b += gridDim.z) {
        if (b != blockIdx.z) __syncthreads();  // the previous batch's tile is stored
        const WTile T = wtile(b, p, a, l);
        const int abytes = T.outs * EB;
        const unsigned char* base = src + (T.so + T.l0 * sl + T.a0) * EB;
        const long long slb = sl * EB;
        // Destination rows all 16-byte aligned: stored as chunks. Else as words, each row
        // from 4-byte alignment to 4-byte alignment: a tile writes its row's bytes from the
        // aligned word that holds its first element (the K rows before the tile, `tex`,
        // fill that word's first bytes) up to the next tile's first such word.
        const unsigned long long d0 = reinterpret_cast<unsigned long long>(dst + (T.d + T.a0 * da + T.l0) * EB);
        const unsigned long long dpitch = (unsigned long long)(da * EB);
        const bool chunks = ((d0 | dpitch) & 15) == 0;
        const bool before = WT_BEFORE && T.l0 > 0 && ((d0 | dpitch) & 3) != 0;
        // 1. Load: c[j] holds words 0..3 of chunk k of row g K + j, and words 4..7 the
        // next chunk's (from the next lane, or read by the last lane).
        unsigned int c[K][8];
        // A whole tile whose every covering chunk (the K rows before it included) lies
        // inside [lo, hi) loads whole chunks without checks.
        const unsigned long long first = reinterpret_cast<unsigned long long>(base - (before ? K * slb : 0));
        const unsigned long long last = reinterpret_cast<unsigned long long>(base + (WT_TR - 1) * slb);
        const unsigned long long top = (first < last ? first : last) & ~15ull, bottom = (first < last ? last : first) + 144;
        const bool whole = T.rows == WT_TR && T.outs == WT_TA && top >= lo && bottom <= hi;
        if (whole) {
            wt_load_whole(c, base, slb, g * K, k);
        } else {
            wt_load_checked(c, base, slb, g * K, T.rows, k, abytes, lo, hi);
        }
        unsigned int rw[K][4];
        wt_realign(c, base, slb, g * K, k, rw);
        // 2. Transpose K x K blocks in registers: word q of the chunk holds elements
        // K (4k + q) .. + K - 1 along a, out rows of those elements.
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            unsigned int u[K];
            wt_transpose(rw, q, u);
#pragma unroll
            for (int jj = 0; jj < K; ++jj) tout[wt_slot(K * (4 * k + q) + jj, g)] = u[jj];
        }
#if WT_BEFORE
        if (before && warp == 0) {
            // The K rows before the tile (every lane group of the warp reads them; the
            // first eight lanes keep them).
            if (whole)
                wt_load_whole(c, base, slb, -K, k);
            else
                wt_load_checked(c, base, slb, -K, T.rows, k, abytes, lo, hi);
            wt_realign(c, base, slb, -K, k, rw);
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                unsigned int u[K];
                wt_transpose(rw, q, u);
                if (lane < 8) {
#pragma unroll
                    for (int jj = 0; jj < K; ++jj) tex[K * (4 * k + q) + jj] = u[jj];
                }
            }
        }
#endif
        __syncthreads();
        // 3. Store: out row arow (element T.a0 + arow along a) has T.rows elements in 32
        // words.
        const int lbytes = T.rows * EB;
        if (chunks) {
            // Eight lanes take a row, lane m its words 4m .. 4m + 3: one chunk.
            const int m = lane & 7;
#pragma unroll
            for (int it = 0; it < WT_TA / 32; ++it) {
                const int arow = (it * 8 + warp) * 4 + (lane >> 3);
                const uint4 ov = *reinterpret_cast<const uint4*>(tout + arow * 32 + 4 * (m ^ ((arow / (4 * K)) & 7)));
                if (arow < T.outs) {
                    unsigned char* C = dst + (T.d + (T.a0 + arow) * da + T.l0) * EB + 16 * m;
                    if (16 * m + 16 <= lbytes) {
                        *reinterpret_cast<uint4*>(C) = ov;
                    } else {
                        wt_store(C, 16 * m, 0, lbytes, ov.x);
                        wt_store(C + 4, 16 * m + 4, 0, lbytes, ov.y);
                        wt_store(C + 8, 16 * m + 8, 0, lbytes, ov.z);
                        wt_store(C + 12, 16 * m + 12, 0, lbytes, ov.w);
                    }
                }
            }
        } else {
            // A warp takes a row; lane m stores destination word m: out bytes 4m - dsh ..
            // 4m - dsh + 3, realigned over the previous lane's word (lane 0: `tex`). The
            // row's last tile also stores a 33rd word (without WT_BEFORE every tile does,
            // and its first and 33rd words go byte by byte).
            const bool last = !WT_BEFORE || T.l0 + WT_TR >= p.shape[l];
#pragma unroll 4
            for (int it = 0; it < WT_TA / 8; ++it) {
                const int arow = it * 8 + warp;
                const unsigned int o = tout[wt_slot(arow, lane)];
                unsigned int prev = __shfl_up_sync(FULL, o, 1);
                if (arow < T.outs) {
                    unsigned char* D = dst + (T.d + (T.a0 + arow) * da + T.l0) * EB;
                    const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 3);
                    const int from = (!WT_BEFORE || T.l0 == 0) ? 0 : -dsh, to = last ? lbytes : 128 - dsh;
#if WT_BEFORE
                    if (lane == 0 && dsh != 0 && T.l0 > 0) prev = tex[arow];
#endif
                    unsigned char* w = D - dsh + 4 * lane;
                    const unsigned int y = dsh == 0 ? o : __funnelshift_r(prev, o, 8 * (4 - dsh));
                    wt_store(w, 4 * lane - dsh, from, to, y);
                    if (dsh != 0 && last && lane == 31) wt_store(w + 4, 128 - dsh, from, to, __funnelshift_r(o, 0u, 8 * (4 - dsh)));
                }
            }
        }
    }
}
