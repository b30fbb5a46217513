/* layer.c: the small questions one asks of an attn_layer (which heads are off, how
 * much that changed MultiHead, a position's text) and the one attention scale.
 * Filling a layer is its source's job (mha.c, the trainer, a checkpoint). */
#include "layer.h"

#include <math.h>

float attn_scale(int d_k, int scaled, float temperature) {
    const double root = scaled ? sqrt((double)d_k) : 1.0;
    const double t = temperature > 0.0f ? (double)temperature : 1.0;
    return (float)(1.0 / (root * t));
}

int attn_layer_is_off(const attn_layer *L, int head) {
    if (head < 0 || head >= L->h || head >= ATTN_LAYER_MAX_HEADS) return 0;
    return (int)((L->off[head / 64] >> (head % 64)) & 1u);
}

int attn_layer_off_count(const attn_layer *L) {
    int count = 0;
    for (int i = 0; i < L->h && i < ATTN_LAYER_MAX_HEADS; i++) count += attn_layer_is_off(L, i);
    return count;
}

double attn_layer_off_delta(const attn_layer *L) {
    if (!L->out || !L->out_full) return 0.0;
    const size_t count = (size_t)L->n * L->d_model;
    double diff = 0.0, full = 0.0;
    for (size_t i = 0; i < count; i++) {
        double o = L->out[i], f = L->out_full[i];
        diff += (o - f) * (o - f);
        full += f * f;
    }
    return full > 0.0 ? sqrt(diff / full) : 0.0;
}

const char *attn_layer_token(const attn_layer *L, int i) {
    if (!L->tokens || i < 0 || i >= L->n) return "";
    return L->tokens[i] ? L->tokens[i] : "";
}

const char *attn_layer_head_note(const attn_layer *L, int head) {
    if (!L->head_note || head < 0 || head >= L->h) return NULL;
    return L->head_note[head];
}
