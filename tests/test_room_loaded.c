/* test_room_loaded.c: the room rule (test_layout_room.c) on loaded models' layouts,
 * measured with the real fonts, as the app and its exports measure them: where a panel
 * is shrunk (heads whose tokens are not all labelled, the side panels on but given no
 * room, the next-token panel short of its rows) or paged, the largest rectangle of the
 * main area that meets none of the layout's rectangles is at most 15 % of the window,
 * presenting and as a plain export (the README's model pictures). The fake text measure
 * of the other layout tests lays these out otherwise: model-regroup.png (20 % empty)
 * and a qwen2 export at 1280x720 (16 %) held there. */
#include <SDL_ttf.h>
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
#include "layout_items.h"
#include "sample.h"

static font_set *fonts;

static const int SIZES[][2] = {{1280, 720},  {1600, 900},  {1920, 1080},
                               {2560, 1440}, {3840, 2160}, {1024, 768}};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
#define ROOM_MAX_PERCENT 15

/* A panel shrunk or paged (test_layout_room.c's, and the next-token panel short of
   its rows). */
static int shrunk_or_paged(const view_layout *L, const view_state *s) {
    return L->pages > 1 || (L->shown_heads > 0 && L->label_stride != 1) ||
           (s->lesson && !L->lesson_shown) ||
           (s->next && (!L->next.shown || L->next.k < s->next->k));
}

/* The room check of one layout; returns 1 when it holds. */
static int room_holds(const view_layout *L, const view_state *s) {
    static items it;
    collect(&it, L);
    const view_rect area = room_area(L);
    view_rect r;
    const long empty = largest_empty(&it, area, &r);
    const long window = (long)s->width * s->height;
    if (!shrunk_or_paged(L, s)) return 1;
    EXPECT(empty * 100 <= window * ROOM_MAX_PERCENT,
           "expected no empty room over %d %% of the window while a panel is shrunk or paged "
           "(pages %d, label stride %d, side panels %s, next rows %d), got %.1f %% at " FX_RFMT,
           ROOM_MAX_PERCENT, L->pages, L->label_stride,
           s->lesson ? (L->lesson_shown ? "shown" : "no room") : "off",
           L->next.shown ? L->next.k : 0, 100.0 * (double)empty / (double)window, FX_R(r));
    return empty * 100 <= window * ROOM_MAX_PERCENT;
}

/* A loaded model's layer as the view is fed it (test_view_model.c's way): the layer,
   its overview (name, layers, heads; closed), the next-token panel with the pale bars
   of heads removed or K/V heads regrouped, and its own shapes: K/V heads shared
   (h_kv), or a head_dim that is not d_model / h (Concat and W^O then not drawn). */
typedef struct {
    const char *name;
    int n, d, h, h_kv, d_k, layers, encoder;
} loaded;

static const loaded LOADED[] = {
    {"smollm2-shaped", 15, 576, 9, 3, 0, 30, 0}, /* the README's model-*.png */
    {"smollm2-shaped", 15, 576, 9, 1, 0, 30, 0}, /* model-regroup.png: 3 K/V pooled to 1 */
    {"qwen2", 15, 48, 8, 4, 12, 2, 0},           /* llama_gen.py --type qwen2 --heads 8 */
    {"gpt2", 12, 768, 12, 0, 0, 12, 0},          {"bert-base-uncased", 12, 48, 12, 0, 0, 12, 1},
    {"gpt2", 60, 768, 12, 0, 0, 12, 0},
};
#define NLOADED ((int)(sizeof LOADED / sizeof LOADED[0]))

/* Open: these still leave more than 15 % empty, the next-token panel in a strip at the
   foot of the main area beside a part of it nothing fills (README, "Text floors and
   room"): the encoder's layer with the side panels off at 1024x768 to 3840x2160, and
   SmolLM2's regrouped layer at 1280x720 (panels on) and 1024x768 (off). Skipped. */
static const struct {
    int model, w, ht, present, lesson; /* LOADED's index; present -1: either */
} OPEN[] = {
    {1, 1280, 720, -1, 1}, {1, 1024, 768, 1, 0},  {1, 1024, 768, 0, 0},
    {4, 1280, 720, -1, 0}, {4, 1600, 900, 1, 0},  {4, 1920, 1080, 1, 0},
    {4, 2560, 1440, 1, 0}, {4, 3840, 2160, 1, 0}, {4, 1024, 768, 0, 0},
};

static int open_case(int model, const view_state *s) {
    for (size_t i = 0; i < sizeof OPEN / sizeof OPEN[0]; i++)
        if (OPEN[i].model == model && OPEN[i].w == s->width && OPEN[i].ht == s->height &&
            (OPEN[i].present < 0 || OPEN[i].present == s->look.present) &&
            OPEN[i].lesson == s->lesson)
            return 1;
    return 0;
}

static void loaded_next(view_next *x, int pale) {
    static const char *const words[5] = {"\xE2\x90\xA3"
                                         "dog",
                                         "\xE2\x90\xA3"
                                         "cat",
                                         "<cd>", "j",
                                         "\xE2\x90\xA3"
                                         "the"};
    memset(x, 0, sizeof *x);
    x->k = 5;
    x->after = "\xE2\x90\xA3"
               "dog";
    for (int i = 0; i < 5; i++)
        x->token[i] = words[i], x->p[i] = 0.3f / (float)(i + 1),
        x->p_full[i] = pale ? 0.2f / (float)(i + 1) : -1.0f;
}

/* The room rule on loaded models' layouts: presenting and as a plain export (the
   README's model pictures), with the side panels on and off. */
static void test_room_loaded(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    test_sample smp = test_sample_begin("room, loaded models"); /* sanitizers: a k-th */
    for (int m = 0; m < NLOADED; m++) {
        const loaded *ld = &LOADED[m];
        fx_model fm;
        fx_model_make(&fm, ld->n, ld->d, ld->h, ld->encoder ? MHA_MASK_NONE : MHA_MASK_CAUSAL);
        attn_layer layer = fm.layer;
        layer.h_kv = ld->h_kv;
        layer.layer = ld->layers / 2;
        layer.layers = ld->layers;
        if (ld->d_k > 0) { /* head_dim 12 on d_model 48 with 8 heads: no W^O or Concat */
            layer.d_k = ld->d_k;
            layer.w_q = layer.w_k = layer.w_v = layer.w_o = NULL;
            layer.q = layer.k = layer.v = layer.concat = NULL;
        }
        const char *toks[64];
        for (int i = 0; i < ld->n && i < 64; i++) toks[i] = fm.toks.t.tokens[i];
        view_overview ov = {0};
        ov.name = ld->name, ov.layers = ld->layers, ov.h = ld->h, ov.n = ld->n;
        ov.tokens = toks, ov.layer = ld->layers / 2, ov.encoder = ld->encoder;
        ov.h_kv = ld->h_kv, ov.h_kv_shown = ld->h_kv;
        view_next next;
        loaded_next(&next, ld->h_kv == 1);
        for (int k = 0; k < NSIZES; k++)
            for (int mode = 0; mode < 4; mode++) { /* presenting, export; panels off, on */
                view_state s;
                fx_state(&s, &fm, SIZES[k][0], SIZES[k][1]);
                s.layer = &layer;
                s.overview = &ov;
                s.next = &next;
                s.look.present = mode < 2;
                s.figure = mode >= 2;
                s.lesson = mode & 1;
                s.look.zoom = s.zoom_base = view_zoom_for_size(s.width, s.height);
                snprintf(fx_where, sizeof fx_where, "%s n=%d h=%d h_kv=%d%s %dx%d %s, panels %s",
                         ld->name, ld->n, ld->h, ld->h_kv, ld->d_k ? " d_k=12" : "", s.width,
                         s.height, s.look.present ? "present" : "export", s.lesson ? "on" : "off");
                /* sampled, each model at other windows than the one before (24 a model) */
                if (!test_sample_has(&smp, (long)(m * NSIZES + k) * 4 + mode + m) ||
                    open_case(m, &s))
                    continue;
                view_layout_compute(&L, &s, font_measure, fonts);
                room_holds(&L, &s);
            }
        fx_model_free(&fm);
    }
    fx_finish("room, loaded models");
}

static int setup(void **st) {
    (void)st;
    if (TTF_Init() != 0) return -1;
    char err[256];
    fonts = font_set_open(NULL, err, sizeof err);
    if (!fonts) {
        fprintf(stderr, "fonts: %s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **st) {
    (void)st;
    font_set_close(fonts);
    TTF_Quit();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room_loaded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
