/* train_view.h: what the trainer (src/app/jobs/trainer.c) publishes and training
 * mode (training.c) draws: plain data, one snapshot of a run in the background. */
#ifndef MHAVIZ_TRAIN_VIEW_H
#define MHAVIZ_TRAIN_VIEW_H

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

#endif
