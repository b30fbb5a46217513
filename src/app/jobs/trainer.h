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
#include "train_view.h" /* what a snapshot holds: plain data the state machine reads */

typedef struct app_trainer app_trainer;

/* A trainer whose jobs run on runner (idle until trainer_start). NULL when out
 * of resources. */
app_trainer *trainer_create(jobs *runner);
/* Stops its job (after the step under way) and frees everything; NULL is fine.
 * The runner must still exist or its jobs must be done. */
void trainer_destroy(app_trainer *t);

/* A new run with cfg (its curve joins the plot; earlier runs' curves stay),
 * running; it stops by itself once it has converged (train_loop.h's stop rule)
 * or after stop_at steps (0: never), and says which in the snapshot; exact: only
 * after stop_at steps, converged or not (the same run each time). The learner
 * is made on the worker, so this returns at once. */
void trainer_start(app_trainer *t, const learn_config *cfg, long stop_at, int exact);
/* Pauses (1) or resumes (0) the current run; a resumed run (after it stopped by
 * itself, too) goes on for another stop_at steps at most, and the stop rule
 * must hold again. */
void trainer_pause(app_trainer *t, int paused);
/* The speed: rate steps a second, each published (slow motion), TRAIN_CLASS_PACE
 * (train_view.h: each published, faster as the run goes on), or 0 for full speed
 * (bursts of about 50 ms). Applies at once, running or not. */
void trainer_set_rate(app_trainer *t, int rate);
/* One step of the current run, then paused with its bars measured (a run under
 * way is paused first). */
void trainer_step(app_trainer *t);

/* Points *v at the newest publication (the UI's until the next call; all zero
 * before the first) and returns 1 if it is newer than the last call's. */
int trainer_snapshot(app_trainer *t, const train_view **v);

/* Takes a learner trained elsewhere (--train's loop, with its curve of `points`
 * points) as the current run, paused, with its bars from `measured` (--train's own
 * ablation pass; NULL: measured here) and publishes it, on
 * the calling thread: the figure of --train --export is made from it. */
void trainer_adopt(app_trainer *t, learn_model *l, const train_point *curve, int points,
                   const train_pruning *measured, float steps_per_s);

/* The moment of the current run's replay at `step` (replay.h), copied into
 * the UI thread's own buffer (valid until the next call), or NULL when there is
 * none at that step. */
const train_view *trainer_moment(app_trainer *t, long step);

/* Takes r (moments taken by --train's loop of the run trainer_adopt took) as the
 * current run's replay, and publishes. */
struct train_replay;
void trainer_adopt_replay(app_trainer *t, struct train_replay *r);

#endif
