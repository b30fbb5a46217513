/* family_albert.c: the ALBERT encoder (family.h): Hugging Face's AlbertModel
 * layout, "albert." prefix or none, and AlbertForMaskedLM's head (predictions.*)
 * when the file has it. BERT's config and post-LN block, with two differences:
 * the embeddings are embedding_size wide (their LayerNorm too) and mapped to
 * hidden_size by encoder.embedding_hidden_mapping_in; and one layer's weights
 * (albert_layer_groups.0.albert_layers.0) are applied num_hidden_layers times.
 * Read with one group of one layer, as every published ALBERT has; more groups or
 * inner layers are refused. The head maps hidden_size back to embedding_size. */
#include <string.h>

#include "config_json.h"
#include "family.h"
#include "transformer.h"

static int albert_spec(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    int rc = family_encoder_config(s, root, "gelu_new", path, err, errlen), e = 0, groups = 0,
        inner = 0;
    if (rc ||
        (rc = cj_int(root, "embedding_size", 1, TF_MAX_D_MODEL, 128, &e, path, err, errlen)) ||
        (rc = cj_int(root, "num_hidden_groups", 1, TF_MAX_LAYERS, 1, &groups, path, err, errlen)) ||
        (rc = cj_int(root, "inner_group_num", 1, TF_MAX_LAYERS, 1, &inner, path, err, errlen)))
        return rc;
    /* groups > 1 split the layers among several shared layers, inner > 1 makes each
       "layer" a stack: neither is in the published checkpoints, nor read here */
    if (groups != 1)
        return cj_fail(err, errlen, 2, path,
                       "num_hidden_groups %d is not supported (only 1: one shared layer)", groups);
    if (inner != 1)
        return cj_fail(err, errlen, 2, path,
                       "inner_group_num %d is not supported (only 1: one shared layer)", inner);
    s->d_embed = e;
    s->shared_layers = 1;
    return 0;
}

static const ck_name albert_names[] = {
    {CK_WTE, CK_AS_IS, "embeddings.word_embeddings.weight"},
    {CK_WPE, CK_AS_IS, "embeddings.position_embeddings.weight"},
    {CK_WTT, CK_AS_IS, "embeddings.token_type_embeddings.weight"},
    {CK_EMB_LN_G, CK_AS_IS, "embeddings.LayerNorm.weight"},
    {CK_EMB_LN_B, CK_AS_IS, "embeddings.LayerNorm.bias"},
    {CK_EMB_MAP, CK_LINEAR, "encoder.embedding_hidden_mapping_in.weight"},
    {CK_EMB_MAP_B, CK_AS_IS, "encoder.embedding_hidden_mapping_in.bias"},
    {CK_Q, CK_LINEAR, "attention.query.weight"},
    {CK_Q_B, CK_AS_IS, "attention.query.bias"},
    {CK_K, CK_LINEAR, "attention.key.weight"},
    {CK_K_B, CK_AS_IS, "attention.key.bias"},
    {CK_V, CK_LINEAR, "attention.value.weight"},
    {CK_V_B, CK_AS_IS, "attention.value.bias"},
    {CK_O, CK_LINEAR, "attention.dense.weight"},
    {CK_O_B, CK_AS_IS, "attention.dense.bias"},
    {CK_LN1_G, CK_AS_IS, "attention.LayerNorm.weight"},
    {CK_LN1_B, CK_AS_IS, "attention.LayerNorm.bias"},
    {CK_FC, CK_LINEAR, "ffn.weight"},
    {CK_FC_B, CK_AS_IS, "ffn.bias"},
    {CK_PROJ, CK_LINEAR, "ffn_output.weight"},
    {CK_PROJ_B, CK_AS_IS, "ffn_output.bias"},
    {CK_LN2_G, CK_AS_IS, "full_layer_layer_norm.weight"},
    {CK_LN2_B, CK_AS_IS, "full_layer_layer_norm.bias"},
    {CK_MLM_DENSE, CK_LINEAR, "predictions.dense.weight"},
    {CK_MLM_DENSE_B, CK_AS_IS, "predictions.dense.bias"},
    {CK_MLM_LN_G, CK_AS_IS, "predictions.LayerNorm.weight"},
    {CK_MLM_LN_B, CK_AS_IS, "predictions.LayerNorm.bias"},
    {CK_MLM_DEC, CK_AS_IS, "predictions.decoder.weight"},
    {CK_MLM_BIAS, CK_AS_IS, "predictions.bias"},
};

static const char *const albert_outside[] = {"predictions.", "sop_classifier.", NULL};
/* the pooler and the sentence-order head read [CLS] alone */
static const char *const albert_ignored[] = {"embeddings.position_ids",
                                             "embeddings.token_type_ids",
                                             "pooler.weight",
                                             "pooler.bias",
                                             "sop_classifier.classifier.weight",
                                             "sop_classifier.classifier.bias",
                                             NULL};
static const char *const albert_copies[] = {"predictions.decoder.bias", "predictions.bias",
                                            "predictions.decoder.weight",
                                            "embeddings.word_embeddings.weight", NULL};

const ckpt_family ckpt_family_albert = {.type = "albert",
                                        .title = "ALBERT",
                                        .prefix = "albert.",
                                        .layer = "encoder.albert_layer_groups.0.albert_layers.",
                                        .names = albert_names,
                                        .n_names = sizeof albert_names / sizeof albert_names[0],
                                        .outside = albert_outside,
                                        .ignored = albert_ignored,
                                        .mlm_probe = "predictions.dense.weight",
                                        .copies = albert_copies,
                                        .gamma_beta = 1,
                                        .spec_of = albert_spec};
