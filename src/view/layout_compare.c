/* layout_compare.c: the compare view's layout. A banner across the window names
 * the settings in which the pinned view and the live one differ; under it the
 * pinned pane sits beside the live one (above it in a portrait window). The live
 * pane is laid out as a window of the pane's size and moved into place, so hit
 * tests, overlays and the layout log all see window coordinates; the pinned pane
 * is laid out in its own coordinates into s->pinned_layout. No drawing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"

static void move(view_rect *r, int dx, int dy) {
    if (r->w <= 0 && r->h <= 0) return; /* empty: stays empty where it was */
    r->x += dx;
    r->y += dy;
}

static void move_box(view_matrix_box *b, int dx, int dy) {
    move(&b->map, dx, dy);
    move(&b->shape, dx, dy);
    move(&b->cbar, dx, dy);
}

void view_layout_translate(view_layout *L, int dx, int dy) {
    move(&L->header, dx, dy);
    move(&L->formula, dx, dy);
    move(&L->main, dx, dy);
    move(&L->status, dx, dy);
    for (int i = 0; i < BTN_COUNT; i++) move(&L->buttons[i].r, dx, dy);
    for (int i = 0; i < L->hdr_count; i++) L->hdr_runs[i].x += dx, L->hdr_runs[i].y += dy;
    for (int i = 0; i < L->run_count; i++) L->runs[i].x += dx, L->runs[i].y += dy;
    move(&L->heads_area, dx, dy);
    for (int i = 0; i < VIEW_MAX_VISIBLE; i++) {
        move(&L->heads[i].map, dx, dy);
        move(&L->heads[i].title, dx, dy);
    }
    move(&L->attn_cbar, dx, dy);
    move(&L->page_note, dx, dy);
    move(&L->focus_caption, dx, dy);
    for (int i = 0; i < 4; i++) move_box(&L->qkv[i], dx, dy);
    view_steps_translate(&L->steps, dx, dy);
    view_rect *train[] = {&L->train_title,  &L->train_acc,  &L->train_loss,
                          &L->train_legend, &L->train_bars, &L->train_note};
    for (size_t i = 0; i < sizeof train / sizeof train[0]; i++) move(train[i], dx, dy);
    view_rect *lesson[] = {&L->redund_title, &L->redund_map, &L->redund_cbar, &L->redund_note,
                           &L->cost};
    for (size_t i = 0; i < sizeof lesson / sizeof lesson[0]; i++) move(lesson[i], dx, dy);
    move(&L->eq_area, dx, dy);
    move(&L->eq_title, dx, dy);
    move_box(&L->concat, dx, dy);
    move_box(&L->w_o, dx, dy);
    move_box(&L->out, dx, dy);
    move(&L->times_sym, dx, dy);
    move(&L->equals_sym, dx, dy);
    move(&L->concat_band, dx, dy);
    move(&L->wo_band, dx, dy);
}

/* One side's name and chips flowed into row r; chips that do not fit are left out. */
static void lay_side(view_compare_side *S, const view_state *s, int side, view_rect r, int size,
                     int pad, view_measure_fn measure, void *ud) {
    static const char *names[2] = {"Pinned", "Live"};
    memset(S, 0, sizeof *S);
    int w = view_text_width(measure, ud, names[side], size, 1);
    S->name = (view_rect){r.x, r.y, w, r.h};
    int x = r.x + w + pad * 2;
    for (int i = 0; i < s->compare_count && i < VIEW_COMPARE_MAX; i++) {
        const char *t = s->compare_what[i][side] ? s->compare_what[i][side] : "";
        int cw = view_text_width(measure, ud, t, size, 1) + pad * 2;
        if (x + cw > r.x + r.w) break;
        S->chip[S->chips++] = (view_rect){x, r.y, cw, r.h};
        x += cw + pad;
    }
}

/* Width of one side's name and chips at text size `size`. */
static int side_width(const view_state *s, int side, int size, int pad, view_measure_fn measure,
                      void *ud) {
    int w = view_text_width(measure, ud, side ? "Live" : "Pinned", size, 1) + pad * 2;
    for (int i = 0; i < s->compare_count && i < VIEW_COMPARE_MAX; i++) {
        const char *t = s->compare_what[i][side] ? s->compare_what[i][side] : "";
        w += view_text_width(measure, ud, t, size, 1) + pad * 3;
    }
    return w;
}

void view_compare_pinned(const view_state *s, view_rect pane, view_state *p) {
    *p = *s->pinned; /* a figure of the pane's size, in the live view's style */
    p->pinned = NULL;
    p->pinned_layout = NULL;
    p->caption = NULL; /* a lesson's caption is the window's, not the pane's */
    p->width = pane.w;
    p->height = pane.h;
    p->ui_scale = s->ui_scale;
    p->look.zoom = s->look.zoom;
    p->zoom_base = s->zoom_base;
    p->look.theme = s->look.theme;
    p->look.cmap = s->look.cmap;
    p->look.contrast = s->look.contrast;
    p->look.values = s->look.values;
    p->figure = s->figure; /* in the window drawn as the live pane is: presented */
    p->look.present = !s->figure;
    p->transparent = s->transparent;
    p->panel = VIEW_PANEL_ALL;
    p->pinned_pane = 1; /* its page note, in figures too: the banner has no room for it */
    p->look.focus = p->look.step = 0;
    p->hover_x = p->hover_y = -1;
    p->editing = p->help = 0;
    p->status = p->toast = NULL;
}

/* The banner's text size: the zoom's, smaller when a side's chips would not fit a
 * row of width row_w (down to 8 pixels); pad is the space around its chips. */
static int banner_size(const view_state *s, float k, int row_w, int *pad, view_measure_fn measure,
                       void *ud) {
    int size = lay_imax(1, (int)lroundf(16.0f * k));
    for (;;) {
        *pad = lay_imax(2, size * 3 / 8);
        int need = lay_imax(side_width(s, 0, size, *pad, measure, ud),
                            side_width(s, 1, size, *pad, measure, ud));
        if (need <= row_w || size <= 8) break;
        size = lay_imax(8, size * row_w / need);
    }
    return size;
}

/* The two panes (0 pinned, 1 live) between top and bottom of a W x H window, each
 * under its banner row (row[0] and row[1], both the banner on entry), and the line
 * between them, t thick: side by side under one banner row, or stacked in portrait. */
static void split_panes(view_rect pane[2], view_rect row[2], view_rect *line_r, int W, int H,
                        int top, int bottom, int margin, int t) {
    const view_rect banner = row[0];
    const int row_h = banner.h;
    if (H > W) {
        int h = (bottom - top - row_h - margin) / 2;
        pane[0] = (view_rect){0, top, W, h};
        row[1].y = top + h + margin;
        pane[1] = (view_rect){0, row[1].y + row_h, W, bottom - row[1].y - row_h};
        *line_r = (view_rect){0, row[1].y - margin / 2 - t / 2, W, t};
    } else {
        int w = W / 2;
        pane[0] = (view_rect){0, top, w, bottom - top};
        pane[1] = (view_rect){w, top, W - w, bottom - top};
        row[0].w = pane[1].x - margin - banner.x;
        row[1].x = pane[1].x + margin;
        row[1].w = banner.x + banner.w - row[1].x;
        *line_r = (view_rect){pane[1].x - t / 2, pane[1].y, t, pane[1].h};
    }
    for (int i = 0; i < 2; i++) {
        pane[i].w = lay_imax(1, pane[i].w);
        pane[i].h = lay_imax(1, pane[i].h);
    }
}

/* 1 when a and b split their panes alike: heads beside or above the equation, the
   same share, bare or not. */
static int same_split(const view_layout *a, const view_layout *b) {
    return a->split_frac == b->split_frac && a->split_stacked == b->split_stacked &&
           a->split_bare == b->split_bare;
}

/* The live pane (L, in window coordinates: its pane at pane1) and the pinned one
   (P) laid out with the split like's, or the nearest share of it each takes; 1 when
   both took the same split and the live data keeps zoom `keep` at least (0: any). */
static int both_like(view_layout *L, view_layout *P, const view_state *live, const view_state *p,
                     view_rect pane1, const view_layout *like, float keep, view_measure_fn measure,
                     void *ud) {
    lay_pane_like(L, live, measure, ud, like);
    view_layout_translate(L, pane1.x, pane1.y);
    if (keep > 0 && L->data_zoom < keep - 1e-4f) return 0;
    lay_pane_like(P, p, measure, ud, L); /* laid out as the live one */
    return same_split(L, P);
}

/* Both panes' layouts: the live one as a window of its pane's size (presented in
 * the window), moved into place; the pinned one into s->pinned_layout, in its own
 * coordinates, once its model is there. Both take one split: the live pane's own
 * when the pinned one takes it; else the pinned pane's, when the live one takes it
 * with its data at the same zoom; else the first share (nearest the live pane's
 * own, heads as it has them first) both take, with the live data at the same zoom
 * if one allows it, else at a smaller one. Only where no split fits both does
 * each keep its own. */
static void lay_panes(view_layout *L, const view_state *s, const view_rect pane[2], int window,
                      view_measure_fn measure, void *ud) {
    view_state live = *s;
    live.pinned = NULL;
    live.width = pane[1].w;
    live.height = pane[1].h;
    live.look.present |= window;
    /* the live pane's own split (and its captions under the equation when they fit
       there); the pinned one takes it */
    static const view_layout own_split = {.split_bare = 1}; /* its own split, bare allowed */
    lay_pane_like(L, &live, measure, ud, &own_split);
    view_layout_translate(L, pane[1].x, pane[1].y);
    if (!s->pinned_layout || !view_layer_ok(s->pinned->layer)) return;
    view_state p;
    view_compare_pinned(s, pane[0], &p);
    view_layout *P = s->pinned_layout;
    lay_pane_like(P, &p, measure, ud, L); /* laid out as the live one */
    const int split_differs = !same_split(P, L);
    const int eq_differs = L->split_stacked ? abs(P->eq_area.h - L->eq_area.h) > 2
                                            : abs(P->eq_area.w - L->eq_area.w) > 2;
    if (!split_differs && !eq_differs) return;
    /* the live pane's split (or its equation's width) did not fit the pinned one:
       both take what the pinned pane found, if the live data keeps its zoom */
    static view_layout like, first[2]; /* large; computed on one thread */
    like = *P;
    like.split_bare = 0;
    if (split_differs) like.eq_area = (view_rect){0, 0, 0, 0};
    first[0] = *P, first[1] = *L;
    const float keep = first[1].data_zoom;
    if (both_like(L, P, &live, &p, pane[1], &like, keep, measure, ud)) return;
    if (!split_differs) { /* the same split, the equations' widths apart: as they were */
        *L = first[1], *P = first[0];
        return;
    }
    /* a share both take: nearest the live pane's own, heads as it has them first */
    static const int fracs[] = {30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90};
    const int nf = (int)(sizeof fracs / sizeof fracs[0]);
    for (int pass = 0; pass < 2; pass++) /* the live data at its zoom, then at any */
        for (int o = 0; o < 2; o++)
            for (int dist = 0; dist <= 60; dist += 5)
                for (int sign = -1; sign <= 1; sign += 2) {
                    const int frac = first[1].split_frac + sign * dist;
                    if ((dist == 0 && sign > 0) || frac < fracs[0] || frac > fracs[nf - 1])
                        continue;
                    like = (view_layout){0};
                    like.split_frac = frac;
                    like.split_stacked = o ? !first[1].split_stacked : first[1].split_stacked;
                    like.split_lesson = first[1].split_lesson;
                    if (both_like(L, P, &live, &p, pane[1], &like, pass ? 0.0f : keep, measure, ud))
                        return;
                }
    *L = first[1], *P = first[0]; /* no split fits both: each its own */
}

void view_compare_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    const float ui = s->ui_scale > 0 ? s->ui_scale : 1.0f;
    const float zoom = s->look.zoom > 0 ? s->look.zoom : 1.0f;
    const int W = s->width, H = s->height;
    /* the banner follows the zoom, smaller when its chips would not fit a row */
    const int margin = lay_imax(2, (int)lroundf(12.0f * ui * zoom));
    const int row_w = H > W ? W - 2 * margin : W / 2 - 2 * margin;
    int pad = 0;
    const int size = banner_size(s, ui * zoom, row_w, &pad, measure, ud);
    int tw = 0, line = 0;
    measure(ud, "Ag", size, 1, &tw, &line);
    if (line < size) line = size + size / 4;
    const int row_h = line + pad;
    /* landscape: one banner row over both panes; portrait: each pane under its own row */
    view_rect banner = {margin, margin, lay_imax(1, W - 2 * margin), row_h};
    view_rect row[2] = {banner, banner};
    /* in the window both panes are drawn alike, without buttons (the keys act on the
       live one), over one status line across the window */
    const int window = !s->figure && !s->look.present;
    const int status_h = window ? line : 0;
    const int bottom = H - (window ? status_h + margin : 0);
    view_rect pane[2], line_r;
    split_panes(pane, row, &line_r, W, H, banner.y + banner.h, bottom, margin,
                lay_imax(1, pad / 3));

    lay_panes(L, s, pane, window, measure, ud);
    if (window)
        L->status =
            (view_rect){margin, H - margin - status_h, lay_imax(1, W - 2 * margin), status_h};

    L->compare = 1;
    L->compare_stacked = H > W;
    L->compare_banner = banner;
    L->compare_pane[0] = pane[0];
    L->compare_pane[1] = pane[1];
    L->compare_font = size;
    L->compare_line = line_r;
    for (int side = 0; side < 2; side++)
        lay_side(&L->compare_side[side], s, side, row[side], size, pad, measure, ud);
    memset(&L->compare_same, 0, sizeof L->compare_same);
    if (s->compare_count == 0) { /* after "Pinned": what to do next */
        const view_compare_side *p = &L->compare_side[0];
        int x = p->name.x + p->name.w + pad * 2;
        int right = row[0].x + row[0].w;
        if (right > x) L->compare_same = (view_rect){x, p->name.y, right - x, row_h};
    }
}
