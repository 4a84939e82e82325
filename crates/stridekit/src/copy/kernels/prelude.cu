// Declarations every copy kernel shares; `Params` mirrors the Rust struct in kernel.rs.
// Compiled with ELEM (the element type), WORD, NDIM and IDX defined before it.
struct __align__(16) b16 { unsigned long long lo, hi; };
struct Params { long long shape[64]; long long src[64]; long long dst[64]; long long n; };
