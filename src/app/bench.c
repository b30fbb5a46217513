/* bench.c: mhaviz --bench. Times the forward pass at a ladder of shapes (median of
 * repeated runs, after a warm-up) and checks that a steady shape allocates nothing.
 * Speed is measured here, never in tests. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "app.h"
#include "blas.h"
#include "font.h"
#include "mha.h"
#include "sdl_draw.h"
#include "state.h"
#include "view.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int make_tokens(tok_list *t, int n) {
    t->count = 0;
    t->replaced = 0;
    t->tokens = calloc((size_t)n, sizeof(char *));
    if (!t->tokens) return -1;
    static const char *words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "looked", "."};
    for (int i = 0; i < n; i++) {
        const char *w = words[i % 9];
        t->tokens[i] = malloc(strlen(w) + 1);
        if (!t->tokens[i]) return -1;
        strcpy(t->tokens[i], w);
        t->count++;
    }
    return 0;
}

/* Layout + drawing list (the view's share of a frame) and a headless software
 * raster of the list (an upper bound on the window's draw cost), at 1600x900. */
static int bench_drawing(char *err, size_t errlen) {
    static const int shapes[][3] = {{7, 64, 4}, {59, 64, 4}, {128, 256, 16}, {512, 512, 64}};
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        return 1;
    }
    font_set *fonts = font_set_open(NULL, err, errlen);
    if (!fonts) {
        TTF_Quit();
        return 1;
    }
    printf("\nview at 1600x900: layout+render (drawing list), software raster of that list\n");
    printf("%6s %8s %4s %6s %16s %16s %8s\n", "n", "d_model", "h", "runs", "layout_render_ms",
           "raster_ms", "cmds");
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    int rc = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && cache; i++) {
        tok_list toks = {0};
        mha_config cfg = {.h = shapes[i][2], .d_model = shapes[i][1], .seed = 1};
        cli_options o = {.theme = -1, .colormap = -1}; /* the window's defaults */
        app_state *s = app_state_create(font_measure, fonts);
        if (!s || make_tokens(&toks, shapes[i][0]) != 0 ||
            app_state_init(s, &o, &toks, &cfg, err, errlen) != 0) {
            tok_free(&toks);
            app_state_destroy(s);
            rc = 1;
            break;
        }
        enum { RUNS = 15 };
        double tl[RUNS], tr[RUNS];
        for (int r = 0; r < RUNS; r++) {
            s->data_version = (unsigned long)r + 1; /* recolour every heatmap, as after a change */
            s->layout_valid = 0;
            double t0 = now_ms();
            const view_layout *L = app_layout(s);
            view_state vs;
            app_view(s, &vs);
            view_render(&dl, cache, L, &vs, font_measure, fonts);
            double t1 = now_ms();
            SDL_Surface *surf = sdl_draw_to_surface(&dl, fonts, err, errlen);
            tr[r] = now_ms() - t1;
            tl[r] = t1 - t0;
            if (surf) SDL_FreeSurface(surf);
        }
        qsort(tl, RUNS, sizeof tl[0], cmp_double);
        qsort(tr, RUNS, sizeof tr[0], cmp_double);
        printf("%6d %8d %4d %6d %16.2f %16.2f %8d\n", shapes[i][0], shapes[i][1], shapes[i][2],
               RUNS, tl[RUNS / 2], tr[RUNS / 2], dl.count);
        app_state_destroy(s);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    font_set_close(fonts);
    TTF_Quit();
    return rc;
}

int app_bench(const cli_options *o, char *err, size_t errlen) {
    (void)o;
    static const int shapes[][3] = {
        {8, 64, 4}, {16, 128, 8}, {40, 64, 4}, {128, 512, 8}, {512, 1024, 16}};
    printf("mhaviz --bench: forward pass, OpenBLAS kernels \"%s\"\n", mm_backend_name());
    printf("%6s %8s %4s %6s %14s %12s %12s %12s\n", "n", "d_model", "h", "runs", "set_X_med_ms",
           "fwd_med_ms", "fwd_min_ms", "allocs/run");
    mha_model *m = mha_model_create();
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        tok_list toks = {0};
        if (make_tokens(&toks, shapes[s][0]) != 0) {
            tok_free(&toks);
            mha_model_destroy(m);
            snprintf(err, errlen, "out of memory");
            return 1;
        }
        mha_config cfg = {.h = shapes[s][2], .d_model = shapes[s][1], .seed = 1};
        if (mha_model_compute(m, &cfg, &toks, err, errlen) != 0) {
            tok_free(&toks);
            mha_model_destroy(m);
            return 1;
        }
        int runs = shapes[s][0] >= 512 ? 15 : 101;
        double t[101], ts[101];
        unsigned long before = m->allocations_;
        for (int r = 0; r < runs; r++) {
            double t0 = now_ms();
            mha_model_set(m, &cfg, &toks, err, errlen); /* same shape: no allocation */
            double t1 = now_ms();
            mha_forward(m);
            t[r] = now_ms() - t1;
            ts[r] = t1 - t0;
        }
        unsigned long allocs = m->allocations_ - before;
        qsort(t, (size_t)runs, sizeof t[0], cmp_double);
        qsort(ts, (size_t)runs, sizeof ts[0], cmp_double);
        printf("%6d %8d %4d %6d %14.3f %12.3f %12.3f %12.2f\n", shapes[s][0], shapes[s][1],
               shapes[s][2], runs, ts[runs / 2], t[runs / 2], t[0], (double)allocs / runs);
        tok_free(&toks);
    }
    mha_model_destroy(m);
    return bench_drawing(err, errlen);
}
