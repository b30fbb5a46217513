/* test_lines.c: the head view's drawing list (layout_lines.c, lines.c), with the
 * fake text measurer, no font, no window.
 * - each head's lines are its weights: in the group "head-K", one line from query
 *   i's row to key j's row for each weight a_ij >= 0.02 and none for lighter ones,
 *   its alpha round(255 a_ij) (the opacity within 0.5/255 of the weight); rows are
 *   computed here from the tile's box, evenly spaced, not with the view's helpers;
 * - hovering query q (or key k) keeps only its lines: every other line at most a
 *   tenth of its opacity (alpha <= 26), its own at full opacity;
 * - the causal mask: no line to a later key; [PAD] tokens grey (labels and lines);
 * - a long text (n = 128, 300) labels every k-th token (no two labels overlap),
 *   says so in the legend, and still draws every line;
 * - every head overlaid (VIEW_PANEL_LINES, panel_head 0): each head's lines in its
 *   own group and colour;
 * - compare: both panes as lines, the pinned one's in its own groups;
 * - small tiles (h = 32, long words, 1024 x 768, 80-300 % zoom): no label cut to
 *   fewer than three characters and "…", none under 4/5 of the heatmaps' label
 *   size, and a tile left unlabelled said so in the legend. */
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

static view_layout L;

typedef struct {
    int i, j, alpha;
    rgba col;
} seen_line;

/* Row centre of token t of n in box B, computed as the layout promises. */
static int row_y(const view_lines_box *B, int n, int t) {
    return B->y0 + (int)((2.0 * t + 1.0) * B->span / (2.0 * n));
}

static int row_of(const view_lines_box *B, int n, int y) {
    for (int t = 0; t < n; t++)
        if (row_y(B, n, t) == y) return t;
    return -1;
}

/* The lines in group "head-K" (K 1-based) of dl, as (query, key) rows of box B. */
static int group_lines(const draw_list *dl, int k, const view_lines_box *B, int n, seen_line *out,
                       int max) {
    char want[32];
    snprintf(want, sizeof want, "head-%d", k);
    int in = 0, count = 0;
    for (int c = 0; c < dl->count; c++) {
        const draw_cmd *d = &dl->cmds[c];
        if (d->kind == DC_GROUP) {
            in = d->group && strcmp(draw_cmd_text(dl, d), want) == 0;
            continue;
        }
        if (!in || d->kind != DC_LINE || d->thick != B->thick) continue;
        /* draw_line keeps (x0, y0) and (x1 - x0, y1 - y0) */
        if (count < max)
            out[count] =
                (seen_line){row_of(B, n, d->y), row_of(B, n, d->y + d->h), d->color.a, d->color};
        count++;
    }
    return count;
}

static void render(draw_list *dl, view_cache *cache, const view_state *s) {
    view_layout_compute(&L, s, fx_measure, NULL);
    view_render(dl, cache, &L, s, fx_measure, NULL);
}

/* Head k's (0-based) lines in tile slot against its weights; hover q / key kk. */
static void check_head(const draw_list *dl, const view_state *s, int slot, int head, int q,
                       int kk) {
    const attn_layer *layer = s->layer;
    const int n = layer->n;
    const view_lines_box *B = &L.lines[slot];
    static seen_line got[512 * 64];
    const int count = group_lines(dl, head + 1, B, n, got, 512 * 64);
    static unsigned char hit[512 * 512];
    memset(hit, 0, (size_t)n * n);
    long want = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) want += layer->attn[((size_t)head * n + i) * n + j] >= 0.02f;
    EXPECT_INT("lines = weights >= 0.02", want, count);
    double worst = 0;
    for (int c = 0; c < count && c < 512 * 64; c++) {
        const int i = got[c].i, j = got[c].j;
        EXPECT(i >= 0 && j >= 0, "head %d: a line not on token rows (%d, %d)", head + 1, i, j);
        if (i < 0 || j < 0) continue;
        EXPECT(!hit[i * n + j], "head %d: two lines for (%d, %d)", head + 1, i, j);
        hit[i * n + j] = 1;
        const double w = layer->attn[((size_t)head * n + i) * n + j];
        const int dimmed = (q >= 0 && i != q) || (kk >= 0 && j != kk);
        if (dimmed) {
            EXPECT(got[c].alpha <= 26, "head %d: (%d, %d) dimmed: alpha %d, expected <= 26",
                   head + 1, i, j, got[c].alpha);
        } else {
            const double op = got[c].alpha / 255.0;
            if (fabs(op - w) > worst) worst = fabs(op - w);
            EXPECT(fabs(op - w) <= 0.5 / 255 + 1e-6,
                   "head %d: (%d, %d): opacity %.4f, weight %.4f (tolerance 0.5/255)", head + 1, i,
                   j, op, w);
        }
        EXPECT(w >= 0.02, "head %d: a line for (%d, %d) of weight %.4f < 0.02", head + 1, i, j, w);
        if (layer->mask == ATTN_MASK_CAUSAL)
            EXPECT(j <= i, "head %d: a line from query %d to the later key %d", head + 1, i, j);
        if (i >= layer->n_real) {
            rgba m = view_theme_get(s->look.theme).muted;
            EXPECT(got[c].col.r == m.r && got[c].col.g == m.g && got[c].col.b == m.b,
                   "head %d: [PAD] query %d's line not grey", head + 1, i);
        }
    }
    (void)worst;
}

/* The label texts drawn in tile B's columns: none overlap, the padding's grey. */
static int check_labels(const draw_list *dl, const view_state *s, const view_lines_box *B) {
    view_rect boxes[1200];
    int nb = 0;
    const rgba muted = view_theme_get(s->look.theme).muted;
    for (int c = 0; c < dl->count; c++) {
        const draw_cmd *d = &dl->cmds[c];
        if (d->kind != DC_TEXT || d->size != B->label_size) continue;
        if (d->y < B->box.y || d->y >= B->box.y + B->box.h || d->x < B->box.x ||
            d->x >= B->box.x + B->box.w)
            continue;
        const char *t = draw_cmd_text(dl, d);
        view_rect r = {d->x, d->y, fx_text_w(t, d->size), fx_line_h(d->size)};
        EXPECT(r.x + r.w <= B->box.x + B->box.w && r.y + r.h <= B->box.y + B->box.h,
               "label \"%s\" " FX_RFMT " outside its tile " FX_RFMT, t, FX_R(r), FX_R(B->box));
        for (int k = 0; k < nb; k++)
            EXPECT(!fx_rect_overlap(r, boxes[k]), "label \"%s\" " FX_RFMT " over another", t,
                   FX_R(r));
        if (strcmp(t, "[PAD]") == 0)
            EXPECT(d->color.r == muted.r && d->color.g == muted.g && d->color.b == muted.b,
                   "[PAD] label not grey");
        if (nb < 1200) boxes[nb++] = r;
    }
    return nb;
}

static void test_lines_are_the_weights(void **state) {
    (void)state;
    fx_reset();
    static const struct {
        int n, d, h, w, hh;
        mha_mask mask;
    } cases[] = {{7, 64, 4, 1600, 900, MHA_MASK_NONE},    {12, 64, 4, 1920, 1080, MHA_MASK_CAUSAL},
                 {9, 96, 3, 1024, 768, MHA_MASK_NONE},    {24, 64, 8, 3840, 2160, MHA_MASK_NONE},
                 {128, 64, 2, 1920, 1080, MHA_MASK_NONE}, {300, 64, 1, 1600, 900, MHA_MASK_CAUSAL}};
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        fx_model fm;
        fx_model_make(&fm, cases[ci].n, cases[ci].d, cases[ci].h, cases[ci].mask);
        view_state s;
        fx_state(&s, &fm, cases[ci].w, cases[ci].hh);
        s.look.head_view = VIEW_HEAD_LINES;
        for (int focus = 0; focus <= 1; focus++) {
            s.look.focus = focus;
            snprintf(fx_where, sizeof fx_where, "n=%d h=%d %dx%d focus=%d", cases[ci].n,
                     cases[ci].h, cases[ci].w, cases[ci].hh, focus);
            render(&dl, cache, &s);
            EXPECT(L.lines_shown == L.shown_heads && L.shown_heads > 0,
                   "expected a lines box per tile, got %d of %d", L.lines_shown, L.shown_heads);
            for (int i = 0; i < L.lines_shown; i++) {
                check_head(&dl, &s, i, L.first_head + i, -1, -1);
                EXPECT(L.lines[i].stride > 0 || L.lines[i].box.w < 200,
                       "tile %d (%d px wide): no labels", i, L.lines[i].box.w);
                check_labels(&dl, &s, &L.lines[i]);
            }
            int k = L.lines[0].stride;
            if (k > 1) { /* the legend says how many are labelled */
                char want[48];
                snprintf(want, sizeof want, "every %d", k);
                EXPECT(strstr(L.lines_legend_text[1], want) != NULL,
                       "stride %d: legend \"%s\" does not say it", k, L.lines_legend_text[1]);
            }
            EXPECT(strstr(L.lines_legend_text[1], "0.02") != NULL,
                   "legend \"%s\": expected the floor 0.02", L.lines_legend_text[1]);
            EXPECT(strstr(L.lines_legend_text[0], "opacity") != NULL,
                   "legend \"%s\": expected what opacity means", L.lines_legend_text[0]);
            if (cases[ci].n >= 100) EXPECT(k > 1, "n = %d: expected labels thinned", cases[ci].n);
        }
        s.look.head_view = VIEW_HEAD_HEATMAP; /* H again: heatmaps, no lines */
        s.look.focus = 0;
        render(&dl, cache, &s);
        EXPECT_INT("heatmap view: no lines boxes", 0, L.lines_shown);
        fx_model_free(&fm);
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("lines are the weights");
}

/* The pointer on a query's label (or a key's): hit test and drawing. */
static void test_hover_keeps_one_token(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model fm;
    fx_model_make(&fm, 9, 64, 4, MHA_MASK_NONE);
    view_state s;
    fx_state(&s, &fm, 1600, 900);
    s.look.head_view = VIEW_HEAD_LINES;
    view_layout_compute(&L, &s, fx_measure, NULL);
    for (int side = 0; side < 2; side++)
        for (int t = 0; t < 9; t += 4) {
            const view_lines_box *B = &L.lines[1]; /* the second tile: hover in another head */
            const view_rect col = side ? B->kcol : B->qcol;
            s.hover_x = col.x + col.w / 2;
            s.hover_y = row_y(B, 9, t);
            snprintf(fx_where, sizeof fx_where, "hover %s %d", side ? "key" : "query", t);
            view_hit hit = view_hit_test(&L, &s, s.hover_x, s.hover_y);
            EXPECT_INT("hit kind", side ? HIT_LINES_K : HIT_LINES_Q, hit.kind);
            EXPECT_INT("hit token", t, side ? hit.col : hit.row);
            EXPECT_INT("hit head", L.first_head + 1, hit.head);
            render(&dl, cache, &s);
            for (int i = 0; i < L.lines_shown; i++) /* every head keeps that token's lines */
                check_head(&dl, &s, i, L.first_head + i, side ? -1 : t, side ? t : -1);
        }
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("hover keeps one token");
}

/* Padding: [PAD] labels and a [PAD] query's lines grey. */
static void test_padding_grey(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model fm;
    fx_make_toks(&fm.toks, 6);
    fm.m = mha_model_create();
    mha_config cfg = {.h = 2, .d_model = 32, .seed = 3, .pad = 10};
    char err[MHA_ERR_LEN] = "";
    assert_int_equal(mha_model_compute(fm.m, &cfg, &fm.toks.t, err, sizeof err), 0);
    fm.text = malloc(sizeof *fm.text);
    fx_model_refresh(&fm);
    view_state s;
    fx_state(&s, &fm, 1600, 900);
    s.look.head_view = VIEW_HEAD_LINES;
    snprintf(fx_where, sizeof fx_where, "n_real 6 of 10");
    EXPECT_INT("padded", 10, fm.layer.n);
    render(&dl, cache, &s);
    int pads = 0;
    for (int i = 0; i < L.lines_shown; i++) {
        check_head(&dl, &s, i, L.first_head + i, -1, -1);
        check_labels(&dl, &s, &L.lines[i]);
    }
    for (int c = 0; c < dl.count; c++)
        pads += dl.cmds[c].kind == DC_TEXT && strcmp(draw_cmd_text(&dl, &dl.cmds[c]), "[PAD]") == 0;
    EXPECT(pads >= 8, "expected [PAD] labelled (4 in each column of 2 heads), got %d", pads);
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("padding grey");
}

/* --panel lines: every head in one tile, each in its group and its colour. */
static void test_overlaid_panel(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model fm;
    fx_model_make(&fm, 8, 64, 4, MHA_MASK_NONE);
    view_state s;
    fx_state(&s, &fm, 1920, 1080);
    s.figure = 1;
    for (int k = 0; k <= 4; k++) {
        s.panel = VIEW_PANEL_LINES;
        s.panel_head = k;
        snprintf(fx_where, sizeof fx_where, "--panel lines%s%d", k ? ":" : " (all) ", k);
        render(&dl, cache, &s);
        EXPECT_INT("one tile", 1, L.lines_shown);
        EXPECT_INT("overlaid", k == 0, L.lines_all);
        for (int h = 0; h < 4; h++) {
            if (k && h != k - 1) continue;
            check_head(&dl, &s, 0, h, -1, -1);
            static seen_line got[4096];
            int count = group_lines(&dl, h + 1, &L.lines[0], 8, got, 4096);
            const rgba want = view_head_color(h, s.look.theme);
            for (int c = 0; c < count; c++)
                EXPECT(got[c].col.r == want.r && got[c].col.g == want.g && got[c].col.b == want.b,
                       "head %d: a line not in its colour", h + 1);
        }
        if (k) { /* lines:K has head K's lines alone */
            static seen_line got[4096];
            for (int h = 0; h < 4; h++)
                if (h != k - 1)
                    EXPECT_INT("another head's lines", 0,
                               group_lines(&dl, h + 1, &L.lines[0], 8, got, 4096));
        }
    }
    fx_model_free(&fm);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("overlaid panel");
}

/* Compare: both panes as lines, the pinned pane's in its own groups ("pinned-head-K"). */
static void test_compare_panes(void **state) {
    (void)state;
    fx_reset();
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    fx_model live, pinned;
    fx_model_make(&live, 7, 64, 4, MHA_MASK_NONE);
    fx_model_make(&pinned, 7, 64, 2, MHA_MASK_NONE);
    view_state s, ps;
    fx_state(&s, &live, 1920, 1080);
    fx_state(&ps, &pinned, 1920, 1080);
    static view_layout PL;
    s.pinned = &ps;
    s.pinned_layout = &PL;
    s.look.head_view = VIEW_HEAD_LINES;
    snprintf(fx_where, sizeof fx_where, "compare h=2 | h=4");
    render(&dl, cache, &s);
    EXPECT_INT("compare", 1, L.compare);
    EXPECT_INT("live pane: a box per head", L.shown_heads, L.lines_shown);
    EXPECT_INT("pinned pane: a box per head", PL.shown_heads, PL.lines_shown);
    for (int h = 0; h < PL.lines_shown; h++) {
        char want[32];
        snprintf(want, sizeof want, "pinned-head-%d", h + 1);
        long lines = 0, weights = 0;
        int in = 0;
        for (int c = 0; c < dl.count; c++) {
            const draw_cmd *d = &dl.cmds[c];
            if (d->kind == DC_GROUP) in = d->group && strcmp(draw_cmd_text(&dl, d), want) == 0;
            lines += in && d->kind == DC_LINE && d->thick == PL.lines[h].thick;
        }
        for (int i = 0; i < 49; i++) weights += pinned.layer.attn[h * 49 + i] >= 0.02f;
        EXPECT_INT("pinned head's lines = its weights >= 0.02", weights, lines);
    }
    for (int i = 0; i < L.lines_shown; i++) check_head(&dl, &s, i, L.first_head + i, -1, -1);
    fx_model_free(&live);
    fx_model_free(&pinned);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("compare panes");
}

/* Code points of t before a trailing "…" (-1: no "…" at its end). */
static int cut_kept(const char *t) {
    const size_t l = strlen(t);
    if (l < 3 || strcmp(t + l - 3, "\xE2\x80\xA6") != 0) return -1;
    int n = 0;
    for (size_t i = 0; i < l - 3; i++) n += ((unsigned char)t[i] & 0xC0) != 0x80;
    return n;
}

/* Small tiles (many heads, long words, small windows, 80 % zoom): every token label
   drawn in the head view is readable: its whole label or at least three characters
   and "…" (never "T…"), at the heatmaps' label size or larger; a tile with no label
   says so in the legend; both columns' labels inside the tile. The old layout
   shrank labels to 8 px and cut them to one letter ("T…") in 1024 x 768 at h = 16. */
static void test_labels_readable(void **state) {
    (void)state;
    fx_reset();
    static const int sizes[][2] = {{1024, 768}, {768, 1024},  {1280, 800},
                                   {1600, 900}, {1920, 1080}, {3840, 2160}};
    static const int hs[] = {2, 4, 8, 16, 32}, ns[] = {7, 12, 24, 60};
    static const float zooms[] = {0.8f, 1.0f, 1.5f, 3.0f};
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    long labels = 0, cut = 0, unlabelled = 0, tiles = 0;
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
            fx_model fm;
            fx_model_make(&fm, ns[ni], 64, hs[hi], MHA_MASK_NONE);
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (size_t zi = 0; zi < sizeof zooms / sizeof zooms[0]; zi++)
                    for (int focus = 0; focus <= 1; focus++) {
                        view_state s;
                        fx_state(&s, &fm, sizes[si][0], sizes[si][1]);
                        s.look.head_view = VIEW_HEAD_LINES;
                        s.look.zoom = zooms[zi];
                        s.look.focus = focus;
                        snprintf(fx_where, sizeof fx_where, "n=%d h=%d %dx%d zoom=%.0f%% focus=%d",
                                 ns[ni], hs[hi], sizes[si][0], sizes[si][1],
                                 (double)zooms[zi] * 100, focus);
                        render(&dl, cache, &s);
                        int bare = 0;
                        /* 4/5 of the heatmaps' label size, or of theirs at 100 % when
                           zoomed in */
                        const int small = (L.font_small < 14 ? L.font_small : 14) * 4 / 5;
                        for (int i = 0; i < L.lines_shown; i++) {
                            const view_lines_box *B = &L.lines[i];
                            tiles++;
                            if (B->stride <= 0) bare++, unlabelled++;
                            for (int c = 0; c < dl.count; c++) {
                                const draw_cmd *d = &dl.cmds[c];
                                if (d->kind != DC_TEXT || d->y < B->box.y ||
                                    d->y >= B->box.y + B->box.h)
                                    continue;
                                const int inq = B->qcol.w > 0 && d->x >= B->qcol.x &&
                                                d->x < B->qcol.x + B->qcol.w;
                                const int ink = B->kcol.w > 0 && d->x >= B->kcol.x &&
                                                d->x < B->kcol.x + B->kcol.w;
                                if (!inq && !ink) continue;
                                const char *t = draw_cmd_text(&dl, d);
                                labels++;
                                const int kept = cut_kept(t);
                                if (kept >= 0) cut++;
                                EXPECT(kept < 0 || kept >= 3,
                                       "tile %d (%d px): label \"%s\" cut to %d character(s)", i,
                                       B->box.w, t, kept);
                                EXPECT(d->size >= small,
                                       "tile %d: label \"%s\" at %d px, under the heatmaps' %d", i,
                                       t, d->size, small);
                                const view_rect col = inq ? B->qcol : B->kcol;
                                EXPECT(d->x + fx_text_w(t, d->size) <= col.x + col.w,
                                       "label \"%s\" wider than its column " FX_RFMT, t, FX_R(col));
                            }
                        }
                        if (bare)
                            EXPECT(strstr(L.lines_legend_text[1], "label") != NULL,
                                   "%d tile(s) without labels; legend \"%s\" does not say so", bare,
                                   L.lines_legend_text[1]);
                    }
            fx_model_free(&fm);
        }
    print_message("  %ld labels in %ld tiles: %ld cut (each to >= 3 characters), %ld tiles "
                  "unlabelled\n",
                  labels, tiles, cut, unlabelled);
    EXPECT(labels > 1000, "expected labels drawn, got %ld", labels);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("labels readable");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_are_the_weights), cmocka_unit_test(test_hover_keeps_one_token),
        cmocka_unit_test(test_padding_grey),          cmocka_unit_test(test_overlaid_panel),
        cmocka_unit_test(test_compare_panes),         cmocka_unit_test(test_labels_readable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
