/* mha.h: the multi-head attention core. Configuration, weights, embeddings and
 * the forward pass, with every intermediate tensor kept for the view to draw.
 * Knows nothing of windows, fonts or files; links only OpenBLAS and libm. */
#ifndef MHAVIZ_MHA_H
#define MHAVIZ_MHA_H

#include <stddef.h>
#include <stdint.h>

#include "tok.h"

#define MHA_MAX_N 512
#define MHA_MAX_D_MODEL 4096

#define MHA_DEFAULT_H 4
#define MHA_DEFAULT_D_MODEL 64
#define MHA_DEFAULT_SEED 1

/* Size of the error buffers the core fills. */
#define MHA_ERR_LEN 256

/* Invariant check: a shape that cannot happen is a bug, not a runtime error. */
#define MHA_EXPECT(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) mha_fatal(__FILE__, __LINE__, #cond);                                         \
    } while (0)
void mha_fatal(const char *file, int line, const char *what);

typedef enum { MHA_MASK_NONE = 0, MHA_MASK_CAUSAL = 1 } mha_mask;

/* Zero means "default" for h, d_model and seed (see mha_config_resolve);
 * mask zero is "none" and no_scale zero means scores are divided by sqrt(d_k). */
typedef struct {
    int h;         /* number of heads, divides d_model */
    int d_model;   /* model width */
    uint64_t seed; /* weights and embeddings; 0 means MHA_DEFAULT_SEED */
    mha_mask mask; /* none or causal */
    int no_scale;  /* 1: scores are Q K^T without the 1/sqrt(d_k) */
} mha_config;

/* Fills the zero fields of cfg with their defaults. */
void mha_config_resolve(mha_config *cfg);

/* Checks cfg (after resolve) for n tokens against every limit:
 * 1 <= n <= 512, 1 <= d_model <= 4096, 1 <= h <= d_model, h divides d_model.
 * Returns 0 if valid, -1 with a one-line message in err otherwise. */
int mha_config_check(const mha_config *cfg, int n, char *err, size_t errlen);

/* The model: weights for (seed, d_model), the input X for the current tokens,
 * and every activation of the forward pass. Row-major float32 throughout.
 * All tensors are carved out of one allocation made when the shape (n, d_model, h)
 * changes; a forward at a steady shape allocates nothing. */
typedef struct {
    mha_config cfg; /* resolved */
    int n;          /* tokens */
    int d_k;        /* = d_v = d_model / h */

    float *w_q;    /* (d_model, d_model); head i uses columns [i*d_k, (i+1)*d_k) */
    float *w_k;    /* (d_model, d_model) */
    float *w_v;    /* (d_model, d_model) */
    float *w_o;    /* (d_model, d_model); head i uses rows [i*d_k, (i+1)*d_k) */
    float *x;      /* (n, d_model) token embedding + positional encoding */
    float *q;      /* (n, d_model) = X W^Q; head i is columns [i*d_k, (i+1)*d_k) */
    float *k;      /* (n, d_model) = X W^K */
    float *v;      /* (n, d_model) = X W^V */
    float *scores; /* (h, n, n) scaled scores, -inf where masked */
    float *attn;   /* (h, n, n) row-wise softmax of scores */
    float *heads;  /* (h, n, d_k) head_i = attn_i V_i */
    float *concat; /* (n, d_model) = Concat(head_1 .. head_h) */
    float *out;    /* (n, d_model) = concat W^O */

    /* private: allocation bookkeeping */
    float *mem_;
    size_t mem_floats_;
    int alloc_n_, alloc_d_, alloc_h_;
    int weights_d_;
    uint64_t weights_seed_;
    unsigned long allocations_; /* count of (re)allocations, for tests and --bench */
} mha_model;

/* Creates an empty model; returns NULL on out-of-memory. */
mha_model *mha_model_create(void);
/* Frees the model and everything it owns; NULL is fine. */
void mha_model_destroy(mha_model *m);

/* Sets the configuration and tokens: checks every limit, (re)allocates if the
 * shape changed, regenerates weights if (seed, d_model) changed, and computes X.
 * Does not run the forward pass. Returns 0, or -1 with a message in err; the
 * model is then unchanged (out of memory keeps the old block, shape and numbers). */
int mha_model_set(mha_model *m, const mha_config *cfg, const tok_list *toks, char *err,
                  size_t errlen);

/* Runs the forward pass on the model's X and weights, filling q, k, v, scores,
 * attn, heads, concat and out. Every matrix product goes through cblas_sgemm. */
void mha_forward(mha_model *m);

/* Convenience: mha_model_set then mha_forward. */
int mha_model_compute(mha_model *m, const mha_config *cfg, const tok_list *toks, char *err,
                      size_t errlen);

/* Row-wise softmax in place over a (rows, cols) matrix: the row max is
 * subtracted first; -inf entries become exactly 0. A row that is all -inf
 * (cannot happen under the masks we make) becomes all zeros, never NaN. */
void mha_softmax_rows(float *a, int rows, int cols);

/* Weights: fills w (d, d) with Glorot/Xavier-uniform values, limit sqrt(6 / (2 d)),
 * drawn from a stream fixed by (seed, d, which); which is 0..3 for Q, K, V, O. */
void mha_weights_init(float *w, uint64_t seed, int d, int which);

/* Token embedding: fills e (d) with N(0, 1) values fixed by (token text, seed, d). */
void mha_embed_token(float *e, const char *token, uint64_t seed, int d);

/* Sinusoidal positional encoding for position pos added into e (d):
 * PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)). */
void mha_add_positional(float *e, int pos, int d);

#endif
