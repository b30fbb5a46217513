/* train_mode.h: --train TASK, the headless "learn live": trains the learner of
 * src/learn, shows progress on stderr, prints a summary and, with --dump DIR,
 * writes the trained weights, the held-out example's tensors and train.json, all
 * or nothing (dump.h's dump_write). */
#ifndef MHAVIZ_TRAIN_MODE_H
#define MHAVIZ_TRAIN_MODE_H

#include <stddef.h>
#include <stdint.h>

#include "learn.h"
#include "options.h"
#include "train_loop.h"

/* Trains with h, d_model and seed (0: defaults 4, 32, 1) and writes dump_dir when
 * it is not NULL. Returns 0, or 2 (bad value) / 1 (runtime) with a message. */
int app_train(const train_options *t, int h, int d_model, uint64_t seed, const char *dump_dir,
              char *err, size_t errlen);

/* What a run of --train leaves for its figure: the trained learner, the curve
 * (its first point before training) and the rate. The caller owns l (learn_destroy)
 * and curve (free). */
typedef struct {
    learn_model *l;
    train_point *curve;
    int points;
    float steps_per_s;
    float *ablated;              /* (layers, h): pruning.ablated_acc points here; free it */
    train_pruning pruning;       /* the ablation pass the summary printed, for the figure's bars */
    struct train_replay *replay; /* with moments asked for, the run's (replay.h); or NULL */
} train_outcome;

/* What a run makes besides its summary and dump (the figure): called once the
 * run is trained and its summary has reached standard output, and with --dump
 * inside the dump, after its files and before it takes its folder's place, so a
 * failure here leaves no new dump. It may take run->l (and set it to NULL);
 * what it leaves is freed. Returns 0, or 1 / 2 with a message. */
typedef int (*train_finish_fn)(train_outcome *run, void *ud, char *err, size_t errlen);

/* app_train, then finish (may be NULL). Every target is checked before training:
 * the configuration's memory (budget.h, 2), the dump's folder (dump_check, 1);
 * the caller checks its own. A run that diverges (diverge.h) stops with 1 and
 * writes nothing. */
int app_train_run(const train_options *t, int h, int d_model, uint64_t seed, const char *dump_dir,
                  train_finish_fn finish, void *ud, char *err, size_t errlen);

#endif
