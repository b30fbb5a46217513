/* trainer.h: training in the background for the window. A worker thread runs
 * the learner (src/learn) while the window keeps answering; after every burst of
 * about 50 ms it publishes a snapshot (the held-out example's attention maps,
 * the step, the loss and held-out accuracy curves of this run and earlier runs,
 * and, every second and when paused, the accuracy with each head removed).
 * Taking a snapshot only copies under a lock: the UI never waits on training.
 * No SDL: POSIX threads. */
#ifndef MHAVIZ_TRAINER_H
#define MHAVIZ_TRAINER_H

#include "learn.h"

#define TRAIN_MAX_RUNS 8      /* curves kept on the plot (the oldest go) */
#define TRAIN_MAX_POINTS 1024 /* points a curve keeps (thinned by two when full) */
#define TRAIN_MAX_T 32        /* tokens per example of any task */
#define TRAIN_MAX_HEADS 64    /* heads the window trains (h <= 64) */

typedef struct {
    int h, d_model, layers;
    learn_task_id task;
    int points;
    float step[TRAIN_MAX_POINTS], loss[TRAIN_MAX_POINTS], acc[TRAIN_MAX_POINTS];
} train_run;

/* What the window draws, copied out by trainer_snapshot. */
typedef struct {
    int active;        /* a learner exists (training started at least once) */
    int running;       /* steps are being taken */
    unsigned long seq; /* changes with every publication */
    learn_config cfg;  /* the current run's, resolved */
    int T;             /* tokens of the example */
    long step;
    float loss, acc; /* last training loss, held-out accuracy (0..1) */
    float steps_per_s;
    int tokens[TRAIN_MAX_T];
    float attn[LEARN_MAX_LAYERS * TRAIN_MAX_HEADS * TRAIN_MAX_T * TRAIN_MAX_T]; /* (L,h,T,T) */
    int runs;
    train_run run[TRAIN_MAX_RUNS]; /* the last is the current run */
    int pruning_valid;             /* the two below are for the current weights */
    long pruning_step;
    float ablated_acc[LEARN_MAX_LAYERS * TRAIN_MAX_HEADS]; /* (layers, h) */
    int pruned;                                            /* heads costing < 1 point */
    float pruned_acc; /* accuracy with all of those removed at once */
    char error[160];  /* why the last start failed, or "" */
} train_view;

typedef struct app_trainer app_trainer;

/* Starts the worker (idle until trainer_start). NULL when out of resources. */
app_trainer *trainer_create(void);
/* Stops the worker and frees everything; NULL is fine. */
void trainer_destroy(app_trainer *t);

/* A new run with cfg (its curve joins the plot; earlier runs' curves stay),
 * running; it pauses by itself after stop_at steps (0: never). The learner is
 * made on the worker, so this returns at once. */
void trainer_start(app_trainer *t, const learn_config *cfg, long stop_at);
/* Pauses (1) or resumes (0) the current run. */
void trainer_pause(app_trainer *t, int paused);

/* Copies the latest publication into v when it is newer than v->seq; returns 1
 * if it copied. */
int trainer_snapshot(app_trainer *t, train_view *v);

#endif
