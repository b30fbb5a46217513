/* sweep_panel.c: training mode's sweep of h (H), drawn where the curves and the
 * bars go (beside the heads of the run it shows): the final held-out accuracy
 * against h, the divisors of d_model evenly spaced, d_k = d_model / h under each;
 * per h a bar over the seeds' range, a hollow square per seed (the shown run's
 * ringed), the mean filled, labelled and joined to its neighbours; the chance
 * line dashed. The numbers are the state's (sweep_view.c); this file only draws,
 * and says where a pointer is (view_sweep_hit) with the same geometry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "view_internal.h"

typedef struct {
    view_rect all;  /* the panels' column */
    view_rect plot; /* accuracy 0..1 up, the h along */
    int half;       /* half a seed square */
    int x[VIEW_SWEEP_MAX_H];
} sweep_geo;

static int imax(int a, int b) {
    return a > b ? a : b;
}

static sweep_geo geometry(const view_layout *L, const view_sweep *w) {
    sweep_geo g = {0};
    const int line = L->line, pad = L->pad;
    const int bottom = L->train_note.y + L->train_note.h;
    g.all = (view_rect){L->train_title.x, L->train_title.y, L->train_title.w,
                        bottom - L->train_title.y};
    const int axis_w = imax(4 * line, L->font_small * 4);
    /* the title and two lines under it, then room for the mean labels */
    const int top = g.all.y + 3 * line + 2 * pad + 2 * line;
    /* under the plot: h, d_k, the axis' caption, the shown run's line */
    const int below = 4 * line + 2 * pad;
    g.plot = (view_rect){g.all.x + axis_w, top, g.all.w - axis_w - pad,
                         imax(4 * line, bottom - below - top)};
    g.half = imax(5, line / 3);
    const int nh = w->nh > 0 ? w->nh : 1;
    for (int a = 0; a < w->nh && a < VIEW_SWEEP_MAX_H; a++)
        g.x[a] = g.plot.x + (int)((a + 0.5) * g.plot.w / nh);
    return g;
}

static int y_of(const sweep_geo *g, float acc) {
    return g->plot.y + g->plot.h - (int)lroundf(fmaxf(0.0f, fminf(1.0f, acc)) * (float)g->plot.h);
}

/* the seeds' squares to the right of the mean, one column each */
static int seed_x(const sweep_geo *g, int a, int s) {
    return g->x[a] + 3 * g->half + s * (2 * g->half + 3);
}

/* A segment `thick` pixels thick in every backend (a slanted line may be drawn one
   pixel wide: copies one pixel apart fill it out, side by side for a steep one,
   one above the other for a flat one). */
static void thick_line(const view_ctx *c, int x0, int y0, int x1, int y1, rgba col, int thick) {
    draw_line(c->dl, x0, y0, x1, y1, col, thick);
    if (x0 == x1 || y0 == y1) return;
    const int steep = abs(y1 - y0) > abs(x1 - x0);
    for (int k = 1; k < thick; k++) {
        const int off = (k + 1) / 2 * (k % 2 ? 1 : -1);
        if (steep)
            draw_line(c->dl, x0 + off, y0, x1 + off, y1, col, 1);
        else
            draw_line(c->dl, x0, y0 + off, x1, y1 + off, col, 1);
    }
}

static void centred(const view_ctx *c, int x, int y, const char *s, int size, rgba col, int bold) {
    draw_text(c->dl, x - view_tw(c, s, size, bold) / 2, y, s, size, col, bold, 0);
}

static void draw_sweep_titles(const view_ctx *c, const view_sweep *w, const sweep_geo *g);
static void draw_sweep_axes(const view_ctx *c, const view_sweep *w, const sweep_geo *g);
static void draw_sweep_column(const view_ctx *c, const view_sweep *w, const sweep_geo *g, int a,
                              int thick);
static void draw_sweep_shown(const view_ctx *c, const view_sweep *w, const sweep_geo *g);

void view_draw_sweep(const view_ctx *c) {
    const view_sweep *w = c->s->sweep;
    const view_layout *L = c->L;
    if (!w) return;
    const sweep_geo g = geometry(L, w);
    const view_rect p = g.plot;
    const int fs = L->font_small, line = L->line, pad = L->pad;
    const rgba mean_c = view_head_color(0, c->s->look.theme);
    char buf[256], fitted[256];
    draw_sweep_titles(c, w, &g);
    draw_sweep_axes(c, w, &g);
    const int thick = imax(3, pad / 2);
    for (int a = 0; a + 1 < w->nh; a++) /* the means joined, where both have one */
        if (w->seeds_done[a] > 0 && w->seeds_done[a + 1] > 0)
            thick_line(c, g.x[a], y_of(&g, w->mean[a]), g.x[a + 1], y_of(&g, w->mean[a + 1]),
                       mean_c, thick);
    for (int a = 0; a < w->nh; a++) draw_sweep_column(c, w, &g, a, thick);
    snprintf(buf, sizeof buf, "heads h, with each head's size d\xE2\x82\x96 = %d / h under it",
             w->d_model);
    view_fit_text(fitted, sizeof fitted, buf, g.all.w, fs, 0, c->measure, c->ud);
    centred(c, p.x + p.w / 2, p.y + p.h + pad + 2 * line, fitted, fs, c->th.text, 0);
    draw_sweep_shown(c, w, &g);
}

/* The title, the line saying what was swept (d_model, layers, seeds) and the key to
 * the marks, over the plot. */
static void draw_sweep_titles(const view_ctx *c, const view_sweep *w, const sweep_geo *g) {
    const view_layout *L = c->L;
    const int fs = L->font_small, line = L->line, pad = L->pad;
    char buf[256], fitted[256];
    snprintf(buf, sizeof buf, "Sweep of h: %s, %ld steps a run", w->task, w->steps);
    view_fit_text(fitted, sizeof fitted, buf, g->all.w, L->font_title, 1, c->measure, c->ud);
    draw_text(c->dl, g->all.x, g->all.y, fitted, L->font_title, c->th.text, 1, 0);
    char seeds[64];
    if (w->seeds > 1)
        snprintf(seeds, sizeof seeds, "seeds %llu\xE2\x80\x93%llu", w->seed0,
                 w->seed0 + (unsigned long long)w->seeds - 1);
    else
        snprintf(seeds, sizeof seeds, "seed %llu", w->seed0);
    snprintf(buf, sizeof buf,
             "final held-out accuracy \xC2\xB7 d_model %d, %d layer%s%s \xC2\xB7 %s", w->d_model,
             w->layers, w->layers > 1 ? "s" : "", w->mlp ? ", MLP" : ", attention only", seeds);
    view_fit_text(fitted, sizeof fitted, buf, g->all.w, fs, 0, c->measure, c->ud);
    draw_text(c->dl, g->all.x, g->all.y + line + pad, fitted, fs, c->th.text, 0, 0);
    view_fit_text(fitted, sizeof fitted,
                  "bar: the seeds' range \xC2\xB7 filled square: their mean \xC2\xB7 hollow "
                  "squares: each seed",
                  g->all.w, fs, 0, c->measure, c->ud);
    draw_text(c->dl, g->all.x, g->all.y + 2 * line + pad, fitted, fs, c->th.muted, 0, 0);
}

/* The axes: a grid every 25 %, labelled, and the chance line dashed. */
static void draw_sweep_axes(const view_ctx *c, const view_sweep *w, const sweep_geo *g) {
    const view_layout *L = c->L;
    const view_rect p = g->plot;
    const int fs = L->font_small, line = L->line, pad = L->pad;
    char buf[256];
    for (int k = 0; k <= 4; k++) {
        const int y = y_of(g, 0.25f * (float)k);
        draw_line(c->dl, p.x, y, p.x + p.w, y, c->th.grid, 1);
        snprintf(buf, sizeof buf, "%d %%", 25 * k);
        draw_text(c->dl, p.x - view_tw(c, buf, fs, 0) - pad / 2, y - line * fs / L->font / 2, buf,
                  fs, c->th.muted, 0, 0);
    }
    if (w->classes > 0) {
        const int y = y_of(g, 1.0f / (float)w->classes);
        for (int x = p.x; x < p.x + p.w; x += 2 * pad)
            draw_line(c->dl, x, y, x + pad < p.x + p.w ? x + pad : p.x + p.w, y, c->th.muted, 1);
        snprintf(buf, sizeof buf, "chance (1 in %d)", w->classes);
        draw_text(c->dl, p.x + pad / 2, y - line, buf, fs, c->th.muted, 0, 0);
    }
    draw_line(c->dl, p.x, p.y, p.x, p.y + p.h, c->th.text, 1);
    draw_line(c->dl, p.x, p.y + p.h, p.x + p.w, p.y + p.h, c->th.text, 1);
}

/* The column of h = w->h[a] at g->x[a]: the seeds' range and mean (labelled), a
 * square per seed (a cross where it diverged; the shown run ringed), h and d_k under
 * the axis, and the run under way over it. */
static void draw_sweep_column(const view_ctx *c, const view_sweep *w, const sweep_geo *g, int a,
                              int thick) {
    const view_layout *L = c->L;
    const view_rect p = g->plot;
    const int fs = L->font_small, line = L->line, pad = L->pad;
    const rgba mean_c = view_head_color(0, c->s->look.theme),
               seed_c = view_head_color(1, c->s->look.theme);
    char buf[256];
    const int x = g->x[a];
    const int shown = a == w->sel_a, under_way = a == w->cur_a;
    if (w->seeds_done[a] > 0) {
        const int ylo = y_of(g, w->lo[a]), yhi = y_of(g, w->hi[a]);
        draw_fill(c->dl, (view_rect){x - thick / 2, yhi, thick, imax(1, ylo - yhi)}, mean_c);
        draw_fill(c->dl, (view_rect){x - 2 * g->half, ylo - 1, 4 * g->half, 3}, mean_c);
        draw_fill(c->dl, (view_rect){x - 2 * g->half, yhi - 1, 4 * g->half, 3}, mean_c);
        const int ym = y_of(g, w->mean[a]), m = g->half + 2;
        draw_fill(c->dl, (view_rect){x - m, ym - m, 2 * m, 2 * m}, mean_c);
        snprintf(buf, sizeof buf, "%.0f %%", 100.0 * w->mean[a]);
        const int ly = yhi - 2 * line + pad / 2;
        centred(c, x, ly < p.y - 2 * line ? p.y - 2 * line : ly, buf, L->font, c->th.text, 1);
    }
    for (int s = 0; s < w->seeds && s < VIEW_SWEEP_MAX_SEEDS; s++) {
        if (!w->done[a][s]) continue;
        const int sx = seed_x(g, a, s), h = g->half;
        if (w->diverged[a][s]) { /* no accuracy claimed: a cross at the foot */
            const int sy = p.y + p.h - 2 * h;
            draw_line(c->dl, sx - h, sy - h, sx + h, sy + h, c->th.accent_text, 2);
            draw_line(c->dl, sx - h, sy + h, sx + h, sy - h, c->th.accent_text, 2);
            continue;
        }
        const int sy = y_of(g, w->acc[a][s]);
        draw_frame(c->dl, (view_rect){sx - h, sy - h, 2 * h, 2 * h}, seed_c, 2);
        if (shown && s == w->sel_s) /* the run whose heads show: ringed */
            draw_frame(c->dl, (view_rect){sx - h - 4, sy - h - 4, 2 * h + 8, 2 * h + 8},
                       c->th.accent_text, 3);
    }
    draw_line(c->dl, x, p.y + p.h, x, p.y + p.h + pad / 2, c->th.text, 1);
    snprintf(buf, sizeof buf, "h = %d", w->h[a]);
    centred(c, x, p.y + p.h + pad / 2, buf, L->font, shown ? c->th.accent_text : c->th.text, 1);
    snprintf(buf, sizeof buf, "d\xE2\x82\x96 = %d", w->d_model / (w->h[a] > 0 ? w->h[a] : 1));
    centred(c, x, p.y + p.h + pad / 2 + line, buf, fs, c->th.muted, 0);
    if (under_way) { /* the run under way: its seed and step over the axis */
        snprintf(buf, sizeof buf, "seed %llu: step %ld", w->seed0 + (unsigned long long)w->cur_s,
                 w->cur_step);
        centred(c, x, p.y + p.h - line - pad / 2, buf, fs, c->th.accent_text, 1);
    }
}

/* The last line: the run whose heads show (its accuracy, or that it diverged), or
 * the sweep's error. */
static void draw_sweep_shown(const view_ctx *c, const view_sweep *w, const sweep_geo *g) {
    const view_layout *L = c->L;
    const int fs = L->font_small, line = L->line;
    char buf[256], fitted[256];
    if (w->error && w->error[0])
        snprintf(buf, sizeof buf, "Sweep: %s", w->error);
    else if (w->sel_a >= 0 && w->sel_s >= 0 && w->diverged[w->sel_a][w->sel_s])
        snprintf(buf, sizeof buf,
                 "Heads shown: h = %d, seed %llu, which diverged (no accuracy claimed)",
                 w->h[w->sel_a], w->seed0 + (unsigned long long)w->sel_s);
    else if (w->sel_a >= 0 && w->sel_s >= 0)
        snprintf(buf, sizeof buf,
                 "Heads shown: h = %d (d\xE2\x82\x96 = %d), seed %llu: held-out %.1f %%",
                 w->h[w->sel_a], w->d_model / w->h[w->sel_a],
                 w->seed0 + (unsigned long long)w->sel_s, 100.0 * w->acc[w->sel_a][w->sel_s]);
    else
        snprintf(buf, sizeof buf,
                 "Heads shown: the training run's, until the sweep's first run is done");
    view_fit_text(fitted, sizeof fitted, buf, g->all.w, fs, 1, c->measure, c->ud);
    draw_text(c->dl, g->all.x, g->all.y + g->all.h - line, fitted, fs, c->th.accent_text, 1, 0);
}

int view_sweep_hit(const view_layout *L, const view_sweep *w, int x, int y, int *a, int *sd) {
    if (!L || !w || w->nh < 1) return 0;
    const sweep_geo g = geometry(L, w);
    const int reach = g.half + 6; /* a little more than a square: a finger on a board */
    int best = -1, best_s = -1;
    long best_d = -1;
    for (int i = 0; i < w->nh; i++)
        for (int s = 0; s < w->seeds && s < VIEW_SWEEP_MAX_SEEDS; s++) {
            if (!w->done[i][s]) continue;
            /* the seed's own square, or the mean's column (its bar) for this h */
            const int sx = seed_x(&g, i, s), sy = w->diverged[i][s]
                                                      ? g.plot.y + g.plot.h - 2 * g.half
                                                      : y_of(&g, w->acc[i][s]);
            const long dx = x - sx, dy = y - sy, d = dx * dx + dy * dy;
            if (labs(dx) <= reach && labs(dy) <= reach && (best_d < 0 || d < best_d))
                best = i, best_s = s, best_d = d;
        }
    if (best < 0) /* the mean's bar: that h, its first seed done */
        for (int i = 0; i < w->nh && best < 0; i++) {
            if (w->seeds_done[i] == 0 || abs(x - g.x[i]) > reach) continue;
            if (y < y_of(&g, w->hi[i]) - reach || y > y_of(&g, w->lo[i]) + reach) continue;
            for (int s = 0; s < w->seeds && best < 0; s++)
                if (w->done[i][s]) best = i, best_s = s;
        }
    if (best < 0) return 0;
    *a = best;
    *sd = best_s;
    return 1;
}
