/* attention.c: one head's attention for a block of query rows (attention.h): the
 * scores by sgemm with the scale as its alpha, the masks, the row softmax of
 * softmax.c, A V by sgemm; a causal head in blocks of rows that skip hidden keys;
 * and a layer's heads (attn_heads) around it, where every forward meets the kernel
 * (through sublayer.c). The plain-loop reference is in tests/test_attention.c. */
#include "attention.h"

#include <math.h>
#include <stddef.h>

#include "blas.h"
#include "layer.h"
#include "softmax.h"

/* Rows [r0, r1) of the head, which see keys [0, keys) at most. kb is K_i (n, d_k), ld
   floats a row, when trans_k is 1, or K_i^T (d_k, at least keys), ld_kb a row, when 0. */
static void head_block(float *scores, float *attn, float *head, int ld_head, const float *q,
                       const float *kb, int ld_kb, int trans_k, const float *v, int ld,
                       const attn_head_shape *s, int r0, int r1, int keys) {
    const int n = s->n, rows = r1 - r0;
    float *srows = scores + (size_t)r0 * n, *arows = attn + (size_t)r0 * n;

    /* step 1: scores = Q_i K_i^T * scale, (rows, keys); the scale is sgemm's alpha */
    mm_sgemm(srows, n, q + (size_t)r0 * ld, ld, kb, ld_kb, rows, keys, s->d_k, trans_k, s->scale,
             0.0f);

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
    /* A small head's Q_i K_i^T as Q_i (K_i^T): OpenBLAS takes a product with a
       transposed B of inner size d_k < 32 (or a C over 1200) the long way, packing
       and all, and its small kernels only as A B: 2.3x faster at T 64, d_k 16.
       K_i^T of the keys the rows see, copied once for all the head's blocks. */
    const int kmax = s->causal && r1 < s->n_real ? r1 : s->n_real;
    float kt[ATTN_KT_MAX];
    const int small = kmax >= 1 && (long)kmax * s->d_k <= ATTN_KT_MAX;
    if (small) attn_copy_transposed(kt, k, kmax, s->d_k, ld);
    for (int b0 = r0; b0 < r1; b0 += step) {
        const int b1 = r1 - b0 > step ? b0 + step : r1;
        const int keys = s->causal && b1 < s->n_real ? b1 : s->n_real;
        if (small)
            head_block(scores, attn, head, ld_head, q, kt, kmax, 0, v, ld, s, b0, b1, keys);
        else
            head_block(scores, attn, head, ld_head, q, k, ld, 1, v, ld, s, b0, b1, keys);
    }
}

/* ------------------------------------------------------------------------------ */
/* a layer's heads                                                                 */

void attn_heads_rows(const attn_heads *a, int j, int r0, int r1) {
    const int ld_out = a->ld_concat ? a->ld_concat : a->ld;
    const size_t col = (size_t)j * a->hd, tt = (size_t)a->T * a->T;
    const attn_head_shape shape = {.n = a->T,
                                   .d_k = a->hd,
                                   .n_real = a->n_real ? a->n_real : a->T,
                                   .causal = a->causal,
                                   .scale =
                                       a->scale != 0.0f ? a->scale : attn_scale(a->hd, 1, 1.0f),
                                   .whole_rows = a->whole_rows};
    float *s = a->scores + (a->one_slot ? 0 : (size_t)j * tt);
    float *head = a->concat + (size_t)j * (a->head_stride ? a->head_stride : (size_t)a->hd);
    /* the kernel: scores, mask, softmax, head_j = A_j V_j straight into its output
       rows (a head off is the sublayer's, sublayer.c: it stays computed here) */
    attn_head_forward(s, a->attn + (size_t)j * tt, head, ld_out, a->q + col, a->k + col, a->v + col,
                      a->ld, &shape, r0, r1);
}
