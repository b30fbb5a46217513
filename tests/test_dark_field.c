#define _POSIX_C_SOURCE 200809L
/* test_dark_field.c: a long text at many heads (n = 512, h = 16) on the fixed 0..1
 * scale is a dark field (a row's largest weight about 0.05); in the window the
 * state switches the contrast to each row's maximum once, when the field turns
 * dark, and says so with the average it found; K then cycles on as ever (log, then
 * fixed, which stays); an export without --contrast switches as the window does,
 * one with --contrast fixed and a short text keep the fixed scale. The average is recomputed here
 * from the model's attention tensor with a double loop (tolerance: the notice's two significant
 * digits). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "cli.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "view_fixture.h"

/* A state as the window starts it (window 1: auto_contrast set as window.c sets
 * it), or as an export does (0: no --contrast given; 2: --contrast fixed given). */
static app_state *make_state(int h, const char *text, int window) {
    cli_options o = fx_options();
    o.text = text;
    o.contrast_given = window == 2;
    app_state *s = fx_app_state(&o, h, 64, NULL, NULL, 0);
    if (window == 1) s->auto_contrast = 1, s->dark_field = 0, s->dark_version = 0;
    app_layout(s);
    return s;
}

static int press(app_state *s, int key) {
    app_action a = app_key_action(s, key, 0);
    return app_apply(s, &a);
}

/* a row's largest weight on average over every head's rows, from the model */
static double mean_row_max(const mha_model *m) {
    const int n = m->n, h = m->cfg.h;
    double sum = 0.0;
    for (int i = 0; i < h; i++)
        for (int r = 0; r < n; r++) {
            double top = 0.0;
            for (int j = 0; j < n; j++) {
                const double v = m->attn[((size_t)i * n + r) * n + j];
                top = v > top ? v : top;
            }
            sum += top;
        }
    return sum / ((double)n * h);
}

static char *long_text(int words) {
    static const char *const w[] = {"the", "cat", "sat", "on",   "a",     "mat", "and", "then",
                                    "it",  "ran", "to",  "door", "where", "dog", "was"};
    char *t = calloc((size_t)words * 8 + 1, 1);
    assert_non_null(t);
    unsigned x = 12345;
    for (int i = 0; i < words; i++) {
        x = x * 1103515245u + 12345u;
        strcat(t, w[(x >> 16) % 15]);
        if (i + 1 < words) strcat(t, " ");
    }
    return t;
}

static void test_long_text_switches_once(void **st) {
    (void)st;
    char *text = long_text(512);
    app_state *s = make_state(16, text, 1);
    const double top = mean_row_max(s->m);
    CHECK_TRUE("premise: 512 tokens at h = 16 is a dark field (mean row max < 0.25)", top < 0.25);
    CHECK_INT("the window switched to row maxima", 1, s->look.contrast);
    char want[32];
    snprintf(want, sizeof want, "%.2g", top);
    CHECK_TRUE("the notice gives the average", strstr(s->status, want) != NULL);
    CHECK_TRUE("the notice says what changed",
               strstr(s->status, "rows scaled to their max") != NULL);
    press(s, 'k');
    CHECK_INT("K: log", 2, s->look.contrast);
    press(s, 'k');
    CHECK_INT("K again: fixed", 0, s->look.contrast);
    press(s, 'r'); /* a new seed: a new layer, still dark */
    app_layout(s);
    CHECK_INT("the fixed scale chosen stays while the field stays dark", 0, s->look.contrast);
    app_state_destroy(s);

    s = make_state(16, text, 0); /* an export follows the window where nothing was asked */
    CHECK_INT("an export without --contrast: row maxima, as the window", 1, s->look.contrast);
    app_state_destroy(s);
    s = make_state(16, text, 2); /* --contrast fixed: what was asked for */
    CHECK_INT("an export with --contrast fixed: fixed", 0, s->look.contrast);
    app_state_destroy(s);
    free(text);

    s = make_state(4, NULL, 1); /* the short sample */
    CHECK_TRUE("premise: the short sample is not dark", mean_row_max(s->m) >= 0.25);
    CHECK_INT("a short text keeps the fixed scale", 0, s->look.contrast);
    CHECK_INT("and no dark field", 0, s->dark_field);
    app_state_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_long_text_switches_once)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
