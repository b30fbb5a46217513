/* test_attention.c: the one attention kernel (src/core/attention.c) against a
 * plain-loop double-precision reference: query rows split into blocks, padding and
 * causal masks (every visible count), temperature and no scaling, head slices of
 * wider Q, K, V, the head written with its own stride and as a band of Concat, and
 * both softmax spans. Then a layer's heads (attn_heads) as each forward sets them up:
 * the built-in model's (padding, temperature, each head its own block), the trainer's
 * (one scores slot, heads off), a loaded model's (only the rows from r0), and the
 * built-in model's forward bit for bit that path. Tolerance: |got - ref| <= 1e-5
 * (1 + |ref|) on scores, attn and head; hidden keys exactly -inf in scores and
 * exactly 0 in attn. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attention.h"
#include "blas.h"
#include "check.h"
#include "layer.h"
#include "mha.h"

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

/* A layer's heads as one forward sets them up: h heads of dk over T positions, each
   head's rows in blocks (rows from r0 only; the ones before must stay as they were),
   against the reference, head by head. out_own: each head its own (T, dk) block (the
   built-in model's), else its band of Concat; one_slot: the trainer's single scores
   slot (checked head by head as it is written); off: heads 1, 3, ... switched off. */
typedef struct {
    int T, n_real, h, dk, causal, whole_rows, one_slot, out_own, off, blocks, r0;
    float scale; /* 0: the default, 1 / sqrt(dk) */
} heads_case;

static void run_heads_case(const heads_case *c) {
    const int T = c->T, d = c->h * c->dk, dk = c->dk;
    const size_t tt = (size_t)T * T, nd = (size_t)T * d;
    float *q = malloc(sizeof(float) * nd), *k = malloc(sizeof(float) * nd),
          *v = malloc(sizeof(float) * nd), *out = malloc(sizeof(float) * nd);
    float *scores = malloc(sizeof(float) * tt * c->h), *attn = malloc(sizeof(float) * tt * c->h);
    double *rs = malloc(sizeof(double) * tt), *ra = malloc(sizeof(double) * tt),
           *rh = malloc(sizeof(double) * T * dk);
    unsigned char off[16] = {0};
    for (int j = 0; j < c->h; j++) off[j] = c->off && j % 2 == 1;
    for (size_t i = 0; i < nd; i++)
        q[i] = 2.0f * uniform(), k[i] = 2.0f * uniform(), v[i] = uniform(), out[i] = 7.0f;
    for (size_t i = 0; i < tt * c->h; i++) scores[i] = attn[i] = 7.0f; /* "not written" */
    const attn_heads a = {.scores = scores,
                          .attn = attn,
                          .concat = out,
                          .q = q,
                          .k = k,
                          .v = v,
                          .ablate = c->off ? off : NULL,
                          .T = T,
                          .ld = d,
                          .hd = dk,
                          .causal = c->causal,
                          .whole_rows = c->whole_rows,
                          .one_slot = c->one_slot,
                          .n_real = c->n_real,
                          .scale = c->scale,
                          .ld_concat = c->out_own ? dk : 0,
                          .head_stride = c->out_own ? (size_t)T * dk : 0};
    const double scale = c->scale != 0.0f ? c->scale : 1.0 / sqrt((double)dk);
    const int ld_out = c->out_own ? dk : d, rows = T - c->r0;
    char what[200];
    for (int j = 0; j < c->h; j++) {
        for (int b = 0; b < c->blocks; b++)
            attn_heads_rows(&a, j, c->r0 + rows * b / c->blocks,
                            c->r0 + rows * (b + 1) / c->blocks);
        const float *hs = scores + (c->one_slot ? 0 : (size_t)j * tt), *ha = attn + (size_t)j * tt;
        const float *ho = out + (c->out_own ? (size_t)j * T * dk : (size_t)j * dk);
        reference(rs, ra, rh, q + j * dk, k + j * dk, v + j * dk, d, T, dk,
                  c->n_real ? c->n_real : T, c->causal, scale);
        for (int r = 0; r < T; r++) {
            snprintf(what, sizeof what,
                     "T=%d n_real=%d h=%d causal=%d own=%d slot=%d r0=%d head %d row %d", T,
                     c->n_real, c->h, c->causal, c->out_own, c->one_slot, c->r0, j, r);
            if (r < c->r0) { /* rows before r0: untouched */
                CHECK_TRUE(what, hs[(size_t)r * T] == 7.0f && ha[(size_t)r * T] == 7.0f);
                CHECK_TRUE(what, ho[(size_t)r * ld_out] == 7.0f);
                continue;
            }
            for (int x = 0; x < T; x++) {
                const size_t i = (size_t)r * T + x;
                if (isinf(rs[i])) {
                    CHECK_TRUE(what, isinf(hs[i]) && hs[i] < 0 && ha[i] == 0.0f);
                } else {
                    CHECK_NEAR(what, rs[i], hs[i], TOL * (1 + fabs(rs[i])));
                    CHECK_NEAR(what, ra[i], ha[i], TOL * (1 + fabs(ra[i])));
                }
            }
            for (int x = 0; x < dk; x++) {
                const double want = off[j] && c->off ? 0.0 : rh[(size_t)r * dk + x];
                CHECK_NEAR(what, want, ho[(size_t)r * ld_out + x], TOL * (1 + fabs(want)));
            }
        }
    }
    free(q), free(k), free(v), free(out), free(scores), free(attn), free(rs), free(ra), free(rh);
}

static void test_heads_as_each_forward_runs_them(void **state) {
    (void)state;
    static const heads_case cases[] = {
        /* the built-in model's: padding, its scale (no 1 / sqrt(d_k), temperature 2),
           each head its own block, rows in blocks */
        {.T = 20,
         .n_real = 13,
         .h = 3,
         .dk = 8,
         .causal = 1,
         .out_own = 1,
         .blocks = 3,
         .scale = 0.5f},
        {.T = 37,
         .n_real = 37,
         .h = 2,
         .dk = 16,
         .causal = 0,
         .out_own = 1,
         .blocks = 2,
         .scale = 0.125f},
        {.T = 9, .n_real = 4, .h = 4, .dk = 4, .causal = 0, .out_own = 1, .blocks = 1},
        /* the trainer's: causal, one scores slot, heads off, bands of Concat */
        {.T = 24, .h = 4, .dk = 6, .causal = 1, .one_slot = 1, .off = 1, .blocks = 1},
        {.T = 70, .h = 2, .dk = 48, .causal = 1, .one_slot = 1, .blocks = 1},
        /* a loaded model's: whole rows, the rows from r0 only (the KV cache) */
        {.T = 40, .h = 3, .dk = 12, .causal = 1, .whole_rows = 1, .blocks = 1, .r0 = 29},
        {.T = 16, .h = 2, .dk = 8, .causal = 0, .whole_rows = 1, .blocks = 2, .off = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_heads_case(&cases[i]);
}

/* The built-in model's forward (mha.c) takes the heads' path, bit for bit: its
   scores, attn and heads are attn_heads_rows's on its own Q, K, V with its padding,
   mask and scale, on one worker and on two. */
static void test_builtin_forward_is_the_heads_path(void **state) {
    (void)state;
    tok_list toks = {0};
    char err[MHA_ERR_LEN];
    CHECK_INT("tok_split", 0,
              tok_split(&toks, "the cat sat on the mat and the dog sat too while a bird sang there",
                        0, NULL, err, sizeof err));
    static const struct {
        int h, d, causal, no_scale, pad;
        float temp;
    } cfgs[] = {{4, 64, 0, 0, 0, 0.0f},
                {8, 256, 1, 0, 24, 2.0f},
                {2, 512, 0, 1, 20, 0.5f},
                {16, 512, 1, 0, 0, 0.0f}};
    for (int workers = 1; workers <= 2; workers++) {
        mm_threads_force(workers);
        for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
            mha_config cfg = {.h = cfgs[c].h,
                              .d_model = cfgs[c].d,
                              .mask = cfgs[c].causal ? MHA_MASK_CAUSAL : MHA_MASK_NONE,
                              .no_scale = cfgs[c].no_scale,
                              .pad = cfgs[c].pad,
                              .temperature = cfgs[c].temp};
            mha_model *m = mha_model_create();
            CHECK_INT("mha_model_compute", 0, mha_model_compute(m, &cfg, &toks, err, sizeof err));
            const int n = m->n, h = m->cfg.h, dk = m->d_k;
            const size_t hnn = (size_t)h * n * n, hndk = (size_t)h * n * dk;
            float *scores = malloc(sizeof(float) * hnn), *attn = malloc(sizeof(float) * hnn),
                  *heads = malloc(sizeof(float) * hndk);
            const attn_heads a = {.scores = scores,
                                  .attn = attn,
                                  .concat = heads,
                                  .q = m->q,
                                  .k = m->k,
                                  .v = m->v,
                                  .T = n,
                                  .ld = m->cfg.d_model,
                                  .hd = dk,
                                  .causal = cfgs[c].causal,
                                  .n_real = m->n_real,
                                  .scale = attn_scale(dk, !cfgs[c].no_scale, cfgs[c].temp),
                                  .ld_concat = dk,
                                  .head_stride = (size_t)n * dk};
            for (int j = 0; j < h; j++) attention_head(&a, j);
            char what[120];
            snprintf(what, sizeof what, "h=%d d=%d causal=%d pad=%d workers=%d: scores", h,
                     m->cfg.d_model, cfgs[c].causal, cfgs[c].pad, workers);
            CHECK_TRUE(what, memcmp(scores, m->scores, sizeof(float) * hnn) == 0);
            CHECK_TRUE("attn, bit for bit", memcmp(attn, m->attn, sizeof(float) * hnn) == 0);
            CHECK_TRUE("heads, bit for bit", memcmp(heads, m->heads, sizeof(float) * hndk) == 0);
            free(scores), free(attn), free(heads);
            mha_model_destroy(m);
        }
    }
    mm_threads_force(0);
    tok_free(&toks);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_against_loops),
        cmocka_unit_test(test_whole_rows_same_keys),
        cmocka_unit_test(test_heads_as_each_forward_runs_them),
        cmocka_unit_test(test_builtin_forward_is_the_heads_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
