/* bench_common.c: the timing loop of mhaviz --bench (medians over at least
 * half a second after a warm-up) and the token lists its cases use. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_internal.h"

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorts v and returns its median */
double median_sorted(double *v, int count) {
    qsort(v, (size_t)count, sizeof(double), cmp_double);
    return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* Runs fn(ud) once to warm up, then again until BENCH_MIN_S have passed and
 * BENCH_MIN_RUNS were made; with quick, once and no warm-up. fn returns 0, or
 * -1 with a message in b->err (the timing then stops). Returns 0 or -1. */
int time_runs(bench *b, timing *t, int (*fn)(bench *, void *), void *ud) {
    if (!b->quick && fn(b, ud) != 0) return -1;
    const double start = now_s();
    int runs = 0;
    do {
        const double t0 = now_s();
        if (fn(b, ud) != 0) return -1;
        b->samples[runs++] = now_s() - t0;
    } while (!b->quick && runs < BENCH_MAX_RUNS &&
             (now_s() - start < BENCH_MIN_S || runs < BENCH_MIN_RUNS));
    qsort(b->samples, (size_t)runs, sizeof(double), cmp_double);
    t->runs = runs;
    t->median =
        runs % 2 ? b->samples[runs / 2] : 0.5 * (b->samples[runs / 2 - 1] + b->samples[runs / 2]);
    t->p95 = b->samples[(int)ceil(0.95 * runs) - 1];
    return 0;
}

/* n tokens cycling through a short sentence */
int make_tokens(tok_list *t, int n) {
    static const char *words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "looked", "."};
    memset(t, 0, sizeof *t);
    t->tokens = calloc((size_t)n, sizeof(char *));
    if (!t->tokens) return -1;
    for (int i = 0; i < n; i++) {
        const char *w = words[i % 9];
        t->tokens[i] = malloc(strlen(w) + 1);
        if (!t->tokens[i]) return -1;
        strcpy(t->tokens[i], w);
        t->count++;
    }
    return 0;
}
