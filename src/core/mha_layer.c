/* mha_layer.c: the random or designed model (mha.c) as a source: one function
 * that describes a computed mha_model as the attn_layer the view, the stats and
 * --dump read, and the model_source of one layer around it. It points into the
 * model and copies nothing of its tensors. */
#include <stdio.h>
#include <string.h>

#include "mha.h"

_Static_assert(MHA_MAX_D_MODEL <= ATTN_LAYER_MAX_HEADS, "every head fits in the layer's off set");

void mha_layer_fill(attn_layer *L, mha_layer_text *text, const mha_model *m, const tok_list *toks) {
    const mha_config *cfg = &m->cfg;
    const attn_mask mask = cfg->mask == MHA_MASK_CAUSAL ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE;
    if (m->n < 1) { /* not computed yet: nothing to describe but the settings */
        attn_layer_init(L, 0, 0, 0, 0, mask, !cfg->no_scale, cfg->temperature);
    } else {
        MHA_EXPECT(m->n <= MHA_MAX_N && m->n_real <= m->n && toks->count >= m->n_real);
        MHA_EXPECT(cfg->h >= 1 && cfg->h <= MHA_MAX_D_MODEL && m->d_k * cfg->h == cfg->d_model);
        attn_layer_init(L, m->n, m->n_real, cfg->h, cfg->d_model, mask, !cfg->no_scale,
                        cfg->temperature);
    }
    L->seed = cfg->seed;
    L->pad = cfg->pad;
    if (cfg->kv_heads > 0 && cfg->kv_heads < cfg->h) L->h_kv = cfg->kv_heads; /* K/V shared */
    L->designed = cfg->weights == MHA_WEIGHTS_PATTERNS;
    if (m->n < 1) return;
    for (int i = 0; i < m->n; i++) text->tokens[i] = mha_token(m, toks, i);
    L->tokens = text->tokens;
    if (L->designed) {
        for (int i = 0; i < cfg->h; i++) text->notes[i] = mha_head_pattern_name(m, i);
        L->head_note = text->notes;
    }
    L->x = m->x, L->w_q = m->w_q, L->w_k = m->w_k, L->w_v = m->w_v, L->w_o = m->w_o;
    L->q = m->q, L->k = m->k, L->v = m->v;
    L->scores = m->scores, L->attn = m->attn, L->heads = m->heads, L->concat = m->concat;
    L->out = m->out, L->out_full = m->out_full;
    for (int i = 0; i < cfg->h; i++)
        if (mha_config_is_ablated(cfg, i)) L->off[i / 64] |= UINT64_C(1) << (i % 64);
}

static int mha_source_layers(const void *self) {
    (void)self;
    return 1;
}

static int mha_source_layer(const void *self, int i, attn_layer *L) {
    const mha_source_ctx *c = self;
    if (i != 0) return -1;
    mha_layer_fill(L, c->text, c->m, c->toks);
    return 0;
}

static void mha_source_describe(const void *self, char *buf, size_t len) {
    const mha_config *cfg = &((const mha_source_ctx *)self)->m->cfg;
    if (cfg->weights == MHA_WEIGHTS_PATTERNS)
        snprintf(buf, len, "designed heads, h = %d, d_model = %d", cfg->h, cfg->d_model);
    else
        snprintf(buf, len, "random weights, seed %llu, h = %d, d_model = %d",
                 (unsigned long long)cfg->seed, cfg->h, cfg->d_model);
}

model_source mha_source(const mha_source_ctx *ctx) {
    return (model_source){mha_source_layers, mha_source_layer, mha_source_describe, ctx};
}
