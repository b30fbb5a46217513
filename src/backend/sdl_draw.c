/* sdl_draw.c: replays the view's drawing list with SDL2. Each heatmap image is a
 * static texture, one texel per image pixel, scaled with nearest filtering and
 * uploaded once per key; text runs are cached textures too. Either is dropped
 * when a frame no longer uses it. Big PNGs are drawn in bands of rows on one
 * software surface (sdl_band_*), heatmaps scaled here rather than by SDL. */
#include "sdl_draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key;
    int w, h;
    SDL_Texture *tex;
    int used;
    int spare; /* a heatmap texture no frame uses now, kept for a new image of its size */
} tex_entry;

typedef struct {
    tex_entry *e;
    int count, cap;
} tex_cache;

struct sdl_draw {
    SDL_Renderer *r;
    font_set *fonts;
    tex_cache images, texts;
    unsigned long uploads;
    /* bands: commands are moved up by oy, those outside [0, rows) skipped, and
       images drawn straight into surf */
    SDL_Surface *surf;
    int oy, rows;
    /* thick slanted lines waiting to be drawn in one call (6 vertices each): a
       software renderer pays per call, and the head view draws thousands */
    SDL_Vertex *quad;
    int quad_count, quad_cap;
};

static uint64_t hash_text(const char *s, int size, int bold, rgba c) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    h = (h ^ (uint64_t)size) * 0x100000001B3ull;
    h = (h ^ (uint64_t)bold) * 0x100000001B3ull;
    uint32_t col = (uint32_t)c.r << 24 | (uint32_t)c.g << 16 | (uint32_t)c.b << 8 | c.a;
    return (h ^ col) * 0x100000001B3ull;
}

static tex_entry *cache_find(tex_cache *c, uint64_t key) {
    for (int i = 0; i < c->count; i++)
        if (c->e[i].key == key && !c->e[i].spare) return &c->e[i];
    return NULL;
}

/* A spare texture of w x h, taken out of the spares; NULL when none. */
static tex_entry *cache_take_spare(tex_cache *c, uint64_t key, int w, int h) {
    for (int i = 0; i < c->count; i++) {
        tex_entry *e = &c->e[i];
        if (e->spare && e->tex && e->w == w && e->h == h) {
            e->spare = 0;
            e->key = key;
            return e;
        }
    }
    return NULL;
}

static tex_entry *cache_add(tex_cache *c, uint64_t key) {
    if (c->count == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 128;
        tex_entry *n = realloc(c->e, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        c->e = n;
        c->cap = ncap;
    }
    tex_entry *e = &c->e[c->count++];
    memset(e, 0, sizeof *e);
    e->key = key;
    return e;
}

static void cache_sweep(tex_cache *c) {
    int o = 0;
    for (int i = 0; i < c->count; i++) {
        if (c->e[i].used) {
            c->e[i].used = 0;
            c->e[o++] = c->e[i];
        } else if (c->e[i].tex) {
            SDL_DestroyTexture(c->e[i].tex);
        }
    }
    c->count = o;
}

/* For heatmaps: textures this frame did not use become spares, kept while they
   hold no more texels than the textures in use (a recoloured picture of the same
   shape then updates them instead of making new ones); the rest are destroyed. */
static void image_sweep(tex_cache *c) {
    size_t live = 0, spare = 0;
    for (int i = 0; i < c->count; i++)
        if (c->e[i].used) live += (size_t)c->e[i].w * (size_t)c->e[i].h;
    int o = 0;
    for (int i = 0; i < c->count; i++) {
        tex_entry e = c->e[i];
        const size_t texels = (size_t)e.w * (size_t)e.h;
        if (e.used) {
            e.used = 0;
        } else if (e.tex && spare + texels <= live) {
            e.spare = 1;
            spare += texels;
        } else {
            if (e.tex) SDL_DestroyTexture(e.tex);
            continue;
        }
        c->e[o++] = e;
    }
    c->count = o;
}

static void cache_free(tex_cache *c) {
    for (int i = 0; i < c->count; i++)
        if (c->e[i].tex) SDL_DestroyTexture(c->e[i].tex);
    free(c->e);
    memset(c, 0, sizeof *c);
}

sdl_draw *sdl_draw_create(SDL_Renderer *r, font_set *fonts) {
    sdl_draw *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->r = r;
    d->fonts = fonts;
    return d;
}

void sdl_draw_destroy(sdl_draw *d) {
    if (!d) return;
    free(d->quad);
    cache_free(&d->images);
    cache_free(&d->texts);
    free(d);
}

unsigned long sdl_draw_uploads(const sdl_draw *d) {
    return d->uploads;
}

static void set_color(SDL_Renderer *r, rgba c) {
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, c.a);
    SDL_SetRenderDrawBlendMode(r, c.a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
}

static void do_image(sdl_draw *d, const draw_list *dl, const draw_cmd *c) {
    const draw_image *img = &dl->images[c->img];
    tex_entry *e = cache_find(&d->images, img->key);
    if (e && (e->w != img->w || e->h != img->h)) {
        SDL_DestroyTexture(e->tex);
        e->tex = NULL;
    }
    if (!e && (e = cache_take_spare(&d->images, img->key, img->w, img->h)) != NULL) {
        SDL_UpdateTexture(e->tex, NULL, img->px, img->w * 4);
        d->uploads++;
    }
    if (!e) e = cache_add(&d->images, img->key);
    if (!e) return;
    if (!e->tex) {
        e->tex = SDL_CreateTexture(d->r, SDL_PIXELFORMAT_ABGR8888, SDL_TEXTUREACCESS_STATIC, img->w,
                                   img->h);
        if (!e->tex) return;
        SDL_SetTextureScaleMode(e->tex, SDL_ScaleModeNearest);
        SDL_UpdateTexture(e->tex, NULL, img->px, img->w * 4);
        e->w = img->w;
        e->h = img->h;
        d->uploads++;
    }
    e->used = 1;
    SDL_Rect dst = {c->x, c->y, c->w, c->h};
    SDL_RenderCopy(d->r, e->tex, NULL, &dst);
}

static void do_text(sdl_draw *d, const draw_list *dl, const draw_cmd *c) {
    const char *s = draw_cmd_text(dl, c);
    uint64_t key = hash_text(s, c->size, c->bold, c->color);
    tex_entry *e = cache_find(&d->texts, key);
    if (!e) {
        SDL_Surface *surf = font_render(d->fonts, s, c->size, c->bold, c->color);
        if (!surf) return;
        e = cache_add(&d->texts, key);
        if (!e) {
            SDL_FreeSurface(surf);
            return;
        }
        e->tex = SDL_CreateTextureFromSurface(d->r, surf);
        e->w = surf->w;
        e->h = surf->h;
        SDL_FreeSurface(surf);
        if (e->tex) SDL_SetTextureBlendMode(e->tex, SDL_BLENDMODE_BLEND);
    }
    e->used = 1;
    if (!e->tex) return;
    const int y = c->y - d->oy;
    if (!c->rot) {
        SDL_Rect dst = {c->x, y, e->w, e->h};
        SDL_RenderCopy(d->r, e->tex, NULL, &dst);
    } else {
        /* 90 degrees counter-clockwise; (x, y) is the bottom-left of the turned box */
        int cx = c->x + e->h / 2, cy = y - e->w / 2;
        SDL_Rect dst = {cx - e->w / 2, cy - e->h / 2, e->w, e->h};
        SDL_RenderCopyEx(d->r, e->tex, NULL, &dst, -90.0, NULL, SDL_FLIP_NONE);
    }
}

/* The corners of a slanted line t pixels thick from (x0, y0) by (dx, dy), pixel
 * centres at + 0.5: the quad both the screen and the bands fill. */
static void line_quad(const draw_cmd *c, double oy, double qx[4], double qy[4]) {
    const double x0 = c->x + 0.5, y0 = c->y - oy + 0.5, dx = c->w, dy = c->h;
    const double len = sqrt(dx * dx + dy * dy), t = (c->thick > 0 ? c->thick : 1) / 2.0;
    const double nx = -dy / len * t, ny = dx / len * t;
    qx[0] = x0 + nx, qy[0] = y0 + ny;
    qx[1] = x0 + dx + nx, qy[1] = y0 + dy + ny;
    qx[2] = x0 + dx - nx, qy[2] = y0 + dy - ny;
    qx[3] = x0 - nx, qy[3] = y0 - ny;
}

/* Draws the thick slanted lines batched so far, in order, in one call. */
static void flush_quads(sdl_draw *d) {
    if (d->quad_count <= 0) return;
    SDL_SetRenderDrawBlendMode(d->r, SDL_BLENDMODE_BLEND); /* alpha 255 draws as NONE would */
    SDL_RenderGeometry(d->r, NULL, d->quad, d->quad_count * 6, NULL, 0);
    d->quad_count = 0;
}

static void do_line(sdl_draw *d, const draw_cmd *c, int oy) {
    SDL_Renderer *r = d->r;
    if (c->thick > 1 && c->w != 0 && c->h != 0) { /* a thick slanted line: two triangles */
        if (d->quad_count == d->quad_cap) {
            const int cap = d->quad_cap ? d->quad_cap * 2 : 1024;
            SDL_Vertex *q = realloc(d->quad, (size_t)cap * 6 * sizeof *q);
            if (!q) { /* out of memory: draw what is batched, this one as a thin line */
                flush_quads(d);
                set_color(r, c->color);
                SDL_RenderDrawLine(r, c->x, c->y - oy, c->x + c->w, c->y - oy + c->h);
                return;
            }
            d->quad = q, d->quad_cap = cap;
        }
        double qx[4], qy[4];
        line_quad(c, oy, qx, qy);
        static const int idx[6] = {0, 1, 2, 0, 2, 3};
        const SDL_Color col = {c->color.r, c->color.g, c->color.b, c->color.a};
        SDL_Vertex *v = d->quad + (size_t)d->quad_count++ * 6;
        for (int i = 0; i < 6; i++)
            v[i] = (SDL_Vertex){{(float)qx[idx[i]], (float)qy[idx[i]]}, col, {0.0f, 0.0f}};
        return;
    }
    flush_quads(d); /* a thin line goes over the thick ones before it */
    set_color(r, c->color);
    const int y = c->y - oy;
    if (c->w == 0 || c->h == 0) { /* axis-aligned: a filled rectangle of the thickness */
        int t = c->thick > 0 ? c->thick : 1;
        SDL_Rect rr =
            c->w == 0
                ? (SDL_Rect){c->x - t / 2, c->h < 0 ? y + c->h : y, t, abs(c->h) ? abs(c->h) : 1}
                : (SDL_Rect){c->w < 0 ? c->x + c->w : c->x, y - t / 2, abs(c->w), t};
        SDL_RenderFillRect(r, &rr);
    } else {
        SDL_RenderDrawLine(r, c->x, y, c->x + c->w, y + c->h);
    }
}

/* Pixel (x, y) of the band's surface (ARGB8888) blended with c as SDL blends:
 * "source over". */
static void band_plot(Uint32 *px, rgba c) {
    if (c.a == 255) {
        *px = 0xFF000000u | (Uint32)c.r << 16 | (Uint32)c.g << 8 | c.b;
    } else if (c.a) {
        Uint32 q = *px, a = c.a, na = 255 - a;
        Uint32 qa = q >> 24, qr = q >> 16 & 255, qg = q >> 8 & 255, qb = q & 255;
        qr = (c.r * a + qr * na + 127) / 255;
        qg = (c.g * a + qg * na + 127) / 255;
        qb = (c.b * a + qb * na + 127) / 255;
        qa = a + (qa * na + 127) / 255;
        *px = qa << 24 | qr << 16 | qg << 8 | qb;
    }
}

/* floor(a / b) for b > 0 */
static long long floor_div(long long a, long long b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* A slanted line, one pixel wide, in band coordinates: pixel i of n = max(|dx|,
 * |dy|) steps is (x0 + i dx / n, y0 + i dy / n) rounded, computed in the whole
 * picture's coordinates, so a band draws exactly its rows of the same line
 * (SDL's clipping would restart the line at the band's edge). */
static void band_line(sdl_draw *d, const draw_cmd *c) {
    SDL_RenderFlush(d->r);
    SDL_Surface *s = d->surf;
    if (c->thick > 1) { /* thick: the quad's pixels whose centres it covers, row by row */
        double qx[4], qy[4];
        line_quad(c, d->oy, qx, qy);
        for (int y = 0; y < d->rows; y++) {
            const double yc = y + 0.5;
            double lo = 1e300, hi = -1e300;
            for (int e = 0; e < 4; e++) { /* where each edge crosses the row's centre */
                const double ax = qx[e], ay = qy[e], bx = qx[(e + 1) % 4], by = qy[(e + 1) % 4];
                if ((ay <= yc && by > yc) || (by <= yc && ay > yc)) {
                    const double x = ax + (yc - ay) * (bx - ax) / (by - ay);
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
            }
            if (hi < lo) continue;
            int x0 = (int)ceil(lo - 0.5), x1 = (int)ceil(hi - 0.5); /* centres in [lo, hi) */
            if (x0 < 0) x0 = 0;
            if (x1 > s->w) x1 = s->w;
            Uint32 *row = (Uint32 *)((Uint8 *)s->pixels + (size_t)y * s->pitch);
            for (int x = x0; x < x1; x++) band_plot(row + x, c->color);
        }
        return;
    }
    const long long x0 = c->x, y0 = c->y, dx = c->w, dy = c->h;
    const long long n = llabs(dx) > llabs(dy) ? llabs(dx) : llabs(dy);
    /* the steps whose row can be in the band (y is monotonic in i), a row wider */
    long long lo = 0, hi = n;
    if (dy != 0) {
        double a = (double)(d->oy - 1 - y0) * (double)n / (double)dy;
        double b = (double)(d->oy + d->rows + 1 - y0) * (double)n / (double)dy;
        double mn = a < b ? a : b, mx = a < b ? b : a;
        if (mn > 0) lo = (long long)mn;
        if (mx < (double)n) hi = (long long)mx + 1;
    }
    for (long long i = lo; i <= hi; i++) {
        long long x = x0 + floor_div(2 * i * dx + n, 2 * n);
        long long y = y0 + floor_div(2 * i * dy + n, 2 * n) - d->oy;
        if (x < 0 || x >= s->w || y < 0 || y >= d->rows) continue;
        band_plot((Uint32 *)((Uint8 *)s->pixels + (size_t)y * s->pitch) + x, c->color);
    }
}

/* Image img scaled into the command's rectangle, straight into the band's surface
 * (ARGB8888) and blended as SDL blends a texture: destination pixel (x, y) of the
 * rectangle shows source pixel ((2x + 1) w / 2W, (2y + 1) h / 2H), the one under
 * its centre, so a cell's edges do not depend on where a band starts. */
static void band_image(sdl_draw *d, const draw_image *img, const draw_cmd *c) {
    if (img->w <= 0 || img->h <= 0 || c->w <= 0 || c->h <= 0) return;
    SDL_RenderFlush(d->r); /* what was drawn before lies beneath */
    SDL_Surface *s = d->surf;
    int x0 = c->x < 0 ? 0 : c->x, x1 = c->x + c->w > s->w ? s->w : c->x + c->w;
    int y0 = c->y - d->oy < 0 ? 0 : c->y - d->oy;
    int y1 = c->y - d->oy + c->h > d->rows ? d->rows : c->y - d->oy + c->h;
    if (x0 >= x1 || y0 >= y1) return;
    for (int y = y0; y < y1; y++) {
        long long ry = (long long)y + d->oy - c->y; /* row inside the rectangle */
        const rgba *src = img->px + (size_t)((2 * ry + 1) * img->h / (2LL * c->h)) * img->w;
        Uint32 *row = (Uint32 *)((Uint8 *)s->pixels + (size_t)y * s->pitch);
        for (int x = x0; x < x1; x++) {
            band_plot(&row[x], src[(2LL * (x - c->x) + 1) * img->w / (2LL * c->w)]);
        }
    }
}

/* Rows [top, bottom) a command can touch, generously for text (measured only when
 * drawn): skipping the rest keeps a band's cost to what it shows. */
static void cmd_rows(const draw_list *dl, const draw_cmd *c, long long *top, long long *bottom) {
    long long t = c->thick > 0 ? c->thick : 1;
    switch (c->kind) {
    case DC_LINE:
        *top = (c->h < 0 ? (long long)c->y + c->h : c->y) - t;
        *bottom = (c->h < 0 ? c->y : (long long)c->y + c->h) + t + 1;
        break;
    case DC_TEXT:
        if (c->rot) { /* the turned box rises from y by the text's width */
            *top = (long long)c->y - ((long long)strlen(draw_cmd_text(dl, c)) + 2) * c->size;
            *bottom = (long long)c->y + 1;
        } else {
            *top = c->y;
            *bottom = (long long)c->y + 3LL * c->size + 8;
        }
        break;
    default:
        *top = c->y;
        *bottom = (long long)c->y + c->h;
        break;
    }
}

/* Clears and replays the list (moved up by d->oy; in a band only what touches it). */
static void replay(sdl_draw *d, const draw_list *dl) {
    SDL_Renderer *r = d->r;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(r, dl->background.r, dl->background.g, dl->background.b,
                           dl->background.a);
    SDL_RenderClear(r);
    const int oy = d->oy;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (d->surf) {
            long long top, bottom;
            cmd_rows(dl, c, &top, &bottom);
            if (bottom <= oy || top >= (long long)oy + d->rows) continue;
        }
        if (c->kind != DC_LINE && c->kind != DC_GROUP) flush_quads(d); /* they lie beneath */
        switch (c->kind) {
        case DC_FILL: {
            set_color(r, c->color);
            SDL_Rect rr = {c->x, c->y - oy, c->w, c->h};
            SDL_RenderFillRect(r, &rr);
            break;
        }
        case DC_FRAME: {
            set_color(r, c->color);
            int t = c->thick > 0 ? c->thick : 1;
            const int y = c->y - oy;
            SDL_Rect sides[4] = {{c->x, y, c->w, t},
                                 {c->x, y + c->h - t, c->w, t},
                                 {c->x, y, t, c->h},
                                 {c->x + c->w - t, y, t, c->h}};
            SDL_RenderFillRects(r, sides, 4);
            break;
        }
        case DC_LINE:
            if (d->surf && c->w != 0 && c->h != 0)
                band_line(d, c);
            else
                do_line(d, c, oy);
            break;
        case DC_TEXT: do_text(d, dl, c); break;
        case DC_IMAGE:
            if (d->surf)
                band_image(d, &dl->images[c->img], c);
            else
                do_image(d, dl, c);
            break;
        case DC_GROUP: break;
        }
    }
    flush_quads(d);
}

void sdl_draw_list(sdl_draw *d, const draw_list *dl) {
    replay(d, dl);
    image_sweep(&d->images);
    cache_sweep(&d->texts);
}

SDL_Surface *sdl_draw_to_surface(const draw_list *dl, font_set *fonts, char *err, size_t errlen) {
    SDL_Surface *surf =
        SDL_CreateRGBSurfaceWithFormat(0, dl->width, dl->height, 32, SDL_PIXELFORMAT_ARGB8888);
    if (!surf) {
        snprintf(err, errlen, "cannot make a %dx%d image: %s", dl->width, dl->height,
                 SDL_GetError());
        return NULL;
    }
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    if (!r) {
        snprintf(err, errlen, "software renderer: %s", SDL_GetError());
        SDL_FreeSurface(surf);
        return NULL;
    }
    sdl_draw *d = sdl_draw_create(r, fonts);
    if (!d) {
        SDL_DestroyRenderer(r);
        SDL_FreeSurface(surf);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sdl_draw_list(d, dl);
    SDL_RenderFlush(r);
    sdl_draw_destroy(d);
    SDL_DestroyRenderer(r);
    return surf;
}

struct sdl_band {
    SDL_Surface *surf;
    SDL_Renderer *r;
    sdl_draw *d;
};

sdl_band *sdl_band_create(int w, int rows, font_set *fonts, char *err, size_t errlen) {
    sdl_band *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->surf = SDL_CreateRGBSurfaceWithFormat(0, w, rows, 32, SDL_PIXELFORMAT_ARGB8888);
    if (!b->surf) {
        snprintf(err, errlen, "cannot make a %dx%d image band: %s", w, rows, SDL_GetError());
        sdl_band_destroy(b);
        return NULL;
    }
    b->r = SDL_CreateSoftwareRenderer(b->surf);
    if (!b->r) {
        snprintf(err, errlen, "software renderer: %s", SDL_GetError());
        sdl_band_destroy(b);
        return NULL;
    }
    b->d = sdl_draw_create(b->r, fonts);
    if (!b->d) {
        snprintf(err, errlen, "out of memory");
        sdl_band_destroy(b);
        return NULL;
    }
    b->d->surf = b->surf;
    b->d->rows = rows;
    return b;
}

void sdl_band_destroy(sdl_band *b) {
    if (!b) return;
    sdl_draw_destroy(b->d);
    if (b->r) SDL_DestroyRenderer(b->r);
    if (b->surf) SDL_FreeSurface(b->surf);
    free(b);
}

SDL_Surface *sdl_band_draw(sdl_band *b, const draw_list *dl, int y0) {
    b->d->oy = y0;
    replay(b->d, dl);
    SDL_RenderFlush(b->r);
    /* only the text this band drew stays (the next band often shows its lower part):
       keeping every text of a tall picture would cost memory that grows with it */
    cache_sweep(&b->d->texts);
    return b->surf;
}
