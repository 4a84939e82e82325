// Written by small_lab_variants.py: the kernel instantiations of small_lab.cu.
#define NA 2
#define NL 2
#define small_words sw_e_2_2
namespace ns_sw_e_2_2 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 2
#define NL 256
#define small_words sw_e_2_256
namespace ns_sw_e_2_256 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 3
#define NL 5
#define small_words sw_e_3_5
namespace ns_sw_e_3_5 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 3
#define NL 100
#define small_words sw_e_3_100
namespace ns_sw_e_3_100 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 3
#define NL 100
#define SW_WARPS 4
#define small_words sw_w4_3_100
namespace ns_sw_w4_3_100 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 3
#define NL 100
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_3_100
namespace ns_sm_3_100 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 4
#define NL 64
#define small_words sw_e_4_64
namespace ns_sw_e_4_64 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 4
#define NL 64
#define SW_WARPS 4
#define small_words sw_w4_4_64
namespace ns_sw_w4_4_64 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 4
#define NL 64
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_4_64
namespace ns_sm_4_64 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 5
#define NL 100
#define small_words sw_e_5_100
namespace ns_sw_e_5_100 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 8
#define NL 32
#define small_words sw_e_8_32
namespace ns_sw_e_8_32 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 8
#define NL 32
#define SW_WARPS 4
#define small_words sw_w4_8_32
namespace ns_sw_w4_8_32 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 8
#define NL 32
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_8_32
namespace ns_sm_8_32 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 16
#define NL 16
#define small_words sw_e_16_16
namespace ns_sw_e_16_16 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 16
#define NL 16
#define SW_WARPS 4
#define small_words sw_w4_16_16
namespace ns_sw_w4_16_16 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 16
#define NL 16
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_16_16
namespace ns_sm_16_16 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 16
#define NL 32
#define small_words sw_e_16_32
namespace ns_sw_e_16_32 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 16
#define NL 32
#define SW_WARPS 4
#define small_words sw_w4_16_32
namespace ns_sw_w4_16_32 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 16
#define NL 32
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_16_32
namespace ns_sm_16_32 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 17
#define NL 13
#define small_words sw_e_17_13
namespace ns_sw_e_17_13 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 24
#define NL 20
#define small_words sw_e_24_20
namespace ns_sw_e_24_20 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 24
#define NL 20
#define SW_WARPS 4
#define small_words sw_w4_24_20
namespace ns_sw_w4_24_20 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 24
#define NL 20
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_24_20
namespace ns_sm_24_20 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 31
#define NL 16
#define small_words sw_e_31_16
namespace ns_sw_e_31_16 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 32
#define NL 8
#define small_words sw_e_32_8
namespace ns_sw_e_32_8 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 32
#define NL 8
#define SW_WARPS 4
#define small_words sw_w4_32_8
namespace ns_sw_w4_32_8 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 32
#define NL 8
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_32_8
namespace ns_sm_32_8 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 64
#define NL 4
#define small_words sw_e_64_4
namespace ns_sw_e_64_4 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 64
#define NL 4
#define SW_WARPS 4
#define small_words sw_w4_64_4
namespace ns_sw_w4_64_4 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

#define NA 64
#define NL 4
#define EB 4
#define ELEM unsigned int
#define small_matrices sm_64_4
namespace ns_sm_64_4 {
#include "../../crates/stridekit/src/copy/kernels/small_matrices.cu"
}
#undef small_matrices
#undef NA
#undef NL
#undef EB
#undef ELEM
#undef K
#undef MAT
#undef NB
#undef BYTES

#define NA 256
#define NL 2
#define small_words sw_e_256_2
namespace ns_sw_e_256_2 {
#include "../../crates/stridekit/src/copy/kernels/small_words.cu"
}
#undef small_words
#undef NA
#undef NL
#undef MAT
#undef PA
#undef WM
#undef RUNW
#undef SW
#undef SW_WARPS

static const Variant variants[] = {
    {"engine: small_words, 8 warps", 2, 2, 256, 0, ns_sw_e_2_2::sw_e_2_2},
    {"engine: small_words, 8 warps", 2, 256, 256, 0, ns_sw_e_2_256::sw_e_2_256},
    {"engine: small_words, 8 warps", 3, 5, 256, 0, ns_sw_e_3_5::sw_e_3_5},
    {"engine: small_words, 8 warps", 3, 100, 256, 0, ns_sw_e_3_100::sw_e_3_100},
    {"small_words, 4 warps", 3, 100, 128, 0, ns_sw_w4_3_100::sw_w4_3_100},
    {"small_matrices (8 KiB tiles, EB 4)", 3, 100, 256, 1, ns_sm_3_100::sm_3_100},
    {"engine: small_words, 8 warps", 4, 64, 256, 0, ns_sw_e_4_64::sw_e_4_64},
    {"small_words, 4 warps", 4, 64, 128, 0, ns_sw_w4_4_64::sw_w4_4_64},
    {"small_matrices (8 KiB tiles, EB 4)", 4, 64, 256, 1, ns_sm_4_64::sm_4_64},
    {"engine: small_words, 8 warps", 5, 100, 256, 0, ns_sw_e_5_100::sw_e_5_100},
    {"engine: small_words, 8 warps", 8, 32, 256, 0, ns_sw_e_8_32::sw_e_8_32},
    {"small_words, 4 warps", 8, 32, 128, 0, ns_sw_w4_8_32::sw_w4_8_32},
    {"small_matrices (8 KiB tiles, EB 4)", 8, 32, 256, 1, ns_sm_8_32::sm_8_32},
    {"engine: small_words, 8 warps", 16, 16, 256, 0, ns_sw_e_16_16::sw_e_16_16},
    {"small_words, 4 warps", 16, 16, 128, 0, ns_sw_w4_16_16::sw_w4_16_16},
    {"small_matrices (8 KiB tiles, EB 4)", 16, 16, 256, 1, ns_sm_16_16::sm_16_16},
    {"engine: small_words, 8 warps", 16, 32, 256, 0, ns_sw_e_16_32::sw_e_16_32},
    {"small_words, 4 warps", 16, 32, 128, 0, ns_sw_w4_16_32::sw_w4_16_32},
    {"small_matrices (8 KiB tiles, EB 4)", 16, 32, 256, 1, ns_sm_16_32::sm_16_32},
    {"engine: small_words, 8 warps", 17, 13, 256, 0, ns_sw_e_17_13::sw_e_17_13},
    {"engine: small_words, 8 warps", 24, 20, 256, 0, ns_sw_e_24_20::sw_e_24_20},
    {"small_words, 4 warps", 24, 20, 128, 0, ns_sw_w4_24_20::sw_w4_24_20},
    {"small_matrices (8 KiB tiles, EB 4)", 24, 20, 256, 1, ns_sm_24_20::sm_24_20},
    {"engine: small_words, 8 warps", 31, 16, 256, 0, ns_sw_e_31_16::sw_e_31_16},
    {"engine: small_words, 8 warps", 32, 8, 256, 0, ns_sw_e_32_8::sw_e_32_8},
    {"small_words, 4 warps", 32, 8, 128, 0, ns_sw_w4_32_8::sw_w4_32_8},
    {"small_matrices (8 KiB tiles, EB 4)", 32, 8, 256, 1, ns_sm_32_8::sm_32_8},
    {"engine: small_words, 8 warps", 64, 4, 256, 0, ns_sw_e_64_4::sw_e_64_4},
    {"small_words, 4 warps", 64, 4, 128, 0, ns_sw_w4_64_4::sw_w4_64_4},
    {"small_matrices (8 KiB tiles, EB 4)", 64, 4, 256, 1, ns_sm_64_4::sm_64_4},
    {"engine: small_words, 8 warps", 256, 2, 256, 0, ns_sw_e_256_2::sw_e_256_2},
};
