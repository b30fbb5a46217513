#define _POSIX_C_SOURCE 200809L
/* test_training_replay.c: the replay of a training run. The schedule of moments
 * (logarithmic: each step about 1.3 times the one before). Then in the window's
 * state with the real trainer: L on pair until it stops by itself; the moments
 * kept are exactly the schedule's steps up to the stop and the stop itself; the
 * moment at step k equals an independent recomputation (a fresh learner of the
 * same seed stepped k times with learn_step alone, no evaluation between: its
 * heads' attention, Concat and MultiHead within 1e-5, its held-out accuracy and
 * pruning bars within 1e-6); and the keys: [ goes back (the heads and the bars
 * are the earlier moment's, not live), ] forward, End and ] past the last are
 * live again, a scrub pauses a running run, L goes back to live and on.
 * The bars are lazy (replay.h): a moment shown first says its bars are not yet
 * measured, the trainer measures them on its worker, and they come; at the
 * archive itself, bars measured later from a moment's copy of the weights equal
 * bit for bit those of a fresh learner stepped to that step and measured, and
 * the learner they were measured on trains on exactly as if they had not been. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "learn.h"
#include "replay.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "train_loop.h"
#include "train_view.h"
#include "view_fixture.h"

/* --- the schedule ----------------------------------------------------------------- */

static void test_schedule(void **st) {
    (void)st;
    static const long first[] = {0, 1, 2, 3, 4, 5, 7, 9, 12, 16, 21, 27, 35, 46, 60, 78, 101};
    long s = 0;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        if (s != first[i]) fail_msg("moment %zu: expected step %ld, got %ld", i, first[i], s);
        CHECK_TRUE("on the schedule", replay_on_schedule(s));
        s = replay_next_step(s);
    }
    CHECK_TRUE("6 is not", !replay_on_schedule(6));
    /* logarithmic: from step 20 on, each 1.25 .. 1.35 times the one before */
    int n = 0;
    for (s = 0; s <= 1000000; s = replay_next_step(s)) {
        const long next = replay_next_step(s);
        if (s >= 20 && (next < 1.25 * s || next > 1.35 * s + 1))
            fail_msg("after step %ld: expected 1.25 .. 1.35 times it, got %ld", s, next);
        n++;
    }
    CHECK_TRUE("a few dozen up to 10^6 (<= 64, the archive's most)", n >= 24 && n <= 64);
    CHECK_INT("pair's budget of 500: 23 on the schedule and the last", 24, replay_count_for(500));
    CHECK_INT("a budget on the schedule is not counted twice", 23, replay_count_for(485));
}

/* --- thinning a full archive -------------------------------------------------------- */

/* A window run continued with L again and again: the schedule's moments and one at
   every stop (every `every` steps from `first`), in step order, into an archive of
   64 through replay_thin_index, as link_in does. Returns how many are kept, and
   in *taken how many were taken. */
static int thin_run(long first, long every, long end, long *kept, int *taken) {
    int n = 0;
    *taken = 0;
    long sched = 0, stop = first;
    while (sched <= end || stop <= end) {
        long next = sched <= stop ? sched : stop;
        if (next > end) break;
        if (next == sched) sched = replay_next_step(sched);
        if (next == stop) stop += every;
        if (n > 0 && kept[n - 1] == next) continue; /* one moment a step */
        ++*taken;
        if (n == TRAIN_REPLAY_MAX) {
            const int drop = replay_thin_index(kept, n, next);
            if (drop < 1 || drop >= n) fail_msg("dropped %d of %d", drop, n);
            memmove(&kept[drop], &kept[drop + 1], sizeof kept[0] * (size_t)(n - drop - 1));
            n--;
        }
        kept[n++] = next;
    }
    return n;
}

/* The moments of a long run stay spread on the log step axis: the learning phase
   keeps its moments however many stops came after it (the 10-minute window run of
   this session: 298 presses of L, 67,675 steps, had kept none between step 0 and
   step 31,600), the first and the newest are kept, and no gap on ln(1 + step) past
   the first three moments is over 2.5 times the even spacing (2.2 measured at
   worst over 200 such runs in a model of the rule). */
static void test_thinning_keeps_learning_phase(void **st) {
    (void)st;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    static const long ends[] = {5000, 70000, 300000, 1000000};
    for (int trial = 0; trial < 40; trial++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const long end = ends[(rng >> 33) % 4];
        const long every = 150 + (long)((rng >> 20) % 251),
                   first = 100 + (long)((rng >> 40) % 2901);
        long kept[TRAIN_REPLAY_MAX];
        int taken;
        const int n = thin_run(first, every, end, kept, &taken);
        char what[96];
        snprintf(what, sizeof what, "stops from %ld every %ld to %ld", first, every, end);
        CHECK_INT(what, taken < TRAIN_REPLAY_MAX ? taken : TRAIN_REPLAY_MAX, n);
        if (taken <= TRAIN_REPLAY_MAX) continue; /* nothing thinned */
        if (kept[0] != 0) fail_msg("%s: step 0 not kept (%ld)", what, kept[0]);
        int early = 0;
        for (int i = 0; i < n; i++) early += kept[i] >= 1 && kept[i] <= 400;
        if (early < 12) fail_msg("%s: %d moments in steps 1..400, expected >= 12", what, early);
        const double even = (log1p((double)kept[n - 1]) - log1p((double)kept[3])) / (n - 4);
        for (int i = 4; i < n; i++) {
            const double gap = log1p((double)kept[i]) - log1p((double)kept[i - 1]);
            if (gap > 2.5 * even)
                fail_msg("%s: steps %ld..%ld: gap %.3f over 2.5 x %.3f", what, kept[i - 1], kept[i],
                         gap, even);
        }
    }
    long two[2] = {0, 5};
    CHECK_INT("two moments: the newest goes, never the first", 1, replay_thin_index(two, 2, 9));
    CHECK_INT("one moment: nothing to thin", -1, replay_thin_index(two, 1, 9));
}

/* --- the window's state ------------------------------------------------------------ */

static app_state *make_state(void) {
    const cli_options o = fx_options();
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    assert_int_equal(app_async_enable(s, NULL, NULL, -1.0), 0);
    return s;
}

static void press(app_state *s, int key) {
    app_action a = app_key_action(s, key, 0);
    app_apply(s, &a);
    app_async_poll(s);
}

static void poll_once(app_state *s, double *clock) {
    *clock += 10.0;
    app_tick(s, *clock);
    app_async_poll(s);
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static const view_train *train_of(const app_state *s, view_state *vs) {
    app_view(s, vs);
    return vs->train;
}

static int wait_stopped(app_state *s, double *clock) {
    view_state vs;
    for (int i = 0; i < 9000; i++) {
        poll_once(s, clock);
        const view_train *t = train_of(s, &vs);
        if (t && !t->running && t->stop != 0 && t->step > 0 && t->pruning_valid &&
            t->pruning_step == t->step)
            return 1;
    }
    return 0;
}

/* Polls until the moment shown has its bars (the trainer measures them on its
   worker once the moment is asked for). 1 when they came. */
static int wait_bars(app_state *s, double *clock) {
    view_state vs;
    for (int i = 0; i < 9000; i++) {
        const view_train *t = train_of(s, &vs);
        if (t && t->pruning_valid && t->pruning_step == t->step) return 1;
        poll_once(s, clock);
    }
    return 0;
}

/* What a moment shows, copied. */
typedef struct {
    long step;
    float acc;
    float attn[2 * 12 * 12], concat[12 * 32], out[12 * 32];
    float ablated[2];
} picture;

static void take(const view_state *vs, picture *p) {
    const view_train *t = vs->train;
    assert_non_null(t);
    assert_non_null(vs->layer);
    CHECK_TRUE("pair at h = 2, d_model 32: 2 x 12 x 12 weights",
               vs->layer->h == 2 && vs->layer->n == 12 && vs->layer->d_model == 32);
    p->step = t->step;
    p->acc = t->acc;
    memcpy(p->attn, vs->layer->attn, sizeof p->attn);
    memcpy(p->concat, vs->layer->concat, sizeof p->concat);
    memcpy(p->out, vs->layer->out, sizeof p->out);
    CHECK_TRUE("the bars are measured", t->pruning_valid && t->ablated_acc);
    CHECK_INT("the bars are the moment's", t->step, t->pruning_step);
    memcpy(p->ablated, t->ablated_acc, sizeof p->ablated);
}

static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - (double)b[i]));
    return m;
}

/* The reference: a fresh learner of the window's configuration (pair, h 2,
   d_model 32, the task's layers, the default seed) stepped k times. */
static void recompute(long k, picture *p) {
    learn_config c = {.task = LEARN_PAIR, .h = 2, .d_model = 32};
    learn_config_resolve(&c);
    char err[256];
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) fail_msg("learn_create: %s", err);
    for (long i = 0; i < k; i++) learn_step(l);
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    learn_example_tensors(l, lt, NULL);
    p->step = learn_steps_done(l);
    memcpy(p->attn, lt[0].attn, sizeof p->attn);
    memcpy(p->concat, lt[0].concat, sizeof p->concat);
    memcpy(p->out, lt[0].out, sizeof p->out);
    int pruned;
    float pruned_acc;
    assert_int_equal(train_ablate(l, &p->acc, p->ablated, &pruned, &pruned_acc, NULL, NULL), 0);
    learn_destroy(l);
}

static void compare(const picture *got, const picture *want, const char *what) {
    if (got->step != want->step)
        fail_msg("%s: expected step %ld, got %ld", what, want->step, got->step);
    const double da = max_diff(got->attn, want->attn, 2 * 12 * 12);
    const double dc = max_diff(got->concat, want->concat, 12 * 32);
    const double dm = max_diff(got->out, want->out, 12 * 32);
    const double db = max_diff(got->ablated, want->ablated, 2);
    if (da > 1e-5 || dc > 1e-5 || dm > 1e-5)
        fail_msg("%s (step %ld): expected the recomputed heads within 1e-5, got attention %.3g, "
                 "Concat %.3g, MultiHead %.3g",
                 what, got->step, da, dc, dm);
    if (fabsf(got->acc - want->acc) > 1e-6f || db > 1e-6)
        fail_msg("%s (step %ld): expected held-out %.6f and bars %.6f %.6f, got %.6f and %.6f %.6f",
                 what, got->step, (double)want->acc, (double)want->ablated[0],
                 (double)want->ablated[1], (double)got->acc, (double)got->ablated[0],
                 (double)got->ablated[1]);
}

static void test_moments_are_the_run(void **st) {
    (void)st;
    app_state *s = make_state();
    double clock = 0.0;
    press(s, 'l');
    CHECK_TRUE("L on pair stops by itself", wait_stopped(s, &clock));
    view_state vs;
    const view_train *t = train_of(s, &vs);
    const long stop = t->stop_step;
    /* the moments are the schedule's steps up to the stop, and the stop */
    long want[TRAIN_REPLAY_MAX];
    int n = 0;
    for (long k = 0; k <= stop && n < TRAIN_REPLAY_MAX; k = replay_next_step(k)) want[n++] = k;
    if (want[n - 1] != stop) want[n++] = stop;
    CHECK_INT("moments: the schedule up to the stop, and the stop", n, t->moments);
    for (int i = 0; i < n; i++)
        if (t->moment_step[i] != want[i])
            fail_msg("moment %d: expected step %ld, got %ld", i, want[i], t->moment_step[i]);
    printf("pair stopped at step %ld with %d moments\n", stop, t->moments);
    /* each of these moments is the run at its step */
    const long check[] = {0, 1, 5, 21, 60, 131};
    static picture got, ref;
    for (size_t i = 0; i < sizeof check / sizeof check[0]; i++) {
        assert_int_equal(app_training_replay_at(s, check[i]), 0);
        app_async_poll(s);
        train_of(s, &vs);
        CHECK_TRUE("replaying", vs.train->replay);
        /* shown at once, its bars not measured until now: being measured */
        CHECK_TRUE("a moment's bars wait until it is shown", !vs.train->pruning_valid);
        CHECK_INT("the bars being measured are the moment's", check[i], vs.train->pruning_step);
        CHECK_TRUE("the bars come", wait_bars(s, &clock));
        train_of(s, &vs);
        take(&vs, &got);
        recompute(check[i], &ref);
        char what[64];
        snprintf(what, sizeof what, "the moment at step %ld", check[i]);
        compare(&got, &ref, what);
    }
    /* again: kept once measured */
    assert_int_equal(app_training_replay_at(s, check[1]), 0);
    app_async_poll(s);
    train_of(s, &vs);
    CHECK_TRUE("a moment measured before: its bars at once", vs.train->pruning_valid);
    /* the last: the live weights where it stopped, its bars those of the stop */
    assert_int_equal(app_training_replay_at(s, stop), 0);
    app_async_poll(s);
    train_of(s, &vs);
    CHECK_TRUE("the stop's bars at once", vs.train->pruning_valid);
    take(&vs, &got);
    recompute(stop, &ref);
    compare(&got, &ref, "the moment where it stopped");
    app_async_disable(s);
    app_state_destroy(s);
}

static void test_scrub_keys(void **st) {
    (void)st;
    app_state *s = make_state();
    double clock = 0.0;
    press(s, 'l');
    CHECK_TRUE("L on pair stops by itself", wait_stopped(s, &clock));
    view_state vs;
    static picture live, back, ref, again;
    train_of(s, &vs);
    take(&vs, &live);
    const long stop = live.step;
    const int n = vs.train->moments;
    CHECK_TRUE("live: no replay", !vs.train->replay);
    /* [ : the moment before the live step; [ again: the one before that */
    press(s, '[');
    train_of(s, &vs);
    CHECK_TRUE("[ : a moment shown", vs.train->replay);
    CHECK_INT("[ : the moment before the stop", n - 2, vs.train->moment);
    CHECK_INT("[ : its step", vs.train->moment_step[n - 2], vs.train->step);
    CHECK_INT("the live step is still said", stop, vs.train->live_step);
    for (int k = 0; k < 8; k++) press(s, '[');
    CHECK_TRUE("9 x [ : the bars come", wait_bars(s, &clock));
    train_of(s, &vs);
    CHECK_INT("9 x [ : nine moments back", n - 10, vs.train->moment);
    take(&vs, &back);
    CHECK_TRUE("an earlier step", back.step < stop);
    recompute(back.step, &ref);
    compare(&back, &ref, "9 x [");
    if (max_diff(back.attn, live.attn, 2 * 12 * 12) < 1e-3)
        fail_msg("9 x [ (step %ld): expected heads unlike the live ones at step %ld", back.step,
                 stop);
    if (max_diff(back.ablated, live.ablated, 2) < 1e-3)
        fail_msg("9 x [ (step %ld): expected other bars than live (%.3f %.3f), got %.3f %.3f",
                 back.step, (double)live.ablated[0], (double)live.ablated[1],
                 (double)back.ablated[0], (double)back.ablated[1]);
    const char *status = vs.status ? vs.status : "";
    char want[96];
    snprintf(want, sizeof want, "replay: step %ld of %ld", back.step, stop);
    if (!strstr(status, want) || !strstr(status, "End live"))
        fail_msg("status: expected \"%s ... End live\", got \"%s\"", want, status);
    /* ] : one forward */
    press(s, ']');
    train_of(s, &vs);
    CHECK_INT("] : one moment forward", n - 9, vs.train->moment);
    /* End: live, paused as it was */
    press(s, APP_KEY_END);
    train_of(s, &vs);
    CHECK_TRUE("End: live", !vs.train->replay);
    take(&vs, &again);
    CHECK_INT("End: the live step", stop, again.step);
    CHECK_TRUE("End: the live heads", max_diff(again.attn, live.attn, 2 * 12 * 12) == 0.0);
    /* all the way back: the first moment, step 0, and no further */
    for (int k = 0; k < n + 3; k++) press(s, '[');
    train_of(s, &vs);
    CHECK_INT("back to the first moment", 0, vs.train->moment);
    CHECK_INT("step 0", 0, vs.train->step);
    /* ] past the last: live */
    for (int k = 0; k < n; k++) press(s, ']');
    train_of(s, &vs);
    CHECK_TRUE("] past the last moment: live", !vs.train->replay);
    /* a scrub while running pauses the run; L goes back to live and on */
    press(s, 'l'); /* on for more */
    for (int i = 0; i < 9000; i++) {
        poll_once(s, &clock);
        if (train_of(s, &vs)->running) break;
    }
    CHECK_TRUE("L: running again", vs.train->running);
    press(s, '[');
    for (int i = 0; i < 9000; i++) {
        poll_once(s, &clock);
        if (!train_of(s, &vs)->running) break;
    }
    CHECK_TRUE("[ while running: paused", !vs.train->running);
    CHECK_TRUE("[ while running: a moment shown", vs.train->replay);
    for (int i = 0; i < 20; i++) poll_once(s, &clock);
    const long paused_at = train_of(s, &vs)->live_step;
    for (int i = 0; i < 20; i++) poll_once(s, &clock);
    CHECK_INT("stays paused while replaying", paused_at, train_of(s, &vs)->live_step);
    press(s, 'l');
    train_of(s, &vs);
    CHECK_TRUE("L in the replay: live", !vs.train->replay);
    for (int i = 0; i < 9000; i++) {
        poll_once(s, &clock);
        if (train_of(s, &vs)->live_step > paused_at) break;
    }
    CHECK_TRUE("L in the replay: the run goes on", vs.train->live_step > paused_at);
    app_async_disable(s);
    app_state_destroy(s);
}

/* --- lazy bars at the archive ------------------------------------------------------ */

typedef struct {
    float acc, pruned_acc;
    int pruned;
    float ablated[LEARN_MAX_LAYERS * 8];
} bars_of;

static learn_model *lazy_learner(void) {
    /* two layers with the MLP: every kind of parameter is in the copy */
    learn_config c = {.task = LEARN_INDUCTION, .h = 4, .d_model = 32, .mlp = 1, .seed = 7};
    learn_config_resolve(&c);
    char err[256];
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) fail_msg("learn_create: %s", err);
    return l;
}

/* A fresh learner stepped k times (learn_step alone) and measured: the eager
   pass's numbers at step k. */
static void fresh_bars(long k, bars_of *b) {
    learn_model *l = lazy_learner();
    for (long i = 0; i < k; i++) learn_step(l);
    memset(b, 0, sizeof *b);
    assert_int_equal(train_ablate(l, &b->acc, b->ablated, &b->pruned, &b->pruned_acc, NULL, NULL),
                     0);
    learn_destroy(l);
}

static int same_bits(const void *a, const void *b, size_t n) {
    return memcmp(a, b, n) == 0;
}

static void test_lazy_bars_bit_for_bit(void **st) {
    (void)st;
    learn_model *l = lazy_learner();
    const int nh = 2 * 4;
    train_replay *r = replay_create();
    assert_non_null(r);
    replay_clear(r, 1);
    const long last = 131;
    replay_plan(r, l, last);
    CHECK_TRUE("a small run's moments keep their weights: lazy", replay_lazy(r));
    static train_view out;
    long measured_early = -1;
    for (long s = 0; s <= last; s++) {
        if (s > 0) learn_step(l);
        if (replay_on_schedule(s)) assert_int_equal(replay_take(r, l, 0.0f, NAN, NULL, NULL), 0);
        if (s == 40) { /* measured in the middle of the run: the run must go on the same */
            assert_int_equal(replay_measure(r, 12, l, NULL, NULL), 0);
            measured_early = 12;
        }
    }
    CHECK_INT("measured in the middle of the run", 12, measured_early);
    /* the learner trained on as if nothing had been measured: its weights and its
       next losses are a plain run's, bit for bit */
    learn_model *plain = lazy_learner();
    for (long s = 0; s < last; s++) learn_step(plain);
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor a, b;
        learn_param(l, i, &a);
        learn_param(plain, i, &b);
        const size_t n = (size_t)a.shape[0] * (size_t)(a.ndim == 2 ? a.shape[1] : 1);
        if (!same_bits(a.data, b.data, n * sizeof(float)))
            fail_msg("after the bars were measured: %s is not the plain run's", a.name);
    }
    for (int k = 0; k < 3; k++) {
        const float la = learn_step(l), lb = learn_step(plain);
        if (!same_bits(&la, &lb, sizeof la))
            fail_msg("step %d after: expected the plain run's loss %.9g, got %.9g", k + 1,
                     (double)lb, (double)la);
    }
    learn_destroy(plain);
    /* the moments' bars: none measured before they are asked for (but 12) */
    const long check[] = {0, 3, 12, 27, 60, 101};
    for (size_t i = 0; i < sizeof check / sizeof check[0]; i++) {
        const long k = check[i];
        CHECK_INT("measured only when asked", k == 12, replay_measured(r, k));
        assert_int_equal(replay_copy(r, k, &out), 0);
        CHECK_TRUE("copied before: not yet measured", k == 12 || !out.pruning_valid);
        CHECK_INT("copied before: the moment's step", k, out.pruning_step);
        bars_of want;
        fresh_bars(k, &want);
        if (!same_bits(&out.acc, &want.acc, sizeof want.acc)) /* taken with the moment */
            fail_msg("step %ld: expected held-out %.9g, got %.9g", k, (double)want.acc,
                     (double)out.acc);
        assert_int_equal(replay_measure(r, k, l, NULL, NULL), 0);
        CHECK_INT("measured and kept", 1, replay_measured(r, k));
        assert_int_equal(replay_copy(r, k, &out), 0);
        CHECK_TRUE("copied after: measured", out.pruning_valid);
        if (!same_bits(out.ablated_acc, want.ablated, sizeof(float) * (size_t)nh) ||
            !same_bits(&out.acc, &want.acc, sizeof want.acc) || out.pruned != want.pruned ||
            !same_bits(&out.pruned_acc, &want.pruned_acc, sizeof want.pruned_acc)) {
            char got_s[256] = "", want_s[256] = "";
            for (int j = 0; j < nh; j++) {
                snprintf(got_s + strlen(got_s), sizeof got_s - strlen(got_s), " %.9g",
                         (double)out.ablated_acc[j]);
                snprintf(want_s + strlen(want_s), sizeof want_s - strlen(want_s), " %.9g",
                         (double)want.ablated[j]);
            }
            fail_msg("step %ld: lazily measured bars are not a fresh learner's, bit for bit:\n"
                     "  expected%s (pruned %d at %.9g)\n  got     %s (pruned %d at %.9g)",
                     k, want_s, want.pruned, (double)want.pruned_acc, got_s, out.pruned,
                     (double)out.pruned_acc);
        }
    }
    printf("lazy bars of 6 moments of induction (d_model 32, h 4, 2 layers, MLP) equal a fresh "
           "learner's bit for bit\n");
    CHECK_INT("no such moment", -1, replay_measure(r, 6, l, NULL, NULL));
    free(out.mem_);
    replay_destroy(r);
    learn_destroy(l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_thinning_keeps_learning_phase),
        cmocka_unit_test(test_moments_are_the_run),
        cmocka_unit_test(test_scrub_keys),
        cmocka_unit_test(test_lazy_bars_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
