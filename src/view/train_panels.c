/* train_panels.c: draws training mode's panels: the title (task, step, speed,
 * state), the held-out accuracy and the loss against steps (log scale) for every
 * run of the task (the current one thick, each in its session colour, labelled
 * h=, d=), and one bar per head: held-out
 * accuracy with that head removed, against the full model's. The replay: a
 * strip of the run's moments under the plots, and while one is shown a marker
 * at its step on both plots, its heads, bars and numbers. What is measured
 * is src/learn's; where it goes is layout_train.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

/* The title's line height at font_title (as layout_train.c counts it). */
static int title_line(const view_layout *L) {
    return L->line * L->font_title / (L->font > 0 ? L->font : 1) + 1;
}

/* A run's colour is its session number's, so it keeps it when runs come and go. */
static rgba run_color(const view_ctx *c, const view_train_run *run) {
    return view_head_color(run->number - 1, c->s->look.theme);
}

/* A curve's segment `thick` pixels thick in every backend: a backend may draw a
   slanted line one pixel wide whatever its thickness (SDL's does), so thin copies
   one pixel apart above and below fill it out; under a thick line they vanish. */
static void curve_line(const view_ctx *c, int x0, int y0, int x1, int y1, rgba col, int thick) {
    draw_line(c->dl, x0, y0, x1, y1, col, thick);
    if (x0 == x1 || y0 == y1) return; /* axis-aligned: drawn as thick as asked */
    for (int k = 1; k < thick; k++) {
        const int off = (k + 1) / 2 * (k % 2 ? 1 : -1);
        draw_line(c->dl, x0, y0 + off, x1, y1 + off, col, 1);
    }
}

/* Where step lies on the logarithmic step axis: ln(1 + step) over ln(1 + xmax). */
static int step_x(view_rect r, double step, double xmax) {
    return r.x + (int)lround((double)r.w * log1p(fmax(step, 0.0)) / log1p(xmax));
}

double view_train_xmax(const view_train *t) {
    double xmax = 10.0;
    for (int i = 0; i < t->runs; i++)
        if (t->run[i].points > 0) xmax = fmax(xmax, t->run[i].step[t->run[i].points - 1]);
    return xmax;
}

double view_train_step_at(view_rect r, int x, double xmax) {
    const double f = r.w > 0 ? fmin(fmax((double)(x - r.x) / r.w, 0.0), 1.0) : 0.0;
    return expm1(f * log1p(xmax));
}

/* The shown moment's step on a plot: a vertical line, "step N" at its top. */
static void marker(const view_ctx *c, view_rect r, const view_train *t, double xmax, int label) {
    if (!t->replay || t->moment < 0 || t->moment >= t->moments) return;
    const view_layout *L = c->L;
    const int x = step_x(r, (double)t->moment_step[t->moment], xmax);
    const int w = L->pad / 2 > 3 ? L->pad / 2 : 3;
    draw_fill(c->dl, (view_rect){x - w / 2, r.y, w, r.h}, c->th.accent_text);
    if (!label) return;
    char buf[40];
    snprintf(buf, sizeof buf, "step %ld", t->moment_step[t->moment]);
    const int fs = L->font_small, tw = view_tw(c, buf, fs, 1);
    int lx = x + L->pad / 2 + tw < r.x + r.w ? x + L->pad / 2 : x - L->pad / 2 - tw;
    if (tw + 4 > r.w) return;       /* no room in the plot: the line says where */
    if (lx < r.x + 2) lx = r.x + 2; /* inside the plot, off the ticks' numbers */
    draw_fill(c->dl, (view_rect){lx - 2, r.y + 2, tw + 4, L->line}, c->th.bg);
    draw_text(c->dl, lx, r.y + 2, buf, fs, c->th.accent_text, 1, 0);
}

/* The replay's strip: a dot at each moment's step on the plots' axis, the shown
   one large; "replay" and the keys at its left. */
static void strip(const view_ctx *c, const view_train *t, double xmax) {
    const view_layout *L = c->L;
    const view_rect r = L->train_strip;
    if (t->moments < 1 || r.w < 1) return;
    const int fs = L->font_small, cy = r.y + r.h / 2;
    const char *name = c->s->figure ? "moments" : "replay [ ]";
    const int nw = view_tw(c, name, fs, 0);
    draw_text(c->dl, r.x - nw - L->pad / 2, r.y + (r.h - L->line * fs / L->font) / 2, name, fs,
              c->th.muted, 0, 0);
    draw_line(c->dl, r.x, cy, r.x + r.w, cy, c->th.grid, 1);
    const int dot = r.h / 3 > 3 ? r.h / 3 : 3;
    for (int i = 0; i < t->moments; i++) {
        const int x = step_x(r, (double)t->moment_step[i], xmax);
        draw_fill(c->dl, (view_rect){x - dot / 2, cy - dot / 2, dot, dot}, c->th.muted);
    }
    if (t->replay && t->moment >= 0 && t->moment < t->moments) {
        const int x = step_x(r, (double)t->moment_step[t->moment], xmax), big = r.h * 3 / 4;
        draw_fill(c->dl, (view_rect){x - big / 2, cy - big / 2, big, big}, c->th.accent_text);
    }
}

/* "0", "10", "100", "1k", "10k", "100k", "1M" */
static void step_label(char *buf, size_t len, double v) {
    if (v >= 1e6)
        snprintf(buf, len, "%.0fM", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.0fk", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
}

/* The forms of a plot's title in a NULL-ended list: how many. */
static int title_count(const char *const *titles) {
    int n = 0;
    while (titles[n]) n++;
    return n;
}

/* 1 when a form of titles (at the data's font, bold) fits in w beside cap. */
static int title_fits(const view_ctx *c, const char *const *titles, const char *cap, int w) {
    const int cw = cap[0] ? view_tw(c, cap, c->L->font_small, 0) + c->L->pad : 0;
    for (int i = 0; titles[i]; i++)
        if (view_tw(c, titles[i], c->L->font, 1) + cw <= w) return 1;
    return 0;
}

/* A plot of y(step) for every run in r, y from 0 to ymax; ticks as percent or
   plain; the step axis logarithmic (ticks at 0, 10, 100, ...), so the learning
   phase keeps its room however long the run; titled by the first of titles (long
   to short, NULL-ended) that fits beside cap, the step axis's scale. */
static void plot(const view_ctx *c, view_rect r, const view_train *t, int acc, float ymax,
                 const char *const *titles, const char *cap) {
    const view_layout *L = c->L;
    const int fs = L->font_small;
    /* the title: the longest form that fits beside the step axis's scale */
    char head[64] = "";
    const int cw = cap[0] ? view_tw(c, cap, fs, 0) + L->pad : 0;
    view_fit_first(c, head, sizeof head, titles, title_count(titles), r.w - cw, L->font, 1);
    draw_text(c->dl, r.x, r.y - L->line, head, L->font, c->th.text, 1, 0);
    draw_frame(c->dl, (view_rect){r.x - 1, r.y - 1, r.w + 2, r.h + 2}, c->th.grid, 1);
    const double xmax = view_train_xmax(t);
    char buf[48];
    const int tick_line = L->line * fs / L->font;
    for (int k = 0; k <= 2; k++) { /* y ticks: 0, half, max; labels a line apart at least */
        float v = ymax * (float)k / 2.0f;
        int y = r.y + r.h - (int)lroundf((float)r.h * (float)k / 2.0f);
        const int step = k == 2 && r.h < 2 * tick_line ? r.h : r.h / 2;
        if (k > 0 && step < tick_line) {
            draw_line(c->dl, r.x, y, r.x + r.w, y, c->th.grid, 1);
            continue;
        }
        if (acc)
            snprintf(buf, sizeof buf, "%.0f %%", 100.0 * v);
        else
            snprintf(buf, sizeof buf, "%.2g", (double)v);
        int w = view_tw(c, buf, fs, 0);
        draw_text(c->dl, r.x - w - L->pad / 2, y - L->line * fs / L->font / 2, buf, fs, c->th.muted,
                  0, 0);
        draw_line(c->dl, r.x, y, r.x + r.w, y, c->th.grid, 1);
    }
    /* x ticks at 0 and the powers of ten, labels where they do not overlap; the
       axis names its scale at the right */
    const int cap_w = view_tw(c, cap, fs, 0), ty = r.y + r.h + 2;
    int right_free = r.x + r.w, last_end = r.x - L->pad;
    for (double v = 0.0; v <= xmax; v = v < 1.0 ? 10.0 : v * 10.0) {
        const int x = step_x(r, v, xmax);
        draw_line(c->dl, x, r.y, x, r.y + r.h, c->th.grid, 1);
        step_label(buf, sizeof buf, v);
        const int w = view_tw(c, buf, fs, 0), lx = v == 0.0 ? x : x - w / 2;
        if (lx > last_end + L->pad / 2 && lx + w < right_free) {
            draw_text(c->dl, lx, ty, buf, fs, c->th.muted, 0, 0);
            last_end = lx + w;
        }
    }
    if (cap[0]) /* on the title's line, at the right */
        draw_text(c->dl, r.x + r.w - cap_w, r.y - L->line + (L->font - fs), cap, fs, c->th.muted, 0,
                  0);
    for (int i = 0; i < t->runs; i++) {
        const view_train_run *run = &t->run[i];
        rgba col = run_color(c, run);
        int px = 0, py = 0, have = 0;
        for (int p = 0; p < run->points; p++) {
            float v = acc ? run->acc[p] : run->loss[p];
            if (!isfinite(v)) continue;
            int x = step_x(r, run->step[p], xmax);
            int y = r.y + r.h - (int)lroundf((float)r.h * fminf(v, ymax) / ymax);
            /* legible from the back of a room: 3 and 4 pixels at 100 %, the current run
               thicker */
            const int cur = L->pad / 2 > 3 ? L->pad / 2 : 3,
                      other = L->pad * 3 / 8 > 2 ? L->pad * 3 / 8 : 2;
            if (have) curve_line(c, px, py, x, y, col, i == t->runs - 1 ? cur : other);
            px = x, py = y, have = 1;
        }
    }
    marker(c, r, t, xmax, acc);
}

/* Run i's label as the legend writes it: whole, or without the task's name (the
   title names it) where the whole is wider than w. */
static const char *run_label(const view_ctx *c, const view_train *t, int i, int w) {
    const char *label = t->run[i].label, *sp = strchr(label, ' ');
    const int cur = i == t->runs - 1;
    if (sp && view_tw(c, label, c->L->font_small, cur) + 3 * c->L->pad > w) return sp + 1;
    return label;
}

/* Lays out (draw 0) or draws the legend with the newest `keep` runs and `more`;
   1 when it fits the legend's lines. */
static int legend_flow(const view_ctx *c, const view_train *t, int keep, const char *more,
                       int draw) {
    const view_layout *L = c->L;
    const view_rect r = L->train_legend;
    const int fs = L->font_small;
    int x = r.x, y = r.y;
    for (int i = t->runs - keep; i < t->runs; i++) {
        const char *label = run_label(c, t, i, r.w);
        const int cur = i == t->runs - 1;
        int w = view_tw(c, label, fs, cur);
        if (x > r.x && x + 3 * L->pad + w > r.x + r.w) x = r.x, y += L->line; /* next line */
        if (y + L->line > r.y + r.h || 3 * L->pad + w > r.w) return 0;
        if (draw) {
            rgba col = run_color(c, &t->run[i]);
            draw_fill(c->dl, (view_rect){x, y + L->line / 2 - 1, 2 * L->pad, cur ? 4 : 3}, col);
            draw_text(c->dl, x + 2 * L->pad + L->pad / 2, y, label, fs, col, cur, 0);
        }
        x += 3 * L->pad + w + L->gap;
    }
    if (more[0]) {
        const int w = view_tw(c, more, fs, 0);
        if (x > r.x && x + w > r.x + r.w) x = r.x, y += L->line;
        if (y + L->line > r.y + r.h || w > r.w) return 0;
        if (draw) draw_text(c->dl, x, y, more, fs, c->th.muted, 0, 0);
    }
    return 1;
}

/* The task's runs in their curves' colours, oldest first, flowed over the
   legend's lines (the current one bold); where not all fit, the newest and how
   many more; the runs of other tasks counted, in a shorter form where needed. */
static void legend(const view_ctx *c, const view_train *t) {
    char more[96], brief[64];
    more[0] = brief[0] = '\0';
    if (t->other_runs > 0) {
        snprintf(more, sizeof more, "(+%d run%s of other tasks: Tab)", t->other_runs,
                 t->other_runs == 1 ? "" : "s");
        snprintf(brief, sizeof brief, "+%d other (Tab)", t->other_runs);
    }
    if (legend_flow(c, t, t->runs, more, 0) || (brief[0] && legend_flow(c, t, t->runs, brief, 0))) {
        legend_flow(c, t, t->runs, legend_flow(c, t, t->runs, more, 0) ? more : brief, 1);
        return;
    }
    for (int keep = t->runs - 1; keep >= 0; keep--) {
        snprintf(more, sizeof more, "+%d more of this task", t->runs - keep);
        snprintf(brief, sizeof brief, "+%d more", t->runs - keep);
        if (legend_flow(c, t, keep, more, 0)) {
            legend_flow(c, t, keep, more, 1);
            return;
        }
        if (legend_flow(c, t, keep, brief, 0)) {
            legend_flow(c, t, keep, brief, 1);
            return;
        }
    }
}

static void draw_bars_title(const view_ctx *c, const view_train *t);
static void draw_bar_chart(const view_ctx *c, const view_train *t);
static void draw_prune_note(const view_ctx *c, const view_train *t);

static void bars(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    const view_rect r = L->train_bars;
    const int fs = L->font_small, n = t->layers * t->h;
    char buf[200];
    if (r.h <= 0) { /* the layout had no room for them: said so where it has a line */
        if (L->train_note.w <= 0) return;
        const char *const forms[3] = {"no room for the bars of each head removed at this size",
                                      "no room for the pruning bars", "no pruning bars"};
        view_fit_first(c, buf, sizeof buf, forms, 3, L->train_note.w, fs, 0);
        draw_text(c->dl, L->train_note.x, L->train_note.y, buf, fs, c->th.muted, 0, 0);
        return;
    }
    draw_bars_title(c, t);
    char b1[200], fitted[200];
    if (t->replay && !t->pruning_valid && t->pruning_step == t->step) {
        /* a moment of the replay whose bars the trainer measures now (replay.h) */
        snprintf(buf, sizeof buf, "measuring the bars of step %ld: each head removed in turn",
                 t->step);
        snprintf(b1, sizeof b1, "measuring the bars of step %ld", t->step);
        const char *const forms[3] = {buf, b1, "measuring"};
        view_fit_first(c, fitted, sizeof fitted, forms, 3, r.w, fs, 0);
        draw_text(c->dl, r.x, r.y, fitted, fs, c->th.muted, 0, 0);
        return;
    }
    if (!t->pruning_valid || n < 1 || !t->ablated_acc) {
        const char *const forms[4] = {"measured every second while training, and when paused",
                                      "measured each second and on pause", "measured each second",
                                      "not yet measured"};
        view_fit_first(c, fitted, sizeof fitted, forms, 4, r.w + (r.x - L->train_legend.x), fs, 0);
        draw_text(c->dl, L->train_legend.x, r.y, fitted, fs, c->th.muted, 0, 0);
        return;
    }
    draw_bar_chart(c, t);
    draw_prune_note(c, t);
}

/* The bars' title, over their left labels: what they show and the full model's
 * accuracy, shorter forms where it does not fit. */
static void draw_bars_title(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    const view_rect r = L->train_bars;
    char buf[200], b1[200], b2[200];
    snprintf(buf, sizeof buf, "Held-out accuracy with one head removed (full model: %.1f %%)",
             100.0 * t->acc);
    snprintf(b1, sizeof b1, "Accuracy without one head (full model: %.1f %%)", 100.0 * t->acc);
    snprintf(b2, sizeof b2, "Without one head (full: %.1f %%)", 100.0 * t->acc);
    char b3[80];
    snprintf(b3, sizeof b3, "One head out (full %.1f %%)", 100.0 * t->acc);
    char fitted[200];
    {
        const char *const forms[6] = {buf, b1, b2, b3, "Without one head", "One head out"};
        view_fit_first(c, fitted, sizeof fitted, forms, 6, r.w + (r.x - L->train_legend.x), L->font,
                       1);
    }
    draw_text(c->dl, L->train_legend.x, r.y - 2 * L->line, fitted, L->font, c->th.text, 1, 0);
}

/* Where accuracy v goes on the bars' axis in r, from lo (bottom) up lo + span. */
static int bar_y(view_rect r, float v, float lo, float span) {
    return r.y + r.h - (int)lroundf((float)r.h * fmaxf(0.0f, fminf(1.0f, (v - lo) / span)));
}

/* The bars: the accuracy without each head in turn, in its colour (pale where it
 * costs under a point), over the full model's line, their axis's ends labelled. */
static void draw_bar_chart(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    const view_rect r = L->train_bars;
    const int fs = L->font_small, n = t->layers * t->h;
    char buf[200];
    draw_frame(c->dl, (view_rect){r.x - 1, r.y - 1, r.w + 2, r.h + 2}, c->th.grid, 1);
    /* the axis: from a multiple of 10 % at least 5 points under the lowest bar (and
       under the full model) up to 100 %, so 97.5 against 100 shows; its ends labelled */
    float low = t->acc;
    for (int i = 0; i < n; i++) low = fminf(low, t->ablated_acc[i]);
    const float lo = fmaxf(0.0f, floorf((low - 0.05f) * 10.0f) / 10.0f);
    const float span = 1.0f - lo;
    {
        char top[16], bottom[16];
        snprintf(top, sizeof top, "100%%");
        snprintf(bottom, sizeof bottom, "%.0f%%", 100.0 * lo);
        const int line_s = L->line * fs / L->font;
        const int wt = view_tw(c, top, fs, 0), wb = view_tw(c, bottom, fs, 0);
        if (r.x - L->train_legend.x >= (wt > wb ? wt : wb) + L->pad) {
            draw_text(c->dl, r.x - wt - L->pad / 2, r.y - line_s / 2, top, fs, c->th.muted, 0, 0);
            draw_text(c->dl, r.x - wb - L->pad / 2, r.y + r.h - line_s / 2, bottom, fs, c->th.muted,
                      0, 0);
        }
    }
    int full_y = bar_y(r, t->acc, lo, span);
    /* the full model's line under the numbers, which are backed so that it never
       runs through them (a 98.2 % bar's number sits on the 100 % line) */
    draw_line(c->dl, r.x, full_y, r.x + r.w, full_y, c->th.accent_text, 2);
    int slot = r.w / n, bw = slot * 7 / 10 > 1 ? slot * 7 / 10 : 1;
    for (int i = 0; i < n; i++) {
        float a = t->ablated_acc[i];
        int bh = r.y + r.h - bar_y(r, a, lo, span);
        int x = r.x + i * slot + (slot - bw) / 2;
        int head = i % t->h;
        rgba col = view_head_color(head, c->s->look.theme);
        const int pale = t->acc - a < 0.01f; /* costs under a point: could be pruned */
        if (pale) col.a = 110;
        draw_fill(c->dl, (view_rect){x, r.y + r.h - bh, bw, bh}, col);
        if (slot >= view_tw(c, "L2 h8", fs, 0) + 2) {
            snprintf(buf, sizeof buf, t->layers > 1 ? "L%d h%d" : "h%d",
                     t->layers > 1 ? i / t->h + 1 : head + 1, head + 1);
            int w = view_tw(c, buf, fs, 0);
            draw_text(c->dl, x + (bw - w) / 2, r.y + r.h + 2, buf, fs, c->th.text, 0, 0);
            /* one decimal where the slot has room: a pale 99.6 and a solid 98.9 differ */
            snprintf(buf, sizeof buf, "%.1f%%", 100.0 * a);
            if (view_tw(c, buf, fs, 0) + 2 > slot) snprintf(buf, sizeof buf, "%.0f%%", 100.0 * a);
            w = view_tw(c, buf, fs, 0);
            const int line_s = L->line * fs / L->font, ty = r.y + r.h - bh - line_s - 1;
            draw_fill(c->dl, (view_rect){x + (bw - w) / 2 - 2, ty, w + 4, line_s}, c->th.bg);
            draw_text(c->dl, x + (bw - w) / 2, ty, buf, fs, pale ? c->th.muted : c->th.text, 0, 0);
        }
    }
}

/* The note under the bars: which heads could go together and what is left, or why
 * none can. */
static void draw_prune_note(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    const int fs = L->font_small;
    char buf[200], b1[200], b2[200], b3[80], fitted[200];
    if (t->pruned == 0 && t->h * t->layers == 1 && t->ablated_acc) { /* one head does it all */
        snprintf(buf, sizeof buf, "The only head: without it %.0f %% is left",
                 100.0 * t->ablated_acc[0]);
        snprintf(b1, sizeof b1, "Without the only head: %.0f %%", 100.0 * t->ablated_acc[0]);
        snprintf(b2, sizeof b2, "Without it: %.0f %%", 100.0 * t->ablated_acc[0]);
    } else if (t->pruned == 0) {
        snprintf(buf, sizeof buf, "No head can go at under 1 point: each one does part of the job");
        snprintf(b1, sizeof b1, "No head can go at under 1 point");
        snprintf(b2, sizeof b2, "None can go");
    } else {
        snprintf(buf, sizeof buf,
                 "Remove the %d pale head%s (each costs under 1 point): %.1f %% left (step %ld)",
                 t->pruned, t->pruned == 1 ? "" : "s", 100.0 * t->pruned_acc, t->pruning_step);
        snprintf(b1, sizeof b1, "Remove the %d pale head%s: %.1f %% left", t->pruned,
                 t->pruned == 1 ? "" : "s", 100.0 * t->pruned_acc);
        snprintf(b2, sizeof b2, "%d pale gone: %.1f %%", t->pruned, 100.0 * t->pruned_acc);
    }
    b3[0] = '\0';
    if (t->pruned > 0)
        snprintf(b3, sizeof b3, "%d pale: %.1f %%", t->pruned, 100.0 * t->pruned_acc);
    {
        const char *const forms[4] = {buf, b1, b2, b3};
        view_fit_first(c, fitted, sizeof fitted, forms, b3[0] ? 4 : 3, L->train_note.w, fs, 1);
    }
    draw_text(c->dl, L->train_note.x, L->train_note.y, fitted, fs, c->th.accent_text, 1, 0);
}

static void draw_train_title(const view_ctx *c, const view_train *t);
static void draw_train_subtitle(const view_ctx *c, const view_train *t);
static void draw_train_plots(const view_ctx *c, const view_train *t);

void view_draw_train(const view_ctx *c) {
    const view_train *t = c->s->train;
    if (!t) return;
    if (c->s->sweep) { /* the sweep of h (H) in the curves' place */
        view_draw_sweep(c);
        return;
    }
    draw_train_title(c, t);
    draw_train_subtitle(c, t);
    draw_train_plots(c, t);
    strip(c, t, view_train_xmax(t));
    legend(c, t);
    bars(c, t);
}

/* The title line: the task and the run's state (running, paused, stopped and why,
 * a replay's moment; a figure's what was trained), shorter forms where it does not fit. */
static void draw_train_title(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    char buf[240], fitted[240];
    /* short forms, each saying the state still: s1 shorter than what follows the
       task's name, s2 the shortest */
    char s1[120] = "", s2[80] = "", s3[40] = "";
    if (t->error && t->error[0]) {
        snprintf(buf, sizeof buf, "Training %s: %s", t->task, t->error);
        snprintf(s1, sizeof s1, "%s: could not start", t->task);
        snprintf(s2, sizeof s2, "could not start");
    } else if (t->replay && c->s->figure) { /* a page of the flip-book */
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 step %ld of %ld", t->task, t->step,
                 t->live_step);
        snprintf(s2, sizeof s2, "step %ld", t->step);
    } else if (t->replay) {
        snprintf(buf, sizeof buf, "Replay of %s \xC2\xB7 step %ld of %ld (moment %d of %d)",
                 t->task, t->step, t->live_step, t->moment + 1, t->moments);
        snprintf(s1, sizeof s1, "replay: step %ld of %ld", t->step, t->live_step);
        snprintf(s2, sizeof s2, "replay: step %ld", t->step);
        snprintf(s3, sizeof s3, "replay");
    } else if (c->s->figure) { /* a figure: what was trained, no state of the app */
        snprintf(buf, sizeof buf, "Trained on %s \xC2\xB7 %ld steps", t->task, t->step);
        snprintf(s2, sizeof s2, "%s, %ld steps", t->task, t->step);
    } else if (t->running && t->rate > 0) { /* the rate measured, not the one asked for */
        snprintf(buf, sizeof buf,
                 "Training %s \xC2\xB7 step %ld \xC2\xB7 slow motion, %.0f steps/s", t->task,
                 t->step, (double)t->steps_per_s);
        snprintf(s1, sizeof s1, "step %ld \xC2\xB7 %.0f steps/s", t->step, (double)t->steps_per_s);
        snprintf(s2, sizeof s2, "step %ld \xC2\xB7 slow", t->step);
        snprintf(s3, sizeof s3, "step %ld", t->step);
    } else if (t->running && t->rate < 0) { /* the class pace: the rate measured */
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 step %ld \xC2\xB7 class pace, %.0f steps/s",
                 t->task, t->step, (double)t->steps_per_s);
        snprintf(s1, sizeof s1, "step %ld \xC2\xB7 %.0f steps/s", t->step, (double)t->steps_per_s);
        snprintf(s2, sizeof s2, "step %ld", t->step);
    } else if (t->running) {
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 step %ld \xC2\xB7 full speed, %.0f steps/s",
                 t->task, t->step, (double)t->steps_per_s);
        snprintf(s1, sizeof s1, "step %ld \xC2\xB7 %.0f steps/s", t->step, (double)t->steps_per_s);
        snprintf(s2, sizeof s2, "step %ld", t->step);
    } else if (t->stop == 1) { /* stopped by itself: no rate, since no step is being taken */
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 stopped at step %ld: converged", t->task,
                 t->stop_step);
        snprintf(s1, sizeof s1, "converged at step %ld", t->stop_step);
        snprintf(s2, sizeof s2, "converged");
    } else if (t->stop == 3) { /* paused by the divergence rule: no claim of a result */
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 diverged at step %ld (loss %.3g): paused",
                 t->task, t->stop_step, (double)t->stop_loss);
        snprintf(s1, sizeof s1, "diverged at step %ld: paused", t->stop_step);
        snprintf(s2, sizeof s2, "diverged");
    } else if (t->stop == 2) {
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 stopped at step %ld: its budget", t->task,
                 t->stop_step);
        snprintf(s1, sizeof s1, "budget spent at step %ld", t->stop_step);
        snprintf(s2, sizeof s2, "budget spent");
    } else {
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 step %ld \xC2\xB7 paused%s", t->task,
                 t->step, t->rate > 0 ? " (slow motion on)" : "");
        snprintf(s1, sizeof s1, "step %ld \xC2\xB7 paused", t->step);
        snprintf(s2, sizeof s2, "paused");
    }
    /* where it does not fit: from the task's name on, then what follows it, then
       the short forms */
    {
        const char *from_task = strstr(buf, t->task);
        const char *after = from_task ? strstr(from_task, " \xC2\xB7 ") : NULL;
        const char *forms[6] = {buf, from_task ? from_task : buf,
                                after ? after + 4 : (from_task ? from_task : buf)};
        int count = 3;
        if (s1[0]) forms[count++] = s1;
        if (s2[0]) forms[count++] = s2;
        if (s3[0]) forms[count++] = s3;
        view_fit_first(c, fitted, sizeof fitted, forms, count, L->train_title.w, L->font_title, 1);
    }
    draw_text(c->dl, L->train_title.x, L->train_title.y, fitted, L->font_title, c->th.text, 1, 0);
}

/* The line under the title: the keys (none in a figure), the layer shown and the
 * task's rule, shorter forms where it does not fit. */
static void draw_train_subtitle(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    char buf[240], fitted[240];
    char layer_what[240]; /* the subtitle without its keys, which the buttons and F1 also give */
    snprintf(layer_what, sizeof layer_what, "layer %d of %d (Y) \xC2\xB7 %s", t->layer + 1,
             t->layers, t->what);
    if (c->s->figure)
        snprintf(buf, sizeof buf, "layer %d of %d \xC2\xB7 %s", t->layer + 1, t->layers, t->what);
    else if (t->replay)
        snprintf(buf, sizeof buf,
                 "[ back \xC2\xB7 ] forward \xC2\xB7 End live \xC2\xB7 L goes on \xC2\xB7 "
                 "layer %d of %d (Y) \xC2\xB7 %s",
                 t->layer + 1, t->layers, t->what);
    else
        snprintf(
            buf, sizeof buf,
            "L pauses / goes on \xC2\xB7 S speed \xC2\xB7 . one step \xC2\xB7 [ replay \xC2\xB7 "
            "layer %d of %d (Y) \xC2\xB7 %s",
            t->layer + 1, t->layers, t->what);
    {
        char what_short[200]; /* the task's rule without what it shows: up to its colon */
        snprintf(what_short, sizeof what_short, "%s", t->what);
        char *colon = strchr(what_short, ':');
        if (colon) *colon = '\0';
        char layer_short[240], layer_only[40]; /* the layer first: figures name it */
        snprintf(layer_short, sizeof layer_short, "layer %d of %d \xC2\xB7 %s", t->layer + 1,
                 t->layers, what_short);
        snprintf(layer_only, sizeof layer_only, "layer %d of %d", t->layer + 1, t->layers);
        const char *const win[4] = {buf, layer_what, layer_short, layer_only};
        const char *const fig[3] = {buf, layer_short, layer_only};
        if (c->s->figure)
            view_fit_first(c, fitted, sizeof fitted, fig, 3, L->train_title.w, L->font_small, 0);
        else
            view_fit_first(c, fitted, sizeof fitted, win, 4, L->train_title.w, L->font_small, 0);
    }
    draw_text(c->dl, L->train_title.x, L->train_title.y + title_line(L) + L->pad / 2, fitted,
              L->font_small, c->th.muted, 0, 0);
}

/* The accuracy and loss plots, the step axis's scale in both titles' one form. */
static void draw_train_plots(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    static const char *const acc_titles[] = {"Held-out accuracy", "Accuracy", NULL};
    static const char *const loss_titles[] = {"Training loss (cross-entropy)", "Training loss",
                                              "Loss", NULL};
    /* the step axis's scale on both plots' title lines, in one form: the longest
       beside which both titles fit (a log axis read as a linear one misleads) */
    static const char *const caps[] = {"steps (log scale)", "log steps", ""};
    int ci = 0;
    while (ci < 2 && !(title_fits(c, acc_titles, caps[ci], L->train_acc.w) &&
                       title_fits(c, loss_titles, caps[ci], L->train_loss.w)))
        ci++;
    plot(c, L->train_acc, t, 1, 1.0f, acc_titles, caps[ci]);
    float lmax = 0.1f;
    for (int i = 0; i < t->runs; i++)
        for (int p = 0; p < t->run[i].points; p++)
            if (isfinite(t->run[i].loss[p])) lmax = fmaxf(lmax, t->run[i].loss[p]);
    plot(c, L->train_loss, t, 0, lmax, loss_titles, caps[ci]);
}
