/* lines.c: the head view (BertViz's): in each head tile the queries in a column on
 * the left, the keys on the right, and a line from query i to key j whose opacity
 * is the weight a_ij, in the head's colour; lines under view_lines_floor are not
 * drawn, masked keys get none, [PAD] tokens are grey. Hovering a token keeps its
 * own lines and dims the rest. layout_lines.c places it; panels.c draws the titles. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

#define DIM 0.1f /* a dimmed line keeps a tenth of its opacity */

int view_lines_alpha(float w, int dimmed) {
    if (!(w >= view_lines_floor)) return 0; /* NaN too */
    float a = (w > 1.0f ? 1.0f : w) * 255.0f * (dimmed ? DIM : 1.0f);
    int v = (int)lroundf(a);
    return v < 1 ? 1 : v > 255 ? 255 : v;
}

/* Line height of labels at size, as layout_lines.c counts it (lay_measured_line). */
static int line_h(const view_ctx *c, int size) {
    int w = 0, h = 0;
    c->measure(c->ud, "Ag", size, 0, &w, &h);
    return h >= size ? h : size + size / 4;
}

/* The hovered query row and key column (-1 none). */
static void hovered(const view_hit *hover, int n, int *q, int *k) {
    *q = *k = -1;
    if (hover && hover->kind == HIT_LINES_Q && hover->row >= 0 && hover->row < n) *q = hover->row;
    if (hover && hover->kind == HIT_LINES_K && hover->col >= 0 && hover->col < n) *k = hover->col;
}

/* Head's lines in B: a line from query i to key j for every weight at or above the
 * floor that the masks leave (the weight is 0 where they do not). */
static void head_lines(const view_ctx *c, const view_lines_box *B, int head, int q, int k) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n;
    if (!layer->attn) return;
    const size_t at = (size_t)head * n * n;
    const float *attn = layer->attn + at;
    const float *scores = layer->scores ? layer->scores + at : NULL;
    const rgba accent = view_head_color(head, c->s->look.theme), pad = c->th.muted;
    const int inset = B->x1 - B->x0 > 6 * c->L->pad ? c->L->pad / 2 : 0;
    const int x0 = B->x0 + inset, x1 = B->x1 - inset;
    const int passes = q >= 0 || k >= 0 ? 2 : 1; /* hovered: the dimmed lines first */
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < n; i++) {
            const int yi = view_lines_row_y(B, n, i);
            for (int j = 0; j < n; j++) {
                const size_t ij = (size_t)i * n + j;
                if (scores && isinf(scores[ij]) && scores[ij] < 0) continue; /* masked: none */
                const int dimmed = (q >= 0 && i != q) || (k >= 0 && j != k);
                if (passes == 2 && dimmed != (pass == 0)) continue;
                const int a = view_lines_alpha(attn[ij], dimmed);
                if (!a) continue;
                rgba col = i >= layer->n_real ? pad : accent; /* a [PAD] query's: grey */
                col.a = (unsigned char)a;
                draw_line(c->dl, x0, yi, x1, view_lines_row_y(B, n, j), col, B->thick);
            }
        }
}

/* 1 when fit is a label cut to fewer than three characters and "…" ("T…"): not
   drawn (layout_lines.c makes the columns hold three and "…"; a font's hinting may
   still take a pixel more). */
static int cut_short(const char *fit) {
    const size_t l = strlen(fit);
    if (l < 3 || strcmp(fit + l - 3, "\xE2\x80\xA6") != 0) return 0;
    int cps = 0;
    for (size_t i = 0; i + 3 < l; i++) cps += ((unsigned char)fit[i] & 0xC0) != 0x80;
    return cps < 3;
}

/* The token labels of one column (keys when key_side), every stride-th and the
 * hovered one, each fitted to the column and never cut to fewer than three
 * characters and "…". */
static void column_labels(const view_ctx *c, const view_lines_box *B, int key_side, int hot) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n, size = B->label_size;
    const view_rect col = key_side ? B->kcol : B->qcol;
    const int lh = line_h(c, size);
    const int room = col.w - c->L->pad;
    int hot_y0 = -1, hot_y1 = -1;
    if (hot >= 0) {
        hot_y0 = view_lines_label_y(B, n, lh, hot);
        hot_y1 = hot_y0 + lh;
    }
    char lab[64], fit[64];
    if (B->stride <= 0 || room <= 0) { /* a tile too small for labels (or the key side
                                          of one labelled left): the hovered token's
                                          alone, on a patch over the lines' end */
        if (hot < 0) return;
        view_token_label(lab, sizeof lab, attn_layer_token(layer, hot));
        view_fit_text(fit, sizeof fit, lab, B->box.w - c->L->pad, size, 1, c->measure, c->ud);
        if (!fit[0] || cut_short(fit)) return;
        const int w = view_tw(c, fit, size, 1), y = view_lines_label_y(B, n, lh, hot);
        const int x = key_side ? B->box.x + B->box.w - w : B->box.x;
        rgba patch = c->th.bg;
        patch.a = 220;
        draw_fill(c->dl, (view_rect){x - 1, y, w + 2, lh}, patch);
        draw_text(c->dl, x, y, fit, size, c->th.accent_text, 1, 0);
        return;
    }
    for (int i = 0; i < n; i++) {
        const int is_hot = i == hot;
        if (!is_hot && i % B->stride != 0) continue;
        const int y = view_lines_label_y(B, n, lh, i);
        if (!is_hot && hot >= 0 && y < hot_y1 && y + lh > hot_y0) continue; /* under the hot one */
        view_token_label(lab, sizeof lab, attn_layer_token(layer, i));
        view_fit_text(fit, sizeof fit, lab, room, size, is_hot, c->measure, c->ud);
        if (!fit[0] || cut_short(fit)) continue;
        const int w = view_tw(c, fit, size, is_hot);
        const int x = key_side ? col.x + c->L->pad / 2 : col.x + col.w - c->L->pad / 2 - w;
        rgba tc = is_hot ? c->th.accent_text : i >= layer->n_real ? c->th.muted : c->th.text;
        draw_text(c->dl, x, y, fit, size, tc, is_hot, 0);
    }
}

void view_draw_lines_tile(const view_ctx *c, int slot, int head, const view_hit *hover) {
    const view_layout *L = c->L;
    if (slot < 0 || slot >= L->lines_shown) return;
    const view_lines_box *B = &L->lines[slot];
    int q, k;
    hovered(hover, c->s->layer->n, &q, &k);
    head_lines(c, B, head, q, k);
    column_labels(c, B, 0, q);
    column_labels(c, B, 1, k);
    if (attn_layer_is_off(c->s->layer, head)) { /* switched off: veiled, and said so */
        view_draw_off_veil(c, B->box);
    }
}

/* Every head overlaid in one tile (--panel lines): a title naming the heads in their
 * colours, each head's lines in its own group. */
static void draw_overlaid(const view_ctx *c, const view_hit *hover) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const view_lines_box *B = &L->lines[0];
    int q, k;
    hovered(hover, layer->n, &q, &k);
    view_rect tr = L->heads[0].title;
    tr.x = B->box.x, tr.w = B->box.w;
    char title[96];
    snprintf(title, sizeof title, "%s %d heads overlaid:", layer->h == 1 ? "the" : "all", layer->h);
    if (layer->h == 1) snprintf(title, sizeof title, "head 1:");
    int x = tr.x, tw = view_tw(c, title, L->font, 1);
    if (tw <= tr.w) {
        draw_text(c->dl, x, tr.y, title, L->font, c->th.text, 1, 0);
        x += tw + L->pad;
        for (int h = 0; h < layer->h; h++) { /* "1 2 3 4" each in its head's colour */
            char num[16];
            snprintf(num, sizeof num, "%d", h + 1);
            const int nw = view_tw(c, num, L->font, 1);
            if (x + nw > tr.x + tr.w) break;
            draw_text(c->dl, x, tr.y, num, L->font, view_head_color(h, c->s->look.theme), 1, 0);
            x += nw + L->pad;
        }
    }
    for (int h = 0; h < layer->h; h++) {
        char name[32];
        snprintf(name, sizeof name, "head-%d", h + 1);
        draw_group_begin(c->dl, h + 1, name);
        if (!attn_layer_is_off(layer, h)) head_lines(c, B, h, q, k);
        draw_group_end(c->dl);
    }
    column_labels(c, B, 0, q);
    column_labels(c, B, 1, k);
}

void view_draw_lines_rest(const view_ctx *c, const view_hit *hover) {
    const view_layout *L = c->L;
    if (L->lines_all && L->lines_shown > 0) draw_overlaid(c, hover);
    for (int i = 0; i < VIEW_LINES_LEGEND_LINES; i++)
        if (L->lines_legend[i].w > 0 && L->lines_legend_text[i][0])
            draw_text(c->dl, L->lines_legend[i].x, L->lines_legend[i].y, L->lines_legend_text[i],
                      L->lines_legend_size, i == 0 ? c->th.text : c->th.muted, 0, 0);
}
