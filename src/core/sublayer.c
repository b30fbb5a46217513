/* sublayer.c: the attention sublayer every forward takes (sublayer.h): the
 * products by X and by Concat (whole, or by column chunks on the workers), the
 * repeat of K and V for grouped queries, the heads by attention.c's attn_heads_rows
 * side by side, and the one place where heads off are removed. */
#include "sublayer.h"

#include <string.h>

#include "attention.h"
#include "blas.h"
#include "expect.h"

/* ------------------------------------------------------------------------------ */
/* products with a bias                                                            */

/* Columns [c0, c1) of out (rows, ldo floats a row) = in (rows, k) w (k, ldw) + bias,
   plus resid (ldo floats a row) when given: the bias (and resid) written first, then
   added to by sgemm's beta 1. */
static void lin_cols(float *out, int ldo, const float *in, int ldi, const float *w, int ldw,
                     const float *bias, const float *resid, int rows, int k, int c0, int c1) {
    if (c0 >= c1 || rows < 1) return;
    const size_t width = (size_t)(c1 - c0);
    for (int r = 0; (resid || bias) && r < rows; r++) {
        float *o = out + (size_t)r * ldo + c0;
        const float *x = resid ? resid + (size_t)r * ldo + c0 : NULL;
        if (x && bias)
            for (size_t j = 0; j < width; j++) o[j] = x[j] + bias[c0 + j];
        else
            memcpy(o, x ? x : bias + c0, width * sizeof(float));
    }
    mm_sgemm(out + c0, ldo, in, ldi, w + c0, ldw, rows, (int)width, k, 0, 1.0f,
             resid || bias ? 1.0f : 0.0f);
}

void matmul_forward(float *out, const float *inp, const float *w, const float *bias, int N, int c,
                    int oc) {
    lin_cols(out, oc, inp, c, w, oc, bias, NULL, N, c, 0, oc);
}

void matmul_forward_add(float *out, const float *resid, const float *inp, const float *w,
                        const float *bias, int N, int c, int oc) {
    lin_cols(out, oc, inp, c, w, oc, bias, resid, N, c, 0, oc);
}

/* ------------------------------------------------------------------------------ */
/* the sublayer's shape and its work on the workers                                */

typedef struct {
    const attn_sublayer *s;
    int h_kv, qd, kvd; /* h_kv resolved */
    int a0;            /* the heads' and the output's first row */
    int workers, chunks, row_blocks;
} job;

static job job_of(const attn_sublayer *s) {
    MHA_EXPECT(s->B >= 1 && s->T >= 1 && s->h >= 1 && s->hd >= 1);
    MHA_EXPECT(s->r0 >= 0 && s->r0 <= s->T && (s->B == 1 || (s->r0 == 0 && !s->heads)));
    job j = {.s = s, .h_kv = s->h_kv > 0 ? s->h_kv : s->h};
    MHA_EXPECT(s->h % j.h_kv == 0 && (j.h_kv == s->h || s->B == 1));
    j.qd = s->h * s->hd;
    j.kvd = j.h_kv * s->hd;
    j.a0 = s->all_rows ? 0 : s->r0;
    j.workers =
        s->workers > 0 ? s->workers : mm_workers_for(4.0 * s->B * (s->T - j.a0) * s->T * j.qd);
    j.chunks = s->chunks;
    j.row_blocks = s->row_blocks > 0 ? s->row_blocks : 1;
    return j;
}

/* Columns [*c0, *c1) of chunk `chunk` of `chunks` over d, in multiples of 16 floats
   (a cache line and an OpenBLAS kernel width); may be empty. */
static void chunk_cols(int d, int chunk, int chunks, int *c0, int *c1) {
    const int width = ((d + chunks - 1) / chunks + 15) / 16 * 16;
    *c0 = chunk * width < d ? chunk * width : d;
    *c1 = *c0 + width < d ? *c0 + width : d;
}

/* Columns [c0, c1) of Q (which 0), K (1) or V (2) at the rows from r0. */
static void qkv_cols(const job *j, int which, int c0, int c1) {
    const attn_sublayer *s = j->s;
    float *dst[3] = {s->q, s->k, s->v};
    const float *w[3] = {s->w_q, s->w_k, s->w_v}, *b[3] = {s->b_q, s->b_k, s->b_v};
    const int ld = which ? j->kvd : j->qd, rows = s->B * s->T - s->r0;
    if (!dst[which]) return;
    lin_cols(dst[which] + (size_t)s->r0 * ld, ld, s->x + (size_t)s->r0 * s->d_in, s->d_in, w[which],
             ld, b[which], NULL, rows, s->d_in, c0, c1);
}

static void qkv_task(void *ctx, int t) {
    const job *j = ctx;
    int c0, c1;
    chunk_cols(t / j->chunks ? j->kvd : j->qd, t % j->chunks, j->chunks, &c0, &c1);
    qkv_cols(j, t / j->chunks, c0, c1);
}

/* Head h_j of example b, query rows [r0, r1): the kernel straight into its band of
   Concat, and a copy into its own block of heads when kept. */
static void run_head(const job *j, int b, int hj, int r0, int r1) {
    const attn_sublayer *s = j->s;
    const size_t tt = (size_t)s->T * s->T, row0 = (size_t)b * s->T;
    const int grouped = j->h_kv < s->h; /* K and V repeated into kx, vx */
    const attn_heads a = {.scores = s->scores + (size_t)b * (s->one_slot ? 1 : s->h) * tt,
                          .attn = s->attn + (size_t)b * s->h * tt,
                          .concat = s->concat + row0 * j->qd,
                          .q = s->q + row0 * j->qd,
                          .k = (grouped ? s->kx : s->k) + row0 * j->qd,
                          .v = (grouped ? s->vx : s->v) + row0 * j->qd,
                          .T = s->T,
                          .ld = j->qd,
                          .hd = s->hd,
                          .causal = s->causal,
                          .whole_rows = s->whole_rows,
                          .one_slot = s->one_slot,
                          .n_real = s->n_real,
                          .scale = s->scale};
    attn_heads_rows(&a, hj, r0, r1);
    if (!s->heads) return;
    const float *band = a.concat + (size_t)hj * s->hd;
    float *own = s->heads + (size_t)hj * s->T * s->hd;
    for (int r = r0; r < r1; r++)
        memcpy(own + (size_t)r * s->hd, band + (size_t)r * j->qd, (size_t)s->hd * sizeof(float));
}

/* One example's heads (one_slot: they share its scores slot), or one head's row
   block of one example. */
static void heads_task(void *ctx, int t) {
    const job *j = ctx;
    const attn_sublayer *s = j->s;
    if (s->one_slot) {
        for (int hj = 0; hj < s->h; hj++) run_head(j, t, hj, j->a0, s->T);
        return;
    }
    const int per = s->h * j->row_blocks, b = t / per, hj = t % per / j->row_blocks,
              blk = t % j->row_blocks, rows = s->T - j->a0;
    const int r0 = j->a0 + (int)((long)rows * blk / j->row_blocks),
              r1 = j->a0 + (int)((long)rows * (blk + 1) / j->row_blocks);
    if (r0 < r1) run_head(j, b, hj, r0, r1);
}

/* A group of heads as one task: their columns of Q, K and V, then each of them, so
   that nothing crosses to another core until Concat is complete (the built-in
   model's on several workers). */
static void group_task(void *ctx, int t) {
    const job *j = ctx;
    const attn_sublayer *s = j->s;
    const int h0 = s->h * t / j->chunks, h1 = s->h * (t + 1) / j->chunks;
    if (h0 >= h1) return;
    for (int which = 0; which < 3; which++) qkv_cols(j, which, h0 * s->hd, h1 * s->hd);
    for (int hj = h0; hj < h1; hj++) run_head(j, 0, hj, j->a0, s->T);
}

/* ------------------------------------------------------------------------------ */
/* the steps                                                                       */

static void qkv(const job *j) {
    const attn_sublayer *s = j->s;
    const int rows = s->B * s->T - s->r0;
    if (rows < 1) return;
    if (j->chunks >= 1)
        mm_parallel(3 * j->chunks, j->workers, qkv_task, (void *)j);
    else
        for (int which = 0; which < 3; which++) qkv_cols(j, which, 0, which ? j->kvd : j->qd);
    if (s->qk_step)
        s->qk_step(s->qk_ctx, s->q + (size_t)s->r0 * j->qd, s->k + (size_t)s->r0 * j->kvd, s->r0,
                   rows);
}

void attn_sublayer_qkv(const attn_sublayer *s) {
    const job j = job_of(s);
    qkv(&j);
}

static void heads(const job *j) {
    const attn_sublayer *s = j->s;
    if (j->h_kv < s->h) {
        /* query head i reads K/V head i / (h / h_kv), as Hugging Face's repeat_kv */
        const int group = s->h / j->h_kv, hd = s->hd;
        for (int r = 0; r < s->T; r++)
            for (int i = 0; i < s->h; i++) {
                const size_t src = (size_t)r * j->kvd + (size_t)(i / group) * hd,
                             dst = (size_t)r * j->qd + (size_t)i * hd;
                memcpy(s->kx + dst, s->k + src, (size_t)hd * sizeof(float));
                memcpy(s->vx + dst, s->v + src, (size_t)hd * sizeof(float));
            }
    }
    const int tasks = s->one_slot ? s->B : s->B * s->h * j->row_blocks;
    mm_parallel(tasks, j->workers, heads_task, (void *)j);
}

void attn_sublayer_heads(const attn_sublayer *s) {
    const job j = job_of(s);
    heads(&j);
}

/* Columns [c0, c1) of out from Concat, at the rows from a0. */
static void out_cols(const job *j, int c0, int c1) {
    const attn_sublayer *s = j->s;
    lin_cols(s->out + (size_t)j->a0 * s->d_out, s->d_out, s->concat + (size_t)j->a0 * j->qd, j->qd,
             s->w_o, s->d_out, s->b_o, s->resid ? s->resid + (size_t)j->a0 * s->d_out : NULL,
             s->B * s->T - j->a0, j->qd, c0, c1);
}

static void out_task(void *ctx, int t) {
    const job *j = ctx;
    int c0, c1;
    chunk_cols(j->s->d_out, t, j->chunks, &c0, &c1);
    out_cols(j, c0, c1);
}

static void out_product(const job *j) {
    if (j->chunks >= 1)
        mm_parallel(j->chunks, j->workers, out_task, (void *)j);
    else
        out_cols(j, 0, j->s->d_out);
}

static void out(const job *j) {
    const attn_sublayer *s = j->s;
    const int rows = s->B * s->T - j->a0;
    MHA_EXPECT(!(s->resid && s->out_full));
    if (rows < 1) return;
    int any = 0;
    for (int i = 0; s->off && i < s->h; i++) any |= s->off[i];
    /* every head on (kept in out_full), unless only the output without some is wanted */
    if (!any || s->out_full) out_product(j);
    if (s->out_full)
        memcpy(s->out_full + (size_t)j->a0 * s->d_out, s->out + (size_t)j->a0 * s->d_out,
               (size_t)rows * s->d_out * sizeof(float));
    if (!any) return;
    /* the heads off: their bands of Concat zeroed (their attention and heads stay as
       computed), and the output again from that Concat */
    attn_concat_remove(s->concat, j->qd, s->hd, s->h, s->off, j->a0, s->B * s->T);
    out_product(j);
}

void attn_concat_remove(float *concat, int ld, int hd, int h, const unsigned char *off, int r0,
                        int r1) {
    for (int i = 0; off && i < h; i++)
        if (off[i])
            for (int r = r0; r < r1; r++)
                memset(concat + (size_t)r * ld + (size_t)i * hd, 0, (size_t)hd * sizeof(float));
}

void attn_sublayer_out(const attn_sublayer *s) {
    const job j = job_of(s);
    out(&j);
}

void attn_sublayer_forward(const attn_sublayer *s) {
    const job j = job_of(s);
    if (j.chunks >= 1 && j.workers > 1 && s->h >= j.chunks && s->B == 1 && !s->qk_step &&
        j.h_kv == s->h) {
        mm_parallel(j.chunks, j.workers, group_task, (void *)&j);
    } else {
        qkv(&j);
        heads(&j);
    }
    out(&j);
}
