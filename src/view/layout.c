/* layout.c: every rectangle of the picture from the state (size, zoom, layer,
 * tokens) and a text measurer: the sizes, the status line and the split of the
 * window between the controls (layout_chrome.c), the heads grid (layout_heads.c)
 * and the equation (layout_eq.c) that gives both the largest heatmaps. No drawing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

static int iround(float v) {
    return (int)lroundf(v);
}

#define imax lay_imax
#define imin lay_imin

static void note_panels_page(view_layout *L, const view_state *s, const lay_ctx *cx);

/* --- sizes and the zoom of the controls ------------------------------------ */

/* Text and spacing of the data (titles, labels, the equation) at scale k. */
static void data_sizes(view_layout *L, float k, view_measure_fn measure, void *ud) {
    L->font = imax(1, iround(16.0f * k));
    L->font_small = imax(1, iround(14.0f * k));
    L->font_title = imax(1, iround(20.0f * k));
    int w = 0;
    measure(ud, "Ag", L->font, 0, &w, &L->line);
    if (L->line < L->font) L->line = L->font + L->font / 4;
    L->pad = imax(2, iround(8.0f * k));
    L->gap = imax(2, iround(12.0f * k));
}

/* Text of the controls (header, formula strip, status line) at scale k. */
static void ui_sizes(view_layout *L, float k, view_measure_fn measure, void *ud) {
    L->ui_font = imax(1, iround(16.0f * k));
    L->ui_small = imax(1, iround(14.0f * k));
    int w = 0;
    measure(ud, "Ag", L->ui_font, 0, &w, &L->ui_line);
    if (L->ui_line < L->ui_font) L->ui_line = L->ui_font + L->ui_font / 4;
    L->ui_pad = imax(2, iround(8.0f * k));
}

/* Lays out the header, the formula strip and the status line at the controls'
 * scale k; returns the first row below the formula strip. */
static int layout_chrome(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                         float k, view_rect inner) {
    ui_sizes(L, k, measure, ud);
    L->hdr_count = L->run_count = 0;
    memset(L->buttons, 0, sizeof L->buttons);
    lay_header(L, s, measure, ud, inner.x, inner.y, inner.w);
    lay_formula(L, s, measure, ud, inner.x, L->header.y + L->header.h + L->ui_pad, inner.w);
    int status_h = s->figure || s->look.present ? 0 : L->ui_line;
    L->status = status_h ? (view_rect){inner.x, inner.y + inner.h - status_h, inner.w, status_h}
                         : (view_rect){0, 0, 0, 0};
    return L->formula.y + L->formula.h + L->ui_pad;
}

/* --- the split between the heads grid and the equation ------------------------ */

/* Below the equation's feet, in its area: where a bare layout puts its formula
 * block. Wrapped, that is under Concat (MultiHead sits under W^O). */
static view_rect eq_leftover(const view_layout *L) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    const int tick = L->pad / 2 + L->line; /* colorbar numbers */
    view_rect a = L->eq_area;
    int x0 = a.x, x1 = a.x + a.w, top = 0;
    int bottom = a.y + a.h;
    if (L->eq_arrange == VIEW_EQ_WRAP) { /* under Concat, down to MultiHead's foot */
        x1 = L->times_sym.x;
        top = L->concat.cbar.y + L->concat.cbar.h + tick;
        bottom = imin(bottom, L->out.cbar.y + L->out.cbar.h + tick);
    } else {
        for (int i = 0; i < 3; i++) top = imax(top, m[i]->cbar.y + m[i]->cbar.h + tick);
    }
    top += L->gap;
    return (view_rect){x0 + L->pad, top, x1 - x0 - 2 * L->pad, bottom - top};
}

/* Puts the captions and the formula into r (the room the equation or a stage
 * leaves), as large as fits there (up to 1.375 times the controls' size k).
 * Returns 0 when they do not fit even at k. */
static int fit_block(view_layout *L, const view_state *s, lay_ctx *cx, float k, view_rect r) {
    for (float f = 1.375f; f > 0.99f && r.w > 0 && r.h > 0; f -= 0.125f) {
        ui_sizes(L, k * f, cx->measure, cx->ud);
        L->hdr_count = L->run_count = 0;
        lay_header(L, s, cx->measure, cx->ud, r.x, r.y, r.w);
        int y = L->header.y + L->header.h + L->ui_pad;
        lay_formula(L, s, cx->measure, cx->ud, r.x, y, r.w);
        int fits = L->formula.y + L->formula.h <= r.y + r.h && L->header.w <= r.w;
        for (int i = 0; i < L->run_count && fits; i++) /* an item wider than the room */
            fits = L->runs[i].x + L->runs[i].w <= r.x + r.w;
        for (int i = 0; i < L->hdr_count && fits; i++)
            fits = L->hdr_runs[i].x + L->hdr_runs[i].w <= r.x + r.w;
        if (fits) return 1;
    }
    return 0;
}

/* No equation: its rectangles empty (nothing draws them, nothing hits them). */
static void no_equation(view_layout *L) {
    memset(&L->concat, 0, sizeof L->concat);
    memset(&L->w_o, 0, sizeof L->w_o);
    memset(&L->out, 0, sizeof L->out);
    L->eq_area = L->eq_title = L->times_sym = L->equals_sym = (view_rect){0, 0, 0, 0};
    L->concat_band = L->wo_band = (view_rect){0, 0, 0, 0};
    L->eq_font = 0;
}

/* The focus view (the head, Q_i, K_i, V_i, head_i) with the equation beside it or
 * under it, at the share of L->main that uses the room best where every text fits;
 * the equation gives way as above the base zoom (colorbars, then its text size).
 * Where it fits nowhere, the focus view alone. */
static void lay_focus_view(view_layout *L, lay_ctx *cx) {
    static const int fracs[] = {50, 55, 60, 65, 70, 75, 80};
    const view_rect m = L->main;
    double best = -1e301;
    int best_below = -1, best_frac = 0;
    for (int below = 0; below < 2; below++)
        for (size_t i = 0; i < sizeof fracs / sizeof fracs[0]; i++) {
            view_rect a = m, b = m;
            if (below) {
                a.h = m.h * fracs[i] / 100;
                b.y = a.y + a.h + L->gap;
                b.h = m.y + m.h - b.y;
            } else {
                a.w = m.w * fracs[i] / 100;
                b.x = a.x + a.w + L->gap * 2;
                b.w = m.x + m.w - b.x;
            }
            if (b.w < L->font * 4 || b.h < L->line * 4) continue;
            const double f = lay_focus(L, cx, a);
            if (f <= -1e299) continue;
            cx->eq_compact = 1;
            const long eq = lay_equation(L, cx, b);
            cx->eq_compact = 0;
            if (eq <= 0) continue;
            const double v = 0.65 * f + 0.35 * log((double)eq);
            if (v > best + 1e-9) best = v, best_below = below, best_frac = fracs[i];
        }
    if (best_below < 0) { /* the equation fits nowhere beside it: a line says so */
        static const char *const forms[] = {"the equation has no room beside this head",
                                            "no room for the equation", "no equation"};
        const int size = imin(L->font_small, L->ui_small > 0 ? L->ui_small : L->font_small);
        const int lh = lay_line_h(cx, size);
        view_rect a = m;
        a.h = imax(1, m.h - lh - L->pad);
        lay_focus(L, cx, a);
        no_equation(L);
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            const int w = lay_text_w(cx, forms[f], size, 0);
            if (w > m.w || m.h < 4 * lh) continue;
            L->lesson_note = (view_rect){m.x, m.y + m.h - lh, w, lh};
            snprintf(L->lesson_note_text, sizeof L->lesson_note_text, "%s", forms[f]);
            L->lesson_note_size = size;
            break;
        }
        return;
    }
    view_rect a = m, b = m;
    if (best_below) {
        a.h = m.h * best_frac / 100;
        b.y = a.y + a.h + L->gap;
        b.h = m.y + m.h - b.y;
    } else {
        a.w = m.w * best_frac / 100;
        b.x = a.x + a.w + L->gap * 2;
        b.w = m.x + m.w - b.x;
    }
    lay_focus(L, cx, a);
    cx->eq_compact = 1;
    lay_equation(L, cx, b);
    cx->eq_compact = 0;
}

/* The main area: the heads grid and the equation, or the focus view (with the
 * step-through in place of Q_i, K_i, V_i, head_i and the equation), or training
 * mode's heads beside its curves; the lesson's panels under the equation. */
static void layout_body(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    if (view_overview_mode(s)) { /* every layer x head in place of the layer view */
        view_overview_layout(L, s, cx->measure, cx->ud, L->main);
        return;
    }
    if (s->train) { /* training mode: the trained heads and their Concat x W^O =
                       MultiHead, as in the attention view; then curves and bars */
        view_rect left = L->main, right = L->main;
        left.w = L->main.w * 60 / 100;
        right.x = left.x + left.w + L->gap * 2;
        right.w = L->main.x + L->main.w - right.x;
        cx->eq_give_way = 1; /* beside the curves: the equation's text may be smaller */
        lay_main(L, cx, left, 0);
        cx->eq_give_way = 0;
        /* the curves start where the heads and the equation end */
        view_rect used = lay_heads_used(L, cx);
        int end = used.x + used.w;
        const view_rect eq[] = {L->eq_title,  L->concat.map, L->concat.cbar, L->w_o.map,
                                L->w_o.cbar,  L->out.map,    L->out.cbar,    L->concat.shape,
                                L->w_o.shape, L->out.shape};
        for (size_t i = 0; i < sizeof eq / sizeof eq[0]; i++)
            if (eq[i].w > 0) end = imax(end, eq[i].x + eq[i].w);
        if (end + L->gap * 3 < right.x) {
            right.x = end + L->gap * 3;
            right.w = L->main.x + L->main.w - right.x;
        }
        view_train_layout(L, s, right);
        return;
    }
    if (s->look.focus > 0) {
        if (s->look.step > 0) { /* the step-through, one stage large, takes the whole area */
            L->focus = s->look.focus;
            view_steps_layout(&L->steps, L, s, L->main, cx->measure, cx->ud);
            return;
        }
        L->lesson_note = (view_rect){0, 0, 0, 0};
        lay_focus_view(L, cx);
        view_lesson_layout(L, s, cx->measure, cx->ud);
        return;
    }
    lay_grid_next(L, s, cx, target);
}

/* A single panel (--panel head, steps or equation) fills the inner rectangle at
 * scale k; returns 0 for the whole picture (VIEW_PANEL_ALL), which it leaves alone. */
static int layout_panel(view_layout *L, const view_state *s, lay_ctx *cx, float k, float zoom,
                        view_rect inner) {
    if (s->panel != VIEW_PANEL_HEAD && s->panel != VIEW_PANEL_STEPS &&
        s->panel != VIEW_PANEL_EQUATION && s->panel != VIEW_PANEL_MODEL &&
        s->panel != VIEW_PANEL_NEXT)
        return 0;
    ui_sizes(L, k, cx->measure, cx->ud);
    L->ui_zoom = zoom;
    if (s->panel == VIEW_PANEL_MODEL) { /* the overview alone, as a figure */
        view_overview_layout(L, s, cx->measure, cx->ud, inner);
    } else if (s->panel == VIEW_PANEL_NEXT) { /* the next-token panel alone */
        const int w = view_next_width(L, s, cx->measure, cx->ud, 0) + 10 * L->font;
        view_next_layout(L, s, cx->measure, cx->ud,
                         (view_rect){inner.x, inner.y, imin(inner.w, w), inner.h}, 0);
    } else if (s->panel == VIEW_PANEL_HEAD) {
        lay_heads(L, cx, inner, 1, 0);
        L->focus = s->panel_head;
    } else if (s->panel == VIEW_PANEL_STEPS) {
        L->focus = s->panel_head;
        view_steps_layout(&L->steps, L, s, inner, cx->measure, cx->ud);
    } else { /* the equation alone: one row or one column, no empty corner */
        cx->eq_allow = 1 << VIEW_EQ_ROW | 1 << VIEW_EQ_COLUMN;
        lay_equation(L, cx, inner);
        cx->eq_allow = 0;
    }
    return 1;
}

/* The controls follow the zoom while they take at most a third of the window (a
 * quarter presenting under 600 px; or what they take at 100 %, or at a presentation's
 * text floor) and each formula item fits its width; past that they
 * stay smaller. Lays them out at the zoom found (set as L->ui_zoom) and returns
 * the first row below them. */
static int fit_chrome(view_layout *L, const view_state *s, lay_ctx *cx, float ui, float zoom,
                      float base, view_rect inner) {
    float zc = zoom;
    float floor_z = fminf(zoom, fminf(base, 1.0f));
    if (s->text_floor > 0) /* a projected page: not under its text floor */
        floor_z = fminf(zoom, fmaxf(floor_z, (float)s->text_floor / (VIEW_SMALLEST_TEXT * ui)));
    int main_top = layout_chrome(L, s, cx->measure, cx->ud, ui * floor_z, inner);
    /* presenting on a short screen (under 600 px: 1024 x 576), the captions and formula
       take at most a quarter: there a third left 16 heads four a page at 150 % */
    const int share = s->look.present && s->height < 600 ? s->height / 4 : s->height / 3;
    int limit = lay_imax(share, main_top + (L->status.h ? L->status.h + L->ui_pad : 0));
    for (;;) {
        main_top = layout_chrome(L, s, cx->measure, cx->ud, ui * zc, inner);
        int chrome = main_top + (L->status.h ? L->status.h + L->ui_pad : 0);
        int wide = 0; /* a formula item wider than the window */
        for (int i = 0; i < L->run_count; i++)
            wide |= L->runs[i].x + L->runs[i].w > inner.x + inner.w;
        if ((chrome <= limit && !wide) || zc <= floor_z + 1e-3f) break;
        zc = fmaxf(floor_z, zc * 0.92f);
    }
    L->ui_zoom = zc;
    return main_top;
}

/* A bare layout's strip for its captions and formula (L->foot), from right under
 * the equation when the lesson's panels are not between them. */
static view_rect foot_room(const view_layout *L) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    const int tick = L->pad / 2 + L->line; /* colorbar numbers */
    view_rect r = L->foot;
    int top = 0; /* under all three, whatever their arrangement */
    for (int i = 0; i < 3; i++) {
        top = imax(top, imax(m[i]->map.y + m[i]->map.h, m[i]->shape.y + m[i]->shape.h));
        if (m[i]->cbar.h > 0) /* its numbers, and a note under MultiHead */
            top = imax(top, m[i]->cbar.y + m[i]->cbar.h + imax(tick, 2 * L->line + L->pad));
    }
    top += L->gap;
    if (r.h > 0 && !L->lesson_shown && top < r.y) r.h += r.y - top, r.y = top;
    return r;
}

/* The heatmaps' area of the equation. */
static long eq_heatmaps(const view_layout *L) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    long a = 0;
    for (int i = 0; i < 3; i++) a += (long)m[i]->map.w * m[i]->map.h;
    return a;
}

/* 1 when b shows the data no smaller than a: as many heads a page, larger, or as
 * large with the equation no smaller. */
static int no_smaller(const view_layout *b, const view_layout *a, const view_state *s) {
    const long hb = lay_heads_size(b, s), ha = lay_heads_size(a, s);
    if (b->per_page < a->per_page) return 0;
    return hb > ha || (hb == ha && eq_heatmaps(b) >= eq_heatmaps(a));
}

/* A strip kept under the equation pays when the data is no smaller for it and the
 * heads beside it reach down to it (else the rows it frees stay empty under them). */
static int strip_pays(const view_layout *b, const view_layout *a, const view_state *s, lay_ctx *cx,
                      view_rect room) {
    const view_rect used = lay_heads_used(b, cx);
    return no_smaller(b, a, s) && used.y + used.h + b->gap >= room.y;
}

/* The height the captions and the formula take in a room w px wide at the
 * controls' scale k (fit_block's smallest), laid out in a scratch copy of L. */
static int block_height(const view_layout *L, const view_state *s, lay_ctx *cx, float k, int w) {
    static view_layout scratch; /* large; the layout is computed on one thread */
    scratch = *L;
    ui_sizes(&scratch, k, cx->measure, cx->ud);
    scratch.hdr_count = scratch.run_count = 0;
    lay_header(&scratch, s, cx->measure, cx->ud, 0, 0, w);
    lay_formula(&scratch, s, cx->measure, cx->ud, 0,
                scratch.header.y + scratch.header.h + scratch.ui_pad, w);
    return scratch.formula.y + scratch.formula.h;
}

/* A figure (or the presentation) has no controls: its captions and formula move
 * into the room the equation leaves, as large as fits there (up to 1.375 times
 * the controls' scale k), and the data grows into the rows they free. Where they
 * fit neither under Concat nor under the whole equation, a strip at the foot of
 * the equation's part is kept for them, when the data is no smaller for it (the
 * heads beside it take the height it frees), at the base zoom, where the heads
 * fill the room. Above it, a bare layout is taken only where its heads keep their
 * page and size. L is kept when no such layout fits. */
static void bare_figure(view_layout *L, const view_state *s, lay_ctx *cx, int target, float k,
                        view_rect inner) {
    static view_layout bare; /* large; the layout is computed on one thread */
    /* wrapped, the block goes under Concat; else under the whole equation (where
       the lesson's panels go when they are on: then wrapped only); then in a strip
       kept under the equation, measured at the width the strip had before */
    static const int allow[3] = {1 << VIEW_EQ_WRAP, 0, 0};
    const int fits = cx->fits;
    int foot = block_height(L, s, cx, k, inner.w / 2);
    for (int a = 0; a < (target > 0 ? 2 : 4); a++) { /* above the base zoom no strip */
        if (a == 1 && s->lesson) continue;
        const int strip = a >= 2;
        bare = *L;
        bare.main = (view_rect){inner.x, inner.y, inner.w, inner.h};
        cx->eq_allow = allow[imin(a, 2)];
        cx->eq_foot = strip ? foot : 0;
        cx->fits = 1;
        layout_body(&bare, s, cx, target);
        note_panels_page(&bare, s, cx); /* the header says where they went */
        cx->eq_allow = cx->eq_foot = 0;
        const view_rect room = strip ? foot_room(&bare) : eq_leftover(&bare);
        /* above the base zoom the heads come first: a page of them no smaller */
        const int heads_kept = target <= 0 || no_smaller(&bare, L, s);
        if (cx->fits && heads_kept && (!strip || strip_pays(&bare, L, s, cx, room)) &&
            (bare.lesson_shown || !L->lesson_shown) && room.w > 0 &&
            fit_block(&bare, s, cx, k, room)) {
            *L = bare;
            L->split_bare = 1;
            return;
        }
        cx->fits = fits;
        if (strip && room.w > 0) foot = block_height(L, s, cx, k, room.w);
    }
}

/* The room a square stage (3-6) leaves right of its matrix, under its note and
 * mask legend, down to the foot of a (clear of the colorbar where it reaches under
 * the note); empty when the note is on top. */
static view_rect stage_leftover(const view_layout *L, const attn_layer *layer, view_rect a) {
    const view_steps *S = &L->steps;
    const view_rect none = {0, 0, 0, 0};
    const int kind = view_steps_kind(layer, S->current); /* RoPE's stage 3 moves S on */
    if (!S->shown || S->bigs != 1 || kind < 3 || kind > 6 || S->notes < 1) return none;
    const view_matrix_box *b = &S->big[0];
    const int x = S->note[0].x;
    if (x <= b->map.x + b->map.w) return none; /* the note on top of the square */
    int top = S->note[S->notes - 1].y + S->note[S->notes - 1].h;
    if (S->legend.w > 0) top = imax(top, S->legend.y + S->legend.h);
    top += 2 * L->gap;
    int bottom = a.y + a.h;
    if (b->cbar.x + b->cbar.w > x) bottom = imin(bottom, b->shape.y - L->gap);
    return (view_rect){x, top, a.x + a.w - x, bottom - top};
}

/* A stage of the step-through as a figure (or the presentation): its header and
 * formula strip move into the room right of the stage's square, under its note,
 * and the stage takes the rows they free, when they fit there and the square
 * grows. L is kept otherwise. */
static void bare_stage(view_layout *L, const view_state *s, lay_ctx *cx, float k, view_rect inner) {
    static view_layout bare; /* large; the layout is computed on one thread */
    bare = *L;
    bare.main = inner;
    view_steps_layout(&bare.steps, &bare, s, inner, cx->measure, cx->ud);
    const view_rect r = stage_leftover(&bare, s->layer, inner);
    if (r.w <= 0 || r.h <= 0 || bare.steps.big[0].map.w <= L->steps.big[0].map.w) return;
    if (fit_block(&bare, s, cx, k, r)) *L = bare;
}

/* A paged figure says which heads it holds, in its header (when there is room); with
 * the side panels on a page of their own, where they went ("panels on page 2 of 2"), in
 * the first form that fits. */
static void page_in_header(view_layout *L, const view_state *s, const lay_ctx *cx) {
    if (!(s->figure || s->look.present) || L->pages <= 1 || L->hdr_count >= VIEW_MAX_HDR ||
        L->hdr_count <= 0)
        return;
    view_run *last = &L->hdr_runs[L->hdr_count - 1], *r = &L->hdr_runs[L->hdr_count];
    const int h = s->layer ? s->layer->h : 0;
    const int heads_pages = L->panels_page ? L->panels_page - 1 : L->pages;
    char heads[48] = "", panels[48] = "", both[sizeof r->text] = "";
    if (heads_pages > 1 && L->shown_heads == 1)
        snprintf(heads, sizeof heads, "head %d of %d", L->first_head + 1, h);
    else if (heads_pages > 1 && L->shown_heads > 1)
        snprintf(heads, sizeof heads, "heads %d\xE2\x80\x93%d of %d", L->first_head + 1,
                 L->first_head + L->shown_heads, h);
    if (L->panels_page) /* unless the header's captions say it (figure_items) */
        lay_panels_note(panels, sizeof panels, L->panels_page, L->page + 1);
    for (int i = 0; i < L->hdr_count; i++)
        if (!strcmp(L->hdr_runs[i].text, panels)) panels[0] = '\0';
    if (heads[0] && panels[0]) { /* a page of heads, the panels on the last */
        const size_t hn = strlen(heads);
        memcpy(both, heads, hn < sizeof both ? hn + 1 : sizeof both);
        both[sizeof both - 1] = '\0';
        const size_t bn = strlen(both);
        snprintf(both + bn, sizeof both - bn, " \xC2\xB7 %s", panels);
    }
    const char *forms[3] = {both, panels, heads};
    for (int f = 0; f < 3; f++) {
        if (!forms[f][0]) continue;
        const size_t fn = strlen(forms[f]);
        if (fn >= sizeof r->text) continue;
        memcpy(r->text, forms[f], fn + 1);
        r->size = last->size;
        r->w = view_text_width(cx->measure, cx->ud, r->text, r->size, 1);
        r->x = last->x + last->w + L->ui_pad * 3;
        r->y = last->y;
        if (r->x + r->w <= L->header.x + L->header.w) {
            L->hdr_count++;
            return;
        }
    }
}

/* Everything at one zoom; target as lay_heads. */
static void compute_at(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    memset(L, 0, sizeof *L);
    const float ui = s->ui_scale > 0 ? s->ui_scale : 1.0f;
    const float zoom = s->look.zoom > 0 ? s->look.zoom : 1.0f;
    const float base = s->zoom_base > 0 ? s->zoom_base : 1.0f;
    data_sizes(L, ui * zoom, cx->measure, cx->ud);

    const int W = s->width, H = s->height;
    const int margin = imax(2, iround(12.0f * ui * zoom));
    view_rect inner = {margin, margin, imax(1, W - 2 * margin), imax(1, H - 2 * margin)};
    if (layout_panel(L, s, cx, ui * zoom, zoom, inner)) return;

    const int main_top = fit_chrome(L, s, cx, ui, zoom, base, inner);
    int bottom = L->status.h ? L->status.y - L->ui_pad : inner.y + inner.h;
    L->main = (view_rect){inner.x, main_top, inner.w, imax(1, bottom - main_top)};
    layout_body(L, s, cx, target);
    note_panels_page(L, s, cx);
    if ((s->figure || s->look.present) && !s->look.focus && !s->train && !view_overview_mode(s) &&
        (!cx->like || cx->like->split_bare))
        bare_figure(L, s, cx, target, ui * L->ui_zoom, inner);
    if ((s->figure || s->look.present) && s->look.focus && s->look.step > 0 && !s->train &&
        !cx->like && s->panel == VIEW_PANEL_ALL)
        bare_stage(L, s, cx, ui * L->ui_zoom, inner);
}

/* The side of one heatmap at zoom z when the heads get all the room they can. */
static int side_at(view_layout *L, const view_state *s, lay_ctx *cx, float z, int target) {
    view_state at = *s;
    at.look.zoom = z;
    cx->fits = 1;
    compute_at(L, &at, cx, target);
    return L->shown_heads > 0 && cx->fits ? L->heads[0].map.w : 0; /* 0: the zoom does not fit */
}

float view_zoom_for_size(int width, int height) {
    static const float steps[] = VIEW_ZOOM_STEPS;
    float want = fminf((float)width / 1920.0f, (float)height / 1080.0f), z = 1.0f;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] <= want + 1e-3f && steps[i] > z) z = steps[i];
    return z;
}

void lay_pane(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    lay_pane_like(L, s, measure, ud, NULL);
}

static void zoom_search(view_layout *L, const view_state *s, lay_ctx *cx);
static void panels_page(view_layout *L, const view_state *s, lay_ctx *cx);

void lay_pane_like(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                   const view_layout *like) {
    lay_ctx cx = {s, measure, ud, {0}, {0}, 0, 0, 1, 0, 0, like, 0, 0, 0, 0, {0, 0, 0, 0}};
    zoom_search(L, s, &cx);
    panels_page(L, s, &cx);
    page_in_header(L, s, &cx);
}

/* Presenting, side panels that gave way to the heads take a page of their own after
 * the heads' pages (PgDn reaches it; the header says where they went: figure_items):
 * 1 when L's do. Not in a deck (one page a step), compare, or a view without the grid. */
static int panels_paged(const view_layout *L, const view_state *s, const lay_ctx *cx) {
    return s->look.present && !s->one_page && s->lesson && s->layer && !cx->like &&
           s->panel == VIEW_PANEL_ALL && !s->look.focus && !s->train && !view_overview_mode(s) &&
           !L->lesson_shown && L->shown_heads > 0 && L->concat.map.w > 0;
}

/* L->panels_page as L's heads and panels are: the page after the heads', or 0. */
static void note_panels_page(view_layout *L, const view_state *s, const lay_ctx *cx) {
    L->panels_page = panels_paged(L, s, cx) ? imax(1, L->pages) + 1 : 0;
}

/* The panels' page counted in L->pages and, when it is the page asked, laid out: the
 * panels stand where the heads' grid stands on the other pages, the equation and the
 * captions as they are. */
static void panels_page(view_layout *L, const view_state *s, lay_ctx *cx) {
    if (L->panels_page <= 1) return;
    const int heads_pages = L->panels_page - 1;
    L->pages = L->panels_page;
    if (s->look.page < heads_pages) return; /* a page of heads, as laid out */
    const view_rect room = lay_heads_used(L, cx);
    L->page = heads_pages;
    L->first_head = L->shown_heads = 0;
    memset(L->heads, 0, sizeof L->heads);
    L->attn_cbar = L->page_note = (view_rect){0, 0, 0, 0};
    L->show_row_labels = L->show_col_labels = 0;
    L->buttons[BTN_PAGE_PREV].present = L->buttons[BTN_PAGE_NEXT].present = 0;
    view_lesson_page_layout(L, s, cx->measure, cx->ud, room);
}

/* The zoom search of lay_pane_like: L at the zoom whose data shows largest. */
static void zoom_search(view_layout *L, const view_state *s, lay_ctx *cx) {
    const view_layout *like = cx->like;
    const float zoom = s->look.zoom > 0 ? s->look.zoom : 1.0f;
    float base = s->zoom_base > 0 ? s->zoom_base : 1.0f;
    static const float steps[] = VIEW_ZOOM_STEPS;
    const int ns = (int)(sizeof steps / sizeof steps[0]);
    if (s->panel != VIEW_PANEL_ALL || s->look.focus || s->train || !s->layer ||
        view_overview_mode(s)) {
        compute_at(L, s, cx, 0);
        L->data_zoom = zoom;
        return;
    }
    /* The base zoom (the display's: 200 % on a 4K screen) is where heatmaps fill
       the window. When the window is too small for it (a 4K display, a small
       window), the base is the largest zoom step below it that fits. */
    int ref = side_at(L, s, cx, base, 0);
    for (int i = ns - 1; i >= 0 && ref == 0; i--)
        if (steps[i] < base - 1e-4f) base = steps[i], ref = side_at(L, s, cx, base, 0);
    if (ref == 0) { /* nothing fits: the smallest, as it comes */
        L->data_zoom = base;
        return;
    }
    if (fabsf(zoom - base) <= 1e-3f) {
        L->data_zoom = base; /* L holds this layout */
        return;
    }
    /* Above the base zoom, heatmaps take their side at the base zoom times
       zoom / base: text and data grow together and pages hold fewer heads. Each zoom
       step from the base up is tried in turn (on the steps of Ctrl+=, so the zoom
       shown never falls when the zoom rises); a step is taken when its heads are no
       smaller than at the step taken before it (heads never shrink as the zoom rises)
       and a page still shows half the heatmap area it did at least.
       All heads on one page may give a little to larger text, down to their base
       size (or three quarters of the most a lone head could have at the base zoom,
       for a lone head that fills the window), never under 3/4 of the largest side
       a lower zoom showed. Past the steps
       taken the data stays at the last: bigger text would only shrink the data. */
    if (zoom > base && like) { /* compare's panes: as before, the zoom itself or the first
                                  step below it whose heads keep their floor */
        const int most = side_at(L, s, cx, base, 1 << 28);
        const int floor_side = most > 0 ? imin(ref, (most * 3 + 3) / 4) : ref;
        for (int i = ns; i >= 0; i--) { /* zoom itself, then the steps below it */
            float z = i == ns ? zoom : steps[i];
            if (z > zoom + 1e-4f || z <= base + 1e-4f) continue;
            int side = side_at(L, s, cx, z, imax(1, iround((float)ref * z / base)));
            if (side > 0 && side >= floor_side) {
                L->data_zoom = z; /* L holds this layout */
                return;
            }
        }
        side_at(L, s, cx, base, 0);
        L->data_zoom = base;
        return;
    }
    if (zoom > base) {
        const int most = side_at(L, s, cx, base, 1 << 28);
        /* 3/4, rounded up; when not even a lone head fits at the base zoom (a small
           pane), the base zoom's own side */
        const int floor_side =
            imax(most > 0 ? imin(ref, (most * 3 + 3) / 4) : ref, (ref * 3 + 3) / 4);
        float taken = base, last = base;
        int prev = ref, prev_one_page = 1, top = ref; /* top: the largest side taken */
        side_at(L, s, cx, base, 0);
        prev_one_page = L->pages <= 1;
        long prev_area = (long)L->per_page * ref * ref; /* heatmap area on a page */
        for (int i = 0; i <= ns; i++) { /* the steps above the base, then zoom itself */
            const float z = i == ns ? zoom : steps[i];
            if (z <= last + 1e-4f || z > zoom + 1e-4f) continue;
            last = z;
            const int side = side_at(L, s, cx, z, imax(1, iround((float)ref * z / base)));
            const int one_page = L->pages <= 1;
            const int floor_now = imax(floor_side, (top * 3 + 3) / 4);
            const long area = (long)L->per_page * side * side;
            /* larger heads, and a page still showing at least half the heatmap area it
               did (no jump from five heads a page to one for 14 % larger heads) */
            const int grows = side >= prev && area * 2 >= prev_area;
            if (side > 0 && (grows || (one_page && prev_one_page && side >= floor_now)))
                taken = z, prev = side, prev_one_page = one_page, top = imax(top, side),
                prev_area = area;
        }
        if (fabsf(taken - last) > 1e-4f) /* L holds the last step tried: lay out the one taken */
            side_at(L, s, cx, taken,
                    fabsf(taken - base) <= 1e-4f ? 0 : imax(1, iround((float)ref * taken / base)));
        L->data_zoom = taken;
        return;
    }
    /* below the base zoom the text is smaller and the heatmaps fill the room */
    side_at(L, s, cx, zoom, 0);
    L->data_zoom = zoom;
}
