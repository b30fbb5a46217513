/* layout_lines.c: the head view's boxes (s->head_view, VIEW_PANEL_LINES): in each
 * head tile the heads grid laid out (layout_heads.c, never changed here), a column of
 * query labels on the left, one of key labels on the right and the room between for
 * the lines; the label size and how many tokens are labelled (every k-th at long
 * texts); the legend in the attention colorbar's place. lines.c draws into them. */
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

/* Lines lighter than this are not drawn (the legend says so). */
const float view_lines_floor = 0.02f;

static int lh_of(view_measure_fn measure, void *ud, int size) {
    return lay_measured_line(measure, ud, size);
}

/* The strides tried when not every token fits a label: 1, 2, 3, 4, 5, then 10, 20 … */
static int next_stride(int k) {
    return k < 5 ? k + 1 : k == 5 ? 10 : k * 2;
}

/* 1 when labels lh tall, on every k-th of n rows sharing span, never touch: k rows
   hold one (and a pixel), and the first and last, moved inside the span, clear the
   next ones (as view_label_stride counts). */
static int rows_hold(int lh, int n, int span, int k) {
    const long need = lh + 1;
    return (long)k * span >= need * n && (long)(2 * k + 1) * span >= 3 * need * n;
}

/* One tile: box b for n tokens, labels between lo and hi pixels (at least want where
   the rows allow it: fewer labels rather than smaller ones); widest is the widest
   label at size hi (measured once and scaled: lines.c fits each label to its column,
   so none is ever wider than the column). */
static void lines_box(view_lines_box *B, const view_state *s, view_rect b, int lo, int want, int hi,
                      int pad, int widest, view_measure_fn measure, void *ud) {
    const int n = s->layer->n;
    memset(B, 0, sizeof *B);
    B->box = b;
    B->y0 = b.y;
    B->span = b.h;
    /* the stride: the smallest whose rows hold a label of the data's text size (a
       long text labels fewer tokens rather than smaller ones: read from the back) */
    int stride = 1;
    while (stride < n && !rows_hold(lh_of(measure, ud, want), n, b.h, stride))
        stride = next_stride(stride);
    /* the size: the largest up to hi whose line fits stride rows, and whose widest
       label leaves the lines at least 40 % of the box; down to lo in a narrow tile */
    int size = lo;
    for (int z = hi; z > lo; z--) {
        if (!rows_hold(lh_of(measure, ud, z), n, b.h, stride)) continue;
        if (((long)widest * z / hi + pad) * 10 > (long)b.w * 3) continue;
        size = z;
        break;
    }
    const int lw = lay_imin((int)((long)widest * size / hi) + 1 + pad, b.w * 3 / 10);
    B->label_size = size;
    B->stride = lw > pad && stride <= n ? stride : 0;
    B->qcol = (view_rect){b.x, b.y, lw, b.h};
    B->kcol = (view_rect){b.x + b.w - lw, b.y, lw, b.h};
    B->x0 = b.x + lw;
    B->x1 = b.x + b.w - lw;
    if (B->x1 - B->x0 < 8) { /* a sliver: no labels, lines across the tile */
        B->stride = 0;
        B->qcol.w = B->kcol.w = 0;
        B->x0 = b.x;
        B->x1 = b.x + b.w;
    }
    /* a line a third of a row thick, never thicker than a fifth of the labels'
       largest size, and 2 pixels at least (SDL draws a 1-pixel slanted line point by
       point: thousands of them take the window seconds under a software renderer) */
    const int pitch = b.h / n;
    B->thick = lay_imax(2, lay_imin(pitch / 3, hi / 5));
}

/* Token i's row centre in B (rows share the span evenly). */
int view_lines_row_y(const view_lines_box *B, int n, int i) {
    return B->y0 + (int)(((long)i * 2 + 1) * B->span / (2L * n));
}

/* Top of token i's label of line height lh, moved inside the span. */
int view_lines_label_y(const view_lines_box *B, int n, int lh, int i) {
    return view_label_pos(B->y0, B->span, n, lh, i);
}

/* The legend's two lines: what opacity means, and what is left out. */
static void legend(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    const attn_layer *layer = s->layer;
    const int masked = layer->mask == ATTN_MASK_CAUSAL || layer->n_real < layer->n;
    const int size = L->font; /* the legend as large as the data's text */
    view_rect r = L->attn_cbar;
    /* its room: in the grid, under the tiles and as far as the heatmaps' caption may
       reach (lay_heads_used keeps that room); in the focus view the bar's width, short
       of Q_i, K_i, V_i beside it and of the numbers centred under their bars' ends */
    int right = r.x + r.w;
    for (int i = 0; i < L->lines_shown && !L->focus; i++)
        right = lay_imax(right, L->lines[i].box.x + L->lines[i].box.w);
    if (!L->focus)
        right = lay_imax(right,
                         lay_imin(L->heads_area.x + L->heads_area.w,
                                  r.x + view_text_width(measure, ud, VIEW_ATTN_CAPTION, size, 0)));
    for (int q = 0; q < 4 && L->focus; q++) {
        const view_matrix_box *m = &L->qkv[q];
        const int top = m->map.y, bottom = m->cbar.y + m->cbar.h + L->line;
        if (m->map.w > 0 && m->map.x > r.x && top < r.y + L->line && bottom > r.y - L->line)
            right = lay_imin(right, m->map.x - 2 * L->font);
    }
    /* and short of the equation's boxes in the rows the two lines take (a narrow strip
       of the equation can sit beside the heads' foot) */
    const view_matrix_box *eq[3] = {&L->concat, &L->w_o, &L->out};
    for (int q = 0; q < 3; q++) {
        const view_rect parts[3] = {eq[q]->map, eq[q]->shape, eq[q]->cbar};
        for (int k = 0; k < 3; k++) {
            const view_rect b = parts[k];
            if (b.w > 0 && b.x > r.x && b.y < r.y + 2 * L->line && b.y + b.h > r.y - 2 * L->line)
                right = lay_imin(right, b.x - L->gap);
        }
    }
    const int w = right - r.x, lh = lh_of(measure, ud, size);
    if (w <= 0 || r.h <= 0) return;
    L->lines_legend_size = size;
    char stride[64] = "";
    int k = 0;
    for (int i = 0; i < L->lines_shown; i++) k = lay_imax(k, L->lines[i].stride);
    if (k > 1)
        snprintf(stride, sizeof stride, "every %d%s token labelled", k,
                 k == 2   ? "nd"
                 : k == 3 ? "rd"
                          : "th");
    const char *hover = s->figure || s->present ? "" : "hover a token: its lines alone";
    char v[2][4][160];
    snprintf(v[0][0], 160, "line opacity = attention weight, 0 to 1 (%s)",
             L->lines_all ? "one colour per head" : "queries left, keys right");
    snprintf(v[0][1], 160, "line opacity = attention weight, 0 to 1");
    snprintf(v[0][2], 160, "opacity = weight");
    v[0][3][0] = '\0';
    const char *dot = " \xC2\xB7 ";
    snprintf(v[1][0], 160, "lines under %.2f not drawn%s%s%s%s%s%s", (double)view_lines_floor,
             masked ? dot : "", masked ? "masked keys get none" : "", stride[0] ? dot : "", stride,
             hover[0] ? dot : "", hover);
    snprintf(v[1][1], 160, "lines under %.2f not drawn%s%s", (double)view_lines_floor,
             stride[0] ? dot : "", stride);
    if (k > 1) { /* the stride is kept in the short forms too: labels are missing */
        snprintf(v[1][2], 160, "< %.2f: no line%severy %d%s labelled", (double)view_lines_floor,
                 dot, k, k == 2 ? "nd" : (k == 3 ? "rd" : "th"));
        snprintf(v[1][3], 160, "< %.2f none%severy %d", (double)view_lines_floor, dot, k);
    } else {
        snprintf(v[1][2], 160, "lines under %.2f not drawn", (double)view_lines_floor);
        snprintf(v[1][3], 160, "< %.2f: no line", (double)view_lines_floor);
    }
    for (int line = 0; line < VIEW_LINES_LEGEND_LINES; line++) {
        const int y = line == 0 ? r.y - L->line : r.y;
        L->lines_legend_text[line][0] = '\0';
        for (int a = 0; a < 4; a++) {
            if (!v[line][a][0]) break;
            if (view_text_width(measure, ud, v[line][a], size, 0) <= w) {
                snprintf(L->lines_legend_text[line], 160, "%.159s", v[line][a]);
                break;
            }
        }
        const int tw = view_text_width(measure, ud, L->lines_legend_text[line], size, 0);
        L->lines_legend[line] = tw > 0 ? (view_rect){r.x, y, tw, lh} : (view_rect){0, 0, 0, 0};
    }
}

void view_lines_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    L->lines_shown = L->lines_all = 0;
    const int panel = s->panel == VIEW_PANEL_LINES;
    if (!s->layer || L->shown_heads <= 0 || s->train || view_overview_mode(s)) return;
    if (!panel && (s->head_view != VIEW_HEAD_LINES || s->panel != VIEW_PANEL_ALL)) return;
    L->lines_all = panel && s->panel_head == 0;
    const int lo = lay_imax(8, L->font_small * 4 / 5);
    const int hi = lay_imax(lo, L->font * 2);
    const int cols = L->grid_cols > 0 ? L->grid_cols : 1;
    const int widest = view_label_max_width(s, hi, measure, ud);
    for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
        view_rect b = L->heads[i].map;
        if (i % cols == 0 && L->row_label_w > 0) { /* the heatmap's row labels' room */
            b.x -= L->row_label_w;
            b.w += L->row_label_w;
        }
        const view_lines_box *prev = i > 0 ? &L->lines[i - 1] : NULL;
        if (prev && prev->box.w == b.w && prev->box.h == b.h) { /* the same tile, moved */
            const int dx = b.x - prev->box.x, dy = b.y - prev->box.y;
            view_lines_box *B = &L->lines[i];
            *B = *prev;
            B->box = b;
            B->qcol.x += dx, B->kcol.x += dx, B->x0 += dx, B->x1 += dx;
            B->qcol.y += dy, B->kcol.y += dy, B->y0 += dy;
            continue;
        }
        lines_box(&L->lines[i], s, b, lo, L->font, hi, L->pad, widest, measure, ud);
    }
    L->lines_shown = L->shown_heads;
    L->show_row_labels = L->show_col_labels = 0; /* the heatmaps' labels: not drawn */
    legend(L, s, measure, ud);
}
