/* layout_place.c: where the next-token panel goes in the layer view: in the room
 * the heads and the equation leave as they are (right of the equation), else in a
 * column or a strip of its own that they give up, whichever leaves the heads the
 * larger. The panel's own rectangles are layout_next.c's. No drawing. */
#include <string.h>

#include "layout_internal.h"

#define imax lay_imax
#define imin lay_imin

/* The next-token panel in r at one size; 1 when every row fits. */
static int next_fits(view_layout *L, const view_state *s, lay_ctx *cx, view_rect r, int compact) {
    view_next_layout(L, s, cx->measure, cx->ud, r, compact);
    return L->next.shown && L->next.k == s->next->k;
}

/* The next-token panel beside the heads and the equation, which give up room for
 * it: a column at the right of main (at most 30 % of its width; column set), else a
 * strip at its foot (at most 40 % of its height, every row; or as many rows as a
 * third holds), a size up from the data's text when that fits, else at it. L->main
 * shrinks to what is left. Returns 0 (nothing placed) when it fits nowhere. */
static int carve_next(view_layout *L, const view_state *s, lay_ctx *cx, int column) {
    memset(&L->next, 0, sizeof L->next);
    if (!view_next_ok(s->next)) return 0;
    const view_rect m = L->main;
    for (int compact = 0; compact < 2 && column; compact++) {
        const int w = imin(view_next_width(L, s, cx->measure, cx->ud, compact), m.w * 30 / 100);
        const view_rect col = {m.x + m.w - w, m.y, w, m.h};
        if (next_fits(L, s, cx, col, compact)) {
            L->main.w = imax(1, col.x - L->gap * 2 - m.x);
            return 1;
        }
    }
    if (column) return 0;
    /* a strip: every row within 40 % of the height, else what a third holds, compact */
    int compact = 0, w = 0;
    for (; compact < 2; compact++) {
        w = imin(m.w, view_next_width(L, s, cx->measure, cx->ud, compact));
        if (next_fits(L, s, cx, (view_rect){m.x, m.y, w, m.h * 40 / 100}, compact)) break;
    }
    if (compact == 2) {
        compact = 1;
        view_next_layout(L, s, cx->measure, cx->ud, (view_rect){m.x, m.y, w, m.h / 3}, compact);
    }
    if (!L->next.shown) return 0;
    const int h = L->next.area.h, y = m.y + m.h - h; /* at the foot of the main area */
    view_next_layout(L, s, cx->measure, cx->ud, (view_rect){m.x, y, w, h}, compact);
    L->main.h = imax(1, y - L->gap - m.y);
    return 1;
}

/* The room right of what the equation (and the lesson's panels) draw, down to the
 * foot of the main area: in a stacked layout (heads above) or beside a narrow
 * equation that is where the window is empty. */
static view_rect right_of_equation(const view_layout *L) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    int right = L->eq_title.x + L->eq_title.w;
    for (int i = 0; i < 3; i++)
        right = imax(right, imax(imax(m[i]->map.x + m[i]->map.w, m[i]->cbar.x + m[i]->cbar.w),
                                 m[i]->shape.x + m[i]->shape.w));
    if (L->lesson_shown) {
        const view_rect r[5] = {L->redund_title, L->redund_map, L->redund_cbar, L->redund_note,
                                L->cost};
        for (int i = 0; i < 5; i++) right = imax(right, r[i].x + r[i].w);
    }
    const int x = right + L->gap * 3, y = L->eq_area.y;
    return (view_rect){x, y, L->main.x + L->main.w - x, L->main.y + L->main.h - y};
}

/* How large the heads came out: their side, three quarters of it when their
   tokens are not all labelled, half that when the lesson's panels found no room. */
static long heads_size(const view_layout *L, const view_state *s) {
    if (L->shown_heads < 1) return 0;
    const long side = L->heads[0].map.w;
    const long size = L->label_stride == 1 && L->show_row_labels ? side * 4 : side * 3;
    return s->lesson && !L->lesson_shown ? size / 2 : size; /* the lesson lost costs half */
}

/* The heads and the equation in main, and the next-token panel where the window
 * has room for it as they are (right of the equation, in the window); else in a
 * column or a strip of its own that they give up (carve_next), whichever leaves
 * the heads larger. */
void lay_grid_next(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    memset(&L->next, 0, sizeof L->next);
    const view_rect main = L->main;
    lay_main(L, cx, main, target);
    view_lesson_layout(L, s, cx->measure, cx->ud);
    if (!view_next_ok(s->next)) return;
    if (!s->figure && !s->present) {
        const view_rect r = right_of_equation(L);
        for (int compact = 0; compact < 2 && r.h > 0; compact++) {
            const int want = view_next_width(L, s, cx->measure, cx->ud, compact);
            if (r.w >= want * 3 / 4 &&
                next_fits(L, s, cx, (view_rect){r.x, r.y, imin(r.w, want), r.h}, compact))
                return;
        }
    }
    static view_layout best; /* large; the layout is computed on one thread */
    long best_size = -1;
    for (int column = 1; column >= 0; column--) {
        L->main = main;
        if (!carve_next(L, s, cx, column)) continue;
        lay_main(L, cx, L->main, target);
        view_lesson_layout(L, s, cx->measure, cx->ud);
        const long size = heads_size(L, s);
        if (size > best_size) best = *L, best_size = size;
    }
    if (best_size >= 0) {
        *L = best;
        return;
    }
    L->main = main; /* it fits nowhere: the layer view alone */
    memset(&L->next, 0, sizeof L->next);
    lay_main(L, cx, main, target);
    view_lesson_layout(L, s, cx->measure, cx->ud);
}
