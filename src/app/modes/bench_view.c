/* bench_view.c: the view's cases of mhaviz --bench: a frame at 1920 x 1080
 * (layout, drawing list, software raster), a frame the pointer alone asks for,
 * the h step from the key to a finished frame, and the PNG, SVG and PDF exports
 * at 3840 x 2160. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>

#include "async.h"
#include "bench_internal.h"
#include "export.h"
#include "sdl_draw.h"
#include "state.h"
#include "view.h"

/* ---- the view: frames, an h step, exports ----------------------------------------- */

/* An app state of (h, n, d_model) at (w, h) output pixels, as the window makes it. */
static app_state *make_state(bench *b, int heads, int n, int d, int width, int height) {
    cli_options o = {.theme = -1, .colormap = -1, .size_w = width, .size_h = height};
    mha_config cfg = {.h = heads, .d_model = d, .seed = 1};
    tok_list toks = {0};
    app_state *s = app_state_create(font_measure, b->fonts);
    if (!s || make_tokens(&toks, n) != 0) {
        snprintf(b->err, b->errlen, "out of memory");
        tok_free(&toks);
        app_state_destroy(s);
        return NULL;
    }
    if (app_state_init(s, &o, &toks, &cfg, b->err, b->errlen) != 0) {
        tok_free(&toks);
        app_state_destroy(s);
        return NULL;
    }
    return s;
}

typedef struct {
    app_state *s;
    view_cache *cache;
    draw_list dl;
    int recolour; /* 1: every heatmap coloured again, as after a change */
} frame_case;

/* One frame as the window draws it: layout, drawing list, then a software
 * raster of that list (the window hands the list to SDL's renderer instead). */
static int frame_draw(bench *b, frame_case *f) {
    const view_layout *L = app_layout(f->s);
    view_state vs;
    app_view(f->s, &vs);
    view_render(&f->dl, f->cache, L, &vs, font_measure, b->fonts);
    SDL_Surface *surf = sdl_draw_to_surface(&f->dl, b->fonts, b->err, b->errlen);
    if (!surf) return -1;
    SDL_FreeSurface(surf);
    return 0;
}

static int run_frame(bench *b, void *ud) {
    frame_case *f = ud;
    f->s->layout_valid = 0;
    if (f->recolour) f->s->data_version++;
    return frame_draw(b, f);
}

/* Up (h to the next divisor), then a finished frame with the new model (as the
 * window would, a recompute in the background is waited for). Down and its
 * frame are not timed: they put h back for the next run. */
static int run_h_up(bench *b, void *ud) {
    frame_case *f = ud;
    const int h = f->s->cfg.h;
    app_do(f->s, ACT_H_UP);
    app_async_wait(f->s);
    if (f->s->cfg.h == h) {
        snprintf(b->err, b->errlen, "h up did not change h (%s)", f->s->status);
        return -1;
    }
    return frame_draw(b, f);
}

static int run_h_down(bench *b, frame_case *f) {
    app_do(f->s, ACT_H_DOWN);
    app_async_wait(f->s);
    return frame_draw(b, f);
}

/* frame_case over a new state; NULL with b->err on failure */
static int frame_open(bench *b, frame_case *f, int heads, int n, int d, int w, int h) {
    memset(f, 0, sizeof *f);
    draw_list_init(&f->dl);
    f->s = make_state(b, heads, n, d, w, h);
    f->cache = view_cache_create();
    if (!f->s || !f->cache) {
        if (f->s && !f->cache) snprintf(b->err, b->errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void frame_close(frame_case *f) {
    draw_list_free(&f->dl);
    view_cache_destroy(f->cache);
    if (f->s) app_async_disable(f->s);
    app_state_destroy(f->s);
}

/* A frame the pointer alone asks for, as the window draws it: the hover, the layout
 * (kept), the drawing list, and its replay on a software renderer kept across frames
 * (the window keeps its renderer, its textures and text). The pointer moves between
 * two cells of W^O, so each frame's outline and tooltip are new. */
typedef struct {
    frame_case f;
    SDL_Surface *surf;
    SDL_Renderer *ren;
    sdl_draw *drawer;
    int xy[2][2], turn;
} hover_case;

static int run_hover(bench *b, void *ud) {
    hover_case *hc = ud;
    const int *p = hc->xy[hc->turn ^= 1];
    app_action a = {.kind = ACT_HOVER, .x = p[0], .y = p[1]};
    app_apply(hc->f.s, &a);
    const view_layout *L = app_layout(hc->f.s);
    view_state vs;
    app_view(hc->f.s, &vs);
    view_render(&hc->f.dl, hc->f.cache, L, &vs, font_measure, b->fonts);
    sdl_draw_list(hc->drawer, &hc->f.dl);
    SDL_RenderFlush(hc->ren);
    return 0;
}

static int bench_hover(bench *b, int heads, int n, int d) {
    hover_case hc;
    memset(&hc, 0, sizeof hc);
    int rc = frame_open(b, &hc.f, heads, n, d, FRAME_W, FRAME_H);
    if (rc == 0) {
        hc.surf = SDL_CreateRGBSurfaceWithFormat(0, FRAME_W, FRAME_H, 32, SDL_PIXELFORMAT_ARGB8888);
        hc.ren = hc.surf ? SDL_CreateSoftwareRenderer(hc.surf) : NULL;
        hc.drawer = hc.ren ? sdl_draw_create(hc.ren, b->fonts) : NULL;
        if (!hc.drawer) {
            snprintf(b->err, b->errlen, "software renderer: %s", SDL_GetError());
            rc = -1;
        }
    }
    if (rc == 0) { /* two cells of W^O, a quarter of its side apart */
        const view_rect r = app_layout(hc.f.s)->w_o.map;
        for (int i = 0; i < 2; i++) {
            hc.xy[i][0] = r.x + r.w * (1 + 2 * i) / 4;
            hc.xy[i][1] = r.y + r.h * (1 + 2 * i) / 4;
        }
        if (r.w <= 0) {
            snprintf(b->err, b->errlen, "hover: W^O is not shown at %dx%d", FRAME_W, FRAME_H);
            rc = -1;
        }
    }
    timing t;
    if (rc == 0) rc = time_runs(b, &t, run_hover, &hc);
    if (rc == 0 && b->json)
        printf("{\"case\":\"hover\",\"width\":%d,\"height\":%d,\"h\":%d,\"n\":%d,\"d_model\":%d,"
               "\"median_ms\":%.3f}\n",
               FRAME_W, FRAME_H, heads, n, d, t.median * 1e3);
    else if (rc == 0)
        printf("hover    h %d, n %d, d_model %d: %.2f ms a frame over W^O (median of %d)\n", heads,
               n, d, t.median * 1e3, t.runs);
    sdl_draw_destroy(hc.drawer);
    if (hc.ren) SDL_DestroyRenderer(hc.ren);
    if (hc.surf) SDL_FreeSurface(hc.surf);
    frame_close(&hc.f);
    return rc;
}

int bench_frames(bench *b) {
    static const int shapes[][3] = {{4, 12, 64}, {16, 64, 256}, {16, 256, 256}}; /* h, n, d */
    if (!b->json) {
        printf("\nframe at %dx%d: layout + drawing list + software raster of the whole view\n",
               FRAME_W, FRAME_H);
        printf("%4s %5s %7s %7s %12s %12s %8s\n", "h", "n", "d_model", "runs", "after_change",
               "colours_kept", "cmds");
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && rc == 0; i++) {
        const int heads = shapes[i][0], n = shapes[i][1], d = shapes[i][2];
        frame_case f;
        timing t_change, t_kept;
        rc = frame_open(b, &f, heads, n, d, FRAME_W, FRAME_H);
        if (rc == 0) {
            f.recolour = 1;
            rc = time_runs(b, &t_change, run_frame, &f);
        }
        if (rc == 0) {
            f.recolour = 0;
            rc = time_runs(b, &t_kept, run_frame, &f);
        }
        if (rc == 0 && b->json)
            printf("{\"case\":\"frame\",\"width\":%d,\"height\":%d,\"h\":%d,\"n\":%d,"
                   "\"d_model\":%d,\"median_ms\":%.3f,\"colours_kept_ms\":%.3f}\n",
                   FRAME_W, FRAME_H, heads, n, d, t_change.median * 1e3, t_kept.median * 1e3);
        else if (rc == 0)
            printf("%4d %5d %7d %7d %9.2f ms %9.2f ms %8d\n", heads, n, d, t_change.runs,
                   t_change.median * 1e3, t_kept.median * 1e3, f.dl.count);
        frame_close(&f);
    }
    if (rc == 0) rc = bench_hover(b, 8, 7, 4096);
    return rc;
}

/* From h up to a finished frame, at (h, n, d_model); also the share of that the
 * model's recompute took (the state's compute_ms). */
int bench_h_step(bench *b, const char *name, int heads, int n, int d) {
    enum { RUNS_MAX = 1000 };
    static double compute_ms[RUNS_MAX];
    frame_case f;
    int rc = frame_open(b, &f, heads, n, d, FRAME_W, FRAME_H);
    if (rc == 0 && app_async_enable(f.s, NULL, NULL, -1.0) != 0) { /* as the window runs */
        snprintf(b->err, b->errlen, "cannot start the recompute thread");
        rc = -1;
    }
    if (rc == 0) rc = frame_draw(b, &f);
    /* time_runs cannot interleave the untimed Down: time each Up by hand */
    const int runs_max = b->quick ? 1 : RUNS_MAX;
    int runs = 0, h_up = heads;
    const double start = now_s();
    if (rc == 0 && !b->quick) rc = run_h_up(b, &f) || run_h_down(b, &f); /* warm-up */
    while (rc == 0 && runs < runs_max) {
        const double t0 = now_s();
        rc = run_h_up(b, &f);
        b->samples[runs] = now_s() - t0;
        compute_ms[runs++] = f.s->compute_ms;
        h_up = f.s->cfg.h;
        if (rc == 0) rc = run_h_down(b, &f);
        if (now_s() - start >= BENCH_MIN_S && runs >= BENCH_MIN_RUNS) break;
    }
    if (rc == 0) {
        const double med = median_sorted(b->samples, runs) * 1e3;
        const double comp = median_sorted(compute_ms, runs);
        if (b->json && strcmp(name, "update") == 0)
            printf("{\"case\":\"update\",\"h\":%d,\"n\":%d,\"d_model\":%d,\"median_ms\":%.3f,"
                   "\"compute_ms\":%.3f}\n",
                   heads, n, d, med, comp);
        else if (b->json)
            printf("{\"case\":\"%s\",\"d_model\":%d,\"n\":%d,\"h\":%d,\"median_ms\":%.3f,"
                   "\"compute_ms\":%.3f}\n",
                   name, d, n, heads, med, comp);
        else
            printf("%-8s h %d -> %d, n %d, d_model %d: %.2f ms, of which the model %.2f ms "
                   "(median of %d)\n",
                   name, heads, h_up, n, d, med, comp, runs);
    }
    frame_close(&f);
    return rc;
}

typedef struct {
    app_state *s;
    const char *path;
} export_case;

static int run_export(bench *b, void *ud) {
    export_case *e = ud;
    view_state vs;
    app_figure_view(e->s, APP_SAVE_VIEW, &vs);
    const char *dot = strrchr(e->path, '.');
    if (strcmp(dot, ".png") == 0) return export_png(e->path, &vs, 1, b->fonts, b->err, b->errlen);
    return export_vector(e->path, &vs, b->fonts, b->err, b->errlen);
}

int bench_exports(bench *b) {
    static const char *formats[] = {"png", "svg", "pdf"};
    const int heads = 4, n = 12, d = 64; /* the window's first picture */
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/mhaviz-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(b->err, b->errlen, "cannot make a temporary folder in %s",
                 tmp && *tmp ? tmp : "/tmp");
        return -1;
    }
    if (!b->json)
        printf("\nexport at %dx%d (h %d, n %d, d_model %d), written to a temporary folder\n",
               EXPORT_W, EXPORT_H, heads, n, d);
    app_state *s = make_state(b, heads, n, d, EXPORT_W, EXPORT_H);
    int rc = s ? 0 : -1;
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/bench.%s", dir, formats[i]);
        export_case e = {s, path};
        timing t;
        rc = time_runs(b, &t, run_export, &e);
        if (rc == 0 && b->json)
            printf("{\"case\":\"export\",\"format\":\"%s\",\"width\":%d,\"height\":%d,\"h\":%d,"
                   "\"n\":%d,\"d_model\":%d,\"ms\":%.2f}\n",
                   formats[i], EXPORT_W, EXPORT_H, heads, n, d, t.median * 1e3);
        else if (rc == 0)
            printf("%s: %.1f ms (median of %d)\n", formats[i], t.median * 1e3, t.runs);
        unlink(path);
    }
    app_state_destroy(s);
    rmdir(dir);
    return rc;
}

/* ---- peak memory ------------------------------------------------------------------- */

int bench_one_frame(bench *b, int heads, int n, int d) {
    frame_case f;
    int rc = frame_open(b, &f, heads, n, d, FRAME_W, FRAME_H);
    if (rc == 0) rc = frame_draw(b, &f);
    frame_close(&f);
    return rc;
}
