// Written by channel_lab_variants.py: the kernel instantiations of channel_lab.cu.
#define CW_NAME cw_e_1_1_2
#define ELEM unsigned char
#define EB 1
#define CH 2
#define SPLIT 1
#include "channel_words_variant.h"

#define CW_NAME cw_e_1_1_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 1
#include "channel_words_variant.h"

#define CW_NAME cw_e_1_1_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 1
#include "channel_words_variant.h"

#define CW_NAME cw_e_1_2_2
#define ELEM unsigned short
#define EB 2
#define CH 2
#define SPLIT 1
#include "channel_words_variant.h"

#define CW_NAME cw_e_1_2_3
#define ELEM unsigned short
#define EB 2
#define CH 3
#define SPLIT 1
#include "channel_words_variant.h"

#define CW_NAME cw_e_1_2_4
#define ELEM unsigned short
#define EB 2
#define CH 4
#define SPLIT 1
#include "channel_words_variant.h"

#define CW_NAME cw_e_0_1_2
#define ELEM unsigned char
#define EB 1
#define CH 2
#define SPLIT 0
#include "channel_words_variant.h"

#define CW_NAME cw_e_0_1_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 0
#include "channel_words_variant.h"

#define CW_NAME cw_e_0_1_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 0
#include "channel_words_variant.h"

#define CW_NAME cw_e_0_2_2
#define ELEM unsigned short
#define EB 2
#define CH 2
#define SPLIT 0
#include "channel_words_variant.h"

#define CW_NAME cw_e_0_2_3
#define ELEM unsigned short
#define EB 2
#define CH 3
#define SPLIT 0
#include "channel_words_variant.h"

#define CW_NAME cw_e_0_2_4
#define ELEM unsigned short
#define EB 2
#define CH 4
#define SPLIT 0
#include "channel_words_variant.h"

#define CW_NAME cw_d_1_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 1
#define CW_STAGE 0
#include "channel_words_variant.h"

#define CW_NAME cw_t_1_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 1
#define CW_THREADS 128
#include "channel_words_variant.h"

#define CW_NAME cw_d_1_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 1
#define CW_STAGE 0
#include "channel_words_variant.h"

#define CW_NAME cw_t_1_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 1
#define CW_THREADS 128
#include "channel_words_variant.h"

#define CW_NAME cw_d_0_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 0
#define CW_STAGE 0
#include "channel_words_variant.h"

#define CW_NAME cw_t_0_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 0
#define CW_THREADS 128
#include "channel_words_variant.h"

#define CW_NAME cw_d_0_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 0
#define CW_STAGE 0
#include "channel_words_variant.h"

#define CW_NAME cw_t_0_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 0
#define CW_THREADS 128
#include "channel_words_variant.h"

#define RK_NAME rk_1_1_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 1
#include "channel_runs_variant.h"

#define RK_NAME rk_1_1_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 1
#include "channel_runs_variant.h"

#define RK_NAME rk_1_2_3
#define ELEM unsigned short
#define EB 2
#define CH 3
#define SPLIT 1
#include "channel_runs_variant.h"

#define RK_NAME rk_0_1_3
#define ELEM unsigned char
#define EB 1
#define CH 3
#define SPLIT 0
#include "channel_runs_variant.h"

#define RK_NAME rk_0_1_4
#define ELEM unsigned char
#define EB 1
#define CH 4
#define SPLIT 0
#include "channel_runs_variant.h"

#define RK_NAME rk_0_2_3
#define ELEM unsigned short
#define EB 2
#define CH 3
#define SPLIT 0
#include "channel_runs_variant.h"

static const Variant variants[] = {
    {"engine: staged, 256", 1, 2, 1, 256, 0, ns_cw_e_1_1_2::cw_e_1_1_2},
    {"engine: staged, 256", 1, 3, 1, 256, 0, ns_cw_e_1_1_3::cw_e_1_1_3},
    {"engine: staged, 256", 1, 4, 1, 256, 0, ns_cw_e_1_1_4::cw_e_1_1_4},
    {"engine: staged, 256", 2, 2, 1, 256, 0, ns_cw_e_1_2_2::cw_e_1_2_2},
    {"engine: staged, 256", 2, 3, 1, 256, 0, ns_cw_e_1_2_3::cw_e_1_2_3},
    {"engine: staged, 256", 2, 4, 1, 256, 0, ns_cw_e_1_2_4::cw_e_1_2_4},
    {"engine: staged, 256", 1, 2, 0, 256, 0, ns_cw_e_0_1_2::cw_e_0_1_2},
    {"engine: staged, 256", 1, 3, 0, 256, 0, ns_cw_e_0_1_3::cw_e_0_1_3},
    {"engine: staged, 256", 1, 4, 0, 256, 0, ns_cw_e_0_1_4::cw_e_0_1_4},
    {"engine: staged, 256", 2, 2, 0, 256, 0, ns_cw_e_0_2_2::cw_e_0_2_2},
    {"engine: staged, 256", 2, 3, 0, 256, 0, ns_cw_e_0_2_3::cw_e_0_2_3},
    {"engine: staged, 256", 2, 4, 0, 256, 0, ns_cw_e_0_2_4::cw_e_0_2_4},
    {"direct, 256", 1, 3, 1, 256, 0, ns_cw_d_1_3::cw_d_1_3},
    {"staged, 128", 1, 3, 1, 128, 0, ns_cw_t_1_3::cw_t_1_3},
    {"direct, 256", 1, 4, 1, 256, 0, ns_cw_d_1_4::cw_d_1_4},
    {"staged, 128", 1, 4, 1, 128, 0, ns_cw_t_1_4::cw_t_1_4},
    {"direct, 256", 1, 3, 0, 256, 0, ns_cw_d_0_3::cw_d_0_3},
    {"staged, 128", 1, 3, 0, 128, 0, ns_cw_t_0_3::cw_t_0_3},
    {"direct, 256", 1, 4, 0, 256, 0, ns_cw_d_0_4::cw_d_0_4},
    {"staged, 128", 1, 4, 0, 128, 0, ns_cw_t_0_4::cw_t_0_4},
    {"earlier tiles (channel_runs)", 1, 3, 1, 256, 1, ns_rk_1_1_3::rk_1_1_3},
    {"earlier tiles (channel_runs)", 1, 4, 1, 256, 1, ns_rk_1_1_4::rk_1_1_4},
    {"earlier tiles (channel_runs)", 2, 3, 1, 256, 1, ns_rk_1_2_3::rk_1_2_3},
    {"earlier tiles (channel_runs)", 1, 3, 0, 256, 1, ns_rk_0_1_3::rk_0_1_3},
    {"earlier tiles (channel_runs)", 1, 4, 0, 256, 1, ns_rk_0_1_4::rk_0_1_4},
    {"earlier tiles (channel_runs)", 2, 3, 0, 256, 1, ns_rk_0_2_3::rk_0_2_3},
};
