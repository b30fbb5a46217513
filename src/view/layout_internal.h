/* layout_internal.h: what the layout's files share (layout_compute.c is the entry,
 * layout.c places the panels and splits the window between them, layout_heads.c
 * lays out the heads grid, layout_eq.c the equation and the focus view,
 * layout_compare.c the compare view, layout_place.c where the next-token panel
 * goes; a loaded model's overview and next panel are layout_overview.c's and
 * layout_next.c's). Not used outside view_layout_compute. The helpers every one of
 * them uses (lay_imin ... lay_line_h, the measures) are inline here, so calls between
 * the files only go down: layout_compute.c -> layout_compare.c -> layout.c ->
 * layout_place.c -> layout_eq.c -> layout_heads.c (test_file_cycles). */
#ifndef MHAVIZ_LAYOUT_INTERNAL_H
#define MHAVIZ_LAYOUT_INTERNAL_H

#include <stdio.h>

#include "view.h"
#include "view_internal.h"

/* One layout computation: the state, the text measurer and the widest token label
 * at the sizes asked so far (measuring 512 labels is the costly part of a layout). */
typedef struct {
    const view_state *s;
    view_measure_fn measure;
    void *ud;
    int label_size[4], label_w[4], label_cached;
    int eq_allow;            /* arrangements the equation may take: bit VIEW_EQ_*; 0 = all */
    int fits;                /* the last layout_main found a split where everything fits */
    int eq_compact;          /* the equation may drop its colorbars when it fits no other way */
    int eq_give_way;         /* the equation gives way at the base zoom too (training mode) */
    const view_layout *like; /* compare: the live pane, whose split this pane takes */
    int eq_foot;             /* px kept under the equation's part for a bare layout's
                                captions and formula (L->foot); 0: none */
    int next_w, next_h;      /* the next-token panel's room at the top of the equation's part
                                beside the heads, or under the heads (next_under): split_try
                                keeps it there (cx->next_slot); 0: none */
    int next_under;
    view_rect next_slot; /* where split_try kept it */
} lay_ctx;

static inline int lay_imax(int a, int b) {
    return a > b ? a : b;
}

static inline int lay_imin(int a, int b) {
    return a < b ? a : b;
}

/* Presenting with the side panels on a page of their own (panels_page, 1-based), what
 * the header says of them: on that page "page P of P: the panels", on a page of heads
 * where they are ("panels on page P of P"). */
static inline void lay_panels_note(char *buf, size_t n, int panels_page, int page_shown) {
    if (page_shown >= panels_page)
        snprintf(buf, n, "page %d of %d: the panels", panels_page, panels_page);
    else
        snprintf(buf, n, "panels on page %d of %d", panels_page, panels_page);
}

/* Line height of text at `size` as measure gives it, or size + size / 4 where a
   measurer reports less than the size (a stub, in tests): the overview's and the
   next-token panel's rows. */
static inline int lay_measured_line(view_measure_fn measure, void *ud, int size) {
    int w = 0, h = 0;
    measure(ud, "Ag", size, 0, &w, &h);
    return h >= size ? h : size + size / 4;
}

/* Widest token label at pixel size `size`, measured once per size. */
static inline int lay_label_width(lay_ctx *cx, int size) {
    for (int i = 0; i < cx->label_cached; i++)
        if (cx->label_size[i] == size) return cx->label_w[i];
    int w = view_label_max_width(cx->s, size, cx->measure, cx->ud);
    int slot = cx->label_cached < 4 ? cx->label_cached++ : 3;
    cx->label_size[slot] = size;
    cx->label_w[slot] = w;
    return w;
}

/* Width of a text run. */
static inline int lay_text_w(const lay_ctx *cx, const char *text, int size, int bold) {
    return view_text_width(cx->measure, cx->ud, text, size, bold);
}

/* Line height of text at `size`. */
static inline int lay_line_h(const lay_ctx *cx, int size) {
    int w = 0, h = 0;
    cx->measure(cx->ud, "Ag", size, 0, &w, &h);
    return h;
}

/* The heads grid in area: a lone head (focus view, panel export) when single_head,
 * else a page of the grid. target > 0 asks for heatmaps of that side (the side at
 * the base zoom times zoom / zoom_base): a page holds as many heads as reach it and
 * no heatmap is larger; target 0 fills the area. */
void lay_heads(view_layout *L, lay_ctx *cx, view_rect area, int single_head, int target);

/* The part of the heads area the grid uses: heatmaps, labels, colorbar, caption. */
view_rect lay_heads_used(const view_layout *L, lay_ctx *cx);

/* Concat x W^O = MultiHead in area, in the arrangement (one row, wrapped, or one
 * column) that gives the largest heatmaps. When cx->eq_compact it gives way where it
 * fits no other way: its colorbars dropped, then its text at the controls' size
 * (L->eq_font ...). Returns their area in pixels, or -1 when no arrangement fits (the
 * boxes are then laid out all the same, too small). */
long lay_equation(view_layout *L, lay_ctx *cx, view_rect area);

/* The smallest text size the equation takes when it gives way (the data's font when
 * it has no smaller one). */
int lay_eq_min_font(const view_layout *L, const lay_ctx *cx);

/* The focus view in area: the head large, Q_i, K_i, V_i and head_i beside or under
 * it, in the arrangement that gives them the most room where all their text fits.
 * Returns how well it uses the room, or -1e300 when nothing fits (then the head alone,
 * the four matrices empty). */
double lay_focus(view_layout *L, lay_ctx *cx, view_rect area);

/* layout.c: the split of main between the heads grid and the equation that gives
 * both the largest heatmaps (with the lesson's share when it is on). */
void lay_main(view_layout *L, lay_ctx *cx, view_rect main, int target);

/* layout_place.c: lay_main and the lesson's panels in L->main, with the next-token
 * panel (s->next) where it leaves the heads the largest. */
void lay_grid_next(view_layout *L, const view_state *s, lay_ctx *cx, int target);

/* How large the heads came out (layout_place.c): their side, three quarters of it
   when their tokens are not all labelled, half that when the lesson's panels found
   no room. */
long lay_heads_size(const view_layout *L, const view_state *s);

/* layout.c: one pane's layout (no compare) of a state already within range
 * (layout_compute.c): the zoom search, then every rectangle at the zoom found. */
void lay_pane(view_layout *L, const view_state *s, view_measure_fn measure, void *ud);

/* lay_pane with like's split (heads above or beside, their share, the lesson's
 * panels, the captions' place) where it fits: compare's pinned pane, laid out as
 * the live one is. like NULL: lay_pane. */
void lay_pane_like(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                   const view_layout *like);

/* layout_chrome.c: the header's buttons and captions, and the formula strip,
 * flowed into width from (x0, y0); they set L->header and L->formula. */
void lay_header(view_layout *L, const view_state *s, view_measure_fn measure, void *ud, int x0,
                int y0, int width);
void lay_formula(view_layout *L, const view_state *s, view_measure_fn measure, void *ud, int x0,
                 int y0, int width);

#endif
