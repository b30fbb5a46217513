/* sweeper.c: the window's sweep of h behind sweeper.h. The job owns the learner of
 * the run under way; the board (sweep_view.h) is shared under one lock, and
 * copied whole by the UI (it is small: the views of the runs are pointers). A
 * run's view is filled by the job before the run is marked done and never
 * touched by it again, so the UI reads it without the lock. Each run is the
 * learner of --train: learn_create, its steps (learn_step, as --sweep h takes
 * them) with their losses fed to the divergence rule, then train_ablate's pass
 * (the final held-out accuracy, as --train's, and the bars) and learn_eval's loss. */
#define _POSIX_C_SOURCE 200809L
#include "sweeper.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diverge.h"
#include "train_loop.h"

#define NEWS_MS 100.0 /* between publications of the step under way */

struct app_sweeper {
    jobs *runner;
    job *handle;
    pthread_mutex_t lock;
    sweep_board board;                    /* under lock */
    unsigned long version, seen;          /* board changes; the UI's last copy (under lock) */
    unsigned long starts;                 /* sweeps started: each run's view has its own seq */
    train_view *view[SWEEP_WIN_MAX_RUNS]; /* the runs' heads: the job's until a run is done */
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* The held-out example of l as its heads saw it, its bars and its numbers, into
   v (a run of the training view's kind, paused at its last step). 0, or -1 out of
   memory (v keeps no tensors then). */
static int fill_view(train_view *v, unsigned long seq, learn_model *l, float acc, float loss,
                     const float *ablated, int pruned, float pruned_acc) {
    const learn_config *c = learn_get_config(l);
    const learn_task_info *info = learn_task(c->task);
    v->active = 1;
    v->seq = seq;
    v->cfg = *c;
    v->T = info->seq_len;
    v->step = learn_steps_done(l);
    v->loss = loss;
    v->acc = acc;
    v->stop = TRAIN_BUDGET;
    v->stop_step = v->step;
    v->stop_acc = acc;
    v->budget = v->step;
    const int *tok, *tgt;
    learn_example(l, &tok, &tgt);
    memcpy(v->tokens, tok, sizeof(int) * (size_t)v->T);
    const size_t nh = (size_t)c->layers * (size_t)c->h;
    memcpy(v->ablated_acc, ablated, nh * sizeof(float));
    v->pruned = pruned;
    v->pruned_acc = pruned_acc;
    v->pruning_valid = 1;
    v->pruning_step = v->step;
    const size_t T = (size_t)v->T, d = (size_t)c->d_model;
    const size_t td = T * d, htt = (size_t)c->h * T * T, per = 6 * td + 2 * htt + d * d;
    float *p = malloc(per * (size_t)c->layers * sizeof *p);
    if (!p) return -1;
    v->mem_ = p;
    v->mem_cap = per * (size_t)c->layers;
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    learn_example_tensors(l, lt, NULL);
#define TAKE(field, src, count)                                                                    \
    (memcpy(p, (src), (count) * sizeof(float)), o->field = p, p += (count))
    for (int i = 0; i < c->layers; i++) {
        train_layer *o = &v->layer[i];
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
    return 0;
}

static void touch(app_sweeper *w) { /* under lock: the board changed */
    w->version++;
}

/* One run, k: 0, or -1 when the job was cancelled (the run is dropped). */
static int one_run(app_sweeper *w, job *handle, int k) {
    pthread_mutex_lock(&w->lock);
    learn_config c = w->board.base;
    c.h = w->board.run[k].h;
    c.seed = w->board.run[k].seed;
    const long steps = w->board.steps;
    w->board.current = k;
    w->board.current_step = 0;
    touch(w);
    pthread_mutex_unlock(&w->lock);
    job_news(handle);
    char err[160] = "";
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) {
        pthread_mutex_lock(&w->lock);
        snprintf(w->board.error, sizeof w->board.error, "h = %d: %s", c.h, err);
        w->board.run[k].done = 1;
        w->board.done++;
        touch(w);
        pthread_mutex_unlock(&w->lock);
        return 0;
    }
    learn_diverge dv;
    learn_diverge_begin(&dv, 0.0f); /* from the first step's loss, as --train */
    int diverged = 0;
    float why = 0.0f;
    double last = now_ms();
    for (long s = 1; s <= steps; s++) {
        if (learn_diverge_feed(&dv, learn_step(l), &why)) {
            diverged = 1;
            break;
        }
        if (job_cancelled(handle)) {
            learn_destroy(l);
            return -1;
        }
        const double now = now_ms();
        if (now - last > NEWS_MS) {
            last = now;
            pthread_mutex_lock(&w->lock);
            w->board.current_step = s;
            touch(w);
            pthread_mutex_unlock(&w->lock);
            job_news(handle);
        }
    }
    /* the final numbers, as --train's: the ablation pass's full accuracy, the loss */
    float acc = 0.0f, loss = 0.0f, pruned_acc = 0.0f;
    float ablated[LEARN_MAX_LAYERS * TRAIN_MAX_HEADS];
    int pruned = 0;
    train_ablate(l, &acc, ablated, &pruned, &pruned_acc, NULL, NULL);
    learn_eval(l, NULL, NULL, &loss);
    train_view *v = calloc(1, sizeof *v);
    /* a seq of its own, far from the trainer's (which counts its snapshots from 1): the
       view's picture cache tells the runs apart */
    const unsigned long seq = (1UL << 30) + w->starts * SWEEP_WIN_MAX_RUNS + (unsigned long)k;
    if (v && fill_view(v, seq, l, acc, loss, ablated, pruned, pruned_acc) != 0) {
        free(v);
        v = NULL;
    }
    if (v && diverged) {
        v->stop = TRAIN_DIVERGED;
        v->stop_loss = why;
    }
    const long done_steps = learn_steps_done(l);
    learn_destroy(l);
    pthread_mutex_lock(&w->lock);
    w->view[k] = v;
    sweep_result *r = &w->board.run[k];
    r->acc = acc;
    r->loss = loss;
    r->diverged = diverged;
    r->diverged_step = diverged ? done_steps : 0;
    r->diverged_loss = why;
    r->heads = v;
    r->done = 1;
    w->board.done++;
    w->board.current_step = done_steps;
    touch(w);
    pthread_mutex_unlock(&w->lock);
    job_news(handle);
    return 0;
}

static void run_job(job *handle, void *ctx) {
    app_sweeper *w = ctx;
    pthread_mutex_lock(&w->lock);
    const int count = w->board.count;
    pthread_mutex_unlock(&w->lock);
    for (int k = 0; k < count; k++)
        if (one_run(w, handle, k) != 0) break;
    pthread_mutex_lock(&w->lock);
    w->board.running = 0;
    w->board.current = -1;
    touch(w);
    pthread_mutex_unlock(&w->lock);
    job_news(handle);
}

app_sweeper *sweeper_create(jobs *runner) {
    if (!runner) return NULL;
    app_sweeper *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->runner = runner;
    pthread_mutex_init(&w->lock, NULL);
    w->board.current = -1;
    return w;
}

static void drop_views(app_sweeper *w) {
    for (int k = 0; k < SWEEP_WIN_MAX_RUNS; k++) {
        if (w->view[k]) free(w->view[k]->mem_);
        free(w->view[k]);
        w->view[k] = NULL;
    }
}

void sweeper_stop(app_sweeper *w) {
    if (!w) return;
    job_free(w->handle); /* cancelled: it ends after its step */
    w->handle = NULL;
    pthread_mutex_lock(&w->lock);
    w->board.running = 0;
    w->board.current = -1;
    w->version++;
    pthread_mutex_unlock(&w->lock);
}

void sweeper_destroy(app_sweeper *w) {
    if (!w) return;
    sweeper_stop(w);
    drop_views(w);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void sweeper_start(app_sweeper *w, const sweep_board *plan) {
    sweeper_stop(w); /* the job is gone: the views are this thread's */
    drop_views(w);
    w->starts++;
    pthread_mutex_lock(&w->lock);
    w->board = *plan;
    w->board.running = 1;
    w->board.done = 0;
    w->board.current = -1;
    w->board.current_step = 0;
    w->board.error[0] = '\0';
    for (int k = 0; k < w->board.count; k++) {
        sweep_result *r = &w->board.run[k];
        r->done = r->diverged = 0;
        r->acc = r->loss = 0.0f;
        r->heads = NULL;
    }
    w->version++;
    pthread_mutex_unlock(&w->lock);
    w->handle = jobs_submit(w->runner, run_job, w);
    if (!w->handle) {
        pthread_mutex_lock(&w->lock);
        w->board.running = 0;
        snprintf(w->board.error, sizeof w->board.error, "cannot sweep: out of resources");
        w->version++;
        pthread_mutex_unlock(&w->lock);
    }
}

int sweeper_snapshot(app_sweeper *w, sweep_board *out) {
    pthread_mutex_lock(&w->lock);
    const int fresh = w->version != w->seen;
    if (fresh) {
        *out = w->board;
        w->seen = w->version;
    }
    pthread_mutex_unlock(&w->lock);
    return fresh;
}
