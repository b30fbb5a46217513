/* pointer.c: the presentation mode's pointer highlight, drawn over the panels so
 * the back of a room sees what the pointer is on: the query row (or key column) in
 * every head, the cell; over the equation, what a value is made of (MultiHead[r, c]
 * from Concat's row r and W^O's column c, and back). hit.c says what is hovered. */
#include "view.h"
#include "view_internal.h"

/* Rows [r0, r1) and columns [c0, c1) of a (rows, cols) matrix drawn in map. */
static view_rect cells(view_rect map, int rows, int cols, int r0, int r1, int c0, int c1) {
    int y0 = map.y + (int)((long)r0 * map.h / rows), y1 = map.y + (int)((long)r1 * map.h / rows);
    int x0 = map.x + (int)((long)c0 * map.w / cols), x1 = map.x + (int)((long)c1 * map.w / cols);
    if (y1 <= y0) y1 = y0 + 1;
    if (x1 <= x0) x1 = x0 + 1;
    return (view_rect){x0, y0, x1 - x0, y1 - y0};
}

/* A thick outline just outside r, edged in the background colour so it shows on
 * every colormap. */
static void outline(const view_ctx *c, view_rect r) {
    const int t = c->L->pad / 2 > 3 ? c->L->pad / 2 : 3;
    rgba hl = view_highlight_color(c->s->look.theme);
    draw_frame(c->dl, (view_rect){r.x - t - 1, r.y - t - 1, r.w + 2 * t + 2, r.h + 2 * t + 2},
               c->th.bg, 1);
    draw_frame(c->dl, (view_rect){r.x - t, r.y - t, r.w + 2 * t, r.h + 2 * t}, hl, t);
}

static void row_of(const view_ctx *c, const view_matrix_box *b, int r) {
    if (b->map.w > 0 && r >= 0 && r < b->rows)
        outline(c, cells(b->map, b->rows, b->cols, r, r + 1, 0, b->cols));
}

static void col_of(const view_ctx *c, const view_matrix_box *b, int k) {
    if (b->map.w > 0 && k >= 0 && k < b->cols)
        outline(c, cells(b->map, b->rows, b->cols, 0, b->rows, k, k + 1));
}

static void cell_of(const view_ctx *c, const view_matrix_box *b, int r, int k) {
    if (b->map.w > 0 && r >= 0 && r < b->rows && k >= 0 && k < b->cols)
        outline(c, cells(b->map, b->rows, b->cols, r, r + 1, k, k + 1));
}

void view_draw_pointer(const view_ctx *c, const view_hit *hit) {
    const view_layout *L = c->L;
    const int n = c->s->layer->n;
    switch (hit->kind) {
    case HIT_HEAD_CELL:
    case HIT_ROW_LABEL:
    case HIT_COL_LABEL:
        for (int i = 0; i < L->shown_heads; i++) {
            view_rect map = L->heads[i].map;
            if (hit->kind == HIT_COL_LABEL) {
                outline(c, cells(map, n, n, 0, n, hit->col, hit->col + 1));
                continue;
            }
            outline(c, cells(map, n, n, hit->row, hit->row + 1, 0, n));
            if (hit->kind == HIT_HEAD_CELL && L->first_head + i == hit->head)
                outline(c, cells(map, n, n, hit->row, hit->row + 1, hit->col, hit->col + 1));
        }
        break;
    case HIT_LINES_Q: /* the head view: the token's label in every tile */
    case HIT_LINES_K:
        for (int i = 0; i < L->lines_shown && i < VIEW_MAX_VISIBLE; i++) {
            const view_lines_box *B = &L->lines[i];
            const int q = hit->kind == HIT_LINES_Q, t = q ? hit->row : hit->col;
            const view_rect col = q ? B->qcol : B->kcol;
            if (col.w <= 0 || t < 0 || t >= n) continue;
            const int y0 = B->y0 + (int)((long)t * B->span / n);
            const int y1 = B->y0 + (int)((long)(t + 1) * B->span / n);
            outline(c, (view_rect){col.x, y0, col.w, y1 > y0 ? y1 - y0 : 1});
        }
        break;
    case HIT_CONCAT: /* Concat[r, c] multiplies row c of W^O into row r of MultiHead */
        row_of(c, &L->concat, hit->row);
        cell_of(c, &L->concat, hit->row, hit->col);
        row_of(c, &L->w_o, hit->col);
        row_of(c, &L->out, hit->row);
        break;
    case HIT_W_O: /* W^O[r, c] takes column r of Concat into column c of MultiHead */
        cell_of(c, &L->w_o, hit->row, hit->col);
        col_of(c, &L->concat, hit->row);
        col_of(c, &L->out, hit->col);
        break;
    case HIT_OUT: /* MultiHead[r, c] = Concat's row r times W^O's column c */
        cell_of(c, &L->out, hit->row, hit->col);
        row_of(c, &L->concat, hit->row);
        col_of(c, &L->w_o, hit->col);
        break;
    case HIT_QKV:
        if (hit->which >= 0 && hit->which < 4) {
            row_of(c, &L->qkv[hit->which], hit->row);
            cell_of(c, &L->qkv[hit->which], hit->row, hit->col);
        }
        break;
    default: break;
    }
}
