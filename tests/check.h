/* check.h: comparison helpers for the cmocka tests. Every failure says
 * "expected X, got Y" with the place it happened, then fails the current test. */
#ifndef MHAVIZ_TEST_CHECK_H
#define MHAVIZ_TEST_CHECK_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define CHECK_INT(what, expected, got)                                                             \
    do {                                                                                           \
        long long e_ = (long long)(expected), g_ = (long long)(got);                               \
        if (e_ != g_) fail_msg("%s: expected %lld, got %lld", (what), e_, g_);                     \
    } while (0)

#define CHECK_TRUE(what, cond)                                                                     \
    do {                                                                                           \
        if (!(cond)) fail_msg("%s: expected %s, got false", (what), #cond);                        \
    } while (0)

#define CHECK_STR(what, expected, got)                                                             \
    do {                                                                                           \
        const char *e_ = (expected), *g_ = (got);                                                  \
        if (!g_ || strcmp(e_, g_) != 0)                                                            \
            fail_msg("%s: expected \"%s\", got \"%s\"", (what), e_, g_ ? g_ : "(null)");           \
    } while (0)

/* |got - expected| <= tol */
#define CHECK_NEAR(what, expected, got, tol)                                                       \
    do {                                                                                           \
        double e_ = (double)(expected), g_ = (double)(got), t_ = (double)(tol);                    \
        if (!(fabs(e_ - g_) <= t_))                                                                \
            fail_msg("%s: expected %.9g, got %.9g (|diff| %.3g > tol %.3g)", (what), e_, g_,       \
                     fabs(e_ - g_), t_);                                                           \
    } while (0)

/* a message buffer was filled: non-empty */
#define CHECK_MSG(what, msg)                                                                       \
    do {                                                                                           \
        if ((msg)[0] == '\0') fail_msg("%s: expected a non-empty message, got \"\"", (what));      \
    } while (0)

#endif
