/* block.h: the one layer forward of a loaded model, doing what its model_spec says
 * (model_spec.h): the norm (LayerNorm, RMSNorm, RMSNorm with 1 + w; before each
 * sublayer or after its residual add), Q, K, V with their biases, QK-norm, RoPE,
 * grouped-query attention by the core's kernel, W^O, and the MLP (GELU, SwiGLU,
 * GeGLU). Every product through the core's sgemm wrapper. Private to src/learn:
 * infer.c carves the buffers and runs the layers; this file computes them. */
#ifndef MHAVIZ_LEARN_BLOCK_H
#define MHAVIZ_LEARN_BLOCK_H

#include "transformer.h"

/* x0 (n, d), rows r0..n-1: the embeddings of tokens at those positions (times
 * emb_scale, plus token type 0 and the learned position where the model has them:
 * row r's, or RoBERTa's counted from pad_id + 1), normed in a post-LN model, and
 * mapped from d_embed to d_model (ALBERT: emb (n, d_embed) holds them before;
 * otherwise unused, may be NULL); the rows before r0 untouched. mean, rstd (n)
 * scratch. */
void block_embed(float *x0, float *emb, float *mean, float *rstd, const transformer *tf,
                 const int *tokens, int r0, int n);

/* out (n, d) = the spec's norm of each row of x with gain g (and bias b for
 * LayerNorm); mean, rstd (n) kept (LayerNorm) or scratch. */
void block_norm(float *out, float *mean, float *rstd, const float *x, const float *g,
                const float *b, int n, int d, const model_spec *s);

/* cs (n, head_dim): for position p, cos(p inv_freq_j) in columns [0, hd/2) and
 * sin in [hd/2, hd), inv_freq as the spec's RoPE scaling makes it. */
void block_rope_table(float *cs, const model_spec *s, int n);

/* Layer i's Q (n, h head_dim) and K (n, h_kv head_dim) from its X (n, d_model) as
 * block_forward makes them but not rotated: the products with their biases and
 * QK-norm, before RoPE (the step-through's rotation stage). */
void block_qk_unrotated(float *q, float *k, const transformer *tf, int i, const float *x, int n);

/* Layer i of t on its stream into it, t->resid[i], out into t->resid[i + 1], for
 * the rows (positions) r0 .. t->n - 1: keeps their Q, K, V and out (with the heads
 * off_i removes); their X, attention and Concat only in t's scratch. The
 * rows before r0 are the last run's and stay: their K and V are read (the KV
 * cache). r0 > 0 only in a causal model, whose rows before r0
 * cannot see the rows after. */
void block_forward(tf_infer *t, int i, const unsigned char *off_i, int r0);

/* Layer i's X at every row (t->n), (n, d), from the kept stream into it: its norm
 * (pre-LN), or the stream itself (post-LN); t's mean, rstd scratch. */
void block_x(tf_infer *t, int i, float *x);

/* Layer i's attention at rows [r0, t->n) from its kept Q, K, V: scores, attn
 * (h, n, n) and concat (n, qd) at those rows, as block_forward computes them, and
 * heads (h, n, head_dim) when not NULL. */
void block_attention(tf_infer *t, int i, float *scores, float *attn, float *concat, float *heads,
                     int r0);

/* The final norm on the rows from r0 of the stream out of the last layer into
 * t->lnf (a copy in a post-LN model), then the last row's logits. */
void block_final(tf_infer *t, int r0);

#endif
