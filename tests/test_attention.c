/* test_attention.c: the one attention kernel (src/core/attention.c) against a
 * plain-loop double-precision reference: query rows split into blocks, padding and
 * causal masks (every visible count), temperature and no scaling, head slices of
 * wider Q, K, V, the head written with its own stride and as a band of Concat, and
 * both softmax spans. Tolerance: |got - ref| <= 1e-5 (1 + |ref|) on scores, attn and
 * head; hidden keys exactly -inf in scores and exactly 0 in attn. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "attention.h"
#include "check.h"
#include "layer.h"

#define TOL 1e-5

static uint64_t rng_state = 88172645463325252u;
static float uniform(void) { /* xorshift64 in [-1, 1) */
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (float)((double)(rng_state >> 11) / 4503599627370496.0 - 1.0);
}

/* The reference: row r of one head, every loop written out, in double. */
static void reference(double *scores, double *attn, double *head, const float *q, const float *k,
                      const float *v, int ld, int n, int dk, int n_real, int causal, double scale) {
    for (int r = 0; r < n; r++) {
        double *s = scores + (size_t)r * n, *a = attn + (size_t)r * n, max = -INFINITY, sum = 0;
        for (int c = 0; c < n; c++) {
            const int hidden = c >= n_real || (causal && c > r && r < n_real);
            double dot = 0.0;
            for (int x = 0; x < dk; x++) dot += (double)q[r * ld + x] * k[c * ld + x];
            s[c] = hidden ? -INFINITY : dot * scale;
            if (s[c] > max) max = s[c];
        }
        for (int c = 0; c < n; c++) sum += a[c] = isinf(s[c]) ? 0.0 : exp(s[c] - max);
        for (int c = 0; c < n; c++) a[c] /= sum;
        for (int x = 0; x < dk; x++) {
            double acc = 0.0;
            for (int c = 0; c < n; c++) acc += a[c] * v[c * ld + x];
            head[(size_t)r * dk + x] = acc;
        }
    }
}

/* One case: h heads of d_k over n positions, head `which` run in `blocks` row blocks. */
static void run_case(int n, int n_real, int h, int dk, int causal, int scaled, float temp,
                     int blocks, int whole_rows, int into_concat) {
    const int d = h * dk, which = h - 1;
    float *q = malloc(sizeof(float) * n * d), *k = malloc(sizeof(float) * n * d),
          *v = malloc(sizeof(float) * n * d);
    float *scores = malloc(sizeof(float) * n * n), *attn = malloc(sizeof(float) * n * n);
    float *out = calloc((size_t)n * d, sizeof(float));
    double *rs = malloc(sizeof(double) * n * n), *ra = malloc(sizeof(double) * n * n),
           *rh = malloc(sizeof(double) * n * dk);
    for (int i = 0; i < n * d; i++)
        q[i] = 2.0f * uniform(), k[i] = 2.0f * uniform(), v[i] = uniform();
    const attn_head_shape s = {.n = n,
                               .d_k = dk,
                               .n_real = n_real,
                               .causal = causal,
                               .scale = attn_scale(dk, scaled, temp),
                               .whole_rows = whole_rows};
    const int col = which * dk, ld_head = into_concat ? d : dk;
    float *head = into_concat ? out + col : out;
    for (int b = 0; b < blocks; b++)
        attn_head_forward(scores, attn, head, ld_head, q + col, k + col, v + col, d, &s,
                          n * b / blocks, n * (b + 1) / blocks);
    const double scale = (scaled ? 1.0 / sqrt((double)dk) : 1.0) / (temp > 0 ? temp : 1.0);
    reference(rs, ra, rh, q + col, k + col, v + col, d, n, dk, n_real, causal, scale);
    char what[160];
    for (int r = 0; r < n; r++) {
        CHECK_INT("attn_visible", causal && r + 1 < n_real ? r + 1 : n_real, attn_visible(&s, r));
        for (int c = 0; c < n; c++) {
            const size_t i = (size_t)r * n + c;
            snprintf(what, sizeof what, "n=%d n_real=%d causal=%d T=%g blocks=%d row %d key %d", n,
                     n_real, causal, (double)temp, blocks, r, c);
            if (isinf(rs[i])) {
                CHECK_TRUE(what, isinf(scores[i]) && scores[i] < 0);
                CHECK_TRUE(what, attn[i] == 0.0f);
            } else {
                CHECK_NEAR(what, rs[i], scores[i], TOL * (1 + fabs(rs[i])));
                CHECK_NEAR(what, ra[i], attn[i], TOL * (1 + fabs(ra[i])));
            }
        }
        for (int x = 0; x < dk; x++)
            CHECK_NEAR("head", rh[(size_t)r * dk + x], head[(size_t)r * ld_head + x],
                       TOL * (1 + fabs(rh[(size_t)r * dk + x])));
    }
    if (into_concat) /* the other heads' bands are untouched */
        for (int r = 0; r < n; r++)
            for (int x = 0; x < col; x++) CHECK_TRUE("other bands", out[(size_t)r * d + x] == 0);
    free(q), free(k), free(v), free(scores), free(attn), free(out), free(rs), free(ra), free(rh);
}

static void test_kernel_against_loops(void **state) {
    (void)state;
    static const int ns[] = {1, 2, 7, 16, 33, 64, 100}; /* 64, 100: several ATTN_BLOCKs */
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        const int n = ns[a];
        for (int n_real = n > 3 ? n - 3 : 1; n_real <= n; n_real++)
            for (int causal = 0; causal <= 1; causal++)
                for (int blocks = 1; blocks <= 3; blocks++) {
                    run_case(n, n_real, 3, 5, causal, 1, 1.0f, blocks, 0, 0);
                    run_case(n, n_real, 2, 8, causal, 1, 0.5f, blocks, 1, 1);
                    run_case(n, n_real, 1, 4, causal, 0, 3.0f, blocks, n_real == n, 1);
                }
    }
    /* K_i^T beyond ATTN_KT_MAX floats: the scores as Q_i K_i^T, not from a copy */
    for (int causal = 0; causal <= 1; causal++) {
        CHECK_TRUE("past the copy", 100 * 48 > ATTN_KT_MAX);
        run_case(100, 97, 2, 48, causal, 1, 1.0f, 2, 0, 1);
        run_case(100, 100, 2, 48, causal, 1, 0.5f, 1, 1, 0);
    }
}

/* whole_rows changes the order the softmax adds in, never which keys are hidden */
static void test_whole_rows_same_keys(void **state) {
    (void)state;
    run_case(40, 31, 2, 16, 1, 1, 2.0f, 2, 1, 0);
    run_case(40, 40, 2, 16, 1, 1, 0.25f, 4, 0, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_against_loops),
        cmocka_unit_test(test_whole_rows_same_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
