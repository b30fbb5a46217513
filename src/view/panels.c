/* panels.c: draws the panels into the layout's rectangles: header, formula strip,
 * heads grid (titles, token labels, hover outlines, page note), focus view, equation,
 * status line. Pixels and colorbars are heatmap.c's, text helpers labels.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "view.h"
#include "view_internal.h"

/* --- header and formula strip ------------------------------------------------- */

void view_draw_header(const view_ctx *c) {
    const view_layout *L = c->L;
    for (int b = 0; b < BTN_COUNT && !c->s->figure; b++) {
        if (!L->buttons[b].present || b == BTN_PAGE_PREV || b == BTN_PAGE_NEXT) continue;
        if (b >= BTN_MENU && b <= BTN_MENU_LAST) continue; /* the "More" panel's: overlays.c */
        view_rect r = L->buttons[b].r;
        draw_fill(c->dl, r, c->th.button);
        draw_frame(c->dl, r, c->th.grid, 1);
        view_text_center(c, r, L->buttons[b].label, L->ui_font, c->th.button_text, 0);
    }
    for (int i = 0; i < L->hdr_count; i++) {
        const view_run *run = &L->hdr_runs[i];
        draw_text(c->dl, run->x, run->y, run->text, run->size, c->th.text, 1, 0);
    }
    if (L->pages > 1 && !c->s->figure)
        for (int b = BTN_PAGE_PREV; b <= BTN_PAGE_NEXT; b++) {
            view_rect r = L->buttons[b].r;
            draw_fill(c->dl, r, c->th.button);
            draw_frame(c->dl, r, c->th.grid, 1);
            view_text_center(c, r, L->buttons[b].label, L->font_small, c->th.button_text, 0);
        }
}

void view_draw_formula(const view_ctx *c) {
    const view_layout *L = c->L;
    if (L->formula.h <= 0) return;
    draw_fill(
        c->dl,
        (view_rect){L->formula.x - L->pad / 2, L->formula.y, L->formula.w + L->pad, L->formula.h},
        c->th.panel);
    for (int i = 0; i < L->run_count; i++) {
        const view_run *r = &L->runs[i];
        draw_text(c->dl, r->x, r->y, r->text, r->size, c->th.text, 0, 0);
    }
}

/* --- heads ------------------------------------------------------------------- */

/* "d_k" in s (len bytes) written as d with a subscript k, as the formula strip
 * draws it ("none (d_k too small)"); s unchanged where the longer form would not fit. */
static void subscript_dk(char *s, size_t len) {
    char *sub = strstr(s, "d_k");
    if (!sub || strlen(s) + 3 > len) return;
    memmove(sub + 4, sub + 3, strlen(sub + 3) + 1);
    memcpy(sub + 1, "\xE2\x82\x96", 3);
}

/* Variant v (0 longest .. 4 the number alone) of head's title. */
static void head_title(const view_ctx *c, int head, int v, char *buf, size_t len) {
    const attn_layer *layer = c->s->layer;
    const int off = attn_layer_is_off(layer, head);
    const char *dot = " \xC2\xB7 ";
    char ent[48] = "", pat[48] = "";
    if (c->s->head_entropy)
        snprintf(ent, sizeof ent, "%.1f of %.1f bits", (double)c->s->head_entropy[head],
                 attn_entropy_max(layer)); /* the most its rows can have: under the mask, less */
    const char *note = attn_layer_head_note(layer, head);
    if (note) snprintf(pat, sizeof pat, "%s", note);
    subscript_dk(pat, sizeof pat);
    /* a query head sharing its K/V head with its group says which: "head 5 · K/V 2" */
    char kv[24] = "";
    if (layer->h_kv > 0 && layer->h_kv < layer->h && layer->h % layer->h_kv == 0)
        snprintf(kv, sizeof kv, "%sK/V %d", dot, head / (layer->h / layer->h_kv) + 1);
    switch (v) {
    case 0:
        snprintf(buf, len, "head %d%s%s%s%s%s%s%s", head + 1, kv, off ? dot : "", off ? "off" : "",
                 pat[0] ? dot : "", pat, ent[0] ? dot : "", ent);
        break;
    case 1:
        snprintf(buf, len, "head %d%s%s%s%s%s", head + 1, kv, off ? dot : "", off ? "off" : "",
                 pat[0] ? dot : "", pat);
        break;
    case 2: snprintf(buf, len, "head %d%s%s", head + 1, kv, off ? " off" : ""); break;
    case 3: snprintf(buf, len, "head %d", head + 1); break;
    default: snprintf(buf, len, "%d", head + 1); break;
    }
}

/* The longest title variant that fits every shown head's title room. */
static int title_variant(const view_ctx *c) {
    const view_layout *L = c->L;
    int v = 0;
    for (int i = 0; i < L->shown_heads && v < 4; i++) {
        view_rect xbox = view_head_off_box(L, c->s, i);
        int room = L->heads[i].title.w - (xbox.w ? xbox.w + L->pad / 2 : 0);
        char t[160];
        for (;;) {
            head_title(c, L->first_head + i, v, t, sizeof t);
            if (v == 4 || view_tw(c, t, L->font, 1) <= room) break;
            v++;
        }
    }
    return v;
}

/* The head's title says what the head is: its number, its designed rule, how
 * spread its attention is (mean row entropy against the most its rows can have:
 * uniform over the keys each may see, log2 n without a mask),
 * and whether it is off; every head of the grid uses the same, longest variant
 * that fits them all, except that a head keeps its designed rule's name when that
 * fits its own room. Then its off box and the bar in its colour. */
static void draw_head_title(const view_ctx *c, int slot, int head, int variant, rgba accent) {
    const view_layout *L = c->L;
    const int off = attn_layer_is_off(c->s->layer, head);
    view_rect tr = L->heads[slot].title;
    view_rect xbox = view_head_off_box(L, c->s, slot);
    char title[160];
    head_title(c, head, variant, title, sizeof title);
    if (variant == 2 || variant == 3) { /* another head's name is too long for its room
                                           ("none (d_k too small)"): this one keeps its
                                           own when it fits */
        char named[160];
        head_title(c, head, 1, named, sizeof named);
        const int room = tr.w - (xbox.w ? xbox.w + L->pad / 2 : 0);
        if (view_tw(c, named, L->font, 1) <= room) {
            snprintf(title, sizeof title, "%s", named);
        } else { /* too long: "none (d_k too small)" as "d_k too small", else "none",
                    else the name without the word "head" */
            const char *note = attn_layer_head_note(c->s->layer, head);
            const char *open = note ? strstr(note, " (") : NULL;
            const char *close = open ? strchr(open, ')') : NULL;
            char shorter[3][96] = {"", "", ""};
            if (note && !off) /* the name kept, the word "head" dropped: "1 · previous" */
                snprintf(shorter[2], sizeof shorter[2], "%d \xC2\xB7 %.*s", head + 1,
                         (int)(open ? open - note : (long)strlen(note)), note);
            if (close && !off) {
                snprintf(shorter[0], sizeof shorter[0], "head %d \xC2\xB7 %.*s", head + 1,
                         (int)(close - open - 2), open + 2);
                snprintf(shorter[1], sizeof shorter[1], "head %d \xC2\xB7 %.*s", head + 1,
                         (int)(open - note), note);
            }
            subscript_dk(shorter[0], sizeof shorter[0]);
            for (int k = 0; k < 3; k++)
                if (shorter[k][0] && view_tw(c, shorter[k], L->font, 1) <= room) {
                    snprintf(title, sizeof title, "%.95s", shorter[k]);
                    break;
                }
        }
    }
    draw_text(c->dl, tr.x, tr.y, title, L->font, accent, 1, 0);
    if (xbox.w) {
        draw_frame(c->dl, xbox, off ? accent : c->th.grid, 1);
        view_text_center(c, xbox, off ? "+" : "\xC3\x97", L->font_small, off ? accent : c->th.muted,
                         1);
    }
    int bar = tr.h >= 6 ? 3 : 1;
    draw_fill(c->dl, (view_rect){tr.x, tr.y + tr.h - bar - 1, tr.w, bar}, accent);
}

/* The head's attention heatmap with its masks and numbers, veiled when the head is
 * off, framed in its colour; the hovered query row (and key cell) outlined. */
static void draw_head_map(const view_ctx *c, view_rect map, int head, int highlight_row,
                          int hover_col, rgba accent) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n;
    int iw = 0, ih = 0;
    uint64_t key = view_key_mix(view_key_mix(0xA77E000000ull, (uint64_t)head), c->s->data_version);
    const size_t at = (size_t)head * n * n;
    const float *attn = view_at(layer->attn, at), *scores = view_at(layer->scores, at);
    const rgba *px = view_attn_image(c, key, attn, scores, n, map.w, map.h, &iw, &ih, &key);
    draw_image_cmd(c->dl, map, iw, ih, px, key);
    view_draw_masks(c, map);
    view_draw_weight_values(c, map, attn, n, scores, px, iw, ih);
    if (attn_layer_is_off(layer, head)) { /* switched off: veiled, and said so */
        view_draw_off_veil(c, map);
    }
    draw_frame(c->dl, (view_rect){map.x - 1, map.y - 1, map.w + 2, map.h + 2}, accent, 1);

    if (highlight_row >= 0 && highlight_row < n) {
        int y0 = map.y + (int)((long)highlight_row * map.h / n);
        int y1 = map.y + (int)((long)(highlight_row + 1) * map.h / n);
        rgba hl = view_highlight_color(c->s->look.theme);
        draw_frame(c->dl, (view_rect){map.x - 2, y0 - 1, map.w + 4, y1 - y0 + 2}, hl, 2);
        if (hover_col >= 0 && hover_col < n) {
            int x0 = map.x + (int)((long)hover_col * map.w / n);
            int x1 = map.x + (int)((long)(hover_col + 1) * map.w / n);
            draw_frame(c->dl, (view_rect){x0 - 1, y0 - 1, x1 - x0 + 2, y1 - y0 + 2}, hl, 2);
        }
    }
}

/* Row labels: left of the first column of the grid; column labels: under the last
 * head of each grid column, rotated to read upwards; the axis titles in the
 * corners the labels leave free. */
static void draw_head_labels(const view_ctx *c, int slot, view_rect map, int highlight_row,
                             int hover_col) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const int n = layer->n;
    char lab[64];
    int cols = L->grid_cols > 0 ? L->grid_cols : 1;
    const int lh = L->label_line;
    const int stride = L->label_stride > 0 ? L->label_stride : 1;
    if (L->show_row_labels && slot % cols == 0) {
        for (int r = 0; r < n; r += stride) {
            int y = view_label_pos(map.y, map.h, n, lh, r);
            view_token_label(lab, sizeof lab, attn_layer_token(layer, r));
            int w = view_tw(c, lab, L->label_size, 0);
            rgba col = r == highlight_row ? c->th.accent_text
                                          : (r >= layer->n_real ? c->th.muted : c->th.text);
            draw_text(c->dl, map.x - L->pad / 2 - 2 - w, y, lab, L->label_size, col,
                      r == highlight_row, 0);
        }
    }
    int last_in_col = slot + cols >= L->shown_heads;
    /* rows are queries (top left, on the first title line), columns keys (bottom
       left, under the labels) */
    if (L->show_row_labels && L->show_col_labels && slot % cols == 0) {
        const int fs = L->font_small;
        if (slot == 0) {
            const char *q = "query \xE2\x86\x93"; /* ↓ */
            int w = view_tw(c, q, fs, 0);
            if (w <= L->row_label_w)
                draw_text(c->dl, map.x - L->pad / 2 - 2 - w, L->heads[slot].title.y, q, fs,
                          c->th.muted, 0, 0);
        }
        if (last_in_col) {
            const char *k = "key \xE2\x86\x92"; /* → */
            int w = view_tw(c, k, fs, 0);
            if (w <= L->row_label_w)
                draw_text(c->dl, map.x - L->pad / 2 - 2 - w, map.y + map.h + L->pad / 2 + 2, k, fs,
                          c->th.muted, 0, 0);
        }
    }
    if (L->show_col_labels && last_in_col) {
        for (int k = 0; k < n; k += stride) {
            int x = view_label_pos(map.x, map.w, n, lh, k);
            view_token_label(lab, sizeof lab, attn_layer_token(layer, k));
            int w = view_tw(c, lab, L->label_size, 0);
            rgba col = k == hover_col ? c->th.accent_text
                                      : (k >= layer->n_real ? c->th.muted : c->th.text);
            draw_text(c->dl, x, map.y + map.h + L->pad / 2 + 2 + w, lab, L->label_size, col,
                      k == hover_col, 1);
        }
    }
}

static void draw_head(const view_ctx *c, int slot, int head, int highlight_row, int hover_col,
                      int variant, const view_hit *hover) {
    const view_rect map = c->L->heads[slot].map;
    const rgba accent = view_head_color(head, c->s->look.theme);
    char name[32];
    snprintf(name, sizeof name, "head-%d", head + 1);
    draw_group_begin(c->dl, head + 1, name);
    draw_head_title(c, slot, head, variant, accent);
    if (c->L->lines_shown) { /* the head view: lines in place of the heatmap (lines.c) */
        view_draw_lines_tile(c, slot, head, hover);
    } else {
        draw_head_map(c, map, head, highlight_row, hover_col, accent);
        draw_head_labels(c, slot, map, highlight_row, hover_col);
    }
    draw_group_end(c->dl);
}

static void draw_attn_caption(const view_ctx *c, int variant);
static void draw_page_note(const view_ctx *c);

void view_draw_heads(const view_ctx *c, const view_hit *hover) {
    const view_layout *L = c->L;
    int hl_row = -1, hl_col = -1, hl_head = -1;
    if (hover->kind == HIT_HEAD_CELL)
        hl_row = hover->row, hl_col = hover->col, hl_head = hover->head;
    if (hover->kind == HIT_ROW_LABEL) hl_row = hover->row;
    const int variant = title_variant(c);
    for (int i = 0; i < L->shown_heads && !L->lines_all; i++) {
        int head = L->first_head + i;
        draw_head(c, i, head, hl_row, head == hl_head ? hl_col : -1, variant, hover);
    }
    if (L->lines_shown) { /* the head view's overlaid tile and legend, no colorbar */
        view_draw_lines_rest(c, hover);
    } else if (L->shown_heads > 0 && view_colorbar(c, L->attn_cbar, VIEW_MAP_SEQ, 1.0f))
        draw_attn_caption(c, variant);
    if (L->pages > 1 && L->page_note.w > 0) /* figures have none but a pinned pane */
        draw_page_note(c);
}

/* The heads' colorbar caption: the scale in use, cut to the heads area (to the bar
 * in the focus view, whose matrices sit to the right); the mask legend follows. */
static void draw_attn_caption(const view_ctx *c, int variant) {
    const view_layout *L = c->L;
    const view_state *s = c->s;
    static const char *const caps[VIEW_CONTRAST_COUNT][2] = {
        {VIEW_ATTN_CAPTION, "attention weight, 0 to 1"},
        {"attention weight: each row scaled to its own maximum", "weight / row maximum"},
        {"attention weight: logarithmic scale, 0.001 to 1", "weight, log scale"}};
    const int fs = L->font_small, k = c->s->look.contrast % VIEW_CONTRAST_COUNT;
    const attn_layer *layer = s->layer;
    const int masked = layer->mask == ATTN_MASK_CAUSAL || layer->n_real < layer->n;
    view_rect r = L->attn_cbar;
    int maxw = L->focus ? r.w : L->heads_area.x + L->heads_area.w - r.x;
    int legend = masked ? view_mask_legend_width(c, fs) + L->gap : 0;
    if (legend > maxw / 2) legend = 0;
    char cap[160], dim[2][160];
    const char *full = caps[k][0], *brief = caps[k][1];
    char keyed[160]; /* the window names the key that changes it; a figure names none */
    if (k != VIEW_CONTRAST_FIXED && !c->s->figure) {
        snprintf(keyed, sizeof keyed, "%s (contrast K)", full);
        full = keyed;
    }
    /* a row's largest weight, on average over the shown heads' text rows: under a
       quarter, the fixed scale draws a dark field, and the caption says why */
    double top = 0.0;
    long rows = 0;
    const int nr = layer->n_real > 0 ? layer->n_real : layer->n;
    for (int i = 0; k == VIEW_CONTRAST_FIXED && layer->attn && i < L->shown_heads; i++)
        for (int r = 0; r < nr; r++, rows++) {
            const float *a = layer->attn + ((size_t)(L->first_head + i) * layer->n + r) * layer->n;
            float m = 0.0f;
            for (int j = 0; j < layer->n; j++) m = a[j] > m ? a[j] : m;
            top += m;
        }
    if (rows && top / rows < 0.25) {
        top /= rows;
        snprintf(dim[0], sizeof dim[0],
                 "attention weight, fixed scale 0 to 1: a row's largest is %.2g on average%s", top,
                 c->s->figure ? "" : " (K: each row to its maximum)");
        snprintf(dim[1], sizeof dim[1], "weight 0 to 1; row maxima %.2g on average%s", top,
                 c->s->figure ? "" : " (K)");
        full = dim[0], brief = dim[1];
    }
    static const char *const tinies[VIEW_CONTRAST_COUNT] = {("weight 0\xE2\x80\x93"
                                                             "1"),
                                                            "row-scaled", "log scale"};
    char tiny[64];
    snprintf(tiny, sizeof tiny, "%s", tinies[k]);
    if (full == dim[0]) /* the dark field's number, in the fewest words */
        snprintf(tiny, sizeof tiny, "row max %.2g avg", top);
    /* what the picture is, for whoever sees it first: rows and columns, and the bits in
       the titles (variant 0 shows them), before the scale, where the line has room */
    char axes[3][320];
    const int bits = variant == 0 && s->head_entropy && !L->focus;
    /* more tokens than pixels: view_attn_image keeps each pixel's largest weight */
    const int pooled =
        L->shown_heads > 0 && (L->heads[0].map.w < layer->n || L->heads[0].map.h < layer->n);
    const char *pool = pooled ? " \xC2\xB7 a pixel: the largest weight it covers" : "";
    snprintf(axes[0], sizeof axes[0], "rows: queries \xC2\xB7 columns: keys \xC2\xB7 %s%s%s", full,
             pool, bits ? " \xC2\xB7 bits: how spread each row is" : "");
    snprintf(axes[1], sizeof axes[1], "rows: queries \xC2\xB7 columns: keys \xC2\xB7 %s%s", full,
             pool);
    snprintf(axes[2], sizeof axes[2], "rows: queries \xC2\xB7 columns: keys \xC2\xB7 %s%s", brief,
             pooled ? " \xC2\xB7 pixel = max" : "");
    char pooled_full[4][320]; /* no room for the axes: the scale and the pooling at least */
    snprintf(pooled_full[0], sizeof pooled_full[0], "%s%s", full, pool);
    snprintf(pooled_full[1], sizeof pooled_full[1], "%s \xC2\xB7 pixel = max", full);
    snprintf(pooled_full[2], sizeof pooled_full[2], "%s%s", brief, pool);
    snprintf(pooled_full[3], sizeof pooled_full[3], "%s \xC2\xB7 pixel = max", brief);
    int fits = 0;
    for (int a = 0; a < 3 && !fits; a++)
        if (view_tw(c, axes[a], fs, 0) <= (maxw < r.w ? maxw : r.w) - legend) {
            full = axes[a];
            fits = 1;
        }
    for (int a = 0; a < 4 && !fits && pooled; a++)
        if (view_tw(c, pooled_full[a], fs, 0) <= maxw - legend) {
            full = pooled_full[a];
            fits = 1;
        }
    view_fit_text(cap, sizeof cap, full, maxw - legend, fs, 0, c->measure, c->ud);
    if (view_tw(c, cap, fs, 0) < view_tw(c, full, fs, 0))
        view_fit_text(cap, sizeof cap, brief, maxw - legend, fs, 0, c->measure, c->ud);
    if (view_tw(c, cap, fs, 0) < view_tw(c, brief, fs, 0)) /* cut: the fewest words, */
        snprintf(cap, sizeof cap, "%s", /* or none (the colorbar has its numbers) */
                 view_tw(c, tiny, fs, 0) <= maxw - legend ? tiny : "");
    int y = r.y - L->line * fs / L->font - 2;
    draw_text(c->dl, r.x, y, cap, fs, c->th.muted, 0, 0);
    if (legend) view_draw_mask_legend(c, r.x + view_tw(c, cap, fs, 0) + L->gap, y, fs);
}

/* The page note of a grid that pages: which heads are shown, of how many, and the
 * keys that page, shorter and shorter until one fits. */
static void draw_page_note(const view_ctx *c) {
    const view_layout *L = c->L;
    const view_state *s = c->s;
    char note[200];
    int last = L->first_head + L->shown_heads;
    char range[40];
    if (L->shown_heads == 1)
        snprintf(range, sizeof range, "head %d", last);
    else
        snprintf(range, sizeof range, "heads %d\xE2\x80\x93%d", L->first_head + 1, last);
    /* the pinned pane pages with Shift, and so does the grid while a lesson owns PgUp/PgDn */
    const int shifted = s->pinned_pane || (s->caption && s->caption->steps > 0);
    const char *keys = s->figure ? "" : shifted ? ", Shift+PgUp/PgDn" : ", PgUp/PgDn";
    /* above the base zoom the heads were asked to be larger: they would fit smaller */
    const float base = s->zoom_base > 0 ? s->zoom_base : 1.0f;
    const int zoomed = s->look.zoom > base * 1.001f;
    const char *at = zoomed ? " this large" : "";
    snprintf(note, sizeof note,
             "%s of %d (page %d/%d%s): %d heads of %d\xC3\x97%d do not fit at once%s", range,
             s->layer->h, L->page + 1, L->pages, keys, s->layer->h, s->layer->n, s->layer->n, at);
    if (L->lesson_note.w <= 0 && L->lesson_note_text[0]) /* the side panels gave way */
        snprintf(note + strlen(note), sizeof note - strlen(note), " \xC2\xB7 %s",
                 L->lesson_note_text);
    int x = L->buttons[BTN_PAGE_NEXT].present
                ? L->buttons[BTN_PAGE_NEXT].r.x + L->buttons[BTN_PAGE_NEXT].r.w + L->pad
                : L->page_note.x;
    int maxw = L->page_note.x + L->page_note.w - x;
    /* shorter and shorter until one fits: the heads shown are what must stay */
    char shorter[3][120];
    if (s->figure)
        snprintf(shorter[0], sizeof shorter[0], "%s of %d (page %d/%d)", range, s->layer->h,
                 L->page + 1, L->pages);
    else
        snprintf(shorter[0], sizeof shorter[0], "%s of %d (%s)", range, s->layer->h,
                 shifted ? "Shift+PgUp/PgDn" : "PgUp/PgDn");
    snprintf(shorter[1], sizeof shorter[1], "%s of %d", range, s->layer->h);
    snprintf(shorter[2], sizeof shorter[2], "%s/%d", range + (L->shown_heads == 1 ? 5 : 6),
             s->layer->h);
    char fitted[210];
    view_fit_text(fitted, sizeof fitted, note, maxw, L->font_small, 0, c->measure, c->ud);
    for (int k = 0; k < 3 && view_tw(c, fitted, L->font_small, 0) <
                                 view_tw(c, k ? shorter[k - 1] : note, L->font_small, 0);
         k++)
        view_fit_text(fitted, sizeof fitted, shorter[k], maxw, L->font_small, 0, c->measure, c->ud);
    draw_text(c->dl, x, L->page_note.y, fitted, L->font_small, c->th.text, 0, 0);
}

/* --- focus view: Q_i, K_i, V_i and head_i beside the big head ---------------- */

void view_draw_focus(const view_ctx *c) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    int head = L->focus - 1;
    if (head < 0 || head >= layer->h || L->focus_caption.w <= 0) return; /* the head alone */
    char buf[96], fitted[96];
    if (c->s->figure) /* a figure says no keys */
        snprintf(buf, sizeof buf, "head %d in focus", head + 1);
    else
        snprintf(buf, sizeof buf,
                 "head %d in focus: . and , step through it \xC2\xB7 Esc returns to all heads",
                 head + 1);
    view_rect r = L->focus_caption;
    view_fit_text(fitted, sizeof fitted, buf, r.w, L->font, 1, c->measure, c->ud);
    if (!c->s->figure && view_tw(c, fitted, L->font, 1) < view_tw(c, buf, L->font, 1)) {
        snprintf(buf, sizeof buf, "head %d: . , step \xC2\xB7 Esc returns", head + 1);
        view_fit_text(fitted, sizeof fitted, buf, r.w, L->font, 1, c->measure, c->ud);
    }
    if (view_tw(c, fitted, L->font, 1) < view_tw(c, buf, L->font, 1)) {
        snprintf(buf, sizeof buf, c->s->figure ? "head %d" : "head %d (Esc returns)", head + 1);
        view_fit_text(fitted, sizeof fitted, buf, r.w, L->font, 1, c->measure, c->ud);
    }
    draw_text(c->dl, r.x, r.y, fitted, L->font, view_head_color(head, c->s->look.theme), 1, 0);
    const float *src[4];
    int ld[4], sub[4];
    for (int i = 0; i < 4; i++) src[i] = view_focus_matrix(layer, head, i, &ld[i], &sub[i]);
    static const char *names[4] = {"Q", "K", "V", "head"};
    for (int i = 0; i < 4; i++) {
        const view_matrix_box *b = &L->qkv[i];
        char num[16];
        snprintf(num, sizeof num, "%d", sub[i] + 1);
        const char *parts[] = {names[i], num};
        const int lvl[] = {0, -1};
        view_draw_script_runs(c, b->map.x, b->map.y - L->line - L->pad / 2, parts, lvl, 2, L->font,
                              c->th.text);
        view_draw_matrix(c, b, src[i], ld[i], 0xF0C0000000ull + (uint64_t)i * 4096 + (uint64_t)head,
                         "");
    }
}

/* Q_i, K_i, V_i from the layer's d_model-wide Q, K, V; where it has none (a loaded model
   whose h d_k is not d_model, or whose heads share K/V heads) from its Q, K, V by head:
   the K and V of head i's K/V head g, named K_g and V_g as the head's title says. */
const float *view_focus_matrix(const attn_layer *layer, int head, int which, int *ld, int *sub) {
    const int d = layer->d_model, dk = layer->d_k, h = layer->h;
    const int hkv = layer->h_kv > 0 && layer->h_kv < h ? layer->h_kv : h, g = head / (h / hkv);
    *sub = head;
    if (which == 3) {
        *ld = dk;
        return view_at(layer->heads, (size_t)head * layer->n * dk);
    }
    const float *own = which == 0 ? layer->q : which == 1 ? layer->k : layer->v;
    *ld = d;
    if (own) return own + (size_t)head * dk;
    if (which == 0) {
        *ld = h * dk;
        return view_at(layer->q_heads, (size_t)head * dk);
    }
    *ld = hkv * dk;
    *sub = g;
    return view_at(which == 1 ? layer->k_heads : layer->v_heads, (size_t)g * dk);
}

/* --- the equation Concat x W^O = MultiHead ---------------------------------- */

/* Accent bands: a strip above Concat's columns and left of W^O's rows per head,
 * with the head's number where it fits (the colours repeat past eight heads). */
static void draw_bands(const view_ctx *c, int on_concat, int on_wo) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const int h = layer->h, d = layer->d_model, fs = L->font_small;
    view_rect hm = L->concat.map, wo = L->w_o.map, cb = L->concat_band, wb = L->wo_band;
    char num[16];
    int last_x = -100000, last_y = -100000; /* numbers never touch */
    for (int i = 0; i < h; i++) {
        rgba acc = view_head_color(i, c->s->look.theme);
        int x0 = hm.x + (int)((long)i * layer->d_k * hm.w / d);
        int x1 = hm.x + (int)((long)(i + 1) * layer->d_k * hm.w / d);
        int y0 = wo.y + (int)((long)i * layer->d_k * wo.h / d);
        int y1 = wo.y + (int)((long)(i + 1) * layer->d_k * wo.h / d);
        int sx = x1 - x0 >= 4 ? 1 : 0, sy = y1 - y0 >= 4 ? 1 : 0; /* gaps between bands */
        if (on_concat) draw_fill(c->dl, (view_rect){x0, cb.y, x1 - x0 - sx, cb.h}, acc);
        if (on_wo) draw_fill(c->dl, (view_rect){wb.x, y0, wb.w, y1 - y0 - sy}, acc);
        if (i > 0 && (x1 - x0) >= 3) {
            if (on_concat) draw_line(c->dl, x0, hm.y, x0, hm.y + hm.h, acc, 1);
            if (on_wo) draw_line(c->dl, wo.x, y0, wo.x + wo.w, y0, acc, 1);
        }
        /* the number, black on a light band and white on a dark one, centred */
        snprintf(num, sizeof num, "%d", i + 1);
        int light = acc.r * 299 + acc.g * 587 + acc.b * 114 > 150 * 1000;
        rgba ink = light ? (rgba){0, 0, 0, 255} : (rgba){255, 255, 255, 255};
        int tw = view_tw(c, num, fs, 1), th = cb.h;
        if (on_concat && tw + 2 <= x1 - x0 && x0 >= last_x) {
            draw_text(c->dl, x0 + (x1 - x0 - tw) / 2, cb.y + (cb.h - th) / 2, num, fs, ink, 1, 0);
            last_x = x1;
        }
        if (on_wo && tw + 2 <= wb.w && th <= y1 - y0 && y0 >= last_y) {
            draw_text(c->dl, wb.x + (wb.w - tw) / 2, y0 + (y1 - y0 - th) / 2, num, fs, ink, 1, 0);
            last_y = y1;
        }
    }
}

/* The equation's three matrices with the room their labels may take on their
 * line: from the previous map's right edge to the next map's left edge (a gap
 * from each) or the equation's edges, so a name and a shape wider than a narrow
 * map still show; the room between W^O and MultiHead on one line is MultiHead's
 * (its name is the longest, W^O's the shortest), and only MultiHead's label may
 * start left of its map. Where the maps were squeezed
 * closer than their labels, less than the map. */
static void label_room(const view_layout *L, view_matrix_box box[3]) {
    box[0] = L->concat, box[1] = L->w_o, box[2] = L->out;
    const int gap = L->pad / 2;
    view_rect room[3];
    for (int i = 0; i < 3; i++) {
        const view_rect a = box[i].shape, m = box[i].map;
        int x0 = L->eq_area.x, x1 = L->eq_area.x + L->eq_area.w;
        /* what the label's line must not run into: the other labels, maps and
           colorbars (their numbers under them) and the two symbols */
        view_rect obs[18];
        int no = 0, from[18];
        for (int j = 0; j < 3; j++) {
            if (j == i) continue;
            view_rect cb = box[j].cbar;
            cb.h += L->line + L->pad; /* its numbers */
            obs[no] = box[j].shape, from[no++] = j;
            obs[no] = box[j].map, from[no++] = j;
            obs[no] = cb, from[no++] = j;
        }
        obs[no] = L->times_sym, from[no++] = -1;
        obs[no] = L->equals_sym, from[no++] = -1;
        obs[no] = L->concat_band, from[no++] = -1; /* the head numbers */
        obs[no] = L->wo_band, from[no++] = -1;
        if (L->lesson_shown) { /* the lesson's panels, where they share the area */
            const view_rect les[5] = {L->cost, L->redund_title, L->redund_map, L->redund_cbar,
                                      L->redund_note};
            for (int k = 0; k < 5; k++) obs[no] = les[k], from[no++] = -1;
        }
        for (int k = 0; k < no; k++) {
            const view_rect b = obs[k];
            if (b.w <= 0 || b.h <= 0 || b.y >= a.y + a.h || a.y >= b.y + b.h) continue;
            if (b.x >= m.x) { /* to the right: W^O stops at its own map's edge */
                int end = i == 1 && from[k] == 2 ? m.x + m.w : b.x - gap;
                if (end < x1) x1 = end;
            } else { /* to the left: only MultiHead's label may start left of its map */
                int start = i == 2 ? b.x + b.w + gap : m.x;
                if (start > m.x) start = m.x;
                if (start > x0) x0 = start;
            }
        }
        if (i != 2 && x0 < m.x) x0 = m.x;
        room[i] = (view_rect){x0, a.y, x1 - x0 > 0 ? x1 - x0 : 0, a.h};
    }
    for (int j = 0; j < 2; j++) { /* MultiHead's label starts after the others' rooms */
        const view_rect a = room[j], b = room[2];
        if (a.y >= b.y + b.h || b.y >= a.y + a.h || a.x >= b.x + b.w || b.x >= a.x + a.w) continue;
        int start = a.x + a.w + gap;
        if (start > L->out.map.x) start = L->out.map.x;
        if (start > b.x) room[2].w -= start - b.x, room[2].x = start;
        if (room[2].w < 0) room[2].w = 0;
    }
    for (int i = 0; i < 3; i++) box[i].shape = room[i];
}

/* The ablation's note under MultiHead's colorbar: the first of forms that fits
 * from there to the equation's right edge (none when none fits). */
static void draw_off_note(const view_ctx *c, const char *const *forms, int count) {
    const view_layout *L = c->L;
    const view_rect r = L->out.cbar;
    const int room = L->eq_area.x + L->eq_area.w - r.x;
    for (int i = 0; i < count; i++)
        if (view_tw(c, forms[i], L->font_small, 1) <= room) {
            draw_text(c->dl, r.x, r.y + r.h + L->line + L->pad / 2, forms[i], L->font_small,
                      c->th.accent_text, 1, 0);
            return;
        }
}

void view_draw_equation(const view_ctx *c) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    if (L->lesson_note.w > 0) /* the side panels (or the equation) gave way: say so */
        draw_text(c->dl, L->lesson_note.x, L->lesson_note.y, L->lesson_note_text,
                  L->lesson_note_size, c->th.muted, 0, 0);
    if (L->concat.map.w <= 0) return;
    if (L->eq_font > 0) {      /* it gave way to the heads: drawn at its own (smaller) sizes */
        static view_layout eq; /* large; frames are drawn on one thread */
        eq = *L;
        eq.font = L->eq_font, eq.font_small = L->eq_font_small, eq.font_title = L->eq_font_title;
        eq.line = L->eq_line, eq.pad = L->eq_pad, eq.eq_font = 0;
        eq.lesson_note.w = 0;
        view_ctx at = *c;
        at.L = &eq;
        view_draw_equation(&at);
        return;
    }
    const char *parts[] = {"Concat(head",  "1", " \xE2\x80\xA6 head", "h",
                           ") \xC3\x97 W", "O", " = MultiHead"};
    const int lvl[] = {0, -1, 0, -1, 0, 1, 0};
    /* the title's forms, longest first, each at the equation's size then the small
       one: the formula, Concat × W^O = MultiHead, MultiHead = Concat W^O, and in a
       narrow column Concat W^O, the product under it (MultiHead alone there would
       name the Concat drawn under it; the product's result keeps its label below; it
       is no wider than "MultiHead", the room layout_eq.c keeps for it) */
    const char *f1[] = {"Concat \xC3\x97 W", "O", " = MultiHead"};
    const char *f2[] = {"MultiHead = Concat W", "O"};
    const char *f3[] = {"Concat W", "O"};
    static const int l1[] = {0, 1, 0}, l2[] = {0, 1}, l3[] = {0, 1};
    const struct {
        const char *const *parts;
        const int *lvl;
        int count;
    } forms[] = {{parts, lvl, 7}, {f1, l1, 3}, {f2, l2, 2}, {f3, l3, 2}};
    const int nforms = (int)(sizeof forms / sizeof forms[0]);
    int drawn = 0;
    for (int k = 0; k < 2 * nforms && !drawn; k++) {
        const int fi = k / 2, size = k % 2 ? L->font_small : L->font;
        if (fi == 0 && k % 2) continue; /* the formula only at the equation's size */
        if (view_script_runs_width(c, forms[fi].parts, forms[fi].lvl, forms[fi].count, size) >
            L->eq_title.w)
            continue;
        view_draw_script_runs(c, L->eq_title.x, L->eq_title.y, forms[fi].parts, forms[fi].lvl,
                              forms[fi].count, size, c->th.text);
        drawn = 1;
    }
    view_matrix_box box[3];
    label_room(L, box);
    /* the head bands beside the matrices drawn; a note in the place of those the
       layer lacks, saying why (never bands over empty frames) */
    draw_bands(c, layer->concat != NULL, layer->w_o != NULL);
    view_draw_matrix(c, &box[0], layer->concat, layer->d_model, 0xC0C0000001ull, "Concat ");
    view_draw_matrix(c, &box[1], layer->w_o, layer->d_model, 0xC0C0000002ull, "W\xE1\xB4\xBC ");
    const int product = layer->concat && layer->w_o;
    if (!product) view_draw_eq_note(c);
    const int dm = layer->d_model;
    if (c->s->look.diff && c->s->out_diff && layer->out_full) {
        /* the ablation's effect, on the unablated MultiHead's own colour scale */
        float scale = view_matrix_max_abs(c, 0xC0C0000005ull, layer->out_full, layer->n, dm, dm);
        view_draw_matrix_scaled(c, &box[2], c->s->out_diff, dm, 0xC0C0000004ull,
                                "\xCE\x94 = MultiHead \xE2\x88\x92 unablated ", scale);
        char full[96], brief[64], tiny[32];
        const double pct = 100.0 * attn_layer_off_delta(layer);
        snprintf(full, sizeof full,
                 "\xE2\x80\x96\xCE\x94\xE2\x80\x96 / \xE2\x80\x96MultiHead\xE2\x80\x96 = %.1f %%",
                 pct);
        snprintf(brief, sizeof brief, "\xE2\x80\x96\xCE\x94\xE2\x80\x96 = %.1f %%", pct);
        snprintf(tiny, sizeof tiny, "%.1f %%", pct);
        const char *forms[] = {full, brief, tiny};
        draw_off_note(c, forms, 3);
    } else {
        view_draw_matrix(c, &box[2], layer->out, dm, 0xC0C0000003ull, "MultiHead ");
        if (attn_layer_off_count(layer)) {
            char full[96], brief[64], tiny[32];
            const int off = attn_layer_off_count(layer);
            const double pct = 100.0 * attn_layer_off_delta(layer);
            snprintf(full, sizeof full, "%d head%s off: changes it by %.1f %%%s", off,
                     off > 1 ? "s" : "", pct, c->s->figure ? "" : " (D)");
            snprintf(brief, sizeof brief, "%d off: changes it %.1f %%", off, pct);
            snprintf(tiny, sizeof tiny, "%d off: %.1f %%", off, pct);
            const char *forms[] = {full, brief, tiny};
            draw_off_note(c, forms, 3);
        }
    }
    if (!product) return;
    view_text_center(c, L->times_sym, "\xC3\x97", L->font_title, c->th.text, 1);
    view_text_center(c, L->equals_sym, "=", L->font_title, c->th.text, 1);
}

/* --- status line ------------------------------------------------------------ */

void view_draw_status(const view_ctx *c) {
    const view_layout *L = c->L;
    const view_state *s = c->s;
    if (L->status.w <= 0) return;
    char buf[800], times[96] = "", seed[40] = "";
    char ms[64] = ""; /* the times are developers' numbers (MHAVIZ_STATS) */
    if (s->timings)
        snprintf(ms, sizeof ms, "%.*f ms \xC2\xB7 frame %.1f ms \xC2\xB7 ", s->overview ? 1 : 2,
                 s->compute_ms, s->frame_ms);
    if (!s->figure && s->overview) /* a loaded model: the layers computed */
        snprintf(times, sizeof times, "layers %d\xE2\x80\x93%d computed %s%s",
                 s->overview->computed_from + 1, s->overview->layers, ms[0] ? "in " : "\xC2\xB7 ",
                 ms);
    else if (!s->figure && ms[0])
        snprintf(times, sizeof times, "compute %s", ms);
    if (!s->overview) /* a checkpoint's weights come from no seed */
        snprintf(seed, sizeof seed, "seed %llu \xC2\xB7 ", (unsigned long long)s->layer->seed);
    char scaled[48] = "unscaled"; /* the number, not d_k written as markup */
    if (s->layer->scaled)
        snprintf(scaled, sizeof scaled, "scaled by 1/\xE2\x88\x9A%d", s->layer->d_k);
    const int has_msg = s->status && *s->status;
    char msg[520] = "";
    if (has_msg) snprintf(msg, sizeof msg, "\xE2\x96\xB6 %s", s->status);
    const char *sep = has_msg ? "   \xC2\xB7   " : "";
    const char *bad = s->text_replaced ? "   (invalid UTF-8 replaced by \xEF\xBF\xBD)" : "";
    char hint[120] = "", hint_short[64] = ""; /* what the labels leave out */
    if (L->lines_shown) {                     /* the head view's legend says what it labels */
    } else if (!L->show_row_labels && L->shown_heads > 0) {
        snprintf(hint, sizeof hint, "   \xC2\xB7   token labels hidden at this size: hover a cell");
        snprintf(hint_short, sizeof hint_short, "labels hidden: hover a cell");
    } else if (L->label_stride > 1) {
        const char *th = L->label_stride == 2 ? "nd" : (L->label_stride == 3 ? "rd" : "th");
        snprintf(hint, sizeof hint, "   \xC2\xB7   every %d%s token labelled: hover for the rest",
                 L->label_stride, th);
        snprintf(hint_short, sizeof hint_short, "every %d%s labelled", L->label_stride, th);
    }
    /* the whole line; where it does not fit, the timings go first, then the seed and
       scaling and the long hint, and the status message is kept to the last */
    char f1[700], f2[700], f3[600];
    snprintf(buf, sizeof buf, "%s%s%s%s%s%s%s", msg, sep, times, seed, scaled, bad, hint);
    snprintf(f1, sizeof f1, "%s%s%s%s%s%s", msg, sep, seed, scaled, bad, hint);
    snprintf(f2, sizeof f2, "%s%s%s%s", msg, has_msg && hint_short[0] ? sep : "",
             hint_short[0] || has_msg ? hint_short : scaled, bad);
    snprintf(f3, sizeof f3, "%s", has_msg ? msg : (hint_short[0] ? hint_short : scaled));
    const char *const forms[4] = {buf, f1, f2, f3};
    char fitted[700];
    view_fit_first(c, fitted, sizeof fitted, forms, 4, L->status.w, L->ui_small, 0);
    draw_text(c->dl, L->status.x, L->status.y, fitted, L->ui_small,
              s->status && *s->status ? c->th.text : c->th.muted, 0, 0);
}
