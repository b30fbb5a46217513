/* sample.h: the property sweeps sampled under the sanitizers. With MHAVIZ_TEST_SAMPLE=k
 * (tests/CMakeLists.txt sets it in the environment of the sanitizer build's tests only,
 * k = MHAVIZ_SANITIZE_SAMPLE) a sweep runs every k-th of its cases, counted over the
 * whole sweep so that each model meets other windows; "k:r" runs the cases whose index
 * is r modulo k instead of 0 (to run the other cases by hand). Unset, or k = 1: every
 * case, as the normal build does. The same subset on every run: a failure reproduces. */
#ifndef MHAVIZ_TEST_SAMPLE_H
#define MHAVIZ_TEST_SAMPLE_H

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    long k, r; /* run case i when i % k == r */
    long index, run;
} test_sample;

/* A sweep's sampler, read from MHAVIZ_TEST_SAMPLE; says once on stdout what it runs. */
static inline test_sample test_sample_begin(const char *sweep) {
    test_sample s = {1, 0, 0, 0};
    const char *env = getenv("MHAVIZ_TEST_SAMPLE");
    if (env && *env) {
        char *end = NULL;
        long k = strtol(env, &end, 10), r = 0;
        if (end && *end == ':') r = strtol(end + 1, &end, 10);
        if (k >= 1 && k <= 1000 && r >= 0 && r < k && end && *end == '\0')
            s.k = k, s.r = r;
        else
            fprintf(stderr,
                    "%s: MHAVIZ_TEST_SAMPLE=%s is not k or k:r (1 <= k <= 1000, r < k):"
                    " every case runs\n",
                    sweep, env);
    }
    if (s.k > 1)
        printf("%s: sampled, the cases i with i %% %ld == %ld (MHAVIZ_TEST_SAMPLE)\n", sweep, s.k,
               s.r);
    return s;
}

/* Whether the sweep's next case runs; counts it. */
static inline int test_sample_next(test_sample *s) {
    const int run = s->index++ % s->k == s->r;
    s->run += run;
    return run;
}

/* Whether case i of a sweep met out of order runs (i counted as the sweep counts its cases). */
static inline int test_sample_has(const test_sample *s, long i) {
    return i % s->k == s->r;
}

#endif
