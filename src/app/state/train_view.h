/* train_view.h: what the trainer (src/app/jobs/trainer.c) publishes and training
 * mode (training.c) draws: plain data, one snapshot of a run in the background. */
#ifndef MHAVIZ_TRAIN_VIEW_H
#define MHAVIZ_TRAIN_VIEW_H

#include <stddef.h>

#include "learn.h"
#include "train_loop.h"

#define TRAIN_MAX_RUNS 32  /* runs kept for the session (past that the oldest go) */
#define TRAIN_SLOW_RATE 10 /* slow motion: steps a second, the heads redrawn at each */
/* The class pace, learn live's first speed: TRAIN_PACE_BASE + step / TRAIN_PACE_RAMP
   steps a second, each step published, so a class sees the heads form: pair (h = 2, seed
   1) is at 35 % after 3 s, at 99 % (step 70) after 5 s and stops (step 310) after
   about 14 s; the longest budget (3000 steps) takes about 29 s where the machine keeps
   up, where full speed is over in a second. As a
   rate it is the code TRAIN_CLASS_PACE (0 is full speed, > 0 slow motion's steps a
   second, -1 "unchanged" in a command). */
#define TRAIN_CLASS_PACE (-2)
#define TRAIN_PACE_BASE 10.0
#define TRAIN_PACE_RAMP 8.0
#define TRAIN_MAX_T 32      /* tokens per example of any task */
#define TRAIN_MAX_HEADS 64  /* heads the window trains (h <= 64) */
#define TRAIN_REPLAY_MAX 64 /* moments of a run kept for the replay (replay.h) */

/* Steps a second that rate asks for at step (0: full speed, as fast as it goes). */
static inline double train_rate_at(int rate, long step) {
    if (rate == TRAIN_CLASS_PACE) return TRAIN_PACE_BASE + (double)step / TRAIN_PACE_RAMP;
    return rate > 0 ? (double)rate : 0.0;
}

typedef struct {
    int h, d_model, layers;
    learn_task_id task;
    unsigned long long seed;
    int number;        /* 1, 2, ... in the order the session started them */
    train_curve curve; /* the whole run, thinned (train_loop.h) */
} train_run;

/* Why a run is not stepping on its own. */
typedef enum {
    TRAIN_GOING = 0, /* running, or paused by hand */
    TRAIN_CONVERGED, /* the stop rule (train_loop.h's train_plateau) */
    TRAIN_BUDGET,    /* the task's step budget */
    TRAIN_DIVERGED,  /* the loss diverged (src/learn/diverge.h): paused, stop_loss says how */
} train_stop_why;

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
    int rate;               /* the speed asked for: 0 full, > 0 slow motion, TRAIN_CLASS_PACE */
    train_stop_why stop;    /* why the run stopped by itself (running == 0) */
    long stop_step;         /* the step it stopped at */
    float stop_acc;         /* its held-out accuracy then */
    float stop_lo, stop_hi; /* converged: the band it held for the last patience steps */
    long budget;            /* the step this stretch of the run stops at, at the latest */
    int moments;            /* moments of the current run kept for the replay (replay.h) */
    long moment_step[TRAIN_REPLAY_MAX]; /* their steps, rising */
    float stop_loss;                    /* diverged: the loss that said so (diverge.h's value) */
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

#endif
