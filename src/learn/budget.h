/* budget.h: the memory a learner of a configuration takes, known before it is
 * made, and the bound --train holds it to (README: Learn live). Pure arithmetic
 * on the configuration; the sizes are those learn_create allocates. */
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

#endif
