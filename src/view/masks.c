/* masks.c: how masked cells look, so they are never read as weight 0: a neutral
 * ground under diagonal hatching, in every colormap, theme and output. The
 * causal mask hatches the staircase above the diagonal, the padding mask the
 * [PAD] key columns; [PAD] query rows get a light veil. Also the legend swatch.
 * Which cells are masked is the core's (a score of -inf); placement is layout's. */
#include <math.h>

#include "view_internal.h"

static rgba rgb(unsigned v) {
    return (rgba){(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v, 255};
}

rgba view_mask_ground(int theme) {
    return theme ? rgb(0x3a3f47) : rgb(0xdcdcdc);
}

static rgba hatch_color(int theme) {
    return theme ? rgb(0x9aa4b0) : rgb(0x7a7a7a);
}

/* Hatch spacing in output pixels: about 6 layout pixels, never below 4. */
static int spacing(const view_layout *L) {
    int sp = L->pad * 3 / 4;
    return sp < 4 ? 4 : sp;
}

/* Clips the segment p-q to f(x, y) = a x + b y + c >= 0; returns 0 if nothing is left. */
static int clip_half(double *px, double *py, double *qx, double *qy, double a, double b, double c) {
    double fp = a * *px + b * *py + c, fq = a * *qx + b * *qy + c;
    if (fp < 0 && fq < 0) return 0;
    if (fp < 0) {
        double t = fp / (fp - fq);
        *px += t * (*qx - *px), *py += t * (*qy - *py);
    } else if (fq < 0) {
        double t = fq / (fq - fp);
        *qx += t * (*px - *qx), *qy += t * (*py - *qy);
    }
    return 1;
}

/* Lines x + y = k * sp (one phase for the whole picture, so neighbouring regions
   join up) through r, kept where a x + b y + c >= 0 (a = b = 0, c = 1: all of r). */
static void hatch(const view_ctx *c, view_rect r, double a, double b, double cc) {
    if (r.w <= 0 || r.h <= 0) return;
    const int sp = spacing(c->L);
    const rgba col = hatch_color(c->s->look.theme);
    long k0 = (r.x + r.y) / sp + 1, k1 = (r.x + r.w + r.y + r.h) / sp;
    for (long k = k0; k <= k1; k++) {
        double s = (double)(k * sp);
        /* the line enters r on its top or left edge and leaves on its right or bottom */
        double px = s - r.y, py = r.y;
        if (px > r.x + r.w) px = r.x + r.w, py = s - px;
        double qx = s - (r.y + r.h), qy = r.y + r.h;
        if (qx < r.x) qx = r.x, qy = s - qx;
        if (!clip_half(&px, &py, &qx, &qy, a, b, cc)) continue;
        if (fabs(px - qx) < 0.5 && fabs(py - qy) < 0.5) continue;
        draw_line(c->dl, (int)lround(px), (int)lround(py), (int)lround(qx), (int)lround(qy), col,
                  1);
    }
}

void view_draw_masks(const view_ctx *c, view_rect map) {
    const attn_layer *layer = c->s->layer;
    const int n = layer->n, n_real = layer->n_real;
    if (n < 1) return;
    if (layer->mask == ATTN_MASK_CAUSAL && n > 1) {
        if (map.h >= 2 * n) { /* cells tall enough: the exact staircase, a run per row */
            for (int r = 0; r + 1 < n; r++) {
                int x0 = map.x + (int)((long)(r + 1) * map.w / n);
                int y0 = map.y + (int)((long)r * map.h / n);
                int y1 = map.y + (int)((long)(r + 1) * map.h / n);
                hatch(c, (view_rect){x0, y0, map.x + map.w - x0, y1 - y0}, 0, 0, 1);
            }
        } else { /* small cells: the triangle above the diagonal */
            /* keep (x - x0) * h - (y - y0) * w >= 0, shifted by a cell */
            double x0 = map.x + (double)map.w / n, y0 = map.y;
            hatch(c, map, map.h, -(double)map.w, -(x0 * map.h) + y0 * map.w);
        }
    }
    if (n_real < n) {
        int x0 = map.x + (int)((long)n_real * map.w / n);
        int y0 = map.y + (int)((long)n_real * map.h / n);
        hatch(c, (view_rect){x0, map.y, map.x + map.w - x0, map.h}, 0, 0, 1);
        rgba veil = c->th.bg;
        veil.a = 120;
        draw_fill(c->dl, (view_rect){map.x, y0, x0 - map.x, map.y + map.h - y0}, veil);
    }
}

int view_mask_legend_width(const view_ctx *c, int size) {
    return size * 2 + c->L->pad / 2 + view_tw(c, VIEW_MASK_LEGEND, size, 0);
}

void view_draw_mask_legend(const view_ctx *c, int x, int y, int size) {
    view_rect sw = {x, y + size / 8, size * 2, size};
    draw_fill(c->dl, sw, view_mask_ground(c->s->look.theme));
    hatch(c, sw, 0, 0, 1);
    draw_frame(c->dl, sw, c->th.grid, 1);
    draw_text(c->dl, sw.x + sw.w + c->L->pad / 2, y, VIEW_MASK_LEGEND, size, c->th.muted, 0, 0);
}
