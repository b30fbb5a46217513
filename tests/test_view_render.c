/* test_view_render.c: the drawing list view_render makes, and view_hit_test.
 * One group per visible head ("head-1".."head-h", balanced); the formula's runs
 * with real superscripts; the "12 × 64" shape label under Concat; the attention
 * colorbar's 0 and 1; heatmap pixels equal to the colormap of the model's numbers
 * (computed here from m->attn and m->concat), including box averages when a
 * matrix has more cells than pixels; and the pointer mapped back to head cells,
 * row and column labels, buttons and the equation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "view_fixture.h"
#include "view_internal.h"

static unsigned hex_of(rgba c) {
    return ((unsigned)c.r << 16) | ((unsigned)c.g << 8) | c.b;
}

typedef struct {
    fx_model fm;
    view_state s;
    view_layout L;
    view_cache *cache;
    draw_list dl;
} scene;

static void scene_make(scene *sc, int n, int d, int h, mha_mask mask, int w, int hgt) {
    memset(sc, 0, sizeof *sc);
    fx_model_make(&sc->fm, n, d, h, mask);
    fx_state(&sc->s, &sc->fm, w, hgt);
    sc->cache = view_cache_create();
    assert_non_null(sc->cache);
    draw_list_init(&sc->dl);
}

static void scene_render(scene *sc) {
    view_layout_compute(&sc->L, &sc->s, fx_measure, NULL);
    view_render(&sc->dl, sc->cache, &sc->L, &sc->s, fx_measure, NULL);
}

static void scene_free(scene *sc) {
    draw_list_free(&sc->dl);
    view_cache_destroy(sc->cache);
    fx_model_free(&sc->fm);
}

static const draw_cmd *find_text(const draw_list *dl, const char *text, int from) {
    for (int i = from; i < dl->count; i++)
        if (dl->cmds[i].kind == DC_TEXT && strcmp(draw_cmd_text(dl, &dl->cmds[i]), text) == 0)
            return &dl->cmds[i];
    return NULL;
}

static const draw_image *image_at(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && fx_rect_eq((view_rect){c->x, c->y, c->w, c->h}, r))
            return &dl->images[c->img];
    }
    return NULL;
}

/* ------------------------------------------------------------------------------ */

static void test_groups(void **state) {
    (void)state;
    fx_reset();
    static const int hs[] = {1, 4, 12};
    for (int t = 0; t < 3; t++) {
        static scene sc;
        scene_make(&sc, 12, 96, hs[t], MHA_MASK_NONE, 1600, 900);
        snprintf(fx_where, sizeof fx_where, "n=12 d=96 h=%d 1600x900", hs[t]);
        scene_render(&sc);
        EXPECT_INT("one page", 1, sc.L.pages);
        int depth = 0, begins = 0, next = 1;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind != DC_GROUP) continue;
            if (c->group != 0) {
                char want[32];
                snprintf(want, sizeof want, "head-%d", next);
                EXPECT(depth == 0, "group \"%s\" opened: expected no open group, got depth %d",
                       draw_cmd_text(&sc.dl, c), depth);
                EXPECT(strcmp(draw_cmd_text(&sc.dl, c), want) == 0,
                       "group %d: expected name \"%s\", got \"%s\"", begins + 1, want,
                       draw_cmd_text(&sc.dl, c));
                EXPECT_INT("group id = head number", next, c->group);
                depth++, begins++, next++;
            } else {
                EXPECT(depth == 1, "group end: expected an open group, got depth %d", depth);
                depth--;
            }
        }
        EXPECT_INT("groups left open", 0, depth);
        EXPECT_INT("one group per visible head", sc.L.shown_heads, begins);
        EXPECT_INT("every head visible", hs[t], begins);
        /* every head's heatmap lies inside its group */
        depth = 0;
        int images_in_groups = 0;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind == DC_GROUP) depth = c->group != 0;
            if (c->kind == DC_IMAGE && depth) images_in_groups++;
        }
        EXPECT_INT("heatmap images inside head groups", hs[t], images_in_groups);
        scene_free(&sc);
    }
    fx_finish("groups");
}

static void test_formula_and_labels(void **state) {
    (void)state;
    fx_reset();
    static scene sc;
    scene_make(&sc, 12, 64, 4, MHA_MASK_NONE, 1600, 900);
    snprintf(fx_where, sizeof fx_where, "n=12 d=64 h=4 1600x900");
    scene_render(&sc);
    const view_layout *L = &sc.L;
    const draw_list *dl = &sc.dl;

    const draw_cmd *x = find_text(dl, "X", 0);
    EXPECT(x != NULL, "expected a DC_TEXT \"X\" (the formula's X), got none");
    /* n x d_model = 12×64 as a superscript: smaller than the font and raised */
    const draw_cmd *sup = find_text(dl,
                                    "12\xC3\x97"
                                    "64",
                                    0);
    EXPECT(sup != NULL, "expected a DC_TEXT \"12\xC3\x97"
                        "64\" (X's superscript), got none");
    if (x && sup) {
        EXPECT_INT("\"X\" at the main font size", L->font, x->size);
        EXPECT(sup->size < L->font,
               "superscript \"12\xC3\x97"
               "64\": expected size < %d, got %d",
               L->font, sup->size);
        EXPECT(sup->y < x->y,
               "superscript \"12\xC3\x97"
               "64\": expected raised above y %d, got y %d",
               x->y, sup->y);
        EXPECT(sup->x > x->x, "superscript: expected right of \"X\" at x %d, got x %d", x->x,
               sup->x);
    }
    /* d_k = 16 for the Q_i, K_i, V_i superscript */
    const draw_cmd *sup2 = find_text(dl,
                                     "12\xC3\x97"
                                     "16",
                                     0);
    EXPECT(sup2 != NULL && sup2->size < L->font,
           "expected a small DC_TEXT \"12\xC3\x97"
           "16\" (Q_i's shape), got %s size %d",
           sup2 ? "one at" : "none", sup2 ? sup2->size : 0);
    /* the subscript of d_model: smaller and lowered relative to " = d" */
    const draw_cmd *dm = find_text(dl, " = d", 0), *model = find_text(dl, "model", 0);
    EXPECT(dm && model, "expected DC_TEXTs \" = d\" and \"model\" in the formula, got %s and %s",
           dm ? "one" : "none", model ? "one" : "none");
    if (dm && model) {
        EXPECT(model->size < dm->size, "subscript \"model\": expected size < %d, got %d", dm->size,
               model->size);
        EXPECT(model->y > dm->y, "subscript \"model\": expected lowered below y %d, got y %d",
               dm->y, model->y);
    }

    /* "12 × 64" (U+00D7 with spaces) under Concat */
    char want[32];
    view_shape_label(want, sizeof want, 12, 64);
    EXPECT(strcmp(want, "12 \xC3\x97 64") == 0,
           "view_shape_label(12, 64): expected \"12 \xC3\x97 64\", got \"%s\"", want);
    int found = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_TEXT && strstr(draw_cmd_text(dl, c), "12 \xC3\x97 64") &&
            c->x == L->concat.shape.x && c->y == L->concat.shape.y)
            found = 1;
    }
    EXPECT(found,
           "expected a DC_TEXT containing \"12 \xC3\x97 64\" at Concat's shape label (%d, %d), got "
           "none",
           L->concat.shape.x, L->concat.shape.y);

    /* attention colorbar numbers 0 and 1 just under the bar, within its width */
    view_rect cb = L->attn_cbar;
    int got0 = 0, got1 = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind != DC_TEXT) continue;
        const char *t = draw_cmd_text(dl, c);
        int under = c->y >= cb.y + cb.h && c->y <= cb.y + cb.h + L->line && c->x >= cb.x &&
                    c->x + fx_text_w(t, c->size) <= cb.x + cb.w;
        if (under && strcmp(t, "0") == 0) got0 = c->x <= cb.x + fx_text_w("0", c->size);
        if (under && strcmp(t, "1") == 0) got1 = c->x + 2 * fx_text_w("1", c->size) >= cb.x + cb.w;
    }
    EXPECT(got0,
           "expected a \"0\" at the left end under the attention colorbar " FX_RFMT ", got none",
           FX_R(cb));
    EXPECT(got1,
           "expected a \"1\" at the right end under the attention colorbar " FX_RFMT ", got none",
           FX_R(cb));

    /* token labels: shown at this size, one per row in the first column */
    EXPECT(L->show_row_labels, "n=12 at 1600x900: expected row labels shown, got %d",
           L->show_row_labels);
    char lab[64];
    for (int r = 0; r < 12 && L->show_row_labels && L->label_stride == 1; r++) {
        view_token_label(lab, sizeof lab, sc.fm.toks.t.tokens[r]);
        int hits = 0;
        for (int i = 0; i < dl->count; i++) {
            const draw_cmd *c = &dl->cmds[i];
            if (c->kind == DC_TEXT && !c->rot && strcmp(draw_cmd_text(dl, c), lab) == 0 &&
                c->x + fx_text_w(lab, c->size) <= L->heads[0].map.x &&
                c->y >= L->heads[0].map.y - L->line)
                hits++;
        }
        EXPECT(hits >= 1, "row %d: expected the label \"%s\" left of head 1, got none", r, lab);
    }
    scene_free(&sc);
    fx_finish("formula and labels");
}

static void test_token_label(void **state) {
    (void)state;
    fx_reset();
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"cat", "cat"},
        {"abcdefghij", "abcdefghij"},             /* 10: kept */
        {"abcdefghijk", "abcdefghi\xE2\x80\xA6"}, /* 11: 9 + … */
        {"internationalization", "internati\xE2\x80\xA6"},
        {"\xC3\x84\xC3\x96\xC3\x9C\xC3\xA4\xC3\xB6\xC3\xBC\xC3\x9F\xC3\xA9\xC3\xA8\xC3\xAA",
         "\xC3\x84\xC3\x96\xC3\x9C\xC3\xA4\xC3\xB6\xC3\xBC\xC3\x9F\xC3\xA9\xC3\xA8\xC3\xAA"},
        {"\xC3\x84\xC3\x96\xC3\x9C\xC3\xA4\xC3\xB6\xC3\xBC\xC3\x9F\xC3\xA9\xC3\xA8\xC3\xAA\xC3\xAB",
         "\xC3\x84\xC3\x96\xC3\x9C\xC3\xA4\xC3\xB6\xC3\xBC\xC3\x9F\xC3\xA9\xC3\xA8\xE2\x80\xA6"},
        {"\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F"
         "\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80",
         "\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F"
         "\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xE2\x80\xA6"},
        {"\xE6\x9D\xB1", "\xE6\x9D\xB1"},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        char buf[64];
        memset(buf, 'Z', sizeof buf);
        view_token_label(buf, sizeof buf, cases[i].in);
        snprintf(fx_where, sizeof fx_where, "token label %d", i);
        EXPECT(strcmp(buf, cases[i].want) == 0,
               "view_token_label(\"%s\"): expected \"%s\", got \"%s\"", cases[i].in, cases[i].want,
               buf);
        EXPECT(fx_cp_count(buf) <= VIEW_LABEL_CHARS,
               "label \"%s\": expected <= %d code points, got %d", buf, VIEW_LABEL_CHARS,
               fx_cp_count(buf));
    }
    fx_finish("token label");
}

/* ------------------------------------------------------------------------------ */
/* pixels                                                                         */

static int rgb_close(rgba a, rgba b, int tol) {
    return abs(a.r - b.r) <= tol && abs(a.g - b.g) <= tol && abs(a.b - b.b) <= tol && a.a == b.a;
}

static void test_attention_pixels(void **state) {
    (void)state;
    fx_reset();
    for (int mask = 0; mask <= 1; mask++)
        for (int cmap = 0; cmap < CMAP_COUNT; cmap++) {
            static scene sc;
            scene_make(&sc, 3, 8, 1, mask ? MHA_MASK_CAUSAL : MHA_MASK_NONE, 1280, 720);
            sc.s.look.cmap = cmap;
            snprintf(fx_where, sizeof fx_where, "n=3 h=1 mask=%d cmap=%s", mask, cmap_name(cmap));
            scene_render(&sc);
            const mha_model *m = sc.fm.m;
            const draw_image *im = image_at(&sc.dl, sc.L.heads[0].map);
            EXPECT(im != NULL, "expected an image at head 1's map " FX_RFMT,
                   FX_R(sc.L.heads[0].map));
            if (im) {
                EXPECT(im->w == 3 && im->h == 3, "expected a 3 x 3 image, got %d x %d", im->w,
                       im->h);
                for (int r = 0; r < 3 && im->w == 3 && im->h == 3; r++)
                    for (int c = 0; c < 3; c++) {
                        /* a masked cell shows the mask's ground, never a weight's colour */
                        int masked = mask && c > r;
                        rgba want = masked ? view_mask_ground(sc.s.look.theme)
                                           : cmap_seq(cmap, m->attn[r * 3 + c]);
                        rgba got = im->px[r * 3 + c];
                        if (masked)
                            for (int k = 0; k <= 64; k++) {
                                rgba w = cmap_seq(cmap, (float)k / 64.0f);
                                EXPECT(memcmp(&w, &got, sizeof w) != 0,
                                       "masked cell (%d, %d) looks like weight %.3f", r, c,
                                       (double)k / 64.0);
                            }
                        EXPECT(memcmp(&want, &got, sizeof want) == 0,
                               "cell (%d, %d) attn %.6f: expected #%06x, got #%06x", r, c,
                               (double)m->attn[r * 3 + c], hex_of(want), hex_of(got));
                    }
            }
            scene_free(&sc);
        }
    fx_finish("attention pixels");
}

/* Reduced images: a pixel covers rows [y*R/H, (y+1)*R/H) and columns
 * [x*C/W, (x+1)*C/W). Attention (sequential map): the colour of the largest of the
 * cells (max-pooled, so one sharp weight is not averaged away). Signed matrices
 * (diverging map): the colour of the covered value of largest magnitude, sign kept.
 * Tolerance 1 per channel. */
static void check_box_average(const draw_image *im, const float *data, int rows, int cols, int ld,
                              int div, float scale, int cmap, const char *what) {
    long bad = 0;
    int shown = 0;
    for (int y = 0; y < im->h; y++) {
        int r0 = (int)((long)y * rows / im->h), r1 = (int)((long)(y + 1) * rows / im->h);
        for (int x = 0; x < im->w; x++) {
            int c0 = (int)((long)x * cols / im->w), c1 = (int)((long)(x + 1) * cols / im->w);
            double top = 0, ext = 0;
            for (int r = r0; r < r1; r++)
                for (int c = c0; c < c1; c++) {
                    double v = data[(size_t)r * ld + c];
                    top = v > top ? v : top;
                    if (fabs(v) > fabs(ext)) ext = v;
                }
            double mean = div ? ext : top;
            rgba want = div ? cmap_div((float)(mean / scale)) : cmap_seq(cmap, (float)mean);
            rgba got = im->px[(size_t)y * im->w + x];
            if (!rgb_close(want, got, 1)) {
                bad++;
                if (shown++ < 3)
                    fx_fail(__LINE__,
                            "%s pixel (%d, %d) = reduction of rows %d..%d, cols %d..%d = %.6f: "
                            "expected "
                            "#%06x, got #%06x",
                            what, y, x, r0, r1 - 1, c0, c1 - 1, mean, hex_of(want), hex_of(got));
            }
        }
    }
    fx_checks++;
    EXPECT(bad == 0, "%s: expected every pixel to be its box average, got %ld of %d wrong", what,
           bad, im->w * im->h);
}

static void test_box_average(void **state) {
    (void)state;
    fx_reset();
    static scene sc;
    scene_make(&sc, 512, 1024, 2, MHA_MASK_NONE, 800, 600);
    sc.s.look.cmap = CMAP_MAGMA;
    snprintf(fx_where, sizeof fx_where, "n=512 d=1024 h=2 800x600");
    scene_render(&sc);
    const mha_model *m = sc.fm.m;
    /* attention heads: each map smaller than 512 x 512 */
    for (int i = 0; i < sc.L.shown_heads; i++) {
        view_rect map = sc.L.heads[i].map;
        const draw_image *im = image_at(&sc.dl, map);
        EXPECT(im != NULL, "expected an image at head %d's map", i + 1);
        if (!im) continue;
        EXPECT(im->w < 512 && im->h < 512,
               "test premise: expected a reduced head image, got %d x %d", im->w, im->h);
        char what[32];
        snprintf(what, sizeof what, "head %d", sc.L.first_head + i + 1);
        check_box_average(im, m->attn + (size_t)(sc.L.first_head + i) * 512 * 512, 512, 512, 512, 0,
                          1.0f, CMAP_MAGMA, what);
        /* one pixel spelled out: the top-left pixel covers rows and columns 0..k-1 */
        int kr = 512 / im->h, kc = 512 / im->w;
        double sum = 0;
        for (int r = 0; r < kr; r++)
            for (int c = 0; c < kc; c++)
                sum += m->attn[(size_t)(sc.L.first_head + i) * 512 * 512 + (size_t)r * 512 + c];
        rgba want = cmap_seq(CMAP_MAGMA, (float)(sum / (kr * kc)));
        EXPECT(rgb_close(want, im->px[0], 1),
               "%s top-left pixel (%d x %d cells): expected #%06x, got #%06x", what, kr, kc,
               hex_of(want), hex_of(im->px[0]));
    }
    /* Concat on the diverging map, scaled by its largest magnitude */
    const draw_image *im = image_at(&sc.dl, sc.L.concat.map);
    EXPECT(im != NULL, "expected an image at Concat's map " FX_RFMT, FX_R(sc.L.concat.map));
    if (im) {
        EXPECT(im->w < 1024, "test premise: expected Concat reduced in width, got %d", im->w);
        float mx = 0;
        for (size_t i = 0; i < (size_t)512 * 1024; i++) mx = fmaxf(mx, fabsf(m->concat[i]));
        check_box_average(im, m->concat, 512, 1024, 1024, 1, mx, 0, "Concat");
        /* the checker catches one wrong pixel, and a plain subsample instead of a mean */
        rgba *copy = malloc((size_t)im->w * im->h * sizeof *copy);
        assert_non_null(copy);
        memcpy(copy, im->px, (size_t)im->w * im->h * sizeof *copy);
        draw_image fake = *im;
        fake.px = copy;
        int py = im->h / 2, px = im->w / 3;
        copy[(size_t)py * im->w + px].r ^= 0x40;
        long b = fx_sandbox_begin();
        check_box_average(&fake, m->concat, 512, 1024, 1024, 1, mx, 0,
                          "Concat (one pixel altered)");
        EXPECT(fx_sandbox_end(b) > 0,
               "planted fault: expected a changed pixel to be caught, got none");
        for (int y = 0; y < im->h; y++)
            for (int x = 0; x < im->w; x++)
                copy[(size_t)y * im->w + x] = cmap_div(
                    m->concat[(size_t)(y * 512 / im->h) * 1024 + (size_t)(x * 1024 / im->w)] / mx);
        b = fx_sandbox_begin();
        check_box_average(&fake, m->concat, 512, 1024, 1024, 1, mx, 0, "Concat (subsampled)");
        EXPECT(fx_sandbox_end(b) > 0,
               "planted fault: expected subsampling (no largest |value|) to be caught, got none");
        free(copy);
    }
    scene_free(&sc);
    fx_finish("box average");
}

/* ------------------------------------------------------------------------------ */
/* hit testing                                                                    */

/* Designed heads at h = 8 of d_model 64: head 5's rule has no room for "none (d_k
   too small)" in its title, so it says "d_k too small" (or "none"), never the number
   alone; the other heads keep their names. */
static void test_head_names_kept(void **state) {
    (void)state;
    fx_reset();
    scene sc;
    scene_make(&sc, 11, 64, 8, MHA_MASK_NONE, 1600, 900);
    static const char *const notes[8] = {
        "previous", "next", "first", "self", "none (d_k too small)", "broad", "previous", "next"};
    sc.fm.layer.head_note = notes;
    sc.s.head_entropy = NULL; /* the titles: number, name, off */
    scene_render(&sc);
    const char *dot = " \xC2\xB7 ";
    for (int i = 0; i < sc.L.shown_heads; i++) {
        const int head = sc.L.first_head + i;
        char named[96], bare[32];
        snprintf(named, sizeof named, "head %d%s%s", head + 1, dot, notes[head]);
        snprintf(bare, sizeof bare, "head %d", head + 1);
        const draw_cmd *c = find_text(&sc.dl, named, 0);
        const int w = fx_text_w(named, sc.L.font);
        if (w + sc.L.font * 2 <= sc.L.heads[i].title.w) /* room for it and the off box */
            EXPECT(c != NULL, "head %d: expected its title \"%s\" (room %d px, it takes %d)",
                   head + 1, named, sc.L.heads[i].title.w, w);
        else { /* abbreviated: what is in the brackets ("d_k too small"), else the name
                  before them ("none"), else the number alone */
            const char *note = notes[head], *open = strstr(note, " (");
            char shorter[2][96] = {"", ""};
            if (open) {
                snprintf(shorter[0], sizeof shorter[0], "head %d%s%.*s", head + 1, dot,
                         (int)(strlen(open) - 3), open + 2);
                snprintf(shorter[1], sizeof shorter[1], "head %d%s%.*s", head + 1, dot,
                         (int)(open - note), note);
                char *sub = strstr(shorter[0], "d_k"); /* no raw markup: d with subscript k */
                if (sub) {
                    char rest[96];
                    snprintf(rest, sizeof rest, "%s", sub + 3);
                    snprintf(sub, sizeof shorter[0] - (size_t)(sub - shorter[0]), "d\xE2\x82\x96%s",
                             rest);
                }
            }
            const char *want = bare;
            for (int k = 1; k >= 0; k--)
                if (shorter[k][0] &&
                    fx_text_w(shorter[k], sc.L.font) + sc.L.font * 2 <= sc.L.heads[i].title.w)
                    want = shorter[k];
            EXPECT(c == NULL && find_text(&sc.dl, want, 0) != NULL,
                   "head %d: expected \"%s\" (\"%s\" is %d px in %d)", head + 1, want, named, w,
                   sc.L.heads[i].title.w);
            if (head == 4)
                EXPECT(want != bare,
                       "head 5: expected an abbreviated name to fit %d px, got "
                       "\"%s\" alone",
                       sc.L.heads[i].title.w, bare);
        }
    }
    EXPECT(find_text(&sc.dl, "head 1 \xC2\xB7 previous", 0) != NULL,
           "test premise: head 1's name has room at 1600x900, got none");
    scene_free(&sc);
    /* narrow tiles (1024 x 768 and smaller): each designed name still shown in its
       head's title, as "head 6 · broad" or "6 · broad" (the old code dropped heads 1,
       6 and 7's names where "first" fitted: "head 6") */
    static const int sizes[][2] = {{1024, 768}, {1280, 800}, {900, 700}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        scene_make(&sc, 7, 64, 8, MHA_MASK_NONE, sizes[z][0], sizes[z][1]);
        sc.fm.layer.head_note = notes;
        sc.s.head_entropy = NULL;
        sc.s.figure = 1;
        scene_render(&sc);
        for (int i = 0; i < sc.L.shown_heads; i++) {
            const int head = sc.L.first_head + i;
            if (head == 4) continue; /* "none (d_k too small)": above */
            char a[64], b[64];
            snprintf(a, sizeof a, "head %d%s%s", head + 1, dot, notes[head]);
            snprintf(b, sizeof b, "%d%s%s", head + 1, dot, notes[head]);
            const int room = fx_text_w(b, sc.L.font) <= sc.L.heads[i].title.w;
            EXPECT(!room || find_text(&sc.dl, a, 0) || find_text(&sc.dl, b, 0),
                   "%dx%d: head %d's name \"%s\" not in its title (%d px of room)", sizes[z][0],
                   sizes[z][1], head + 1, notes[head], sc.L.heads[i].title.w);
        }
        scene_free(&sc);
    }
    fx_finish("head names kept");
}

/* A long text on the fixed scale: the field is dark, and the colorbar's caption says
   how large a row's largest weight is on average (computed here from the heads shown);
   a short text keeps the plain caption (its long or its brief form). */
static void test_dark_field_caption(void **state) {
    (void)state;
    fx_reset();
    static const int ns[] = {7, 300};
    for (int t = 0; t < 2; t++) {
        scene sc;
        scene_make(&sc, ns[t], 64, 4, MHA_MASK_NONE, 1600, 900);
        scene_render(&sc);
        const attn_layer *l = sc.s.layer;
        double sum = 0.0;
        long rows = 0;
        for (int i = 0; i < sc.L.shown_heads; i++)
            for (int r = 0; r < l->n_real; r++, rows++) {
                float m = 0.0f;
                for (int j = 0; j < l->n; j++) {
                    float v = l->attn[((size_t)(sc.L.first_head + i) * l->n + r) * l->n + j];
                    if (v > m) m = v;
                }
                sum += m;
            }
        const double mean = sum / (double)rows;
        char want[64];
        snprintf(want, sizeof want, "%.2g", mean);
        int found = 0, plain = 0; /* plain: the caption, after the rows-and-columns legend */
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind != DC_TEXT) continue;
            const char *txt = draw_cmd_text(&sc.dl, c);
            if (strstr(txt, "on average") && strstr(txt, want)) found = 1;
            if (strstr(txt, VIEW_ATTN_CAPTION) || strstr(txt, "attention weight, 0 to 1"))
                plain = 1;
        }
        if (mean < 0.25)
            EXPECT(found, "n = %d: expected the caption to give the row maxima's mean %s", ns[t],
                   want);
        else
            EXPECT(!found && plain, "n = %d (row maxima %.2f): expected the plain caption", ns[t],
                   mean);
        if (t == 1)
            EXPECT(mean < 0.25, "test premise: n = 300 has row maxima under 0.25, got %.3f", mean);
        scene_free(&sc);
    }
    fx_finish("dark field caption");
}

/* The status line says the seed and the scaling; the compute and frame times only when
   asked for (MHAVIZ_STATS sets timings), never to a class. */
static void test_status_timings(void **state) {
    (void)state;
    fx_reset();
    static scene sc;
    scene_make(&sc, 12, 64, 4, MHA_MASK_NONE, 1600, 900);
    snprintf(fx_where, sizeof fx_where, "status line 1600x900");
    sc.s.compute_ms = 0.25;
    sc.s.frame_ms = 1194.4;
    for (int timings = 0; timings <= 1; timings++) {
        sc.s.timings = timings;
        scene_render(&sc);
        const char *status = NULL;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind == DC_TEXT && c->y == sc.L.status.y && c->x == sc.L.status.x)
                status = draw_cmd_text(&sc.dl, c);
        }
        EXPECT(status != NULL, "the status line is drawn (timings %d)", timings);
        if (!status) continue;
        char seed[40];
        snprintf(seed, sizeof seed, "seed %llu", (unsigned long long)sc.s.layer->seed);
        EXPECT(strstr(status, seed) != NULL, "the status names the %s: '%s'", seed, status);
        EXPECT((strstr(status, "frame 1194.4 ms") != NULL) == timings,
               "frame time shown only with timings %d: '%s'", timings, status);
        EXPECT((strstr(status, "compute 0.25 ms") != NULL) == timings,
               "compute time shown only with timings %d: '%s'", timings, status);
    }
    scene_free(&sc);
    fx_finish("status timings");
}

/* At h = 1 "How alike are the heads?" says in words that there is no pair, and draws
   no one-cell matrix reading 100%; the cost panel stays beside it. */
static void test_one_head_alike(void **state) {
    (void)state;
    fx_reset();
    static const int sizes[][2] = {{1280, 720}, {1920, 1080}, {1024, 768}};
    for (int k = 0; k < 3; k++) {
        static scene sc;
        scene_make(&sc, 7, 64, 1, MHA_MASK_NONE, sizes[k][0], sizes[k][1]);
        snprintf(fx_where, sizeof fx_where, "h=1 %dx%d", sizes[k][0], sizes[k][1]);
        float div[1] = {0.0f}, change[1] = {1.0f}, cosine[1] = {1.0f};
        sc.s.lesson = 1;
        sc.s.head_divergence = div;
        sc.s.head_change = change;
        sc.s.head_pass_cos = cosine;
        scene_render(&sc);
        EXPECT(sc.L.lesson_shown, "the panels are shown");
        int words = 0, hundred = 0, images = 0;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind == DC_TEXT) {
                const char *t = draw_cmd_text(&sc.dl, c);
                words += strncmp(t, "One head", 8) == 0;
                hundred += strstr(t, "100%") != NULL;
            }
            /* anything drawn inside the matrix's square but the words */
            if (c->kind == DC_FILL && c->x >= sc.L.redund_map.x &&
                c->x < sc.L.redund_map.x + sc.L.redund_map.w && c->y >= sc.L.redund_map.y &&
                c->y < sc.L.redund_map.y + sc.L.redund_map.h && c->w > 4 && c->h > 4)
                images++;
        }
        EXPECT(words == 1, "'One head ...' said once, got %d", words);
        EXPECT(hundred == 0, "no '100%%' cell, got %d", hundred);
        EXPECT(images == 0, "no matrix cells drawn, got %d", images);
        EXPECT(sc.L.cost.w > 0, "the cost panel is there");
        scene_free(&sc);
    }
    fx_finish("one head alike");
}

/* A loaded model whose Concat and W^O are not drawn (h d_k != d_model: Qwen3's,
   Gemma's shapes) has no MultiHead contributions, but its heads are still measured on
   the next token: the panel says which could go by that measure, and does not claim
   what they pass on. Head 1 moves the next token by 0.05 bit and keeps its top token:
   it could go; head 3 moves it less but changes the top token: it could not. */
static void test_alike_kl_without_wo(void **state) {
    (void)state;
    fx_reset();
    static const int sizes[][2] = {{1920, 1080}, {1600, 900}, {2560, 1440}};
    for (int k = 0; k < 3; k++) {
        static scene sc;
        scene_make(&sc, 7, 64, 4, MHA_MASK_CAUSAL, sizes[k][0], sizes[k][1]);
        snprintf(fx_where, sizeof fx_where, "kl without W^O %dx%d", sizes[k][0], sizes[k][1]);
        float div[16] = {0};
        float kl[4] = {0.05f, 0.4f, 0.02f, 1.3f};
        int top[4] = {7, 7, 9, 7};
        sc.s.lesson = 1;
        sc.s.head_divergence = div;
        sc.s.head_next_kl = kl;
        sc.s.head_next_top = top;
        sc.s.next_top_full = 7;
        sc.s.alike_base_lo = 0.5f;
        sc.s.alike_base_hi = 0.7f;
        scene_render(&sc);
        EXPECT(sc.L.lesson_shown, "the panels are shown");
        int verdict = 0, pass_on = 0, range = 0, diagonal = 0, cells = 0;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind != DC_TEXT) continue;
            const char *t = draw_cmd_text(&sc.dl, c);
            pass_on += strstr(t, "pass on") != NULL;
            range += strstr(t, "KL") != NULL && strstr(t, "0.02") && strstr(t, "1.3");
            diagonal += strncmp(t, "diagonal:", 9) == 0 && strstr(t, "KL") != NULL;
            for (int j = 0; j < 4; j++) /* the KL in bits as the panel prints it */
                cells += strcmp(t, (const char *const[]){"0.05", "0.40", "0.02", "1.3"}[j]) == 0;
            const char *go = strstr(t, "could go");
            const char *list = go ? strrchr(go, ':') : NULL;
            if (list) { /* the heads listed: "1" or "head 1", nothing else */
                list++;
                while (*list == ' ') list++;
                if (strncmp(list, "head ", 5) == 0) list += 5;
                EXPECT(strcmp(list, "1") == 0, "could go: expected head 1 alone, got \"%s\"", t);
                verdict++;
            }
        }
        EXPECT(verdict == 1, "the verdict on the next token said once, got %d", verdict);
        EXPECT(pass_on == 0, "nothing said of what they pass on (not measured), got %d", pass_on);
        EXPECT(range >= 1 || (diagonal == 1 && cells == 4),
               "the next token's KL: its range, or the diagonal's four numbers under their line; "
               "got %d range lines, %d diagonal lines, %d numbers",
               range, diagonal, cells);
        scene_free(&sc);
    }
    fx_finish("alike kl without W^O");
}

/* The first screen says what it shows: rows are queries, columns keys, and (where the
   titles give bits) what the bits measure, on the colorbar's caption line. */
static void test_axes_legend(void **state) {
    (void)state;
    fx_reset();
    static const int sizes[][2] = {{1920, 1080}, {1600, 900},  {1280, 720},
                                   {1024, 768},  {2560, 1080}, {3840, 1600}};
    int any_axes = 0, any_bits = 0;
    for (int k = 0; k < 6; k++) {
        static scene sc;
        scene_make(&sc, 7, 64, 4, MHA_MASK_NONE, sizes[k][0], sizes[k][1]);
        snprintf(fx_where, sizeof fx_where, "%dx%d", sizes[k][0], sizes[k][1]);
        float entropy[4] = {2.0f, 2.2f, 1.7f, 2.3f};
        sc.s.head_entropy = entropy;
        scene_render(&sc);
        int axes = 0, bits_title = 0, bits_legend = 0;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind != DC_TEXT) continue;
            const char *t = draw_cmd_text(&sc.dl, c);
            axes += strstr(t, "rows: queries \xC2\xB7 columns: keys") != NULL;
            bits_title += strstr(t, " bits") != NULL && strncmp(t, "head ", 5) == 0;
            bits_legend += strstr(t, "bits: how spread each row is") != NULL;
        }
        /* the legend's shortest form whenever the colorbar's line has room for it */
        const view_rect cb = sc.L.attn_cbar;
        const int right = sc.L.heads_area.x + sc.L.heads_area.w - cb.x;
        const int room = right < cb.w ? right : cb.w;
        const int fs = sc.L.font_small;
        const int shortest =
            fx_text_w("rows: queries \xC2\xB7 columns: keys \xC2\xB7 attention weight, 0 to 1", fs);
        const int longest =
            fx_text_w("rows: queries \xC2\xB7 columns: keys \xC2\xB7 " VIEW_ATTN_CAPTION
                      " \xC2\xB7 bits: how spread each row is",
                      fs);
        EXPECT(axes == (shortest <= room),
               "'rows: queries · columns: keys' drawn %d times, room %d px for %d", axes, room,
               shortest);
        EXPECT(!bits_legend || bits_title, "the legend explains bits no title shows");
        EXPECT(bits_legend == (bits_title > 0 && longest <= room),
               "bits explained %d times: titles with bits %d, room %d px for %d", bits_legend,
               bits_title, room, longest);
        any_axes += axes, any_bits += bits_legend;
        scene_free(&sc);
    }
    EXPECT(any_axes > 0 && any_bits > 0, "premise: the legend (%d) and the bits (%d) at some size",
           any_axes, any_bits);
    fx_finish("axes legend");
}

static void test_hit_test(void **state) {
    (void)state;
    fx_reset();
    static scene sc;
    scene_make(&sc, 12, 64, 4, MHA_MASK_NONE, 1600, 900);
    snprintf(fx_where, sizeof fx_where, "n=12 d=64 h=4 1600x900");
    view_layout_compute(&sc.L, &sc.s, fx_measure, NULL);
    const view_layout *L = &sc.L;
    const int n = 12;

    /* the centre of every cell of every head */
    for (int i = 0; i < L->shown_heads; i++) {
        view_rect map = L->heads[i].map;
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) {
                int x = map.x + (int)((2L * c + 1) * map.w / (2 * n));
                int y = map.y + (int)((2L * r + 1) * map.h / (2 * n));
                view_hit h = view_hit_test(L, &sc.s, x, y);
                EXPECT(h.kind == HIT_HEAD_CELL && h.head == L->first_head + i && h.row == r &&
                           h.col == c,
                       "(%d, %d) in head %d cell (%d, %d): expected HIT_HEAD_CELL head %d row %d "
                       "col %d, "
                       "got kind %d head %d row %d col %d",
                       x, y, i + 1, r, c, L->first_head + i, r, c, h.kind, h.head, h.row, h.col);
            }
    }
    /* head 2, cell (5, 7), then render with the pointer there: its tooltip names both tokens */
    {
        view_rect map = L->heads[1].map;
        sc.s.hover_x = map.x + (int)(15L * map.w / 24);
        sc.s.hover_y = map.y + (int)(11L * map.h / 24);
        view_hit h = view_hit_test(L, &sc.s, sc.s.hover_x, sc.s.hover_y);
        EXPECT(h.kind == HIT_HEAD_CELL && h.head == 1 && h.row == 5 && h.col == 7,
               "centre of head 2 cell (5, 7): expected HIT_HEAD_CELL head 1 row 5 col 7, got kind "
               "%d head "
               "%d row %d col %d",
               h.kind, h.head, h.row, h.col);
        view_render(&sc.dl, sc.cache, L, &sc.s, fx_measure, NULL);
        const char *q = sc.fm.toks.t.tokens[5], *k = sc.fm.toks.t.tokens[7];
        int tip = 0;
        for (int i = 0; i < sc.dl.count; i++) {
            const draw_cmd *c = &sc.dl.cmds[i];
            if (c->kind != DC_TEXT) continue;
            const char *t = draw_cmd_text(&sc.dl, c);
            const char *pq = strstr(t, q);
            if (pq && strstr(pq + strlen(q), k)) tip = 1;
        }
        EXPECT(
            tip,
            "hovering head 2 cell (5, 7): expected a tooltip naming query \"%s\" then key \"%s\"",
            q, k);
        sc.s.hover_x = sc.s.hover_y = -1;
    }
    /* row labels left of the first grid column */
    EXPECT(L->show_row_labels && L->row_label_w > 0,
           "test premise: expected row labels shown, got show %d width %d", L->show_row_labels,
           L->row_label_w);
    if (L->show_row_labels) {
        view_rect map = L->heads[0].map;
        for (int r = 0; r < n; r++) {
            int x = map.x - L->row_label_w / 2;
            int y = map.y + (int)((2L * r + 1) * map.h / (2 * n));
            view_hit h = view_hit_test(L, &sc.s, x, y);
            EXPECT(h.kind == HIT_ROW_LABEL && h.row == r,
                   "(%d, %d) on row label %d: expected HIT_ROW_LABEL row %d, got kind %d row %d", x,
                   y, r, r, h.kind, h.row);
        }
    }
    /* column labels under the last head of each grid column */
    if (L->show_col_labels) {
        int cols = L->grid_cols;
        for (int i = 0; i < L->shown_heads; i++) {
            if (i + cols < L->shown_heads) continue;
            view_rect map = L->heads[i].map;
            for (int c = 0; c < n; c++) {
                int x = map.x + (int)((2L * c + 1) * map.w / (2 * n));
                int y = map.y + map.h + L->col_label_h / 2;
                view_hit h = view_hit_test(L, &sc.s, x, y);
                EXPECT(h.kind == HIT_COL_LABEL && h.col == c,
                       "(%d, %d) on head %d column label %d: expected HIT_COL_LABEL col %d, got "
                       "kind %d col %d",
                       x, y, i + 1, c, c, h.kind, h.col);
            }
        }
    }
    /* every button, at its centre and its corners */
    int buttons = 0;
    for (int b = 0; b < BTN_COUNT; b++) {
        if (!L->buttons[b].present) continue;
        buttons++;
        view_rect r = L->buttons[b].r;
        const int px[5] = {r.x + r.w / 2, r.x, r.x + r.w - 1, r.x, r.x + r.w - 1};
        const int py[5] = {r.y + r.h / 2, r.y, r.y, r.y + r.h - 1, r.y + r.h - 1};
        for (int p = 0; p < 5; p++) {
            view_hit h = view_hit_test(L, &sc.s, px[p], py[p]);
            EXPECT(h.kind == HIT_BUTTON && h.button == b,
                   "(%d, %d) on button %d \"%s\": expected HIT_BUTTON %d, got kind %d button %d",
                   px[p], py[p], b, L->buttons[b].label, b, h.kind, h.button);
        }
        view_hit h = view_hit_test(L, &sc.s, r.x + r.w, r.y + r.h / 2);
        EXPECT(!(h.kind == HIT_BUTTON && h.button == b),
               "(%d, %d) just right of button %d: expected not that button, got it", r.x + r.w,
               r.y + r.h / 2, b);
    }
    /* every one of the attention view's header but the page buttons and a loaded
       model's layer, overview and write buttons (training mode's own and the closed
       "More" panel's are not shown here) */
    const int header = BTN_TRAIN_GO - 6;
    EXPECT(buttons >= header, "expected every header button present, got %d of %d", buttons,
           header);
    /* the equation: Concat cell -> head of its column; W^O cell -> head of its row */
    {
        const int d = 64, dk = 16;
        view_rect cm = L->concat.map;
        for (int c = 0; c < d; c += 9) {
            int x = cm.x + (int)((2L * c + 1) * cm.w / (2 * d));
            int y = cm.y + (int)((2L * 3 + 1) * cm.h / (2 * n));
            view_hit h = view_hit_test(L, &sc.s, x, y);
            EXPECT(h.kind == HIT_CONCAT && h.row == 3 && h.col == c && h.head == c / dk,
                   "(%d, %d) on Concat (3, %d): expected HIT_CONCAT row 3 col %d head %d, got kind "
                   "%d row "
                   "%d col %d head %d",
                   x, y, c, c, c / dk, h.kind, h.row, h.col, h.head);
        }
        view_rect wo = L->w_o.map;
        for (int r = 0; r < d; r += 7) {
            int x = wo.x + (int)((2L * 5 + 1) * wo.w / (2 * d));
            int y = wo.y + (int)((2L * r + 1) * wo.h / (2 * d));
            view_hit h = view_hit_test(L, &sc.s, x, y);
            EXPECT(h.kind == HIT_W_O && h.row == r && h.col == 5 && h.head == r / dk,
                   "(%d, %d) on W^O (%d, 5): expected HIT_W_O row %d col 5 head %d, got kind %d "
                   "row %d col "
                   "%d head %d",
                   x, y, r, r, r / dk, h.kind, h.row, h.col, h.head);
        }
    }
    /* outside everything */
    view_hit h = view_hit_test(L, &sc.s, 0, 0);
    EXPECT(h.kind == HIT_NONE, "(0, 0), the margin: expected HIT_NONE, got kind %d", h.kind);
    scene_free(&sc);
    fx_finish("hit test");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_formula_and_labels),
        cmocka_unit_test(test_token_label),
        cmocka_unit_test(test_attention_pixels),
        cmocka_unit_test(test_box_average),
        cmocka_unit_test(test_hit_test),
        cmocka_unit_test(test_head_names_kept),
        cmocka_unit_test(test_dark_field_caption),
        cmocka_unit_test(test_status_timings),
        cmocka_unit_test(test_one_head_alike),
        cmocka_unit_test(test_alike_kl_without_wo),
        cmocka_unit_test(test_axes_legend),
    };
    return cmocka_run_group_tests_name("view_render", tests, NULL, NULL);
}
