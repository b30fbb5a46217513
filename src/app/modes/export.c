/* export.c: PNG, SVG and PDF files of the view (see export.h), and the headless
 * `mhaviz --export FILE` mode, which needs no display server. A PNG is drawn in
 * bands of rows and encoded row by row, so memory stays bounded at any size. */
#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <SDL.h>
#include <SDL_ttf.h>
#include <errno.h>
#include <limits.h>
#include <png.h>
#include <setjmp.h>
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

/* --- PNG: libpng fed a band of rows at a time ----------------------------------- */

typedef struct {
    atomic_file *af;
    char msg[160]; /* libpng's own complaint, if it had one */
} png_io;

static void png_io_write(png_structp png, png_bytep data, size_t len) {
    png_io *io = png_get_io_ptr(png);
    if (atomic_write(io->af, data, len) != 0) png_error(png, "write failed");
}

static void png_io_flush(png_structp png) {
    (void)png; /* atomic_commit flushes and syncs */
}

static void png_io_error(png_structp png, png_const_charp msg) {
    png_io *io = png_get_error_ptr(png);
    snprintf(io->msg, sizeof io->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void png_io_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

/* Draws dl band by band and encodes each row as it comes: RGB for an opaque
 * picture, RGBA for a transparent one. row holds one row (4 w bytes). Returns 0,
 * or -1 (io->af->err or io->msg say why). */
static int png_encode(png_io *io, sdl_band *band, int rows, const draw_list *dl, int alpha,
                      unsigned char *row) {
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, io, png_io_error, png_io_warning);
    if (!png) return -1;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) { /* png_io_error: a failed write or libpng's error */
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    const int w = dl->width, h = dl->height;
    png_set_write_fn(png, io, png_io_write, png_io_flush);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
                 alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* the Up filter alone: a heatmap's rows repeat, so they filter to zeros. Measured
       at 16384x8192: the same size as libpng's adaptive choice, in under half the
       time */
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_write_info(png, info);
    for (int y0 = 0; y0 < h; y0 += rows) {
        SDL_Surface *s = sdl_band_draw(band, dl, y0);
        for (int y = 0; y < rows && y0 + y < h; y++) {
            const Uint32 *px = (const Uint32 *)((const Uint8 *)s->pixels + (size_t)y * s->pitch);
            unsigned char *o = row;
            for (int x = 0; x < w; x++) { /* ARGB8888 */
                *o++ = (unsigned char)(px[x] >> 16);
                *o++ = (unsigned char)(px[x] >> 8);
                *o++ = (unsigned char)px[x];
                if (alpha) *o++ = (unsigned char)(px[x] >> 24);
            }
            png_write_row(png, row);
        }
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

enum { AS_PNG, AS_SVG, AS_PDF };

/* Writes dl to path as a PNG (drawn EXPORT_BAND_BYTES at a time; alpha: with its
   transparency), an SVG or a PDF, every write checked, all or nothing. */
static int write_list(const char *path, const draw_list *dl, int as, int alpha, font_set *fonts,
                      char *err, size_t errlen) {
    atomic_file af;
    if (as != AS_PNG) {
        if (atomic_open(&af, path, err, errlen) != 0) return -1;
        char why[256];
        if (cairo_draw_stream(dl, af.fp, as == AS_PDF, fonts, why, sizeof why) != 0) {
            snprintf(err, errlen, "cannot write %s: %s", path, why);
            atomic_abort(&af);
            return -1;
        }
        return atomic_commit(&af, err, errlen);
    }
    /* bands of at most EXPORT_BAND_BYTES: 128 rows at 32768 pixels a row */
    int rows = (int)(EXPORT_BAND_BYTES / (4 * (size_t)dl->width)), rc = -1;
    if (rows < 1) rows = 1;
    if (rows > dl->height) rows = dl->height;
    sdl_band *band = sdl_band_create(dl->width, rows, fonts, err, errlen);
    unsigned char *row = malloc(4 * (size_t)dl->width);
    if (!band || !row) {
        if (band) snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (atomic_open(&af, path, err, errlen) != 0) goto done;
    png_io io = {&af, ""};
    if (png_encode(&io, band, rows, dl, alpha, row) != 0) {
        if (af.err)
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(af.err));
        else
            snprintf(err, errlen, "cannot write %s: %s", path, io.msg[0] ? io.msg : "PNG error");
        atomic_abort(&af);
        goto done;
    }
    rc = atomic_commit(&af, err, errlen);
done:
    free(row);
    sdl_band_destroy(band);
    return rc;
}

/* Lays out and renders vs (a single panel cropped to its content) and writes it. */
static int write_view(const char *path, const view_state *vs, int as, font_set *fonts, char *err,
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
    if (vs->panel != VIEW_PANEL_ALL)
        view_figure_crop(&dl, view_figure_bounds(&dl, font_measure, fonts), L->gap);
    rc = write_list(path, &dl, as, vs->transparent, fonts, err, errlen);
done:
    draw_list_free(&dl);
    view_cache_destroy(cache);
    free(L);
    return rc;
}

/* .pdf is a PDF; any other name an SVG. */
static int vector_kind(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot && strcmp(dot, ".pdf") == 0 ? AS_PDF : AS_SVG;
}

int export_png(const char *path, const view_state *vs_in, int scale, font_set *fonts, char *err,
               size_t errlen) {
    view_state vs = *vs_in;
    if (scale < 1) scale = 1;
    if (vs.width < 1 || vs.height < 1 || vs.width > EXPORT_PNG_MAX_SIDE / scale ||
        vs.height > EXPORT_PNG_MAX_SIDE / scale) {
        snprintf(err, errlen,
                 "cannot write %s: %dx%d pixels; a PNG is at most %d pixels a side (--size "
                 "8192x8192 --scale 4)",
                 path, vs.width * (long long)scale > INT_MAX ? -1 : vs.width * scale,
                 vs.height * (long long)scale > INT_MAX ? -1 : vs.height * scale,
                 EXPORT_PNG_MAX_SIDE);
        return -1;
    }
    vs.width *= scale;
    vs.height *= scale;
    vs.ui_scale = (vs.ui_scale > 0 ? vs.ui_scale : 1.0f) * (float)scale;
    return write_view(path, &vs, AS_PNG, fonts, err, errlen);
}

int export_vector(const char *path, const view_state *vs, font_set *fonts, char *err,
                  size_t errlen) {
    return write_view(path, vs, vector_kind(path), fonts, err, errlen);
}

int export_draw_list(const char *path, const draw_list *dl, int alpha, font_set *fonts, char *err,
                     size_t errlen) {
    const char *dot = strrchr(path, '.');
    const int as = dot && strcmp(dot, ".png") == 0 ? AS_PNG : vector_kind(path);
    return write_list(path, dl, as, alpha, fonts, err, errlen);
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
    char cut[256]; /* a note, not an error: the figure is drawn (exit 0) */
    if (app_model_cut(s, cut, sizeof cut)) fprintf(stderr, "mhaviz: %s\n", cut);
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
