/* layout_lesson.c: where the lesson's two small panels go, in the room the
 * equation leaves under it: the h x h matrix of how alike the heads are, and
 * the cost of the layer. Nothing is placed when the room is too small (the
 * state's I key hides them too). Drawing them is lesson.c's. */
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

void view_lesson_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    L->lesson_shown = 0;
    if (!s->lesson || !s->m || L->concat.map.w <= 0 || s->panel != VIEW_PANEL_ALL) return;
    const int top = equation_bottom(L) + L->gap;
    const int bottom = L->main.y + L->main.h;
    const view_rect a = {L->eq_area.x, top, L->eq_area.w, bottom - top};
    const int cost_w = view_text_width(measure, ud,
                                       "projections 8\xC2\xB7n\xC2\xB7"
                                       "d\xC2\xB2 = 000,000,000 FLOPs",
                                       L->font_small, 0) +
                       L->pad;
    if (a.h < 9 * L->line || a.w < cost_w + 6 * L->line) return;
    L->lesson_shown = 1;
    /* the matrix: square, beside the cost text */
    int side = imin(a.h - 2 * L->line - 3 * L->pad - imax(6, L->font_small / 2) - 2 * L->line,
                    a.w - cost_w - 2 * L->gap - L->line);
    side = imax(L->line, side);
    L->redund_title = (view_rect){a.x, a.y, a.w - cost_w - L->gap, L->line};
    L->redund_map = (view_rect){a.x + L->line, a.y + L->line + L->pad, side, side};
    L->redund_cbar = (view_rect){L->redund_map.x, L->redund_map.y + side + L->pad,
                                 imax(side, L->font * 8), imax(6, L->font_small / 2)};
    L->redund_cbar.w = imin(L->redund_cbar.w, a.w - cost_w - L->gap - L->line);
    L->redund_note = (view_rect){a.x, L->redund_cbar.y + L->redund_cbar.h + L->line + L->pad / 2,
                                 a.w - cost_w - L->gap, L->line};
    L->cost = (view_rect){a.x + a.w - cost_w, a.y, cost_w, a.h};
}
