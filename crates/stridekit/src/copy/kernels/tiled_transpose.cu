// A transpose through shared memory: tiles of 32 x 32 WORDs, read coalesced along the
// source's contiguous axis `a`, written coalesced along the destination's contiguous
// axis `l`; the other axes are batches (blockIdx.z, looping past the grid limit). With
// WORD = ELEM the tile holds elements; with a wider WORD (4 or 8 bytes for 1-, 2- and
// 4-byte elements) each thread moves a word per access. Whole tiles issue all of a
// thread's row loads before storing any, so that enough bytes are in flight.
#define V ((int)(sizeof(WORD) / sizeof(ELEM)))
#define T (32 * V)
union Word { WORD w; ELEM e[sizeof(WORD) / sizeof(ELEM)]; };
extern "C" __global__ void __launch_bounds__(256) tiled_transpose(const ELEM* __restrict__ src, ELEM* __restrict__ dst,
                                                                   const Params p, int a, int l, long long batches) {
    __shared__ ELEM tile[T][T + 1];
    const long long na = p.shape[a], nl = p.shape[l];
    const long long a0 = (long long)blockIdx.y * T, l0 = (long long)blockIdx.x * T;
    const long long sl = p.src[l], da = p.dst[a];
    const int tx = threadIdx.x * V;
    for (long long b = blockIdx.z; b < batches; b += gridDim.z) {
        long long so, d;
        batch_offsets(p, a, l, b, so, d);
        const long long ia = a0 + tx;
        if (a0 + T <= na && l0 + T <= nl) {
            // A whole tile: every row's word loads first (T / 8 in flight per thread).
            WORD buf[T / 8];
#pragma unroll
            for (int r = 0; r < T / 8; ++r)
                buf[r] = *reinterpret_cast<const WORD*>(src + so + (l0 + threadIdx.y + 8 * r) * sl + ia);
#pragma unroll
            for (int r = 0; r < T / 8; ++r) {
                Word u;
                u.w = buf[r];
#pragma unroll
                for (int v = 0; v < V; ++v) tile[threadIdx.y + 8 * r][tx + v] = u.e[v];
            }
        } else {
            for (int i = threadIdx.y; i < T; i += 8) {
                const long long il = l0 + i;
                if (il >= nl) break;
                const ELEM* s = src + so + il * sl + ia;
                if (ia + V <= na) {
                    Word u;
                    u.w = *reinterpret_cast<const WORD*>(s);
#pragma unroll
                    for (int v = 0; v < V; ++v) tile[i][tx + v] = u.e[v];
                } else {
                    for (int v = 0; v < V; ++v) if (ia + v < na) tile[i][tx + v] = s[v];
                }
            }
        }
        __syncthreads();
        const long long jl = l0 + tx;
        for (int i = threadIdx.y; i < T; i += 8) {
            const long long ja = a0 + i;
            if (ja >= na) break;
            ELEM* o = dst + d + ja * da + jl;
            if (jl + V <= nl) {
                Word u;
#pragma unroll
                for (int v = 0; v < V; ++v) u.e[v] = tile[tx + v][i];
                *reinterpret_cast<WORD*>(o) = u.w;
            } else {
                for (int v = 0; v < V; ++v) if (jl + v < nl) o[v] = tile[tx + v][i];
            }
        }
        __syncthreads();
    }
}
