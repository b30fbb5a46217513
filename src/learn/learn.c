/* learn.c: the trainer. Owns one transformer (transformer.h: parameters,
 * gradients, activations, forward and backward), its AdamW moments, the batches
 * and the held-out set; trains it on a toy task and evaluates it there. */
#include "learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "layers.h"
#include "mha.h"
#include "rng.h"
#include "transformer.h"

#define ADAM_BETA1 0.9f
#define ADAM_BETA2 0.999f
#define ADAM_EPS 1e-8f

struct learn_model {
    learn_config cfg; /* resolved */
    const learn_task_info *task;
    int T, V, C, d, h, L, B, n_held;
    long steps;

    transformer *tf; /* parameters, gradients, activations */
    float *adam_mem; /* AdamW's two moments, 2 n_params floats */
    int shards;      /* learn_shards: 1, or 2 with the second half's gradients below */
    float *grads2;   /* (n_params) the second shard's gradients, g2 pointing into it */
    tf_params g2;

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
    if (cfg->d_model == 0) cfg->d_model = learn_task_d_model(cfg->task);
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
/* create / destroy                                                                */

/* learn_create, or with shape (vocab, classes, T) a learner of that shape with no
   held-out set (learn_create_shape) */
static learn_model *create(const learn_config *cfg_in, const int *shape, char *err, size_t errlen) {
    learn_config cfg = *cfg_in;
    learn_config_resolve(&cfg);
    if (learn_config_check(&cfg, err, errlen) != 0) return NULL;
    learn_model *l = calloc(1, sizeof *l);
    if (!l) goto oom;
    l->cfg = cfg;
    l->task = learn_task(cfg.task);
    l->T = shape ? shape[2] : l->task->seq_len;
    l->V = shape ? shape[0] : l->task->vocab;
    l->C = shape ? shape[1] : l->task->classes;
    l->d = cfg.d_model;
    l->h = cfg.h;
    l->L = cfg.layers;
    l->B = cfg.batch;
    l->n_held = shape ? 0 : cfg.heldout;

    const tf_config tc = {.vocab = l->V,
                          .ctx = l->T,
                          .classes = l->C,
                          .layers = l->L,
                          .h = l->h,
                          .d_model = l->d,
                          .mlp = cfg.mlp,
                          .act = cfg.act == LEARN_ACT_RELU ? TF_ACT_RELU : TF_ACT_GELU};
    l->tf = tf_create(&tc, l->B, l->T, err, errlen);
    if (!l->tf) {
        learn_destroy(l);
        return NULL;
    }
    size_t n_ints = 2 * ((size_t)l->B + l->n_held) * l->T;
    l->adam_mem = calloc(2 * l->tf->n_params, sizeof(float));
    l->int_mem = malloc(n_ints * sizeof(int));
    if (!l->adam_mem || !l->int_mem) goto oom;
    l->shards = learn_config_shards(&cfg, l->V, l->C, l->T);
    if (l->shards > 1 && !(l->grads2 = tf_grads_alloc(l->tf, &l->g2))) goto oom;

    l->batch_tok = l->int_mem;
    l->batch_tgt = l->batch_tok + (size_t)l->B * l->T;
    l->held_tok = l->batch_tgt + (size_t)l->B * l->T;
    l->held_tgt = l->held_tok + (size_t)l->n_held * l->T;

    uint64_t init_rng = rng_stream(cfg.seed, 3);
    tf_init(l->tf, &init_rng, l->task->init_std > 0.0f ? l->task->init_std : LEARN_INIT_STD);
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

learn_model *learn_create(const learn_config *cfg, char *err, size_t errlen) {
    return create(cfg, NULL, err, errlen);
}

learn_model *learn_create_shape(const learn_config *cfg, int vocab, int classes, int seq_len,
                                char *err, size_t errlen) {
    if (vocab < 1 || vocab > TF_MAX_VOCAB || classes < 1 || classes > TF_MAX_VOCAB || seq_len < 1 ||
        seq_len > TF_MAX_CTX) {
        snprintf(err, errlen, "learner shape %d, %d, %d: out of range", vocab, classes, seq_len);
        return NULL;
    }
    const int shape[3] = {vocab, classes, seq_len};
    return create(cfg, shape, err, errlen);
}

void learn_destroy(learn_model *l) {
    if (!l) return;
    tf_destroy(l->tf);
    free(l->adam_mem);
    free(l->grads2);
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
    return l->tf->n_tensors;
}

void learn_param(const learn_model *l, int i, learn_tensor *t) {
    MHA_EXPECT(i >= 0 && i < l->tf->n_tensors);
    const tf_tensor *x = &l->tf->tensors[i];
    t->name = x->name;
    t->ndim = x->ndim;
    t->shape[0] = x->shape[0];
    t->shape[1] = x->shape[1];
    t->data = x->data;
    t->grad = x->grad;
}

/* ------------------------------------------------------------------------------ */
/* forward and backward                                                            */

double learn_step_flops(const learn_config *c, int vocab, int classes, int T) {
    (void)vocab; /* the embedding's backward is a sum, no product */
    const double d = c->d_model, N = (double)c->batch * T, L = c->layers;
    const double weights = L * (4.0 * d * d + (c->mlp ? 8.0 * d * d : 0.0)) + d * classes;
    /* forward 2 N per weight, backward twice that; attention: Q K^T and A V on the
       visible half of (T, T) forward, four such products backward */
    return 6.0 * N * weights + L * 6.0 * c->batch * (double)T * T * d;
}

int learn_config_shards(const learn_config *c, int vocab, int classes, int T) {
    return c->batch >= 2 && learn_step_flops(c, vocab, classes, T) >= LEARN_SHARD_MIN_FLOPS ? 2 : 1;
}

int learn_shards(const learn_model *l) {
    return l->shards;
}

/* One half of a batch (or the whole of it): forward, loss, backward into its own
   gradient block. */
typedef struct {
    learn_model *l;
    const int *tok, *tgt;
    int b0[2], B[2];
    float scale;   /* 1 / the whole batch's target count */
    double sum[2]; /* each half's summed cross-entropy */
} shard_job;

static void shard_task(void *ctx, int s) {
    shard_job *j = ctx;
    learn_model *l = j->l;
    transformer *tf = l->tf;
    const int T = l->T, B = j->B[s], N = B * T;
    const int *tok = j->tok + (size_t)j->b0[s] * T, *tgt = j->tgt + (size_t)j->b0[s] * T;
    tf_acts a, da;
    tf_acts_rows(&a, &tf->cfg, &tf->a, j->b0[s], B, T);
    tf_acts_rows(&da, &tf->cfg, &tf->da, j->b0[s], B, T);
    a.lean = 1; /* what the backward reads, no more */
    tf_forward(tf, &a, tok, B, T, NULL);
    int count = 0;
    j->sum[s] = crossentropy_forward(a.probs, a.logits, tgt, N, l->C, &count);
    memset(s == 0 ? tf->grads : l->grads2, 0, tf->n_params * sizeof(float));
    crossentropy_backward(da.logits, a.probs, tgt, N, l->C, j->scale);
    tf_backward_rows(tf, &a, &da, s == 0 ? &tf->g : &l->g2, tok, B, T);
}

float learn_gradients(learn_model *l, const int *tokens, const int *targets, int B) {
    MHA_EXPECT(B >= 1 && B <= l->B);
    const int N = B * l->T;
    transformer *tf = l->tf;
    int count = 0;
    for (int r = 0; r < N; r++) count += targets[r] >= 0;
    const int halves = l->shards > 1 && B >= 2 ? 2 : 1;
    shard_job j = {.l = l,
                   .tok = tokens,
                   .tgt = targets,
                   .b0 = {0, (B + 1) / 2},
                   .B = {halves == 2 ? (B + 1) / 2 : B, B / 2},
                   .scale = count ? 1.0f / (float)count : 0.0f};
    if (halves == 1) {
        shard_task(&j, 0); /* the whole batch, its products on every worker they are worth */
        return count ? (float)(j.sum[0] / count) : 0.0f;
    }
    /* the two halves side by side (each on one thread), then one gradient: the same
       arithmetic whichever thread runs which half, or one thread both */
    mm_parallel(2, mm_workers_for(learn_step_flops(&l->cfg, l->V, l->C, l->T)), shard_task, &j);
    residual_forward(tf->grads, tf->grads, l->grads2, tf->n_params);
    return count ? (float)((j.sum[0] + j.sum[1]) / count) : 0.0f;
}

void learn_update(learn_model *l) {
    l->steps++;
    const size_t n = l->tf->n_params;
    adamw_update(l->tf->params, l->tf->grads, l->adam_mem, l->adam_mem + n, n, l->cfg.lr,
                 ADAM_BETA1, ADAM_BETA2, ADAM_EPS, LEARN_WEIGHT_DECAY, l->steps);
}

float learn_step(learn_model *l) {
    MHA_EXPECT(l->n_held > 0); /* not a learner of learn_create_shape */
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
        tf_forward(l->tf, &l->tf->a, tok, B, T, ablate);
        int count = 0;
        loss_sum += crossentropy_forward(l->tf->a.probs, l->tf->a.logits, tgt, B * T, C, &count);
        total += count;
        for (int r = 0; r < B * T; r++) {
            if (tgt[r] < 0) continue;
            const float *z = l->tf->a.logits + (size_t)r * C;
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
    long rows = 0, ind_rows = 0; /* rows: i >= 2, where keys i-1 and 0 differ */
    for (int e0 = 0; e0 < l->n_held; e0 += l->B) {
        int B = l->n_held - e0 < l->B ? l->n_held - e0 : l->B;
        const int *tok = l->held_tok + (size_t)e0 * T, *tgt = l->held_tgt + (size_t)e0 * T;
        tf_forward(l->tf, &l->tf->a, tok, B, T, NULL);
        for (int b = 0; b < B; b++)
            for (int r = 0; r < T; r++) {
                if (tgt[b * T + r] < 0) continue;
                int prev_occ = -1; /* the previous occurrence of the current token */
                for (int j = r - 1; j >= 0 && prev_occ < 0; j--)
                    if (tok[b * T + j] == tok[b * T + r]) prev_occ = j;
                rows += r >= 2;
                ind_rows += prev_occ >= 0;
                for (int i = 0; i < L; i++)
                    for (int hd = 0; hd < h; hd++) {
                        const float *ar =
                            l->tf->a.layer[i].attn + (((size_t)b * h + hd) * T + r) * (size_t)T;
                        if (r >= 2) sp[i * h + hd] += ar[r - 1], sf[i * h + hd] += ar[0];
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
    tf_forward(l->tf, &l->tf->a, l->held_tok, 1, l->T, NULL);
    for (int i = 0; i < l->L; i++)
        memcpy(attn + (size_t)i * htt, l->tf->a.layer[i].attn, htt * sizeof(float));
}

void learn_example_tensors(learn_model *l, learn_layer_tensors *layers, const float **logits) {
    const tf_acts *a = &l->tf->a;
    tf_forward(l->tf, &l->tf->a, l->held_tok, 1, l->T, NULL);
    for (int i = 0; i < l->L; i++) {
        const tf_layer_acts *la = &a->layer[i];
        learn_layer_tensors *t = &layers[i];
        t->x = tf_layer_in(&l->tf->cfg, a, i);
        t->ln1 = la->ln1;
        t->q = la->q;
        t->k = la->k;
        t->v = la->v;
        t->scores = la->scores;
        t->attn = la->attn;
        t->concat = la->concat;
        t->out = la->attproj;
        t->w_o = l->tf->p.layer[i].w_o;
        t->resid = tf_layer_out(&l->tf->cfg, a, i);
    }
    if (logits) *logits = a->logits;
}
