/* gpt2_sync.c: a run brought to another run's state by copying what differs
 * (gpt2_run_sync, gpt2.h). The window keeps two runs, the one shown and the one
 * a change is computed into; brought to the shown one first, the second computes
 * the change alone, not the change before it too. The computing is gpt2.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpt2.h"

/* *p holds at least want floats (malloc'd once at the run's cap, as gpt2.c's). */
static int have(float **p, size_t want) {
    if (!*p) *p = malloc(want * sizeof(float));
    return *p ? 0 : -1;
}

/* Rows [r0, n) of each of `blocks` (n, w) matrices packed (blocks, n, w), from src to
   dst; every row when r0 is 0 (one copy). */
static void copy_rows(float *dst, const float *src, int blocks, int n, int w, int r0) {
    if (r0 == 0) {
        memcpy(dst, src, (size_t)blocks * n * w * sizeof(float));
        return;
    }
    for (int j = 0; j < blocks; j++) {
        const size_t at = ((size_t)j * n + r0) * w;
        memcpy(dst + at, src + at, (size_t)(n - r0) * w * sizeof(float));
    }
}

/* Rows [0, rows) of `blocks` (n0, n0) matrices moved to their places at (n, n), n >= n0,
   from the last back, the new columns set to fill (a causal row sees no new key). */
static void widen(float *a, int blocks, int n0, int n, int w0, int w, int rows, float fill) {
    for (int j = blocks - 1; j >= 0; j--)
        for (int row = rows - 1; row >= 0; row--) {
            float *to = a + ((size_t)j * n + row) * w;
            memmove(to, a + ((size_t)j * n0 + row) * w0, (size_t)w0 * sizeof(float));
            for (int k = w0; k < w; k++) to[k] = fill;
        }
}

/* The shown layer's tensors of src into r, rows [keep, n) only where r's rows before
   keep are the same (its same layer at the model's own heads, the tokens before keep
   the same, no head changed up to it). 0, or -1 out of memory (r shows no layer). */
static int sync_shown(gpt2_run *r, const gpt2_run *src, int keep) {
    const model_spec *s = &r->m->tf->spec;
    const int n = src->n, h = src->shown_h, d = s->d_model, split = tf_infer_can_split(r->m->tf);
    const size_t cap = (size_t)r->inf->cap, width = gpt2_run_row_width(r), need = (size_t)h * n * n;
    const int n0 = r->s_n;
    r->shown = -1;
    r->s_n = r->s_full_n = 0;
    if (src->shown < 0 || src->s_n != n) return 0; /* nothing shown: nothing to copy */
    if (gpt2_run_scores_room(r, need) != 0) return -1;
    if (have(&r->s_concat, cap * width) || have(&r->s_out, cap * width) ||
        have(&r->s_heads, cap * width) || have(&r->s_x, cap * d))
        return -1;
    /* head_i's width: d_model's share at a split, else the model's own head_dim */
    const int dk = split ? d / h : s->head_dim, cw = split ? d : spec_q_dim(s);
    if (keep > 0 && n > n0) { /* the kept rows to the new width */
        widen(r->s_scores, h, n0, n, n0, n, keep, -INFINITY);
        widen(r->s_attn, h, n0, n, n0, n, keep, 0.0f);
        widen(r->s_heads, h, n0, n, dk, dk, keep, 0.0f);
    } else if (keep > 0 && n < n0) { /* rows of a shorter text: moved from the first on */
        for (int j = 0; j < h; j++)
            for (int row = 0; row < keep; row++) {
                memmove(r->s_scores + ((size_t)j * n + row) * n,
                        r->s_scores + ((size_t)j * n0 + row) * n0, (size_t)n * sizeof(float));
                memmove(r->s_attn + ((size_t)j * n + row) * n,
                        r->s_attn + ((size_t)j * n0 + row) * n0, (size_t)n * sizeof(float));
                memmove(r->s_heads + ((size_t)j * n + row) * dk,
                        r->s_heads + ((size_t)j * n0 + row) * dk, (size_t)dk * sizeof(float));
            }
    }
    copy_rows(r->s_scores, src->s_scores, h, n, n, keep);
    copy_rows(r->s_attn, src->s_attn, h, n, n, keep);
    copy_rows(r->s_heads, src->s_heads, h, n, dk, keep);
    copy_rows(r->s_concat, src->s_concat, 1, n, cw, keep);
    copy_rows(r->s_x, src->s_x, 1, n, d, keep);
    if (h != r->m->tf->cfg.h) copy_rows(r->s_out, src->s_out, 1, n, d, 0); /* re-split */
    if (src->s_full_n == n) {
        if (have(&r->s_full, cap * d)) return -1;
        copy_rows(r->s_full, src->s_full, 1, n, d, keep);
        r->s_full_n = n;
    }
    if (src->s_qpre && src->s_kpre) { /* RoPE: Q and K before the rotation */
        const model_spec *o = &r->own->tf->spec;
        if (have(&r->s_qpre, cap * spec_q_dim(o)) || have(&r->s_kpre, cap * spec_kv_dim(o)))
            return -1;
        copy_rows(r->s_qpre, src->s_qpre, 1, n, spec_q_dim(o), keep);
        copy_rows(r->s_kpre, src->s_kpre, 1, n, spec_kv_dim(o), keep);
    }
    r->shown = src->shown;
    r->shown_h = h;
    r->s_n = n;
    return 0;
}

/* The rows of r's shown layer that src shares: the tokens before the first that
   differs, where the layer is the same at the model's own heads, in a causal model,
   whole in r, and no layer up to it has other heads removed; else 0. */
static int rows_shared(const gpt2_run *r, const gpt2_run *src) {
    const tf_config *c = &r->m->tf->cfg;
    if (r->shown < 0 || r->shown != src->shown || r->shown_h != c->h || src->shown_h != c->h ||
        !r->m->tf->spec.causal || r->s_n != r->n || r->s_n < 1)
        return 0;
    if (memcmp(r->inf->off, src->inf->off, (size_t)(r->shown + 1) * c->h) != 0) return 0;
    if (r->s_full_n != r->s_n && src->s_full_n == src->n) return 0; /* its rows not made */
    const int common = r->n < src->n ? r->n : src->n;
    int keep = 0;
    while (keep < common && r->ids[keep] == src->ids[keep]) keep++;
    return keep;
}

int gpt2_run_sync(gpt2_run *r, const gpt2_run *src, int overview) {
    const tf_config *c = &src->m->tf->cfg;
    /* one model's weights in both (a regrouped run computes with its own copy) */
    if (r == src || r->own != src->own || r->m != r->own || src->m != src->own) return -1;
    if (src->n < 1) return -1;
    const int keep = rows_shared(r, src);
    tf_infer_sync(r->inf, src->inf);
    r->n = src->n;
    r->n_text = src->n_text;
    r->replaced = src->replaced;
    memcpy(r->ids, src->ids, (size_t)src->n * sizeof(int));
    memcpy(r->labels, src->labels, (size_t)src->n * GPT2_LABEL);
    for (int i = 0; i < src->n; i++) r->label[i] = r->labels[i];
    memcpy(r->off, src->off, (size_t)c->layers * c->h);
    memcpy(r->probs_full, src->probs_full, (size_t)c->vocab * sizeof(float));
    memcpy(r->top, src->top, sizeof r->top);
    r->any_off = src->any_off;
    r->ms = src->ms;
    r->ms_from = src->ms_from;
    r->e_layer = src->e_layer;
    r->e_top_full = src->e_top_full;
    memcpy(r->e_kl, src->e_kl, (size_t)c->h * sizeof(float));
    memcpy(r->e_top, src->e_top, (size_t)c->h * sizeof(int));
    if (r->fill) { /* an encoder's blanks: as filled in src */
        const int m = gpt2_run_fills(src);
        r->n_mask = src->n_mask;
        memcpy(r->mask_pos, src->mask_pos, sizeof r->mask_pos);
        memcpy(r->fill_ids, src->fill_ids, sizeof r->fill_ids);
        memcpy(r->fill_p, src->fill_p, sizeof r->fill_p);
        memcpy(r->fill_p_full, src->fill_p_full, sizeof r->fill_p_full);
        memcpy(r->fill_lp_full, src->fill_lp_full, (size_t)m * c->vocab * sizeof(float));
        memcpy(r->fill->logits, src->fill->logits, (size_t)m * c->vocab * sizeof(float));
    }
    r->ov_n = 0;
    if (overview && src->ov_n) { /* the maps, where they are wanted */
        const int p = gpt2_overview_side(r->m, r->inf->cap);
        const size_t maps = (size_t)c->layers * c->h;
        if (have(&r->ov, maps * p * p) == 0) {
            memcpy(r->ov, src->ov, maps * src->ov_n * src->ov_n * sizeof(float));
            r->ov_n = src->ov_n;
        }
    }
    return sync_shown(r, src, keep);
}
