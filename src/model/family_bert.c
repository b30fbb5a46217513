/* family_bert.c: the BERT and RoBERTa encoders (family.h): Hugging Face's BertModel
 * / RobertaModel layout, "bert." / "roberta." prefix or none, and their masked-LM
 * heads when the file has them (BertForMaskedLM's cls.predictions.*,
 * RobertaForMaskedLM's lm_head.*). Post-LN blocks (attention, dense, add,
 * LayerNorm; MLP, add, LayerNorm), learned positions and token type 0 added to the
 * embeddings and LayerNormed, attention in both directions, GELU as hidden_act
 * says, nn.Linear weights (out, in). RoBERTa's positions start at pad_token_id + 1.
 * Also the config reader the other encoders (DistilBERT aside) share. */
#include <string.h>

#include "config_json.h"
#include "family.h"
#include "transformer.h"

/* An optional boolean that must be `want` if it is there: why is said in the message. */
static int want_bool(json_t *root, const char *key, int want, const char *why, const char *path,
                     char *err, size_t errlen) {
    int v = want, rc = cj_bool(root, key, want, &v, path, err, errlen);
    if (rc) return rc;
    if (v != want)
        return cj_fail(err, errlen, 2, path, "%s = %s is not supported (%s)", key,
                       v ? "true" : "false", why);
    return 0;
}

int family_act(spec_mlp *out, const char *act, const char *key, const char *path, char *err,
               size_t errlen) {
    if (strcmp(act, "gelu") == 0)
        *out = SPEC_MLP_GELU_ERF;
    else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        *out = SPEC_MLP_GELU_TANH;
    else if (strcmp(act, "relu") == 0)
        *out = SPEC_MLP_RELU;
    else
        return cj_fail(err, errlen, 2, path,
                       "%s \"%.40s\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)",
                       key, act);
    return 0;
}

int family_encoder_config(model_spec *s, json_t *root, const char *act_default, const char *path,
                          char *err, size_t errlen) {
    int rc, h = 0, rows = 0, tied = 1;
    const char *act = NULL, *pos = NULL;
    memset(s, 0, sizeof *s);
    if ((rc = cj_int(root, "hidden_size", 1, TF_MAX_D_MODEL, -1, &s->d_model, path, err, errlen)) ||
        (rc = cj_int(root, "num_hidden_layers", 1, TF_MAX_LAYERS, -1, &s->layers, path, err,
                     errlen)) ||
        (rc = cj_int(root, "num_attention_heads", 1, TF_MAX_D_MODEL, -1, &h, path, err, errlen)) ||
        (rc = cj_int(root, "intermediate_size", 1, 4 * TF_MAX_D_MODEL, -1, &s->d_ff, path, err,
                     errlen)) ||
        (rc = cj_int(root, "vocab_size", 1, TF_MAX_VOCAB, -1, &s->vocab, path, err, errlen)) ||
        (rc = cj_int(root, "max_position_embeddings", 1, 2 * TF_MAX_CTX, 512, &rows, path, err,
                     errlen)) ||
        (rc = cj_int(root, "type_vocab_size", 1, 16, 2, &s->token_types, path, err, errlen)) ||
        (rc = cj_float(root, "layer_norm_eps", 0.0, 1.0, 1e-12, &s->norm_eps, path, err, errlen)) ||
        (rc = cj_string(root, "hidden_act", &act, path, err, errlen)) ||
        (rc = cj_string(root, "position_embedding_type", &pos, path, err, errlen)) ||
        (rc = cj_bool(root, "tie_word_embeddings", 1, &tied, path, err, errlen)) ||
        (rc = want_bool(root, "is_decoder", 0, "an encoder is read", path, err, errlen)) ||
        (rc = want_bool(root, "add_cross_attention", 0, "no encoder-decoder", path, err, errlen)))
        return rc;
    if (s->d_model % h)
        return cj_fail(err, errlen, 2, path,
                       "num_attention_heads %d does not divide hidden_size %d", h, s->d_model);
    if (pos && strcmp(pos, "absolute") != 0)
        return cj_fail(err, errlen, 2, path,
                       "position_embedding_type \"%.40s\" is not supported (only absolute)", pos);
    if ((rc = family_act(&s->mlp, act ? act : act_default, "hidden_act", path, err, errlen)))
        return rc;
    s->pos_rows = rows;
    s->ctx = rows < TF_MAX_CTX ? rows : TF_MAX_CTX;
    s->h = s->h_kv = h;
    s->head_dim = s->d_model / h;
    s->norm = SPEC_LAYERNORM;
    s->post_ln = 1;
    s->pos = SPEC_POS_LEARNED;
    s->qkv_bias = s->o_bias = s->mlp_bias = 1;
    s->causal = 0;
    s->head = SPEC_HEAD_NONE;
    s->mlm_tied = tied;
    s->mlm_act = s->mlp; /* the head's transform uses hidden_act too (BERT, ALBERT) */
    return 0;
}

static int bert_spec(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    return family_encoder_config(s, root, "gelu", path, err, errlen);
}

/* RoBERTa: BERT's config, positions counted from pad_token_id + 1 (so
 * max_position_embeddings - pad_token_id - 1 tokens at most), and its head's
 * transform always the exact GELU (RobertaLMHead calls gelu, not hidden_act). */
static int roberta_spec(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    int rc = family_encoder_config(s, root, "gelu", path, err, errlen), pad = 0;
    if (rc || (rc = cj_int(root, "pad_token_id", 0, s->vocab - 1, 1, &pad, path, err, errlen)))
        return rc;
    if (s->pos_rows <= pad + 1)
        return cj_fail(err, errlen, 2, path,
                       "max_position_embeddings %d leaves no position after pad_token_id %d",
                       s->pos_rows, pad);
    s->pos_after_pad = 1;
    s->pad_id = pad;
    s->ctx = s->pos_rows - pad - 1 < TF_MAX_CTX ? s->pos_rows - pad - 1 : TF_MAX_CTX;
    s->mlm_act = SPEC_MLP_GELU_ERF;
    return 0;
}

/* BertModel's names (and RobertaModel's), a layer's after "encoder.layer.<i>." */
#define ENCODER_NAMES                                                                              \
    {CK_WTE, CK_AS_IS, "embeddings.word_embeddings.weight"},                                       \
        {CK_WPE, CK_AS_IS, "embeddings.position_embeddings.weight"},                               \
        {CK_WTT, CK_AS_IS, "embeddings.token_type_embeddings.weight"},                             \
        {CK_EMB_LN_G, CK_AS_IS, "embeddings.LayerNorm.weight"},                                    \
        {CK_EMB_LN_B, CK_AS_IS, "embeddings.LayerNorm.bias"},                                      \
        {CK_Q, CK_LINEAR, "attention.self.query.weight"},                                          \
        {CK_Q_B, CK_AS_IS, "attention.self.query.bias"},                                           \
        {CK_K, CK_LINEAR, "attention.self.key.weight"},                                            \
        {CK_K_B, CK_AS_IS, "attention.self.key.bias"},                                             \
        {CK_V, CK_LINEAR, "attention.self.value.weight"},                                          \
        {CK_V_B, CK_AS_IS, "attention.self.value.bias"},                                           \
        {CK_O, CK_LINEAR, "attention.output.dense.weight"},                                        \
        {CK_O_B, CK_AS_IS, "attention.output.dense.bias"},                                         \
        {CK_LN1_G, CK_AS_IS, "attention.output.LayerNorm.weight"},                                 \
        {CK_LN1_B, CK_AS_IS, "attention.output.LayerNorm.bias"},                                   \
        {CK_FC, CK_LINEAR, "intermediate.dense.weight"},                                           \
        {CK_FC_B, CK_AS_IS, "intermediate.dense.bias"},                                            \
        {CK_PROJ, CK_LINEAR, "output.dense.weight"}, {CK_PROJ_B, CK_AS_IS, "output.dense.bias"},   \
        {CK_LN2_G, CK_AS_IS, "output.LayerNorm.weight"}, {                                         \
        CK_LN2_B, CK_AS_IS, "output.LayerNorm.bias"                                                \
    }

static const ck_name bert_names[] = {
    ENCODER_NAMES,
    {CK_MLM_DENSE, CK_LINEAR, "cls.predictions.transform.dense.weight"},
    {CK_MLM_DENSE_B, CK_AS_IS, "cls.predictions.transform.dense.bias"},
    {CK_MLM_LN_G, CK_AS_IS, "cls.predictions.transform.LayerNorm.weight"},
    {CK_MLM_LN_B, CK_AS_IS, "cls.predictions.transform.LayerNorm.bias"},
    {CK_MLM_DEC, CK_AS_IS, "cls.predictions.decoder.weight"},
    {CK_MLM_BIAS, CK_AS_IS, "cls.predictions.bias"},
};

static const ck_name roberta_names[] = {
    ENCODER_NAMES,
    {CK_MLM_DENSE, CK_LINEAR, "lm_head.dense.weight"},
    {CK_MLM_DENSE_B, CK_AS_IS, "lm_head.dense.bias"},
    {CK_MLM_LN_G, CK_AS_IS, "lm_head.layer_norm.weight"},
    {CK_MLM_LN_B, CK_AS_IS, "lm_head.layer_norm.bias"},
    {CK_MLM_DEC, CK_AS_IS, "lm_head.decoder.weight"},
    {CK_MLM_BIAS, CK_AS_IS, "lm_head.bias"},
};

static const char *const bert_outside[] = {"cls.", NULL};
static const char *const roberta_outside[] = {"lm_head.", NULL};
/* the position ids buffer of older files; the pooler and next-sentence head read
   [CLS] alone (BertForPreTraining's files carry them) */
static const char *const bert_ignored[] = {"embeddings.position_ids",
                                           "embeddings.token_type_ids",
                                           "pooler.dense.weight",
                                           "pooler.dense.bias",
                                           "cls.seq_relationship.weight",
                                           "cls.seq_relationship.bias",
                                           NULL};
static const char *const bert_copies[] = {"cls.predictions.decoder.bias", "cls.predictions.bias",
                                          "cls.predictions.decoder.weight",
                                          "embeddings.word_embeddings.weight", NULL};
static const char *const roberta_copies[] = {"lm_head.decoder.bias", "lm_head.bias",
                                             "lm_head.decoder.weight",
                                             "embeddings.word_embeddings.weight", NULL};

const ckpt_family ckpt_family_bert = {.type = "bert",
                                      .title = "BERT",
                                      .prefix = "bert.",
                                      .layer = "encoder.layer.",
                                      .names = bert_names,
                                      .n_names = sizeof bert_names / sizeof bert_names[0],
                                      .outside = bert_outside,
                                      .ignored = bert_ignored,
                                      .mlm_probe = "cls.predictions.transform.dense.weight",
                                      .copies = bert_copies,
                                      .gamma_beta = 1,
                                      .spec_of = bert_spec};

const ckpt_family ckpt_family_roberta = {.type = "roberta",
                                         .title = "RoBERTa",
                                         .prefix = "roberta.",
                                         .layer = "encoder.layer.",
                                         .names = roberta_names,
                                         .n_names = sizeof roberta_names / sizeof roberta_names[0],
                                         .outside = roberta_outside,
                                         .ignored = bert_ignored,
                                         .mlm_probe = "lm_head.dense.weight",
                                         .copies = roberta_copies,
                                         .gamma_beta = 1,
                                         .spec_of = roberta_spec};
