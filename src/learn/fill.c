/* fill.c: the masked-LM head on chosen positions of a run, and the top k of each
 * (fill.h). Written from Hugging Face's BertLMPredictionHead, RobertaLMHead,
 * DistilBertForMaskedLM and AlbertMLMHead: one order of operations for all four,
 * the spec saying the activation, widths and whether the decoder is tied. */
#include "fill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "mha.h"

tf_fill *tf_fill_create(const transformer *tf, int cap) {
    const model_spec *s = &tf->spec;
    if (!s->mlm || cap < 1 || cap > s->ctx) return NULL;
    const size_t d = (size_t)s->d_model, e = (size_t)spec_emb_dim(s), c = (size_t)cap;
    tf_fill *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->mem_ = malloc((c * d + 2 * c * e + 2 * c + c * (size_t)s->vocab) * sizeof(float));
    if (!f->mem_) {
        free(f);
        return NULL;
    }
    f->tf = tf;
    f->cap = cap;
    f->x = f->mem_;
    f->hid = f->x + c * d;
    f->act = f->hid + c * e;
    f->mean = f->act + c * e;
    f->rstd = f->mean + c;
    f->logits = f->rstd + c;
    return f;
}

void tf_fill_destroy(tf_fill *f) {
    if (!f) return;
    free(f->mem_);
    free(f);
}

/* The k largest of row (V) into ids, p as probabilities: softmax with the row's
   maximum subtracted, the sum in double. Insertion into the k kept, larger first. */
static void top_k(const float *row, int V, int k, int *ids, float *p) {
    float mx = row[0];
    for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
    int got = 0;
    for (int v = 0; v < V; v++) {
        if (got == k && row[v] <= row[ids[k - 1]]) continue;
        int at = got < k ? got++ : k - 1;
        while (at > 0 && row[ids[at - 1]] < row[v]) {
            ids[at] = ids[at - 1];
            at--;
        }
        ids[at] = v;
    }
    for (int j = 0; j < k; j++) p[j] = (float)(exp((double)row[ids[j]] - mx) / sum);
}

void tf_fill_run(tf_fill *f, const tf_infer *t, const int *pos, int m, int k, int *ids, float *p) {
    const transformer *tf = f->tf;
    const model_spec *s = &tf->spec;
    const tf_params *w = &tf->p;
    const int d = s->d_model, e = spec_emb_dim(s), V = s->vocab;
    MHA_EXPECT(t->tf == tf && m >= 1 && m <= f->cap && k >= 1 && k <= TF_FILL_MAX_K && k <= V);
    for (int i = 0; i < m; i++) {
        MHA_EXPECT(pos[i] >= 0 && pos[i] < t->n);
        memcpy(f->x + (size_t)i * d, t->lnf + (size_t)pos[i] * d, (size_t)d * sizeof(float));
    }
    /* pass 1: the transform, dense then the activation then LayerNorm */
    matmul_forward(f->hid, f->x, w->mlm_dense, w->mlm_dense_b, m, d, e);
    const tf_act act = s->mlm_act == SPEC_MLP_GELU_ERF ? TF_ACT_GELU
                       : s->mlm_act == SPEC_MLP_RELU   ? TF_ACT_RELU
                                                       : TF_ACT_GELU_TANH;
    act_forward(f->act, f->hid, (size_t)m * e, act);
    layernorm_forward(f->act, f->mean, f->rstd, f->act, w->mlm_ln_g, w->mlm_ln_b, m, e,
                      s->norm_eps);
    /* pass 2: the decoder, logits = h dec^T + bias, dec (V, E) */
    unembed_tied_forward(f->logits, f->act, w->mlm_dec ? w->mlm_dec : w->wte, m, e, V);
    for (int i = 0; i < m; i++) {
        float *row = f->logits + (size_t)i * V;
        for (int v = 0; v < V; v++) row[v] += w->mlm_bias[v];
        top_k(row, V, k, ids + (size_t)i * k, p + (size_t)i * k);
    }
}
