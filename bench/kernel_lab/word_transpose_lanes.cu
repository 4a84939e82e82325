// A transpose of 1- and 2-byte elements that moves 4-byte words, not elements, whatever
// the alignment of the two sides. Axis `a` is the source's unit-stride axis, `l` the
// destination's; the other axes are batches. Compiled with EB (the element size: 1, 2 or
// 4), NDIM and PMAX defined before the prelude.
//
// One tile is WT_TR source rows (along l) of 128 bytes (along a); a warp reads a row,
// lane k its k-th word:
// 1. load: every row arrives as the aligned words that cover it (lane 31 also reads the
//    33rd), realigned to the row's first byte with a funnel shift over the next lane's
//    word (`__shfl_down_sync`);
// 2. transpose: a thread holds word k of K = 4 / EB rows, transposes that K x K block in
//    registers with `__byte_perm` and writes K words into the out tile, one per
//    destination row, at XOR-swizzled places (no bank conflicts either way);
// 3. store: WT_OW lanes take a destination row's words, realign them to the
//    destination's alignment over the previous lane's word (`__shfl_up_sync`) and store
//    aligned words; only a row's first and last words go byte by byte.
// No word is read outside [lo, hi), the source memory the copy was checked against (the
// words there go byte by byte); no byte outside the destination's elements is written.
// Edges (partial tiles) are handled in the same launch. The grid is (tiles along l, tiles
// along a, batches), strided over batches beyond 65535.
#define K (4 / EB)
#define WT_TA (128 / EB)  // tile extent along a: rows of the out tile
#ifndef WT_TR
#define WT_TR (EB == 1 ? 128 : 64)  // tile extent along l: source rows
#endif
#define WT_OW (WT_TR * EB / 4)  // words per out-tile row: 16 or 32
#define WT_G (WT_TR / K / 8)    // groups of K rows per warp
#define WT_PER (32 / WT_OW)     // out rows per warp step
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

// Word `col` of out row `arow`, swizzled: the loading lane (arow / K) writes its K words
// to K rows, a storing warp reads whole rows; both touch 32 different banks.
__device__ __forceinline__ int wt_slot(int arow, int col) {
    int s = arow * WT_OW + (col ^ ((arow / K) & (WT_OW - 1)));
#if WT_OW == 16
    s += 16 * (arow >> 6);
#endif
    return s;
}

// The aligned word at `w`, whose first byte is byte `off` of a row of `n` bytes starting
// at `row`: whole where it lies inside [lo, hi), else the row's bytes one by one (zeros
// elsewhere). Words that hold none of the row's bytes are not read.
__device__ __forceinline__ unsigned int wt_load(const unsigned char* w, const unsigned char* row, int off, int n,
                                                unsigned long long lo, unsigned long long hi) {
    if (off >= n || off + 4 <= 0) return 0u;
    const unsigned long long at = reinterpret_cast<unsigned long long>(w);
    if (at >= lo && at + 4 <= hi) return __ldg(reinterpret_cast<const unsigned int*>(w));
    unsigned int x = 0;
    for (int b = 0; b < 4; ++b)
        if (off + b >= 0 && off + b < n) x |= (unsigned int)row[off + b] << (8 * b);
    return x;
}

// Stores word `x` at the aligned `w`, whose first byte is byte `off` of a row of `n`
// bytes: whole where all four bytes are the row's, else only the row's bytes.
__device__ __forceinline__ void wt_store(unsigned char* w, int off, int n, unsigned int x) {
    if (off >= 0 && off + 4 <= n) {
        *reinterpret_cast<unsigned int*>(w) = x;
    } else {
        for (int b = 0; b < 4; ++b)
            if (off + b >= 0 && off + b < n) w[b] = (unsigned char)(x >> (8 * b));
    }
}

#ifndef WT_MINB
#define WT_MINB 4
#endif
extern "C" __global__ void __launch_bounds__(256, WT_MINB) word_transpose(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ unsigned int tout[WT_TA * WT_OW + (WT_OW == 16 ? 32 : 0)];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long sl = p.src[l], da = p.dst[a];
    // One tile a block (x along l, y along a); the grid strides over batches along z.
    for (long long b = blockIdx.z; b < batches; b += gridDim.z) {
        if (b != blockIdx.z) __syncthreads();  // the previous batch's tile is stored
        const WTile T = wtile(b, p, a, l);
        const int abytes = T.outs * EB;
        // 1. Load: group gi of this warp is rows (warp + 8 gi) K .. + K - 1, row r at
        // base + r * slb; lane k's word realigned is bytes 4k .. 4k + 3 of the row.
        const unsigned char* base = src + (T.so + T.l0 * sl + T.a0) * EB;
        const long long slb = sl * EB;
        unsigned int v[WT_G * K], x[WT_G * K];
        // A whole tile whose every covering word lies inside [lo, hi) loads without checks.
        const unsigned long long first = reinterpret_cast<unsigned long long>(base);
        const unsigned long long last = first + (unsigned long long)((WT_TR - 1) * slb);
        const unsigned long long top = (first < last ? first : last) & ~3ull, bottom = (first < last ? last : first) + 132;
        if (T.rows == WT_TR && T.outs == WT_TA && top >= lo && bottom <= hi) {
#pragma unroll
            for (int i = 0; i < WT_G * K; ++i) {
                const int r = (warp + 8 * (i / K)) * K + i % K;
                const unsigned char* s0 = base + r * slb;
                const unsigned int* w = reinterpret_cast<const unsigned int*>(
                    reinterpret_cast<unsigned long long>(s0) & ~3ull);
                v[i] = __ldg(w + lane);
                x[i] = lane == 31 ? __ldg(w + 32) : 0u;
            }
        } else {
#pragma unroll
            for (int i = 0; i < WT_G * K; ++i) {
                const int r = (warp + 8 * (i / K)) * K + i % K;
                v[i] = 0u;
                x[i] = 0u;
                if (r < T.rows) {
                    const unsigned char* s0 = base + r * slb;
                    const int sh = (int)(reinterpret_cast<unsigned long long>(s0) & 3);
                    const unsigned char* w = s0 - sh + 4 * lane;
                    v[i] = wt_load(w, s0, 4 * lane - sh, abytes, lo, hi);
                    if (lane == 31) x[i] = wt_load(w + 4, s0, 128 - sh, abytes, lo, hi);
                }
            }
        }
#pragma unroll
        for (int i = 0; i < WT_G * K; ++i) {
            const int r = (warp + 8 * (i / K)) * K + i % K;
            const unsigned int next = __shfl_down_sync(FULL, v[i], 1);
            const int sh = (int)(reinterpret_cast<unsigned long long>(base + r * slb) & 3);
            v[i] = __funnelshift_r(v[i], lane == 31 ? x[i] : next, 8 * sh);
        }
        // 2. Transpose K x K blocks in registers, into the out tile.
#pragma unroll
        for (int gi = 0; gi < WT_G; ++gi) {
            const int g = warp + 8 * gi;
            const unsigned int* w = v + gi * K;
            unsigned int u[K];
#if EB == 1
            const unsigned int t0 = __byte_perm(w[0], w[1], 0x5140), t1 = __byte_perm(w[2], w[3], 0x5140);
            const unsigned int t2 = __byte_perm(w[0], w[1], 0x7362), t3 = __byte_perm(w[2], w[3], 0x7362);
            u[0] = __byte_perm(t0, t1, 0x5410);
            u[1] = __byte_perm(t0, t1, 0x7632);
            u[2] = __byte_perm(t2, t3, 0x5410);
            u[3] = __byte_perm(t2, t3, 0x7632);
#elif EB == 2
            u[0] = __byte_perm(w[0], w[1], 0x5410);
            u[1] = __byte_perm(w[0], w[1], 0x7632);
#else
            u[0] = w[0];
#endif
#pragma unroll
            for (int j = 0; j < K; ++j) tout[wt_slot(K * lane + j, g)] = u[j];
        }
        __syncthreads();
        // 3. Store: out row arow (element T.a0 + arow along a) has T.rows elements.
        const int lbytes = T.rows * EB, m = lane % WT_OW;
#pragma unroll 2
        for (int it = 0; it < WT_TA / (8 * WT_PER); ++it) {
            const int arow = (it * 8 + warp) * WT_PER + lane / WT_OW;
            const unsigned int o = tout[wt_slot(arow, m)];
            const unsigned int prev = __shfl_up_sync(FULL, o, 1, WT_OW);
            if (arow < T.outs) {
                unsigned char* D = dst + (T.d + (T.a0 + arow) * da + T.l0) * EB;
                const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 3);
                unsigned char* w = D - dsh + 4 * m;
                // Destination word m holds out bytes 4m - dsh .. 4m - dsh + 3.
                const unsigned int y = dsh == 0 ? o : __funnelshift_r(prev, o, 8 * (4 - dsh));
                if (lbytes == 4 * WT_OW && (m > 0 || dsh == 0))
                    *reinterpret_cast<unsigned int*>(w) = y;
                else
                    wt_store(w, 4 * m - dsh, lbytes, y);
                if (dsh != 0 && m == WT_OW - 1) wt_store(w + 4, 4 * WT_OW - dsh, lbytes, __funnelshift_r(o, 0u, 8 * (4 - dsh)));
            }
        }
    }
}
