/* Views across two copies of the library, loaded with dlopen side by side (as a C
 * extension linking its own stridekit beside the Python package's): each copy forwards
 * calls on the other's views through the view's function table. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "stridekit.h"

typedef sk_status (*from_ptr_fn)(uintptr_t, int32_t, const int64_t *, const int64_t *, int64_t,
                                 DLDataType, bool, void *, void (*)(void *), sk_view *);
typedef sk_status (*copy_fn)(const sk_view *, const sk_view *, uintptr_t, int32_t);
typedef sk_status (*release_fn)(sk_view *);
typedef sk_status (*size_fn)(const sk_view *, int64_t *);
typedef const char *(*error_fn)(void);

struct lib {
    from_ptr_fn from_ptr;
    copy_fn copy;
    release_fn release;
    size_fn required_size;
    error_fn last_error;
};

static int failures = 0;
#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            failures++;                                                             \
        }                                                                           \
    } while (0)

static int released = 0;
static void count_release(void *ctx) { released += *(int *)ctx; }

/* Memory whose release poisons and frees it: a copy that read it after the release
 * would see the poison (and valgrind an invalid read). */
struct owned {
    unsigned char *bytes;
    size_t size;
};
static void poison_and_free(void *ctx) {
    struct owned *o = ctx;
    memset(o->bytes, 0xEE, o->size);
    free(o->bytes);
    o->bytes = NULL;
}

/* One copy through copy B while copy A's view of the source is released on another
 * thread: the copy must either see a released view or copy every byte intact. */
struct race {
    const struct lib *a, *b;
    sk_view src, dst;
    sk_status copied;
    sk_status released;
    long pause_ns; /* before the release: 0 lets it often come first */
};
static void *copy_side(void *p) {
    struct race *r = p;
    r->copied = r->b->copy(&r->dst, &r->src, (uintptr_t)-1, -1);
    return NULL;
}
static void *release_side(void *p) {
    struct race *r = p;
    if (r->pause_ns > 0) {
        struct timespec pause = {0, r->pause_ns};
        nanosleep(&pause, NULL);
    }
    sk_view mine = r->src;
    r->released = r->a->release(&mine);
    return NULL;
}

static int load(const char *path, void **handle, struct lib *l) {
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return 0;
    }
    l->from_ptr = (from_ptr_fn)dlsym(*handle, "sk_view_from_ptr");
    l->copy = (copy_fn)dlsym(*handle, "sk_view_copy");
    l->release = (release_fn)dlsym(*handle, "sk_view_release");
    l->required_size = (size_fn)dlsym(*handle, "sk_view_required_size");
    l->last_error = (error_fn)dlsym(*handle, "sk_last_error");
    return l->from_ptr && l->copy && l->release && l->required_size && l->last_error;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: two_copies LIB_A LIB_B\n");
        return 2;
    }
    void *ha, *hb;
    struct lib a, b;
    if (!load(argv[1], &ha, &a) || !load(argv[2], &hb, &b)) return 1;
    CHECK((void *)a.release != (void *)b.release); /* two copies, really */

    static const DLDataType I32 = {kDLInt, 32, 1};
    int32_t src[6] = {1, 2, 3, 4, 5, 6}, dst[6] = {0}, back[6] = {0};
    int64_t shape[2] = {2, 3}, fstrides[2] = {1, 2};
    int one = 1;
    sk_view va, vb, vc;
    /* A view made by copy A, read and copied by copy B. */
    CHECK(a.from_ptr((uintptr_t)src, 2, shape, NULL, 4, I32, true, &one, count_release, &va) == SK_OK);
    int64_t size = 0;
    CHECK(b.required_size(&va, &size) == SK_OK && size == 24);
    CHECK(b.from_ptr((uintptr_t)dst, 2, shape, fstrides, 4, I32, false, NULL, NULL, &vb) == SK_OK);
    CHECK(b.copy(&vb, &va, (uintptr_t)-1, -1) == SK_OK); /* mixed: B's dst, A's src */
    CHECK(dst[0] == 1 && dst[1] == 4 && dst[2] == 2 && dst[5] == 6);
    /* And the other way: A copies B's view into its own. */
    CHECK(a.from_ptr((uintptr_t)back, 2, shape, NULL, 4, I32, false, NULL, NULL, &vc) == SK_OK);
    CHECK(a.copy(&vc, &vb, (uintptr_t)-1, -1) == SK_OK);
    CHECK(memcmp(back, src, sizeof src) == 0);
    /* Both views of copy A, through copy B: forwarded whole. */
    CHECK(b.copy(&vc, &va, (uintptr_t)-1, -1) == SK_OK);
    /* An error in the other copy reaches this copy's message. */
    CHECK(b.copy(&va, &vc, (uintptr_t)-1, -1) == SK_ERR_READ_ONLY);
    CHECK(strstr(b.last_error(), "read-only") != NULL);
    /* Releases through the other copy reach the view's own registry, once. */
    sk_view stale = va;
    CHECK(b.release(&va) == SK_OK);
    CHECK(released == 1);
    CHECK(a.release(&stale) == SK_ERR_RELEASED);
    /* A stale view of copy A (released above) is refused by copy A, through copy B:
     * nothing of the released view is read. */
    CHECK(b.copy(&vb, &stale, (uintptr_t)-1, -1) == SK_ERR_RELEASED);
    CHECK(strstr(b.last_error(), "not a live view") != NULL);
    CHECK(b.copy(&stale, &vb, (uintptr_t)-1, -1) == SK_ERR_RELEASED);

    /* Copy A's read-only view stays read-only whatever its struct says. */
    sk_view ro;
    CHECK(a.from_ptr((uintptr_t)src, 2, shape, NULL, 4, I32, true, NULL, NULL, &ro) == SK_OK);
    sk_view edited = ro;
    edited.readonly = false;
    memcpy(dst, back, sizeof back);
    CHECK(b.copy(&edited, &vb, (uintptr_t)-1, -1) == SK_ERR_READ_ONLY);
    CHECK(memcmp(src, back, sizeof src) == 0); /* nothing written */
    CHECK(a.release(&ro) == SK_OK);

    /* A table pointer that is no table is an error before anything is called: an
     * unmapped address, a misaligned one, and heap bytes that only look like a table. */
    sk_view garbage = vb;
    garbage.vtable = (const sk_vtable *)(uintptr_t)0x10;
    CHECK(b.release(&garbage) == SK_ERR_INVALID);
    CHECK(strstr(b.last_error(), "not the function table") != NULL);
    CHECK(a.copy(&garbage, &vc, (uintptr_t)-1, -1) == SK_ERR_INVALID);
    CHECK(a.copy(&vc, &garbage, (uintptr_t)-1, -1) == SK_ERR_INVALID);
    CHECK(a.required_size(&garbage, &size) == SK_ERR_INVALID);
    garbage.vtable = (const sk_vtable *)((uintptr_t)a.last_error + 1);
    CHECK(b.release(&garbage) == SK_ERR_INVALID);
    sk_vtable *fake = malloc(sizeof(sk_vtable));
    memset(fake, 0x5a, sizeof(sk_vtable));
    fake->version = SK_VTABLE_VERSION;
    fake->size = sizeof(sk_vtable);
    garbage.vtable = fake;
    CHECK(b.release(&garbage) == SK_ERR_INVALID);
    CHECK(strstr(b.last_error(), "SK_VTABLE_MAGIC") != NULL);
    free(fake);

    /* A release on another thread during a copy frees nothing the copy still reads. */
    int64_t big_shape[1] = {1 << 20}; /* 4 MiB of int32 */
    size_t big = (size_t)big_shape[0] * 4;
    int32_t *out = malloc(big);
    int ok_copies = 0, refused = 0;
    for (int i = 0; i < 12; i++) {
        struct owned o = {malloc(big), big};
        for (size_t k = 0; k < big; k++) o.bytes[k] = (unsigned char)(k * 7 + i);
        unsigned char *expect = malloc(big);
        memcpy(expect, o.bytes, big);
        memset(out, 0, big);
        struct race r = {&a, &b, {0}, {0}, -1, -1, (i % 3) * 300000L};
        CHECK(a.from_ptr((uintptr_t)o.bytes, 1, big_shape, NULL, 4, I32, true, &o,
                         poison_and_free, &r.src) == SK_OK);
        CHECK(b.from_ptr((uintptr_t)out, 1, big_shape, NULL, 4, I32, false, NULL, NULL,
                         &r.dst) == SK_OK);
        pthread_t t1, t2;
        pthread_create(&t1, NULL, copy_side, &r);
        pthread_create(&t2, NULL, release_side, &r);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        CHECK(r.released == SK_OK);
        CHECK(o.bytes == NULL); /* released once the copy let go */
        if (r.copied == SK_OK) {
            ok_copies++;
            CHECK(memcmp(out, expect, big) == 0);
        } else {
            refused++;
            CHECK(r.copied == SK_ERR_RELEASED);
        }
        CHECK(b.release(&r.dst) == SK_OK);
        free(expect);
    }
    printf("two_copies: %d copies raced a release: %d copied intact, %d refused\n", 12,
           ok_copies, refused);
    free(out);

    CHECK(b.release(&vb) == SK_OK);
    CHECK(b.release(&vc) == SK_OK);
    CHECK(released == 1);
    dlclose(hb);
    dlclose(ha);
    if (failures) {
        fprintf(stderr, "two_copies: %d failure(s)\n", failures);
        return 1;
    }
    printf("two_copies: all checks passed\n");
    return 0;
}
