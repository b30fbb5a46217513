/* test_caption: the caption markup (markup.c) and the caption band's layout and
 * drawing (layout_caption.c, caption.c), headless with the fake measurer.
 * Markup: the runs of W_i^Q, √d_k, ℝ^{n×d_model}, d_model, ^-1, escapes and bold,
 * each against runs written out by hand; every broken form is refused with its
 * column (in characters, on its line). Layout: short, long and unbreakable captions
 * (and every caption of examples/lessons/NAME.lesson) at 1920x1080, 1600x900 and
 * 1280x720 pass caption_check (inside the window and the band, sizes above the
 * floor, the rest of the view above the band); the preferred sizes are 44 / 32 px
 * at 1920x1080 and scale with the window; the figure shrinks; the window's hints
 * never show in a figure; a very wide window puts the band beside the figure; compare
 * puts both panes above the band; a notice goes above the band; the
 * drawing list holds every run at its place and size. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "caption_check.h"
#include "view_fixture.h"

#ifndef MHAVIZ_SOURCE_DIR
#define MHAVIZ_SOURCE_DIR "."
#endif

/* --- markup -------------------------------------------------------------------- */

typedef struct {
    const char *text;
    int level, bold;
} want_run;

static void expect_runs(const char *markup, const want_run *want, int n) {
    view_markup_run runs[64];
    char err[128];
    int got = view_markup_runs(markup, runs, 64, err, sizeof err);
    if (got != n) {
        fprintf(stderr, "\"%s\": %d runs (%s):\n", markup, got, err);
        for (int i = 0; i < got; i++)
            fprintf(stderr, "  [%s] %d %d\n", runs[i].text, runs[i].level, runs[i].bold);
        fail_msg("\"%s\": expected %d runs, got %d", markup, n, got);
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(runs[i].text, want[i].text) || runs[i].level != want[i].level ||
            runs[i].bold != want[i].bold)
            fail_msg("\"%s\" run %d: expected [%s] level %d bold %d, got [%s] %d %d", markup, i,
                     want[i].text, want[i].level, want[i].bold, runs[i].text, runs[i].level,
                     runs[i].bold);
    }
    assert_int_equal(view_markup_check(markup, err, sizeof err), 0);
}

#define RUNS(m, ...)                                                                               \
    do {                                                                                           \
        static const want_run w_[] = {__VA_ARGS__};                                                \
        expect_runs(m, w_, (int)(sizeof w_ / sizeof w_[0]));                                       \
    } while (0)

static void test_markup_runs(void **st) {
    (void)st;
    RUNS("W_i^Q", {"W", 0, 0}, {"i", -1, 0}, {"Q", 1, 0});
    RUNS("\xE2\x88\x9A"
         "d_k",
         {"\xE2\x88\x9A"
          "d",
          0, 0},
         {"k", -1, 0});
    RUNS("\xE2\x84\x9D^{n\xC3\x97"
         "d_model}",
         {"\xE2\x84\x9D", 0, 0},
         {"n\xC3\x97"
          "d_model",
          1, 0});
    RUNS("d_model", {"d", 0, 0}, {"model", -1, 0});
    RUNS("K^T and W^-1", {"K", 0, 0}, {"T", 1, 0}, {" ", 0, 0}, {"and", 0, 0}, {" ", 0, 0},
         {"W", 0, 0},
         {"\xE2\x88\x92"
          "1",
          1, 0});
    RUNS("x_{i,j}^2", {"x", 0, 0}, {"i,j", -1, 0}, {"2", 1, 0});
    RUNS("a\\_b \\^ \\{x\\} \\\\ \\*", {"a_b", 0, 0}, {" ", 0, 0}, {"^", 0, 0}, {" ", 0, 0},
         {"{x}", 0, 0}, {" ", 0, 0}, {"\\", 0, 0}, {" ", 0, 0}, {"*", 0, 0});
    RUNS("*one head* wins", {"one", 0, 1}, {" ", 0, 1}, {"head", 0, 1}, {" ", 0, 0},
         {"wins", 0, 0});
    RUNS("*W^O*", {"W", 0, 1}, {"O", 1, 1});
    RUNS("head_i = softmax(Q_i K_i^T / \xE2\x88\x9A"
         "d_k) V_i",
         {"head", 0, 0}, {"i", -1, 0}, {" ", 0, 0}, {"=", 0, 0}, {" ", 0, 0}, {"softmax(Q", 0, 0},
         {"i", -1, 0}, {" ", 0, 0}, {"K", 0, 0}, {"i", -1, 0}, {"T", 1, 0}, {" ", 0, 0},
         {"/", 0, 0}, {" ", 0, 0},
         {"\xE2\x88\x9A"
          "d",
          0, 0},
         {"k", -1, 0}, {")", 0, 0}, {" ", 0, 0}, {"V", 0, 0}, {"i", -1, 0});
    RUNS("two\nlines", {"two", 0, 0}, {"\n", 0, 0}, {"lines", 0, 0});
    /* spaces inside a script stay in it (a script is never split) */
    RUNS("e^{a b}", {"e", 0, 0}, {"a b", 1, 0});
    RUNS("plain text, no markup: \xC3\xA9\xE2\x86\x92", {"plain", 0, 0}, {" ", 0, 0},
         {"text,", 0, 0}, {" ", 0, 0}, {"no", 0, 0}, {" ", 0, 0}, {"markup:", 0, 0}, {" ", 0, 0},
         {"\xC3\xA9\xE2\x86\x92", 0, 0});
    /* empty markup: no run */
    view_markup_run r[4];
    char err[128];
    assert_int_equal(view_markup_runs("", r, 4, err, sizeof err), 0);
    assert_int_equal(view_markup_runs(NULL, r, 4, err, sizeof err), 0);
    /* a long plain word continues in a second run */
    char longw[300];
    memset(longw, 'a', 250);
    longw[250] = '\0';
    int n = view_markup_runs(longw, r, 4, err, sizeof err);
    assert_int_equal(n, 3);
    assert_int_equal(strlen(r[0].text) + strlen(r[1].text) + strlen(r[2].text), 250);
    /* more runs than room: refused, not cut */
    assert_int_equal(view_markup_runs("a b c", r, 4, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
}

static void expect_error(const char *markup, int column, const char *what) {
    char err[160] = "", err2[160] = "", want[32];
    view_markup_run runs[32];
    assert_int_equal(view_markup_check(markup, err, sizeof err), -1);
    assert_int_equal(view_markup_runs(markup, runs, 32, err2, sizeof err2), -1);
    assert_string_equal(err, err2);
    snprintf(want, sizeof want, "column %d: ", column);
    if (strncmp(err, want, strlen(want)) || !strstr(err, what))
        fail_msg("\"%s\": expected \"%s...%s\", got \"%s\"", markup, want, what, err);
}

static void test_markup_errors(void **st) {
    (void)st;
    expect_error("x_", 2, "'_' with no subscript");
    expect_error("x^", 2, "'^' with no superscript");
    expect_error("x_ y", 2, "'_' with no subscript");
    expect_error("x^ y", 2, "'^'");
    expect_error("x^-", 2, "'^'");
    expect_error("_", 1, "'_'");
    expect_error("{a}", 1, "'{' opens a group only after _ or ^");
    expect_error("a}", 2, "'}' closes no group");
    expect_error("x^{a", 2 + 1, "'{' is never closed");
    expect_error("x^{}", 3, "empty group");
    expect_error("x^{a{b}}", 5, "groups do not nest");
    expect_error("x^{a}}", 6, "'}' closes no group");
    expect_error("*bold", 1, "'*' is never closed");
    expect_error("a *b* *c", 7, "'*' is never closed");
    expect_error("x^{*a}", 4, "'*' is never closed");
    expect_error("ab\\", 3, "'\\' at the end");
    expect_error("\\q", 1, "unknown escape");
    expect_error("x_{a\nb}", 3, "never closed on its line");
    /* columns count characters, not bytes, on their own line */
    expect_error("\xE2\x88\x9A\xE2\x84\x9D_", 3, "'_'");
    expect_error("fine line\n\xC3\xA9\xC3\xA9 ^", 4, "'^'");
    /* a check with no room for the message does not write past it */
    char tiny[4] = "xyz";
    assert_int_equal(view_markup_check("x_", tiny, sizeof tiny), -1);
    assert_int_equal(strlen(tiny), 3);
    assert_int_equal(view_markup_check("x_", NULL, 0), -1);
    assert_int_equal(view_markup_check("W_i^Q", NULL, 0), 0);
}

/* --- layout -------------------------------------------------------------------- */

static int fake_line(int size) {
    return fx_line_h(size);
}

static fx_model model;

static void lay(view_layout *L, view_state *s, int w, int h, const view_caption *cap, int figure) {
    fx_state(s, &model, w, h);
    s->zoom_base = view_zoom_for_size(w, h);
    s->look.zoom = s->zoom_base;
    s->look.present = 1;
    s->figure = figure;
    s->caption = cap;
    view_layout_compute(L, s, fx_measure, NULL);
}

static const char *const LONG_TEXT =
    "Each token is a row of X \xE2\x88\x88 \xE2\x84\x9D^{n\xC3\x97"
    "d_model}: the model "
    "computes every head from the same X, with its own W_i^Q, W_i^K and W_i^V.\n"
    "The scores Q_i K_i^T are divided by \xE2\x88\x9A"
    "d_k so that their spread does not grow "
    "with the width of a head, then *softmax* turns each row into weights that sum to one.\n"
    "head_i = softmax(Q_i K_i^T / \xE2\x88\x9A"
    "d_k) V_i, and MultiHead = Concat W^O brings "
    "the heads back to d_model columns.\nA fourth line that says a little more about it all.";

static void check_case(const char *what, int w, int h, const view_caption *cap, int figure) {
    static view_layout L;
    view_state s;
    lay(&L, &s, w, h, cap, figure);
    char why[512];
    if (caption_check(&L, &s, fake_line, why, sizeof why))
        fail_msg("%s at %dx%d: %s", what, w, h, why);
}

static void test_layout_cases(void **st) {
    (void)st;
    fx_model_make(&model, 12, 32, 4, MHA_MASK_NONE);
    static char unbreakable[200];
    memset(unbreakable, 'W', 150);
    unbreakable[150] = '\0';
    const view_caption caps[] = {
        {"Multi-head attention, step by step", "X: the input, n \xC3\x97 d_model",
         "Each token is a row of X \xE2\x88\x88 \xE2\x84\x9D^{n\xC3\x97"
         "d_model}.",
         1, 12, 0, 0},
        {"A title long enough to need the whole width of the band and more than that, "
         "because teachers write long titles sometimes, very long ones indeed, yes",
         "Scores \xC3\xB7 \xE2\x88\x9A"
         "d_k: why the scaling keeps the softmax from saturating "
         "as the heads grow wider",
         LONG_TEXT, 7, 12, 1, 1},
        {NULL, unbreakable, unbreakable, 2, 3, 0, 0},
        {"", "", "", 0, 0, 0, 0},
        {"t", "Only a heading", NULL, 1, 1, 0, 0},
        {"t", NULL, "Only text, *bold* and W^O.", 40, 40, 0, 0},
        {"broken", "x_ broken {markup", "still *drawn", 1, 2, 0, 0},
    };
    const int sizes[][2] = {{1920, 1080}, {1600, 900}, {1280, 720}, {3840, 2160}};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int fig = 0; fig < 2; fig++) {
                char what[64];
                snprintf(what, sizeof what, "caption %zu (figure %d)", c, fig);
                check_case(what, sizes[z][0], sizes[z][1], &caps[c], fig);
            }
    /* every caption of the built-in lessons */
    static cc_step steps[512];
    const int n = cc_lessons(cc_lessons_dir(MHAVIZ_SOURCE_DIR "/examples/lessons"), steps, 512);
    for (int i = 0; i < n; i++) {
        view_caption cap = {steps[i].title, steps[i].heading, steps[i].text, i + 1, n, 0, 0};
        char err[160];
        if (view_markup_check(steps[i].heading, err, sizeof err) ||
            view_markup_check(steps[i].text, err, sizeof err))
            fail_msg("%s: \"%s\": %s", steps[i].file, steps[i].heading, err);
        for (size_t z = 0; z < 2; z++) {
            char what[700];
            snprintf(what, sizeof what, "%s: \"%s\"", steps[i].file, steps[i].heading);
            check_case(what, sizes[z][0], sizes[z][1], &cap, 1);
        }
    }
    printf("laid out %d lesson captions\n", n);
    fx_model_free(&model);
}

static void test_layout_sizes(void **st) {
    (void)st;
    fx_model_make(&model, 12, 32, 4, MHA_MASK_NONE);
    static view_layout L, bare;
    view_state s;
    const view_caption cap = {"Lesson", "Heading W_i^Q", "One line of text.", 3, 8, 0, 0};
    /* the sizes: 44 / 32 px at 1920x1080, in proportion to the window; floors 36 / 28,
       never under 1/40 of the height (the heading's floor 36/28 of the text's) */
    struct {
        int w, h, heading, text, hf, tf;
    } want[] = {
        {1920, 1080, 44, 32, 36, 28}, {1600, 900, 37, 27, 30, 24},  {1280, 720, 29, 21, 24, 19},
        {3840, 2160, 88, 64, 72, 56}, {1920, 1200, 44, 32, 38, 30}, {2560, 1080, 44, 32, 36, 28},
        {1024, 768, 25, 20, 25, 20},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int a, b, c, d;
        view_caption_sizes(want[i].w, want[i].h, &a, &b, &c, &d);
        /* independent: 44 k, 32 k rounded; 36 k, 28 k rounded up, k = min(w/1920, h/1080);
           the text's floor at least h / 40 rounded up, the heading's 36/28 of it */
        const double k = fmin(want[i].w / 1920.0, want[i].h / 1080.0);
        const int tf = (int)fmax(ceil(28 * k - 1e-3), ceil(want[i].h / 40.0));
        const int hf = (int)fmax(ceil(36 * k - 1e-3), tf * 36 / 28);
        CHECK_INT("heading", (int)fmax(lround(44 * k), hf), a);
        CHECK_INT("text", (int)fmax(lround(32 * k), tf), b);
        CHECK_INT("heading floor", hf, c);
        CHECK_INT("text floor", tf, d);
        CHECK_INT("heading table", want[i].heading, a);
        CHECK_INT("text table", want[i].text, b);
        CHECK_INT("heading floor table", want[i].hf, c);
        CHECK_INT("text floor table", want[i].tf, d);
    }
    /* a short caption at 1920x1080 takes the preferred sizes, its runs at them */
    lay(&L, &s, 1920, 1080, &cap, 1);
    CHECK_INT("heading size", 44, L.caption.heading_size);
    CHECK_INT("text size", 32, L.caption.text_size);
    CHECK_INT("not at the floor", 0, L.caption.at_floor);
    CHECK_INT("under the figure", 0, L.caption.side);
    CHECK_INT("lines", 2, L.caption.lines);
    CHECK_STR("step", "step 3 of 8", L.caption.step_text);
    CHECK_STR("title", "Lesson", L.caption.title_text);
    CHECK_STR("no hint in a figure", "", L.caption.hint_text);
    int heading_runs = 0, subs = 0, sups = 0;
    for (int i = 0; i < L.caption.run_count; i++) {
        const view_caption_run *r = &L.caption.run[i];
        heading_runs += r->heading;
        if (r->level < 0 && r->heading) {
            subs++;
            CHECK_INT("subscript size", 44 * 72 / 100, r->size);
        }
        if (r->level > 0 && r->heading) {
            sups++;
            CHECK_INT("superscript size", 44 * 72 / 100, r->size);
        }
        if (!r->heading && !r->level) CHECK_INT("text size of a run", 32, r->size);
    }
    CHECK_INT("heading runs: Heading, ' ' dropped, W, i, Q", 4, heading_runs);
    CHECK_INT("one subscript", 1, subs);
    CHECK_INT("one superscript", 1, sups);
    /* the segments: 8, the strip's width, in order, not touching */
    for (int i = 0; i < 8; i++) {
        view_rect a = view_caption_segment(&L.caption, i);
        CHECK_TRUE("segment inside the strip",
                   a.x >= L.caption.strip.x && a.x + a.w <= L.caption.strip.x + L.caption.strip.w);
        if (i) {
            view_rect b = view_caption_segment(&L.caption, i - 1);
            CHECK_TRUE("segments apart", b.x + b.w < a.x);
        }
    }
    /* the figure shrinks: the same view without a caption has taller heads */
    view_state s2;
    lay(&bare, &s2, 1920, 1080, NULL, 1);
    CHECK_INT("no caption, no band", 0, bare.caption.shown);
    CHECK_TRUE("the band leaves the figure less height",
               L.heads_area.y + L.heads_area.h < bare.heads_area.y + bare.heads_area.h ||
                   L.heads[0].map.h < bare.heads[0].map.h);
    CHECK_TRUE("the band is under 36 % of the height", L.caption.band.h <= 1080 * 36 / 100);
    /* the window's hints: F5 and recording in the window, never in a figure */
    const view_caption hinted = {"Lesson", "Heading", "Text.", 2, 5, 1, 1};
    lay(&L, &s, 1920, 1080, &hinted, 0);
    CHECK_STR("hint in the window", "F5: back to step 2", L.caption.hint_text);
    CHECK_TRUE("recording in the window", strstr(L.caption.rec_text, "recording") != NULL);
    lay(&L, &s, 1920, 1080, &hinted, 1);
    CHECK_STR("no hint in a figure", "", L.caption.hint_text);
    CHECK_STR("no recording in a figure", "", L.caption.rec_text);
    /* a long caption at 1280x720 goes down to the floor, not below */
    const view_caption longc = {
        "Lesson", "A heading that is long enough to wrap at least once", LONG_TEXT, 1, 2, 0, 0};
    lay(&L, &s, 1280, 720, &longc, 1);
    char why[512];
    if (caption_check(&L, &s, fake_line, why, sizeof why)) fail_msg("long 1280x720: %s", why);
    CHECK_TRUE("long: more than 5 lines", L.caption.lines > 5);
    CHECK_TRUE("long: at most the preferred sizes", L.caption.text_size <= 21);
    /* a very wide window: the band is a column right of the figure */
    lay(&L, &s, 2560, 1080, &cap, 1);
    CHECK_INT("wide: beside", 1, L.caption.side);
    if (caption_check(&L, &s, fake_line, why, sizeof why)) fail_msg("wide: %s", why);
    CHECK_TRUE("wide: right of the figure", L.caption.band.x >= L.caption.figure.w);
    /* compare: both panes in the room the band leaves */
    static view_layout pinned_layout;
    view_state pinned;
    lay(&L, &s, 1920, 1080, NULL, 0);
    pinned = s;
    pinned.caption = &cap; /* a pinned view's own caption is never drawn in its pane */
    s.pinned = &pinned;
    s.pinned_layout = &pinned_layout;
    s.caption = &cap;
    view_layout_compute(&L, &s, fx_measure, NULL);
    if (caption_check(&L, &s, fake_line, why, sizeof why)) fail_msg("compare: %s", why);
    CHECK_INT("compare laid out", 1, L.compare);
    for (int i = 0; i < 2; i++)
        CHECK_TRUE("compare pane above the band",
                   L.compare_pane[i].y + L.compare_pane[i].h <= L.caption.band.y);
    CHECK_TRUE("compare banner above the band",
               L.compare_banner.y + L.compare_banner.h <= L.caption.band.y);
    CHECK_INT("no caption in the pinned pane", 0, pinned_layout.caption.shown);
    fx_model_free(&model);
    fx_finish("test_layout_sizes");
}

/* The drawing list holds each run at its place, size and weight, and the band. */
static void test_draw(void **st) {
    (void)st;
    fx_model_make(&model, 12, 32, 4, MHA_MASK_NONE);
    static view_layout L;
    view_state s;
    const view_caption cap = {"Lesson", "Heading *W_i^Q*", "Text with d_model and \\*.", 3, 8, 0,
                              1};
    lay(&L, &s, 1920, 1080, &cap, 0);
    draw_list dl;
    draw_list_init(&dl);
    view_cache *cache = view_cache_create();
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    for (int i = 0; i < L.caption.run_count; i++) {
        const view_caption_run *r = &L.caption.run[i];
        int found = 0;
        for (int k = 0; k < dl.count && !found; k++) {
            const draw_cmd *c = &dl.cmds[k];
            found = c->kind == DC_TEXT && c->x == r->x && c->y == r->y && c->size == r->size &&
                    c->bold == r->bold && !strcmp(draw_cmd_text(&dl, c), r->text);
        }
        if (!found) fail_msg("run \"%s\" not drawn at %d,%d size %d", r->text, r->x, r->y, r->size);
    }
    const char *need[] = {"step 3 of 8", "Lesson", "F5: back to step 3", "*."};
    for (size_t j = 0; j < sizeof need / sizeof need[0]; j++) {
        int found = 0;
        for (int k = 0; k < dl.count && !found; k++)
            found = dl.cmds[k].kind == DC_TEXT && !strcmp(draw_cmd_text(&dl, &dl.cmds[k]), need[j]);
        if (!found) fail_msg("\"%s\" not drawn", need[j]);
    }
    int band = 0; /* the band's panel */
    for (int k = 0; k < dl.count; k++)
        band |= dl.cmds[k].kind == DC_FILL &&
                fx_rect_eq((view_rect){dl.cmds[k].x, dl.cmds[k].y, dl.cmds[k].w, dl.cmds[k].h},
                           L.caption.band);
    assert_true(band);
    /* a notice goes above the band, not over it */
    s.toast = "saved /tmp/some-file.png";
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    int toast = 0;
    for (int k = 0; k < dl.count; k++) {
        const draw_cmd *c = &dl.cmds[k];
        if (c->kind != DC_TEXT || strcmp(draw_cmd_text(&dl, c), s.toast)) continue;
        toast = 1;
        CHECK_TRUE("the notice above the band", c->y + fx_line_h(c->size) <= L.caption.band.y);
    }
    CHECK_TRUE("the notice is drawn", toast);
    view_cache_destroy(cache);
    draw_list_free(&dl);
    fx_model_free(&model);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markup_runs),  cmocka_unit_test(test_markup_errors),
        cmocka_unit_test(test_layout_cases), cmocka_unit_test(test_layout_sizes),
        cmocka_unit_test(test_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
