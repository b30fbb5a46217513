/* heatmap.c: matrices as coloured pixels, cached until their numbers change. More
 * cells than pixels are reduced: attention to the largest weight, signed matrices to the value
 * of largest magnitude. Also signed-matrix boxes (their colorbars are colorbar.c's);
 * placement is layout's. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

/* An image, or (spare) a pixel buffer a frame stopped using, kept for the next image
   that fits it, so that recolouring a matrix of the same shape allocates nothing. */
typedef struct {
    uint64_t key;
    int w, h, used, spare;
    size_t cap; /* pixels px holds */
    rgba *px;
} cache_entry;

/* A matrix's largest finite |value|, for its colour scale: computed once per
   (matrix key, data_version, buffer, shape), not once per frame. */
typedef struct {
    uint64_t key;
    const float *data;
    int rows, cols, ld, used;
    float max_abs;
} stat_entry;

struct view_cache {
    cache_entry *e;
    int count, cap;
    stat_entry *st;
    int st_count, st_cap;
    /* working memory of a reduction, kept across frames: per-pixel accumulators
       (doubles, for the means) and column bounds */
    void *work;
    size_t work_cap;
};

view_cache *view_cache_create(void) {
    return calloc(1, sizeof(view_cache));
}

void view_cache_destroy(view_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->count; i++) free(c->e[i].px);
    free(c->e);
    free(c->st);
    free(c->work);
    free(c);
}

void view_cache_begin(view_cache *c) {
    for (int i = 0; i < c->count; i++) c->e[i].used = 0;
    for (int i = 0; i < c->st_count; i++) c->st[i].used = 0;
}

void view_cache_end(view_cache *c) {
    /* images this frame did not use become spare buffers, kept (newest first) while
       they hold no more than the images in use: recolouring a picture of the same
       shape then allocates nothing, and memory stays within twice the picture's */
    size_t live = 0, spare = 0;
    for (int i = 0; i < c->count; i++) {
        if (c->e[i].used) live += c->e[i].cap;
        if (!c->e[i].used && !c->e[i].spare) c->e[i].spare = 2; /* spare from this frame on */
    }
    for (int pass = 2; pass >= 1; pass--) /* this frame's new spares, then older ones */
        for (int i = 0; i < c->count; i++) {
            cache_entry *e = &c->e[i];
            if (e->used || e->spare != pass) continue;
            if (spare + e->cap <= live) {
                spare += e->cap;
                e->key = 0;
            } else {
                free(e->px);
                e->px = NULL;
            }
        }
    int o = 0;
    for (int i = 0; i < c->count; i++) {
        cache_entry e = c->e[i];
        if (!e.used && !e.px) continue;
        if (e.spare) e.spare = 1;
        c->e[o++] = e;
    }
    c->count = o;
    o = 0;
    for (int i = 0; i < c->st_count; i++)
        if (c->st[i].used) c->st[o++] = c->st[i];
    c->st_count = o;
}

uint64_t view_key_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0x100000001B3ull;
}

/* At least bytes of working memory (kept for the next call), or NULL. */
static void *work_mem(view_cache *c, size_t bytes) {
    if (bytes > c->work_cap) {
        size_t cap = c->work_cap ? c->work_cap : 4096;
        while (cap < bytes) cap *= 2;
        void *n = realloc(c->work, cap);
        if (!n) return NULL;
        c->work = n;
        c->work_cap = cap;
    }
    return c->work;
}

/* Looks key up in the cache; on a miss makes room for a w x h image (a spare
   buffer when one is large enough) and returns the slot to fill, *hit = 0. */
static cache_entry *cache_slot(view_cache *c, uint64_t key, int w, int h, int *hit) {
    const size_t need = (size_t)w * (size_t)h;
    int best = -1;
    for (int i = 0; i < c->count; i++) {
        cache_entry *e = &c->e[i];
        if (e->spare) {
            if (e->cap >= need && (best < 0 || e->cap < c->e[best].cap)) best = i;
        } else if (e->key == key && e->w == w && e->h == h) {
            e->used = 1;
            *hit = 1;
            return e;
        }
    }
    *hit = 0;
    if (best >= 0) {
        cache_entry *e = &c->e[best];
        e->key = key, e->w = w, e->h = h, e->used = 1, e->spare = 0;
        return e;
    }
    if (c->count == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 64;
        cache_entry *n = realloc(c->e, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        c->e = n;
        c->cap = ncap;
    }
    rgba *px = malloc((need ? need : 1) * sizeof *px);
    if (!px) return NULL;
    c->e[c->count] = (cache_entry){key, w, h, 1, 0, need, px};
    return &c->e[c->count++];
}

/* |v| when v is finite, else 0 (as the colours treat it) */
static inline float finite_abs(float v) {
    float a = fabsf(v);
    return a <= FLT_MAX ? a : 0.0f;
}

/* The first bound of pixel column x of w over n cells, for x = 0 .. w. */
static void pixel_bounds(int *b, int n, int w) {
    for (int x = 0; x <= w; x++) b[x] = (int)((long)x * n / w);
}

/* Working memory reduce_extreme needs for a (rows, cols) matrix at w x h, after
   its w x h results. */
static size_t extreme_work(int cols, int w) {
    return (size_t)(w + 1 + 2 * cols) * sizeof(int32_t);
}

/* |v| as an integer that orders as |v| does: the bits of a finite float without
   its sign (IEEE 754 orders those as integers), 0 for infinities and NaN. */
static inline int32_t abs_key(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= 0x7FFFFFFFu;
    return u < 0x7F800000u ? (int32_t)u : 0;
}

/* Reduces a (rows, cols) matrix to w x h values, each the covered value of largest
   magnitude, sign kept (the first such in row-major order; non-finite counts as 0);
   returns the largest |value| of them all, which is the matrix's. One pass over the
   matrix, row by row: for each band of rows a pixel row covers, every column keeps
   its largest |value| and the first row that has it (independent columns, integer
   keys: the compiler vectorises it), then each pixel takes the largest of its
   columns, the earliest row and then the leftmost column winning a tie. work:
   extreme_work bytes. */
static float reduce_extreme(float *out, void *work, const float *data, int rows, int cols, int ld,
                            int w, int h) {
    int32_t *cb = work, *col_max = cb + w + 1, *col_row = col_max + cols;
    int32_t top = 0;
    if (w == cols && h == rows) { /* a pixel a cell */
        for (int r = 0; r < rows; r++) {
            const float *row = data + (size_t)r * ld;
            float *o = out + (size_t)r * w;
            for (int k = 0; k < cols; k++) {
                const int32_t a = abs_key(row[k]);
                o[k] = a ? row[k] : 0.0f;
                top = a > top ? a : top;
            }
        }
        float m;
        memcpy(&m, &top, sizeof m);
        return m;
    }
    for (int x = 0; x <= w; x++) cb[x] = (int32_t)((long)x * cols / w);
    for (int y = 0; y < h; y++) {
        const int r0 = (int)((long)y * rows / h), r1 = (int)((long)(y + 1) * rows / h);
        for (int k = 0; k < cols; k++) col_max[k] = 0, col_row[k] = r0;
        for (int r = r0; r < r1; r++) {
            const float *row = data + (size_t)r * ld;
            for (int k = 0; k < cols; k++) {
                const int32_t a = abs_key(row[k]);
                const int32_t more = -(a > col_max[k]); /* all ones or 0 */
                col_max[k] = (a & more) | (col_max[k] & ~more);
                col_row[k] = (r & more) | (col_row[k] & ~more);
            }
        }
        float *o = out + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            /* larger |value| first, then the earlier row, then (strict >) the column */
            int best = cb[x];
            uint64_t best_rank =
                (uint64_t)col_max[best] << 32 | (uint32_t)(INT32_MAX - col_row[best]);
            for (int k = cb[x] + 1; k < cb[x + 1]; k++) {
                const uint64_t rank =
                    (uint64_t)col_max[k] << 32 | (uint32_t)(INT32_MAX - col_row[k]);
                best = rank > best_rank ? k : best;
                best_rank = rank > best_rank ? rank : best_rank;
            }
            /* nothing above 0: the pixel is 0, as when no value replaced it */
            o[x] = col_max[best] > 0 ? data[(size_t)col_row[best] * ld + best] : 0.0f;
            top = col_max[best] > top ? col_max[best] : top;
        }
    }
    float m;
    memcpy(&m, &top, sizeof m);
    return m;
}

/* The image's size for a (rows, cols) matrix in at most (max_w, max_h) pixels. */
static void image_size(int rows, int cols, int max_w, int max_h, int *w, int *h) {
    *w = cols < max_w ? cols : (max_w > 0 ? max_w : 1);
    *h = rows < max_h ? rows : (max_h > 0 ? max_h : 1);
}

/* Colours a signed (rows, cols) matrix at w x h, each pixel its block's extreme
   over scale; blocks: that reduction already made (w x h values), or NULL. */
static int signed_pixels(view_cache *c, rgba *px, const float *blocks, const float *data, int rows,
                         int cols, int ld, int w, int h, int cmap, float scale) {
    const size_t count = (size_t)w * h;
    if (!blocks) {
        float *v = work_mem(c, count * sizeof(float) + extreme_work(cols, w));
        if (!v) return -1;
        reduce_extreme(v, v + count, data, rows, cols, ld, w, h);
        blocks = v;
    }
    for (size_t i = 0; i < count; i++) px[i] = cmap_signed(cmap, blocks[i] / scale);
    return 0;
}

/* The box mean of a (rows, cols) matrix at w x h, coloured with sequential map cmap. */
static int colour_mean(view_cache *c, rgba *px, const float *data, int rows, int cols, int ld,
                       int w, int h, int cmap) {
    double *acc = work_mem(c, (size_t)w * sizeof(double) + (size_t)(w + 1) * sizeof(int));
    if (!acc) return -1;
    int *cb = (int *)(acc + w);
    pixel_bounds(cb, cols, w);
    for (int y = 0; y < h; y++) {
        const int r0 = (int)((long)y * rows / h), r1 = (int)((long)(y + 1) * rows / h);
        for (int x = 0; x < w; x++) acc[x] = 0.0;
        for (int r = r0; r < r1; r++) /* per pixel: rows, then columns, as a plain sum */
            for (int x = 0; x < w; x++) {
                const float *row = data + (size_t)r * ld;
                double sum = acc[x];
                for (int k = cb[x]; k < cb[x + 1]; k++) sum += isfinite(row[k]) ? row[k] : 0.0f;
                acc[x] = sum;
            }
        for (int x = 0; x < w; x++) {
            const int cnt = (r1 - r0) * (cb[x + 1] - cb[x]);
            px[(size_t)y * w + x] = cmap_seq(cmap, cnt ? (float)(acc[x] / cnt) : 0.0f);
        }
    }
    return 0;
}

const rgba *view_heat_image(view_cache *c, uint64_t key, const float *data, int rows, int cols,
                            int ld, int max_w, int max_h, view_map_kind kind, int cmap, float scale,
                            int *out_w, int *out_h, uint64_t *out_key) {
    int w = 1, h = 1;
    image_size(rows, cols, max_w, max_h, &w, &h);
    key = view_key_mix(view_key_mix(view_key_mix(key, (uint64_t)w), (uint64_t)h), (uint64_t)cmap);
    *out_w = w;
    *out_h = h;
    *out_key = key;
    int hit = 0;
    cache_entry *e = cache_slot(c, key, w, h, &hit);
    if (!e) return NULL;
    if (hit) return e->px;
    /* pixel (x, y) covers rows [r0, r1) and columns [c0, c1): never a row or column
       dropped; the mean for attention, the largest |value| (sign kept) otherwise */
    if (kind == VIEW_MAP_SEQ) {
        if (colour_mean(c, e->px, data, rows, cols, ld, w, h, cmap) != 0) goto fail;
        return e->px;
    }
    if (signed_pixels(c, e->px, NULL, data, rows, cols, ld, w, h, cmap, scale) != 0) goto fail;
    return e->px;
fail:
    e->key = 0, e->used = 0, e->spare = 1; /* nothing valid in it */
    return NULL;
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
    const int cmap = c->s->look.cmap, contrast = c->s->look.contrast, theme = c->s->look.theme;
    int w = n < max_w ? n : (max_w > 0 ? max_w : 1);
    int h = n < max_h ? n : (max_h > 0 ? max_h : 1);
    key = view_key_mix(view_key_mix(key, (uint64_t)w), (uint64_t)h);
    key = view_key_mix(view_key_mix(view_key_mix(key, (uint64_t)cmap), (uint64_t)contrast),
                       (uint64_t)theme);
    *out_w = w;
    *out_h = h;
    *out_key = key;
    if (!attn) return NULL; /* no weights: nothing to draw */
    int hit = 0;
    cache_entry *e = cache_slot(c->cache, key, w, h, &hit);
    if (!e) return NULL;
    if (hit) return e->px;
    const rgba ground = view_mask_ground(theme);
    float *top = work_mem(c->cache, (size_t)w * sizeof(float) + (size_t)(2 * w + 1) * sizeof(int));
    if (!top) {
        e->key = 0, e->used = 0, e->spare = 1;
        return NULL;
    }
    int *masked = (int *)(top + w), *cb = masked + w;
    pixel_bounds(cb, n, w);
    /* pixel (x, y) covers rows [r0, r1) and columns [c0, c1): the largest of the
       weights it covers under the contrast (masked ones count as the 0 they are), so
       a head that puts all its weight on one key stays sharp however many tokens a
       pixel covers (a mean would fade it to 1 / cells); shown as masked only when
       every cell it covers is masked. One pass over the rows it covers */
    for (int y = 0; y < h; y++) {
        const int r0 = (int)((long)y * n / h), r1 = (int)((long)(y + 1) * n / h);
        for (int x = 0; x < w; x++) top[x] = 0.0f, masked[x] = 0;
        for (int r = r0; r < r1; r++) {
            const float *row = attn + (size_t)r * n, *srow = scores ? scores + (size_t)r * n : NULL;
            float row_max = 0.0f;
            if (contrast == VIEW_CONTRAST_ROW)
                for (int k = 0; k < n; k++) row_max = row[k] > row_max ? row[k] : row_max;
            for (int x = 0; x < w; x++) {
                float m = top[x];
                int mk = masked[x];
                for (int k = cb[x]; k < cb[x + 1]; k++) {
                    const float v =
                        contrast_value(isfinite(row[k]) ? row[k] : 0.0f, row_max, contrast);
                    m = v > m ? v : m;
                    mk += srow && srow[k] == -INFINITY;
                }
                top[x] = m, masked[x] = mk;
            }
        }
        for (int x = 0; x < w; x++) {
            const int cnt = (r1 - r0) * (cb[x + 1] - cb[x]);
            e->px[(size_t)y * w + x] = cnt && masked[x] == cnt ? ground : cmap_seq(cmap, top[x]);
        }
    }
    return e->px;
}

/* The matrix's cached largest |value| (key already holds the data_version), or NULL. */
static stat_entry *stat_find(view_cache *c, uint64_t key, const float *data, int rows, int cols,
                             int ld) {
    for (int i = 0; i < c->st_count; i++) {
        stat_entry *e = &c->st[i];
        if (e->key == key && e->data == data && e->rows == rows && e->cols == cols && e->ld == ld) {
            e->used = 1;
            return e;
        }
    }
    return NULL;
}

/* Remembers it (out of memory: not remembered, computed again next frame). */
static void stat_add(view_cache *c, uint64_t key, const float *data, int rows, int cols, int ld,
                     float m) {
    if (c->st_count == c->st_cap) {
        int ncap = c->st_cap ? c->st_cap * 2 : 32;
        stat_entry *n = realloc(c->st, (size_t)ncap * sizeof *n);
        if (!n) return;
        c->st = n;
        c->st_cap = ncap;
    }
    c->st[c->st_count++] = (stat_entry){key, data, rows, cols, ld, 1, m};
}

/* Largest finite |value|, 1 when all are 0 (a scale to divide by). */
static float max_abs(const float *a, int rows, int cols, int ld) {
    float m = 0.0f;
    for (int r = 0; r < rows; r++) {
        const float *row = a + (size_t)r * ld;
        for (int k = 0; k < cols; k++) {
            const float v = finite_abs(row[k]);
            m = v > m ? v : m;
        }
    }
    return m > 0.0f ? m : 1.0f;
}

float view_matrix_max_abs(const view_ctx *c, uint64_t key, const float *a, int rows, int cols,
                          int ld) {
    key = view_key_mix(key, c->s->data_version);
    const stat_entry *e = stat_find(c->cache, key, a, rows, cols, ld);
    if (e) return e->max_abs;
    float m = max_abs(a, rows, cols, ld);
    stat_add(c->cache, key, a, rows, cols, ld, m);
    return m;
}

/* The label under a matrix, the longest form that fits b->shape.w (the room the
 * caller gives it, from b->shape.x, usually the map's width): its name and
 * shape and how it is reduced ("Concat 59 × 64, shown as ..."), then its name and
 * shape ("Concat 59 × 64", "Concat 59×64"), its name alone ("Concat"), its shape
 * alone last: a shape without its name tells a student nothing. The name is
 * prefix's first word ("Δ" of "Δ = MultiHead − unablated "). Where no form fits,
 * the shortest one. */
static void matrix_label(const view_ctx *c, char *out, size_t len, const view_matrix_box *b,
                         const char *prefix, int reduced, int ih, int iw) {
    char shape[64], compact[64], name[64];
    view_shape_label(shape, sizeof shape, b->rows, b->cols);
    snprintf(compact, sizeof compact, "%d\xC3\x97%d", b->rows, b->cols);
    size_t nl = strcspn(prefix, " ");
    if (nl >= sizeof name) nl = sizeof name - 1;
    memcpy(name, prefix, nl);
    name[nl] = '\0';
    char f[8][160];
    int count = 0;
    if (reduced) {
        /* what the pixels hold: cells of the matrix to a pixel, each its largest |value| */
        if (iw < b->cols && ih >= b->rows)
            snprintf(f[count++], sizeof f[0],
                     "%s%s: %d columns in %d px, each px their largest |value|", prefix, shape,
                     b->cols, iw);
        else if (ih < b->rows && iw >= b->cols)
            snprintf(f[count++], sizeof f[0],
                     "%s%s: %d rows in %d px, each px their largest |value|", prefix, shape,
                     b->rows, ih);
        else
            snprintf(f[count++], sizeof f[0],
                     "%s%s in %d\xC3\x97%d px, each px its cells' largest |value|", prefix, shape,
                     ih, iw);
        snprintf(f[count++], sizeof f[0], "%s%s (reduced)", prefix, shape);
    }
    snprintf(f[count++], sizeof f[0], "%s%s", prefix, shape);
    if (name[0]) {
        if (strlen(prefix) != nl + 1) /* a longer prefix than "name " */
            snprintf(f[count++], sizeof f[0], "%s %s", name, shape);
        snprintf(f[count++], sizeof f[0], "%s %s", name, compact);
        snprintf(f[count++], sizeof f[0], "%s", name);
        snprintf(f[count++], sizeof f[0], "%s", shape);
    }
    snprintf(f[count++], sizeof f[0], "%s", compact);
    const int fs = c->L->font_small;
    int best = count - 1, best_w = 1 << 30;
    for (int i = 0; i < count; i++) {
        int w = view_tw(c, f[i], fs, 0);
        if (w <= b->shape.w) {
            best = i;
            break;
        }
        if (w < best_w) best = i, best_w = w;
    }
    snprintf(out, len, "%s", f[best]);
}

void view_draw_matrix(const view_ctx *c, const view_matrix_box *b, const float *data, int ld,
                      uint64_t key, const char *shape_prefix) {
    view_draw_matrix_scaled(c, b, data, ld, key, shape_prefix, 0.0f);
}

void view_draw_matrix_scaled(const view_ctx *c, const view_matrix_box *b, const float *data, int ld,
                             uint64_t key, const char *shape_prefix, float scale) {
    if (b->map.w <= 0 || !data) return; /* a tensor the layer does not have: not shown */
    view_cache *vc = c->cache;
    const int cmap = c->s->look.cmap == CMAP_GREYS ? CMAP_GREYS : 0;
    int iw = 1, ih = 1;
    image_size(b->rows, b->cols, b->map.w, b->map.h, &iw, &ih);
    /* the colour scale: the matrix's largest |value|, found once per data_version
       (by the reduction that colours it: the largest block extreme is that value) */
    float m = scale;
    const float *blocks = NULL;
    if (!(scale > 0.0f)) {
        const uint64_t skey = view_key_mix(key, c->s->data_version);
        const stat_entry *st = stat_find(vc, skey, data, b->rows, b->cols, ld);
        const size_t count = (size_t)iw * ih;
        float *v = st ? NULL : work_mem(vc, count * sizeof(float) + extreme_work(b->cols, iw));
        if (st) {
            m = st->max_abs;
        } else if (v) {
            float top = reduce_extreme(v, v + count, data, b->rows, b->cols, ld, iw, ih);
            m = top > 0.0f ? top : 1.0f;
            blocks = v;
            stat_add(vc, skey, data, b->rows, b->cols, ld, m);
        } else {
            m = max_abs(data, b->rows, b->cols, ld);
        }
    }
    key = view_key_mix(key, (uint64_t)(m * 1e6f));
    key = view_key_mix(key, c->s->data_version);
    key = view_key_mix(view_key_mix(view_key_mix(key, (uint64_t)iw), (uint64_t)ih), (uint64_t)cmap);
    int hit = 0;
    cache_entry *e = cache_slot(vc, key, iw, ih, &hit);
    const rgba *px = e ? e->px : NULL;
    if (e && !hit &&
        signed_pixels(vc, e->px, blocks, data, b->rows, b->cols, ld, iw, ih, cmap, m) != 0) {
        e->key = 0, e->used = 0, e->spare = 1;
        px = NULL;
    }
    draw_image_cmd(c->dl, b->map, iw, ih, px, key);
    draw_frame(c->dl, (view_rect){b->map.x - 1, b->map.y - 1, b->map.w + 2, b->map.h + 2},
               c->th.grid, 1);
    char buf[160];
    matrix_label(c, buf, sizeof buf, b, shape_prefix, iw < b->cols || ih < b->rows, ih, iw);
    /* under the map from its left edge; a label wider than the room from there
       ends at the room's end (the caller may give room left of the map) */
    const int lw = view_tw(c, buf, c->L->font_small, 0), end = b->shape.x + b->shape.w;
    int lx = b->map.x >= b->shape.x && b->map.x + lw <= end ? b->map.x : end - lw;
    if (lx < b->shape.x) lx = b->shape.x;
    draw_text(c->dl, lx, b->shape.y, buf, c->L->font_small, c->th.text, 0, 0);
    view_colorbar(c, b->cbar, VIEW_MAP_DIV, m);
    view_draw_cell_values(c, b->map, data, b->rows, b->cols, ld, px, iw, ih);
}
