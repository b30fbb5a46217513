/* hit.c: view_hit_test, what is under a pointer position: a button, a head's cell,
 * title or token label, a cell of Concat, W^O, the output or the focus view's
 * matrices. It only reads the layout's rectangles; it neither lays out nor draws. */
#include "view.h"
#include "view_internal.h" /* view_layer_ok: what the layout lays out */

static int inside(view_rect r, int x, int y) {
    return x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h;
}

static void cell_of(view_rect r, int rows, int cols, int x, int y, int *row, int *col) {
    *row = (int)((long)(y - r.y) * rows / r.h);
    *col = (int)((long)(x - r.x) * cols / r.w);
    if (*row >= rows) *row = rows - 1;
    if (*col >= cols) *col = cols - 1;
}

view_rect view_head_off_box(const view_layout *L, const view_state *s, int slot) {
    view_rect t = L->heads[slot].title;
    int side = t.h - 2;
    if (s->figure || s->look.present || side < 8 || t.w < 4 * side) return (view_rect){0, 0, 0, 0};
    return (view_rect){t.x + t.w - side, t.y, side, side};
}

view_hit view_hit_test(const view_layout *L, const view_state *s, int x, int y) {
    view_hit hit = {HIT_NONE, -1, -1, -1, -1, -1};
    const int n = s->layer && s->layer->n > 0 ? s->layer->n : 1; /* any input: never 0 */
    const int dk = s->layer && s->layer->d_k > 0 ? s->layer->d_k : 1;
    for (int b = 0; b < BTN_COUNT; b++)
        if (L->buttons[b].present && inside(L->buttons[b].r, x, y)) {
            hit.kind = HIT_BUTTON;
            hit.button = b;
            return hit;
        }
    /* a loaded model's overview: the cell under the pointer (not the gaps) */
    const view_overview_box *O = &L->overview;
    if (O->shown && O->step > 0 && inside(O->grid, x, y)) {
        const int dx = x - O->x0, block = O->block_dx > 0 ? dx / O->block_dx : 0;
        const int head = (dx - block * O->block_dx) / O->step;
        const int layer = block * O->rows + (y - O->y0) / O->step;
        if (head < O->heads && inside(view_overview_cell(L, layer, head), x, y)) {
            hit.kind = HIT_OVERVIEW;
            hit.row = layer;
            hit.head = head;
        }
        return hit;
    }
    for (int i = 0; L->next.shown && i < L->next.k && i < VIEW_NEXT_MAX; i++)
        if (inside(L->next.row[i], x, y)) {
            hit.kind = HIT_NEXT;
            hit.row = i;
            return hit;
        }
    /* a layer with no cells (the layout drew none of its data): nothing else to hit */
    if (!view_layer_ok(s->layer)) return hit;
    for (int i = 0; i < L->lines_shown && i < VIEW_MAX_VISIBLE; i++) { /* the head view */
        const view_lines_box *B = &L->lines[i];
        if (!inside(B->box, x, y) || B->span <= 0) continue;
        int t = (int)((long)(y - B->y0) * n / B->span);
        t = t < 0 ? 0 : t >= n ? n - 1 : t;
        hit.head = L->lines_all ? -1 : L->first_head + i;
        if (x < B->box.x + B->box.w / 2) /* the query side, or the key side */
            hit.kind = HIT_LINES_Q, hit.row = t;
        else
            hit.kind = HIT_LINES_K, hit.col = t;
        return hit;
    }
    for (int i = 0; i < L->shown_heads; i++) {
        if (inside(L->heads[i].map, x, y)) {
            hit.kind = HIT_HEAD_CELL;
            hit.head = L->first_head + i;
            cell_of(L->heads[i].map, n, n, x, y, &hit.row, &hit.col);
            return hit;
        }
        if (inside(view_head_off_box(L, s, i), x, y)) {
            hit.kind = HIT_HEAD_OFF;
            hit.head = L->first_head + i;
            return hit;
        }
        if (inside(L->heads[i].title, x, y)) {
            hit.kind = HIT_HEAD_TITLE;
            hit.head = L->first_head + i;
            return hit;
        }
        view_rect map = L->heads[i].map;
        if (L->show_row_labels && i % L->grid_cols == 0) {
            view_rect lab = {map.x - L->row_label_w, map.y, L->row_label_w, map.h};
            if (inside(lab, x, y)) {
                hit.kind = HIT_ROW_LABEL;
                hit.row = (int)((long)(y - map.y) * n / map.h);
                return hit;
            }
        }
        if (L->show_col_labels && i + L->grid_cols >= L->shown_heads) {
            view_rect lab = {map.x, map.y + map.h, map.w, L->col_label_h};
            if (inside(lab, x, y)) {
                hit.kind = HIT_COL_LABEL;
                hit.col = (int)((long)(x - map.x) * n / map.w);
                return hit;
            }
        }
    }
    const view_matrix_box *mats[3] = {&L->concat, &L->w_o, &L->out};
    const view_hit_kind kinds[3] = {HIT_CONCAT, HIT_W_O, HIT_OUT};
    for (int i = 0; i < 3; i++) {
        if (mats[i]->map.w > 0 && inside(mats[i]->map, x, y)) {
            hit.kind = kinds[i];
            cell_of(mats[i]->map, mats[i]->rows, mats[i]->cols, x, y, &hit.row, &hit.col);
            if (i == 0) hit.head = hit.col / dk;
            if (i == 1) hit.head = hit.row / dk;
            return hit;
        }
    }
    if (L->focus)
        for (int i = 0; i < 4; i++)
            if (L->qkv[i].map.w > 0 && inside(L->qkv[i].map, x, y)) {
                hit.kind = HIT_QKV;
                hit.which = i;
                hit.head = L->focus - 1;
                cell_of(L->qkv[i].map, n, dk, x, y, &hit.row, &hit.col);
                return hit;
            }
    return hit;
}
