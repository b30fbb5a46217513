/* overview.c: draws a loaded model's overview into the rectangles of
 * layout_overview.c: the title, the layer labels and head numbers that fit, every
 * head's attention map (removed heads veiled and crossed out), the open layer's
 * accent frame, the hovered cell's outline, the attention colorbar with its
 * caption, and a note that says what the marks and the pixels mean. */
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

static void draw_title(const view_ctx *c) {
    const view_overview_box *O = &c->L->overview;
    const int size = c->L->font_title;
    char t[200], fitted[200];
    for (int v = 0; v < 3; v++) {
        view_overview_title(t, sizeof t, c->s, v);
        if (view_tw(c, t, size, 1) <= O->title.w || v == 2) break;
    }
    view_fit_text(fitted, sizeof fitted, t, O->title.w, size, 1, c->measure, c->ud);
    draw_text(c->dl, O->title.x, O->title.y, fitted, size, c->th.text, 1, 0);
}

/* "layer 3" right-aligned left of its row (the open one bold in the accent), the
   head numbers centred over their columns, and "head" over the layer labels. */
static void draw_labels(const view_ctx *c) {
    const view_overview_box *O = &c->L->overview;
    const int ls = O->label_size;
    char buf[32];
    for (int l = 0; l < O->layers; l++) {
        view_rect r = view_overview_layer_label(c->L, l);
        if (r.w <= 0) continue;
        const int open = l == O->open;
        snprintf(buf, sizeof buf, "layer %d", l + 1);
        const int w = view_tw(c, buf, ls, open);
        draw_text(c->dl, r.x + r.w - w, r.y, buf, ls, open ? c->th.accent_text : c->th.text, open,
                  0);
    }
    const char *axis = "head \xE2\x86\x92";
    const int aw = view_tw(c, axis, ls, 0);
    for (int b = 0; b < O->blocks; b++) {
        int first = -1, left = 0;
        for (int k = 0; k < O->heads; k++) {
            view_rect r = view_overview_head_label(c->L, b, k);
            if (r.w <= 0) continue;
            if (first < 0) first = r.y, left = r.x;
            snprintf(buf, sizeof buf, "%d", k + 1);
            const int w = view_tw(c, buf, ls, 0);
            draw_text(c->dl, r.x + (r.w - w) / 2, r.y, buf, ls, c->th.muted, 0, 0);
        }
        /* "head →" over the block's layer labels, clear of its first number */
        const int x = view_overview_cell(c->L, b * O->rows, 0).x - O->frame_thick - 2 - aw;
        if (first >= 0 && aw <= O->row_label_w - O->frame_thick - 2 && x + aw <= left)
            draw_text(c->dl, x, first, axis, ls, c->th.muted, 0, 0);
    }
}

/* One head's map; a removed head is veiled and crossed out corner to corner. */
static void draw_cell(const view_ctx *c, int layer, int head, view_rect r) {
    const view_overview *o = c->s->overview;
    const int side = view_overview_side(o);
    const float *attn = o->attn[layer] ? o->attn[layer] + (size_t)head * side * side : NULL;
    uint64_t key = view_key_mix(0x0BE0000000ull, (uint64_t)layer * 4096u + (uint64_t)head);
    key = view_key_mix(view_key_mix(key, (uint64_t)(uintptr_t)o->attn[layer]), c->s->data_version);
    int iw = 0, ih = 0;
    /* more tokens than pixels (or than the map's side, max-pooled by the model):
       view_attn_image keeps each pixel's largest weight, so a sharp head stays sharp
       and no row or column is dropped */
    const rgba *px = view_attn_image(c, key, attn, NULL, side, r.w, r.h, &iw, &ih, &key);
    if (px)
        draw_image_cmd(c->dl, r, iw, ih, px, key);
    else
        draw_fill(c->dl, r, c->th.panel);
    if (c->L->overview.step - c->L->overview.cell >= 2) /* room for a frame in the gap */
        draw_frame(c->dl, (view_rect){r.x - 1, r.y - 1, r.w + 2, r.h + 2}, c->th.grid, 1);
    if (view_overview_off(o, layer, head)) {
        rgba veil = c->th.bg;
        veil.a = 190;
        draw_fill(c->dl, r, veil);
        const int t = r.w >= 40 ? (r.w / 20 < 6 ? r.w / 20 : 6) : (r.w >= 8 ? 2 : 1);
        draw_line(c->dl, r.x, r.y, r.x + r.w - 1, r.y + r.h - 1, c->th.text, t);
        draw_line(c->dl, r.x + r.w - 1, r.y, r.x, r.y + r.h - 1, c->th.text, t);
    }
}

/* Under the colorbar: what a crossed-out head is (when one is) and, when a map
   has fewer pixels than tokens, how its pixels were made. */
static void draw_note(const view_ctx *c) {
    const view_overview_box *O = &c->L->overview;
    const view_overview *o = c->s->overview;
    int off = 0;
    for (int l = 0; l < o->layers; l++)
        for (int k = 0; k < o->h; k++) off += view_overview_off(o, l, k);
    char a[96] = "", b[160] = "", note[300], fitted[300];
    if (off) snprintf(a, sizeof a, "crossed out: removed head (%d of %d)", off, o->layers * o->h);
    const int side = view_overview_side(o), px = O->cell < side ? O->cell : side;
    if (px < o->n)
        snprintf(b, sizeof b,
                 "each %d\xC3\x97%d map shown in %d\xC3\x97%d px: a pixel, the largest weight it "
                 "covers",
                 o->n, o->n, px, px);
    snprintf(note, sizeof note, "%s%s%s", a, a[0] && b[0] ? "  \xC2\xB7  " : "", b);
    if (!note[0]) return;
    view_fit_text(fitted, sizeof fitted, note, O->note.w, c->L->font_small, 0, c->measure, c->ud);
    draw_text(c->dl, O->note.x, O->note.y, fitted, c->L->font_small, c->th.text, 0, 0);
}

static void draw_colorbar(const view_ctx *c) {
    const view_overview_box *O = &c->L->overview;
    if (!view_colorbar(c, O->cbar, VIEW_MAP_SEQ, 1.0f)) return;
    static const char *const caps[VIEW_CONTRAST_COUNT][2] = {
        {"each map: one head, rows = queries, columns = keys; attention weight 0 to 1",
         "attention weight, 0 to 1"},
        {"each map: one head, rows = queries, columns = keys; each row scaled to its maximum",
         "weight / row maximum"},
        {"each map: one head, rows = queries, columns = keys; weight on a log scale 0.001 to 1",
         "weight, log scale"}};
    const int k = c->s->look.contrast % VIEW_CONTRAST_COUNT, fs = c->L->font_small;
    const view_rect area = c->L->overview.title; /* its right end is the area's */
    const int maxw = area.x + area.w - O->cbar.x;
    char cap[200];
    view_fit_text(cap, sizeof cap, caps[k][0], maxw, fs, 0, c->measure, c->ud);
    if (view_tw(c, cap, fs, 0) < view_tw(c, caps[k][0], fs, 0))
        view_fit_text(cap, sizeof cap, caps[k][1], maxw, fs, 0, c->measure, c->ud);
    int lh = 0, w = 0;
    c->measure(c->ud, "Ag", fs, 0, &w, &lh);
    draw_text(c->dl, O->cbar.x, O->cbar.y - lh - 2, cap, fs, c->th.muted, 0, 0);
}

void view_draw_overview(const view_ctx *c, const view_hit *hit) {
    const view_overview_box *O = &c->L->overview;
    if (!O->shown || !view_overview_ok(c->s->overview)) return;
    draw_title(c);
    draw_labels(c);
    draw_group_begin(c->dl, 1, "overview");
    for (int l = 0; l < O->layers; l++)
        for (int k = 0; k < O->heads; k++) draw_cell(c, l, k, view_overview_cell(c->L, l, k));
    draw_group_end(c->dl);
    if (O->open >= 0) draw_frame(c->dl, O->open_frame, c->th.accent_text, O->frame_thick);
    if (hit && hit->kind == HIT_OVERVIEW) {
        view_rect r = view_overview_cell(c->L, hit->row, hit->head);
        if (r.w > 0)
            draw_frame(c->dl, (view_rect){r.x - 2, r.y - 2, r.w + 4, r.h + 4},
                       view_highlight_color(c->s->look.theme), 2);
    }
    draw_colorbar(c);
    draw_note(c);
}
