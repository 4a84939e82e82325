// Declarations every copy kernel shares; `Params` mirrors the Rust struct in kernel.rs.
// Compiled with ELEM (the element type), WORD, NDIM and IDX defined before it.
struct __align__(16) b16 { unsigned long long lo, hi; };
// mul/sh: per-axis magic numbers that divide a 32-bit index by the extent with a
// multiply-high and two shifts (sh = sh1 | sh2 << 8); see `FastDiv` in kernel.rs.
struct Params { long long shape[64]; long long src[64]; long long dst[64]; long long n;
                unsigned int mul[64]; unsigned int sh[64]; };
