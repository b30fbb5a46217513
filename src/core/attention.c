/* attention.c: one head's attention for a block of query rows (attention.h): the
 * scores by sgemm with the scale as its alpha, the masks, the row softmax of
 * softmax.c, A V by sgemm; a causal head in blocks of rows that skip hidden keys. The plain-loop
 * reference is in tests/test_attention.c. */
#include "attention.h"

#include <math.h>
#include <stddef.h>

#include "blas.h"
#include "softmax.h"

/* Rows [r0, r1) of the head, which see keys [0, keys) at most. */
static void head_block(float *scores, float *attn, float *head, int ld_head, const float *q,
                       const float *k, const float *v, int ld, const attn_head_shape *s, int r0,
                       int r1, int keys) {
    const int n = s->n, rows = r1 - r0;
    float *srows = scores + (size_t)r0 * n, *arows = attn + (size_t)r0 * n;

    /* step 1: scores = Q_i K_i^T * scale, (rows, keys); the scale is sgemm's alpha */
    mm_sgemm(srows, n, q + (size_t)r0 * ld, ld, k, ld, rows, keys, s->d_k, 1, s->scale, 0.0f);

    for (int r = r0; r < r1; r++) {
        /* step 2: masks. Padding hides keys [n_real, n) from every row; causal
           hides key c > r. Every row keeps key 0; the hidden keys are the tail
           (and include every column past `keys`, which step 1 left alone).
           step 3: the row softmax over the visible keys, max subtracted; the
           hidden ones get exactly 0. Over visible keys only, the -inf go in after
           the softmax has read the row: written just before, the row's vector loads
           waited on them (the store did not forward: 40 % of a run at T 24). */
        const int visible = attn_visible(s, r);
        float *srow = srows + (size_t)(r - r0) * n, *arow = arows + (size_t)(r - r0) * n;
        if (s->whole_rows) {
            for (int c = visible; c < n; c++) srow[c] = -INFINITY;
            softmax_row(arow, srow, n, n, SOFTMAX_AUTO);
        } else {
            softmax_row(arow, srow, visible, n, SOFTMAX_AUTO);
            for (int c = visible; c < n; c++) srow[c] = -INFINITY;
        }
    }

    /* step 4: head_i = A_i V_i, (rows, d_k), over the keys the rows may see */
    mm_sgemm(head + (size_t)r0 * ld_head, ld_head, arows, n, v, ld, rows, s->d_k, keys, 0, 1.0f,
             0.0f);
}

void attn_head_forward(float *scores, float *attn, float *head, int ld_head, const float *q,
                       const float *k, const float *v, int ld, const attn_head_shape *s, int r0,
                       int r1) {
    /* A causal head in blocks of ATTN_BLOCK rows: block [b0, b1) sees keys [0, b1) at
       most, so the products skip most of the hidden upper triangle (a quarter of their
       work at n = 64, nearly half at n = 512). Keys that padding hides from every row
       are never multiplied. */
    const int step = s->causal ? ATTN_BLOCK : (r1 > r0 ? r1 - r0 : 1);
    for (int b0 = r0; b0 < r1; b0 += step) {
        const int b1 = r1 - b0 > step ? b0 + step : r1;
        const int keys = s->causal && b1 < s->n_real ? b1 : s->n_real;
        head_block(scores, attn, head, ld_head, q, k, v, ld, s, b0, b1, keys);
    }
}
