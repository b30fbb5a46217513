/* bench.c: mhaviz --bench. Times the forward pass at a ladder of shapes (median of
 * repeated runs, after a warm-up) and checks that a steady shape allocates nothing.
 * Speed is measured here, never in tests. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "blas.h"
#include "mha.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int make_tokens(tok_list *t, int n) {
    t->count = 0;
    t->replaced = 0;
    t->tokens = calloc((size_t)n, sizeof(char *));
    if (!t->tokens) return -1;
    static const char *words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "looked", "."};
    for (int i = 0; i < n; i++) {
        const char *w = words[i % 9];
        t->tokens[i] = malloc(strlen(w) + 1);
        if (!t->tokens[i]) return -1;
        strcpy(t->tokens[i], w);
        t->count++;
    }
    return 0;
}

int app_bench(const cli_options *o, char *err, size_t errlen) {
    (void)o;
    static const int shapes[][3] = {{8, 64, 4}, {16, 128, 8}, {40, 64, 4}, {128, 512, 8},
                                    {512, 1024, 16}};
    printf("mhaviz --bench: forward pass, OpenBLAS kernels \"%s\"\n", mm_backend_name());
    printf("%6s %8s %4s %6s %12s %12s %12s\n", "n", "d_model", "h", "runs", "median_ms",
           "min_ms", "allocs/run");
    mha_model *m = mha_model_create();
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        tok_list toks = {0};
        if (make_tokens(&toks, shapes[s][0]) != 0) {
            tok_free(&toks);
            mha_model_destroy(m);
            snprintf(err, errlen, "out of memory");
            return 1;
        }
        mha_config cfg = {.h = shapes[s][2], .d_model = shapes[s][1], .seed = 1};
        if (mha_model_compute(m, &cfg, &toks, err, errlen) != 0) {
            tok_free(&toks);
            mha_model_destroy(m);
            return 1;
        }
        int runs = shapes[s][0] >= 512 ? 15 : 101;
        double t[101];
        unsigned long before = m->allocations_;
        for (int r = 0; r < runs; r++) {
            double t0 = now_ms();
            mha_model_set(m, &cfg, &toks, err, errlen); /* same shape: no allocation */
            mha_forward(m);
            t[r] = now_ms() - t0;
        }
        unsigned long allocs = m->allocations_ - before;
        qsort(t, (size_t)runs, sizeof t[0], cmp_double);
        printf("%6d %8d %4d %6d %12.3f %12.3f %12.2f\n", shapes[s][0], shapes[s][1], shapes[s][2],
               runs, t[runs / 2], t[0], (double)allocs / runs);
        tok_free(&toks);
    }
    mha_model_destroy(m);
    return 0;
}
