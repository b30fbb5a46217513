/* export.c: PNG, SVG and PDF files of the view (see export.h), and the headless
 * `mhaviz --export FILE` mode, which needs no display server. */
#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <SDL.h>
#include <SDL_image.h>
#include <SDL_ttf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "atomic_file.h"
#include "cairo_draw.h"
#include "samples.h"
#include "sdl_draw.h"
#include "state.h"

int export_default_name(char *out, size_t len, const char *dir, int h, int d, const char *ext,
                        char *err, size_t errlen) {
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const char *base = dir ? dir : ".";
    char abs[4096];
    if (base[0] != '/' && getcwd(abs, sizeof abs - 1))
        snprintf(out, len, "%s/%s/mhaviz-h%d-d%d-%s.%s", abs, base, h, d, stamp, ext);
    else
        snprintf(out, len, "%s/mhaviz-h%d-d%d-%s.%s", base, h, d, stamp, ext);
    /* tidy "/./" for the toast */
    char *p;
    while ((p = strstr(out, "/./")) != NULL) memmove(p, p + 2, strlen(p + 2) + 1);
    struct stat st;
    if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s: folder %s does not exist", out, base);
        return -1;
    }
    /* two saves within a second get "-2", "-3", ... rather than overwrite */
    size_t stem = strlen(out) - strlen(ext) - 1;
    for (int k = 2; stat(out, &st) == 0 && k < 1000; k++) {
        char tail[32];
        snprintf(tail, sizeof tail, "-%d.%s", k, ext);
        if (stem + strlen(tail) + 1 > len) break;
        memcpy(out + stem, tail, strlen(tail) + 1);
    }
    return 0;
}

int export_png(const char *path, const view_state *vs_in, int scale, font_set *fonts, char *err,
               size_t errlen) {
    view_state vs = *vs_in;
    if (scale < 1) scale = 1;
    vs.width *= scale;
    vs.height *= scale;
    vs.ui_scale = (vs.ui_scale > 0 ? vs.ui_scale : 1.0f) * (float)scale;
    view_layout *L = calloc(1, sizeof *L);
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    int rc = -1;
    SDL_Surface *surf = NULL;
    if (!L || !cache) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    view_layout_compute(L, &vs, font_measure, fonts);
    view_render(&dl, cache, L, &vs, font_measure, fonts);
    /* --- a single panel is cropped to its content --- */
    if (vs.panel != VIEW_PANEL_ALL)
        view_figure_crop(&dl, view_figure_bounds(&dl, font_measure, fonts), L->gap);
    /* --- */
    surf = sdl_draw_to_surface(&dl, fonts, err, errlen);
    if (!surf) goto done;
    if (!vs.transparent) { /* text blended onto the surface leaves alpha < 255 at edges */
        SDL_LockSurface(surf);
        for (int y = 0; y < surf->h; y++) {
            Uint32 *row = (Uint32 *)((Uint8 *)surf->pixels + (size_t)y * surf->pitch);
            for (int x = 0; x < surf->w; x++) row[x] |= 0xFF000000u; /* ARGB8888 */
        }
        SDL_UnlockSurface(surf);
    }
    char tmp[4200];
    if (atomic_tmpname(tmp, sizeof tmp, path, err, errlen) != 0) goto done;
    if (IMG_SavePNG(surf, tmp) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, IMG_GetError());
        unlink(tmp);
        goto done;
    }
    rc = atomic_rename(tmp, path, err, errlen);
done:
    if (surf) SDL_FreeSurface(surf);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    free(L);
    return rc;
}

int export_vector(const char *path, const view_state *vs, font_set *fonts, char *err,
                  size_t errlen) {
    view_layout *L = calloc(1, sizeof *L);
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    int rc = -1;
    if (!L || !cache) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    view_layout_compute(L, vs, font_measure, fonts);
    view_render(&dl, cache, L, vs, font_measure, fonts);
    /* --- a single panel is cropped to its content --- */
    if (vs->panel != VIEW_PANEL_ALL)
        view_figure_crop(&dl, view_figure_bounds(&dl, font_measure, fonts), L->gap);
    /* --- */
    const char *dot = strrchr(path, '.');
    int pdf = dot && strcmp(dot, ".pdf") == 0;
    char tmp[4200];
    if (atomic_tmpname(tmp, sizeof tmp, path, err, errlen) != 0) goto done;
    if (cairo_draw_file(&dl, tmp, pdf, fonts, err, errlen) != 0) {
        /* the message names the temporary file; say the real one */
        snprintf(err, errlen, "cannot write %s: rendering failed", path);
        unlink(tmp);
        goto done;
    }
    rc = atomic_rename(tmp, path, err, errlen);
done:
    draw_list_free(&dl);
    view_cache_destroy(cache);
    free(L);
    return rc;
}

int app_export(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen) {
    /* check the target folder first: nothing is computed for an unwritable path */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", o->export_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (slash && dir[0] == '\0') snprintf(dir, sizeof dir, "/");
    if (access(dir, W_OK) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", o->export_path, strerror(errno));
        return 1;
    }
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        return 1;
    }
    int rc = 1;
    app_state *s = NULL;
    font_set *fonts = font_set_open(o->font, err, errlen);
    if (!fonts) goto done;
    s = app_state_create(font_measure, fonts);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    int init = app_state_init(s, o, toks, cfg, err, errlen);
    if (init != 0) { /* 2: a --page the figure does not have */
        rc = init;
        goto done;
    }
    view_state vs;
    app_figure_view(s, APP_SAVE_EXPORT, &vs);
    const char *dot = strrchr(o->export_path, '.');
    if (strcmp(dot, ".png") == 0)
        rc = export_png(o->export_path, &vs, o->scale ? o->scale : 1, fonts, err, errlen) ? 1 : 0;
    else
        rc = export_vector(o->export_path, &vs, fonts, err, errlen) ? 1 : 0;
done:
    app_state_destroy(s);
    font_set_close(fonts);
    TTF_Quit();
    return rc;
}
