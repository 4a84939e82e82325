/* Host-memory tests of the C ABI: fields, copies, DLPack both ways, every error status.
 * Built and run by tests/c_api.rs (under valgrind when it is installed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "stridekit.h"

#include "check.h"

static const DLDataType I32 = {kDLInt, 32, 1};
static const DLDataType F64 = {kDLFloat, 64, 1};
static const DLDataType UNKNOWN = {0, 0, 0};

static int released = 0;
static void count_release(void *ctx) { released += *(int *)ctx; }

static int deleted = 0;
typedef struct {
    DLManagedTensorVersioned t;
    int64_t shape[2];
    int64_t strides[2];
    double data[6];
} versioned_box;
static void delete_versioned(DLManagedTensorVersioned *t) {
    deleted++;
    free(t->manager_ctx);
}
typedef struct {
    DLManagedTensor t;
    int64_t shape[1];
    float data[5];
} legacy_box;
static void delete_legacy(DLManagedTensor *t) {
    deleted++;
    free(t->manager_ctx);
}

static void fields_and_copies(void) {
    int32_t a[12], b[12];
    for (int i = 0; i < 12; i++) { a[i] = 100 + i * 7; b[i] = -1; }
    int64_t shape[2] = {3, 4};
    sk_view src, dst;
    int one = 1;
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, 4, I32, true, &one, count_release, &src), SK_OK);
    CHECK(src.ptr == (uintptr_t)a && src.ndim == 2 && src.itemsize == 4);
    CHECK(src.shape[0] == 3 && src.shape[1] == 4 && src.strides[0] == 4 && src.strides[1] == 1);
    CHECK(src.dtype.code == kDLInt && src.dtype.bits == 32 && src.dtype.lanes == 1);
    CHECK(src.device_id == -1 && !src.device_accessible && src.readonly && src.owner != NULL);
    /* Destination: the same logical (3, 4) over column-major storage. */
    int64_t fstrides[2] = {1, 3};
    EXPECT(sk_view_from_ptr((uintptr_t)b, 2, shape, fstrides, 4, I32, false, &one, count_release, &dst), SK_OK);
    CHECK(!dst.readonly);
    EXPECT(sk_view_copy(&dst, &src, (uintptr_t)-1, -1), SK_OK);
    /* Stream 0 is CUDA's NULL stream, the legacy default stream: as 1 does. */
    EXPECT(sk_view_copy(&dst, &src, 0, -1), sk_view_copy(&dst, &src, 1, -1));
    {
        /* Copies never reinterpret: int32 into float32 is refused, unless the bits are asked for. */
        static const DLDataType F32 = {kDLFloat, 32, 1};
        int32_t ints[4] = {1, 2, 3, 0x3f800000};
        float floats[4] = {0, 0, 0, 0};
        int64_t n4[1] = {4};
        sk_view vi, vf;
        EXPECT(sk_view_from_ptr((uintptr_t)ints, 1, n4, NULL, 4, I32, true, NULL, NULL, &vi), SK_OK);
        EXPECT(sk_view_from_ptr((uintptr_t)floats, 1, n4, NULL, 4, F32, false, NULL, NULL, &vf), SK_OK);
        EXPECT(sk_view_copy(&vf, &vi, (uintptr_t)-1, -1), SK_ERR_INVALID);
        CHECK(strstr(sk_last_error(), "the source is I32 and the destination F32") != NULL);
        CHECK(floats[3] == 0.0f);
        EXPECT(sk_view_copy_bits(&vf, &vi, (uintptr_t)-1, -1), SK_OK);
        CHECK(floats[3] == 1.0f);
        EXPECT(sk_view_release(&vi), SK_OK);
        EXPECT(sk_view_release(&vf), SK_OK);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) CHECK(b[i + 3 * j] == a[i * 4 + j]);
    bool c = false, f = false, any = false;
    EXPECT(sk_view_is_contiguous(&src, 'C', &c), SK_OK);
    EXPECT(sk_view_is_contiguous(&dst, 'F', &f), SK_OK);
    EXPECT(sk_view_is_contiguous(&dst, 'A', &any), SK_OK);
    CHECK(c && f && any);
    EXPECT(sk_view_is_contiguous(&src, 'F', &f), SK_OK);
    CHECK(!f);
    EXPECT(sk_view_is_contiguous(&src, 'X', &f), SK_ERR_INVALID);
    int64_t size = 0;
    EXPECT(sk_view_required_size(&dst, &size), SK_OK);
    CHECK(size == 48);
    /* A reversed view: ptr at the last element, stride -1; copied into a plain array. */
    int32_t r[12];
    int64_t n12[1] = {12}, neg[1] = {-1};
    sk_view rev, out;
    EXPECT(sk_view_from_ptr((uintptr_t)(a + 11), 1, n12, neg, 4, I32, true, NULL, NULL, &rev), SK_OK);
    CHECK(rev.ptr == (uintptr_t)(a + 11) && rev.strides[0] == -1);
    EXPECT(sk_view_required_size(&rev, &size), SK_OK);
    CHECK(size == 48);
    EXPECT(sk_view_from_ptr((uintptr_t)r, 1, n12, NULL, 4, I32, false, NULL, NULL, &out), SK_OK);
    EXPECT(sk_view_copy(&out, &rev, (uintptr_t)-1, 1), SK_OK);
    for (int i = 0; i < 12; i++) CHECK(r[i] == a[11 - i]);
    /* Writing into a read-only view; shapes that differ; copying a view onto itself. */
    EXPECT(sk_view_copy(&src, &dst, (uintptr_t)-1, -1), SK_ERR_READ_ONLY);
    EXPECT(sk_view_copy(&out, &src, (uintptr_t)-1, -1), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "differ") != NULL);
    EXPECT(sk_view_copy(&out, &out, (uintptr_t)-1, -1), SK_OK);
    EXPECT(sk_view_copy(&out, &rev, (uintptr_t)-1, 7), SK_ERR_INVALID);
    /* Release: exactly once; callbacks run once per view. */
    released = 0;
    EXPECT(sk_view_release(&src), SK_OK);
    CHECK(src.owner == NULL && released == 1);
    EXPECT(sk_view_release(&src), SK_ERR_RELEASED);
    CHECK(released == 1);
    EXPECT(sk_view_copy(&dst, &src, (uintptr_t)-1, -1), SK_ERR_RELEASED);
    EXPECT(sk_view_release(&dst), SK_OK);
    CHECK(released == 2);
    EXPECT(sk_view_release(&rev), SK_OK);
    EXPECT(sk_view_release(&out), SK_OK);
    EXPECT(sk_view_release(NULL), SK_ERR_NULL_POINTER);
    sk_view forged = out;
    forged.owner = &forged;
    EXPECT(sk_view_release(&forged), SK_ERR_RELEASED);
}

static void bad_inputs(void) {
    int32_t a[4] = {1, 2, 3, 4};
    int64_t shape[2] = {2, 2};
    sk_view v;
    int one = 1;
    released = 0;
    EXPECT(sk_view_from_ptr((uintptr_t)a, 65, shape, NULL, 4, I32, true, &one, count_release, &v), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "ndim 65") != NULL);
    EXPECT(sk_view_from_ptr((uintptr_t)a, -1, shape, NULL, 4, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, -4, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "itemsize -4") != NULL);
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, 0, UNKNOWN, true, NULL, NULL, &v), SK_ERR_INVALID);
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, NULL, NULL, 4, I32, true, NULL, NULL, &v), SK_ERR_NULL_POINTER);
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, 4, I32, true, NULL, NULL, NULL), SK_ERR_NULL_POINTER);
    EXPECT(sk_view_from_ptr(0, 2, shape, NULL, 4, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "null") != NULL);
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, 2, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "itemsize is 2") != NULL);
    DLDataType nibble = {kDLFloat4_e2m1fn, 4, 1};
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, 1, nibble, true, NULL, NULL, &v), SK_ERR_INVALID);
    int64_t negshape[2] = {2, -2};
    EXPECT(sk_view_from_ptr((uintptr_t)a, 2, negshape, NULL, 4, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    CHECK(released == 0); /* failures leave the owner with the caller */
    /* Unknown dtype, any itemsize: allowed. */
    EXPECT(sk_view_from_ptr((uintptr_t)a, 1, shape, NULL, 8, UNKNOWN, true, NULL, NULL, &v), SK_OK);
    CHECK(v.dtype.code == 0 && v.dtype.bits == 0 && v.dtype.lanes == 0 && v.itemsize == 8);
    uint8_t map[128];
    uint32_t box[1] = {2};
    CHECK(sk_tensor_map_tiled(&v, 1, box, NULL, map) != SK_OK); /* host memory: no TMA */
    EXPECT(sk_tensor_map_tiled(&v, 2, box, NULL, map), SK_ERR_INVALID);
    EXPECT(sk_tensor_map_tiled(&v, 1, NULL, NULL, map), SK_ERR_NULL_POINTER);
    EXPECT(sk_view_release(&v), SK_OK);
    uint32_t maj = 9, min = 9, pat = 9;
    EXPECT(sk_version(&maj, &min, &pat), SK_OK);
    CHECK(maj == 0 && min == 1 && pat == 0);
    EXPECT(sk_version(NULL, NULL, NULL), SK_OK);
}

static void dlpack_both_ways(void) {
    /* A producer's versioned tensor: (2, 3) doubles, transposed strides, READ_ONLY. */
    versioned_box *vb = calloc(1, sizeof *vb);
    for (int i = 0; i < 6; i++) vb->data[i] = 0.5 + i;
    vb->shape[0] = 3; vb->shape[1] = 2; vb->strides[0] = 1; vb->strides[1] = 3;
    vb->t.version.major = 1; vb->t.version.minor = 3;
    vb->t.manager_ctx = vb; vb->t.deleter = delete_versioned;
    vb->t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    vb->t.dl_tensor.data = vb->data;
    vb->t.dl_tensor.device.device_type = kDLCPU;
    vb->t.dl_tensor.ndim = 2;
    vb->t.dl_tensor.dtype = F64;
    vb->t.dl_tensor.shape = vb->shape;
    vb->t.dl_tensor.strides = vb->strides;
    deleted = 0;
    sk_view in, dst;
    EXPECT(sk_view_from_dlpack(&vb->t, true, &in), SK_OK);
    CHECK(in.readonly && in.ndim == 2 && in.shape[0] == 3 && in.strides[1] == 3 && in.dtype.code == kDLFloat);
    double out[6] = {0};
    int64_t shape[2] = {3, 2};
    EXPECT(sk_view_from_ptr((uintptr_t)out, 2, shape, NULL, 8, F64, false, NULL, NULL, &dst), SK_OK);
    EXPECT(sk_view_copy(&dst, &in, (uintptr_t)-1, -1), SK_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) CHECK(out[i * 2 + j] == 0.5 + i + 3 * j);
    /* Export the writable view, import it again, then release everything. */
    void *exported = NULL;
    EXPECT(sk_view_to_dlpack(&dst, true, &exported), SK_OK);
    DLManagedTensorVersioned *ex = exported;
    CHECK(ex->version.major == 1 && (ex->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
    CHECK(ex->dl_tensor.data == out && ex->dl_tensor.device.device_type == kDLCPU);
    void *ro = NULL;
    /* A read-only view never leaves as legacy DLPack: 0.x has no READ_ONLY flag, so the
     * memory would come back writable. */
    EXPECT(sk_view_to_dlpack(&in, false, &ro), SK_ERR_INVALID);
    CHECK(ro == NULL);
    CHECK(strstr(sk_last_error(), "cannot be exported as legacy DLPack") != NULL);
    EXPECT(sk_view_to_dlpack(&in, true, &ro), SK_OK);
    CHECK((((DLManagedTensorVersioned *)ro)->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
    EXPECT(sk_view_release(&in), SK_OK);
    CHECK(deleted == 0); /* the read-only export still holds the producer's tensor */
    ((DLManagedTensorVersioned *)ro)->deleter(ro);
    CHECK(deleted == 1);
    sk_view back;
    EXPECT(sk_view_from_dlpack(ex, true, &back), SK_OK);
    CHECK(!back.readonly && back.ptr == (uintptr_t)out);
    EXPECT(sk_view_release(&back), SK_OK);
    EXPECT(sk_view_release(&dst), SK_OK);
    /* Legacy tensors, and a legacy export. */
    legacy_box *lb = calloc(1, sizeof *lb);
    for (int i = 0; i < 5; i++) lb->data[i] = (float)i;
    lb->shape[0] = 5;
    lb->t.manager_ctx = lb; lb->t.deleter = delete_legacy;
    lb->t.dl_tensor.data = lb->data;
    lb->t.dl_tensor.device.device_type = kDLCPU;
    lb->t.dl_tensor.ndim = 1;
    lb->t.dl_tensor.dtype.code = kDLFloat; lb->t.dl_tensor.dtype.bits = 32; lb->t.dl_tensor.dtype.lanes = 1;
    lb->t.dl_tensor.shape = lb->shape;
    EXPECT(sk_view_from_dlpack(&lb->t, false, &in), SK_OK);
    CHECK(!in.readonly && in.strides[0] == 1 && in.itemsize == 4);
    void *leg = NULL;
    EXPECT(sk_view_to_dlpack(&in, false, &leg), SK_OK);
    EXPECT(sk_view_release(&in), SK_OK);
    CHECK(deleted == 1);
    ((DLManagedTensor *)leg)->deleter(leg);
    CHECK(deleted == 2);
    /* Refused tensors are released (the deleter runs once): major version 2, 4 lanes. */
    versioned_box *bad = calloc(1, sizeof *bad);
    memset(bad, 0, sizeof *bad);
    bad->shape[0] = 2;
    bad->t.version.major = 2;
    bad->t.manager_ctx = bad; bad->t.deleter = delete_versioned;
    EXPECT(sk_view_from_dlpack(&bad->t, true, &in), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "major version 2") != NULL);
    CHECK(deleted == 3);
    bad = calloc(1, sizeof *bad);
    bad->shape[0] = 2;
    bad->t.version.major = 1;
    bad->t.manager_ctx = bad; bad->t.deleter = delete_versioned;
    bad->t.dl_tensor.data = bad->data;
    bad->t.dl_tensor.device.device_type = kDLCPU;
    bad->t.dl_tensor.ndim = 1;
    bad->t.dl_tensor.shape = bad->shape;
    bad->t.dl_tensor.dtype.code = kDLFloat; bad->t.dl_tensor.dtype.bits = 32; bad->t.dl_tensor.dtype.lanes = 4;
    EXPECT(sk_view_from_dlpack(&bad->t, true, &in), SK_ERR_INVALID);
    CHECK(deleted == 4);
    EXPECT(sk_view_from_dlpack(NULL, true, &in), SK_ERR_NULL_POINTER);
    EXPECT(sk_view_from_dlpack(NULL, false, &in), SK_ERR_NULL_POINTER);
}

/* A stale struct copy never reaches a later view: owners are ids, handed out once. */
static void stale_copies(void) {
    int32_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    int64_t n4[1] = {4};
    int one = 1;
    sk_view va, vb;
    released = 0;
    EXPECT(sk_view_from_ptr((uintptr_t)a, 1, n4, NULL, 4, I32, true, &one, count_release, &va), SK_OK);
    sk_view stale = va; /* a copy of the struct */
    EXPECT(sk_view_release(&va), SK_OK);
    CHECK(released == 1);
    EXPECT(sk_view_from_ptr((uintptr_t)b, 1, n4, NULL, 4, I32, true, &one, count_release, &vb), SK_OK);
    EXPECT(sk_view_release(&stale), SK_ERR_RELEASED);
    CHECK(released == 1); /* B's callback did not run */
    int64_t size = 0;
    EXPECT(sk_view_required_size(&vb, &size), SK_OK); /* B is still live */
    CHECK(size == 16 && vb.shape[0] == 4);
    EXPECT(sk_view_release(&vb), SK_OK);
    CHECK(released == 2);
}

/* Checked layouts, dtypes and status names. */
static void checked_inputs(void) {
    int32_t a[8] = {0};
    int64_t n4[1] = {4}, zero[1] = {0}, n2[1] = {2};
    sk_view v;
    DLDataType odd = {200, 32, 1};
    EXPECT(sk_view_from_ptr((uintptr_t)a, 1, n4, NULL, 4, odd, true, NULL, NULL, &v), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "not one stridekit knows") != NULL);
    /* A writable view with a stride of 0 maps several elements to one address. */
    EXPECT(sk_view_from_ptr((uintptr_t)a, 1, n4, zero, 4, I32, false, NULL, NULL, &v), SK_ERR_INVALID);
    CHECK(strstr(sk_last_error(), "one address per element") != NULL);
    EXPECT(sk_view_from_ptr((uintptr_t)a, 1, n4, zero, 4, I32, true, NULL, NULL, &v), SK_OK);
    EXPECT(sk_view_release(&v), SK_OK);
    /* Layouts that reach below address 0 or past its end. */
    int64_t back[1] = {-1};
    EXPECT(sk_view_from_ptr((uintptr_t)8, 1, n4, back, 4, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    EXPECT(sk_view_from_ptr(UINTPTR_MAX - 3, 1, n2, NULL, 4, I32, true, NULL, NULL, &v), SK_ERR_INVALID);
    /* An unknown dtype of 3 bytes does not leave as DLPack "uint24". */
    static const DLDataType NONE = {0, 0, 0};
    uint8_t rgb[12] = {0};
    EXPECT(sk_view_from_ptr((uintptr_t)rgb, 1, n4, NULL, 3, NONE, false, NULL, NULL, &v), SK_OK);
    void *t = NULL;
    EXPECT(sk_view_to_dlpack(&v, true, &t), SK_ERR_INVALID);
    CHECK(t == NULL);
    EXPECT(sk_view_release(&v), SK_OK);
    /* Status names, for every status and for integers that are none. */
    CHECK(strcmp(sk_status_str(SK_OK), "SK_OK") == 0);
    CHECK(strcmp(sk_status_str(SK_ERR_RELEASED), "SK_ERR_RELEASED") == 0);
    CHECK(strcmp(sk_status_str(42), "SK_UNKNOWN_STATUS") == 0);
    CHECK(strcmp(sk_status_str(-1), "SK_UNKNOWN_STATUS") == 0);
    /* The header and the library agree on the version. */
    uint32_t maj = 99, min = 99, pat = 99;
    EXPECT(sk_version(&maj, &min, &pat), SK_OK);
    CHECK(maj == STRIDEKIT_VERSION_MAJOR && min == STRIDEKIT_VERSION_MINOR && pat == STRIDEKIT_VERSION_PATCH);
    CHECK(sizeof(sk_status) == 4);
}

/* A failing call and sk_last_error() from a pthread key destructor (thread teardown):
 * never an abort. */
static pthread_key_t teardown_key;
static int teardown_ran = 0;
static void at_teardown(void *p) {
    (void)p;
    sk_view v;
    sk_status s = sk_view_release(NULL);
    (void)sk_last_error();
    s = sk_view_from_ptr(0, 1, NULL, NULL, 4, I32, true, NULL, NULL, &v);
    (void)sk_last_error();
    teardown_ran = (s == SK_ERR_NULL_POINTER) ? 1 : 2;
}
static void *teardown_thread(void *arg) {
    (void)arg;
    pthread_setspecific(teardown_key, &teardown_ran);
    EXPECT(sk_view_release(NULL), SK_ERR_NULL_POINTER); /* the message slot exists */
    return NULL;
}
static void calls_at_thread_teardown(void) {
    pthread_t th;
    CHECK(pthread_key_create(&teardown_key, at_teardown) == 0);
    CHECK(pthread_create(&th, NULL, teardown_thread, NULL) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(teardown_ran == 1);
}

/* Kernel packs: arguments checked, an unknown architecture refused before anything is
 * made, out-values untouched on failure. (A pack added stays listed for the process's
 * life, which valgrind would count as memory still reachable: the crate's own test adds
 * one.) */
static void kernel_packs(void) {
    EXPECT(sk_add_kernel_pack(NULL), SK_ERR_NULL_POINTER);
    EXPECT(sk_add_kernel_pack(""), SK_ERR_INVALID);
    uint64_t kernels = 7, bytes = 7, failed = 7;
    EXPECT(sk_precompile_kernels(NULL, 9, 0, &kernels, &bytes, &failed), SK_ERR_NULL_POINTER);
    EXPECT(sk_precompile_kernels("/nonexistent/stridekit-pack", 6, 1, &kernels, &bytes, &failed),
           SK_ERR_UNSUPPORTED);
    CHECK(strstr(sk_last_error(), "6.1") != NULL);
    CHECK(kernels == 7 && bytes == 7 && failed == 7);
}

int main(void) {
    fields_and_copies();
    kernel_packs();
    checked_inputs();
    calls_at_thread_teardown();
    bad_inputs();
    dlpack_both_ways();
    stale_copies();
    if (failures) {
        fprintf(stderr, "host_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("host_test: all checks passed\n");
    return 0;
}
