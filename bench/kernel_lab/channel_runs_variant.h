// One instantiation of the engine's earlier channel kernels (channel_transpose.cu with
// SPLIT 1, channel_interleave.cu with SPLIT 0) for channel_lab.cu: define RK_NAME, ELEM,
// EB, CH, SPLIT first (dense pixels: SLB = CH * EB).
#define RK_CAT2(a, b) a##b
#define RK_CAT(a, b) RK_CAT2(a, b)
#if SPLIT
#define channel_transpose RK_NAME
#define SLB (CH * EB)
namespace RK_CAT(ns_, RK_NAME) {
#include "../../crates/stridekit/src/copy/kernels/channel_transpose.cu"
}
#undef channel_transpose
#undef SLB
#undef INB
#undef PITCHO
#else
#define channel_interleave RK_NAME
namespace RK_CAT(ns_, RK_NAME) {
#include "../../crates/stridekit/src/copy/kernels/channel_interleave.cu"
}
#undef channel_interleave
#undef OUTB
#endif
#undef K
#undef RUN
#undef P
#undef PITCHI
#undef EB
#undef CH
#undef SPLIT
#undef ELEM
#undef RK_NAME
