/* test_eq_labels.c: the equation strip's text (panels.c, heatmap.c, colorbar.c)
 * with the fake text measurer, no font, no window. Over n = 7, 14, 59 tokens,
 * h = 1 ... 32 heads, eight sizes from 1024 x 768 to 3840 x 2160 (landscape and
 * portrait), zooms 80-300 %, in the window and as a figure, plus training mode
 * (764 x 990 among its sizes), the focus view, the ablation's difference and
 * compare (both panes):
 * - each matrix drawn (Concat, W^O, MultiHead or its difference) has a label that
 *   carries its NAME ("Concat 59×64", "Concat"; never "59 × 64" alone), inside the
 *   equation's area and over no other matrix's label;
 * - the equation's title is drawn, inside its line, and names MultiHead's equation
 *   (or, in a narrow column, is the product "Concat W^O"; never "MultiHead" alone);
 * - a colorbar that shows a number shows its range: its minimum and its maximum,
 *   or a symmetric "±m", never the minimum alone.
 * The old code dropped the name first (Concat missing in 741 of 1,680 layouts
 * of this sweep's kind), had no title in 329 and showed "−1.54" alone. */
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

static view_layout L, PL;

#define W_O_NAME "W\xE1\xB4\xBC"
#define MINUS "\xE2\x88\x92"
#define PLUSMINUS "\xC2\xB1"

typedef struct {
    long squeezed, layouts, labels, nameless[3], missing[3], title_missing, cbar_numbers,
        cbar_min_only;
} tally;

/* The texts of size `size` whose top is at y and which overlap [x0, x1): count, the last in *out.
 */
static int text_at(const draw_list *dl, int x0, int x1, int y, int size, const char **out, int *x) {
    int count = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *d = &dl->cmds[i];
        if (d->kind != DC_TEXT || d->y != y || d->size != size) continue;
        const char *t = draw_cmd_text(dl, d);
        if (d->x >= x1 || d->x + fx_text_w(t, size) <= x0) continue;
        *out = t;
        *x = d->x;
        count++;
    }
    return count;
}

static view_rect shift(view_rect r, int dx, int dy) {
    return (view_rect){r.x + dx, r.y + dy, r.w, r.h};
}

/* (dx, dy): where P's pane is drawn (the pinned pane of compare is moved there) */
static void check_equation(const draw_list *dl, const view_layout *P, const view_state *s, tally *t,
                           int dx, int dy) {
    if (P->concat.map.w <= 0) return;
    /* the equation's own sizes when it gave way to the heads (eq_font > 0) */
    const int fsmall = P->eq_font > 0 ? P->eq_font_small : P->font_small;
    const int pad = P->eq_font > 0 ? P->eq_pad : P->pad;
    const int line = P->eq_font > 0 ? P->eq_line : P->line;
    /* the layout's promise: each map at least as wide as its shape label (the old
       code squeezed training mode's to 1 px at 764 x 990 and 250 %: 68 layouts) */
    char sh[64];
    view_shape_label(sh, sizeof sh, s->layer->n, s->layer->d_model);
    int need = fx_text_w(sh, fsmall);
    view_shape_label(sh, sizeof sh, s->layer->d_model, s->layer->d_model);
    if (fx_text_w(sh, fsmall) > need) need = fx_text_w(sh, fsmall);
    if (P->concat.map.w < need || P->w_o.map.w < need) {
        t->squeezed++;
        EXPECT(0, "equation squeezed: Concat %d px, W^O %d px wide, its labels need %d",
               P->concat.map.w, P->w_o.map.w, need);
        return;
    }
    t->layouts++;
    view_matrix_box m[3] = {P->concat, P->w_o, P->out};
    const view_matrix_box *b[3] = {&m[0], &m[1], &m[2]};
    for (int i = 0; i < 3; i++) {
        m[i].map = shift(m[i].map, dx, dy);
        m[i].shape = shift(m[i].shape, dx, dy);
        m[i].cbar = shift(m[i].cbar, dx, dy);
    }
    const int diff = s->look.diff && s->out_diff && s->layer->out_full;
    const char *names[3] = {"Concat", W_O_NAME, diff ? "\xCE\x94" : "MultiHead"};
    static const char *const what[3] = {"Concat", "W^O", "MultiHead"};
    view_rect lab[3];
    const view_rect a = shift(P->eq_area, dx, dy);
    for (int i = 0; i < 3; i++) {
        lab[i] = (view_rect){0, 0, 0, 0};
        const char *txt = NULL;
        int x = 0;
        const view_rect mr = b[i]->map;
        int count = text_at(dl, mr.x, mr.x + mr.w, b[i]->shape.y, fsmall, &txt, &x);
        EXPECT(count == 1, "%s: expected one label at " FX_RFMT ", got %d", what[i],
               FX_R(b[i]->shape), count);
        if (count != 1) {
            t->missing[i]++;
            continue;
        }
        t->labels++;
        lab[i] = (view_rect){x, b[i]->shape.y, fx_text_w(txt, fsmall), fx_line_h(fsmall)};
        const int named = strstr(txt, names[i]) != NULL;
        t->nameless[i] += !named;
        EXPECT(named, "%s's label \"%s\" (%d px wide, %d px of room) without its name", what[i],
               txt, lab[i].w, b[i]->shape.w);
        EXPECT(lab[i].x >= a.x && lab[i].x + lab[i].w <= a.x + a.w,
               "%s's label \"%s\" " FX_RFMT " outside the equation " FX_RFMT, what[i], txt,
               FX_R(lab[i]), FX_R(a));
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            EXPECT(!fx_rect_overlap(lab[i], lab[j]), "%s's label " FX_RFMT " over %s's " FX_RFMT,
                   what[i], FX_R(lab[i]), what[j], FX_R(lab[j]));
    /* the title: its runs (superscripts rise above the line) inside its line */
    char title[256] = "";
    int x0 = 1 << 30, x1 = -(1 << 30);
    view_rect tr = shift(P->eq_title, dx, dy);
    const int band_y = P->concat_band.y + dy;
    const int sup = line; /* a run may rise up to a line above, never more */
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *d = &dl->cmds[i];
        if (d->kind != DC_TEXT || d->y < tr.y - sup || d->y >= tr.y + tr.h || d->x < tr.x ||
            d->x >= tr.x + tr.w)
            continue;
        if (d->y + fx_line_h(d->size) > band_y + fx_line_h(d->size) / 2) continue;
        const char *txt = draw_cmd_text(dl, d);
        if (strlen(title) + strlen(txt) < sizeof title) strcat(title, txt);
        if (d->x < x0) x0 = d->x;
        if (d->x + fx_text_w(txt, d->size) > x1) x1 = d->x + fx_text_w(txt, d->size);
    }
    /* a title names MultiHead in an equation, or is the product "Concat W^O" itself in a
       narrow column: never "MultiHead" alone, which would name the Concat under it */
    const int has_title = (strstr(title, "MultiHead") != NULL && strcmp(title, "MultiHead") != 0) ||
                          strcmp(title, "Concat WO") == 0;
    t->title_missing += !has_title;
    EXPECT(has_title, "no title naming MultiHead's equation in " FX_RFMT " (got \"%s\")", FX_R(tr),
           title);
    if (title[0])
        EXPECT(x1 <= tr.x + tr.w, "title \"%s\" ends at %d, past its line " FX_RFMT, title, x1,
               FX_R(tr));
    /* the colorbars: a number shown means the range shown */
    for (int i = 0; i < 3; i++) {
        view_rect r = b[i]->cbar;
        if (r.w < 8 || r.h < 2) continue;
        int numbers = 0, minus = 0, plus = 0, pm = 0;
        for (int k = 0; k < dl->count; k++) {
            const draw_cmd *d = &dl->cmds[k];
            if (d->kind != DC_TEXT || d->y != r.y + r.h + pad / 2 || d->x < r.x - 1 ||
                d->x > r.x + r.w)
                continue;
            const char *txt = draw_cmd_text(dl, d);
            numbers++;
            minus += strncmp(txt, MINUS, 3) == 0;
            plus += txt[0] == '+';
            pm += strncmp(txt, PLUSMINUS, 2) == 0;
            EXPECT(d->x >= r.x && d->x + fx_text_w(txt, d->size) <= r.x + r.w,
                   "%s's colorbar number \"%s\" at x %d..%d outside its bar " FX_RFMT, what[i], txt,
                   d->x, d->x + fx_text_w(txt, d->size), FX_R(r));
        }
        if (!numbers) continue;
        t->cbar_numbers++;
        const int range = pm || (minus && plus);
        t->cbar_min_only += !range;
        EXPECT(range, "%s's colorbar (%d px): %d numbers, no range (min %d, max %d, \xC2\xB1 %d)",
               what[i], r.w, numbers, minus, plus, pm);
    }
}

static void render_check(draw_list *dl, view_cache *cache, view_state *s, tally *t) {
    view_layout_compute(&L, s, fx_measure, NULL);
    view_render(dl, cache, &L, s, fx_measure, NULL);
    check_equation(dl, &L, s, t, 0, 0);
    if (s->pinned && L.compare)
        check_equation(dl, &PL, s->pinned, t, L.compare_pane[0].x, L.compare_pane[0].y);
}

static void report(const char *what, const tally *t) {
    print_message("  %s: %ld equations (%ld squeezed), %ld labels; nameless Concat "
                  "%ld, W^O %ld, MultiHead %ld; "
                  "unlabelled %ld/%ld/%ld; no title %ld; colorbars with numbers %ld, min only "
                  "%ld\n",
                  what, t->layouts, t->squeezed, t->labels, t->nameless[0], t->nameless[1],
                  t->nameless[2], t->missing[0], t->missing[1], t->missing[2], t->title_missing,
                  t->cbar_numbers, t->cbar_min_only);
}

static const int SIZES[][2] = {{1024, 768}, {768, 1024}, {1280, 800},  {1366, 768},
                               {1600, 900}, {900, 1600}, {1920, 1080}, {3840, 2160}};
static const float ZOOMS[] = {0.8f, 1.0f, 1.25f, 1.5f, 2.0f, 2.5f, 3.0f};

/* s for fm in a w x h window at zoom, its base zoom that size's, drawn as a figure or not */
static void state_at(view_state *s, const fx_model *fm, int w, int h, float zoom, int figure) {
    fx_state(s, fm, w, h);
    s->zoom_base = view_zoom_for_size(s->width, s->height);
    s->look.zoom = zoom;
    s->figure = figure;
}
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
#define NZOOMS ((int)(sizeof ZOOMS / sizeof ZOOMS[0]))

static void test_sweep(void **state) {
    (void)state;
    fx_reset();
    static const int ns[] = {7, 14, 59}, hs[] = {1, 4, 8, 16, 32};
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    tally t = {0};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
            fx_model fm;
            fx_model_make(&fm, ns[ni], 64, hs[hi], MHA_MASK_NONE);
            for (int si = 0; si < NSIZES; si++)
                for (int zi = 0; zi < NZOOMS; zi++)
                    for (int figure = 0; figure <= 1; figure++) {
                        view_state s;
                        state_at(&s, &fm, SIZES[si][0], SIZES[si][1], ZOOMS[zi], figure);
                        snprintf(fx_where, sizeof fx_where, "n=%d h=%d %dx%d zoom=%.0f%% %s",
                                 ns[ni], hs[hi], SIZES[si][0], SIZES[si][1],
                                 (double)ZOOMS[zi] * 100, figure ? "figure" : "window");
                        render_check(&dl, cache, &s, &t);
                    }
            fx_model_free(&fm);
        }
    report("window and figure", &t);
    EXPECT(t.layouts >= 1500, "expected the equation drawn in most layouts, got %ld", t.layouts);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("equation labels");
}

/* The focus view, the ablation's difference (Δ) and a head switched off. */
static void test_focus_and_diff(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    tally t = {0};
    static const int hs[] = {2, 4, 8, 16};
    for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
        fx_model fm;
        fx_model_make(&fm, 14, 64, hs[hi], MHA_MASK_CAUSAL);
        for (int si = 0; si < NSIZES; si++)
            for (int zi = 0; zi < NZOOMS; zi++)
                for (int mode = 0; mode < 2; mode++) {
                    view_state s;
                    state_at(&s, &fm, SIZES[si][0], SIZES[si][1], ZOOMS[zi], 0);
                    static float diff[14 * 64];
                    if (mode == 0) {
                        s.look.focus = 1;
                    } else if (fm.layer.out_full) {
                        s.look.diff = 1;
                        s.out_diff = diff;
                    }
                    snprintf(fx_where, sizeof fx_where, "n=14 h=%d %dx%d zoom=%.0f%% %s", hs[hi],
                             SIZES[si][0], SIZES[si][1], (double)ZOOMS[zi] * 100,
                             mode == 0 ? "focus" : "difference");
                    render_check(&dl, cache, &s, &t);
                }
        fx_model_free(&fm);
    }
    report("focus and difference", &t);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("focus and difference");
}

/* Training mode: 12 tokens, d_model 32 (the pair task), h = 1 ... 8. */
static void test_training(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    tally t = {0};
    static const int sizes[][2] = {{764, 990},  {1024, 768},  {768, 1024}, {1280, 800},
                                   {1600, 900}, {1920, 1080}, {3840, 2160}};
    static float st[4] = {0, 100, 200, 300}, loss[4] = {3, 2, 1, 0.5f}, acc[4] = {0, .3f, .6f, 1};
    static const int hs[] = {1, 2, 4, 8};
    for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
        fx_model fm;
        fx_model_make(&fm, 12, 32, hs[hi], MHA_MASK_CAUSAL);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int zi = 0; zi < NZOOMS; zi++) {
                view_train tr;
                memset(&tr, 0, sizeof tr);
                tr.task = "pair";
                tr.what = "target at i is (token at 0, token at i-1)";
                tr.error = "";
                tr.running = 1;
                tr.step = 300;
                tr.steps_per_s = 228.0f;
                tr.layers = 1;
                tr.h = hs[hi];
                tr.runs = 1;
                tr.run[0] = (view_train_run){"pair", 4, st, loss, acc, 1};
                view_state s;
                state_at(&s, &fm, sizes[si][0], sizes[si][1], ZOOMS[zi], 0);
                s.train = &tr;
                snprintf(fx_where, sizeof fx_where, "training h=%d %dx%d zoom=%.0f%%", hs[hi],
                         sizes[si][0], sizes[si][1], (double)ZOOMS[zi] * 100);
                render_check(&dl, cache, &s, &t);
            }
        fx_model_free(&fm);
    }
    report("training", &t);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("training");
}

/* Compare: the pinned pane's equation and the live one's. */
static void test_compare(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    tally t = {0};
    static const struct {
        int hp, hl, n;
    } pairs[] = {{4, 32, 7}, {8, 2, 14}, {4, 16, 59}, {1, 8, 12}};
    for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
        fx_model live, pinned;
        fx_model_make(&live, pairs[pi].n, 64, pairs[pi].hl, MHA_MASK_NONE);
        fx_model_make(&pinned, pairs[pi].n, 64, pairs[pi].hp, MHA_MASK_NONE);
        for (int si = 0; si < NSIZES; si++)
            for (int zi = 0; zi < NZOOMS; zi++)
                for (int figure = 0; figure <= 1; figure++) {
                    view_state s, ps;
                    state_at(&s, &live, SIZES[si][0], SIZES[si][1], ZOOMS[zi], figure);
                    fx_state(&ps, &pinned, SIZES[si][0], SIZES[si][1]);
                    s.pinned = &ps;
                    s.pinned_layout = &PL;
                    snprintf(fx_where, sizeof fx_where,
                             "compare pinned h=%d live h=%d n=%d %dx%d zoom=%.0f%% %s",
                             pairs[pi].hp, pairs[pi].hl, pairs[pi].n, SIZES[si][0], SIZES[si][1],
                             (double)ZOOMS[zi] * 100, figure ? "figure" : "window");
                    render_check(&dl, cache, &s, &t);
                }
        fx_model_free(&live);
        fx_model_free(&pinned);
    }
    report("compare", &t);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("compare");
}

/* A head switched off: the note on its veiled tile inside the tile, and the note
 * under MultiHead ("1 head off: changes it by ...") inside the equation (the old
 * code drew both at full length: "off: its band of Concat is 0" ran 70 px into the
 * next head at h = 8, 1024 x 768). */
static void test_ablated(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    long veils = 0, notes = 0;
    static const int hs[] = {2, 4, 8, 16};
    for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
        fx_model fm;
        fx_model_make(&fm, 7, 64, hs[hi], MHA_MASK_NONE);
        fm.layer.off[0] |= 2u; /* head 2 */
        for (int si = 0; si < NSIZES; si++)
            for (int zi = 0; zi < NZOOMS; zi++)
                for (int figure = 0; figure <= 1; figure++) {
                    view_state s;
                    state_at(&s, &fm, SIZES[si][0], SIZES[si][1], ZOOMS[zi], figure);
                    snprintf(fx_where, sizeof fx_where, "head 2 off, h=%d %dx%d zoom=%.0f%% %s",
                             hs[hi], SIZES[si][0], SIZES[si][1], (double)ZOOMS[zi] * 100,
                             figure ? "figure" : "window");
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    view_render(&dl, cache, &L, &s, fx_measure, NULL);
                    for (int i = 0; i < dl.count; i++) {
                        const draw_cmd *d = &dl.cmds[i];
                        if (d->kind != DC_TEXT) continue;
                        const char *t = draw_cmd_text(&dl, d);
                        const int w = fx_text_w(t, d->size);
                        if (!strcmp(t, "off: its band of Concat is 0") ||
                            !strcmp(t, "Concat band = 0") || !strcmp(t, "off")) {
                            veils++;
                            int inside = 0;
                            for (int k = 0; k < L.shown_heads; k++) {
                                const view_rect m = L.heads[k].map;
                                inside |= d->x >= m.x && d->x + w <= m.x + m.w && d->y >= m.y &&
                                          d->y < m.y + m.h;
                            }
                            EXPECT(inside, "the veil's note \"%s\" (x %d..%d) outside every tile",
                                   t, d->x, d->x + w);
                        } else if (strstr(t, " off: ")) {
                            notes++;
                            const view_rect a = L.eq_area;
                            EXPECT(d->x >= a.x && d->x + w <= a.x + a.w,
                                   "\"%s\" (x %d..%d) outside the equation " FX_RFMT, t, d->x,
                                   d->x + w, FX_R(a));
                            EXPECT(!figure || !strstr(t, "(D)"), "a figure's key hint: \"%s\"", t);
                        }
                    }
                }
        fx_model_free(&fm);
    }
    print_message("  head 2 off: %ld veil notes, %ld MultiHead notes checked\n", veils, notes);
    EXPECT(veils > 350 && notes > 350, "expected the notes drawn, got %ld and %ld", veils, notes);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("head off");
}

/* The how-alike matrix: every number drawn lies inside its own cell with a gap to
 * the next (h = 6 at 1920 x 1080 ran "-0.014-0.06-0.035" together), over h = 2 ... 16,
 * every size and zoom, with the widest numbers the cells can hold: -0.0457 style
 * negatives above the diagonal, 0.0977 style below. */
static void test_alike_numbers(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    long numbers = 0;
    static const int hs[] = {2, 4, 5, 6, 8, 16};
    static float div[16 * 16], pass[16 * 16], change[16];
    for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
        const int h = hs[hi];
        for (int i = 0; i < h * h; i++) {
            div[i] = 0.9023f - 0.0001f * (float)i; /* 1 - div: 0.0977, 0.0978, ... */
            pass[i] = -0.0457f - 0.0001f * (float)i;
        }
        for (int i = 0; i < h; i++) change[i] = 0.5f;
        fx_model fm;
        fx_model_make(&fm, 7, 240, h, MHA_MASK_NONE);
        for (int si = 0; si < NSIZES; si++)
            for (int zi = 0; zi < NZOOMS; zi++)
                for (int figure = 0; figure <= 1; figure++) {
                    view_state s;
                    state_at(&s, &fm, SIZES[si][0], SIZES[si][1], ZOOMS[zi], figure);
                    s.lesson = 1;
                    s.head_divergence = div;
                    s.head_pass_cos = pass;
                    s.head_change = change;
                    snprintf(fx_where, sizeof fx_where, "how alike, h=%d %dx%d zoom=%.0f%% %s", h,
                             SIZES[si][0], SIZES[si][1], (double)ZOOMS[zi] * 100,
                             figure ? "figure" : "window");
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    view_render(&dl, cache, &L, &s, fx_measure, NULL);
                    const view_rect m = L.redund_map;
                    if (m.w <= 0 || !L.lesson_shown) continue;
                    for (int i = 0; i < dl.count; i++) {
                        const draw_cmd *d = &dl.cmds[i];
                        if (d->kind != DC_TEXT || d->x < m.x || d->x >= m.x + m.w || d->y < m.y ||
                            d->y >= m.y + m.h)
                            continue;
                        const char *t = draw_cmd_text(&dl, d);
                        const int w = fx_text_w(t, d->size);
                        const int k = (int)((long)(d->x + w / 2 - m.x) * h / m.w);
                        const int x0 = m.x + (int)((long)k * m.w / h),
                                  x1 = m.x + (int)((long)(k + 1) * m.w / h);
                        numbers++;
                        EXPECT(d->x > x0 && d->x + w < x1,
                               "\"%s\" at x %d..%d outside its cell %d..%d (gap 1 px)", t, d->x,
                               d->x + w, x0, x1);
                    }
                }
        fx_model_free(&fm);
    }
    print_message("  how alike: %ld numbers checked\n", numbers);
    EXPECT(numbers > 1000, "expected numbers drawn, got %ld", numbers);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("how-alike numbers");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),    cmocka_unit_test(test_focus_and_diff),
        cmocka_unit_test(test_training), cmocka_unit_test(test_compare),
        cmocka_unit_test(test_ablated),  cmocka_unit_test(test_alike_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
