/* diverge.h: has a training run diverged? A pure check on the stream of step
 * losses, for --train (train_mode.c) and the window's trainer alike: no I/O, no
 * allocation, no learner. The rule and its factor are measured in the README
 * (Learn live): a loss that is not finite, or a mean over the last
 * LEARN_DIVERGE_WINDOW steps above LEARN_DIVERGE_FACTOR times the loss the run
 * started from. */
#ifndef MHAVIZ_DIVERGE_H
#define MHAVIZ_DIVERGE_H

#define LEARN_DIVERGE_FACTOR 4.0f /* the window's mean over the start, at most */
#define LEARN_DIVERGE_WINDOW 25   /* steps of the running mean (a curve point's) */

typedef struct {
    float start; /* the loss the run started from; 0 until the first step is fed */
    long steps;  /* losses fed */
    double sum;  /* of the last min(steps, WINDOW) losses */
    float ring[LEARN_DIVERGE_WINDOW];
} learn_diverge;

/* Starts watching a run. start: the loss it started from, or 0 to take the first
 * loss fed (the model at its initialisation: about ln(classes) for every task,
 * whose logits start near 0). A run resumed later keeps its struct, or passes
 * the first run's start. */
void learn_diverge_begin(learn_diverge *d, float start);

/* Feeds one step's training loss. Returns 1 when the run has diverged, with
 * *value (if not NULL) the loss that says so: the step's own when it is not
 * finite, else the running mean over the last WINDOW steps (fewer before
 * WINDOW steps) that passed FACTOR x start. Returns 0 otherwise. */
int learn_diverge_feed(learn_diverge *d, float loss, float *value);

/* The loss above which the running mean counts as diverged (FACTOR x start);
 * 0 before the start is known. */
float learn_diverge_limit(const learn_diverge *d);

#endif
