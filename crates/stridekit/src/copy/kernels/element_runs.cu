// The elementwise copy of bytes (and, gathered, halfwords) in runs (`ElementRuns` in the
// layout crate): each thread moves a group of GV consecutive destination bytes of a row,
// so that one index decomposition serves the group; groups start on multiples of GV in
// the destination, so a whole group is one aligned store. Compiled with ELEM (unsigned
// char; unsigned short only with NI), NDIM, PMAX, UNR,
// IDX, FASTDIV (32-bit indices), OFF (the type of element offsets) defined before the
// prelude, and either SS (a row of one axis stepping 1 or -1 in the source) or NI (a row
// of NI axes, `RowAxes`, each byte gathered from where they lead), and GV, the bytes of a
// group (4 or 16; 4 if undefined). `p.shape[NDIM - 1]` counts groups per row (`p.n` groups
// in all); `len` is the row's length. Only a group's bytes inside [0, len) are read or
// written.
#ifndef GV
#define GV 4
#endif
#define GW (GV / 4)  // 4-byte words of a group
#define EB ((int)sizeof(ELEM))
#define GE (GV / EB)  // elements of a group
#define WE (4 / EB)   // elements of a 4-byte word
#ifdef NI
// A row's axes, slowest first: source strides, extents with their fast-division
// constants, and `step[k]`, the source step from one column to the next where axis k
// moves and every faster axis wraps (str[k] - sum over j > k of (ext[j] - 1) * str[j]):
// the difference of two offsets inside the row, so it fits OFF wherever they do.
struct RowAxes { long long str[4]; long long step[4]; int ext[4]; unsigned int mul[4]; unsigned int sh[4]; };
#endif
extern "C" __global__ void __launch_bounds__(256) element_runs(const ELEM* __restrict__ src, ELEM* __restrict__ dst,
                                                              const Params p, const long long len
#ifdef NI
                                                              , const RowAxes r
#endif
                                                              ) {
    const IDX n = (IDX)p.n;
    const IDX chunk = (IDX)blockDim.x * UNR;
    for (IDX b = (IDX)blockIdx.x * chunk; b < n; b += (IDX)gridDim.x * chunk) {
        unsigned int v[UNR][GW];
        OFF at[UNR];
        int lo[UNR], hi[UNR];
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
            const IDX i = b + (IDX)u * blockDim.x + threadIdx.x;
            lo[u] = 0;
            hi[u] = 0;
            at[u] = 0;
#pragma unroll
            for (int w = 0; w < GW; ++w) v[u][w] = 0;
            if (i < n) {
                IDX rem = i;
                OFF so = 0, d = 0, c0 = 0;
#pragma unroll
                for (int k = NDIM - 1; k >= 0; --k) {
                    // i < n, the product of the extents: what is left at the first axis
                    // is its coordinate, no division needed.
                    IDX j = rem;
                    if (k > 0) {
                        const IDX q = div_extent(p, k, rem);
                        j = rem - q * (IDX)p.shape[k];
                        rem = q;
                    }
                    if (k == NDIM - 1) {
                        c0 = (OFF)j * GE;
                    } else {
                        so += (OFF)j * (OFF)p.src[k];
                        d += (OFF)j * (OFF)p.dst[k];
                    }
                }
                c0 -= (OFF)(((unsigned long long)(dst + d) & (GV - 1u)) / EB);
                const int l0 = c0 < 0 ? (int)-c0 : 0;
                const int h0 = len - c0 < GE ? (int)(len - c0) : GE;
                lo[u] = l0;
                hi[u] = h0;
                at[u] = d + c0;
#ifdef NI
                // The group's first column inside the row, over the row's axes (the last
                // fastest); then each further byte one step of that odometer on.
                unsigned int rc = (unsigned int)(c0 + l0);
                int q[NI];
#pragma unroll
                for (int k = NI - 1; k >= 0; --k) {
                    const unsigned int t = __umulhi(rc, r.mul[k]);
                    const unsigned int quo = (t + ((rc - t) >> (r.sh[k] & 0xffu))) >> (r.sh[k] >> 8);
                    q[k] = (int)(rc - quo * (unsigned int)r.ext[k]);
                    rc = quo;
                    so += (OFF)q[k] * (OFF)r.str[k];
                }
#pragma unroll
                for (int e = 0; e < GE; ++e) {
                    if (e >= l0 && e < h0) {
                        v[u][e / WE] |= (unsigned int)src[so] << (8 * EB * (e % WE));
                        // On to the next column, only while it is inside the group and
                        // the row: every offset formed is one the row reads.
                        if (e + 1 < h0) {
                            ++q[NI - 1];
                            OFF step = (OFF)r.step[NI - 1];
#pragma unroll
                            for (int k = NI - 1; k > 0; --k) {
                                if (q[k] == r.ext[k]) {
                                    q[k] = 0;
                                    ++q[k - 1];
                                    step = (OFF)r.step[k - 1];
                                }
                            }
                            so += step;
                        }
                    }
                }
#else
                so += c0 * SS;
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (e >= l0 && e < h0) v[u][0] |= (unsigned int)src[so + e * SS] << (8 * e);
#endif
            }
        }
#pragma unroll
        for (int u = 0; u < UNR; ++u) {
            if (lo[u] == 0 && hi[u] == GE) {
#if GV == 16
                *reinterpret_cast<uint4*>(dst + at[u]) = make_uint4(v[u][0], v[u][1], v[u][2], v[u][3]);
#else
                *reinterpret_cast<unsigned int*>(dst + at[u]) = v[u][0];
#endif
            } else {
                // A group at a row's edge: its whole words as words, the rest element by
                // element.
#pragma unroll
                for (int w = 0; w < GW; ++w) {
                    if (GW > 1 && lo[u] <= WE * w && WE * w + WE <= hi[u]) {
                        *reinterpret_cast<unsigned int*>(dst + at[u] + WE * w) = v[u][w];
                    } else {
#pragma unroll
                        for (int e = WE * w; e < WE * w + WE; ++e)
                            if (e >= lo[u] && e < hi[u]) dst[at[u] + e] = (ELEM)(v[u][w] >> (8 * EB * (e % WE)));
                    }
                }
            }
        }
    }
}
