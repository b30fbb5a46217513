/* layout_next.c: the next-token panel's rectangles: a title ("What comes next after
 * ␣the"), one row per token (label right-aligned, a bar on a 0 to 100 % track, the
 * percentage), the pale bar of the same token with every head on under it when
 * heads are removed, and the notes under the rows. An encoder's "fill the blank"
 * is the same panel with its own title, a heading over each blank's rows and a note. Where the
 * panel goes is layout.c's; drawing it is next_panel.c's. Pure. */
#include <math.h>
#include <string.h>

#include "layout_internal.h"
#include "view.h"
#include "view_internal.h"

#define imax lay_imax
#define imin lay_imin
#define line_h lay_measured_line

/* A probability as the panel uses it: in [0, 1], and 0 for NaN. */
static float prob(float p) {
    return p > 0.0f ? (p < 1.0f ? p : 1.0f) : 0.0f;
}

static int any_full(const view_next *x) {
    for (int i = 0; i < x->k; i++)
        if (x->p_full[i] >= 0.0f) return 1;
    return 0;
}

/* Widths of the label column (the widest label, at most 12 characters' worth) and
   of the percentages ("100.0 %", and "(100.0 %)" for the pale one, at the data's
   size; the rows are at the title size). */
/* The text sizes: rows a size up from the data's text (read from the back of the
   room), or at it when compact; the title a size above the rows, the notes below. */
static void sizes(const view_layout *L, int compact, int *size, int *title, int *small) {
    *size = compact ? L->font : L->font_title;
    *title = compact ? L->font_title : L->font_title * 6 / 5;
    *small = compact ? L->font_small : L->font;
}

static void columns(const view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                    int compact, int *label_w, int *pct_w) {
    const view_next *x = s->next;
    int size = 0, title = 0, small = 0;
    sizes(L, compact, &size, &title, &small);
    const int cap = view_text_width(measure, ud, "mmmmmmmmmmmm", size, 0);
    int w = view_text_width(measure, ud, "\xE2\x80\xA6", size, 0);
    for (int i = 0; i < x->k; i++)
        if (x->token[i]) w = imax(w, view_text_width(measure, ud, x->token[i], size, 0));
    *label_w = imin(w, cap);
    *pct_w = view_text_width(measure, ud, "100.0 %", size, 1);
    if (any_full(x)) *pct_w += L->pad / 2 + view_text_width(measure, ud, "(100.0 %)", small, 0);
}

int view_next_width(const view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                    int compact) {
    const view_next *x = s->next;
    if (!view_next_ok(x)) return 0;
    int label_w = 0, pct_w = 0, size = 0, title = 0, small = 0;
    sizes(L, compact, &size, &title, &small);
    columns(L, s, measure, ud, compact, &label_w, &pct_w);
    int w = x->k > 0 ? label_w + pct_w + 2 * L->pad + 12 * size : 0;
    /* a fill panel's headings and note read whole where the room allows */
    for (int i = 0; i < x->k; i++)
        if (x->group[i]) w = imax(w, view_text_width(measure, ud, x->group[i], size, 1));
    if (x->note) w = imax(w, view_text_width(measure, ud, x->note, small, 0));
    if (x->title) w = imax(w, view_text_width(measure, ud, x->title, title, 1));
    return w;
}

void view_next_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                      view_rect area, int compact) {
    view_next_box *N = &L->next;
    memset(N, 0, sizeof *N);
    const view_next *x = s->next;
    if (!view_next_ok(x) || area.w <= 0 || area.h <= 0) return;
    int label_w = 0, pct_w = 0, size = 0, title_size = 0, small_size = 0;
    columns(L, s, measure, ud, compact, &label_w, &pct_w);
    sizes(L, compact, &size, &title_size, &small_size);
    const int pad = L->pad;
    const int line = line_h(measure, ud, size), small = line_h(measure, ud, small_size);
    const int tline = line_h(measure, ud, title_size);
    const int w = area.w; /* the caller chose it (view_next_width asks) */
    const int track_w = w - label_w - pct_w - 2 * pad;
    if (x->k > 0 && track_w < 3 * size) return; /* no room for a bar that says anything */
    const int full = any_full(x);
    const int bar_h = imax(4, line * 3 / 4), full_h = full ? imax(3, line / 3) : 0;
    const int row_h = imax(line, bar_h + (full ? full_h + 2 : 0)) + pad;
    N->size = size;
    N->title_size = title_size;
    N->small_size = small_size;
    N->title = (view_rect){area.x, area.y, w, tline};
    int y = area.y + tline + pad;
    const int resplit = s->resplit && view_overview_ok(s->overview); /* says it is not */
    const int note = x->note ? small : 0;
    const int notes = note + (full ? small : 0) + (x->cut ? small : 0) + (resplit ? small : 0) +
                      (x->marked ? small : 0);
    const int bottom = area.y + area.h - (notes ? notes + pad / 2 : 0);
    int k = 0;
    for (; k < x->k; k++, y += row_h) {
        const int head_h = x->group[k] ? line + (k > 0 ? pad : 0) : 0;
        if (y + head_h + row_h > bottom) break;
        if (head_h) {
            N->group[k] = (view_rect){area.x, y + head_h - line, w, line};
            y += head_h;
        }
        const int tx = area.x + label_w + pad;
        const int by = y + (line - bar_h) / 2;
        N->row[k] = (view_rect){area.x, y, w, row_h};
        N->label[k] = (view_rect){area.x, y, label_w, line};
        N->track[k] = (view_rect){tx, by, track_w, bar_h};
        N->bar[k] = (view_rect){tx, by, (int)lroundf(prob(x->p[k]) * (float)track_w), bar_h};
        if (x->p_full[k] >= 0.0f)
            N->full[k] = (view_rect){tx, by + bar_h + 2,
                                     (int)lroundf(prob(x->p_full[k]) * (float)track_w), full_h};
        N->pct[k] = (view_rect){tx + track_w + pad, y, pct_w, line};
    }
    if (k == 0 && (x->k > 0 || y + notes > area.y + area.h)) return; /* not one row fits */
    N->shown = 1;
    N->k = k;
    y += pad / 2;
    if (note) {
        N->note = (view_rect){area.x, y, w, small};
        y += small;
    }
    if (full) {
        N->caption = (view_rect){area.x, y, w, small};
        y += small;
    }
    if (x->marked) {
        N->mark_note = (view_rect){area.x, y, w, small};
        y += small;
    }
    if (x->cut) {
        N->cut_note = (view_rect){area.x, y, w, small};
        y += small;
    }
    if (resplit) {
        N->trained_note = (view_rect){area.x, y, w, small};
        y += small;
    }
    N->area = (view_rect){area.x, area.y, w, y - area.y};
}
