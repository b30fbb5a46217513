/* layout_overview.c: where a loaded model's overview puts every layer x head: a
 * title, the layer labels left of the rows, the head numbers above the columns,
 * one regular grid of square cells (a cell per head, rows = layers), the open
 * layer's accent frame, the attention colorbar and a note line under it. Labels
 * that would overlap are dropped (every k-th is kept). Pure: drawing it is
 * overview.c's, the hit test hit.c's. */
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"
#include "view.h"
#include "view_internal.h"

#define imax lay_imax
#define imin lay_imin
#define line_h lay_measured_line

/* The strides labels may take: the first label and every k-th (k, 2k, ...), so
   the numbers read 1, 5, 10, 15 ... when not all fit. */
static const int strides[] = {1, 5, 10, 25, 50, 100, 250, 1000};

/* The smallest stride whose labels, need pixels each, stay apart on a pitch of
   step: 1 and k are (k - 1) steps apart, k and 2k are k steps apart. */
static int stride_for(int step, int need) {
    if (step >= need) return 1;
    for (size_t i = 1; i < sizeof strides / sizeof strides[0]; i++)
        if ((long)(strides[i] - 1) * step >= need) return strides[i];
    return 1 << 30; /* the first alone */
}

/* Shown at stride k: the first (index 0) and every k-th (1-based multiples of k). */
static int labelled(int i, int k) {
    return i == 0 || (k > 0 && (i + 1) % k == 0);
}

view_rect view_overview_cell(const view_layout *L, int layer, int head) {
    const view_overview_box *O = &L->overview;
    if (!O->shown || layer < 0 || layer >= O->layers || head < 0 || head >= O->heads)
        return (view_rect){0, 0, 0, 0};
    const int rows = O->rows > 0 ? O->rows : O->layers, block = layer / rows;
    return (view_rect){O->x0 + block * O->block_dx + head * O->step,
                       O->y0 + (layer % rows) * O->step, O->cell, O->cell};
}

view_rect view_overview_layer_label(const view_layout *L, int layer) {
    const view_overview_box *O = &L->overview;
    if (!O->shown || layer < 0 || layer >= O->layers) return (view_rect){0, 0, 0, 0};
    const int lh = O->label_line;
    if (layer != O->open) {
        if (!labelled(layer, O->layer_stride)) return (view_rect){0, 0, 0, 0};
        /* the open layer's label is always there: its neighbours in its block give way */
        const int rows = O->rows > 0 ? O->rows : O->layers;
        if (O->open >= 0 && layer / rows == O->open / rows) {
            int d = layer > O->open ? layer - O->open : O->open - layer;
            if ((long)d * O->step < lh) return (view_rect){0, 0, 0, 0};
        }
    }
    const view_rect c = view_overview_cell(L, layer, 0);
    const int cy = c.y + O->cell / 2;
    const int x = c.x - O->row_label_w;
    return (view_rect){x, cy - lh / 2, O->row_label_w - O->frame_thick - 2, lh};
}

view_rect view_overview_head_label(const view_layout *L, int block, int head) {
    const view_overview_box *O = &L->overview;
    if (!O->shown || block < 0 || block >= O->blocks || head < 0 || head >= O->heads ||
        !labelled(head, O->head_stride))
        return (view_rect){0, 0, 0, 0};
    const int cx = O->x0 + block * O->block_dx + head * O->step + O->cell / 2, w = O->head_label_w;
    return (view_rect){cx - w / 2, O->y0 - O->over - O->frame_thick - 2 - O->label_line, w,
                       O->label_line};
}

/* Variant v (0 longest) of the title; it claims only what is drawn. */
void view_overview_title(char *buf, size_t len, const view_state *s, int v) {
    const view_overview *o = s->overview;
    const char *dot = " \xC2\xB7 ", *times = " \xC3\x97 ";
    const char *name = o->name && *o->name ? o->name : "model";
    char tokens[32];
    snprintf(tokens, sizeof tokens, "%d token%s", o->n, o->n == 1 ? "" : "s");
    const char *layers = o->layers == 1 ? "layer" : "layers", *heads = o->h == 1 ? "head" : "heads";
    switch (v) {
    case 0:
        snprintf(buf, len, "%s%s%d %s%s%d %s%s%s%s", name, dot, o->layers, layers, times, o->h,
                 heads, dot, tokens, s->figure ? "" : " \xC2\xB7 click a head to open its layer");
        break;
    case 1:
        snprintf(buf, len, "%s%s%d %s%s%d %s%s%s", name, dot, o->layers, layers, times, o->h, heads,
                 dot, tokens);
        break;
    default:
        snprintf(buf, len, "%s%s%d%s%d %s%s%s", name, dot, o->layers, times, o->h, heads, dot,
                 tokens);
    }
}

/* The grid's pitch when its layers are wrapped into `blocks` side by side (each
   with its labels left of it): cells as large as fit both ways. */
static int grid_step(const view_overview *o, int blocks, int row_w, int bgap, int avail_w,
                     int avail_h) {
    const int rows = (o->layers + blocks - 1) / blocks;
    const int w = avail_w - blocks * row_w - (blocks - 1) * bgap;
    return w > 0 ? imax(0, imin(w / (blocks * o->h), avail_h / rows)) : 0;
}

/* The block count (1 to 4) that gives the largest cells; one more block only when
   it makes them a third larger at least (one tall grid reads best: layer 1 at the
   top, the last at the bottom). */
static int best_blocks(const view_overview *o, int row_w, int bgap, int avail_w, int avail_h,
                       int *step) {
    int best = 1;
    *step = grid_step(o, 1, row_w, bgap, avail_w, avail_h);
    for (int b = 2; b <= 4 && b <= o->layers; b++) {
        const int st = grid_step(o, b, row_w, bgap, avail_w, avail_h);
        if (st * 3 > *step * 4) *step = st, best = b;
    }
    return best;
}

void view_overview_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                          view_rect area) {
    view_overview_box *O = &L->overview;
    memset(O, 0, sizeof *O);
    const view_overview *o = s->overview;
    if (!view_overview_ok(o) || area.w <= 0 || area.h <= 0) return;
    const int pad = L->pad, fs = L->font_small, bgap = 2 * pad;
    const int title_h = line_h(measure, ud, L->font_title);
    const int small_h = line_h(measure, ud, fs);
    const int cbar_h = imax(6, fs * 3 / 4);
    /* under the grid: the colorbar's caption, the bar, its numbers, the note */
    const int below = pad + small_h + 2 + cbar_h + pad / 2 + small_h + pad + small_h;
    char widest[32];
    snprintf(widest, sizeof widest, "layer %d", o->layers);
    /* labels at the data's size, or the small size when rows are shorter than it;
       a tall model's layers wrap into blocks side by side when that makes the cells
       larger (48 layers on a wide screen: two blocks of 24) */
    int ls = L->font, lh = 0, row_w = 0, step = 0, blocks = 1;
    for (int attempt = 0; attempt < 2; attempt++) {
        lh = line_h(measure, ud, ls);
        row_w = view_text_width(measure, ud, widest, ls, 1) + pad;
        const int top = title_h + pad + lh + 5;
        blocks = best_blocks(o, row_w, bgap, area.w, area.h - top - below, &step);
        if (step >= lh || ls == fs) break;
        ls = fs;
    }
    const int rows = (o->layers + blocks - 1) / blocks;
    /* between cells: a gap that shows where one head ends (none below 4 px); rows
       shorter than a label need half a label more above the first and below the
       last, where the first and last layers' labels reach */
    int gap = 0, cell = 0, over = 0;
    for (; step > 0; step--) {
        gap = step >= 24 ? imax(2, step / 12) : (step >= 4 ? 1 : 0);
        cell = step - gap;
        over = imax(0, (lh - cell + 1) / 2);
        if (title_h + pad + lh + 5 + 2 * over + rows * step + below <= area.h) break;
    }
    if (step <= 0 || cell < 1) return; /* not even a pixel a head */
    O->shown = 1;
    O->layers = o->layers;
    O->heads = o->h;
    O->blocks = blocks;
    O->rows = rows;
    O->cell = cell;
    O->step = step;
    O->label_size = ls;
    O->label_line = lh;
    O->row_label_w = row_w;
    O->frame_thick = imax(1, imin(3, gap));
    char num[16];
    snprintf(num, sizeof num, "%d", o->h);
    O->head_label_w = view_text_width(measure, ud, num, ls, 0);
    O->layer_stride = stride_for(step, lh);
    O->head_stride = stride_for(step, O->head_label_w + imax(2, pad / 2));
    const int block_w = o->h * step - gap, grid_h = rows * step - gap;
    O->block_dx = block_w + bgap + row_w;
    /* the blocks (labels and cells) centred across the area, under the title */
    const int all_w = blocks * (row_w + block_w) + (blocks - 1) * bgap;
    const int bx = area.x + imax(0, (area.w - all_w) / 2);
    /* the title from the block's left, moved left as far as its longest form needs */
    char title[200];
    view_overview_title(title, sizeof title, s, 0);
    const int tw = view_text_width(measure, ud, title, L->font_title, 1);
    const int tx = imax(area.x, imin(bx, area.x + area.w - tw));
    O->title = (view_rect){tx, area.y, area.x + area.w - tx, title_h};
    O->x0 = bx + row_w;
    O->over = over;
    O->y0 = area.y + title_h + pad + lh + O->frame_thick + 2 + over;
    O->grid = (view_rect){O->x0, O->y0, all_w - row_w, grid_h};
    O->open = o->layer >= 0 && o->layer < o->layers ? o->layer : -1;
    if (O->open >= 0) {
        /* around the row's cells and its label; when the label is taller than the
           row, around the cells alone (the frame would cut through the label) */
        const int t = O->frame_thick, left = cell + 2 * t >= lh ? row_w : t;
        const view_rect c = view_overview_cell(L, O->open, 0);
        O->open_frame = (view_rect){c.x - left, c.y - t, left + block_w + t, cell + 2 * t};
    }
    const int cy = O->y0 + grid_h + over + pad + small_h + 2;
    const int cw = imin(area.x + area.w - O->x0, imax(block_w, L->font * 16));
    O->cbar = (view_rect){O->x0, cy, imin(cw, L->font * 24), cbar_h};
    O->note = (view_rect){bx, cy + cbar_h + pad / 2 + small_h + pad, area.x + area.w - bx, small_h};
}
