/* layer.c: the small questions one asks of an attn_layer (which heads are off, how
 * much that changed MultiHead, a position's text) and the one attention scale.
 * Filling a layer is its source's job (mha.c, the trainer, a checkpoint). */
#include "layer.h"

#include <math.h>
#include <string.h>

float attn_scale(int d_k, int scaled, float temperature) {
    const double root = scaled ? sqrt((double)d_k) : 1.0;
    const double t = temperature > 0.0f ? (double)temperature : 1.0;
    return (float)(1.0 / (root * t));
}

void attn_layer_init(attn_layer *L, int n, int n_real, int h, int d_model, attn_mask mask,
                     int scaled, float temperature) {
    memset(L, 0, sizeof *L);
    L->n = n;
    L->n_real = n_real;
    L->h = h;
    L->d_model = d_model;
    L->d_k = h > 0 ? d_model / h : 0;
    L->layers = 1;
    L->mask = mask;
    L->scaled = scaled;
    L->temperature = temperature > 0.0f ? temperature : 1.0f;
    L->scale = L->d_k > 0 ? attn_scale(L->d_k, scaled, L->temperature) : 0.0f;
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
