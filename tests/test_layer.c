/* test_layer.c: attn_layer's small questions (layer.c) and the random/designed
 * model as its source (mha_layer_fill, mha_layer.c). The scale and the change
 * switching heads off makes are checked against arithmetic written out here;
 * the filled layer against the model and the text it was computed for. */
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
#include "layer.h"
#include "mha.h"
#include "tok.h"

static void test_attn_scale(void **st) {
    (void)st;
    /* exact cases: powers of two */
    CHECK_NEAR("d_k 16, scaled: 1/4", 0.25, attn_scale(16, 1, 1.0f), 0.0);
    CHECK_NEAR("d_k 64, scaled, T 2: 1/16", 0.0625, attn_scale(64, 1, 2.0f), 0.0);
    CHECK_NEAR("d_k 4, unscaled, T 0.5: 2", 2.0, attn_scale(4, 0, 0.5f), 0.0);
    CHECK_NEAR("unscaled, T 0 counts as 1", 1.0, attn_scale(7, 0, 0.0f), 0.0);
    CHECK_NEAR("scaled, T 0 counts as 1: 1/sqrt(4)", 0.5, attn_scale(4, 1, 0.0f), 0.0);
    CHECK_NEAR("a negative T counts as 1", 0.5, attn_scale(4, 1, -3.0f), 0.0);
    CHECK_NEAR("d_k 1: 1", 1.0, attn_scale(1, 1, 1.0f), 0.0);
    /* the rest: (scale sqrt(d_k) T)^2 = 1 to float precision */
    static const int dks[] = {2, 3, 5, 8, 12, 96, 4096};
    static const float temps[] = {0.05f, 0.3f, 1.0f, 1.5f, 7.0f, 20.0f};
    for (size_t a = 0; a < sizeof dks / sizeof dks[0]; a++)
        for (size_t b = 0; b < sizeof temps / sizeof temps[0]; b++) {
            const double t = temps[b], dk = dks[a];
            const double s = attn_scale(dks[a], 1, temps[b]), u = attn_scale(dks[a], 0, temps[b]);
            CHECK_NEAR("scaled: scale^2 d_k T^2 = 1 (tol 3e-7)", 1.0, s * s * dk * t * t, 3e-7);
            CHECK_NEAR("unscaled: scale T = 1 (tol 1.5e-7)", 1.0, u * t, 1.5e-7);
        }
}

static void test_off_set(void **st) {
    (void)st;
    attn_layer L;
    memset(&L, 0, sizeof L);
    L.h = ATTN_LAYER_MAX_HEADS;
    CHECK_INT("none off", 0, attn_layer_off_count(&L));
    L.off[0] = UINT64_C(1) | UINT64_C(1) << 63;
    L.off[1] = 1;
    L.off[ATTN_LAYER_OFF_WORDS - 1] = UINT64_C(1) << 63;
    static const int on[] = {1, 62, 65, 4094}, offs[] = {0, 63, 64, 4095};
    for (int i = 0; i < 4; i++) {
        CHECK_INT("a head whose bit is set is off", 1, attn_layer_is_off(&L, offs[i]));
        CHECK_INT("a head whose bit is clear is on", 0, attn_layer_is_off(&L, on[i]));
    }
    CHECK_INT("four off", 4, attn_layer_off_count(&L));
    CHECK_INT("head -1 is on", 0, attn_layer_is_off(&L, -1));
    CHECK_INT("head 4096 is on", 0, attn_layer_is_off(&L, 4096));
    L.h = 64; /* bits past the layer's heads count for nothing */
    CHECK_INT("h 64: head 64 is on", 0, attn_layer_is_off(&L, 64));
    CHECK_INT("h 64: two off", 2, attn_layer_off_count(&L));
}

static void test_off_delta(void **st) {
    (void)st;
    /* out_full = [[3, 0], [0, 4]]: norm 5; out = [[3, 0], [0, 1]]: difference norm 3 */
    float full[4] = {3, 0, 0, 4}, out[4] = {3, 0, 0, 1}, zero[4] = {0};
    attn_layer L;
    memset(&L, 0, sizeof L);
    L.n = 2, L.d_model = 2, L.h = 1, L.d_k = 2;
    L.out = out, L.out_full = full;
    CHECK_NEAR("||(0, 0, 0, -3)|| / ||(3, 0, 0, 4)|| = 3/5", 0.6, attn_layer_off_delta(&L), 1e-15);
    L.out = full;
    CHECK_NEAR("out = out_full: 0", 0.0, attn_layer_off_delta(&L), 0.0);
    L.out = out, L.out_full = zero;
    CHECK_NEAR("out_full all zero: 0", 0.0, attn_layer_off_delta(&L), 0.0);
    L.out_full = NULL;
    CHECK_NEAR("no out_full: 0", 0.0, attn_layer_off_delta(&L), 0.0);
    L.out = NULL, L.out_full = full;
    CHECK_NEAR("no out: 0", 0.0, attn_layer_off_delta(&L), 0.0);
    /* a larger one against the sum written out in double */
    enum { n = 5, d = 7 };
    float a[n * d], b[n * d];
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < n * d; i++) {
        a[i] = (float)sin(1.0 + i) * 2.0f;
        b[i] = (float)cos(0.5 * i);
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    L.n = n, L.d_model = d, L.out = a, L.out_full = b;
    CHECK_NEAR("||a - b|| / ||b|| (tol 1e-12)", sqrt(diff / norm), attn_layer_off_delta(&L), 1e-12);
}

static void test_token_and_note(void **st) {
    (void)st;
    const char *toks[3] = {"a", NULL, "c"};
    const char *notes[2] = {"previous", NULL};
    attn_layer L;
    memset(&L, 0, sizeof L);
    L.n = 3, L.h = 2;
    CHECK_STR("no tokens: empty", "", attn_layer_token(&L, 0));
    CHECK_TRUE("no notes: NULL", attn_layer_head_note(&L, 0) == NULL);
    L.tokens = toks, L.head_note = notes;
    CHECK_STR("token 0", "a", attn_layer_token(&L, 0));
    CHECK_STR("a NULL token reads empty", "", attn_layer_token(&L, 1));
    CHECK_STR("token 2", "c", attn_layer_token(&L, 2));
    CHECK_STR("token -1: empty", "", attn_layer_token(&L, -1));
    CHECK_STR("token n: empty", "", attn_layer_token(&L, 3));
    CHECK_STR("note of head 0", "previous", attn_layer_head_note(&L, 0));
    CHECK_TRUE("head 1 has none", attn_layer_head_note(&L, 1) == NULL);
    CHECK_TRUE("head h: none", attn_layer_head_note(&L, 2) == NULL);
    CHECK_TRUE("head -1: none", attn_layer_head_note(&L, -1) == NULL);
}

static mha_layer_text g_text;

/* The scores were made with the layer's scale: Q_i K_i^T * scale, in double here,
 * wherever a causal mask would leave the key visible. */
static void check_scores_scaled(const attn_layer *L) {
    for (int i = 0; i < L->h; i++)
        for (int r = 0; r < L->n; r++)
            for (int c = 0; c <= r && c < L->n_real; c++) {
                double dot = 0.0;
                for (int k = 0; k < L->d_k; k++)
                    dot += (double)L->q[(size_t)r * L->d_model + i * L->d_k + k] *
                           (double)L->k[(size_t)c * L->d_model + i * L->d_k + k];
                const double want = dot * L->scale;
                CHECK_NEAR("score = q.k scale (tol 1e-4 rel)", want,
                           L->scores[((size_t)i * L->n + r) * L->n + c], 1e-4 * (1.0 + fabs(want)));
            }
}

/* The designed, padded, causal, tempered model with heads 2 and 6 off, as a layer. */
static void test_fill_from_model(void **st) {
    (void)st;
    tok_list t = {0};
    char err[256];
    assert_int_equal(tok_split(&t, "the cat sat on the mat", 0, NULL, err, sizeof err), 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = 6,
                      .d_model = 48,
                      .seed = 11,
                      .mask = MHA_MASK_CAUSAL,
                      .pad = 9,
                      .temperature = 2.0f,
                      .weights = MHA_WEIGHTS_PATTERNS,
                      .ablate = {0x22}};
    assert_int_equal(mha_model_compute(m, &cfg, &t, err, sizeof err), 0);
    attn_layer L;
    memset(&L, 0x5a, sizeof L); /* every field is written */
    mha_layer_fill(&L, &g_text, m, &t);
    CHECK_INT("n: the padded length", 9, L.n);
    CHECK_INT("n_real: the text's tokens", 6, L.n_real);
    CHECK_INT("h", 6, L.h);
    CHECK_INT("d_model", 48, L.d_model);
    CHECK_INT("d_k", 8, L.d_k);
    CHECK_INT("one layer", 1, L.layers);
    CHECK_INT("layer 0", 0, L.layer);
    CHECK_INT("causal", ATTN_MASK_CAUSAL, L.mask);
    CHECK_INT("scaled", 1, L.scaled);
    CHECK_NEAR("temperature", 2.0, L.temperature, 0.0);
    CHECK_NEAR("scale 1 / (sqrt(8) 2)", 1.0 / (sqrt(8.0) * 2.0), L.scale, 1e-8);
    CHECK_NEAR("scale is attn_scale's", attn_scale(8, 1, 2.0f), L.scale, 0.0);
    CHECK_INT("seed", 11, (int)L.seed);
    CHECK_INT("pad", 9, L.pad);
    CHECK_INT("designed", 1, L.designed);
    for (int i = 0; i < L.n; i++)
        CHECK_STR("position's text", i < 6 ? t.tokens[i] : MHA_PAD_TOKEN, attn_layer_token(&L, i));
    for (int i = 0; i < L.h; i++) {
        CHECK_STR("head note: its pattern", mha_pattern_name(mha_head_pattern(&m->cfg, i)),
                  attn_layer_head_note(&L, i));
        CHECK_INT("off: cfg.ablate", i == 1 || i == 5, attn_layer_is_off(&L, i));
    }
    CHECK_INT("two off", 2, attn_layer_off_count(&L));
    for (int w = 0; w < ATTN_LAYER_OFF_WORDS; w++)
        CHECK_TRUE("no other bit", L.off[w] == (w == 0 ? UINT64_C(0x22) : 0));
    const float *want[14] = {m->x, m->w_q,    m->w_k,  m->w_v,   m->w_o,    m->q,   m->k,
                             m->v, m->scores, m->attn, m->heads, m->concat, m->out, m->out_full};
    const float *got[14] = {L.x, L.w_q,    L.w_k,  L.w_v,   L.w_o,    L.q,   L.k,
                            L.v, L.scores, L.attn, L.heads, L.concat, L.out, L.out_full};
    for (int i = 0; i < 14; i++) CHECK_TRUE("the model's own tensor", want[i] == got[i]);
    CHECK_NEAR("off delta = the model's", mha_ablation_delta(m), attn_layer_off_delta(&L), 0.0);
    CHECK_TRUE("heads off change MultiHead", attn_layer_off_delta(&L) > 0.0);
    check_scores_scaled(&L);
    mha_model_destroy(m);
    tok_free(&t);
}

/* Random weights, unscaled, no padding; and a model not computed yet. */
static void test_fill_random_and_empty(void **st) {
    (void)st;
    tok_list t = {0};
    char err[256];
    assert_int_equal(tok_split(&t, "the cat sat on the mat", 0, NULL, err, sizeof err), 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    attn_layer L;
    /* random weights: no notes; unscaled */
    mha_config rnd = {.h = 4, .d_model = 32, .seed = 2, .no_scale = 1};
    assert_int_equal(mha_model_compute(m, &rnd, &t, err, sizeof err), 0);
    mha_layer_fill(&L, &g_text, m, &t);
    CHECK_INT("random: not designed", 0, L.designed);
    CHECK_TRUE("random: no notes", attn_layer_head_note(&L, 0) == NULL);
    CHECK_INT("no pad: n = n_real", L.n_real, L.n);
    CHECK_INT("no pad: 0", 0, L.pad);
    CHECK_INT("unscaled", 0, L.scaled);
    CHECK_INT("no mask", ATTN_MASK_NONE, L.mask);
    CHECK_NEAR("unscaled, T 1: scale 1", 1.0, L.scale, 0.0);
    CHECK_INT("none off", 0, attn_layer_off_count(&L));
    check_scores_scaled(&L);
    mha_model_destroy(m);
    /* a model not computed yet: an empty layer, no tensors */
    m = mha_model_create();
    assert_non_null(m);
    mha_layer_fill(&L, &g_text, m, &t);
    CHECK_INT("not computed: n 0", 0, L.n);
    CHECK_TRUE("not computed: no tensors", !L.attn && !L.scores && !L.x && !L.tokens);
    mha_model_destroy(m);
    tok_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attn_scale),      cmocka_unit_test(test_off_set),
        cmocka_unit_test(test_off_delta),       cmocka_unit_test(test_token_and_note),
        cmocka_unit_test(test_fill_from_model), cmocka_unit_test(test_fill_random_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
