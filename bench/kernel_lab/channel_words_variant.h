// One instantiation of the engine's channel_words.cu for channel_lab.cu: define CW_NAME
// (the kernel's name), ELEM, EB, CH, SPLIT (and optionally CW_THREADS, CW_STAGE) first.
#define CW_CAT2(a, b) a##b
#define CW_CAT(a, b) CW_CAT2(a, b)
#define channel_words CW_NAME
namespace CW_CAT(ns_, CW_NAME) {
#include "../../crates/stridekit/src/copy/kernels/channel_words.cu"
}
#undef channel_words
#undef G
#undef CW_THREADS
#undef CW_STAGE
#undef CW_SWZ
#undef EB
#undef CH
#undef SPLIT
#undef SL
#undef ELEM
#undef CW_NAME
