/* steps.c: draws the step-through of one head, stage by stage, from X to its
 * share of MultiHead: each stage's formula with the head's number, its matrices
 * on their own scales (signed ones diverging, the weights sequential, masked
 * cells hatched), the current stage framed and its formula written large.
 * Where the cells go is layout_steps.c's; the numbers are the layer's (a stage
 * whose tensor the layer lacks is left empty) and the state's derived ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

/* Stage k's title (1-based k) for head i and what is in effect. */
static void stage_title(char *buf, size_t len, int k, const attn_layer *layer, int head) {
    char i[16];
    view_subscript(i, sizeof i, head + 1);
    const float t = layer->temperature > 0.0f ? layer->temperature : 1.0f;
    char div[48] = "";
    if (layer->scaled && fabsf(t - 1.0f) > 1e-6f)
        snprintf(div, sizeof div, "\xE2\x88\x9A%d \xC2\xB7 %g", layer->d_k, (double)t);
    else if (layer->scaled)
        snprintf(div, sizeof div, "\xE2\x88\x9A%d", layer->d_k);
    else
        snprintf(div, sizeof div, "%g", (double)t);
    const int masked = layer->mask == ATTN_MASK_CAUSAL || layer->n_real < layer->n;
    switch (k) {
    case 1:
        snprintf(buf, len, "1  X: %s", layer->x_what ? layer->x_what : "embedding + position");
        break;
    case 2: snprintf(buf, len, "2  Q%s, K%s, V%s = X W%s", i, i, i, i); break;
    case 3: snprintf(buf, len, "3  S%s = Q%s K%s\xE1\xB5\x80", i, i, i); break;
    case 4: snprintf(buf, len, "4  S%s / %s", i, div); break;
    case 5:
        snprintf(buf, len, "5  + mask: %s",
                 masked ? "\xE2\x88\x92\xE2\x88\x9E where masked" : "none (M, E)");
        break;
    case 6: snprintf(buf, len, "6  A%s = softmax of each row", i); break;
    case 7: snprintf(buf, len, "7  head%s = A%s V%s", i, i, i); break;
    case 8:
        snprintf(buf, len, "8  Concat: columns %d\xE2\x80\x93%d", head * layer->d_k + 1,
                 (head + 1) * layer->d_k);
        break;
    default: snprintf(buf, len, "9  head%s W\xE1\xB4\xBC%s: its share of MultiHead", i, i); break;
    }
}

/* The caption over the stages: the current stage's formula, large, or (none
 * current) the whole way from X to MultiHead. */
static void draw_caption(const view_ctx *c, const view_steps *S, int head, int current,
                         rgba accent) {
    char cap[200], fitted[200];
    if (current >= 1 && current <= VIEW_STEPS) {
        stage_title(cap, sizeof cap, current, c->s->layer, head);
        size_t o = strlen(cap);
        snprintf(cap + o, sizeof cap - o, "   (stage %d of %d%s)", current, VIEW_STEPS,
                 c->s->figure ? "" : ": , and . step"); /* no key hint on a figure or deck page */
    } else {
        snprintf(cap, sizeof cap,
                 "head %d, step by step: X \xE2\x86\x92 Q, K, V \xE2\x86\x92 S "
                 "\xE2\x86\x92 scaled \xE2\x86\x92 masked \xE2\x86\x92 softmax "
                 "\xE2\x86\x92 head \xE2\x86\x92 Concat \xE2\x86\x92 \xC2\xB7 W\xE1\xB4\xBC",
                 head + 1);
    }
    view_fit_text(fitted, sizeof fitted, cap, S->caption.w, c->L->font_title, 1, c->measure, c->ud);
    draw_text(c->dl, S->caption.x, S->caption.y, fitted, c->L->font_title, accent, 1, 0);
}

/* Stage 6: the head's attention weights as the heads grid draws them, framed in
 * its colour, with their shape and the sequential colorbar. */
static void draw_attn_stage(const view_ctx *c, const view_matrix_box *b, int head, uint64_t key,
                            rgba accent) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n;
    const size_t at = (size_t)head * n * n;
    int iw = 0, ih = 0;
    uint64_t k2 = view_key_mix(view_key_mix(key, (uint64_t)head), c->s->data_version);
    const float *attn = view_at(layer->attn, at), *scores = view_at(layer->scores, at);
    const rgba *px = view_attn_image(c, k2, attn, scores, n, b->map.w, b->map.h, &iw, &ih, &k2);
    draw_image_cmd(c->dl, b->map, iw, ih, px, k2);
    view_draw_masks(c, b->map);
    view_draw_weight_values(c, b->map, attn, n, scores, px, iw, ih);
    draw_frame(c->dl, (view_rect){b->map.x - 1, b->map.y - 1, b->map.w + 2, b->map.h + 2}, accent,
               1);
    char shape[64];
    view_shape_label(shape, sizeof shape, n, n);
    draw_text(c->dl, b->shape.x, b->shape.y, shape, c->L->font_small, c->th.text, 0, 0);
    view_colorbar(c, b->cbar, VIEW_MAP_SEQ, 1.0f);
}

/* The matrices of stage k (0-based) of head's step-through in its boxes b. */
static void draw_stage(const view_ctx *c, const view_matrix_box *b, int k, int head, rgba accent) {
    static const char *const qkv[3] = {"Q", "K", "V"};
    const attn_layer *layer = c->s->layer;
    const int n = layer->n, d = layer->d_model, dk = layer->d_k;
    const size_t at = (size_t)head * n * n;
    const uint64_t key = 0x57E9000000ull + (uint64_t)k * 8192 + (uint64_t)head;
    switch (k) {
    case 0: view_draw_matrix(c, &b[0], layer->x, d, key, "X "); break;
    case 1:
        for (int i = 0; i < 3; i++) {
            const float *src =
                view_at(i == 0 ? layer->q : (i == 1 ? layer->k : layer->v), (size_t)head * dk);
            char p[8];
            snprintf(p, sizeof p, "%s ", qkv[i]);
            view_draw_matrix(c, &b[i], src, d, key + (uint64_t)i * 65536, p);
        }
        break;
    case 2:
        if (c->s->step_raw) view_draw_matrix(c, &b[0], c->s->step_raw, n, key, "S ");
        break;
    case 3:
        if (c->s->step_scaled) view_draw_matrix(c, &b[0], c->s->step_scaled, n, key, "");
        break;
    case 4:
        view_draw_matrix(c, &b[0], view_at(layer->scores, at), n, key, "");
        view_draw_masks(c, b[0].map);
        break;
    case 5: draw_attn_stage(c, &b[0], head, key, accent); break;
    case 6:
        view_draw_matrix(c, &b[0], view_at(layer->heads, (size_t)head * n * dk), dk, key, "");
        break;
    case 7: {
        if (!layer->concat) break;
        view_draw_matrix(c, &b[0], layer->concat, d, key, "Concat ");
        view_rect r = b[0].map;
        int x0 = r.x + (int)((long)head * dk * r.w / d);
        int x1 = r.x + (int)((long)(head + 1) * dk * r.w / d);
        draw_frame(c->dl, (view_rect){x0 - 1, r.y - 2, x1 - x0 + 2, r.h + 4}, accent, 2);
        break;
    }
    default:
        if (c->s->step_share) view_draw_matrix(c, &b[0], c->s->step_share, d, key, "");
        break;
    }
}

void view_draw_steps(const view_ctx *c, const view_steps *S, int head, int current) {
    const attn_layer *layer = c->s->layer;
    const view_layout *L = c->L;
    if (!S->shown || !layer || head < 0 || head >= layer->h) return;
    const rgba accent = view_head_color(head, c->s->theme);
    draw_caption(c, S, head, current, accent);
    for (int k = 0; k < VIEW_STEPS; k++) {
        char title[120], fitted[200];
        stage_title(title, sizeof title, k + 1, layer, head);
        view_fit_text(fitted, sizeof fitted, title, S->title[k].w, L->font, k + 1 == current,
                      c->measure, c->ud);
        draw_text(c->dl, S->title[k].x, S->title[k].y, fitted, L->font,
                  k + 1 == current ? accent : c->th.text, k + 1 == current, 0);
        if (k + 1 == current) draw_frame(c->dl, S->cell[k], accent, 3);
        draw_stage(c, S->box[k], k, head, accent);
    }
}
