/* cells.c: numbers written in the cells of a heatmap, where they fit legibly,
 * in black or white by the cell's own brightness. Which matrix and where is the
 * panels'; the colours are the colormaps'. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

/* Perceived brightness of a colour, 0..255. */
static int luma(rgba c) {
    return (299 * c.r + 587 * c.g + 114 * c.b) / 1000;
}

rgba view_ink_on(rgba bg) {
    return luma(bg) > 140 ? (rgba){0, 0, 0, 255} : (rgba){255, 255, 255, 255};
}

int view_cell_values_fit(const view_ctx *c, view_rect map, int rows, int cols) {
    if (!c->s->look.values || rows < 1 || cols < 1) return 0;
    int cw = map.w / cols, ch = map.h / rows;
    int size = ch * 45 / 100;
    if (size > c->L->font_small) size = c->L->font_small;
    if (size < 9) return 0; /* smaller is not legible from the back of a room */
    const int need = view_tw(c, "\xE2\x88\x92" /* minus */ "0.00", size, 0) + 2;
    return need <= cw ? size : 0;
}

int view_weight_values_fit(const view_ctx *c, view_rect map, int n) {
    if (!c->s->look.values || n < 1) return 0;
    int cw = map.w / n, ch = map.h / n;
    int size = ch * 45 / 100;
    if (size > c->L->font_small) size = c->L->font_small;
    if (size < 9) return 0;
    return view_tw(c, ".00", size, 0) + 2 <= cw ? size : 0;
}

/* A cell's number in at most the room of "−0.00" (what view_cell_values_fit measures):
   two decimals under 10 ("0", "−0.01", "3.43"), three digits above ("12.3", "128"); the
   window and a deck print the same. */
static void cell_number(char *buf, size_t len, float v) {
    const double a = fabs((double)v);
    if (a < 0.005)
        snprintf(buf, len, "0");
    else if (a < 9.995)
        snprintf(buf, len, "%s%.2f", v < 0 ? "\xE2\x88\x92" : "", a);
    else
        view_format_number(buf, len, v);
}

static void draw_values(const view_ctx *c, view_rect map, const float *data, int rows, int cols,
                        int ld, int weights, const float *mask, const rgba *px, int px_w,
                        int px_h) {
    /* weights are in [0, 1]: ".42" says it in less room */
    int size =
        weights ? view_weight_values_fit(c, map, rows) : view_cell_values_fit(c, map, rows, cols);
    if (!size || px_w != cols || px_h != rows || !px || !data) return;
    const int line = c->L->line * size / c->L->font;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            if (mask && mask[(size_t)r * ld + k] == -INFINITY) continue; /* hatched */
            char buf[24];
            cell_number(buf, sizeof buf, data[(size_t)r * ld + k]);
            if (weights) { /* a weight: ".42", and "1" for certainty */
                float v = data[(size_t)r * ld + k];
                snprintf(buf, sizeof buf, "%.2f", (double)v);
                if (buf[0] == '0') memmove(buf, buf + 1, strlen(buf));
                if (v >= 0.995f) snprintf(buf, sizeof buf, "1");
            }
            int x0 = map.x + (int)((long)k * map.w / cols),
                x1 = map.x + (int)((long)(k + 1) * map.w / cols);
            int y0 = map.y + (int)((long)r * map.h / rows),
                y1 = map.y + (int)((long)(r + 1) * map.h / rows);
            int w = view_tw(c, buf, size, 0);
            rgba bg = px[(size_t)r * px_w + k];
            rgba fg = view_ink_on(bg);
            draw_text(c->dl, (x0 + x1 - w) / 2, (y0 + y1 - line) / 2, buf, size, fg, 0, 0);
        }
}

void view_draw_cell_values(const view_ctx *c, view_rect map, const float *data, int rows, int cols,
                           int ld, const rgba *px, int px_w, int px_h) {
    draw_values(c, map, data, rows, cols, ld, 0, NULL, px, px_w, px_h);
}

void view_draw_weight_values(const view_ctx *c, view_rect map, const float *attn, int n,
                             const float *scores, const rgba *px, int px_w, int px_h) {
    draw_values(c, map, attn, n, n, n, 1, scores, px, px_w, px_h);
}
