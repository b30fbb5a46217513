/* layout_train.c: where training mode puts its panels beside the trained heads:
 * a title, the held-out accuracy and loss curves against steps (every run of
 * the task this session, so they can be compared), the replay's strip of moments
 * under them, their legend, and the bars of accuracy with each head removed. Drawing them is
 * train_panels.c's. */
#include "view_internal.h"

static int imax(int a, int b) {
    return a > b ? a : b;
}

static int imin(int a, int b) {
    return a < b ? a : b;
}

void view_train_layout(view_layout *L, const view_state *s, view_rect a) {
    const int line = L->line, pad = L->pad;
    /* the legend: one line for a single run (nothing else to list), else two */
    const int legend_lines = s->train && s->train->runs <= 1 && s->train->other_runs == 0 ? 1 : 2;
    /* the title at font_title (its line as train_panels.c counts it), the subtitle */
    const int title_line = line * L->font_title / (L->font > 0 ? L->font : 1) + 1;
    L->train_title = (view_rect){a.x, a.y, a.w, title_line + pad / 2 + line + pad / 2};
    int y = a.y + L->train_title.h + pad;
    int rest = a.y + a.h - y;
    /* under the plots: the strip, the legend's two lines, the bars' title and
       numbers, bars at least three lines tall, their labels and the note */
    const int below =
        (line + pad) + (legend_lines * line + pad) + 2 * line + 3 * line + 2 * line + pad;
    int plot_h = imax(3 * line, imin((rest - line) * 28 / 100, (rest - below - pad) / 2));
    int axis_w = imax(4 * line, L->font_small * 4); /* y tick numbers */
    L->train_acc = (view_rect){a.x + axis_w, y + line, a.w - axis_w - pad, plot_h - 2 * line};
    y += plot_h + pad;
    L->train_loss = (view_rect){a.x + axis_w, y + line, a.w - axis_w - pad, plot_h - 2 * line};
    y += plot_h;
    /* the replay's strip: a line of moments on the plots' step axis */
    L->train_strip = (view_rect){a.x + axis_w, y, a.w - axis_w - pad, line};
    y += line + pad;
    L->train_legend = (view_rect){a.x, y, a.w, legend_lines * line};
    y += legend_lines * line + pad;
    int bottom = a.y + a.h;
    L->train_note = (view_rect){a.x, bottom - line, a.w, line};
    /* a title line, then a line for the numbers over the tallest bars */
    const int bars_h = L->train_note.y - pad - 2 * line - (y + 2 * line);
    L->train_bars = (view_rect){a.x + axis_w, y + 2 * line, a.w - axis_w - pad, bars_h};
    if (bars_h < 2 * line) { /* no room for the bars: a line says so, if it has one */
        L->train_bars.h = 0;
        L->train_note =
            y + line <= bottom ? (view_rect){a.x, y, a.w, line} : (view_rect){0, 0, 0, 0};
    }
}
