#define _POSIX_C_SOURCE 200809L
/* test_training.c: training mode shows the trained model as a model source: the
 * shown layer is the real one. A two-layer run (induction) is trained in the
 * window's state with the real keys (L, Tab, Tab, L to pause); its view is then
 * checked against a learner trained here the same way for the same steps
 * (learn_example_tensors): before Y the attention is layer 1's, after Y layer
 * 2's, never the other's. A trained cell's tooltip is hit-tested and rendered,
 * and its score read back against q_i . k_j / sqrt(d_k) computed here from the
 * layer's own Q and K. */
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
#include "learn.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "view_fixture.h"

#define ATTN_TOL 1e-4 /* the same steps in the same order: only BLAS's summation order */
/* the tooltip prints 3 decimals (0.0005) over a float dot product of d_k terms */
#define SCORE_TOL 6e-4

static app_state *make_state(void) {
    const cli_options o = fx_options();
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    assert_int_equal(app_async_enable(s, NULL, NULL, -1.0), 0); /* the trainer's runner */
    return s;
}

static void press(app_state *s, int key) {
    app_action a = app_key_action(s, key, 0);
    app_apply(s, &a);
    app_async_poll(s); /* as the window does after every event */
}

/* Polls the state like the window does until pred holds or about 60 s pass. */
static int wait_for(app_state *s, int (*pred)(const app_state *), double *clock) {
    for (int i = 0; i < 6000; i++) {
        *clock += 10.0;
        app_tick(s, *clock);
        app_async_poll(s); /* the jobs layer hands the trainer's newest snapshot down */
        if (pred(s)) return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static const view_train *train_of(const app_state *s) {
    view_state vs;
    app_view(s, &vs);
    return vs.train;
}

static int induction_going(const app_state *s) {
    const view_train *t = train_of(s);
    return t && strcmp(t->task, "induction") == 0 && t->step >= 40;
}

static int paused(const app_state *s) {
    const view_train *t = train_of(s);
    return t && !t->running && t->pruning_valid && t->pruning_step == t->step;
}

/* max |a - b| over the n entries, -inf against -inf counting 0 (and any other
   infinity as a full difference) */
static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (isinf(a[i]) || isinf(b[i])) {
            if (a[i] != b[i]) m = INFINITY;
            continue;
        }
        m = fmax(m, fabs((double)a[i] - (double)b[i]));
    }
    return m;
}

/* The number after "scaled score " in the draw list's text, or NAN. */
static double tooltip_score(const draw_list *dl) {
    static const char key[] = "scaled score ";
    for (int i = 0; i < dl->count; i++) {
        if (dl->cmds[i].kind != DC_TEXT) continue;
        const char *t = strstr(draw_cmd_text(dl, &dl->cmds[i]), key);
        double v = 0.0;
        if (t && sscanf(t + sizeof key - 1, "%lf", &v) == 1) return v;
    }
    return NAN;
}

typedef struct {
    app_state *s;
    learn_model *ref; /* trained here, the same config for the same steps */
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    int T, h;
} trained;

/* The window's state trained on induction (L, Tab, Tab), paused (L) after 40 or
   more steps, and the reference learner. */
static void train_both(trained *tr) {
    memset(tr, 0, sizeof *tr);
    tr->s = make_state();
    double clock = 0.0;
    press(tr->s, 'l');
    press(tr->s, APP_KEY_TAB);
    press(tr->s, APP_KEY_TAB);
    CHECK_TRUE("induction trains", wait_for(tr->s, induction_going, &clock));
    press(tr->s, 'l');
    CHECK_TRUE("paused, its bars measured", wait_for(tr->s, paused, &clock));
    /* the run as training mode starts it: the task's layers, h = 2, d_model = 32, seed 1 */
    view_state vs;
    app_view(tr->s, &vs);
    CHECK_INT("two layers", 2, vs.train->layers);
    learn_config cfg = {.task = LEARN_INDUCTION, .h = vs.train->h, .d_model = vs.layer->d_model};
    learn_config_resolve(&cfg);
    char err[256];
    tr->ref = learn_create(&cfg, err, sizeof err);
    if (!tr->ref) fail_msg("learn_create: %s", err);
    for (long i = 0; i < vs.train->step; i++) learn_step(tr->ref);
    learn_example_tensors(tr->ref, tr->lt, NULL);
    tr->T = vs.layer->n;
    tr->h = vs.layer->h;
}

static void test_y_shows_each_layer(void **st) {
    (void)st;
    trained tr;
    train_both(&tr);
    const size_t htt = (size_t)tr.h * tr.T * tr.T;
    view_state vs;
    app_view(tr.s, &vs);
    assert_non_null(vs.layer);
    CHECK_INT("before Y: layer index 0", 0, vs.layer->layer);
    CHECK_INT("of 2", 2, vs.layer->layers);
    CHECK_INT("the title's layer", 0, vs.train->layer);
    CHECK_TRUE("the real Q, K, V, Concat and W^O",
               vs.layer->q && vs.layer->k && vs.layer->v && vs.layer->concat && vs.layer->w_o);
    double same = max_diff(vs.layer->attn, tr.lt[0].attn, htt);
    double other = max_diff(vs.layer->attn, tr.lt[1].attn, htt);
    if (!(same <= ATTN_TOL)) fail_msg("before Y: expected layer 1's attention, off by %g", same);
    if (!(other > 0.05)) fail_msg("before Y: expected not layer 2's attention (%g apart)", other);
    double sc = max_diff(vs.layer->scores, tr.lt[0].scores, htt);
    if (!(sc <= ATTN_TOL)) fail_msg("before Y: expected layer 1's scores, off by %g", sc);
    press(tr.s, 'y');
    app_view(tr.s, &vs);
    CHECK_INT("after Y: layer index 1", 1, vs.layer->layer);
    CHECK_INT("the title's layer", 1, vs.train->layer);
    same = max_diff(vs.layer->attn, tr.lt[1].attn, htt);
    other = max_diff(vs.layer->attn, tr.lt[0].attn, htt);
    if (!(same <= ATTN_TOL)) fail_msg("after Y: expected layer 2's attention, off by %g", same);
    if (!(other > 0.05)) fail_msg("after Y: expected not layer 1's attention (%g apart)", other);
    sc = max_diff(vs.layer->scores, tr.lt[1].scores, htt);
    if (!(sc <= ATTN_TOL)) fail_msg("after Y: expected layer 2's scores, off by %g", sc);
    const double w_o =
        max_diff(vs.layer->w_o, tr.lt[1].w_o, (size_t)vs.layer->d_model * vs.layer->d_model);
    if (!(w_o <= ATTN_TOL)) fail_msg("after Y: expected layer 2's W^O, off by %g", w_o);
    press(tr.s, 'y');
    app_view(tr.s, &vs);
    CHECK_INT("Y again: back to layer index 0", 0, vs.layer->layer);
    learn_destroy(tr.ref);
    app_async_disable(tr.s); /* stops the trainer */
    app_state_destroy(tr.s);
}

static void test_tooltip_shows_the_real_score(void **st) {
    (void)st;
    trained tr;
    train_both(&tr);
    press(tr.s, 'y'); /* layer 2: the one the old code never showed */
    view_state vs;
    app_view(tr.s, &vs);
    const attn_layer *La = vs.layer;
    assert_non_null(La);
    CHECK_INT("layer 2", 1, La->layer);
    const int n = La->n, d = La->d_model, dk = La->d_k;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    view_layout_compute(&L, &vs, fx_measure, NULL);
    CHECK_TRUE("the trained heads are laid out", L.shown_heads >= 1);
    int checked = 0;
    for (int i = 0; i < L.shown_heads && i < La->h; i++) {
        const view_rect m = L.heads[i].map;
        for (int r = n / 2; r < n; r += n / 2 - 1)
            for (int c = 0; c <= r; c += 3) {
                const int x = m.x + (int)((2L * c + 1) * m.w / (2 * n));
                const int y = m.y + (int)((2L * r + 1) * m.h / (2 * n));
                view_hit hit = view_hit_test(&L, &vs, x, y);
                if (hit.kind != HIT_HEAD_CELL || hit.head != i || hit.row != r || hit.col != c)
                    fail_msg("head %d cell (%d, %d): expected it hit, got kind %d head %d (%d, %d)",
                             i + 1, r, c, hit.kind, hit.head, hit.row, hit.col);
                vs.hover_x = x, vs.hover_y = y;
                view_render(&dl, cache, &L, &vs, fx_measure, NULL);
                /* q_i . k_j / sqrt(d_k), from the layer's own Q and K, in double */
                double dot = 0.0;
                for (int j = 0; j < dk; j++)
                    dot += (double)La->q[(size_t)r * d + (size_t)i * dk + j] *
                           (double)La->k[(size_t)c * d + (size_t)i * dk + j];
                const double want = dot / sqrt((double)dk), got = tooltip_score(&dl);
                if (!(fabs(got - want) <= SCORE_TOL))
                    fail_msg("head %d cell (%d, %d): expected the tooltip's scaled score %.4f "
                             "(q . k / sqrt(d_k)), got %.4f",
                             i + 1, r, c, want, got);
                checked++;
            }
    }
    CHECK_TRUE("some cells checked", checked >= 8);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    learn_destroy(tr.ref);
    app_async_disable(tr.s); /* stops the trainer */
    app_state_destroy(tr.s);
}

/* The text of the draw list that starts with prefix, or NULL. */
static const char *text_starting(const draw_list *dl, const char *prefix) {
    for (int i = 0; i < dl->count; i++) {
        if (dl->cmds[i].kind != DC_TEXT) continue;
        const char *t = draw_cmd_text(dl, &dl->cmds[i]);
        if (strncmp(t, prefix, strlen(prefix)) == 0) return t;
    }
    return NULL;
}

/* Training mode's title: a rate while running, none once paused (no step is being
   taken: "268/s · paused" was seen). */
static void test_paused_title_has_no_rate(void **st) {
    (void)st;
    trained tr;
    train_both(&tr); /* paused */
    view_state vs;
    app_view(tr.s, &vs);
    static view_layout L;
    view_layout_compute(&L, &vs, fx_measure, NULL);
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_render(&dl, cache, &L, &vs, fx_measure, NULL);
    const char *title = text_starting(&dl, "Training induction");
    assert_non_null(title);
    if (!strstr(title, "paused") || strstr(title, "/s"))
        fail_msg("paused: expected a title with 'paused' and no rate, got \"%s\"", title);
    draw_list_free(&dl);
    press(tr.s, 'l'); /* running again: the rate is back */
    double clock = 0.0;
    CHECK_TRUE("running again", wait_for(tr.s, induction_going, &clock));
    app_view(tr.s, &vs);
    if (vs.train && vs.train->running) {
        view_layout_compute(&L, &vs, fx_measure, NULL);
        draw_list_init(&dl);
        view_render(&dl, cache, &L, &vs, fx_measure, NULL);
        title = text_starting(&dl, "Training induction");
        assert_non_null(title);
        /* L's pace: the class pace until S is pressed (issue 33) */
        if (!strstr(title, "/s") || !strstr(title, "class pace"))
            fail_msg("running: expected a rate and \"class pace\", got \"%s\"", title);
        draw_list_free(&dl);
    }
    view_cache_destroy(cache);
    learn_destroy(tr.ref);
    app_async_disable(tr.s);
    app_state_destroy(tr.s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paused_title_has_no_rate),
        cmocka_unit_test(test_y_shows_each_layer),
        cmocka_unit_test(test_tooltip_shows_the_real_score),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
