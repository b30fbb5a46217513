/* family.h: what a checkpoint family is to the loader (checkpoint.c): its
 * model_type, one function that fills a model_spec from its config.json, and one
 * table that maps its tensor names to the transformer's parameters (roles) and
 * says how each is stored. The loader knows no family; a new one is a spec
 * function and a name table (family_gpt2.c, family_llama.c). */
#ifndef MHAVIZ_FAMILY_H
#define MHAVIZ_FAMILY_H

#include <jansson.h>
#include <stddef.h>

#include "model_spec.h"

/* Where a tensor goes: one of the transformer's parameters (tf_params); the roles
 * from CK_LN1_G on are a layer's. */
typedef enum {
    CK_WTE,
    CK_WPE,
    CK_WTT,
    CK_EMB_LN_G,
    CK_EMB_LN_B,
    CK_LNF_G,
    CK_LNF_B,
    CK_LM_HEAD,
    CK_EMB_MAP, /* ALBERT's embedding_hidden_mapping_in, (E, d) */
    CK_EMB_MAP_B,
    CK_MLM_DENSE, /* the masked-LM head's: dense (d, E), its bias, LayerNorm (E), */
    CK_MLM_DENSE_B,
    CK_MLM_LN_G,
    CK_MLM_LN_B,
    CK_MLM_DEC, /* the decoder (V, E) when not tied to the token embedding */
    CK_MLM_BIAS,
    CK_LN1_G, /* the first of a layer's */
    CK_LN1_B,
    CK_QKV,   /* W_Q | W_K | W_V by columns, (d, 3 d) */
    CK_QKV_B, /* b_Q | b_K | b_V */
    CK_Q,
    CK_K,
    CK_V,
    CK_Q_B,
    CK_K_B,
    CK_V_B,
    CK_O,
    CK_O_B,
    CK_Q_NORM,
    CK_K_NORM,
    CK_LN2_G,
    CK_LN2_B,
    CK_GATE,
    CK_GATE_UP, /* W_gate | W_fc stacked by nn.Linear's rows, (2 d_ff, d) (Phi-3) */
    CK_FC,
    CK_FC_B,
    CK_PROJ,
    CK_PROJ_B,
} ck_role;

/* How it is stored: as the parameter is (in, out), as nn.Linear keeps it (out, in:
 * transposed on the way in), three parameters side by side (CK_QKV, CK_QKV_B), or
 * nn.Linear weights stacked by rows, each part transposed into its parameter
 * (CK_QKV: Q, K, V of h, h_kv, h_kv heads; CK_GATE_UP: gate, up). */
typedef enum { CK_AS_IS, CK_LINEAR, CK_SPLIT3, CK_LINEAR_ROWS } ck_layout;

typedef struct {
    ck_role role;
    ck_layout how;
    const char *name; /* a layer's: the part after "<layer><i>." */
} ck_name;

typedef struct {
    const char *type;   /* config.json's model_type */
    const char *title;  /* in messages: "GPT-2" */
    const char *prefix; /* on every name but lm_head.weight, or on none: "transformer." */
    const char *layer;  /* layer i's names start "<layer><i>.": "h." */
    const ck_name *names;
    int n_names;
    const char *const *buffers; /* a layer's names that are not weights (NULL-ended) */
    /* a tied model's lm_head.weight that is not the token embedding: what to say
       (families whose models are never tied may leave it NULL) */
    const char *untied;
    /* encoders: names that never carry the prefix (the pre-training heads, which sit
       beside the "bert." model in BertForMaskedLM): prefixes, NULL-ended */
    const char *const *outside;
    /* names (without the prefix) that are not the model's weights and are ignored:
       buffers (embeddings.position_ids) and the heads that read [CLS]'s vector alone
       (the pooler, next-sentence / sentence-order heads), which change neither the
       attention nor the masked-LM output. NULL-ended */
    const char *const *ignored;
    /* a tensor whose presence says the file has the masked-LM head (spec mlm), or NULL */
    const char *mlm_probe;
    /* pairs {copy, original, ...}, NULL-ended: a tensor stored under both names (a tied
       weight: the decoder's bias, a tied decoder) must hold equal values; under the
       copy's name alone it is read as the original */
    const char *const *copies;
    int gamma_beta; /* 1: "LayerNorm.gamma" / "LayerNorm.beta" read as .weight / .bias */
    /* fills s from config.json's root (path names it in err): 0, or 2 */
    int (*spec_of)(model_spec *s, json_t *root, const char *path, char *err, size_t errlen);
} ckpt_family;

extern const ckpt_family ckpt_family_gpt2;
extern const ckpt_family ckpt_family_llama, ckpt_family_qwen2, ckpt_family_qwen3, ckpt_family_gemma;
extern const ckpt_family ckpt_family_mistral, ckpt_family_phi3;
extern const ckpt_family ckpt_family_bert, ckpt_family_roberta, ckpt_family_distilbert,
    ckpt_family_albert;

/* For the encoder families: BERT's config.json fields (hidden_size, ..., hidden_act,
 * its default act_default) into s as a post-LN encoder without positions' offset,
 * checked (family_bert.c); and an activation's name into *out (key names it). */
int family_encoder_config(model_spec *s, json_t *root, const char *act_default, const char *path,
                          char *err, size_t errlen);
int family_act(spec_mlp *out, const char *act, const char *key, const char *path, char *err,
               size_t errlen);

#endif
