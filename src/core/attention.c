/* attention.c: one head's attention for a block of query rows (attention.h): the
 * scores by one sgemm with the scale as its alpha, the masks, the row softmax of
 * softmax.c, A V by one sgemm. The plain-loop reference is in tests/test_attention.c. */
#include "attention.h"

#include <math.h>
#include <stddef.h>

#include "blas.h"
#include "softmax.h"

void attn_head_forward(float *scores, float *attn, float *head, int ld_head, const float *q,
                       const float *k, const float *v, int ld, const attn_head_shape *s, int r0,
                       int r1) {
    const int n = s->n, rows = r1 - r0;
    if (rows <= 0) return;
    float *srows = scores + (size_t)r0 * n, *arows = attn + (size_t)r0 * n;

    /* step 1: scores = Q_i K_i^T * scale, (rows, n); the scale is sgemm's alpha */
    mm_sgemm(srows, n, q + (size_t)r0 * ld, ld, k, ld, rows, n, s->d_k, 1, s->scale, 0.0f);

    for (int r = r0; r < r1; r++) {
        /* step 2: masks. Padding hides keys [n_real, n) from every row; causal
           hides key c > r. Every row keeps key 0; the hidden keys are the tail. */
        const int visible = attn_visible(s, r);
        float *srow = srows + (size_t)(r - r0) * n;
        for (int c = visible; c < n; c++) srow[c] = -INFINITY;
        /* step 3: the row softmax over the visible keys, max subtracted; the
           hidden ones get exactly 0 */
        softmax_row(arows + (size_t)(r - r0) * n, srow, s->whole_rows ? n : visible, n,
                    SOFTMAX_AUTO);
    }

    /* step 4: head_i = A_i V_i, (rows, d_k) */
    mm_sgemm(head + (size_t)r0 * ld_head, ld_head, arows, n, v, ld, rows, s->d_k, n, 0, 1.0f, 0.0f);
}
