/* model_spec.h: what a transformer is, as one small struct: its sizes, its norm,
 * how positions enter, its attention (heads, key/value heads, head width, biases,
 * QK-norm, mask), its MLP and its embeddings. A checkpoint family fills one from
 * its config.json (src/model/family_*.c), the trainer from its tf_config
 * (tf_spec_of_config); the parameters' shapes (transformer.c) and the loaded
 * model's layer forward (block.c) follow it and nothing else. Plain data. */
#ifndef MHAVIZ_MODEL_SPEC_H
#define MHAVIZ_MODEL_SPEC_H

typedef enum {
    SPEC_LAYERNORM = 0,  /* (x - mean) rstd g + b */
    SPEC_RMSNORM = 1,    /* x rsqrt(mean(x^2) + eps) w (Llama, Qwen) */
    SPEC_RMSNORM_P1 = 2, /* x rsqrt(mean(x^2) + eps) (1 + w) (Gemma) */
} spec_norm;

typedef enum {
    SPEC_POS_LEARNED = 0, /* a learned row of wpe added to each token's embedding */
    SPEC_POS_ROPE = 1,    /* Q and K rotated by position, rotate_half pairing */
} spec_pos;

typedef enum {
    SPEC_ROPE_PLAIN = 0,  /* inv_freq_j = theta^(-2j / head_dim) */
    SPEC_ROPE_LINEAR = 1, /* inv_freq / factor */
    SPEC_ROPE_LLAMA3 = 2, /* Llama 3's smooth long-wavelength scaling */
} spec_rope_scaling;

typedef enum {
    SPEC_MLP_GELU_TANH = 0, /* act(x W_fc + b) W_proj + b, GPT-2's gelu_new */
    SPEC_MLP_GELU_ERF = 1,  /* the same with the exact GELU (BERT) */
    SPEC_MLP_RELU = 2,      /* the same with ReLU (the trainer's option) */
    SPEC_MLP_SWIGLU = 3,    /* (silu(x W_gate) * x W_fc) W_proj (Llama) */
    SPEC_MLP_GEGLU = 4,     /* (gelu_tanh(x W_gate) * x W_fc) W_proj (Gemma) */
} spec_mlp;

typedef enum {
    SPEC_HEAD_TIED = 0,   /* logits = x W_te^T */
    SPEC_HEAD_DENSE = 1,  /* logits = x W_U + b_U, W_U (d, C): the trainer's */
    SPEC_HEAD_LINEAR = 2, /* logits = x lm_head^T, lm_head (V, d) as nn.Linear keeps it */
    SPEC_HEAD_NONE = 3,   /* no next-token output (an encoder read without its MLM head) */
} spec_head;

typedef struct {
    /* sizes */
    int vocab, ctx, layers, d_model;
    int d_ff; /* the MLP's width; 0: no MLP (the trainer's attention-only models) */
    /* norms: before each sublayer (pre-LN, GPT-2 and Llama) or after its residual add
       (post-LN, BERT: x = norm(x + f(x)), the embeddings normed, no final norm) */
    spec_norm norm;
    int post_ln;
    float norm_eps;
    /* positions */
    spec_pos pos;
    float rope_theta;
    spec_rope_scaling rope_scaling;
    float rope_factor, rope_low_freq, rope_high_freq; /* llama3: factor, low/high_freq_factor */
    int rope_orig_ctx;                                /* llama3: original_max_position_embeddings */
    /* attention: h query heads of head_dim columns each, sharing h_kv key/value heads
       (query head i reads K/V head i / (h / h_kv)); scale 1 / sqrt(head_dim) */
    int h, h_kv, head_dim;
    int qkv_bias, o_bias;
    int qk_norm; /* 1: Q and K normed per head (the model's norm over head_dim) before RoPE */
    int causal;
    /* MLP */
    spec_mlp mlp;
    int mlp_bias;
    /* embeddings and the head */
    float emb_scale; /* the token embedding times this (Gemma: sqrt(d_model)); 0: 1 */
    int token_types; /* rows of a token-type embedding, row 0 added (BERT); 0: none */
    /* ALBERT's factorised embeddings: the tables (and their LayerNorm) d_embed wide,
       then mapped to d_model by one dense layer; 0: no mapping, tables d_model wide */
    int d_embed;
    int pos_rows;      /* rows of the learned position table; 0: ctx */
    int pos_after_pad; /* 1: RoBERTa's positions: pad_id + 1 + the count of non-pad
                          tokens before (pad_id's own tokens at pad_id) */
    int pad_id;
    int shared_layers; /* 1: one layer's weights applied at every layer (ALBERT) */
    spec_head head;
    /* the masked-LM head, an encoder's: a dense layer (d_model to the embeddings'
       width), mlm_act, a LayerNorm, the decoder (the token embedding when tied) and
       its bias. mlm 0: the file has none (the loader sets it from the file) */
    int mlm, mlm_tied;
    spec_mlp mlm_act;
} model_spec;

/* Q's and K's (= V's) columns: h head_dim and h_kv head_dim. */
static inline int spec_q_dim(const model_spec *s) {
    return s->h * s->head_dim;
}
static inline int spec_kv_dim(const model_spec *s) {
    return s->h_kv * s->head_dim;
}
static inline int spec_gated(const model_spec *s) {
    return s->mlp == SPEC_MLP_SWIGLU || s->mlp == SPEC_MLP_GEGLU;
}
/* The width of the embedding tables: d_embed (ALBERT) or d_model. */
static inline int spec_emb_dim(const model_spec *s) {
    return s->d_embed > 0 ? s->d_embed : s->d_model;
}
/* Layers whose weights are stored: one when they are shared (ALBERT). */
static inline int spec_stored_layers(const model_spec *s) {
    return s->shared_layers ? 1 : s->layers;
}
static inline int spec_pos_rows(const model_spec *s) {
    return s->pos_rows > 0 ? s->pos_rows : s->ctx;
}
static inline int spec_norm_bias(const model_spec *s) {
    return s->norm == SPEC_LAYERNORM;
}

#endif
