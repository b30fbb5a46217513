/* train_loop.h: the one training loop, shared by --train (train_mode.c) and the
 * window's trainer (trainer.c): a step at a time, a point of the curve every
 * TRAIN_CURVE_EVERY steps (the mean training loss since the last point and the
 * held-out accuracy), and the one ablation pass (held-out accuracy with each
 * head removed). The callers only report and draw; the numbers are these. Also
 * the window's pacing: the curve a run keeps at any length (train_curve) and
 * the rule that stops a run once it has converged (train_plateau). */
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
    int dense;       /* 1: points at every step up to 50, every 5th up to 500, then every 25th */
} train_loop;

/* A loop over l that ends at stop_at (0: never). With first != NULL, the point
 * at the learner's current step: its held-out accuracy and loss. */
void train_loop_begin(train_loop *tl, learn_model *l, long stop_at, train_point *first);

/* One step. Returns 1 with *pt when the step closes a point of the curve (every
 * TRAIN_CURVE_EVERY steps, or on the dense schedule, and at stop_at), else 0. */
int train_loop_step(train_loop *tl, train_point *pt);

/* Closes a point at the current step whatever the schedule (a single step taken
 * by hand): the mean loss of the steps since the last point (NAN when none) and
 * the held-out accuracy. */
void train_loop_point(train_loop *tl, train_point *pt);

/* 1 if the dense schedule puts a point at step (a step count >= 1). */
int train_loop_dense_point(long step);

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

/* --- the curve a run keeps ------------------------------------------------------
 * At most TRAIN_CURVE_POINTS points however long the run: the first point (the
 * step before training) is never dropped and the newest is always the last.
 * The plot's step axis is logarithmic, u = ln(1 + step), so the curve is thinned
 * evenly in u: kept points (but the newest) are at least `gap` apart in u, and
 * where the run gave points closer than that, they are about gap apart. When the
 * buffer fills, gap doubles (from twice the span over the budget) and the kept
 * points are thinned to it again. */
#define TRAIN_CURVE_POINTS 1024

typedef struct {
    int n;     /* points kept */
    float gap; /* least spacing in ln(1 + step) between kept points; 0: all kept */
    float step[TRAIN_CURVE_POINTS], loss[TRAIN_CURVE_POINTS], acc[TRAIN_CURVE_POINTS];
} train_curve;

/* ln(1 + step): where step is on the plot's axis. */
double train_curve_u(double step);

/* Adds pt (its step after the last one's) to c, thinning c when full. */
void train_curve_add(train_curve *c, const train_point *pt);

/* --- the stop rule ----------------------------------------------------------------
 * A run has converged when its held-out accuracy has stayed in a band
 * TRAIN_STOP_TOL wide at its best (the band's top within TRAIN_STOP_TOL of the
 * best so far) for the last TRAIN_STOP_PATIENCE steps, and that best is at least
 * TRAIN_STOP_LEARNED above the accuracy before training (a flat start, before
 * anything is learned, is not convergence). The window also stops a run at the
 * task's step budget (learn_task_info.default_steps). */
#define TRAIN_STOP_PATIENCE 200 /* steps */
#define TRAIN_STOP_TOL 0.005f   /* half a point */
#define TRAIN_STOP_LEARNED 0.10f

typedef struct {
    int started;
    float base;   /* accuracy at the first point */
    float best;   /* best accuracy so far */
    long from;    /* the step the current streak began; -1: none */
    float lo, hi; /* the streak's lowest and highest accuracy */
} train_plateau;

/* Forgets everything: the next point is the base. */
void train_plateau_begin(train_plateau *p);
/* Keeps base and best, and starts the streak again at the next point (a run
 * resumed after it stopped must hold its best for another patience steps). */
void train_plateau_restart(train_plateau *p);
/* Takes the held-out accuracy at step; 1 when the run has converged. */
int train_plateau_add(train_plateau *p, long step, float acc);

#endif
