/* learn.c: the learner. Owns one parameter block, one gradient block (same
 * layout), one AdamW-moment block and one activation block (activations and their
 * gradients), all made in learn_create; chains the layers of layers.c into the
 * model's forward and backward, and evaluates on the held-out set. */
#include "learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "mha.h"
#include "rng.h"

#define MAX_TENSORS (4 + 12 * LEARN_MAX_LAYERS + 4)
#define ADAM_BETA1 0.9f
#define ADAM_BETA2 0.999f
#define ADAM_EPS 1e-8f

/* parameter pointers into the flat block (and, with the same layout, gradients) */
typedef struct {
    float *ln1_g, *ln1_b;                 /* (d) */
    float *w_q, *w_k, *w_v, *w_o;         /* (d, d), the core's layout */
    float *ln2_g, *ln2_b;                 /* (d), MLP only */
    float *w_fc, *b_fc, *w_proj, *b_proj; /* (d, 4d), (4d), (4d, d), (d), MLP only */
} layer_params;

typedef struct {
    float *wte; /* (V, d) token embedding */
    float *wpe; /* (T, d) learned positions */
    layer_params layer[LEARN_MAX_LAYERS];
    float *lnf_g, *lnf_b; /* (d) */
    float *w_u;           /* (d, C) unembedding */
    float *b_u;           /* (C) */
} params;

/* activations of one block for B examples (and, with the same layout, their
 * gradients; there scores and attn hold dscores and dattn) */
typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd; /* (B, T, d), (B, T), (B, T) */
    float *q, *k, *v;                 /* (B, T, d) */
    float *scores, *attn;             /* (B, h, T, T) */
    float *concat, *attproj, *res1;   /* (B, T, d): heads, concat W^O, x + attproj */
    float *ln2, *ln2_mean, *ln2_rstd; /* MLP only: (B, T, d), (B, T), (B, T) */
    float *fc, *fc_act;               /* (B, T, 4d) before and after the non-linearity */
    float *proj, *res2;               /* (B, T, d): fc_act W_proj + b, res1 + proj */
} layer_acts;

typedef struct {
    float *x0; /* (B, T, d) embedding + position: the residual stream into layer 1 */
    layer_acts layer[LEARN_MAX_LAYERS];
    float *lnf, *lnf_mean, *lnf_rstd; /* (B, T, d), (B, T), (B, T) */
    float *logits, *probs;            /* (B, T, C) */
} acts;

struct learn_model {
    learn_config cfg; /* resolved */
    const learn_task_info *task;
    int T, V, C, d, h, L, B, n_held;
    long steps;

    params p, g; /* parameters and their gradients */
    float *param_mem, *grad_mem, *adam_mem;
    size_t n_params;
    learn_tensor tensors[MAX_TENSORS];
    char names[MAX_TENSORS][32];
    int n_tensors;

    acts a, da; /* activations and their gradients */
    float *act_mem;

    int *batch_tok, *batch_tgt; /* (B, T) */
    int *held_tok, *held_tgt;   /* (n_held, T) */
    int *int_mem;
    uint64_t rng_train;
};

/* ------------------------------------------------------------------------------ */
/* configuration                                                                   */

void learn_config_resolve(learn_config *cfg) {
    const learn_task_info *t = learn_task(cfg->task);
    if (cfg->layers == 0) cfg->layers = t ? t->default_layers : 1;
    if (cfg->h == 0) cfg->h = 4;
    if (cfg->d_model == 0) cfg->d_model = 32;
    if (cfg->batch == 0) cfg->batch = LEARN_DEFAULT_BATCH;
    if (cfg->lr == 0.0f) cfg->lr = LEARN_DEFAULT_LR;
    if (cfg->seed == 0) cfg->seed = 1;
    if (cfg->heldout == 0) cfg->heldout = LEARN_DEFAULT_HELDOUT;
}

int learn_config_check(const learn_config *c, char *err, size_t errlen) {
    if (!learn_task(c->task)) {
        snprintf(err, errlen, "--train: unknown task");
        return -1;
    }
    if (c->layers < 1 || c->layers > LEARN_MAX_LAYERS) {
        snprintf(err, errlen, "--layers %d: must be 1 or 2", c->layers);
        return -1;
    }
    if (c->d_model < 1 || c->d_model > LEARN_MAX_D_MODEL) {
        snprintf(err, errlen, "--d-model %d: must be between 1 and %d for training", c->d_model,
                 LEARN_MAX_D_MODEL);
        return -1;
    }
    if (c->h < 1 || c->h > c->d_model || c->d_model % c->h != 0) {
        snprintf(err, errlen, "--heads %d: must divide d_model (%d)", c->h, c->d_model);
        return -1;
    }
    if (c->batch < 1 || c->batch > LEARN_MAX_BATCH) {
        snprintf(err, errlen, "--batch %d: must be between 1 and %d", c->batch, LEARN_MAX_BATCH);
        return -1;
    }
    if (!(c->lr > 0.0f && c->lr <= 1.0f)) {
        snprintf(err, errlen, "--lr %g: must be in (0, 1]", (double)c->lr);
        return -1;
    }
    if (c->heldout < 1 || c->heldout > LEARN_MAX_HELDOUT) {
        snprintf(err, errlen, "held-out size %d: must be between 1 and %d", c->heldout,
                 LEARN_MAX_HELDOUT);
        return -1;
    }
    if (c->act != LEARN_ACT_GELU && c->act != LEARN_ACT_RELU) {
        snprintf(err, errlen, "activation: must be GELU or ReLU");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------ */
/* carving the blocks                                                              */

/* Returns base + *off (NULL while counting, when base is NULL) and moves *off on. */
static float *take(float *base, size_t *off, size_t n) {
    float *r = base ? base + *off : NULL;
    *off += n;
    return r;
}

/* Points p at the flat block base (NULL: only count) and, when record is 1,
 * records each tensor's name and shape. Returns the number of floats. */
static size_t params_point(learn_model *l, params *p, float *base, int record) {
    const int d = l->d, ff = 4 * l->d;
    size_t off = 0;
    int n = 0;
#define PARAM(field, nm, rows, cols)                                                               \
    do {                                                                                           \
        (field) = take(base, &off, (size_t)(rows) * (cols));                                       \
        if (record) {                                                                              \
            learn_tensor *t_ = &l->tensors[n];                                                     \
            snprintf(l->names[n], sizeof l->names[n], "%s", (nm));                                 \
            t_->name = l->names[n];                                                                \
            t_->ndim = (rows) == 1 ? 1 : 2;                                                        \
            t_->shape[0] = (rows) == 1 ? (cols) : (rows);                                          \
            t_->shape[1] = (rows) == 1 ? 0 : (cols);                                               \
            t_->data = (field);                                                                    \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    char nm[32];
    PARAM(p->wte, "wte", l->V, d);
    PARAM(p->wpe, "wpe", l->T, d);
    for (int i = 0; i < l->L; i++) {
        layer_params *lp = &p->layer[i];
#define LNAME(s) (snprintf(nm, sizeof nm, "layer%d.%s", i + 1, (s)), nm)
        PARAM(lp->ln1_g, LNAME("ln1.gain"), 1, d);
        PARAM(lp->ln1_b, LNAME("ln1.bias"), 1, d);
        PARAM(lp->w_q, LNAME("W_Q"), d, d);
        PARAM(lp->w_k, LNAME("W_K"), d, d);
        PARAM(lp->w_v, LNAME("W_V"), d, d);
        PARAM(lp->w_o, LNAME("W_O"), d, d);
        if (l->cfg.mlp) {
            PARAM(lp->ln2_g, LNAME("ln2.gain"), 1, d);
            PARAM(lp->ln2_b, LNAME("ln2.bias"), 1, d);
            PARAM(lp->w_fc, LNAME("W_fc"), d, ff);
            PARAM(lp->b_fc, LNAME("b_fc"), 1, ff);
            PARAM(lp->w_proj, LNAME("W_proj"), ff, d);
            PARAM(lp->b_proj, LNAME("b_proj"), 1, d);
        }
#undef LNAME
    }
    PARAM(p->lnf_g, "lnf.gain", 1, d);
    PARAM(p->lnf_b, "lnf.bias", 1, d);
    PARAM(p->w_u, "W_U", d, l->C);
    PARAM(p->b_u, "b_U", 1, l->C);
#undef PARAM
    if (record) l->n_tensors = n;
    return off;
}

static size_t acts_point(const learn_model *l, acts *a, float *base) {
    const size_t bt = (size_t)l->B * l->T, btd = bt * l->d;
    const size_t bhtt = (size_t)l->B * l->h * l->T * l->T;
    size_t off = 0;
    a->x0 = take(base, &off, btd);
    for (int i = 0; i < l->L; i++) {
        layer_acts *la = &a->layer[i];
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
        if (l->cfg.mlp) {
            la->ln2 = take(base, &off, btd);
            la->ln2_mean = take(base, &off, bt);
            la->ln2_rstd = take(base, &off, bt);
            la->fc = take(base, &off, 4 * btd);
            la->fc_act = take(base, &off, 4 * btd);
            la->proj = take(base, &off, btd);
            la->res2 = take(base, &off, btd);
        }
    }
    a->lnf = take(base, &off, btd);
    a->lnf_mean = take(base, &off, bt);
    a->lnf_rstd = take(base, &off, bt);
    a->logits = take(base, &off, bt * l->C);
    a->probs = take(base, &off, bt * l->C);
    return off;
}

/* the residual stream out of layer i, and into it */
static float *layer_out(const learn_model *l, const acts *a, int i) {
    return l->cfg.mlp ? a->layer[i].res2 : a->layer[i].res1;
}
static float *layer_in(const learn_model *l, const acts *a, int i) {
    return i == 0 ? a->x0 : layer_out(l, a, i - 1);
}

/* ------------------------------------------------------------------------------ */
/* create / destroy                                                                */

static void init_params(learn_model *l) {
    uint64_t rng = rng_stream(l->cfg.seed, 3);
    for (int t = 0; t < l->n_tensors; t++) {
        learn_tensor *x = &l->tensors[t];
        size_t n = (size_t)x->shape[0] * (x->ndim == 2 ? x->shape[1] : 1);
        const char *dot = strrchr(x->name, '.');
        if (dot && strcmp(dot, ".gain") == 0) {
            for (size_t i = 0; i < n; i++) x->data[i] = 1.0f;
        } else if (x->ndim == 1) { /* biases */
            memset(x->data, 0, n * sizeof(float));
        } else {
            for (size_t i = 0; i < n; i++) x->data[i] = (float)(LEARN_INIT_STD * rng_normal(&rng));
        }
    }
}

learn_model *learn_create(const learn_config *cfg_in, char *err, size_t errlen) {
    learn_config cfg = *cfg_in;
    learn_config_resolve(&cfg);
    if (learn_config_check(&cfg, err, errlen) != 0) return NULL;
    learn_model *l = calloc(1, sizeof *l);
    if (!l) goto oom;
    l->cfg = cfg;
    l->task = learn_task(cfg.task);
    l->T = l->task->seq_len;
    l->V = l->task->vocab;
    l->C = l->task->classes;
    l->d = cfg.d_model;
    l->h = cfg.h;
    l->L = cfg.layers;
    l->B = cfg.batch;
    l->n_held = cfg.heldout;

    l->n_params = params_point(l, &l->p, NULL, 0);
    size_t n_acts = acts_point(l, &l->a, NULL);
    size_t n_ints = 2 * ((size_t)l->B + l->n_held) * l->T;
    l->param_mem = malloc(l->n_params * sizeof(float));
    l->grad_mem = calloc(l->n_params, sizeof(float));
    l->adam_mem = calloc(2 * l->n_params, sizeof(float));
    l->act_mem = calloc(2 * n_acts, sizeof(float));
    l->int_mem = malloc(n_ints * sizeof(int));
    if (!l->param_mem || !l->grad_mem || !l->adam_mem || !l->act_mem || !l->int_mem) goto oom;

    params_point(l, &l->g, l->grad_mem, 1); /* record the gradient pointers first ... */
    for (int t = 0; t < l->n_tensors; t++) l->tensors[t].grad = l->tensors[t].data;
    params_point(l, &l->p, l->param_mem, 1); /* ... then the parameters over them */
    acts_point(l, &l->a, l->act_mem);
    acts_point(l, &l->da, l->act_mem + n_acts);

    l->batch_tok = l->int_mem;
    l->batch_tgt = l->batch_tok + (size_t)l->B * l->T;
    l->held_tok = l->batch_tgt + (size_t)l->B * l->T;
    l->held_tgt = l->held_tok + (size_t)l->n_held * l->T;

    init_params(l);
    uint64_t held_rng = rng_stream(cfg.seed, 2);
    for (int e = 0; e < l->n_held; e++)
        learn_task_sample(l->held_tok + (size_t)e * l->T, l->held_tgt + (size_t)e * l->T, cfg.task,
                          1, &held_rng);
    l->rng_train = rng_stream(cfg.seed, 1);
    return l;
oom:
    learn_destroy(l);
    snprintf(err, errlen, "out of memory for d_model=%d h=%d batch=%d", cfg.d_model, cfg.h,
             cfg.batch);
    return NULL;
}

void learn_destroy(learn_model *l) {
    if (!l) return;
    free(l->param_mem);
    free(l->grad_mem);
    free(l->adam_mem);
    free(l->act_mem);
    free(l->int_mem);
    free(l);
}

const learn_config *learn_get_config(const learn_model *l) {
    return &l->cfg;
}

long learn_steps_done(const learn_model *l) {
    return l->steps;
}

int learn_param_count(const learn_model *l) {
    return l->n_tensors;
}

void learn_param(const learn_model *l, int i, learn_tensor *t) {
    MHA_EXPECT(i >= 0 && i < l->n_tensors);
    *t = l->tensors[i];
}

/* ------------------------------------------------------------------------------ */
/* forward and backward                                                            */

/* Forward over B <= cfg.batch examples; ablate is (layers, h) or NULL. Fills the
 * activations up to the logits. */
static void model_forward(learn_model *l, const int *tok, int B, const unsigned char *ablate) {
    const int T = l->T, d = l->d, h = l->h, N = B * T;
    acts *a = &l->a;
    encoder_forward(a->x0, tok, l->p.wte, l->p.wpe, B, T, d);
    for (int i = 0; i < l->L; i++) {
        const layer_params *lp = &l->p.layer[i];
        layer_acts *la = &a->layer[i];
        const float *x = layer_in(l, a, i);
        /* attention block: res1 = x + MHA(LN1(x)) W^O */
        layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, lp->ln1_g, lp->ln1_b, N, d);
        matmul_forward(la->q, la->ln1, lp->w_q, NULL, N, d, d);
        matmul_forward(la->k, la->ln1, lp->w_k, NULL, N, d, d);
        matmul_forward(la->v, la->ln1, lp->w_v, NULL, N, d, d);
        attention_forward(la->scores, la->attn, la->concat, la->q, la->k, la->v,
                          ablate ? ablate + (size_t)i * h : NULL, B, T, d, h);
        matmul_forward(la->attproj, la->concat, lp->w_o, NULL, N, d, d);
        residual_forward(la->res1, x, la->attproj, N * d);
        if (!l->cfg.mlp) continue;
        /* MLP block: res2 = res1 + act(LN2(res1) W_fc + b_fc) W_proj + b_proj */
        layernorm_forward(la->ln2, la->ln2_mean, la->ln2_rstd, la->res1, lp->ln2_g, lp->ln2_b, N,
                          d);
        matmul_forward(la->fc, la->ln2, lp->w_fc, lp->b_fc, N, d, 4 * d);
        act_forward(la->fc_act, la->fc, N * 4 * d, l->cfg.act);
        matmul_forward(la->proj, la->fc_act, lp->w_proj, lp->b_proj, N, 4 * d, d);
        residual_forward(la->res2, la->res1, la->proj, N * d);
    }
    layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, layer_out(l, a, l->L - 1), l->p.lnf_g,
                      l->p.lnf_b, N, d);
    matmul_forward(a->logits, a->lnf, l->p.w_u, l->p.b_u, N, d, l->C);
}

/* Backward from the gradient of the logits in da.logits; adds into l->g. */
static void model_backward(learn_model *l, const int *tok, int B) {
    const int T = l->T, d = l->d, h = l->h, N = B * T;
    const size_t nd = (size_t)N * d;
    acts *a = &l->a, *da = &l->da;
    float *dlast = layer_out(l, da, l->L - 1);
    matmul_backward(da->lnf, 0.0f, l->g.w_u, l->g.b_u, da->logits, a->lnf, l->p.w_u, N, d, l->C);
    memset(dlast, 0, nd * sizeof(float));
    layernorm_backward(dlast, l->g.lnf_g, l->g.lnf_b, da->lnf, layer_out(l, a, l->L - 1),
                       l->p.lnf_g, a->lnf_mean, a->lnf_rstd, N, d);
    for (int i = l->L - 1; i >= 0; i--) {
        const layer_params *lp = &l->p.layer[i];
        layer_params *gp = &l->g.layer[i];
        const layer_acts *la = &a->layer[i];
        layer_acts *dla = &da->layer[i];
        const float *x = layer_in(l, a, i);
        float *dx = layer_in(l, da, i);
        if (l->cfg.mlp) {
            /* res2 = res1 + proj: both get dres2 */
            memcpy(dla->res1, dla->res2, nd * sizeof(float));
            matmul_backward(dla->fc_act, 0.0f, gp->w_proj, gp->b_proj, dla->res2, la->fc_act,
                            lp->w_proj, N, 4 * d, d);
            act_backward(dla->fc, la->fc, dla->fc_act, N * 4 * d, l->cfg.act);
            matmul_backward(dla->ln2, 0.0f, gp->w_fc, gp->b_fc, dla->fc, la->ln2, lp->w_fc, N, d,
                            4 * d);
            layernorm_backward(dla->res1, gp->ln2_g, gp->ln2_b, dla->ln2, la->res1, lp->ln2_g,
                               la->ln2_mean, la->ln2_rstd, N, d);
        }
        /* res1 = x + attproj: both get dres1 */
        memcpy(dx, dla->res1, nd * sizeof(float));
        matmul_backward(dla->concat, 0.0f, gp->w_o, NULL, dla->res1, la->concat, lp->w_o, N, d, d);
        attention_backward(dla->q, dla->k, dla->v, dla->attn, dla->scores, dla->concat, la->q,
                           la->k, la->v, la->attn, NULL, B, T, d, h);
        matmul_backward(dla->ln1, 0.0f, gp->w_q, NULL, dla->q, la->ln1, lp->w_q, N, d, d);
        matmul_backward(dla->ln1, 1.0f, gp->w_k, NULL, dla->k, la->ln1, lp->w_k, N, d, d);
        matmul_backward(dla->ln1, 1.0f, gp->w_v, NULL, dla->v, la->ln1, lp->w_v, N, d, d);
        layernorm_backward(dx, gp->ln1_g, gp->ln1_b, dla->ln1, x, lp->ln1_g, la->ln1_mean,
                           la->ln1_rstd, N, d);
    }
    encoder_backward(l->g.wte, l->g.wpe, da->x0, tok, B, T, d);
}

float learn_gradients(learn_model *l, const int *tokens, const int *targets, int B) {
    MHA_EXPECT(B >= 1 && B <= l->B);
    const int N = B * l->T;
    model_forward(l, tokens, B, NULL);
    int count = 0;
    double sum = crossentropy_forward(l->a.probs, l->a.logits, targets, N, l->C, &count);
    memset(l->grad_mem, 0, l->n_params * sizeof(float));
    crossentropy_backward(l->da.logits, l->a.probs, targets, N, l->C,
                          count ? 1.0f / (float)count : 0.0f);
    model_backward(l, tokens, B);
    return count ? (float)(sum / count) : 0.0f;
}

void learn_update(learn_model *l) {
    l->steps++;
    adamw_update(l->param_mem, l->grad_mem, l->adam_mem, l->adam_mem + l->n_params, l->n_params,
                 l->cfg.lr, ADAM_BETA1, ADAM_BETA2, ADAM_EPS, LEARN_WEIGHT_DECAY, l->steps);
}

float learn_step(learn_model *l) {
    const int T = l->T;
    for (int e = 0; e < l->B; e++)
        learn_task_sample(l->batch_tok + (size_t)e * T, l->batch_tgt + (size_t)e * T, l->cfg.task,
                          0, &l->rng_train);
    float loss = learn_gradients(l, l->batch_tok, l->batch_tgt, l->B);
    learn_update(l);
    return loss;
}

/* ------------------------------------------------------------------------------ */
/* evaluation                                                                      */

void learn_eval(learn_model *l, const unsigned char *ablate, float *acc, float *loss) {
    const int T = l->T, C = l->C;
    long correct = 0, total = 0;
    double loss_sum = 0.0;
    for (int e0 = 0; e0 < l->n_held; e0 += l->B) {
        int B = l->n_held - e0 < l->B ? l->n_held - e0 : l->B;
        const int *tok = l->held_tok + (size_t)e0 * T, *tgt = l->held_tgt + (size_t)e0 * T;
        model_forward(l, tok, B, ablate);
        int count = 0;
        loss_sum += crossentropy_forward(l->a.probs, l->a.logits, tgt, B * T, C, &count);
        total += count;
        for (int r = 0; r < B * T; r++) {
            if (tgt[r] < 0) continue;
            const float *z = l->a.logits + (size_t)r * C;
            int best = 0;
            for (int c = 1; c < C; c++)
                if (z[c] > z[best]) best = c;
            correct += best == tgt[r];
        }
    }
    if (acc) *acc = total ? (float)correct / (float)total : 0.0f;
    if (loss) *loss = total ? (float)(loss_sum / total) : 0.0f;
}

void learn_head_masses(learn_model *l, float *mass_prev, float *mass_first, float *mass_induction) {
    const int T = l->T, h = l->h, L = l->L;
    double sp[LEARN_MAX_LAYERS * LEARN_MAX_D_MODEL] = {0};
    double sf[LEARN_MAX_LAYERS * LEARN_MAX_D_MODEL] = {0};
    double si[LEARN_MAX_LAYERS * LEARN_MAX_D_MODEL] = {0};
    long rows = 0, ind_rows = 0;
    for (int e0 = 0; e0 < l->n_held; e0 += l->B) {
        int B = l->n_held - e0 < l->B ? l->n_held - e0 : l->B;
        const int *tok = l->held_tok + (size_t)e0 * T, *tgt = l->held_tgt + (size_t)e0 * T;
        model_forward(l, tok, B, NULL);
        for (int b = 0; b < B; b++)
            for (int r = 0; r < T; r++) {
                if (tgt[b * T + r] < 0) continue;
                int prev_occ = -1; /* the previous occurrence of the current token */
                for (int j = r - 1; j >= 0 && prev_occ < 0; j--)
                    if (tok[b * T + j] == tok[b * T + r]) prev_occ = j;
                rows++;
                ind_rows += prev_occ >= 0;
                for (int i = 0; i < L; i++)
                    for (int hd = 0; hd < h; hd++) {
                        const float *ar =
                            l->a.layer[i].attn + (((size_t)b * h + hd) * T + r) * (size_t)T;
                        sp[i * h + hd] += r >= 1 ? ar[r - 1] : 0.0;
                        sf[i * h + hd] += ar[0];
                        if (prev_occ >= 0) si[i * h + hd] += ar[prev_occ + 1];
                    }
            }
    }
    for (int k = 0; k < L * h; k++) {
        mass_prev[k] = rows ? (float)(sp[k] / rows) : 0.0f;
        mass_first[k] = rows ? (float)(sf[k] / rows) : 0.0f;
        mass_induction[k] = ind_rows ? (float)(si[k] / ind_rows) : 0.0f;
    }
}

void learn_example(const learn_model *l, const int **tokens, const int **targets) {
    if (tokens) *tokens = l->held_tok;
    if (targets) *targets = l->held_tgt;
}

void learn_snapshot(learn_model *l, float *attn) {
    const size_t htt = (size_t)l->h * l->T * l->T;
    model_forward(l, l->held_tok, 1, NULL);
    for (int i = 0; i < l->L; i++)
        memcpy(attn + (size_t)i * htt, l->a.layer[i].attn, htt * sizeof(float));
}

void learn_example_tensors(learn_model *l, learn_layer_tensors *layers, const float **logits) {
    model_forward(l, l->held_tok, 1, NULL);
    for (int i = 0; i < l->L; i++) {
        const layer_acts *la = &l->a.layer[i];
        learn_layer_tensors *t = &layers[i];
        t->x = layer_in(l, &l->a, i);
        t->ln1 = la->ln1;
        t->q = la->q;
        t->k = la->k;
        t->v = la->v;
        t->scores = la->scores;
        t->attn = la->attn;
        t->concat = la->concat;
        t->out = la->attproj;
        t->resid = layer_out(l, &l->a, i);
    }
    if (logits) *logits = l->a.logits;
}
