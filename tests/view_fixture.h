/* view_fixture.h: shared helpers for the headless view tests: a fake text
 * measurer (no font needed), hand-made token lists, a real computed model, and a
 * soft-check counter that records every failure with "expected vs got" and fails
 * the cmocka test at its end, so one run reports every broken property. */
#ifndef MHAVIZ_TEST_VIEW_FIXTURE_H
#define MHAVIZ_TEST_VIEW_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mha.h"
#include "tok.h"
#include "view.h"

/* --- the fake measurer: integer arithmetic so 0.55 * 20 is exactly 11 ------------ */

static inline int fx_cp_count(const char *s) {
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80) n++;
    return n;
}

/* ceil(0.55 * size) per code point, ceil(1.17 * size) per line */
static inline int fx_cp_w(int size) {
    return (55 * size + 99) / 100;
}

static inline int fx_line_h(int size) {
    return (117 * size + 99) / 100;
}

static inline int fx_text_w(const char *s, int size) {
    return fx_cp_count(s) * fx_cp_w(size);
}

static inline void fx_measure(void *ud, const char *text, int size, int bold, int *w, int *h) {
    (void)bold;
    if (ud) ++*(long *)ud;
    *w = fx_text_w(text, size);
    *h = fx_line_h(size);
}

/* --- hand-made tokens (varied lengths, > 10 code points, non-ASCII) -------------- */

static const char *const FX_WORDS[] = {
    "The",
    "transformer",
    "attends",
    "to",
    "every",
    "token",
    "simultaneously",
    ",",
    "and",
    "Z\xC3\xBCrich",
    "\xE6\x9D\xB1",
    "a",
    "internationalization",
    "didn't",
    ".",
    "heads",
    "\xC3\x84\xC3\x96\xC3\x9C\xC3\xA4\xC3\xB6\xC3\xBC\xC3\x9F\xC3\xA9\xC3\xA8\xC3\xAA\xC3\xAB",
    "of",
    "attention",
    "x",
};
#define FX_NWORDS ((int)(sizeof FX_WORDS / sizeof FX_WORDS[0]))

typedef struct {
    tok_list t;
    char **store;
} fx_toks;

static inline void fx_make_toks(fx_toks *ft, int n) {
    ft->store = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    assert_non_null(ft->store);
    for (int i = 0; i < n; i++) {
        const char *w = FX_WORDS[(i * 7 + 3) % FX_NWORDS];
        ft->store[i] = malloc(strlen(w) + 1);
        assert_non_null(ft->store[i]);
        strcpy(ft->store[i], w);
    }
    ft->t.count = n;
    ft->t.tokens = ft->store;
    ft->t.replaced = 0;
}

static inline void fx_free_toks(fx_toks *ft) {
    for (int i = 0; i < ft->t.count; i++) free(ft->store[i]);
    free(ft->store);
    memset(ft, 0, sizeof *ft);
}

/* A model computed for n tokens, d_model d, h heads, and the layer the view sees. */
typedef struct {
    fx_toks toks;
    mha_model *m;
    attn_layer layer;     /* m with toks (mha_layer_fill); fx_model_refresh after changing m */
    mha_layer_text *text; /* the layer's texts and notes */
} fx_model;

static inline void fx_model_refresh(fx_model *fm) {
    mha_layer_fill(&fm->layer, fm->text, fm->m, &fm->toks.t);
}

static inline void fx_model_make(fx_model *fm, int n, int d, int h, mha_mask mask) {
    fx_make_toks(&fm->toks, n);
    fm->m = mha_model_create();
    assert_non_null(fm->m);
    mha_config cfg = {.h = h, .d_model = d, .seed = 7, .mask = mask};
    char err[MHA_ERR_LEN] = "";
    int rc = mha_model_compute(fm->m, &cfg, &fm->toks.t, err, sizeof err);
    if (rc != 0)
        fail_msg("mha_model_compute(n=%d, d=%d, h=%d): expected 0, got %d (%s)", n, d, h, rc, err);
    fm->text = malloc(sizeof *fm->text);
    assert_non_null(fm->text);
    fx_model_refresh(fm);
}

static inline void fx_model_free(fx_model *fm) {
    mha_model_destroy(fm->m);
    free(fm->text);
    fx_free_toks(&fm->toks);
}

static inline void fx_state(view_state *s, const fx_model *fm, int w, int h) {
    memset(s, 0, sizeof *s);
    s->width = w;
    s->height = h;
    s->ui_scale = 1.0f;
    s->look.zoom = 1.0f;
    s->layer = &fm->layer;
    s->text_replaced = fm->toks.t.replaced;
    s->sample_name = "test sample";
    s->sample_index = 1;
    s->sample_count = 9;
    s->panel = VIEW_PANEL_ALL;
    s->hover_x = s->hover_y = -1;
    s->data_version = 1;
}

/* --- soft checks: count every check, record every failure ------------------------ */

static long fx_checks, fx_failures;
static char fx_where[256]; /* the case being checked, printed with each failure */
#define FX_MAX_PRINT 60
/* first failure per source line, so a summary shows each broken property once */
#define FX_MAX_LINES 64
static int fx_line_ids[FX_MAX_LINES];
static long fx_line_counts[FX_MAX_LINES];
static char fx_line_first[FX_MAX_LINES][700];
static int fx_line_n;

/* Planted-fault runs: failures are counted but neither printed nor kept. */
static int fx_quiet;
static inline long fx_sandbox_begin(void) {
    fx_quiet = 1;
    return fx_failures;
}
static inline long fx_sandbox_end(long before) {
    long caught = fx_failures - before;
    fx_failures = before;
    fx_quiet = 0;
    return caught;
}

static inline void fx_reset(void) {
    fx_checks = fx_failures = 0;
    fx_line_n = 0;
    fx_where[0] = '\0';
}

__attribute__((format(printf, 2, 3))) static inline void fx_fail(int line, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fx_failures++;
    if (fx_quiet) return;
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("MHAVIZ_TEST_VERBOSE") != NULL;
    if (verbose || fx_failures <= FX_MAX_PRINT)
        print_error("  FAIL line %d [%s]: %s\n", line, fx_where, msg);
    int i;
    for (i = 0; i < fx_line_n; i++)
        if (fx_line_ids[i] == line) break;
    if (i == fx_line_n && fx_line_n < FX_MAX_LINES) {
        fx_line_ids[i] = line;
        fx_line_counts[i] = 0;
        snprintf(fx_line_first[i], sizeof fx_line_first[i], "[%s] %s", fx_where, msg);
        fx_line_n++;
    }
    if (i < fx_line_n) fx_line_counts[i]++;
}

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        fx_checks++;                                                                               \
        if (!(cond)) fx_fail(__LINE__, __VA_ARGS__);                                               \
    } while (0)

#define EXPECT_INT(what, expected, got)                                                            \
    do {                                                                                           \
        long long e__ = (long long)(expected), g__ = (long long)(got);                             \
        EXPECT(e__ == g__, "%s: expected %lld, got %lld", (what), e__, g__);                       \
    } while (0)

/* Ends a test: prints a summary per failing check and fails if anything failed. */
static inline void fx_finish(const char *test) {
    print_message("%s: %ld checks, %ld failed\n", test, fx_checks, fx_failures);
    for (int i = 0; i < fx_line_n; i++)
        print_error("  check at line %d failed %ld times; first: %s\n", fx_line_ids[i],
                    fx_line_counts[i], fx_line_first[i]);
    if (fx_failures) fail_msg("%s: %ld of %ld checks failed", test, fx_failures, fx_checks);
}

/* --- rectangles ------------------------------------------------------------------ */

static inline int fx_rect_overlap(view_rect a, view_rect b) {
    if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0) return 0;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static inline int fx_rect_eq(view_rect a, view_rect b) {
    return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h;
}

#define FX_R(r) (r).x, (r).y, (r).w, (r).h
#define FX_RFMT "(x %d, y %d, w %d, h %d)"

#endif
