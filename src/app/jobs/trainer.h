/* trainer.h: training in the background for the window. A job of the app's
 * runner (src/jobs) runs the learner (src/learn) through train_loop.h while the
 * window keeps answering; after every burst of about 50 ms it publishes a
 * snapshot (the held-out example's tensors in every layer, the step, the loss and
 * held-out accuracy curves of this run and earlier runs, and, every second and
 * when paused, the accuracy with each head removed) and wakes the loop.
 * Taking a snapshot swaps two pointers under a lock: the UI never waits on
 * training and nothing large is copied (the job copies the example's tensors
 * into its own buffer before it swaps). No SDL. */
#ifndef MHAVIZ_TRAINER_H
#define MHAVIZ_TRAINER_H

#include "jobs.h"
#include "learn.h"
#include "train_loop.h"

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

/* One layer of the held-out example, as its heads saw it: pointers into the
   snapshot's own block, NULL when there is none. */
typedef struct {
    const float *x;      /* (T, d) the block's LayerNorm: the X the heads see */
    const float *q;      /* (T, d) X W^Q */
    const float *k;      /* (T, d) X W^K */
    const float *v;      /* (T, d) X W^V */
    const float *scores; /* (h, T, T) Q_i K_i^T / sqrt(d_k), -inf above the diagonal */
    const float *attn;   /* (h, T, T) row-wise softmax */
    const float *concat; /* (T, d) Concat(head_1 .. head_h) */
    const float *w_o;    /* (d, d) W^O */
    const float *out;    /* (T, d) Concat W^O */
} train_layer;

/* What the window draws: trainer_snapshot hands the newest over. */
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
    int runs;
    train_run run[TRAIN_MAX_RUNS]; /* the last is the current run */
    int pruning_valid;             /* the two below are for the current weights */
    long pruning_step;
    float ablated_acc[LEARN_MAX_LAYERS * TRAIN_MAX_HEADS]; /* (layers, h) */
    int pruned;                                            /* heads costing < 1 point */
    float pruned_acc; /* accuracy with all of those removed at once */
    char error[160];  /* why the last start failed, or "" */
    /* the held-out example's tensors, layers [0, cfg.layers) (all NULL before the
       first run, and when there was no memory for them) */
    train_layer layer[LEARN_MAX_LAYERS];
    float *mem_;    /* the block they point into, sized by the run's shape */
    size_t mem_cap; /* its floats */
} train_view;

typedef struct app_trainer app_trainer;

/* A trainer whose jobs run on runner (idle until trainer_start). NULL when out
 * of resources. */
app_trainer *trainer_create(jobs *runner);
/* Stops its job (after the step under way) and frees everything; NULL is fine.
 * The runner must still exist or its jobs must be done. */
void trainer_destroy(app_trainer *t);

/* A new run with cfg (its curve joins the plot; earlier runs' curves stay),
 * running; it pauses by itself after stop_at steps (0: never). The learner is
 * made on the worker, so this returns at once. */
void trainer_start(app_trainer *t, const learn_config *cfg, long stop_at);
/* Pauses (1) or resumes (0) the current run. */
void trainer_pause(app_trainer *t, int paused);

/* Points *v at the newest publication (the UI's until the next call; all zero
 * before the first) and returns 1 if it is newer than the last call's. */
int trainer_snapshot(app_trainer *t, const train_view **v);

/* Takes a learner trained elsewhere (--train's loop, with its curve of `points`
 * points) as the current run, paused, measures its bars and publishes it, on
 * the calling thread: the figure of --train --export is made from it. */
void trainer_adopt(app_trainer *t, learn_model *l, const train_point *curve, int points,
                   float steps_per_s);

#endif
