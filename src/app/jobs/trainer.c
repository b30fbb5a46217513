/* trainer.c: training in the background behind trainer.h, as a job of the app's
 * runner (src/jobs). While the job runs it owns the learner and the run's
 * record (curves, bars); the UI thread touches them only when no job runs (a
 * start or a resume first stops the job and waits). Publications go through a
 * jobs_swap: the job fills its back buffer with what is in use and swaps it
 * over; the UI swaps the newest to its front. The steps and the ablation pass
 * are train_loop.c's, the same as --train's. */
#define _POSIX_C_SOURCE 200809L
#include "trainer.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    int fresh;
    train_view *rec; /* the run's record: what is published (its layers unused) */
    /* either side's */
    atomic_int pause; /* the UI asks the job to stop stepping and measure the bars */
    jobs_swap sw;
    train_view *buf[3];
    /* the UI thread's */
    unsigned long seq;
    int paused;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Appends a point to the current run's curve, halving it when full. */
static void curve_add(train_view *w, const train_point *pt) {
    train_run *r = &w->run[w->runs - 1];
    if (r->points == TRAIN_MAX_POINTS) {
        for (int i = 0; i < TRAIN_MAX_POINTS / 2; i++) {
            r->step[i] = r->step[2 * i + 1];
            r->loss[i] = r->loss[2 * i + 1];
            r->acc[i] = r->acc[2 * i + 1];
        }
        r->points = TRAIN_MAX_POINTS / 2;
    }
    r->step[r->points] = (float)pt->step;
    r->loss[r->points] = pt->loss;
    r->acc[r->points] = pt->acc;
    r->points++;
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
    return 0;
}

/* Copies the held-out example's tensors of every layer of l into b's own block
   (grown to the run's shape when it is too small): the UI reads them after the
   swap while the learner trains on. Without memory the layers are NULL. */
static void copy_tensors(train_view *b, learn_model *l) {
    memset(b->layer, 0, sizeof b->layer);
    if (!l) return;
    const learn_config *c = learn_get_config(l);
    const size_t T = (size_t)learn_task(c->task)->seq_len, d = (size_t)c->d_model;
    const size_t td = T * d, htt = (size_t)c->h * T * T, per = 6 * td + 2 * htt + d * d;
    const size_t want = per * (size_t)c->layers;
    if (want > b->mem_cap) {
        float *m = realloc(b->mem_, want * sizeof *m);
        if (!m) {
            snprintf(b->error, sizeof b->error, "out of memory for the trained tensors");
            return;
        }
        b->mem_ = m;
        b->mem_cap = want;
    }
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    learn_example_tensors(l, lt, NULL);
    float *p = b->mem_;
#define TAKE(field, src, count)                                                                    \
    (memcpy(p, (src), (count) * sizeof(float)), o->field = p, p += (count))
    for (int i = 0; i < c->layers; i++) {
        train_layer *o = &b->layer[i];
        TAKE(x, lt[i].ln1, td);
        TAKE(q, lt[i].q, td);
        TAKE(k, lt[i].k, td);
        TAKE(v, lt[i].v, td);
        TAKE(scores, lt[i].scores, htt);
        TAKE(attn, lt[i].attn, htt);
        TAKE(concat, lt[i].concat, td);
        TAKE(w_o, lt[i].w_o, d * d);
        TAKE(out, lt[i].out, td);
    }
#undef TAKE
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
        o->points = r->points;
        memcpy(o->step, r->step, sizeof(float) * (size_t)r->points);
        memcpy(o->loss, r->loss, sizeof(float) * (size_t)r->points);
        memcpy(o->acc, r->acc, sizeof(float) * (size_t)r->points);
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
    fill(jobs_swap_back(&t->sw), t->rec, t->l, running);
    jobs_swap_publish(&t->sw);
    if (handle) job_news(handle);
}

static void record_run(train_view *w, learn_model *l);

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
    record_run(w, t->l);
    return 0;
}

/* A new run of l in the record: its shape, its example, an empty curve. */
static void record_run(train_view *w, learn_model *l) {
    w->active = 1;
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
    r->points = 0;
}

/* A burst of steps of about BURST_MS; a point joins the curve every
   TRAIN_CURVE_EVERY steps. */
static void burst(app_trainer *t, job *handle) {
    train_view *w = t->rec;
    double t0 = now_ms(), t1 = t0;
    int steps = 0;
    do {
        train_point pt;
        if (train_loop_step(&t->loop, &pt)) {
            w->loss = pt.loss;
            w->acc = pt.acc;
            curve_add(w, &pt);
        }
        steps++;
        t1 = now_ms();
    } while (t1 - t0 < BURST_MS && !train_loop_done(&t->loop) && !job_cancelled(handle) &&
             !atomic_load(&t->pause));
    w->step = learn_steps_done(t->l);
    w->steps_per_s = (float)(steps * 1000.0 / (t1 - t0 > 1e-3 ? t1 - t0 : 1e-3));
}

/* The job: (a new run,) bursts until done, paused or cancelled, then the bars. */
static void run_job(job *handle, void *ctx) {
    app_trainer *t = ctx;
    if (t->fresh) {
        t->fresh = 0;
        if (begin_run(t, t->start_cfg) != 0) {
            publish(t, handle, 0);
            return;
        }
        train_point first;
        train_loop_begin(&t->loop, t->l, t->start_stop, &first);
        t->rec->loss = first.loss, t->rec->acc = first.acc;
        curve_add(t->rec, &first);
        publish(t, handle, 1);
    }
    double last_prune = now_ms();
    while (!train_loop_done(&t->loop) && !job_cancelled(handle) && !atomic_load(&t->pause)) {
        burst(t, handle);
        if (now_ms() - last_prune > PRUNE_EVERY) {
            if (prune(t, handle) != 0) return;
            last_prune = now_ms();
        }
        publish(t, handle, !train_loop_done(&t->loop) && !atomic_load(&t->pause));
    }
    if (job_cancelled(handle)) return; /* a new start, or the end: no bars wanted */
    /* paused or done: the bars for these very weights */
    if ((!t->rec->pruning_valid || t->rec->pruning_step != learn_steps_done(t->l)) &&
        prune(t, handle) != 0)
        return;
    publish(t, handle, 0);
}

app_trainer *trainer_create(jobs *runner) {
    app_trainer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->runner = runner;
    t->rec = calloc(1, sizeof *t->rec);
    for (int i = 0; i < 3; i++) t->buf[i] = calloc(1, sizeof *t->buf[i]);
    if (!runner || !t->rec || !t->buf[0] || !t->buf[1] || !t->buf[2]) {
        for (int i = 0; i < 3; i++) free(t->buf[i]);
        free(t->rec);
        free(t);
        return NULL;
    }
    jobs_swap_init(&t->sw, t->buf[0], t->buf[1], t->buf[2]);
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
    free(t->rec);
    free(t);
}

/* Stops the job, if one runs, and waits: the learner is this thread's after. */
static void stop_job(app_trainer *t) {
    job_free(t->handle);
    t->handle = NULL;
}

static void submit(app_trainer *t) {
    atomic_store(&t->pause, 0);
    t->paused = 0;
    t->handle = jobs_submit(t->runner, run_job, t);
    if (!t->handle) { /* no thread: the record says so */
        snprintf(t->rec->error, sizeof t->rec->error, "cannot train: out of resources");
        publish(t, NULL, 0);
    }
}

void trainer_start(app_trainer *t, const learn_config *cfg, long stop_at) {
    stop_job(t);
    t->start_cfg = *cfg;
    t->start_stop = stop_at;
    t->fresh = 1;
    submit(t);
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
    t->loop.stop_at = 0; /* on without an end */
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
    record_run(w, l);
    for (int i = 0; i < points; i++) curve_add(w, &curve[i]);
    w->step = learn_steps_done(l);
    w->steps_per_s = steps_per_s;
    if (points) w->loss = curve[points - 1].loss, w->acc = curve[points - 1].acc;
    train_loop_begin(&t->loop, l, w->step, NULL);
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
