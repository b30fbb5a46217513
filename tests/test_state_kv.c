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
 * the window does.
 *
 * The checkpoint comes from tests/state_model_check.py (gpt2_gen.py, 3 layers x 4
 * heads, n_embd 32) in MHAVIZ_TEST_MODEL; without it the test is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regroup_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
