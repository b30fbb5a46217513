/* steps.c: draws the step-through of one head, from X to its share of MultiHead.
 * One stage at a time (the window and its saved panel): the strip of nine chips,
 * the current one filled; the stage's formula large; a note on what it does; its
 * own matrices large on their own scales (signed ones diverging, the weights
 * sequential, masked cells hatched as the heads draw them) with token labels.
 * The --panel steps:K figure: all nine stages (ten with RoPE's rotation) in a grid. Where
 * everything goes (and what the text says) is layout_steps.c's; the numbers are the layer's and
 * the state's derived ones; a stage whose tensors the layer lacks says why in their place
 * (steps_missing.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

/* Markup (layout_steps.c's titles) at size, its top-left at (x, y). */
static void draw_markup(const view_ctx *c, int x, int y, const char *markup, int size, rgba col) {
    char parts[24][48];
    int lvl[24];
    const char *p[24];
    const int n = view_steps_runs(markup, parts, lvl, 24);
    for (int i = 0; i < n; i++) p[i] = parts[i];
    view_draw_script_runs(c, x, y, p, lvl, n, size, col);
}

/* The grid's caption: the whole way from X to MultiHead. */
static void draw_grid_caption(const view_ctx *c, const view_steps *S, rgba accent) {
    char cap[200], fitted[200];
    snprintf(cap, sizeof cap,
             "head %d, step by step: X \xE2\x86\x92 Q, K, V \xE2\x86\x92 %sS "
             "\xE2\x86\x92 scaled \xE2\x86\x92 masked \xE2\x86\x92 softmax "
             "\xE2\x86\x92 head \xE2\x86\x92 Concat \xE2\x86\x92 \xC2\xB7 W\xE1\xB4\xBC",
             S->head + 1, S->count == 10 ? "RoPE \xE2\x86\x92 " : "");
    view_fit_text(fitted, sizeof fitted, cap, S->caption.w, c->L->font_title, 1, c->measure, c->ud);
    if (view_tw(c, fitted, c->L->font_title, 1) < view_tw(c, cap, c->L->font_title, 1))
        snprintf(cap, sizeof cap, "head %d, step by step", S->head + 1),
            view_fit_text(fitted, sizeof fitted, cap, S->caption.w, c->L->font_title, 1, c->measure,
                          c->ud);
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

static void draw_rope_stage(const view_ctx *c, const view_matrix_box *b, int head, uint64_t key);

static void draw_missing(const view_ctx *c, const view_matrix_box *b, int from, int nb, int y1,
                         const char *why);

/* The matrices of stage k (0-based) of head's step-through in its nb boxes b; where
   the layer lacks some, why in their place, down to y1 at least. */
static void draw_stage(const view_ctx *c, const view_matrix_box *b, int nb, int y1, int k, int head,
                       rgba accent) {
    static const char *const qkv[3] = {"Q", "K", "V"};
    const attn_layer *layer = c->s->layer;
    const int n = layer->n, d = layer->d_model, dk = layer->d_k;
    const size_t at = (size_t)head * n * n;
    const uint64_t key = 0x57E9000000ull + (uint64_t)k * 8192 + (uint64_t)head;
    k = view_steps_kind(layer, k + 1) - 1; /* what the stage is (RoPE's moved the others) */
    char why[512];
    const int from = view_steps_missing(layer, head, k + 1, why, sizeof why);
    if (from >= 0) draw_missing(c, b, from, nb, y1, why);
    const float *derived = k == 2 ? c->s->step_raw : k == 3 ? c->s->step_scaled : c->s->step_share;
    if ((k == 2 || k == 3 || k == 8) && from < 0 && !derived) /* (the pinned pane derives none) */
        view_text_center(c, b[0].map, "not computed for this view",
                         y1 ? c->L->font_small : c->L->font, c->th.muted, 0);
    switch (k) {
    case VIEW_STAGE_ROPE - 1: draw_rope_stage(c, b, head, key); break;
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
    case 3:
    case 4: { /* S, scaled and masked on one colour scale: dividing shows as paler */
        const float *m[3] = {c->s->step_raw, c->s->step_scaled, view_at(layer->scores, at)};
        if (!m[k - 2]) break;
        float scale = 0.0f;
        for (int i = 0; i < 2; i++)
            if (m[i])
                scale = fmaxf(scale, view_matrix_max_abs(
                                         c, 0x57E9A00000ull + (uint64_t)i * 64 + (uint64_t)head,
                                         m[i], n, n, n));
        view_draw_matrix_scaled(c, &b[0], m[k - 2], n, key, k == 2 ? "S " : "", scale);
        if (k == 4) view_draw_masks(c, b[0].map);
        break;
    }
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

/* Why boxes from..nb-1 of a stage are not drawn, in their place: from the first's
   top left across to the last one's right, down to its colorbar or y1. */
static void draw_missing(const view_ctx *c, const view_matrix_box *b, int from, int nb, int y1,
                         const char *why) {
    if (from >= nb) return;
    const view_rect first = b[from].map, last = b[nb - 1].shape;
    const int x1 = last.x + last.w, bottom = b[nb - 1].cbar.y + b[nb - 1].cbar.h;
    view_draw_note_lines(c, first.x, first.y, x1 - first.x, bottom > y1 ? bottom : y1, why,
                         y1 ? c->L->font_small : c->L->font); /* a grid's cell, or one stage */
}

/* RoPE's stage: Q_i and its K (the K/V head it reads) before the rotation and after,
 * each pair on one colour scale (a rotation keeps each pair of columns' length). */
static void draw_rope_stage(const view_ctx *c, const view_matrix_box *b, int head, uint64_t key) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n, dk = layer->d_k;
    const int hkv = layer->h_kv > 0 ? layer->h_kv : layer->h;
    const int g = hkv < layer->h ? head / (layer->h / hkv) : head;
    const int ldq = layer->h * dk, ldk = hkv * dk;
    const float *m[4] = {
        view_at(layer->q_unrot, (size_t)head * dk), view_at(layer->q_rot, (size_t)head * dk),
        view_at(layer->k_unrot, (size_t)g * dk), view_at(layer->k_rot, (size_t)g * dk)};
    const int ld[4] = {ldq, ldq, ldk, ldk};
    const char *const plain[4] = {"Q ", "Q rotated ", "K ", "K rotated "};
    const char *const normed[4] = {"Q normed ", "Q rotated ", "K normed ", "K rotated "};
    const char *const *name = layer->qk_norm ? normed : plain;
    for (int pair = 0; pair < 2; pair++) {
        if (!m[2 * pair] || !m[2 * pair + 1]) continue;
        float scale = 0.0f;
        for (int j = 2 * pair; j < 2 * pair + 2; j++)
            scale = fmaxf(scale, view_matrix_max_abs(c, key + 0x100000ull * (uint64_t)(j + 1), m[j],
                                                     n, dk, ld[j]));
        for (int j = 2 * pair; j < 2 * pair + 2; j++)
            view_draw_matrix_scaled(c, &b[j], m[j], ld[j], key + 65536ull * (uint64_t)(j + 1),
                                    name[j], scale);
    }
}

/* Token labels on both sides of an n x n map, every stride-th, at size (line lh). */
static void draw_square_labels(const view_ctx *c, view_rect map, int stride, int size, int lh) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n;
    char lab[64];
    for (int r = 0; r < n; r += stride) {
        view_token_label(lab, sizeof lab, attn_layer_token(layer, r));
        rgba col = r >= layer->n_real ? c->th.muted : c->th.text;
        int w = view_tw(c, lab, size, 0);
        draw_text(c->dl, map.x - c->L->pad / 2 - 2 - w, view_label_pos(map.y, map.h, n, lh, r), lab,
                  size, col, 0, 0);
        draw_text(c->dl, view_label_pos(map.x, map.w, n, lh, r),
                  map.y + map.h + c->L->pad / 2 + 2 + w, lab, size, col, 0, 1);
    }
}

/* Token labels of the large stage: rows left of its first matrix (queries), and
 * under an n x n one its columns (keys), rotated to read upwards, as the heads
 * grid writes them. */
static void draw_labels(const view_ctx *c, const view_steps *S) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n, stride = S->label_stride, lh = S->label_line;
    const view_rect map = S->big[0].map;
    char lab[64];
    if (stride <= 0) return;
    for (int b = 0; b < (S->stacked ? S->bigs : 1); b++) {
        const view_rect m = S->big[b].map;
        for (int r = 0; S->row_labels && r < n; r += stride) {
            view_token_label(lab, sizeof lab, attn_layer_token(layer, r));
            int w = view_tw(c, lab, S->label_size, 0);
            draw_text(c->dl, m.x - c->L->pad / 2 - 2 - w, view_label_pos(m.y, m.h, n, lh, r), lab,
                      S->label_size, r >= layer->n_real ? c->th.muted : c->th.text, 0, 0);
        }
    }
    for (int k = 0; S->col_labels && k < n; k += stride) {
        view_token_label(lab, sizeof lab, attn_layer_token(layer, k));
        int w = view_tw(c, lab, S->label_size, 0);
        draw_text(c->dl, view_label_pos(map.x, map.w, n, lh, k),
                  map.y + map.h + c->L->pad / 2 + 2 + w, lab, S->label_size,
                  k >= layer->n_real ? c->th.muted : c->th.text, 0, 1);
    }
}

/* One stage large: the strip, the formula, the note, the matrices. */
static void draw_one(const view_ctx *c, const view_steps *S, rgba accent) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const int k = S->current;
    for (int j = 0; j < S->count; j++) {
        const view_rect r = S->chip[j];
        if (r.w <= 0) continue;
        const int cur = j + 1 == k;
        draw_fill(c->dl, r, cur ? accent : c->th.panel);
        draw_frame(c->dl, r, cur ? accent : c->th.grid, 1);
        /* a stage that changes nothing at this setting is written muted */
        rgba col = cur ? c->th.bg : (view_steps_same(layer, j + 1) ? c->th.muted : c->th.text);
        view_text_center(c, r, S->chip_text[j], S->chip_size, col, 1);
    }
    if (S->hint.w > 0)
        draw_text(c->dl, S->hint.x, S->hint.y, ", and . step \xC2\xB7 Esc: all heads",
                  L->font_small, c->th.muted, 0, 0);
    char t[200];
    view_steps_title(t, sizeof t, layer, S->head, k, S->title_variant[k - 1]);
    draw_markup(c, S->caption.x, S->caption.y, t, S->caption_size, accent);
    for (int i = 0; i < S->notes; i++)
        draw_text(c->dl, S->note[i].x, S->note[i].y, S->note_text[i], S->note_size, c->th.text, 0,
                  0);
    if (S->legend.w > 0) view_draw_mask_legend(c, S->legend.x, S->legend.y, L->font_small);
    char name[32];
    snprintf(name, sizeof name, "stage-%d", k);
    draw_group_begin(c->dl, k, name);
    draw_stage(c, S->big, S->bigs, 0, k - 1, S->head, accent);
    draw_labels(c, S);
    draw_group_end(c->dl);
}

void view_draw_steps(const view_ctx *c, const view_steps *S, int head, int current) {
    (void)head, (void)current;
    const attn_layer *layer = c->s->layer;
    if (!S->shown || !layer || S->head < 0 || S->head >= layer->h) return;
    const rgba accent = view_head_color(S->head, c->s->look.theme);
    if (S->current >= 1 && S->current <= S->count) {
        draw_one(c, S, accent);
        return;
    }
    draw_grid_caption(c, S, accent);
    for (int k = 0; k < S->count; k++) {
        char title[200];
        view_steps_title(title, sizeof title, layer, S->head, k + 1, S->title_variant[k]);
        draw_markup(c, S->title[k].x, S->title[k].y, title, S->title_size[k], c->th.text);
        if (view_steps_same(layer, k + 1)) { /* identical at this setting: said, not drawn */
            char t[2][64], fitted[64];
            snprintf(t[0], sizeof t[0], "the same as stage %d, not drawn again", k);
            snprintf(t[1], sizeof t[1], "= stage %d", k);
            const char *forms[2] = {t[0], t[1]};
            const view_rect cell = S->cell[k];
            view_fit_first(c, fitted, sizeof fitted, forms, 2, cell.w - c->L->pad, c->L->font_small,
                           0);
            const int w = view_tw(c, fitted, c->L->font_small, 0);
            draw_text(c->dl, cell.x + (cell.w - w) / 2, cell.y + cell.h / 2 - c->L->line / 2,
                      fitted, c->L->font_small, c->th.muted, 0, 0);
            continue;
        }
        draw_stage(c, S->box[k], S->boxes[k], S->cell[k].y + S->cell[k].h - c->L->pad / 2, k,
                   S->head, accent);
        if (S->grid_label_stride[k] > 0)
            draw_square_labels(c, S->box[k][0].map, S->grid_label_stride[k], S->label_size,
                               S->label_line);
    }
}
