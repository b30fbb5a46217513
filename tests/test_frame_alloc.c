/* test_frame_alloc.c: what a frame costs when little changed, headless.
 * - No allocation per frame: once a picture has been drawn, view_render of the same
 *   state allocates nothing (the drawing list, its text arena, the image cache and
 *   its working memory are re-used), for the whole view, the focus view with its
 *   step-through, values in the cells, the difference view, a causal mask, the
 *   lesson's panels, each contrast and greys, with the pointer on a head, on W^O
 *   or moving; nor does recolouring the same shape (data_version changed) once two
 *   such frames have been drawn. Replaying an unchanged list on the SDL backend
 *   allocates nothing either, renders no text and makes no texture, and a recoloured
 *   list of the same shape updates the textures it has. The binary is linked with
 *   -Wl,--wrap for malloc, calloc, realloc (every call from mhaviz's own code passes
 *   through the counters here), font_render and SDL's texture constructors.
 * - A matrix's colour scale is computed once per data_version: W^O's numbers doubled
 *   behind the view's back leave its colorbar as it was until data_version changes.
 * - The largest-|value| reduction against a reference written here, on blocks with
 *   ties of opposite signs (the first in row-major order wins), infinities, NaN and
 *   negative zeros. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "font.h"
#include "sdl_draw.h"
#include "view_fixture.h"
#include "view_internal.h"

/* --- the counters ------------------------------------------------------------------ */

static int g_counting;
static long g_allocs, g_renders, g_textures;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

void *__wrap_malloc(size_t size) {
    g_allocs += g_counting;
    return __real_malloc(size);
}
void *__wrap_calloc(size_t n, size_t size) {
    g_allocs += g_counting;
    return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size) {
    g_allocs += g_counting;
    return __real_realloc(p, size);
}

SDL_Surface *__real_font_render(font_set *fs, const char *text, int size, int bold, rgba color);
SDL_Surface *__wrap_font_render(font_set *fs, const char *text, int size, int bold, rgba color);
SDL_Surface *__wrap_font_render(font_set *fs, const char *text, int size, int bold, rgba color) {
    g_renders += g_counting;
    return __real_font_render(fs, text, size, bold, color);
}

SDL_Texture *__real_SDL_CreateTexture(SDL_Renderer *r, Uint32 format, int access, int w, int h);
SDL_Texture *__wrap_SDL_CreateTexture(SDL_Renderer *r, Uint32 format, int access, int w, int h);
SDL_Texture *__wrap_SDL_CreateTexture(SDL_Renderer *r, Uint32 format, int access, int w, int h) {
    g_textures += g_counting;
    return __real_SDL_CreateTexture(r, format, access, w, h);
}
SDL_Texture *__real_SDL_CreateTextureFromSurface(SDL_Renderer *r, SDL_Surface *s);
SDL_Texture *__wrap_SDL_CreateTextureFromSurface(SDL_Renderer *r, SDL_Surface *s);
SDL_Texture *__wrap_SDL_CreateTextureFromSurface(SDL_Renderer *r, SDL_Surface *s) {
    g_textures += g_counting;
    return __real_SDL_CreateTextureFromSurface(r, s);
}

static void count_start(void) {
    g_allocs = g_renders = g_textures = 0;
    g_counting = 1;
}

static void count_stop(void) {
    g_counting = 0;
}

/* --- a scene: a model, its state, a layout, a cache and a list ---------------------- */

typedef struct {
    fx_model fm;
    view_state s;
    view_layout L;
    view_cache *cache;
    draw_list dl;
    float entropy[16], divergence[16 * 16], pass[16 * 16], change[16];
    float *out_diff, *step[3];
} scene;

static void scene_make(scene *sc, int n, int d, int h, mha_mask mask) {
    memset(sc, 0, sizeof *sc);
    fx_model_make(&sc->fm, n, d, h, mask);
    fx_state(&sc->s, &sc->fm, 1600, 900);
    sc->cache = view_cache_create();
    assert_non_null(sc->cache);
    draw_list_init(&sc->dl);
    /* the lesson's and the step-through's numbers: any values do for drawing */
    for (int i = 0; i < h * h && i < 256; i++) sc->divergence[i] = (float)(i % 7) / 7.0f;
    for (int i = 0; i < h && i < 16; i++) sc->entropy[i] = 1.0f + 0.1f * (float)i;
    sc->out_diff = calloc((size_t)n * d, sizeof(float));
    for (int k = 0; k < 3; k++) sc->step[k] = calloc((size_t)n * (k == 2 ? d : n), sizeof(float));
    assert_non_null(sc->out_diff);
    for (int k = 0; k < 3; k++) assert_non_null(sc->step[k]);
    for (int i = 0; i < n * d; i++) sc->out_diff[i] = sc->fm.m->out[i] * 0.25f;
    for (int i = 0; i < n * n; i++) sc->step[0][i] = sc->step[1][i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < n * d; i++) sc->step[2][i] = sc->fm.m->out[i] * 0.5f;
    sc->s.head_entropy = h <= 16 ? sc->entropy : NULL;
    sc->s.head_divergence = h <= 16 ? sc->divergence : NULL;
    sc->s.divergence_step = 1;
    for (int i = 0; i < h * h && i < 256; i++) sc->pass[i] = (float)(i % 5) / 2.5f - 1.0f;
    for (int i = 0; i < h && i < 16; i++) sc->change[i] = 0.05f * (float)i;
    sc->s.head_pass_cos = h <= 16 ? sc->pass : NULL;
    sc->s.head_change = h <= 16 ? sc->change : NULL;
    sc->s.contrib_step = 1;
    sc->s.step_raw = sc->step[0];
    sc->s.step_scaled = sc->step[1];
    sc->s.step_share = sc->step[2];
}

static void scene_free(scene *sc) {
    draw_list_free(&sc->dl);
    view_cache_destroy(sc->cache);
    free(sc->out_diff);
    for (int k = 0; k < 3; k++) free(sc->step[k]);
    fx_model_free(&sc->fm);
}

static void scene_layout(scene *sc) {
    view_layout_compute(&sc->L, &sc->s, fx_measure, NULL);
}

static void scene_render(scene *sc) {
    view_render(&sc->dl, sc->cache, &sc->L, &sc->s, fx_measure, NULL);
}

/* The centre of r. */
static void centre(const view_rect r, int *x, int *y) {
    *x = r.x + r.w / 2;
    *y = r.y + r.h / 2;
}

/* --- no allocation per frame --------------------------------------------------------- */

enum { HOVER_NONE, HOVER_HEAD, HOVER_W_O, HOVER_MOVING };

typedef struct {
    const char *name;
    int n, d, h;
    mha_mask mask;
    int focus, step, values, diff, lesson, contrast, cmap, hover;
} frame_case;

static const frame_case CASES[] = {
    {"whole view", 12, 64, 4, MHA_MASK_NONE, 0, 0, 0, 0, 1, 0, CMAP_VIRIDIS, HOVER_NONE},
    {"pointer on a head", 12, 64, 4, MHA_MASK_NONE, 0, 0, 0, 0, 1, 0, CMAP_VIRIDIS, HOVER_HEAD},
    {"pointer on W^O", 7, 512, 8, MHA_MASK_NONE, 0, 0, 0, 0, 1, 0, CMAP_MAGMA, HOVER_W_O},
    {"pointer moving", 16, 128, 8, MHA_MASK_CAUSAL, 0, 0, 0, 0, 1, 1, CMAP_CIVIDIS, HOVER_MOVING},
    {"values in the cells", 6, 16, 2, MHA_MASK_CAUSAL, 0, 0, 1, 0, 0, 0, CMAP_VIRIDIS, HOVER_HEAD},
    {"difference view", 12, 64, 4, MHA_MASK_NONE, 0, 0, 0, 1, 1, 2, CMAP_GREYS, HOVER_W_O},
    {"focus view", 12, 64, 4, MHA_MASK_NONE, 2, 0, 0, 0, 1, 0, CMAP_VIRIDIS, HOVER_HEAD},
    {"step-through", 10, 64, 4, MHA_MASK_CAUSAL, 3, 5, 1, 0, 0, 0, CMAP_MAGMA, HOVER_NONE},
    {"reduced matrices", 200, 1024, 16, MHA_MASK_NONE, 0, 0, 0, 0, 1, 1, CMAP_VIRIDIS,
     HOVER_MOVING},
};

static void set_case(scene *sc, const frame_case *fc) {
    sc->s.look.focus = fc->focus;
    sc->s.look.step = fc->step;
    sc->s.look.values = fc->values;
    sc->s.look.diff = fc->diff;
    sc->s.lesson = fc->lesson;
    sc->s.look.contrast = fc->contrast;
    sc->s.look.cmap = fc->cmap;
    scene_layout(sc);
}

/* Moves the pointer for frame i of the case. */
static void set_hover(scene *sc, const frame_case *fc, int i) {
    int x = -1, y = -1;
    if (fc->hover == HOVER_HEAD) centre(sc->L.heads[0].map, &x, &y);
    if (fc->hover == HOVER_W_O) centre(sc->L.w_o.map, &x, &y);
    if (fc->hover == HOVER_MOVING) { /* across head 1 and W^O, a new cell each frame */
        view_rect r = i % 2 ? sc->L.w_o.map : sc->L.heads[0].map;
        x = r.x + (r.w - 1) * (i % 5 + 1) / 6;
        y = r.y + (r.h - 1) * (i % 3 + 1) / 4;
    }
    sc->s.hover_x = x;
    sc->s.hover_y = y;
}

static void test_no_alloc_per_frame(void **state) {
    (void)state;
    fx_reset();
    for (size_t t = 0; t < sizeof CASES / sizeof CASES[0]; t++) {
        const frame_case *fc = &CASES[t];
        static scene sc;
        scene_make(&sc, fc->n, fc->d, fc->h, fc->mask);
        set_case(&sc, fc);
        snprintf(fx_where, sizeof fx_where, "%s (n %d, d_model %d, h %d)", fc->name, fc->n, fc->d,
                 fc->h);
        EXPECT_INT("test premise: the focused head", fc->focus, sc.L.focus);
        EXPECT_INT("test premise: the step-through shown", fc->step > 0, sc.L.steps.shown);
        for (int i = 0; i < 3 && fc->hover != HOVER_NONE; i++) {
            set_hover(&sc, fc, i);
            const view_hit hit = view_hit_test(&sc.L, &sc.s, sc.s.hover_x, sc.s.hover_y);
            EXPECT(hit.kind == HIT_HEAD_CELL || hit.kind == HIT_W_O,
                   "test premise: expected the pointer on a head or W^O, got hit kind %d",
                   (int)hit.kind);
        }
        /* the counters see the view's allocations: the first frame makes its images */
        set_hover(&sc, fc, 0);
        count_start();
        scene_render(&sc);
        count_stop();
        EXPECT(g_allocs > 0, "first frame: expected allocations (images, the list), got %ld",
               g_allocs);
        const int images = sc.dl.image_count;
        /* the pointer's whole path once, so every tooltip's size has been met */
        for (int i = 1; i <= 30; i++) {
            set_hover(&sc, fc, i);
            scene_render(&sc);
        }
        for (int i = 1; i <= 30; i++) {
            set_hover(&sc, fc, i);
            count_start();
            scene_render(&sc);
            count_stop();
            EXPECT(g_allocs == 0, "frame %d with the same numbers: expected 0 allocations, got %ld",
                   i, g_allocs);
            EXPECT_INT("images in the list", images, sc.dl.image_count);
        }
        /* new numbers of the same shape: every image coloured again, into kept buffers */
        for (int i = 0; i < 2; i++) {
            sc.s.data_version++;
            scene_render(&sc);
        }
        for (int i = 0; i < 3; i++) {
            sc.s.data_version++;
            count_start();
            scene_render(&sc);
            count_stop();
            EXPECT(g_allocs == 0,
                   "recoloured frame %d (data_version %lu): expected 0 allocations, got %ld", i + 1,
                   sc.s.data_version, g_allocs);
        }
        scene_free(&sc);
    }
    fx_finish("no allocation per frame");
}

/* --- the backend -------------------------------------------------------------------- */

static void test_backend_reuses(void **state) {
    (void)state;
    fx_reset();
    char err[256];
    assert_int_equal(TTF_Init(), 0);
    font_set *fonts = font_set_open(NULL, err, sizeof err);
    if (!fonts) fail_msg("font_set_open: expected fonts, got %s", err);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1600, 900, 32, SDL_PIXELFORMAT_ARGB8888);
    assert_non_null(surf);
    SDL_Renderer *ren = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(ren);
    sdl_draw *d = sdl_draw_create(ren, fonts);
    assert_non_null(d);
    static scene sc;
    scene_make(&sc, 24, 128, 8, MHA_MASK_CAUSAL);
    snprintf(fx_where, sizeof fx_where, "SDL backend, n 24, d_model 128, h 8");
    view_layout_compute(&sc.L, &sc.s, font_measure, fonts);
    view_render(&sc.dl, sc.cache, &sc.L, &sc.s, font_measure, fonts);
    count_start();
    sdl_draw_list(d, &sc.dl);
    count_stop();
    EXPECT(g_renders > 0 && g_textures > 0,
           "first replay: expected text rendered and textures made, got %ld and %ld", g_renders,
           g_textures);
    const unsigned long uploads = sdl_draw_uploads(d);
    for (int i = 0; i < 3; i++) {
        count_start();
        sdl_draw_list(d, &sc.dl);
        count_stop();
        EXPECT(g_allocs == 0, "replay %d of the same list: expected 0 allocations, got %ld", i + 1,
               g_allocs);
        EXPECT(g_renders == 0, "replay %d: expected no text rendered, got %ld", i + 1, g_renders);
        EXPECT(g_textures == 0, "replay %d: expected no texture made, got %ld", i + 1, g_textures);
        EXPECT_INT("image uploads", uploads, sdl_draw_uploads(d));
    }
    /* recoloured images of the same sizes: the kept textures are updated, once for
       each new image key (the colorbars keep theirs) */
    for (int i = 0; i < 3; i++) {
        uint64_t old[256];
        int old_n = 0;
        for (int k = 0; k < sc.dl.image_count && old_n < 256; k++)
            old[old_n++] = sc.dl.images[k].key;
        sc.s.data_version++;
        view_render(&sc.dl, sc.cache, &sc.L, &sc.s, font_measure, fonts);
        unsigned long fresh = 0;
        for (int k = 0; k < sc.dl.image_count; k++) {
            int seen = 0;
            for (int j = 0; j < old_n; j++) seen |= old[j] == sc.dl.images[k].key;
            for (int j = 0; j < k; j++) seen |= sc.dl.images[j].key == sc.dl.images[k].key;
            fresh += !seen;
        }
        const unsigned long before = sdl_draw_uploads(d);
        count_start();
        sdl_draw_list(d, &sc.dl);
        count_stop();
        EXPECT(fresh > 0, "recoloured list %d: expected new image keys, got none", i + 1);
        EXPECT(sdl_draw_uploads(d) - before == fresh,
               "recoloured list %d: expected one upload per new image (%lu), got %lu", i + 1, fresh,
               sdl_draw_uploads(d) - before);
        if (i == 0) continue; /* the first recolour finds no spare texture yet */
        EXPECT(g_textures == 0, "recoloured list %d: expected no new texture, got %ld", i + 1,
               g_textures);
        EXPECT(g_allocs == 0, "recoloured list %d: expected 0 allocations, got %ld", i + 1,
               g_allocs);
    }
    scene_free(&sc);
    sdl_draw_destroy(d);
    SDL_DestroyRenderer(ren);
    SDL_FreeSurface(surf);
    font_set_close(fonts);
    TTF_Quit();
    fx_finish("backend re-uses");
}

/* --- the colour scale, once per data_version --------------------------------------------- */

/* The texts drawn under W^O's colorbar, joined. */
static void wo_ticks(const scene *sc, char *buf, size_t len) {
    const view_rect cb = sc->L.w_o.cbar;
    buf[0] = '\0';
    for (int i = 0; i < sc->dl.count; i++) {
        const draw_cmd *c = &sc->dl.cmds[i];
        if (c->kind == DC_TEXT && c->y > cb.y && c->y <= cb.y + cb.h + sc->L.pad &&
            c->x >= cb.x - 40 && c->x <= cb.x + cb.w) {
            size_t l = strlen(buf);
            snprintf(buf + l, len - l, "%s|", draw_cmd_text(&sc->dl, c));
        }
    }
}

static void test_scale_per_version(void **state) {
    (void)state;
    fx_reset();
    static scene sc;
    scene_make(&sc, 8, 64, 4, MHA_MASK_NONE);
    snprintf(fx_where, sizeof fx_where, "n 8, d_model 64, h 4");
    scene_layout(&sc);
    scene_render(&sc);
    char before[256], kept[256], after[256];
    wo_ticks(&sc, before, sizeof before);
    EXPECT(strlen(before) > 3, "expected tick labels under W^O's colorbar, got \"%s\"", before);
    float *w_o = sc.fm.m->w_o;
    for (int i = 0; i < 64 * 64; i++) w_o[i] *= 2.0f; /* behind the view's back */
    sc.s.hover_x = sc.L.w_o.map.x + 3, sc.s.hover_y = sc.L.w_o.map.y + 3;
    scene_render(&sc);
    wo_ticks(&sc, kept, sizeof kept);
    EXPECT(strcmp(before, kept) == 0,
           "same data_version: expected W^O's scale kept (\"%s\"), got \"%s\": the frame read "
           "the matrix again",
           before, kept);
    sc.s.data_version++;
    scene_render(&sc);
    wo_ticks(&sc, after, sizeof after);
    EXPECT(strcmp(before, after) != 0,
           "new data_version: expected W^O's scale doubled, got the same ticks \"%s\"", after);
    float mx = 0.0f;
    for (int i = 0; i < 64 * 64; i++) mx = fmaxf(mx, fabsf(w_o[i]));
    char want[32];
    view_format_number(want, sizeof want, mx);
    EXPECT(strstr(after, want) != NULL,
           "new data_version: expected the tick %s (max |W^O|), got %s", want, after);
    scene_free(&sc);
    fx_finish("colour scale per data_version");
}

/* --- the reduction -------------------------------------------------------------------- */

/* The covered value of largest magnitude, sign kept, first in row-major order;
   non-finite counts as 0 (written here from the definition). */
static float ref_extreme(const float *a, int ld, int r0, int r1, int c0, int c1) {
    float best = 0.0f;
    for (int r = r0; r < r1; r++)
        for (int c = c0; c < c1; c++) {
            float v = a[r * ld + c];
            if (isnan(v) || isinf(v)) v = 0.0f;
            if (fabsf(v) > fabsf(best)) best = v;
        }
    return best;
}

static void test_extreme_reduction(void **state) {
    (void)state;
    fx_reset();
    enum { R = 13, C = 17 };
    float a[R * C];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < R * C; i++) { /* few distinct magnitudes: ties everywhere */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = (float)((int)(x % 7) - 3) * 0.25f;
    }
    a[0] = INFINITY, a[5] = -INFINITY, a[20] = NAN, a[40] = -0.0f, a[41] = -0.0f;
    for (int c = 0; c < C; c++) a[6 * C + c] = c % 2 ? -0.0f : 0.0f; /* a row of zeros */
    a[2 * C + 9] = -0.75f, a[1 * C + 10] = 0.75f; /* opposite signs, earlier row on the right */
    static const int sizes[][2] = {{17, 13}, {8, 6}, {5, 4}, {3, 2}, {1, 1}, {16, 13}, {17, 1}};
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int mw = sizes[s][0], mh = sizes[s][1];
        snprintf(fx_where, sizeof fx_where, "13 x 17 at %d x %d", mh, mw);
        int w = 0, h = 0;
        uint64_t key = 0;
        view_cache_begin(cache);
        const rgba *px = view_heat_image(cache, 0x7E57 + s, a, R, C, C, mw, mh, VIEW_MAP_DIV, 0,
                                         0.75f, &w, &h, &key);
        EXPECT(px && w == mw && h == mh, "expected a %d x %d image, got %d x %d", mw, mh, w, h);
        for (int yy = 0; yy < h && px; yy++)
            for (int xx = 0; xx < w; xx++) {
                const int r0 = yy * R / h, r1 = (yy + 1) * R / h;
                const int c0 = xx * C / w, c1 = (xx + 1) * C / w;
                const float v = ref_extreme(a, C, r0, r1, c0, c1);
                const rgba want = cmap_signed(0, v / 0.75f), got = px[yy * w + xx];
                EXPECT(memcmp(&want, &got, sizeof want) == 0,
                       "pixel (%d, %d), rows %d..%d, cols %d..%d, extreme %g: expected "
                       "#%02x%02x%02x, got #%02x%02x%02x",
                       yy, xx, r0, r1 - 1, c0, c1 - 1, (double)v, want.r, want.g, want.b, got.r,
                       got.g, got.b);
            }
        view_cache_end(cache);
    }
    view_cache_destroy(cache);
    fx_finish("largest |value| reduction");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_alloc_per_frame),
        cmocka_unit_test(test_backend_reuses),
        cmocka_unit_test(test_scale_per_version),
        cmocka_unit_test(test_extreme_reduction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
