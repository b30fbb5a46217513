/* layout_lesson.c: where the lesson's two small panels go, in the room the
 * equation leaves under it: the h x h matrix of how alike the heads are, and
 * the cost of the layer. Nothing is placed when the room is too small (the
 * state's I key hides them too). Drawing them is lesson.c's. */
#include <math.h>

#include "view_internal.h"

static int imax(int a, int b) {
    return a > b ? a : b;
}

static int imin(int a, int b) {
    return a < b ? a : b;
}

/* Bottom of what the equation draws: maps, shape labels, colorbars and their
   numbers, and a note line under MultiHead. */
static int equation_bottom(const view_layout *L) {
    const view_matrix_box *b[3] = {&L->concat, &L->w_o, &L->out};
    int y = 0;
    for (int i = 0; i < 3; i++) y = imax(y, b[i]->cbar.y + b[i]->cbar.h + 2 * L->line + L->pad);
    return y;
}

static int cost_width(const view_layout *L, view_measure_fn measure, void *ud);
static int column_width(const view_layout *L, view_measure_fn measure, void *ud);
static void lay_row(view_layout *L, view_rect a, int cost_w);

/* The panels one above the other in the column a beside the equation: the
   matrix as wide as the column allows (at least min_lines lines), the cost under it. */
static void lay_column(view_layout *L, const view_state *s, view_rect a, int cost_w,
                       int min_lines) {
    const int cbar_h = imax(6, L->font_small / 2);
    const int lines = s->figure || s->look.present ? 6 : 7; /* the window adds the forward's time */
    const int cost_h =
        2 * L->line + L->pad / 2 + (lines - 1) * (L->line * L->font_small / L->font + 2) + 2;
    const int note_h = 3 * (L->line * L->font_small / L->font + 2); /* three lines */
    const int fixed = L->line + L->pad + L->pad + cbar_h + L->line + L->pad / 2 + note_h +
                      L->gap * 2 + cost_h; /* everything but the matrix */
    const int room = imin(a.w - L->line - L->pad, a.h - fixed);
    int side = room;
    if (L->shown_heads > 0) /* never larger than a head: it is a side note to them */
        side = imin(side, L->heads[0].map.w * 5 / 4);
    side = imax(side, imin(room, min_lines * L->line)); /* but large enough to read */
    if (side < min_lines * L->line || a.w < cost_w) return;
    if (s->layer->h == 1) side = 2 * L->line; /* two lines of words, not a one-cell matrix */
    L->lesson_shown = 1;
    L->redund_title = (view_rect){a.x, a.y, a.w, L->line};
    L->redund_map = (view_rect){a.x + L->line, a.y + L->line + L->pad, side, side};
    L->redund_cbar = (view_rect){L->redund_map.x, L->redund_map.y + side + L->pad, side, cbar_h};
    L->redund_note =
        (view_rect){a.x, L->redund_cbar.y + L->redund_cbar.h + L->line + L->pad / 2, a.w, note_h};
    const int y = L->redund_note.y + L->redund_note.h + L->gap * 2;
    /* the cost's text larger (up to 1.35 times) when the column has the room */
    const float f =
        fminf(1.35f, fminf((float)(a.y + a.h - y) / (float)cost_h, (float)a.w / (float)cost_w));
    if (f > 1.05f) L->cost_font = (int)((float)L->font_small * f);
    const int ch = f > 1.05f ? (int)((float)cost_h * f) + L->pad : cost_h;
    L->cost = (view_rect){a.x, y, a.w, imin(ch, a.y + a.h - y)};
}

void view_lesson_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    L->lesson_shown = 0;
    L->cost_font = 0;
    if (!s->lesson || !s->layer || L->concat.map.w <= 0 || s->panel != VIEW_PANEL_ALL) return;
    if (L->lesson_area.w > 0) {
        lay_column(L, s, L->lesson_area, column_width(L, measure, ud), 6);
        return;
    }
    const int top = equation_bottom(L) + L->gap;
    /* above a bare layout's strip for its captions and formula (L->foot) */
    const int bottom = L->foot.h > 0 ? L->foot.y - L->gap : L->main.y + L->main.h;
    lay_row(L, (view_rect){L->eq_area.x, top, L->eq_area.w, bottom - top},
            cost_width(L, measure, ud));
}

void view_lesson_page_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                             view_rect a) {
    static view_layout row; /* large; the layout is computed on one thread */
    L->lesson_shown = 0;
    L->cost_font = 0;
    if (!s->lesson || !s->layer || a.w <= 0 || a.h <= 0) return;
    row = *L;
    lay_row(&row, a, cost_width(L, measure, ud));
    lay_column(L, s, a, column_width(L, measure, ud), 4);
    if (row.lesson_shown && (!L->lesson_shown || row.redund_map.w > L->redund_map.w)) *L = row;
}

/* The widest line of the cost panel at the data's small text. */
static int cost_width(const view_layout *L, view_measure_fn measure, void *ud) {
    return view_text_width(measure, ud,
                           "projections 8\xC2\xB7n\xC2\xB7"
                           "d\xC2\xB2 = 000,000,000 FLOPs",
                           L->font_small, 0) +
           L->pad;
}

/* The cost panel's width in a column: its widest line, or the line of what dominates. */
static int column_width(const view_layout *L, view_measure_fn measure, void *ud) {
    return imax(cost_width(L, measure, ud),
                view_text_width(measure, ud,
                                "projections dominate: n \xE2\x89\xA4 2\xC2\xB7"
                                "d_model",
                                L->font_small, 0) +
                    L->pad);
}

/* The panels side by side in a: the matrix square, the cost text at its right. */
static void lay_row(view_layout *L, view_rect a, int cost_w) {
    const int note_h = 3 * (L->line * L->font_small / L->font + 2); /* three lines */
    if (a.h < 9 * L->line + note_h || a.w < cost_w + 6 * L->line) return;
    L->lesson_shown = 1;
    /* the matrix: square, beside the cost text */
    int side = imin(a.h - 2 * L->line - 3 * L->pad - imax(6, L->font_small / 2) - L->line - note_h,
                    a.w - cost_w - 2 * L->gap - L->line);
    side = imax(L->line, side);
    L->redund_title = (view_rect){a.x, a.y, a.w - cost_w - L->gap, L->line};
    L->redund_map = (view_rect){a.x + L->line, a.y + L->line + L->pad, side, side};
    L->redund_cbar = (view_rect){L->redund_map.x, L->redund_map.y + side + L->pad,
                                 imax(side, L->font * 8), imax(6, L->font_small / 2)};
    L->redund_cbar.w = imin(L->redund_cbar.w, a.w - cost_w - L->gap - L->line);
    L->redund_note = (view_rect){a.x, L->redund_cbar.y + L->redund_cbar.h + L->line + L->pad / 2,
                                 a.w - cost_w - L->gap, note_h};
    L->cost = (view_rect){a.x + a.w - cost_w, a.y, cost_w, a.h};
}
