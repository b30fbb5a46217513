#define _POSIX_C_SOURCE 200809L
/* test_sweep_window.c: training mode's sweep of h (H) and the window trainer's
 * divergence rule, in the window's state with the real jobs layer and keys.
 * - H on cards at d_model 16 (a run of N steps shown, seed S) trains h = 1, 2, 4,
 *   8, 16 on seeds S, S+1, S+2, each final held-out accuracy equal to what
 *   `mhaviz --train cards -d 16 -H h -s seed --steps N --dump DIR` writes in
 *   train.json (its 6 digits: 1e-6) and to a learner stepped here (exactly);
 *   the plot's points are the mean, min and max over the seeds computed here; the
 *   status line names the run under way and then the runs done. Under
 *   MHAVIZ_TEST_SAMPLE=k (the sanitizer build) every k-th run is held against --train and
 *   the learner, and the points against the window's own accuracies of the others.
 * - the heads shown are a finished run's (the newest, then Left/Right and a click
 *   pick others): their attention equals that run's learner's on the held-out
 *   example; Escape leaves the sweep view back to the paused training run; H
 *   during a sweep stops it.
 * - a run at lr 1, batch 1 on `first` (no key gives the window that rate: set
 *   through the state's API, as a view file's training settings are) stops with
 *   the status `training diverged at step N (loss X)`, N and X those of the rule
 *   applied here to the learner's own step losses, paused, and stays paused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "learn.h"
#include "sample.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "sweep_view.h"
#include "view_fixture.h"

static const char *mhaviz; /* the binary, for --train runs */

#define STEPS 120
#define SEED 7
#define NH 5
static const int HS[NH] = {1, 2, 4, 8, 16};

static app_state *make_state(void) {
    const cli_options o = fx_options();
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    assert_int_equal(app_async_enable(s, NULL, NULL, -1.0), 0);
    return s;
}

static void done_with(app_state *s) {
    app_async_disable(s);
    app_state_destroy(s);
}

static void poll_once(app_state *s, double *clock) {
    *clock += 10.0;
    app_tick(s, *clock);
    app_async_poll(s);
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void press(app_state *s, int key) {
    app_action a = app_key_action(s, key, 0);
    app_apply(s, &a);
    app_async_poll(s);
}

static int wait_for(app_state *s, int (*pred)(const app_state *), double *clock) {
    for (int i = 0; i < 18000; i++) { /* about 3 minutes at most */
        poll_once(s, clock);
        if (pred(s)) return 1;
    }
    return 0;
}

/* 1 if the view as drawn has a text run starting with prefix. */
static int drawn_text(const view_state *vs, const char *prefix) {
    static view_layout L;
    view_layout_compute(&L, vs, fx_measure, NULL);
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_render(&dl, cache, &L, vs, fx_measure, NULL);
    int found = 0;
    for (int i = 0; i < dl.count && !found; i++)
        found = dl.cmds[i].kind == DC_TEXT &&
                strncmp(draw_cmd_text(&dl, &dl.cmds[i]), prefix, strlen(prefix)) == 0;
    draw_list_free(&dl);
    view_cache_destroy(cache);
    return found;
}

static view_state view_of(const app_state *s) {
    view_state vs;
    app_view(s, &vs);
    return vs;
}

static const char *status_of(app_state *s) {
    s->status[0] = '\0';
    static view_state vs;
    app_view(s, &vs);
    return vs.status ? vs.status : "";
}

static int run_stopped(const app_state *s) {
    const view_state vs = view_of(s);
    return vs.train && !vs.sweep && !vs.train->running && vs.train->stop != 0 && vs.train->step > 0;
}

static int sweep_done(const app_state *s) {
    const view_state vs = view_of(s);
    return vs.sweep && !vs.sweep->running && vs.sweep->runs_done == vs.sweep->runs;
}

static int sweep_past_two(const app_state *s) {
    const view_state vs = view_of(s);
    return vs.sweep && vs.sweep->runs_done >= 2 && vs.sweep->cur_a >= 0;
}

/* The final held-out accuracy --train writes (train.json's "acc"), or -1. */
static double train_json_acc(int h, int seed) {
    char dir[] = "/tmp/mhaviz-sweepwin-XXXXXX";
    if (!mkdtemp(dir)) return -1.0;
    char cmd[1024], path[600];
    snprintf(cmd, sizeof cmd,
             "OPENBLAS_NUM_THREADS=1 '%s' --train cards -d 16 -H %d -s %d --steps %d --dump "
             "'%s/run' >/dev/null 2>&1",
             mhaviz, h, seed, STEPS, dir);
    double acc = -1.0;
    if (system(cmd) == 0) {
        snprintf(path, sizeof path, "%s/run/train.json", dir);
        FILE *f = fopen(path, "r");
        static char text[1 << 20];
        const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[n] = '\0';
        /* the top-level "acc" (the heads' numbers are named otherwise) */
        const char *p = strstr(text, "\n  \"acc\": ");
        if (p) acc = strtod(p + strlen("\n  \"acc\": "), NULL);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return acc;
}

/* A learner of the run, stepped here as --sweep h steps it: its accuracy and, when
   attn is not NULL, its layer-1 attention on the held-out example (h, T, T). */
static float reference(int h, int seed, float *attn) {
    learn_config c = {.task = LEARN_CARDS, .h = h, .d_model = 16, .seed = (uint64_t)seed};
    learn_config_resolve(&c);
    char err[200];
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) fail_msg("learner: %s", err);
    for (int s = 0; s < STEPS; s++) learn_step(l);
    float acc = 0.0f, loss = 0.0f;
    learn_eval(l, NULL, &acc, &loss);
    if (attn) {
        learn_layer_tensors lt[LEARN_MAX_LAYERS];
        learn_example_tensors(l, lt, NULL);
        const int T = learn_task(LEARN_CARDS)->seq_len;
        memcpy(attn, lt[0].attn, sizeof(float) * (size_t)(h * T * T));
    }
    learn_destroy(l);
    return acc;
}

static void check_heads(const app_state *s, int a, int sd, const char *where) {
    const view_state vs = view_of(s);
    if (!vs.layer || !vs.sweep) fail_msg("%s: expected heads and the sweep view", where);
    CHECK_INT("the shown run's h index", a, vs.sweep->sel_a);
    CHECK_INT("the shown run's seed index", sd, vs.sweep->sel_s);
    CHECK_INT("heads shown: that run's h", HS[a], vs.layer->h);
    const int T = learn_task(LEARN_CARDS)->seq_len;
    static float want[16 * 24 * 24];
    reference(HS[a], SEED + sd, want);
    double worst = 0.0;
    for (int i = 0; i < HS[a] * T * T; i++) {
        const double d = fabs((double)vs.layer->attn[i] - (double)want[i]);
        worst = d > worst ? d : worst;
    }
    if (worst > 1e-6)
        fail_msg("%s: expected the run's attention (h=%d seed %d), max difference %g", where, HS[a],
                 SEED + sd, worst);
}

static void check_runs(const view_sweep *w);

static void test_sweep_agrees(void **st) {
    (void)st;
    app_state *s = make_state();
    double clock = 0.0;
    learn_config cfg = {.task = LEARN_CARDS, .h = 4, .d_model = 16, .seed = SEED};
    assert_int_equal(app_training_set(s, 1, &cfg, STEPS, 0), 0);
    CHECK_TRUE("the training run of cards stops at its steps", wait_for(s, run_stopped, &clock));
    press(s, 'h');
    view_state vs = view_of(s);
    CHECK_TRUE("H: the sweep view", vs.sweep != NULL);
    /* the status line names the run under way */
    int named = 0;
    for (int i = 0; i < 18000 && !sweep_done(s); i++) {
        poll_once(s, &clock);
        vs = view_of(s);
        if (vs.sweep && vs.sweep->cur_a >= 0 && vs.sweep->runs_done >= 4 && !named) {
            char want[96]; /* the same state: nothing polled between the two views */
            const int k = vs.sweep->cur_a * 3 + vs.sweep->cur_s;
            snprintf(want, sizeof want, "sweep h: run %d of 15, h=%d seed %d", k + 1,
                     HS[vs.sweep->cur_a], SEED + vs.sweep->cur_s);
            const char *line = status_of(s);
            if (strncmp(line, want, strlen(want)) != 0)
                fail_msg("status: expected \"%s...\", got \"%s\"", want, line);
            printf("under way: \"%s\"\n", line);
            named = 1;
        }
    }
    CHECK_TRUE("the status line named a run under way", named);
    CHECK_TRUE("the sweep ends", sweep_done(s));
    vs = view_of(s);
    const view_sweep *w = vs.sweep;
    CHECK_INT("one point per divisor of 16", NH, w->nh);
    CHECK_INT("3 seeds", 3, w->seeds);
    CHECK_INT("15 runs", 15, w->runs);
    CHECK_INT("at the run's steps", STEPS, w->steps);
    CHECK_TRUE("the plot is drawn in the panels' place",
               drawn_text(&vs, "Sweep of h: cards, 120 steps a run"));
    CHECK_INT("from the run's seed", SEED, (long)w->seed0);
    check_runs(w);
    const char *line = status_of(s);
    char want[96];
    snprintf(want, sizeof want, "sweep h: 15 of 15 runs of %d steps done", STEPS);
    if (strncmp(line, want, strlen(want)) != 0)
        fail_msg("status: expected \"%s...\", got \"%s\"", want, line);
    /* the heads: the newest run's, then Left / Right, then a click on a seed's square */
    check_heads(s, NH - 1, 2, "the newest run");
    /* L, S, . , Up, Tab: not while the sweep view shows; nothing starts or steps */
    const int refused[] = {'l', 's', '.', APP_KEY_UP, APP_KEY_TAB, 'r'};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        press(s, refused[i]);
        vs = view_of(s);
        if (!vs.status || !strstr(vs.status, "the sweep view shows"))
            fail_msg("key 0x%x in the sweep view: expected the status to say so, got \"%s\"",
                     refused[i], vs.status ? vs.status : "");
        CHECK_TRUE("still the sweep view", vs.sweep != NULL);
    }
    for (int i = 0; i < 30; i++) poll_once(s, &clock);
    check_heads(s, NH - 1, 2, "after the refused keys");
    press(s, APP_KEY_LEFT);
    check_heads(s, NH - 1, 1, "Left");
    press(s, APP_KEY_LEFT);
    press(s, APP_KEY_LEFT);
    check_heads(s, NH - 2, 2, "Left twice more");
    press(s, APP_KEY_RIGHT);
    check_heads(s, NH - 1, 0, "Right");
    /* a click on h = 2, seed S+1's square: found by the view's own hit test */
    vs = view_of(s);
    const view_layout *L = app_layout(s);
    int cx = -1, cy = -1;
    for (int y = 0; y < vs.height && cx < 0; y++)
        for (int x = 0; x < vs.width && cx < 0; x++) {
            int a = -1, sd = -1;
            if (view_sweep_hit(L, vs.sweep, x, y, &a, &sd) && a == 1 && sd == 1) cx = x, cy = y;
        }
    CHECK_TRUE("h = 2, seed 2's square is on screen", cx >= 0);
    app_action click = {.kind = ACT_CLICK, .x = cx, .y = cy};
    app_apply(s, &click);
    app_async_poll(s);
    check_heads(s, 1, 1, "a click");
    /* Escape: the training run again, paused */
    press(s, APP_KEY_ESCAPE);
    vs = view_of(s);
    CHECK_TRUE("Escape: the sweep view is gone", vs.sweep == NULL);
    CHECK_TRUE("the training view", vs.train != NULL);
    CHECK_INT("the training run's h", 4, vs.layer->h);
    CHECK_INT("its steps", STEPS, vs.train->step);
    CHECK_INT("not running", 0, vs.train->running);
    CHECK_TRUE("still in training mode", s->train_mode);
    /* H, then H again during the sweep: it stops */
    press(s, 'h');
    CHECK_TRUE("a second sweep is under way", wait_for(s, sweep_past_two, &clock));
    press(s, 'h');
    CHECK_TRUE("H again: the sweep view is gone", view_of(s).sweep == NULL);
    for (int i = 0; i < 100; i++) poll_once(s, &clock);
    CHECK_INT("and nothing keeps polling", 0, app_sweep_running(s));
    done_with(s);
}

/* Each run's accuracy against --train's and a learner's of the same seed, and each point
   the mean and range over its seeds. The sanitizer build: every k-th run against --train
   and the learner (counted seed by seed, so that the sample meets every seed and every h),
   the points from the window's own accuracies of the others. */
static void check_runs(const view_sweep *w) {
    const test_sample runs = test_sample_begin("test_sweep_window's runs against --train");
    for (int a = 0; a < NH; a++) {
        CHECK_INT("h", HS[a], w->h[a]);
        double sum = 0.0, lo = 2.0, hi = -1.0;
        for (int sd = 0; sd < 3; sd++) {
            if (!test_sample_has(&runs, sd * NH + a)) {
                const double here = w->acc[a][sd];
                CHECK_INT("not diverged", 0, w->diverged[a][sd]);
                sum += here;
                lo = here < lo ? here : lo;
                hi = here > hi ? here : hi;
                continue;
            }
            const double cli = train_json_acc(HS[a], SEED + sd);
            const double here = reference(HS[a], SEED + sd, NULL);
            if (cli < 0.0) fail_msg("--train cards -H %d -s %d: no train.json", HS[a], SEED + sd);
            printf("h=%2d seed %d: window %.6f, --train %.6f, learner %.6f\n", HS[a], SEED + sd,
                   (double)w->acc[a][sd], cli, here);
            if (fabs((double)w->acc[a][sd] - cli) > 1e-6)
                fail_msg("h=%d seed %d: expected --train's %.6f, got %.6f", HS[a], SEED + sd, cli,
                         (double)w->acc[a][sd]);
            CHECK_NEAR("and the learner stepped here", here, w->acc[a][sd], 1e-6);
            CHECK_INT("not diverged", 0, w->diverged[a][sd]);
            sum += here;
            lo = here < lo ? here : lo;
            hi = here > hi ? here : hi;
        }
        CHECK_INT("every seed in the point", 3, w->seeds_done[a]);
        CHECK_NEAR("the point: the mean over the seeds", sum / 3.0, w->mean[a], 1e-6);
        CHECK_NEAR("its range: the least", lo, w->lo[a], 1e-6);
        CHECK_NEAR("and the most", hi, w->hi[a], 1e-6);
    }
}

/* --- divergence ------------------------------------------------------------------- */

static int diverged(const app_state *s) {
    const view_state vs = view_of(s);
    return vs.train && !vs.train->running && vs.train->stop == 3;
}

static void test_divergence_pauses(void **st) {
    (void)st;
    /* the rule applied here, from diverge.h's README statement: a step loss not
       finite, or the mean of the last 25 above 4 x the first step's */
    learn_config c = {.task = LEARN_FIRST, .lr = 1.0f, .batch = 1, .seed = 3};
    learn_config_resolve(&c);
    char err[200];
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) fail_msg("learner: %s", err);
    float losses[300], first = 0.0f, why = 0.0f;
    long at = -1;
    for (int s = 0; s < 300 && at < 0; s++) {
        losses[s] = learn_step(l);
        if (s == 0) first = losses[0];
        if (!isfinite(losses[s])) {
            at = s + 1, why = losses[s];
            break;
        }
        double sum = 0.0;
        const int from = s + 1 > 25 ? s + 1 - 25 : 0;
        for (int k = from; k <= s; k++) sum += losses[k];
        const double mean = sum / (double)(s + 1 - from);
        if (mean > 4.0 * first) at = s + 1, why = (float)mean;
    }
    learn_destroy(l);
    if (at < 0) fail_msg("the reference run at lr 1 did not diverge in 300 steps");
    printf("first at lr 1, batch 1, seed 3: diverged at step %ld (loss %.4g), first loss %.4g\n",
           at, (double)why, (double)first);

    app_state *s = make_state();
    double clock = 0.0;
    learn_config wcfg = {
        .task = LEARN_FIRST, .h = 4, .d_model = 32, .seed = 3, .lr = 1.0f, .batch = 1};
    assert_int_equal(app_training_set(s, 1, &wcfg, 300, 0), 0);
    CHECK_TRUE("the run stops: diverged", wait_for(s, diverged, &clock));
    view_state vs = view_of(s);
    CHECK_INT("at the step the rule fires", at, vs.train->stop_step);
    CHECK_INT("the step shown", at, vs.train->step);
    CHECK_NEAR("with the loss that said so", why, vs.train->stop_loss, 1e-3 * fabs(why));
    char want[96];
    snprintf(want, sizeof want, "training diverged at step %ld (loss %.4g)", at, (double)why);
    const char *line = status_of(s);
    if (strncmp(line, want, strlen(want)) != 0 || !strstr(line, "paused") || !strstr(line, "--lr"))
        fail_msg("status: expected \"%s: paused ... --lr ...\", got \"%s\"", want, line);
    char title[96]; /* over the curves: diverged, not a result */
    snprintf(title, sizeof title, "Training first \xC2\xB7 diverged at step %ld", at);
    CHECK_TRUE("the panels' title says it diverged", drawn_text(&vs, title));
    for (int i = 0; i < 50; i++) poll_once(s, &clock);
    vs = view_of(s);
    CHECK_INT("paused: no step after", at, vs.train->step);
    CHECK_INT("still diverged", 3, vs.train->stop);
    done_with(s);
}

int main(int argc, char **argv) {
    mhaviz = argc > 1 ? argv[1] : "./mhaviz";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_agrees),
        cmocka_unit_test(test_divergence_pauses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
