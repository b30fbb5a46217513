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
    /* fills s from config.json's root (path names it in err): 0, or 2 */
    int (*spec_of)(model_spec *s, json_t *root, const char *path, char *err, size_t errlen);
} ckpt_family;

extern const ckpt_family ckpt_family_gpt2;
extern const ckpt_family ckpt_family_llama, ckpt_family_qwen2, ckpt_family_qwen3, ckpt_family_gemma;
extern const ckpt_family ckpt_family_mistral, ckpt_family_phi3;
extern const ckpt_family ckpt_family_bert;

#endif
