#define _POSIX_C_SOURCE 200809L
/* test_state_encoder.c: a loaded encoder (BERT) in the state machine
 * (src/app/state/gpt.c, gpt_fill.c): its layers drawn with no mask, the "fill the
 * blank" panel in place of the next-token panel with the masked-LM head's
 * probabilities, X removing a head changes them (the pale bars: every head on),
 * Shift+X brings the first numbers back, a text without [MASK] and a file without
 * the head say so, M on a token's label makes it a blank. Keys pressed through app_key_action /
 * app_apply, as the window does.
 *
 * The folders and tests/bert_ref.py's float64 numbers come from
 * tests/state_encoder_check.py: MHAVIZ_TEST_ENCODER (with the masked-LM head),
 * MHAVIZ_TEST_ENCODER_BARE (without), MHAVIZ_TEST_REF; within 1e-4 here. Without
 * them every test is skipped. */
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

/* must equal TEXT in state_encoder_check.py */
#define REF_TEXT "The cat sat on the [MASK]. It was tired."

static const char *env_dir(const char *name) {
    const char *p = getenv(name);
    if (!p || !*p) skip();
    return p;
}

/* n numbers from the reference's file name */
static void read_ref(const char *name, double *v, int n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", env_dir("MHAVIZ_TEST_REF"), name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    for (int i = 0; i < n; i++)
        if (fscanf(f, "%lf", &v[i]) != 1) fail_msg("%s: %d numbers, want %d", path, i, n);
    fclose(f);
}

/* `mhaviz --model PATH --text TEXT --export`'s state, loaded at once */
static app_state *make_state(const char *path, const char *text) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT;
    o.text = text;
    o.model_path = path;
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    CHECK_TRUE("a model is loaded", app_gpt_active(s));
    return s;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static int has(const char *hay, const char *needle) {
    return hay && strstr(hay, needle) != NULL;
}

static void edit_to(app_state *s, const char *text) {
    CHECK_TRUE("Return opens the field", press(s, APP_KEY_RETURN, 0));
    app_action a = {.kind = ACT_EDIT_CLEAR};
    app_apply(s, &a);
    a = (app_action){.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
    press(s, APP_KEY_RETURN, 0);
}

/* The panel's five rows against p (and, when full is not NULL, the pale bars
   against full; else none) within 1e-4. */
static void check_rows(const char *where, const view_next *x, const double *p, const double *full) {
    CHECK_INT(where, 5, x->k);
    for (int k = 0; k < 5 && k < x->k; k++) {
        CHECK_NEAR(where, p[k], x->p[k], 1e-4);
        if (full)
            CHECK_NEAR(where, full[k], x->p_full[k], 1e-4);
        else
            CHECK_TRUE(where, x->p_full[k] < 0.0f);
    }
}

static void test_fill(void **st) {
    (void)st;
    app_state *s = make_state(env_dir("MHAVIZ_TEST_ENCODER"), REF_TEXT);
    double pos = 0, full[5], off[10];
    read_ref("mask_pos.txt", &pos, 1);
    read_ref("fill_full.txt", full, 5);
    read_ref("fill_off.txt", off, 10);
    view_state vs;
    app_view(s, &vs);
    assert_non_null(vs.layer);
    assert_non_null(vs.next);
    CHECK_INT("no mask", ATTN_MASK_NONE, vs.layer->mask);
    CHECK_INT("the overview says encoder", 1, vs.overview->encoder);
    /* the first token's row reaches past it: no causal triangle */
    double right = 0;
    for (int c = 1; c < vs.layer->n; c++) right += vs.layer->attn[c];
    CHECK_TRUE("row 1 sees later tokens", right > 0.01);
    const view_next *x = vs.next;
    CHECK_STR("title", "Fill the blank", x->title ? x->title : "");
    char want[32];
    snprintf(want, sizeof want, "token %d: ", (int)pos + 1);
    CHECK_TRUE("the heading names the blank", has(x->group[0], want));
    CHECK_TRUE("no next-token title", x->after == NULL);
    check_rows("every head on", x, full, NULL);

    /* X on head 2 of layer 1: the blank's prediction without it, the pale bars with */
    app_action a = {.kind = ACT_ABLATE, .arg = 2};
    CHECK_TRUE("X redraws", app_apply(s, &a));
    CHECK_TRUE("status: the blank's cost", has(s->status, "head 2 of layer 1 removed: p("));
    CHECK_TRUE("status: in the blank", has(s->status, " in the blank) "));
    app_view(s, &vs);
    check_rows("head 2 of layer 1 removed", vs.next, off, off + 5);

    /* Shift+X: the first numbers again */
    press(s, 'x', APP_MOD_SHIFT);
    app_view(s, &vs);
    check_rows("every head on again", vs.next, full, NULL);

    /* no mask in the text: no rows, a note saying how to add one */
    edit_to(s, "the cat sat");
    app_view(s, &vs);
    CHECK_INT("no rows", 0, vs.next->k);
    CHECK_TRUE("the note says how", has(vs.next->note, "type [MASK] in the text"));
    /* X without a blank: removed, and it says what would show the cost */
    a.arg = 1;
    app_apply(s, &a);
    CHECK_TRUE("status without a blank",
               has(s->status, "(a [MASK] in the text shows what it costs)"));
    /* two blanks: a heading each */
    edit_to(s, "the [MASK] sat on the [MASK].");
    app_view(s, &vs);
    CHECK_STR("two: title", "Fill the blanks", vs.next->title ? vs.next->title : "");
    int headings = 0;
    for (int k = 0; k < vs.next->k; k++) headings += vs.next->group[k] != NULL;
    CHECK_INT("a heading per blank", 2, headings);
    app_state_destroy(s);
}

/* M with the pointer on a token's label: that token becomes a blank in the text */
static void test_m_masks(void **st) {
    (void)st;
    app_state *s = make_state(env_dir("MHAVIZ_TEST_ENCODER"), "the cat sat on the mat");
    view_state vs;
    app_view(s, &vs);
    CHECK_INT("no blank yet", 0, vs.next->k);
    press(s, 'm', 0);
    CHECK_TRUE("M with no token pointed at says how", has(s->status, "token under the pointer"));
    s->hover = (view_hit){.kind = HIT_COL_LABEL, .row = -1, .col = 2}; /* [CLS] the cat */
    press(s, 'm', 0);
    CHECK_STR("the text", "the [MASK] sat on the mat", s->custom);
    app_view(s, &vs);
    CHECK_INT("a blank now", 5, vs.next->k);
    CHECK_TRUE("at token 3", has(vs.next->group[0], "token 3: the ___ sat"));
    press(s, 'm', 0);
    CHECK_TRUE("a blank already", has(s->status, "a blank already"));
    s->hover = (view_hit){.kind = HIT_ROW_LABEL, .row = 0, .col = -1};
    press(s, 'm', 0);
    CHECK_TRUE("[CLS] is not the text's", has(s->status, "the tokenizer's own"));
    CHECK_STR("the text stays", "the [MASK] sat on the mat", s->custom);
    app_state_destroy(s);
}

static void test_no_head(void **st) {
    (void)st;
    app_state *s = make_state(env_dir("MHAVIZ_TEST_ENCODER_BARE"), REF_TEXT);
    view_state vs;
    app_view(s, &vs);
    assert_non_null(vs.next);
    CHECK_INT("no rows", 0, vs.next->k);
    CHECK_STR("the help's tokenizer: BERT's vocab.txt", "WordPiece (vocab.txt)",
              vs.overview->tokenizer);
    CHECK_TRUE("says there is no head", has(vs.next->note, "no masked-LM head"));
    app_action a = {.kind = ACT_ABLATE, .arg = 1};
    app_apply(s, &a);
    CHECK_STR("X: removed, no cost to show", "head 1 of layer 1 removed", s->status);
    app_state_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fill), cmocka_unit_test(test_m_masks),
                                       cmocka_unit_test(test_no_head)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
