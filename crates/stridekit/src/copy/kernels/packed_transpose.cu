// A transpose of 1-, 2- and 4-byte elements that moves words, not elements, whatever
// the alignment of the two sides. Axis `a` is the source's unit-stride axis, `l` the
// destination's; the other axes are batches. Compiled with ELEM, EB (its size: 1, 2 or
// 4), NDIM and PMAX defined before the prelude.
//
// One tile is TL source rows (along l) of TAB bytes (along a):
// 1. load: every row's bytes arrive as the 16-byte aligned chunks that cover them
//    (16-byte loads; a row may start at any byte, its shift within the first chunk is
//    kept), into shared memory;
// 2. transpose: each thread takes K x K elements (K = 4 / EB: one 32-bit word from each
//    of K rows, realigned with a funnel shift), transposes them in registers with
//    `__byte_perm` and writes K words, one per destination row, into the out tile;
// 3. store: every destination row's bytes leave as the 16-byte aligned chunks of the
//    destination (realigned from shared memory with funnel shifts); only a row's first
//    and last partial chunks are written byte by byte.
// Aligned chunks may reach past a row's elements: a chunk is loaded whole only where it
// lies inside [lo, hi), the source memory the copy was checked against; otherwise byte
// by byte. Edges (partial tiles) are handled in the same launch.
#define K (4 / EB)
#define TAB 64                 // source bytes per tile row
#define TA (TAB / EB)          // tile extent along a: rows of the out tile
#define TL 64                  // tile extent along l: rows of the in tile
#define LB (TL * EB)           // bytes per out-tile row
#define PIN 80                 // in-tile row pitch: up to 15 bytes of shift, 64 bytes, a word
#define POUT (LB + 4)          // out-tile row pitch: LB bytes and a word for funnel reads
#define NCH 5                  // 16-byte chunks that can cover 64 bytes at any shift

extern "C" __global__ void __launch_bounds__(256) packed_transpose(
    const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, const Params p,
    int a, int l, long long batches, unsigned long long lo, unsigned long long hi) {
    __shared__ __align__(16) unsigned char tin[TL * PIN];
    __shared__ __align__(16) unsigned char tout[TA * POUT];
    __shared__ int shift[TL];
    const long long na = p.shape[a], nl = p.shape[l], sl = p.src[l], da = p.dst[a];
    const long long ntl = (nl + TL - 1) / TL, nta = (na + TA - 1) / TA;
    const long long total = ntl * nta * batches;
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
        // Tiles along l run fastest: neighbours that share a destination sector are
        // written close together in time, so the L2 merges the sector's halves.
        const long long tl = t % ntl, rest = t / ntl;
        const long long ta = rest % nta, b = rest / nta;
        long long rem = b, so = 0, d = 0;
        for (int k = NDIM - 1; k >= 0; --k) {
            if (k == a || k == l) continue;
            const long long e = p.shape[k];
            const long long j = rem % e;
            rem /= e;
            so += j * p.src[k];
            d += j * p.dst[k];
        }
        const long long a0 = ta * TA, l0 = tl * TL;
        const int rows = (int)min((long long)TL, nl - l0);   // valid in-tile rows
        const int outs = (int)min((long long)TA, na - a0);   // valid out-tile rows
        const int abytes = outs * EB;                        // valid bytes per in-tile row
        // 1. Load.
        for (int i = threadIdx.x; i < TL * NCH; i += blockDim.x) {
            const int r = i / NCH, c = i - r * NCH;
            if (r >= rows) break;
            // Pointer arithmetic from the kernel's arguments keeps the accesses global.
            const unsigned char* s0 = src + (so + (l0 + r) * sl + a0) * EB;
            const int sh = (int)(reinterpret_cast<unsigned long long>(s0) & 15);
            if (c == 0) shift[r] = sh;
            if (c * 16 >= sh + abytes) continue;
            const unsigned char* ca = s0 - sh + 16 * c;
            const unsigned long long cav = reinterpret_cast<unsigned long long>(ca);
            unsigned char* slot = tin + r * PIN + 16 * c;
            if (cav >= lo && cav + 16 <= hi) {
                *reinterpret_cast<uint4*>(slot) = __ldg(reinterpret_cast<const uint4*>(ca));
            } else {
                for (int k = 0; k < 16; ++k) {
                    const int x = 16 * c + k - sh;  // byte of the row
                    if (x >= 0 && x < abytes) slot[k] = s0[x];
                }
            }
        }
        __syncthreads();
        // 2. Transpose K x K blocks in registers.
        for (int q = threadIdx.x; q < (TL / K) * (TAB / 4); q += blockDim.x) {
            const int w = q % (TAB / 4), r0 = (q / (TAB / 4)) * K;
            unsigned int v[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int r = r0 + k;
                const int o = (r < rows ? shift[r] : 0) + 4 * w;
                const unsigned int* row = reinterpret_cast<const unsigned int*>(tin + r * PIN);
                v[k] = __funnelshift_r(row[o >> 2], row[(o >> 2) + 1], 8 * (o & 3));
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
        __syncthreads();
        // 3. Store.
        const int lbytes = rows * EB;
        for (int i = threadIdx.x; i < TA * NCH; i += blockDim.x) {
            const int qr = i / NCH, c = i - qr * NCH;
            if (qr >= outs) break;
            unsigned char* D = dst + (d + (a0 + qr) * da + l0) * EB;
            const int dsh = (int)(reinterpret_cast<unsigned long long>(D) & 15);
            const int p0 = 16 * c - dsh;  // out-row byte of the chunk's first byte
            if (p0 >= lbytes || p0 + 16 <= 0) continue;
            unsigned char* chunk = D + p0;
            const unsigned char* orow = tout + qr * POUT;
            if (p0 >= 0 && p0 + 16 <= lbytes) {
                const unsigned int* row = reinterpret_cast<const unsigned int*>(orow);
                uint4 x;
                unsigned int* xs = reinterpret_cast<unsigned int*>(&x);
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int pp = p0 + 4 * j;
                    xs[j] = __funnelshift_r(row[pp >> 2], row[(pp >> 2) + 1], 8 * (pp & 3));
                }
                *reinterpret_cast<uint4*>(chunk) = x;
            } else {
                for (int k = 0; k < 16; ++k) {
                    const int pp = p0 + k;
                    if (pp >= 0 && pp < lbytes) chunk[k] = orow[pp];
                }
            }
        }
        __syncthreads();
    }
}
