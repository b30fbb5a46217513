/* sdl_draw.c: replays the view's drawing list with SDL2. Each heatmap image is a
 * static texture, one texel per image pixel, scaled with nearest filtering and
 * uploaded once per key; text runs are cached textures too. Either is dropped
 * when a frame no longer uses it. */
#include "sdl_draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key;
    int w, h;
    SDL_Texture *tex;
    int used;
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
        if (c->e[i].key == key) return &c->e[i];
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
    if (!c->rot) {
        SDL_Rect dst = {c->x, c->y, e->w, e->h};
        SDL_RenderCopy(d->r, e->tex, NULL, &dst);
    } else {
        /* 90 degrees counter-clockwise; (x, y) is the bottom-left of the turned box */
        int cx = c->x + e->h / 2, cy = c->y - e->w / 2;
        SDL_Rect dst = {cx - e->w / 2, cy - e->h / 2, e->w, e->h};
        SDL_RenderCopyEx(d->r, e->tex, NULL, &dst, -90.0, NULL, SDL_FLIP_NONE);
    }
}

static void do_line(SDL_Renderer *r, const draw_cmd *c) {
    set_color(r, c->color);
    if (c->w == 0 || c->h == 0) { /* axis-aligned: a filled rectangle of the thickness */
        int t = c->thick > 0 ? c->thick : 1;
        SDL_Rect rr = c->w == 0
                          ? (SDL_Rect){c->x - t / 2, c->h < 0 ? c->y + c->h : c->y, t,
                                       abs(c->h) ? abs(c->h) : 1}
                          : (SDL_Rect){c->w < 0 ? c->x + c->w : c->x, c->y - t / 2, abs(c->w), t};
        SDL_RenderFillRect(r, &rr);
    } else {
        SDL_RenderDrawLine(r, c->x, c->y, c->x + c->w, c->y + c->h);
    }
}

void sdl_draw_list(sdl_draw *d, const draw_list *dl) {
    SDL_Renderer *r = d->r;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(r, dl->background.r, dl->background.g, dl->background.b,
                           dl->background.a);
    SDL_RenderClear(r);
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        switch (c->kind) {
        case DC_FILL: {
            set_color(r, c->color);
            SDL_Rect rr = {c->x, c->y, c->w, c->h};
            SDL_RenderFillRect(r, &rr);
            break;
        }
        case DC_FRAME: {
            set_color(r, c->color);
            int t = c->thick > 0 ? c->thick : 1;
            SDL_Rect sides[4] = {{c->x, c->y, c->w, t},
                                 {c->x, c->y + c->h - t, c->w, t},
                                 {c->x, c->y, t, c->h},
                                 {c->x + c->w - t, c->y, t, c->h}};
            SDL_RenderFillRects(r, sides, 4);
            break;
        }
        case DC_LINE: do_line(r, c); break;
        case DC_TEXT: do_text(d, dl, c); break;
        case DC_IMAGE: do_image(d, dl, c); break;
        case DC_GROUP: break;
        }
    }
    cache_sweep(&d->images);
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
