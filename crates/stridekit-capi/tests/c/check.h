/* CHECK and EXPECT for the C ABI tests: count failures, print the call and the library's
 * last error, and keep going. */
#ifndef STRIDEKIT_TEST_CHECK_H
#define STRIDEKIT_TEST_CHECK_H
#include <stdio.h>
#include "stridekit.h"

static int failures = 0;
#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, \
                    __LINE__, #cond, sk_last_error());                           \
            failures++;                                                          \
        }                                                                        \
    } while (0)
#define EXPECT(call, status)                                                        \
    do {                                                                            \
        sk_status s_ = (call);                                                      \
        if (s_ != (status)) {                                                       \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d; last error: %s\n", \
                    __FILE__, __LINE__, #call, (int)s_, (int)(status), sk_last_error()); \
            failures++;                                                             \
        }                                                                           \
    } while (0)
#endif
