#define _POSIX_C_SOURCE 200809L
/* test_state_numbers.c: a loaded model's layer's own numbers (each head's entropy,
 * how alike the heads are and their baseline, what they pass on: derive.c) are
 * computed on the jobs layer once it is attached (async.c), not on the window's
 * thread:
 *   - after a change is shown the state computes none of them itself; the view
 *     claims none (no entropy, no divergence) and says they are being computed;
 *   - once the job is back they equal those a state without the jobs layer
 *     computes on its own thread for the same layer;
 *   - a job's numbers for data that changed meanwhile are dropped, and the
 *     state's own come next;
 *   - the run a job reads is not written meanwhile (the next change waits), and
 *     a model let go while it is read is freed only once the job is back (the
 *     sanitizer build and valgrind see a use after free);
 *   - the shown layer's output with every head on, which no layer keeps any more
 *     (made from the layer's Concat when heads are removed in it), equals the
 *     output of a state with every head on, after X and after typing at the end.
 * Keys are pressed through app_key_action, as the window does. The checkpoint
 * comes from tests/state_model_check.py (gpt2_gen.py, 3 layers x 4 heads, n_embd
 * 32) in MHAVIZ_TEST_MODEL; without it the test is skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "shown_numbers.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"

#define TEXT "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."
#define N_HEAD 4

static const char *model_dir(void) {
    const char *p = getenv("MHAVIZ_TEST_MODEL");
    if (!p || !*p) skip();
    return p;
}

static app_state *make_state(const char *path) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT;
    o.text = TEXT;
    o.model_path = path;
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    CHECK_TRUE("a model is loaded", app_gpt_active(s));
    return s;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static void check_same(const char *where, const shown_numbers *a, const shown_numbers *b) {
    if (!a->has || !b->has) fail_msg("%s: numbers missing (%d, %d)", where, a->has, b->has);
    CHECK_INT(where, a->layer, b->layer);
    if (memcmp(a, b, sizeof *a) != 0)
        fail_msg("%s: the jobs layer's numbers differ from the state's own (entropy %g / %g)",
                 where, (double)a->entropy[0], (double)b->entropy[0]);
}

/* The reference: a state without the jobs layer at layer `layer` (0-based), numbers
   computed on its own thread. */
static void reference(shown_numbers *z, int layer) {
    app_state *s = make_state(model_dir());
    for (int i = 0; i < layer; i++) press(s, 'y', 0);
    numbers_of(s, z, N_HEAD);
    CHECK_INT("the reference's layer", layer, z->layer);
    app_state_destroy(s);
}

/* Polls the jobs layer until the view shows layer (0-based). */
static void settle_layer(const char *where, app_state *s, int layer) {
    view_state vs;
    for (int i = 0; i < 20000 && (app_view(s, &vs), vs.layer->layer != layer); i++) {
        app_async_poll(s);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (vs.layer->layer != layer) fail_msg("%s: layer %d not shown", where, layer + 1);
}

/* Polls the jobs layer until no change of the model is asked or out. */
static void settle_changes(const char *where, app_state *s) {
    for (int i = 0; i < 20000 && app_async_busy(s); i++) {
        app_async_poll(s);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (app_async_busy(s)) fail_msg("%s: the change is not shown", where);
}

static void test_off_thread(void **st) {
    (void)st;
    shown_numbers want2, want3, got;
    reference(&want2, 1);
    reference(&want3, 2);
    app_state *s = make_state(model_dir());
    CHECK_INT("the jobs layer", 0, app_async_enable(s, NULL, NULL, 0.0));
    app_async_hold(s, 1); /* the numbers' job is not handed out while held */
    const unsigned long before = app_state_counts(s).layer_numbers;
    press(s, 'y', 0);
    settle_changes("layer 2", s);
    numbers_of(s, &got, N_HEAD);
    CHECK_INT("layer 2 shown", 1, got.layer);
    CHECK_INT("none computed on this thread", 0, (int)(app_state_counts(s).layer_numbers - before));
    check_pending("layer 2, its numbers held", s);
    app_async_hold(s, 0);
    app_async_wait(s);
    numbers_of(s, &got, N_HEAD);
    check_same("layer 2 from the jobs layer", &want2, &got);
    CHECK_TRUE("asked of the jobs layer", app_state_counts(s).layer_numbers > before);

    /* a job for the data shown, then a change shown before it is back: dropped */
    press(s, 'y', 0);
    app_async_hold(s, 1);
    settle_changes("layer 3", s); /* its numbers held */
    press(s, 'y', APP_MOD_SHIFT); /* layer 2 asked */
    app_numbers *j = app_numbers_take(s);
    assert_non_null(j); /* layer 3's, read from the run shown */
    CHECK_TRUE("a second take while one is out: none", app_numbers_take(s) == NULL);
    settle_layer("back to layer 2", s, 1); /* into the other run (a second change, the
                                               measure of its heads, waits: it would go
                                               into the run read) */
    numbers_of(s, &got, N_HEAD);
    CHECK_INT("layer 2 shown", 1, got.layer);
    press(s, 'y', 0); /* layer 3 asked: its run is being read */
    for (int i = 0; i < 50; i++) app_async_poll(s);
    CHECK_TRUE("a change into the run being read waits", app_gpt_job_take(s) == NULL);
    CHECK_INT("and is still asked", 1, app_async_busy(s));
    app_numbers_run(j);
    CHECK_INT("layer 3's numbers for layer 2's picture: dropped", 0, app_numbers_done(s, j));
    check_pending("layer 2 after a stale job", s);
    app_async_hold(s, 0);
    app_async_wait(s);
    numbers_of(s, &got, N_HEAD);
    check_same("layer 3 after the change that waited", &want3, &got);
    app_async_disable(s);
    app_state_destroy(s);
}

/* A model let go while its run is read is freed once the job is back, not before. */
static void test_let_go_while_read(void **st) {
    (void)st;
    app_state *s = make_state(model_dir());
    CHECK_INT("the jobs layer", 0, app_async_enable(s, NULL, NULL, 0.0));
    app_async_hold(s, 1);
    press(s, 'y', 0);
    settle_changes("layer 2", s);
    app_numbers *j = app_numbers_take(s);
    assert_non_null(j);
    app_gpt_close(s);
    CHECK_INT("closed", 0, app_gpt_active(s));
    app_numbers_run(j); /* reads the model let go: still there */
    CHECK_INT("its numbers: dropped", 0, app_numbers_done(s, j));
    app_async_hold(s, 0);
    app_async_disable(s);
    app_state_destroy(s);
}

static void edit_to(app_state *s, const char *text) {
    CHECK_TRUE("Return opens the field", press(s, APP_KEY_RETURN, 0));
    app_action a = {.kind = ACT_EDIT_CLEAR};
    app_apply(s, &a);
    a = (app_action){.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
    press(s, APP_KEY_RETURN, 0);
}

/* The shown layer's output with every head on (what the difference and the heads'
   contributions compare with; no layer keeps its own) against the output of the
   same layer in a state with every head on, within 1e-5 of its largest. */
static void check_unablated(const char *where, app_state *s, const char *text) {
    view_state vs, vt;
    app_view(s, &vs);
    const attn_layer *L = vs.layer;
    if (!L->out_full || L->out_full == L->out) fail_msg("%s: no output with every head on", where);
    app_state *t = make_state(model_dir());
    edit_to(t, text);
    for (int i = 0; i < L->layer; i++) press(t, 'y', 0);
    app_view(t, &vt);
    CHECK_INT(where, L->n, vt.layer->n);
    CHECK_INT(where, L->layer, vt.layer->layer);
    double worst = 0.0, top = 0.0, moved = 0.0;
    for (size_t k = 0; k < (size_t)L->n * L->d_model; k++) {
        worst = fmax(worst, fabs((double)L->out_full[k] - vt.layer->out[k]));
        top = fmax(top, fabs((double)vt.layer->out[k]));
        moved = fmax(moved, fabs((double)L->out[k] - vt.layer->out[k]));
    }
    if (!(worst <= 1e-5 * top))
        fail_msg("%s: |out_full - out with every head on| = %g (largest %g)", where, worst, top);
    if (!(moved > 1e-3 * top)) fail_msg("%s: the head removed changed nothing", where);
    app_state_destroy(t);
}

/* With a head removed in the shown layer, after X and after typing at the end (the
   rows before kept). */
static void test_unablated_output(void **st) {
    (void)st;
    app_state *s = make_state(model_dir());
    app_action a = {.kind = ACT_ABLATE, .arg = 2};
    app_apply(s, &a);
    check_unablated("head 2 of layer 1 removed", s, TEXT);
    static const char more[] = TEXT " The fox sleeps too";
    edit_to(s, more);
    check_unablated("then typing at the end", s, more);
    press(s, 'y', 0); /* layer 2, every head on: the output itself */
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("no head removed: out itself", vs.layer->out_full == vs.layer->out);
    app_state_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_thread),
        cmocka_unit_test(test_unablated_output),
        cmocka_unit_test(test_let_go_while_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
