/* attention.h: one head's scaled dot-product attention for a block of query rows,
 * the one kernel, and a layer's heads around it (attn_heads), the one path every
 * forward takes through the attention sublayer (sublayer.h): scores, masks, row
 * softmax, A V. The projections before it, W^O after it and the heads off are the
 * sublayer's. Every product goes through mm_sgemm (blas.h). */
#ifndef MHAVIZ_ATTENTION_H
#define MHAVIZ_ATTENTION_H

#include <stddef.h>

/* What one head's scores are made of. Query row r sees keys [0, attn_visible(s, r));
 * the hidden keys are always the row's tail. */
typedef struct {
    int n;       /* positions: rows of Q and of K, V */
    int d_k;     /* columns of Q_i, K_i, V_i */
    int n_real;  /* padding: keys [n_real, n) hidden from every row; n for none */
    int causal;  /* 1: key c > query r hidden too */
    float scale; /* scores = Q_i K_i^T * scale: attn_scale(d_k, scaled, temperature) */
    /* 0: the softmax runs over the visible keys only (the core's forward);
       1: over the whole row with -inf where hidden, as the trainer always has. Both
       give 0 on hidden keys; the sums add in a different order (rounding only). */
    int whole_rows;
} attn_head_shape;

/* Keys [0, visible) query row r sees: min(r + 1, n_real) when causal, else n_real. */
static inline int attn_visible(const attn_head_shape *s, int r) {
    return s->causal && r + 1 < s->n_real ? r + 1 : s->n_real;
}

/* The query rows a causal head's products take at a time: each block multiplies only
 * the keys its last row sees (the trainer's backward blocks the same way). */
#define ATTN_BLOCK 32

/* The most floats of K_i^T (d_k x keys) a head copies to take its scores as a plain
 * product (attention.c); the trainer's backward copies V_i^T likewise. */
#define ATTN_KT_MAX 4096

/* dst (cols, rows) = src^T, src rows x cols with ld floats a row: K_i^T or V_i^T from
 * head i's columns of K or V */
static inline void attn_copy_transposed(float *dst, const float *src, int rows, int cols, int ld) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) dst[(long)c * rows + r] = src[(long)r * ld + c];
}

/* Head i for query rows [r0, r1), 0 <= r0 <= r1 <= n:
 *   scores (n, n), rows [r0, r1): Q_i K_i^T * scale, -inf on hidden keys;
 *   attn   (n, n), rows [r0, r1): row softmax of scores, exactly 0 on hidden keys;
 *   head   rows [r0, r1) of head_i = attn_i V_i, (n, d_k), ld_head floats a row (a
 *          head's own (n, d_k) block, or its band of Concat with ld_head = d_model).
 * q, k, v point at row 0 of Q_i, K_i, V_i (head i's first column), ld floats a row.
 * scores and attn point at row 0 of the head's (n, n) matrices. With whole_rows,
 * scores may be attn: the softmax is taken in place and only the weights remain
 * (a loaded model's forward, which keeps no scores). Allocates nothing. */
void attn_head_forward(float *scores, float *attn, float *head, int ld_head, const float *q,
                       const float *k, const float *v, int ld, const attn_head_shape *s, int r0,
                       int r1);

/* ---- a layer's heads: the one path every forward takes to the kernel ----
 * One sequence's heads as the attention sublayer (sublayer.c) runs them for every
 * forward:
 * q, k, v (T, ld) with head j in columns [j hd, (j+1) hd) of each (K and V already one
 * per query head); scores and attn (h, T, T), or scores one (T, T) slot that every head
 * takes in turn (one_slot); head j's output (T, hd) at concat + j head_stride, ld_concat
 * floats a row. Zero means the default for n_real (T: no padding), scale
 * (attn_scale(hd, 1, 1): 1 / sqrt(hd)), ld_concat (ld) and head_stride (hd: the heads
 * side by side in Concat). */
typedef struct {
    float *scores, *attn, *concat;
    const float *q, *k, *v;
    int T, ld, hd;
    int causal, whole_rows, one_slot; /* whole_rows: attn_head_shape's */
    int n_real;                       /* keys [n_real, T) are padding; 0: T */
    float scale;                      /* the scores' factor; 0: attn_scale(hd, 1, 1) */
    int ld_concat;                    /* floats a row of the output; 0: ld */
    size_t head_stride;               /* floats from head j's output to head j + 1's; 0: hd */
} attn_heads;

/* Head j of a for query rows [r0, r1), 0 <= r0 <= r1 <= T, by attn_head_forward:
 * scores = Q_j K_j^T * scale, -inf where masked (causal, padding); attn their row
 * softmax; head_j = attn V_j into its output rows. Allocates nothing; heads and row blocks write
 * disjoint outputs, so they may run side by side. */
void attn_heads_rows(const attn_heads *a, int j, int r0, int r1);

#endif
