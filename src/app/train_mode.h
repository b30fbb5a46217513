/* train_mode.h: --train TASK, the headless "learn live": trains the learner of
 * src/learn, shows progress on stderr, prints a summary and, with --dump DIR,
 * writes the trained weights, the held-out example's tensors and train.json. */
#ifndef MHAVIZ_TRAIN_MODE_H
#define MHAVIZ_TRAIN_MODE_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* Trains with h, d_model and seed (0: defaults 4, 32, 1) and writes dump_dir when
 * it is not NULL. Returns 0, or 2 (bad value) / 1 (runtime) with a message. */
int app_train(const train_options *t, int h, int d_model, uint64_t seed, const char *dump_dir,
              char *err, size_t errlen);

#endif
