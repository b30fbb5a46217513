/* fill.h: an encoder's "fill the blank": the masked-LM head (model_spec's mlm) on
 * chosen positions of a run (tf_infer), each position's top k token ids and their
 * probabilities. Hugging Face's heads: dense (d_model to the embeddings' width),
 * the activation, LayerNorm, the decoder (the token embedding when tied) plus its
 * bias, softmax over the vocabulary. Every product through the core's sgemm. */
#ifndef MHAVIZ_LEARN_FILL_H
#define MHAVIZ_LEARN_FILL_H

#include "transformer.h"

#define TF_FILL_MAX_K 64

typedef struct {
    const transformer *tf;
    int cap;              /* positions at most */
    float *x, *hid, *act; /* (cap, d), (cap, E), (cap, E) */
    float *mean, *rstd;   /* (cap) */
    float *logits;        /* (cap, V) */
    float *mem_;
} tf_fill;

/* For up to cap positions at a time of tf's runs; NULL when tf has no masked-LM head
 * (tf->spec.mlm 0), on a bad cap or out of memory. */
tf_fill *tf_fill_create(const transformer *tf, int cap);
void tf_fill_destroy(tf_fill *f); /* NULL is fine */

/* The head on positions pos[0..m) (each < t->n, m <= f->cap) of t's last run (its
 * final rows, t->lnf): ids and p (m, k), k <= TF_FILL_MAX_K and <= vocab, each row
 * the k most probable tokens, most probable first (ties: lower id first), with
 * their softmax probabilities. f->logits keeps the m rows of logits. */
void tf_fill_run(tf_fill *f, const tf_infer *t, const int *pos, int m, int k, int *ids, float *p);

#endif
