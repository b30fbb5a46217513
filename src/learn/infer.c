/* infer.c: a loaded model's forward on one sequence (transformer.h, "inference"),
 * with the layers of the trainer's forward (layers.h) but none of its gradients:
 * every layer keeps what the view and --dump show, the rest is scratch. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "blas.h"
#include "layers.h"
#include "mha.h"
#include "transformer.h"

/* floats of each part, in the order they are carved */
typedef struct {
    size_t resid, per_layer_nd, attn, lnf, vocab, scratch_nd, ff, rows, scores;
} infer_sizes;

static int sizes(const tf_config *c, int n, int split, infer_sizes *z) {
    if (n < 1 || n > c->ctx || split < c->h || split > c->d_model) return -1;
    const size_t nd = (size_t)n * c->d_model, nn = (size_t)n * n;
    z->resid = (size_t)(c->layers + 1) * nd;
    z->per_layer_nd = (size_t)c->layers * nd; /* each of ln1, q, k, v, concat, out, out_full */
    z->attn = (size_t)c->layers * c->h * nn;
    z->lnf = nd;
    z->vocab = (size_t)c->vocab;
    z->scratch_nd = nd; /* res1, ln2, proj */
    z->ff = (size_t)n * (c->mlp ? c->d_ff : 1);
    z->rows = (size_t)n;
    z->scores = (size_t)split * nn;
    return 0;
}

static size_t total(const infer_sizes *z) {
    return z->resid + 7 * z->per_layer_nd + z->attn + z->lnf + 2 * z->vocab + 3 * z->scratch_nd +
           2 * z->ff + 2 * z->rows + z->scores;
}

size_t tf_infer_bytes(const tf_config *cfg, int n, int split) {
    infer_sizes z;
    if (sizes(cfg, n, split, &z) != 0) return 0;
    return total(&z) * sizeof(float) + (size_t)cfg->layers * cfg->h;
}

tf_infer *tf_infer_create(const transformer *tf, int n, int split) {
    const tf_config *c = &tf->cfg;
    infer_sizes z;
    if (sizes(c, n, split, &z) != 0) return NULL;
    tf_infer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->tf = tf;
    t->cap = n;
    t->split_cap = split;
    t->mem_ = malloc(total(&z) * sizeof(float));
    t->off = calloc((size_t)c->layers * c->h, 1);
    if (!t->mem_ || !t->off) {
        tf_infer_destroy(t);
        return NULL;
    }
    float *p = t->mem_;
#define CARVE(field, count)                                                                        \
    do {                                                                                           \
        t->field = p;                                                                              \
        p += (count);                                                                              \
    } while (0)
    CARVE(resid, z.resid);
    CARVE(ln1, z.per_layer_nd);
    CARVE(q, z.per_layer_nd);
    CARVE(k, z.per_layer_nd);
    CARVE(v, z.per_layer_nd);
    CARVE(concat, z.per_layer_nd);
    CARVE(out, z.per_layer_nd);
    CARVE(out_full, z.per_layer_nd);
    CARVE(attn, z.attn);
    CARVE(lnf, z.lnf);
    CARVE(logits, z.vocab);
    CARVE(probs, z.vocab);
    CARVE(res1, z.scratch_nd);
    CARVE(ln2, z.scratch_nd);
    CARVE(proj, z.scratch_nd);
    CARVE(fc, z.ff);
    CARVE(fc_act, z.ff);
    CARVE(mean, z.rows);
    CARVE(rstd, z.rows);
    CARVE(scores, z.scores);
#undef CARVE
    MHA_EXPECT((size_t)(p - t->mem_) == total(&z));
    return t;
}

void tf_infer_destroy(tf_infer *t) {
    if (!t) return;
    free(t->mem_);
    free(t->off);
    free(t);
}

/* Layer i's slice of a (layers, cap, d) block. */
static float *at(const tf_infer *t, float *block, int i) {
    return block + (size_t)i * t->cap * t->tf->cfg.d_model;
}

/* The heads of one layer side by side on the workers (each head's products on one
   thread): at n = 64 a layer's 12 heads are ~13 MFLOP of small products and
   softmaxes, a tenth of the forward on one core. The same kernel and order as
   attention_forward (layers.c), so the numbers are the same. */
typedef struct {
    float *scores, *attn, *concat;
    const float *q, *k, *v;
    int n, d, h;
} heads_job;

static void head_task(void *ctx, int j) {
    const heads_job *hj = ctx;
    const int dk = hj->d / hj->h;
    const size_t nn = (size_t)hj->n * hj->n, col = (size_t)j * dk;
    const attn_head_shape shape = {.n = hj->n,
                                   .d_k = dk,
                                   .n_real = hj->n,
                                   .causal = 1,
                                   .scale = attn_scale(dk, 1, 1.0f),
                                   .whole_rows = 1};
    attn_head_forward(hj->scores + (size_t)j * nn, hj->attn + (size_t)j * nn, hj->concat + col,
                      hj->d, hj->q + col, hj->k + col, hj->v + col, hj->d, &shape, 0, hj->n);
}

static void heads_forward(float *scores, float *attn, float *concat, const float *q, const float *k,
                          const float *v, int n, int d, int h) {
    heads_job hj = {scores, attn, concat, q, k, v, n, d, h};
    const double flops = 4.0 * n * n * d;
    mm_parallel(h, mm_workers_for(flops), head_task, &hj);
}

static void layer_forward(tf_infer *t, int i, const unsigned char *off_i) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    const int n = t->n, d = c->d_model, h = c->h, dk = d / h;
    const size_t nd = (size_t)n * d;
    const tf_layer_params *lp = &tf->p.layer[i];
    const float *x = at(t, t->resid, i);
    float *ln1 = at(t, t->ln1, i), *q = at(t, t->q, i), *k = at(t, t->k, i), *v = at(t, t->v, i);
    float *concat = at(t, t->concat, i), *out = at(t, t->out, i);
    float *attn = t->attn + (size_t)i * h * t->cap * t->cap;
    layernorm_forward(ln1, t->mean, t->rstd, x, lp->ln1_g, lp->ln1_b, n, d, c->ln_eps);
    matmul_forward(q, ln1, lp->w_q, lp->b_q, n, d, d);
    matmul_forward(k, ln1, lp->w_k, lp->b_k, n, d, d);
    matmul_forward(v, ln1, lp->w_v, lp->b_v, n, d, d);
    /* (h, n, n) at n tokens: the layer's block is laid out for cap, rows packed at n */
    heads_forward(t->scores, attn, concat, q, k, v, n, d, h);
    matmul_forward(out, concat, lp->w_o, lp->b_o, n, d, d);
    int any = 0;
    for (int j = 0; j < h; j++) {
        t->off[(size_t)i * h + j] = off_i && off_i[j];
        any |= t->off[(size_t)i * h + j];
    }
    if (any) { /* the output with every head on stays beside the one without */
        memcpy(at(t, t->out_full, i), out, nd * sizeof(float));
        for (int j = 0; j < h; j++)
            if (off_i[j])
                for (int r = 0; r < n; r++)
                    memset(concat + (size_t)r * d + (size_t)j * dk, 0, (size_t)dk * sizeof(float));
        matmul_forward(out, concat, lp->w_o, lp->b_o, n, d, d);
    }
    /* res1 = x + attn; the MLP; the stream into layer i + 1 */
    float *next = at(t, t->resid, i + 1);
    residual_forward(c->mlp ? t->res1 : next, x, out, nd);
    if (!c->mlp) return;
    layernorm_forward(t->ln2, t->mean, t->rstd, t->res1, lp->ln2_g, lp->ln2_b, n, d, c->ln_eps);
    matmul_forward(t->fc, t->ln2, lp->w_fc, lp->b_fc, n, d, c->d_ff);
    act_forward(t->fc_act, t->fc, (size_t)n * c->d_ff, c->act);
    matmul_forward(t->proj, t->fc_act, lp->w_proj, lp->b_proj, n, c->d_ff, d);
    residual_forward(next, t->res1, t->proj, nd);
}

void tf_infer_run(tf_infer *t, const int *tokens, int n, const unsigned char *off, int from) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    MHA_EXPECT(n >= 1 && n <= t->cap && from >= 0 && from <= c->layers);
    mha_forwards_add(); /* MHAVIZ_STATS's count */
    if (from == 0 || n != t->n) {
        from = 0;
        t->n = n;
        encoder_forward(t->resid, tokens, tf->p.wte, tf->p.wpe, 1, n, c->d_model);
    }
    mm_threads_min_flops(MM_THREADS_MODEL_FLOPS); /* products of a few ms: both cores */
    for (int i = from; i < c->layers; i++) layer_forward(t, i, off ? off + (size_t)i * c->h : NULL);
    const int d = c->d_model;
    layernorm_forward(t->lnf, t->mean, t->rstd, at(t, t->resid, c->layers), tf->p.lnf_g,
                      tf->p.lnf_b, n, d, c->ln_eps);
    const float *last = t->lnf + (size_t)(n - 1) * d;
    if (c->tied)
        unembed_tied_forward(t->logits, last, tf->p.wte, 1, d, c->vocab);
    else
        matmul_forward(t->logits, last, tf->p.w_u, tf->p.b_u, 1, d, c->classes);
    mm_threads_min_flops(0.0);
    int none = -1;
    crossentropy_forward(t->probs, t->logits, &none, 1, c->classes, &none);
}

void tf_infer_split(const tf_infer *t, int i, int h2, float *scores, float *attn, float *concat,
                    float *out) {
    const tf_config *c = &t->tf->cfg;
    const int n = t->n, d = c->d_model;
    MHA_EXPECT(i >= 0 && i < c->layers && h2 >= 1 && h2 <= d && d % h2 == 0);
    /* the forward's own attention, at h2 heads: its scale is 1 / sqrt(d / h2) */
    attention_forward(scores, attn, concat, at(t, t->q, i), at(t, t->k, i), at(t, t->v, i), NULL, 1,
                      n, d, h2, 1);
    const tf_layer_params *lp = &t->tf->p.layer[i];
    if (out) matmul_forward(out, concat, lp->w_o, lp->b_o, n, d, d);
}

void tf_infer_layer(attn_layer *L, const tf_infer *t, int i, const float *scores,
                    const char *const *tokens) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    MHA_EXPECT(i >= 0 && i < c->layers);
    const tf_layer_params *lp = &tf->p.layer[i];
    attn_layer_init(L, t->n, t->n, c->h, c->d_model, ATTN_MASK_CAUSAL, 1, 1.0f);
    L->layer = i;
    L->layers = c->layers;
    L->tokens = tokens;
    L->x_what = i == 0 ? "ln_1 of embedding + position" : "ln_1 of the residual stream";
    L->x = at(t, t->ln1, i);
    L->w_q = lp->w_q;
    L->w_k = lp->w_k;
    L->w_v = lp->w_v;
    L->w_o = lp->w_o;
    L->q = at(t, t->q, i);
    L->k = at(t, t->k, i);
    L->v = at(t, t->v, i);
    L->scores = scores;
    L->attn = t->attn + (size_t)i * c->h * t->cap * t->cap;
    L->concat = at(t, t->concat, i);
    L->out = at(t, t->out, i);
    int any = 0;
    for (int j = 0; j < c->h; j++)
        if (t->off[(size_t)i * c->h + j]) {
            L->off[j / 64] |= UINT64_C(1) << (j % 64);
            any = 1;
        }
    L->out_full = any ? at(t, t->out_full, i) : L->out;
}
