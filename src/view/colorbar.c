/* colorbar.c: the colorbar under a heatmap: the colormap as one row of pixels and
 * its tick numbers (sequential 0..1, logarithmic 0.001..1, or diverging -m..m).
 * Where it goes is layout's; the matrices themselves are heatmap.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

int view_colorbar(const view_ctx *c, view_rect r, view_map_kind kind, float m) {
    if (r.w < 8 || r.h < 2) return 0;
    static rgba seq_px[CMAP_COUNT][256];
    static rgba div_px[CMAP_COUNT][256]; /* signed maps follow the colormap (greys) */
    static int ready = 0;
    if (!ready) {
        for (int i = 0; i < 256; i++)
            for (int k = 0; k < CMAP_COUNT; k++) {
                seq_px[k][i] = cmap_seq(k, (float)i / 255.0f);
                div_px[k][i] = cmap_signed(k, (float)i / 127.5f - 1.0f);
            }
        ready = 1;
    }
    const rgba *px = kind == VIEW_MAP_SEQ ? seq_px[c->s->look.cmap] : div_px[c->s->look.cmap];
    draw_image_cmd(c->dl, r, 256, 1, px,
                   (kind == VIEW_MAP_SEQ ? 0xC0100000ull : 0xC0200000ull) +
                       (uint64_t)c->s->look.cmap);
    draw_frame(c->dl, r, c->th.grid, 1);
    const int fs = c->L->font_small, gap = c->L->pad / 2, ty = r.y + r.h + c->L->pad / 2;
    const int log = kind == VIEW_MAP_SEQ && c->s->look.contrast == VIEW_CONTRAST_LOG;
    const int ticks = kind == VIEW_MAP_SEQ ? (log ? 4 : 5) : 3;
    char buf[5][24];
    int tx[5], tw[5];
    for (int i = 0; i < ticks; i++) {
        float t = (float)i / (float)(ticks - 1);
        float v = kind == VIEW_MAP_SEQ ? t : (2.0f * t - 1.0f) * m;
        if (log) v = powf(10.0f, 3.0f * t - 3.0f); /* 0.001, 0.01, 0.1, 1 */
        view_format_number(buf[i], sizeof buf[i], v);
        if (kind == VIEW_MAP_DIV && i == 2) {
            buf[i][sizeof buf[i] - 2] = '\0';
            memmove(buf[i] + 1, buf[i], strlen(buf[i]) + 1);
            buf[i][0] = '+';
        }
        int x = r.x + (int)lroundf(t * (float)(r.w - 1));
        tw[i] = view_tw(c, buf[i], fs, 0);
        tx[i] = x - tw[i] / 2;
        if (tx[i] < r.x) tx[i] = r.x;
        if (tx[i] + tw[i] > r.x + r.w) tx[i] = r.x + r.w - tw[i];
        draw_line(c->dl, x, r.y + r.h, x, r.y + r.h + c->L->pad / 2, c->th.muted, 1);
    }
    /* the range first: both ends where they fit side by side, then the middle ticks
       that fit between; else the range as one number ("±1.54", "0–1"); a minimum
       alone would say nothing of the top */
    const int last = ticks - 1;
    if (tw[0] <= r.w && tw[last] <= r.w && tx[0] + tw[0] + gap < tx[last]) {
        int placed[5] = {1, 0, 0, 0, 0};
        placed[last] = 1;
        const int order[3] = {ticks / 2, 1, ticks - 2};
        for (int k = 0; k < 3; k++) {
            int i = order[k], ok = i > 0 && i < last && !placed[i];
            for (int j = 0; ok && j < ticks; j++)
                if (placed[j] && tx[i] < tx[j] + tw[j] + gap && tx[j] < tx[i] + tw[i] + gap) ok = 0;
            placed[i] = placed[i] || ok;
        }
        for (int i = 0; i < ticks; i++)
            if (placed[i]) draw_text(c->dl, tx[i], ty, buf[i], fs, c->th.muted, 0, 0);
        return 1;
    }
    char one[2][80];
    if (kind == VIEW_MAP_DIV) {
        snprintf(one[0], sizeof one[0], "\xC2\xB1%s", buf[2] + 1); /* "±1.54" */
        snprintf(one[1], sizeof one[1], "\xC2\xB1%.2g", (double)m);
    } else {
        snprintf(one[0], sizeof one[0], "%s\xE2\x80\x93%s", buf[0], buf[last]); /* "0–1" */
        snprintf(one[1], sizeof one[1], "%s", one[0]);
    }
    for (int k = 0; k < 2; k++) {
        int w = view_tw(c, one[k], fs, 0);
        if (w > r.w) continue;
        draw_text(c->dl, r.x + (r.w - w) / 2, ty, one[k], fs, c->th.muted, 0, 0);
        break;
    }
    return 1;
}
