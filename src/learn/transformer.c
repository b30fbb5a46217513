/* transformer.c: the transformer module (transformer.h): its configuration, the
 * flat parameter and gradient blocks and the activations carved from one block
 * each, the initialisation, and the forward and backward chained from the layers
 * of layers.c. The trace of one sequence is in trace.c. */
#define _DEFAULT_SOURCE /* madvise */
#include "transformer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "layers.h"
#include "mha.h"
#include "rng.h"

/* ------------------------------------------------------------------------------ */
/* configuration                                                                   */

void tf_config_resolve(tf_config *c) {
    if (c->classes == 0) c->classes = c->vocab;
    if (c->d_ff == 0) c->d_ff = 4 * c->d_model;
    if (c->ln_eps == 0.0f) c->ln_eps = TF_DEFAULT_LN_EPS;
}

int tf_config_check(const tf_config *c, char *err, size_t errlen) {
    const char *bad = NULL;
    if (c->vocab < 1 || c->vocab > TF_MAX_VOCAB)
        bad = "vocab must be 1..65536";
    else if (c->ctx < 1 || c->ctx > TF_MAX_CTX)
        bad = "context length must be 1..1024";
    else if (c->layers < 1 || c->layers > TF_MAX_LAYERS)
        bad = "layers must be 1..48";
    else if (c->d_model < 1 || c->d_model > TF_MAX_D_MODEL)
        bad = "d_model must be 1..4096";
    else if (c->h < 1 || c->h > c->d_model || c->d_model % c->h)
        bad = "heads must divide d_model";
    else if (c->classes < 1 || c->classes > TF_MAX_VOCAB)
        bad = "classes must be 1..65536";
    else if (c->tied && c->classes != c->vocab)
        bad = "a tied unembedding needs classes = vocab";
    else if (c->mlp && (c->d_ff < 1 || c->d_ff > 4 * TF_MAX_D_MODEL))
        bad = "d_ff must be 1..16384";
    else if (c->act != TF_ACT_GELU && c->act != TF_ACT_RELU && c->act != TF_ACT_GELU_TANH)
        bad = "activation must be GELU, ReLU or GELU (tanh)";
    else if (!(c->ln_eps > 0.0f && c->ln_eps < 1.0f))
        bad = "LayerNorm epsilon must be in (0, 1)";
    if (!bad) return 0;
    snprintf(err, errlen, "transformer: %s", bad);
    return -1;
}

/* ------------------------------------------------------------------------------ */
/* carving the blocks                                                              */

/* Returns base + *off (NULL while counting, when base is NULL) and moves *off on. */
static float *take(float *base, size_t *off, size_t n) {
    float *r = base ? base + *off : NULL;
    *off += n;
    return r;
}

/* Points p at the flat block base (NULL: only count); when record is 1, records
 * each tensor's name, shape and data in tf->tensors. Returns the number of floats,
 * the number of tensors in *count. Shapes follow tf->spec. The order is the
 * initialisation's: keep it, or trained models change. */
static size_t params_point(transformer *tf, tf_params *p, float *base, int record, int *count) {
    const model_spec *s = &tf->spec;
    const size_t d = (size_t)s->d_model, ff = (size_t)s->d_ff;
    const size_t qd = (size_t)spec_q_dim(s), kvd = (size_t)spec_kv_dim(s);
    const int lnb = spec_norm_bias(s);
    size_t off = 0;
    int n = 0;
    char nm[32];
#define TENSOR(field, label, dims, rows, cols)                                                     \
    do {                                                                                           \
        (field) = take(base, &off, (size_t)(rows) * (size_t)(cols));                               \
        if (record) {                                                                              \
            tf_tensor *t_ = &tf->tensors[n];                                                       \
            snprintf(tf->names_[n], sizeof tf->names_[n], "%s", (label));                          \
            t_->name = tf->names_[n];                                                              \
            t_->ndim = (dims);                                                                     \
            t_->shape[0] = (int)((dims) == 1 ? (size_t)(cols) : (size_t)(rows));                   \
            t_->shape[1] = (int)((dims) == 1 ? 0 : (size_t)(cols));                                \
            t_->data = (field);                                                                    \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
#define PARAM(field, label, rows, cols) TENSOR(field, label, 2, rows, cols)
#define VEC(field, label, len) TENSOR(field, label, 1, 1, len)
    memset(p, 0, sizeof *p);
    const size_t e = (size_t)spec_emb_dim(s);
    PARAM(p->wte, "wte", s->vocab, e);
    if (s->pos == SPEC_POS_LEARNED) PARAM(p->wpe, "wpe", spec_pos_rows(s), e);
    if (s->token_types) PARAM(p->wtt, "wtt", s->token_types, e);
    if (s->post_ln) {
        VEC(p->emb_ln_g, "emb_ln.gain", e);
        if (lnb) VEC(p->emb_ln_b, "emb_ln.bias", e);
    }
    if (s->d_embed > 0) {
        PARAM(p->emb_map, "emb_map", e, d);
        VEC(p->emb_map_b, "emb_map.bias", d);
    }
    for (int i = 0; i < spec_stored_layers(s); i++) {
        tf_layer_params *lp = &p->layer[i];
#define LNAME(x) (snprintf(nm, sizeof nm, "layer%d.%s", i + 1, (x)), nm)
        VEC(lp->ln1_g, LNAME("ln1.gain"), d);
        if (lnb) VEC(lp->ln1_b, LNAME("ln1.bias"), d);
        PARAM(lp->w_q, LNAME("W_Q"), d, qd);
        PARAM(lp->w_k, LNAME("W_K"), d, kvd);
        PARAM(lp->w_v, LNAME("W_V"), d, kvd);
        PARAM(lp->w_o, LNAME("W_O"), qd, d);
        if (s->qkv_bias) {
            VEC(lp->b_q, LNAME("b_Q"), qd);
            VEC(lp->b_k, LNAME("b_K"), kvd);
            VEC(lp->b_v, LNAME("b_V"), kvd);
        }
        if (s->o_bias) VEC(lp->b_o, LNAME("b_O"), d);
        if (s->qk_norm) {
            VEC(lp->q_norm, LNAME("q_norm.gain"), s->head_dim);
            VEC(lp->k_norm, LNAME("k_norm.gain"), s->head_dim);
        }
        if (ff) {
            VEC(lp->ln2_g, LNAME("ln2.gain"), d);
            if (lnb) VEC(lp->ln2_b, LNAME("ln2.bias"), d);
            if (spec_gated(s)) PARAM(lp->w_gate, LNAME("W_gate"), d, ff);
            PARAM(lp->w_fc, LNAME("W_fc"), d, ff);
            if (s->mlp_bias) VEC(lp->b_fc, LNAME("b_fc"), ff);
            PARAM(lp->w_proj, LNAME("W_proj"), ff, d);
            if (s->mlp_bias) VEC(lp->b_proj, LNAME("b_proj"), d);
        }
#undef LNAME
    }
    if (!s->post_ln) {
        VEC(p->lnf_g, "lnf.gain", d);
        if (lnb) VEC(p->lnf_b, "lnf.bias", d);
    }
    if (s->head == SPEC_HEAD_DENSE) {
        PARAM(p->w_u, "W_U", d, tf->cfg.classes);
        VEC(p->b_u, "b_U", tf->cfg.classes);
    } else if (s->head == SPEC_HEAD_LINEAR) {
        PARAM(p->lm_head, "lm_head", s->vocab, d);
    }
    if (s->mlm) {
        PARAM(p->mlm_dense, "mlm.dense", d, e);
        VEC(p->mlm_dense_b, "mlm.dense.bias", e);
        VEC(p->mlm_ln_g, "mlm.ln.gain", e);
        VEC(p->mlm_ln_b, "mlm.ln.bias", e);
        if (!s->mlm_tied) PARAM(p->mlm_dec, "mlm.decoder", s->vocab, e);
        VEC(p->mlm_bias, "mlm.bias", s->vocab);
    }
    /* shared layers: every layer is the stored one (ALBERT) */
    for (int i = spec_stored_layers(s); i < s->layers; i++) p->layer[i] = p->layer[0];
#undef PARAM
#undef VEC
#undef TENSOR
    if (record) tf->n_tensors = n;
    if (count) *count = n;
    return off;
}

static size_t acts_point(const tf_config *c, tf_acts *a, float *base, int B, int T) {
    const size_t bt = (size_t)B * T, btd = bt * c->d_model, btf = bt * c->d_ff;
    const size_t bhtt = (size_t)B * c->h * T * T;
    size_t off = 0;
    a->B = B, a->T = T;
    a->x0 = take(base, &off, btd);
    for (int i = 0; i < c->layers; i++) {
        tf_layer_acts *la = &a->layer[i];
        memset(la, 0, sizeof *la);
        la->ln1 = take(base, &off, btd);
        la->ln1_mean = take(base, &off, bt);
        la->ln1_rstd = take(base, &off, bt);
        la->q = take(base, &off, btd);
        la->k = take(base, &off, btd);
        la->v = take(base, &off, btd);
        la->scores = take(base, &off, bhtt);
        la->attn = take(base, &off, bhtt);
        la->concat = take(base, &off, btd);
        la->attproj = take(base, &off, btd);
        la->res1 = take(base, &off, btd);
        if (c->mlp) {
            la->ln2 = take(base, &off, btd);
            la->ln2_mean = take(base, &off, bt);
            la->ln2_rstd = take(base, &off, bt);
            la->fc = take(base, &off, btf);
            la->fc_act = take(base, &off, btf);
            la->res2 = take(base, &off, btd);
        }
    }
    a->lnf = take(base, &off, btd);
    a->lnf_mean = take(base, &off, bt);
    a->lnf_rstd = take(base, &off, bt);
    a->logits = take(base, &off, bt * c->classes);
    a->probs = take(base, &off, bt * c->classes);
    return off;
}

/* A zeroed block of n floats for free(). A large one is aligned to 2 MiB and asked to
   be backed by huge pages (Linux's transparent huge pages, where they are enabled for
   madvise): a training step streams through tens of MiB of activations, and with 4 KiB
   pages it ran 3 % slower (tf_acts at d_model 128, batch 32, T 64: 65.0 vs 63.0 ms). */
#define HUGE_PAGE ((size_t)2 << 20)

static float *zeroed_floats(size_t n) {
    const size_t bytes = n * sizeof(float);
#ifdef MADV_HUGEPAGE
    if (bytes >= 2 * HUGE_PAGE) {
        void *p = NULL;
        if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: 4 KiB pages if refused */
        return memset(p, 0, bytes);
    }
#endif
    return calloc(n, sizeof(float));
}

int tf_acts_alloc(tf_acts *a, const tf_config *cfg, int B, int T) {
    memset(a, 0, sizeof *a);
    float *mem = zeroed_floats(acts_point(cfg, a, NULL, B, T));
    if (!mem) return -1;
    acts_point(cfg, a, mem, B, T);
    a->mem_ = mem;
    return 0;
}

void tf_acts_free(tf_acts *a) {
    free(a->mem_);
    memset(a, 0, sizeof *a);
}

/* p + off, or NULL when the tensor is absent */
static float *shift(float *p, size_t off) {
    return p ? p + off : NULL;
}

void tf_acts_rows(tf_acts *view, const tf_config *c, const tf_acts *a, int b0, int B, int T) {
    MHA_EXPECT(b0 >= 0 && B >= 1 && T >= 1 && (size_t)(b0 + B) * T <= (size_t)a->B * a->T);
    MHA_EXPECT((size_t)(b0 + B) * T * T <= (size_t)a->B * a->T * a->T);
    const size_t bt = (size_t)b0 * T, btd = bt * c->d_model, btf = bt * c->d_ff;
    const size_t bhtt = (size_t)b0 * c->h * T * T;
    memset(view, 0, sizeof *view);
    view->B = B, view->T = T;
    view->lean = a->lean;
    view->x0 = shift(a->x0, btd);
    for (int i = 0; i < c->layers; i++) {
        const tf_layer_acts *la = &a->layer[i];
        tf_layer_acts *lv = &view->layer[i];
        lv->ln1 = shift(la->ln1, btd);
        lv->ln1_mean = shift(la->ln1_mean, bt);
        lv->ln1_rstd = shift(la->ln1_rstd, bt);
        lv->q = shift(la->q, btd);
        lv->k = shift(la->k, btd);
        lv->v = shift(la->v, btd);
        lv->scores = shift(la->scores, bhtt);
        lv->attn = shift(la->attn, bhtt);
        lv->concat = shift(la->concat, btd);
        lv->attproj = shift(la->attproj, btd);
        lv->res1 = shift(la->res1, btd);
        lv->ln2 = shift(la->ln2, btd);
        lv->ln2_mean = shift(la->ln2_mean, bt);
        lv->ln2_rstd = shift(la->ln2_rstd, bt);
        lv->fc = shift(la->fc, btf);
        lv->fc_act = shift(la->fc_act, btf);
        lv->res2 = shift(la->res2, btd);
    }
    view->lnf = shift(a->lnf, btd);
    view->lnf_mean = shift(a->lnf_mean, bt);
    view->lnf_rstd = shift(a->lnf_rstd, bt);
    view->logits = shift(a->logits, bt * c->classes);
    view->probs = shift(a->probs, bt * c->classes);
}

float *tf_grads_alloc(const transformer *tf, tf_params *g) {
    float *block = calloc(tf->n_params, sizeof(float));
    if (!block) return NULL;
    transformer scratch = {.cfg = tf->cfg, .spec = tf->spec};
    params_point(&scratch, g, block, 0, NULL);
    return block;
}

float *tf_layer_out(const tf_config *cfg, const tf_acts *a, int i) {
    return cfg->mlp ? a->layer[i].res2 : a->layer[i].res1;
}

float *tf_layer_in(const tf_config *cfg, const tf_acts *a, int i) {
    return i == 0 ? a->x0 : tf_layer_out(cfg, a, i - 1);
}

/* ------------------------------------------------------------------------------ */
/* create / destroy / init                                                         */

/* A transformer with cfg, spec, its tensor table and its zeroed parameter block
 * (pointers not yet set); *count its tensors. NULL on out of memory. */
static transformer *params_alloc(const tf_config *cfg, const model_spec *spec, int *count) {
    transformer *tf = calloc(1, sizeof *tf);
    if (!tf) return NULL;
    tf->cfg = *cfg;
    tf->spec = *spec;
    tf->n_params = params_point(tf, &tf->p, NULL, 0, count);
    tf->tensors = calloc((size_t)*count, sizeof *tf->tensors);
    tf->names_ = calloc((size_t)*count, sizeof *tf->names_);
    tf->params = calloc(tf->n_params, sizeof(float));
    if (!tf->tensors || !tf->names_ || !tf->params) {
        tf_destroy(tf);
        return NULL;
    }
    return tf;
}

transformer *tf_create(const tf_config *cfg_in, int batch, int seq, char *err, size_t errlen) {
    tf_config cfg = *cfg_in;
    tf_config_resolve(&cfg);
    if (tf_config_check(&cfg, err, errlen) != 0) return NULL;
    if (seq == 0) seq = cfg.ctx;
    const int params_only = batch == 0;
    if (params_only) batch = 1, seq = 1;
    if (batch < 1 || seq < 1 || seq > cfg.ctx || (size_t)batch * seq > INT_MAX / 4) {
        snprintf(err, errlen, "transformer: batch %d of %d tokens: must be >= 1 and <= ctx %d",
                 batch, seq, cfg.ctx);
        return NULL;
    }
    model_spec spec;
    tf_spec_of_config(&spec, &cfg);
    int count = 0;
    transformer *tf = params_alloc(&cfg, &spec, &count);
    if (!tf) goto oom;
    if (params_only) {
        params_point(tf, &tf->p, tf->params, 1, NULL);
        for (int t = 0; t < tf->n_tensors; t++) tf->tensors[t].grad = NULL;
        MHA_EXPECT(tf->n_tensors == count);
        return tf;
    }
    tf->grads = calloc(tf->n_params, sizeof(float));
    if (!tf->grads) goto oom;
    if (tf_acts_alloc(&tf->a, &cfg, batch, seq) != 0) goto oom;
    tf_config one = cfg; /* the backward's gradients: one block's (stream_grad) */
    one.layers = 1;
    if (tf_acts_alloc(&tf->da, &one, batch, seq) != 0) goto oom;
    params_point(tf, &tf->g, tf->grads, 1, NULL); /* record the gradient pointers first ... */
    for (int t = 0; t < tf->n_tensors; t++) tf->tensors[t].grad = tf->tensors[t].data;
    params_point(tf, &tf->p, tf->params, 1, NULL); /* ... then the parameters over them */
    MHA_EXPECT(tf->n_tensors == count);
    return tf;
oom:
    tf_destroy(tf);
    snprintf(err, errlen, "out of memory for d_model=%d h=%d batch=%d", cfg.d_model, cfg.h, batch);
    return NULL;
}

transformer *tf_create_spec(const model_spec *spec, char *err, size_t errlen) {
    if (tf_spec_check(spec, err, errlen) != 0) return NULL;
    tf_config cfg = {.vocab = spec->vocab,
                     .ctx = spec->ctx,
                     .classes = spec->vocab,
                     .layers = spec->layers,
                     .h = spec->h,
                     .d_model = spec->d_model,
                     .mlp = spec->d_ff > 0,
                     .d_ff = spec->d_ff,
                     .act = spec->mlp == SPEC_MLP_GELU_ERF ? TF_ACT_GELU
                            : spec->mlp == SPEC_MLP_RELU   ? TF_ACT_RELU
                                                           : TF_ACT_GELU_TANH,
                     .attn_bias = spec->qkv_bias,
                     .tied = spec->head == SPEC_HEAD_TIED,
                     .ln_eps = spec->norm_eps};
    int count = 0;
    transformer *tf = params_alloc(&cfg, spec, &count);
    if (!tf) {
        snprintf(err, errlen, "out of memory for d_model=%d h=%d", spec->d_model, spec->h);
        return NULL;
    }
    params_point(tf, &tf->p, tf->params, 1, NULL);
    MHA_EXPECT(tf->n_tensors == count);
    return tf;
}

void tf_destroy(transformer *tf) {
    if (!tf) return;
    tf_acts_free(&tf->a);
    tf_acts_free(&tf->da);
    free(tf->params);
    free(tf->grads);
    free(tf->tensors);
    free(tf->names_);
    free(tf);
}

void tf_init(transformer *tf, uint64_t *rng, float std) {
    for (int t = 0; t < tf->n_tensors; t++) {
        tf_tensor *x = &tf->tensors[t];
        const size_t n = (size_t)x->shape[0] * (x->ndim == 2 ? (size_t)x->shape[1] : 1);
        const char *dot = strrchr(x->name, '.');
        if (dot && strcmp(dot, ".gain") == 0) {
            for (size_t i = 0; i < n; i++) x->data[i] = 1.0f;
        } else if (x->ndim == 1) { /* biases */
            memset(x->data, 0, n * sizeof(float));
        } else {
            for (size_t i = 0; i < n; i++) x->data[i] = (float)(std * rng_normal(rng));
        }
    }
}

/* ------------------------------------------------------------------------------ */
/* forward                                                                         */

void tf_attn_forward(const transformer *tf, tf_acts *a, int i, int B, int T,
                     const unsigned char *off_i, float *out_full) {
    const tf_config *c = &tf->cfg;
    const int d = c->d_model, N = B * T;
    const tf_layer_params *lp = &tf->p.layer[i];
    tf_layer_acts *la = &a->layer[i];
    layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, tf_layer_in(c, a, i), lp->ln1_g,
                      lp->ln1_b, N, d, c->ln_eps);
    /* causal; the softmax over each row's visible keys only, as the core's forward (the
       whole rows with -inf where hidden took twice the exps: 6 % of a step). Lean: one
       scores slot an example, and Concat W^O + b_O added straight into res1 */
    attn_sublayer s = {.d_in = d,
                       .d_out = d,
                       .h = c->h,
                       .hd = d / c->h,
                       .B = B,
                       .T = T,
                       .x = la->ln1,
                       .q = la->q,
                       .k = la->k,
                       .v = la->v,
                       .scores = la->scores,
                       .attn = la->attn,
                       .concat = la->concat,
                       .out = a->lean ? la->res1 : la->attproj,
                       .resid = a->lean ? tf_layer_in(c, a, i) : NULL,
                       .out_full = out_full,
                       .off = off_i,
                       .causal = 1,
                       .one_slot = a->lean};
    tf_sublayer_weights(&s, lp);
    attn_sublayer_forward(&s);
}

void tf_block_rest_forward(const transformer *tf, tf_acts *a, int i, int B, int T) {
    const tf_config *c = &tf->cfg;
    const int d = c->d_model, ff = c->d_ff, N = B * T;
    const size_t nd = (size_t)N * d;
    const tf_layer_params *lp = &tf->p.layer[i];
    tf_layer_acts *la = &a->layer[i];
    /* res1 = x + MHA(LN1(x)); lean, tf_attn_forward added it straight into res1 */
    if (!a->lean) residual_forward(la->res1, tf_layer_in(c, a, i), la->attproj, nd);
    if (!c->mlp) return;
    /* MLP block: res2 = res1 + act(LN2(res1) W_fc + b_fc) W_proj + b_proj, the last
       product added into res2 where it had an (N, d) of its own and a residual pass
       (the forward's output is the same, rounding aside) */
    layernorm_forward(la->ln2, la->ln2_mean, la->ln2_rstd, la->res1, lp->ln2_g, lp->ln2_b, N, d,
                      c->ln_eps);
    matmul_forward(la->fc, la->ln2, lp->w_fc, lp->b_fc, N, d, ff);
    act_forward(la->fc_act, la->fc, (size_t)N * ff, c->act);
    matmul_forward_add(la->res2, la->res1, la->fc_act, lp->w_proj, lp->b_proj, N, ff, d);
}

void tf_final_forward(const transformer *tf, tf_acts *a, int B, int T) {
    const tf_config *c = &tf->cfg;
    const int d = c->d_model, N = B * T;
    layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, tf_layer_out(c, a, c->layers - 1),
                      tf->p.lnf_g, tf->p.lnf_b, N, d, c->ln_eps);
    if (c->tied)
        unembed_tied_forward(a->logits, a->lnf, tf->p.wte, N, d, c->vocab);
    else
        matmul_forward(a->logits, a->lnf, tf->p.w_u, tf->p.b_u, N, d, c->classes);
}

void tf_forward(const transformer *tf, tf_acts *a, const int *tok, int B, int T,
                const unsigned char *off) {
    const tf_config *c = &tf->cfg;
    MHA_EXPECT(B >= 1 && T >= 1 && T <= c->ctx && (size_t)B * T <= (size_t)a->B * a->T);
    MHA_EXPECT((size_t)B * T * T <= (size_t)a->B * a->T * a->T);
    encoder_forward(a->x0, tok, tf->p.wte, tf->p.wpe, B, T, c->d_model);
    for (int i = 0; i < c->layers; i++) {
        tf_attn_forward(tf, a, i, B, T, off ? off + (size_t)i * c->h : NULL, NULL);
        tf_block_rest_forward(tf, a, i, B, T);
    }
    tf_final_forward(tf, a, B, T);
}

/* ------------------------------------------------------------------------------ */
/* backward                                                                        */

/* The backward's gradients (tf->da): one block's, in layer 0's slots of a one-layer
   tf_acts, which every block takes in turn, and the stream's in that layer's output,
   one (N, d) for every layer (block_backward). At d_model 128, T 64, batch 32, 2 layers
   with the MLP, a training step took 63.5 ms on one thread with every layer's
   gradients apart and the GELU's out of place, 61 ms so. */
static float *stream_grad(const tf_config *c, const tf_acts *da) {
    return c->mlp ? da->layer[0].res2 : da->layer[0].res1;
}

/* Block i back: dres holds the gradient of the block's output and leaves with that
   of its input, in place: each residual's gradient is added into dres after the last
   read of the one before (res2 = res1 + MLP: dres1 = dres2 + the MLP's path; res1 =
   x + attproj: dx = dres1 + the attention's). The gradients inside the block are in
   s, the slots every block shares; the GELU's backward overwrites its own input. */
static void block_backward(const transformer *tf, const tf_acts *a, tf_acts *da, tf_params *g,
                           int i, int B, int T, float *dres) {
    const tf_config *c = &tf->cfg;
    const int d = c->d_model, ff = c->d_ff, N = B * T;
    const tf_layer_params *lp = &tf->p.layer[i];
    tf_layer_params *gp = &g->layer[i];
    const tf_layer_acts *la = &a->layer[i];
    tf_layer_acts *s = &da->layer[0];
    if (c->mlp) {
        matmul_backward(s->fc_act, 0.0f, gp->w_proj, gp->b_proj, dres, la->fc_act, lp->w_proj, N,
                        ff, d);
        act_backward(s->fc_act, la->fc, la->fc_act, s->fc_act, (size_t)N * ff, c->act);
        matmul_backward(s->ln2, 0.0f, gp->w_fc, gp->b_fc, s->fc_act, la->ln2, lp->w_fc, N, d, ff);
        layernorm_backward(dres, gp->ln2_g, gp->ln2_b, s->ln2, la->res1, lp->ln2_g, la->ln2_mean,
                           la->ln2_rstd, N, d);
    }
    matmul_backward(s->concat, 0.0f, gp->w_o, gp->b_o, dres, la->concat, lp->w_o, N, d, d);
    attention_backward(s->q, s->k, s->v, s->attn, s->concat, la->q, la->k, la->v, la->attn, NULL, B,
                       T, d, c->h);
    matmul_backward(s->ln1, 0.0f, gp->w_q, gp->b_q, s->q, la->ln1, lp->w_q, N, d, d);
    matmul_backward(s->ln1, 1.0f, gp->w_k, gp->b_k, s->k, la->ln1, lp->w_k, N, d, d);
    matmul_backward(s->ln1, 1.0f, gp->w_v, gp->b_v, s->v, la->ln1, lp->w_v, N, d, d);
    layernorm_backward(dres, gp->ln1_g, gp->ln1_b, s->ln1, tf_layer_in(c, a, i), lp->ln1_g,
                       la->ln1_mean, la->ln1_rstd, N, d);
}

void tf_backward_rows(const transformer *tf, const tf_acts *a, tf_acts *da, tf_params *g,
                      const int *tok, int B, int T) {
    const tf_config *c = &tf->cfg;
    MHA_EXPECT(B >= 1 && T >= 1 && (size_t)B * T <= (size_t)a->B * a->T);
    const int d = c->d_model, N = B * T, L = c->layers;
    float *dres = stream_grad(c, da);
    if (c->tied)
        unembed_tied_backward(da->lnf, g->wte, da->logits, a->lnf, tf->p.wte, N, d, c->vocab);
    else
        matmul_backward(da->lnf, 0.0f, g->w_u, g->b_u, da->logits, a->lnf, tf->p.w_u, N, d,
                        c->classes);
    memset(dres, 0, (size_t)N * d * sizeof(float));
    layernorm_backward(dres, g->lnf_g, g->lnf_b, da->lnf, tf_layer_out(c, a, L - 1), tf->p.lnf_g,
                       a->lnf_mean, a->lnf_rstd, N, d);
    for (int i = L - 1; i >= 0; i--) block_backward(tf, a, da, g, i, B, T, dres);
    encoder_backward(g->wte, g->wpe, dres, tok, B, T, d);
}

void tf_backward(transformer *tf, const int *tok, int B, int T) {
    tf_backward_rows(tf, &tf->a, &tf->da, &tf->g, tok, B, T);
}
