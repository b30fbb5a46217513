/* test_train_text.c: training mode's panels (train_panels.c, layout_train.c) with
 * the fake text measurer, no font, no window, no training: a hand-made view_train
 * in every state the title names (slow motion, full speed, paused, converged, its
 * budget, diverged, a replay, a figure, a figure's replay page, an error), with
 * and without the pruning bars measured, one run or several, h = 1 … 8, at sizes
 * from 1024 x 768 to 3840 x 2160 in landscape and portrait and zooms 80-300 %.
 * Every text drawn in the training panels (title, subtitle, plot titles and the
 * step axis's scale, ticks, legend, the bars' title, numbers and note):
 * - is never cut ("…" at its end): each has short forms that say the same;
 * - stays inside the panels' column and the window;
 * - overlaps no other text;
 * where the panels' column is at least 10 characters of the data's font wide
 * (portrait at 200 % zoom and more gives it less: counted, and left to layout.c).
 * The old panels cut the bars' title at 768 x 1024 ("Without one head (full:
 * 100…") and wrote "steps (log scale)" over the plot titles. */
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

enum {
    ST_SLOW,
    ST_FULL,
    ST_PAUSED,
    ST_CONVERGED,
    ST_BUDGET,
    ST_DIVERGED,
    ST_REPLAY,
    ST_FIGURE,
    ST_FIGURE_REPLAY,
    ST_ERROR,
    ST_COUNT
};
static const char *const STATE_NAME[ST_COUNT] = {
    "slow motion", "full speed", "paused", "converged",     "budget",
    "diverged",    "replay",     "figure", "figure replay", "error"};

#define POINTS 60
#define MOMENTS 12
static float steps[POINTS], losses[POINTS], accs[POINTS];
static long moment_steps[MOMENTS];
static float ablated[64];
static char labels[VIEW_TRAIN_RUNS][32];

/* A run of the task in state st, h heads, `runs` runs of it, pruning measured or not. */
static void make_train(view_train *t, int st, int h, int runs, int measured) {
    memset(t, 0, sizeof *t);
    for (int p = 0; p < POINTS; p++) {
        steps[p] = (float)(p * 200);
        losses[p] = 3.2f / (1.0f + 0.01f * (float)p * (float)p);
        accs[p] = (float)p / (POINTS - 1);
    }
    for (int m = 0; m < MOMENTS; m++) moment_steps[m] = m * 1000L;
    t->task = "pair";
    t->what = "target at i is (token at 0, token at i-1), one of 25: two heads can split the "
              "job, one head also solves it";
    t->error = st == ST_ERROR ? "d_model 30 is not divisible by h = 4 (the heads' width)" : "";
    t->running = st == ST_SLOW || st == ST_FULL;
    t->rate = st == ST_SLOW ? 10 : 0;
    t->step = 11800;
    t->steps_per_s = st == ST_SLOW ? 10.0f : 1268.0f;
    t->loss = 0.0123f;
    t->acc = 0.9987f;
    t->layers = 1;
    t->h = h;
    t->runs = runs;
    for (int i = 0; i < runs; i++) {
        snprintf(labels[i], sizeof labels[i], "pair h=%d d=%d", 1 << (i % 6), 32 << (i / 6));
        t->run[i] = (view_train_run){labels[i], POINTS, steps, losses, accs, i + 1};
    }
    t->other_runs = runs > 1 ? 3 : 0;
    t->stop = st == ST_CONVERGED ? 1 : st == ST_BUDGET ? 2 : st == ST_DIVERGED ? 3 : 0;
    t->stop_step = 11800;
    t->budget = 12000;
    t->patience = 200;
    t->stop_acc = 0.9987f;
    t->stop_loss = 1234.5f;
    t->pruning_valid = measured;
    t->pruning_step = 11800;
    for (int i = 0; i < h; i++) ablated[i] = i % 3 == 0 ? 0.4213f : i % 3 == 1 ? 0.9876f : 0.9985f;
    t->ablated_acc = ablated;
    t->pruned = h == 1 ? 0 : h / 3;
    t->pruned_acc = 0.5021f;
    t->moments = MOMENTS;
    t->moment_step = moment_steps;
    t->replay = st == ST_REPLAY || st == ST_FIGURE_REPLAY;
    t->moment = 7;
    t->live_step = 11800;
}

static void test_train_text_fits(void **state) {
    (void)state;
    fx_reset();
    static const int sizes[][2] = {{1024, 768}, {768, 1024},  {1280, 800},  {1600, 900},
                                   {900, 1600}, {1920, 1080}, {3840, 2160}, {2160, 3840}};
    static const float zooms[] = {0.8f, 1.0f, 1.5f, 2.0f, 3.0f};
    static const int hs[] = {1, 2, 4, 8};
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    long texts = 0, pictures = 0, narrow = 0;
    for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++) {
        fx_model fm;
        fx_model_make(&fm, 12, 32, hs[hi], MHA_MASK_CAUSAL);
        for (int st = 0; st < ST_COUNT; st++)
            for (int variant = 0; variant < 2; variant++) /* one run, unmeasured; several */
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                    for (size_t zi = 0; zi < sizeof zooms / sizeof zooms[0]; zi++) {
                        view_train t;
                        make_train(&t, st, hs[hi], variant ? 5 : 1, variant);
                        view_state s;
                        fx_state(&s, &fm, sizes[si][0], sizes[si][1]);
                        s.look.zoom = zooms[zi];
                        s.train = &t;
                        s.figure = st == ST_FIGURE || st == ST_FIGURE_REPLAY;
                        snprintf(fx_where, sizeof fx_where, "%s h=%d runs=%d %dx%d zoom=%.0f%%",
                                 STATE_NAME[st], hs[hi], t.runs, sizes[si][0], sizes[si][1],
                                 (double)zooms[zi] * 100);
                        view_layout_compute(&L, &s, fx_measure, NULL);
                        view_render(&dl, cache, &L, &s, fx_measure, NULL);
                        pictures++;
                        /* a column under 10 characters of the data's font (portrait at
                           200 % and more: layout.c keeps training mode's panels beside
                           the heads, at 40 % of the width) holds no title: counted */
                        if (L.train_title.w < 10 * L.font) {
                            narrow++;
                            continue;
                        }
                        const view_rect col = L.train_title;
                        const int right = col.x + col.w < s.width ? col.x + col.w : s.width;
                        const int top = col.y, bottom = L.train_note.y + L.train_note.h;
                        view_rect seen[160];
                        const char *seen_t[160];
                        int ns = 0;
                        for (int k = 0; k < dl.count; k++) {
                            const draw_cmd *d = &dl.cmds[k];
                            if (d->kind != DC_TEXT || d->x < col.x - 1 || d->y < top ||
                                d->y >= bottom)
                                continue;
                            const char *txt = draw_cmd_text(&dl, d);
                            const view_rect r = {d->x, d->y, fx_text_w(txt, d->size),
                                                 fx_line_h(d->size)};
                            texts++;
                            const size_t l = strlen(txt);
                            EXPECT(l < 3 || strcmp(txt + l - 3, "\xE2\x80\xA6") != 0,
                                   "text cut: \"%s\"", txt);
                            EXPECT(r.x + r.w <= right + 1,
                                   "\"%s\" " FX_RFMT " past the panels' right edge %d", txt,
                                   FX_R(r), right);
                            for (int q = 0; q < ns; q++)
                                EXPECT(!fx_rect_overlap(r, seen[q]),
                                       "\"%s\" " FX_RFMT " over \"%s\" " FX_RFMT, txt, FX_R(r),
                                       seen_t[q], FX_R(seen[q]));
                            if (ns < 160) seen[ns] = r, seen_t[ns++] = txt;
                        }
                    }
        fx_model_free(&fm);
    }
    print_message("  %ld texts in %ld pictures of training mode (%ld more with a column under "
                  "10 characters, not checked)\n",
                  texts, pictures - narrow, narrow);
    EXPECT(narrow * 5 < pictures, "%ld of %ld pictures with a column too narrow", narrow, pictures);
    EXPECT(texts > (pictures - narrow) * 8, "expected the panels' texts drawn: %ld in %ld pictures",
           texts, pictures - narrow);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("training text fits");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_text_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
