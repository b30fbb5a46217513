/* trace.c: a transformer's forward on one sequence, kept layer by layer as an
 * attention view needs it (transformer.h), and the attn_layer filled from it.
 * Switching heads off is the core's sublayer's (sublayer.c), as every forward's: the
 * band of Concat zeroed, the output recomputed, and the output with every head on
 * kept beside it. */
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "mha.h"
#include "transformer.h"

tf_trace *tf_trace_create(const transformer *tf, int n) {
    const tf_config *c = &tf->cfg;
    if (n < 1 || n > c->ctx) return NULL;
    tf_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n = n;
    t->tf = tf;
    t->out_full = malloc((size_t)c->layers * n * c->d_model * sizeof(float));
    if (!t->out_full || tf_acts_alloc(&t->a, c, 1, n) != 0) {
        tf_trace_destroy(t);
        return NULL;
    }
    return t;
}

void tf_trace_destroy(tf_trace *t) {
    if (!t) return;
    tf_acts_free(&t->a);
    free(t->out_full);
    free(t);
}

void tf_trace_run(tf_trace *t, const int *tokens, const unsigned char *off) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    const int n = t->n, d = c->d_model, h = c->h;
    const size_t nd = (size_t)n * d;
    memset(t->off, 0, sizeof t->off);
    encoder_forward(t->a.x0, tokens, tf->p.wte, tf->p.wpe, 1, n, d);
    for (int i = 0; i < c->layers; i++) {
        int any = 0;
        for (int j = 0; off && j < h; j++)
            if (off[(size_t)i * h + j]) {
                t->off[i][j / 64] |= UINT64_C(1) << (j % 64);
                any = 1;
            }
        /* the output with every head on kept, then the heads off removed */
        tf_attn_forward(tf, &t->a, i, 1, n, any ? off + (size_t)i * h : NULL,
                        t->out_full + (size_t)i * nd);
        tf_block_rest_forward(tf, &t->a, i, 1, n);
    }
    tf_final_forward(tf, &t->a, 1, n);
}

void tf_trace_layer(attn_layer *L, const tf_trace *t, int layer, const char *const *tokens) {
    const transformer *tf = t->tf;
    const tf_config *c = &tf->cfg;
    MHA_EXPECT(layer >= 0 && layer < c->layers);
    const tf_layer_acts *la = &t->a.layer[layer];
    const tf_layer_params *lp = &tf->p.layer[layer];
    attn_layer_init(L, t->n, t->n, c->h, c->d_model, ATTN_MASK_CAUSAL, 1, 1.0f);
    L->layer = layer;
    L->layers = c->layers;
    L->tokens = tokens;
    L->x = la->ln1;
    L->x_what = layer == 0 ? "ln_1 of embedding + position" : "ln_1 of the residual stream";
    L->w_q = lp->w_q;
    L->w_k = lp->w_k;
    L->w_v = lp->w_v;
    L->w_o = lp->w_o;
    L->q = la->q;
    L->k = la->k;
    L->v = la->v;
    L->scores = la->scores;
    L->attn = la->attn;
    L->concat = la->concat;
    L->out = la->attproj;
    memcpy(L->off, t->off[layer], sizeof L->off);
    L->out_full =
        attn_layer_off_count(L) ? t->out_full + (size_t)layer * t->n * c->d_model : la->attproj;
}
