/* test_stats.c: the heads' statistics (src/core/stats.c) against a plain double
 * reference written here another way: entropy from its definition, the
 * Jensen-Shannon divergence through the entropy identity JS = H(mid) - (H(p) +
 * H(q)) / 2, raw scores and a head's share of MultiHead by triple loops; and the
 * shares of the heads that are on add up to MultiHead. Tolerances are stated. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "mha.h"
#include "stats.h"
#include "tok.h"

static mha_layer_text g_text; /* the layers' texts (one layer at a time) */

static double entropy_bits(const double *p, int n) {
    double h = 0.0;
    for (int k = 0; k < n; k++)
        if (p[k] > 0.0) h += p[k] * -log(p[k]) / log(2.0);
    return h;
}

static void model(mha_model *m, tok_list *t, const char *text, int h, int d, int mask, int pad,
                  int patterns) {
    int total;
    char err[256];
    assert_int_equal(tok_split(t, text, MHA_MAX_N, &total, err, sizeof err), 0);
    mha_config cfg = {.h = h, .d_model = d, .seed = 3, .mask = mask, .pad = pad};
    if (patterns) cfg.weights = MHA_WEIGHTS_PATTERNS;
    if (mha_model_compute(m, &cfg, t, err, sizeof err) != 0) fail_msg("%s", err);
}

/* The layer the statistics read: the model as mha_layer_fill describes it. */
static attn_layer layer_of(const mha_model *m, const tok_list *t) {
    attn_layer L;
    mha_layer_fill(&L, &g_text, m, t);
    return L;
}

static const char *TEXT = "the cat sat on the mat because the cat was tired and the mat was warm";

static void test_entropy_and_divergence(void **st) {
    (void)st;
    static const int shapes[][5] = {{4, 64, 0, 0, 0},
                                    {8, 64, 1, 0, 0},
                                    {6, 96, 1, 20, 1},
                                    {3, 24, 0, 18, 0},
                                    {16, 128, 0, 0, 1}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        mha_model *m = mha_model_create();
        tok_list t = {0};
        const int *sh = shapes[si];
        model(m, &t, TEXT, sh[0], sh[1], sh[2], sh[3], sh[4]);
        const int h = m->cfg.h, n = m->n, rows = m->n_real;
        float *ent = malloc(sizeof(float) * h), *js = malloc(sizeof(float) * h * h);
        double *p = malloc(sizeof(double) * n), *q = malloc(sizeof(double) * n),
               *mid = malloc(sizeof(double) * n);
        const attn_layer L = layer_of(m, &t);
        attn_head_entropy(ent, &L);
        attn_head_divergence(js, &L, 1);
        for (int i = 0; i < h; i++) {
            double want = 0.0;
            for (int r = 0; r < rows; r++) {
                for (int k = 0; k < n; k++) p[k] = m->attn[((size_t)i * n + r) * n + k];
                want += entropy_bits(p, n);
            }
            want /= rows;
            CHECK_NEAR("entropy (bits, tol 1e-5)", want, ent[i], 1e-5);
            CHECK_TRUE("entropy within [0, log2 n]", ent[i] >= 0.0f && ent[i] <= log2(n) + 1e-5);
            for (int j = 0; j < h; j++) {
                double w = 0.0;
                for (int r = 0; r < rows; r++) {
                    for (int k = 0; k < n; k++) {
                        p[k] = m->attn[((size_t)i * n + r) * n + k];
                        q[k] = m->attn[((size_t)j * n + r) * n + k];
                        mid[k] = 0.5 * (p[k] + q[k]);
                    }
                    w += entropy_bits(mid, n) - 0.5 * (entropy_bits(p, n) + entropy_bits(q, n));
                }
                w /= rows;
                CHECK_NEAR("JS divergence (bits, tol 1e-5)", w, js[(size_t)i * h + j], 1e-5);
                CHECK_TRUE("JS within [0, 1]",
                           js[(size_t)i * h + j] >= 0.0f && js[(size_t)i * h + j] <= 1.0f + 1e-6f);
            }
        }
        free(ent), free(js), free(p), free(q), free(mid);
        tok_free(&t);
        mha_model_destroy(m);
    }
}

/* The title's "of X bits": the most the mean row entropy can be. A broad designed
   head (W^Q = W^K = 0) is uniform over the keys each row may see, so it reads
   exactly that most; the reference counts each row's unmasked keys in the scores. */
static void test_entropy_max_under_masks(void **st) {
    (void)st;
    static const int cases[][2] = {{0, 0}, {1, 0}, {0, 20}, {1, 20}, {1, 16}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        mha_model *m = mha_model_create();
        tok_list t = {0};
        model(m, &t, TEXT, 6, 96, cases[ci][0], cases[ci][1], 1);
        const int n = m->n, rows = m->n_real;
        const attn_layer L = layer_of(m, &t);
        double want = 0.0;
        for (int r = 0; r < rows; r++) {
            int seen = 0;
            for (int k = 0; k < n; k++) seen += isfinite(m->scores[(size_t)r * n + k]) != 0;
            want += log2((double)seen);
        }
        want /= rows;
        const double most = attn_entropy_max(&L);
        CHECK_NEAR("the most: mean log2 of the keys each row sees (tol 1e-9)", want, most, 1e-9);
        float ent[6];
        attn_head_entropy(ent, &L);
        CHECK_TRUE("head 6 is broad", mha_head_pattern(&m->cfg, 5) == MHA_PATTERN_BROAD);
        CHECK_NEAR("a uniform head reads the most (bits, tol 1e-4)", most, ent[5], 1e-4);
        for (int i = 0; i < 6; i++) CHECK_TRUE("no head above the most", ent[i] <= most + 1e-4);
        if (cases[ci][0])
            CHECK_TRUE("under the causal mask the most is below log2 n_real",
                       most < log2((double)rows) - 0.5);
        tok_free(&t);
        mha_model_destroy(m);
    }
}

static void test_designed_heads_read_as_designed(void **st) {
    (void)st;
    /* designed heads: one-key heads are sharp (low entropy), broad is near log2 n,
       and two heads with the same pattern (h = 12 cycles six) barely differ */
    mha_model *m = mha_model_create();
    tok_list t = {0};
    model(m, &t, TEXT, 12, 384, 0, 0, 1);
    float ent[12], js[144];
    const attn_layer L = layer_of(m, &t);
    attn_head_entropy(ent, &L);
    attn_head_divergence(js, &L, 1);
    double logn = log2(m->n);
    for (int i = 0; i < 12; i++) {
        mha_pattern p = mha_head_pattern(&m->cfg, i);
        if (p == MHA_PATTERN_BROAD)
            CHECK_NEAR("broad head: entropy near log2 n", logn, ent[i], 0.05);
        else if (p != MHA_PATTERN_SAME_WORD)
            CHECK_TRUE("one-key head: entropy under 0.5 bit", ent[i] < 0.5f);
    }
    CHECK_TRUE("same pattern, near-identical rows", js[0 * 12 + 6] < 0.05f);
    CHECK_TRUE("previous vs next: far apart", js[0 * 12 + 1] > 0.8f);
    tok_free(&t);
    mha_model_destroy(m);
}

static void test_head_products(void **st) {
    (void)st;
    mha_model *m = mha_model_create();
    tok_list t = {0};
    model(m, &t, TEXT, 4, 32, 1, 18, 0);
    const int n = m->n, d = m->cfg.d_model, dk = m->d_k, h = m->cfg.h;
    float *s = malloc(sizeof(float) * n * n), *o = malloc(sizeof(float) * n * d);
    double *sum = calloc((size_t)n * d, sizeof(double));
    const attn_layer L = layer_of(m, &t);
    for (int i = 0; i < h; i++) {
        attn_head_raw_scores(s, &L, i);
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) {
                double want = 0.0;
                for (int k = 0; k < dk; k++)
                    want += (double)m->q[(size_t)r * d + i * dk + k] *
                            (double)m->k[(size_t)c * d + i * dk + k];
                CHECK_NEAR("raw score (tol 1e-4 rel)", want, s[(size_t)r * n + c],
                           1e-4 * (1.0 + fabs(want)));
            }
        attn_head_output(o, &L, i);
        for (int r = 0; r < n; r++)
            for (int c = 0; c < d; c++) {
                double want = 0.0;
                for (int k = 0; k < dk; k++)
                    want += (double)m->heads[((size_t)i * n + r) * dk + k] *
                            (double)m->w_o[((size_t)i * dk + k) * d + c];
                CHECK_NEAR("head share of MultiHead (tol 1e-5 + 1e-4 rel)", want,
                           o[(size_t)r * d + c], 1e-5 + 1e-4 * fabs(want));
                sum[(size_t)r * d + c] += o[(size_t)r * d + c];
            }
    }
    for (size_t k = 0; k < (size_t)n * d; k++)
        CHECK_NEAR("the shares add up to MultiHead (tol 1e-4)", m->out[k], sum[k], 1e-4);
    free(s), free(o), free(sum);
    tok_free(&t);
    mha_model_destroy(m);
}

/* What the heads pass on: attn_head_contrib against a plain double loop over the
   same rows (head_i W^O_i written out), and each head's change against the core's
   own ablation (head i switched off, mha_ablation_delta) at row step 1. Over
   several shapes, masks, temperatures and seeds. */
static void test_head_contributions(void **st) {
    (void)st;
    static const struct {
        int h, d, mask, pad, step;
        float temp;
    } cases[] = {{4, 32, 0, 0, 1, 1.0f}, {4, 64, 1, 18, 1, 20.0f}, {8, 64, 0, 20, 1, 1.0f},
                 {2, 16, 0, 0, 3, 0.5f}, {16, 64, 1, 0, 2, 1.0f},  {1, 32, 0, 0, 1, 1.0f}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        mha_model *m = mha_model_create();
        tok_list t = {0};
        int total;
        char err[256];
        assert_int_equal(tok_split(&t, TEXT, MHA_MAX_N, &total, err, sizeof err), 0);
        mha_config cfg = {.h = cases[ci].h,
                          .d_model = cases[ci].d,
                          .seed = 5 + (uint64_t)ci,
                          .mask = cases[ci].mask,
                          .pad = cases[ci].pad,
                          .temperature = cases[ci].temp};
        if (mha_model_compute(m, &cfg, &t, err, sizeof err) != 0) fail_msg("%s", err);
        const int n = m->n, d = m->cfg.d_model, dk = m->d_k, h = m->cfg.h, step = cases[ci].step;
        const attn_layer L = layer_of(m, &t);
        float cosv[16 * 16], change[16];
        assert_int_equal(attn_head_contrib(cosv, change, &L, step), 0);
        /* the reference: C_i over rows 0, step, ... in double */
        int used = 0;
        for (int r = 0; r < n; r += step) used++;
        double *c = calloc((size_t)h * used * d, sizeof(double));
        for (int i = 0; i < h; i++)
            for (int r = 0, u = 0; r < n; r += step, u++)
                for (int col = 0; col < d; col++) {
                    double v = 0.0;
                    for (int k = 0; k < dk; k++)
                        v += (double)m->heads[((size_t)i * n + r) * dk + k] *
                             (double)m->w_o[((size_t)i * dk + k) * d + col];
                    c[((size_t)i * used + u) * d + col] = v;
                }
        double full = 0.0;
        for (int r = 0; r < n; r += step)
            for (int col = 0; col < d; col++)
                full += (double)m->out_full[(size_t)r * d + col] * m->out_full[(size_t)r * d + col];
        for (int i = 0; i < h; i++) {
            double ni = 0.0;
            for (size_t k = 0; k < (size_t)used * d; k++)
                ni += c[(size_t)i * used * d + k] * c[(size_t)i * used * d + k];
            CHECK_NEAR("change = |C_i| / |MultiHead| (tol 1e-4 rel)", sqrt(ni / full), change[i],
                       1e-4 * (1.0 + sqrt(ni / full)));
            for (int j = 0; j < h; j++) {
                double nj = 0.0, dot = 0.0;
                for (size_t k = 0; k < (size_t)used * d; k++) {
                    nj += c[(size_t)j * used * d + k] * c[(size_t)j * used * d + k];
                    dot += c[(size_t)i * used * d + k] * c[(size_t)j * used * d + k];
                }
                CHECK_NEAR("cos of C_i and C_j (tol 1e-4)", dot / sqrt(ni * nj),
                           cosv[(size_t)i * h + j], 1e-4);
            }
            if (step == 1) { /* the same number the ablation measures with head i off */
                mha_config off = m->cfg;
                mha_config_set_ablated(&off, i, 1);
                mha_model *a = mha_model_create();
                if (mha_model_compute(a, &off, &t, err, sizeof err) != 0) fail_msg("%s", err);
                CHECK_NEAR("change = the ablation's delta with that head off (tol 1e-4 rel)",
                           mha_ablation_delta(a), change[i], 1e-4 * (1.0 + change[i]));
                mha_model_destroy(a);
            }
        }
        free(c);
        tok_free(&t);
        mha_model_destroy(m);
    }
}

/* The baseline of 1 - JS (attn_alike_baseline), on hand-made layers whose answer is
   known without shuffling: heads uniform over the keys a row sees read 1 against any
   shuffle (lo = hi = 1, with the causal mask too); heads each on one key (a different
   one per head and row) read 1 - JS = P(the shuffle puts the other head's key on this
   head's key) = 1 / n for a shuffle over n keys, so the mean of the draws is near it;
   two calls give the same numbers. */
static void test_alike_baseline(void **st) {
    (void)st;
    enum { H = 4, N = 8 };
    static float attn[H * N * N];
    for (int mask = 0; mask < 2; mask++) { /* uniform rows */
        attn_layer L;
        attn_layer_init(&L, N, N, H, 64, mask ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE, 1, 1.0f);
        for (int i = 0; i < H; i++)
            for (int r = 0; r < N; r++)
                for (int k = 0; k < N; k++)
                    attn[((size_t)i * N + r) * N + k] =
                        mask && k > r ? 0.0f : 1.0f / (float)(mask ? r + 1 : N);
        L.attn = attn;
        float lo = 0, hi = 0;
        assert_int_equal(attn_alike_baseline(&lo, &hi, &L, 1), 0);
        CHECK_NEAR("uniform heads: baseline low 1", 1.0, lo, 1e-5);
        CHECK_NEAR("uniform heads: baseline high 1", 1.0, hi, 1e-5);
    }
    attn_layer L; /* one-hot rows, no mask: head i row r on key (r + i) mod N */
    attn_layer_init(&L, N, N, H, 64, ATTN_MASK_NONE, 1, 1.0f);
    memset(attn, 0, sizeof attn);
    for (int i = 0; i < H; i++)
        for (int r = 0; r < N; r++) attn[((size_t)i * N + r) * N + (r + i) % N] = 1.0f;
    L.attn = attn;
    float lo = 0, hi = 0, lo2 = 0, hi2 = 0;
    assert_int_equal(attn_alike_baseline(&lo, &hi, &L, 1), 0);
    /* mean of 16 draws a row over 8 rows: 128 Bernoulli(1/8), sd 0.03 */
    CHECK_TRUE("one-hot heads: baseline near 1/n (within 0.1)",
               fabs(lo - 1.0 / N) < 0.1 && fabs(hi - 1.0 / N) < 0.1);
    CHECK_TRUE("baseline lo <= hi", lo <= hi);
    assert_int_equal(attn_alike_baseline(&lo2, &hi2, &L, 1), 0);
    CHECK_TRUE("baseline: the same numbers twice", lo == lo2 && hi == hi2);
    attn_layer one; /* one head: nothing to pair */
    attn_layer_init(&one, N, N, 1, 64, ATTN_MASK_NONE, 1, 1.0f);
    one.attn = attn;
    assert_int_equal(attn_alike_baseline(&lo, &hi, &one, 1), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entropy_and_divergence),
        cmocka_unit_test(test_entropy_max_under_masks),
        cmocka_unit_test(test_designed_heads_read_as_designed),
        cmocka_unit_test(test_head_products),
        cmocka_unit_test(test_head_contributions),
        cmocka_unit_test(test_alike_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
