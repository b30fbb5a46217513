#define _POSIX_C_SOURCE 200809L
/* test_state_incr.c: a loaded model's changes as the window computes them (gpt.c on
 * the jobs layer: each change computed into the run not shown, brought first to the
 * run shown by copying what differs, gpt2_run_sync) compute only what changed:
 *   - after each kind of change (typing at the end, a token changed in the middle,
 *     tokens deleted, a head removed in the first and in the last layer, restored,
 *     every head back, a layer switch, a re-split and back, the overview opened,
 *     typing with heads removed and the overview open) the run shown equals a fresh
 *     run's full forward of the same text, heads, layer and h: every layer's
 *     attention within 1e-4, its Q, K, V, output and stream, the shown layer's
 *     tensors, the next-token probabilities (with the heads removed and with every
 *     head on) within 1e-3 relative, the overview's maps within 1e-4;
 *   - the layer rows computed (tf_infer's rows_run, both runs): a head removed or
 *     restored in layer l computes layers l ... L of every row and no more (after a
 *     token changed in the middle, which the run not shown has not computed), a
 *     layer switch, a re-split and the overview none;
 *   - the same on a Llama-type model (RoPE, K/V heads shared by groups of query
 *     heads; MHAVIZ_TEST_MODEL_LLAMA) over the changes it takes;
 *   - the checker catches a run one value apart (so it can fail).
 * Keys are pressed through app_key_action, as the window does. The checkpoint comes
 * from tests/state_model_check.py (gpt2_gen.py, 3 layers x 4 heads, n_embd 32) in
 * MHAVIZ_TEST_MODEL; without it the test is skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "gpt_internal.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"

#define TEXT "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."
#define MIDDLE "The quick brown cat jumps over the lazy dog. The dog sleeps; the fox runs away."

/* The checkpoint in the environment variable var (skipped without it). */
static const char *model_dir(const char *var) {
    const char *p = getenv(var);
    if (!p || !*p) skip();
    return p;
}

static app_state *make_state(const char *var) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT;
    o.text = TEXT;
    o.model_path = model_dir(var);
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    CHECK_TRUE("a model is loaded", app_gpt_active(s));
    CHECK_INT("the jobs layer", 0, app_async_enable(s, NULL, NULL, 0.0));
    app_gpt_measure(s, 0); /* the heads' measure on the next token: its own forwards */
    return s;
}

static void press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    app_apply(s, &a);
    app_async_wait(s);
}

static void act(app_state *s, app_action a) {
    app_apply(s, &a);
    app_async_wait(s);
}

static void edit_to(app_state *s, const char *text) {
    press(s, APP_KEY_RETURN, 0);
    act(s, (app_action){.kind = ACT_EDIT_CLEAR});
    act(s, (app_action){.kind = ACT_EDIT_INSERT, .text = text});
    press(s, APP_KEY_RETURN, 0);
}

/* Layer rows computed so far by both runs. */
static unsigned long rows_run(const app_state *s) {
    const app_gpt *g = s->gpt;
    unsigned long k = 0;
    for (int i = 0; i < 2; i++)
        if (g->runs[i].inf) k += g->runs[i].inf->rows_run;
    return k;
}

/* max |a - b| / max |b| */
static double rel_err(const float *a, const float *b, size_t count) {
    double worst = 0.0, top = 0.0;
    for (size_t i = 0; i < count; i++) {
        worst = fmax(worst, fabs((double)a[i] - b[i]));
        top = fmax(top, fabs((double)b[i]));
    }
    return top > 0.0 ? worst / top : worst;
}

static double abs_err(const float *a, const float *b, size_t count) {
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    return worst;
}

/* The first tensor of got off ref beyond the tolerances, said into why; 0 when none. */
static int compare(gpt2_run *got, gpt2_run *ref, char *why, size_t len) {
    const model_spec *s = &ref->m->tf->spec;
    const int n = ref->n, d = s->d_model, L = s->layers, cap = ref->inf->cap;
    const int qd = spec_q_dim(s), kvd = spec_kv_dim(s);
    if (got->n != n || memcmp(got->ids, ref->ids, (size_t)n * sizeof(int)) != 0) {
        snprintf(why, len, "tokens: %d against %d", got->n, n);
        return 1;
    }
    if (memcmp(got->off, ref->off, (size_t)L * s->h) || got->shown != ref->shown ||
        got->shown_h != ref->shown_h) {
        snprintf(why, len, "heads removed, layer or h shown differ");
        return 1;
    }
    const size_t nn = (size_t)s->h * n * n, nd = (size_t)n * d, nq = (size_t)n * qd;
    const size_t nkv = (size_t)n * kvd;
    float *a = malloc(2 * nn * sizeof(float)), *cc = malloc(nq * sizeof(float));
    assert_true(a && cc);
    int bad = 0;
    for (int l = 0; l < L && !bad; l++) {
        tf_infer_attn(got->inf, l, a, a, cc);
        tf_infer_attn(ref->inf, l, a + nn, a + nn, cc);
        const size_t at = (size_t)l * cap * d, aq = (size_t)l * cap * qd;
        const size_t akv = (size_t)l * cap * kvd;
        const double e[] = {abs_err(a, a + nn, nn),
                            rel_err(got->inf->q + aq, ref->inf->q + aq, nq),
                            rel_err(got->inf->k + akv, ref->inf->k + akv, nkv),
                            rel_err(got->inf->v + akv, ref->inf->v + akv, nkv),
                            rel_err(got->inf->out + at, ref->inf->out + at, nd),
                            rel_err(got->inf->resid + at + (size_t)cap * d,
                                    ref->inf->resid + at + (size_t)cap * d, nd)};
        static const char *names[] = {"attention", "Q", "K", "V", "output", "stream"};
        for (int k = 0; k < 6 && !bad; k++)
            if (!(e[k] <= (k == 0 ? 1e-4 : 1e-3)))
                bad = snprintf(why, len, "layer %d %s: off by %.3g", l + 1, names[k], e[k]);
    }
    free(a), free(cc);
    if (bad) return 1;
    const int V = ref->m->tf->cfg.vocab, hs = ref->shown_h;
    const size_t sn = (size_t)hs * n * n;
    struct {
        const char *name;
        double err, tol;
    } t[] = {
        {"next-token probabilities", rel_err(gpt2_run_probs(got), gpt2_run_probs(ref), V), 1e-3},
        {"probabilities, every head on", rel_err(got->probs_full, ref->probs_full, V), 1e-3},
        {"shown layer's attention", abs_err(got->s_attn, ref->s_attn, sn), 1e-4},
        {"shown layer's heads", rel_err(got->s_heads, ref->s_heads, hs == s->h ? nq : nd), 1e-3},
        {"shown layer's Concat", rel_err(got->s_concat, ref->s_concat, hs == s->h ? nq : nd), 1e-3},
        {"shown layer's Q before RoPE", ref->s_qpre ? rel_err(got->s_qpre, ref->s_qpre, nq) : 0.0,
         1e-3},
        {"shown layer's X", rel_err(got->s_x, ref->s_x, nd), 1e-3},
        {"shown layer's output, every head on",
         ref->s_full_n ? rel_err(got->s_full, ref->s_full, nd) : 0.0, 1e-3},
        {"overview's maps",
         ref->ov_n ? abs_err(got->ov, ref->ov, (size_t)L * s->h * ref->ov_n * ref->ov_n) : 0.0,
         1e-4},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        if (!(t[k].err <= t[k].tol)) {
            snprintf(why, len, "%s: off by %.3g", t[k].name, t[k].err);
            return 1;
        }
    if (got->any_off != ref->any_off || got->s_full_n != ref->s_full_n || got->ov_n != ref->ov_n) {
        snprintf(why, len, "heads removed %d / %d, rows with every head on %d / %d, maps %d / %d",
                 got->any_off, ref->any_off, got->s_full_n, ref->s_full_n, got->ov_n, ref->ov_n);
        return 1;
    }
    return 0;
}

/* A fresh run's full forward of what the state asks for. */
static void full_forward(gpt2_run *ref, const app_gpt *g) {
    CHECK_INT("a fresh run", 0, gpt2_run_init(ref, g->m));
    const gpt2_goal goal = {.text = g->text,
                            .len = strlen(g->text),
                            .off = g->off,
                            .layer = g->layer,
                            .h = g->h,
                            .more = g->more,
                            .n_more = g->n_more,
                            .kv = g->kv,
                            .overview = g->overview_open};
    char err[256];
    if (gpt2_run_reach(ref, &goal, err, sizeof err) != 0) fail_msg("the full forward: %s", err);
}

/* The run shown against the full forward; the layer rows the change computed. */
static void check(const char *where, app_state *s, unsigned long rows0, long want_rows) {
    const unsigned long rows = rows_run(s) - rows0;
    gpt2_run ref;
    full_forward(&ref, s->gpt);
    char why[256];
    if (compare(gpt_shown(s->gpt), &ref, why, sizeof why)) fail_msg("%s: %s", where, why);
    if (want_rows >= 0 && rows != (unsigned long)want_rows)
        fail_msg("%s: expected %ld layer rows computed, got %lu", where, want_rows, rows);
    gpt2_run_free(&ref);
}

static void test_every_change(void **st) {
    (void)st;
    app_state *s = make_state("MHAVIZ_TEST_MODEL");
    const int L = s->gpt->m->tf->cfg.layers;
    check("the text opened", s, 0, -1);
    unsigned long r0 = rows_run(s);
    edit_to(s, TEXT " The cat");
    check("typed at the end", s, r0, -1);
    r0 = rows_run(s);
    edit_to(s, MIDDLE " The cat");
    check("a token changed in the middle", s, r0, -1);
    r0 = rows_run(s);
    /* the run not shown lacks the change in the middle: its shown layer's rows from
       there are copied, those before kept, the new row computed */
    edit_to(s, MIDDLE " The cat sat");
    check("typed at the end after a change in the middle", s, r0, -1);
    r0 = rows_run(s);
    edit_to(s, MIDDLE " The cat");
    check("a token deleted at the end", s, r0, -1);
    const int n = gpt_shown(s->gpt)->n;
    r0 = rows_run(s);
    press(s, 'y', 0);
    press(s, 'y', 0); /* the last layer */
    check("a layer switch after a change in the middle: nothing computed", s, r0, 0);
    r0 = rows_run(s);
    act(s, (app_action){.kind = ACT_ABLATE, .arg = 2});
    check("a head removed in the last layer: that layer alone", s, r0, n);
    r0 = rows_run(s);
    press(s, 'y', 0); /* layer 1 (it wraps) */
    act(s, (app_action){.kind = ACT_ABLATE, .arg = 3});
    check("a head removed in layer 1: layers 1 ... L", s, r0, (long)L * n);
    r0 = rows_run(s);
    press(s, 'y', 0);
    press(s, 'y', 0);
    act(s, (app_action){.kind = ACT_ABLATE, .arg = 2});
    check("the last layer's head restored: that layer alone", s, r0, n);
    r0 = rows_run(s);
    press(s, APP_KEY_UP, 0);
    check("a re-split: nothing computed", s, r0, 0);
    CHECK_TRUE("re-split", s->gpt->h != L && gpt_shown(s->gpt)->shown_h == s->gpt->h);
    r0 = rows_run(s);
    press(s, APP_KEY_DOWN, 0);
    check("back to its own heads: nothing computed", s, r0, 0);
    r0 = rows_run(s);
    press(s, 'o', 0);
    check("the overview opened: nothing computed", s, r0, 0);
    CHECK_TRUE("the overview's maps", gpt_shown(s->gpt)->ov_n > 0);
    r0 = rows_run(s);
    edit_to(s, MIDDLE " The cat sleeps");
    check("typed with a head removed, the overview open", s, r0, -1);
    r0 = rows_run(s);
    edit_to(s, MIDDLE);
    check("tokens deleted at the end", s, r0, -1);
    r0 = rows_run(s);
    press(s, 'x', APP_MOD_SHIFT);
    check("every head back: layers 1 ... L", s, r0, (long)L * gpt_shown(s->gpt)->n);
    app_async_disable(s);
    app_state_destroy(s);
}

/* A Llama-type model (RoPE, 6 query heads on 2 K/V heads: its own heads only) on the
   changes it takes. */
static void test_llama(void **st) {
    (void)st;
    app_state *s = make_state("MHAVIZ_TEST_MODEL_LLAMA");
    const int L = s->gpt->m->tf->cfg.layers;
    check("the text opened", s, 0, -1);
    unsigned long r0 = rows_run(s);
    edit_to(s, TEXT " The cat");
    check("typed at the end", s, r0, -1);
    r0 = rows_run(s);
    edit_to(s, MIDDLE " The cat");
    check("a token changed in the middle", s, r0, -1);
    r0 = rows_run(s);
    edit_to(s, MIDDLE " The cat sat");
    check("typed at the end after a change in the middle", s, r0, -1);
    const int n = gpt_shown(s->gpt)->n;
    r0 = rows_run(s);
    for (int i = 1; i < L; i++) press(s, 'y', 0); /* the last layer */
    check("a layer switch: nothing computed", s, r0, 0);
    r0 = rows_run(s);
    act(s, (app_action){.kind = ACT_ABLATE, .arg = 2});
    check("a head removed in the last layer: that layer alone", s, r0, n);
    r0 = rows_run(s);
    press(s, 'o', 0);
    check("the overview opened: nothing computed", s, r0, 0);
    r0 = rows_run(s);
    press(s, 'x', APP_MOD_SHIFT);
    check("every head back: the last layer", s, r0, n);
    app_async_disable(s);
    app_state_destroy(s);
}

/* The checker: a run whose K is one value apart in one layer is caught. */
static void test_checker_catches(void **st) {
    (void)st;
    app_state *s = make_state("MHAVIZ_TEST_MODEL");
    gpt2_run ref, *r = gpt_shown(s->gpt);
    full_forward(&ref, s->gpt);
    char why[256] = "";
    CHECK_INT("the run against its own full forward", 0, compare(r, &ref, why, sizeof why));
    float *k = r->inf->k + (size_t)r->inf->cap * r->m->tf->cfg.d_model + 3; /* layer 2 */
    *k += 0.5f;
    CHECK_TRUE("a K one value apart is caught", compare(r, &ref, why, sizeof why) != 0);
    *k -= 0.5f;
    gpt2_run_free(&ref);
    app_async_disable(s);
    app_state_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_change),
        cmocka_unit_test(test_llama),
        cmocka_unit_test(test_checker_catches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
