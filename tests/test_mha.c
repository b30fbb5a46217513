/* test_mha.c: the multi-head attention core against an independent naive
 * reference (plain loops in double, written here from the paper's formulas),
 * plus the invariants: row sums, causal zeros, determinism, re-split
 * invariance, embeddings, softmax stability, limits, allocation, Glorot; and
 * temperature, the padding mask, head ablation and the designed heads. Every
 * reference case runs twice: as the environment sets OpenBLAS (one thread in
 * CTest) and on two workers of mm_parallel, whose task split is checked too. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "blas.h"
#include "check.h"
#include "mha.h"
#include "softmax.h"
#include "tok.h"

/* ------------------------------------------------------------------------------ */
/* tokens built by hand (no tokenizer involved)                                    */

static const char *const WORDS[] = {"the", "cat", "sat",   "on", "a",   "mat",    "and",
                                    "it",  "was", "tired", ".",  "dog", "Zürich", "東"};
#define NWORDS ((int)(sizeof WORDS / sizeof WORDS[0]))

typedef struct {
    tok_list t;
    char **store;
} hand_toks;

/* n tokens cycling through WORDS with a stride that makes repeats */
static void make_toks(hand_toks *ht, int n, int offset) {
    ht->store = calloc((size_t)(n ? n : 1), sizeof(char *));
    assert_non_null(ht->store);
    for (int i = 0; i < n; i++) {
        const char *w = WORDS[(i * 5 + offset) % NWORDS];
        ht->store[i] = malloc(strlen(w) + 1);
        assert_non_null(ht->store[i]);
        strcpy(ht->store[i], w);
    }
    ht->t.count = n;
    ht->t.tokens = ht->store;
    ht->t.replaced = 0;
}

static void free_toks(hand_toks *ht) {
    for (int i = 0; i < ht->t.count; i++) free(ht->store[i]);
    free(ht->store);
    ht->store = NULL;
    ht->t.count = 0;
}

/* ------------------------------------------------------------------------------ */
/* the naive reference, double precision                                          */

typedef struct {
    int n, d, h, dk;
    double *q, *k, *v; /* (n, d) */
    double *s;         /* (h, n, n), -inf where masked */
    double *a;         /* (h, n, n) */
    double *heads;     /* (h, n, dk) */
    double *concat;    /* (n, d), ablated bands zero */
    double *out;       /* (n, d) = concat W_O */
    double *out_full;  /* (n, d) = the unablated Concat W_O */
} ref_t;

/* What the reference applies beyond the paper's formula, written out here from
 * the README: a padding mask on keys >= n_real (every row), the causal mask, the
 * 1/sqrt(d_k) scaling, the temperature, and ablation (bit i: head i's band of
 * Concat is zero before W_O). */
typedef struct {
    int causal, no_scale;
    int n_real;         /* 0: every position is real */
    double temperature; /* 0: 1 */
    uint64_t ablate;    /* heads 0..63 */
} ref_opts;

static double *dalloc(size_t count) {
    double *p = calloc(count ? count : 1, sizeof(double));
    assert_non_null(p);
    return p;
}

/* y (n, d) = x (n, d) w (d, d) */
static void ref_matmul(double *y, const float *x, const float *w, int n, int d) {
    for (int r = 0; r < n; r++)
        for (int c = 0; c < d; c++) {
            double acc = 0.0;
            for (int k = 0; k < d; k++)
                acc += (double)x[(size_t)r * d + k] * (double)w[(size_t)k * d + c];
            y[(size_t)r * d + c] = acc;
        }
}

/* (n, d) = c (n, d) W_O (d, d) */
static void ref_times_w_o(double *y, const double *c, const float *w_o, int n, int d) {
    for (int qi = 0; qi < n; qi++)
        for (int cc = 0; cc < d; cc++) {
            double acc = 0.0;
            for (int k = 0; k < d; k++)
                acc += c[(size_t)qi * d + k] * (double)w_o[(size_t)k * d + cc];
            y[(size_t)qi * d + cc] = acc;
        }
}

static void ref_forward_opts(ref_t *r, const mha_model *m, int h, const ref_opts *o) {
    const int n = m->n, d = m->cfg.d_model, dk = d / h;
    const int n_real = o->n_real ? o->n_real : n;
    r->n = n, r->d = d, r->h = h, r->dk = dk;
    size_t nd = (size_t)n * d, hnn = (size_t)h * n * n;
    r->q = dalloc(nd), r->k = dalloc(nd), r->v = dalloc(nd);
    r->s = dalloc(hnn), r->a = dalloc(hnn), r->heads = dalloc(nd);
    r->concat = dalloc(nd), r->out = dalloc(nd), r->out_full = dalloc(nd);
    double *concat_full = dalloc(nd);

    ref_matmul(r->q, m->x, m->w_q, n, d);
    ref_matmul(r->k, m->x, m->w_k, n, d);
    ref_matmul(r->v, m->x, m->w_v, n, d);

    const double temp = o->temperature > 0.0 ? o->temperature : 1.0;
    const double scale = (o->no_scale ? 1.0 : 1.0 / sqrt((double)dk)) / temp;
    for (int i = 0; i < h; i++) {
        double *s = r->s + (size_t)i * n * n, *a = r->a + (size_t)i * n * n;
        for (int qi = 0; qi < n; qi++) {
            for (int kj = 0; kj < n; kj++) {
                if ((o->causal && kj > qi) || kj >= n_real) {
                    s[(size_t)qi * n + kj] = -INFINITY;
                    continue;
                }
                double acc = 0.0;
                for (int c = 0; c < dk; c++)
                    acc += r->q[(size_t)qi * d + i * dk + c] * r->k[(size_t)kj * d + i * dk + c];
                s[(size_t)qi * n + kj] = acc * scale;
            }
            double mx = -INFINITY;
            for (int kj = 0; kj < n; kj++) mx = fmax(mx, s[(size_t)qi * n + kj]);
            double sum = 0.0;
            for (int kj = 0; kj < n; kj++) {
                double sv = s[(size_t)qi * n + kj];
                double e = isinf(sv) ? 0.0 : exp(sv - mx);
                a[(size_t)qi * n + kj] = e;
                sum += e;
            }
            for (int kj = 0; kj < n; kj++) a[(size_t)qi * n + kj] /= sum;
        }
        /* head_i = A_i V_i */
        const int off = i < 64 && ((o->ablate >> i) & 1u);
        for (int qi = 0; qi < n; qi++)
            for (int c = 0; c < dk; c++) {
                double acc = 0.0;
                for (int kj = 0; kj < n; kj++)
                    acc += a[(size_t)qi * n + kj] * r->v[(size_t)kj * d + i * dk + c];
                r->heads[((size_t)i * n + qi) * dk + c] = acc;
                concat_full[(size_t)qi * d + i * dk + c] = acc;
                r->concat[(size_t)qi * d + i * dk + c] = off ? 0.0 : acc;
            }
    }
    ref_times_w_o(r->out, r->concat, m->w_o, n, d);
    ref_times_w_o(r->out_full, concat_full, m->w_o, n, d);
    free(concat_full);
}

static void ref_forward(ref_t *r, const mha_model *m, int h, int causal, int no_scale) {
    const ref_opts o = {.causal = causal, .no_scale = no_scale};
    ref_forward_opts(r, m, h, &o);
}

static void ref_free(ref_t *r) {
    free(r->q), free(r->k), free(r->v), free(r->s), free(r->a);
    free(r->heads), free(r->concat), free(r->out), free(r->out_full);
}

static double max_abs_d(const double *a, size_t count) {
    double mx = 0.0;
    for (size_t i = 0; i < count; i++)
        if (isfinite(a[i])) mx = fmax(mx, fabs(a[i]));
    return mx;
}

/* max |got - ref| over count entries must be <= tol; names the first worst index */
static void check_close(const char *what, const double *ref, const float *got, size_t count,
                        double tol) {
    double worst = 0.0;
    size_t wi = 0;
    for (size_t i = 0; i < count; i++) {
        double diff = fabs((double)got[i] - ref[i]);
        if (isnan(diff)) diff = INFINITY; /* NaN is the worst possible difference */
        if (diff > worst) worst = diff, wi = i;
    }
    if (count && !(worst <= tol))
        fail_msg("%s[%zu]: expected %.9g, got %.9g (max |diff| %.3g > tol %.3g)", what, wi, ref[wi],
                 (double)got[wi], worst, tol);
}

/* ------------------------------------------------------------------------------ */
/* 20+ configurations against the reference                                       */

typedef struct {
    int n, d, h, causal, no_scale;
    uint64_t seed;
    char name[96];
} mcase;

static mcase CASES[] = {
    {1, 64, 4, 0, 0, 0, ""},  /* n = 1 */
    {1, 1, 1, 0, 0, 1, ""},   /* smallest everything */
    {12, 64, 1, 0, 0, 1, ""}, /* h = 1 */
    {12, 64, 2, 0, 0, 1, ""},
    {12, 64, 4, 0, 0, 1, ""},
    {12, 64, 8, 0, 0, 1, ""},
    {12, 64, 64, 0, 0, 1, ""}, /* h = d_model, d_k = 1 */
    {12, 64, 4, 1, 0, 1, ""},  /* causal */
    {12, 64, 4, 0, 1, 1, ""},  /* unscaled */
    {12, 64, 4, 1, 1, 1, ""},  /* causal and unscaled */
    {7, 6, 3, 0, 0, 1, ""},    /* odd-ish d_model */
    {7, 7, 7, 0, 0, 1, ""},    /* odd d_model, h = d_model */
    {5, 7, 1, 1, 0, 9, ""},    /* odd d_model, one head */
    {9, 48, 3, 0, 0, 2, ""},
    {64, 128, 8, 0, 0, 1, ""}, /* larger */
    {64, 128, 8, 1, 0, 5, ""},
    {33, 96, 12, 0, 0, 42, ""},
    {2, 2, 2, 0, 0, 1, ""},
    {1, 8, 8, 1, 0, 1, ""}, /* n = 1 causal */
    {100, 32, 4, 0, 1, 7, ""},
    {512, 64, 4, 1, 0, 1, ""}, /* n at the limit */
    {16, 256, 16, 0, 0, 3, ""},
    {3, 5, 5, 0, 1, 11, ""},
    {20, 10, 2, 1, 0, 123456789, ""},
    {13, 1, 1, 1, 1, 1, ""}, /* d_model = 1 */
    {40, 60, 5, 0, 0, UINT64_C(18446744073709551615), ""},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

static void test_against_reference(void **state) {
    const mcase *c = *state;
    hand_toks ht;
    make_toks(&ht, c->n, c->d);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = c->h,
                      .d_model = c->d,
                      .seed = c->seed,
                      .mask = c->causal ? MHA_MASK_CAUSAL : MHA_MASK_NONE,
                      .no_scale = c->no_scale};
    char err[MHA_ERR_LEN] = "";
    int rc = mha_model_compute(m, &cfg, &ht.t, err, sizeof err);
    if (rc != 0) fail_msg("mha_model_compute: expected 0, got %d (%s)", rc, err);

    const int n = c->n, d = c->d, h = c->h, dk = d / h;
    CHECK_INT("m->n", n, m->n);
    CHECK_INT("m->d_k", dk, m->d_k);
    CHECK_INT("m->cfg.h", h, m->cfg.h);
    CHECK_INT("m->cfg.d_model", d, m->cfg.d_model);
    CHECK_INT("m->cfg.seed", c->seed ? c->seed : MHA_DEFAULT_SEED, m->cfg.seed);

    ref_t r;
    ref_forward(&r, m, h, c->causal, c->no_scale);
    const size_t nd = (size_t)n * d, hnn = (size_t)h * n * n;

    /* Q, K, V: relative to their largest entry */
    check_close("Q", r.q, m->q, nd, 1e-5 * fmax(1.0, max_abs_d(r.q, nd)));
    check_close("K", r.k, m->k, nd, 1e-5 * fmax(1.0, max_abs_d(r.k, nd)));
    check_close("V", r.v, m->v, nd, 1e-5 * fmax(1.0, max_abs_d(r.v, nd)));

    /* scores: masked entries exactly -inf, the rest close */
    double smax = fmax(1.0, max_abs_d(r.s, hnn));
    for (size_t i = 0; i < hnn; i++) {
        char what[64];
        snprintf(what, sizeof what, "scores[%zu]", i);
        if (isinf(r.s[i])) {
            if (!(isinf(m->scores[i]) && m->scores[i] < 0))
                fail_msg("%s (masked): expected -inf, got %.9g", what, (double)m->scores[i]);
        } else {
            CHECK_NEAR(what, r.s[i], m->scores[i], 1e-5 * smax);
        }
    }

    /* attention: absolute 1e-5 */
    check_close("attn", r.a, m->attn, hnn, 1e-5);

    /* every row sums to 1, causal rows are exactly 0 above the diagonal */
    for (int i = 0; i < h; i++)
        for (int qi = 0; qi < n; qi++) {
            const float *row = m->attn + ((size_t)i * n + qi) * n;
            double sum = 0.0;
            for (int kj = 0; kj < n; kj++) {
                sum += row[kj];
                if (!(row[kj] >= 0.0f && row[kj] <= 1.0f))
                    fail_msg("attn[%d][%d][%d]: expected a value in [0, 1], got %.9g", i, qi, kj,
                             (double)row[kj]);
                if (c->causal && kj > qi && row[kj] != 0.0f)
                    fail_msg("attn[%d][%d][%d] (causal, above diagonal): expected 0, got %.9g", i,
                             qi, kj, (double)row[kj]);
            }
            char what[64];
            snprintf(what, sizeof what, "sum of attn[%d][%d]", i, qi);
            CHECK_NEAR(what, 1.0, sum, 1e-5);
        }

    /* heads: (h, n, d_k), and concat places head i at columns [i*d_k, (i+1)*d_k) */
    double hmax = fmax(1e-30, max_abs_d(r.heads, nd));
    check_close("heads", r.heads, m->heads, nd, 1e-4 * hmax);
    check_close("concat", r.concat, m->concat, nd, 1e-4 * hmax);
    for (int i = 0; i < h; i++)
        for (int qi = 0; qi < n; qi++)
            for (int cc = 0; cc < dk; cc++) {
                float hv = m->heads[((size_t)i * n + qi) * dk + cc];
                float cv = m->concat[(size_t)qi * d + (size_t)i * dk + cc];
                if (memcmp(&hv, &cv, sizeof hv) != 0)
                    fail_msg("concat[%d][%d] vs heads[%d][%d][%d]: expected %.9g, got %.9g", qi,
                             i * dk + cc, i, qi, cc, (double)hv, (double)cv);
            }

    /* out: relative to max |out| */
    double omax = fmax(1e-30, max_abs_d(r.out, nd));
    check_close("out", r.out, m->out, nd, 1e-4 * omax);

    ref_free(&r);
    mha_model_destroy(m);
    free_toks(&ht);
}

/* ------------------------------------------------------------------------------ */
/* determinism                                                                    */

typedef struct {
    float *buf;
    size_t floats;
} snap_t;

static size_t model_floats(const mha_model *m) {
    size_t n = (size_t)m->n, d = (size_t)m->cfg.d_model, h = (size_t)m->cfg.h;
    return 4 * d * d + 7 * n * d + 2 * h * n * n;
}

/* copies every tensor in a fixed order (by the public pointers, not the block) */
static snap_t snapshot(const mha_model *m) {
    size_t n = (size_t)m->n, d = (size_t)m->cfg.d_model, h = (size_t)m->cfg.h;
    snap_t s = {malloc(model_floats(m) * sizeof(float)), model_floats(m)};
    assert_non_null(s.buf);
    float *p = s.buf;
    const struct {
        const float *src;
        size_t count;
    } parts[] = {
        {m->w_q, d * d},        {m->w_k, d * d},      {m->w_v, d * d},   {m->w_o, d * d},
        {m->x, n * d},          {m->q, n * d},        {m->k, n * d},     {m->v, n * d},
        {m->scores, h * n * n}, {m->attn, h * n * n}, {m->heads, n * d}, {m->concat, n * d},
        {m->out, n * d},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        memcpy(p, parts[i].src, parts[i].count * sizeof(float));
        p += parts[i].count;
    }
    return s;
}

static void check_same_bytes(const char *what, const snap_t *a, const snap_t *b) {
    CHECK_INT(what, a->floats, b->floats);
    if (memcmp(a->buf, b->buf, a->floats * sizeof(float)) != 0) {
        size_t i = 0;
        while (i < a->floats && memcmp(a->buf + i, b->buf + i, sizeof(float)) == 0) i++;
        fail_msg("%s: expected identical bytes, got a difference at float %zu: %.9g vs %.9g", what,
                 i, (double)a->buf[i], (double)b->buf[i]);
    }
}

static void compute_or_fail(mha_model *m, const mha_config *cfg, const tok_list *t) {
    char err[MHA_ERR_LEN] = "";
    int rc = mha_model_compute(m, cfg, t, err, sizeof err);
    if (rc != 0) fail_msg("mha_model_compute: expected 0, got %d (%s)", rc, err);
}

static void test_determinism(void **state) {
    (void)state;
    static const mha_config cfgs[] = {
        {.h = 4, .d_model = 64, .seed = 1},
        {.h = 8, .d_model = 128, .seed = 77, .mask = MHA_MASK_CAUSAL},
        {.h = 3, .d_model = 6, .seed = 2, .no_scale = 1},
    };
    const int ns[] = {12, 64, 7};
    for (int ci = 0; ci < 3; ci++) {
        hand_toks ht, other;
        make_toks(&ht, ns[ci], 1);
        make_toks(&other, 5, 3);
        mha_model *m = mha_model_create();
        assert_non_null(m);
        compute_or_fail(m, &cfgs[ci], &ht.t);
        snap_t a = snapshot(m);
        compute_or_fail(m, &cfgs[ci], &ht.t); /* again, same model */
        snap_t b = snapshot(m);
        check_same_bytes("same model, computed twice", &a, &b);

        mha_config o = {.h = 2, .d_model = 32, .seed = 9};
        compute_or_fail(m, &o, &other.t); /* something else in between */
        compute_or_fail(m, &cfgs[ci], &ht.t);
        snap_t c = snapshot(m);
        check_same_bytes("same model, after another shape", &a, &c);

        mha_model *m2 = mha_model_create();
        assert_non_null(m2);
        compute_or_fail(m2, &cfgs[ci], &ht.t);
        snap_t e = snapshot(m2);
        check_same_bytes("fresh model", &a, &e);

        free(a.buf), free(b.buf), free(c.buf), free(e.buf);
        mha_model_destroy(m);
        mha_model_destroy(m2);
        free_toks(&ht);
        free_toks(&other);
    }
}

/* ------------------------------------------------------------------------------ */
/* weights depend on (seed, d_model) only                                          */

static void test_resplit_invariance(void **state) {
    (void)state;
    const int d = 64;
    hand_toks ht;
    make_toks(&ht, 10, 2);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = 1, .d_model = d, .seed = 5};
    compute_or_fail(m, &cfg, &ht.t);
    size_t dd = (size_t)d * d, nd = (size_t)10 * d;
    float *w0 = malloc(4 * dd * sizeof(float)), *x0 = malloc(nd * sizeof(float));
    assert_non_null(w0);
    assert_non_null(x0);
    memcpy(w0, m->w_q, dd * sizeof(float));
    memcpy(w0 + dd, m->w_k, dd * sizeof(float));
    memcpy(w0 + 2 * dd, m->w_v, dd * sizeof(float));
    memcpy(w0 + 3 * dd, m->w_o, dd * sizeof(float));
    memcpy(x0, m->x, nd * sizeof(float));

    const int hs[] = {2, 4, 8, 16, 32, 64, 1};
    for (int pass = 0; pass < 2; pass++) /* same model, then a fresh model each time */
        for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
            mha_model *mm = pass ? mha_model_create() : m;
            assert_non_null(mm);
            cfg.h = hs[i];
            compute_or_fail(mm, &cfg, &ht.t);
            const float *now[4] = {mm->w_q, mm->w_k, mm->w_v, mm->w_o};
            static const char *names[4] = {"W_Q", "W_K", "W_V", "W_O"};
            for (int w = 0; w < 4; w++)
                if (memcmp(now[w], w0 + w * dd, dd * sizeof(float)) != 0)
                    fail_msg("%s at h=%d (pass %d): expected bit-identical to h=1, got different",
                             names[w], hs[i], pass);
            if (memcmp(mm->x, x0, nd * sizeof(float)) != 0)
                fail_msg("X at h=%d: expected identical to h=1, got different", hs[i]);
            if (pass) mha_model_destroy(mm);
        }
    free(w0);
    free(x0);
    mha_model_destroy(m);
    free_toks(&ht);
}

static size_t count_equal(const float *a, const float *b, size_t count) {
    size_t eq = 0;
    for (size_t i = 0; i < count; i++) eq += a[i] == b[i];
    return eq;
}

static void test_weights_change_with_d_and_seed(void **state) {
    (void)state;
    const int d1 = 32, d2 = 64;
    float *a = malloc((size_t)d2 * d2 * sizeof(float)),
          *b = malloc((size_t)d2 * d2 * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    for (int which = 0; which < 4; which++) {
        mha_weights_init(a, 1, d1, which);
        mha_weights_init(b, 1, d2, which);
        size_t eq = count_equal(a, b, (size_t)d1 * d1);
        CHECK_INT("equal leading entries of W(d=32) and W(d=64)", 0, eq > 10 ? eq : 0);
        mha_weights_init(b, 2, d1, which); /* other seed, same d */
        eq = count_equal(a, b, (size_t)d1 * d1);
        CHECK_INT("equal entries of W(seed 1) and W(seed 2)", 0, eq > 10 ? eq : 0);
    }
    mha_weights_init(a, 1, d1, 0);
    mha_weights_init(b, 1, d1, 1);
    size_t eq = count_equal(a, b, (size_t)d1 * d1);
    CHECK_INT("equal entries of W_Q and W_K", 0, eq > 10 ? eq : 0);

    /* through the model: d_model 32 -> 64 changes W_Q; the model uses mha_weights_init */
    hand_toks ht;
    make_toks(&ht, 4, 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = 4, .d_model = d1, .seed = 3};
    compute_or_fail(m, &cfg, &ht.t);
    memcpy(a, m->w_q, (size_t)d1 * d1 * sizeof(float));
    mha_weights_init(b, 3, d1, 0);
    if (memcmp(a, b, (size_t)d1 * d1 * sizeof(float)) != 0)
        fail_msg("model W_Q: expected mha_weights_init(seed 3, d 32, 0), got different values");
    cfg.d_model = d2;
    compute_or_fail(m, &cfg, &ht.t);
    eq = count_equal(a, m->w_q, (size_t)d1 * d1);
    CHECK_INT("W_Q entries unchanged after d_model 32 -> 64", 0, eq > 10 ? eq : 0);
    cfg.seed = 4;
    memcpy(b, m->w_q, (size_t)d2 * d2 * sizeof(float));
    compute_or_fail(m, &cfg, &ht.t);
    eq = count_equal(b, m->w_q, (size_t)d2 * d2);
    CHECK_INT("W_Q entries unchanged after seed 3 -> 4", 0, eq > 10 ? eq : 0);
    mha_model_destroy(m);
    free_toks(&ht);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------------------ */
/* embeddings and positional encoding                                               */

static double pe_ref(int pos, int i, int d) {
    int even = i - (i % 2);
    double ang = pos / pow(10000.0, (double)even / (double)d);
    return (i % 2 == 0) ? sin(ang) : cos(ang);
}

static void test_positional_formula(void **state) {
    (void)state;
    const int ds[] = {1, 2, 7, 64, 65};
    float e[65];
    for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
        int d = ds[di];
        for (int pos = 0; pos < 600; pos += 37) {
            memset(e, 0, sizeof e);
            mha_add_positional(e, pos, d);
            for (int i = 0; i < d; i++) {
                char what[64];
                snprintf(what, sizeof what, "PE(pos %d, i %d, d %d)", pos, i, d);
                CHECK_NEAR(what, pe_ref(pos, i, d), e[i], 1e-6);
            }
        }
    }
}

static void test_repeated_word_same_embedding(void **state) {
    (void)state;
    const char *text = "the dog chased the cat and the cat chased the dog";
    tok_list t = {0};
    char err[MHA_ERR_LEN] = "";
    int rc = tok_split(&t, text, 0, NULL, err, sizeof err);
    if (rc != 0) fail_msg("tok_split: expected 0, got %d (%s)", rc, err);
    CHECK_INT("token count", 11, t.count);
    const int d = 64, n = t.count;
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = 4, .d_model = d, .seed = 1};
    compute_or_fail(m, &cfg, &t);

    /* X row minus the positional encoding (computed here) is the token's embedding */
    double *emb = dalloc((size_t)n * d);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < d; i++)
            emb[(size_t)r * d + i] = (double)m->x[(size_t)r * d + i] - pe_ref(r, i, d);
    float direct[64];
    for (int a = 0; a < n; a++) {
        mha_embed_token(direct, t.tokens[a], 1, d);
        for (int i = 0; i < d; i++) {
            char what[96];
            snprintf(what, sizeof what, "X[%d][%d] - PE vs embed('%s')", a, i, t.tokens[a]);
            CHECK_NEAR(what, direct[i], emb[(size_t)a * d + i], 1e-5);
        }
        for (int b = a + 1; b < n; b++) {
            double maxdiff = 0.0;
            for (int i = 0; i < d; i++)
                maxdiff = fmax(maxdiff, fabs(emb[(size_t)a * d + i] - emb[(size_t)b * d + i]));
            char what[128];
            snprintf(what, sizeof what, "embedding of '%s' (pos %d) vs '%s' (pos %d) differ",
                     t.tokens[a], a, t.tokens[b], b);
            if (strcmp(t.tokens[a], t.tokens[b]) == 0)
                CHECK_TRUE(what, maxdiff <= 1e-5);
            else
                CHECK_TRUE(what, maxdiff > 0.1);
        }
    }

    /* mha_embed_token directly: bit-identical for the same (token, seed, d) */
    float e1[64], e2[64];
    mha_embed_token(e1, "the", 1, d);
    mha_embed_token(e2, "the", 1, d);
    CHECK_INT("embed('the') twice: differing bytes", 0, memcmp(e1, e2, sizeof e1) != 0);
    mha_embed_token(e2, "The", 1, d);
    CHECK_INT("embed('the') vs embed('The'): equal entries", 0, count_equal(e1, e2, 64) > 2);
    mha_embed_token(e2, "the", 2, d);
    CHECK_INT("embed seed 1 vs seed 2: equal entries", 0, count_equal(e1, e2, 64) > 2);

    free(emb);
    mha_model_destroy(m);
    tok_free(&t);
}

static void test_embedding_distribution(void **state) {
    (void)state;
    enum { D = 4096 };
    static float e[D];
    const char *toks[] = {"the", "Café", "東", "x"};
    for (int t = 0; t < 4; t++) {
        mha_embed_token(e, toks[t], 1, D);
        double s = 0, s2 = 0;
        for (int i = 0; i < D; i++) {
            if (!isfinite(e[i]))
                fail_msg("embed('%s')[%d]: expected finite, got %g", toks[t], i, (double)e[i]);
            s += e[i], s2 += (double)e[i] * e[i];
        }
        double mean = s / D, sd = sqrt(s2 / D - mean * mean);
        /* N(0, 1): std error of the mean 1/64, of the std about 1/90; 5 sigma */
        CHECK_NEAR("embedding mean (N(0,1), d=4096)", 0.0, mean, 0.08);
        CHECK_NEAR("embedding std (N(0,1), d=4096)", 1.0, sd, 0.06);
    }
    /* odd d fills every entry */
    float odd[7];
    for (int i = 0; i < 7; i++) odd[i] = NAN;
    mha_embed_token(odd, "odd", 1, 7);
    for (int i = 0; i < 7; i++)
        if (!isfinite(odd[i]))
            fail_msg("embed(d=7)[%d]: expected finite, got %g", i, (double)odd[i]);
}

/* ------------------------------------------------------------------------------ */
/* softmax                                                                          */

static void check_row(const char *what, const float *got, const double *expected, int cols,
                      double tol) {
    for (int c = 0; c < cols; c++) {
        char w[128];
        snprintf(w, sizeof w, "%s[%d]", what, c);
        if (!isfinite(got[c]))
            fail_msg("%s: expected finite %.9g, got %g", w, expected[c], (double)got[c]);
        CHECK_NEAR(w, expected[c], got[c], tol);
    }
}

static void test_softmax_stability(void **state) {
    (void)state;
    {
        float r[3] = {1e4f, -1e4f, 0.0f};
        mha_softmax_rows(r, 1, 3);
        const double e[3] = {1, 0, 0};
        check_row("softmax{1e4,-1e4,0}", r, e, 3, 1e-7);
    }
    {
        float r[2] = {-1e4f, -1e4f};
        mha_softmax_rows(r, 1, 2);
        const double e[2] = {0.5, 0.5};
        check_row("softmax{-1e4,-1e4}", r, e, 2, 1e-7);
    }
    {
        float r[4] = {1e4f, 1e4f - 1.0f, -1e4f, 1e4f};
        mha_softmax_rows(r, 1, 4);
        double z = 2.0 + exp(-1.0);
        const double e[4] = {1 / z, exp(-1.0) / z, 0, 1 / z};
        check_row("softmax{1e4,1e4-1,-1e4,1e4}", r, e, 4, 1e-6);
    }
    {
        float r[3] = {-INFINITY, 0.0f, -INFINITY};
        mha_softmax_rows(r, 1, 3);
        const double e[3] = {0, 1, 0};
        check_row("softmax{-inf,0,-inf}", r, e, 3, 0.0);
    }
    {
        float r[4] = {2.0f, -INFINITY, 1.0f, -INFINITY};
        mha_softmax_rows(r, 1, 4);
        double z = exp(2.0) + exp(1.0);
        const double e[4] = {exp(2.0) / z, 0, exp(1.0) / z, 0};
        check_row("softmax{2,-inf,1,-inf}", r, e, 4, 1e-6);
        CHECK_TRUE("softmax -inf entry is exactly 0", r[1] == 0.0f && r[3] == 0.0f);
    }
    {
        float r[3] = {-INFINITY, -INFINITY, -INFINITY};
        mha_softmax_rows(r, 1, 3);
        const double e[3] = {0, 0, 0};
        check_row("softmax{-inf,-inf,-inf} (all masked)", r, e, 3, 0.0);
    }
    {
        float r[1] = {-1e4f};
        mha_softmax_rows(r, 1, 1);
        const double e[1] = {1};
        check_row("softmax{-1e4}", r, e, 1, 0.0);
    }
    {
        /* several rows at once, each independent */
        float r[3][3] = {{1, 2, 3}, {-1e4f, 1e4f, -INFINITY}, {0, 0, 0}};
        mha_softmax_rows(&r[0][0], 3, 3);
        double z = exp(1.0) + exp(2.0) + exp(3.0);
        const double e0[3] = {exp(1.0) / z, exp(2.0) / z, exp(3.0) / z};
        const double e1[3] = {0, 1, 0};
        const double e2[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
        check_row("softmax rows, row 0 {1,2,3}", r[0], e0, 3, 1e-6);
        check_row("softmax rows, row 1 {-1e4,1e4,-inf}", r[1], e1, 3, 1e-7);
        check_row("softmax rows, row 2 {0,0,0}", r[2], e2, 3, 1e-6);
    }
}

/* ------------------------------------------------------------------------------ */
/* limits                                                                           */

static void test_config_resolve(void **state) {
    (void)state;
    mha_config c = {0};
    mha_config_resolve(&c);
    CHECK_INT("resolved h", 4, c.h);
    CHECK_INT("resolved d_model", 64, c.d_model);
    CHECK_INT("resolved seed", 1, c.seed);
    CHECK_INT("resolved mask", MHA_MASK_NONE, c.mask);
    CHECK_INT("resolved no_scale", 0, c.no_scale);
    mha_config k = {.h = 3, .d_model = 48, .seed = 9, .mask = MHA_MASK_CAUSAL, .no_scale = 1};
    mha_config_resolve(&k);
    CHECK_INT("kept h", 3, k.h);
    CHECK_INT("kept d_model", 48, k.d_model);
    CHECK_INT("kept seed", 9, k.seed);
}

typedef struct {
    int n, d, h, mask;
    int ok;
} limcase;

static void test_config_limits(void **state) {
    (void)state;
    static const limcase L[] = {
        {0, 64, 4, 0, 0},   {513, 64, 4, 0, 0}, {-1, 64, 4, 0, 0},     {1, 0, 1, 0, 0},
        {1, 4097, 1, 0, 0}, {1, -64, 4, 0, 0},  {1, 64, 0, 0, 0},      {1, 64, -4, 0, 0},
        {1, 64, 65, 0, 0},  {1, 64, 128, 0, 0}, {1, 64, 5, 0, 0},      {1, 6, 4, 0, 0},
        {1, 7, 2, 0, 0},    {1, 64, 4, 2, 0},   {1, 64, 4, -1, 0},     {1, 64, 4, 0, 1},
        {512, 64, 4, 0, 1}, {1, 1, 1, 0, 1},    {1, 4096, 4096, 0, 1}, {1, 4096, 1, 0, 1},
        {1, 6, 3, 1, 1},    {1, 7, 7, 0, 1},    {12, 64, 64, 1, 1},
    };
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        mha_config c = {.h = L[i].h, .d_model = L[i].d, .seed = 1, .mask = (mha_mask)L[i].mask};
        char err[MHA_ERR_LEN];
        memset(err, 0, sizeof err);
        int rc = mha_config_check(&c, L[i].n, err, sizeof err);
        char what[128];
        snprintf(what, sizeof what, "mha_config_check(n=%d, d=%d, h=%d, mask=%d)", L[i].n, L[i].d,
                 L[i].h, L[i].mask);
        CHECK_INT(what, L[i].ok ? 0 : -1, rc);
        if (!L[i].ok) {
            CHECK_MSG(what, err);
            CHECK_TRUE("message is one line", strchr(err, '\n') == NULL);
        }
    }

    /* mha_model_set refuses the same configs and leaves the model unchanged */
    hand_toks ht, big, none;
    make_toks(&ht, 6, 0);
    make_toks(&big, 513, 0);
    make_toks(&none, 0, 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config good = {.h = 2, .d_model = 8, .seed = 1};
    compute_or_fail(m, &good, &ht.t);
    snap_t before = snapshot(m);
    unsigned long allocs = m->allocations_;
    const float *blocks[3] = {m->w_mem_, m->nd_mem_, m->nn_mem_};
    const struct {
        mha_config c;
        const tok_list *t;
        const char *what;
    } bad[] = {
        {{.h = 2, .d_model = 8}, &none.t, "n=0"},
        {{.h = 2, .d_model = 8}, &big.t, "n=513"},
        {{.h = 2, .d_model = 8}, NULL, "toks NULL"},
        {{.h = 2, .d_model = 4097}, &ht.t, "d=4097"},
        {{.h = 2, .d_model = -1}, &ht.t, "d=-1"},
        {{.h = -1, .d_model = 8}, &ht.t, "h=-1"},
        {{.h = 9, .d_model = 8}, &ht.t, "h=9 > d=8"},
        {{.h = 3, .d_model = 8}, &ht.t, "h=3 does not divide d=8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[MHA_ERR_LEN] = "";
        char what[96];
        snprintf(what, sizeof what, "mha_model_set(%s)", bad[i].what);
        int rc = mha_model_set(m, &bad[i].c, bad[i].t, err, sizeof err);
        CHECK_INT(what, -1, rc);
        CHECK_MSG(what, err);
        CHECK_INT("allocations after a refused set", allocs, m->allocations_);
        CHECK_TRUE("blocks unchanged after a refused set",
                   m->w_mem_ == blocks[0] && m->nd_mem_ == blocks[1] && m->nn_mem_ == blocks[2]);
        CHECK_INT("n after a refused set", 6, m->n);
        CHECK_INT("h after a refused set", 2, m->cfg.h);
        CHECK_INT("d_model after a refused set", 8, m->cfg.d_model);
        snap_t after = snapshot(m);
        check_same_bytes("tensors after a refused set", &before, &after);
        free(after.buf);
    }
    /* zero fields in a config passed to mha_model_set mean defaults */
    mha_config zero = {0};
    compute_or_fail(m, &zero, &ht.t);
    CHECK_INT("h from a zero config", MHA_DEFAULT_H, m->cfg.h);
    CHECK_INT("d_model from a zero config", MHA_DEFAULT_D_MODEL, m->cfg.d_model);
    CHECK_INT("seed from a zero config", MHA_DEFAULT_SEED, m->cfg.seed);
    free(before.buf);
    mha_model_destroy(m);
    free_toks(&ht);
    free_toks(&big);
    free_toks(&none);
    mha_model_destroy(NULL); /* NULL is fine */
}

/* ------------------------------------------------------------------------------ */
/* allocation only when the shape changes                                           */

/* Allocations counted by the model: one per block (weights, activations,
 * scores and attn) that must be made for a new shape, none otherwise. */
static void test_no_realloc_at_steady_shape(void **state) {
    (void)state;
    hand_toks a, b, c;
    make_toks(&a, 12, 0);
    make_toks(&b, 12, 7); /* same n, other words */
    make_toks(&c, 13, 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    CHECK_INT("allocations of a new model", 0, m->allocations_);
    mha_config cfg = {.h = 4, .d_model = 64, .seed = 1};
    compute_or_fail(m, &cfg, &a.t);
    CHECK_INT("allocations after the first set (three blocks)", 3, m->allocations_);
    const float *blocks[3] = {m->w_mem_, m->nd_mem_, m->nn_mem_};
    for (int i = 0; i < 10; i++) {
        char err[MHA_ERR_LEN] = "";
        const tok_list *t = (i % 2) ? &b.t : &a.t;
        cfg.seed = (uint64_t)(1 + i % 3); /* new weights, same shape */
        cfg.mask = (i % 4 == 3) ? MHA_MASK_CAUSAL : MHA_MASK_NONE;
        cfg.no_scale = i % 3 == 2;
        cfg.weights = i % 5 == 4 ? MHA_WEIGHTS_PATTERNS : MHA_WEIGHTS_RANDOM;
        CHECK_INT("mha_model_set at a steady shape", 0, mha_model_set(m, &cfg, t, err, sizeof err));
        mha_forward(m);
        mha_update(m);
        mha_forward(m);
        CHECK_INT("allocations at a steady shape", 3, m->allocations_);
        CHECK_TRUE("same blocks at a steady shape",
                   m->w_mem_ == blocks[0] && m->nd_mem_ == blocks[1] && m->nn_mem_ == blocks[2]);
    }
    unsigned long base = m->allocations_;
    cfg.seed = 1;
    cfg.weights = MHA_WEIGHTS_RANDOM;
    compute_or_fail(m, &cfg, &c.t); /* n changes: activations, scores and attn */
    CHECK_INT("allocations after n 12 -> 13", base + 2, m->allocations_);
    CHECK_TRUE("weights block kept when n changes", m->w_mem_ == blocks[0]);
    compute_or_fail(m, &cfg, &c.t);
    CHECK_INT("allocations after n 13 again", base + 2, m->allocations_);
    const float *nd_block = m->nd_mem_;
    cfg.h = 8; /* h changes: scores and attn only */
    compute_or_fail(m, &cfg, &c.t);
    CHECK_INT("allocations after h 4 -> 8", base + 3, m->allocations_);
    CHECK_TRUE("weights and activations kept when h changes",
               m->w_mem_ == blocks[0] && m->nd_mem_ == nd_block);
    cfg.d_model = 32; /* d changes: weights and activations; h n^2 is the same */
    compute_or_fail(m, &cfg, &c.t);
    CHECK_INT("allocations after d 64 -> 32", base + 5, m->allocations_);
    compute_or_fail(m, &cfg, &c.t);
    compute_or_fail(m, &cfg, &c.t);
    CHECK_INT("allocations at d 32 again", base + 5, m->allocations_);
    mha_model_destroy(m);
    free_toks(&a);
    free_toks(&b);
    free_toks(&c);
}

/* ------------------------------------------------------------------------------ */
/* Glorot uniform                                                                   */

static void test_glorot(void **state) {
    (void)state;
    const int d = 256;
    const double limit = sqrt(6.0 / (2.0 * d)); /* 0.10825 */
    const double want_sd = limit / sqrt(3.0);   /* 0.0625 */
    size_t count = (size_t)d * d;
    float *w = malloc(count * sizeof(float));
    assert_non_null(w);
    for (int which = 0; which < 4; which++) {
        mha_weights_init(w, 1, d, which);
        double s = 0, s2 = 0, lo = 1, hi = -1;
        for (size_t i = 0; i < count; i++) {
            double v = w[i];
            if (!(fabs(v) <= limit * (1.0 + 1e-7)))
                fail_msg("W%d[%zu]: expected |w| <= %.9g, got %.9g", which, i, limit, v);
            s += v, s2 += v * v;
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
        double mean = s / (double)count, sd = sqrt(s2 / (double)count - mean * mean);
        /* 65536 draws: the std error of the mean is 0.00024, of the std about 0.0002;
         * tolerances: mean 0.002 (8 sigma), std 2% of limit/sqrt(3). */
        CHECK_NEAR("Glorot mean (d=256)", 0.0, mean, 0.002);
        CHECK_NEAR("Glorot sample std (d=256), limit/sqrt(3)", want_sd, sd, 0.02 * want_sd);
        CHECK_NEAR("Glorot max close to +limit", limit, hi, 0.01 * limit);
        CHECK_NEAR("Glorot min close to -limit", -limit, lo, 0.01 * limit);
    }
    free(w);
}

/* ------------------------------------------------------------------------------ */
/* temperature, padding, ablation against the reference                            */

typedef struct {
    int n_text, d, h, causal, no_scale, pad;
    float temperature; /* 0: default 1 */
    uint64_t ablate;   /* bit i: head i (0-based) */
    uint64_t seed;
    char name[160];
} lcase;

static lcase LCASES[] = {
    {.n_text = 12, .d = 64, .h = 4, .temperature = 0.05f, .seed = 1},
    {.n_text = 12, .d = 64, .h = 4, .temperature = 0.5f, .seed = 1},
    {.n_text = 12, .d = 64, .h = 4, .temperature = 2.0f, .seed = 1},
    {.n_text = 12, .d = 64, .h = 4, .temperature = 20.0f, .seed = 2},
    {.n_text = 17, .d = 48, .h = 6, .no_scale = 1, .temperature = 3.0f, .seed = 3},
    {.n_text = 33, .d = 96, .h = 12, .causal = 1, .temperature = 0.3f, .seed = 4},
    {.n_text = 5, .d = 32, .h = 4, .pad = 12, .seed = 5},
    {.n_text = 1, .d = 8, .h = 2, .pad = 9, .seed = 6},    /* one real token */
    {.n_text = 12, .d = 64, .h = 4, .pad = 12, .seed = 7}, /* pad == n: no [PAD] */
    {.n_text = 100, .d = 64, .h = 8, .pad = 512, .seed = 8},
    {.n_text = 5, .d = 32, .h = 4, .causal = 1, .pad = 12, .seed = 9},
    {.n_text = 40, .d = 48, .h = 3, .causal = 1, .pad = 64, .temperature = 0.7f, .seed = 10},
    {.n_text = 1, .d = 4, .h = 4, .causal = 1, .pad = 3, .seed = 11},
    {.n_text = 12, .d = 64, .h = 4, .ablate = 0x2, .seed = 12},
    {.n_text = 12, .d = 64, .h = 4, .ablate = 0xF, .seed = 13}, /* every head */
    {.n_text = 20, .d = 48, .h = 6, .ablate = 0x21, .seed = 14},
    {.n_text = 9, .d = 7, .h = 7, .ablate = 0x55, .seed = 15},
    {.n_text = 64,
     .d = 128,
     .h = 8,
     .causal = 1,
     .no_scale = 1,
     .pad = 80,
     .temperature = 1.5f,
     .ablate = 0x81,
     .seed = 16},
};
#define NLCASES ((int)(sizeof LCASES / sizeof LCASES[0]))

static mha_config lcase_config(const lcase *c) {
    mha_config cfg = {.h = c->h,
                      .d_model = c->d,
                      .seed = c->seed,
                      .mask = c->causal ? MHA_MASK_CAUSAL : MHA_MASK_NONE,
                      .no_scale = c->no_scale,
                      .pad = c->pad,
                      .temperature = c->temperature};
    for (int i = 0; i < 64; i++)
        if ((c->ablate >> i) & 1u) mha_config_set_ablated(&cfg, i, 1);
    return cfg;
}

static void test_lesson_against_reference(void **state) {
    const lcase *c = *state;
    hand_toks ht;
    make_toks(&ht, c->n_text, c->d + 3);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = lcase_config(c);
    compute_or_fail(m, &cfg, &ht.t);
    const int n = c->pad ? c->pad : c->n_text, n_real = c->n_text, d = c->d, h = c->h;
    const int dk = d / h;
    CHECK_INT("m->n (with padding)", n, m->n);
    CHECK_INT("m->n_real", n_real, m->n_real);
    for (int t = 0; t < n; t++) {
        char what[64];
        snprintf(what, sizeof what, "mha_token(%d)", t);
        CHECK_STR(what, t < n_real ? ht.t.tokens[t] : "[PAD]", mha_token(m, &ht.t, t));
    }

    ref_t r;
    const ref_opts o = {.causal = c->causal,
                        .no_scale = c->no_scale,
                        .n_real = n_real,
                        .temperature = c->temperature ? (double)c->temperature : 1.0,
                        .ablate = c->ablate};
    ref_forward_opts(&r, m, h, &o);
    const size_t nd = (size_t)n * d, hnn = (size_t)h * n * n;

    /* scores: masked entries exactly -inf (padding columns and causal), the rest close
       relative to the largest; attention absolute 1e-5, or 5e-7 of the largest score
       where that is more (float32 rounding of large scores, T = 0.05) */
    double smax = fmax(1.0, max_abs_d(r.s, hnn));
    for (size_t i = 0; i < hnn; i++) {
        if (isinf(r.s[i])) {
            if (!(isinf(m->scores[i]) && m->scores[i] < 0))
                fail_msg("scores[%zu] (masked): expected -inf, got %.9g", i, (double)m->scores[i]);
        } else {
            char what[64];
            snprintf(what, sizeof what, "scores[%zu]", i);
            CHECK_NEAR(what, r.s[i], m->scores[i], 1e-5 * smax);
        }
    }
    check_close("attn", r.a, m->attn, hnn, fmax(1e-5, 5e-7 * smax));

    /* every row (also [PAD] query rows) sums to 1 over its unmasked keys and is
       exactly 0 on the masked ones */
    for (int i = 0; i < h; i++)
        for (int qi = 0; qi < n; qi++) {
            const float *row = m->attn + ((size_t)i * n + qi) * n;
            double sum = 0.0;
            for (int kj = 0; kj < n; kj++) {
                int masked = kj >= n_real || (c->causal && kj > qi);
                if (masked && row[kj] != 0.0f)
                    fail_msg("attn[%d][%d][%d] (masked: %s): expected exactly 0, got %.9g", i, qi,
                             kj, kj >= n_real ? "padding" : "causal", (double)row[kj]);
                if (!masked) sum += row[kj];
            }
            char what[80];
            snprintf(what, sizeof what, "sum of attn[%d][%d] over unmasked keys", i, qi);
            CHECK_NEAR(what, 1.0, sum, 1e-5);
        }

    /* heads as computed for every head; Concat: ablated bands exactly zero, the
       others exactly head_i */
    double hmax = fmax(1e-30, max_abs_d(r.heads, nd));
    check_close("heads", r.heads, m->heads, nd, 1e-4 * hmax);
    check_close("concat", r.concat, m->concat, nd, 1e-4 * hmax);
    for (int i = 0; i < h; i++)
        for (int qi = 0; qi < n; qi++)
            for (int cc = 0; cc < dk; cc++) {
                float cv = m->concat[(size_t)qi * d + (size_t)i * dk + cc];
                float hv = m->heads[((size_t)i * n + qi) * dk + cc];
                if ((c->ablate >> i) & 1u) {
                    if (cv != 0.0f)
                        fail_msg("concat[%d][%d] (head %d ablated): expected 0, got %.9g", qi,
                                 i * dk + cc, i + 1, (double)cv);
                } else if (memcmp(&hv, &cv, sizeof hv) != 0) {
                    fail_msg("concat[%d][%d] vs heads[%d][%d][%d]: expected %.9g, got %.9g", qi,
                             i * dk + cc, i, qi, cc, (double)hv, (double)cv);
                }
            }

    /* out = Concat (ablated) W_O; out_full = the unablated Concat W_O */
    double omax = fmax(1e-30, max_abs_d(r.out_full, nd));
    check_close("out", r.out, m->out, nd, 1e-4 * omax);
    check_close("out_full", r.out_full, m->out_full, nd, 1e-4 * omax);
    if (c->ablate == 0)
        CHECK_INT("out and out_full differ without ablation", 0,
                  memcmp(m->out, m->out_full, nd * sizeof(float)) != 0);

    /* ||out - out_full|| / ||out_full|| against the reference's */
    double dd = 0.0, ff = 0.0;
    for (size_t i = 0; i < nd; i++) {
        dd += (r.out[i] - r.out_full[i]) * (r.out[i] - r.out_full[i]);
        ff += r.out_full[i] * r.out_full[i];
    }
    double want = ff > 0.0 ? sqrt(dd / ff) : 0.0;
    CHECK_NEAR("mha_ablation_delta", want, mha_ablation_delta(m), 1e-4 * fmax(want, 1e-3));
    if (c->ablate == ((uint64_t)1 << h) - 1) /* every head: MultiHead is 0 */
        CHECK_NEAR("mha_ablation_delta with every head ablated", 1.0, mha_ablation_delta(m), 1e-6);

    ref_free(&r);
    mha_model_destroy(m);
    free_toks(&ht);
}

/* Ablation touches only Concat's bands and out: everything else, out_full included,
 * is bit-identical to the same configuration without ablation. */
static void test_ablation_leaves_the_rest(void **state) {
    (void)state;
    hand_toks ht;
    make_toks(&ht, 15, 4);
    mha_model *a = mha_model_create(), *b = mha_model_create();
    assert_non_null(a);
    assert_non_null(b);
    mha_config cfg = {.h = 4, .d_model = 32, .seed = 21, .mask = MHA_MASK_CAUSAL};
    compute_or_fail(b, &cfg, &ht.t);
    mha_config_set_ablated(&cfg, 2, 1);
    compute_or_fail(a, &cfg, &ht.t);
    const size_t nd = (size_t)15 * 32, hnn = (size_t)4 * 15 * 15;
    CHECK_INT("attn differs with ablation", 0, memcmp(a->attn, b->attn, hnn * 4) != 0);
    CHECK_INT("heads differ with ablation", 0, memcmp(a->heads, b->heads, nd * 4) != 0);
    CHECK_INT("out_full differs from the unablated out", 0,
              memcmp(a->out_full, b->out, nd * 4) != 0);
    CHECK_TRUE("out changes when head 3 is ablated", memcmp(a->out, b->out, nd * 4) != 0);
    CHECK_TRUE("mha_ablation_delta > 0 with a head ablated", mha_ablation_delta(a) > 0.0);
    CHECK_NEAR("mha_ablation_delta without ablation", 0.0, mha_ablation_delta(b), 0.0);
    /* switching it off again on the same model restores out exactly */
    mha_config_set_ablated(&cfg, 2, 0);
    compute_or_fail(a, &cfg, &ht.t);
    CHECK_INT("out after un-ablating differs", 0, memcmp(a->out, b->out, nd * 4) != 0);
    CHECK_INT("concat after un-ablating differs", 0, memcmp(a->concat, b->concat, nd * 4) != 0);
    mha_model_destroy(a);
    mha_model_destroy(b);
    free_toks(&ht);
}

/* Padding changes nothing for the text's own rows: their attention on the real
 * keys and their outputs equal those of the unpadded text. */
static void test_padding_keeps_real_rows(void **state) {
    (void)state;
    const int cases[][4] = {{12, 64, 4, 0}, {12, 64, 4, 1}, {30, 48, 6, 1}, {1, 8, 2, 0}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int n = cases[ci][0], d = cases[ci][1], h = cases[ci][2];
        hand_toks ht;
        make_toks(&ht, n, 2);
        mha_model *p = mha_model_create(), *u = mha_model_create();
        assert_non_null(p);
        assert_non_null(u);
        mha_config cfg = {.h = h, .d_model = d, .seed = 3, .mask = (mha_mask)cases[ci][3]};
        compute_or_fail(u, &cfg, &ht.t);
        cfg.pad = n + 7 + (int)ci * 50;
        compute_or_fail(p, &cfg, &ht.t);
        const int np = cfg.pad;
        for (int i = 0; i < h; i++)
            for (int r = 0; r < n; r++)
                for (int c = 0; c < n; c++) {
                    char what[96];
                    snprintf(what, sizeof what, "case %zu attn[%d][%d][%d] padded vs not", ci, i, r,
                             c);
                    CHECK_NEAR(what, u->attn[((size_t)i * n + r) * n + c],
                               p->attn[((size_t)i * np + r) * np + c], 1e-6);
                }
        for (int r = 0; r < n; r++)
            for (int c = 0; c < d; c++) {
                char what[96];
                snprintf(what, sizeof what, "case %zu out[%d][%d] padded vs not", ci, r, c);
                CHECK_NEAR(what, u->out[(size_t)r * d + c], p->out[(size_t)r * d + c], 1e-5);
            }
        mha_model_destroy(p);
        mha_model_destroy(u);
        free_toks(&ht);
    }
}

static void test_lesson_config_limits(void **state) {
    (void)state;
    const struct {
        mha_config c;
        int n;
        int ok;
        const char *what;
    } L[] = {
        {{.h = 4, .d_model = 64, .pad = 11}, 12, 0, "pad below n"},
        {{.h = 4, .d_model = 64, .pad = 12}, 12, 1, "pad == n"},
        {{.h = 4, .d_model = 64, .pad = 512}, 12, 1, "pad 512"},
        {{.h = 4, .d_model = 64, .pad = 513}, 12, 0, "pad 513"},
        {{.h = 4, .d_model = 64, .pad = -1}, 12, 0, "pad -1"},
        {{.h = 4, .d_model = 64, .temperature = 0.05f}, 5, 1, "T 0.05"},
        {{.h = 4, .d_model = 64, .temperature = 0.0499f}, 5, 0, "T 0.0499"},
        {{.h = 4, .d_model = 64, .temperature = 20.0f}, 5, 1, "T 20"},
        {{.h = 4, .d_model = 64, .temperature = 20.01f}, 5, 0, "T 20.01"},
        {{.h = 4, .d_model = 64, .temperature = -1.0f}, 5, 0, "T -1"},
        {{.h = 4, .d_model = 64, .temperature = NAN}, 5, 0, "T NaN"},
        {{.h = 4, .d_model = 64, .temperature = INFINITY}, 5, 0, "T inf"},
        {{.h = 4, .d_model = 64, .weights = (mha_weights)2}, 5, 0, "weights 2"},
        {{.h = 4, .d_model = 64, .ablate = {0xF}}, 5, 1, "ablate every head"},
        {{.h = 4, .d_model = 64, .ablate = {0x10}}, 5, 0, "ablate head 5 of 4"},
        {{.h = 64, .d_model = 64, .ablate = {0, 1}}, 5, 0, "ablate head 65 of 64"},
        {{.h = 128, .d_model = 128, .ablate = {0, 1}}, 5, 1, "ablate head 65 of 128"},
        {{.h = 1,
          .d_model = 64,
          .ablate = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (uint64_t)1 << 63}},
         5,
         0,
         "ablate head 4096 of 1"},
    };
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        char err[MHA_ERR_LEN] = "";
        char what[96];
        snprintf(what, sizeof what, "mha_config_check(%s)", L[i].what);
        CHECK_INT(what, L[i].ok ? 0 : -1, mha_config_check(&L[i].c, L[i].n, err, sizeof err));
        if (!L[i].ok) {
            CHECK_MSG(what, err);
            CHECK_TRUE("message is one line", strchr(err, '\n') == NULL);
        }
    }
    /* the ablation set */
    mha_config c = {0};
    CHECK_INT("ablated count of a zero config", 0, mha_config_ablated_count(&c));
    mha_config_set_ablated(&c, 0, 1);
    mha_config_set_ablated(&c, 63, 1);
    mha_config_set_ablated(&c, 64, 1);
    mha_config_set_ablated(&c, 4095, 1);
    CHECK_INT("ablated count", 4, mha_config_ablated_count(&c));
    CHECK_INT("head 64 ablated", 1, mha_config_is_ablated(&c, 64));
    CHECK_INT("head 65 ablated", 0, mha_config_is_ablated(&c, 65));
    CHECK_INT("head -1 ablated", 0, mha_config_is_ablated(&c, -1));
    CHECK_INT("head 4096 ablated", 0, mha_config_is_ablated(&c, 4096));
    mha_config_set_ablated(&c, 63, 0);
    CHECK_INT("ablated count after clearing one", 3, mha_config_ablated_count(&c));
    CHECK_INT("head 63 ablated after clearing", 0, mha_config_is_ablated(&c, 63));
    /* the default temperature */
    mha_config z = {0};
    mha_config_resolve(&z);
    CHECK_NEAR("resolved temperature", 1.0, z.temperature, 0.0);
}

/* ------------------------------------------------------------------------------ */
/* designed heads: each head's argmax where its name says                           */

static const char *const PATTERN_CYCLE[6] = {"previous", "next",      "first",
                                             "self",     "same-word", "broad"};
static const int PATTERN_MIN_DK[6] = {8, 8, 1, 8, 16, 1}; /* as the README states */

/* n tokens of one of five kinds of text, none of them named word by word here */
static void make_text(hand_toks *ht, int n, int kind) {
    ht->store = calloc((size_t)n, sizeof(char *));
    assert_non_null(ht->store);
    uint32_t lcg = 12345u + (uint32_t)kind * 777u + (uint32_t)n;
    for (int i = 0; i < n; i++) {
        char buf[32];
        lcg = lcg * 1664525u + 1013904223u;
        switch (kind) {
        case 0: snprintf(buf, sizeof buf, "%s", WORDS[(i * 5 + 3) % NWORDS]); break;
        case 1: snprintf(buf, sizeof buf, "t%d", i); break;               /* all distinct */
        case 2: snprintf(buf, sizeof buf, "v%u", (lcg >> 16) % 7); break; /* many repeats */
        case 3: snprintf(buf, sizeof buf, "same"); break;                 /* one word */
        default: snprintf(buf, sizeof buf, "w%u", (lcg >> 16) % 200); break;
        }
        ht->store[i] = malloc(strlen(buf) + 1);
        assert_non_null(ht->store[i]);
        strcpy(ht->store[i], buf);
    }
    ht->t.count = n;
    ht->t.tokens = ht->store;
    ht->t.replaced = 0;
}

typedef struct {
    int h, d, n, kind, causal, no_scale, pad;
} pcase;

static const pcase PCASES[] = {
    {1, 8, 512, 0, 0, 0, 0},    {2, 16, 100, 1, 1, 0, 0},     {3, 48, 60, 2, 0, 1, 0},
    {3, 9, 20, 2, 0, 0, 0},     {4, 32, 512, 4, 1, 0, 0},     {5, 80, 77, 2, 0, 0, 90},
    {6, 96, 512, 2, 0, 0, 0},   {6, 96, 512, 1, 0, 1, 0},     {6, 192, 200, 4, 1, 1, 300},
    {6, 36, 30, 0, 0, 0, 0},    {7, 112, 45, 3, 0, 0, 0},     {8, 64, 512, 0, 1, 0, 0},
    {8, 128, 256, 2, 0, 0, 0},  {12, 384, 333, 4, 0, 0, 400}, {16, 256, 2, 0, 0, 0, 0},
    {6, 96, 1, 0, 0, 0, 0},     {12, 192, 512, 2, 1, 0, 0},   {6, 96, 512, 3, 1, 0, 0},
    {64, 4096, 40, 4, 0, 0, 0}, {1, 4096, 64, 0, 0, 1, 0},    {10, 160, 150, 4, 0, 0, 160},
};

/* per pattern: rows checked, rows right, sum of target weights (for the report) */
static struct {
    long rows, right;
    double mass;
    double worst_frac;
} g_pstats[6];

static void test_designed_heads(void **state) {
    (void)state;
    for (int p = 0; p < 6; p++) g_pstats[p].worst_frac = 1.0;
    for (size_t ci = 0; ci < sizeof PCASES / sizeof PCASES[0]; ci++) {
        const pcase *c = &PCASES[ci];
        hand_toks ht;
        make_text(&ht, c->n, c->kind);
        mha_model *m = mha_model_create();
        assert_non_null(m);
        mha_config cfg = {.h = c->h,
                          .d_model = c->d,
                          .seed = 5,
                          .mask = c->causal ? MHA_MASK_CAUSAL : MHA_MASK_NONE,
                          .no_scale = c->no_scale,
                          .pad = c->pad,
                          .weights = MHA_WEIGHTS_PATTERNS};
        compute_or_fail(m, &cfg, &ht.t);
        const int n = m->n, n_real = c->n, dk = c->d / c->h;
        for (int i = 0; i < c->h; i++) {
            const int p = i % 6;
            const int able = dk >= PATTERN_MIN_DK[p];
            char what[160];
            snprintf(what, sizeof what, "case %zu (h=%d d=%d n=%d): name of head %d", ci, c->h,
                     c->d, c->n, i + 1);
            CHECK_STR(what, able ? PATTERN_CYCLE[p] : "none (d_k too small)",
                      mha_head_pattern_name(m, i));
            if (!able) continue;
            long rows = 0, right = 0;
            double mass = 0.0;
            for (int r = 0; r < n_real; r++) {
                const float *a = m->attn + ((size_t)i * n + r) * n;
                const int vis = c->causal ? r + 1 : n_real; /* keys 0 .. vis-1 */
                int best = 0;
                for (int j = 1; j < n; j++)
                    if (a[j] > a[best]) best = j;
                if (p == 5) { /* broad: uniform over the visible keys */
                    rows++;
                    right += a[best] <= 2.0f / (float)vis;
                    continue;
                }
                int target = -1, others = 0, hit = 0;
                double w = 0.0;
                if (p == 4) { /* same-word: another visible occurrence, else itself */
                    for (int j = 0; j < vis; j++)
                        if (j != r && strcmp(ht.t.tokens[j], ht.t.tokens[r]) == 0) {
                            others++;
                            w += a[j];
                            hit |= best == j;
                        }
                    if (!others) target = r;
                } else {
                    target = p == 0 ? r - 1 : p == 1 ? r + 1 : p == 2 ? 0 : r;
                    if (target < 0 || target >= vis) continue; /* no such key */
                }
                if (target >= 0) hit = best == target, w = a[target];
                rows++;
                right += hit;
                mass += w;
            }
            if (rows == 0) continue;
            double frac = (double)right / (double)rows;
            snprintf(what, sizeof what,
                     "case %zu (h=%d d=%d n=%d causal=%d no_scale=%d pad=%d): head %d (%s) "
                     "argmax fraction",
                     ci, c->h, c->d, c->n, c->causal, c->no_scale, c->pad, i + 1, PATTERN_CYCLE[p]);
            CHECK_TRUE(what, frac >= 0.95);
            if (p != 5) {
                /* sharp at T = 1 (with or without scaling): most weight on the target */
                snprintf(what, sizeof what, "case %zu: head %d (%s) mean target weight >= 0.9", ci,
                         i + 1, PATTERN_CYCLE[p]);
                CHECK_TRUE(what, mass / (double)rows >= 0.9);
            }
            g_pstats[p].rows += rows;
            g_pstats[p].right += right;
            g_pstats[p].mass += mass;
            if (frac < g_pstats[p].worst_frac) g_pstats[p].worst_frac = frac;
        }
        mha_model_destroy(m);
        free_toks(&ht);
    }
    for (int p = 0; p < 6; p++)
        if (g_pstats[p].rows)
            print_message("  %-9s rows %6ld  argmax right %.4f (worst head %.4f)  mean target "
                          "weight %.4f\n",
                          PATTERN_CYCLE[p], g_pstats[p].rows,
                          (double)g_pstats[p].right / (double)g_pstats[p].rows,
                          g_pstats[p].worst_frac,
                          p == 5 ? 1.0 : g_pstats[p].mass / (double)g_pstats[p].rows);
}

/* Which heads get which pattern, and that a head too small for its pattern keeps
 * its random weights rather than anything designed. */
static void test_designed_head_names_and_fallback(void **state) {
    (void)state;
    mha_config r = {.h = 6, .d_model = 96};
    mha_config_resolve(&r);
    for (int i = 0; i < 6; i++)
        CHECK_STR("random weights", "random", mha_pattern_name(mha_head_pattern(&r, i)));
    CHECK_INT("min d_k previous", 8, mha_pattern_min_dk(MHA_PATTERN_PREVIOUS));
    CHECK_INT("min d_k same-word", 16, mha_pattern_min_dk(MHA_PATTERN_SAME_WORD));
    CHECK_INT("min d_k first", 1, mha_pattern_min_dk(MHA_PATTERN_FIRST));

    hand_toks ht;
    make_toks(&ht, 10, 1);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    const int d = 64;
    mha_config cfg = {.h = 8, .d_model = d, .seed = 9, .weights = MHA_WEIGHTS_PATTERNS};
    compute_or_fail(m, &cfg, &ht.t); /* d_k = 8: head 5 (same-word) is too small */
    CHECK_STR("head 5 at d_k 8", "none (d_k too small)", mha_head_pattern_name(m, 4));
    CHECK_STR("head 7 at d_k 8", "previous", mha_head_pattern_name(m, 6));
    float *w = malloc((size_t)d * d * sizeof(float));
    assert_non_null(w);
    for (int which = 0; which < 2; which++) {
        mha_weights_init(w, 9, d, which);
        const float *got = which ? m->w_k : m->w_q;
        for (int i = 0; i < 8; i++) {
            int same = 1;
            for (int r = 0; r < d; r++)
                for (int c = i * 8; c < (i + 1) * 8; c++)
                    same &= memcmp(&w[(size_t)r * d + c], &got[(size_t)r * d + c], 4) == 0;
            char what[96];
            snprintf(what, sizeof what, "W_%c columns of head %d equal the random ones",
                     which ? 'K' : 'Q', i + 1);
            CHECK_INT(what, i == 4, same); /* only the head without a pattern */
        }
    }
    /* W_V and W_O stay random; random mode is unchanged by the option existing */
    mha_weights_init(w, 9, d, 2);
    CHECK_INT("W_V random in patterns mode", 0, memcmp(w, m->w_v, (size_t)d * d * 4) != 0);
    mha_weights_init(w, 9, d, 3);
    CHECK_INT("W_O random in patterns mode", 0, memcmp(w, m->w_o, (size_t)d * d * 4) != 0);
    cfg.weights = MHA_WEIGHTS_RANDOM; /* back to random on the same model */
    compute_or_fail(m, &cfg, &ht.t);
    mha_weights_init(w, 9, d, 0);
    CHECK_INT("W_Q random again after patterns", 0, memcmp(w, m->w_q, (size_t)d * d * 4) != 0);
    free(w);
    mha_model_destroy(m);
    free_toks(&ht);
}

/* ------------------------------------------------------------------------------ */
/* the vectorised softmax against a double reference                               */

/* The scalar softmax the core used before it was vectorised: float exp, double
 * sum, a branch on -inf. Kept here only, as a second reference (STYLE.md's "keep
 * the naive reference"). */
static void softmax_rows_scalar_ref(float *a, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        float *row = a + (size_t)r * cols;
        float max = -INFINITY;
        for (int c = 0; c < cols; c++)
            if (row[c] > max) max = row[c];
        if (max == -INFINITY) {
            for (int c = 0; c < cols; c++) row[c] = 0.0f;
            continue;
        }
        double sum = 0.0;
        for (int c = 0; c < cols; c++) {
            float e = row[c] == -INFINITY ? 0.0f : expf(row[c] - max);
            row[c] = e;
            sum += e;
        }
        float inv = (float)(1.0 / sum);
        for (int c = 0; c < cols; c++) row[c] *= inv;
    }
}

/* out (cols) = the exact softmax of src[0, visible) in double; the tail 0 */
static void softmax_ref_double(double *out, const float *src, int visible, int cols) {
    double mx = -INFINITY;
    for (int c = 0; c < visible; c++)
        if (src[c] > mx) mx = src[c];
    double sum = 0.0;
    for (int c = 0; c < cols; c++) {
        out[c] = c < visible && src[c] != -INFINITY && mx != -INFINITY ? exp(src[c] - mx) : 0.0;
        sum += out[c];
    }
    for (int c = 0; c < cols; c++) out[c] = sum > 0.0 ? out[c] / sum : 0.0;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static double rng_unit(void) { /* [0, 1) */
    return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* Tolerance of the float softmax against the exact one, for an entry p of
 * source value x in a row of maximum max:
 *     |got - p| <= (SOFTMAX_REL + |x - max| 2^-24) p + SOFTMAX_ABS.
 * The exp is good to about 2e-7 relative and the sum of up to 1000 terms in float
 * lanes to a few 1e-7 more. x - max is rounded to float, as in any float softmax
 * (the scalar one included): half an ulp of |x - max| is |x - max| 2^-24 relative
 * in exp(x - max), up to 5e-6 for the smallest entries. SOFTMAX_ABS covers entries
 * below the smallest normal float, which become 0. */
#define SOFTMAX_REL 1e-6
#define SOFTMAX_ABS 1.2e-38

/* Checks one row: every entry within tolerance, masked entries exactly 0, sum 1. */
static void check_softmax_row(const char *what, const float *got, const float *src, int visible,
                              int cols, double *worst_rel) {
    double ref[1100];
    softmax_ref_double(ref, src, visible, cols);
    double max = -INFINITY;
    for (int c = 0; c < visible; c++)
        if (src[c] > max) max = src[c];
    double sum = 0.0;
    int any = 0;
    for (int c = 0; c < cols; c++) {
        char w[160];
        snprintf(w, sizeof w, "%s, entry %d of %d (visible %d, src %g)", what, c, cols, visible,
                 c < visible ? (double)src[c] : 0.0);
        const double e = ref[c], g = got[c];
        const double arg = c < visible && isfinite(src[c]) ? max - src[c] : 0.0;
        const double rel = SOFTMAX_REL + arg * 0x1p-24;
        if (!(fabs(g - e) <= rel * e + SOFTMAX_ABS))
            fail_msg("%s: expected %.9g, got %.9g (rel tol %.2g)", w, e, g, rel);
        if (c >= visible || src[c] == -INFINITY)
            CHECK_TRUE("a masked entry is exactly 0", got[c] == 0.0f);
        if (e > 1e-30 && fabs(g - e) / e - arg * 0x1p-24 > *worst_rel)
            *worst_rel = fabs(g - e) / e - arg * 0x1p-24;
        sum += g;
        any |= c < visible && src[c] != -INFINITY;
    }
    if (any)
        CHECK_NEAR("row sum", 1.0, sum, 4e-6);
    else
        CHECK_NEAR("row sum of a fully masked row", 0.0, sum, 0.0);
}

static void test_softmax_kernels(void **state) {
    (void)state;
    static const int lengths[] = {1,  2,  3,  7,   8,   9,   15,  16,  17,  31,  32,  33,
                                  63, 64, 65, 100, 127, 128, 129, 255, 256, 511, 512, 1000};
    static const double ranges[] = {0.01, 1.0, 10.0, 100.0, 1e4};
    static float src[1100], got[1100], scalar[1100];
    double worst[4] = {0, 0, 0, 0}; /* portable, avx2, avx512, the scalar reference */
    int kernels_run = 0;
    for (int k = SOFTMAX_PORTABLE; k <= SOFTMAX_AVX512; k++) {
        if (!softmax_kernel_available((softmax_kernel)k)) {
            print_message("softmax kernel %s: not on this processor, skipped\n",
                          softmax_kernel_name((softmax_kernel)k));
            continue;
        }
        kernels_run++;
        for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
            const int cols = lengths[li];
            for (int pattern = 0; pattern < 6; pattern++)
                for (size_t ri = 0; ri < sizeof ranges / sizeof ranges[0]; ri++) {
                    /* values in [-range, range]; pattern: 0 none masked, 1 a random
                       30 % at -inf, 2 all but one at -inf, 3 all at -inf, 4 every
                       value equal, 5 a visible prefix with garbage (NaN) after it */
                    int visible = cols;
                    for (int c = 0; c < cols; c++)
                        src[c] = (float)((2.0 * rng_unit() - 1.0) * ranges[ri]);
                    if (pattern == 1)
                        for (int c = 0; c < cols; c++)
                            if (rng_unit() < 0.3) src[c] = -INFINITY;
                    if (pattern == 2) {
                        int keep = (int)(rng_unit() * cols);
                        for (int c = 0; c < cols; c++)
                            if (c != keep) src[c] = -INFINITY;
                    }
                    if (pattern == 3)
                        for (int c = 0; c < cols; c++) src[c] = -INFINITY;
                    if (pattern == 4)
                        for (int c = 0; c < cols; c++) src[c] = (float)ranges[ri];
                    if (pattern == 5) {
                        visible = 1 + (int)(rng_unit() * cols);
                        for (int c = visible; c < cols; c++) src[c] = NAN;
                    }
                    char what[96];
                    snprintf(what, sizeof what, "softmax %s, pattern %d, range %g",
                             softmax_kernel_name((softmax_kernel)k), pattern, ranges[ri]);
                    softmax_row(got, src, visible, cols, (softmax_kernel)k);
                    check_softmax_row(what, got, src, visible, cols, &worst[k - 1]);
                    /* in place gives the same bits */
                    memcpy(scalar, src, (size_t)cols * sizeof(float));
                    softmax_row(scalar, scalar, visible, cols, (softmax_kernel)k);
                    CHECK_INT("in place equals out of place", 0,
                              memcmp(scalar, got, (size_t)cols * sizeof(float)));
                    if (pattern != 5 && k == SOFTMAX_PORTABLE) { /* the scalar reference */
                        memcpy(scalar, src, (size_t)cols * sizeof(float));
                        softmax_rows_scalar_ref(scalar, 1, cols);
                        check_softmax_row("scalar reference", scalar, src, cols, cols, &worst[3]);
                    }
                }
        }
    }
    CHECK_TRUE("at least the portable kernel ran", kernels_run >= 1);
    print_message("softmax: worst relative error vs double, beyond |x - max| 2^-24: portable "
                  "%.2g, avx2 %.2g, avx512 %.2g, scalar reference %.2g (tolerance %.1g)\n",
                  worst[0], worst[1], worst[2], worst[3], SOFTMAX_REL);
    /* mha_softmax_rows runs the kernel SOFTMAX_AUTO picks, several rows at once */
    float rows[3][5] = {{1, 2, 3, -INFINITY, 4},
                        {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
                        {0, 0, 0, 0, 0}};
    float copy[3][5];
    memcpy(copy, rows, sizeof rows);
    mha_softmax_rows(&rows[0][0], 3, 5);
    double w = 0.0;
    for (int r = 0; r < 3; r++) check_softmax_row("mha_softmax_rows", rows[r], copy[r], 5, 5, &w);
}

/* ------------------------------------------------------------------------------ */
/* what the model keeps between calls                                              */

/* Every tensor of a against b: X and the weights bit for bit (they are made by the
 * same code), the rest within 1e-5 of the largest magnitude of each tensor (the
 * products of fewer rows may round differently inside OpenBLAS). */
static void check_same_model(const char *what, const mha_model *a, const mha_model *b) {
    CHECK_INT("same n", b->n, a->n);
    CHECK_INT("same d_model", b->cfg.d_model, a->cfg.d_model);
    CHECK_INT("same h", b->cfg.h, a->cfg.h);
    const size_t n = (size_t)a->n, d = (size_t)a->cfg.d_model, h = (size_t)a->cfg.h;
    const struct {
        const char *name;
        const float *x, *y;
        size_t count;
        int exact;
    } parts[] = {
        {"w_q", a->w_q, b->w_q, d * d, 1},
        {"w_k", a->w_k, b->w_k, d * d, 1},
        {"w_v", a->w_v, b->w_v, d * d, 1},
        {"w_o", a->w_o, b->w_o, d * d, 1},
        {"x", a->x, b->x, n * d, 1},
        {"q", a->q, b->q, n * d, 0},
        {"k", a->k, b->k, n * d, 0},
        {"v", a->v, b->v, n * d, 0},
        {"scores", a->scores, b->scores, h * n * n, 0},
        {"attn", a->attn, b->attn, h * n * n, 0},
        {"heads", a->heads, b->heads, n * d, 0},
        {"concat", a->concat, b->concat, n * d, 0},
        {"out", a->out, b->out, n * d, 0},
        {"out_full", a->out_full, b->out_full, n * d, 0},
    };
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        char w[160];
        snprintf(w, sizeof w, "%s: %s", what, parts[p].name);
        if (parts[p].exact) {
            CHECK_INT(w, 0, memcmp(parts[p].x, parts[p].y, parts[p].count * sizeof(float)));
            continue;
        }
        double mx = 0.0;
        for (size_t i = 0; i < parts[p].count; i++)
            if (isfinite(parts[p].y[i])) mx = fmax(mx, fabs(parts[p].y[i]));
        for (size_t i = 0; i < parts[p].count; i++) {
            const float g = parts[p].x[i], e = parts[p].y[i];
            if (isinf(e) || isinf(g)) {
                if (g != e) fail_msg("%s[%zu]: expected %g, got %g", w, i, (double)e, (double)g);
                continue;
            }
            if (!(fabs((double)g - e) <= 1e-5 * mx))
                fail_msg("%s[%zu]: expected %.9g, got %.9g (tol %.3g)", w, i, (double)e, (double)g,
                         1e-5 * mx);
        }
    }
}

/* One model taken through 300 random changes (h, d_model, seed, tokens, padding,
 * mask, temperature, weights mode, ablation) equals, after each, a model made
 * fresh for the same input: the caches never show a stale number. */
static void test_caches_match_fresh(void **state) {
    (void)state;
    static const int ds[] = {16, 24, 32, 48, 64};
    char *toks_store[40];
    int word[40];
    int n = 10;
    for (int i = 0; i < 40; i++) word[i] = (i * 5) % NWORDS;
    mha_config cfg = {.h = 4, .d_model = 32, .seed = 1};
    mha_model *m = mha_model_create();
    assert_non_null(m);
    rng_state = 12345;
    for (int step = 0; step < 300; step++) {
        const int what = (int)(rng_unit() * 10);
        switch (what) {
        case 0: /* h: another divisor of d_model */
        case 1: {
            int h;
            do h = 1 + (int)(rng_unit() * cfg.d_model);
            while (cfg.d_model % h != 0);
            cfg.h = h;
            break;
        }
        case 2: /* d_model, h kept if it divides */
            cfg.d_model = ds[(int)(rng_unit() * 5)];
            if (cfg.d_model % cfg.h != 0) cfg.h = 4;
            break;
        case 3: cfg.seed = 1 + (uint64_t)(rng_unit() * 3); break;
        case 4: word[(int)(rng_unit() * n)] = (int)(rng_unit() * NWORDS); break; /* one token */
        case 5: /* the text grows or shrinks at the end */
            n = rng_unit() < 0.5 ? (n < 40 ? n + 1 : n) : (n > 1 ? n - 1 : n);
            break;
        case 6: cfg.pad = rng_unit() < 0.5 ? 0 : 40; break;
        case 7:
            cfg.mask = rng_unit() < 0.5 ? MHA_MASK_CAUSAL : MHA_MASK_NONE;
            cfg.temperature = rng_unit() < 0.5 ? 1.0f : 0.5f;
            break;
        case 8:
            cfg.weights =
                cfg.weights == MHA_WEIGHTS_RANDOM ? MHA_WEIGHTS_PATTERNS : MHA_WEIGHTS_RANDOM;
            break;
        default:
            memset(cfg.ablate, 0, sizeof cfg.ablate);
            if (rng_unit() < 0.5) mha_config_set_ablated(&cfg, 0, 1);
            break;
        }
        if (cfg.pad && cfg.pad < n) cfg.pad = 0;
        for (int i = 0; i < n; i++) toks_store[i] = (char *)WORDS[word[i]];
        tok_list t = {.count = n, .tokens = toks_store, .replaced = 0};
        compute_or_fail(m, &cfg, &t);
        mha_model *fresh = mha_model_create();
        assert_non_null(fresh);
        compute_or_fail(fresh, &cfg, &t);
        char w[128];
        snprintf(w, sizeof w, "step %d (change %d: n=%d d=%d h=%d seed=%d pad=%d weights=%d)", step,
                 what, n, cfg.d_model, cfg.h, (int)cfg.seed, cfg.pad, (int)cfg.weights);
        check_same_model(w, m, fresh);
        mha_model_destroy(fresh);
    }
    mha_model_destroy(m);
}

/* What is kept, counted: the weights across h, the rows of X whose token did not
 * change, and the rows of Q, K, V that mha_update need not project again. */
static void test_cache_counters(void **state) {
    (void)state;
    char *store[13];
    for (int i = 0; i < 13; i++) store[i] = (char *)WORDS[i % NWORDS];
    tok_list t = {.count = 12, .tokens = store, .replaced = 0};
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = 4, .d_model = 64, .seed = 1};
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("weights built once", 1, m->weights_built_);
    CHECK_INT("X rows built", 12, m->x_rows_built_);
    CHECK_INT("Q, K, V rows projected", 12, m->qkv_rows_built_);
    const float *w_q = m->w_q;
    const float w0 = m->w_q[65];

    cfg.h = 8; /* h alone: nothing before the scores is computed again */
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("weights kept across h", 1, m->weights_built_);
    CHECK_TRUE("the same weight block across h", m->w_q == w_q && m->w_q[65] == w0);
    CHECK_INT("X kept across h", 12, m->x_rows_built_);
    CHECK_INT("Q, K, V kept across h", 12, m->qkv_rows_built_);

    cfg.mask = MHA_MASK_CAUSAL; /* mask, temperature, ablation: the same */
    cfg.temperature = 2.0f;
    mha_config_set_ablated(&cfg, 1, 1);
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("X kept across mask and temperature", 12, m->x_rows_built_);
    CHECK_INT("Q, K, V kept across mask and temperature", 12, m->qkv_rows_built_);

    store[5] = (char *)"dog"; /* one token: its row of X; Q, K, V from it on */
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("one row of X for one token", 13, m->x_rows_built_);
    CHECK_INT("Q, K, V rows 5..11 for a token at 5", 12 + 7, m->qkv_rows_built_);

    t.count = 13; /* a token typed at the end: one row of each */
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("one row of X for a token at the end", 14, m->x_rows_built_);
    CHECK_INT("one row of Q, K, V for a token at the end", 20, m->qkv_rows_built_);

    mha_forward(m); /* the whole pass projects every row */
    CHECK_INT("mha_forward projects every row", 33, m->qkv_rows_built_);

    cfg.seed = 2; /* the seed: all of it */
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("weights built for a new seed", 2, m->weights_built_);
    CHECK_INT("X rebuilt for a new seed", 27, m->x_rows_built_);
    CHECK_INT("Q, K, V for a new seed", 46, m->qkv_rows_built_);

    cfg.weights = MHA_WEIGHTS_PATTERNS; /* designed heads depend on h */
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("weights built for designed heads", 3, m->weights_built_);
    CHECK_INT("X rebuilt for designed heads", 40, m->x_rows_built_);
    cfg.h = 4;
    compute_or_fail(m, &cfg, &t);
    CHECK_INT("designed heads: weights built again for a new h", 4, m->weights_built_);
    CHECK_INT("designed heads: X rebuilt for a new h", 53, m->x_rows_built_);
    mha_model_destroy(m);
}

/* malloc, calloc and realloc are wrapped in this test binary (-Wl,--wrap, see
 * tests/CMakeLists.txt): every call from mhaviz's own code is counted here. */
void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
static unsigned long g_allocs;
void *__wrap_malloc(size_t size) {
    g_allocs++;
    return __real_malloc(size);
}
void *__wrap_calloc(size_t count, size_t size) {
    g_allocs++;
    return __real_calloc(count, size);
}
void *__wrap_realloc(void *p, size_t size) {
    g_allocs++;
    return __real_realloc(p, size);
}

static void test_no_allocation_in_forward(void **state) {
    (void)state;
    hand_toks ht;
    make_toks(&ht, 40, 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = 8, .d_model = 64, .seed = 1, .mask = MHA_MASK_CAUSAL};
    mha_config_set_ablated(&cfg, 2, 1);
    unsigned long before = g_allocs;
    compute_or_fail(m, &cfg, &ht.t);
    CHECK_TRUE("the wrapper sees the model's allocations", g_allocs - before >= 3);
    before = g_allocs;
    for (int i = 0; i < 5; i++) {
        mha_forward(m);
        mha_update(m);
        compute_or_fail(m, &cfg, &ht.t); /* the same input */
    }
    float rows[4][9] = {{0}};
    mha_softmax_rows(&rows[0][0], 4, 9);
    CHECK_INT("allocations in mha_forward, mha_update and a steady mha_model_compute", 0,
              g_allocs - before);
    mha_model_destroy(m);
    free_toks(&ht);
}

/* ------------------------------------------------------------------------------ */
/* mm_parallel: the worker pool behind the forward pass                            */

/* Two workers for the cases that run "on 2 workers": the forward then splits
   into tasks whatever its size (the choice by size is off while forced). */
static int force_two_workers(void **state) {
    (void)state;
    mm_threads_force(2);
    return 0;
}
static int force_off(void **state) {
    (void)state;
    mm_threads_force(0);
    return 0;
}

typedef struct {
    int *runs;  /* runs[t]: how often task t ran */
    int nested; /* 1: each task starts a job of its own */
    int *inner; /* that job's runs, one slot per (task, inner task) */
} count_job;

static void inner_task(void *ctx, int t) {
    int *slot = ctx;
    slot[t]++;
}

static void count_task(void *ctx, int t) {
    count_job *j = ctx;
    j->runs[t]++;
    if (j->nested) mm_parallel(3, 2, inner_task, j->inner + 3 * t);
    for (volatile int spin = 0; spin < (t % 7) * 200; spin++) {
    } /* uneven tasks */
}

/* The caches against fresh models, both split into tasks on two workers: the
 * rows of Q, K, V that mha_update projects again come out as a full forward's. */
static void test_caches_match_fresh_two_workers(void **state) {
    test_caches_match_fresh(state);
}

/* Every task of every job runs exactly once, whatever the count and however
 * the two workers share them; a job started inside a task runs (on its own
 * thread) as well; and a child process forked after the helper started (it
 * has no helper) still finishes its jobs. */
static void test_parallel_runs_each_task_once(void **state) {
    (void)state;
    enum { MAXC = 300 };
    int runs[MAXC], inner[3 * MAXC];
    mm_threads_force(2);
    for (int job = 0; job < 400; job++) {
        const int count = 1 + (job * 37) % MAXC;
        count_job j = {runs, job % 5 == 0, inner};
        memset(runs, 0, sizeof runs);
        memset(inner, 0, sizeof inner);
        mm_parallel(count, 2, count_task, &j);
        for (int t = 0; t < count; t++) {
            char what[96];
            snprintf(what, sizeof what, "job %d (%d tasks): runs of task %d", job, count, t);
            CHECK_INT(what, 1, runs[t]);
            for (int i = 0; i < 3; i++) {
                snprintf(what, sizeof what, "job %d: runs of inner task %d of task %d", job, i, t);
                CHECK_INT(what, j.nested ? 1 : 0, inner[3 * t + i]);
            }
        }
    }
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok = 1;
        for (int job = 0; job < 50 && ok; job++) {
            count_job j = {runs, 0, inner};
            memset(runs, 0, sizeof runs);
            mm_parallel(64, 2, count_task, &j);
            for (int t = 0; t < 64; t++) ok = ok && runs[t] == 1;
        }
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK_INT("waitpid", pid, waitpid(pid, &status, 0));
    CHECK_TRUE("a forked child runs its jobs to the end, each task once",
               WIFEXITED(status) && WEXITSTATUS(status) == 0);
    mm_threads_force(0);
}

/* The memory bound: 1.5 GiB of tensors, counted as 4 d^2 + 8 n d + 2 h n^2 floats. */
static void test_memory_bound(void **state) {
    (void)state;
    mha_config c = {.h = 16, .d_model = 1024, .seed = 1};
    mha_config_resolve(&c);
    /* 4 * 2^20 + 8 * 512 * 1024 + 2 * 16 * 512^2 = 2^24 floats = 64 MiB */
    CHECK_INT("bytes at (512, 1024, 16)", UINT64_C(67108864), mha_model_bytes(&c, 512));
    CHECK_INT("the bound is 1.5 GiB", UINT64_C(1610612736), MHA_MAX_MODEL_BYTES);
    /* at n = 512, d_model = 4096 the bound leaves (1.5 GiB / 4 - 4 d^2 - 8 n d) / (2 n^2)
       = 608 heads: h = 512 fits, h = 1024 does not */
    const struct {
        int n, pad, d, h, ok;
    } L[] = {
        {512, 0, 4096, 512, 1}, {512, 0, 4096, 1024, 0},  {512, 0, 4096, 4096, 0},
        {10, 0, 4096, 4096, 1}, {10, 512, 4096, 4096, 0}, {512, 0, 1024, 512, 1},
    };
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        mha_config k = {.h = L[i].h, .d_model = L[i].d, .seed = 1, .pad = L[i].pad};
        char err[MHA_ERR_LEN] = "";
        char what[96];
        snprintf(what, sizeof what, "mha_config_check(n=%d, pad=%d, d=%d, h=%d)", L[i].n, L[i].pad,
                 L[i].d, L[i].h);
        CHECK_INT(what, L[i].ok ? 0 : -1, mha_config_check(&k, L[i].n, err, sizeof err));
        if (!L[i].ok) {
            CHECK_TRUE("the message names the bound", strstr(err, "1.5 GiB") != NULL);
            CHECK_TRUE("the message is one line", strchr(err, '\n') == NULL);
        }
    }
    /* a model refuses it and keeps what it had */
    hand_toks ht;
    make_toks(&ht, 512, 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config good = {.h = 2, .d_model = 8, .seed = 1};
    compute_or_fail(m, &good, &ht.t);
    mha_config huge = {.h = 4096, .d_model = 4096, .seed = 1};
    char err[MHA_ERR_LEN] = "";
    CHECK_INT("mha_model_set beyond the bound", -1,
              mha_model_set(m, &huge, &ht.t, err, sizeof err));
    CHECK_INT("allocations after a refused set", 3, m->allocations_);
    CHECK_INT("h after a refused set", 2, m->cfg.h);
    mha_model_destroy(m);
    free_toks(&ht);
}

/* ------------------------------------------------------------------------------ */

int main(void) {
    enum { NFIXED = 23 };
    static char names2[NCASES + NLCASES][200];
    struct CMUnitTest tests[2 * (NCASES + NLCASES) + NFIXED];
    int k = 0;
    for (int i = 0; i < NCASES; i++) {
        mcase *c = &CASES[i];
        snprintf(c->name, sizeof c->name, "reference n=%d d=%d h=%d%s%s seed=%llu", c->n, c->d,
                 c->h, c->causal ? " causal" : "", c->no_scale ? " unscaled" : "",
                 (unsigned long long)c->seed);
        tests[k++] = (struct CMUnitTest){c->name, test_against_reference, NULL, NULL, c};
    }
    for (int i = 0; i < NLCASES; i++) {
        lcase *c = &LCASES[i];
        snprintf(c->name, sizeof c->name,
                 "reference n=%d d=%d h=%d%s%s pad=%d T=%g ablate=0x%llx seed=%llu", c->n_text,
                 c->d, c->h, c->causal ? " causal" : "", c->no_scale ? " unscaled" : "", c->pad,
                 c->temperature ? (double)c->temperature : 1.0, (unsigned long long)c->ablate,
                 (unsigned long long)c->seed);
        tests[k++] = (struct CMUnitTest){c->name, test_lesson_against_reference, NULL, NULL, c};
    }
    for (int i = 0; i < NCASES + NLCASES; i++) { /* the same on two workers */
        snprintf(names2[i], sizeof names2[i], "%s, 2 workers", tests[i].name);
        tests[k] = tests[i];
        tests[k].name = names2[i];
        tests[k].setup_func = force_two_workers;
        tests[k++].teardown_func = force_off;
    }
    const struct CMUnitTest fixed[NFIXED] = {
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_resplit_invariance),
        cmocka_unit_test(test_weights_change_with_d_and_seed),
        cmocka_unit_test(test_positional_formula),
        cmocka_unit_test(test_repeated_word_same_embedding),
        cmocka_unit_test(test_embedding_distribution),
        cmocka_unit_test(test_softmax_stability),
        cmocka_unit_test(test_config_resolve),
        cmocka_unit_test(test_config_limits),
        cmocka_unit_test(test_no_realloc_at_steady_shape),
        cmocka_unit_test(test_glorot),
        cmocka_unit_test(test_ablation_leaves_the_rest),
        cmocka_unit_test(test_padding_keeps_real_rows),
        cmocka_unit_test(test_lesson_config_limits),
        cmocka_unit_test(test_designed_heads),
        cmocka_unit_test(test_designed_head_names_and_fallback),
        cmocka_unit_test(test_softmax_kernels),
        cmocka_unit_test(test_caches_match_fresh),
        cmocka_unit_test(test_cache_counters),
        cmocka_unit_test(test_no_allocation_in_forward),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_parallel_runs_each_task_once),
        cmocka_unit_test_setup_teardown(test_caches_match_fresh_two_workers, force_two_workers,
                                        force_off),
    };
    for (int i = 0; i < NFIXED; i++) tests[k++] = fixed[i];
    return _cmocka_run_group_tests("mha", tests, (size_t)k, NULL, NULL);
}
