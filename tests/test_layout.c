/* test_layout.c: the pure layout (view_layout_compute) swept over h = 1..64,
 * n = 1..512, windows 800x600..3840x2160, UI scale 1 and 2, zoom 1.5, with and
 * without a focused head, and over every zoom step 80 %..300 % at landscape and
 * portrait windows from 600x800 to 3840x2160, in the window, in presentation mode
 * and as a figure, with a fake text measurer so no font is needed.
 * Properties: every rectangle inside the window; no two of them overlap; token
 * labels only when they fit, from the first token, as dense as fits; paging (at
 * most VIEW_MAX_VISIBLE heads, >= 1 px a cell, every head on exactly one page);
 * heatmaps that grow with the zoom where there is room; titles in one size; no UI
 * hints in figures; single panels cropped to their content; and view_render's
 * heatmaps reduced to at most their rectangle's pixels, never dropped. Every
 * failure prints the case, what was expected and what the layout gave. Under
 * MHAVIZ_TEST_SAMPLE=k (the sanitizer build) the sweeps run every k-th case
 * (sample.h); the planted faults and the smaller tests run whole. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layout_items.h"
#include "sample.h"
#include "view_fixture.h"
#include "view_internal.h"

static void check_geometry(const view_layout *L, const view_state *s) {
    static items it;
    collect(&it, L);
    for (int i = 0; i < it.n; i++) {
        view_rect r = it.v[i].r;
        EXPECT(r.w > 0 && r.h > 0, "%s " FX_RFMT ": expected a positive size", it.v[i].name,
               FX_R(r));
        EXPECT(r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height,
               "%s " FX_RFMT ": expected inside the %dx%d window", it.v[i].name, FX_R(r), s->width,
               s->height);
    }
    for (int i = 0; i < it.n; i++)
        for (int j = i + 1; j < it.n; j++) {
            if (overlap_allowed(it.v[i].kind, it.v[j].kind)) continue;
            EXPECT(!fx_rect_overlap(it.v[i].r, it.v[j].r),
                   "expected no overlap, got %s " FX_RFMT " overlapping %s " FX_RFMT, it.v[i].name,
                   FX_R(it.v[i].r), it.v[j].name, FX_R(it.v[j].r));
        }
}

/* Widest token label, truncated independently: more than 10 code points become
 * the first 9 and "…" (one code point). */
static int widest_label(const attn_layer *layer, int size) {
    int w = 0;
    for (int i = 0; i < layer->n_real; i++) {
        int cps = fx_cp_count(layer->tokens[i]);
        if (cps > 10) cps = 10;
        if (cps * fx_cp_w(size) > w) w = cps * fx_cp_w(size);
    }
    return w;
}

static void check_labels(const view_layout *L, const view_state *s) {
    const int n = s->layer->n;
    const int need_w = widest_label(s->layer, L->label_size);
    const int need_h = fx_line_h(L->label_size);
    if (!L->show_row_labels && !L->show_col_labels) return;
    /* every stride-th token is labelled: neighbouring labels are stride cells apart */
    const int stride = L->label_stride;
    EXPECT(stride >= 1, "labels shown: expected label_stride >= 1, got %d", stride);
    /* the stride is the smallest that has room: with one less, labels would touch
       (every token needs a cell taller than a label; every k-th, the first and
       last kept inside the map, needs (2k + 1) * side >= 3 * (label + 1) * n) */
    if (stride > 1 && L->shown_heads > 0) {
        const long side = L->heads[0].map.h, need = need_h + 1, k = stride - 1;
        int fits =
            k == 1 ? side >= need * n : (2 * k + 1) * side >= 3 * need * n && k * side >= need * n;
        EXPECT(!fits,
               "labels every %d tokens: expected the smallest stride with room, but every %ld "
               "fits (side %ld, n %d, label %d px)",
               stride, k, side, n, need_h);
    }
    /* a label has the height of min(stride, n) cells to itself */
    const int st = stride < 1 ? 1 : (stride > n ? n : stride);
    if (L->show_row_labels) {
        EXPECT(L->row_label_w >= need_w,
               "row labels shown: expected row_label_w >= widest label %d px, got %d", need_w,
               L->row_label_w);
        for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
            long room = (long)L->heads[i].map.h * st / n;
            EXPECT(
                room >= need_h,
                "row labels shown: expected head %d room per label (map.h %d * stride %d / n %d = "
                "%ld px) >= label text height %d (size %d)",
                L->first_head + i + 1, L->heads[i].map.h, st, n, room, need_h, L->label_size);
        }
    }
    if (L->show_col_labels) {
        EXPECT(L->col_label_h >= need_w,
               "column labels shown: expected col_label_h >= widest label %d px, got %d", need_w,
               L->col_label_h);
        for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
            long room = (long)L->heads[i].map.w * st / n;
            EXPECT(room >= need_h,
                   "column labels shown: expected head %d room per rotated label (map.w %d * "
                   "stride %d "
                   "/ n %d = %ld px) >= label text height %d",
                   L->first_head + i + 1, L->heads[i].map.w, st, n, room, need_h);
        }
    }
}

/* The pages of heads: presenting, the side panels' own page comes after them. */
static int heads_pages(const view_layout *L) {
    return L->panels_page > 0 ? L->panels_page - 1 : L->pages;
}

/* Heads grid properties for one page (focus off). */
static void check_paging(const view_layout *L, const view_state *s) {
    const int n = s->layer->n, h = s->layer->h, pages = heads_pages(L);
    EXPECT(L->shown_heads >= 1 && L->shown_heads <= VIEW_MAX_VISIBLE,
           "expected 1 <= shown_heads <= %d, got %d", VIEW_MAX_VISIBLE, L->shown_heads);
    EXPECT(L->per_page >= 1 && L->per_page <= VIEW_MAX_VISIBLE,
           "expected 1 <= per_page <= %d, got %d", VIEW_MAX_VISIBLE, L->per_page);
    EXPECT(pages >= 1 && (long)pages * L->per_page >= h && (long)(pages - 1) * L->per_page < h,
           "expected pages of heads = ceil(h %d / per_page %d), got %d", h, L->per_page, pages);
    EXPECT_INT("first_head = page * per_page", (long)L->page * L->per_page, L->first_head);
    EXPECT(L->grid_cols >= 1 && (long)L->grid_cols * L->grid_rows >= L->shown_heads,
           "expected grid %d x %d to hold %d heads", L->grid_cols, L->grid_rows, L->shown_heads);
    if (pages == 1) EXPECT_INT("one page: shown_heads = h", h, L->shown_heads);
    for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
        view_rect m = L->heads[i].map;
        EXPECT(m.w == m.h, "head %d map " FX_RFMT ": expected square", L->first_head + i + 1,
               FX_R(m));
        /* when paging is possible (more than one head per page), no head may drop
           below 1 px a cell; a single head that cannot fit even alone is reduced */
        if (L->per_page > 1)
            EXPECT(m.w >= n && m.h >= n,
                   "per_page %d, pages %d: expected head %d map side >= n = %d, got %d x %d",
                   L->per_page, L->pages, L->first_head + i + 1, n, m.w, m.h);
    }
    if (L->pages > 1 && !s->figure && !s->look.present) {
        EXPECT(L->buttons[BTN_PAGE_PREV].present && L->buttons[BTN_PAGE_NEXT].present,
               "pages = %d: expected the page buttons present", L->pages);
    } else {
        EXPECT(!L->buttons[BTN_PAGE_PREV].present && !L->buttons[BTN_PAGE_NEXT].present,
               "one page: expected no page buttons, got present %d/%d",
               L->buttons[BTN_PAGE_PREV].present, L->buttons[BTN_PAGE_NEXT].present);
    }
}

/* ------------------------------------------------------------------------------ */
/* text actually drawn: inside the window, not over a heatmap, not over other text */

typedef struct {
    view_rect r;
    const char *text;
} tbox;

/* What the drawn text says: a figure or a presentation carries no UI hints, page
 * notes, notices or timings; head titles are all in one size; when token labels
 * are shown, the first token is among them, as a row and as a column label. */
static void check_drawn_words(const view_layout *L, const view_state *s, const draw_list *dl) {
    static const char *const hints[] = {"PgUp",  "PgDn", "hover", "Esc",        "Ctrl", "compute",
                                        "frame", "(F1)", "zoom",  "recompute:", "Enter"};
    char first[64] = "";
    if (s->layer && s->layer->n_real > 0)
        view_token_label(first, sizeof first, s->layer->tokens[0]);
    int row_first = 0, col_first = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind != DC_TEXT) continue;
        const char *t = draw_cmd_text(dl, c);
        /* a presentation keeps its page note (PgUp/PgDn, on screen only) */
        for (size_t k = s->figure ? 0 : 4;
             (s->figure || s->look.present) && k < sizeof hints / sizeof hints[0]; k++)
            EXPECT(!strstr(t, hints[k]), "%s: expected no UI text, got \"%.60s\"",
                   s->figure ? "figure" : "presentation", t);
        for (int h = 0; h < L->shown_heads; h++) {
            view_rect r = L->heads[h].title;
            int is_title = strncmp(t, "head", 4) == 0 || (t[0] >= '0' && t[0] <= '9');
            if (is_title && c->x >= r.x && c->x < r.x + r.w && c->y >= r.y && c->y < r.y + r.h &&
                !c->rot) /* (the x that switches a head off is no title) */
                EXPECT(c->size == L->font, "head %d title \"%s\": expected size %d, got %d",
                       L->first_head + h + 1, t, L->font, c->size);
        }
        if (first[0] && strcmp(t, first) == 0 && L->shown_heads > 0) {
            view_rect m = L->heads[0].map;
            if (!c->rot && c->x < m.x && c->y >= m.y - 1 && c->y < m.y + m.h) row_first = 1;
            if (c->rot && c->y > m.y + m.h && c->x >= m.x - 1 && c->x < m.x + m.w) col_first = 1;
        }
    }
    if (L->show_row_labels && L->shown_heads > 0 && first[0])
        EXPECT(row_first && col_first,
               "labels every %d tokens: expected the first token \"%s\" labelled as a row and a "
               "column of head %d, got row %d column %d",
               L->label_stride, first, L->first_head + 1, row_first, col_first);
}

static void check_render_text(const view_layout *L, const view_state *s, view_cache *cache,
                              draw_list *dl) {
    view_render(dl, cache, L, s, fx_measure, NULL);
    static tbox tb[8192];
    static view_rect img[512];
    int nt = 0, ni = 0;
    /* the lesson's panels write numbers in their cells and are laid out by their own
       code: their text is left out here (their rectangles are in check_geometry) */
    view_rect lesson = {0, 0, 0, 0};
    if (L->lesson_shown) { /* from the title down to the note, wherever they are placed */
        int x0 = L->redund_title.x - L->line, x1 = L->redund_title.x + L->redund_title.w;
        const view_rect *r[3] = {&L->redund_map, &L->redund_cbar, &L->redund_note};
        for (int i = 0; i < 3; i++) {
            if (r[i]->x - L->line < x0) x0 = r[i]->x - L->line;
            if (r[i]->x + r[i]->w > x1) x1 = r[i]->x + r[i]->w;
        }
        lesson = (view_rect){x0, L->redund_title.y, x1 - x0,
                             L->redund_note.y + L->redund_note.h - L->redund_title.y};
    }
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (fx_rect_overlap((view_rect){c->x, c->y, 1, 1}, lesson)) continue;
        if (c->kind == DC_IMAGE && ni < 512) img[ni++] = (view_rect){c->x, c->y, c->w, c->h};
        if (c->kind == DC_TEXT && nt < 8192) {
            const char *t = draw_cmd_text(dl, c);
            int w = fx_text_w(t, c->size), lh = fx_line_h(c->size);
            tb[nt].text = t;
            tb[nt++].r =
                c->rot ? (view_rect){c->x, c->y - w, lh, w} : (view_rect){c->x, c->y, w, lh};
        }
    }
    for (int i = 0; i < nt; i++) {
        /* no text of several words cut with an ellipsis from 1024x768 (and 768x1024)
           up: each shortens to a form that fits (a token label, one word, is
           abbreviated by design; a few labels end in "…" by their meaning) */
        const char *t = tb[i].text;
        const size_t tl = strlen(t);
        static const char *const meant[] = {"More keys\xE2\x80\xA6", "timing\xE2\x80\xA6",
                                            "computing\xE2\x80\xA6", "loading\xE2\x80\xA6"};
        int meant_so = 0;
        for (size_t m = 0; m < sizeof meant / sizeof meant[0]; m++) {
            const size_t ml = strlen(meant[m]);
            meant_so |= tl >= ml && strcmp(t + tl - ml, meant[m]) == 0;
        }
        if (s->width >= 768 && s->height >= 768 && s->width * s->height >= 1024 * 768 &&
            strchr(t, ' ') && tl >= 3 && !meant_so)
            EXPECT(strcmp(t + tl - 3, "\xE2\x80\xA6") != 0, "text cut: \"%.80s\"", t);
        view_rect r = tb[i].r;
        EXPECT(r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height,
               "text \"%.40s\" " FX_RFMT ": expected inside the %dx%d window", tb[i].text, FX_R(r),
               s->width, s->height);
        for (int k = 0; k < ni; k++)
            EXPECT(!fx_rect_overlap(r, img[k]),
                   "text \"%.40s\" " FX_RFMT ": expected not over the image " FX_RFMT, tb[i].text,
                   FX_R(r), FX_R(img[k]));
        for (int k = i + 1; k < nt; k++)
            EXPECT(!fx_rect_overlap(r, tb[k].r),
                   "expected no overlap, got text \"%.40s\" " FX_RFMT
                   " over text \"%.40s\" " FX_RFMT,
                   tb[i].text, FX_R(r), tb[k].text, FX_R(tb[k].r));
    }
    check_drawn_words(L, s, dl);
}

/* ------------------------------------------------------------------------------ */
/* the sweep                                                                      */

typedef struct {
    int n, d, h;
    mha_mask mask;
} model_case;

static const model_case MODELS[] = {
    {1, 64, 1, MHA_MASK_NONE},     {2, 64, 2, MHA_MASK_CAUSAL},   {7, 96, 3, MHA_MASK_NONE},
    {12, 64, 4, MHA_MASK_NONE},    {40, 160, 5, MHA_MASK_CAUSAL}, {100, 64, 8, MHA_MASK_NONE},
    {256, 96, 12, MHA_MASK_NONE},  {512, 64, 16, MHA_MASK_NONE},  {12, 192, 24, MHA_MASK_CAUSAL},
    {40, 64, 32, MHA_MASK_NONE},   {7, 96, 48, MHA_MASK_NONE},    {512, 64, 64, MHA_MASK_NONE},
    {256, 192, 64, MHA_MASK_NONE}, {1, 3072, 64, MHA_MASK_NONE},  {7, 3072, 48, MHA_MASK_NONE},
    {100, 3840, 5, MHA_MASK_NONE}, {2, 4096, 64, MHA_MASK_NONE},  {512, 256, 1, MHA_MASK_CAUSAL},
    {40, 96, 12, MHA_MASK_NONE},   {12, 64, 64, MHA_MASK_NONE},
};
#define NMODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

typedef struct {
    int w, h;
    float ui, zoom;
} window_case;

static const window_case WINDOWS[] = {
    {800, 600, 1, 1},     {1280, 720, 1, 1},     {1600, 900, 1, 1},  {1920, 1080, 1, 1},
    {2560, 1440, 1, 1},   {3840, 2160, 1, 1},    {2560, 1440, 2, 1}, {3840, 2160, 2, 1},
    {1280, 720, 1, 1.5f}, {1920, 1080, 1, 1.5f},
};
#define NWINDOWS ((int)(sizeof WINDOWS / sizeof WINDOWS[0]))

/* the heavy model (n = 512, d_model = 4096, h = 8) is made once for the group */
static fx_model g_big;

static int group_setup(void **state) {
    (void)state;
    fx_model_make(&g_big, 512, 4096, 8, MHA_MASK_NONE);
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    fx_model_free(&g_big);
    return 0;
}

static void sweep_model(const fx_model *fm, int render_text, test_sample *sample) {
    const mha_model *m = fm->m;
    static view_layout L, L2;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    for (int wi = 0; wi < NWINDOWS; wi++) {
        if (!test_sample_next(sample)) continue;
        const window_case *wc = &WINDOWS[wi];
        view_state s;
        fx_state(&s, fm, wc->w, wc->h);
        s.ui_scale = wc->ui;
        s.look.zoom = wc->zoom;

        /* focus off: every page */
        snprintf(fx_where, sizeof fx_where, "n=%d d=%d h=%d %dx%d ui=%g zoom=%g focus=0 page=0",
                 m->n, m->cfg.d_model, m->cfg.h, wc->w, wc->h, (double)wc->ui, (double)wc->zoom);
        view_layout_compute(&L, &s, fx_measure, NULL);
        EXPECT_INT("focus off: L.focus", 0, L.focus);
        const int pages = L.pages, per_page = L.per_page;
        long total = 0;
        int next_first = 0;
        for (int p = 0; p < pages && p < 200; p++) {
            s.look.page = p;
            snprintf(fx_where, sizeof fx_where,
                     "n=%d d=%d h=%d %dx%d ui=%g zoom=%g focus=0 page=%d", m->n, m->cfg.d_model,
                     m->cfg.h, wc->w, wc->h, (double)wc->ui, (double)wc->zoom, p);
            view_layout_compute(&L2, &s, fx_measure, NULL);
            EXPECT_INT("page kept", p, L2.page);
            EXPECT_INT("pages independent of the page", pages, L2.pages);
            EXPECT_INT("per_page independent of the page", per_page, L2.per_page);
            EXPECT_INT("state.page moves first_head", (long)p * per_page, L2.first_head);
            EXPECT_INT("pages tile the heads: first_head follows the previous page", next_first,
                       L2.first_head);
            next_first = L2.first_head + L2.shown_heads;
            total += L2.shown_heads;
            if (render_text) {
                if (p == 0) check_render_text(&L2, &s, cache, &dl);
            } else {
                check_geometry(&L2, &s);
                check_labels(&L2, &s);
                check_paging(&L2, &s);
            }
        }
        snprintf(fx_where, sizeof fx_where, "n=%d d=%d h=%d %dx%d ui=%g zoom=%g focus=0", m->n,
                 m->cfg.d_model, m->cfg.h, wc->w, wc->h, (double)wc->ui, (double)wc->zoom);
        EXPECT_INT("heads shown over all pages", m->cfg.h, total);
        /* out-of-range pages are clamped */
        s.look.page = pages + 3;
        view_layout_compute(&L2, &s, fx_measure, NULL);
        EXPECT_INT("page past the end clamps to the last", pages - 1, L2.page);
        s.look.page = -2;
        view_layout_compute(&L2, &s, fx_measure, NULL);
        EXPECT_INT("negative page clamps to 0", 0, L2.page);
        s.look.page = 0;

        /* focus on head 1, and on the last head */
        const int focus_heads[2] = {1, m->cfg.h};
        for (int fi = 0; fi < (m->cfg.h > 1 ? 2 : 1); fi++) {
            s.look.focus = focus_heads[fi];
            snprintf(fx_where, sizeof fx_where, "n=%d d=%d h=%d %dx%d ui=%g zoom=%g focus=%d", m->n,
                     m->cfg.d_model, m->cfg.h, wc->w, wc->h, (double)wc->ui, (double)wc->zoom,
                     s.look.focus);
            view_layout_compute(&L, &s, fx_measure, NULL);
            EXPECT_INT("focus: L.focus", s.look.focus, L.focus);
            EXPECT_INT("focus: shown_heads", 1, L.shown_heads);
            EXPECT_INT("focus: first_head", s.look.focus - 1, L.first_head);
            if (render_text) {
                if (fi == 0) check_render_text(&L, &s, cache, &dl);
            } else {
                check_geometry(&L, &s);
                check_labels(&L, &s);
            }
        }
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
}

static void test_layout_sweep(void **state) {
    (void)state;
    fx_reset();
    test_sample sample = test_sample_begin("layout sweep");
    for (int i = 0; i < NMODELS; i++) {
        fx_model fm;
        fx_model_make(&fm, MODELS[i].n, MODELS[i].d, MODELS[i].h, MODELS[i].mask);
        sweep_model(&fm, 0, &sample);
        fx_model_free(&fm);
    }
    sweep_model(&g_big, 0, &sample);
    fx_finish("layout sweep");
}

/* Text as drawn by view_render: a smaller sweep (rendering colours every heatmap). */
static void test_rendered_text_sweep(void **state) {
    (void)state;
    fx_reset();
    static const model_case cases[] = {
        {1, 64, 1, MHA_MASK_NONE},    {7, 96, 3, MHA_MASK_NONE},   {12, 64, 4, MHA_MASK_CAUSAL},
        {40, 160, 5, MHA_MASK_NONE},  {100, 64, 8, MHA_MASK_NONE}, {7, 96, 48, MHA_MASK_NONE},
        {512, 64, 64, MHA_MASK_NONE},
    };
    test_sample sample = test_sample_begin("rendered text sweep");
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        fx_model fm;
        fx_model_make(&fm, cases[i].n, cases[i].d, cases[i].h, cases[i].mask);
        sweep_model(&fm, 1, &sample);
        fx_model_free(&fm);
    }
    fx_finish("rendered text sweep");
}

/* Changing state.page moves first_head by per_page, and the layout is a pure
 * function of the state (same state, same layout). */
static void test_paging_moves(void **state) {
    (void)state;
    fx_reset();
    fx_model fm;
    fx_model_make(&fm, 256, 192, 64, MHA_MASK_NONE);
    view_state s;
    fx_state(&s, &fm, 800, 600);
    static view_layout a, b;
    snprintf(fx_where, sizeof fx_where, "n=256 d=192 h=64 800x600");
    view_layout_compute(&a, &s, fx_measure, NULL);
    EXPECT(a.pages > 1, "n=256, h=64 at 800x600: expected more than one page, got %d", a.pages);
    EXPECT(a.per_page >= 1, "expected per_page >= 1, got %d", a.per_page);
    for (int p = 0; p < a.pages; p++) {
        s.look.page = p;
        view_layout_compute(&b, &s, fx_measure, NULL);
        EXPECT_INT("first_head after setting state.page", (long)p * a.per_page, b.first_head);
        EXPECT_INT("shown_heads on this page", p < a.pages - 1 ? a.per_page : 64 - p * a.per_page,
                   b.shown_heads);
    }
    s.look.page = 1;
    view_layout_compute(&a, &s, fx_measure, NULL);
    view_layout_compute(&b, &s, fx_measure, NULL);
    EXPECT(memcmp(&a, &b, sizeof a) == 0, "same state twice: expected identical layouts");
    fx_model_free(&fm);
    fx_finish("paging");
}

/* ------------------------------------------------------------------------------ */
/* matrices with more cells than pixels are reduced, not dropped                  */

static const draw_cmd *image_at(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && fx_rect_eq((view_rect){c->x, c->y, c->w, c->h}, r)) return c;
    }
    return NULL;
}

static void check_reduced(const draw_list *dl, view_rect map, int rows, int cols,
                          const char *what) {
    const draw_cmd *c = image_at(dl, map);
    EXPECT(c != NULL, "%s: expected a DC_IMAGE at its rect " FX_RFMT ", got none", what, FX_R(map));
    if (!c) return;
    const draw_image *im = &dl->images[c->img];
    int ew = cols < map.w ? cols : map.w, eh = rows < map.h ? rows : map.h;
    EXPECT(im->w == ew && im->h == eh,
           "%s (%d x %d cells into %d x %d px): expected a %d x %d image, got %d x %d", what, rows,
           cols, map.h, map.w, ew, eh, im->w, im->h);
}

static void test_reduced_not_dropped(void **state) {
    (void)state;
    fx_reset();
    const mha_model *m = g_big.m;
    view_state s;
    static view_layout L;
    for (int focus = 0; focus <= 1; focus++) {
        fx_state(&s, &g_big, 800, 600);
        s.look.focus = focus;
        snprintf(fx_where, sizeof fx_where, "n=512 d=4096 h=8 800x600 focus=%d", focus);
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_cache *cache = view_cache_create();
        assert_non_null(cache);
        draw_list dl;
        draw_list_init(&dl);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        int images = 0;
        for (int i = 0; i < dl.count; i++) {
            const draw_cmd *c = &dl.cmds[i];
            if (c->kind != DC_IMAGE) continue;
            images++;
            EXPECT(c->img >= 0 && c->img < dl.image_count, "image index: expected 0..%d, got %d",
                   dl.image_count - 1, c->img);
            if (c->img < 0 || c->img >= dl.image_count) continue;
            const draw_image *im = &dl.images[c->img];
            int colorbar = im->h == 1 && im->w == 256;
            if (colorbar) continue; /* colorbars are a 256 x 1 ramp scaled up */
            EXPECT(im->w <= c->w && im->h <= c->h,
                   "image %d: expected at most its rect's %d x %d px, got %d x %d", c->img, c->w,
                   c->h, im->w, im->h);
            EXPECT(im->w >= 1 && im->h >= 1 && im->px != NULL, "image %d: expected pixels", c->img);
        }
        EXPECT(images >= 4, "expected images for heads and the equation, got %d", images);
        EXPECT(L.concat.map.w < m->cfg.d_model,
               "test premise: expected Concat narrower (%d px) than d_model %d", L.concat.map.w,
               m->cfg.d_model);
        check_reduced(&dl, L.concat.map, m->n, m->cfg.d_model, "Concat");
        check_reduced(&dl, L.w_o.map, m->cfg.d_model, m->cfg.d_model, "W^O");
        check_reduced(&dl, L.out.map, m->n, m->cfg.d_model, "MultiHead");
        for (int i = 0; i < L.shown_heads; i++) {
            char what[32];
            snprintf(what, sizeof what, "head %d", L.first_head + i + 1);
            check_reduced(&dl, L.heads[i].map, m->n, m->n, what);
        }
        if (focus) {
            static const char *nm[4] = {"Q_1", "K_1", "V_1", "head_1"};
            for (int i = 0; i < 4; i++) check_reduced(&dl, L.qkv[i].map, m->n, m->d_k, nm[i]);
        }
        draw_list_free(&dl);
        view_cache_destroy(cache);
    }
    fx_finish("reduced, not dropped");
}

/* ------------------------------------------------------------------------------ */
/* zoom 80 % ... 300 % at window sizes from 800x600 to 3840x2160, landscape and   */
/* portrait, in the window, in presentation mode and as a figure                  */

static const float ZOOMS[] = VIEW_ZOOM_STEPS;
#define NZOOMS ((int)(sizeof ZOOMS / sizeof ZOOMS[0]))

typedef struct {
    int side, per_page, room_bound;
    float data_zoom;
    int paged; /* the heads take more than one page */
} zoom_point;

/* The grid fills its area's height or width (up to the rounding of a side): the
 * heatmaps could not be larger there. */
static int room_bound(const view_layout *L) {
    if (L->shown_heads < 1) return 1;
    view_rect a = L->heads_area, m = L->heads[0].map;
    int cols = L->grid_cols > 0 ? L->grid_cols : 1, rows = L->grid_rows > 0 ? L->grid_rows : 1;
    int grid_right = m.x + cols * (m.w + L->gap) - L->gap;
    int ticks_bottom = L->attn_cbar.y + L->attn_cbar.h + L->pad / 2 + L->line;
    return a.x + a.w - grid_right <= cols + 1 ||
           a.y + a.h - ticks_bottom <= L->pad * 3 / 2 + rows + 1;
}

/* Heatmaps grow with the zoom where the window has room: from one step to the
 * next the side never shrinks unless the grid fills its area (the larger text
 * takes room it needs); even then it never falls below three quarters of its side
 * at the base zoom (past that, the data stays at the last zoom that had room). The
 * zoom the data is shown at never falls as the zoom rises, and never exceeds it,
 * nor the zoom of the presentation's text floor (floor_z; 0 elsewhere), which it
 * never falls under. */
static void check_growth(const zoom_point *p, int count, const float *zooms, int base,
                         float floor_z) {
    for (int i = 0; i < count; i++) {
        const float most = zooms[i] > floor_z ? zooms[i] : floor_z;
        EXPECT(p[i].data_zoom <= most + 1e-4f && p[i].data_zoom > 0,
               "zoom %.2f: expected the data shown at a zoom in (0, %.2f], got %.3f",
               (double)zooms[i], (double)most, (double)p[i].data_zoom);
        EXPECT(p[i].data_zoom >= floor_z - 1e-4f,
               "zoom %.2f: expected the data shown at least at the presentation's text floor's "
               "zoom %.3f, got %.3f",
               (double)zooms[i], (double)floor_z, (double)p[i].data_zoom);
        if (i > 0)
            EXPECT(p[i].data_zoom >= p[i - 1].data_zoom - 1e-4f,
                   "zoom %.2f -> %.2f: expected the data's zoom not to fall, got %.3f -> %.3f",
                   (double)zooms[i - 1], (double)zooms[i], (double)p[i - 1].data_zoom,
                   (double)p[i].data_zoom);
        if (i > 0 && !p[i].room_bound)
            EXPECT(p[i].side >= p[i - 1].side,
                   "zoom %.2f -> %.2f: expected the heatmaps not to shrink while their grid "
                   "(%d a page) leaves room, got side %d -> %d",
                   (double)zooms[i - 1], (double)zooms[i], p[i].per_page, p[i - 1].side, p[i].side);
        /* above the base zoom, heads that page never shrink: where a step's heads
           would be smaller, the data stays at the step before */
        if (i > base && p[i].paged)
            EXPECT(p[i].side >= p[i - 1].side,
                   "zoom %.2f -> %.2f: expected paged heads (%d a page) no smaller than at the "
                   "zoom below, got side %d -> %d",
                   (double)zooms[i - 1], (double)zooms[i], p[i].per_page, p[i - 1].side, p[i].side);
        if (i > base)
            EXPECT((long)p[i].side * 4 >= (long)p[base].side * 3,
                   "zoom %.2f: expected at least 3/4 of the side at the base zoom (%d), got %d",
                   (double)zooms[i], p[base].side, p[i].side);
    }
    /* where the window has room, the data does grow: 300 % shows more than 100 % */
    if (p[count - 1].data_zoom > zooms[base] + 0.2f && p[count - 1].per_page > 1)
        EXPECT(p[count - 1].side > p[base].side,
               "zoom 300%%: expected larger heatmaps than at the base zoom (%d), got %d",
               p[base].side, p[count - 1].side);
}

/* The data gets the room: when a page holds fewer heads than there are, one more
 * head of the same side would not fit a row in two thirds of the main area's width,
 * or the equation and the side panels beside the heads hold at most a third of it
 * (they give way before heads go to extra pages). Checked for grids of one row,
 * beside the equation. Returns the width they hold beside the heads (0: none). */
static int beside_width(const view_layout *L) {
    if (L->shown_heads < 1 || L->concat.map.w <= 0) return 0;
    const view_rect m = L->heads[0].map;
    const int heads_right = m.x + L->grid_cols * (m.w + L->gap) - L->gap;
    const view_rect r[] = {L->concat.map,  L->w_o.map,  L->out.map,    L->concat.cbar,
                           L->w_o.cbar,    L->out.cbar, L->redund_map, L->redund_title,
                           L->redund_note, L->cost};
    int left = 1 << 30, right = 0;
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        if (r[i].w <= 0 || r[i].x < heads_right) continue; /* not beside the heads */
        left = r[i].x < left ? r[i].x : left;
        right = r[i].x + r[i].w > right ? r[i].x + r[i].w : right;
    }
    return right > left ? right - left : 0;
}

static void check_room(const view_layout *L, const view_state *s) {
    const int h = s->layer->h;
    if (L->per_page >= h || L->grid_rows != 1 || L->shown_heads < 1) return;
    const int side = L->heads[0].map.w, k = L->per_page + 1;
    const long one_more = (long)k * side + (long)(k - 1) * L->gap + L->row_label_w;
    const int beside = beside_width(L);
    EXPECT(one_more > (long)L->main.w * 2 / 3 || (long)beside * 3 <= L->main.w,
           "%d of %d heads a page (side %d): expected %d heads of that side (%ld px) not to fit "
           "two thirds of the %d px width, or the equation and panels beside them to hold at "
           "most a third, got %d px",
           L->per_page, h, side, k, one_more, L->main.w, beside);
}

/* The narrowest the equation can be in a main area h px tall: its matrices as wide
 * as their shape labels, no colorbars, its text at the smallest of the data's, the
 * controls' and the base zoom's sizes, in one column, wrapped (MultiHead under W^O)
 * or one row, whichever is narrowest and fits the height (Concat as tall as W^O). */
static int eq_min_width(const view_layout *L, const view_state *s, int h) {
    const float k =
        (s->ui_scale > 0 ? s->ui_scale : 1.0f) * (s->zoom_base > 0 ? s->zoom_base : 1.0f);
    int font = L->font, small = L->font_small, pad = L->pad;
    if (L->ui_font < font) font = L->ui_font, small = L->ui_small, pad = L->ui_pad;
    if ((int)lroundf(16.0f * k) < font)
        font = (int)lroundf(16.0f * k), small = (int)lroundf(14.0f * k),
        pad = (int)lroundf(8.0f * k) < 2 ? 2 : (int)lroundf(8.0f * k);
    const int title = (font * 20 + 8) / 16, gap = (pad * 3 + 1) / 2, line = fx_line_h(font);
    char dd[48], nd[48], hh[16];
    view_shape_label(dd, sizeof dd, s->layer->d_model, s->layer->d_model);
    view_shape_label(nd, sizeof nd, s->layer->n, s->layer->d_model);
    snprintf(hh, sizeof hh, "%d", s->layer->h);
    const int ms = (fx_text_w(dd, small) > fx_text_w(nd, small) ? fx_text_w(dd, small)
                                                                : fx_text_w(nd, small)) +
                   2;
    const int band_w = fx_text_w(hh, small) + pad / 2 + 2, band_t = fx_line_h(small) + 2;
    const int sym_w = fx_text_w("=", title) + 2 * gap + band_w, sym_h = fx_line_h(title);
    const int top = line + pad + band_t, foot = pad / 2 + line + pad;
    if (top + 3 * ms + 3 * foot + 2 * sym_h <= h) return band_w + ms;
    if (top + 2 * ms + 2 * foot + gap <= h) return 2 * ms + sym_w;
    return 3 * ms + 2 * sym_w;
}

/* The equation and the side panels give way before heads go to extra pages: above
 * the base zoom, where the heads page beside the equation, one more column of heads
 * of the same side would not fit even if the equation took only its narrowest form
 * (eq_min_width) and the side panels none, within 1/16 of the width (the split moves
 * by 5 % of it, the columns round).
 * Returns 1 when it checked. */
static int check_gave_way(const view_layout *L, const view_state *s) {
    float base = s->zoom_base > 0 ? s->zoom_base : 1.0f;
    if (s->look.present) /* presenting, the base is raised to the text floor's zoom too */
        base = fmaxf(base, (float)view_text_floor(s->width, s->height) / VIEW_SMALLEST_TEXT);
    if (s->figure || L->data_zoom <= base + 1e-4f || heads_pages(L) <= 1 || L->shown_heads < 1 ||
        L->concat.map.w <= 0)
        return 0;
    const view_rect m = L->heads[0].map;
    const int cols = L->grid_cols > 0 ? L->grid_cols : 1;
    const int heads_right = m.x + cols * (m.w + L->gap) - L->gap;
    if (L->concat.map.x < heads_right) return 0; /* the equation under the heads */
    const int eq_min = eq_min_width(L, s, L->main.h);
    const long need = L->row_label_w + (long)(cols + 1) * m.w + (long)cols * L->gap;
    const long room = L->main.w - 2L * L->gap - eq_min;
    EXPECT(need > room - L->main.w / 16,
           "%d of %d heads a page (side %d, %d columns) at data zoom %.2f: expected one more "
           "column (%ld px) not to fit the %ld px the heads could have beside the narrowest "
           "equation (%d px), got the equation and panels holding %d px",
           L->per_page, s->layer->h, m.w, cols, (double)L->data_zoom, need, room, eq_min,
           L->main.x + L->main.w - heads_right);
    return 1;
}

#define MODE_NAME(m)                                                                               \
    ((m) == 0 ? "window" : (m) == 1 ? "present" : (m) == 2 ? "figure" : "window, base 200%")
/* mode 3: a base zoom of 200 % whatever the size, as a window on a 4K screen has
   for a moment before it is told its size (the base then follows the window) */

static void test_zoom_sweep(void **state) {
    (void)state;
    fx_reset();
    static const model_case models[] = {
        {7, 64, 4, MHA_MASK_NONE},    {12, 64, 16, MHA_MASK_NONE},  {59, 64, 4, MHA_MASK_CAUSAL},
        {1, 64, 1, MHA_MASK_NONE},    {12, 192, 24, MHA_MASK_NONE}, {100, 64, 8, MHA_MASK_NONE},
        {512, 256, 1, MHA_MASK_NONE}, {40, 64, 64, MHA_MASK_NONE},
    };
    static const struct {
        int w, h;
    } sizes[] = {{800, 600}, {1024, 768}, {1280, 720},  {1600, 900},  {1920, 1080}, {3840, 2160},
                 {600, 800}, {768, 1024}, {1080, 1920}, {2160, 3840}, {1024, 576}};
    static view_layout L;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    test_sample sample = test_sample_begin("zoom sweep"); /* a case: every zoom of a mode */
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        fx_model fm;
        fx_model_make(&fm, models[mi].n, models[mi].d, models[mi].h, models[mi].mask);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int mode = 0; mode < 4; mode++) { /* window, presentation, figure, and the
                                                       window of a display that starts at 200 % */
                if (!test_sample_next(&sample)) continue;
                zoom_point pts[NZOOMS];
                int base = 0;
                for (int zi = 0; zi < NZOOMS; zi++) {
                    view_state s;
                    fx_state(&s, &fm, sizes[si].w, sizes[si].h);
                    s.look.zoom = ZOOMS[zi];
                    s.zoom_base = mode == 3 ? 2.0f : view_zoom_for_size(s.width, s.height);
                    s.lesson = (int)si % 2;           /* the lesson's panels, on by default */
                    static float divergence[64 * 64]; /* all heads alike: zeros */
                    s.head_divergence = divergence;
                    s.look.present = mode == 1;
                    s.figure = mode == 2;
                    if (fabsf(ZOOMS[zi] - s.zoom_base) < 1e-4f) base = zi;
                    snprintf(fx_where, sizeof fx_where, "n=%d d=%d h=%d %dx%d zoom=%.2f %s",
                             models[mi].n, models[mi].d, models[mi].h, sizes[si].w, sizes[si].h,
                             (double)ZOOMS[zi], MODE_NAME(mode));
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    check_geometry(&L, &s);
                    check_labels(&L, &s);
                    check_paging(&L, &s);
                    check_render_text(&L, &s, cache, &dl);
                    /* up to 150 % (Ctrl+= three times) in windows from 1024 wide, for
                       texts of a sentence; past that (and for longer texts, whose labels
                       thin out) the equation's own text can still hold the room */
                    if (ZOOMS[zi] <= 1.5f + 1e-4f && s.width >= 1024 && models[mi].n <= 12)
                        check_room(&L, &s);
                    if (mode != 1 && mode != 2 && L.pages > 1) { /* the last page too */
                        s.look.page = L.pages - 1;
                        view_layout_compute(&L, &s, fx_measure, NULL);
                        check_geometry(&L, &s);
                        check_paging(&L, &s);
                        s.look.page = 0;
                        view_layout_compute(&L, &s, fx_measure, NULL);
                    }
                    /* from 1024x768 (and 768x1024) up, in the window and presenting,
                       for texts up to a paragraph (longer texts thin their labels,
                       whose choice can hold a head back a page) */
                    if ((mode == 0 || mode == 1) && s.width * s.height >= 1024 * 768 &&
                        s.width >= 768 && s.height >= 768 && models[mi].n <= 59)
                        check_gave_way(&L, &s);
                    pts[zi] = (zoom_point){L.heads[0].map.w, L.per_page, room_bound(&L),
                                           L.data_zoom, heads_pages(&L) > 1};
                }
                snprintf(fx_where, sizeof fx_where, "n=%d d=%d h=%d %dx%d %s, zoom 80..300%%",
                         models[mi].n, models[mi].d, models[mi].h, sizes[si].w, sizes[si].h,
                         mode == 0   ? "window"
                         : mode == 1 ? "present"
                                     : "figure");
                /* presenting, the data's text keeps the text floor (README, "Text floors
                   and room"): the zoom that sets the smallest text at it */
                const float fz =
                    (float)view_text_floor(sizes[si].w, sizes[si].h) / (float)VIEW_SMALLEST_TEXT;
                check_growth(pts, NZOOMS, ZOOMS, base, mode == 1 ? fz : 0.0f);
            }
        fx_model_free(&fm);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("zoom sweep");
}

/* The focus view (keys 1..9, then , and .) at every zoom step 80..300 % on windows
 * from 1024x768 to 3840x2160, landscape and portrait, in the window and in
 * presentation mode: every rectangle inside the window and apart from the others
 * (the Q_i, K_i, V_i, head_i and equation colorbars and their numbers included),
 * and the text as drawn inside the window, over no heatmap and no other text. */
static void test_focus_zoom_sweep(void **state) {
    (void)state;
    fx_reset();
    static const model_case models[] = {
        {7, 64, 4, MHA_MASK_NONE},
        {12, 192, 24, MHA_MASK_NONE},
        {100, 64, 8, MHA_MASK_CAUSAL},
    };
    static const struct {
        int w, h;
    } sizes[] = {{1024, 768}, {1280, 720},  {1600, 900},  {1920, 1080}, {3840, 2160},
                 {768, 1024}, {1080, 1920}, {2160, 3840}, {1024, 576}};
    static view_layout L;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    test_sample sample = test_sample_begin("focus zoom sweep");
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        fx_model fm;
        fx_model_make(&fm, models[mi].n, models[mi].d, models[mi].h, models[mi].mask);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int mode = 0; mode < 2; mode++)
                for (int zi = 0; zi < NZOOMS; zi++) {
                    if (!test_sample_next(&sample)) continue;
                    view_state s;
                    fx_state(&s, &fm, sizes[si].w, sizes[si].h);
                    s.look.zoom = ZOOMS[zi];
                    s.zoom_base = view_zoom_for_size(s.width, s.height);
                    s.lesson = 1;
                    static float divergence[64 * 64];
                    s.head_divergence = divergence;
                    s.look.present = mode == 1;
                    s.look.focus = zi % 2 ? models[mi].h : 1;
                    snprintf(fx_where, sizeof fx_where,
                             "n=%d d=%d h=%d %dx%d zoom=%.2f focus=%d %s", models[mi].n,
                             models[mi].d, models[mi].h, sizes[si].w, sizes[si].h,
                             (double)ZOOMS[zi], s.look.focus, MODE_NAME(mode));
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    EXPECT_INT("focus: L.focus", s.look.focus, L.focus);
                    check_geometry(&L, &s);
                    check_render_text(&L, &s, cache, &dl);
                }
        fx_model_free(&fm);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("focus zoom sweep");
}

/* The base zoom follows the window: 3840x2160 starts at 200 % and has every head
 * on one page there; 300 % grows them; 100 % has smaller text and heatmaps that
 * fill the room (so not smaller than at 200 %). */
static void test_zoom_base(void **state) {
    (void)state;
    fx_reset();
    static const struct {
        int w, h;
        float z;
    } sizes[] = {{800, 600, 1.0f},   {1600, 900, 1.0f},   {1920, 1080, 1.0f},
                 {1080, 1920, 1.0f}, {2560, 1440, 1.25f}, {3200, 1800, 1.5f},
                 {3840, 2160, 2.0f}, {5760, 3240, 3.0f},  {8192, 8192, 3.0f}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(fx_where, sizeof fx_where, "view_zoom_for_size(%d, %d)", sizes[i].w, sizes[i].h);
        float z = view_zoom_for_size(sizes[i].w, sizes[i].h);
        EXPECT(fabsf(z - sizes[i].z) < 1e-4f, "expected %.2f, got %.2f", (double)sizes[i].z,
               (double)z);
    }
    fx_model fm;
    fx_model_make(&fm, 7, 64, 4, MHA_MASK_NONE);
    static view_layout a, b;
    view_state s;
    fx_state(&s, &fm, 3840, 2160);
    snprintf(fx_where, sizeof fx_where, "n=7 h=4 3840x2160 base 200 %%");
    s.zoom_base = s.look.zoom = view_zoom_for_size(3840, 2160);
    view_layout_compute(&a, &s, fx_measure, NULL);
    EXPECT_INT("at the base zoom every head on one page", 4, a.per_page);
    EXPECT_INT("font at 200 %", 32, a.font);
    s.look.zoom = 3.0f;
    view_layout_compute(&b, &s, fx_measure, NULL);
    EXPECT(b.heads[0].map.w > a.heads[0].map.w,
           "300 %% on a 200 %% window: expected larger heads than %d, got %d", a.heads[0].map.w,
           b.heads[0].map.w);
    s.look.zoom = 1.0f;
    view_layout_compute(&b, &s, fx_measure, NULL);
    EXPECT_INT("100 %: every head on one page", 4, b.per_page);
    EXPECT(b.heads[0].map.w >= a.heads[0].map.w,
           "100 %% on a 200 %% window: expected heads filling the room, at least %d, got %d",
           a.heads[0].map.w, b.heads[0].map.w);
    fx_model_free(&fm);
    fx_finish("zoom base");
}

/* A single panel is cropped to what it draws: view_figure_bounds holds every
 * heatmap and text, and after view_figure_crop the canvas is that box plus the
 * margin, with the content moved to it. */
static void test_figure_crop(void **state) {
    (void)state;
    fx_reset();
    fx_model fm;
    fx_model_make(&fm, 12, 64, 4, MHA_MASK_NONE);
    for (int panel = 0; panel < 2; panel++) {
        view_state s;
        fx_state(&s, &fm, 1600, 900);
        s.figure = 1;
        s.panel = panel ? VIEW_PANEL_EQUATION : VIEW_PANEL_HEAD;
        s.panel_head = 2;
        snprintf(fx_where, sizeof fx_where, "crop %s", panel ? "equation" : "head:2");
        static view_layout L;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_cache *cache = view_cache_create();
        draw_list dl;
        draw_list_init(&dl);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        view_rect b = view_figure_bounds(&dl, fx_measure, NULL);
        /* independently: the union of every image and text box */
        int x0 = 1 << 30, y0 = 1 << 30, x1 = 0, y1 = 0;
        for (int i = 0; i < dl.count; i++) {
            const draw_cmd *c = &dl.cmds[i];
            view_rect r = {c->x, c->y, c->w, c->h};
            if (c->kind == DC_TEXT) {
                int w = fx_text_w(draw_cmd_text(&dl, c), c->size), h = fx_line_h(c->size);
                r = c->rot ? (view_rect){c->x, c->y - w, h, w} : (view_rect){c->x, c->y, w, h};
            } else if (c->kind != DC_IMAGE) {
                continue;
            }
            if (r.x < x0) x0 = r.x;
            if (r.y < y0) y0 = r.y;
            if (r.x + r.w > x1) x1 = r.x + r.w;
            if (r.y + r.h > y1) y1 = r.y + r.h;
        }
        EXPECT(b.x <= x0 && b.y <= y0 && b.x + b.w >= x1 && b.y + b.h >= y1,
               "bounds " FX_RFMT ": expected to hold images and text (%d, %d)-(%d, %d)", FX_R(b),
               x0, y0, x1, y1);
        EXPECT(b.w < 1600 * 95 / 100 || b.h < 900 * 95 / 100,
               "bounds " FX_RFMT ": expected smaller than the 1600x900 canvas", FX_R(b));
        const view_rect first = panel ? L.concat.map : L.heads[0].map;
        view_figure_crop(&dl, b, 10);
        EXPECT(dl.width == b.w + 20 && dl.height == b.h + 20,
               "cropped canvas: expected %dx%d, got %dx%d", b.w + 20, b.h + 20, dl.width,
               dl.height);
        int moved = 0;
        for (int i = 0; i < dl.count; i++)
            if (dl.cmds[i].kind == DC_IMAGE && dl.cmds[i].w == first.w && dl.cmds[i].h == first.h) {
                moved = dl.cmds[i].x == first.x - b.x + 10 && dl.cmds[i].y == first.y - b.y + 10;
                break;
            }
        EXPECT(moved, "cropped: expected the first heatmap moved by (%d, %d)", 10 - b.x, 10 - b.y);
        draw_list_free(&dl);
        view_cache_destroy(cache);
    }
    fx_model_free(&fm);
    fx_finish("figure crop");
}

/* ------------------------------------------------------------------------------ */
/* compare: both panes laid out alike                                             */

/* The equation's share of its pane: across the pane from the left of Concat to the
 * right of its maps over the pane's width, or (heads above it) down from the top of
 * Concat to the foot of MultiHead over the pane's height. */
static double eq_share(const view_layout *L, view_rect pane, int stacked) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    int lo = 1 << 30, hi = 0;
    for (int i = 0; i < 3; i++) {
        const int a = stacked ? m[i]->map.y : m[i]->map.x;
        const int b = a + (stacked ? m[i]->map.h : m[i]->map.w);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    const int extent = stacked ? pane.h : pane.w;
    return extent > 0 && hi > lo ? (double)(hi - lo) / extent : 0.0;
}

/* The compare view as drawn: every text inside the window, over no heatmap and over
 * no other text (the fake measurer's boxes), both panes and the banner. */
static void check_compare_text(const view_layout *L, const view_state *s, view_cache *cache,
                               draw_list *dl) {
    view_render(dl, cache, L, s, fx_measure, NULL);
    static tbox tb[8192];
    static view_rect img[1024];
    int nt = 0, ni = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && ni < 1024 && !(c->h <= 24 && c->w > c->h * 4))
            img[ni++] = (view_rect){c->x, c->y, c->w, c->h}; /* colorbars: numbers sit under */
        if (c->kind == DC_TEXT && nt < 8192) {
            const char *t = draw_cmd_text(dl, c);
            int w = fx_text_w(t, c->size), lh = fx_line_h(c->size);
            tb[nt].text = t;
            tb[nt++].r =
                c->rot ? (view_rect){c->x, c->y - w, lh, w} : (view_rect){c->x, c->y, w, lh};
        }
    }
    for (int i = 0; i < nt; i++) {
        view_rect r = tb[i].r;
        EXPECT(r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height,
               "text \"%.40s\" " FX_RFMT ": expected inside the %dx%d window", tb[i].text, FX_R(r),
               s->width, s->height);
        for (int k = 0; k < ni; k++)
            EXPECT(!fx_rect_overlap(r, img[k]),
                   "text \"%.40s\" " FX_RFMT ": expected not over the image " FX_RFMT, tb[i].text,
                   FX_R(r), FX_R(img[k]));
        for (int k = i + 1; k < nt; k++)
            EXPECT(!fx_rect_overlap(r, tb[k].r),
                   "expected no overlap, got text \"%.40s\" " FX_RFMT
                   " over text \"%.40s\" " FX_RFMT,
                   tb[i].text, FX_R(r), tb[k].text, FX_R(tb[k].r));
    }
    (void)L;
}

/* h = 4 pinned beside h = 32 live (and the reverse), in the window and as a figure,
 * at sizes 1024x768 .. 3840x2160 (landscape and portrait) and zooms 100 .. 200 %:
 * the two panes take the same split (heads beside or above the equation, the same
 * share, the captions in the same place), so the equation's share of each pane's
 * width (or height, heads above) differs by at most 0.08; both panes keep every
 * rectangle inside them, with no overlap. */
static void test_compare_alike(void **state) {
    (void)state;
    fx_reset();
    static const struct {
        int w, h;
    } sizes[] = {{1024, 768},  {1280, 720},  {1600, 900}, {1920, 1080},
                 {2560, 1440}, {3840, 2160}, {768, 1024}, {1080, 1920}};
    static const float *const zooms = ZOOMS;        /* 80 .. 300 % */
    static const int hs[2][2] = {{4, 32}, {32, 4}}; /* pinned, live */
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L, PL;
    int unlike = 0; /* cases where the panes keep different splits */
    for (int order = 0; order < 2; order++) {
        fx_model pm, lm;
        fx_model_make(&pm, 7, 64, hs[order][0], MHA_MASK_NONE);
        fx_model_make(&lm, 7, 64, hs[order][1], MHA_MASK_NONE);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int zi = 0; zi < NZOOMS; zi++)
                for (int figure = 0; figure < 2; figure++) {
                    view_state s, p;
                    fx_state(&s, &lm, sizes[si].w, sizes[si].h);
                    fx_state(&p, &pm, sizes[si].w, sizes[si].h);
                    s.look.zoom = p.look.zoom = zooms[zi];
                    s.zoom_base = p.zoom_base = view_zoom_for_size(s.width, s.height);
                    s.figure = p.figure = figure;
                    static const char *what[1][2] = {{"h = 4", "h = 32"}};
                    s.compare_count = 1;
                    s.compare_what[0][0] = what[0][order];
                    s.compare_what[0][1] = what[0][1 - order];
                    s.pinned = &p;
                    s.pinned_layout = &PL;
                    snprintf(fx_where, sizeof fx_where,
                             "compare h=%d pinned, h=%d live %dx%d "
                             "zoom=%.2f %s",
                             hs[order][0], hs[order][1], sizes[si].w, sizes[si].h,
                             (double)zooms[zi], figure ? "figure" : "window");
                    memset(&PL, 0, sizeof PL);
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    EXPECT(L.compare && PL.shown_heads > 0 && L.shown_heads > 0,
                           "expected both panes laid out, got compare %d, heads %d and %d",
                           L.compare, PL.shown_heads, L.shown_heads);
                    /* a split neither pane can take from the other (a 1024x768 pane at
                       150 % or more, both ways round), or that would show the live data
                       at a smaller zoom, leaves each its own: counted, at most 4 cases */
                    const int same = PL.split_stacked == L.split_stacked &&
                                     PL.split_frac == L.split_frac && PL.split_bare == L.split_bare;
                    if (!same && unlike++ < 4)
                        printf("  compare: %s: pinned stacked %d share %d%%, live %d %d%%\n",
                               fx_where, PL.split_stacked, PL.split_frac, L.split_stacked,
                               L.split_frac);
                    const view_rect pp = {0, 0, L.compare_pane[0].w, L.compare_pane[0].h};
                    const double a = eq_share(&PL, pp, L.split_stacked),
                                 b = eq_share(&L, L.compare_pane[1], L.split_stacked);
                    /* (where both show the data at one zoom: a pane whose data cannot
                       grow stays at a smaller zoom, its text smaller) */
                    /* nor where the pinned heads reach past where the live equation
                       starts (the equation gives way to the heads), nor at 300 % (a
                       1600x900 figure's pane: the text of each takes its own room) */
                    const view_rect ph = PL.heads[0].map;
                    int heads_end = L.split_stacked ? ph.y + PL.grid_rows * (ph.h + PL.gap)
                                                    : ph.x + PL.grid_cols * (ph.w + PL.gap);
                    if (PL.page_note.w > 0 && !L.split_stacked) /* the page note spans it */
                        heads_end = PL.page_note.x + PL.page_note.w;
                    const int live_eq = L.split_stacked ? L.eq_area.y - L.compare_pane[1].y
                                                        : L.eq_area.x - L.compare_pane[1].x;
                    EXPECT(!same || zooms[zi] > 2.5f || fabs(a - b) <= 0.08 ||
                               fabsf(PL.data_zoom - L.data_zoom) > 1e-3f || heads_end > live_eq,
                           "expected the equation's share of each pane's width within 0.08, "
                           "got pinned %.3f, live %.3f (arrange %d/%d eq " FX_RFMT " / " FX_RFMT
                           ")",
                           a, b, PL.eq_arrange, L.eq_arrange, FX_R(PL.eq_area), FX_R(L.eq_area));
                    /* the live pane in the window's coordinates; the pinned one in its own */
                    view_state ls = s, ps = p;
                    ls.pinned = NULL;
                    ps.width = L.compare_pane[0].w, ps.height = L.compare_pane[0].h;
                    check_geometry(&L, &ls);
                    check_geometry(&PL, &ps);
                    /* the text both panes draw: inside the window, over no heatmap and
                       no other text */
                    check_compare_text(&L, &s, cache, &dl);
                }
        fx_model_free(&pm);
        fx_model_free(&lm);
    }
    snprintf(fx_where, sizeof fx_where, "compare, 2 x 8 sizes x %d zooms x 2", NZOOMS);
    EXPECT(unlike <= 4, "expected at most 4 of %d cases with the panes' splits unlike, got %d",
           2 * 8 * NZOOMS * 2, unlike);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("compare alike");
}

/* ------------------------------------------------------------------------------ */
/* tooltips leave the head titles visible                                         */

/* The tooltip's box: the last fill in the tooltip's colour (overlays come last). */
static int tooltip_box(const draw_list *dl, rgba bg, view_rect *out) {
    for (int i = dl->count - 1; i >= 0; i--) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_FILL && c->color.r == bg.r && c->color.g == bg.g && c->color.b == bg.b &&
            c->color.a == bg.a) {
            *out = (view_rect){c->x, c->y, c->w, c->h};
            return 1;
        }
    }
    return 0;
}

/* In presentation mode (and in the window), the pointer over any cell of any head
 * shown: the tooltip is drawn, inside the window, and covers no head's title. At
 * 1024x768, 1600x900 and 1920x1080, zooms 100 and 150 %, h = 4 and 8. */
static void test_tooltip_clear_of_titles(void **state) {
    (void)state;
    fx_reset();
    static const struct { int w, h; } sizes[] = {{1024, 768}, {1600, 900}, {1920, 1080}};
    static const float zooms[] = {1.0f, 1.5f};
    static const int heads[] = {4, 8};
    static view_layout L;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    const rgba bg = view_theme_get(0).tooltip_bg;
    for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++) {
        fx_model fm;
        fx_model_make(&fm, 7, 64, heads[hi], MHA_MASK_NONE);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t zi = 0; zi < sizeof zooms / sizeof zooms[0]; zi++)
                for (int present = 1; present >= 0; present--) {
                    view_state s;
                    fx_state(&s, &fm, sizes[si].w, sizes[si].h);
                    s.look.zoom = zooms[zi];
                    s.zoom_base = view_zoom_for_size(s.width, s.height);
                    s.look.present = present;
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    for (int i = 0; i < L.shown_heads; i++)
                        for (int r = 0; r < 7; r++)
                            for (int col = 0; col < 7; col++) {
                                const view_rect m = L.heads[i].map;
                                s.hover_x = m.x + (int)((2L * col + 1) * m.w / 14);
                                s.hover_y = m.y + (int)((2L * r + 1) * m.h / 14);
                                snprintf(fx_where, sizeof fx_where,
                                         "h=%d %dx%d zoom=%.2f %s, head %d cell (%d, %d)",
                                         heads[hi], sizes[si].w, sizes[si].h, (double)zooms[zi],
                                         present ? "present" : "window", L.first_head + i + 1, r,
                                         col);
                                view_render(&dl, cache, &L, &s, fx_measure, NULL);
                                view_rect t;
                                if (!tooltip_box(&dl, bg, &t)) {
                                    EXPECT(0, "expected a tooltip, got none");
                                    continue;
                                }
                                EXPECT(t.x >= 0 && t.y >= 0 && t.x + t.w <= s.width &&
                                           t.y + t.h <= s.height,
                                       "tooltip " FX_RFMT ": expected inside the window", FX_R(t));
                                for (int k = 0; k < L.shown_heads; k++)
                                    EXPECT(!fx_rect_overlap(t, L.heads[k].title),
                                           "tooltip " FX_RFMT ": expected clear of head %d's "
                                           "title " FX_RFMT,
                                           FX_R(t), L.first_head + k + 1, FX_R(L.heads[k].title));
                            }
                }
        fx_model_free(&fm);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("tooltip clear of titles");
}

/* ------------------------------------------------------------------------------ */
/* the checkers themselves: each one catches a fault planted in a sound layout    */

static void test_checkers_catch_planted_faults(void **state) {
    (void)state;
    fx_reset();
    fx_model fm;
    fx_model_make(&fm, 12, 64, 4, MHA_MASK_NONE);
    view_state s;
    fx_state(&s, &fm, 1920, 1080);
    static view_layout good, L;
    snprintf(fx_where, sizeof fx_where, "planted faults, n=12 d=64 h=4 1920x1080");
    view_layout_compute(&good, &s, fx_measure, NULL);
    /* premise: labels are shown (so the label checks have something to check) */
    EXPECT(good.show_row_labels && good.shown_heads == 4,
           "premise: expected labels and 4 heads, got labels %d heads %d", good.show_row_labels,
           good.shown_heads);

#define PLANT(what, mutate, checker)                                                               \
    do {                                                                                           \
        L = good;                                                                                  \
        long b_ = fx_sandbox_begin();                                                              \
        checker;                                                                                   \
        long base_ = fx_sandbox_end(b_);                                                           \
        mutate;                                                                                    \
        b_ = fx_sandbox_begin();                                                                   \
        checker;                                                                                   \
        long caught_ = fx_sandbox_end(b_);                                                         \
        EXPECT(caught_ > base_,                                                                    \
               "planted fault \"%s\": expected more than the %ld failures of the sound layout, "   \
               "got %ld",                                                                          \
               what, base_, caught_);                                                              \
    } while (0)

    PLANT("head 2 on head 1", L.heads[1].map = L.heads[0].map, check_geometry(&L, &s));
    PLANT("map off the left edge", L.heads[0].map.x = -3, check_geometry(&L, &s));
    PLANT("map past the bottom", L.heads[3].map.y = s.height - 2, check_geometry(&L, &s));
    PLANT("button on button", L.buttons[BTN_SEED].r = L.buttons[BTN_TEXT].r,
          check_geometry(&L, &s));
    PLANT("button on a heatmap", L.buttons[BTN_HELP].r = L.heads[2].map, check_geometry(&L, &s));
    PLANT("formula strip over heads", L.formula.h += L.heads[0].title.y, check_geometry(&L, &s));
    PLANT("heatmap into the equation", L.concat.map = L.heads[1].map, check_geometry(&L, &s));
    PLANT("row label area too narrow", L.row_label_w = 3, check_labels(&L, &s));
    PLANT("column label area too short", L.col_label_h = 3, check_labels(&L, &s));
    PLANT("labels on tiny cells", (L.heads[0].map.h = 12, L.heads[0].map.w = 12),
          check_labels(&L, &s));
    PLANT("first_head not page * per_page", L.first_head = 1, check_paging(&L, &s));
    PLANT("too few heads on one page", L.shown_heads = 3, check_paging(&L, &s));
    PLANT("map below 1 px a cell", (L.heads[1].map.w = 11, L.heads[1].map.h = 11),
          check_paging(&L, &s));
    PLANT("more than VIEW_MAX_VISIBLE", L.shown_heads = VIEW_MAX_VISIBLE + 1, check_paging(&L, &s));
    PLANT("labels thinned though every token fits", L.label_stride = 2, check_labels(&L, &s));
    PLANT("band over the equation title", L.concat_band = L.eq_title, check_geometry(&L, &s));
    PLANT("one head a page beside a wide equation",
          (L.per_page = L.shown_heads = 1, L.pages = 4, L.grid_rows = L.grid_cols = 1,
           L.concat.map.x = L.heads[0].map.x + L.heads[0].map.w + L.gap,
           L.out.map.x = L.main.x + L.main.w - L.out.map.w),
          check_room(&L, &s));

    /* drawn words: a hint in a figure, a title in another size, the first token
       missing from the labels */
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_state fig = s;
    fig.figure = 1;
    static view_layout F;
    view_layout_compute(&F, &fig, fx_measure, NULL);
    view_render(&dl, cache, &F, &fig, fx_measure, NULL);
    long b0 = fx_sandbox_begin();
    check_drawn_words(&F, &fig, &dl);
    long sound = fx_sandbox_end(b0);
    EXPECT_INT("premise: the sound figure's words pass", 0, sound);
    draw_text(&dl, 5, 5,
              "heads 1\xE2\x80\x93"
              "4 (page 1/2, PgUp/PgDn)",
              12, (rgba){0, 0, 0, 255}, 0, 0);
    b0 = fx_sandbox_begin();
    check_drawn_words(&F, &fig, &dl);
    EXPECT(fx_sandbox_end(b0) > 0, "planted fault \"page note in a figure\": expected a failure");
    view_render(&dl, cache, &F, &fig, fx_measure, NULL);
    draw_text(&dl, F.heads[1].title.x, F.heads[1].title.y, "head 2", F.font - 3,
              (rgba){0, 0, 0, 255}, 1, 0);
    b0 = fx_sandbox_begin();
    check_drawn_words(&F, &fig, &dl);
    EXPECT(fx_sandbox_end(b0) > 0,
           "planted fault \"a title in a smaller size\": expected a failure");
    view_render(&dl, cache, &F, &fig, fx_measure, NULL);
    attn_layer other = *fig.layer;
    const char *renamed[VIEW_MAX_N];
    for (int i = 0; i < other.n; i++) renamed[i] = other.tokens[i];
    renamed[0] = "zebra";
    other.tokens = renamed;
    view_state first = fig;
    first.layer = &other; /* the labels drawn were of the real first token */
    b0 = fx_sandbox_begin();
    check_drawn_words(&F, &first, &dl);
    EXPECT(fx_sandbox_end(b0) > 0,
           "planted fault \"first token not labelled\": expected a failure");
    draw_list_free(&dl);
    view_cache_destroy(cache);

    /* growth over zooms: a side that shrinks while its grid has room */
    zoom_point pts[3] = {{200, 4, 0, 1.0f, 0}, {240, 2, 0, 1.25f, 1}, {260, 2, 0, 1.5f, 1}};
    const float zs[3] = {1.0f, 1.25f, 1.5f};
    b0 = fx_sandbox_begin();
    check_growth(pts, 3, zs, 0, 0.0f);
    EXPECT_INT("premise: a growing sequence passes", 0, fx_sandbox_end(b0));
    pts[2].side = 230;
    b0 = fx_sandbox_begin();
    check_growth(pts, 3, zs, 0, 0.0f);
    EXPECT(fx_sandbox_end(b0) > 0, "planted fault \"shrinks with room\": expected a failure");
    pts[2] = (zoom_point){140, 1, 1, 1.5f, 1}; /* room-bound, but below 3/4 of the base side */
    b0 = fx_sandbox_begin();
    check_growth(pts, 3, zs, 0, 0.0f);
    EXPECT(fx_sandbox_end(b0) > 0, "planted fault \"far below the base side\": expected a failure");
    pts[2] = (zoom_point){230, 3, 1, 1.5f, 1}; /* paged, room-bound, smaller than below */
    b0 = fx_sandbox_begin();
    check_growth(pts, 3, zs, 0, 0.0f);
    EXPECT(fx_sandbox_end(b0) > 0,
           "planted fault \"paged heads shrink as the zoom rises\": expected a failure");
    pts[2] = (zoom_point){260, 2, 0, 1.1f, 1}; /* the data's zoom falls */
    b0 = fx_sandbox_begin();
    check_growth(pts, 3, zs, 0, 0.0f);
    EXPECT(fx_sandbox_end(b0) > 0, "planted fault \"data zoom falls\": expected a failure");
    pts[2] = (zoom_point){260, 2, 0, 1.5f, 1}; /* presenting under its text floor's zoom */
    b0 = fx_sandbox_begin();
    check_growth(pts, 3, zs, 0, 1.2f);
    EXPECT(fx_sandbox_end(b0) > 0,
           "planted fault \"presented under the text floor\": expected a failure");
#undef PLANT
    fx_model_free(&fm);
    fx_finish("planted faults");
}

/* The head view (H, --panel lines[:K]): the same checks over sizes 1024x768 ..
 * 3840x2160, landscape and portrait, every zoom 80..300 %, the window, presentation
 * and figures, the grid, the focus view and the panels; and its own boxes: each
 * tile's inside the window, apart from the other tiles, titles and panels, its
 * label columns and the legend inside the heads' area. */
static void check_lines(const view_layout *L, const view_state *s) {
    static items it;
    collect(&it, L);
    EXPECT(L->lines_shown > 0, "head view: expected lines boxes, got %d", L->lines_shown);
    for (int i = 0; i < L->lines_shown; i++) {
        const view_lines_box *B = &L->lines[i];
        const view_rect b = B->box;
        EXPECT(b.w > 0 && b.h > 0 && b.x >= 0 && b.y >= 0 && b.x + b.w <= s->width &&
                   b.y + b.h <= s->height,
               "lines box %d " FX_RFMT ": expected inside the %dx%d window", i, FX_R(b), s->width,
               s->height);
        EXPECT(B->x0 <= B->x1 && B->qcol.x + B->qcol.w <= B->kcol.x + (B->kcol.w == 0),
               "lines box %d: the query column crosses the key column", i);
        EXPECT(B->thick >= 1, "lines box %d: thickness %d", i, B->thick);
        for (int j = i + 1; j < L->lines_shown; j++)
            EXPECT(!fx_rect_overlap(b, L->lines[j].box),
                   "lines box %d " FX_RFMT " over lines box %d " FX_RFMT, i, FX_R(b), j,
                   FX_R(L->lines[j].box));
        for (int k = 0; k < it.n; k++) {
            const int own_map =
                it.v[k].kind == K_MAP && fx_rect_overlap(it.v[k].r, L->heads[i].map);
            if (own_map || it.v[k].kind == K_FORMULA || it.v[k].kind == K_RUN) continue;
            EXPECT(!fx_rect_overlap(b, it.v[k].r), "lines box %d " FX_RFMT " over %s " FX_RFMT, i,
                   FX_R(b), it.v[k].name, FX_R(it.v[k].r));
        }
    }
    for (int l = 0; l < VIEW_LINES_LEGEND_LINES; l++) {
        const view_rect r = L->lines_legend[l];
        if (r.w <= 0) continue;
        EXPECT(r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height,
               "legend line %d " FX_RFMT ": expected inside the window", l, FX_R(r));
        for (int i = 0; i < L->lines_shown; i++)
            EXPECT(!fx_rect_overlap(r, L->lines[i].box), "legend line %d over lines box %d", l, i);
        for (int k = 0; k < it.n; k++)
            if (it.v[k].kind != K_CBAR && it.v[k].kind != K_TICKS)
                EXPECT(!fx_rect_overlap(r, it.v[k].r),
                       "legend line %d " FX_RFMT " over %s " FX_RFMT, l, FX_R(r), it.v[k].name,
                       FX_R(it.v[k].r));
    }
}

/* The head view's own text (labels in its tiles, the legend) as drawn: inside the
 * window, over no other text and no image (the focus view's matrices beside it are
 * the focus layout's, checked by the sweeps above). */
static void check_lines_text(const view_layout *L, const view_state *s, view_cache *cache,
                             draw_list *dl) {
    view_render(dl, cache, L, s, fx_measure, NULL);
    static tbox tb[8192];
    static int mine[8192];
    static view_rect img[512];
    int nt = 0, ni = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && ni < 512) img[ni++] = (view_rect){c->x, c->y, c->w, c->h};
        if (c->kind != DC_TEXT || nt >= 8192) continue;
        const char *t = draw_cmd_text(dl, c);
        const view_rect o = {c->x, c->y, 1, 1};
        int own = 0;
        for (int k = 0; k < L->lines_shown; k++) own |= fx_rect_overlap(o, L->lines[k].box);
        for (int k = 0; k < VIEW_LINES_LEGEND_LINES; k++)
            own |= fx_rect_overlap(o, L->lines_legend[k]);
        tb[nt].text = t;
        tb[nt].r = c->rot ? (view_rect){c->x, c->y - fx_text_w(t, c->size), fx_line_h(c->size),
                                        fx_text_w(t, c->size)}
                          : (view_rect){c->x, c->y, fx_text_w(t, c->size), fx_line_h(c->size)};
        mine[nt++] = own;
    }
    for (int i = 0; i < nt; i++) {
        if (!mine[i]) continue;
        const view_rect r = tb[i].r;
        EXPECT(r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height,
               "head view text \"%.40s\" " FX_RFMT ": expected inside the window", tb[i].text,
               FX_R(r));
        for (int k = 0; k < ni; k++)
            EXPECT(!fx_rect_overlap(r, img[k]),
                   "head view text \"%.40s\" " FX_RFMT " over the image " FX_RFMT, tb[i].text,
                   FX_R(r), FX_R(img[k]));
        for (int k = 0; k < nt; k++)
            EXPECT(k == i || !fx_rect_overlap(r, tb[k].r),
                   "head view text \"%.40s\" " FX_RFMT " over text \"%.40s\" " FX_RFMT, tb[i].text,
                   FX_R(r), tb[k].text, FX_R(tb[k].r));
    }
}

static void test_lines_sweep(void **state) {
    (void)state;
    fx_reset();
    static const model_case models[] = {
        {7, 64, 4, MHA_MASK_NONE},     {12, 64, 4, MHA_MASK_CAUSAL}, {40, 160, 5, MHA_MASK_NONE},
        {100, 64, 8, MHA_MASK_NONE},   {12, 64, 16, MHA_MASK_NONE},  {512, 64, 2, MHA_MASK_NONE},
        {150, 64, 1, MHA_MASK_CAUSAL}, {7, 96, 48, MHA_MASK_NONE},
    };
    static const struct {
        int w, h;
    } sizes[] = {{1024, 768}, {1600, 900}, {1920, 1080}, {3840, 2160}, {768, 1024}, {2160, 3840}};
    static view_layout L;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    test_sample sample = test_sample_begin("head view sweep");
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        fx_model fm;
        fx_model_make(&fm, models[mi].n, models[mi].d, models[mi].h, models[mi].mask);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int zi = 0; zi < NZOOMS; zi++)
                for (int mode = 0; mode < 5; mode++) { /* window, present, figure, focus,
                                                          --panel lines[:1] */
                    if (!test_sample_next(&sample)) continue;
                    view_state s;
                    fx_state(&s, &fm, sizes[si].w, sizes[si].h);
                    s.look.zoom = ZOOMS[zi];
                    s.zoom_base = view_zoom_for_size(s.width, s.height);
                    s.look.head_view = VIEW_HEAD_LINES;
                    s.look.present = mode == 1;
                    s.figure = mode == 2 || mode == 4;
                    s.look.focus = mode == 3 ? models[mi].h : 0;
                    if (mode == 4) s.panel = VIEW_PANEL_LINES, s.panel_head = zi % 2;
                    snprintf(fx_where, sizeof fx_where,
                             "head view n=%d d=%d h=%d %dx%d zoom=%.2f %s", models[mi].n,
                             models[mi].d, models[mi].h, sizes[si].w, sizes[si].h,
                             (double)ZOOMS[zi],
                             (const char *[]){"window", "present", "figure", "focus",
                                              "--panel lines"}[mode]);
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    check_lines(&L, &s);
                    check_lines_text(&L, &s, cache, &dl);
                    if (mode != 3) { /* the whole picture; the focus view's is not this test's */
                        check_geometry(&L, &s);
                        check_render_text(&L, &s, cache, &dl);
                    }
                }
        fx_model_free(&fm);
    }
    /* its checkers catch planted faults */
    fx_model fm;
    fx_model_make(&fm, 12, 64, 4, MHA_MASK_NONE);
    view_state s;
    fx_state(&s, &fm, 1920, 1080);
    s.look.head_view = VIEW_HEAD_LINES;
    static view_layout good;
    snprintf(fx_where, sizeof fx_where, "head view planted faults, n=12 h=4 1920x1080");
    view_layout_compute(&good, &s, fx_measure, NULL);
    EXPECT_INT("premise: four tiles", 4, good.lines_shown);
#define PLANT_LINES(what, mutate, checker)                                                         \
    do {                                                                                           \
        L = good;                                                                                  \
        long b_ = fx_sandbox_begin();                                                              \
        checker;                                                                                   \
        long base_ = fx_sandbox_end(b_);                                                           \
        mutate;                                                                                    \
        b_ = fx_sandbox_begin();                                                                   \
        checker;                                                                                   \
        long caught_ = fx_sandbox_end(b_);                                                         \
        EXPECT(caught_ > base_, "planted fault \"%s\": expected more than %ld failures, got %ld",  \
               what, base_, caught_);                                                              \
    } while (0)
    PLANT_LINES("a tile past the right edge", L.lines[1].box.x = s.width - 4, check_lines(&L, &s));
    PLANT_LINES("a tile over another", L.lines[3].box = L.lines[2].box, check_lines(&L, &s));
    PLANT_LINES("a tile over the equation", L.lines[1].box.w += L.concat.map.x,
                check_lines(&L, &s));
    PLANT_LINES("the legend over the equation", L.lines_legend[0] = L.concat.map,
                check_lines(&L, &s));
    PLANT_LINES("labels too large for their rows", L.lines[0].label_size *= 3,
                check_lines_text(&L, &s, cache, &dl));
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("head view sweep");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_sweep),
        cmocka_unit_test(test_rendered_text_sweep),
        cmocka_unit_test(test_paging_moves),
        cmocka_unit_test(test_reduced_not_dropped),
        cmocka_unit_test(test_zoom_sweep),
        cmocka_unit_test(test_focus_zoom_sweep),
        cmocka_unit_test(test_zoom_base),
        cmocka_unit_test(test_figure_crop),
        cmocka_unit_test(test_compare_alike),
        cmocka_unit_test(test_tooltip_clear_of_titles),
        cmocka_unit_test(test_checkers_catch_planted_faults),
        cmocka_unit_test(test_lines_sweep),
    };
    return cmocka_run_group_tests_name("layout", tests, group_setup, group_teardown);
}
