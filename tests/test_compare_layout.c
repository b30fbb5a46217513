/* test_compare_layout.c: the compare view lays out both panes alike
 * (layout_compare.c), with the fake text measurer, no font, no window. A view is
 * pinned and the live one differs from it in h (or d_model, or the text's length);
 * over window sizes from 1024 x 768 to 3840 x 2160 (landscape and portrait),
 * zooms 80-200 %, figures and the window, both panes must take one split of the
 * pane between the heads and the equation: the same split fraction, stacked or
 * not, bare or not, and an equation area of about the same size (within 8 % of
 * the pane's width, or height with the heads above it, as test_layout's share). The old layout kept
 * each pane's own split when the shared one would have shrunk the live pane's data: heads big on
 * one side and the equation big on the other. */
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

static void test_panes_alike(void **state) {
    (void)state;
    fx_reset();
    static const int sizes[][2] = {{1024, 768}, {768, 1024}, {1280, 800},  {1366, 768},
                                   {1600, 900}, {900, 1600}, {1920, 1080}, {3840, 2160}};
    static const float zooms[] = {0.8f, 1.0f, 1.5f, 2.0f};
    /* (pinned, live): h pinned then h live, d_model, tokens */
    static const struct {
        int hp, hl, dp, dl, np, nl;
    } pairs[] = {{4, 32, 64, 64, 7, 7},     {32, 4, 64, 64, 7, 7},   {4, 1, 64, 64, 12, 12},
                 {1, 8, 64, 64, 12, 12},    {2, 16, 64, 64, 24, 24}, {8, 2, 128, 128, 24, 24},
                 {4, 16, 256, 256, 59, 59}, {16, 1, 64, 64, 59, 59}, {4, 4, 64, 256, 12, 12},
                 {4, 4, 64, 64, 7, 59}};
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    long cases = 0, differ = 0;
    for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
        fx_model live, pinned;
        fx_model_make(&live, pairs[pi].nl, pairs[pi].dl, pairs[pi].hl, MHA_MASK_NONE);
        fx_model_make(&pinned, pairs[pi].np, pairs[pi].dp, pairs[pi].hp, MHA_MASK_NONE);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t zi = 0; zi < sizeof zooms / sizeof zooms[0]; zi++)
                for (int figure = 0; figure <= 1; figure++) {
                    view_state s, ps;
                    fx_state(&s, &live, sizes[si][0], sizes[si][1]);
                    fx_state(&ps, &pinned, sizes[si][0], sizes[si][1]);
                    s.look.zoom = zooms[zi];
                    s.figure = figure;
                    s.pinned = &ps;
                    s.pinned_layout = &PL;
                    snprintf(fx_where, sizeof fx_where,
                             "pinned h=%d d=%d n=%d | live h=%d d=%d n=%d %dx%d zoom=%.0f%% %s",
                             pairs[pi].hp, pairs[pi].dp, pairs[pi].np, pairs[pi].hl, pairs[pi].dl,
                             pairs[pi].nl, sizes[si][0], sizes[si][1], (double)zooms[zi] * 100,
                             figure ? "figure" : "window");
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    cases++;
                    if (!L.compare || !PL.shown_heads) {
                        EXPECT(0, "expected both panes laid out (compare %d, pinned heads %d)",
                               L.compare, PL.shown_heads);
                        continue;
                    }
                    const int split = L.split_frac != PL.split_frac ||
                                      L.split_stacked != PL.split_stacked ||
                                      L.split_bare != PL.split_bare;
                    /* the equation's extent within 8 % of the pane's (test_layout's
                       share): the taller heads grid of more heads leaves a little less */
                    const int ext = L.split_stacked ? L.compare_pane[1].h : L.compare_pane[1].w;
                    const int eq = L.split_stacked
                                       ? abs(PL.eq_area.h - L.eq_area.h) * 100 > 8 * ext
                                       : abs(PL.eq_area.w - L.eq_area.w) * 100 > 8 * ext;
                    differ += split || eq;
                    EXPECT(!split,
                           "split: live frac %d stacked %d bare %d, pinned frac %d stacked %d "
                           "bare %d",
                           L.split_frac, L.split_stacked, L.split_bare, PL.split_frac,
                           PL.split_stacked, PL.split_bare);
                    EXPECT(split || !eq,
                           "equation: live " FX_RFMT ", pinned " FX_RFMT " (stacked %d)",
                           FX_R(L.eq_area), FX_R(PL.eq_area), L.split_stacked);
                    view_render(&dl, cache, &L, &s, fx_measure, NULL); /* and it draws */
                    EXPECT(dl.count > 0, "nothing drawn");
                }
        fx_model_free(&live);
        fx_model_free(&pinned);
    }
    print_message("  %ld compare layouts, %ld with the panes split differently\n", cases, differ);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("panes alike");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_panes_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
