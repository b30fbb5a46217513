/* model_spec.c: the trainer's spec from its tf_config, and the checks every spec
 * passes before a transformer is made of it (model_spec.h, transformer.h). */
#include <stdio.h>

#include "transformer.h"

void tf_spec_of_config(model_spec *s, const tf_config *c) {
    *s = (model_spec){.vocab = c->vocab,
                      .ctx = c->ctx,
                      .layers = c->layers,
                      .d_model = c->d_model,
                      .d_ff = c->mlp ? c->d_ff : 0,
                      .norm = SPEC_LAYERNORM,
                      .norm_eps = c->ln_eps,
                      .pos = SPEC_POS_LEARNED,
                      .h = c->h,
                      .h_kv = c->h,
                      .head_dim = c->h ? c->d_model / c->h : 0,
                      .qkv_bias = c->attn_bias,
                      .o_bias = c->attn_bias,
                      .causal = 1,
                      .mlp = c->act == TF_ACT_GELU   ? SPEC_MLP_GELU_ERF
                             : c->act == TF_ACT_RELU ? SPEC_MLP_RELU
                                                     : SPEC_MLP_GELU_TANH,
                      .mlp_bias = 1,
                      .head = c->tied ? SPEC_HEAD_TIED : SPEC_HEAD_DENSE};
}

/* The first thing wrong with s, or NULL. */
static const char *spec_fault(const model_spec *s) {
    if (s->vocab < 1 || s->vocab > TF_MAX_VOCAB) return "vocab must be 1..65536";
    if (s->ctx < 1 || s->ctx > TF_MAX_CTX) return "context length must be 1..1024";
    if (s->layers < 1 || s->layers > TF_MAX_LAYERS) return "layers must be 1..48";
    if (s->d_model < 1 || s->d_model > TF_MAX_D_MODEL) return "d_model must be 1..4096";
    if (s->h < 1 || s->head_dim < 1 || (long)s->h * s->head_dim > TF_MAX_D_MODEL)
        return "heads times head_dim must be 1..4096";
    if (s->h_kv < 1 || s->h % s->h_kv) return "key/value heads must divide the heads";
    if (s->d_ff < 0 || s->d_ff > 4 * TF_MAX_D_MODEL) return "d_ff must be 0..16384";
    if ((unsigned)s->norm > SPEC_RMSNORM_P1) return "unknown norm";
    if (!(s->norm_eps > 0.0f && s->norm_eps < 1.0f)) return "norm epsilon must be in (0, 1)";
    if ((unsigned)s->mlp > SPEC_MLP_GEGLU) return "unknown MLP";
    if ((unsigned)s->head > SPEC_HEAD_NONE) return "unknown head";
    if (s->token_types < 0 || s->token_types > 16) return "token types must be 0..16";
    if (s->d_embed < 0 || s->d_embed > TF_MAX_D_MODEL) return "d_embed must be 0..4096";
    if (s->pos_after_pad && (s->pad_id < 0 || s->pad_id >= s->vocab))
        return "the padding id must be a token";
    if (s->pos == SPEC_POS_LEARNED &&
        spec_pos_rows(s) < s->ctx + (s->pos_after_pad ? s->pad_id + 1 : 0))
        return "too few position rows for the context";
    if (s->pos == SPEC_POS_LEARNED) return NULL;
    if (s->pos != SPEC_POS_ROPE) return "unknown positions";
    if (s->head_dim % 2) return "RoPE needs an even head_dim";
    if (!(s->rope_theta > 1.0f)) return "rope_theta must be above 1";
    if (s->rope_scaling == SPEC_ROPE_PLAIN) return NULL;
    if (!(s->rope_factor >= 1.0f)) return "rope_scaling's factor must be at least 1";
    if (s->rope_scaling == SPEC_ROPE_LINEAR) return NULL;
    if (s->rope_scaling != SPEC_ROPE_LLAMA3) return "unknown rope_scaling";
    if (!(s->rope_low_freq > 0.0f && s->rope_high_freq > s->rope_low_freq) || s->rope_orig_ctx < 1)
        return "llama3 rope_scaling needs 0 < low_freq_factor < high_freq_factor and an "
               "original context";
    return NULL;
}

int tf_spec_check(const model_spec *s, char *err, size_t errlen) {
    const char *bad = spec_fault(s);
    if (!bad) return 0;
    snprintf(err, errlen, "transformer: %s", bad);
    return -1;
}
