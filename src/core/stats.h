/* stats.h: numbers about the heads of an attn_layer that the lesson puts on
 * screen: how spread each head's attention is (entropy), how alike two heads are
 * (Jensen-Shannon divergence), and the intermediate products of one head for its
 * step-through. Any source's layer; each function says which tensors it reads. */
#ifndef MHAVIZ_STATS_H
#define MHAVIZ_STATS_H

#include "layer.h"

/* out (h): each head's mean row entropy in bits, -sum a log2 a over the keys,
 * averaged over the text's query rows (not [PAD] rows). A uniform row over n
 * keys has log2 n bits; a row on one key has 0. Reads attn (not NULL), as does
 * attn_head_divergence. */
void attn_head_entropy(float *out, const attn_layer *L);

/* The most attn_head_entropy can read: the mean over the same rows of log2 of the
 * keys each row may see (uniform rows over them). log2 n_real without the causal
 * mask; under it row r sees min(r + 1, n_real) keys, so the most is lower. */
double attn_entropy_max(const attn_layer *L);

/* out (h, h): the mean over the text's query rows r = 0, row_step, 2 row_step ...
 * of the Jensen-Shannon divergence in bits between the rows of heads i and j: 0
 * for identical attention, 1 for rows on disjoint keys. Symmetric, zero
 * diagonal. row_step 1 takes every row; a larger one bounds the cost, h^2 n^2. */
void attn_head_divergence(float *out, const attn_layer *L, int row_step);

/* What 1 - attn_head_divergence reads for two heads that look at unrelated places:
 * for each ordered pair i != j, over the same rows, head i's row against head j's
 * row with its weights moved to a pseudo-random permutation of the keys the row may
 * see (the causal mask's and the text's), the mean of 16 such permutations (4 over
 * 64 tokens; fixed by i, j and the row, so the same layer gives the same numbers).
 * Each head keeps its own sharpness, and nothing of where the other looks: two flat
 * heads still read high (they cannot disagree much), two sharp ones low. lo, hi: the least and the
 * most a pair reads. 0, or -1 when h < 2 or out of memory (nothing written). */
int attn_alike_baseline(float *lo, float *hi, const attn_layer *L, int row_step);

/* 1 when L holds what attn_head_raw_scores reads: Q and K, or RoPE's rotated ones. */
int attn_head_scores_ok(const attn_layer *L);
/* out (n, n): Q_i K_i^T of head `head` (0-based): the raw scores, before the
 * scaling, the temperature and the mask. Reads q and k, or where the layer lacks
 * them (grouped K/V heads, head_dim not d_model / h) q_rot and k_rot, K_i being the
 * K/V head the query head reads (attn_head_scores_ok). */
void attn_head_raw_scores(float *out, const attn_layer *L, int head);

/* out (n, d_model): head_i W^O_i, head i's share of MultiHead (its rows of W^O);
 * MultiHead is the sum of these over the heads that are on. Reads heads and w_o
 * (not NULL). */
void attn_head_output(float *out, const attn_layer *L, int head);

/* What each head passes on, over the rows r = 0, row_step, 2 row_step ... of all n
 * positions: C_i = head_i W^O_i, head i's share of MultiHead (what removing head i
 * takes away from it, whether or not heads are off now).
 *   change (h): ||C_i|| / ||MultiHead|| (Frobenius, MultiHead with every head on):
 *               the relative change of MultiHead when head i alone is removed, the
 *               number attn_layer_off_delta gives for it (equal at row_step 1);
 *   cos (h, h): <C_i, C_j> / (||C_i|| ||C_j||), the cosine of two heads'
 *               contributions: 1 = they pass on the same thing (up to scale), 0 =
 *               unrelated, -1 = opposite; 0 where a contribution is 0.
 * Reads heads, w_o and out_full (not NULL). Returns 0, or -1 out of memory (nothing
 * written). */
int attn_head_contrib(float *cos, float *change, const attn_layer *L, int row_step);

#endif
