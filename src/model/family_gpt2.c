/* family_gpt2.c: the GPT-2 family (family.h). config.json gives n_layer, n_head,
 * n_embd, n_positions, vocab_size and layer_norm_epsilon (read, never assumed);
 * fields that would change the arithmetic must have GPT-2's values. Hugging
 * Face's GPT2LMHeadModel names, with or without "transformer."; Conv1D weights
 * stored (in, out), c_attn (d, 3d) being W_Q | W_K | W_V by columns; the causal
 * mask buffers attn.bias / attn.masked_bias are not weights. */
#include <math.h>
#include <string.h>

#include "config_json.h"
#include "family.h"
#include "transformer.h"

/* An optional boolean that must have the value GPT-2 has, if it is there. */
static int want_bool(json_t *root, const char *key, int want, const char *path, char *err,
                     size_t errlen) {
    json_t *v = json_object_get(root, key);
    if (!v) return 0;
    if (!json_is_boolean(v)) return cj_fail(err, errlen, 2, path, "%s is not true or false", key);
    if (json_is_true(v) != want)
        return cj_fail(err, errlen, 2, path, "%s = %s is not supported", key,
                       want ? "false" : "true");
    return 0;
}

static int gpt2_spec(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    int rc, layers = 0, h = 0, d = 0, ctx = 0, vocab = 0;
    float eps = 0.0f;
    if ((rc = cj_int(root, "n_layer", 1, TF_MAX_LAYERS, -1, &layers, path, err, errlen)) ||
        (rc = cj_int(root, "n_head", 1, TF_MAX_D_MODEL, -1, &h, path, err, errlen)) ||
        (rc = cj_int(root, "n_embd", 1, TF_MAX_D_MODEL, -1, &d, path, err, errlen)) ||
        (rc = cj_int(root, "n_positions", 1, TF_MAX_CTX, -1, &ctx, path, err, errlen)) ||
        (rc = cj_int(root, "vocab_size", 1, TF_MAX_VOCAB, -1, &vocab, path, err, errlen)))
        return rc;
    if (d % h != 0)
        return cj_fail(err, errlen, 2, path, "n_head %d does not divide n_embd %d", h, d);
    if ((rc = cj_float(root, "layer_norm_epsilon", 0.0, 1.0, NAN, &eps, path, err, errlen)))
        return rc;
    /* the non-linearity: GPT-2's tanh form under either of its names */
    const char *a = NULL;
    if ((rc = cj_string(root, "activation_function", &a, path, err, errlen))) return rc;
    if (json_is_null(json_object_get(root, "activation_function")))
        return cj_fail(err, errlen, 2, path, "activation_function is not a string");
    if (a && strcmp(a, "gelu_new") != 0 && strcmp(a, "gelu_pytorch_tanh") != 0)
        return cj_fail(err, errlen, 2, path,
                       "activation_function \"%.40s\" is not supported (only gelu_new)", a);
    /* fields that would change the arithmetic, if set away from GPT-2's values */
    json_t *v = json_object_get(root, "n_inner");
    if (v && !json_is_null(v) &&
        (!json_is_integer(v) || json_integer_value(v) != 4 * (json_int_t)d))
        return cj_fail(err, errlen, 2, path, "n_inner must be null or 4 n_embd (%d)", 4 * d);
    if ((rc = want_bool(root, "scale_attn_weights", 1, path, err, errlen)) ||
        (rc = want_bool(root, "scale_attn_by_inverse_layer_idx", 0, path, err, errlen)) ||
        (rc = want_bool(root, "add_cross_attention", 0, path, err, errlen)))
        return rc;
    *s = (model_spec){.vocab = vocab,
                      .ctx = ctx,
                      .layers = layers,
                      .d_model = d,
                      .d_ff = 4 * d,
                      .norm = SPEC_LAYERNORM,
                      .norm_eps = eps,
                      .pos = SPEC_POS_LEARNED,
                      .h = h,
                      .h_kv = h,
                      .head_dim = d / h,
                      .qkv_bias = 1,
                      .o_bias = 1,
                      .causal = 1,
                      .mlp = SPEC_MLP_GELU_TANH,
                      .mlp_bias = 1,
                      .head = SPEC_HEAD_TIED};
    return 0;
}

static const ck_name gpt2_names[] = {
    {CK_WTE, CK_AS_IS, "wte.weight"},          {CK_WPE, CK_AS_IS, "wpe.weight"},
    {CK_LNF_G, CK_AS_IS, "ln_f.weight"},       {CK_LNF_B, CK_AS_IS, "ln_f.bias"},
    {CK_LN1_G, CK_AS_IS, "ln_1.weight"},       {CK_LN1_B, CK_AS_IS, "ln_1.bias"},
    {CK_QKV, CK_SPLIT3, "attn.c_attn.weight"}, {CK_QKV_B, CK_SPLIT3, "attn.c_attn.bias"},
    {CK_O, CK_AS_IS, "attn.c_proj.weight"},    {CK_O_B, CK_AS_IS, "attn.c_proj.bias"},
    {CK_LN2_G, CK_AS_IS, "ln_2.weight"},       {CK_LN2_B, CK_AS_IS, "ln_2.bias"},
    {CK_FC, CK_AS_IS, "mlp.c_fc.weight"},      {CK_FC_B, CK_AS_IS, "mlp.c_fc.bias"},
    {CK_PROJ, CK_AS_IS, "mlp.c_proj.weight"},  {CK_PROJ_B, CK_AS_IS, "mlp.c_proj.bias"},
};

static const char *const gpt2_buffers[] = {"attn.bias", "attn.masked_bias", NULL};

const ckpt_family ckpt_family_gpt2 = {.type = "gpt2",
                                      .title = "GPT-2",
                                      .prefix = "transformer.",
                                      .layer = "h.",
                                      .names = gpt2_names,
                                      .n_names = sizeof gpt2_names / sizeof gpt2_names[0],
                                      .buffers = gpt2_buffers,
                                      .untied = "differs from wte: untied models are not "
                                                "supported",
                                      .spec_of = gpt2_spec};
