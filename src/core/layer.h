/* layer.h: one attention layer's tensors on one sequence, read-only. It is all the
 * view, the hit test, the stats and --dump see, whatever made it: the random or
 * designed model (mha.c), a trained model, a loaded checkpoint. Sources fill it
 * (pointers into their own buffers, valid until they next compute); nothing here
 * computes attention. Row-major float32 throughout; head i of h owns columns
 * [i d_k, (i+1) d_k) of Q, K, V and Concat, and rows [i d_k, (i+1) d_k) of W^O. */
#ifndef MHAVIZ_LAYER_H
#define MHAVIZ_LAYER_H

#include <stddef.h>
#include <stdint.h>

#define ATTN_LAYER_MAX_HEADS 4096 /* bits in the `off` set */
#define ATTN_LAYER_OFF_WORDS (ATTN_LAYER_MAX_HEADS / 64)

typedef enum { ATTN_MASK_NONE = 0, ATTN_MASK_CAUSAL = 1 } attn_mask;
/* Where a block's norm sits around its attention (a loaded model's, for the
   step-through): before it, x + MultiHead(norm(x)) (GPT-2, Llama), or after the
   residual add, norm(x + MultiHead(x)) (BERT); UNSAID: not told (the built-in). */
typedef enum { ATTN_NORM_UNSAID = 0, ATTN_NORM_PRE, ATTN_NORM_POST } attn_norm;

typedef struct attn_layer {
    /* shape */
    int n;             /* positions */
    int n_real;        /* [0, n_real) are the text; [n_real, n) are padding (masked as keys) */
    int h;             /* heads */
    int d_model;       /* width of x, Q, K, V, Concat, MultiHead */
    int d_k;           /* = d_v = d_model / h (a loaded model's head_dim where they differ) */
    int h_kv;          /* K/V heads shared by groups of h / h_kv query heads; 0: one per head */
    int layer, layers; /* this is layer `layer` (0-based) of `layers` */

    /* how the scores were made: scores = Q_i K_i^T * scale, then the masks */
    attn_mask mask;    /* causal or none (padding is n_real < n) */
    int scaled;        /* 1: the scale holds 1 / sqrt(d_k) */
    float temperature; /* the scale holds 1 / temperature too (1: none) */
    float scale;       /* attn_scale(d_k, scaled, temperature) */
    uint64_t seed;     /* the seed the source was made from; 0 when it has none */
    int pad;           /* the length the text was padded to; 0 none */
    int designed;      /* 1: designed heads (head_note names each one's rule) */

    const char *const *tokens;    /* (n) each position's text, "[PAD]" from n_real on */
    const char *x_what;           /* what x is ("ln_1 of the residual stream"); NULL: the
                                     token embedding + position, as the random model's */
    const char *const *head_note; /* (h) what head i is (e.g. "previous"), or NULL */
    attn_norm norm_at;            /* where the block's norm sits around the attention */
    int rms_norm;                 /* 1: that norm is RMSNorm (Llama's), not LayerNorm */

    /* tensors; a NULL one is not shown */
    const float *x;        /* (n, d_model) the layer's input */
    const float *w_q;      /* (d_model, d_model) or NULL */
    const float *w_k;      /* (d_model, d_model) or NULL */
    const float *w_v;      /* (d_model, d_model) or NULL */
    const float *w_o;      /* (d_model, d_model) */
    const float *q;        /* (n, d_model) = x W^Q */
    const float *k;        /* (n, d_model) = x W^K */
    const float *v;        /* (n, d_model) = x W^V */
    const float *scores;   /* (h, n, n) Q_i K_i^T * scale, -inf where masked */
    const float *attn;     /* (h, n, n) row-wise softmax of scores */
    const float *heads;    /* (h, n, d_k) head_i = attn_i V_i, also for heads off */
    const float *concat;   /* (n, d_model) Concat(head_1 .. head_h), bands of heads off zero */
    const float *out;      /* (n, d_model) Concat W^O: MultiHead with the heads off removed */
    const float *out_full; /* (n, d_model) MultiHead with every head on; = out when none is off */

    /* RoPE (a loaded model's), for the step-through's rotation stage: Q and K before
       the rotation by position (after QK-norm where the model has it) and after it;
       head i owns columns [i d_k, (i + 1) d_k), K/V head g those of K; NULL: no RoPE
       (or not kept) */
    const float *q_unrot, *q_rot; /* (n, h d_k) */
    const float *k_unrot, *k_rot; /* (n, h_kv d_k), h_kv 0 meaning h */
    int qk_norm;                  /* 1: q_unrot and k_unrot are after the per-head QK-norm */

    /* A loaded model's Q, K and V by head as its scores and head_i use them (after RoPE),
       kept also where q, k and v above cannot hold them (h d_k != d_model, K/V heads
       shared): query head i owns columns [i d_k, (i + 1) d_k) of q_heads, K/V head g
       those of k_heads and v_heads; NULL: not kept */
    const float *q_heads;           /* (n, h d_k) */
    const float *k_heads, *v_heads; /* (n, h_kv d_k), h_kv 0 meaning h */

    uint64_t off[ATTN_LAYER_OFF_WORDS]; /* bit i set: head i (0-based) is switched off */
} attn_layer;

/* The factor the scores are multiplied by: 1 / (sqrt(d_k) T) when scaled, else
 * 1 / T (T = 0 counts as 1). The one place the scale is computed. */
float attn_scale(int d_k, int scaled, float temperature);

/* Zeroes L and sets its shape and how its scores were made, the part every source
 * fills alike: d_k = d_model / h, a temperature of 0 counts as 1, scale =
 * attn_scale(d_k, scaled, temperature) (0 while there are no heads), one layer
 * of one. The source then sets the rest (tensors, tokens, layer of layers, ...). */
void attn_layer_init(attn_layer *L, int n, int n_real, int h, int d_model, attn_mask mask,
                     int scaled, float temperature);

/* Head i (0-based) switched off? Any index; out of range is "on". */
int attn_layer_is_off(const attn_layer *L, int head);
/* Heads switched off. */
int attn_layer_off_count(const attn_layer *L);
/* ||out - out_full||_F / ||out_full||_F: how much switching heads off changed
 * MultiHead (0 when none is off, and when out_full is all zero or missing). */
double attn_layer_off_delta(const attn_layer *L);
/* The text of position i, "" outside [0, n). */
const char *attn_layer_token(const attn_layer *L, int i);
/* The note of head i, or NULL. */
const char *attn_layer_head_note(const attn_layer *L, int head);

#endif
