/* test_steps_layout.c: the step-through of one head, one stage at a time, laid out
 * and drawn (view_layout_compute, view_render) with the fake text measurer for
 * every stage 1..9 at windows from 1024x768 to 3840x2160 (landscape and portrait)
 * and zooms 100..200 %, in the window, in presentation mode, as the saved panel
 * (Ctrl+Shift+S, --panel steps:K:S) and as the --panel steps:K grid figure.
 * Properties: every drawn text and rectangle inside the window; no text over a
 * heatmap or over other text; the stage's title drawn whole (the runs drawn in
 * the caption spell the chosen title, and at 1600x900 and 1920x1080 it is the
 * long one) and its note drawn whole; token labels on the query and key sides of
 * the n x n stages (S, scaled, masked, A) where n is small enough to label; every
 * colorbar under a large stage shows its minimum, 0 and maximum; no key hints in
 * figures or presentations; and the large panel shows the stage: its pixels
 * differ between stages 3, 4 and 6 and match a plain-loop reference image's
 * ordering (stage 4 = stage 3 / sqrt(d_k) on one scale, so every cell paler). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"
#include "view_fixture.h"
#include "view_internal.h"

/* The focused head's derived products as the app's derive.c makes them, by plain
 * loops: raw = Q_i K_i^T, scaled = raw * scale, share = head_i W^O_i. */
typedef struct {
    float *raw, *scaled, *share;
} derived;

static void derive(derived *D, const attn_layer *l, int head) {
    const int n = l->n, d = l->d_model, dk = l->d_k;
    D->raw = calloc((size_t)n * n, sizeof(float));
    D->scaled = calloc((size_t)n * n, sizeof(float));
    D->share = calloc((size_t)n * d, sizeof(float));
    assert_true(D->raw && D->scaled && D->share);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int c = 0; c < dk; c++)
                acc += (double)l->q[(size_t)i * d + head * dk + c] *
                       (double)l->k[(size_t)j * d + head * dk + c];
            D->raw[(size_t)i * n + j] = (float)acc;
            D->scaled[(size_t)i * n + j] = (float)(acc * l->scale);
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d; j++) {
            double acc = 0.0;
            for (int c = 0; c < dk; c++)
                acc += (double)l->heads[((size_t)head * n + i) * dk + c] *
                       (double)l->w_o[(size_t)(head * dk + c) * d + j];
            D->share[(size_t)i * d + j] = (float)acc;
        }
}

static void derived_free(derived *D) {
    free(D->raw), free(D->scaled), free(D->share);
}

/* The text of markup as drawn: its runs one after another. */
static void plain(char *out, size_t len, const char *markup) {
    char parts[24][48];
    int lvl[24];
    const int n = view_steps_runs(markup, parts, lvl, 24);
    out[0] = '\0';
    for (int i = 0; i < n; i++) strncat(out, parts[i], len - strlen(out) - 1);
}

typedef struct {
    view_rect r;
    const char *t;
    int rot, size;
} tbox;

static int in_rect(view_rect r, int x, int y) {
    return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

static int inside_window(view_rect r, const view_state *s) {
    return r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height;
}

/* The image drawn into exactly r, or NULL. */
static const draw_image *image_in(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && c->x == r.x && c->y == r.y && c->w == r.w && c->h == r.h)
            return &dl->images[c->img];
    }
    return NULL;
}

/* Room for token labels and every colorbar number: up to 150 % on a 1280x800 screen
 * or larger, 100 % on 1024x768, 200 % from 1920x1080 (at 200 % on a 1024-wide
 * screen the labels and numbers are too large for the room; the layout drops some). */
static int roomy(const view_state *s) {
    const int w = s->width < s->height ? s->height : s->width;
    const int h = s->width < s->height ? s->width : s->height;
    if (s->look.zoom <= 1.01f) return w >= 1024 && h >= 768;
    if (s->look.zoom <= 1.51f) return w >= 1280 && h >= 800;
    return w >= 1920 && h >= 1080;
}

/* Every property of one stage's drawing (figure: saved panel or --export). */
static void check_stage(const view_layout *L, const view_state *s, const draw_list *dl) {
    const view_steps *S = &L->steps;
    const attn_layer *layer = s->layer;
    const int k = S->current, n = layer->n;
    EXPECT(S->shown && k == s->look.step, "expected stage %d shown large, got shown %d current %d",
           s->look.step, S->shown, k);
    if (!S->shown || k < 1) return;
    static tbox tb[4096];
    static view_rect img[64];
    int nt = 0, ni = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && ni < 64) img[ni++] = (view_rect){c->x, c->y, c->w, c->h};
        if (c->kind != DC_TEXT || nt >= 4096) continue;
        const char *t = draw_cmd_text(dl, c);
        int w = fx_text_w(t, c->size), lh = fx_line_h(c->size);
        tb[nt].t = t, tb[nt].rot = c->rot, tb[nt].size = c->size;
        tb[nt++].r = c->rot ? (view_rect){c->x, c->y - w, lh, w} : (view_rect){c->x, c->y, w, lh};
    }
    /* inside the window, off the heatmaps, apart from each other */
    for (int i = 0; i < nt; i++) {
        EXPECT(inside_window(tb[i].r, s), "text \"%.40s\" " FX_RFMT ": expected inside %dx%d",
               tb[i].t, FX_R(tb[i].r), s->width, s->height);
        for (int j = 0; j < ni; j++)
            EXPECT(!fx_rect_overlap(tb[i].r, img[j]),
                   "text \"%.40s\" " FX_RFMT ": expected off the image " FX_RFMT, tb[i].t,
                   FX_R(tb[i].r), FX_R(img[j]));
        for (int j = i + 1; j < nt; j++)
            EXPECT(!fx_rect_overlap(tb[i].r, tb[j].r),
                   "text \"%.40s\" " FX_RFMT " over \"%.40s\" " FX_RFMT, tb[i].t, FX_R(tb[i].r),
                   tb[j].t, FX_R(tb[j].r));
        if (s->figure || s->look.present) {
            static const char *const hints[] = {", and .", "(M, E)", "Esc", "Ctrl",
                                                "step \xC2\xB7"};
            for (size_t h = 0; h < sizeof hints / sizeof hints[0]; h++)
                EXPECT(!strstr(tb[i].t, hints[h]), "%s: expected no key hint, got \"%.60s\"",
                       s->figure ? "figure" : "presentation", tb[i].t);
        }
    }
    EXPECT_INT("stages in the strip", view_steps_count(layer), S->count);
    for (int j = 0; j < S->count; j++)
        EXPECT(S->chip[j].w > 0 && inside_window(S->chip[j], s),
               "chip %d " FX_RFMT ": expected inside the window", j + 1, FX_R(S->chip[j]));
    for (int b = 0; b < S->bigs; b++) {
        EXPECT(inside_window(S->big[b].map, s) && S->big[b].map.w > 0,
               "large matrix %d " FX_RFMT ": expected inside the window", b, FX_R(S->big[b].map));
        view_rect cb = S->big[b].cbar;
        EXPECT(inside_window(
                   (view_rect){cb.x, cb.y, cb.w, cb.h + L->pad / 2 + fx_line_h(L->font_small)}, s),
               "colorbar %d " FX_RFMT " and its numbers: expected inside the window", b, FX_R(cb));
        /* its numbers: minimum, 0 and maximum (diverging), 0 .. 1 in five (weights) */
        int numbers = 0;
        for (int i = 0; i < nt; i++)
            numbers += tb[i].r.y == cb.y + cb.h + L->pad / 2 && tb[i].r.x >= cb.x &&
                       tb[i].r.x + tb[i].r.w <= cb.x + cb.w && !tb[i].rot;
        const int want =
            view_steps_kind(layer, k) == 6 ? (s->look.contrast == VIEW_CONTRAST_LOG ? 4 : 5) : 3;
        if (roomy(s)) EXPECT_INT("colorbar numbers under the large stage", want, numbers);
    }
    /* the title, whole: the runs in the caption spell the chosen title */
    char markup[200], full[200], drawn[400] = "";
    view_steps_title(markup, sizeof markup, layer, S->head, k, S->title_variant[k - 1]);
    plain(full, sizeof full, markup);
    for (int i = 0; i < nt; i++)
        if (!tb[i].rot && in_rect(S->caption, tb[i].r.x, tb[i].r.y + tb[i].r.h / 2))
            strncat(drawn, tb[i].t, sizeof drawn - strlen(drawn) - 1);
    EXPECT(strcmp(drawn, full) == 0, "stage %d title: expected \"%s\", drawn \"%s\"", k, full,
           drawn);
    int w = 0;
    for (int i = 0; i < nt; i++)
        if (!tb[i].rot && in_rect(S->caption, tb[i].r.x, tb[i].r.y + tb[i].r.h / 2))
            w = tb[i].r.x + tb[i].r.w - S->caption.x;
    EXPECT(w <= S->caption.w, "stage %d title %d px: expected within its %d px", k, w,
           S->caption.w);
    if ((s->width == 1600 && s->height == 900) || (s->width == 1920 && s->height == 1080))
        EXPECT_INT("title variant at 1600x900 / 1920x1080 (0: the long one)", 0,
                   S->title_variant[k - 1]);
    /* the note, whole */
    char note[400], joined[900] = "";
    view_steps_note(note, sizeof note, layer, S->head, k);
    for (int i = 0; i < S->notes; i++) {
        if (i) strncat(joined, " ", sizeof joined - strlen(joined) - 1);
        strncat(joined, S->note_text[i], sizeof joined - strlen(joined) - 1);
    }
    EXPECT(strcmp(joined, note) == 0, "stage %d note: expected \"%s\", laid out \"%s\"", k, note,
           joined);
    /* token labels on the query and key sides of the n x n stages */
    const int kind = view_steps_kind(layer, k);
    if (kind >= 3 && kind <= 6 && n <= 16 && roomy(s)) {
        char first[64];
        view_token_label(first, sizeof first, layer->tokens[0]);
        const view_rect m = S->big[0].map;
        int row = 0, col = 0;
        for (int i = 0; i < nt; i++) {
            if (strcmp(tb[i].t, first) != 0) continue;
            if (!tb[i].rot && tb[i].r.x + tb[i].r.w <= m.x && tb[i].r.y >= m.y - 1 &&
                tb[i].r.y < m.y + m.h)
                row = 1;
            if (tb[i].rot && tb[i].r.y >= m.y + m.h && tb[i].r.x >= m.x - 1 &&
                tb[i].r.x < m.x + m.w)
                col = 1;
        }
        EXPECT(row && col,
               "stage %d, n %d: expected \"%s\" labelled as a query and a key, got "
               "row %d column %d",
               k, n, first, row, col);
    }
}

typedef struct {
    int n, d, h;
    mha_mask mask;
    int rope; /* 1: Q and K given before and after RoPE too (ten stages) */
} model_case;

static const model_case MODELS[] = {
    {12, 64, 4, MHA_MASK_NONE, 0},   {7, 64, 4, MHA_MASK_CAUSAL, 0},
    {16, 96, 6, MHA_MASK_CAUSAL, 0}, {40, 128, 8, MHA_MASK_NONE, 0},
    {1, 8, 1, MHA_MASK_NONE, 0},     {300, 512, 64, MHA_MASK_CAUSAL, 0},
    {16, 96, 6, MHA_MASK_CAUSAL, 1},
};

/* Rotates rows x (n, heads dk, row stride ld) by position as RoPE does, written here
 * from Hugging Face's rotate_half (column j with j + dk / 2, angle p 10000^(-2j / dk)),
 * in double; sign -1 turns them back. */
static void rope_rows(float *out, const float *x, int n, int heads, int dk, int sign) {
    const int half = dk / 2, ld = heads * dk;
    for (int p = 0; p < n; p++)
        for (int g = 0; g < heads; g++)
            for (int j = 0; j < half; j++) {
                const double ang = sign * p * pow(10000.0, -2.0 * j / dk);
                const size_t a = (size_t)p * ld + (size_t)g * dk + j, b = a + half;
                const double x1 = x[a], x2 = x[b];
                out[a] = (float)(x1 * cos(ang) - x2 * sin(ang));
                out[b] = (float)(x2 * cos(ang) + x1 * sin(ang));
            }
}

/* A model case's RoPE tensors: the layer's Q and K are the rotated ones (a RoPE model
 * whose Q fits, as Qwen2's), turned back for the unrotated. */
typedef struct {
    float *q_unrot, *k_unrot;
} rope_bufs;

static void rope_attach(rope_bufs *r, fx_model *fm, int on) {
    attn_layer *l = &fm->layer;
    r->q_unrot = r->k_unrot = NULL;
    if (!on) return;
    const size_t nd = (size_t)l->n * l->d_model;
    r->q_unrot = malloc(nd * sizeof(float)), r->k_unrot = malloc(nd * sizeof(float));
    assert_true(r->q_unrot && r->k_unrot);
    rope_rows(r->q_unrot, l->q, l->n, l->h, l->d_k, -1);
    rope_rows(r->k_unrot, l->k, l->n, l->h, l->d_k, -1);
    l->q_unrot = r->q_unrot, l->k_unrot = r->k_unrot, l->q_rot = l->q, l->k_rot = l->k;
}

static void rope_free(rope_bufs *r) {
    free(r->q_unrot), free(r->k_unrot);
}

static const int WINDOWS[][2] = {{1024, 768},  {1280, 800}, {1600, 900}, {1920, 1080},
                                 {3840, 2160}, {900, 1600}, {768, 1024}};
static const float ZOOMS[] = {1.0f, 1.5f, 2.0f};

static void test_stage_sweep(void **state) {
    (void)state;
    fx_reset();
    static view_layout L;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    for (size_t mi = 0; mi < sizeof MODELS / sizeof MODELS[0]; mi++) {
        const model_case *mc = &MODELS[mi];
        fx_model fm;
        fx_model_make(&fm, mc->n, mc->d, mc->h, mc->mask);
        rope_bufs rb;
        rope_attach(&rb, &fm, mc->rope);
        derived D;
        derive(&D, &fm.layer, 0);
        for (size_t wi = 0; wi < sizeof WINDOWS / sizeof WINDOWS[0]; wi++)
            for (size_t zi = 0; zi < sizeof ZOOMS / sizeof ZOOMS[0]; zi++)
                for (int mode = 0; mode < 3; mode++) /* window, presentation, saved panel */
                    for (int k = 1; k <= view_steps_count(&fm.layer); k++) {
                        view_state s;
                        fx_state(&s, &fm, WINDOWS[wi][0], WINDOWS[wi][1]);
                        s.look.zoom = ZOOMS[zi];
                        s.look.focus = 1, s.look.step = k;
                        s.step_raw = D.raw, s.step_scaled = D.scaled, s.step_share = D.share;
                        if (mode == 1) s.look.present = 1;
                        if (mode == 2) s.figure = 1, s.panel = VIEW_PANEL_STEPS, s.panel_head = 1;
                        snprintf(fx_where, sizeof fx_where,
                                 "n %d d %d h %d mask %d rope %d, %dx%d, zoom %.1f, %s, stage %d",
                                 mc->n, mc->d, mc->h, mc->mask, mc->rope, s.width, s.height,
                                 (double)s.look.zoom,
                                 mode == 0   ? "window"
                                 : mode == 1 ? "presentation"
                                             : "panel",
                                 k);
                        view_layout_compute(&L, &s, fx_measure, NULL);
                        view_render(&dl, cache, &L, &s, fx_measure, NULL);
                        check_stage(&L, &s, &dl);
                    }
        derived_free(&D);
        rope_free(&rb);
        fx_model_free(&fm);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("stage sweep");
}

/* The --panel steps:K figure: nine titled cells, none of their titles cut, no
 * key hints, every text inside the window. */
static void test_grid_figure(void **state) {
    (void)state;
    fx_reset();
    static view_layout L;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    for (size_t mi = 0; mi < sizeof MODELS / sizeof MODELS[0]; mi++) {
        fx_model fm;
        fx_model_make(&fm, MODELS[mi].n, MODELS[mi].d, MODELS[mi].h, MODELS[mi].mask);
        rope_bufs rb;
        rope_attach(&rb, &fm, MODELS[mi].rope);
        derived D;
        derive(&D, &fm.layer, 0);
        for (size_t wi = 0; wi < sizeof WINDOWS / sizeof WINDOWS[0]; wi++) {
            view_state s;
            fx_state(&s, &fm, WINDOWS[wi][0], WINDOWS[wi][1]);
            s.figure = 1, s.panel = VIEW_PANEL_STEPS, s.panel_head = 1, s.look.focus = 1;
            s.step_raw = D.raw, s.step_scaled = D.scaled, s.step_share = D.share;
            snprintf(fx_where, sizeof fx_where, "grid, n %d, %dx%d", MODELS[mi].n, s.width,
                     s.height);
            view_layout_compute(&L, &s, fx_measure, NULL);
            view_render(&dl, cache, &L, &s, fx_measure, NULL);
            const view_steps *S = &L.steps;
            EXPECT(S->shown && S->current == 0, "expected the grid, got shown %d current %d",
                   S->shown, S->current);
            static tbox tb[4096];
            static view_rect img[64];
            int nt = 0, ni = 0;
            for (int i = 0; i < dl.count; i++) {
                const draw_cmd *c = &dl.cmds[i];
                if (c->kind == DC_IMAGE && ni < 64) img[ni++] = (view_rect){c->x, c->y, c->w, c->h};
                if (c->kind != DC_TEXT || nt >= 4096) continue;
                const char *t = draw_cmd_text(&dl, c);
                EXPECT(!strstr(t, "(M, E)") && !strstr(t, ", and .") && !strstr(t, "Esc"),
                       "expected no key hint in the figure, got \"%s\"", t);
                int w = fx_text_w(t, c->size), lh = fx_line_h(c->size);
                tb[nt].t = t;
                tb[nt++].r =
                    c->rot ? (view_rect){c->x, c->y - w, lh, w} : (view_rect){c->x, c->y, w, lh};
            }
            for (int i = 0; i < nt; i++) { /* inside, off the heatmaps, apart */
                EXPECT(inside_window(tb[i].r, &s), "text \"%.40s\" " FX_RFMT ": expected inside",
                       tb[i].t, FX_R(tb[i].r));
                for (int j = 0; j < ni; j++)
                    EXPECT(!fx_rect_overlap(tb[i].r, img[j]),
                           "text \"%.40s\" " FX_RFMT ": expected off the image " FX_RFMT, tb[i].t,
                           FX_R(tb[i].r), FX_R(img[j]));
                for (int j = i + 1; j < nt; j++)
                    EXPECT(!fx_rect_overlap(tb[i].r, tb[j].r),
                           "text \"%.40s\" " FX_RFMT " over \"%.40s\" " FX_RFMT, tb[i].t,
                           FX_R(tb[i].r), tb[j].t, FX_R(tb[j].r));
            }
            EXPECT_INT("cells in the grid", view_steps_count(&fm.layer), S->count);
            for (int k = 0; k < S->count; k++) { /* a stage identical to the one before
                                                       it (stage 5 with no mask): said, not
                                                       drawn again */
                int images = 0, said = 0;
                char same[64], brief[32];
                snprintf(same, sizeof same, "the same as stage %d", k);
                snprintf(brief, sizeof brief, "= stage %d", k);
                for (int j = 0; j < ni; j++) images += fx_rect_overlap(img[j], S->cell[k]);
                for (int i = 0; i < nt; i++)
                    said |= (strstr(tb[i].t, same) != NULL || !strcmp(tb[i].t, brief)) &&
                            fx_rect_overlap(tb[i].r, S->cell[k]);
                if (view_steps_same(&fm.layer, k + 1))
                    EXPECT(images == 0 && said, "stage %d (as stage %d): %d images, said %d", k + 1,
                           k, images, said);
                else
                    EXPECT(images > 0 && !said, "stage %d: expected drawn, %d images, said %d",
                           k + 1, images, said);
            }
            for (int k = 0; k < S->count; k++) {
                char markup[200], full[200], drawn[400] = "";
                view_steps_title(markup, sizeof markup, &fm.layer, 0, k + 1, S->title_variant[k]);
                plain(full, sizeof full, markup);
                int right = 0;
                for (int i = 0; i < dl.count; i++) {
                    const draw_cmd *c = &dl.cmds[i];
                    if (c->kind != DC_TEXT || c->rot) continue;
                    const char *t = draw_cmd_text(&dl, c);
                    if (!in_rect(S->title[k], c->x, c->y + fx_line_h(c->size) / 2)) continue;
                    strncat(drawn, t, sizeof drawn - strlen(drawn) - 1);
                    right = c->x + fx_text_w(t, c->size);
                }
                if (S->title[k].w >= 20 * L.font_small)
                    EXPECT(strcmp(drawn, full) == 0 && right <= S->title[k].x + S->title[k].w,
                           "cell %d title: expected \"%s\" within %d px, drawn \"%s\" to %d", k + 1,
                           full, S->title[k].x + S->title[k].w, drawn, right);
            }
        }
        derived_free(&D);
        rope_free(&rb);
        fx_model_free(&fm);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("grid figure");
}

/* The large panel shows the stage: its image at stages 3 (S), 4 (S / sqrt(d_k)) and
 * 6 (A) differs, and stages 3 and 4 share one colour scale, so every cell of stage
 * 4 is at most as far from the scale's middle as the same cell of stage 3 (a
 * sixteenth as far for d_k = 16), as the reference numbers say. */
/* With values on (V), each number in a large stage's cells fits the room the layout
 * measured for it ("-0.00") and its cell: two decimals under 10 ("0", "-0.01"), never
 * "-0.00385", which spills over its neighbours where cells are that narrow. */
static void test_cell_numbers_fit(void **state) {
    (void)state;
    fx_reset();
    static view_layout L;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model fm;
    fx_model_make(&fm, 3, 8, 2, MHA_MASK_NONE);
    derived D;
    derive(&D, &fm.layer, 0);
    int numbers = 0;
    for (int stage = 1; stage <= view_steps_count(&fm.layer); stage++) {
        view_state s;
        fx_state(&s, &fm, 1280, 720);
        s.figure = 1, s.panel = VIEW_PANEL_STEPS, s.panel_head = 1, s.look.focus = 1;
        s.look.step = stage, s.look.values = 1;
        s.step_raw = D.raw, s.step_scaled = D.scaled, s.step_share = D.share;
        snprintf(fx_where, sizeof fx_where, "stage %d, n 3, d_model 8", stage);
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        const view_steps *S = &L.steps;
        for (int b = 0; b < S->bigs && b < 3; b++) {
            const view_matrix_box *m = &S->big[b];
            const int cell_w = m->map.w / (m->cols > 0 ? m->cols : 1);
            for (int i = 0; i < dl.count; i++) {
                const draw_cmd *c = &dl.cmds[i];
                if (c->kind != DC_TEXT || c->rot) continue;
                const view_rect t = {c->x, c->y, 1, 1};
                if (!fx_rect_overlap(t, m->map)) continue;
                const char *txt = draw_cmd_text(&dl, c);
                numbers++;
                /* the room view_cell_values_fit gave it, and its cell */
                const int room = fx_text_w("\xE2\x88\x92"
                                           "0.00",
                                           c->size);
                EXPECT(fx_text_w(txt, c->size) <= room && fx_text_w(txt, c->size) <= cell_w,
                       "\"%s\" %d px wide: expected within the room of \"-0.00\" (%d px) "
                       "and its cell (%d px)",
                       txt, fx_text_w(txt, c->size), room, cell_w);
            }
        }
    }
    EXPECT(numbers > 0, "expected numbers in the cells, got none");
    derived_free(&D);
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("cell numbers");
}

static void test_large_panel_shows_stage(void **state) {
    (void)state;
    fx_reset();
    static view_layout L;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model fm;
    fx_model_make(&fm, 12, 64, 4, MHA_MASK_NONE);
    derived D;
    derive(&D, &fm.layer, 0);
    const int stages[3] = {3, 4, 6};
    rgba *px[3] = {NULL, NULL, NULL};
    int pw[3] = {0}, ph[3] = {0};
    for (int i = 0; i < 3; i++) {
        view_state s;
        fx_state(&s, &fm, 1600, 900);
        s.look.focus = 1, s.look.step = stages[i];
        s.step_raw = D.raw, s.step_scaled = D.scaled, s.step_share = D.share;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        const draw_image *im = image_in(&dl, L.steps.big[0].map);
        EXPECT(im && im->px, "stage %d: expected an image in the large panel " FX_RFMT, stages[i],
               FX_R(L.steps.big[0].map));
        if (!im || !im->px) continue;
        pw[i] = im->w, ph[i] = im->h;
        px[i] = malloc(sizeof(rgba) * (size_t)im->w * im->h);
        memcpy(px[i], im->px, sizeof(rgba) * (size_t)im->w * im->h);
        EXPECT(L.steps.big[0].map.w >= 400, "stage %d: expected a large panel, got %d px wide",
               stages[i], L.steps.big[0].map.w);
    }
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++) {
            if (!px[a] || !px[b]) continue;
            int same = pw[a] == pw[b] && ph[a] == ph[b] &&
                       memcmp(px[a], px[b], sizeof(rgba) * (size_t)pw[a] * ph[a]) == 0;
            EXPECT(!same, "stages %d and %d: expected different pictures in the large panel",
                   stages[a], stages[b]);
        }
    /* one scale for S and S / 4: the scaled cell's colour is nearer the middle (white) */
    if (px[0] && px[1] && pw[0] == 12 && pw[1] == 12) {
        int paler = 0;
        const rgba mid = cmap_signed(0, 0.0f);
        for (int c = 0; c < 144; c++) {
            int d0 = abs(px[0][c].r - mid.r) + abs(px[0][c].g - mid.g) + abs(px[0][c].b - mid.b);
            int d1 = abs(px[1][c].r - mid.r) + abs(px[1][c].g - mid.g) + abs(px[1][c].b - mid.b);
            paler += d1 <= d0 + 6;
        }
        EXPECT_INT("cells of stage 4 no further from the middle than stage 3's", 144, paler);
    }
    for (int i = 0; i < 3; i++) free(px[i]);
    derived_free(&D);
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("large panel shows the stage");
}

/* The checks catch what they look for: a cut title and a hint in a figure. */
static void test_checkers_catch_faults(void **state) {
    (void)state;
    fx_reset();
    static view_layout L;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model fm;
    fx_model_make(&fm, 12, 64, 4, MHA_MASK_NONE);
    derived D;
    derive(&D, &fm.layer, 0);
    view_state s;
    fx_state(&s, &fm, 1600, 900);
    s.look.focus = 1, s.look.step = 3, s.figure = 1, s.panel = VIEW_PANEL_STEPS, s.panel_head = 1;
    s.step_raw = D.raw, s.step_scaled = D.scaled, s.step_share = D.share;
    view_layout_compute(&L, &s, fx_measure, NULL);
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    long before = fx_sandbox_begin();
    check_stage(&L, &s, &dl);
    EXPECT_INT("failures on a good stage", 0, fx_sandbox_end(before));
    /* a hint planted in the figure, and the title cut */
    draw_text(&dl, 10, 880, ", and . step", L.font_small, (rgba){0, 0, 0, 255}, 0, 0);
    for (int i = 0; i < dl.count; i++) {
        draw_cmd *c = &dl.cmds[i];
        if (c->kind == DC_TEXT && in_rect(L.steps.caption, c->x, c->y + 2)) {
            draw_rename(&dl, i, "3  S\xE2\x80\xA6");
            break;
        }
    }
    before = fx_sandbox_begin();
    check_stage(&L, &s, &dl);
    EXPECT(fx_sandbox_end(before) >= 2, "expected the planted hint and cut title caught");
    derived_free(&D);
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("checkers catch faults");
}

/* A RoPE layer with grouped K/V heads, as a loaded Llama's (h 4 on h_kv 2, no Q or K
 * of d_model columns, only RoPE's): ten stages, the rotation third, the others
 * numbered on ("4  S", "10  head"); the note says where positions enter and which
 * K/V head the query head reads; stage 3 draws Q_i and the K of its group before and
 * after (the columns of head 3 and of K/V head 2: made positive here, every other
 * column negative, so their pictures are all red, and row 0, position 0, is not
 * turned); the S of stage 4 is Q_i K_g^T of the rotated ones, against a plain loop. */
static void test_rope_stage(void **state) {
    (void)state;
    fx_reset();
    enum { N = 6, H = 4, HKV = 2, DK = 4, D = H * DK };
    static float qu[N * H * DK], qr[N * H * DK], ku[N * HKV * DK], kr[N * HKV * DK];
    static float attn[H * N * N];
    for (int r = 0; r < N; r++) {
        for (int c = 0; c < H * DK; c++)
            qu[r * H * DK + c] =
                (c / DK == 2 ? 1.0f : -1.0f) * (0.5f + 0.1f * (float)((r + c) % 5));
        for (int c = 0; c < HKV * DK; c++)
            ku[r * HKV * DK + c] =
                (c / DK == 1 ? 1.0f : -1.0f) * (0.4f + 0.1f * (float)((r * c) % 4));
    }
    rope_rows(qr, qu, N, H, DK, 1);
    rope_rows(kr, ku, N, HKV, DK, 1);
    for (int i = 0; i < H * N * N; i++) attn[i] = 1.0f / N;
    static const char *const toks[N] = {"a", "b", "c", "d", "e", "f"};
    attn_layer l;
    attn_layer_init(&l, N, N, H, D, ATTN_MASK_NONE, 1, 1.0f);
    l.h_kv = HKV, l.tokens = toks, l.attn = attn, l.layers = 1;
    l.q_unrot = qu, l.q_rot = qr, l.k_unrot = ku, l.k_rot = kr;
    snprintf(fx_where, sizeof fx_where, "RoPE layer, h 4 on 2");
    EXPECT_INT("stages", 10, view_steps_count(&l));
    EXPECT_INT("stage 3's kind", VIEW_STAGE_ROPE, view_steps_kind(&l, 3));
    EXPECT_INT("stage 4's kind (S)", 3, view_steps_kind(&l, 4));
    char t[400], txt[200];
    view_steps_title(t, sizeof t, &l, 2, 3, 0);
    plain(txt, sizeof txt, t);
    EXPECT(strncmp(txt, "3  RoPE: Q3 and K3 rotated by position", 38) == 0, "stage 3: \"%s\"", txt);
    view_steps_title(t, sizeof t, &l, 2, 4, 0);
    plain(txt, sizeof txt, t);
    EXPECT(strncmp(txt, "4  S3 = Q3 K3", 13) == 0, "stage 4: \"%s\"", txt);
    view_steps_title(t, sizeof t, &l, 2, 10, 1);
    plain(txt, sizeof txt, t);
    EXPECT(strncmp(txt, "10  head3", 9) == 0, "stage 10: \"%s\"", txt);
    view_steps_note(t, sizeof t, &l, 2, 3);
    EXPECT(strstr(t, "Positions enter here") && strstr(t, "(K/V head 2's)") &&
               strstr(t, "column j + 2") && !strstr(t, "QK-norm"),
           "stage 3's note: \"%s\"", t);
    EXPECT(view_steps_same(&l, 6) && !view_steps_same(&l, 5),
           "expected stage 6 (+ M, no mask) the same as stage 5, and stage 5 not");
    /* the rotation stage, large */
    static view_layout L;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_state s;
    memset(&s, 0, sizeof s);
    s.width = 1600, s.height = 900, s.ui_scale = 1.0f, s.look.zoom = 1.0f;
    s.layer = &l, s.panel = VIEW_PANEL_ALL, s.hover_x = s.hover_y = -1, s.data_version = 1;
    s.look.focus = 3, s.look.step = 3;
    view_layout_compute(&L, &s, fx_measure, NULL);
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    EXPECT_INT("matrices of the rotation stage", 4, L.steps.bigs);
    for (int b = 0; b < 4 && b < L.steps.bigs; b++) {
        const draw_image *im = image_in(&dl, L.steps.big[b].map);
        EXPECT(im && im->px && im->w == DK && im->h == N,
               "stage 3, matrix %d: expected a %d x %d image", b, N, DK);
        if (!im || !im->px) continue;
        for (int r = 0; r < im->h; r++)
            for (int c = 0; c < im->w; c++) {
                const rgba p = im->px[r * im->w + c];
                if (r == 0 || b % 2 == 0) /* unrotated, or position 0 */
                    EXPECT(p.r > p.b, "matrix %d cell (%d, %d): expected red (positive)", b, r, c);
            }
    }
    /* S of the rotated Q_3 and K of K/V head 2 */
    float S[N * N];
    attn_head_raw_scores(S, &l, 2);
    double worst = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int c = 0; c < DK; c++)
                acc += (double)qr[i * H * DK + 2 * DK + c] * (double)kr[j * HKV * DK + DK + c];
            worst = fmax(worst, fabs(acc - S[i * N + j]));
        }
    EXPECT(worst < 1e-5, "S = Q3 K(K/V 2)^T: worst difference %g", worst);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("RoPE stage");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage_sweep),
        cmocka_unit_test(test_grid_figure),
        cmocka_unit_test(test_large_panel_shows_stage),
        cmocka_unit_test(test_cell_numbers_fit),
        cmocka_unit_test(test_checkers_catch_faults),
        cmocka_unit_test(test_rope_stage),
    };
    return cmocka_run_group_tests_name("steps layout", tests, NULL, NULL);
}
