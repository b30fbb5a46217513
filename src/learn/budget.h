/* budget.h: the memory a learner of a configuration takes, known before it is
 * made, and the bound --train holds it to (README: Learn live); and the time a
 * training step takes, estimated before any runs, for the bound a lesson's deck
 * holds its training to. Pure arithmetic on the configuration; the sizes are
 * those learn_create allocates. */
#ifndef MHAVIZ_BUDGET_H
#define MHAVIZ_BUDGET_H

#include <stddef.h>

#include "learn.h"

#define LEARN_MAX_BYTES (2ull << 30) /* 2 GiB: the bound on a learner's memory */

/* Bytes learn_create allocates for the resolved cfg: the parameters, their
 * gradients and AdamW's two moments (4 floats a parameter; 5 when the step is
 * split in two halves, learn_config_shards), the forward's
 * activations ((batch, T) rows of every tensor, the (batch, h, T, T) scores and
 * softmax of each layer among them), the backward's gradients (the same for one
 * layer: the blocks take them in turn) and the token ids of a batch and of the
 * held-out set. */
double learn_config_bytes(const learn_config *cfg);

/* 0 when the resolved cfg fits LEARN_MAX_BYTES, else -1 with a one-line message
 * naming the bound and the options that set the size. */
int learn_config_check_memory(const learn_config *cfg, char *err, size_t errlen);

/* The rates the step time is estimated at: the matrix products of a training
 * step at 20 GFLOP/s, plus 0.3 ms a step for everything else (the batch, the
 * element-wise passes, AdamW). Fitted to --train runs on the reference machine
 * (2 shared cores): the estimate was 0.8 to 2.5 times the measured step, most
 * often above it (README: Lessons). */
#define LEARN_STEP_FLOPS_PER_S 20e9
#define LEARN_STEP_OVERHEAD_S 0.3e-3

/* Floating-point operations of one training step of the resolved cfg: the
 * forward's matrix products (per block the Q, K, V and output projections, the
 * scores and the weighted sum of V, the MLP's two) and the unembedding, times 3
 * for the backward's two products per forward one, for every example of a batch. */
double learn_config_step_flops(const learn_config *cfg);

/* Seconds one training step of the resolved cfg takes, estimated: flops at
 * LEARN_STEP_FLOPS_PER_S plus LEARN_STEP_OVERHEAD_S. */
double learn_config_step_seconds(const learn_config *cfg);

#endif
