/* view_model_demo.c: draws a loaded model's view pieces from made-up numbers, to
 * look at them without a checkpoint: the overview (every layer x head) and the
 * layer view with the next-token panel, at 1920x1080 and 1024x768, light and dark,
 * gpt2-xl's 48 x 25 heads, and the two export panels (--panel model, next).
 *   view_model_demo OUT_DIR     writes PNG files into OUT_DIR
 * The attention patterns are invented (self, previous token, first token, uniform,
 * every third token, two back), causal like GPT-2's; the probabilities too. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "font.h"
#include "mha.h"
#include "sdl_draw.h"
#include "view.h"

static const char *const words[] = {"The",
                                    "\xE2\x90\xA3quick",
                                    "\xE2\x90\xA3"
                                    "brown",
                                    "\xE2\x90\xA3"
                                    "fox",
                                    "\xE2\x90\xA3jumps",
                                    "\xE2\x90\xA3over",
                                    "\xE2\x90\xA3the",
                                    "\xE2\x90\xA3lazy",
                                    "\xE2\x90\xA3"
                                    "dog",
                                    ".",
                                    "\xE2\x90\xA3It",
                                    "\xE2\x90\xA3was",
                                    "\xE2\x90\xA3the"};
#define NW ((int)(sizeof words / sizeof words[0]))

/* Head (layer, head)'s made-up causal attention, (n, n), rows summing to 1. */
static void pattern(float *a, int n, int layer, int head) {
    const int kind = (layer * 5 + head * 7) % 6;
    const float sharp = 1.0f + (float)(layer % 4);
    for (int i = 0; i < n; i++) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++) {
            float v = 0.0f;
            if (j <= i) {
                int target = kind == 0 ? i : kind == 1 ? (i > 0 ? i - 1 : 0) : kind == 2 ? 0 : -1;
                if (kind == 5) target = i > 1 ? i - 2 : 0;
                if (target >= 0)
                    v = expf(-sharp * (float)((j - target) * (j - target)));
                else if (kind == 3)
                    v = 1.0f;
                else
                    v = j % 3 == i % 3 ? 1.0f : 0.05f;
            }
            a[(size_t)i * n + j] = v;
            sum += v;
        }
        for (int j = 0; j < n; j++) a[(size_t)i * n + j] /= sum;
    }
}

static int save_png(const char *path, SDL_Surface *s) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)s->w, (png_uint_32)s->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    unsigned char *row = malloc((size_t)s->w * 3);
    for (int y = 0; y < s->h && row; y++) {
        const Uint32 *px = (const Uint32 *)((const Uint8 *)s->pixels + (size_t)y * s->pitch);
        for (int x = 0; x < s->w; x++) {
            row[3 * x] = (unsigned char)(px[x] >> 16);
            row[3 * x + 1] = (unsigned char)(px[x] >> 8);
            row[3 * x + 2] = (unsigned char)px[x];
        }
        png_write_row(png, row);
    }
    free(row);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return fclose(f);
}

static font_set *fonts;
static const char *out_dir;

static void render(const char *name, view_state *s) {
    static view_layout L;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_layout_compute(&L, s, font_measure, fonts);
    view_render(&dl, cache, &L, s, font_measure, fonts);
    if (s->panel != VIEW_PANEL_ALL)
        view_figure_crop(&dl, view_figure_bounds(&dl, font_measure, fonts), L.gap);
    char err[256], path[512];
    SDL_Surface *surf = sdl_draw_to_surface(&dl, fonts, err, sizeof err);
    snprintf(path, sizeof path, "%s/%s.png", out_dir, name);
    if (!surf || save_png(path, surf) != 0)
        fprintf(stderr, "%s: %s\n", path, surf ? "cannot write" : err);
    else
        printf("%s\n", path);
    if (surf) SDL_FreeSurface(surf);
    draw_list_free(&dl);
    view_cache_destroy(cache);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    char err[256];
    if (TTF_Init() != 0 || !(fonts = font_set_open(NULL, err, sizeof err))) {
        fprintf(stderr, "fonts: %s\n", err);
        return 1;
    }
    enum { LAYERS = 48, HEADS = 25 };
    const int n = NW;
    static float maps[LAYERS][HEADS * NW * NW];
    static const float *attn[LAYERS];
    for (int l = 0; l < LAYERS; l++) {
        for (int k = 0; k < HEADS; k++) pattern(maps[l] + (size_t)k * n * n, n, l, k);
        attn[l] = maps[l];
    }
    static unsigned char off[LAYERS * HEADS];
    off[2 * 12 + 5] = off[2 * 12 + 9] = off[7 * 12 + 0] = 1; /* three removed heads */
    view_overview ov = {"gpt2", 12, 12, n, attn, words, 2, off, 0, 0, 0, 0, 0, NULL};
    view_next next = {5,
                      {"\xE2\x90\xA3"
                       "dog",
                       "\xE2\x90\xA3"
                       "cat",
                       "\xE2\x90\xA3"
                       "man",
                       "\xE2\x90\xA3"
                       "first",
                       "\xE2\x90\xA3same"},
                      {0.234f, 0.121f, 0.058f, 0.031f, 0.004f},
                      {0.312f, 0.098f, 0.061f, 0.027f, 0.009f},
                      "\xE2\x90\xA3the",
                      0,
                      NULL,
                      {NULL},
                      NULL,
                      0,
                      -1,
                      NULL,
                      0.0f,
                      0};

    /* the layer view: a layer of 12 heads computed by the core, with the panel */
    tok_list toks = {n, (char **)words, 0};
    mha_model *m = mha_model_create();
    mha_config cfg = {.h = 12, .d_model = 96, .seed = 7, .mask = MHA_MASK_CAUSAL};
    if (!m || mha_model_compute(m, &cfg, &toks, err, sizeof err) != 0) {
        fprintf(stderr, "compute: %s\n", err);
        return 1;
    }
    static attn_layer layer;
    static mha_layer_text text;
    mha_layer_fill(&layer, &text, m, &toks);

    view_state s;
    memset(&s, 0, sizeof s);
    s.ui_scale = s.look.zoom = s.zoom_base = 1.0f;
    s.layer = &layer;
    s.sample_name = "custom";
    s.hover_x = s.hover_y = -1;
    s.data_version = 1;
    s.overview = &ov;
    s.next = &next;
    static const int sizes[2][2] = {{1920, 1080}, {1024, 768}};
    for (int t = 0; t < 2; t++)
        for (int z = 0; z < 2; z++) {
            char name[64];
            s.width = sizes[z][0], s.height = sizes[z][1], s.look.theme = t;
            s.overview_open = 1;
            snprintf(name, sizeof name, "overview_%dx%d%s", s.width, s.height, t ? "_dark" : "");
            render(name, &s);
            s.overview_open = 0;
            snprintf(name, sizeof name, "layer_next_%dx%d%s", s.width, s.height, t ? "_dark" : "");
            render(name, &s);
        }
    s.look.theme = 0;
    /* gpt2-xl: 48 layers x 25 heads at 1024x768; a re-split layer view */
    view_overview xl = {"gpt2-xl", LAYERS, HEADS, n, attn, words, 30, NULL, 0, 0, 0, 0, 0, NULL};
    s.overview = &xl;
    s.overview_open = 1;
    s.width = 1024, s.height = 768;
    render("overview_48x25_1024x768", &s);
    s.width = 1920, s.height = 1080;
    render("overview_48x25_1920x1080", &s);
    /* 4K at 200 %, as the window starts there */
    s.overview = &ov;
    s.width = 3840, s.height = 2160;
    s.look.zoom = s.zoom_base = view_zoom_for_size(s.width, s.height);
    render("overview_3840x2160", &s);
    s.look.zoom = s.zoom_base = 1.0f;
    s.width = 1920, s.height = 1080;
    s.overview_open = 0;
    /* a re-split: the model's 12 heads of layer 3 shown as 4, as a figure */
    static attn_layer layer4;
    static mha_layer_text text4;
    mha_model *m4 = mha_model_create();
    mha_config cfg4 = cfg;
    cfg4.h = 4;
    if (!m4 || mha_model_compute(m4, &cfg4, &toks, err, sizeof err) != 0) {
        fprintf(stderr, "compute: %s\n", err);
        return 1;
    }
    mha_layer_fill(&layer4, &text4, m4, &toks);
    s.layer = &layer4;
    s.resplit = 1;
    s.figure = 1;
    render("layer_next_resplit_figure_1920x1080", &s);
    s.resplit = 0;
    s.layer = &layer;
    /* the export panels */
    s.panel = VIEW_PANEL_MODEL;
    render("panel_model", &s);
    s.panel = VIEW_PANEL_NEXT;
    next.k = 5;
    next.cut = 1;
    render("panel_next", &s);
    mha_model_destroy(m);
    mha_model_destroy(m4);
    font_set_close(fonts);
    TTF_Quit();
    return 0;
}
