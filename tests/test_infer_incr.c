/* test_infer_incr.c: the loaded model's incremental forward (tf_infer_update,
 * src/learn/infer.c and block.c) against the whole forward from layer 0
 * (tf_infer_run) on random models of three specs (GPT-2's: LayerNorm, learned
 * positions, causal; Llama's: RMSNorm, RoPE, grouped K/V heads, QK-norm, SwiGLU;
 * BERT's: post-LN, attention both ways, token types; ALBERT's factorised and
 * shared layers with RoBERTa's positions) and random texts, after each
 * kind of edit: a first run, one token typed at the end, three more, a token
 * changed in the middle, one deleted in the middle, the last two deleted, a head
 * removed in the first layer and in the last, every head back, a token typed with
 * a head removed. The tolerances are the model tests' (tests/spec_check.py): the
 * attention within 1e-4, Q, K, each layer's output and stream, the final norm and
 * the next-token probabilities within 1e-3 relative (max |difference| / max
 * |reference|). Also: an edit that leaves the text and heads as they were computes
 * nothing; a head removed in the last layer computes that layer only; a trace two
 * edits behind brought to the incremental one by copying (tf_infer_sync) equals the
 * whole forward too and computes no row; the checker catches a run on another text
 * (so it can fail). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "transformer.h"

enum { CTX = 64, VOCAB = 97, MAX_EDITS = 16 };

/* splitmix64, here so that the test draws its own numbers */
static uint64_t next_u64(uint64_t *st) {
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int rng_below(uint64_t *st, int n) {
    return (int)(next_u64(st) % (uint64_t)n);
}

/* uniform in [-1, 1) */
static double rng_sym(uint64_t *st) {
    return (double)(next_u64(st) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static model_spec spec_gpt2(void) {
    return (model_spec){.vocab = VOCAB,
                        .ctx = CTX,
                        .layers = 3,
                        .d_model = 32,
                        .d_ff = 64,
                        .norm = SPEC_LAYERNORM,
                        .norm_eps = 1e-5f,
                        .pos = SPEC_POS_LEARNED,
                        .h = 4,
                        .h_kv = 4,
                        .head_dim = 8,
                        .qkv_bias = 1,
                        .o_bias = 1,
                        .causal = 1,
                        .mlp = SPEC_MLP_GELU_TANH,
                        .mlp_bias = 1,
                        .head = SPEC_HEAD_TIED};
}

static model_spec spec_llama(void) {
    return (model_spec){.vocab = VOCAB,
                        .ctx = CTX,
                        .layers = 3,
                        .d_model = 24,
                        .d_ff = 40,
                        .norm = SPEC_RMSNORM,
                        .norm_eps = 1e-6f,
                        .pos = SPEC_POS_ROPE,
                        .rope_theta = 10000.0f,
                        .h = 4,
                        .h_kv = 2,
                        .head_dim = 8,
                        .qk_norm = 1,
                        .causal = 1,
                        .mlp = SPEC_MLP_SWIGLU,
                        .head = SPEC_HEAD_LINEAR};
}

static model_spec spec_bert(void) {
    return (model_spec){.vocab = VOCAB,
                        .ctx = CTX,
                        .layers = 2,
                        .d_model = 32,
                        .d_ff = 48,
                        .norm = SPEC_LAYERNORM,
                        .post_ln = 1,
                        .norm_eps = 1e-12f,
                        .pos = SPEC_POS_LEARNED,
                        .h = 4,
                        .h_kv = 4,
                        .head_dim = 8,
                        .qkv_bias = 1,
                        .o_bias = 1,
                        .causal = 0,
                        .mlp = SPEC_MLP_GELU_ERF,
                        .mlp_bias = 1,
                        .token_types = 2,
                        .head = SPEC_HEAD_TIED};
}

/* RoBERTa's positions (after the pad id) and ALBERT's factorised, shared layers. */
static model_spec spec_albert(void) {
    model_spec s = spec_bert();
    s.pos_after_pad = 1;
    s.pad_id = 1;
    s.d_embed = 16;
    s.shared_layers = 1;
    s.pos_rows = CTX + 2; /* the positions start after the pad id */
    return s;
}

/* Every parameter uniform in [-0.8, 0.8): biases and gains random too. */
static transformer *random_model(const model_spec *s, uint64_t seed) {
    char err[256] = "";
    transformer *tf = tf_create_spec(s, err, sizeof err);
    if (!tf) fail_msg("tf_create_spec: %s", err);
    uint64_t st = seed;
    for (size_t i = 0; i < tf->n_params; i++) tf->params[i] = (float)(0.8 * rng_sym(&st));
    return tf;
}

/* max |a - b| / max |b| over count floats (0 when both are zero) */
static double rel_err(const float *a, const float *b, size_t count) {
    double diff = 0.0, ref = 0.0;
    for (size_t i = 0; i < count; i++) {
        const double d = fabs((double)a[i] - b[i]);
        diff = d > diff || d != d ? d : diff;
        ref = fabs((double)b[i]) > ref ? fabs((double)b[i]) : ref;
    }
    return ref > 0.0 ? diff / ref : diff;
}

static double abs_err(const float *a, const float *b, size_t count) {
    double diff = 0.0;
    for (size_t i = 0; i < count; i++) {
        const double d = fabs((double)a[i] - b[i]);
        diff = d > diff || d != d ? d : diff;
    }
    return diff;
}

/* The first tensor of got that is off ref beyond the tolerances, said into why;
   0 when every one is within. */
static int compare(tf_infer *got, tf_infer *ref, char *why, size_t len) {
    const model_spec *s = &ref->tf->spec;
    const int n = ref->n, d = s->d_model, qd = spec_q_dim(s), kvd = spec_kv_dim(s), cap = ref->cap;
    if (got->n != n) {
        snprintf(why, len, "n: expected %d, got %d", n, got->n);
        return 1;
    }
    /* each layer's attention as the view asks for it: computed from the kept Q, K, V */
    const size_t nn = (size_t)s->h * n * n;
    float *a_got = malloc(2 * nn * sizeof(float)), *heads = malloc((size_t)n * qd * sizeof(float));
    assert_non_null(a_got);
    assert_non_null(heads);
    float *a_ref = a_got + nn;
    for (int l = 0; l < s->layers; l++) {
        const size_t at_d = (size_t)l * cap * d, at_q = (size_t)l * cap * qd;
        const size_t at_kv = (size_t)l * cap * kvd;
        tf_infer_attn(got, l, a_got, a_got, heads);
        tf_infer_attn(ref, l, a_ref, a_ref, heads);
        struct {
            const char *name;
            double err, tol;
        } t[] = {
            {"attn", abs_err(a_got, a_ref, nn), 1e-4},
            {"q", rel_err(got->q + at_q, ref->q + at_q, (size_t)n * qd), 1e-3},
            {"k", rel_err(got->k + at_kv, ref->k + at_kv, (size_t)n * kvd), 1e-3},
            {"v", rel_err(got->v + at_kv, ref->v + at_kv, (size_t)n * kvd), 1e-3},
            {"out", rel_err(got->out + at_d, ref->out + at_d, (size_t)n * d), 1e-3},
            {"stream",
             rel_err(got->resid + at_d + (size_t)cap * d, ref->resid + at_d + (size_t)cap * d,
                     (size_t)n * d),
             1e-3},
        };
        for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
            if (!(t[k].err <= t[k].tol)) {
                snprintf(why, len, "layer %d %s: expected within %g, got %.3g", l + 1, t[k].name,
                         t[k].tol, t[k].err);
                free(a_got), free(heads);
                return 1;
            }
    }
    free(a_got), free(heads);
    const double ef = rel_err(got->lnf, ref->lnf, (size_t)n * d);
    const double ep = rel_err(got->probs, ref->probs, (size_t)s->vocab);
    if (!(ef <= 1e-3) || !(ep <= 1e-3)) {
        snprintf(why, len, "final %.3g, probs %.3g: expected within 1e-3", ef, ep);
        return 1;
    }
    return 0;
}

typedef struct {
    const char *name;
    int ids[CTX];
    int n;
    unsigned char off[8 * 8];
} text_state;

/* The edits of the header, each from the state before, into ed (count returned). */
static int make_edits(text_state *ed, const model_spec *s, uint64_t *st) {
    text_state c = {.name = "first run", .n = 8 + rng_below(st, 24)};
    for (int i = 0; i < c.n; i++) c.ids[i] = rng_below(st, VOCAB);
    int k = 0;
    ed[k++] = c;
    c.name = "one token typed at the end";
    c.ids[c.n++] = rng_below(st, VOCAB);
    ed[k++] = c;
    c.name = "three tokens typed at the end";
    for (int i = 0; i < 3; i++) c.ids[c.n++] = rng_below(st, VOCAB);
    ed[k++] = c;
    c.name = "a token changed in the middle";
    c.ids[c.n / 2] = (c.ids[c.n / 2] + 1 + rng_below(st, VOCAB - 1)) % VOCAB;
    ed[k++] = c;
    c.name = "a token deleted in the middle";
    memmove(c.ids + c.n / 3, c.ids + c.n / 3 + 1, (size_t)(c.n - c.n / 3 - 1) * sizeof(int));
    c.n--;
    ed[k++] = c;
    c.name = "the last two tokens deleted";
    c.n -= 2;
    ed[k++] = c;
    c.name = "a head removed in the first layer";
    c.off[rng_below(st, s->h)] = 1;
    ed[k++] = c;
    c.name = "a head removed in the last layer";
    c.off[(s->layers - 1) * s->h + rng_below(st, s->h)] = 1;
    ed[k++] = c;
    c.name = "a token typed with heads removed";
    c.ids[c.n++] = rng_below(st, VOCAB);
    ed[k++] = c;
    c.name = "every head back";
    memset(c.off, 0, sizeof c.off);
    ed[k++] = c;
    return k;
}

static void check_spec(const model_spec *s, const char *what) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        transformer *tf = random_model(s, seed * 7919);
        tf_infer *inc = tf_infer_create(tf, CTX, s->h), *ref = tf_infer_create(tf, CTX, s->h);
        tf_infer *lag = tf_infer_create(tf, CTX, s->h);
        CHECK_TRUE("tf_infer_create", inc && ref && lag);
        uint64_t st = seed;
        text_state ed[MAX_EDITS];
        const int count = make_edits(ed, s, &st);
        for (int e = 0; e < count; e++) {
            const int from = tf_infer_update(inc, ed[e].ids, ed[e].n, ed[e].off);
            tf_infer_run(ref, ed[e].ids, ed[e].n, ed[e].off, 0);
            char why[256];
            if (compare(inc, ref, why, sizeof why))
                fail_msg("%s, seed %llu, after %s (n = %d): %s", what, (unsigned long long)seed,
                         ed[e].name, ed[e].n, why);
            /* a trace two edits behind, brought to inc by copying what differs */
            tf_infer_update(lag, ed[e > 1 ? e - 2 : 0].ids, ed[e > 1 ? e - 2 : 0].n,
                            ed[e > 1 ? e - 2 : 0].off);
            const unsigned long rows = lag->rows_run;
            tf_infer_sync(lag, inc);
            CHECK_INT("tf_infer_sync computes no row", 0, (int)(lag->rows_run - rows));
            if (compare(lag, ref, why, sizeof why))
                fail_msg("%s, seed %llu, synced to %s from two edits before (n = %d): %s", what,
                         (unsigned long long)seed, ed[e].name, ed[e].n, why);
            CHECK_INT("then the same text and heads: nothing computed", s->layers,
                      tf_infer_update(lag, ed[e].ids, ed[e].n, ed[e].off));
            if (strcmp(ed[e].name, "a head removed in the last layer") == 0)
                CHECK_INT("a head removed in the last layer: the first layer computed",
                          s->layers - 1, from);
            if (s->causal && strcmp(ed[e].name, "one token typed at the end") == 0)
                CHECK_INT("one token typed: no layer computed in full", s->layers, from);
            if (!s->causal && strcmp(ed[e].name, "one token typed at the end") == 0)
                CHECK_INT("an encoder, one token typed: every layer in full", 0, from);
        }
        /* nothing changed: nothing computed */
        CHECK_INT("the same text and heads again", s->layers,
                  tf_infer_update(inc, ed[count - 1].ids, ed[count - 1].n, ed[count - 1].off));
        tf_infer_destroy(inc);
        tf_infer_destroy(ref);
        tf_infer_destroy(lag);
        tf_destroy(tf);
    }
}

static void test_gpt2(void **state) {
    (void)state;
    const model_spec s = spec_gpt2();
    check_spec(&s, "GPT-2's spec");
}

static void test_llama(void **state) {
    (void)state;
    const model_spec s = spec_llama();
    check_spec(&s, "Llama's spec");
}

static void test_bert(void **state) {
    (void)state;
    const model_spec s = spec_bert();
    check_spec(&s, "BERT's spec");
}

static void test_albert(void **state) {
    (void)state;
    const model_spec s = spec_albert();
    check_spec(&s, "ALBERT's spec with RoBERTa's positions");
}

/* The whole context of GPT-2 (1024 positions) on a small model of its spec and of
   Llama's: a first run of 1023 tokens, one typed at the end (n = 1024), one changed
   at n / 2, a head removed in the last layer; every layer's attention (computed
   again from Q and K, as the view asks for it) and tensors against the whole forward. */
static void check_long(model_spec s, const char *what) {
    s.ctx = TF_MAX_CTX;
    transformer *tf = random_model(&s, 17);
    tf_infer *inc = tf_infer_create(tf, TF_MAX_CTX, s.h),
             *ref = tf_infer_create(tf, TF_MAX_CTX, s.h);
    CHECK_TRUE("tf_infer_create at 1024 tokens", inc && ref);
    static int ids[TF_MAX_CTX];
    unsigned char off[8 * 8] = {0};
    uint64_t st = 23;
    for (int i = 0; i < TF_MAX_CTX; i++) ids[i] = rng_below(&st, VOCAB);
    static const char *const names[] = {"1023 tokens", "one typed at the end (1024)",
                                        "one changed at 512", "a head removed in the last layer"};
    for (int e = 0; e < 4; e++) {
        const int n = e == 0 ? TF_MAX_CTX - 1 : TF_MAX_CTX;
        if (e == 2) ids[n / 2] = (ids[n / 2] + 1) % VOCAB;
        if (e == 3) off[(s.layers - 1) * s.h + 1] = 1;
        const int from = tf_infer_update(inc, ids, n, off);
        if (e == 1) CHECK_INT("one token typed at 1024: no layer in full", s.layers, from);
        tf_infer_run(ref, ids, n, off, 0);
        char why[256];
        if (compare(inc, ref, why, sizeof why)) fail_msg("%s, after %s: %s", what, names[e], why);
    }
    tf_infer_destroy(inc);
    tf_infer_destroy(ref);
    tf_destroy(tf);
}

static void test_long(void **state) {
    (void)state;
    check_long(spec_gpt2(), "GPT-2's spec at 1024 tokens");
    check_long(spec_llama(), "Llama's spec at 1024 tokens");
}

/* The checker itself: a run on a text one token apart is caught. */
static void test_checker_catches(void **state) {
    (void)state;
    const model_spec s = spec_gpt2();
    transformer *tf = random_model(&s, 3);
    tf_infer *a = tf_infer_create(tf, CTX, s.h), *b = tf_infer_create(tf, CTX, s.h);
    int ids[20];
    uint64_t st = 5;
    for (int i = 0; i < 20; i++) ids[i] = rng_below(&st, VOCAB);
    tf_infer_run(a, ids, 20, NULL, 0);
    ids[19] = (ids[19] + 1) % VOCAB;
    tf_infer_run(b, ids, 20, NULL, 0);
    char why[256] = "";
    CHECK_TRUE("the checker sees a changed last token", compare(a, b, why, sizeof why) != 0);
    tf_infer_destroy(a);
    tf_infer_destroy(b);
    tf_destroy(tf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt2), cmocka_unit_test(test_llama),
        cmocka_unit_test(test_bert), cmocka_unit_test(test_albert),
        cmocka_unit_test(test_long), cmocka_unit_test(test_checker_catches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
