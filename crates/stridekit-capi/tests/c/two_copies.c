/* Views across two copies of the library, loaded with dlopen side by side (as a C
 * extension linking its own stridekit beside the Python package's): each copy forwards
 * calls on the other's views through the view's function table. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
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
