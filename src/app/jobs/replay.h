/* replay.h: the moments of a training run, kept to show again (the replay of
 * training mode, and --train ... --export --moments K). A moment is what the
 * training view draws for one step: the held-out example's tensors in every
 * layer (the heads, Concat, W^O, MultiHead), the pruning bars (held-out
 * accuracy with each head removed, measured at that step), the step, the
 * held-out accuracy and the training loss. Moments are taken on a logarithmic
 * schedule of steps (replay_next_step) and when the run stops by itself; an
 * archive holds at most TRAIN_REPLAY_MAX of them and at most REPLAY_MAX_BYTES
 * of tensors (past either, one moment goes for each one taken: replay_thin_index,
 * so that those kept stay spread evenly on the plots' log step axis). The worker
 * appends while the UI copies one moment out; a lock keeps them apart. No SDL.
 *
 * The bars are lazy: a moment keeps a copy of the learner's parameters at its
 * step instead, and its bars are measured only when asked (replay_measure: the
 * moments a flip-book shows, the moment the window's scrubber lands on), by
 * the same ablation pass on the same weights, so they are the very numbers an
 * eager pass at that step gave, bit for bit. Once measured, the bars are kept
 * and the copy goes. When the moments of a run's planned steps would not fit
 * REPLAY_MAX_BYTES with their parameters (replay_plan), no copy is kept and each
 * moment's bars are measured when it is taken, as before. */
#ifndef MHAVIZ_REPLAY_H
#define MHAVIZ_REPLAY_H

#include <stddef.h>

#include "learn.h"
#include "train_view.h"

#define REPLAY_MAX_BYTES (64u << 20) /* tensors of the moments of one run, at most */

typedef struct train_replay train_replay;

/* An empty archive; NULL when out of memory. */
train_replay *replay_create(void);
void replay_destroy(train_replay *r); /* NULL is fine */

/* The schedule: the step after `step` that has a moment: 0, 1, 2, 3, 4, 5, 7,
   9, 12, 16, 21, 27, 35, 46, 60, 78, 101, 131, 170, 221, 287, 373, 485, 631, ...
   (each 1.3 times the one before, rounded, at least one more): 23 moments up to
   step 500, 29 up to 3000, 52 up to 10^6. */
long replay_next_step(long step);
/* 1 if step is on the schedule. */
int replay_on_schedule(long step);
/* The moments a run of `steps` steps keeps: those of the schedule up to steps,
   and the last step (before the bound of the archive for cfg thins them). */
int replay_count_for(long steps);

/* Forgets every moment: a new run (its number, for replay_run). */
void replay_clear(train_replay *r, int run);
/* Fixes the run's shape from l (a cleared archive's first moment does it
   otherwise, with steps 0) and how its bars are measured: lazily when the
   moments of a run of `steps` steps (replay_count_for, at least 4) fit in
   REPLAY_MAX_BYTES with a copy of the parameters each, else when taken. The
   archive then holds as many moments as fit (at most TRAIN_REPLAY_MAX). */
void replay_plan(train_replay *r, learn_model *l, long steps);
/* 1 if the run's bars are measured lazily (after replay_plan or a first moment). */
int replay_lazy(train_replay *r);
/* Floats of l's parameters (the copy a lazy moment keeps). */
size_t replay_param_floats(const learn_model *l);
/* The run the moments are of. */
int replay_run(const train_replay *r);

/* Takes the moment of l's current weights (its steps done): its tensors,
   `loss` (the training loss shown then), its held-out accuracy `acc` (when the
   caller measured it at this very step; NAN: measured here, learn_eval) and,
   lazily, a copy of l's parameters for its bars; else the ablation pass now
   (stop(ud), when given, is asked between heads). A moment at the same step as
   the newest replaces nothing: 1 is returned. 0 when taken, -1 when stopped or
   out of memory. */
int replay_take(train_replay *r, learn_model *l, float loss, float acc, int (*stop)(void *ud),
                void *ud);
/* The same, with the ablation pass already made (acc, ablated (layers, h), pruned,
   pruned_acc) and no stop. When the newest moment is at this step with its bars
   not yet measured, they are these (1 is returned). */
int replay_take_measured(train_replay *r, learn_model *l, float loss, float acc,
                         const float *ablated, int pruned, float pruned_acc);

/* 1 if the moment at step has its bars, 0 if they wait for replay_measure, -1
   when there is no such moment. */
int replay_measured(train_replay *r, long step);
/* Measures the bars of the moment at step, if not yet: l, the run's learner (of
   the archive's configuration; its held-out set is the run's), is given the
   moment's parameters for the ablation pass (train_ablate; stop(ud) asked
   between heads) and its own back after, bit for bit, whatever happened. The
   lock is not held during the pass. 0 when measured (now or before), -1 when
   there is no such moment, l is of another shape, it was stopped or out of
   memory (the moment then waits, as before). */
int replay_measure(train_replay *r, long step, learn_model *l, int (*stop)(void *ud), void *ud);

/* The moment on page j (0 .. K-1) of a flip-book of K >= 2 pages among n
   moments: evenly spaced, the first and the last (train_figure.c's pages). */
int replay_page_index(int j, int n, int K);

/* Which of n moments at steps[0 .. n) (ascending) goes when a moment at step `next`
   comes to a full archive: the one whose going leaves the smallest gap on the
   plots' step axis, ln(1 + step), between the moments either side of it (`next`
   the right one of the newest), never the first; the earlier on a tie. So the
   moments kept stay spread evenly on that axis: a run continued with L again and
   again adds a moment at every stop, close together on it, and those go before
   the learning phase's (every second moment going, as before, left a run of 300
   stops with no moment between step 0 and step 20,000). -1 when n < 2. */
int replay_thin_index(const long *steps, int n, long next);

/* How many moments there are; their steps into steps[0 .. min(n, max)). */
int replay_steps(train_replay *r, long *steps, int max);

/* Fills out with the moment at `step` (its tensors into out's own block, grown
   as needed; out->layer points into it): active, cfg, T, tokens, step, loss, acc,
   the bars (pruning_valid, pruning_step, ablated_acc, pruned, pruned_acc); no
   runs. Bars not yet measured: pruning_valid 0 and pruning_step the moment's
   step. 0, or -1 when there is no moment at that step or no memory. */
int replay_copy(train_replay *r, long step, train_view *out);

/* The tensors of one moment of cfg, in floats; and the pointers of layer[] into
   a block of them (train_view's layout: per layer x, q, k, v, scores, attn,
   concat, w_o, out). */
size_t replay_tensor_floats(const learn_config *cfg);
void replay_point_layers(train_layer *layer, const float *block, const learn_config *cfg);
/* Copies the held-out example's tensors of l into block (replay_tensor_floats). */
void replay_copy_tensors(float *block, learn_model *l);

#endif
