/* layout_items.h: every rectangle of a computed layout, named and of a kind (the
 * layout tests' collect), and the room a layout leaves empty (largest_empty): the
 * largest rectangle inside an area that meets none of them. Needs view_fixture.h's
 * text measure (fx_line_h). */
#ifndef MHAVIZ_TEST_LAYOUT_ITEMS_H
#define MHAVIZ_TEST_LAYOUT_ITEMS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_fixture.h"
#include "view_internal.h"

enum {
    K_BTN,
    K_HDR,
    K_RUN,
    K_FORMULA,
    K_TITLE,
    K_MAP,
    K_ROWLAB,
    K_COLLAB,
    K_CBAR,
    K_TICKS,
    K_EQ,
    K_SYM,
    K_QKV,
    K_STATUS,
    K_BAND,
    K_STAGE,
    K_CAPTION,
};

typedef struct {
    view_rect r;
    int kind;
    char name[48];
} item;

#define MAX_ITEMS 800
typedef struct {
    item v[MAX_ITEMS];
    int n;
} items;

__attribute__((format(printf, 4, 5))) static void add(items *it, int kind, view_rect r,
                                                      const char *fmt, ...) {
    if (it->n >= MAX_ITEMS) fail_msg("too many rectangles: expected <= %d", MAX_ITEMS);
    item *e = &it->v[it->n++];
    e->r = r;
    e->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->name, sizeof e->name, fmt, ap);
    va_end(ap);
}

/* the band of colorbar numbers under a colorbar */
static inline view_rect ticks_of(const view_layout *L, view_rect cbar) {
    return (view_rect){cbar.x, cbar.y + cbar.h, cbar.w, L->pad / 2 + fx_line_h(L->font_small)};
}

/* the equation's, at its own sizes when it gave way to the heads (eq_font) */
static inline view_rect eq_ticks_of(const view_layout *L, view_rect cbar) {
    if (L->eq_font <= 0) return ticks_of(L, cbar);
    return (view_rect){cbar.x, cbar.y + cbar.h, cbar.w,
                       L->eq_pad / 2 + fx_line_h(L->eq_font_small)};
}

static inline void add_matrix(items *it, const view_layout *L, int kind, const view_matrix_box *b,
                              const char *name) {
    add(it, kind, b->map, "%s map", name);
    add(it, kind, b->shape, "%s shape label", name);
    if (b->cbar.w == 0 && b->cbar.h == 0) return; /* a compact equation: no colorbar */
    add(it, K_CBAR, b->cbar, "%s colorbar", name);
    add(it, K_TICKS, kind == K_EQ ? eq_ticks_of(L, b->cbar) : ticks_of(L, b->cbar),
        "%s colorbar numbers", name);
}

/* The step-through's one stage, large: its chips, formula, note, legend and matrices
   (token labels left of and under the matrices that have them). */
static inline void collect_stage(items *it, const view_layout *L) {
    const view_steps *S = &L->steps;
    if (!S->shown || !S->current) return;
    for (int i = 0; i < VIEW_STEPS; i++)
        if (S->chip[i].w > 0) add(it, K_STAGE, S->chip[i], "stage chip %d", i + 1);
    add(it, K_STAGE, S->caption, "stage formula");
    for (int i = 0; i < S->notes && i < VIEW_STEP_NOTES; i++)
        add(it, K_STAGE, S->note[i], "stage note line %d", i + 1);
    if (S->legend.w > 0) add(it, K_STAGE, S->legend, "mask legend");
    if (S->hint.w > 0) add(it, K_STAGE, S->hint, "stage hint");
    for (int i = 0; i < S->bigs && i < 3; i++) {
        const view_matrix_box *b = &S->big[i];
        char nm[32];
        snprintf(nm, sizeof nm, "stage matrix %d", i + 1);
        add_matrix(it, L, K_STAGE, b, nm);
        if (S->row_labels && S->row_label_w > 0)
            add(it, K_STAGE,
                (view_rect){b->map.x - S->row_label_w, b->map.y, S->row_label_w, b->map.h},
                "%s row labels", nm);
        if (S->col_labels && S->row_label_w > 0)
            add(it, K_STAGE, (view_rect){b->map.x, b->map.y + b->map.h, b->map.w, S->row_label_w},
                "%s column labels", nm);
    }
}

static inline void collect(items *it, const view_layout *L) {
    it->n = 0;
    for (int b = 0; b < BTN_COUNT; b++)
        if (L->buttons[b].present)
            add(it, K_BTN, L->buttons[b].r, "button %d \"%s\"", b, L->buttons[b].label);
    for (int i = 0; i < L->hdr_count; i++) {
        const view_run *r = &L->hdr_runs[i];
        add(it, K_HDR, (view_rect){r->x, r->y, r->w, fx_line_h(r->size)}, "caption \"%.30s\"",
            r->text);
    }
    for (int i = 0; i < L->run_count; i++) {
        const view_run *r = &L->runs[i];
        add(it, K_RUN, (view_rect){r->x, r->y, r->w, fx_line_h(r->size)},
            "formula run %d \"%.20s\"", i, r->text);
    }
    if (L->run_count) add(it, K_FORMULA, L->formula, "formula strip");
    for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
        const view_rect map = L->heads[i].map;
        int head = L->first_head + i + 1;
        add(it, K_TITLE, L->heads[i].title, "head %d title", head);
        add(it, K_MAP, map, "head %d map", head);
        int cols = L->grid_cols > 0 ? L->grid_cols : 1;
        if (L->show_row_labels && i % cols == 0)
            add(it, K_ROWLAB, (view_rect){map.x - L->row_label_w, map.y, L->row_label_w, map.h},
                "head %d row labels", head);
        if (L->show_col_labels && i + cols >= L->shown_heads)
            add(it, K_COLLAB, (view_rect){map.x, map.y + map.h, map.w, L->col_label_h},
                "head %d column labels", head);
    }
    if (L->shown_heads > 0) {
        add(it, K_CBAR, L->attn_cbar, "attention colorbar");
        add(it, K_TICKS, ticks_of(L, L->attn_cbar), "attention colorbar numbers");
    }
    if (L->concat.map.w > 0) {
        add(it, K_EQ, L->eq_title, "equation title");
        add_matrix(it, L, K_EQ, &L->concat, "Concat");
        add_matrix(it, L, K_EQ, &L->w_o, "W^O");
        add_matrix(it, L, K_EQ, &L->out, "MultiHead");
        add(it, K_SYM, L->times_sym, "times sign");
        add(it, K_SYM, L->equals_sym, "equals sign");
    }
    if (L->focus && L->focus_caption.w > 0) { /* (none: the head alone) */
        static const char *nm[4] = {"Q_i", "K_i", "V_i", "head_i"};
        for (int i = 0; i < 4; i++) add_matrix(it, L, K_QKV, &L->qkv[i], nm[i]);
    }
    if (L->status.w > 0) add(it, K_STATUS, L->status, "status line");
    if (L->lesson_note.w > 0) add(it, K_EQ, L->lesson_note, "side panels' note");
    if (L->concat.map.w > 0) {
        add(it, K_BAND, L->concat_band, "Concat head bands");
        add(it, K_BAND, L->wo_band, "W^O head bands");
    }
    collect_stage(it, L);
    if (L->caption.shown) add(it, K_CAPTION, L->caption.band, "caption band");
    if (L->lesson_shown) { /* the lesson's panels under the equation */
        add(it, K_EQ, L->redund_title, "how-alike title");
        add(it, K_EQ, L->redund_map, "how-alike matrix");
        add(it, K_CBAR, L->redund_cbar, "how-alike colorbar");
        add(it, K_EQ, L->redund_note, "how-alike note");
        add(it, K_EQ, L->cost, "cost panel");
    }
    if (L->next.shown) add(it, K_EQ, L->next.area, "next-token panel");
}

/* The room the layout shares out: the main area, and the next-token panel's where it
   stands beside or under it (a column or a strip carved from the window's main area). */
static inline view_rect room_area(const view_layout *L) {
    view_rect a = L->main;
    if (!L->next.shown) return a;
    const view_rect n = L->next.area;
    const int x0 = n.x < a.x ? n.x : a.x, y0 = n.y < a.y ? n.y : a.y;
    const int x1 = n.x + n.w > a.x + a.w ? n.x + n.w : a.x + a.w;
    const int y1 = n.y + n.h > a.y + a.h ? n.y + n.h : a.y + a.h;
    return (view_rect){x0, y0, x1 - x0, y1 - y0};
}

/* pairs that may overlap by design: the formula strip holds its runs */
static inline int overlap_allowed(int a, int b) {
    return (a == K_FORMULA && b == K_RUN) || (a == K_RUN && b == K_FORMULA);
}

/* --- the room a layout leaves empty ---------------------------------------------- */

#define EMPTY_MAX_EDGES (2 * MAX_ITEMS + 2)

static inline int cmp_int(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The sorted distinct edges of the items clipped to [lo, hi] on one axis (x: 1). */
static inline int empty_edges(const items *it, int lo, int hi, int x, int *e) {
    int n = 0;
    e[n++] = lo, e[n++] = hi;
    for (int i = 0; i < it->n; i++) {
        const view_rect r = it->v[i].r;
        const int a = x ? r.x : r.y, b = a + (x ? r.w : r.h);
        if (r.w <= 0 || r.h <= 0) continue;
        if (a > lo && a < hi) e[n++] = a;
        if (b > lo && b < hi) e[n++] = b;
    }
    qsort(e, (size_t)n, sizeof *e, cmp_int);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || e[i] != e[k - 1]) e[k++] = e[i];
    return k;
}

/* The index of edge v in e (sorted, n edges); v is one of them or outside. */
static inline int edge_at(const int *e, int n, int v) {
    int lo = 0, hi = n - 1;
    if (v <= e[0]) return 0;
    if (v >= e[n - 1]) return n - 1;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (e[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The largest rectangle inside area that meets none of the items (px^2), *best its
 * place: the room where content could grow. The items' edges cut area into cells,
 * each empty or not; the largest run of empty cells is found row band by row band
 * (a histogram of empty heights over the cells' widths, its largest rectangle). */
static inline long largest_empty(const items *it, view_rect area, view_rect *best) {
    static int xs[EMPTY_MAX_EDGES], ys[EMPTY_MAX_EDGES], stack[EMPTY_MAX_EDGES];
    static long height[EMPTY_MAX_EDGES], left[EMPTY_MAX_EDGES];
    static unsigned char full[EMPTY_MAX_EDGES * EMPTY_MAX_EDGES];
    const int nx = empty_edges(it, area.x, area.x + area.w, 1, xs);
    const int ny = empty_edges(it, area.y, area.y + area.h, 0, ys);
    memset(full, 0, (size_t)nx * (size_t)ny);
    for (int i = 0; i < it->n; i++) { /* each item fills the cells it covers */
        const view_rect r = it->v[i].r;
        if (r.w <= 0 || r.h <= 0) continue;
        const int x0 = edge_at(xs, nx, r.x), x1 = edge_at(xs, nx, r.x + r.w);
        const int y0 = edge_at(ys, ny, r.y), y1 = edge_at(ys, ny, r.y + r.h);
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) full[(size_t)y * (size_t)nx + (size_t)x] = 1;
    }
    long most = 0;
    *best = (view_rect){0, 0, 0, 0};
    for (int c = 0; c < nx - 1; c++) height[c] = 0;
    for (int r = 0; r < ny - 1; r++) {
        for (int c = 0; c < nx - 1; c++) /* empty cells grow the column's height */
            height[c] =
                full[(size_t)r * (size_t)nx + (size_t)c] ? 0 : height[c] + ys[r + 1] - ys[r];
        int top = 0; /* the largest rectangle under the histogram, columns' x from xs */
        for (int c = 0; c <= nx - 1; c++) {
            const long hc = c < nx - 1 ? height[c] : 0;
            int start = c;
            while (top > 0 && height[stack[top - 1]] >= hc) {
                const int k = stack[--top];
                start = (int)left[k];
                const long a = height[k] * (xs[c] - xs[start]);
                if (a > most)
                    most = a, *best = (view_rect){xs[start], ys[r + 1] - (int)height[k],
                                                  xs[c] - xs[start], (int)height[k]};
            }
            if (c < nx - 1) left[c] = start, stack[top++] = c;
        }
    }
    return most;
}

#endif
