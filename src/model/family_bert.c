/* family_bert.c: the BERT family's encoder (family.h): Hugging Face's BertModel
 * layout, "bert." prefix or none, without the pooler or the pre-training heads
 * (the masked-LM head is not read yet: the model has no next-token output). Post-LN
 * blocks (attention, dense, add, LayerNorm; MLP, add, LayerNorm), learned positions
 * and token type 0 added to the embeddings and LayerNormed, attention in both
 * directions, GELU as hidden_act says (erf or tanh), nn.Linear weights (out, in). */
#include <string.h>

#include "config_json.h"
#include "family.h"
#include "transformer.h"

static int bert_spec(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    int rc, h = 0, ctx = 0;
    const char *act = NULL;
    memset(s, 0, sizeof *s);
    if ((rc = cj_int(root, "hidden_size", 1, TF_MAX_D_MODEL, -1, &s->d_model, path, err, errlen)) ||
        (rc = cj_int(root, "num_hidden_layers", 1, TF_MAX_LAYERS, -1, &s->layers, path, err,
                     errlen)) ||
        (rc = cj_int(root, "num_attention_heads", 1, TF_MAX_D_MODEL, -1, &h, path, err, errlen)) ||
        (rc = cj_int(root, "intermediate_size", 1, 4 * TF_MAX_D_MODEL, -1, &s->d_ff, path, err,
                     errlen)) ||
        (rc = cj_int(root, "vocab_size", 1, TF_MAX_VOCAB, 30522, &s->vocab, path, err, errlen)) ||
        (rc = cj_int(root, "max_position_embeddings", 1, TF_MAX_CTX, 512, &ctx, path, err,
                     errlen)) ||
        (rc = cj_int(root, "type_vocab_size", 1, 16, 2, &s->token_types, path, err, errlen)) ||
        (rc = cj_float(root, "layer_norm_eps", 0.0, 1.0, 1e-12, &s->norm_eps, path, err, errlen)) ||
        (rc = cj_string(root, "hidden_act", &act, path, err, errlen)))
        return rc;
    if (s->d_model % h)
        return cj_fail(err, errlen, 2, path,
                       "num_attention_heads %d does not divide hidden_size %d", h, s->d_model);
    if (!act || strcmp(act, "gelu") == 0)
        s->mlp = SPEC_MLP_GELU_ERF;
    else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        s->mlp = SPEC_MLP_GELU_TANH;
    else
        return cj_fail(err, errlen, 2, path, "hidden_act \"%.40s\" is not supported", act);
    s->ctx = ctx;
    s->h = s->h_kv = h;
    s->head_dim = s->d_model / h;
    s->norm = SPEC_LAYERNORM;
    s->post_ln = 1;
    s->pos = SPEC_POS_LEARNED;
    s->qkv_bias = s->o_bias = s->mlp_bias = 1;
    s->causal = 0;
    s->head = SPEC_HEAD_NONE;
    return 0;
}

static const ck_name bert_names[] = {
    {CK_WTE, CK_AS_IS, "embeddings.word_embeddings.weight"},
    {CK_WPE, CK_AS_IS, "embeddings.position_embeddings.weight"},
    {CK_WTT, CK_AS_IS, "embeddings.token_type_embeddings.weight"},
    {CK_EMB_LN_G, CK_AS_IS, "embeddings.LayerNorm.weight"},
    {CK_EMB_LN_B, CK_AS_IS, "embeddings.LayerNorm.bias"},
    {CK_Q, CK_LINEAR, "attention.self.query.weight"},
    {CK_Q_B, CK_AS_IS, "attention.self.query.bias"},
    {CK_K, CK_LINEAR, "attention.self.key.weight"},
    {CK_K_B, CK_AS_IS, "attention.self.key.bias"},
    {CK_V, CK_LINEAR, "attention.self.value.weight"},
    {CK_V_B, CK_AS_IS, "attention.self.value.bias"},
    {CK_O, CK_LINEAR, "attention.output.dense.weight"},
    {CK_O_B, CK_AS_IS, "attention.output.dense.bias"},
    {CK_LN1_G, CK_AS_IS, "attention.output.LayerNorm.weight"},
    {CK_LN1_B, CK_AS_IS, "attention.output.LayerNorm.bias"},
    {CK_FC, CK_LINEAR, "intermediate.dense.weight"},
    {CK_FC_B, CK_AS_IS, "intermediate.dense.bias"},
    {CK_PROJ, CK_LINEAR, "output.dense.weight"},
    {CK_PROJ_B, CK_AS_IS, "output.dense.bias"},
    {CK_LN2_G, CK_AS_IS, "output.LayerNorm.weight"},
    {CK_LN2_B, CK_AS_IS, "output.LayerNorm.bias"},
};

const ckpt_family ckpt_family_bert = {.type = "bert",
                                      .title = "BERT",
                                      .prefix = "bert.",
                                      .layer = "encoder.layer.",
                                      .names = bert_names,
                                      .n_names = sizeof bert_names / sizeof bert_names[0],
                                      .buffers = NULL,
                                      .spec_of = bert_spec};
