/* train_panels.c: draws training mode's panels: the title (task, step, speed,
 * state), the held-out accuracy and the loss against steps for every run (the
 * current one thick, each labelled h=, d=), and one bar per head: held-out
 * accuracy with that head removed, against the full model's. What is measured
 * is src/learn's; where it goes is layout_train.c's. */
#include <math.h>
#include <stdio.h>

#include "view_internal.h"

static rgba run_color(const view_ctx *c, int i, int runs) {
    /* the current run in the accent, earlier runs in head colours */
    return i == runs - 1 ? c->th.accent_text : view_head_color(i + 1, c->s->theme);
}

/* A plot of y(step) for every run in r, y from 0 to ymax; ticks as percent or plain. */
static void plot(const view_ctx *c, view_rect r, const view_train *t, int acc, float ymax,
                 const char *title) {
    const view_layout *L = c->L;
    const int fs = L->font_small;
    draw_text(c->dl, r.x, r.y - L->line, title, L->font, c->th.text, 1, 0);
    draw_frame(c->dl, (view_rect){r.x - 1, r.y - 1, r.w + 2, r.h + 2}, c->th.grid, 1);
    float xmax = 1.0f;
    for (int i = 0; i < t->runs; i++)
        if (t->run[i].points > 0) xmax = fmaxf(xmax, t->run[i].step[t->run[i].points - 1]);
    char buf[48];
    for (int k = 0; k <= 2; k++) { /* y ticks: 0, half, max */
        float v = ymax * (float)k / 2.0f;
        int y = r.y + r.h - (int)lroundf((float)r.h * (float)k / 2.0f);
        if (acc)
            snprintf(buf, sizeof buf, "%.0f %%", 100.0 * v);
        else
            snprintf(buf, sizeof buf, "%.2g", (double)v);
        int w = view_tw(c, buf, fs, 0);
        draw_text(c->dl, r.x - w - L->pad / 2, y - L->line * fs / L->font / 2, buf, fs, c->th.muted,
                  0, 0);
        draw_line(c->dl, r.x, y, r.x + r.w, y, c->th.grid, 1);
    }
    snprintf(buf, sizeof buf, "%.0f steps", (double)xmax);
    int w = view_tw(c, buf, fs, 0);
    draw_text(c->dl, r.x + r.w - w, r.y + r.h + 2, buf, fs, c->th.muted, 0, 0);
    for (int i = 0; i < t->runs; i++) {
        const view_train_run *run = &t->run[i];
        rgba col = run_color(c, i, t->runs);
        int px = 0, py = 0;
        for (int p = 0; p < run->points; p++) {
            float v = acc ? run->acc[p] : run->loss[p];
            if (!isfinite(v)) continue;
            int x = r.x + (int)lroundf((float)r.w * run->step[p] / xmax);
            int y = r.y + r.h - (int)lroundf((float)r.h * fminf(v, ymax) / ymax);
            if (p > 0) draw_line(c->dl, px, py, x, y, col, i == t->runs - 1 ? 3 : 2);
            px = x, py = y;
        }
    }
}

/* The runs' names in their curves' colours, newest first. */
static void legend(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    const view_rect r = L->train_legend;
    const int fs = L->font_small;
    int x = r.x;
    for (int i = t->runs - 1; i >= 0; i--) {
        const char *label = t->run[i].label;
        int w = view_tw(c, label, fs, i == t->runs - 1);
        if (x + 3 * L->pad + w > r.x + r.w) break;
        rgba col = run_color(c, i, t->runs);
        draw_fill(c->dl, (view_rect){x, r.y + L->line / 2 - 1, 2 * L->pad, 3}, col);
        draw_text(c->dl, x + 2 * L->pad + L->pad / 2, r.y, label, fs, col, i == t->runs - 1, 0);
        x += 3 * L->pad + w + L->gap;
    }
}

static void bars(const view_ctx *c, const view_train *t) {
    const view_layout *L = c->L;
    const view_rect r = L->train_bars;
    const int fs = L->font_small, n = t->layers * t->h;
    char buf[200];
    snprintf(buf, sizeof buf, "Held-out accuracy with one head removed (full model: %.1f %%)",
             100.0 * t->acc);
    char fitted[200];
    view_fit_text(fitted, sizeof fitted, buf, r.w + (r.x - L->train_legend.x), L->font, 1,
                  c->measure, c->ud);
    draw_text(c->dl, L->train_legend.x, r.y - 2 * L->line, fitted, L->font, c->th.text, 1, 0);
    if (!t->pruning_valid || n < 1 || !t->ablated_acc) {
        draw_text(c->dl, r.x, r.y, "measured every second while training, and when paused", fs,
                  c->th.muted, 0, 0);
        return;
    }
    draw_frame(c->dl, (view_rect){r.x - 1, r.y - 1, r.w + 2, r.h + 2}, c->th.grid, 1);
    int full_y = r.y + r.h - (int)lroundf((float)r.h * t->acc);
    int slot = r.w / n, bw = slot * 7 / 10 > 1 ? slot * 7 / 10 : 1;
    for (int i = 0; i < n; i++) {
        float a = t->ablated_acc[i];
        int bh = (int)lroundf((float)r.h * fmaxf(0.0f, fminf(1.0f, a)));
        int x = r.x + i * slot + (slot - bw) / 2;
        int head = i % t->h;
        rgba col = view_head_color(head, c->s->theme);
        if (t->acc - a < 0.01f) col.a = 110; /* costs under a point: could be pruned */
        draw_fill(c->dl, (view_rect){x, r.y + r.h - bh, bw, bh}, col);
        if (slot >= view_tw(c, "L2 h8", fs, 0) + 2) {
            snprintf(buf, sizeof buf, t->layers > 1 ? "L%d h%d" : "h%d",
                     t->layers > 1 ? i / t->h + 1 : head + 1, head + 1);
            int w = view_tw(c, buf, fs, 0);
            draw_text(c->dl, x + (bw - w) / 2, r.y + r.h + 2, buf, fs, c->th.text, 0, 0);
            snprintf(buf, sizeof buf, "%.0f%%", 100.0 * a);
            w = view_tw(c, buf, fs, 0);
            draw_text(c->dl, x + (bw - w) / 2, r.y + r.h - bh - L->line * fs / L->font - 1, buf, fs,
                      c->th.text, 0, 0);
        }
    }
    draw_line(c->dl, r.x, full_y, r.x + r.w, full_y, c->th.accent_text, 2);
    if (t->pruned == 0)
        snprintf(buf, sizeof buf, "No head can go at under 1 point: each one does part of the job");
    else
        snprintf(buf, sizeof buf,
                 "Remove the %d head%s that each cost under 1 point: %.1f %% left (step %ld)",
                 t->pruned, t->pruned == 1 ? "" : "s", 100.0 * t->pruned_acc, t->pruning_step);
    view_fit_text(fitted, sizeof fitted, buf, L->train_note.w, fs, 1, c->measure, c->ud);
    draw_text(c->dl, L->train_note.x, L->train_note.y, fitted, fs, c->th.accent_text, 1, 0);
}

void view_draw_train(const view_ctx *c) {
    const view_train *t = c->s->train;
    const view_layout *L = c->L;
    if (!t) return;
    char buf[240], fitted[240];
    if (t->error && t->error[0])
        snprintf(buf, sizeof buf, "Training %s: %s", t->task, t->error);
    else if (c->s->figure) /* a figure: what was trained, no state of the app */
        snprintf(buf, sizeof buf, "Trained on %s \xC2\xB7 %ld steps", t->task, t->step);
    else if (t->running)
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 step %ld \xC2\xB7 %.0f/s \xC2\xB7 running",
                 t->task, t->step, (double)t->steps_per_s);
    else /* paused: no rate, since no step is being taken */
        snprintf(buf, sizeof buf, "Training %s \xC2\xB7 step %ld \xC2\xB7 paused", t->task,
                 t->step);
    view_fit_text(fitted, sizeof fitted, buf, L->train_title.w, L->font_title, 1, c->measure,
                  c->ud);
    draw_text(c->dl, L->train_title.x, L->train_title.y, fitted, L->font_title, c->th.text, 1, 0);
    if (c->s->figure)
        snprintf(buf, sizeof buf, "layer %d of %d \xC2\xB7 %s", t->layer + 1, t->layers, t->what);
    else
        snprintf(buf, sizeof buf, "L pauses / resumes \xC2\xB7 layer %d of %d (Y) \xC2\xB7 %s",
                 t->layer + 1, t->layers, t->what);
    view_fit_text(fitted, sizeof fitted, buf, L->train_title.w, L->font_small, 0, c->measure,
                  c->ud);
    draw_text(c->dl, L->train_title.x, L->train_title.y + L->line + L->pad / 2, fitted,
              L->font_small, c->th.muted, 0, 0);
    plot(c, L->train_acc, t, 1, 1.0f, "Held-out accuracy");
    float lmax = 0.1f;
    for (int i = 0; i < t->runs; i++)
        for (int p = 0; p < t->run[i].points; p++)
            if (isfinite(t->run[i].loss[p])) lmax = fmaxf(lmax, t->run[i].loss[p]);
    plot(c, L->train_loss, t, 0, lmax, "Training loss (cross-entropy)");
    legend(c, t);
    bars(c, t);
}
