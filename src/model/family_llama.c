/* family_llama.c: the Llama family (family.h): llama, mistral, qwen2, qwen3, gemma
 * and phi3, whose
 * checkpoints share Hugging Face's LlamaForCausalLM layout (model.layers.N.self_attn
 * .q_proj.weight (out, in) and so on) and differ in a few config fields and their
 * defaults, which are those of Hugging Face's config classes: RMSNorm (Gemma's
 * 1 + w), RoPE with rope_theta and rope_scaling (linear, llama3), grouped-query
 * attention, head_dim read (Qwen3 and Gemma: not d_model / h), Qwen2's Q/K/V biases,
 * Qwen3's QK-norm, Gemma's sqrt(d_model) embedding scale and GeGLU, tied or separate
 * lm_head. Mistral and Phi-3 attend within a sliding_window of keys: a text no longer
 * than it sees no difference from causal attention, so the texts run are cut to it
 * (the spec's ctx), and the mask stays causal. Phi-3 stores Q, K, V as one qkv_proj
 * and gate, up as one gate_up_proj (nn.Linear's rows stacked: split on the way in). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "config_json.h"
#include "family.h"
#include "transformer.h"

/* What the four types set differently, or default differently. */
typedef struct {
    int vocab, ctx, head_dim; /* defaults; head_dim 0: hidden_size / heads */
    int tied;                 /* tie_word_embeddings' default */
    int qkv_bias;             /* 1: always (Qwen2); 0: attention_bias says, for all four */
    int qk_norm, gemma;
    int window; /* sliding_window's default (0: the type has none) */
    double eps; /* rms_norm_eps' default; 0: 1e-6 */
} llama_kind;

/* sliding_window: an integer, or null (none); what it allows is a text as long as it */
static int sliding_window(model_spec *s, json_t *root, const llama_kind *k, const char *path,
                          char *err, size_t errlen) {
    if (!k->window) return 0;
    json_t *v = json_object_get(root, "sliding_window");
    int w = k->window, rc;
    if (v && json_is_null(v)) return 0;
    if (v && (rc = cj_int(root, "sliding_window", 1, INT32_MAX, -1, &w, path, err, errlen)))
        return rc;
    if (w < s->ctx) s->ctx = w;
    return 0;
}

/* rope_scaling: null, or {"rope_type" (or "type"): default | linear | llama3, ...} */
static int rope_scaling(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    json_t *r = json_object_get(root, "rope_scaling");
    if (!r || json_is_null(r)) return 0;
    if (!json_is_object(r)) return cj_fail(err, errlen, 2, path, "rope_scaling is not an object");
    const char *type = NULL;
    int rc = cj_string(r, "rope_type", &type, path, err, errlen);
    if (!rc && !type) rc = cj_string(r, "type", &type, path, err, errlen);
    if (rc) return rc;
    if (!type) return cj_fail(err, errlen, 2, path, "rope_scaling has no rope_type");
    if (strcmp(type, "default") == 0) return 0;
    if (strcmp(type, "linear") != 0 && strcmp(type, "llama3") != 0)
        return cj_fail(err, errlen, 2, path, "rope_scaling type \"%.40s\" is not supported", type);
    if ((rc = cj_float(r, "factor", 0.0, 1e6, NAN, &s->rope_factor, path, err, errlen))) return rc;
    if (s->rope_factor < 1.0f)
        return cj_fail(err, errlen, 2, path, "rope_scaling's factor must be at least 1");
    s->rope_scaling = SPEC_ROPE_LINEAR;
    if (strcmp(type, "linear") == 0) return 0;
    s->rope_scaling = SPEC_ROPE_LLAMA3;
    if ((rc =
             cj_float(r, "low_freq_factor", 0.0, 1e6, NAN, &s->rope_low_freq, path, err, errlen)) ||
        (rc = cj_float(r, "high_freq_factor", 0.0, 1e6, NAN, &s->rope_high_freq, path, err,
                       errlen)) ||
        (rc = cj_int(r, "original_max_position_embeddings", 1, 1 << 24, -1, &s->rope_orig_ctx, path,
                     err, errlen)))
        return rc;
    if (!(s->rope_high_freq > s->rope_low_freq))
        return cj_fail(err, errlen, 2, path,
                       "rope_scaling's high_freq_factor must exceed its "
                       "low_freq_factor");
    return 0;
}

/* The MLP's non-linearity: SiLU (SwiGLU) for Llama and Qwen, GELU's tanh form
   (GeGLU) for Gemma, which names it hidden_activation first. */
static int activation(model_spec *s, json_t *root, const llama_kind *k, const char *path, char *err,
                      size_t errlen) {
    const char *a = NULL;
    int rc = 0;
    if (k->gemma) rc = cj_string(root, "hidden_activation", &a, path, err, errlen);
    if (!rc && !a) rc = cj_string(root, "hidden_act", &a, path, err, errlen);
    if (rc) return rc;
    if (!a) a = k->gemma ? "gelu_pytorch_tanh" : "silu";
    if (!k->gemma && strcmp(a, "silu") == 0) {
        s->mlp = SPEC_MLP_SWIGLU;
        return 0;
    }
    if (k->gemma && (strcmp(a, "gelu_pytorch_tanh") == 0 || strcmp(a, "gelu_new") == 0)) {
        s->mlp = SPEC_MLP_GEGLU;
        return 0;
    }
    return cj_fail(err, errlen, 2, path, "hidden activation \"%.40s\" is not supported", a);
}

static int llama_spec(model_spec *s, json_t *root, const llama_kind *k, const char *path, char *err,
                      size_t errlen) {
    int rc, h = 0, ctx = 0, bias = 0, mlp_bias = 0, tied = 0;
    memset(s, 0, sizeof *s);
    if ((rc = cj_int(root, "hidden_size", 1, TF_MAX_D_MODEL, -1, &s->d_model, path, err, errlen)) ||
        (rc = cj_int(root, "intermediate_size", 1, 4 * TF_MAX_D_MODEL, -1, &s->d_ff, path, err,
                     errlen)) ||
        (rc = cj_int(root, "num_hidden_layers", 1, TF_MAX_LAYERS, -1, &s->layers, path, err,
                     errlen)) ||
        (rc = cj_int(root, "num_attention_heads", 1, TF_MAX_D_MODEL, -1, &h, path, err, errlen)) ||
        (rc = cj_int(root, "num_key_value_heads", 1, h, h, &s->h_kv, path, err, errlen)) ||
        (rc =
             cj_int(root, "head_dim", 1, TF_MAX_D_MODEL, k->head_dim ? k->head_dim : s->d_model / h,
                    &s->head_dim, path, err, errlen)) ||
        (rc =
             cj_int(root, "vocab_size", 1, TF_MAX_VOCAB, k->vocab, &s->vocab, path, err, errlen)) ||
        (rc = cj_int(root, "max_position_embeddings", 1, INT32_MAX, k->ctx, &ctx, path, err,
                     errlen)) ||
        (rc = cj_float(root, "rms_norm_eps", 0.0, 1.0, k->eps > 0 ? k->eps : 1e-6, &s->norm_eps,
                       path, err, errlen)) ||
        (rc =
             cj_float(root, "rope_theta", 1.0, 1e12, 10000.0, &s->rope_theta, path, err, errlen)) ||
        (rc = cj_bool(root, "tie_word_embeddings", k->tied, &tied, path, err, errlen)) ||
        (rc = cj_bool(root, "attention_bias", 0, &bias, path, err, errlen)) ||
        (rc = cj_bool(root, "mlp_bias", 0, &mlp_bias, path, err, errlen)) ||
        (rc = rope_scaling(s, root, path, err, errlen)) ||
        (rc = activation(s, root, k, path, err, errlen)))
        return rc;
    if (h % s->h_kv)
        return cj_fail(err, errlen, 2, path,
                       "num_key_value_heads %d does not divide "
                       "num_attention_heads %d",
                       s->h_kv, h);
    if (mlp_bias) return cj_fail(err, errlen, 2, path, "mlp_bias = true is not supported");
    s->h = h;
    s->head = tied ? SPEC_HEAD_TIED : SPEC_HEAD_LINEAR;
    s->ctx = ctx < TF_MAX_CTX ? ctx : TF_MAX_CTX; /* RoPE: the longest text we run */
    s->norm = k->gemma ? SPEC_RMSNORM_P1 : SPEC_RMSNORM;
    s->pos = SPEC_POS_ROPE;
    s->qkv_bias = k->qkv_bias || bias;
    s->o_bias = bias;
    s->qk_norm = k->qk_norm;
    s->causal = 1;
    s->emb_scale = k->gemma ? (float)sqrt((double)s->d_model) : 0.0f;
    return sliding_window(s, root, k, path, err, errlen);
}

static int llama(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    static const llama_kind k = {.vocab = 32000, .ctx = 2048};
    return llama_spec(s, root, &k, path, err, errlen);
}
static int qwen2(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    static const llama_kind k = {.vocab = 151936, .ctx = 32768, .qkv_bias = 1};
    return llama_spec(s, root, &k, path, err, errlen);
}
static int qwen3(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    static const llama_kind k = {.vocab = 151936, .ctx = 32768, .head_dim = 128, .qk_norm = 1};
    return llama_spec(s, root, &k, path, err, errlen);
}
static int gemma(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    static const llama_kind k = {
        .vocab = 256000, .ctx = 8192, .head_dim = 256, .tied = 1, .gemma = 1};
    return llama_spec(s, root, &k, path, err, errlen);
}

static int mistral(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    static const llama_kind k = {.vocab = 32000, .ctx = 131072, .window = 4096};
    return llama_spec(s, root, &k, path, err, errlen);
}
/* Phi-3: Llama's spec (partial_rotary_factor 1 only: RoPE over the whole head) */
static int phi3(model_spec *s, json_t *root, const char *path, char *err, size_t errlen) {
    static const llama_kind k = {.vocab = 32064, .ctx = 4096, .window = INT32_MAX, .eps = 1e-5};
    float f = 1.0f;
    int rc = cj_float(root, "partial_rotary_factor", 0.0, 2.0, 1.0, &f, path, err, errlen);
    if (!rc && f != 1.0f)
        rc = cj_fail(err, errlen, 2, path, "partial_rotary_factor %g is not supported (only 1)",
                     (double)f);
    return rc ? rc : llama_spec(s, root, &k, path, err, errlen);
}

static const ck_name llama_names[] = {
    {CK_WTE, CK_AS_IS, "embed_tokens.weight"},
    {CK_LNF_G, CK_AS_IS, "norm.weight"},
    {CK_LM_HEAD, CK_AS_IS, "lm_head.weight"},
    {CK_LN1_G, CK_AS_IS, "input_layernorm.weight"},
    {CK_Q, CK_LINEAR, "self_attn.q_proj.weight"},
    {CK_K, CK_LINEAR, "self_attn.k_proj.weight"},
    {CK_V, CK_LINEAR, "self_attn.v_proj.weight"},
    {CK_Q_B, CK_AS_IS, "self_attn.q_proj.bias"},
    {CK_K_B, CK_AS_IS, "self_attn.k_proj.bias"},
    {CK_V_B, CK_AS_IS, "self_attn.v_proj.bias"},
    {CK_O, CK_LINEAR, "self_attn.o_proj.weight"},
    {CK_O_B, CK_AS_IS, "self_attn.o_proj.bias"},
    {CK_Q_NORM, CK_AS_IS, "self_attn.q_norm.weight"},
    {CK_K_NORM, CK_AS_IS, "self_attn.k_norm.weight"},
    {CK_LN2_G, CK_AS_IS, "post_attention_layernorm.weight"},
    {CK_GATE, CK_LINEAR, "mlp.gate_proj.weight"},
    {CK_FC, CK_LINEAR, "mlp.up_proj.weight"},
    {CK_PROJ, CK_LINEAR, "mlp.down_proj.weight"},
};

static const char *const llama_buffers[] = {"self_attn.rotary_emb.inv_freq", NULL};

#define LLAMA_FAMILY(t, title_, fn)                                                                \
    {                                                                                              \
        .type = t, .title = title_, .prefix = "model.", .layer = "layers.", .names = llama_names,  \
        .n_names = sizeof llama_names / sizeof llama_names[0], .buffers = llama_buffers,           \
        .untied = "differs from embed_tokens.weight, but config.json ties them", .spec_of = fn     \
    }

const ckpt_family ckpt_family_llama = LLAMA_FAMILY("llama", "Llama", llama);
const ckpt_family ckpt_family_qwen2 = LLAMA_FAMILY("qwen2", "Qwen2", qwen2);
const ckpt_family ckpt_family_qwen3 = LLAMA_FAMILY("qwen3", "Qwen3", qwen3);
const ckpt_family ckpt_family_gemma = LLAMA_FAMILY("gemma", "Gemma", gemma);
const ckpt_family ckpt_family_mistral = LLAMA_FAMILY("mistral", "Mistral", mistral);

/* Phi-3's names: Llama's, with Q | K | V and gate | up each one nn.Linear */
static const ck_name phi3_names[] = {
    {CK_WTE, CK_AS_IS, "embed_tokens.weight"},
    {CK_LNF_G, CK_AS_IS, "norm.weight"},
    {CK_LM_HEAD, CK_AS_IS, "lm_head.weight"},
    {CK_LN1_G, CK_AS_IS, "input_layernorm.weight"},
    {CK_QKV, CK_LINEAR_ROWS, "self_attn.qkv_proj.weight"},
    {CK_O, CK_LINEAR, "self_attn.o_proj.weight"},
    {CK_LN2_G, CK_AS_IS, "post_attention_layernorm.weight"},
    {CK_GATE_UP, CK_LINEAR_ROWS, "mlp.gate_up_proj.weight"},
    {CK_PROJ, CK_LINEAR, "mlp.down_proj.weight"},
};

const ckpt_family ckpt_family_phi3 = {
    .type = "phi3",
    .title = "Phi-3",
    .prefix = "model.",
    .layer = "layers.",
    .names = phi3_names,
    .n_names = sizeof phi3_names / sizeof phi3_names[0],
    .buffers = llama_buffers,
    .untied = "differs from embed_tokens.weight, but config.json ties them",
    .spec_of = phi3,
};
