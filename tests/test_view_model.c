/* test_view_model.c: a loaded model's view pieces from made-up numbers: the
 * overview (every layer x head), the next-token panel, the header's model and
 * re-split captions, and the export panels VIEW_PANEL_MODEL and VIEW_PANEL_NEXT.
 * Properties: every overview cell inside the main area, none overlapping, rows in
 * layer order, the hit test at each cell's centre naming that layer and head (and
 * nothing in the gaps), the open layer's frame around its row and no other, labels
 * that never overlap each other or the cells and are wide enough for their text,
 * at 1024x768, 1920x1080, 3840x2160 and at gpt2-xl's 48 x 25; the drawing list has
 * one image per head and a cross per removed head; the next panel's bars as long
 * as their probabilities (within 1 px) on one track, in order, clear of the heads
 * and the equation, its rows hit; the panels alone hold only themselves. */
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

#define MAXL 48
#define MAXH 25
#define NTOK 6  /* the fake's tokens, unless asked for more */
#define MAXN 16 /* the most a fake has */

/* A fake model: head (l, k) attends to token i - (l + k) % 3 (itself, one back, two
   back), causal, so every head's map differs from its neighbours'. */
typedef struct {
    float maps[MAXL * MAXH * MAXN * MAXN];
    const float *attn[MAXL];
    unsigned char off[MAXL * MAXH];
    view_overview ov;
    view_next next;
} fake;

#define SP "\xE2\x90\xA3" /* ␣, GPT-2's leading space as the lead labels it */
static const char *const TOKS[MAXN] = {"The", SP "quick", SP "brown", SP "fox", SP "jumps", ".",
                                       "a",   "b",        "c",        "d",      "e",        "f",
                                       "g",   "h",        "i",        "j"};

static void fake_make(fake *f, int layers, int heads, int n) {
    memset(f, 0, sizeof *f);
    for (int l = 0; l < layers; l++) {
        f->attn[l] = f->maps + (size_t)l * heads * n * n;
        for (int k = 0; k < heads; k++)
            for (int i = 0; i < n; i++) {
                int j = i - (l + k) % 3;
                f->maps[(((size_t)l * heads + k) * n + i) * n + (j < 0 ? 0 : j)] = 1.0f;
            }
    }
    f->off[1 * heads + 2] = 1; /* layer 2 head 3 removed */
    f->ov = (view_overview){"gpt2", layers, heads, n, f->attn, TOKS, layers > 2 ? 2 : 0,
                            f->off, 0,      0,     0, 0,       0,    NULL};
    static const float p[5] = {0.234f, 0.121f, 0.058f, 0.031f, 0.004f};
    static const float pf[5] = {0.312f, 0.098f, 0.061f, 0.027f, 0.009f};
    f->next.k = 5;
    static const char *const words[5] = {SP "dog", SP "cat", SP "man", SP "first", SP "same"};
    for (int i = 0; i < 5; i++) {
        f->next.token[i] = words[i];
        f->next.p[i] = p[i];
        f->next.p_full[i] = pf[i];
    }
    f->next.after = SP "the";
}

/* The drawing list and cache every test renders into (the group's setup makes them). */
static draw_list dl;
static view_cache *cache;

static int setup(void **st) {
    (void)st;
    draw_list_init(&dl);
    cache = view_cache_create();
    return cache ? 0 : -1;
}

static int teardown(void **st) {
    (void)st;
    draw_list_free(&dl);
    view_cache_destroy(cache);
    return 0;
}

/* A state of fm's layer at w x h with the fake's overview (open when open). */
static void model_state(view_state *s, const fx_model *fm, const fake *f, int w, int h, int open) {
    fx_state(s, fm, w, h);
    s->overview = &f->ov;
    s->overview_open = open;
}

/* Text runs of dl that hold needle (exact: that are it). */
static int count_text(const char *needle, int exact) {
    int n = 0;
    for (int i = 0; i < dl.count; i++)
        if (dl.cmds[i].kind == DC_TEXT) {
            const char *t = draw_cmd_text(&dl, &dl.cmds[i]);
            n += exact ? strcmp(t, needle) == 0 : strstr(t, needle) != NULL;
        }
    return n;
}

static int inside(view_rect in, view_rect r) {
    return r.x >= in.x && r.y >= in.y && r.x + r.w <= in.x + in.w && r.y + r.h <= in.y + in.h;
}

static int empty(view_rect r) {
    return r.w <= 0 || r.h <= 0;
}

static const int SIZES[3][2] = {{1024, 768}, {1920, 1080}, {3840, 2160}};

/* The state for size i: 4K at 200 %, as view_zoom_for_size gives it. */
static void size_state(view_state *s, int i) {
    s->width = SIZES[i][0];
    s->height = SIZES[i][1];
    s->look.zoom = s->zoom_base = view_zoom_for_size(s->width, s->height);
}

/* ------------------------------------------------------------------------------ */

/* Every property of one overview layout; area is where it must lie. */
static void check_overview(const view_layout *L, const view_state *s, view_rect area) {
    const view_overview_box *O = &L->overview;
    const view_overview *o = s->overview;
    EXPECT(O->shown, "overview not shown");
    if (!O->shown) return;
    EXPECT_INT("grid rows", o->layers, O->layers);
    EXPECT_INT("grid columns", o->h, O->heads);
    EXPECT(O->cell >= 1, "cell %d px", O->cell);
    for (int l = 0; l < O->layers; l++)
        for (int k = 0; k < O->heads; k++) {
            view_rect c = view_overview_cell(L, l, k);
            EXPECT(inside(area, c), "cell L%d H%d " FX_RFMT " outside the area " FX_RFMT, l + 1,
                   k + 1, FX_R(c), FX_R(area));
            EXPECT(inside(O->grid, c), "cell L%d H%d outside the grid", l + 1, k + 1);
            if (l + O->rows < O->layers) { /* the next block right of this one */
                view_rect r = view_overview_cell(L, l + O->rows, 0);
                EXPECT(r.x > c.x + (O->heads - 1 - k) * O->step + c.w && r.y == c.y,
                       "block of layer %d not right of layer %d's", l + O->rows + 1, l + 1);
            }
            if (k + 1 < O->heads) { /* a regular grid: right neighbour and lower one clear */
                view_rect r = view_overview_cell(L, l, k + 1);
                EXPECT(c.x + c.w <= r.x && c.y == r.y, "L%d H%d overlaps H%d", l + 1, k + 1, k + 2);
            }
            if (l + 1 < O->layers && (l + 1) % O->rows) { /* rows in layer order, downwards */
                view_rect d = view_overview_cell(L, l + 1, k);
                EXPECT(c.y + c.h <= d.y && c.x == d.x, "layer %d not above layer %d", l + 1, l + 2);
            }
            view_hit h = view_hit_test(L, s, c.x + c.w / 2, c.y + c.h / 2);
            EXPECT(h.kind == HIT_OVERVIEW && h.row == l && h.head == k,
                   "hit at the centre of L%d H%d: kind %d layer %d head %d", l + 1, k + 1, h.kind,
                   h.row + 1, h.head + 1);
            if (O->step > O->cell) { /* the gap right of a cell is no head */
                h = view_hit_test(L, s, c.x + c.w, c.y + c.h / 2);
                EXPECT(h.kind != HIT_OVERVIEW, "hit in the gap right of L%d H%d", l + 1, k + 1);
            }
        }
    /* the open layer's frame holds its whole row, and the middle of no other row */
    if (o->layer >= 0 && o->layer < o->layers) {
        EXPECT_INT("open layer", o->layer, O->open);
        for (int k = 0; k < O->heads; k++)
            EXPECT(inside(O->open_frame, view_overview_cell(L, o->layer, k)),
                   "open frame " FX_RFMT " misses head %d", FX_R(O->open_frame), k + 1);
        const view_rect f = O->open_frame;
        for (int l = 0; l < O->layers; l++)
            for (int k = 0; k < O->heads && l != o->layer; k++) {
                view_rect c = view_overview_cell(L, l, k);
                int mx = c.x + c.w / 2, my = c.y + c.h / 2;
                EXPECT(mx < f.x || mx >= f.x + f.w || my < f.y || my >= f.y + f.h,
                       "open frame covers layer %d head %d", l + 1, k + 1);
            }
        EXPECT(!empty(view_overview_layer_label(L, o->layer)), "the open layer is unlabelled");
        EXPECT(inside(area, O->open_frame), "open frame outside the area");
    }
    /* labels: wide enough, inside, never over each other or a cell */
    view_rect labs[MAXL + 4 * MAXH];
    int nl = 0;
    char t[32];
    for (int l = 0; l < O->layers; l++) {
        view_rect r = view_overview_layer_label(L, l);
        if (empty(r)) continue;
        snprintf(t, sizeof t, "layer %d", l + 1);
        EXPECT(r.w >= fx_text_w(t, O->label_size), "\"%s\" %d px wide in %d", t,
               fx_text_w(t, O->label_size), r.w);
        labs[nl++] = r;
    }
    EXPECT(!empty(view_overview_layer_label(L, 0)), "layer 1 unlabelled");
    EXPECT(O->blocks >= 1 && O->blocks <= 4 && O->rows * O->blocks >= O->layers &&
               (O->rows - 1) * O->blocks < O->layers,
           "%d blocks of %d rows for %d layers", O->blocks, O->rows, O->layers);
    for (int b = 0; b < O->blocks; b++) {
        EXPECT(!empty(view_overview_head_label(L, b, 0)), "head 1 unnumbered in block %d", b);
        for (int k = 0; k < O->heads; k++) {
            view_rect r = view_overview_head_label(L, b, k);
            if (empty(r)) continue;
            snprintf(t, sizeof t, "%d", k + 1);
            EXPECT(r.w >= fx_text_w(t, O->label_size), "head number %s too narrow", t);
            labs[nl++] = r;
        }
    }
    for (int i = 0; i < nl; i++) {
        EXPECT(inside(area, labs[i]), "label " FX_RFMT " outside", FX_R(labs[i]));
        int over = 0;
        for (int l = 0; l < O->layers; l++)
            for (int k = 0; k < O->heads; k++)
                over += fx_rect_overlap(labs[i], view_overview_cell(L, l, k));
        EXPECT(over == 0, "label " FX_RFMT " over %d cells", FX_R(labs[i]), over);
        EXPECT(!fx_rect_overlap(labs[i], O->title), "label under the title");
        for (int j = i + 1; j < nl; j++)
            EXPECT(!fx_rect_overlap(labs[i], labs[j]), "labels " FX_RFMT " and " FX_RFMT " overlap",
                   FX_R(labs[i]), FX_R(labs[j]));
    }
    const view_rect below[3] = {O->title, O->cbar, O->note};
    for (int i = 0; i < 3; i++) {
        EXPECT(inside(area, below[i]), "title/colorbar/note %d " FX_RFMT " outside", i,
               FX_R(below[i]));
        EXPECT(!fx_rect_overlap(below[i], O->grid), "title/colorbar/note %d over the grid", i);
    }
    EXPECT(O->cbar.y > O->grid.y + O->grid.h, "colorbar not under the grid");
    EXPECT(O->note.y > O->cbar.y + O->cbar.h, "note not under the colorbar");
}

static void test_overview_layout(void **st) {
    (void)st;
    fx_reset();
    static fake f;
    static fx_model fm;
    fx_model_make(&fm, 12, 96, 4, MHA_MASK_CAUSAL);
    static const int shapes[3][2] = {{3, 4}, {12, 12}, {48, 25}};
    for (int sh = 0; sh < 3; sh++)
        for (int sz = 0; sz < 3; sz++)
            for (int mode = 0; mode < 3; mode++) { /* window, presenting, --panel model */
                fake_make(&f, shapes[sh][0], shapes[sh][1], NTOK);
                view_state s;
                model_state(&s, &fm, &f, 0, 0, 1);
                size_state(&s, sz);
                s.look.present = mode == 1;
                if (mode == 2) s.panel = VIEW_PANEL_MODEL, s.figure = 1;
                snprintf(fx_where, sizeof fx_where, "%d x %d heads, %dx%d, mode %d", shapes[sh][0],
                         shapes[sh][1], s.width, s.height, mode);
                static view_layout L;
                view_layout_compute(&L, &s, fx_measure, NULL);
                check_overview(&L, &s, mode == 2 ? (view_rect){0, 0, s.width, s.height} : L.main);
                EXPECT_INT("heads laid out beside the overview", 0, L.shown_heads);
                EXPECT(L.concat.map.w == 0, "the equation beside the overview");
                if (mode == 2) {
                    for (int b = 0; b < BTN_COUNT; b++)
                        EXPECT(!L.buttons[b].present, "button %d in the model panel", b);
                    EXPECT(empty(L.status), "a status line in the model panel");
                    EXPECT(!L.next.shown, "the next panel in the model panel");
                }
                /* the tests that drive the window read every cell from the JSON */
                static char json[1 << 17];
                int len = view_layout_json(json, sizeof json, &L, &s);
                EXPECT(len > 0, "layout JSON does not fit %zu bytes", sizeof json);
                char want[64];
                snprintf(want, sizeof want, "\"L%d H%d\"", shapes[sh][0], shapes[sh][1]);
                EXPECT(len > 0 && strstr(json, want) && strstr(json, "\"overview grid\""),
                       "JSON names no %s", want);
                snprintf(want, sizeof want, "\"overview\":{\"layers\":%d,\"heads\":%d,",
                         shapes[sh][0], shapes[sh][1]);
                EXPECT(len > 0 && strstr(json, want) && json[len - 1] == '}',
                       "JSON has no %s or is not closed", want);
            }
    /* the grid fills the room: at 1920x1080 a 12 x 12 model's cells are at least 48 px */
    fake_make(&f, 12, 12, NTOK);
    view_state s;
    model_state(&s, &fm, &f, 1920, 1080, 1);
    static view_layout L;
    view_layout_compute(&L, &s, fx_measure, NULL);
    snprintf(fx_where, sizeof fx_where, "12 x 12 at 1920x1080");
    EXPECT(L.overview.cell >= 48, "cells %d px", L.overview.cell);
    fx_model_free(&fm);
    fx_finish("test_overview_layout");
}

/* One image per head, a cross (two lines) per removed head, the title's counts,
   and the downsampling note exactly when a map has fewer pixels than tokens. */
static void test_overview_render(void **st) {
    (void)st;
    fx_reset();
    static fake f;
    static fx_model fm;
    fx_model_make(&fm, 12, 96, 4, MHA_MASK_CAUSAL);
    for (int sh = 0; sh < 3; sh++) {
        const int layers = sh ? 48 : 3, heads = sh ? 25 : 4, n = sh == 2 ? MAXN : NTOK;
        fake_make(&f, layers, heads, n);
        view_state s;
        model_state(&s, &fm, &f, 1024, 768, 1);
        s.look.theme = sh;
        snprintf(fx_where, sizeof fx_where, "%d x %d at 1024x768", layers, heads);
        static view_layout L;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        int cells = 0, crossed = 0, title = 0, note = 0, click = 0;
        const view_rect off = view_overview_cell(&L, 1, 2);
        char want[96];
        snprintf(want, sizeof want, "gpt2 \xC2\xB7 %d layers \xC3\x97 %d heads \xC2\xB7 %d tokens",
                 layers, heads, n);
        for (int i = 0; i < dl.count; i++) {
            const draw_cmd *c = &dl.cmds[i];
            const view_rect r = {c->x, c->y, c->w, c->h};
            if (c->kind == DC_IMAGE && inside(L.overview.grid, r) && r.w == L.overview.cell)
                cells++;
            if (c->kind == DC_LINE && c->x >= off.x && c->x < off.x + off.w && c->y >= off.y &&
                c->y < off.y + off.h && abs(c->w) >= off.w - 2)
                crossed++;
        }
        title = count_text(want, 0);
        click = count_text("click a head to open its layer", 0);
        note = count_text("the largest weight it covers", 0);
        EXPECT_INT("one image per head", layers * heads, cells);
        EXPECT_INT("lines crossing the removed head", 2, crossed);
        EXPECT_INT("title with the counts", 1, title);
        EXPECT_INT("the title says a click opens a layer", 1, click);
        EXPECT_INT("downsampling note", L.overview.cell < n, note);
        EXPECT(sh < 2 || L.overview.cell < n, "no downsampling to test: %d px cells",
               L.overview.cell);
        /* the pointer on the removed head: its tooltip names it */
        s.hover_x = off.x + off.w / 2, s.hover_y = off.y + off.h / 2;
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        EXPECT_INT("tooltip of the removed head", 1, count_text("layer 2, head 3 (removed)", 1));
        s.hover_x = s.hover_y = -1;
        /* as a figure: no click */
        s.panel = VIEW_PANEL_MODEL;
        s.figure = 1;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        EXPECT_INT("a figure says no click", 0, count_text("click", 0));
    }
    fx_model_free(&fm);
    fx_finish("test_overview_render");
}

/* The rectangles of the layer view the next panel must stay clear of. */
static int layer_rects(const view_layout *L, view_rect *v) {
    int n = 0;
    for (int i = 0; i < L->shown_heads; i++) {
        view_rect m = L->heads[i].map;
        v[n++] = m;
        v[n++] = L->heads[i].title;
        if (L->show_row_labels)
            v[n++] = (view_rect){m.x - L->row_label_w, m.y, L->row_label_w, m.h};
        if (L->show_col_labels) v[n++] = (view_rect){m.x, m.y + m.h, m.w, L->col_label_h};
    }
    v[n++] = L->attn_cbar;
    const view_matrix_box *b[3] = {&L->concat, &L->w_o, &L->out};
    for (int i = 0; i < 3; i++) {
        v[n++] = b[i]->map, v[n++] = b[i]->shape;
        v[n++] = (view_rect){b[i]->cbar.x, b[i]->cbar.y, b[i]->cbar.w,
                             b[i]->cbar.h + L->pad / 2 + fx_line_h(L->font_small)};
    }
    v[n++] = L->eq_title, v[n++] = L->status, v[n++] = L->formula;
    if (L->lesson_shown) {
        v[n++] = L->redund_title, v[n++] = L->redund_map, v[n++] = L->redund_note;
        v[n++] = L->redund_cbar, v[n++] = L->cost;
    }
    for (int i = 0; i < BTN_COUNT; i++)
        if (L->buttons[i].present) v[n++] = L->buttons[i].r;
    return n;
}

static void check_next(const view_layout *L, const view_state *s, view_rect area) {
    const view_next_box *N = &L->next;
    const view_next *x = s->next;
    EXPECT(N->shown, "next panel not shown");
    if (!N->shown) return;
    EXPECT_INT("rows", x->k, N->k);
    EXPECT(inside(area, N->area), "panel " FX_RFMT " outside " FX_RFMT, FX_R(N->area), FX_R(area));
    for (int i = 0; i < N->k; i++) {
        const view_rect t = N->track[i], b = N->bar[i];
        EXPECT(inside(N->area, N->row[i]), "row %d outside the panel", i + 1);
        EXPECT(b.x == t.x && b.w <= t.w && inside(t, b), "bar %d off its track", i + 1);
        EXPECT(fabs((double)b.w - x->p[i] * t.w) <= 1.0, "bar %d: %d px for p %.3f of %d", i + 1,
               b.w, (double)x->p[i], t.w);
        if (x->p_full[i] >= 0.0f)
            EXPECT(fabs((double)N->full[i].w - x->p_full[i] * t.w) <= 1.0 && N->full[i].x == t.x,
                   "pale bar %d: %d px for %.3f", i + 1, N->full[i].w, (double)x->p_full[i]);
        else
            EXPECT(empty(N->full[i]), "pale bar %d without p_full", i + 1);
        EXPECT(!fx_rect_overlap(N->label[i], t) && !fx_rect_overlap(N->pct[i], t),
               "row %d: label or percentage on the track", i + 1);
        if (i > 0) {
            EXPECT(N->row[i].y >= N->row[i - 1].y + N->row[i - 1].h, "row %d above row %d", i + 1,
                   i);
            EXPECT(t.w == N->track[0].w && t.x == N->track[0].x, "tracks differ");
            EXPECT(b.w <= N->bar[i - 1].w, "bar %d longer than bar %d", i + 1, i);
        }
        view_rect r = N->row[i];
        view_hit h = view_hit_test(L, s, r.x + r.w / 2, r.y + r.h / 2);
        EXPECT(h.kind == HIT_NEXT && h.row == i, "hit on row %d: kind %d row %d", i + 1, h.kind,
               h.row);
    }
    int full = 0;
    for (int i = 0; i < x->k; i++) full |= x->p_full[i] >= 0.0f;
    EXPECT(empty(N->caption) == !full, "caption %s", full ? "missing" : "without pale bars");
    EXPECT(empty(N->cut_note) == !x->cut, "cut note %s", x->cut ? "missing" : "uncut");
    EXPECT(empty(N->trained_note) == !s->resplit, "trained note %s",
           s->resplit ? "missing at a re-split" : "without a re-split");
}

static void test_next_panel(void **st) {
    (void)st;
    fx_reset();
    static fake f;
    static fx_model fm;
    fx_model_make(&fm, 12, 96, 4, MHA_MASK_CAUSAL);
    for (int sz = 0; sz < 3; sz++)
        for (int v = 0; v < 5; v++) { /* pale bars or not, cut or not, lesson, figure, re-split */
            fake_make(&f, 3, 4, NTOK);
            if (v & 1)
                for (int i = 0; i < 5; i++) f.next.p_full[i] = -1.0f;
            f.next.cut = v >= 2 && v < 4;
            view_state s;
            model_state(&s, &fm, &f, 0, 0, 0);
            size_state(&s, sz);
            s.resplit = v == 4; /* the layer shown re-split: the panel is the model's as trained */
            s.lesson = v == 2;
            s.figure = v == 3;
            static view_layout without, L;
            view_layout_compute(&without, &s, fx_measure, NULL);
            s.next = &f.next;
            view_layout_compute(&L, &s, fx_measure, NULL);
            snprintf(fx_where, sizeof fx_where, "%dx%d variant %d", s.width, s.height, v);
            check_next(&L, &s, (view_rect){0, 0, s.width, s.height});
            if (s.resplit) { /* and it says so, with the model's own heads */
                view_render(&dl, cache, &L, &s, fx_measure, NULL);
                EXPECT_INT("'as trained' with the model's own 4 heads", 1,
                           count_text("as trained: 4 heads", 0) + count_text("as trained (4", 0));
            }
            static view_rect rects[VIEW_MAX_VISIBLE * 4 + 40];
            const int n = layer_rects(&L, rects);
            for (int i = 0; i < n; i++)
                EXPECT(!fx_rect_overlap(L.next.area, rects[i]),
                       "next panel " FX_RFMT " over " FX_RFMT " (%d)", FX_R(L.next.area),
                       FX_R(rects[i]), i);
            /* it does not squeeze the heads badly: at least 70 % of their side */
            EXPECT(L.shown_heads > 0 && L.heads[0].map.w * 10 >= without.heads[0].map.w * 7,
                   "heads %d px with the panel, %d without", L.heads[0].map.w,
                   without.heads[0].map.w);
            EXPECT_INT("heads shown with the panel", without.shown_heads, L.shown_heads);
            /* the lesson's panels keep their room from 1920x1080 (at 1024x768 they give
               way, as they do to any panel when the room is short) */
            if (s.lesson && sz > 0)
                EXPECT(L.lesson_shown == without.lesson_shown, "lesson panels lost");
        }
    fx_model_free(&fm);
    fx_finish("test_next_panel");
}

/* --panel next: the panel alone, as large as it asks; bad input shows nothing */
static void test_panels_alone(void **st) {
    (void)st;
    fx_reset();
    static fake f;
    static fx_model fm;
    fx_model_make(&fm, 12, 96, 4, MHA_MASK_CAUSAL);
    fake_make(&f, 3, 4, NTOK);
    f.next.cut = 1;
    for (int with_layer = 0; with_layer < 2; with_layer++) {
        view_state s;
        model_state(&s, &fm, &f, 1920, 1080, 0);
        if (!with_layer) s.layer = NULL;
        s.next = &f.next;
        s.panel = VIEW_PANEL_NEXT;
        s.figure = 1;
        snprintf(fx_where, sizeof fx_where, "--panel next, layer %d", with_layer);
        static view_layout L;
        view_layout_compute(&L, &s, fx_measure, NULL);
        check_next(&L, &s, (view_rect){0, 0, s.width, s.height});
        EXPECT(!L.overview.shown && L.shown_heads == 0 && L.concat.map.w == 0,
               "more than the next panel");
        for (int b = 0; b < BTN_COUNT; b++) EXPECT(!L.buttons[b].present, "button %d", b);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        EXPECT_INT("title", 1, count_text("What comes next after " SP "the", 1));
        EXPECT_INT("cut note", 1, count_text("text cut to 6 tokens", 1));
        EXPECT_INT("23.4 %", 1, count_text("23.4 %", 1));
        EXPECT_INT("(31.2 %)", 1, count_text("(31.2 %)", 1));
    }
    /* inputs the view cannot show: nothing laid out, nothing hit, no crash */
    static const int bad[6][4] = {{0, 4, 6, 1}, {3, 0, 6, 1},
                                  {3, 4, 0, 1}, {3, 4, VIEW_MAX_N + 1, 1},
                                  {3, 4, 6, 0}, {-1, 4, 6, 1}};
    for (int i = 0; i < 6; i++) {
        view_overview o = f.ov;
        o.layers = bad[i][0], o.h = bad[i][1], o.n = bad[i][2];
        if (!bad[i][3]) o.attn = NULL;
        view_next x = f.next;
        x.k = i % 2 ? 0 : VIEW_NEXT_MAX + 1;
        view_state s;
        fx_state(&s, &fm, 1024, 768);
        s.overview = &o;
        s.overview_open = 1;
        s.next = &x;
        snprintf(fx_where, sizeof fx_where, "bad input %d", i);
        static view_layout L;
        view_layout_compute(&L, &s, fx_measure, NULL);
        EXPECT(!L.overview.shown && !L.next.shown, "laid out");
        EXPECT(L.shown_heads > 0, "the layer view gone");
        view_hit h = view_hit_test(&L, &s, 500, 400);
        EXPECT(h.kind != HIT_OVERVIEW && h.kind != HIT_NEXT, "hit %d", h.kind);
    }
    fx_model_free(&fm);
    fx_finish("test_panels_alone");
}

/* The header names the model and the layer, and a re-split's two head counts. */
static void test_header_captions(void **st) {
    (void)st;
    fx_reset();
    static fake f;
    static fx_model fm;
    fx_model_make(&fm, 12, 96, 2, MHA_MASK_CAUSAL); /* shown as 2 heads */
    fake_make(&f, 3, 4, NTOK);                      /* trained with 4 */
    for (int fig = 0; fig < 2; fig++)
        for (int re = 0; re < 2; re++) {
            view_state s;
            model_state(&s, &fm, &f, 1920, 1080, 0);
            s.figure = fig;
            s.resplit = re;
            snprintf(fx_where, sizeof fx_where, "figure %d resplit %d", fig, re);
            static view_layout L;
            view_layout_compute(&L, &s, fx_measure, NULL);
            int model = 0, resplit = 0, seed = 0;
            const char *want =
                fig ? "gpt2 \xC2\xB7 layer 3 of 3 \xC2\xB7 h = 2" : "gpt2 \xC2\xB7 layer 3 of 3";
            for (int i = 0; i < L.hdr_count; i++) {
                model += strcmp(L.hdr_runs[i].text, want) == 0;
                resplit +=
                    strcmp(L.hdr_runs[i].text, "re-split: trained with 4 heads, shown as 2") == 0;
                seed += strncmp(L.hdr_runs[i].text, "seed", 4) == 0;
            }
            EXPECT_INT("model caption", 1, model);
            EXPECT_INT("re-split caption", re, resplit);
            EXPECT_INT("a seed for a checkpoint", 0, seed);
        }
    fx_model_free(&fm);
    fx_finish("test_header_captions");
}

/* The help (F1) with a model names the tokenizer the samples and the text go
   through, the model's own (GPT-2's was named whatever the model was); without
   one said, no tokenizer at all. */
static void test_help_tokenizer(void **st) {
    (void)st;
    fx_reset();
    static fake f;
    static fx_model fm;
    fx_model_make(&fm, 12, 96, 4, MHA_MASK_NONE);
    fake_make(&f, 3, 4, NTOK);
    const char *kinds[] = {"WordPiece (vocab.txt)", "Unigram (tokenizer.json)",
                           "GPT-2's byte-level BPE (vocab.json, merges.txt)", NULL};
    for (int k = 0; k < 4; k++) {
        f.ov.tokenizer = kinds[k];
        view_state s;
        model_state(&s, &fm, &f, 1600, 900, 0);
        s.help = 1;
        snprintf(fx_where, sizeof fx_where, "help, tokenizer %s", kinds[k] ? kinds[k] : "none");
        static view_layout L;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        char want[200];
        snprintf(want, sizeof want, "next / previous built-in sample, through its tokenizer: %s",
                 kinds[k] ? kinds[k] : "");
        EXPECT_INT("the Tab row naming the model's tokenizer", kinds[k] != NULL,
                   count_text(want, 1));
        EXPECT_INT("the Tab row", 1, count_text("next / previous built-in sample", 0));
        EXPECT_INT("GPT-2's tokenizer named for another model", k == 2, count_text("GPT-2's", 0));
    }
    f.ov.tokenizer = NULL;
    fx_model_free(&fm);
    fx_finish("test_help_tokenizer");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overview_layout), cmocka_unit_test(test_overview_render),
        cmocka_unit_test(test_next_panel),      cmocka_unit_test(test_panels_alone),
        cmocka_unit_test(test_header_captions), cmocka_unit_test(test_help_tokenizer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
