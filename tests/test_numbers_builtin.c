#define _POSIX_C_SOURCE 200809L
/* test_numbers_builtin.c: the built-in model's layer numbers (each head's entropy, how
 * alike the heads are and their baseline, what they pass on: derive.c) and the
 * dark-field scan of its fixed scale are computed on the jobs layer once it is
 * attached (async.c), not on the window's thread, as a loaded model's are
 * (test_state_numbers.c); the window recomputes the model itself in place (a change
 * under the jobs layer's threshold), so the job reads a copy of the layer:
 *   - a 512-token text at 16 heads (a dark field on the fixed scale) applied: the
 *     state computes none of the numbers and no scan itself (the contrast stays
 *     fixed, no notice); the view claims no number and says they are computed;
 *   - once the job is back, its numbers equal those a state without the jobs layer
 *     computes on its own thread for the same text, and the contrast switches to
 *     row maxima with the notice, as that state's does;
 *   - a job for a text replaced meanwhile (by a short text, not dark) is dropped:
 *     none of its numbers shown, its dark field not followed; the short text's
 *     numbers come next, equal to a state's own (the model recomputed in place
 *     while the job read its copy: the sanitizer build sees a read of freed memory
 *     if the job read the model).
 * Keys are pressed through app_key_action and app_apply, as the window does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "shown_numbers.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"

#define H 16
#define SHORT "the cat sat on the mat"

/* A state as the window makes it (auto_contrast as window.c sets it), with the jobs
   layer attached when jobs is 1 (the model's own recompute stays on this thread:
   the threshold is far above it). */
static app_state *make_state(const char *text, int jobs) {
    cli_options o = fx_options();
    o.text = text;
    app_state *s = fx_app_state(&o, H, 64, NULL, NULL, 0);
    s->auto_contrast = 1, s->dark_field = 0, s->dark_version = 0;
    app_derive(s);
    if (jobs) {
        CHECK_INT("the jobs layer", 0, app_async_enable(s, NULL, NULL, 1e9));
        app_async_wait(s);
    }
    return s;
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

static void press(app_state *s, int key) {
    app_action a = app_key_action(s, key, 0);
    app_apply(s, &a);
}

/* The text applied as the window's field does: Return, the text, Return. */
static void edit_to(app_state *s, const char *text) {
    press(s, APP_KEY_RETURN);
    app_action a = {.kind = ACT_EDIT_CLEAR};
    app_apply(s, &a);
    a = (app_action){.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
    press(s, APP_KEY_RETURN);
}

/* A state without the jobs layer on text: its numbers, computed on its own thread,
   and its contrast. */
static void reference(shown_numbers *z, int *contrast, const char *text) {
    app_state *s = make_state(text, 0);
    numbers_of(s, z, H);
    if (!z->has) fail_msg("the reference has no numbers");
    *contrast = s->look.contrast;
    app_state_destroy(s);
}

static void check_same(const char *where, const shown_numbers *want, const shown_numbers *got) {
    if (!got->has) fail_msg("%s: no numbers shown", where);
    CHECK_INT(where, want->n, got->n);
    if (memcmp(want, got, sizeof *want) != 0)
        fail_msg("%s: the jobs layer's numbers differ from the state's own (entropy %g / %g)",
                 where, (double)want->entropy[0], (double)got->entropy[0]);
}

static void test_off_thread(void **st) {
    (void)st;
    char *text = long_text(512);
    shown_numbers want, got;
    int want_contrast = -1;
    reference(&want, &want_contrast, text);
    CHECK_INT("premise: the reference switched to row maxima", 1, want_contrast);
    app_state *s = make_state(SHORT, 1);
    CHECK_INT("premise: a short text keeps the fixed scale", 0, s->look.contrast);
    app_async_hold(s, 1); /* the numbers' job is not handed out while held */
    const unsigned long before = app_state_counts(s).layer_numbers;
    edit_to(s, text);
    numbers_of(s, &got, H);
    CHECK_INT("the long text shown", want.n, got.n);
    CHECK_INT("no numbers computed on this thread", 0,
              (int)(app_state_counts(s).layer_numbers - before));
    check_pending("512 tokens, the numbers held", s);
    CHECK_INT("no dark-field scan on this thread: the fixed scale stays", 0, s->look.contrast);
    CHECK_TRUE("and no notice", strstr(s->status, "rows scaled") == NULL);
    app_async_hold(s, 0);
    app_async_wait(s);
    numbers_of(s, &got, H);
    check_same("512 tokens from the jobs layer", &want, &got);
    CHECK_INT("the scan's result followed: row maxima", 1, s->look.contrast);
    CHECK_TRUE("with its notice", strstr(s->status, "rows scaled to their max") != NULL);
    app_async_disable(s);
    app_state_destroy(s);
    free(text);
}

static void test_stale_dropped(void **st) {
    (void)st;
    char *text = long_text(512);
    shown_numbers want, got;
    int want_contrast = -1;
    reference(&want, &want_contrast, SHORT);
    app_state *s = make_state(SHORT, 1);
    app_async_hold(s, 1);
    edit_to(s, text);
    app_numbers *j = app_numbers_take(s); /* the long text's, its layer copied */
    assert_non_null(j);
    CHECK_TRUE("a second take while one is out: none", app_numbers_take(s) == NULL);
    edit_to(s, SHORT); /* the model recomputed in place meanwhile */
    app_numbers_run(j);
    CHECK_INT("the long text's numbers for the short text's picture: dropped", 0,
              app_numbers_done(s, j));
    check_pending("the short text after a stale job", s);
    CHECK_INT("its dark field not followed", 0, s->look.contrast);
    app_async_hold(s, 0);
    app_async_wait(s);
    numbers_of(s, &got, H);
    check_same("the short text's own, next", &want, &got);
    CHECK_INT("the fixed scale kept", want_contrast, s->look.contrast);
    app_async_disable(s);
    app_state_destroy(s);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_thread),
        cmocka_unit_test(test_stale_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
