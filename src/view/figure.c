/* figure.c: what a figure's drawing list covers, its background aside, and moving
 * the list so a single panel is saved cropped to its content. Text is measured
 * with the frame's measurer; the backends do the drawing. */
#include "view.h"

static void grow(int *x0, int *y0, int *x1, int *y1, int ax, int ay, int bx, int by) {
    if (ax > bx) {
        int t = ax;
        ax = bx, bx = t;
    }
    if (ay > by) {
        int t = ay;
        ay = by, by = t;
    }
    if (ax < *x0) *x0 = ax;
    if (ay < *y0) *y0 = ay;
    if (bx > *x1) *x1 = bx;
    if (by > *y1) *y1 = by;
}

view_rect view_figure_bounds(const draw_list *dl, view_measure_fn measure, void *ud) {
    int x0 = dl->width, y0 = dl->height, x1 = 0, y1 = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        switch (c->kind) {
        case DC_FILL:
            /* the background: a fill of the whole canvas in its colour */
            if (c->x <= 0 && c->y <= 0 && c->w >= dl->width && c->h >= dl->height) break;
            grow(&x0, &y0, &x1, &y1, c->x, c->y, c->x + c->w, c->y + c->h);
            break;
        case DC_FRAME:
        case DC_IMAGE: grow(&x0, &y0, &x1, &y1, c->x, c->y, c->x + c->w, c->y + c->h); break;
        case DC_LINE: {
            int t = c->thick > 1 ? c->thick : 1;
            grow(&x0, &y0, &x1, &y1, c->x - t / 2, c->y - t / 2, c->x + c->w + t, c->y + c->h + t);
            break;
        }
        case DC_TEXT: {
            int w = 0, h = 0;
            measure(ud, draw_cmd_text(dl, c), c->size, c->bold, &w, &h);
            if (c->rot) /* (x, y) is the bottom-left; the run reads upwards */
                grow(&x0, &y0, &x1, &y1, c->x, c->y - w, c->x + h, c->y);
            else
                grow(&x0, &y0, &x1, &y1, c->x, c->y, c->x + w, c->y + h);
            break;
        }
        case DC_GROUP: break;
        }
    }
    if (x1 <= x0 || y1 <= y0) return (view_rect){0, 0, dl->width, dl->height};
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > dl->width) x1 = dl->width;
    if (y1 > dl->height) y1 = dl->height;
    return (view_rect){x0, y0, x1 - x0, y1 - y0};
}

void view_figure_crop(draw_list *dl, view_rect content, int margin) {
    const int dx = margin - content.x, dy = margin - content.y;
    const int w = content.w + 2 * margin, h = content.h + 2 * margin;
    for (int i = 0; i < dl->count; i++) {
        draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_GROUP) continue;
        if (c->kind == DC_FILL && c->x <= 0 && c->y <= 0 && c->w >= dl->width &&
            c->h >= dl->height) { /* the background follows the new canvas */
            c->w = w, c->h = h;
            continue;
        }
        c->x += dx;
        c->y += dy;
    }
    dl->width = w;
    dl->height = h;
}
