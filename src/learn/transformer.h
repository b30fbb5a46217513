/* transformer.h: a decoder-only transformer, forward and backward by hand, side by
 * side as llm.c's train_gpt2.c has them: token + learned position embeddings,
 * pre-LayerNorm blocks of causal multi-head attention (the core's kernel,
 * src/core/attention.h) and an optional MLP, a final LayerNorm and the
 * unembedding. Options cover what GPT-2 adds: biases on the attention's
 * projections, GELU in its tanh form, a tied unembedding, LayerNorm's epsilon.
 * Also a trace of a forward on one sequence, every layer's tensors as an attention
 * view needs them (tf_trace_layer fills an attn_layer). The optimizer, the tasks
 * and the loss are the trainer's (learn.c). No SDL, no files, no globals.
 *
 * Loading GPT-2 (Conv1D weights stored (in, out), y = x W + b): c_attn.weight
 * (d, 3d) is W_Q | W_K | W_V, its columns [0, d), [d, 2d), [2d, 3d) copied into
 * W_Q, W_K, W_V (d, d) here; c_attn.bias (3d) into b_Q | b_K | b_V; attn.c_proj is
 * W_O, b_O; mlp.c_fc, mlp.c_proj are W_fc, b_fc, W_proj, b_proj; ln_1, ln_2, ln_f
 * the three LayerNorms; wte, wpe the embeddings, wte also the unembedding (tied).
 * Head j is columns [j d_k, (j+1) d_k) of W_Q, W_K, W_V, as in the core. */
#ifndef MHAVIZ_TRANSFORMER_H
#define MHAVIZ_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include "layer.h"
#include "model_spec.h"

#define TF_MAX_LAYERS 48
#define TF_MAX_CTX 1024
#define TF_MAX_VOCAB 65536
#define TF_MAX_D_MODEL 4096
#define TF_DEFAULT_LN_EPS 1e-5f

typedef enum {
    TF_ACT_GELU = 0,      /* exact, x Phi(x) with erf (torch's default) */
    TF_ACT_RELU = 1,      /* max(x, 0) */
    TF_ACT_GELU_TANH = 2, /* GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
} tf_act;

/* Zero means "default" where a default is named (tf_config_resolve). */
typedef struct {
    int vocab;     /* V: rows of wte, 1..65536 (GPT-2: 50257) */
    int ctx;       /* rows of wpe: the longest sequence, 1..1024 */
    int classes;   /* C: logits per position; 0: vocab; must be vocab when tied */
    int layers;    /* 1..48 */
    int h;         /* heads, divides d_model */
    int d_model;   /* 1..4096 */
    int mlp;       /* 1: an MLP block after each attention block */
    int d_ff;      /* the MLP's width; 0: 4 d_model */
    tf_act act;    /* the MLP's non-linearity */
    int attn_bias; /* 1: b_Q, b_K, b_V (c_attn.bias) and b_O (attn.c_proj.bias) */
    int tied;      /* 1: logits = lnf W_te^T (GPT-2), no W_U, b_U; 0: lnf W_U + b_U */
    float ln_eps;  /* LayerNorm's epsilon; 0: 1e-5 */
} tf_config;

void tf_config_resolve(tf_config *cfg);
/* Checks a resolved cfg: 0, or -1 with a one-line message in err. */
int tf_config_check(const tf_config *cfg, char *err, size_t errlen);

/* One layer's parameters; NULL where the model has none. Matrices (in, out). In
 * a model_spec's terms (the trainer's: qd = kvd = d, hd = d / h): qd = h head_dim,
 * kvd = h_kv head_dim; the norms' biases are LayerNorm's only. */
typedef struct {
    float *ln1_g, *ln1_b;         /* (d) */
    float *w_q, *w_k, *w_v, *w_o; /* (d, qd), (d, kvd), (d, kvd), (qd, d): the core's layout */
    float *b_q, *b_k, *b_v, *b_o; /* (qd), (kvd), (kvd), (d): attn_bias only */
    float *q_norm, *k_norm;       /* (hd): QK-norm only */
    float *ln2_g, *ln2_b;         /* (d), MLP only */
    float *w_fc, *b_fc;           /* (d, d_ff), (d_ff), MLP only; a gated MLP's "up" */
    float *w_gate;                /* (d, d_ff), a gated MLP only */
    float *w_proj, *b_proj;       /* (d_ff, d), (d), MLP only */
} tf_layer_params;

typedef struct {
    /* E = spec_emb_dim: d_model, or ALBERT's embedding_size */
    float *wte;                 /* (V, E) token embedding; the unembedding too when tied */
    float *wpe;                 /* (pos_rows, E) learned positions; NULL with RoPE */
    float *wtt;                 /* (token_types, E): token types, row 0 added; or NULL */
    float *emb_ln_g, *emb_ln_b; /* (E): post-LN models' norm of the embeddings, or NULL */
    float *emb_map, *emb_map_b; /* (E, d), (d): ALBERT's embeddings to d_model, or NULL */
    tf_layer_params layer[TF_MAX_LAYERS];
    float *lnf_g, *lnf_b; /* (d); NULL in post-LN models */
    float *w_u, *b_u;     /* (d, C), (C): SPEC_HEAD_DENSE only */
    float *lm_head;       /* (V, d): SPEC_HEAD_LINEAR only */
    /* the masked-LM head (spec mlm): (d, E), (E), (E), (E), (V, E) untied only, (V) */
    float *mlm_dense, *mlm_dense_b, *mlm_ln_g, *mlm_ln_b, *mlm_dec, *mlm_bias;
} tf_params;

/* One block's activations for B sequences of T (and, in the gradients' one-layer
 * copy, the gradients inside a block, which every block takes in turn; there attn is
 * the attention backward's scratch, the output (res2, or res1 without the MLP) the
 * residual stream's gradient for every layer, and scores, fc and x0 go unused).
 * N = B T rows. */
typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd; /* (N, d), (N), (N): the X the heads see */
    float *q, *k, *v;                 /* (N, d) */
    float *scores, *attn;             /* (B, h, T, T) */
    float *concat, *attproj, *res1;   /* (N, d): heads, concat W^O (+ b_O), x + attproj */
    float *ln2, *ln2_mean, *ln2_rstd; /* MLP only: (N, d), (N), (N) */
    float *fc, *fc_act;               /* (N, d_ff) before and after the non-linearity */
    float *res2;                      /* (N, d): res1 + fc_act W_proj + b_proj */
} tf_layer_acts;

typedef struct {
    int B, T; /* the largest shape they hold */
    /* 1: a forward on these keeps only what the backward reads (a training batch's):
       each example's scores in one (T, T) slot for all its heads, and W^O's product
       added straight into res1, attproj left unwritten. 0 (as allocated) keeps every
       tensor, as the view and the trace read them. tf_acts_rows copies it. */
    int lean;
    float *x0; /* (N, d) embedding + position: the residual stream into layer 1 */
    tf_layer_acts layer[TF_MAX_LAYERS];
    float *lnf, *lnf_mean, *lnf_rstd; /* (N, d), (N), (N) */
    float *logits, *probs;            /* (N, C) */
    float *mem_;                      /* the one block they are carved from */
} tf_acts;

/* Parameter i in the order of the flat block: name ("wte", "layer1.W_Q",
 * "layer2.b_O", "lnf.gain", ...), shape and pointers. */
typedef struct {
    const char *name;
    int ndim; /* 1 or 2 */
    int shape[2];
    float *data;
    float *grad;
} tf_tensor;

typedef struct {
    tf_config cfg;         /* resolved */
    model_spec spec;       /* what it is: the trainer's from cfg, or a checkpoint's */
    tf_params p, g;        /* parameters and gradients, the same layout */
    float *params, *grads; /* the two flat blocks, n_params floats each */
    size_t n_params;
    tf_tensor *tensors; /* (n_tensors) */
    int n_tensors;
    char (*names_)[32]; /* the tensors' names */
    tf_acts a, da; /* activations, and the backward's gradients (one layer's), for (batch, ctx) */
} transformer;

/* Allocates the parameters, their gradients and activations (with gradients) for
 * up to batch sequences of seq tokens (1..ctx; 0: ctx); parameters zero (see
 * tf_init). batch 0: the parameters alone (a loaded model's inference: no
 * gradients, no activations; g, grads, a and da stay zero, tensors' grad NULL). Returns NULL with a
 * message in err on a bad config or out of memory. */
transformer *tf_create(const tf_config *cfg, int batch, int seq, char *err, size_t errlen);
void tf_destroy(transformer *tf); /* NULL is fine */

/* The spec of a trainer's config: pre-LN LayerNorm, learned positions, h_kv = h,
 * head_dim = d_model / h, biases as attn_bias, the MLP's act, tied or dense head. */
void tf_spec_of_config(model_spec *s, const tf_config *cfg);
/* Checks a spec against the transformer's limits: 0, or -1 with one line in err. */
int tf_spec_check(const model_spec *s, char *err, size_t errlen);
/* The parameters alone (zero) of the model spec describes, for inference (as
 * tf_create with batch 0); cfg is filled from the spec for the code that reads
 * sizes (vocab, ctx, layers, h, d_model, d_ff). NULL with a message in err. */
transformer *tf_create_spec(const model_spec *spec, char *err, size_t errlen);

/* LayerNorm gains 1, biases (every 1-D tensor) 0, every matrix and embedding
 * N(0, std^2) drawn from *rng in the tensors' order. */
void tf_init(transformer *tf, uint64_t *rng, float std);

/* Activations for up to B sequences of T tokens, T <= ctx, carved from one block
 * (tf_acts_free frees it; a zeroed tf_acts is fine). 0, or -1 on out of memory. */
int tf_acts_alloc(tf_acts *a, const tf_config *cfg, int B, int T);
void tf_acts_free(tf_acts *a);

/* view: sequences [b0, b0 + B) of a, for a run at T tokens a sequence (pointers
 * into a, nothing allocated; B and T the view's shape). A forward or backward on the
 * view reads and writes only those sequences' rows, so the halves of one batch can
 * run side by side (learn.c's shards). */
void tf_acts_rows(tf_acts *view, const tf_config *cfg, const tf_acts *a, int b0, int B, int T);

/* A second gradient block laid out as tf->grads (zeroed), g pointed into it; free()
 * it. NULL on out of memory. */
float *tf_grads_alloc(const transformer *tf, tf_params *g);

/* The residual stream into layer i (x0 for i = 0) and out of it. */
float *tf_layer_in(const tf_config *cfg, const tf_acts *a, int i);
float *tf_layer_out(const tf_config *cfg, const tf_acts *a, int i);

/* The forward on tok (B, T) into a (B, T within a's shape), up to the logits.
 * off is (layers, h) or NULL: 1 zeroes that head's band of Concat before W^O. */
void tf_forward(const transformer *tf, tf_acts *a, const int *tok, int B, int T,
                const unsigned char *off);

/* The pieces of tf_forward, for the trace: block i's attention sublayer (the core's
 * attn_sublayer_forward) up to attproj, the heads in off_i ((h) or NULL) removed, the
 * output with every head on in out_full ((B T, d) or NULL); the rest of block i
 * (residual, MLP), and the final LayerNorm with the logits. */
void tf_attn_forward(const transformer *tf, tf_acts *a, int i, int B, int T,
                     const unsigned char *off_i, float *out_full);
void tf_block_rest_forward(const transformer *tf, tf_acts *a, int i, int B, int T);
void tf_final_forward(const transformer *tf, tf_acts *a, int B, int T);

/* Backward of the last tf_forward on tf->a (no heads off) from the logits'
 * gradient in tf->da.logits: adds (+=) into every gradient in tf->g. */
void tf_backward(transformer *tf, const int *tok, int B, int T);

/* The same on the caller's activations: the forward that ran on a (tokens tok, B
 * sequences of T), the logits' gradient in da->logits; adds into g (tf->g or a block
 * of tf_grads_alloc). Writes only a's rows in da: two calls on disjoint tf_acts_rows
 * views of one batch may run at once. */
void tf_backward_rows(const transformer *tf, const tf_acts *a, tf_acts *da, tf_params *g,
                      const int *tok, int B, int T);

/* ---- the trace: one sequence's forward, each layer as an attention view sees it */

typedef struct {
    int n;                 /* tokens */
    const transformer *tf; /* the model it was run on (W^O and friends point into it) */
    tf_acts a;             /* the forward, B = 1, T = n */
    float *out_full;       /* (layers, n, d): each layer's attention output with all heads on */
    uint64_t off[TF_MAX_LAYERS][ATTN_LAYER_OFF_WORDS]; /* heads off in the last run */
} tf_trace;

/* A trace for sequences of n tokens (1 <= n <= ctx); NULL on out of memory. */
tf_trace *tf_trace_create(const transformer *tf, int n);
void tf_trace_destroy(tf_trace *t); /* NULL is fine */

/* Runs the forward on tokens (n) and keeps every layer's tensors: ln1 (n, d), q, k,
 * v (n, d), scores (h, n, n) scaled with -inf where masked, attn (h, n, n), concat
 * (n, d), out (n, d: concat W^O + b_O, before the residual). off is (layers, h) or
 * NULL: a head off has its band of concat zeroed and its contribution to out
 * removed; out_full is then that layer's output with every head on (the same
 * input), and the layers after it see the output with the heads off. */
void tf_trace_run(tf_trace *t, const int *tokens, const unsigned char *off);

/* Fills L for layer `layer` (0-based) of the last run: pointers into the trace and
 * the model, valid until either next changes; mask causal, scale attn_scale(d_k, 1,
 * 1), tokens the caller's labels (n strings or NULL), heads NULL. */
void tf_trace_layer(attn_layer *L, const tf_trace *t, int layer, const char *const *tokens);

/* ---- inference: a loaded model's forward on one sequence, kept lean ----------
 * What the view and --dump need of every layer, and no more: the residual stream
 * into each layer, Q, K, V (biases in; QK-normed and rotated where the spec says),
 * the sublayer output Concat W^O + b_O and, for a layer with heads removed, that
 * output with every head on. X (the heads' input: ln_1's output, the stream itself
 * in a post-LN model), the attention, Concat and the MLP's activations are scratch
 * shared by all layers: a layer's X, attention and heads are computed again from
 * its kept stream, Q, K and V when asked for (tf_infer_x, tf_infer_attn,
 * tf_infer_split), so a
 * trace holds O(layers n d) floats, not O(layers h n^2) (at n = 1024 on GPT-2
 * small, 600 MB less). Widths from the model's spec (transformer.h's tf_params):
 * d, qd = h head_dim, kvd = h_kv head_dim. The layers themselves are block.c's. */
typedef struct {
    const transformer *tf;
    int cap;               /* the most tokens it holds */
    int n;                 /* tokens of the last run */
    int *ids;              /* (cap): the last run's tokens; n = 0: no run yet */
    int split_cap;         /* the most heads tf_infer_split lays out at cap tokens */
    float *resid;          /* (layers + 1, cap, d): into layer i; [layers]: out of the last */
    float *out;            /* (layers, cap, d): each layer's attention output, heads removed */
    float *ln1;            /* (cap, d): the layer computed's X (tf_infer_x: any layer's) */
    float *q;              /* (layers, cap, qd) */
    float *k, *v;          /* (layers, cap, kvd) each */
    float *lnf;            /* (cap, d): after the final norm */
    float *logits, *probs; /* (vocab): the last position */
    unsigned char *off;    /* (layers, h): removed in the last run */
    float *rope;           /* (cap, head_dim): RoPE's cos | sin by position, or NULL */
    /* scratch */
    float *res1, *ln2, *fc, *fc_act, *proj, *mean, *rstd; /* (cap, d | d_ff), (cap) */
    float *gate;                                          /* (cap, d_ff): gated MLPs only */
    float *kx, *vx;         /* (cap, qd): K, V repeated per query head, h_kv < h only */
    float *scores;          /* (split_cap, cap, cap): the layer computed's attention, its softmax
                               taken in place (no layer keeps its own: tf_infer_attn) */
    float *concat;          /* (cap, qd): the layer computed's heads (no layer keeps its own) */
    float *emb;             /* (cap, d_embed): ALBERT's embeddings before their mapping, or NULL */
    unsigned long rows_run; /* layer rows computed since it was made (a row of one layer:
                               1): what the tests count, tf_infer_sync copies none */
    float *mem_;
} tf_infer;

/* Bytes tf_infer_create(tf, n, split) allocates. */
size_t tf_infer_bytes(const transformer *tf, int n, int split);
/* For up to n tokens (1..ctx) and re-splits of up to `split` heads (>= h); NULL
 * on out of memory or bad sizes. */
tf_infer *tf_infer_create(const transformer *tf, int n, int split);
void tf_infer_destroy(tf_infer *t); /* NULL is fine */

/* The forward on tokens (n <= cap) from layer `from` on (0: the whole model; a
 * later one reuses the layers before it from the last run of the same tokens).
 * off (layers, h) or NULL: 1 removes that head (its band of Concat zeroed before
 * c_proj; the layers after see the changed stream). Ends with ln_f on every row
 * and the logits and softmax of the last row. */
void tf_infer_run(tf_infer *t, const int *tokens, int n, const unsigned char *off, int from);

/* The forward on tokens with heads off (as tf_infer_run) computing only what
 * differs from the last run: t keeps every layer's rows (its K and V are the KV
 * cache), so in a causal model the rows from the first token that differs are
 * computed in every layer (typing at the end: one new row a layer; a shorter text
 * whose tokens are the last run's first: no layer at all); and from the first layer
 * whose removed heads differ, every row of every layer after. A model that is not
 * causal (an encoder: every row sees every token) computes every row again when a
 * token changes. The result equals tf_infer_run's from layer 0 within float
 * rounding (tests/test_infer_incr.c). Returns the first layer computed in full
 * (layers: none, only rows or nothing). */
int tf_infer_update(tf_infer *t, const int *tokens, int n, const unsigned char *off);
/* The next tf_infer_update computes everything (a bench's whole forward). */
void tf_infer_forget(tf_infer *t);
/* Makes t hold what src (of the same model and cap) holds by copying, not computing,
 * only what differs: the rows and layers tf_infer_update(t, src's tokens, src's heads
 * removed) would compute (the window's second trace brought to the one shown before
 * a change is computed into it). Copies the kept tensors, the final norm's rows, the
 * logits and probabilities, the tokens and heads removed; no scratch. Returns what
 * tf_infer_update would: the first layer copied in full (layers: none). */
int tf_infer_sync(tf_infer *t, const tf_infer *src);

/* Whether tf_infer_split is defined for the model: h heads of d_model / h columns,
 * each its own K and V, positions learned (RoPE pairs columns inside a head); causal
 * or not (an encoder's). */
int tf_infer_can_split(const transformer *tf);

/* Layer i's attention of the last run split into h2 heads (h2 divides d_model,
 * any h2; tf_infer_can_split) from the same Q, K, V: scale 1 / sqrt(d_model / h2),
 * causal when the model is, else in both directions.
 * Writes scores and attn (h2, n, n) (scores -inf where masked; t->scores may be
 * passed), concat (n, d), when not NULL heads (h2, n, d / h2) (each head's own
 * block) and out (n, d) = concat W^O + b_O. */
void tf_infer_split(const tf_infer *t, int i, int h2, float *scores, float *attn, float *concat,
                    float *heads, float *out);

/* Layer i's attention of the last run at the model's own heads, computed again
 * from its kept Q, K and V by the forward's own kernel: scores and attn (h, n, n)
 * (scores -inf where masked) and concat (n, qd), each head's A V, removed heads'
 * too. scores may be attn (then only the attention is kept); t->scores and
 * t->concat may be passed. Uses t's scratch (K and V repeated per head in a
 * grouped-query model), so t is not const. */
void tf_infer_attn(tf_infer *t, int i, float *scores, float *attn, float *concat);
/* The same for query rows [r0, n) only (a causal model's: the rows before see no
 * later token, so the caller's rows before r0 stay valid after tokens are typed at
 * the end); the rows before r0 of scores, attn and concat are left as they are.
 * heads: NULL, or (h, n, head_dim) that gets each head's rows too. */
void tf_infer_attn_rows(tf_infer *t, int i, int r0, float *scores, float *attn, float *concat,
                        float *heads);

/* Layer i's X of the last run, (n, d): the norm of the stream into it (the stream
 * itself in a post-LN model), as the forward computed it. Uses t's scratch. */
void tf_infer_x(tf_infer *t, int i, float *x);

/* Fills L for layer i (0-based) of the last run, the model's own heads: pointers
 * into t, valid until it next runs; x (n, d) from tf_infer_x, scores, attn (h, n, n)
 * and concat (n, qd) from tf_infer_attn, the caller's (NULL: not given; the view
 * cannot draw a layer without its X and attention); tokens the caller's labels. An attn_layer has
 * GPT-2's shapes (Q, K, V, Concat (n, d_model)): W^Q, Q, Concat and W^O are left NULL unless h
 * head_dim = d_model (then d_k = head_dim), W^K, W^V, K and V unless also h_kv = h; the attention,
 * the output and X are always there. A RoPE model's Q and K after the rotation are
 * given too (q_rot, k_rot; q_unrot and k_unrot are the caller's, tf_infer_qk_unrotated).
 * out_full is out where no head of the layer is removed, else NULL: no layer keeps its
 * output with every head on (the caller makes it from concat times W^O). */
void tf_infer_layer(attn_layer *L, const tf_infer *t, int i, const float *x, const float *scores,
                    const float *attn, const float *concat, const char *const *tokens);

/* Layer i's Q (n, h head_dim) and K (n, h_kv head_dim) of the last run before RoPE
 * rotates them (after QK-norm where the model has it), recomputed from its X. */
void tf_infer_qk_unrotated(tf_infer *t, int i, float *q, float *k);

#endif
