/* layout_heads.c: the heads grid: how many heads a page holds, the side of each
 * heatmap (filling its area, or a target side that follows the zoom), the titles,
 * which tokens are labelled (every k-th, always the first) and the attention
 * colorbar's place. layout.c decides the area; panels.c draws into these rects. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

int lay_label_width(lay_ctx *cx, int size) {
    for (int i = 0; i < cx->label_cached; i++)
        if (cx->label_size[i] == size) return cx->label_w[i];
    int w = view_label_max_width(cx->s, size, cx->measure, cx->ud);
    int slot = cx->label_cached < 4 ? cx->label_cached++ : 3;
    cx->label_size[slot] = size;
    cx->label_w[slot] = w;
    return w;
}

int lay_text_w(const lay_ctx *cx, const char *text, int size, int bold) {
    return view_text_width(cx->measure, cx->ud, text, size, bold);
}

int lay_line_h(const lay_ctx *cx, int size) {
    int w = 0, h = 0;
    cx->measure(cx->ud, "Ag", size, 0, &w, &h);
    return h;
}

int view_label_stride(int extent, int n, int lh) {
    if (n <= 0 || extent <= 0 || lh <= 0) return 0;
    const long need = lh + 1; /* a pixel between labels, for the rounding of centres */
    if (extent >= need * n) return 1;
    for (int k = 2; k <= 10; k++)
        if ((long)(2 * k + 1) * extent >= 3 * need * n && (long)k * extent >= need * n) return k;
    return 0;
}

int view_label_pos(int origin, int extent, int n, int lh, int i) {
    int p = origin + (int)(((long)i * 2 + 1) * extent / (2L * n)) - lh / 2;
    if (p + lh > origin + extent) p = origin + extent - lh;
    if (p < origin) p = origin;
    return p;
}

/* Largest heatmap side for k heads in cols columns within (w, h). */
static int grid_side(int k, int cols, int w, int h, int lw, int lh, int title_h, int gap) {
    int rows = (k + cols - 1) / cols;
    int aw = w - lw - (cols - 1) * gap;
    int ah = h - lh - rows * title_h - (rows - 1) * gap;
    if (aw <= 0 || ah <= 0) return 0;
    return lay_imin(aw / cols, ah / rows);
}

static int best_grid(int k, int w, int h, int lw, int lh, int title_h, int gap, int *cols_out) {
    int best = 0, best_cols = 1;
    for (int cols = 1; cols <= k; cols++) {
        int side = grid_side(k, cols, w, h, lw, lh, title_h, gap);
        if (side > best) best = side, best_cols = cols;
    }
    *cols_out = best_cols;
    return best;
}

/* Block under the grid: the colorbar's caption, the bar and its numbers. */
static int cbar_height(const view_layout *L) {
    return lay_imax(8, L->font_small * 3 / 4);
}

static int cbar_block(const view_layout *L) {
    return cbar_height(L) + 2 * L->line + L->pad * 2;
}

void lay_heads(view_layout *L, lay_ctx *cx, view_rect area, int single_head, int target) {
    const view_state *s = cx->s;
    const int n = s->layer ? s->layer->n : 1;
    const int h = s->layer ? s->layer->h : 1;
    L->heads_area = area;
    L->page_note = (view_rect){0, 0, 0, 0};
    L->buttons[BTN_PAGE_PREV].present = L->buttons[BTN_PAGE_NEXT].present = 0;
    L->label_size = L->font_small;
    const int title_h = L->line + L->pad / 2;
    const int gap = L->gap;
    view_rect g = {area.x, area.y, area.w, area.h - cbar_block(L)};

    int label_w = lay_label_width(cx, L->label_size) + L->pad;
    int label_fits_w = label_w * 3 <= area.w; /* else labels would crowd the maps: drop them */
    const int label_line = lay_line_h(cx, L->label_size);
    L->label_line = label_line;
    const int k = single_head ? 1 : h;
    /* a paged grid gives a line to the page note (not in figures) */
    const int note_h = s->figure ? 0 : L->line + L->pad;
    int cols = 1;
#define SIDE(c, lw) best_grid(c, g.w, g.h - ((c) < k ? note_h : 0), lw, lw, title_h, gap, &cols)

    /* heads on a page: at least 1 px a cell, and with a target as many as reach it
       (a side is counted with labels when they would be shown at it) */
    int per_page = lay_imin(k, VIEW_MAX_VISIBLE);
    if (target > 0 && !single_head) {
        int want = lay_imax(lay_imin(target, SIDE(1, 0)), lay_imin(n, SIDE(1, 0)));
        while (per_page > 1) {
            int side = label_fits_w ? SIDE(per_page, label_w) : 0;
            if (!(side >= n && view_label_stride(side, n, label_line) > 0))
                side = SIDE(per_page, 0);
            if (side >= want) break;
            per_page--;
        }
    }
    while (per_page > 1 && SIDE(per_page, 0) < n) per_page--;
    int pages = (k + per_page - 1) / per_page;
    int page = single_head ? 0 : lay_imax(0, lay_imin(s->page, pages - 1));
    if (pages > 1 && note_h) {
        L->page_note = (view_rect){g.x, g.y, g.w, L->line + L->pad};
        g.y += note_h;
        g.h -= note_h;
    }
#undef SIDE
    int first = page * per_page;
    int shown = lay_imin(per_page, k - first);

    /* the side: filling, or the target; cells never absurdly large for a short
       sentence (a lone head may fill its area) */
    int max_cell = L->font * 8;
    int cap = single_head ? 1 << 30 : n * max_cell;
    if (target > 0 && !single_head) cap = lay_imin(cap, lay_imax(target, n));
    /* every page is laid out for a full page, so pages look alike */
    int lw = label_w;
    int side = lay_imin(cap, best_grid(per_page, g.w, g.h, lw, lw, title_h, gap, &cols));
    int stride = view_label_stride(side, n, label_line);
    int labels = label_fits_w && n > 0 && stride > 0 && side >= n;
    if (labels && stride > 1) {
        /* every token labelled in a smaller type (down to 80 %), rather than every k-th */
        int size2 = lay_imax(1, (L->font_small * 4 + 2) / 5);
        int lw2 = lay_label_width(cx, size2) + L->pad, line2 = lay_line_h(cx, size2);
        int cols2 = 1;
        int side2 = lay_imin(cap, best_grid(per_page, g.w, g.h, lw2, lw2, title_h, gap, &cols2));
        if (side2 >= n && view_label_stride(side2, n, line2) == 1) {
            L->label_size = size2;
            L->label_line = line2;
            lw = lw2, side = side2, cols = cols2, stride = 1;
        }
    }
    if (labels) { /* labels that would cost the maps more than 30 % of their side go */
        int c0 = 1, bare = lay_imin(cap, best_grid(per_page, g.w, g.h, 0, 0, title_h, gap, &c0));
        if ((long)side * 10 < (long)bare * 7) labels = 0;
    }
    if (!labels) {
        lw = 0;
        side = lay_imin(cap, best_grid(per_page, g.w, g.h, 0, 0, title_h, gap, &cols));
    }
    if (side < 1) side = 1;
    L->label_stride = labels ? stride : 0;
    int rows = (per_page + cols - 1) / cols;

    L->first_head = single_head ? s->panel_head - 1 : first;
    if (single_head && s->focus) L->first_head = s->focus - 1;
    if (L->first_head < 0) L->first_head = 0;
    L->shown_heads = shown;
    L->per_page = per_page;
    L->pages = pages;
    L->page = page;
    L->grid_cols = cols;
    L->grid_rows = rows;
    L->show_row_labels = labels;
    L->show_col_labels = labels;
    L->row_label_w = lw;
    L->col_label_h = lw;

    /* titles in one size: "head 12" when the widest fits, else the number alone */
    char title[32];
    snprintf(title, sizeof title, "head %d", L->first_head + shown);
    L->title_short = lay_text_w(cx, title, L->font, 1) > side;

    /* a head exported alone is centred in its figure */
    int dx = 0;
    if (single_head && !s->focus) dx = lay_imax(0, (g.w - lw - side) / 2);
    for (int i = 0; i < shown; i++) {
        int c = i % cols, r = i / cols;
        int x = g.x + dx + lw + c * (side + gap);
        int y = g.y + r * (title_h + side + gap) + title_h;
        L->heads[i].title = (view_rect){x, y - title_h, side, title_h};
        L->heads[i].map = (view_rect){x, y, side, side};
    }
    int grid_bottom = g.y + rows * (title_h + side + gap) - gap + lw;
    int cw = lay_imin(area.w - lw, lay_imax(L->font * 12, cols * side));
    L->attn_cbar = (view_rect){g.x + dx + lw, grid_bottom + L->pad + L->line,
                               lay_imin(cw, g.w - lw), cbar_height(L)};

    if (pages > 1 && note_h && !s->present) {
        int bw = L->line + L->pad;
        L->buttons[BTN_PAGE_PREV].r = (view_rect){g.x, L->page_note.y, bw, L->line};
        L->buttons[BTN_PAGE_PREV].present = 1;
        L->buttons[BTN_PAGE_NEXT].r =
            (view_rect){g.x + bw + L->pad / 2, L->page_note.y, bw, L->line};
        L->buttons[BTN_PAGE_NEXT].present = 1;
        snprintf(L->buttons[BTN_PAGE_PREV].label, sizeof L->buttons[0].label, "\xE2\x97\x80");
        snprintf(L->buttons[BTN_PAGE_NEXT].label, sizeof L->buttons[0].label, "\xE2\x96\xB6");
    }
}

view_rect lay_heads_used(const view_layout *L, lay_ctx *cx) {
    view_rect a = L->heads_area;
    int right = L->attn_cbar.x + L->attn_cbar.w;
    int cap = lay_text_w(cx, VIEW_ATTN_CAPTION, L->font_small, 0);
    right = lay_imax(right, lay_imin(a.x + a.w, L->attn_cbar.x + cap));
    if (L->shown_heads > 0) /* a full page's grid, whichever page is shown */
        right = lay_imax(right,
                         L->heads[0].map.x + L->grid_cols * (L->heads[0].map.w + L->gap) - L->gap);
    if (L->page_note.w > 0) right = a.x + a.w; /* the page note spans the area */
    int bottom = L->attn_cbar.y + L->attn_cbar.h + L->pad / 2 + L->line;
    return (view_rect){a.x, a.y, right - a.x, bottom - a.y};
}
