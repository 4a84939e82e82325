// Kernel lab: byte tiles moved in aligned 4-byte words on both sides ("image tiles").
//
// The engine's tile kernel moves a one-element byte tile one byte a thread and access: a
// byte load, a byte scatter into shared memory, a byte and an offset load out of it, a
// byte store (20 L1 operations for every 128 bytes a warp moves; random set cases 106, 63
// and 80 reach 0.3-0.4 of the sector-exact roofline). Here a tile's source runs (the
// maximal runs of consecutive source bytes a tile holds, the same in every tile) are
// copied word for word into a shared-memory image of the source memory (aligned words
// covering each run, the run's phase inside its first word kept), and every aligned word
// of a destination run is gathered byte by byte out of that image through a table keyed
// by destination position, then stored as one word (edge words of a run byte by byte):
// one load, one shared store, four table and four byte loads, one store for every 4
// bytes. A thread's read and write items (run, word) are the same in every tile and sit in
// registers; a tile's phases (its bases modulo 4) are uniform across the block; a tile's
// bases are loaded a tile ahead.
//
// Each case is checked byte for byte against a naive elementwise kernel (both writing
// into the same poisoned destination; every destination byte compared), then timed
// (median of 20, L2 evicted before each run: lab_common.h) and rated on the sector-exact
// roofline, computed here on the host (source sectors read, destination sectors written,
// a partially written one read too, at the same run's memcpy rate).
//   nvcc -O3 -arch=sm_90 -o /tmp/image_lab bench/kernel_lab/image_tile_lab.cu && /tmp/image_lab
// LAB_ONLY=TEXT runs only the cases whose name holds TEXT.
// Cases are random_bench's 106, 63 and 80 (their layouts printed by `random_bench --profile`),
// an axis trimmed to a multiple of its tile extent where the tile splits it.
#include <cstring>
#include <map>
#include "lab_common.h"

#define MAXD 6

struct TileInfo {
    int vol, nread, nwrite, img_bytes, dtab_entries;
};

// Read item: rel (source offset of the word's first run byte from the tile base: the run
// start + 4k) and meta = image word index | (len - 4k + 8) << 16: the word is loaded when it
// holds a byte of the run (4k < phase + len). Write item: rel (destination run start + 4m)
// and meta = (table base + 4m) | (m == 0) << 15 | (len - 4m + 8) << 16.
struct Items {
    int* rel; unsigned* meta;
};

// Writes one destination word of a write item (`a`: the destination of the run's position
// 4m, `meta` as `Items` writes): whole where all four bytes are the run's, else byte by byte
// where they are; each byte gathered from the image `ib` through the table at the tile's
// source phase `sph`.
__device__ __forceinline__ void write_item(unsigned char* a, unsigned meta, const unsigned short* dtab,
                                           const unsigned char* ib, unsigned sph) {
    const int ph = (int)((size_t)a & 3u);
    const int lim = (int)(meta >> 16) - 8;          // len - 4m
    const int first = (int)((meta >> 15) & 1u);
    const int tb = (int)(meta & 0x7fffu) - ph;      // table index of the word's byte 0
    unsigned char* wa = a - ph;
    if (lim + ph > 0) {                                 // the word holds a byte of the run
        if (!(first && ph > 0) && lim >= 4 - ph) {      // all four bytes
            unsigned v = 0;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const unsigned e = dtab[tb + b];
                v |= (unsigned)ib[(e & 0x3fffu) + ((sph + (e >> 14)) & 3u)] << (8 * b);
            }
            *reinterpret_cast<unsigned*>(wa) = v;
        } else {
            for (int b = 0; b < 4; ++b) {
                const int p = b - ph;                   // position - 4m
                if ((!first || p >= 0) && p < lim) {
                    const unsigned e = dtab[tb + b];
                    wa[b] = ib[(e & 0x3fffu) + ((sph + (e >> 14)) & 3u)];
                }
            }
        }
    }
}

template <int UR, int UW, bool BATCH>
__global__ void __launch_bounds__(256, UR + UW > 16 ? 2 : 3) image_tile(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                                    const long long* __restrict__ sbase, const long long* __restrict__ dbase,
                                                    unsigned ntiles, Items ri, int nread, Items wi, int nwrite,
                                                    const unsigned short* __restrict__ dtab_g, int ndtab, int img_words) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned* img = reinterpret_cast<unsigned*>(smem);
    unsigned short* dtab = reinterpret_cast<unsigned short*>(smem + 4 * img_words);
    for (int i = threadIdx.x; i < ndtab; i += blockDim.x) dtab[i] = dtab_g[i];
    int rrel[UR]; unsigned rmeta[UR];
#pragma unroll
    for (int u = 0; u < UR; ++u) {
        const int w = u * blockDim.x + threadIdx.x;
        rrel[u] = w < nread ? ri.rel[w] : 0; rmeta[u] = w < nread ? ri.meta[w] : 0u;  // lim -8: never loads
    }
    // Above 8 write items a thread (tiles of 16 words a thread) the items sit in shared
    // memory after the table, one 8-byte load each, to leave the registers to the loads.
    constexpr bool wshared = UW > 8;
    int2* witems = reinterpret_cast<int2*>(smem + ((4 * img_words + 2 * ndtab + 7) & ~7));
    int wrel[wshared ? 1 : UW]; unsigned wmeta[wshared ? 1 : UW];
#pragma unroll
    for (int u = 0; u < UW; ++u) {
        const int w = u * blockDim.x + threadIdx.x;
        const int r = w < nwrite ? wi.rel[w] : 0;
        const unsigned m = w < nwrite ? wi.meta[w] : 0u;
        if (wshared) witems[w] = make_int2(r, (int)m); else { wrel[u] = r; wmeta[u] = m; }
    }
    __syncthreads();
    unsigned t = blockIdx.x;
    if (t >= ntiles) return;
    unsigned buf[UR];
    unsigned have = 0;
    // A tile's bases are loaded one tile ahead, so that no load of a tile waits on the
    // load of its base.
    auto load = [&](long long sbo) {
        const unsigned char* s = src + sbo;
        have = 0;
#pragma unroll
        for (int u = 0; u < UR; ++u) {
            const unsigned char* a = s + rrel[u];
            const int ph = (int)((size_t)a & 3u);
            const int lim = (int)(rmeta[u] >> 16) - 8;
            if (lim + ph > 0) {
                buf[u] = *reinterpret_cast<const unsigned*>(a - ph);
                have |= 1u << u;
            }
        }
    };
    const long long sb0 = sbase[t];
    load(sb0);
    long long db = dbase[t];
    unsigned sph = (unsigned)(size_t)(src + sb0) & 3u;
    long long psb = t + gridDim.x < ntiles ? sbase[t + gridDim.x] : 0, pdb = t + gridDim.x < ntiles ? dbase[t + gridDim.x] : 0;
    for (;;) {
#pragma unroll
        for (int u = 0; u < UR; ++u)
            if (have & (1u << u)) img[rmeta[u] & 0xffffu] = buf[u];
        __syncthreads();
        const unsigned next = t + gridDim.x;
        unsigned nsph = 0;
        long long ndb = 0, qsb = 0, qdb = 0;
        if (next < ntiles) {
            load(psb);
            nsph = (unsigned)(size_t)(src + psb) & 3u;
            ndb = pdb;
            if (next + gridDim.x < ntiles) { qsb = sbase[next + gridDim.x]; qdb = dbase[next + gridDim.x]; }
        }
        const unsigned char* ib = reinterpret_cast<const unsigned char*>(img);
        unsigned char* o = dst + db;
        if (BATCH) {
            // Branch-free: every table load of the thread's words first (an index outside
            // the word's run reads entry 0), then every image load, then the stores; the
            // compiler can keep all of them in flight at once.
            unsigned short ent[UW][4];
            unsigned char* wa[UW];
            unsigned ok[UW];
#pragma unroll
            for (int u = 0; u < UW; ++u) {
                int wr; unsigned wm;
                if (wshared) { const int2 it = witems[u * blockDim.x + threadIdx.x]; wr = it.x; wm = (unsigned)it.y; }
                else { wr = wrel[u]; wm = wmeta[u]; }
                unsigned char* a = o + wr;
                const int ph = (int)((size_t)a & 3u);
                const int lim = (int)(wm >> 16) - 8;
                const int first = (int)((wm >> 15) & 1u);
                const int tb = (int)(wm & 0x7fffu) - ph;
                wa[u] = a - ph;
                unsigned m = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int p = b - ph;
                    const bool in = (!first || p >= 0) && p < lim;
                    m |= in ? 1u << b : 0u;
                    ent[u][b] = dtab[in ? tb + b : 0];
                }
                ok[u] = m;
            }
            unsigned v[UW];
#pragma unroll
            for (int u = 0; u < UW; ++u) {
                v[u] = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const unsigned e = ent[u][b];
                    v[u] |= (unsigned)ib[(e & 0x3fffu) + ((sph + (e >> 14)) & 3u)] << (8 * b);
                }
            }
#pragma unroll
            for (int u = 0; u < UW; ++u) {
                if (ok[u] == 0xfu) *reinterpret_cast<unsigned*>(wa[u]) = v[u];
                else if (ok[u]) {
#pragma unroll
                    for (int b = 0; b < 4; ++b)
                        if (ok[u] & (1u << b)) wa[u][b] = (unsigned char)(v[u] >> (8 * b));
                }
            }
        } else {
#pragma unroll
        for (int u = 0; u < UW; ++u) {
            int wr; unsigned wm;
            if (wshared) { const int2 it = witems[u * blockDim.x + threadIdx.x]; wr = it.x; wm = (unsigned)it.y; }
            else { wr = wrel[u]; wm = wmeta[u]; }
            write_item(o + wr, wm, dtab, ib, sph);
        }
        }
        __syncthreads();
        if (next >= ntiles) break;
        t = next;
        db = ndb;
        sph = nsph;
        psb = qsb;
        pdb = qdb;
    }
}


// The same tiles with the source side through cp.async (no registers hold a load): S image
// stages a block, S - 1 tiles' loads in flight while one tile is written out, one barrier a
// tile. Write items in registers (UW <= 8).
template <int UR, int UW, int S>
__global__ void __launch_bounds__(256, 3) image_tile_async(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                                          const long long* __restrict__ sbase, const long long* __restrict__ dbase,
                                                          unsigned ntiles, Items ri, int nread, Items wi, int nwrite,
                                                          const unsigned short* __restrict__ dtab_g, int ndtab, int img_words) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned short* dtab = reinterpret_cast<unsigned short*>(smem);
    unsigned* imgs = reinterpret_cast<unsigned*>(smem + ((2 * ndtab + 15) & ~15));
    for (int i = threadIdx.x; i < ndtab; i += blockDim.x) dtab[i] = dtab_g[i];
    int rrel[UR]; unsigned rmeta[UR];
#pragma unroll
    for (int u = 0; u < UR; ++u) {
        const int w = u * blockDim.x + threadIdx.x;
        rrel[u] = w < nread ? ri.rel[w] : 0; rmeta[u] = w < nread ? ri.meta[w] : 0u;
    }
    int wrel[UW]; unsigned wmeta[UW];
#pragma unroll
    for (int u = 0; u < UW; ++u) {
        const int w = u * blockDim.x + threadIdx.x;
        wrel[u] = w < nwrite ? wi.rel[w] : 0; wmeta[u] = w < nwrite ? wi.meta[w] : 0u;
    }
    auto issue = [&](unsigned tile, int stage) {
        if (tile < ntiles) {
            const unsigned char* s = src + sbase[tile];
            unsigned* img = imgs + stage * img_words;
#pragma unroll
            for (int u = 0; u < UR; ++u) {
                const unsigned char* a = s + rrel[u];
                const int ph = (int)((size_t)a & 3u);
                const int lim = (int)(rmeta[u] >> 16) - 8;
                if (lim + ph > 0) asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"((unsigned)__cvta_generic_to_shared(img + (rmeta[u] & 0xffffu))), "l"(a - ph) : "memory");
            }
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    };
#pragma unroll
    for (int k = 0; k < S - 1; ++k) issue(blockIdx.x + k * gridDim.x, k);
    int stage = 0;
    for (unsigned t = blockIdx.x; t < ntiles; t += gridDim.x) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 2) : "memory");
        __syncthreads();
        issue(t + (S - 1) * gridDim.x, (stage + S - 1) % S);
        const unsigned sph = (unsigned)(size_t)(src + sbase[t]) & 3u;
        const unsigned char* ib = reinterpret_cast<const unsigned char*>(imgs + stage * img_words);
        unsigned char* o = dst + dbase[t];
#pragma unroll
        for (int u = 0; u < UW; ++u) {
            write_item(o + wrel[u], wmeta[u], dtab, ib, sph);
        }
        stage = (stage + 1) % S;
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

template <int UR, int UW, int S>
static void launch_async(int grid, size_t shm, const unsigned char* s, unsigned char* d, const long long* sb, const long long* db,
                         unsigned nt, Items ri, int nr, Items wi, int nw, const unsigned short* dt, int ndt, int iw, cudaStream_t st) {
    CK(cudaFuncSetAttribute(image_tile_async<UR, UW, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
    image_tile_async<UR, UW, S><<<grid, 256, shm, st>>>(s, d, sb, db, nt, ri, nr, wi, nw, dt, ndt, iw);
}


// The lean image tile. The source side loads the two aligned words around each word of a
// run and funnel-shifts them, so a run's bytes sit in the image from its own word boundary
// (image byte = 4 * the run's first word + index in the run) whatever the tile's phase: the
// table holds image bytes with no phase term. The destination side splits each run's
// words into interior ones (whole at every phase: 1 <= m <= (len - 4) / 4), written in a
// branch-free loop, and the few edge words (at most three a run), written byte by byte
// where they fall inside the run. Items and their counts are a thread's own, the same in
// every tile; offsets 32-bit from the tile's bases, which are loaded a tile ahead.
struct LeanItems {
    int* rrel; unsigned* rword;        // read: run start + 4k; image word
    int* irel; unsigned* ibase;        // interior write: run start + 4m; table index of position 4m
    int* erel; unsigned* emeta;        // edge write: as `Items` writes
};

template <int UR, int UI, int UE, int MINB>
__global__ void __launch_bounds__(256, MINB) image_tile_lean(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                                         const long long* __restrict__ sbase, const long long* __restrict__ dbase,
                                                         unsigned ntiles, LeanItems it, int nread, int ninner, int nedge,
                                                         const unsigned short* __restrict__ dtab_g, int ndtab, int img_words) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned* img = reinterpret_cast<unsigned*>(smem);
    const unsigned char* ib = smem;
    unsigned short* dtab = reinterpret_cast<unsigned short*>(smem + 4 * img_words);
    for (int i = threadIdx.x; i < ndtab; i += blockDim.x) dtab[i] = dtab_g[i];
    const int tid = threadIdx.x;
    const int mine_r = nread > tid ? (nread - 1 - tid) / 256 + 1 : 0;
    const int mine_i = ninner > tid ? (ninner - 1 - tid) / 256 + 1 : 0;
    const int mine_e = nedge > tid ? (nedge - 1 - tid) / 256 + 1 : 0;
    int rrel[UR]; unsigned rword[UR];
#pragma unroll
    for (int u = 0; u < UR; ++u) { const int w = u * 256 + tid; rrel[u] = u < mine_r ? it.rrel[w] : 0; rword[u] = u < mine_r ? it.rword[w] : 0u; }
    int irel[UI]; unsigned ibase[UI];
#pragma unroll
    for (int u = 0; u < UI; ++u) { const int w = u * 256 + tid; irel[u] = u < mine_i ? it.irel[w] : 0; ibase[u] = u < mine_i ? it.ibase[w] : 0u; }
    int erel[UE]; unsigned emeta[UE];
#pragma unroll
    for (int u = 0; u < UE; ++u) { const int w = u * 256 + tid; erel[u] = u < mine_e ? it.erel[w] : 0; emeta[u] = u < mine_e ? it.emeta[w] : 0u; }
    __syncthreads();
    unsigned t = blockIdx.x;
    if (t >= ntiles) return;
    unsigned lo[UR], hi[UR];
    auto load = [&](const unsigned char* s) {
#pragma unroll
        for (int u = 0; u < UR; ++u) {
            if (u < mine_r) {
                const unsigned* a = reinterpret_cast<const unsigned*>(
                    reinterpret_cast<size_t>(s + rrel[u]) & ~(size_t)3);
                lo[u] = a[0];
                hi[u] = a[1];
            }
        }
    };
    const unsigned char* ls = src + sbase[t];  // the tile whose words are in flight
    load(ls);
    long long db = dbase[t];
    long long psb = t + gridDim.x < ntiles ? sbase[t + gridDim.x] : 0, pdb = t + gridDim.x < ntiles ? dbase[t + gridDim.x] : 0;
    for (;;) {
#pragma unroll
        for (int u = 0; u < UR; ++u) {
            if (u < mine_r) {
                const unsigned ph = (unsigned)(size_t)(ls + rrel[u]) & 3u;
                img[rword[u]] = __funnelshift_r(lo[u], hi[u], 8 * ph);
            }
        }
        __syncthreads();
        const unsigned next = t + gridDim.x;
        long long ndb = 0, qsb = 0, qdb = 0;
        if (next < ntiles) {
            ls = src + psb;
            load(ls);
            ndb = pdb;
            if (next + gridDim.x < ntiles) { qsb = sbase[next + gridDim.x]; qdb = dbase[next + gridDim.x]; }
        }
        unsigned char* o = dst + db;
#pragma unroll
        for (int u = 0; u < UI; ++u) {
            if (u < mine_i) {
                unsigned char* a = o + irel[u];
                const int ph = (int)((size_t)a & 3u);
                const int tb = (int)ibase[u] - ph;
                const unsigned v = (unsigned)ib[dtab[tb]] | (unsigned)ib[dtab[tb + 1]] << 8 | (unsigned)ib[dtab[tb + 2]] << 16 |
                                   (unsigned)ib[dtab[tb + 3]] << 24;
                *reinterpret_cast<unsigned*>(a - ph) = v;
            }
        }
#pragma unroll
        for (int u = 0; u < UE; ++u) {
            if (u < mine_e) {
                unsigned char* a = o + erel[u];
                const int ph = (int)((size_t)a & 3u);
                const int lim = (int)(emeta[u] >> 16) - 8;
                const int first = (int)((emeta[u] >> 15) & 1u);
                const int tb = (int)(emeta[u] & 0x7fffu) - ph;
                unsigned char* wa = a - ph;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int p = b - ph;
                    if ((!first || p >= 0) && p < lim) wa[b] = ib[dtab[tb + b]];
                }
            }
        }
        __syncthreads();
        if (next >= ntiles) break;
        t = next;
        db = ndb;
        psb = qsb;
        pdb = qdb;
    }
}

template <int UR, int UI, int UE, int MINB>
static void launch_lean(int grid, size_t shm, const unsigned char* s, unsigned char* d, const long long* sb, const long long* db,
                        unsigned nt, LeanItems it, int nr, int ni, int ne, const unsigned short* dt, int ndt, int iw, cudaStream_t st) {
    CK(cudaFuncSetAttribute(image_tile_lean<UR, UI, UE, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
    image_tile_lean<UR, UI, UE, MINB><<<grid, 256, shm, st>>>(s, d, sb, db, nt, it, nr, ni, ne, dt, ndt, iw);
}
typedef void (*LaunchL)(int, size_t, const unsigned char*, unsigned char*, const long long*, const long long*, unsigned, LeanItems, int,
                        int, int, const unsigned short*, int, int, cudaStream_t);
// MINB: the blocks an SM the compiler keeps registers for (3: at most 80; 4: at most 64).
template <int UR, int UI, int MINB>
static LaunchL pick_lean_e(int ue) {
    if (ue <= 1) return launch_lean<UR, UI, 1, MINB>;
    if (ue <= 2) return launch_lean<UR, UI, 2, MINB>;
    if (ue <= 4) return launch_lean<UR, UI, 4, MINB>;
    if (ue <= 16 && UI == 4) return launch_lean<UR, UI, 16, MINB>;
    return nullptr;
}
template <int UR, int MINB>
static LaunchL pick_lean_i(int ui, int ue) {
    if (ui <= 4) return pick_lean_e<UR, 4, MINB>(ue);
    if (ui <= 8) return pick_lean_e<UR, 8, MINB>(ue);
    return nullptr;
}
template <int MINB>
static LaunchL pick_lean(int ur, int ui, int ue) {
    if (ur <= 4) return pick_lean_i<4, MINB>(ui, ue);
    if (ur <= 8) return pick_lean_i<8, MINB>(ui, ue);
    return nullptr;
}

struct Layout {
    int nd;
    long long shape[MAXD], src[MAXD], dst[MAXD], soff, doff;
};

__global__ void naive(const unsigned char* src, unsigned char* dst, Layout L, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        long long r = i, s = L.soff, d = L.doff;
        for (int k = L.nd - 1; k >= 0; --k) {
            const long long c = r % L.shape[k];
            r /= L.shape[k];
            s += c * L.src[k];
            d += c * L.dst[k];
        }
        dst[d] = src[s];
    }
}

struct Case {
    const char* name;
    Layout L;
    int tile[MAXD];  // tile extent per axis (1: a grid axis)
};

static long long mod4(long long x) { return ((x % 4) + 4) % 4; }

// Sector-exact roofline bytes of the layout (every element enumerated on the host): each
// source sector read once, each destination sector written, a partial one read too.
static double roofline_bytes(const Layout& L, long long n, long long shi, long long dhi) {
    std::vector<unsigned char> ssec((size_t)(shi >> 5) + 1, 0), dsec((size_t)(dhi >> 5) + 1, 0);
    std::vector<long long> idx(L.nd, 0);
    for (long long i = 0; i < n; ++i) {
        long long s = L.soff, d = L.doff;
        for (int k = 0; k < L.nd; ++k) { s += idx[k] * L.src[k]; d += idx[k] * L.dst[k]; }
        ssec[s >> 5] = 1;
        dsec[d >> 5] += 1;
        for (int k = L.nd - 1; k >= 0; --k) { if (++idx[k] < L.shape[k]) break; idx[k] = 0; }
    }
    double sectors = 0;
    for (unsigned char x : ssec) sectors += x;
    for (unsigned char x : dsec) sectors += x == 0 ? 0 : x == 32 ? 1 : 2;
    return 32.0 * sectors;
}

template <int UR, int UW, bool BATCH>
static void launch(int grid, size_t shm, const unsigned char* s, unsigned char* d, const long long* sb, const long long* db,
                   unsigned nt, Items ri, int nr, Items wi, int nw, const unsigned short* dt, int ndt, int iw, cudaStream_t st) {
    CK(cudaFuncSetAttribute(image_tile<UR, UW, BATCH>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
    image_tile<UR, UW, BATCH><<<grid, 256, shm, st>>>(s, d, sb, db, nt, ri, nr, wi, nw, dt, ndt, iw);
}

typedef void (*Launch)(int, size_t, const unsigned char*, unsigned char*, const long long*, const long long*, unsigned, Items, int,
                       Items, int, const unsigned short*, int, int, cudaStream_t);

template <int UR, bool B>
static Launch pick_w(int uw) {
    if (uw <= 2) return launch<UR, 2, B>;
    if (uw <= 4) return launch<UR, 4, B>;
    if (uw <= 6) return launch<UR, 6, B>;
    if (uw <= 8) return launch<UR, 8, B>;
    if (uw <= 12) return launch<UR, 12, B>;
    if (uw <= 16) return launch<UR, 16, B>;
    return nullptr;
}
template <bool B>
static Launch pick(int ur, int uw) {
    if (ur <= 2) return pick_w<2, B>(uw);
    if (ur <= 4) return pick_w<4, B>(uw);
    if (ur <= 6) return pick_w<6, B>(uw);
    if (ur <= 8) return pick_w<8, B>(uw);
    if (ur <= 12) return pick_w<12, B>(uw);
    if (ur <= 16) return pick_w<16, B>(uw);
    return nullptr;
}

typedef void (*LaunchA)(int, size_t, const unsigned char*, unsigned char*, const long long*, const long long*, unsigned, Items, int,
                        Items, int, const unsigned short*, int, int, cudaStream_t);
template <int S>
static LaunchA pick_async(int ur, int uw) {
    if (ur <= 4 && uw <= 4) return launch_async<4, 4, S>;
    if (ur <= 6 && uw <= 6) return launch_async<6, 6, S>;
    if (ur <= 8 && uw <= 8) return launch_async<8, 8, S>;
    return nullptr;
}

int main() {
    Lab lab;
    std::vector<Case> cases = {
        // Controls: a contiguous copy through the same kernel (one source and one destination
        // run a tile), in tiles of 3969 and 15876 bytes.
        {"control: contiguous 84.5 MB in tiles of 3969 B", {1, {84488103}, {1}, {1}, 0, 0}, {3969}},
        {"control: contiguous 84.5 MB in tiles of 15876 B", {1, {84488103}, {1}, {1}, 0, 0}, {15876}},
        {"106 (49,3,21287,3,9) 4-D byte permute", {5, {49, 3, 21287, 3, 9}, {27, 1, 4131, -1377, 3}, {1, -147, 3969, 49, 441}, 2754, 294},
         {49, 3, 1, 3, 9}},
        {"63 (3,45,712052) reversed source, pitched rows", {3, {3, 45, 712052}, {1424106, -4272318, -1}, {1, 3, -138}, 188694043, 98263038},
         {3, 45, 28}},
        {"63 tile 3x15x84", {3, {3, 45, 712052}, {1424106, -4272318, -1}, {1, 3, -138}, 188694043, 98263038}, {3, 15, 84}},
        {"80 (27,829,2,15,3,61) 6-D", {6, {27, 829, 2, 15, 3, 61}, {1658, 2, 1, 48082, -43995030, 721230},
                                         {-1, -168, 139272, 278544, 28, 4178160}, 87990060, 139130},
         {27, 24, 2, 1, 3, 1}},
        {"106 tile of 4 grid units (16 words a thread)", {5, {49, 3, 21287, 3, 9}, {27, 1, 4131, -1377, 3}, {1, -147, 3969, 49, 441}, 2754, 294},
         {49, 3, 4, 3, 9}},
        {"63 tile 3x45x112 (16 words a thread)", {3, {3, 45, 712052}, {1424106, -4272318, -1}, {1, 3, -138}, 188694043, 98263038}, {3, 45, 112}},
        {"80 tile 27x80x2x3 (16 words a thread)", {6, {27, 829, 2, 15, 3, 61}, {1658, 2, 1, 48082, -43995030, 721230},
                             {-1, -168, 139272, 278544, 28, 4178160}, 87990060, 139130},
         {27, 80, 2, 1, 3, 1}},
        // Untuned byte cases of the random set's low end: 88 (every other destination byte),
        // 101 (three-byte source runs).
        {"88 (3,1,3,47,315311) every other byte", {5, {3, 1, 3, 47, 315311}, {3, -3, -1, 5675598, -9}, {-2, -1, -564, 6, 1692}, 2837792, 1132},
         {3, 1, 3, 47, 8}},
        {"101 (3,2527718,3,3) three-byte source runs", {4, {3, 2527718, 3, 3}, {90997848, 6, -30332616, -1}, {-1, 3, 45498924, 7583154}, 60665234, 2},
         {3, 100, 3, 3}},
        {"80 tile 27x48x2", {6, {27, 829, 2, 15, 3, 61}, {1658, 2, 1, 48082, -43995030, 721230},
                             {-1, -168, 139272, 278544, 28, 4178160}, 87990060, 139130},
         {27, 48, 2, 1, 1, 1}},
    };
    // LAB_ONLY=TEXT runs only the cases whose name holds TEXT (for ncu:
    //   LAB_ONLY=106 ncu --kernel-name regex:image_tile_lean --launch-skip 3 --launch-count 1 /tmp/image_lab).
    const char* only = getenv("LAB_ONLY");
    for (auto& c : cases) {
        if (only && !strstr(c.name, only)) continue;
        Layout L = c.L;
        // Trim split axes to a multiple of the tile extent.
        for (int k = 0; k < L.nd; ++k) L.shape[k] -= L.shape[k] % c.tile[k];
        long long n = 1;
        for (int k = 0; k < L.nd; ++k) n *= L.shape[k];
        // Memory each side needs (element offsets from 0).
        long long slo = L.soff, shi = L.soff, dlo = L.doff, dhi = L.doff;
        for (int k = 0; k < L.nd; ++k) {
            const long long es = (L.shape[k] - 1) * L.src[k], ed = (L.shape[k] - 1) * L.dst[k];
            (es < 0 ? slo : shi) += es;
            (ed < 0 ? dlo : dhi) += ed;
        }
        if (slo < 0 || dlo < 0) { printf("%s: negative offsets\n", c.name); continue; }
        const size_t sbytes = (size_t)shi + 8, dbytes = (size_t)dhi + 8;
        // The tile: its elements' source and destination offsets from the tile base.
        int vol = 1;
        for (int k = 0; k < L.nd; ++k) vol *= c.tile[k];
        std::vector<long long> es(vol), ed(vol);
        {
            std::vector<int> idx(L.nd, 0);
            for (int i = 0; i < vol; ++i) {
                long long s = 0, d = 0;
                for (int k = 0; k < L.nd; ++k) { s += idx[k] * L.src[k]; d += idx[k] * L.dst[k]; }
                es[i] = s; ed[i] = d;
                for (int k = L.nd - 1; k >= 0; --k) { if (++idx[k] < c.tile[k]) break; idx[k] = 0; }
            }
        }
        // Source runs (sorted by source offset) and each element's run and index.
        std::vector<int> sorder(vol);
        for (int i = 0; i < vol; ++i) sorder[i] = i;
        std::sort(sorder.begin(), sorder.end(), [&](int a, int b) { return es[a] < es[b]; });
        std::vector<int> erun(vol), eidx(vol);
        std::vector<long long> rstart; std::vector<int> rlen, rword;
        int words = 0;
        for (int q = 0; q < vol; ++q) {
            const int e = sorder[q];
            if (q == 0 || es[e] != es[sorder[q - 1]] + 1) { rstart.push_back(es[e]); rlen.push_back(0); }
            erun[e] = (int)rstart.size() - 1; eidx[e] = rlen.back()++;
        }
        std::vector<int> r_rel; std::vector<unsigned> r_meta;
        for (size_t r = 0; r < rstart.size(); ++r) {
            const int mw = (rlen[r] + 6) / 4;
            rword.push_back(words);
            for (int k = 0; k < mw; ++k) { r_rel.push_back((int)rstart[r] + 4 * k); r_meta.push_back((unsigned)(words + k) | ((unsigned)(rlen[r] - 4 * k + 8) << 16)); }
            words += mw;
        }
        // Destination runs, and the table by destination position.
        std::vector<int> dorder(vol);
        for (int i = 0; i < vol; ++i) dorder[i] = i;
        std::sort(dorder.begin(), dorder.end(), [&](int a, int b) { return ed[a] < ed[b]; });
        std::vector<unsigned short> dtab(vol);
        std::vector<int> w_rel; std::vector<unsigned> w_meta;
        std::vector<long long> qstart; std::vector<int> qlen, qbase;
        for (int q = 0; q < vol; ++q) {
            const int e = dorder[q];
            if (q == 0 || ed[e] != ed[dorder[q - 1]] + 1) { qstart.push_back(ed[e]); qlen.push_back(0); qbase.push_back(q); }
            qlen.back()++;
            const int r = erun[e];
            const int g0 = 4 * rword[r] + eidx[e];
            if (g0 >= (1 << 14)) { printf("%s: image too big\n", c.name); return 1; }
            dtab[q] = (unsigned short)(g0 | (mod4(rstart[r]) << 14));
        }
        for (size_t q = 0; q < qstart.size(); ++q) {
            const int mw = (qlen[q] + 6) / 4;
            for (int m = 0; m < mw; ++m) { w_rel.push_back((int)qstart[q] + 4 * m); w_meta.push_back((unsigned)(qbase[q] + 4 * m) | (m == 0 ? 0x8000u : 0u) | ((unsigned)(qlen[q] - 4 * m + 8) << 16)); }
        }
        const int nread = (int)r_rel.size(), nwrite = (int)w_rel.size();
        const int ur = (nread + 255) / 256, uw = (nwrite + 255) / 256;
        Launch fns[2] = {pick<false>(ur, uw), pick<true>(ur, uw)};
        // Tile bases.
        std::vector<long long> sb, db;
        {
            std::vector<long long> g(L.nd, 0);
            for (;;) {
                long long s = L.soff, d = L.doff;
                for (int k = 0; k < L.nd; ++k) { s += g[k] * L.src[k]; d += g[k] * L.dst[k]; }
                sb.push_back(s); db.push_back(d);
                int k = L.nd - 1;
                for (; k >= 0; --k) { g[k] += c.tile[k]; if (g[k] < L.shape[k]) break; g[k] = 0; }
                if (k < 0) break;
            }
        }
        const unsigned ntiles = (unsigned)sb.size();
        printf("\n%s: %lld elements, tile %d (%zu source runs, %zu destination runs), %u tiles, read items %d (%d a thread), "
               "write items %d (%d a thread), image %d B\n",
               c.name, n, vol, rstart.size(), qstart.size(), ntiles, nread, ur, nwrite, uw, 4 * words);
        if (!fns[0]) { printf("  too many items a thread\n"); continue; }
        unsigned char *s, *d0, *d1;
        CK(cudaMalloc(&s, sbytes)); CK(cudaMalloc(&d0, dbytes)); CK(cudaMalloc(&d1, dbytes));
        fill_random<<<4096, 256>>>(s, sbytes, 0x106);
        fill_random<<<4096, 256>>>(d0, dbytes, 0xdead);
        fill_random<<<4096, 256>>>(d1, dbytes, 0xdead);
        long long *gsb, *gdb; unsigned short* gdt; Items ri, wi;
        CK(cudaMalloc(&gsb, 8 * ntiles)); CK(cudaMalloc(&gdb, 8 * ntiles)); CK(cudaMalloc(&gdt, 2 * vol));
        CK(cudaMalloc(&ri.rel, 4 * nread)); CK(cudaMalloc(&ri.meta, 4 * nread));
        CK(cudaMalloc(&wi.rel, 4 * nwrite)); CK(cudaMalloc(&wi.meta, 4 * nwrite));
        CK(cudaMemcpy(gsb, sb.data(), 8 * ntiles, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(gdb, db.data(), 8 * ntiles, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(gdt, dtab.data(), 2 * vol, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(ri.rel, r_rel.data(), 4 * nread, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(ri.meta, r_meta.data(), 4 * nread, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(wi.rel, w_rel.data(), 4 * nwrite, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(wi.meta, w_meta.data(), 4 * nwrite, cudaMemcpyHostToDevice));
        const size_t shm = ((4 * (size_t)words + 2 * (size_t)vol + 7) & ~(size_t)7) + (uw > 8 ? 8 * (size_t)16 * 256 : 0);
        const double roof = roofline_bytes(L, n, shi, dhi);
        const double roof_ms = roof / lab.mem_gbs / 1e6;
        naive<<<4096, 256, 0, lab.st>>>(s, d0, L, n);
        CK(cudaGetLastError());
        for (int bat = 0; bat < 2; ++bat)
        for (int per_sm : {2, 3, 4}) {
            Launch fn = fns[bat];
            const int grid = (int)std::min<long long>(ntiles, (long long)per_sm * lab.prop.multiProcessorCount);
            fill_random<<<4096, 256, 0, lab.st>>>(d1, dbytes, 0xdead);
            fn(grid, shm, s, d1, gsb, gdb, ntiles, ri, nread, wi, nwrite, gdt, vol, words, lab.st);
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(lab.st));
            const unsigned long long bad = lab.differing(d0, d1, dbytes);
            const double ms = lab.median_ms([&] { fn(grid, shm, s, d1, gsb, gdb, ntiles, ri, nread, wi, nwrite, gdt, vol, words, lab.st); });
            printf("  image tiles%s, %d blocks an SM (shared %zu B): %.4f ms, %.3f of the sector roofline (%.1f MB), %llu bad bytes\n",
                   bat ? " (batched writes)" : "", per_sm, shm, ms, roof_ms / ms, roof / 1e6, bad);
        }
        {
            // The lean image tile: its own image (each run from its word boundary), table and items.
            std::vector<int> lw(rstart.size());
            int lwords = 0;
            for (size_t r = 0; r < rstart.size(); ++r) { lw[r] = lwords; lwords += (rlen[r] + 3) / 4; }
            std::vector<int> l_rrel, l_irel, l_erel; std::vector<unsigned> l_rword, l_ibase, l_emeta;
            for (size_t r = 0; r < rstart.size(); ++r)
                for (int k = 0; k < (rlen[r] + 3) / 4; ++k) { l_rrel.push_back((int)rstart[r] + 4 * k); l_rword.push_back((unsigned)(lw[r] + k)); }
            std::vector<unsigned short> ltab(vol);
            for (int q = 0; q < vol; ++q) {
                const int e = dorder[q], r = erun[e];
                ltab[q] = (unsigned short)(4 * lw[r] + eidx[e]);
            }
            for (size_t q = 0; q < qstart.size(); ++q) {
                const int L = qlen[q], inner_hi = (L - 4) / 4, last = (L + 2) / 4;
                for (int m = 0; m <= last; ++m) {
                    if (m >= 1 && m <= inner_hi) { l_irel.push_back((int)qstart[q] + 4 * m); l_ibase.push_back((unsigned)(qbase[q] + 4 * m)); }
                    else { l_erel.push_back((int)qstart[q] + 4 * m); l_emeta.push_back((unsigned)(qbase[q] + 4 * m) | (m == 0 ? 0x8000u : 0u) | ((unsigned)(L - 4 * m + 8) << 16)); }
                }
            }
            const int lnr = (int)l_rrel.size(), lni = (int)l_irel.size(), lne = (int)l_erel.size();
            LaunchL fls[2] = {pick_lean<3>((lnr + 255) / 256, (lni + 255) / 256, (lne + 255) / 256),
                              pick_lean<4>((lnr + 255) / 256, (lni + 255) / 256, (lne + 255) / 256)};
            LaunchL fl = fls[0];
            printf("  lean: read items %d, interior words %d, edge words %d, image %d B\n", lnr, lni, lne, 4 * lwords);
            if (fl && 4 * lwords + 8 <= 65536) {
                LeanItems li;
                auto up_i = [&](int** p, const std::vector<int>& v) { CK(cudaMalloc(p, 4 * v.size() + 4)); CK(cudaMemcpy(*p, v.data(), 4 * v.size(), cudaMemcpyHostToDevice)); };
                auto up_u = [&](unsigned** p, const std::vector<unsigned>& v) { CK(cudaMalloc(p, 4 * v.size() + 4)); CK(cudaMemcpy(*p, v.data(), 4 * v.size(), cudaMemcpyHostToDevice)); };
                up_i(&li.rrel, l_rrel); up_u(&li.rword, l_rword); up_i(&li.irel, l_irel); up_u(&li.ibase, l_ibase); up_i(&li.erel, l_erel); up_u(&li.emeta, l_emeta);
                unsigned short* ltg;
                CK(cudaMalloc(&ltg, 2 * vol));
                CK(cudaMemcpy(ltg, ltab.data(), 2 * vol, cudaMemcpyHostToDevice));
                const size_t lshm = 4 * (size_t)lwords + 8 + 2 * (size_t)vol;
                for (int per_sm : {3, 4}) {
                    fl = fls[per_sm - 3];  // registers for that many blocks an SM
                    const int grid = (int)std::min<long long>(ntiles, (long long)per_sm * lab.prop.multiProcessorCount);
                    fill_random<<<4096, 256, 0, lab.st>>>(d1, dbytes, 0xdead);
                    fl(grid, lshm, s, d1, gsb, gdb, ntiles, li, lnr, lni, lne, ltg, vol, lwords + 2, lab.st);
                    CK(cudaGetLastError());
                    CK(cudaStreamSynchronize(lab.st));
                    const unsigned long long bad = lab.differing(d0, d1, dbytes);
                    const double ms = lab.median_ms([&] { fl(grid, lshm, s, d1, gsb, gdb, ntiles, li, lnr, lni, lne, ltg, vol, lwords + 2, lab.st); });
                    printf("  lean image tiles, %d blocks an SM (shared %zu B): %.4f ms, %.3f of the sector roofline, %llu bad bytes\n", per_sm,
                           lshm, ms, roof_ms / ms, bad);
                }
                CK(cudaFree(li.rrel)); CK(cudaFree(li.rword)); CK(cudaFree(li.irel)); CK(cudaFree(li.ibase)); CK(cudaFree(li.erel)); CK(cudaFree(li.emeta)); CK(cudaFree(ltg));
            } else {
                printf("  lean: too many items a thread or too big an image\n");
            }
        }
        for (int S : {3, 5}) {
            LaunchA fa = S == 3 ? pick_async<3>(ur, uw) : pick_async<5>(ur, uw);
            if (!fa) break;
            const size_t ashm = ((2 * (size_t)vol + 15) & ~(size_t)15) + (size_t)S * 4 * words;
            for (int per_sm : {3, 4}) {
                const int grid = (int)std::min<long long>(ntiles, (long long)per_sm * lab.prop.multiProcessorCount);
                fill_random<<<4096, 256, 0, lab.st>>>(d1, dbytes, 0xdead);
                fa(grid, ashm, s, d1, gsb, gdb, ntiles, ri, nread, wi, nwrite, gdt, vol, words, lab.st);
                CK(cudaGetLastError());
                CK(cudaStreamSynchronize(lab.st));
                const unsigned long long bad = lab.differing(d0, d1, dbytes);
                const double ms = lab.median_ms([&] { fa(grid, ashm, s, d1, gsb, gdb, ntiles, ri, nread, wi, nwrite, gdt, vol, words, lab.st); });
                printf("  image tiles through cp.async, %d stages, %d blocks an SM (shared %zu B): %.4f ms, %.3f of the sector roofline, %llu bad bytes\n",
                       S, per_sm, ashm, ms, roof_ms / ms, bad);
            }
        }
        {
            // The same loads and stores with no permutation: destination position q takes the
            // q-th element in source order (its bytes are not the copy's). What the access
            // pattern alone allows, against the permuted gather above.
            std::vector<unsigned short> idtab(vol);
            for (int q = 0; q < vol; ++q) {
                const int e = sorder[q], r = erun[e];
                idtab[q] = (unsigned short)((4 * rword[r] + eidx[e]) | (mod4(rstart[r]) << 14));
            }
            CK(cudaMemcpy(gdt, idtab.data(), 2 * vol, cudaMemcpyHostToDevice));
            const int grid = (int)std::min<long long>(ntiles, 3LL * lab.prop.multiProcessorCount);
            const double ims = lab.median_ms([&] { fns[0](grid, shm, s, d1, gsb, gdb, ntiles, ri, nread, wi, nwrite, gdt, vol, words, lab.st); });
            printf("  identity gather (no permutation), 3 blocks an SM: %.4f ms, %.3f of the sector roofline\n", ims, roof_ms / ims);
        }
        const double nms = lab.median_ms([&] { naive<<<4096, 256, 0, lab.st>>>(s, d0, L, n); });
        printf("  naive elementwise: %.4f ms, %.3f of the sector roofline\n", nms, roof_ms / nms);
        CK(cudaFree(s)); CK(cudaFree(d0)); CK(cudaFree(d1)); CK(cudaFree(gsb)); CK(cudaFree(gdb)); CK(cudaFree(gdt));
        CK(cudaFree(ri.rel)); CK(cudaFree(ri.meta)); CK(cudaFree(wi.rel)); CK(cudaFree(wi.meta));
    }
    return 0;
}
