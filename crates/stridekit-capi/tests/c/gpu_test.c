/* GPU test of the C ABI (needs cuda.h and libcuda): device views over cuMemAlloc'd
 * memory, a transposing copy on a C stream, byte-exact; TMA descriptors from
 * sk_tensor_map_tiled against cuTensorMapEncodeTiled's own, byte for byte.
 * Built and run by `scripts/gpu-test run` on the GPU machine. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stridekit.h"

#include "check.h"

#define CU(call)                                                                      \
    do {                                                                              \
        CUresult r_ = (call);                                                         \
        if (r_ != CUDA_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s -> CUresult %d\n", __FILE__, __LINE__, #call, (int)r_); \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

static uint32_t rng = 0x9e3779b9u;
static uint32_t next(void) { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }

int main(void) {
    CU(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CUstream stream;
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    /* A transposing copy between device views: (257, 129) f32, C order -> F order. */
    const int64_t R = 257, C = 129;
    size_t bytes = (size_t)(R * C * 4);
    uint32_t *host = malloc(bytes), *back = malloc(bytes);
    for (int64_t i = 0; i < R * C; i++) host[i] = next();
    CUdeviceptr a, b;
    CU(cuMemAlloc(&a, bytes));
    CU(cuMemAlloc(&b, bytes));
    CU(cuMemcpyHtoD(a, host, bytes));
    CU(cuMemsetD8(b, 0xa5, bytes));
    int64_t shape[2] = {R, C}, fstrides[2] = {1, R};
    DLDataType f32 = {kDLFloat, 32, 1};
    sk_view src, dst;
    CHECK(sk_view_from_ptr(a, 2, shape, NULL, 4, f32, true, NULL, NULL, &src) == SK_OK);
    CHECK(sk_view_from_ptr(b, 2, shape, fstrides, 4, f32, false, NULL, NULL, &dst) == SK_OK);
    CHECK(src.device_id == 0 && src.device_accessible && dst.device_id == 0);
    CHECK(sk_view_copy(&dst, &src, (uintptr_t)stream, 0) == SK_OK);
    CU(cuStreamSynchronize(stream));
    CU(cuMemcpyDtoH(back, b, bytes));
    int64_t bad = 0;
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++) bad += back[i + R * j] != host[i * C + j];
    CHECK(bad == 0);
    /* Device to a strided host view and back through DLPack. */
    void *t = NULL;
    CHECK(sk_view_to_dlpack(&dst, true, &t) == SK_OK);
    CHECK(((DLManagedTensorVersioned *)t)->dl_tensor.device.device_type == kDLCUDA);
    sk_view imported;
    CHECK(sk_view_from_dlpack(t, true, &imported) == SK_OK);
    uint32_t *h2 = calloc((size_t)(R * C), 4);
    sk_view hv;
    CHECK(sk_view_from_ptr((uintptr_t)h2, 2, shape, NULL, 4, f32, false, NULL, NULL, &hv) == SK_OK);
    CHECK(sk_view_copy(&hv, &imported, (uintptr_t)-1, -1) == SK_OK);
    CHECK(memcmp(h2, host, bytes) == 0);
    CHECK(sk_view_release(&hv) == SK_OK);
    CHECK(sk_view_release(&imported) == SK_OK);
    CHECK(sk_view_release(&src) == SK_OK && sk_view_release(&dst) == SK_OK);

    /* TMA: (256, 128) f32 and (64, 40, 96) u8, with and without swizzle, against the driver. */
    CUdeviceptr m;
    CU(cuMemAlloc(&m, 1 << 20));
    struct { int nd; int64_t shape[3]; uint32_t box[3]; int32_t isz; DLDataType dt; CUtensorMapDataType ct; int swz; } cases[] = {
        {2, {256, 128, 0}, {64, 32, 0}, 4, {kDLFloat, 32, 1}, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0},
        {2, {256, 128, 0}, {64, 32, 0}, 4, {kDLFloat, 32, 1}, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 128},
        {3, {64, 40, 96}, {8, 5, 64}, 1, {kDLUInt, 8, 1}, CU_TENSOR_MAP_DATA_TYPE_UINT8, 64},
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sk_view v;
        CHECK(sk_view_from_ptr(m, cases[k].nd, cases[k].shape, NULL, cases[k].isz, cases[k].dt, true, NULL, NULL, &v) == SK_OK);
        sk_tma_options opt = {cases[k].swz, 0, 0, 0, NULL};
        _Alignas(64) uint8_t mine[128];
        CHECK(sk_tensor_map_tiled(&v, cases[k].nd, cases[k].box, &opt, mine) == SK_OK);
        /* The driver's own, with everything reversed to its innermost-first order. */
        int nd = cases[k].nd;
        cuuint64_t dims[3], strides[2];
        cuuint32_t box[3], es[3] = {1, 1, 1};
        int64_t stride = cases[k].isz;
        for (int i = 0; i < nd; i++) {
            dims[i] = (cuuint64_t)cases[k].shape[nd - 1 - i];
            box[i] = cases[k].box[nd - 1 - i];
            if (i > 0) strides[i - 1] = (cuuint64_t)stride;
            stride *= cases[k].shape[nd - 1 - i];
        }
        CUtensorMapSwizzle swz = cases[k].swz == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : cases[k].swz == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                      : CU_TENSOR_MAP_SWIZZLE_NONE;
        CUtensorMap theirs;
        CU(cuTensorMapEncodeTiled(&theirs, cases[k].ct, (cuuint32_t)nd, (void *)m, dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
        CHECK(memcmp(mine, &theirs, 128) == 0);
        CHECK(sk_view_release(&v) == SK_OK);
    }
    /* A rule checked before the driver: a transposed view's innermost stride is not 1. */
    sk_view tv;
    int64_t tshape[2] = {128, 256}, tstr[2] = {1, 128};
    CHECK(sk_view_from_ptr(m, 2, tshape, tstr, 4, f32, true, NULL, NULL, &tv) == SK_OK);
    uint8_t map[128];
    uint32_t box2[2] = {32, 32};
    CHECK(sk_tensor_map_tiled(&tv, 2, box2, NULL, map) == SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "permuted by [1, 0]") != NULL);
    CHECK(sk_view_release(&tv) == SK_OK);

    CU(cuMemFree(a));
    CU(cuMemFree(b));
    CU(cuMemFree(m));
    CU(cuStreamDestroy(stream));
    free(host); free(back); free(h2);
    if (failures) {
        fprintf(stderr, "gpu_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("gpu_test: all checks passed\n");
    return 0;
}
