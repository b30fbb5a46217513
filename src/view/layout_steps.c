/* layout_steps.c: where the step-through of one head goes: a caption for the
 * current stage, then nine cells in a 3 x 3 grid (X; Q_i, K_i, V_i; S_i; scaled;
 * masked; softmax; head_i; its band of Concat; its share of MultiHead), each with
 * a title line and its matrix boxes sized to keep cells square where room allows.
 * Drawing them is steps.c's. */
#include "view_internal.h"

static int imin(int a, int b) {
    return a < b ? a : b;
}

static int imax(int a, int b) {
    return a > b ? a : b;
}

/* Shape (rows, cols) of stage k's matrices for n tokens, d_model d, d_k dk. */
static void stage_shape(int k, int n, int d, int dk, int *rows, int *cols) {
    static const int kind[VIEW_STEPS] = {1, 2, 0, 0, 0, 0, 2, 1, 1}; /* 0 nn, 1 nd, 2 n dk */
    *rows = n;
    *cols = kind[k] == 0 ? n : (kind[k] == 1 ? d : dk);
}

/* A matrix of rows x cols in at most w x h, cells square, at least a pixel a cell
   when it fits, with the shape label and colorbar under it. */
static void box_at(view_matrix_box *b, const view_layout *L, int x, int y, int w, int h, int rows,
                   int cols) {
    const int foot = L->pad / 2 + L->line + L->pad / 2 + imax(6, L->font_small / 2) + L->line;
    int avail = imax(1, h - foot);
    float px = (float)w / (float)cols;
    if ((float)avail / (float)rows < px) px = (float)avail / (float)rows;
    int mw = imax(1, imin(w, (int)(px * (float)cols)));
    int mh = imax(1, imin(avail, (int)(px * (float)rows)));
    b->rows = rows;
    b->cols = cols;
    b->map = (view_rect){x, y, mw, mh};
    b->shape = (view_rect){x, y + mh + L->pad / 2, w, L->line};
    b->cbar = (view_rect){x, b->shape.y + L->line + L->pad / 2,
                          imax(8, imin(w, mw < w / 2 ? w : mw)), imax(6, L->font_small / 2)};
}

void view_steps_layout(view_steps *S, const view_layout *L, const view_state *s, view_rect area) {
    const attn_layer *layer = s->layer;
    *S = (view_steps){0};
    if (!layer || area.w < 60 || area.h < 60) return;
    const int n = layer->n, d = layer->d_model, dk = layer->d_k, gap = L->gap;
    S->shown = 1;
    S->caption = (view_rect){area.x, area.y, area.w, L->line + L->pad};
    int top = area.y + S->caption.h + L->pad;
    int cw = imax(1, (area.w - 2 * gap) / 3), ch = imax(1, (area.y + area.h - top - 2 * gap) / 3);
    for (int k = 0; k < VIEW_STEPS; k++) {
        int x = area.x + (k % 3) * (cw + gap), y = top + (k / 3) * (ch + gap);
        S->cell[k] = (view_rect){x, y, cw, ch};
        S->title[k] = (view_rect){x + L->pad / 2, y + L->pad / 2, cw - L->pad, L->line};
        int rows, cols, bx = x + L->pad / 2, by = y + L->pad / 2 + L->line + L->pad / 2;
        int bw = cw - L->pad, bh = y + ch - by - L->pad / 2;
        stage_shape(k, n, d, dk, &rows, &cols);
        S->boxes[k] = k == 1 ? 3 : 1;
        int each = (bw - (S->boxes[k] - 1) * L->pad) / S->boxes[k];
        for (int i = 0; i < S->boxes[k]; i++)
            box_at(&S->box[k][i], L, bx + i * (each + L->pad), by, imax(1, each), bh, rows, cols);
    }
}
