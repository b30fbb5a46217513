/* family_distilbert.c: the DistilBERT encoder (family.h): Hugging Face's
 * DistilBertModel layout, "distilbert." prefix or none, and DistilBertForMaskedLM's
 * head (vocab_transform, vocab_layer_norm, vocab_projector) when the file has it.
 * BERT's post-LN block under other names (q_lin ... out_lin, sa_layer_norm,
 * ffn.lin1 / lin2, output_layer_norm), no token types, LayerNorm epsilon 1e-12
 * (fixed in modeling_distilbert.py, not in config.json), the activation as
 * config.json's `activation` says, in the MLP and in the head alike. */
#include <string.h>

#include "config_json.h"
#include "family.h"
#include "transformer.h"

static int distilbert_spec(model_spec *s, json_t *root, const char *path, char *err,
                           size_t errlen) {
    int rc, h = 0, rows = 0, sin = 0, tied = 1;
    const char *act = NULL;
    memset(s, 0, sizeof *s);
    if ((rc = cj_int(root, "dim", 1, TF_MAX_D_MODEL, -1, &s->d_model, path, err, errlen)) ||
        (rc = cj_int(root, "n_layers", 1, TF_MAX_LAYERS, -1, &s->layers, path, err, errlen)) ||
        (rc = cj_int(root, "n_heads", 1, TF_MAX_D_MODEL, -1, &h, path, err, errlen)) ||
        (rc = cj_int(root, "hidden_dim", 1, 4 * TF_MAX_D_MODEL, -1, &s->d_ff, path, err, errlen)) ||
        (rc = cj_int(root, "vocab_size", 1, TF_MAX_VOCAB, -1, &s->vocab, path, err, errlen)) ||
        (rc = cj_int(root, "max_position_embeddings", 1, 2 * TF_MAX_CTX, 512, &rows, path, err,
                     errlen)) ||
        (rc = cj_string(root, "activation", &act, path, err, errlen)) ||
        (rc = cj_bool(root, "sinusoidal_pos_embds", 0, &sin, path, err, errlen)) ||
        (rc = cj_bool(root, "tie_word_embeddings", 1, &tied, path, err, errlen)))
        return rc;
    /* with it, Hugging Face rewrites the position table with sines when the model is
       built, whatever the file holds: not reproduced here */
    if (sin)
        return cj_fail(err, errlen, 2, path,
                       "sinusoidal_pos_embds = true is not supported (only learned positions)");
    if (s->d_model % h)
        return cj_fail(err, errlen, 2, path, "n_heads %d does not divide dim %d", h, s->d_model);
    if ((rc = family_act(&s->mlp, act ? act : "gelu", "activation", path, err, errlen))) return rc;
    s->pos_rows = rows;
    s->ctx = rows < TF_MAX_CTX ? rows : TF_MAX_CTX;
    s->h = s->h_kv = h;
    s->head_dim = s->d_model / h;
    s->norm = SPEC_LAYERNORM;
    s->norm_eps = 1e-12f;
    s->post_ln = 1;
    s->pos = SPEC_POS_LEARNED;
    s->qkv_bias = s->o_bias = s->mlp_bias = 1;
    s->head = SPEC_HEAD_NONE;
    s->mlm_tied = tied;
    s->mlm_act = s->mlp;
    return 0;
}

static const ck_name distilbert_names[] = {
    {CK_WTE, CK_AS_IS, "embeddings.word_embeddings.weight"},
    {CK_WPE, CK_AS_IS, "embeddings.position_embeddings.weight"},
    {CK_EMB_LN_G, CK_AS_IS, "embeddings.LayerNorm.weight"},
    {CK_EMB_LN_B, CK_AS_IS, "embeddings.LayerNorm.bias"},
    {CK_Q, CK_LINEAR, "attention.q_lin.weight"},
    {CK_Q_B, CK_AS_IS, "attention.q_lin.bias"},
    {CK_K, CK_LINEAR, "attention.k_lin.weight"},
    {CK_K_B, CK_AS_IS, "attention.k_lin.bias"},
    {CK_V, CK_LINEAR, "attention.v_lin.weight"},
    {CK_V_B, CK_AS_IS, "attention.v_lin.bias"},
    {CK_O, CK_LINEAR, "attention.out_lin.weight"},
    {CK_O_B, CK_AS_IS, "attention.out_lin.bias"},
    {CK_LN1_G, CK_AS_IS, "sa_layer_norm.weight"},
    {CK_LN1_B, CK_AS_IS, "sa_layer_norm.bias"},
    {CK_FC, CK_LINEAR, "ffn.lin1.weight"},
    {CK_FC_B, CK_AS_IS, "ffn.lin1.bias"},
    {CK_PROJ, CK_LINEAR, "ffn.lin2.weight"},
    {CK_PROJ_B, CK_AS_IS, "ffn.lin2.bias"},
    {CK_LN2_G, CK_AS_IS, "output_layer_norm.weight"},
    {CK_LN2_B, CK_AS_IS, "output_layer_norm.bias"},
    {CK_MLM_DENSE, CK_LINEAR, "vocab_transform.weight"},
    {CK_MLM_DENSE_B, CK_AS_IS, "vocab_transform.bias"},
    {CK_MLM_LN_G, CK_AS_IS, "vocab_layer_norm.weight"},
    {CK_MLM_LN_B, CK_AS_IS, "vocab_layer_norm.bias"},
    {CK_MLM_DEC, CK_AS_IS, "vocab_projector.weight"},
    {CK_MLM_BIAS, CK_AS_IS, "vocab_projector.bias"},
};

static const char *const distilbert_outside[] = {"vocab_", NULL};
static const char *const distilbert_ignored[] = {"embeddings.position_ids", NULL};
static const char *const distilbert_copies[] = {"vocab_projector.weight",
                                                "embeddings.word_embeddings.weight", NULL};

const ckpt_family ckpt_family_distilbert = {.type = "distilbert",
                                            .title = "DistilBERT",
                                            .prefix = "distilbert.",
                                            .layer = "transformer.layer.",
                                            .names = distilbert_names,
                                            .n_names = sizeof distilbert_names /
                                                       sizeof distilbert_names[0],
                                            .outside = distilbert_outside,
                                            .ignored = distilbert_ignored,
                                            .mlm_probe = "vocab_transform.weight",
                                            .copies = distilbert_copies,
                                            .spec_of = distilbert_spec};
