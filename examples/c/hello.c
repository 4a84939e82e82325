/* A C program against the installed library:
 *   cc hello.c $(pkg-config --cflags --libs stridekit) -o hello && ./hello */
#include <stdio.h>
#include <string.h>
#include "stridekit.h"

int main(void) {
    uint32_t major = 0, minor = 0, patch = 0;
    if (sk_version(&major, &minor, &patch) != SK_OK || major != STRIDEKIT_VERSION_MAJOR ||
        minor != STRIDEKIT_VERSION_MINOR) {
        fprintf(stderr, "header %d.%d and library %u.%u differ\n", STRIDEKIT_VERSION_MAJOR,
                STRIDEKIT_VERSION_MINOR, major, minor);
        return 1;
    }
    static const DLDataType f32 = {kDLFloat, 32, 1};
    float a[6] = {0, 1, 2, 3, 4, 5}, t[6] = {0};
    int64_t shape[2] = {2, 3}, fstrides[2] = {1, 2};
    sk_view src, dst;
    sk_status s = sk_view_from_ptr((uintptr_t)a, 2, shape, NULL, 4, f32, true, NULL, NULL, &src);
    if (s == SK_OK) s = sk_view_from_ptr((uintptr_t)t, 2, shape, fstrides, 4, f32, false, NULL, NULL, &dst);
    if (s == SK_OK) s = sk_view_copy(&dst, &src, (uintptr_t)-1, -1); /* a transposing copy */
    if (s != SK_OK) {
        fprintf(stderr, "%s: %s\n", sk_status_str(s), sk_last_error());
        return 1;
    }
    printf("stridekit %u.%u.%u: (2,3) row-major into column-major: %g %g %g %g %g %g\n", major,
           minor, patch, t[0], t[1], t[2], t[3], t[4], t[5]);
    sk_view_release(&src);
    sk_view_release(&dst);
    return (t[1] == 3.0f && t[2] == 1.0f) ? 0 : 1;
}
