/* async.c: the jobs layer's driver behind async.h. The state machine records
 * what it wants computed as plain data (a recompute request in s->req, a pin
 * waiting for its model, a training command); app_async_poll, called by the
 * window's frame loop (and app_async_wait by the headless callers), takes those
 * requests, runs them as jobs of the app's one runner (src/app/jobs/jobs.c) and
 * hands the results back down (app_model_adopt, app_compare_adopt,
 * app_training_show). A job's context is the worker's from submit until
 * job_poll says done; the finished model is swapped in on the UI thread, so the
 * picture (and the hover over it) never reads a model being written. */
#define _POSIX_C_SOURCE 200809L
#include "async.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs.h"
#include "replay.h"
#include "request.h"
#include "state_internal.h"
#include "sweeper.h"
#include "trainer.h"

#define WORKERS 4 /* the runner's threads: a recompute, a pin, the trainer, one spare */

typedef struct {
    mha_config cfg; /* resolved */
    tok_list toks;  /* the text, the job's own copy */
    int sample;     /* the state's sample for this text (0 custom), shown with it */
    mha_model *m;   /* computed into: the job's from submit until it is done */
    int failed;
    char err[MHA_ERR_LEN];
    double ms;
} async_job;

/* A model being loaded: the worker's from submit until done, but permille, which
   the worker writes and the UI thread reads. */
typedef struct {
    app_gpt_request q;
    app_gpt *g;
    int rc;
    char err[512];
    _Atomic int permille;
} load_job;

/* The forward's own time at the setting shown (state.h's forward_ms): the model is
   computed for the shown setting on the spare (untimed: weights, X), then whole
   forwards (every row projected) are timed, three when one takes under 100 ms,
   and the median kept. The worker's from submit until done. */
#define FORWARD_CACHE 16 /* settings whose time is kept: coming back costs nothing */
#define TIMING_THIRD_MODEL_BYTES (256ull << 20)
typedef struct {
    mha_config cfg;
    tok_list toks;
    mha_model *m;
    unsigned long key;
    double ms; /* < 0: the model could not be computed */
} timing_job;

struct app_async {
    /* all of it the UI thread's; a job's context is the worker's while its
       handle is not done */
    jobs *runner;
    int running;      /* the recompute is taken from the state (until it is adopted) */
    int held;         /* app_async_hold: a job taken waits to be submitted */
    job *handle;      /* the runner's job while running and not held */
    mha_model *spare; /* the second model while no job has it (its weights often still hold) */
    async_job job;
    job *pin_handle; /* the pinned view's compute, of pin */
    app_pin *pin;
    app_trainer *trainer; /* made at the first training command */
    app_sweeper *sweeper; /* made at the first sweep of h (H in training mode) */
    job *gpt_handle;      /* a loaded model's change being computed, gpt_job */
    app_gpt_job *gpt_job;
    job *load_handle; /* a model being loaded, into load */
    load_job load;
    job *numbers_handle; /* the layer's own numbers and dark-field scan, numbers_job */
    app_numbers *numbers_job;
    job *time_handle; /* the forward being timed, on timing.m (the spare's while it runs) */
    timing_job timing;
    unsigned long cache_key[FORWARD_CACHE];
    double cache_ms[FORWARD_CACHE];
    int cache_next;
};

static double clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void recompute(job *handle, void *ctx) {
    (void)handle; /* a recompute cannot be cut short: it ignores job_cancelled */
    async_job *j = ctx;
    double t0 = clock_ms();
    j->failed = mha_model_compute(j->m, &j->cfg, &j->toks, j->err, sizeof j->err) != 0;
    j->ms = clock_ms() - t0;
}

static void time_forward(job *handle, void *ctx) {
    (void)handle;
    timing_job *t = ctx;
    char err[MHA_ERR_LEN];
    t->ms = -1.0;
    if (mha_model_compute(t->m, &t->cfg, &t->toks, err, sizeof err) != 0) return;
    double runs[3];
    int count = 0;
    do {
        const double t0 = clock_ms();
        mha_forward(t->m);
        runs[count++] = clock_ms() - t0;
    } while (count < 3 && runs[0] < 100.0);
    for (int i = 1; i < count; i++) /* sorted, to take the median */
        for (int j = i; j > 0 && runs[j] < runs[j - 1]; j--) {
            const double x = runs[j];
            runs[j] = runs[j - 1], runs[j - 1] = x;
        }
    t->ms = runs[count / 2];
}

/* The forward's time for the setting shown: from the cache, else timed on the
   worker while nothing else is asked of it (a recompute waits for it, as a key
   waits for a recompute). A finished timing goes into the cache and, if it is
   still the setting shown, into the state. 1 if the picture changed. */
static int forward_time(app_state *s, app_async *a, int block) {
    int changed = 0;
    if (a->time_handle) {
        if (!block && !job_poll(a->time_handle, NULL)) return 0;
        job_wait(a->time_handle);
        job_free(a->time_handle);
        a->time_handle = NULL;
        timing_job *t = &a->timing;
        if (!a->spare)
            a->spare = t->m; /* it holds the setting timed: a good start for the next */
        else
            mha_model_destroy(t->m); /* a recompute took a third model meanwhile */
        t->m = NULL;
        tok_free(&t->toks);
        if (t->ms >= 0.0) {
            a->cache_key[a->cache_next] = t->key;
            a->cache_ms[a->cache_next] = t->ms;
            a->cache_next = (a->cache_next + 1) % FORWARD_CACHE;
        }
    }
    /* a checkpoint wanted or loading replaces the random model: its forward is not timed */
    if (!s->m || s->gpt || s->gpt_wanted || s->gpt_loading || app_training_running(s) ||
        a->running || s->req.pending || s->m->n < 1)
        return 0;
    const unsigned long key = app_forward_key(&s->m->cfg, s->m->n);
    if (s->forward_key == key) return changed;
    for (int i = 0; i < FORWARD_CACHE; i++)
        if (a->cache_key[i] == key) {
            s->forward_ms = a->cache_ms[i];
            s->forward_key = key;
            s->dirty = 1;
            return 1;
        }
    timing_job *t = &a->timing;
    t->m = a->spare ? a->spare : mha_model_create();
    a->spare = NULL;
    if (!t->m || tok_copy(&t->toks, &s->toks) != 0) {
        a->spare = t->m;
        t->m = NULL;
        return changed;
    }
    t->cfg = s->m->cfg;
    t->key = key;
    a->time_handle = jobs_submit(a->runner, time_forward, t);
    if (!a->time_handle) { /* no thread: not timed (the panel says it is not measured) */
        a->spare = t->m;
        t->m = NULL;
        tok_free(&t->toks);
    }
    return changed;
}

static int load_progress(void *ud, double fraction) {
    load_job *l = ud;
    atomic_store(&l->permille, (int)(fraction * 1000.0));
    return 0;
}

static void load_model(job *handle, void *ctx) {
    (void)handle;
    load_job *l = ctx;
    l->g = app_gpt_load(&l->q, load_progress, l, &l->rc, l->err, sizeof l->err);
}

/* A model the state wants loaded goes to the runner; a loaded one is shown (or its
   error said). 1 if the picture changed. */
static int loads(app_state *s, app_async *a, int block) {
    int changed = 0;
    if (a->load_handle) {
        s->gpt_permille = atomic_load(&a->load.permille);
        if (!block && !job_poll(a->load_handle, NULL)) return 0;
        job_wait(a->load_handle);
        job_free(a->load_handle);
        a->load_handle = NULL;
        s->gpt_loading = 0;
        if (a->load.g && s->pin) app_compare_toggle(s); /* a random model's pin: dropped */
        app_gpt_adopt(s, a->load.g, a->load.err);
        app_derive(s); /* the layer drawn: the new model's, before anything reads it */
        a->load.g = NULL;
        return 1;
    }
    if (s->gpt_wanted) {
        s->gpt_wanted = 0;
        a->load.q = s->gpt_want;
        a->load.g = NULL;
        a->load.err[0] = '\0';
        atomic_store(&a->load.permille, 0);
        s->gpt_loading = 1;
        s->gpt_permille = 0;
        a->load_handle = jobs_submit(a->runner, load_model, &a->load);
        if (!a->load_handle) { /* no thread: here and now */
            load_model(NULL, &a->load);
            s->gpt_loading = 0;
            app_gpt_adopt(s, a->load.g, a->load.err);
            app_derive(s);
            a->load.g = NULL;
        }
        changed = 1;
    }
    return changed;
}

static void gpt_job_fn(job *handle, void *ctx) {
    (void)handle; /* a change cannot be cut short: a newer one waits for it */
    app_gpt_job_run(ctx);
}

/* A finished change of a loaded model shown (app_gpt_job_done) and its picture
   derived; 1 if anything changed. */
static int gpt_job_show(app_state *s, app_gpt_job *j) {
    const int rc = app_gpt_job_done(s, j);
    if (rc == 2) app_derive(s);
    return rc != 0;
}

/* A loaded model's change: a finished one is shown (or dropped when a newer one
   was asked meanwhile), the newest one asked goes to the runner. 1 if the
   picture changed. */
static int gpt_changes(app_state *s, app_async *a, int block) {
    int changed = 0;
    if (a->gpt_handle && (block || job_poll(a->gpt_handle, NULL))) {
        job_wait(a->gpt_handle);
        job_free(a->gpt_handle);
        a->gpt_handle = NULL;
        changed = gpt_job_show(s, a->gpt_job);
        a->gpt_job = NULL;
    }
    if (!a->gpt_handle && (a->gpt_job = app_gpt_job_take(s))) {
        a->gpt_handle = jobs_submit(a->runner, gpt_job_fn, a->gpt_job);
        if (!a->gpt_handle) { /* no thread: here and now */
            app_gpt_job_run(a->gpt_job);
            gpt_job_show(s, a->gpt_job);
            a->gpt_job = NULL;
        }
        changed = 1; /* the "computing" sign */
    }
    return changed;
}

static void numbers_fn(job *handle, void *ctx) {
    (void)handle; /* cannot be cut short: a change into the run it reads waits for it */
    app_numbers_run(ctx);
}

/* The layer's own numbers (a loaded model's or the built-in one's) and the dark-field
   scan: finished ones shown (or dropped when the
   data changed meanwhile), the state's next asked of the runner. 1 if the picture
   changed. */
static int numbers(app_state *s, app_async *a, int block) {
    int changed = 0;
    if (a->numbers_handle && (block || job_poll(a->numbers_handle, NULL))) {
        job_wait(a->numbers_handle);
        job_free(a->numbers_handle);
        a->numbers_handle = NULL;
        changed = app_numbers_done(s, a->numbers_job);
        a->numbers_job = NULL;
    }
    if (!a->numbers_handle && !a->held && (a->numbers_job = app_numbers_take(s))) {
        a->numbers_handle = jobs_submit(a->runner, numbers_fn, a->numbers_job);
        if (!a->numbers_handle) { /* no thread: here and now */
            app_numbers_run(a->numbers_job);
            changed |= app_numbers_done(s, a->numbers_job);
            a->numbers_job = NULL;
        }
    }
    return changed;
}

static void pin_job(job *handle, void *ctx) {
    (void)handle; /* the compute cannot be cut short */
    app_pin_compute(ctx);
}

int app_async_enable(app_state *s, void (*notify)(void *), void *ud, double threshold_ms) {
    const double ms = threshold_ms < 0.0 ? APP_ASYNC_DEFAULT_MS : threshold_ms;
    if (s->async) {
        app_request_attach(s, ms);
        return 0;
    }
    app_async *a = calloc(1, sizeof *a);
    if (!a || !(a->runner = jobs_create(WORKERS))) {
        free(a);
        return -1;
    }
    jobs_set_wake(a->runner, notify, ud);
    s->async = a;
    app_request_attach(s, ms);
    return 0;
}

/* Gives the recompute to the runner; when it cannot take it, computes it here. */
static void hand_over(app_async *a) {
    a->handle = jobs_submit(a->runner, recompute, &a->job);
    if (!a->handle) recompute(NULL, &a->job); /* no thread: done at once, in the foreground */
}

/* Takes the state's pending recompute, if the worker is free. */
static void submit(app_state *s, app_async *a) {
    if (a->running || !s->req.pending) return;
    /* while a forward is timed the spare is the timing's: a third model for the
       recompute, unless models are large (then the recompute waits for the timing) */
    if (a->time_handle && mha_model_bytes(&s->m->cfg, s->m->n) > TIMING_THIRD_MODEL_BYTES) return;
    async_job *j = &a->job;
    j->m = a->spare ? a->spare : mha_model_create();
    a->spare = NULL;
    if (!j->m || app_request_take(s, &j->cfg, &j->toks, &j->sample) != 0) {
        a->spare = j->m; /* nothing was computed: the state stays as it is shown */
        j->m = NULL;
        app_request_drop(s);
        return;
    }
    a->running = 1;
    if (!a->held) hand_over(a);
}

/* The recompute, once done: the state shows it. 1 if it was done. */
static int take(app_state *s, app_async *a, int block) {
    if (!a->running || a->held || (a->handle && !block && !job_poll(a->handle, NULL))) return 0;
    if (a->handle) job_wait(a->handle); /* done: the job's context is this thread's again */
    job_free(a->handle);
    a->handle = NULL;
    a->running = 0;
    async_job *j = &a->job;
    mha_model *back =
        app_model_adopt(s, j->m, &j->toks, j->sample, j->ms, j->failed ? j->err : NULL);
    if (a->spare) /* a forward's timing gave its model back meanwhile: one spare is kept */
        mha_model_destroy(back);
    else
        a->spare = back;
    j->m = NULL;
    memset(&j->toks, 0, sizeof j->toks);
    return 1;
}

/* The pinned view's compute: a pin the state wants computed goes to the runner
   (one at a time); a finished one goes back. 1 if the picture changed. */
static int pins(app_state *s, app_async *a, int block) {
    int changed = 0;
    if (a->pin_handle && (block || job_poll(a->pin_handle, NULL))) {
        job_wait(a->pin_handle); /* job_free alone would cancel one not yet started */
        job_free(a->pin_handle);
        a->pin_handle = NULL;
        changed = app_compare_adopt(s, a->pin);
        a->pin = NULL;
    }
    if (!a->pin_handle && (a->pin = app_compare_request(s))) {
        a->pin_handle = jobs_submit(a->runner, pin_job, a->pin);
        if (!a->pin_handle) { /* no thread: here and now */
            app_pin_compute(a->pin);
            changed |= app_compare_adopt(s, a->pin);
            a->pin = NULL;
        }
    }
    return changed;
}

/* Carries out the state's training command and hands the newest snapshot down. */
static int training(app_state *s, app_async *a) {
    app_train_cmd cmd;
    if (app_training_command(s, &cmd) && (a->trainer || (a->trainer = trainer_create(a->runner)))) {
        if (cmd.start) trainer_start(a->trainer, &cmd.cfg, cmd.stop_at, cmd.exact);
        if (cmd.rate != -1) trainer_set_rate(a->trainer, cmd.rate);
        if (cmd.pause >= 0) trainer_pause(a->trainer, cmd.pause);
        if (cmd.single) trainer_step(a->trainer);
    }
    int changed = 0;
    static sweep_board plan, board; /* large for the stack; the UI thread's alone */
    const int sweep = app_sweep_command(s, &plan);
    if (sweep == 1 && (a->sweeper || (a->sweeper = sweeper_create(a->runner)))) {
        sweeper_start(a->sweeper, &plan);
    } else if (sweep == 1) { /* no sweeper: the view says why, and nothing waits */
        snprintf(plan.error, sizeof plan.error, "cannot sweep: out of resources");
        changed |= app_sweep_show(s, &plan);
    } else if (sweep == 2 && a->sweeper)
        sweeper_stop(a->sweeper);
    if (a->sweeper && sweeper_snapshot(a->sweeper, &board)) changed |= app_sweep_show(s, &board);
    if (!a->trainer) return changed;
    const train_view *tv;
    const int fresh = trainer_snapshot(a->trainer, &tv);
    changed |= app_training_show(s, tv, fresh);
    long step;
    if (app_training_moment_wanted(s, &step)) { /* a moment of the replay: copied now */
        app_training_show_moment(s, trainer_moment(a->trainer, step));
        changed = 1;
    }
    return changed;
}

int app_async_poll(app_state *s) {
    app_async *a = s->async;
    if (!a) return 0;
    int changed = pins(s, a, 0);
    changed |= loads(s, a, 0);
    changed |= numbers(s, a, 0);     /* (one done lets a change into its run) */
    changed |= gpt_changes(s, a, 0); /* then those of a change just shown */
    changed |= numbers(s, a, 0);
    changed |= training(s, a);
    changed |= take(s, a, 0);
    changed |= forward_time(s, a, 0);
    submit(s, a); /* the next request (a coalesced one, or a key that waited asked) */
    changed |= forward_time(s, a, 0); /* nothing asked: the setting shown is timed */
    if (changed)
        app_refresh(s);
    else
        app_refresh_signs(s); /* the pinned pane: the frame's layout makes it from its view */
    return changed;
}

void app_async_wait(app_state *s) {
    app_async *a = s->async;
    if (!a) return;
    app_async_hold(s, 0);
    while (app_request_busy(s)) {
        if (a->time_handle) forward_time(s, a, 1); /* the spare back first */
        submit(s, a);                              /* cannot stay pending with the worker free */
        take(s, a, 1);
    }
    submit(s, a);
    pins(s, a, 1); /* and a pinned view being computed */
    pins(s, a, 1);
    loads(s, a, 1); /* and a model: taken, then shown */
    loads(s, a, 1);
    while (a->gpt_handle || app_gpt_busy(s) || a->numbers_handle || app_numbers_wanted(s)) {
        gpt_changes(s, a, 1); /* and its changes, and their numbers */
        numbers(s, a, 1);
    }
    app_refresh(s);
}

void app_async_hold(app_state *s, int hold) {
    app_async *a = s->async;
    if (!a) return;
    a->held = hold;
    if (!hold && a->running && !a->handle) hand_over(a); /* the job that waited */
}

void app_async_disable(app_state *s) {
    app_async *a = s->async;
    if (!a) return;
    app_async_hold(s, 0);
    job_free(a->handle);                          /* a recompute under way is finished first */
    job_free(a->pin_handle);                      /* and a pin's */
    if (a->time_handle) job_wait(a->time_handle); /* and a timing's */
    job_free(a->time_handle);
    mha_model_destroy(a->timing.m);
    tok_free(&a->timing.toks);
    if (a->load_handle) job_wait(a->load_handle); /* a load cannot be cut short */
    job_free(a->load_handle);
    app_gpt_free(a->load.g);
    if (a->numbers_handle) { /* the layer's numbers, then the model they read let go */
        job_wait(a->numbers_handle);
        job_free(a->numbers_handle);
        app_numbers_done(s, a->numbers_job);
    }
    if (a->gpt_handle) { /* a change under way is finished, then shown or freed */
        job_wait(a->gpt_handle);
        job_free(a->gpt_handle);
        gpt_job_show(s, a->gpt_job);
    }
    trainer_destroy(a->trainer); /* the trainer's job is stopped */
    sweeper_destroy(a->sweeper); /* and the sweep's, its runs' heads freed */
    app_sweep_show(s, NULL);
    jobs_destroy(a->runner);                  /* every thread ends */
    if (a->pin) app_compare_adopt(s, a->pin); /* the pin's model is this thread's again */
    app_training_show(s, NULL, 0);            /* its snapshots were the trainer's */
    app_request_cancel(s);
    mha_model_destroy(a->job.m);
    tok_free(&a->job.toks);
    mha_model_destroy(a->spare);
    free(a);
    s->async = NULL;
}

int app_async_busy(const app_state *s) {
    return app_request_busy(s) || app_gpt_busy(s);
}

int app_async_jobs(const app_state *s) {
    const app_async *a = s->async;
    if (!a) return 0;
    return (app_request_busy(s) ? 1 : 0) + (app_gpt_busy(s) ? 1 : 0) + (a->time_handle != NULL) +
           (a->load_handle != NULL) + (a->pin_handle != NULL) + (app_training_running(s) ? 1 : 0) +
           (a->numbers_handle || app_numbers_wanted(s) ? 1 : 0);
}

unsigned long app_async_recomputes(const app_state *s) {
    return s->req.recomputes;
}

int app_async_training_adopt(app_state *s, learn_model *l, const train_point *curve, int points,
                             float steps_per_s, const train_pruning *measured, int layer, char *err,
                             size_t errlen) {
    app_async *a = s->async;
    if (!a || (!a->trainer && !(a->trainer = trainer_create(a->runner))) ||
        app_training_adopted(s, learn_get_config(l), layer) != 0) {
        learn_destroy(l);
        snprintf(err, errlen, "cannot show training: out of resources");
        return 1;
    }
    trainer_adopt(a->trainer, l, curve, points, measured, steps_per_s);
    const train_view *tv;
    trainer_snapshot(a->trainer, &tv);
    app_training_show(s, tv, 1);
    if (tv->error[0]) {
        snprintf(err, errlen, "%s", tv->error);
        return 2;
    }
    app_refresh(s);
    return 0;
}

int app_async_training_moments(app_state *s, train_replay *r, char *err, size_t errlen) {
    app_async *a = s->async;
    if (!a || !a->trainer) {
        replay_destroy(r);
        snprintf(err, errlen, "cannot show training: out of resources");
        return 1;
    }
    trainer_adopt_replay(a->trainer, r);
    const train_view *tv;
    trainer_snapshot(a->trainer, &tv);
    app_training_show(s, tv, 1);
    app_refresh(s);
    return 0;
}
