/* mha.h: the multi-head attention core. Configuration, weights, embeddings and
 * the forward pass, with every intermediate tensor kept for the view to draw.
 * Knows nothing of windows, fonts or files; links only OpenBLAS and libm. */
#ifndef MHAVIZ_MHA_H
#define MHAVIZ_MHA_H

#include <stddef.h>
#include <stdint.h>

#include "expect.h" /* MHA_EXPECT */
#include "layer.h"
#include "source.h"
#include "tok.h"

#define MHA_MAX_N 512
#define MHA_MAX_D_MODEL 4096

#define MHA_DEFAULT_H 4
#define MHA_DEFAULT_D_MODEL 64
#define MHA_DEFAULT_SEED 1

/* Size of the error buffers the core fills. */
#define MHA_ERR_LEN 256

typedef enum { MHA_MASK_NONE = 0, MHA_MASK_CAUSAL = 1 } mha_mask;

/* How W^Q and W^K are made: random (Glorot, see mha_weights_init) or designed so
 * that each head shows a named behaviour (see "Designed heads" below). */
typedef enum { MHA_WEIGHTS_RANDOM = 0, MHA_WEIGHTS_PATTERNS = 1 } mha_weights;

#define MHA_PAD_TOKEN "[PAD]"    /* the text of a padding position */
#define MHA_MIN_TEMPERATURE 0.05 /* double: the float 0.05f is just above it */
#define MHA_MAX_TEMPERATURE 20.0
#define MHA_ABLATE_WORDS (MHA_MAX_D_MODEL / 64) /* bit set of up to 4096 heads */

/* Zero means "default" for every field (see mha_config_resolve): h, d_model and
 * seed take their defaults; mask zero is "none", no_scale zero means scores are
 * divided by sqrt(d_k), pad zero is no padding, temperature zero is 1, weights
 * zero is random and an all-zero ablate set ablates nothing. */
typedef struct {
    int h;               /* number of heads, divides d_model */
    int d_model;         /* model width */
    uint64_t seed;       /* weights and embeddings; 0 means MHA_DEFAULT_SEED */
    mha_mask mask;       /* none or causal */
    int no_scale;        /* 1: scores are Q K^T without the 1/sqrt(d_k) */
    int pad;             /* 0: none; N: the text is padded to N positions with [PAD] */
    float temperature;   /* T: scores are divided by T too; 0.05..20, 0 means 1 */
    mha_weights weights; /* random (default) or designed heads */
    uint64_t ablate[MHA_ABLATE_WORDS]; /* bit i (0-based head i) set: head i is ablated */
    int kv_heads; /* K/V heads shared by groups of h / kv_heads query heads, each one's W^K
                     and W^V columns the mean of its group's (as GQA is made from multi-head
                     weights); 0 or h: one per head */
} mha_config;

/* Head ablation as a bit set in cfg->ablate: head is 0-based. */
void mha_config_set_ablated(mha_config *cfg, int head, int ablated);
int mha_config_is_ablated(const mha_config *cfg, int head);
/* Number of heads in the set (any index, also >= h). */
int mha_config_ablated_count(const mha_config *cfg);

/* Fills the zero fields of cfg with their defaults. */
void mha_config_resolve(mha_config *cfg);

/* Checks cfg (after resolve; a zero temperature counts as 1) for a text of n
 * tokens against every limit:
 * 1 <= n <= 512, 1 <= d_model <= 4096, 1 <= h <= d_model, h divides d_model;
 * pad 0 or n <= pad <= 512; temperature 0.05..20; every ablated head below h;
 * and the model's tensors (mha_model_bytes) within MHA_MAX_MODEL_BYTES.
 * Ablating every head is allowed (MultiHead is then 0).
 * Returns 0 if valid, -1 with a one-line message in err otherwise. */
int mha_config_check(const mha_config *cfg, int n, char *err, size_t errlen);

/* The bound on the model's tensors: 1.5 GiB. The scores and the attention weights
 * grow as 2 h n^2 floats, the weights as 4 d_model^2: n = 512, d_model = h = 4096
 * would need 8.3 GiB, so such a configuration is refused up front. */
#define MHA_MAX_MODEL_BYTES (UINT64_C(3) << 29)

/* Bytes of every tensor a model holds for cfg (resolved) at n positions (the
 * padded length): 4 d^2 weights, 8 n d activations, 2 h n^2 scores and attn. */
uint64_t mha_model_bytes(const mha_config *cfg, int n);

/* The model: weights for (seed, d_model), the input X for the current tokens,
 * and every activation of the forward pass. Row-major float32 throughout.
 * The tensors live in three blocks, each (re)allocated only when its own shape
 * changes: the weights (d_model), the activations (n, d_model) and the scores
 * with the attention weights (h, n). A forward at a steady shape allocates
 * nothing; changing h reallocates only the last block.
 *
 * What is kept between calls: the weights while (seed, d_model, weights mode)
 * stay (and h, for designed heads); each row of X while its token, its position
 * and those stay; and the rows of Q, K, V whose X row and weights did not change
 * (mha_update). X and the weights are the model's: do not write into them.
 *
 * Positions: the n_real tokens of the text come first; with cfg.pad = N the
 * sequence continues with N - n_real [PAD] tokens up to n = N. Padding positions
 * are masked as keys (score -inf, weight exactly 0 in every row). A [PAD] query
 * row still attends to the real tokens (its own row is computed like any other,
 * and is drawn as padding); with the causal mask too, it sees every real token. */
typedef struct {
    mha_config cfg; /* resolved */
    int n;          /* positions: n_real tokens, then n - n_real [PAD] */
    int n_real;     /* positions [0, n_real) are the text; [n_real, n) are [PAD] */
    int d_k;        /* = d_v = d_model / h */

    float *w_q;      /* (d_model, d_model); head i uses columns [i*d_k, (i+1)*d_k) */
    float *w_k;      /* (d_model, d_model) */
    float *w_v;      /* (d_model, d_model) */
    float *w_o;      /* (d_model, d_model); head i uses rows [i*d_k, (i+1)*d_k) */
    float *x;        /* (n, d_model) token embedding + positional encoding */
    float *q;        /* (n, d_model) = X W^Q; head i is columns [i*d_k, (i+1)*d_k) */
    float *k;        /* (n, d_model) = X W^K */
    float *v;        /* (n, d_model) = X W^V */
    float *scores;   /* (h, n, n) Q_i K_i^T / (sqrt(d_k) T), -inf where masked */
    float *attn;     /* (h, n, n) row-wise softmax of scores */
    float *heads;    /* (h, n, d_k) head_i = attn_i V_i, computed for ablated heads too */
    float *concat;   /* (n, d_model) = Concat(head_1 .. head_h), ablated bands zero */
    float *out;      /* (n, d_model) = concat W^O, the MultiHead with ablation */
    float *out_full; /* (n, d_model) = the unablated MultiHead; equals out when none is */

    /* private: the three blocks and what they hold */
    float *w_mem_;    /* w_q w_k w_v w_o: 4 d^2 floats */
    float *nd_mem_;   /* x q k v heads concat out out_full: 8 n d floats */
    float *nn_mem_;   /* scores attn: 2 h n^2 floats */
    int w_d_;         /* d_model of w_mem_ */
    int nd_n_, nd_d_; /* (n, d_model) of nd_mem_ */
    int nn_n_, nn_h_; /* (n, h) of nn_mem_ */
    int weights_ok_;  /* the weights hold (weights_seed_, w_d_, weights_mode_, weights_h_) */
    int weights_h_;   /* h the weights were designed for; 0 for random weights */
    int weights_kv_;  /* K/V groups W^K and W^V were pooled for (kv_key), 0: none */
    mha_weights weights_mode_;
    uint64_t weights_seed_;
    uint64_t x_seed_;              /* X's rows were built for this seed, */
    mha_weights x_mode_;           /* weights mode */
    int x_h_;                      /* and h (designed heads; 0 for random weights) */
    int x_rows_;                   /* leading rows of X built for those */
    uint64_t x_tokens_[MHA_MAX_N]; /* mha_token_key of the token in each built row */
    int qkv_rows_;                 /* leading rows of Q, K, V that are X W for today's X, W */
    unsigned long allocations_;    /* blocks (re)allocated, for tests and --bench */
    unsigned long weights_built_;  /* times the weights were generated, for tests */
    unsigned long x_rows_built_;   /* rows of X computed, for tests */
    unsigned long qkv_rows_built_; /* rows of Q, K, V projected, for tests */
} mha_model;

/* Creates an empty model; returns NULL on out-of-memory. */
mha_model *mha_model_create(void);
/* Frees the model and everything it owns; NULL is fine. */
void mha_model_destroy(mha_model *m);

/* Sets the configuration and the text's tokens (without padding: cfg.pad adds
 * it): checks every limit, (re)allocates the blocks whose shape changed,
 * regenerates the weights if (seed, d_model, weights, and h for designed heads)
 * changed, and computes the rows of X whose token or position changed (all of
 * them when the seed, d_model or the weights mode did). Does not run the forward
 * pass. Returns 0, or -1 with a message in err; the model is then unchanged (out
 * of memory keeps the old blocks, shape and numbers). */
int mha_model_set(mha_model *m, const mha_config *cfg, const tok_list *toks, char *err,
                  size_t errlen);

/* Runs the whole forward pass on the model's X and weights, filling q, k, v,
 * scores, attn, heads, concat, out_full and out: the attention sublayer every
 * forward takes (attn_sublayer_forward, sublayer.h). Every matrix product goes
 * through cblas_sgemm, on one OpenBLAS thread each; from 1e6 FLOPs on, groups of
 * heads and then column chunks of W^O run side by side on the workers
 * mm_workers_for chooses (mm_parallel, blas.h). Allocates nothing (the first
 * forward on two workers starts the helper thread, once for the process). */
void mha_forward(mha_model *m);

/* The same result as mha_forward, but projects only the rows of Q, K, V whose
 * row of X or whose weights changed since they were last projected: after a
 * change of h alone, or of the last tokens, the projections are skipped or
 * shortened. Allocates nothing. */
void mha_update(mha_model *m);

/* Convenience: mha_model_set then mha_update. */
int mha_model_compute(mha_model *m, const mha_config *cfg, const tok_list *toks, char *err,
                      size_t errlen);

/* The text of position i: the text's token below n_real, MHA_PAD_TOKEN after.
 * toks is the list the model was set with. */
const char *mha_token(const mha_model *m, const tok_list *toks, int i);

/* ||out - out_full||_F / ||out_full||_F: how much the ablation changed MultiHead
 * (0 when no head is ablated, and when out_full is all zero). */
double mha_ablation_delta(const mha_model *m);

/* Forwards run in this process, from any thread: the built-in model's (mha_forward,
 * mha_update) and a loaded model's (tf_infer_run) each add one. MHAVIZ_STATS
 * prints it, so tests see that a start-up computes once. */
unsigned long mha_forwards(void);
void mha_forwards_add(void);

/* ---- the model as a source of attn_layer (mha_layer.c) ---- */

/* The arrays a layer filled from a model points to that the model does not hold:
 * each position's text and each head's note. The caller owns it (and keeps it
 * beside the layer). */
typedef struct {
    const char *tokens[MHA_MAX_N];      /* position i's text, MHA_PAD_TOKEN from n_real */
    const char *notes[MHA_MAX_D_MODEL]; /* designed heads: their pattern names */
} mha_layer_text;

/* Fills L with m, computed for toks: the shape, how the scores were made (mask,
 * scaling, temperature, attn_scale), seed, pad, the designed flag, the off set
 * (cfg.ablate) and pointers to every tensor of m; text receives the positions'
 * texts (pointers into toks) and, for designed heads, their pattern names as
 * head_note. L stays valid while m, toks and text do and m is not computed
 * again. A model not yet computed gives a layer of n = 0 and no tensors. */
void mha_layer_fill(attn_layer *L, mha_layer_text *text, const mha_model *m, const tok_list *toks);

/* The random or designed model as a model source (source.h) of one layer:
 * layer(0) is mha_layer_fill of ctx's model, tokens and text; describe says
 * "random weights, seed 1" or "designed heads". ctx must outlive the source. */
typedef struct {
    const mha_model *m;
    const tok_list *toks;
    mha_layer_text *text; /* written by layer(0) */
} mha_source_ctx;
model_source mha_source(const mha_source_ctx *ctx);

/* Row-wise softmax in place over a (rows, cols) matrix: the row max is
 * subtracted first; -inf entries become exactly 0. A row that is all -inf
 * (cannot happen under the masks we make) becomes all zeros, never NaN.
 * Float throughout, vectorised (softmax.c); within 2e-6 relative of the exact
 * value on every entry (see tests/test_mha.c). */
void mha_softmax_rows(float *a, int rows, int cols);

/* Weights: fills w (d, d) with Glorot/Xavier-uniform values, limit sqrt(6 / (2 d)),
 * drawn from a stream fixed by (seed, d, which); which is 0..3 for Q, K, V, O. */
void mha_weights_init(float *w, uint64_t seed, int d, int which);

/* The 64-bit key (FNV-1a of the text) that, with seed and d, fixes a token's
 * embedding: two tokens with equal keys get equal embeddings. */
uint64_t mha_token_key(const char *token);

/* Token embedding: fills e (d) with N(0, 1) values fixed by (token text, seed, d). */
void mha_embed_token(float *e, const char *token, uint64_t seed, int d);

/* Sinusoidal positional encoding for position pos added into e (d):
 * PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)). */
void mha_add_positional(float *e, int pos, int d);

/* ---- designed heads (cfg.weights = MHA_WEIGHTS_PATTERNS; patterns.c) ----
 * Head i shows pattern i mod 6 of: previous (attends to position p-1), next (p+1),
 * first (position 0), self (p), same-word (another occurrence of its token, else
 * itself), broad (uniform over the visible keys). A head whose d_k is below its
 * pattern's mha_pattern_min_dk keeps random weights and is MHA_PATTERN_NONE. */
typedef enum {
    MHA_PATTERN_RANDOM = 0, /* random weights: no designed behaviour */
    MHA_PATTERN_PREVIOUS,
    MHA_PATTERN_NEXT,
    MHA_PATTERN_FIRST,
    MHA_PATTERN_SELF,
    MHA_PATTERN_SAME_WORD,
    MHA_PATTERN_BROAD,
    MHA_PATTERN_NONE, /* designed mode, but d_k is too small for the head's pattern */
} mha_pattern;

#define MHA_PATTERN_CYCLE 6 /* previous .. broad */

/* The behaviour of head (0-based) under cfg (resolved). */
mha_pattern mha_head_pattern(const mha_config *cfg, int head);
/* "random", "previous", "next", "first", "self", "same-word", "broad" or
 * "none (d_k too small)". */
const char *mha_pattern_name(mha_pattern p);
/* Convenience: the name of a model's head (0-based). */
const char *mha_head_pattern_name(const mha_model *m, int head);
/* The smallest d_k with which the pattern can be built (0 for random/none). */
int mha_pattern_min_dk(mha_pattern p);

/* Overwrites the W^Q and W^K columns (each (d_model, d_model)) of every head with
 * a designed pattern; other entries are left as they are. */
void mha_patterns_weights(float *w_q, float *w_k, const mha_config *cfg);
/* Writes the designed heads' codes into X (n, d_model), rows 0..n-1, over what is
 * there: position codes, a constant, a start flag and word codes (the word's rank
 * among the distinct tokens of toks, in order of first appearance; [PAD] beyond
 * n_real). Only the blocks some head of cfg reads are written. */
void mha_patterns_embed(float *x, const tok_list *toks, int n_real, int n, const mha_config *cfg);

#endif
