/* trainer.c: training in the background behind trainer.h, as a job of the app's
 * runner (src/jobs). While the job runs it owns the learner and the run's
 * record (curves, bars); the UI thread touches them only when no job runs (a
 * start or a resume first stops the job and waits). Publications go through a
 * jobs_swap: the job fills its back buffer with what is in use and swaps it
 * over; the UI swaps the newest to its front. The steps and the ablation pass
 * are train_loop.c's, the same as --train's. */
#define _POSIX_C_SOURCE 200809L
#include "trainer.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diverge.h"
#include "replay.h"
#include "train_loop.h"

#define BURST_MS 50.0    /* steps between publications */
#define PRUNE_EVERY 1000 /* ms of training between pruning evaluations */

struct app_trainer {
    jobs *runner;
    job *handle; /* the running job, or NULL */
    /* the job's while handle runs, else the UI thread's */
    learn_model *l;
    train_loop loop;
    learn_config start_cfg; /* what the next job starts (fresh) */
    long start_stop;
    int start_exact; /* the run stops at start_stop only, not once converged */
    int fresh;
    int single;            /* the next job takes one step and pauses */
    long stretch;          /* steps a stretch of the run goes on for (0: no end) */
    train_plateau plateau; /* the stop rule over the current run's points */
    int runs_started;      /* the session's runs, numbered from 1 */
    double last_step_ms;   /* slow motion: when the last step was taken */
    double slow_ms[8];     /* and the last 8 steps' times, for the rate shown */
    long slow_n;           /* steps in slow motion since it began */
    train_view *rec;       /* the run's record: what is published (its layers unused) */
    train_replay *replay;  /* the current run's moments (replay.h) */
    long next_moment;      /* the step of the schedule the next moment is taken at */
    long acc_step;         /* the step the record's acc was measured at (-1: none) */
    double last_prune_ms;  /* when the bars were last measured */
    learn_diverge dv;      /* the divergence rule over its step losses (diverge.h) */
    int diverged;          /* it fired: the run pauses (a resume clears it) */
    float diverged_loss;
    /* either side's */
    atomic_int pause; /* the UI asks the job to stop stepping and measure the bars */
    atomic_int rate;  /* 0 full speed, > 0 slow motion's steps a second, TRAIN_CLASS_PACE */
    /* the moment whose bars the UI waits for (-1: none), and whether a job is
       live to measure it (it looks before it ends): both under mlock */
    pthread_mutex_t mlock;
    long want_bars;
    int job_live;
    jobs_swap sw;
    train_view *buf[3];
    /* the UI thread's */
    unsigned long seq;
    int paused;
    train_view *moment; /* the moment last asked for (trainer_moment) */
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Adds a point to the current run's curve (thinned evenly when full, its first
   point kept: train_curve_add). */
static void curve_add(train_view *w, const train_point *pt) {
    train_curve_add(&w->run[w->runs - 1].curve, pt);
}

/* Takes a point of the curve: the record's numbers, and the stop rule. 1 when
   the run has converged. */
static int take_point(app_trainer *t, const train_point *pt) {
    train_view *w = t->rec;
    w->loss = isfinite(pt->loss) ? pt->loss : w->loss;
    w->acc = pt->acc;
    t->acc_step = pt->step;
    curve_add(w, pt);
    return train_plateau_add(&t->plateau, pt->step, pt->acc);
}

/* The run stopped by itself at its current step, for why. */
static void stopped(app_trainer *t, train_stop_why why) {
    train_view *w = t->rec;
    w->stop = why;
    w->stop_step = learn_steps_done(t->l);
    w->stop_acc = w->acc;
    w->stop_lo = t->plateau.lo;
    w->stop_hi = t->plateau.hi;
}

/* One step of the loop, its loss fed to the divergence rule (as --train does). */
static int watched_step(app_trainer *t, train_point *pt) {
    const int point = train_loop_step(&t->loop, pt);
    if (!t->diverged && learn_diverge_feed(&t->dv, t->loop.last_loss, &t->diverged_loss))
        t->diverged = 1;
    return point;
}

static int stop_asked(void *ud) {
    return ud && job_cancelled(ud);
}

/* The bars for the learner's current weights; 0, or -1 when the job was cancelled. */
static int prune(app_trainer *t, job *handle) {
    train_view *w = t->rec;
    if (train_ablate(t->l, &w->acc, w->ablated_acc, &w->pruned, &w->pruned_acc, stop_asked,
                     handle) != 0)
        return -1;
    w->pruning_valid = 1;
    w->pruning_step = learn_steps_done(t->l);
    t->acc_step = w->pruning_step;
    return 0;
}

/* Copies the held-out example's tensors of every layer of l into b's own block
   (grown to the run's shape when it is too small): the UI reads them after the
   swap while the learner trains on. Without memory the layers are NULL. */
static void copy_tensors(train_view *b, learn_model *l) {
    memset(b->layer, 0, sizeof b->layer);
    if (!l) return;
    const learn_config *c = learn_get_config(l);
    const size_t want = replay_tensor_floats(c);
    if (want > b->mem_cap) {
        float *m = realloc(b->mem_, want * sizeof *m);
        if (!m) {
            snprintf(b->error, sizeof b->error, "out of memory for the trained tensors");
            return;
        }
        b->mem_ = m;
        b->mem_cap = want;
    }
    replay_copy_tensors(b->mem_, l);
    replay_point_layers(b->layer, b->mem_, c);
}

/* The moments' steps into the record. */
static void count_moments(app_trainer *t) {
    t->rec->moments = replay_steps(t->replay, t->rec->moment_step, TRAIN_REPLAY_MAX);
    if (t->rec->moments > TRAIN_REPLAY_MAX) t->rec->moments = TRAIN_REPLAY_MAX;
}

static void moment_here(app_trainer *t);
static void publish(app_trainer *t, job *handle, int running);

/* A moment for the replay when the learner's step is on the schedule. Lazily
   (replay.h): its tensors and weights, its bars only once the scrubber lands on
   it (serve_bars). Else its bars measured now, which are the record's too (the
   live view's, and the pass every second need not come yet). 0, or -1 when the
   job was cancelled. */
static int scheduled_moment(app_trainer *t, job *handle) {
    const long done = learn_steps_done(t->l);
    while (t->next_moment < done) t->next_moment = replay_next_step(t->next_moment);
    if (done != t->next_moment) return 0;
    t->next_moment = replay_next_step(done);
    if (replay_lazy(t->replay)) { /* the held-out accuracy of this step's point, if any */
        const float acc = t->acc_step == done ? t->rec->acc : NAN;
        if (replay_take(t->replay, t->l, t->rec->loss, acc, NULL, NULL) == 0) count_moments(t);
        return 0;
    }
    if (prune(t, handle) != 0) return -1;
    t->last_prune_ms = now_ms();
    moment_here(t);
    return 0;
}

/* The bars of the moment the UI waits for (trainer_moment), measured on this
   job's thread with the learner (its weights back after: the run goes on as
   if nothing happened), then published so the UI copies the moment again. At
   the job's end (end 1) until none is asked for, and the job is no longer live;
   between bursts (end 0) the one asked for, if any. */
static void serve_bars(app_trainer *t, job *handle, int end) {
    for (;;) {
        pthread_mutex_lock(&t->mlock);
        const long step = t->want_bars;
        if (job_cancelled(handle) || step < 0 || !t->l) {
            if (end) t->job_live = 0; /* a later request submits a job of its own */
            pthread_mutex_unlock(&t->mlock);
            return;
        }
        t->want_bars = -1;
        pthread_mutex_unlock(&t->mlock);
        if (replay_measure(t->replay, step, t->l, stop_asked, handle) == 0) {
            publish(t, handle, !end);
        } else if (job_cancelled(handle)) { /* still wanted: the next job measures it */
            pthread_mutex_lock(&t->mlock);
            if (t->want_bars < 0) t->want_bars = step;
            pthread_mutex_unlock(&t->mlock);
        }
        if (!end) return;
    }
}

static void bars_job(job *handle, void *ctx) {
    serve_bars(ctx, handle, 1);
}

/* The moment of the step the run stopped at (or was paused at): its bars are
   the record's, just measured. */
static void moment_here(app_trainer *t) {
    const train_view *w = t->rec;
    if (!w->pruning_valid || w->pruning_step != learn_steps_done(t->l)) return;
    replay_take_measured(t->replay, t->l, w->loss, w->acc, w->ablated_acc, w->pruned,
                         w->pruned_acc);
    count_moments(t);
}

/* Fills b with the record as it is now, what is in use of it, and the
   held-out example's tensors from the learner. */
static void fill(train_view *b, const train_view *w, learn_model *l, int running) {
    memcpy(b, w, offsetof(train_view, tokens)); /* the scalars up to the example */
    b->running = running;
    memcpy(b->tokens, w->tokens, sizeof(int) * (size_t)w->T);
    b->runs = w->runs;
    for (int i = 0; i < w->runs; i++) {
        const train_run *r = &w->run[i];
        train_run *o = &b->run[i];
        o->h = r->h, o->d_model = r->d_model, o->layers = r->layers, o->task = r->task;
        o->seed = r->seed, o->number = r->number;
        const size_t n = (size_t)r->curve.n;
        o->curve.n = r->curve.n, o->curve.gap = r->curve.gap;
        memcpy(o->curve.step, r->curve.step, sizeof(float) * n);
        memcpy(o->curve.loss, r->curve.loss, sizeof(float) * n);
        memcpy(o->curve.acc, r->curve.acc, sizeof(float) * n);
    }
    b->pruning_valid = w->pruning_valid;
    b->pruning_step = w->pruning_step;
    memcpy(b->ablated_acc, w->ablated_acc, sizeof(float) * (size_t)(w->cfg.layers * w->cfg.h));
    b->pruned = w->pruned;
    b->pruned_acc = w->pruned_acc;
    memcpy(b->error, w->error, sizeof b->error);
    copy_tensors(b, l);
}

/* Hands the record over to the UI (the writer's side of the swap). */
static void publish(app_trainer *t, job *handle, int running) {
    train_view *b = jobs_swap_back(&t->sw);
    fill(b, t->rec, t->l, running);
    b->rate = atomic_load(&t->rate); /* the speed asked for now */
    jobs_swap_publish(&t->sw);
    if (handle) job_news(handle);
}

static void record_run(app_trainer *t, learn_model *l);

/* Makes the learner for cfg; a new curve joins the plot. 0, or -1 with the
   record's error set. */
static int begin_run(app_trainer *t, learn_config cfg) {
    train_view *w = t->rec;
    learn_destroy(t->l);
    t->l = NULL;
    learn_config_resolve(&cfg);
    w->error[0] = '\0';
    if (cfg.h > TRAIN_MAX_HEADS) {
        snprintf(w->error, sizeof w->error, "training takes at most %d heads", TRAIN_MAX_HEADS);
        return -1;
    }
    char err[256];
    t->l = learn_create(&cfg, err, sizeof err);
    if (!t->l) {
        snprintf(w->error, sizeof w->error, "%.150s", err);
        return -1;
    }
    const learn_task_info *info = learn_task(cfg.task);
    if (info->seq_len > TRAIN_MAX_T) { /* cannot happen with the tasks there are */
        snprintf(w->error, sizeof w->error, "task %s is too long to draw", info->name);
        learn_destroy(t->l);
        t->l = NULL;
        return -1;
    }
    record_run(t, t->l);
    replay_plan(t->replay, t->l, t->start_stop); /* lazy bars when the run's copies fit */
    return 0;
}

/* A new run of l in the record: its shape, its example, an empty curve, the
   session's next number; the stop rule starts over. */
static void record_run(app_trainer *t, learn_model *l) {
    train_view *w = t->rec;
    w->active = 1;
    w->stop = TRAIN_GOING;
    train_plateau_begin(&t->plateau);
    w->cfg = *learn_get_config(l);
    w->T = learn_task(w->cfg.task)->seq_len;
    w->step = 0;
    w->loss = w->acc = 0.0f;
    w->pruning_valid = 0;
    const int *tok, *tgt;
    learn_example(l, &tok, &tgt);
    memcpy(w->tokens, tok, sizeof(int) * (size_t)w->T);
    if (w->runs == TRAIN_MAX_RUNS) {
        memmove(&w->run[0], &w->run[1], sizeof(train_run) * (TRAIN_MAX_RUNS - 1));
        w->runs--;
    }
    train_run *r = &w->run[w->runs++];
    r->h = w->cfg.h;
    r->d_model = w->cfg.d_model;
    r->layers = w->cfg.layers;
    r->task = w->cfg.task;
    r->seed = (unsigned long long)w->cfg.seed;
    r->number = ++t->runs_started;
    r->curve.n = 0;
    r->curve.gap = 0.0f;
    replay_clear(t->replay, r->number); /* the replay is the current run's */
    w->moments = 0;
    t->next_moment = 0;
    t->acc_step = -1;
}

static int stop_now(app_trainer *t, job *handle) {
    return job_cancelled(handle) || atomic_load(&t->pause);
}

/* Slow motion and the class pace: waits (in slices of at most 10 ms, so a pause or
   a new run is not kept waiting) until the next step is due at per_s steps a second. */
static void wait_turn(app_trainer *t, job *handle, double per_s) {
    const double due = t->last_step_ms + 1000.0 / per_s;
    for (double now = now_ms(); now < due && !stop_now(t, handle); now = now_ms()) {
        double ms = due - now < 10.0 ? due - now : 10.0;
        struct timespec ts = {0, (long)(ms * 1e6)};
        nanosleep(&ts, NULL);
    }
}

/* A burst of steps of about BURST_MS at full speed, or one step in slow motion or
   at the class pace; points join the curve on the dense schedule (train_loop.h).
   1 when the run has converged. */
static int burst(app_trainer *t, job *handle) {
    train_view *w = t->rec;
    const int rate = atomic_load(&t->rate);
    int converged = 0;
    if (rate != 0) {
        const double per_s = train_rate_at(rate, learn_steps_done(t->l));
        wait_turn(t, handle, per_s);
        if (stop_now(t, handle)) return 0;
        const double t0 = now_ms();
        train_point pt;
        if (watched_step(t, &pt)) converged = take_point(t, &pt);
        if (scheduled_moment(t, handle) != 0) return 0;
        t->last_step_ms = t0;
        w->step = learn_steps_done(t->l);
        /* the rate as it is: the last (up to) 8 steps over the time they took; the
           rate asked for until there are two */
        const long k = t->slow_n < 8 ? t->slow_n : 8;
        const double oldest = t->slow_n < 8 ? t->slow_ms[0] : t->slow_ms[t->slow_n % 8];
        t->slow_ms[t->slow_n % 8] = t0;
        t->slow_n++;
        w->steps_per_s = k > 0 && t0 > oldest ? (float)(k * 1000.0 / (t0 - oldest)) : (float)per_s;
        w->rate = rate;
        return converged;
    }
    double t0 = now_ms(), t1 = t0;
    int steps = 0;
    do {
        train_point pt;
        if (watched_step(t, &pt)) converged = take_point(t, &pt);
        if (scheduled_moment(t, handle) != 0) return 0;
        steps++;
        t1 = now_ms();
    } while (t1 - t0 < BURST_MS && !converged && !t->diverged && !train_loop_done(&t->loop) &&
             !stop_now(t, handle) && atomic_load(&t->rate) == 0); /* slow motion: at once */
    t->last_step_ms = t1;
    t->slow_n = 0; /* slow motion measures its rate afresh */
    w->step = learn_steps_done(t->l);
    w->steps_per_s = (float)(steps * 1000.0 / (t1 - t0 > 1e-3 ? t1 - t0 : 1e-3));
    w->rate = 0;
    return converged;
}

/* The job: (a new run,) bursts until the run stops by itself (converged, or at
   its budget), is paused or cancelled, then the bars. A single step: one step
   and its point, then the bars. */
static void run_steps(app_trainer *t, job *handle) {
    if (t->fresh) {
        t->fresh = 0;
        if (begin_run(t, t->start_cfg) != 0) {
            publish(t, handle, 0);
            return;
        }
        train_point first;
        train_loop_begin(&t->loop, t->l, t->start_stop, &first);
        t->loop.dense = 1;
        learn_diverge_begin(&t->dv, 0.0f); /* from the first step's loss, as --train */
        t->diverged = 0;
        t->rec->budget = t->start_stop;
        take_point(t, &first);
        if (scheduled_moment(t, handle) != 0) return; /* step 0, before training */
        t->last_step_ms = now_ms();
        publish(t, handle, !t->single);
    }
    if (t->single) { /* one step by hand: a point of its own, whatever the schedule */
        t->single = 0;
        const float loss = learn_step(t->l);
        if (!t->diverged && learn_diverge_feed(&t->dv, loss, &t->diverged_loss)) {
            t->diverged = 1;
            stopped(t, TRAIN_DIVERGED);
            t->rec->stop_loss = t->diverged_loss;
        }
        train_point pt;
        train_loop_point(&t->loop, &pt);
        pt.loss = NAN; /* one batch's loss is noise beside the curve's means */
        take_point(t, &pt);
        t->rec->step = learn_steps_done(t->l);
        t->rec->steps_per_s = 0.0f;
        if (prune(t, handle) != 0) return;
        if (replay_on_schedule(t->rec->step)) moment_here(t);
        publish(t, handle, 0);
        return;
    }
    t->last_prune_ms = now_ms();
    int converged = 0;
    while (!converged && !t->diverged && !train_loop_done(&t->loop) && !stop_now(t, handle)) {
        converged = burst(t, handle) && !t->start_exact;
        if (t->diverged) { /* paused, and says so: nothing after it claims more */
            stopped(t, TRAIN_DIVERGED);
            t->rec->stop_loss = t->diverged_loss;
        } else if (converged)
            stopped(t, TRAIN_CONVERGED);
        else if (train_loop_done(&t->loop))
            stopped(t, TRAIN_BUDGET);
        if (now_ms() - t->last_prune_ms > PRUNE_EVERY) {
            if (prune(t, handle) != 0) return;
            t->last_prune_ms = now_ms();
        }
        publish(t, handle,
                !converged && !t->diverged && !train_loop_done(&t->loop) && !stop_now(t, handle));
        if (!converged && !t->diverged && !train_loop_done(&t->loop) && !stop_now(t, handle))
            serve_bars(t, handle, 0); /* a moment asked for while the run goes on */
    }
    if (job_cancelled(handle)) return; /* a new start, or the end: no bars wanted */
    /* paused or done: the bars for these very weights */
    if ((!t->rec->pruning_valid || t->rec->pruning_step != learn_steps_done(t->l)) &&
        prune(t, handle) != 0)
        return;
    if (t->rec->stop != TRAIN_GOING) moment_here(t); /* where it stopped by itself */
    publish(t, handle, 0);
}

/* The steps, then the bars of moments asked for meanwhile. */
static void run_job(job *handle, void *ctx) {
    app_trainer *t = ctx;
    run_steps(t, handle);
    serve_bars(t, handle, 1);
}

app_trainer *trainer_create(jobs *runner) {
    app_trainer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->runner = runner;
    t->rec = calloc(1, sizeof *t->rec);
    t->moment = calloc(1, sizeof *t->moment);
    t->replay = replay_create();
    for (int i = 0; i < 3; i++) t->buf[i] = calloc(1, sizeof *t->buf[i]);
    const int locked = pthread_mutex_init(&t->mlock, NULL) == 0;
    if (!runner || !t->rec || !t->moment || !t->replay || !t->buf[0] || !t->buf[1] || !t->buf[2] ||
        !locked) {
        if (locked) pthread_mutex_destroy(&t->mlock);
        for (int i = 0; i < 3; i++) free(t->buf[i]);
        replay_destroy(t->replay);
        free(t->moment);
        free(t->rec);
        free(t);
        return NULL;
    }
    jobs_swap_init(&t->sw, t->buf[0], t->buf[1], t->buf[2]);
    t->want_bars = -1;
    t->acc_step = -1;
    return t;
}

void trainer_destroy(app_trainer *t) {
    if (!t) return;
    job_free(t->handle); /* cancelled: it stops after its step */
    learn_destroy(t->l);
    jobs_swap_destroy(&t->sw);
    for (int i = 0; i < 3; i++) {
        free(t->buf[i]->mem_);
        free(t->buf[i]);
    }
    replay_destroy(t->replay);
    if (t->moment) free(t->moment->mem_);
    free(t->moment);
    free(t->rec);
    pthread_mutex_destroy(&t->mlock);
    free(t);
}

/* Stops the job, if one runs, and waits: the learner is this thread's after. */
static void stop_job(app_trainer *t) {
    job_free(t->handle);
    t->handle = NULL;
    pthread_mutex_lock(&t->mlock); /* it returned, or never ran (cancelled first) */
    t->job_live = 0;
    pthread_mutex_unlock(&t->mlock);
}

/* Submits fn as the trainer's job (the previous one has ended: stop_job). */
static job *submit_job(app_trainer *t, job_fn fn) {
    pthread_mutex_lock(&t->mlock);
    t->job_live = 1;
    pthread_mutex_unlock(&t->mlock);
    job *j = jobs_submit(t->runner, fn, t);
    if (!j) {
        pthread_mutex_lock(&t->mlock);
        t->job_live = 0;
        pthread_mutex_unlock(&t->mlock);
    }
    return j;
}

static void submit(app_trainer *t) {
    atomic_store(&t->pause, 0);
    t->paused = 0;
    t->handle = submit_job(t, run_job);
    if (!t->handle) { /* no thread: the record says so */
        snprintf(t->rec->error, sizeof t->rec->error, "cannot train: out of resources");
        publish(t, NULL, 0);
    }
}

void trainer_start(app_trainer *t, const learn_config *cfg, long stop_at, int exact) {
    t->start_exact = exact && stop_at > 0;
    stop_job(t);
    t->start_cfg = *cfg;
    t->start_stop = stop_at;
    t->stretch = stop_at;
    t->fresh = 1;
    t->single = 0;
    submit(t);
    train_view *front = jobs_swap_front(&t->sw);
    front->running = t->handle != NULL; /* shown running at once: a key now sees it so */
    front->seq = ++t->seq;
}

void trainer_set_rate(app_trainer *t, int rate) {
    if (rate < 0 && rate != TRAIN_CLASS_PACE) rate = 0;
    atomic_store(&t->rate, rate);
    train_view *front = jobs_swap_front(&t->sw);
    front->rate = rate; /* the UI's own buffer: the title follows at once */
    front->seq = ++t->seq;
}

void trainer_step(app_trainer *t) {
    stop_job(t); /* a run or a pause under way ends after its step: the learner is ours */
    if (!t->l && !t->fresh) return; /* nothing to step */
    t->single = 1;
    submit(t);
    t->paused = 1; /* shown paused once the step is taken */
}

void trainer_pause(app_trainer *t, int paused) {
    train_view *front = jobs_swap_front(&t->sw);
    if (paused) {
        atomic_store(&t->pause, 1); /* the job measures the bars and ends */
        t->paused = 1;
        front->running = 0; /* the UI's own buffer: shown paused at once */
        front->seq = ++t->seq;
        return;
    }
    stop_job(t); /* a pause under way: its bars are not needed; the learner is ours */
    if (!t->l && !t->fresh) return; /* nothing to resume */
    if (t->fresh) {                 /* the job never started its run: start it again */
        submit(t);
        return;
    }
    /* on for another stretch: the stop rule must hold for another patience steps */
    const long done = learn_steps_done(t->l);
    t->loop.stop_at = t->stretch > 0 ? done + t->stretch : 0;
    t->loop.dense = 1;
    t->rec->budget = t->loop.stop_at;
    t->rec->stop = TRAIN_GOING;
    t->diverged = 0; /* the rule, its window kept, watches the steps taken on */
    train_plateau_restart(&t->plateau);
    submit(t);
    front->running = t->handle != NULL;
    front->seq = ++t->seq;
}

int trainer_snapshot(app_trainer *t, const train_view **v) {
    const int fresh = jobs_swap_take(&t->sw);
    train_view *front = jobs_swap_front(&t->sw);
    if (fresh) {
        front->seq = ++t->seq;
        if (t->paused) front->running = 0; /* filled before the job saw the pause */
    }
    *v = front;
    return fresh;
}

void trainer_adopt(app_trainer *t, learn_model *l, const train_point *curve, int points,
                   const train_pruning *measured, float steps_per_s) {
    stop_job(t);
    t->fresh = 0;
    train_view *w = t->rec;
    learn_destroy(t->l);
    t->l = l;
    w->error[0] = '\0';
    const learn_config *c = learn_get_config(l);
    if (c->h > TRAIN_MAX_HEADS || learn_task(c->task)->seq_len > TRAIN_MAX_T) {
        snprintf(w->error, sizeof w->error, "training takes at most %d heads", TRAIN_MAX_HEADS);
        learn_destroy(l);
        t->l = NULL;
        publish(t, NULL, 0);
        return;
    }
    record_run(t, l);
    replay_plan(t->replay, l, learn_steps_done(l));
    for (int i = 0; i < points; i++) curve_add(w, &curve[i]);
    t->stretch = learn_task(c->task)->default_steps;
    w->step = learn_steps_done(l);
    w->steps_per_s = steps_per_s;
    if (points) w->loss = curve[points - 1].loss, w->acc = curve[points - 1].acc;
    train_loop_begin(&t->loop, l, w->step, NULL);
    /* resumed later: against the untrained loss, ln(classes) (diverge.h) */
    learn_diverge_begin(&t->dv, logf((float)learn_task(c->task)->classes));
    t->diverged = 0;
    t->paused = 1;
    if (measured && measured->ablated_acc) { /* the pass --train already made */
        const size_t nh = (size_t)c->layers * (size_t)c->h;
        w->acc = measured->full;
        memcpy(w->ablated_acc, measured->ablated_acc, nh * sizeof(float));
        w->pruned = measured->pruned;
        w->pruned_acc = measured->pruned_acc;
        w->pruning_valid = 1;
        w->pruning_step = learn_steps_done(l);
    } else {
        prune(t, NULL);
    }
    publish(t, NULL, 0); /* no job runs: this thread is the writer */
}

/* Asks for the bars of the moment at step: the live job measures them before
   it ends (or between bursts); with none live, a job of its own does. */
static void want_bars(app_trainer *t, long step) {
    pthread_mutex_lock(&t->mlock);
    t->want_bars = step;
    const int live = t->job_live;
    pthread_mutex_unlock(&t->mlock);
    if (live) return;
    job_free(t->handle); /* it has ended, or is about to: nothing of it is lost */
    t->handle = submit_job(t, bars_job);
}

const train_view *trainer_moment(app_trainer *t, long step) {
    if (replay_copy(t->replay, step, t->moment) != 0) return NULL;
    if (!t->moment->pruning_valid) want_bars(t, step); /* measured on the worker */
    return t->moment;
}

void trainer_adopt_replay(app_trainer *t, train_replay *r) {
    if (!r) return;
    stop_job(t);
    replay_destroy(t->replay);
    t->replay = r;
    count_moments(t);
    publish(t, NULL, 0); /* no job runs: this thread is the writer */
}
