/* test_attention.c: the one attention kernel (src/core/attention.c) against a
 * plain-loop double-precision reference: query rows split into blocks, padding and
 * causal masks (every visible count), temperature and no scaling, head slices of
 * wider Q, K, V, the head written with its own stride and as a band of Concat, and
 * both softmax spans. Then a layer's heads (attn_heads) as each forward sets them up:
 * the built-in model's (padding, temperature, each head its own block), the trainer's
 * (one scores slot), a loaded model's (only the rows from r0), and the
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
#include "sublayer.h"

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
   slot (checked head by head as it is written). Heads off are the sublayer's (below). */
typedef struct {
    int T, n_real, h, dk, causal, whole_rows, one_slot, out_own, blocks, r0;
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
    for (size_t i = 0; i < nd; i++)
        q[i] = 2.0f * uniform(), k[i] = 2.0f * uniform(), v[i] = uniform(), out[i] = 7.0f;
    for (size_t i = 0; i < tt * c->h; i++) scores[i] = attn[i] = 7.0f; /* "not written" */
    const attn_heads a = {.scores = scores,
                          .attn = attn,
                          .concat = out,
                          .q = q,
                          .k = k,
                          .v = v,
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
                const double want = rh[(size_t)r * dk + x];
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
        /* the trainer's: causal, one scores slot, bands of Concat */
        {.T = 24, .h = 4, .dk = 6, .causal = 1, .one_slot = 1, .blocks = 1},
        {.T = 70, .h = 2, .dk = 48, .causal = 1, .one_slot = 1, .blocks = 1},
        /* a loaded model's: whole rows, the rows from r0 only (the KV cache) */
        {.T = 40, .h = 3, .dk = 12, .causal = 1, .whole_rows = 1, .blocks = 1, .r0 = 29},
        {.T = 16, .h = 2, .dk = 8, .causal = 0, .whole_rows = 1, .blocks = 2},
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
            for (int j = 0; j < h; j++) attn_heads_rows(&a, j, 0, n);
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

/* ---- the attention sublayer (sublayer.c): the layer step every forward takes ----
   Against loops in double over the whole layer: Q, K, V = X W + b (K/V heads shared
   by groups of queries), the caller's step on Q and K, the heads, out = resid +
   Concat W^O + b_o with the heads off removed (their bands of Concat exactly 0, their
   attention still computed), out_full with every head on, each head's own block; the
   rows before r0 of Q, K, V kept and X's rows there never read. */
typedef struct {
    int B, T, d_in, d_out, h, h_kv, hd, r0, all_rows, causal, n_real, bias, resid, full, step;
    int one_slot, chunks, workers, row_blocks;
    unsigned off; /* bit j: head j off */
    float scale;
} sub_case;

static void halve_q(void *ctx, float *q, float *k, int r0, int rows) {
    const int *qd = ctx;
    (void)k, (void)r0;
    for (size_t i = 0; i < (size_t)rows * qd[0]; i++) q[i] *= 0.5f;
}

static float *filled(size_t n, float scale) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = scale * uniform();
    return p;
}

/* out (rows, oc) = x (rows, c) w (c, oc) + b, in double */
static void ref_linear(double *out, const float *x, const float *w, const float *b, int rows, int c,
                       int oc) {
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < oc; o++) {
            double acc = b ? b[o] : 0.0;
            for (int i = 0; i < c; i++) acc += (double)x[(size_t)r * c + i] * w[(size_t)i * oc + o];
            out[(size_t)r * oc + o] = acc;
        }
}

/* concat and attn of example b (a reference's) from its Q, K, V in double */
static void ref_heads(double *concat, double *attn, const double *q, const double *k,
                      const double *v, const sub_case *c, double scale) {
    const int T = c->T, h = c->h, hd = c->hd, kv = c->h_kv ? c->h_kv : h, qd = h * hd,
              kvd = kv * hd, n_real = c->n_real ? c->n_real : T;
    double *row = malloc(sizeof(double) * T);
    for (int j = 0; j < h; j++) {
        const int g = j / (h / kv);
        for (int r = 0; r < T; r++) {
            const int vis = c->causal && r + 1 < n_real ? r + 1 : n_real;
            double max = -INFINITY, sum = 0.0;
            for (int x = 0; x < vis; x++) {
                double dot = 0.0;
                for (int e = 0; e < hd; e++)
                    dot += q[(size_t)r * qd + j * hd + e] * k[(size_t)x * kvd + g * hd + e];
                row[x] = dot * scale;
                max = row[x] > max ? row[x] : max;
            }
            for (int x = 0; x < vis; x++) sum += row[x] = exp(row[x] - max);
            for (int x = 0; x < T; x++)
                attn[((size_t)j * T + r) * T + x] = x < vis ? row[x] / sum : 0.0;
            for (int e = 0; e < hd; e++) {
                double acc = 0.0;
                for (int x = 0; x < vis; x++)
                    acc += attn[((size_t)j * T + r) * T + x] * v[(size_t)x * kvd + g * hd + e];
                concat[(size_t)r * qd + j * hd + e] = acc;
            }
        }
    }
    free(row);
}

static void check_near_all(const char *what, const double *want, const float *got, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK_NEAR(what, want[i], got[i], 1e-4 * (1 + fabs(want[i])));
}

/* The reference of example b: q, k, v (T, qd / kvd), concat with every head (T, qd),
   attn (h, T, T), out_full (T, d_out) and out (T, d_out, the heads off removed). */
typedef struct {
    double *q, *k, *v, *concat, *attn, *full, *out;
} sub_ref;

static void ref_example(sub_ref *R, const sub_case *c, const float *x, const float *const w[4],
                        const float *const bias[4], const float *resid, const unsigned char *off) {
    const int T = c->T, h = c->h, hd = c->hd, qd = h * hd, kvd = (c->h_kv ? c->h_kv : h) * hd;
    ref_linear(R->q, x, w[0], bias[0], T, c->d_in, qd);
    ref_linear(R->k, x, w[1], bias[1], T, c->d_in, kvd);
    ref_linear(R->v, x, w[2], bias[2], T, c->d_in, kvd);
    if (c->step)
        for (size_t i = 0; i < (size_t)T * qd; i++) R->q[i] *= 0.5;
    ref_heads(R->concat, R->attn, R->q, R->k, R->v, c, c->scale ? c->scale : 1.0 / sqrt(hd));
    double *cat = malloc(sizeof(double) * T * qd);
    float *catf = malloc(sizeof(float) * T * qd);
    for (int pass = 0; pass < 2; pass++) { /* 0: every head on; 1: the heads off zeroed */
        for (int r = 0; r < T; r++)
            for (int i = 0; i < qd; i++)
                catf[(size_t)r * qd + i] = pass && off && off[i / hd] ? 0.0f : 1.0f;
        double *o = pass ? R->out : R->full;
        for (int r = 0; r < T; r++)
            for (int oc = 0; oc < c->d_out; oc++) {
                double acc = bias[3] ? bias[3][oc] : 0.0;
                for (int i = 0; i < qd; i++)
                    acc += catf[(size_t)r * qd + i] * R->concat[(size_t)r * qd + i] *
                           w[3][(size_t)i * c->d_out + oc];
                o[(size_t)r * c->d_out + oc] = acc + (pass && resid ? resid[r * c->d_out + oc] : 0);
            }
    }
    free(cat), free(catf);
}

static void run_sub_case(const sub_case *c) {
    const int B = c->B, T = c->T, h = c->h, hd = c->hd, kv = c->h_kv ? c->h_kv : h;
    const int qd = h * hd, kvd = kv * hd, N = B * T, dout = c->d_out;
    float *x = filled((size_t)N * c->d_in, 1.0f), *x0 = malloc(sizeof(float) * N * c->d_in);
    memcpy(x0, x, sizeof(float) * N * c->d_in);
    const float *w[4] = {filled((size_t)c->d_in * qd, 0.6f), filled((size_t)c->d_in * kvd, 0.6f),
                         filled((size_t)c->d_in * kvd, 1.0f), filled((size_t)qd * dout, 0.5f)};
    const float *bias[4] = {c->bias ? filled(qd, 0.3f) : NULL, c->bias ? filled(kvd, 0.3f) : NULL,
                            c->bias ? filled(kvd, 0.3f) : NULL,
                            c->bias ? filled(dout, 0.3f) : NULL};
    float *resid = c->resid ? filled((size_t)N * dout, 1.0f) : NULL;
    float *q = filled((size_t)N * qd, 0), *k = filled((size_t)N * kvd, 0),
          *v = filled((size_t)N * kvd, 0), *kx = filled((size_t)T * qd, 0),
          *vx = filled((size_t)T * qd, 0), *concat = filled((size_t)N * qd, 0),
          *heads = filled((size_t)h * T * hd, 0), *out = filled((size_t)N * dout, 0),
          *full = filled((size_t)N * dout, 0), *scores = filled((size_t)B * h * T * T, 0),
          *attn = filled((size_t)B * h * T * T, 0);
    unsigned char off[32] = {0};
    for (int j = 0; j < h; j++) off[j] = (c->off >> j) & 1u;
    const int step_ctx[1] = {qd};
    attn_sublayer s = {.w_q = w[0],
                       .w_k = w[1],
                       .w_v = w[2],
                       .w_o = w[3],
                       .b_q = bias[0],
                       .b_k = bias[1],
                       .b_v = bias[2],
                       .b_o = bias[3],
                       .d_in = c->d_in,
                       .d_out = dout,
                       .h = h,
                       .h_kv = c->h_kv,
                       .hd = hd,
                       .B = B,
                       .T = T,
                       .all_rows = c->all_rows,
                       .x = x,
                       .q = q,
                       .k = k,
                       .v = v,
                       .kx = kx,
                       .vx = vx,
                       .scores = scores,
                       .attn = attn,
                       .concat = concat,
                       .heads = B == 1 ? heads : NULL,
                       .out = out,
                       .resid = resid,
                       .out_full = c->full ? full : NULL,
                       .off = c->off ? off : NULL,
                       .causal = c->causal,
                       .n_real = c->n_real,
                       .one_slot = c->one_slot,
                       .scale = c->scale,
                       .qk_step = c->step ? halve_q : NULL,
                       .qk_ctx = (void *)step_ctx,
                       .workers = c->workers,
                       .chunks = c->chunks,
                       .row_blocks = c->row_blocks};
    if (c->r0 > 0) { /* the rows before r0 made first, then X there spoilt: never read */
        attn_sublayer_forward(&s);
        for (size_t i = 0; i < (size_t)c->r0 * c->d_in; i++) x[i] = NAN;
        memset(out + (size_t)c->r0 * dout, 0, sizeof(float) * (N - c->r0) * dout);
        s.r0 = c->r0;
    }
    attn_sublayer_forward(&s);

    sub_ref R = {malloc(sizeof(double) * T * qd),    malloc(sizeof(double) * T * kvd),
                 malloc(sizeof(double) * T * kvd),   malloc(sizeof(double) * T * qd),
                 malloc(sizeof(double) * h * T * T), malloc(sizeof(double) * T * dout),
                 malloc(sizeof(double) * T * dout)};
    char what[160];
    for (int b = 0; b < B; b++) {
        const size_t rows = (size_t)b * T, tt = (size_t)T * T;
        ref_example(&R, c, x0 + rows * c->d_in, w, bias, resid ? resid + rows * dout : NULL,
                    c->off ? off : NULL);
        snprintf(what, sizeof what, "sublayer B=%d T=%d h=%d h_kv=%d r0=%d off=%x: example %d", B,
                 T, h, kv, c->r0, c->off, b);
        check_near_all(what, R.q, q + rows * qd, (size_t)T * qd);
        check_near_all(what, R.k, k + rows * kvd, (size_t)T * kvd);
        check_near_all(what, R.v, v + rows * kvd, (size_t)T * kvd);
        if (!c->one_slot) /* every head's attention, the heads off too */
            check_near_all(what, R.attn, attn + (size_t)b * h * tt, (size_t)h * tt);
        check_near_all(what, R.out, out + rows * dout, (size_t)T * dout);
        if (c->full) check_near_all(what, R.full, full + rows * dout, (size_t)T * dout);
        for (int r = 0; r < T; r++)
            for (int i = 0; i < qd; i++) {
                const float got = concat[(rows + r) * qd + i];
                if (c->off && off[i / hd])
                    CHECK_TRUE("a head off: its band of Concat exactly 0", got == 0.0f);
                else
                    CHECK_NEAR(what, R.concat[(size_t)r * qd + i], got,
                               1e-4 * (1 + fabs(R.concat[(size_t)r * qd + i])));
                if (B == 1) /* each head's own block keeps it, off or on */
                    CHECK_NEAR(what, R.concat[(size_t)r * qd + i],
                               heads[((size_t)(i / hd) * T + r) * hd + i % hd],
                               1e-4 * (1 + fabs(R.concat[(size_t)r * qd + i])));
            }
    }
    free(R.q), free(R.k), free(R.v), free(R.concat), free(R.attn), free(R.full), free(R.out);
    for (int i = 0; i < 4; i++) free((void *)w[i]), free((void *)bias[i]);
    free(x), free(x0), free(resid), free(q), free(k), free(v), free(kx), free(vx), free(concat);
    free(heads), free(out), free(full), free(scores), free(attn);
}

static void test_sublayer_against_loops(void **state) {
    (void)state;
    static const sub_case cases[] = {
        /* the trainer's: examples side by side, biases, one scores slot, a head off,
           W^O added into the residual stream */
        {.B = 3,
         .T = 10,
         .d_in = 24,
         .d_out = 24,
         .h = 4,
         .hd = 6,
         .causal = 1,
         .bias = 1,
         .resid = 1,
         .one_slot = 1,
         .off = 0x2},
        /* the trace's: every head on kept in out_full, heads off */
        {.B = 1,
         .T = 11,
         .d_in = 16,
         .d_out = 16,
         .h = 4,
         .hd = 4,
         .causal = 1,
         .bias = 1,
         .full = 1,
         .off = 0x9},
        /* a loaded model's: grouped K/V, its step on Q and K, the rows from r0 (the KV
           cache), d_out != h hd, heads off with out_full */
        {.B = 1,
         .T = 12,
         .d_in = 20,
         .d_out = 18,
         .h = 6,
         .h_kv = 2,
         .hd = 4,
         .causal = 1,
         .bias = 1,
         .step = 1,
         .r0 = 7,
         .full = 1,
         .off = 0x11,
         .workers = 2},
        {.B = 1, .T = 9, .d_in = 12, .d_out = 12, .h = 3, .h_kv = 1, .hd = 4, .bias = 1, .full = 1},
        /* the built-in model's: padding, its scale, new rows of Q, K, V from r0 but the
           heads over every row, by column chunks and row blocks on 2 workers, or by
           groups of heads */
        {.B = 1,
         .T = 9,
         .d_in = 32,
         .d_out = 32,
         .h = 4,
         .hd = 8,
         .n_real = 6,
         .scale = 0.3f,
         .r0 = 4,
         .all_rows = 1,
         .full = 1,
         .off = 0x4,
         .workers = 2,
         .chunks = 6,
         .row_blocks = 2},
        {.B = 1,
         .T = 8,
         .d_in = 32,
         .d_out = 32,
         .h = 4,
         .hd = 8,
         .causal = 1,
         .full = 1,
         .workers = 2,
         .chunks = 2,
         .off = 0x1},
        {.B = 1, .T = 8, .d_in = 32, .d_out = 32, .h = 4, .hd = 8, .full = 1, .chunks = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_sub_case(&cases[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_against_loops),
        cmocka_unit_test(test_whole_rows_same_keys),
        cmocka_unit_test(test_heads_as_each_forward_runs_them),
        cmocka_unit_test(test_builtin_forward_is_the_heads_path),
        cmocka_unit_test(test_sublayer_against_loops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
