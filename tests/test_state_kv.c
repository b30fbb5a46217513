#define _POSIX_C_SOURCE 200809L
/* test_state_kv.c: J and Shift+J on a loaded model in the state machine
 * (src/app/state/gpt.c): its query heads share fewer K/V heads (4 -> 2 -> 1, each new
 * one the mean of those it replaces, regroup.h) and more again. Each step: the layer
 * says its K/V heads (h_kv), the header's banner numbers (trained with 4, shown with
 * k), the status says so, and the next-token panel's thin bars are the model as
 * trained: the probabilities the panel showed before J, token for token; back at its
 * own 4 the numbers are the first ones exactly. One K/V head is the last (J says so),
 * Up refuses to re-split heads that share K/V heads, and on the built-in model J makes its
 * heads share K/V heads too (the setting kv). Keys are pressed through app_key_action, as
 * the window does. A view saved after J (the setting model-kv) reopens with the same
 * grouping and numbers, and a model-kv the model cannot have is refused.
 *
 * The checkpoint comes from tests/state_model_check.py (gpt2_gen.py, 3 layers x 4
 * heads, n_embd 32) in MHAVIZ_TEST_MODEL; without it the test is skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "settings.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "view_fixture.h"

#define TEXT "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."
#define N_HEAD 4

static app_state *make_state(const char *path) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT;
    o.text = TEXT;
    o.model_path = path;
    return fx_app_state(&o, 4, 64, NULL, NULL, 0);
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static int has(const char *hay, const char *needle) {
    return hay && strstr(hay, needle) != NULL;
}

typedef struct {
    float p[VIEW_NEXT_MAX];
    char token[VIEW_NEXT_MAX][64];
    int k;
} shown_next;

static void take(const app_state *s, shown_next *z) {
    view_state vs;
    app_view(s, &vs);
    z->k = vs.next->k;
    for (int i = 0; i < z->k; i++) {
        z->p[i] = vs.next->p[i];
        snprintf(z->token[i], sizeof z->token[i], "%s", vs.next->token[i]);
    }
}

/* The model as trained, token for token: p_full of each token the panel shows now is
   the probability the first panel gave that token, where it showed it. */
static void check_trained(const app_state *s, const shown_next *first, const char *where) {
    view_state vs;
    app_view(s, &vs);
    const view_next *nx = vs.next;
    CHECK_INT(where, N_HEAD, nx->full_kv);
    int matched = 0;
    for (int k = 0; k < nx->k; k++) {
        CHECK_TRUE("a thin bar for every token", nx->p_full[k] >= 0.0f);
        for (int j = 0; j < first->k; j++)
            if (strcmp(nx->token[k], first->token[j]) == 0) {
                CHECK_NEAR(where, first->p[j], nx->p_full[k], 1e-6 * first->p[j] + 1e-9);
                matched++;
            }
    }
    CHECK_TRUE("some tokens the first panel showed are still shown", matched > 0);
}

static void test_regroup_keys(void **st) {
    (void)st;
    const char *dir = getenv("MHAVIZ_TEST_MODEL");
    if (!dir || !*dir) skip();
    app_state *s = make_state(dir);
    shown_next first;
    take(s, &first);
    view_state vs;
    static const int want[2] = {2, 1};
    for (int i = 0; i < 2; i++) {
        CHECK_TRUE("J redraws", press(s, 'j', 0));
        char msg[96];
        snprintf(msg, sizeof msg, "K/V regrouped: trained with 4, shown with %d", want[i]);
        CHECK_TRUE(msg, has(s->status, msg));
        app_view(s, &vs);
        CHECK_INT("the layer's K/V heads", want[i], vs.layer->h_kv);
        CHECK_INT("the banner's trained", N_HEAD, vs.overview->h_kv);
        CHECK_INT("the banner's shown", want[i], vs.overview->h_kv_shown);
        check_trained(s, &first, "the thin bars: the model as trained");
    }
    shown_next mq;
    take(s, &mq);
    press(s, 'j', 0);
    CHECK_TRUE("one is the last: J says so", has(s->status, "already (multi-query)"));
    press(s, APP_KEY_UP, 0);
    CHECK_TRUE("Up refuses", has(s->status, "are not re-split"));
    app_view(s, &vs);
    CHECK_INT("still one K/V head", 1, vs.layer->h_kv);
    CHECK_INT("still the model's own heads", N_HEAD, vs.layer->h);
    press(s, 'j', APP_MOD_SHIFT);
    press(s, 'j', APP_MOD_SHIFT);
    CHECK_TRUE("back: the status says so", has(s->status, "K/V as trained: 4 K/V heads"));
    shown_next back;
    take(s, &back);
    app_view(s, &vs);
    CHECK_INT("no thin bars", 0, vs.next->full_kv);
    CHECK_INT("its own K/V again", 0, vs.layer->h_kv);
    for (int k = 0; k < back.k; k++) {
        CHECK_TRUE("the first tokens again", strcmp(back.token[k], first.token[k]) == 0);
        CHECK_TRUE("the first numbers exactly", back.p[k] == first.p[k]);
        CHECK_TRUE("no comparison", vs.next->p_full[k] < 0.0f);
    }
    int changed = 0;
    for (int k = 0; k < mq.k; k++) changed |= mq.p[k] != first.p[k];
    CHECK_TRUE("one K/V head changed the next token's numbers", changed);
    app_state_destroy(s);
    /* the built-in model (h = 4): its heads share 2 K/V heads, then one each again */
    s = make_state(NULL);
    press(s, 'j', 0);
    CHECK_TRUE("the built-in model's J", has(s->status, "4 heads share 2 K/V heads"));
    app_view(s, &vs);
    CHECK_INT("its layer's K/V heads", 2, vs.layer->h_kv);
    CHECK_INT("the setting", 2, s->cfg.kv_heads);
    press(s, 'j', APP_MOD_SHIFT);
    CHECK_TRUE("Shift+J: one each again", has(s->status, "one per head again"));
    CHECK_INT("the setting back", 0, s->cfg.kv_heads);
    app_state_destroy(s);
}

/* A view saved after J (capture, then the file's text as Ctrl+Shift+V writes it) says
   model-kv, and opened in a fresh state (the built-in model's, the model named by the
   file) shows the same grouping and the same next-token numbers; a model-kv that does
   not divide the model's K/V heads is refused, naming it, and changes nothing. */
static void test_regroup_saved(void **st) {
    (void)st;
    const char *dir = getenv("MHAVIZ_TEST_MODEL");
    if (!dir || !*dir) skip();
    app_state *s = make_state(dir);
    CHECK_TRUE("J redraws", press(s, 'j', 0));
    shown_next saved;
    take(s, &saved);
    app_settings *a = app_settings_create(), *b = app_settings_create();
    app_settings_capture(s, a);
    char text[16384], err[1200];
    const size_t len = app_settings_write(a, NULL, text, sizeof text);
    assert_true(len < sizeof text);
    CHECK_TRUE("the file says model-kv = 2", has(text, "\nmodel-kv = 2\n"));
    app_settings *read = app_settings_create();
    if (app_view_file_parse(text, len, "saved.view", ".", read, err, sizeof err) != 0)
        fail_msg("the saved view: %s", err);
    app_state *t = make_state(NULL);
    if (app_settings_apply(t, read, err, sizeof err) != 0) fail_msg("reopened: %s", err);
    view_state vs;
    app_view(t, &vs);
    CHECK_INT("reopened: the layer's K/V heads", 2, vs.layer->h_kv);
    CHECK_INT("reopened: the banner's trained", N_HEAD, vs.overview->h_kv);
    CHECK_INT("reopened: the banner's shown", 2, vs.overview->h_kv_shown);
    CHECK_INT("reopened: the thin bars", N_HEAD, vs.next->full_kv);
    shown_next again;
    take(t, &again);
    CHECK_INT("reopened: the tokens shown", saved.k, again.k);
    for (int k = 0; k < saved.k && k < again.k; k++) {
        CHECK_TRUE("reopened: the same tokens", strcmp(saved.token[k], again.token[k]) == 0);
        CHECK_TRUE("reopened: the same numbers exactly", saved.p[k] == again.p[k]);
    }
    app_settings_capture(t, b);
    CHECK_TRUE("reopened: every setting the same", app_settings_equal(a, b));
    /* 3 does not divide the model's 4 K/V heads: refused, naming the line, nothing changed */
    app_settings *bad = app_settings_create();
    assert_int_equal(app_settings_set(bad, "model-kv", "3", ".", err, sizeof err), 0);
    app_settings_origin(bad, "bad.view");
    app_settings_line(bad, "model-kv", 4);
    CHECK_INT("model-kv = 3 refused", -1, app_settings_apply(t, bad, err, sizeof err));
    CHECK_TRUE(err,
               has(err, "bad.view:4: model-kv = 3: must divide") && has(err, "'s 4 K/V heads"));
    app_view(t, &vs);
    CHECK_INT("refused: still 2 K/V heads", 2, vs.layer->h_kv);
    /* own: each head its K/V again, the first numbers */
    app_settings *own = app_settings_create();
    assert_int_equal(app_settings_set(own, "model-kv", "own", ".", err, sizeof err), 0);
    if (app_settings_apply(t, own, err, sizeof err) != 0) fail_msg("model-kv = own: %s", err);
    app_view(t, &vs);
    CHECK_INT("model-kv = own: its own K/V", 0, vs.layer->h_kv);
    CHECK_INT("model-kv = own: no thin bars", 0, vs.next->full_kv);
    app_settings_free(own);
    app_settings_free(bad);
    app_settings_free(read);
    app_settings_free(a);
    app_settings_free(b);
    app_state_destroy(t);
    app_state_destroy(s);
}

/* A RoPE model whose query heads share K/V heads (MHAVIZ_TEST_MODEL_LLAMA: 6 heads on 2,
   head_dim 8, d_model 48) keeps each head_i = A_i V for the step-through (stage 8; it
   kept none, and the stage was an empty frame): head_dim wide, and the heads' shares
   head_i W^O_i add up to the layer's output as the forward computed it (no o_proj bias
   here); the focused head's share, stage 10, is head_i W^O_i. */
static void test_rope_heads(void **st) {
    (void)st;
    const char *dir = getenv("MHAVIZ_TEST_MODEL_LLAMA");
    if (!dir || !*dir) skip();
    app_state *s = make_state(dir);
    CHECK_TRUE("4 focuses head 4", press(s, '4', 0));
    view_state vs;
    app_view(s, &vs);
    const attn_layer *L = vs.layer;
    assert_non_null(L);
    CHECK_INT("6 heads", 6, L->h);
    CHECK_INT("sharing 2 K/V heads", 2, L->h_kv);
    CHECK_INT("head_dim", 8, L->d_k);
    CHECK_TRUE("RoPE's stage", view_steps_count(L) == 10);
    if (!L->heads || !L->w_o || !L->out) fail_msg("no heads, W^O or output in the layer");
    const int n = L->n, d = L->d_model, dk = L->d_k, h = L->h;
    double worst = 0.0, top = 0.0, worst_share = 0.0;
    for (int r = 0; r < n; r++)
        for (int j = 0; j < d; j++) {
            double sum = 0.0, mine = 0.0;
            for (int i = 0; i < h; i++)
                for (int c = 0; c < dk; c++) {
                    const double t = (double)L->heads[((size_t)i * n + r) * dk + c] *
                                     L->w_o[(size_t)(i * dk + c) * d + j];
                    sum += t;
                    mine += i == 3 ? t : 0.0;
                }
            worst = fmax(worst, fabs(sum - L->out[(size_t)r * d + j]));
            top = fmax(top, fabs(L->out[(size_t)r * d + j]));
            if (vs.step_share)
                worst_share = fmax(worst_share, fabs(mine - vs.step_share[(size_t)r * d + j]));
        }
    if (!(worst <= 1e-4 * top))
        fail_msg("max |sum of head_i W^O_i - output| = %g (output up to %g)", worst, top);
    if (!vs.step_share) fail_msg("no share of head 4 derived");
    if (!(worst_share <= 1e-5 * top)) fail_msg("max |share - head_4 W^O_4| = %g", worst_share);
    app_state_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope_heads),
        cmocka_unit_test(test_regroup_keys),
        cmocka_unit_test(test_regroup_saved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
