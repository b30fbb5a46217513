/* sublayer.h: a layer's attention sublayer, the one layer step every forward takes:
 * the built-in model's (mha.c), the trainer's (src/learn/transformer.c, its trace
 * too) and a loaded model's (src/learn/block.c). Q, K, V = X W + b; the caller's own
 * step on Q and K where it has one (a loaded model's QK-norm and RoPE); K and V
 * repeated for grouped queries; the heads (attention.h); Concat W^O + b, and the
 * heads off removed. The norms, the residual and the MLP around it are the callers';
 * so is the backward (src/learn/layers.c). Every product through mm_sgemm (blas.h). */
#ifndef MHAVIZ_SUBLAYER_H
#define MHAVIZ_SUBLAYER_H

#include <stddef.h>

/* out (N, oc) = inp (N, c) w (c, oc) + bias (oc, or NULL) */
void matmul_forward(float *out, const float *inp, const float *w, const float *bias, int N, int c,
                    int oc);
/* out (N, oc) = resid (N, oc) + inp (N, c) w (c, oc) + bias (oc, or NULL): the product
 * added straight into the residual stream (sgemm's beta 1), no (N, oc) of its own */
void matmul_forward_add(float *out, const float *resid, const float *inp, const float *w,
                        const float *bias, int N, int c, int oc);

/* One sequence's, or B sequences', attention sublayer. Rows are b T + r; q has h
 * heads of hd columns (qd = h hd), k and v h_kv heads (kvd = h_kv hd; h_kv 0: h).
 * Zero means the default for h_kv, n_real and scale (attn_heads's), workers (by the
 * heads' FLOPs) and chunks (each product whole). */
typedef struct {
    /* the layer's weights: (d_in, qd), (d_in, kvd) twice, (qd, d_out); biases or NULL */
    const float *w_q, *w_k, *w_v, *w_o;
    const float *b_q, *b_k, *b_v, *b_o;
    int d_in, d_out, h, h_kv, hd;

    int B, T;
    /* B = 1 only: rows [r0, T) of Q, K, V are computed, the ones before kept (the KV
       cache); the heads and the output from r0 too, or over every row (all_rows:
       the built-in model's, whose keys may all have changed) */
    int r0, all_rows;

    const float *x;           /* (B T, d_in) the layer's input, at row 0 */
    float *q, *k, *v;         /* (B T, qd), (B T, kvd), (B T, kvd); v may be NULL (qkv only) */
    float *kx, *vx;           /* (T, qd) scratch when h_kv < h (B = 1), else unused */
    float *scores, *attn;     /* (B, h, T, T); one_slot: scores (B, T, T), each example's heads
                                 taking its slot in turn */
    float *concat;            /* (B T, qd) Concat(head_1 .. head_h), bands of heads off zero */
    float *heads;             /* NULL or (h, T, hd) (B = 1): each head's output, heads off too */
    float *out;               /* (B T, d_out) Concat W^O + b_o, the heads off removed */
    const float *resid;       /* NULL or (B T, d_out): out = resid + Concat W^O + b_o */
    float *out_full;          /* NULL or (B T, d_out): the output with every head on (no resid) */
    const unsigned char *off; /* (h) or NULL: 1 removes that head (its band of Concat zeroed) */

    int causal, whole_rows, one_slot, n_real; /* attn_heads's */
    float scale;

    /* Between the products and the heads: qk_step(qk_ctx, q, k, r0, rows) on the rows
       just computed (q and k at row r0); NULL: none. */
    void (*qk_step)(void *ctx, float *q, float *k, int r0, int rows);
    void *qk_ctx;

    /* How the work is spread (the numbers do not depend on it): chunks > 1 takes each
       product by column chunks on `workers` (and, with at least as many heads as
       chunks and no qk_step, a group of heads' columns of Q, K, V and then those heads
       as one task); row_blocks splits each head's rows. */
    int workers, chunks, row_blocks;
} attn_sublayer;

/* The whole sublayer: attn_sublayer_qkv, attn_sublayer_heads, attn_sublayer_out. */
void attn_sublayer_forward(const attn_sublayer *s);

/* Q, K, V (rows from r0) from x, then qk_step. */
void attn_sublayer_qkv(const attn_sublayer *s);

/* scores, attn, concat (and heads) from Q, K, V: each head by attn_heads_rows, side by
 * side on the workers. */
void attn_sublayer_heads(const attn_sublayer *s);

/* out = Concat W^O + b_o (+ resid); with heads off, out_full first (when given), then
 * their bands of Concat zeroed and out again. */
void attn_sublayer_out(const attn_sublayer *s);

/* The heads off ((h) or NULL: 1 removes head j) taken out of rows [r0, r1) of concat
 * (ld floats a row, head j's band at columns [j hd, (j + 1) hd)): their bands set to 0,
 * as attn_sublayer_out feeds Concat to W^O (and the views of a layer show it). */
void attn_concat_remove(float *concat, int ld, int hd, int h, const unsigned char *off, int r0,
                        int r1);

#endif
