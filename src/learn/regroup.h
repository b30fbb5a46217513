/* regroup.h: a loaded model with its K/V heads regrouped: its query heads share fewer
 * K/V heads than it was trained with (h_kv -> h_kv / 2 ... 1: multi-head ->
 * grouped-query -> multi-query), made as grouped-query checkpoints are made from
 * multi-head ones (Ainslie et al., 2023, "GQA"): each new K/V head's projections
 * (W^K, W^V and their biases) are the mean of those of the old K/V heads it replaces,
 * the heads g r ... g r + r - 1 for r = old h_kv / new h_kv. Query head i then reads
 * new K/V head i / (h / h_kv). The result is a view of the model for inference
 * (tf_infer) only: every other parameter is the model's own, shared and read only. */
#ifndef MHAVIZ_LEARN_REGROUP_H
#define MHAVIZ_LEARN_REGROUP_H

#include <stddef.h>

#include "transformer.h"

/* tf with h_kv K/V heads, which must divide the model's own h_kv (and so h); h_kv
 * equal to the model's own gives a copy of it. NULL with one line in err (h_kv does
 * not divide, or out of memory). tf must outlive the result. */
transformer *tf_regroup_kv(const transformer *tf, int h_kv, char *err, size_t errlen);
/* Frees what tf_regroup_kv made (the pooled projections); NULL is fine. */
void tf_regroup_free(transformer *r);

#endif
