/* train_loop.h: the one training loop, shared by --train (train_mode.c) and the
 * window's trainer (trainer.c): a step at a time, a point of the curve every
 * TRAIN_CURVE_EVERY steps (the mean training loss since the last point and the
 * held-out accuracy), and the one ablation pass (held-out accuracy with each
 * head removed). The callers only report and draw; the numbers are these. */
#ifndef MHAVIZ_TRAIN_LOOP_H
#define MHAVIZ_TRAIN_LOOP_H

#include "learn.h"

#define TRAIN_CURVE_EVERY 25 /* steps between the curve's points */

typedef struct {
    long step;
    float loss; /* mean training loss over the steps since the previous point */
    float acc;  /* held-out accuracy (0..1) */
} train_point;

typedef struct {
    learn_model *l; /* not owned */
    long stop_at;   /* the last step; 0: never */
    double loss_sum;
    int since;       /* steps since the last point */
    float last_loss; /* the last step's training loss (for diverge.h) */
} train_loop;

/* A loop over l that ends at stop_at (0: never). With first != NULL, the point
 * at the learner's current step: its held-out accuracy and loss. */
void train_loop_begin(train_loop *tl, learn_model *l, long stop_at, train_point *first);

/* One step. Returns 1 with *pt when the step closes a point of the curve (every
 * TRAIN_CURVE_EVERY steps, and at stop_at), else 0. */
int train_loop_step(train_loop *tl, train_point *pt);

/* 1 once stop_at steps are done. */
int train_loop_done(const train_loop *tl);

/* What one ablation pass found (train_ablate's outputs), to hand on instead of
 * measuring again: ablated_acc is (layers, h). */
typedef struct {
    float full;               /* held-out accuracy with every head */
    const float *ablated_acc; /* (layers, h) with each head removed alone */
    int pruned;               /* heads that cost less than a point */
    float pruned_acc;         /* accuracy with all of those removed at once */
} train_pruning;

/* The ablation pass over the learner's current weights: *full the held-out
 * accuracy, ablated_acc (layers, h) the accuracy with each head removed alone,
 * *pruned the heads that cost less than a point and *pruned_acc the accuracy
 * with all of those removed at once (both may be NULL). stop(ud), when given,
 * is asked between heads: -1 when it said stop (the outputs are then partial),
 * else 0. */
int train_ablate(learn_model *l, float *full, float *ablated_acc, int *pruned, float *pruned_acc,
                 int (*stop)(void *ud), void *ud);

#endif
