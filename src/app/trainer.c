/* trainer.c: the worker thread behind trainer.h. It owns the learner; the
 * window only sees what was published under the lock. Starting a new run
 * replaces the learner on the worker (creating one is small work), pausing
 * stops the steps and brings the pruning bars up to date. */
#define _POSIX_C_SOURCE 200809L
#include "trainer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BURST_MS 50.0    /* steps between publications */
#define CURVE_EVERY 25   /* steps between the curve's points (a held-out evaluation each) */
#define PRUNE_EVERY 1000 /* ms of training between pruning evaluations */

struct app_trainer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int quit, paused, start_pending;
    learn_config pending;
    long pending_stop, stop_at; /* pause after this many steps; 0 never */
    train_view pub;             /* published, under lock */
    /* the worker's own */
    learn_model *l;
    train_view work;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Appends a point to the current run's curve, halving it when full. */
static void curve_add(train_view *w, float step, float loss, float acc) {
    train_run *r = &w->run[w->runs - 1];
    if (r->points == TRAIN_MAX_POINTS) {
        for (int i = 0; i < TRAIN_MAX_POINTS / 2; i++) {
            r->step[i] = r->step[2 * i + 1];
            r->loss[i] = r->loss[2 * i + 1];
            r->acc[i] = r->acc[2 * i + 1];
        }
        r->points = TRAIN_MAX_POINTS / 2;
    }
    r->step[r->points] = step;
    r->loss[r->points] = loss;
    r->acc[r->points] = acc;
    r->points++;
}

/* Held-out accuracy with each head removed, and with every head that costs less
   than a point removed at once. */
static void prune(train_view *w, learn_model *l) {
    const int layers = w->cfg.layers, h = w->cfg.h;
    unsigned char ablate[LEARN_MAX_LAYERS * TRAIN_MAX_HEADS];
    float full, loss, acc;
    learn_eval(l, NULL, &full, &loss);
    w->acc = full; /* the bars are compared with these very weights */
    w->pruned = 0;
    unsigned char all[LEARN_MAX_LAYERS * TRAIN_MAX_HEADS] = {0};
    for (int i = 0; i < layers * h; i++) {
        memset(ablate, 0, sizeof ablate);
        ablate[i] = 1;
        learn_eval(l, ablate, &acc, &loss);
        w->ablated_acc[i] = acc;
        if (full - acc < 0.01f) all[i] = 1, w->pruned++;
    }
    learn_eval(l, all, &w->pruned_acc, &loss);
    w->pruning_valid = 1;
    w->pruning_step = learn_steps_done(l);
}

static void publish(app_trainer *t) {
    pthread_mutex_lock(&t->lock);
    t->work.seq = t->pub.seq + 1;
    t->work.running = !t->paused && t->l != NULL; /* t->l is this thread's own */
    t->pub = t->work;
    pthread_mutex_unlock(&t->lock);
}

/* Makes the learner for cfg; a new curve joins the plot. */
static void begin_run(app_trainer *t, learn_config cfg) {
    train_view *w = &t->work;
    learn_destroy(t->l);
    t->l = NULL;
    learn_config_resolve(&cfg);
    w->error[0] = '\0';
    if (cfg.h > TRAIN_MAX_HEADS) {
        snprintf(w->error, sizeof w->error, "training takes at most %d heads", TRAIN_MAX_HEADS);
        return;
    }
    char err[256];
    t->l = learn_create(&cfg, err, sizeof err);
    if (!t->l) {
        snprintf(w->error, sizeof w->error, "%.150s", err);
        return;
    }
    const learn_task_info *info = learn_task(cfg.task);
    if (info->seq_len > TRAIN_MAX_T) { /* cannot happen with the tasks there are */
        snprintf(w->error, sizeof w->error, "task %s is too long to draw", info->name);
        learn_destroy(t->l);
        t->l = NULL;
        return;
    }
    w->active = 1;
    w->cfg = *learn_get_config(t->l);
    w->T = info->seq_len;
    w->step = 0;
    w->loss = w->acc = 0.0f;
    w->pruning_valid = 0;
    const int *tok, *tgt;
    learn_example(t->l, &tok, &tgt);
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
    float loss;
    learn_eval(t->l, NULL, &w->acc, &loss);
    w->loss = loss;
    curve_add(w, 0.0f, loss, w->acc);
    learn_snapshot(t->l, w->attn);
}

static void *worker(void *arg) {
    app_trainer *t = arg;
    double last_prune = 0.0;
    pthread_mutex_lock(&t->lock);
    while (!t->quit) {
        if (t->start_pending) {
            learn_config cfg = t->pending;
            t->start_pending = 0;
            t->paused = 0;
            t->stop_at = t->pending_stop;
            pthread_mutex_unlock(&t->lock);
            begin_run(t, cfg);
            last_prune = now_ms();
            publish(t);
            pthread_mutex_lock(&t->lock);
            continue;
        }
        if (!t->l || t->paused) {
            if (t->l && t->paused &&
                (!t->work.pruning_valid || t->work.pruning_step != learn_steps_done(t->l))) {
                pthread_mutex_unlock(&t->lock);
                prune(&t->work, t->l); /* paused: the bars for these very weights */
                publish(t);
                pthread_mutex_lock(&t->lock);
                continue;
            }
            pthread_cond_wait(&t->wake, &t->lock);
            continue;
        }
        pthread_mutex_unlock(&t->lock);
        /* a burst of steps, then one publication */
        train_view *w = &t->work;
        double t0 = now_ms(), t1 = t0;
        double sum = 0.0;
        int steps = 0, since = 0;
        float loss_eval;
        do { /* a point of the curve every CURVE_EVERY steps: mean loss, held-out accuracy */
            sum += learn_step(t->l);
            steps++, since++;
            long done = learn_steps_done(t->l);
            if (done % CURVE_EVERY == 0 || (t->stop_at && done >= t->stop_at)) {
                w->loss = (float)(sum / since);
                learn_eval(t->l, NULL, &w->acc, &loss_eval);
                curve_add(w, (float)done, w->loss, w->acc);
                sum = 0.0, since = 0;
            }
            t1 = now_ms();
        } while (t1 - t0 < BURST_MS && !(t->stop_at && learn_steps_done(t->l) >= t->stop_at));
        w->step = learn_steps_done(t->l);
        w->steps_per_s = (float)(steps * 1000.0 / (t1 - t0 > 1e-3 ? t1 - t0 : 1e-3));
        learn_snapshot(t->l, w->attn);
        if (t->stop_at && w->step >= t->stop_at) {
            pthread_mutex_lock(&t->lock);
            t->paused = 1; /* the run asked for is done */
            pthread_mutex_unlock(&t->lock);
        }
        if (now_ms() - last_prune > PRUNE_EVERY) {
            prune(w, t->l);
            last_prune = now_ms();
        }
        publish(t);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

app_trainer *trainer_create(void) {
    app_trainer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    if (pthread_create(&t->thread, NULL, worker, t) != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->wake);
        free(t);
        return NULL;
    }
    return t;
}

void trainer_destroy(app_trainer *t) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->quit = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    learn_destroy(t->l);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->wake);
    free(t);
}

void trainer_start(app_trainer *t, const learn_config *cfg, long stop_at) {
    pthread_mutex_lock(&t->lock);
    t->pending = *cfg;
    t->pending_stop = stop_at;
    t->start_pending = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
}

void trainer_pause(app_trainer *t, int paused) {
    pthread_mutex_lock(&t->lock);
    t->paused = paused;
    t->pub.running = !paused && t->pub.active; /* the worker's next publication agrees */
    t->pub.seq++;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
}

int trainer_snapshot(app_trainer *t, train_view *v) {
    pthread_mutex_lock(&t->lock);
    int newer = t->pub.seq != v->seq;
    if (newer) *v = t->pub;
    pthread_mutex_unlock(&t->lock);
    return newer;
}
