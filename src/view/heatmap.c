/* heatmap.c: matrices as coloured pixels, cached until their numbers change. More
 * cells than pixels are reduced: attention to the mean, signed matrices to the value
 * of largest magnitude. Also colorbars and signed-matrix boxes; placement is layout's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

typedef struct {
    uint64_t key;
    int w, h, used;
    rgba *px;
} cache_entry;

struct view_cache {
    cache_entry *e;
    int count, cap;
};

view_cache *view_cache_create(void) {
    return calloc(1, sizeof(view_cache));
}

void view_cache_destroy(view_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->count; i++) free(c->e[i].px);
    free(c->e);
    free(c);
}

void view_cache_begin(view_cache *c) {
    for (int i = 0; i < c->count; i++) c->e[i].used = 0;
}

void view_cache_end(view_cache *c) {
    int o = 0;
    for (int i = 0; i < c->count; i++) {
        if (c->e[i].used)
            c->e[o++] = c->e[i];
        else
            free(c->e[i].px);
    }
    c->count = o;
}

uint64_t view_key_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0x100000001B3ull;
}

const rgba *view_heat_image(view_cache *c, uint64_t key, const float *data, int rows, int cols,
                            int ld, int max_w, int max_h, view_map_kind kind, int cmap, float scale,
                            int *out_w, int *out_h, uint64_t *out_key) {
    int w = cols < max_w ? cols : (max_w > 0 ? max_w : 1);
    int h = rows < max_h ? rows : (max_h > 0 ? max_h : 1);
    key = view_key_mix(view_key_mix(view_key_mix(key, (uint64_t)w), (uint64_t)h), (uint64_t)cmap);
    *out_w = w;
    *out_h = h;
    *out_key = key;
    for (int i = 0; i < c->count; i++)
        if (c->e[i].key == key && c->e[i].w == w && c->e[i].h == h) {
            c->e[i].used = 1;
            return c->e[i].px;
        }
    if (c->count == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 64;
        cache_entry *n = realloc(c->e, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        c->e = n;
        c->cap = ncap;
    }
    rgba *px = malloc((size_t)w * h * sizeof *px);
    if (!px) return NULL;
    /* pixel (x, y) covers rows [r0, r1) and columns [c0, c1): never a row or column
       dropped; the mean for attention, the largest |value| (sign kept) otherwise */
    for (int y = 0; y < h; y++) {
        int r0 = (int)((long)y * rows / h), r1 = (int)((long)(y + 1) * rows / h);
        for (int x = 0; x < w; x++) {
            int c0 = (int)((long)x * cols / w), c1 = (int)((long)(x + 1) * cols / w);
            double sum = 0.0;
            float extreme = 0.0f;
            int cnt = 0;
            for (int r = r0; r < r1; r++)
                for (int k = c0; k < c1; k++) {
                    float v = data[(size_t)r * ld + k];
                    if (!isfinite(v)) v = 0.0f;
                    sum += v;
                    if (fabsf(v) > fabsf(extreme)) extreme = v;
                    cnt++;
                }
            float v = kind == VIEW_MAP_DIV ? extreme : (cnt ? (float)(sum / cnt) : 0.0f);
            px[(size_t)y * w + x] =
                kind == VIEW_MAP_SEQ ? cmap_seq(cmap, v) : cmap_signed(cmap, v / scale);
        }
    }
    c->e[c->count++] = (cache_entry){key, w, h, 1, px};
    return px;
}

/* Looks key up in the cache; on a miss makes room for a w x h image, returns NULL
   through *px and the slot to fill. */
static cache_entry *cache_slot(view_cache *c, uint64_t key, int w, int h, int *hit) {
    for (int i = 0; i < c->count; i++)
        if (c->e[i].key == key && c->e[i].w == w && c->e[i].h == h) {
            c->e[i].used = 1;
            *hit = 1;
            return &c->e[i];
        }
    *hit = 0;
    if (c->count == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 64;
        cache_entry *n = realloc(c->e, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        c->e = n;
        c->cap = ncap;
    }
    rgba *px = malloc((size_t)w * h * sizeof *px);
    if (!px) return NULL;
    c->e[c->count] = (cache_entry){key, w, h, 1, px};
    return &c->e[c->count++];
}

/* One attention weight as a colour position in [0, 1] under the contrast mode. */
static float contrast_value(float v, float row_max, int contrast) {
    if (contrast == VIEW_CONTRAST_ROW) return row_max > 0.0f ? v / row_max : 0.0f;
    if (contrast == VIEW_CONTRAST_LOG) {
        float t = (log10f(v > 1e-3f ? v : 1e-3f) + 3.0f) / 3.0f;
        return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    }
    return v;
}

const rgba *view_attn_image(const view_ctx *c, uint64_t key, const float *attn, const float *scores,
                            int n, int max_w, int max_h, int *out_w, int *out_h,
                            uint64_t *out_key) {
    const int cmap = c->s->cmap, contrast = c->s->contrast, theme = c->s->theme;
    int w = n < max_w ? n : (max_w > 0 ? max_w : 1);
    int h = n < max_h ? n : (max_h > 0 ? max_h : 1);
    key = view_key_mix(view_key_mix(key, (uint64_t)w), (uint64_t)h);
    key = view_key_mix(view_key_mix(view_key_mix(key, (uint64_t)cmap), (uint64_t)contrast),
                       (uint64_t)theme);
    *out_w = w;
    *out_h = h;
    *out_key = key;
    int hit = 0;
    cache_entry *e = cache_slot(c->cache, key, w, h, &hit);
    if (!e) return NULL;
    if (hit) return e->px;
    const rgba ground = view_mask_ground(theme);
    /* pixel (x, y) covers rows [r0, r1) and columns [c0, c1): the mean of the
       weights it covers (masked ones count as the 0 they are), shown as masked
       only when every cell it covers is masked */
    for (int y = 0; y < h; y++) {
        int r0 = (int)((long)y * n / h), r1 = (int)((long)(y + 1) * n / h);
        for (int x = 0; x < w; x++) {
            int c0 = (int)((long)x * n / w), c1 = (int)((long)(x + 1) * n / w);
            double sum = 0.0;
            int cnt = 0, masked = 0;
            for (int r = r0; r < r1; r++) {
                const float *row = attn + (size_t)r * n, *srow = scores + (size_t)r * n;
                float row_max = 0.0f;
                if (contrast == VIEW_CONTRAST_ROW)
                    for (int k = 0; k < n; k++) row_max = row[k] > row_max ? row[k] : row_max;
                for (int k = c0; k < c1; k++) {
                    float v = isfinite(row[k]) ? row[k] : 0.0f;
                    sum += contrast_value(v, row_max, contrast);
                    masked += srow[k] == -INFINITY;
                    cnt++;
                }
            }
            e->px[(size_t)y * w + x] =
                cnt && masked == cnt ? ground : cmap_seq(cmap, cnt ? (float)(sum / cnt) : 0.0f);
        }
    }
    return e->px;
}

static float max_abs(const float *a, int rows, int cols, int ld) {
    float m = 0.0f;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            float v = fabsf(a[(size_t)r * ld + k]);
            if (isfinite(v) && v > m) m = v;
        }
    return m > 0.0f ? m : 1.0f;
}

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

void view_draw_matrix(const view_ctx *c, const view_matrix_box *b, const float *data, int ld,
                      uint64_t key, const char *shape_prefix) {
    view_draw_matrix_scaled(c, b, data, ld, key, shape_prefix, 0.0f);
}

void view_draw_matrix_scaled(const view_ctx *c, const view_matrix_box *b, const float *data, int ld,
                             uint64_t key, const char *shape_prefix, float scale) {
    if (b->map.w <= 0) return;
    float m = scale > 0.0f ? scale : max_abs(data, b->rows, b->cols, ld);
    key = view_key_mix(key, (uint64_t)(m * 1e6f));
    int iw = 0, ih = 0;
    key = view_key_mix(key, c->s->data_version);
    const rgba *px =
        view_heat_image(c->cache, key, data, b->rows, b->cols, ld, b->map.w, b->map.h, VIEW_MAP_DIV,
                        c->s->cmap == CMAP_GREYS ? CMAP_GREYS : 0, m, &iw, &ih, &key);
    draw_image_cmd(c->dl, b->map, iw, ih, px, key);
    draw_frame(c->dl, (view_rect){b->map.x - 1, b->map.y - 1, b->map.w + 2, b->map.h + 2},
               c->th.grid, 1);
    char shape[64], buf[160];
    view_shape_label(shape, sizeof shape, b->rows, b->cols);
    int reduced = iw < b->cols || ih < b->rows;
    if (reduced)
        snprintf(buf, sizeof buf, "%s%s, shown as %d\xC3\x97%d px of largest |value|", shape_prefix,
                 shape, ih, iw);
    else
        snprintf(buf, sizeof buf, "%s%s", shape_prefix, shape);
    if (view_tw(c, buf, c->L->font_small, 0) > b->shape.w)
        snprintf(buf, sizeof buf, "%s%s", shape, reduced ? " (max |v| px)" : "");
    if (view_tw(c, buf, c->L->font_small, 0) > b->shape.w) snprintf(buf, sizeof buf, "%s", shape);
    draw_text(c->dl, b->shape.x, b->shape.y, buf, c->L->font_small, c->th.text, 0, 0);
    view_colorbar(c, b->cbar, VIEW_MAP_DIV, m);
    view_draw_cell_values(c, b->map, data, b->rows, b->cols, ld, NULL, px, iw, ih);
}

float view_max_abs(const float *a, int rows, int cols, int ld) {
    return max_abs(a, rows, cols, ld);
}
