#define _POSIX_C_SOURCE 200809L
/* test_async.c: the window's background recompute (src/app/jobs/async.c) on the
 * SDL-free state machine. A state with app_async_enable computes large changes
 * on a worker thread; these tests press real keys and check what the picture
 * shows meanwhile (the old model with its own labels and a true progress sign),
 * that later keys coalesce into one recompute of the last state, that keys
 * needing the new model are applied after it in order, that errors reach the
 * status line, and that destroying the state mid-compute neither hangs nor
 * leaks (ASan). The final state is compared with the same keys pressed on a
 * state without the worker, an independent synchronous path. app_async_hold
 * keeps the worker from starting so that coalescing does not depend on timing. */
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
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "view_fixture.h"

static app_state *make_state(int h, int d, int sample) {
    cli_options o = fx_options();
    o.sample = sample;
    return fx_app_state(&o, h, d, NULL, NULL, 0);
}

/* A state with the worker on: threshold 0 sends every recompute to it. */
static app_state *make_async(int h, int d, int sample, double threshold_ms) {
    app_state *s = make_state(h, d, sample);
    CHECK_INT("the worker starts", 0, app_async_enable(s, NULL, NULL, threshold_ms));
    return s;
}

/* A key as the window applies it: the action, then the jobs layer's step, which
   hands what the state asked for to the worker (app_async_poll). */
static void press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    app_apply(s, &a);
    app_async_poll(s);
}

/* The jobs layer first (it waits for what it computes), then the state. */
static void destroy(app_state *s) {
    app_async_disable(s);
    app_state_destroy(s);
}

static int has(const char *hay, const char *needle) {
    return hay && strstr(hay, needle) != NULL;
}

/* What the view is given agrees with itself: the model's text is the list of
 * tokens shown, and the sample named is the one those tokens come from. */
static void check_labels(const app_state *s, const char *where) {
    view_state vs;
    app_view(s, &vs);
    const attn_layer *L = vs.layer;
    if (!L) fail_msg("%s: expected a layer in the view, got none", where);
    /* the layer is the model shown (its tensors) with the state's text */
    CHECK_TRUE(where, L->attn == s->m->attn && L->out == s->m->out && L->n == s->m->n);
    CHECK_INT(where, L->n_real, s->toks.count);
    for (int i = 0; i < L->n_real; i++) CHECK_TRUE(where, L->tokens[i] == s->toks.tokens[i]);
    CHECK_INT(where, L->d_k * L->h, L->d_model);
    if (vs.sample_index > 0) {
        tok_list t = {0};
        int total = 0;
        char err[256];
        assert_int_equal(tok_split(&t, samples_get(vs.sample_index - 1)->text, MHA_MAX_N, &total,
                                   err, sizeof err),
                         0);
        CHECK_INT(where, t.count, L->n_real);
        for (int i = 0; i < t.count; i++) CHECK_STR(where, t.tokens[i], L->tokens[i]);
        tok_free(&t);
    }
}

/* The two states show the same model. The numbers agree within 1e-5 of the
 * largest |MultiHead|: the two models keep different rows of X, Q, K, V from
 * earlier states, so their products are blocked differently (float rounding). */
static void check_same_model(const app_state *a, const app_state *b) {
    CHECK_INT("h", b->m->cfg.h, a->m->cfg.h);
    CHECK_INT("d_model", b->m->cfg.d_model, a->m->cfg.d_model);
    CHECK_INT("n", b->m->n, a->m->n);
    CHECK_INT("seed", (int)b->m->cfg.seed, (int)a->m->cfg.seed);
    CHECK_INT("mask", b->m->cfg.mask, a->m->cfg.mask);
    CHECK_INT("heads off", mha_config_ablated_count(&b->m->cfg),
              mha_config_ablated_count(&a->m->cfg));
    const size_t nd = (size_t)a->m->n * a->m->cfg.d_model;
    float big = 0.0f;
    for (size_t k = 0; k < nd; k++) big = fabsf(b->m->out[k]) > big ? fabsf(b->m->out[k]) : big;
    for (size_t k = 0; k < nd; k++)
        if (!(fabsf(a->m->out[k] - b->m->out[k]) <= 1e-5f * big))
            fail_msg("MultiHead[%zu]: expected %.9g, got %.9g", k, (double)b->m->out[k],
                     (double)a->m->out[k]);
    CHECK_INT("sample", b->sample, a->sample);
    CHECK_INT("focus", b->look.focus, a->look.focus);
}

/* --- small changes stay instant; large ones go to the worker ---------------------- */

static void test_small_stays_synchronous(void **st) {
    (void)st;
    app_state *s = make_async(4, 64, 1, -1.0);
    const unsigned long r0 = app_async_recomputes(s);
    press(s, APP_KEY_UP, 0);
    CHECK_INT("a 0.1 ms recompute is not sent away", 0, app_async_busy(s));
    CHECK_INT("h at once", 8, s->m->cfg.h);
    CHECK_INT("one recompute", r0 + 1, app_async_recomputes(s));
    destroy(s);
}

static void test_large_goes_to_the_worker(void **st) {
    (void)st;
    app_state *s = make_async(8, 3072, 1, -1.0); /* new weights at 4096: about 220 ms */
    const unsigned long r0 = app_async_recomputes(s);
    press(s, APP_KEY_RIGHT, 0);
    CHECK_INT("d_model 4096 is computed in the background", 1, app_async_busy(s));
    CHECK_INT("asked for", 4096, s->cfg.d_model);
    CHECK_INT("shown meanwhile", 3072, s->m->cfg.d_model);
    check_labels(s, "labels of the old picture");
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("progress sign", has(vs.status, "computing h = 8, d_model = 4096, n = "));
    CHECK_TRUE("says what is shown", has(vs.status, "(shown: h = 8, d_model = 3072"));
    app_async_wait(s);
    CHECK_INT("done", 0, app_async_busy(s));
    CHECK_INT("the new model is shown", 4096, s->m->cfg.d_model);
    CHECK_INT("one recompute", r0 + 1, app_async_recomputes(s));
    app_view(s, &vs);
    CHECK_TRUE("no progress sign after", !has(vs.status, "computing"));
    CHECK_TRUE("state and model agree", memcmp(&s->cfg, &s->m->cfg, sizeof s->cfg) == 0);
    destroy(s);
}

/* --- coalescing --------------------------------------------------------------------- */

static void test_keys_coalesce(void **st) {
    (void)st;
    app_state *s = make_async(1, 64, 1, 0.0);
    app_state *ref = make_state(1, 64, 1); /* the same keys, synchronously */
    const unsigned long r0 = app_async_recomputes(s);
    app_async_hold(s, 1);
    const int keys[] = {APP_KEY_UP, APP_KEY_UP, APP_KEY_UP, APP_KEY_DOWN, APP_KEY_UP, 'm', 'r'};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        press(s, keys[i], 0);
        press(ref, keys[i], 0);
        CHECK_INT("still the first model shown", 1, s->m->cfg.h);
        check_labels(s, "labels while keys come");
    }
    CHECK_INT("the last state is asked for", ref->cfg.h, s->cfg.h);
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("the running job, then the last state",
               has(vs.status, "computing h = 2, d_model = 64") && has(vs.status, ", then h = 8"));
    app_async_wait(s);
    check_same_model(s, ref);
    /* the first key's job was handed over before the others came: two recomputes */
    CHECK_INT("7 keys, 2 recomputes", r0 + 2, app_async_recomputes(s));
    check_labels(s, "after");
    destroy(s);
    destroy(ref);
}

static void test_text_and_sample_coalesce(void **st) {
    (void)st;
    app_state *s = make_async(4, 64, 1, 0.0);
    app_state *ref = make_state(4, 64, 1);
    app_async_hold(s, 1);
    press(s, APP_KEY_TAB, 0); /* sample 2, pending */
    press(ref, APP_KEY_TAB, 0);
    CHECK_INT("sample asked for", 2, s->sample);
    view_state vs;
    app_view(s, &vs);
    CHECK_INT("the picture still names sample 1", 1, vs.sample_index);
    check_labels(s, "sample 1's tokens with sample 1's name");
    press(s, APP_KEY_TAB, 0); /* sample 3, coalesced */
    press(ref, APP_KEY_TAB, 0);
    press(s, APP_KEY_UP, 0); /* h from the text asked for */
    press(ref, APP_KEY_UP, 0);
    press(s, 'e', 0); /* padding of the text asked for */
    press(ref, 'e', 0);
    check_labels(s, "still sample 1");
    app_async_wait(s);
    check_same_model(s, ref);
    CHECK_INT("padded as the synchronous state", ref->m->n, s->m->n);
    check_labels(s, "sample 3 shown with its name");
    destroy(s);
    destroy(ref);
}

/* Up then Down while Up's recompute runs: the request is what that job computed,
   so nothing more is computed. */
static void test_back_and_forth_is_one_recompute(void **st) {
    (void)st;
    app_state *s = make_async(4, 64, 1, 0.0);
    const unsigned long r0 = app_async_recomputes(s);
    app_async_hold(s, 1);
    press(s, APP_KEY_UP, 0);   /* h = 8: the job */
    press(s, APP_KEY_UP, 0);   /* 16 */
    press(s, APP_KEY_DOWN, 0); /* 8 again: as the job */
    app_async_wait(s);
    CHECK_INT("h", 8, s->m->cfg.h);
    CHECK_INT("one recompute", r0 + 1, app_async_recomputes(s));
    destroy(s);
}

/* A focused head that the configuration asked for does not have is let go at
   once, as the synchronous state lets it go: Down then Up does not bring it back. */
static void test_focus_follows_the_request(void **st) {
    (void)st;
    app_state *s = make_async(4, 64, 1, 0.0);
    app_state *ref = make_state(4, 64, 1);
    const int keys[] = {'3', APP_KEY_DOWN, APP_KEY_UP};
    app_async_hold(s, 1);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        press(s, keys[i], 0);
        press(ref, keys[i], 0);
    }
    CHECK_INT("focus let go with h = 2", 0, s->look.focus);
    app_async_wait(s);
    check_same_model(s, ref);
    destroy(s);
    destroy(ref);
}

/* --- keys that need the new model wait, in order ---------------------------------- */

static void test_keys_wait_in_order(void **st) {
    (void)st;
    app_state *s = make_async(4, 64, 1, 0.0);
    app_state *ref = make_state(4, 64, 1);
    app_async_hold(s, 1);
    const int keys[] = {APP_KEY_UP, '7', 'x', APP_KEY_UP, '2', 'x'};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        press(s, keys[i], 0);
        press(ref, keys[i], 0);
        CHECK_INT("no focus on a head the picture lacks", 0, s->look.focus);
        CHECK_TRUE("nothing refused", !has(s->status, "there is no head"));
    }
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("the sign counts the keys that wait", has(vs.status, "5 keys wait for it"));
    app_async_wait(s);
    CHECK_TRUE("X's message would measure the old model: dropped",
               !has(s->status, "MultiHead changes by"));
    /* Up, 7 (focus), X (head 7 off), Up (heads split anew: all on), 2, X (head 2 off) */
    CHECK_INT("h", 16, s->m->cfg.h);
    CHECK_INT("focus", 2, s->look.focus);
    CHECK_INT("head 2 off", 1, mha_config_is_ablated(&s->m->cfg, 1));
    CHECK_INT("head 7 on again", 0, mha_config_is_ablated(&s->m->cfg, 6));
    check_same_model(s, ref);
    destroy(s);
    destroy(ref);
}

/* --- the picture stays consistent while the worker really runs -------------------- */

static void test_labels_consistent_while_running(void **st) {
    (void)st;
    app_state *s = make_async(4, 256, 1, 0.0);
    app_state *ref = make_state(4, 256, 1);
    static const int keys[] = {APP_KEY_UP,  APP_KEY_DOWN, APP_KEY_RIGHT, APP_KEY_LEFT,
                               APP_KEY_TAB, 'm',          'r',           ']',
                               'e',         '3',          'x',           APP_KEY_PAGEDOWN};
    unsigned long x = 12345;
    for (int i = 0; i < 300; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        int key = keys[(x >> 33) % (sizeof keys / sizeof keys[0])];
        if (key == APP_KEY_RIGHT && ref->cfg.d_model >= 512) key = APP_KEY_LEFT;
        press(s, key, 0);
        press(ref, key, 0);
        app_async_poll(s);
        CHECK_TRUE("no key dropped", !has(s->status, "key ignored"));
        if (i % 16 == 15) app_async_wait(s); /* at most 64 keys wait: keep below */
        check_labels(s, "labels of the model shown");
        /* the hover reads the model shown, as the window's frame does */
        app_action hover = {.kind = ACT_HOVER, .x = (int)(x >> 40) % 1600, .y = 400};
        app_apply(s, &hover);
        app_apply(ref, &hover);
    }
    app_async_wait(s);
    check_same_model(s, ref);
    destroy(s);
    destroy(ref);
}

/* --- errors ------------------------------------------------------------------------- */

static void set_text(app_state *s, const char *text) {
    app_do(s, ACT_EDIT_START);
    app_do(s, ACT_EDIT_CLEAR);
    app_action ins = {.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &ins);
    app_do(s, ACT_EDIT_APPLY);
    app_async_poll(s);
}

static void test_over_the_bound_in_the_status(void **st) {
    (void)st;
    /* h = 768 heads of 512 x 512 weights and scores: 1.5 GiB and the weights, over the bound */
    app_state *s = make_async(768, 768, 1, 0.0);
    char *text = malloc(512 * 4 + 1);
    assert_non_null(text);
    text[0] = '\0';
    for (int i = 0; i < 512; i++) strcat(text, "ab ");
    const unsigned long r0 = app_async_recomputes(s);
    const int n0 = s->m->n;
    set_text(s, text);
    CHECK_INT("refused up front: nothing to compute", 0, app_async_busy(s));
    CHECK_TRUE("the status line names the bound", has(s->status, "1.5 GiB limit"));
    CHECK_INT("the text shown stays", n0, s->m->n);
    CHECK_INT("the text asked for stays", n0, s->toks.count);
    CHECK_INT("no recompute", r0, app_async_recomputes(s));
    /* and while a request is pending: refused, the request kept */
    app_async_hold(s, 1);
    press(s, APP_KEY_DOWN, 0); /* h = 384, pending */
    press(s, APP_KEY_UP, 0);   /* h = 768 again, coalesced */
    CHECK_INT("pending", 1, app_async_busy(s));
    s->status[0] = '\0';
    set_text(s, text);
    CHECK_TRUE("refused while pending", has(s->status, "1.5 GiB limit"));
    app_async_wait(s);
    CHECK_INT("h as asked before the refusal", 768, s->m->cfg.h);
    CHECK_INT("with the text before it", n0, s->m->n);
    CHECK_INT("one recompute per job: h = 384, then 768", r0 + 2, app_async_recomputes(s));
    free(text);
    destroy(s);
}

/* --- the end ------------------------------------------------------------------------ */

static void test_destroy_while_computing(void **st) {
    (void)st;
    /* a recompute under way (new weights at 4096) */
    app_state *s = make_async(8, 3072, 1, 0.0);
    press(s, APP_KEY_RIGHT, 0);
    CHECK_INT("busy", 1, app_async_busy(s));
    destroy(s); /* waits for it, frees both models (ASan: no leak) */

    /* a job handed over but held, a pending request and keys waiting */
    s = make_async(4, 64, 1, 0.0);
    app_async_hold(s, 1);
    press(s, APP_KEY_UP, 0);
    press(s, APP_KEY_TAB, 0);
    press(s, '2', 0);
    CHECK_INT("busy", 1, app_async_busy(s));
    destroy(s); /* the held job is dropped: no hang */

    /* a finished result never taken */
    s = make_async(4, 64, 1, 0.0);
    press(s, APP_KEY_UP, 0);
    destroy(s);

    /* without the worker, wait and poll do nothing */
    s = make_state(4, 64, 1);
    app_async_wait(s);
    CHECK_INT("no poll result", 0, app_async_poll(s));
    CHECK_INT("never busy", 0, app_async_busy(s));
    destroy(s);
}

/* B at a large size pins in the background: the pinned pane waits for its own
   model (the live one is drawn meanwhile), then equals the live model exactly */
static void test_pin_in_the_background(void **st) {
    (void)st;
    app_state *s = make_async(8, 3072, 1, -1.0); /* a model from nothing: about 120 ms */
    press(s, 'b', 0);
    CHECK_TRUE("pinned", s->pin != NULL);
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("the pinned pane waits for its model", vs.pinned && vs.pinned->layer == NULL);
    CHECK_INT("the live view is not busy", 0, app_async_busy(s));
    app_async_wait(s);
    app_view(s, &vs);
    if (!vs.pinned || !vs.pinned->layer) {
        fail_msg("the pinned model after the wait: expected shown, got none");
    } else {
        const attn_layer *p = vs.pinned->layer;
        const mha_model *m = s->m;
        CHECK_INT("pinned d_model", 3072, p->d_model);
        CHECK_TRUE("pinned attention equals the live model's (same settings)",
                   p->n == m->n &&
                       memcmp(p->attn, m->attn, sizeof(float) * 8 * (size_t)m->n * m->n) == 0);
        CHECK_TRUE("pinned MultiHead too",
                   memcmp(p->out, m->out, sizeof(float) * 3072 * (size_t)m->n) == 0);
        CHECK_INT("nothing differs", 0, vs.compare_count);
    }
    press(s, 'b', 0);
    CHECK_TRUE("unpinned", s->pin == NULL);
    /* unpinned, or destroyed, while its model is computed: no hang, no leak */
    press(s, 'b', 0);
    press(s, 'b', 0);
    CHECK_TRUE("unpinned while computing", s->pin == NULL);
    press(s, 'b', 0);
    destroy(s);
    /* small: pinned at once, on the UI thread */
    s = make_async(4, 64, 1, -1.0);
    press(s, 'b', 0);
    app_view(s, &vs);
    CHECK_TRUE("a small pin is there at once", vs.pinned && vs.pinned->layer != NULL);
    destroy(s);
}

/* The cost panel's forward time: the forward's own at the setting shown, whatever
   change led there. Reached by a d_model step, an h step and a new seed (R), the
   setting (h 4, d_model 1024) shows one number: timed once, as whole forwards on the
   worker, and the same number again on each way back (not the recompute's time,
   which differs by route). A setting never timed says so (forward_ms < 0). */
static double shown_forward(app_state *s) {
    view_state vs;
    for (int i = 0; i < 2000; i++) { /* the timing runs on the worker: up to 10 s */
        app_async_poll(s);
        app_view(s, &vs);
        if (vs.forward_ms > 0.0) return vs.forward_ms;
        const struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return -1.0;
}

static void test_forward_time_by_any_route(void **st) {
    (void)st;
    app_state *s = make_async(4, 768, 1, 0.0);
    app_async_wait(s);
    view_state vs;
    app_view(s, &vs);
    const double at768 = shown_forward(s);
    CHECK_TRUE("the first setting is timed", at768 > 0.0);
    press(s, APP_KEY_RIGHT, 0); /* d_model 768 -> 1024: new weights */
    app_async_wait(s);
    CHECK_INT("d_model step", 1024, s->m->cfg.d_model);
    app_view(s, &vs);
    CHECK_TRUE("a new setting is not shown with the old one's time",
               vs.forward_ms < 0.0 || vs.forward_ms != at768);
    const double by_d = shown_forward(s);
    CHECK_TRUE("timed after the d_model step", by_d > 0.0);
    press(s, APP_KEY_UP, 0); /* h 4 -> 8 */
    app_async_wait(s);
    CHECK_INT("h step up", 8, s->m->cfg.h);
    const double at_h8 = shown_forward(s);
    CHECK_TRUE("h 8 timed", at_h8 > 0.0);
    press(s, APP_KEY_DOWN, 0); /* back to h 4: an h step, no projection recomputed */
    app_async_wait(s);
    CHECK_INT("h step down", 4, s->m->cfg.h);
    CHECK_NEAR("after the h step: the same forward time (exact)", by_d, shown_forward(s), 0.0);
    press(s, 'r', 0); /* a new seed: new weights, the same setting */
    app_async_wait(s);
    CHECK_NEAR("after R: the same forward time (exact)", by_d, shown_forward(s), 0.0);
    CHECK_TRUE("the recompute after R took its own time", s->compute_ms > 0.0);
    destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_stays_synchronous),
        cmocka_unit_test(test_pin_in_the_background),
        cmocka_unit_test(test_large_goes_to_the_worker),
        cmocka_unit_test(test_keys_coalesce),
        cmocka_unit_test(test_text_and_sample_coalesce),
        cmocka_unit_test(test_back_and_forth_is_one_recompute),
        cmocka_unit_test(test_focus_follows_the_request),
        cmocka_unit_test(test_keys_wait_in_order),
        cmocka_unit_test(test_labels_consistent_while_running),
        cmocka_unit_test(test_over_the_bound_in_the_status),
        cmocka_unit_test(test_destroy_while_computing),
        cmocka_unit_test(test_forward_time_by_any_route),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
