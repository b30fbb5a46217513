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
    const rgba *px = kind == VIEW_MAP_SEQ ? seq_px[c->s->cmap] : div_px[c->s->cmap];
    draw_image_cmd(c->dl, r, 256, 1, px,
                   (kind == VIEW_MAP_SEQ ? 0xC0100000ull : 0xC0200000ull) + (uint64_t)c->s->cmap);
    draw_frame(c->dl, r, c->th.grid, 1);
    const int fs = c->L->font_small;
    char buf[32];
    const int log = kind == VIEW_MAP_SEQ && c->s->contrast == VIEW_CONTRAST_LOG;
    int ticks = kind == VIEW_MAP_SEQ ? (log ? 4 : 5) : 3;
    int last_end = -100000;
    for (int i = 0; i < ticks; i++) {
        float t = (float)i / (float)(ticks - 1);
        float v = kind == VIEW_MAP_SEQ ? t : (2.0f * t - 1.0f) * m;
        if (log) v = powf(10.0f, 3.0f * t - 3.0f); /* 0.001, 0.01, 0.1, 1 */
        view_format_number(buf, sizeof buf, v);
        if (kind == VIEW_MAP_DIV && i == 2) {
            buf[sizeof buf - 2] = '\0';
            memmove(buf + 1, buf, strlen(buf) + 1);
            buf[0] = '+';
        }
        int x = r.x + (int)lroundf(t * (float)(r.w - 1));
        int w = view_tw(c, buf, fs, 0);
        int tx = x - w / 2;
        if (tx < r.x) tx = r.x;
        if (tx + w > r.x + r.w) tx = r.x + r.w - w;
        draw_line(c->dl, x, r.y + r.h, x, r.y + r.h + c->L->pad / 2, c->th.muted, 1);
        if (tx > last_end + c->L->pad / 2) {
            draw_text(c->dl, tx, r.y + r.h + c->L->pad / 2, buf, fs, c->th.muted, 0, 0);
            last_end = tx + w;
        }
    }
    return 1;
}
