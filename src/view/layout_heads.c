/* layout_heads.c: the heads grid: how many heads a page holds, the side of each
 * heatmap (filling its area, or a target side that follows the zoom), the titles,
 * which tokens are labelled (every k-th, always the first) and the attention
 * colorbar's place. layout.c decides the area; panels.c draws into these rects. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

/* 1 when every k-th label (from the first) at its place (view_label_pos, which
 * keeps the end labels inside the extent) leaves the next a line and a pixel. */
static int labels_apart(int extent, int n, int lh, int k) {
    int prev = 0;
    for (int i = 0; i < n; i += k) {
        const int p = view_label_pos(0, extent, n, lh, i);
        if (i > 0 && p - prev < lh + 1) return 0;
        prev = p;
    }
    return 1;
}

int view_label_stride(int extent, int n, int lh) {
    if (n <= 0 || extent <= 0 || lh <= 0) return 0;
    const long need = lh + 1; /* a pixel between labels, for the rounding of centres */
    if (extent >= need * n) return 1;
    for (int k = 2; k <= 10; k++)
        if ((long)(2 * k + 1) * extent >= 3 * need * n && (long)k * extent >= need * n &&
            labels_apart(extent, n, lh, k)) /* the last label pushed in at the end */
            return k;
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

/* The largest side over 1 .. k columns, and the fewest columns that reach it. Only the
 * fewest columns for each count of rows is tried: with the rows fixed, a column more
 * can only narrow the heads, so the answer is always one of these (about 2 sqrt(k) of
 * k); the layout's search asks this thousands of times a layout. */
static int best_grid(int k, int w, int h, int lw, int lh, int title_h, int gap, int *cols_out) {
    int best = 0, best_cols = 1;
    for (int cols = 1; cols <= k;) {
        int side = grid_side(k, cols, w, h, lw, lh, title_h, gap);
        if (side > best) best = side, best_cols = cols;
        const int rows = (k + cols - 1) / cols;
        if (rows == 1) break;
        cols = (k + rows - 2) / (rows - 1); /* the fewest columns that take a row less */
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

/* The room of one grid: where its heatmaps go and what they share. */
typedef struct {
    view_rect g;      /* the grid (and the page note's line, when paged) */
    int k;            /* heads to lay out: 1 for a lone head */
    int n;            /* positions: each heatmap is n x n */
    int title_h, gap; /* a head's title line, the space between heads */
    int note_h;       /* the page note's line when paged (0 in figures) */
    int label_w;      /* the widest token label and its padding */
    int label_fits_w; /* labels leave the maps room across the area */
    int label_line;   /* a label's line height */
} grid_room;

/* The side of c heads a page with labels lw wide (the page note counted when the
 * heads do not all fit one page). */
static int room_side(const grid_room *R, int c, int lw) {
    int cols = 1;
    return best_grid(c, R->g.w, R->g.h - (c < R->k ? R->note_h : 0), lw, lw, R->title_h, R->gap,
                     &cols);
}

/* The side of c heads a page as drawn: with labels when they would be shown at it. */
static int drawn_side(const grid_room *R, int c) {
    const int bare = room_side(R, c, 0);
    int side = R->label_fits_w ? room_side(R, c, R->label_w) : 0;
    /* labels are left out where they would not fit, or cost the maps over 30 % */
    if (!(side >= R->n && view_label_stride(side, R->n, R->label_line) > 0) ||
        (long)side * 10 < (long)bare * 7)
        side = bare;
    return side;
}

/* Heads on a page: at least 1 px a cell, and with a target as many as reach it, or
 * reach what a lone head would have here, within 3 % (sides counted as drawn, labels
 * and all): a page holds fewer heads only when that makes them larger. */
static int heads_per_page(const grid_room *R, int single_head, int target) {
    int per_page = lay_imin(R->k, VIEW_MAX_VISIBLE);
    if (target > 0 && !single_head) {
        const int lone = drawn_side(R, 1);
        int want = lay_imax(lay_imin(target, lone), lay_imin(R->n, lone));
        while (per_page > 1) { /* within 3 %: a head a page more is worth more than that */
            if ((long)drawn_side(R, per_page) * 100 >= (long)want * 97) break;
            per_page--;
        }
    }
    while (per_page > 1 && room_side(R, per_page, 0) < R->n) per_page--;
    return per_page;
}

/* How a full page of heads is drawn: the heatmaps' side, the labels' width (0:
 * none), the columns and every stride-th token labelled. */
typedef struct {
    int side, lw, cols, labels, stride;
} grid_fit;

/* The side of per_page heads in the room, at most cap, with the token labels when
 * they fit: every token in a smaller type (down to 80 %, set in L) rather than
 * every k-th, and none when they would cost the maps more than 30 % of their side. */
static grid_fit fit_labels(view_layout *L, lay_ctx *cx, const grid_room *R, int per_page, int cap) {
    const view_rect g = R->g;
    const int n = R->n, title_h = R->title_h, gap = R->gap;
    grid_fit f = {0, R->label_w, 1, 0, 0};
    f.side = lay_imin(cap, best_grid(per_page, g.w, g.h, f.lw, f.lw, title_h, gap, &f.cols));
    f.stride = view_label_stride(f.side, n, R->label_line);
    f.labels = R->label_fits_w && n > 0 && f.stride > 0 && f.side >= n;
    const int size2 = lay_imax(1, (L->font_small * 4 + 2) / 5);
    if (f.labels && f.stride > 1 && size2 >= cx->s->text_floor) { /* (a projected page's) */
        int lw2 = lay_label_width(cx, size2) + L->pad, line2 = lay_line_h(cx, size2);
        int cols2 = 1;
        int side2 = lay_imin(cap, best_grid(per_page, g.w, g.h, lw2, lw2, title_h, gap, &cols2));
        if (side2 >= n && view_label_stride(side2, n, line2) == 1) {
            L->label_size = size2;
            L->label_line = line2;
            f.lw = lw2, f.side = side2, f.cols = cols2, f.stride = 1;
        }
    }
    if (f.labels) {
        int c0 = 1, bare = lay_imin(cap, best_grid(per_page, g.w, g.h, 0, 0, title_h, gap, &c0));
        if ((long)f.side * 10 < (long)bare * 7) f.labels = 0;
    }
    if (!f.labels) {
        f.lw = 0;
        f.side = lay_imin(cap, best_grid(per_page, g.w, g.h, 0, 0, title_h, gap, &f.cols));
    }
    if (f.side < 1) f.side = 1;
    return f;
}

/* The shown heads' titles and heatmaps on the grid g (a lone exported head centred
 * in it), the attention colorbar under the grid and, when paged in the window, the
 * page buttons on the note's line. */
static void place_grid(view_layout *L, const view_state *s, const grid_room *R, view_rect area,
                       int single_head, const grid_fit *f) {
    const view_rect g = R->g;
    const int side = f->side, lw = f->lw, cols = f->cols, gap = R->gap, title_h = R->title_h;
    int dx = 0;
    if (single_head && !s->look.focus) dx = lay_imax(0, (g.w - lw - side) / 2);
    for (int i = 0; i < L->shown_heads; i++) {
        int c = i % cols, r = i / cols;
        int x = g.x + dx + lw + c * (side + gap);
        int y = g.y + r * (title_h + side + gap) + title_h;
        L->heads[i].title = (view_rect){x, y - title_h, side, title_h};
        L->heads[i].map = (view_rect){x, y, side, side};
    }
    int grid_bottom = g.y + L->grid_rows * (title_h + side + gap) - gap + lw;
    int cw = lay_imin(area.w - lw, lay_imax(L->font * 12, cols * side));
    L->attn_cbar = (view_rect){g.x + dx + lw, grid_bottom + L->pad + L->line,
                               lay_imin(cw, g.w - lw), cbar_height(L)};

    if (L->pages > 1 && R->note_h && !s->look.present && !s->figure) { /* a figure has no buttons */
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

void lay_heads(view_layout *L, lay_ctx *cx, view_rect area, int single_head, int target) {
    const view_state *s = cx->s;
    const int n = s->layer ? s->layer->n : 1;
    const int h = s->layer ? s->layer->h : 1;
    L->heads_area = area;
    L->page_note = (view_rect){0, 0, 0, 0};
    L->buttons[BTN_PAGE_PREV].present = L->buttons[BTN_PAGE_NEXT].present = 0;
    L->label_size = L->font_small;
    const int label_w = lay_label_width(cx, L->label_size) + L->pad;
    const int label_line = lay_line_h(cx, L->label_size);
    grid_room R = {
        .g = {area.x, area.y, area.w, area.h - cbar_block(L)},
        .k = single_head ? 1 : h,
        .n = n,
        .title_h = L->line + L->pad / 2,
        .gap = L->gap,
        /* a paged grid's note: not in figures but the pinned pane's (its header is narrow) */
        .note_h = s->figure && !s->pinned_pane ? 0 : L->line + L->pad,
        .label_w = label_w,
        .label_line = label_line,
    };
    R.label_fits_w = R.label_w * 3 <= area.w; /* else labels would crowd the maps: drop them */
    L->label_line = R.label_line;

    const int per_page = heads_per_page(&R, single_head, target);
    const int pages = (R.k + per_page - 1) / per_page;
    const int page = single_head ? 0 : lay_imax(0, lay_imin(s->look.page, pages - 1));
    if (pages > 1 && R.note_h) {
        L->page_note = (view_rect){R.g.x, R.g.y, R.g.w, L->line + L->pad};
        R.g.y += R.note_h;
        R.g.h -= R.note_h;
    }
    const int first = page * per_page;
    const int shown = lay_imin(per_page, R.k - first);

    /* the side: filling, or the target; cells never absurdly large for a short
       sentence (a lone head may fill its area), but a text of one or two tokens as
       large as three (a one-cell head of 128 px left a third of a 1024x768 presentation
       empty under it); every page is laid out for a full page, so pages look alike */
    int cap = single_head ? 1 << 30 : lay_imax(n, 3) * (L->font * 8);
    if (target > 0 && !single_head) cap = lay_imin(cap, lay_imax(target, n));
    const grid_fit f = fit_labels(L, cx, &R, per_page, cap);
    L->label_stride = f.labels ? f.stride : 0;

    L->first_head = single_head ? s->panel_head - 1 : first;
    if (single_head && s->look.focus) L->first_head = s->look.focus - 1;
    if (L->first_head < 0) L->first_head = 0;
    L->shown_heads = shown;
    L->per_page = per_page;
    L->pages = pages;
    L->page = page;
    L->grid_cols = f.cols;
    L->grid_rows = (per_page + f.cols - 1) / f.cols;
    L->show_row_labels = f.labels;
    L->show_col_labels = f.labels;
    L->row_label_w = f.lw;
    L->col_label_h = f.lw;

    /* titles in one size: "head 12" when the widest fits, else the number alone */
    char title[32];
    snprintf(title, sizeof title, "head %d", L->first_head + shown);
    L->title_short = lay_text_w(cx, title, L->font, 1) > f.side;
    place_grid(L, s, &R, area, single_head, &f);
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
