// Tiles over several axes staged through shared memory (`TilePlan` in the layout crate).
// Compiled with ELEM, EB (its bytes), RWORD/RW (read word type, elements per read word),
// WWORD/WW (same for writes) and UNR (read words a thread keeps in flight) defined before
// the prelude; `TileParams` and `tile_base` come from tile_params.cu.
//
// Each block first builds its tables in shared memory: for every read word its source
// offset within a tile, for every element (in source order) its padded slot, for every
// written word its destination offset. Then it loops over tiles: reads in source order
// (coalesced along the source's fast axes; a thread's words of a tile all in flight at
// once), scatters into the slots, and writes in destination order (coalesced along the
// destination's) while the next tile's reads are in flight; the loop is compiled for 1, 2,
// 4 and UNR read words a thread and a launch runs the smallest that holds its tile's
// (`tile_loop`), so no load or scatter slot goes to a word a thread does not have (on the
// H200 case 87, bytes read in 16-byte words, 1.36x). A thread's read words are the
// same ones in every tile: with words of one element it keeps their offsets and slots in
// registers (a table read and its address arithmetic less per element and tile; 1.02-1.26x
// on the H100 on 57 of the random set's 97 tiled cases, none slower). With one-element
// reads of 1 or 2 bytes (LEAN) it also issues them and their stores into shared memory
// without a predicate each, and its offsets are unsigned, counted from a tile's lowest
// source and destination element: one 32-bit register an offset, two instructions an
// address (about 9 instructions an element less; on the H200 1.02-1.24x on 17 of the
// random set's 30 such cases, 0.92-0.95x on 3, which three blocks an SM for bytes rather
// than the four that fit (`tiled.rs`) turned into 1.08-1.10x. The same code for wider
// elements left more blocks on an SM and ran 2-3% slower: they keep the signed offsets
// and predicates).
union RUnion { RWORD w; ELEM e[RW]; };
// Shared-memory slot of destination-order element j (`TilePlan::slot`): slot_pad elements
// (one written word, at least 4 bytes) of padding after every 2^slot_shift, the group
// chosen per tile against bank conflicts of the scatter; a written word's elements stay
// together and aligned to the word.
#define SLOT(j) ((j) + p.slot_pad * ((j) >> p.slot_shift))
union WUnion { WWORD w; ELEM e[WW]; };
#if RW == 1 && EB <= 2
#define LEAN 1
// Offsets from a tile's lowest element (sbase on the source side; dlow below).
typedef unsigned int Off;
constexpr bool lean = true;
#else
typedef int Off;
constexpr bool lean = false;
#endif
// A thread's read words of one tile, all issued before any is used.
template <int U>
__device__ __forceinline__ void load_tile(RWORD (&buf)[U], const ELEM* __restrict__ s, const Off* soff, int nr) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int w = u * blockDim.x + threadIdx.x;
        if (w < nr) buf[u] = *reinterpret_cast<const RWORD*>(s + soff[w]);
    }
}
// Words of one element: a thread's read offsets and shared-memory slots are the same in
// every tile, so it keeps them in registers (RW1REG; 3 blocks an SM for the registers).
#if RW == 1
#define RW1REG 1
#define TILE_MINB 3
#else
#define TILE_MINB 4
#endif
// The tile loop of a block whose threads hold at most U read words of a tile (U <= UNR).
// Wider than one-element byte and halfword reads, the kernel picks the smallest of 1, 2,
// 4 or UNR (8 for these: `TilePlan::loads_per_thread`) that holds its tile's reads: a
// thread then issues no load and scatter slots (each with its predicate and address
// arithmetic) for words it does not have; a 4-byte tile of 2048 elements in 16-byte words
// has 2 a thread, not 8.
template <int U>
__device__ __forceinline__ void tile_loop(const ELEM* __restrict__ src, ELEM* __restrict__ dst, const TileParams& p,
                                          ELEM* data, const unsigned short* slot, const Off* soff, const Off* doff,
                                          int dlow, int sbase, int nr, int nw) {
    // Pipelined: the next tile's loads are in flight while this tile is written out.
    // Each thread holds all of its read words of a tile (the planner keeps
    // vol / RW <= UNR * 256, and the kernel picks U >= vol / RW / 256).
    unsigned int t = blockIdx.x;
    RWORD buf[U];
    long long sb, db;
    tile_base(p, t, sb, db);
#ifdef RW1REG
    Off myoff[U];
    unsigned int myslot[(U + 1) / 2];
#ifdef LEAN
    // A thread with fewer than U elements repeats its first one (the same load, the
    // same value into the same slot): its loads and stores need no predicate each.
    const bool any = (int)threadIdx.x < nr;
    const unsigned int fill_off = any ? soff[threadIdx.x] : 0u, fill_slot = any ? slot[threadIdx.x] : 0u;
#else
    const Off fill_off = 0;
    const unsigned int fill_slot = 0u;
#endif
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int w = u * blockDim.x + threadIdx.x;
        myoff[u] = w < nr ? soff[w] : fill_off;
        const unsigned int sl = w < nr ? slot[w] : fill_slot;
        if (u % 2 == 0) myslot[u / 2] = sl; else myslot[u / 2] |= sl << 16;
    }
#endif
#ifdef LEAN
#define LOAD_TILE(base) if (any) { const ELEM* __restrict__ b_ = (base); _Pragma("unroll") \
        for (int u = 0; u < U; ++u) buf[u] = *reinterpret_cast<const RWORD*>(b_ + myoff[u]); }
#elif defined(RW1REG)
    const int mine = nr > (int)threadIdx.x ? (nr - 1 - (int)threadIdx.x) / (int)blockDim.x + 1 : 0;
#define LOAD_TILE(base) _Pragma("unroll") for (int u = 0; u < U; ++u) \
        if (u < mine) buf[u] = *reinterpret_cast<const RWORD*>((base) + myoff[u]);
#else
#define LOAD_TILE(base) load_tile<U>(buf, (base), soff, nr)
#endif
    LOAD_TILE(src + sb + sbase);
    for (;;) {
#ifdef LEAN
        if (any) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                RUnion x;
                x.w = buf[u];
                data[(myslot[u / 2] >> (16 * (u % 2))) & 0xffffu] = x.e[0];
            }
        }
#elif defined(RW1REG)
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (u < mine) {
                RUnion x;
                x.w = buf[u];
                data[(myslot[u / 2] >> (16 * (u % 2))) & 0xffffu] = x.e[0];
            }
        }
#else
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int w = u * blockDim.x + threadIdx.x;
            if (w < nr) {
                RUnion x;
                x.w = buf[u];
#if RW % 8 == 0
                // Eight 16-bit slots per 16-byte shared-memory load.
                const uint4* q = reinterpret_cast<const uint4*>(slot + w * RW);
#pragma unroll
                for (int h = 0; h < RW / 8; ++h) {
                    const uint4 s8 = q[h];
                    const unsigned int part[4] = {s8.x, s8.y, s8.z, s8.w};
#pragma unroll
                    for (int k = 0; k < 8; ++k)
                        data[(part[k / 2] >> (16 * (k % 2))) & 0xffffu] = x.e[h * 8 + k];
                }
#else
#pragma unroll
                for (int v = 0; v < RW; ++v) data[slot[w * RW + v]] = x.e[v];
#endif
            }
        }
#endif
        __syncthreads();
        // Below 2^31 tiles (`MAX_TILES` in params.rs), so the sum never wraps.
        const unsigned int next = t + gridDim.x;
        long long nsb = 0, ndb = 0;
        if (next < p.ntiles) {
            tile_base(p, next, nsb, ndb);
            LOAD_TILE(src + nsb + sbase);
        }
        ELEM* o = dst + db + dlow;
#pragma unroll 4
        for (int w = threadIdx.x; w < nw; w += blockDim.x) {
            WUnion x;
            if (WW > 1 && sizeof(WWORD) >= 4) {
                // A word's elements sit together, aligned to the word (the padding is one
                // word): one shared-memory load.
                x.w = *reinterpret_cast<const WWORD*>(data + SLOT(w * WW));
            } else {
#pragma unroll
                for (int v = 0; v < WW; ++v) {
                    const int j = w * WW + v;
                    x.e[v] = data[SLOT(j)];
                }
            }
            *reinterpret_cast<WWORD*>(o + doff[w]) = x.w;
        }
        __syncthreads();
        if (next >= p.ntiles) break;
        t = next;
        sb = nsb;
        db = ndb;
    }
}
extern "C" __global__ void __launch_bounds__(256, TILE_MINB) tile_copy(const ELEM* __restrict__ src, ELEM* __restrict__ dst,
                                                             const TileParams p) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int vol = p.vol, nr = vol / RW, nw = vol / WW;
    ELEM* data = reinterpret_cast<ELEM*>(smem);
    unsigned short* slot = reinterpret_cast<unsigned short*>(smem + p.data_bytes);
    Off* soff = reinterpret_cast<Off*>(smem + p.data_bytes + p.pos_bytes);
    Off* doff = soff + nr;
    // With LEAN, written offsets count from the lowest destination element: the
    // destination's backward axes at their far end.
    int dlow = 0;
#ifdef LEAN
    for (int k = 0; k < p.nt; ++k)
        if (p.dstr[k] < 0) dlow += (p.ext[k] - 1) * p.dstr[k];
#endif
    // Read offsets count from the lowest source element (sbase) with LEAN.
    const int sbase = lean ? p.sbase : 0;
    for (int i = threadIdx.x; i < vol; i += blockDim.x) {
        unsigned int rem = i;
        // Source order walks memory upwards: backwards axes from their far end (their
        // strides and weights come negated, the far end in sbase and jbase).
        int so = lean ? 0 : p.sbase, j = p.jbase;
        for (int q = 0; q < p.nt; ++q) {
            const int k = p.sorder[q];
            const unsigned int hi = __umulhi(rem, p.tmul[k]);
            const unsigned int quo = (hi + ((rem - hi) >> (p.tsh[k] & 0xffu))) >> (p.tsh[k] >> 8);
            const int c = (int)(rem - quo * (unsigned int)p.ext[k]);
            rem = quo;
            so += c * p.sstr[k];
            j += c * p.wgt[k];
        }
        slot[i] = (unsigned short)SLOT(j);
        if (i % RW == 0) soff[i / RW] = (Off)so;
        if (i % WW == 0) {
            unsigned int r = i;
            int d = 0;
            for (int k = 0; k < p.nt; ++k) {
                const unsigned int hi = __umulhi(r, p.tmul[k]);
                const unsigned int quo = (hi + ((r - hi) >> (p.tsh[k] & 0xffu))) >> (p.tsh[k] >> 8);
                d += (int)(r - quo * (unsigned int)p.ext[k]) * p.dstr[k];
                r = quo;
            }
            doff[i / WW] = (Off)(d - dlow);
        }
    }
    __syncthreads();
    if (blockIdx.x >= p.ntiles) return;
#if defined(LEAN) || EB >= 8
    // One-element byte and halfword reads: no predicates to save, and the registers
    // of the one loop are what these tiles were tuned at. Elements of 8 and 16 bytes:
    // few words a tile, and their registers spill with more loops beside the one.
    tile_loop<UNR>(src, dst, p, data, slot, soff, doff, dlow, sbase, nr, nw);
#else
    // Read words a thread holds of a tile: the loop's depth (a block-wide choice).
    const int per = (nr + (int)blockDim.x - 1) / (int)blockDim.x;
    if (per <= 1) tile_loop<1>(src, dst, p, data, slot, soff, doff, dlow, sbase, nr, nw);
    else if (per <= 2) tile_loop<2>(src, dst, p, data, slot, soff, doff, dlow, sbase, nr, nw);
    else if (per <= 4) tile_loop<4>(src, dst, p, data, slot, soff, doff, dlow, sbase, nr, nw);
    else tile_loop<UNR>(src, dst, p, data, slot, soff, doff, dlow, sbase, nr, nw);
#endif
}
