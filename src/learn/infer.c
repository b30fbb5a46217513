/* infer.c: a loaded model's forward on one sequence (transformer.h, "inference"):
 * its buffers carved from one block, the layers run from one on (block.c computes
 * each as the model's spec says), the re-split of a layer and its view. Every layer
 * keeps its rows of the stream, Q, K, V and outputs; its X, attention and heads are
 * computed again when asked for (tf_infer_x, tf_infer_attn); the rest is scratch. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "blas.h"
#include "block.h"
#include "layers.h"
#include "mha.h"
#include "transformer.h"

/* floats of each part, in the order they are carved */
typedef struct {
    size_t resid, layer_d, layer_q, layer_kv, lnf, vocab, rope, scratch_nd, ff, gate, rows, rep,
        scores, concat, emb;
} infer_sizes;

static int sizes(const transformer *tf, int n, int split, infer_sizes *z) {
    const tf_config *c = &tf->cfg;
    const model_spec *s = &tf->spec;
    if (n < 1 || n > c->ctx || split < c->h || split > (c->d_model > c->h ? c->d_model : c->h))
        return -1;
    const size_t nn = (size_t)n * n, L = (size_t)c->layers;
    z->resid = (L + 1) * n * c->d_model;
    z->layer_d = L * n * c->d_model;      /* out */
    z->layer_q = L * n * spec_q_dim(s);   /* q */
    z->layer_kv = L * n * spec_kv_dim(s); /* k, v */
    z->lnf = (size_t)n * c->d_model;
    z->vocab = (size_t)c->vocab;
    z->rope = s->pos == SPEC_POS_ROPE ? (size_t)n * s->head_dim : 0;
    z->scratch_nd = (size_t)n * c->d_model; /* ln1, res1, ln2, proj */
    z->ff = (size_t)n * (s->d_ff ? s->d_ff : 1);
    z->gate = spec_gated(s) ? z->ff : 0;
    z->rows = (size_t)n;
    z->rep = s->h_kv < s->h ? (size_t)n * spec_q_dim(s) : 0; /* kx, vx */
    z->scores = (size_t)split * nn;
    z->concat = (size_t)n * spec_q_dim(s); /* the layer computed's, as scores: none kept */
    z->emb = s->d_embed > 0 ? (size_t)n * s->d_embed : 0; /* ALBERT's before the mapping */
    return 0;
}

static size_t total(const infer_sizes *z) {
    return z->resid + z->layer_d + z->layer_q + 2 * z->layer_kv + z->lnf + 2 * z->vocab + z->rope +
           4 * z->scratch_nd + 2 * z->ff + z->gate + 2 * z->rows + 2 * z->rep + z->scores +
           z->concat + z->emb;
}

size_t tf_infer_bytes(const transformer *tf, int n, int split) {
    infer_sizes z;
    if (sizes(tf, n, split, &z) != 0) return 0;
    return total(&z) * sizeof(float) + (size_t)tf->cfg.layers * tf->cfg.h;
}

tf_infer *tf_infer_create(const transformer *tf, int n, int split) {
    const tf_config *c = &tf->cfg;
    infer_sizes z;
    if (sizes(tf, n, split, &z) != 0) return NULL;
    tf_infer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->tf = tf;
    t->cap = n;
    t->split_cap = split;
    t->mem_ = malloc(total(&z) * sizeof(float));
    t->off = calloc((size_t)c->layers * c->h, 1);
    t->ids = calloc((size_t)n, sizeof(int));
    if (!t->mem_ || !t->off || !t->ids) {
        tf_infer_destroy(t);
        return NULL;
    }
    float *p = t->mem_;
#define CARVE(field, count)                                                                        \
    do {                                                                                           \
        t->field = (count) ? p : NULL;                                                             \
        p += (count);                                                                              \
    } while (0)
    CARVE(resid, z.resid);
    CARVE(q, z.layer_q);
    CARVE(k, z.layer_kv);
    CARVE(v, z.layer_kv);
    CARVE(out, z.layer_d);
    CARVE(lnf, z.lnf);
    CARVE(logits, z.vocab);
    CARVE(probs, z.vocab);
    CARVE(rope, z.rope);
    CARVE(ln1, z.scratch_nd);
    CARVE(res1, z.scratch_nd);
    CARVE(ln2, z.scratch_nd);
    CARVE(proj, z.scratch_nd);
    CARVE(fc, z.ff);
    CARVE(fc_act, z.ff);
    CARVE(gate, z.gate);
    CARVE(mean, z.rows);
    CARVE(rstd, z.rows);
    CARVE(kx, z.rep);
    CARVE(vx, z.rep);
    CARVE(scores, z.scores);
    CARVE(concat, z.concat);
    CARVE(emb, z.emb);
#undef CARVE
    MHA_EXPECT((size_t)(p - t->mem_) == total(&z));
    if (t->rope) block_rope_table(t->rope, &tf->spec, n);
    return t;
}

void tf_infer_destroy(tf_infer *t) {
    if (!t) return;
    free(t->mem_);
    free(t->off);
    free(t->ids);
    free(t);
}

/* Layer i's slice of a (layers, cap, d) block. */
static float *at(const tf_infer *t, float *block, int i) {
    return block + (size_t)i * t->cap * t->tf->cfg.d_model;
}

/* Layers before `layer` from row `row` on, the layers from `layer` every row; the
   final norm and the logits. */
static void run_rows(tf_infer *t, const int *tokens, int n, const unsigned char *off, int layer,
                     int row) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    if (layer == 0) row = 0;
    mha_forwards_add(); /* MHAVIZ_STATS's count */
    block_embed(t->resid, t->emb, t->mean, t->rstd, tf, tokens, row, n);
    memcpy(t->ids, tokens, (size_t)n * sizeof(int));
    t->n = n;
    mm_threads_min_flops(MM_THREADS_MODEL_FLOPS); /* products of a few ms: both cores */
    for (int i = 0; i < c->layers; i++)
        block_forward(t, i, off ? off + (size_t)i * c->h : NULL, i < layer ? row : 0);
    block_final(t, layer < c->layers ? 0 : row);
    mm_threads_min_flops(0.0);
    int none = -1;
    crossentropy_forward(t->probs, t->logits, &none, 1, c->classes, &none);
}

void tf_infer_run(tf_infer *t, const int *tokens, int n, const unsigned char *off, int from) {
    const tf_config *c = &t->tf->cfg;
    MHA_EXPECT(n >= 1 && n <= t->cap && from >= 0 && from <= c->layers);
    if (from == 0 || n != t->n) from = 0;
    run_rows(t, tokens, n, off, from, n);
}

/* What tokens and heads off (NULL: none) change in t: the first token that differs
   (or the end of the shorter text; every row in a model that is not causal) into
   *row, the first layer whose heads removed differ (layers: none) into *layer.
   0 when nothing changed. */
static int changed(const tf_infer *t, const int *tokens, int n, const unsigned char *off, int *row,
                   int *layer) {
    const tf_config *c = &t->tf->cfg;
    const int common = n < t->n ? n : t->n;
    *row = 0;
    while (*row < common && tokens[*row] == t->ids[*row]) (*row)++;
    if (!t->tf->spec.causal && (*row < n || n != t->n)) *row = 0; /* every row sees it */
    *layer = c->layers;
    for (size_t k = 0; k < (size_t)c->layers * c->h && *layer == c->layers; k++)
        if ((off && off[k]) != t->off[k]) *layer = (int)(k / c->h);
    return !(*row >= n && n == t->n && *layer == c->layers);
}

int tf_infer_update(tf_infer *t, const int *tokens, int n, const unsigned char *off) {
    const tf_config *c = &t->tf->cfg;
    MHA_EXPECT(n >= 1 && n <= t->cap);
    if (t->n < 1) {
        run_rows(t, tokens, n, off, 0, 0);
        return 0;
    }
    int row = 0, layer = 0;
    if (!changed(t, tokens, n, off, &row, &layer)) return c->layers;
    run_rows(t, tokens, n, off, layer, row < n ? row : n);
    return row == 0 ? 0 : layer;
}

/* Rows [r0, n) of layer i's slice of a (layers, cap, w) block, from src's to t's. */
static void copy_rows(float *to, const float *from, const tf_infer *t, int i, int w, int r0,
                      int n) {
    if (r0 >= n) return;
    const size_t at = ((size_t)i * t->cap + r0) * w;
    memcpy(to + at, from + at, (size_t)(n - r0) * w * sizeof(float));
}

int tf_infer_sync(tf_infer *t, const tf_infer *src) {
    const tf_config *c = &t->tf->cfg;
    const model_spec *s = &t->tf->spec;
    MHA_EXPECT(t->tf == src->tf && t->cap == src->cap);
    const int n = src->n;
    if (n < 1) { /* nothing run: nothing kept */
        t->n = 0;
        return 0;
    }
    int row = 0, layer = 0;
    if (t->n >= 1 && !changed(t, src->ids, n, src->off, &row, &layer)) return c->layers;
    if (layer == 0 || row >= n) row = layer == 0 ? 0 : n;
    /* the stream into layer i (i = layers: out of the last) depends on the layers
       before i only: its rows from `row` up to the first layer changed, all after;
       a layer's Q, K, V and output the same way from the layer itself */
    const int d = c->d_model, qd = spec_q_dim(s), kvd = spec_kv_dim(s);
    for (int i = 0; i <= c->layers; i++)
        copy_rows(t->resid, src->resid, t, i, d, i <= layer ? row : 0, n);
    for (int i = 0; i < c->layers; i++) {
        const int r0 = i < layer ? row : 0;
        copy_rows(t->q, src->q, t, i, qd, r0, n);
        copy_rows(t->k, src->k, t, i, kvd, r0, n);
        copy_rows(t->v, src->v, t, i, kvd, r0, n);
        copy_rows(t->out, src->out, t, i, d, r0, n);
    }
    memcpy(t->lnf, src->lnf, (size_t)n * d * sizeof(float));
    memcpy(t->logits, src->logits, (size_t)c->vocab * sizeof(float));
    memcpy(t->probs, src->probs, (size_t)c->vocab * sizeof(float));
    memcpy(t->ids, src->ids, (size_t)n * sizeof(int));
    memcpy(t->off, src->off, (size_t)c->layers * c->h);
    t->n = n;
    return row == 0 ? 0 : layer;
}

void tf_infer_forget(tf_infer *t) {
    t->n = 0;
}

int tf_infer_can_split(const transformer *tf) {
    const model_spec *s = &tf->spec;
    return s->pos == SPEC_POS_LEARNED && s->h_kv == s->h && spec_q_dim(s) == s->d_model;
}

void tf_infer_split(const tf_infer *t, int i, int h2, float *scores, float *attn, float *concat,
                    float *heads, float *out) {
    const tf_config *c = &t->tf->cfg;
    const int n = t->n, d = c->d_model;
    MHA_EXPECT(i >= 0 && i < c->layers && h2 >= 1 && h2 <= d && d % h2 == 0);
    MHA_EXPECT(tf_infer_can_split(t->tf));
    /* the forward's own attention, at h2 heads: its scale is 1 / sqrt(d / h2); causal
       as the model is (the softmax over the visible keys, as the trainer's), or in both
       directions over whole rows (an encoder) */
    const int causal = t->tf->spec.causal;
    const attn_sublayer a = {.h = h2,
                             .hd = d / h2,
                             .B = 1,
                             .T = n,
                             .q = at(t, t->q, i),
                             .k = at(t, t->k, i),
                             .v = at(t, t->v, i),
                             .scores = scores,
                             .attn = attn,
                             .concat = concat,
                             .heads = heads,
                             .causal = causal,
                             .whole_rows = !causal};
    attn_sublayer_heads(&a);
    const tf_layer_params *lp = &t->tf->p.layer[i];
    if (out) matmul_forward(out, concat, lp->w_o, lp->b_o, n, d, d);
}

void tf_infer_attn(tf_infer *t, int i, float *scores, float *attn, float *concat) {
    tf_infer_attn_rows(t, i, 0, scores, attn, concat, NULL);
}

void tf_infer_attn_rows(tf_infer *t, int i, int r0, float *scores, float *attn, float *concat,
                        float *heads) {
    MHA_EXPECT(i >= 0 && i < t->tf->cfg.layers && t->n >= 1 && r0 >= 0 && r0 <= t->n);
    MHA_EXPECT(r0 == 0 || t->tf->spec.causal);
    block_attention(t, i, scores, attn, concat, heads, r0);
}

static const char *layer_x_what(const model_spec *s, int i);

void tf_infer_x(tf_infer *t, int i, float *x) {
    MHA_EXPECT(i >= 0 && i < t->tf->cfg.layers && t->n >= 1);
    block_x(t, i, x);
}

void tf_infer_layer(attn_layer *L, const tf_infer *t, int i, const float *x, const float *scores,
                    const float *attn, const float *concat, const char *const *tokens) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    const model_spec *s = &tf->spec;
    MHA_EXPECT(i >= 0 && i < c->layers);
    /* Q and Concat fit the view's (n, d_model) when h head_dim = d_model, K and V when
       every query head has its own K/V head too; what does not fit is left out (NULL) */
    const int q_fits = spec_q_dim(s) == c->d_model, kv_fits = q_fits && s->h_kv == s->h;
    const tf_layer_params *lp = &tf->p.layer[i];
    attn_layer_init(L, t->n, t->n, c->h, c->d_model, s->causal ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE,
                    1, 1.0f);
    if (!q_fits) {
        L->d_k = s->head_dim;
        L->scale = attn_scale(s->head_dim, 1, 1.0f);
    }
    if (s->h_kv < s->h) L->h_kv = s->h_kv;
    L->layer = i;
    L->layers = c->layers;
    L->tokens = tokens;
    L->x_what = layer_x_what(s, i);
    L->norm_at = s->post_ln ? ATTN_NORM_POST : ATTN_NORM_PRE;
    L->rms_norm = s->norm != SPEC_LAYERNORM;
    L->x = x;
    L->w_o = q_fits ? lp->w_o : NULL;
    if (q_fits) {
        L->w_q = lp->w_q;
        L->q = at(t, t->q, i);
        L->concat = concat;
    }
    if (kv_fits) {
        L->w_k = lp->w_k;
        L->w_v = lp->w_v;
        L->k = at(t, t->k, i);
        L->v = at(t, t->v, i);
    }
    L->q_heads = t->q + (size_t)i * t->cap * spec_q_dim(s);
    L->k_heads = t->k + (size_t)i * t->cap * spec_kv_dim(s);
    L->v_heads = t->v + (size_t)i * t->cap * spec_kv_dim(s);
    if (s->pos == SPEC_POS_ROPE) { /* rotated; the caller may add them unrotated */
        L->q_rot = t->q + (size_t)i * t->cap * spec_q_dim(s);
        L->k_rot = t->k + (size_t)i * t->cap * spec_kv_dim(s);
        L->qk_norm = s->qk_norm;
    }
    L->scores = scores;
    L->attn = attn;
    L->out = at(t, t->out, i);
    int any = 0;
    for (int j = 0; j < c->h; j++)
        if (t->off[(size_t)i * c->h + j]) {
            L->off[j / 64] |= UINT64_C(1) << (j % 64);
            any = 1;
        }
    /* with heads removed, the output with every head on is the caller's to make (no
       layer keeps it: gpt2.c makes the shown layer's from its Concat) */
    L->out_full = any ? NULL : L->out;
}

void tf_infer_qk_unrotated(tf_infer *t, int i, float *q, float *k) {
    MHA_EXPECT(i >= 0 && i < t->tf->cfg.layers && t->n >= 1);
    block_x(t, i, t->ln1); /* no layer keeps its X: made again in the forward's scratch */
    block_qk_unrotated(q, k, t->tf, i, t->ln1, t->n);
}

/* What a layer's X is, in the view's words: GPT-2's as they were; a post-LN layer's
   the stream itself; an RMSNorm model's said so. */
static const char *layer_x_what(const model_spec *s, int i) {
    if (s->post_ln) /* the stream itself: its norm came after the last sublayer's add */
        return i == 0 ? "the embeddings after their LayerNorm" : "the residual stream";
    if (s->norm == SPEC_LAYERNORM)
        return i == 0 ? "ln_1 of embedding + position" : "ln_1 of the residual stream";
    return i == 0 ? "RMSNorm of the token embedding" : "RMSNorm of the residual stream";
}
