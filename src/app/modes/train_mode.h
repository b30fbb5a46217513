/* train_mode.h: --train TASK, the headless "learn live": trains the learner of
 * src/learn, shows progress on stderr, prints a summary and, with --dump DIR,
 * writes the trained weights, the held-out example's tensors and train.json. */
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
    float *ablated;        /* (layers, h): pruning.ablated_acc points here; free it */
    train_pruning pruning; /* the ablation pass the summary printed, for the figure's bars */
} train_outcome;

/* app_train, and on success with keep != NULL the learner and its curve kept
 * in *keep instead of freed. */
int app_train_keep(const train_options *t, int h, int d_model, uint64_t seed, const char *dump_dir,
                   train_outcome *keep, char *err, size_t errlen);

#endif
