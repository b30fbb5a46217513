/* steps_missing.c: what a stage of the step-through says where the layer does not
 * hold the tensors it draws (a loaded model whose h head_dim is not d_model, whose
 * query heads share K/V heads, or a source that keeps none): why, in words, in the
 * place of the matrices not drawn, so that no stage is an empty frame. What the
 * stages draw is steps.c's; the notes' lines are eq_note.c's. */
#include <stdio.h>

#include "view_internal.h"

/* " Q_i and K_g before and after RoPE: stage 3." where the layer has that stage. */
static void rope_pointer(char *buf, size_t len, const attn_layer *layer, const char *i,
                         const char *g) {
    buf[0] = '\0';
    if (view_steps_count(layer) == 10)
        snprintf(buf, len, " Q%s and K%s, before and after RoPE, are stage 3.", i, g);
}

/* Stage 2: Q_i, K_i and V_i, each d_model wide in the view's layout. */
static int qkv_missing(const attn_layer *layer, int head, char *buf, size_t len) {
    const int n = layer->n, h = layer->h, dk = layer->d_k, d = layer->d_model;
    const int hkv = layer->h_kv > 0 && layer->h_kv < h ? layer->h_kv : h, g = head / (h / hkv);
    char i[16], gi[16], rope[96];
    view_subscript(i, sizeof i, head + 1);
    view_subscript(gi, sizeof gi, g + 1);
    rope_pointer(rope, sizeof rope, layer, i, hkv < h ? gi : i);
    if (!layer->q && h * dk != d) {
        snprintf(buf, len,
                 "Not drawn for this model: its Q is %d \xC3\x97 %d (h \xC2\xB7 d\xE2\x82\x96 = %d "
                 "\xC2\xB7 %d) and its K and V %d \xC3\x97 %d (%d K/V heads), not d_model = %d "
                 "wide as this view lays Q, K and V out.%s",
                 n, h * dk, h, dk, n, hkv * dk, hkv, d, rope);
        return 0;
    }
    if (!layer->q) {
        snprintf(buf, len, "Q, K and V are not drawn: this layer's source does not keep them.");
        return 0;
    }
    if (layer->k && layer->v) return -1;
    if (hkv < h) {
        const int r = h / hkv;
        snprintf(buf, len,
                 "K and V are not drawn here: head %d reads K/V head %d, shared by heads %d\xE2\x80"
                 "\x93%d (%d query heads share %d K/V heads), and this view lays out one K and V "
                 "per head.%s",
                 head + 1, g + 1, g * r + 1, (g + 1) * r, h, hkv, rope);
        return 1;
    }
    snprintf(buf, len, "K and V are not drawn: this layer's source does not keep them.");
    return 1;
}

int view_steps_missing(const attn_layer *layer, int head, int kind, char *buf, size_t len) {
    const int n = layer->n, h = layer->h, dk = layer->d_k, d = layer->d_model;
    const int wide = h * dk != d; /* Concat and W^O are not d_model wide */
    char i[16];
    view_subscript(i, sizeof i, head + 1);
    buf[0] = '\0';
    switch (kind) {
    case 1:
        if (layer->x) return -1;
        snprintf(buf, len, "X is not drawn: this layer's source does not keep it.");
        return 0;
    case 2: return qkv_missing(layer, head, buf, len);
    case 7:
        if (layer->heads) return -1;
        snprintf(buf, len, "head%s is not drawn: this layer's source does not keep it.", i);
        return 0;
    case 8:
        if (layer->concat) return -1;
        if (wide)
            snprintf(buf, len,
                     "Not drawn for this model: its Concat is %d \xC3\x97 %d (h \xC2\xB7 "
                     "d\xE2\x82\x96 = %d \xC2\xB7 %d \xE2\x89\xA0 d_model = %d), and this view "
                     "draws only matrices d_model wide. Its columns %d\xE2\x80\x93%d are head%s, "
                     "stage %d.",
                     n, h * dk, h, dk, d, head * dk + 1, (head + 1) * dk, i,
                     view_steps_count(layer) == 10 ? 8 : 7);
        else
            snprintf(buf, len, "Concat is not drawn: this layer's source does not keep it.");
        return 0;
    case 9:
        if (layer->w_o && layer->heads) return -1;
        if (!layer->w_o && wide)
            snprintf(buf, len,
                     "Not drawn for this model: its W\xE1\xB4\xBC is %d \xC3\x97 %d (h \xC2\xB7 "
                     "d\xE2\x82\x96 rows, d_model columns), and this view draws only matrices "
                     "d_model wide, so head%s's share is not computed here.",
                     h * dk, d, i);
        else
            snprintf(buf, len,
                     "Not drawn: this layer's source does not keep %s, so head%s's share is not "
                     "computed.",
                     layer->w_o ? "the heads" : "W\xE1\xB4\xBC", i);
        return 0;
    default: return -1;
    }
}
