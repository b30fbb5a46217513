#define _POSIX_C_SOURCE 200809L
/* test_key_path.c: a key goes one way. Each key of a list, pressed on the SDL-free
 * state as the window presses it, derives the numbers at most once (once exactly
 * when it changed the model or the focused head, and then they are the model's),
 * and the frame after it fills one view and derives nothing (app_state_counts,
 * the counts the MHAVIZ_STATS lines print). A lesson's step, which sets the text,
 * h and the focus in one key, derives once too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "cli.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "teach.h"
#include "view_fixture.h"

static app_state *make_state(void) {
    const cli_options o = fx_options();
    return fx_app_state(&o, 4, 64, NULL, NULL, 0);
}

/* The window's frame: one layout, and the view it was made from for the drawing
   and the title. Checks that it filled one view and derived nothing. */
static void frame(app_state *s, const char *after) {
    const app_counts c0 = app_state_counts(s);
    const view_layout *L = app_layout(s);
    const view_state *vs = app_layout_view(s);
    const app_counts c1 = app_state_counts(s);
    char what[160];
    snprintf(what, sizeof what, "%s: the frame fills one view", after);
    CHECK_INT(what, 1, (int)(c1.views - c0.views));
    snprintf(what, sizeof what, "%s: the frame derives nothing (the action did)", after);
    CHECK_INT(what, 0, (int)(c1.derives - c0.derives));
    snprintf(what, sizeof what, "%s: the frame's view is the one laid out", after);
    CHECK_TRUE(what, L != NULL && vs != NULL && vs->width == s->width);
}

/* Presses key (with mods); checks the derivations it made. */
static void press(app_state *s, int key, int mods, const char *name) {
    const unsigned long version = s->data_version;
    const int focus = s->look.focus;
    const app_counts c0 = app_state_counts(s);
    app_action a = app_key_action(s, key, mods);
    app_apply(s, &a);
    const app_counts c1 = app_state_counts(s);
    const int derives = (int)(c1.derives - c0.derives);
    char what[160];
    snprintf(what, sizeof what, "%s: one action applied", name);
    CHECK_INT(what, 1, (int)(c1.actions - c0.actions));
    snprintf(what, sizeof what, "%s: derives at most once (derived %d times)", name, derives);
    CHECK_TRUE(what, derives <= 1);
    if (s->data_version != version || s->look.focus != focus) {
        snprintf(what, sizeof what, "%s: changed the model or the focus: derived once", name);
        CHECK_INT(what, 1, derives);
    }
    if (s->data_version == version) { /* a focus alone: its head's numbers only */
        snprintf(what, sizeof what, "%s: the same data: the layer's numbers kept", name);
        CHECK_INT(what, 0, (int)(c1.layer_numbers - c0.layer_numbers));
    }
    snprintf(what, sizeof what, "%s: the numbers are the model's after it", name);
    CHECK_TRUE(what, !app_derive_stale(s));
    frame(s, name);
}

static void test_keys(void **st) {
    (void)st;
    app_state *s = make_state();
    frame(s, "the first frame");
    static const struct {
        int key, mods;
        const char *name;
    } keys[] = {
        {APP_KEY_UP, 0, "Up (h)"},
        {APP_KEY_RIGHT, 0, "Right (d_model)"},
        {'c', 0, "C (colormap)"},
        {'t', 0, "T (theme)"},
        {'m', 0, "M (mask)"},
        {'n', 0, "N (scale)"},
        {'r', 0, "R (seed)"},
        {APP_KEY_TAB, 0, "Tab (sample)"},
        {'1', 0, "1 (focus)"},
        {'.', 0, ". (step)"},
        {'2', 0, "2 (another head)"},
        {'k', 0, "K (contrast)"},
        {'v', 0, "V (values)"},
        {'x', 0, "X (ablate)"},
        {'d', 0, "D (difference)"},
        {'e', 0, "E (padding)"},
        {']', 0, "] (temperature)"},
        {'w', 0, "W (weights)"},
        {'i', 0, "I (lesson panels)"},
        {'b', 0, "B (compare: pinned)"},
        {'c', 0, "C with a pinned view"},
        {APP_KEY_DOWN, 0, "Down with a pinned view"},
        {APP_KEY_ESCAPE, 0, "Escape (focus off)"},
        {APP_KEY_PAGEDOWN, 0, "PgDn"},
        {'=', APP_MOD_CTRL, "Ctrl+= (zoom)"},
        {'b', 0, "B (compare: unpinned)"},
        {'h', 0, "H (head view)"},
        {APP_KEY_F1, 0, "F1 (help)"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        press(s, keys[i].key, keys[i].mods, keys[i].name);
    app_state_destroy(s);
}

/* A click is one action whose button's action is applied inside it: still one
   derivation. */
static void test_click(void **st) {
    (void)st;
    app_state *s = make_state();
    const view_layout *L = app_layout(s);
    const view_rect b = L->buttons[BTN_H_UP].r;
    CHECK_TRUE("the h + button is laid out", b.w > 0 && b.h > 0);
    const unsigned long version = s->data_version;
    const app_counts c0 = app_state_counts(s);
    app_action a = {.kind = ACT_CLICK, .x = (int)(b.x + b.w / 2), .y = (int)(b.y + b.h / 2)};
    app_apply(s, &a);
    const app_counts c1 = app_state_counts(s);
    CHECK_TRUE("the click on h + recomputed", s->data_version != version);
    CHECK_INT("the click and its button's action: derived once", 1, (int)(c1.derives - c0.derives));
    frame(s, "after the click");
    app_state_destroy(s);
}

/* A lesson's step sets the text, h and a focused head with one key: once. */
static void test_lesson_step(void **st) {
    (void)st;
    char dir[] = "/tmp/mhaviz-key-path-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], err[600];
    snprintf(path, sizeof path, "%s/two.lesson", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("# test\ntitle = Two steps\n\nstep = One\nh = 2\n\nstep = Two\nh = 8\n"
          "text = the cat sat on the mat\nfocus = 3\nseed = 9\n",
          f);
    fclose(f);
    app_state *s = make_state();
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    frame(s, "the lesson opened");
    press(s, ' ', 0, "Space (the step with a text, h, a seed and a focus)");
    CHECK_INT("the step's h", 8, s->cfg.h);
    CHECK_INT("the step's focus", 3, s->look.focus);
    app_state_destroy(s);
    remove(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_click),
        cmocka_unit_test(test_lesson_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
