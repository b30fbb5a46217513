/* layout_lines.c: the head view's boxes (s->head_view, VIEW_PANEL_LINES): in each
 * head tile the heads grid laid out (layout_heads.c, never changed here), a column of
 * query labels on the left, one of key labels on the right and the room between for
 * the lines; the label size and how many tokens are labelled (every k-th at long
 * texts); the legend in the attention colorbar's place. lines.c draws into them. */
#include <math.h>
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

/* The shortest a label may be cut to: its first three characters and "…" ("T…" or
   "Th…" reads as nothing); a label of four characters or fewer is never cut. */
static void min_form(char *out, size_t len, const char *lab) {
    size_t o = 0;
    int cps = 0, total = 0;
    for (const unsigned char *p = (const unsigned char *)lab; *p; p++) total += (*p & 0xC0) != 0x80;
    for (const unsigned char *p = (const unsigned char *)lab; *p && o + 4 < len; p++) {
        if ((*p & 0xC0) != 0x80 && total > 4 && cps++ == 3) break;
        out[o++] = (char)*p;
    }
    if (total > 4 && o + 4 <= len) memcpy(out + o, "\xE2\x80\xA6", 3), o += 3;
    out[o] = '\0';
}

/* The widest label at size, each in its shortest form (min_form). */
static int widest_min(const view_state *s, int size, view_measure_fn measure, void *ud) {
    const attn_layer *layer = s->layer;
    char lab[64], cut[64];
    int w = 0;
    for (int i = 0; i < layer->n; i++) {
        if (i > layer->n_real) break; /* padding: one label for all */
        view_token_label(lab, sizeof lab, attn_layer_token(layer, i));
        min_form(cut, sizeof cut, lab);
        w = lay_imax(w, view_text_width(measure, ud, cut, size, 0));
    }
    return w;
}

/* The largest size from hi down to lo at which labels whose widest is wide_hi at size
   hi (scaled: measured once) fit a column of cap pixels (with pad) and stride rows
   hold their line; 0 when none does. */
static int size_for(int lo, int hi, int wide_hi, int cap, int pad, int n, int span, int stride,
                    view_measure_fn measure, void *ud) {
    for (int z = hi; z >= lo; z--)
        if ((long)wide_hi * z / hi + 1 + pad <= cap &&
            rows_hold(lh_of(measure, ud, z), n, span, stride))
            return z;
    return 0;
}

/* How a tile's tokens are labelled: every stride-th (0: none) at size, in both
   columns or the query column alone (sides), whole or cut (to no fewer than three
   characters and "…"), in columns lw wide. */
typedef struct {
    int stride, size, sides, cut, lw, need; /* need: a column for the whole labels */
} lines_plan;

/* The plan for a tile w x h with n tokens, labels between lo and hi pixels (lo: the
   heatmaps' label size, read from the back of a room; fewer labels rather than
   smaller ones); widest is the widest label at size hi. In the order tried: both
   columns with whole labels, both with labels cut to no fewer than three characters
   and "…", the query column alone (the keys are the same tokens in the same rows)
   whole or cut so; the same four down to 4/5 of lo; else no labels (the legend says
   so). The columns leave the lines at least 40 % of the tile (55 % with one). */
static lines_plan plan_for(const view_state *s, int w, int h, int lo, int want, int hi, int pad,
                           int widest, view_measure_fn measure, void *ud) {
    const int n = s->layer->n;
    lines_plan P = {0, 0, 2, 0, 0, 0};
    /* the stride: the smallest whose rows hold a label of the data's text size (a
       long text labels fewer tokens rather than smaller ones: read from the back) */
    int stride = 1;
    while (stride < n && !rows_hold(lh_of(measure, ud, want), n, h, stride))
        stride = next_stride(stride);
    if (stride > n) return P;
    const int caps[2] = {w * 3 / 10, w * 45 / 100}; /* a column's: two, one */
    for (int tr = 0; tr < 8 && !P.size; tr++) {     /* the last four: down to 4/5 of lo */
        const int low = tr < 4 ? lo : lay_imax(8, lo * 4 / 5), top = tr < 4 ? lo : lo - 1;
        P.sides = tr % 4 < 2 ? 2 : 1, P.cut = tr % 2;
        /* cut labels no larger than lo: the most of each label shows */
        if (P.cut && top >= low)
            P.size = size_for(low, top, widest_min(s, top, measure, ud), caps[2 - P.sides], pad, n,
                              h, stride, measure, ud);
        else if (!P.cut)
            P.size = size_for(low, hi, widest, caps[2 - P.sides], pad, n, h, stride, measure, ud);
    }
    if (!P.size) return P;
    P.stride = stride;
    /* the column as wide as the whole labels measured at their size, within its cap */
    P.need = view_label_max_width(s, P.size, measure, ud) + 1 + pad;
    P.lw = lay_imin(P.need, caps[2 - P.sides]);
    return P;
}

/* Tile b laid out by plan P (made for the narrowest tile: every tile alike); lo the
   labels' size when there are none (hovered, one is drawn). */
static void lines_box(view_lines_box *B, const view_state *s, view_rect b, const lines_plan *P,
                      int lo, int hi) {
    const int n = s->layer->n;
    memset(B, 0, sizeof *B);
    B->box = b;
    B->y0 = b.y;
    B->span = b.h;
    /* a line a third of a row thick, never thicker than a fifth of the labels'
       largest size, and 2 pixels at least (SDL draws a 1-pixel slanted line point by
       point: thousands of them take the window seconds under a software renderer) */
    B->thick = lay_imax(2, lay_imin(b.h / n / 3, hi / 5));
    /* a wider tile (the first column's, with the row labels' room) gives its labels
       more of their characters, at the same size */
    const int cap = P->sides == 2 ? b.w * 3 / 10 : b.w * 45 / 100;
    const int lw = P->stride > 0 ? lay_imax(P->lw, lay_imin(P->need, cap)) : 0;
    B->label_size = P->stride > 0 ? P->size : lo;
    B->stride = P->stride;
    B->qcol = (view_rect){b.x, b.y, lw, b.h};
    B->kcol = P->sides == 2 ? (view_rect){b.x + b.w - lw, b.y, lw, b.h}
                            : (view_rect){b.x + b.w, b.y, 0, b.h};
    B->x0 = b.x + lw;
    B->x1 = b.x + b.w - B->kcol.w;
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
    int k = 0, bare = 0, one = 0; /* the largest stride; tiles unlabelled, queries only */
    for (int i = 0; i < L->lines_shown; i++) {
        k = lay_imax(k, L->lines[i].stride);
        bare += L->lines[i].stride <= 0;
        one += L->lines[i].stride > 0 && L->lines[i].kcol.w <= 0;
    }
    const char *nth = k == 2 ? "nd" : k == 3 ? "rd" : "th";
    if (bare)
        snprintf(stride, sizeof stride, "tiles too small for token labels");
    else if (k > 1)
        snprintf(stride, sizeof stride, "every %d%s token labelled", k, nth);
    const char *hover = s->figure || s->look.present ? ""
                        : bare                       ? "hover a row: its token and its lines"
                                                     : "hover a token: its lines alone";
    char v[2][4][160];
    snprintf(v[0][0], 160, "line opacity = attention weight, 0 to 1 (%s)",
             L->lines_all ? "one colour per head"
             : one        ? "queries labelled left, keys right in the same order"
                          : "queries left, keys right");
    if (one && !L->lines_all) { /* the short forms keep where the keys' labels are */
        snprintf(v[0][1], 160, "line opacity = weight \xC2\xB7 keys right in the same order");
        snprintf(v[0][2], 160, "opacity = weight \xC2\xB7 keys: same order");
    } else {
        snprintf(v[0][1], 160, "line opacity = attention weight, 0 to 1");
        snprintf(v[0][2], 160, "opacity = weight");
    }
    snprintf(v[0][3], 160, "%s", one && !L->lines_all ? "opacity = weight" : "");
    const char *dot = " \xC2\xB7 ";
    snprintf(v[1][0], 160, "lines under %.2f not drawn%s%s%s%s%s%s", (double)view_lines_floor,
             masked ? dot : "", masked ? "masked keys get none" : "", stride[0] ? dot : "", stride,
             hover[0] ? dot : "", hover);
    snprintf(v[1][1], 160, "lines under %.2f not drawn%s%s", (double)view_lines_floor,
             stride[0] ? dot : "", stride);
    if (bare) { /* kept in the short forms too: the labels are missing */
        snprintf(v[1][2], 160, "< %.2f: no line%sno room for labels", (double)view_lines_floor,
                 dot);
        snprintf(v[1][3], 160, "no labels: too small");
    } else if (k > 1) {
        snprintf(v[1][2], 160, "< %.2f: no line%severy %d%s labelled", (double)view_lines_floor,
                 dot, k, nth);
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
    if (!panel && (s->look.head_view != VIEW_HEAD_LINES || s->panel != VIEW_PANEL_ALL)) return;
    L->lines_all = panel && s->panel_head == 0;
    /* labels no smaller than the heatmaps' (font_small), or than theirs at 100 % when
       zoomed in: zoomed, a tile holds a label the size of the unzoomed view's */
    const float ui = s->ui_scale > 0 ? s->ui_scale : 1.0f;
    const int lo = lay_imax(8, lay_imin(L->font_small, (int)lroundf(14.0f * ui)));
    const int hi = lay_imax(lo, L->font * 2);
    const int cols = L->grid_cols > 0 ? L->grid_cols : 1;
    const int widest = view_label_max_width(s, hi, measure, ud);
    const int shown = lay_imin(L->shown_heads, VIEW_MAX_VISIBLE);
    view_rect tile[VIEW_MAX_VISIBLE];
    int min_w = 0, min_h = 0;
    for (int i = 0; i < shown; i++) {
        tile[i] = L->heads[i].map;
        if (i % cols == 0 && L->row_label_w > 0) { /* the heatmap's row labels' room */
            tile[i].x -= L->row_label_w;
            tile[i].w += L->row_label_w;
        }
        if (i == 0 || tile[i].w < min_w) min_w = tile[i].w;
        if (i == 0 || tile[i].h < min_h) min_h = tile[i].h;
    }
    /* one plan, the narrowest tile's: every tile labelled alike */
    const lines_plan P = plan_for(s, min_w, min_h, lo, L->font, hi, L->pad, widest, measure, ud);
    for (int i = 0; i < shown; i++) lines_box(&L->lines[i], s, tile[i], &P, lo, hi);
    L->lines_shown = L->shown_heads;
    L->show_row_labels = L->show_col_labels = 0; /* the heatmaps' labels: not drawn */
    legend(L, s, measure, ud);
}
