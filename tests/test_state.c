#define _POSIX_C_SOURCE 200809L
/* test_state.c: every key and button of the README's table as an action on the
 * SDL-free state machine (src/app/state/state.c). Each test presses the real key (the
 * key-to-action map is part of what is tested), then asserts the state change
 * against an independent expectation and the message the status line shows. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "cli.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "view_fixture.h"

/* A state as the window starts it: options parsed to their defaults, sample k. */
static app_state *make_state(int h, int d, int sample, const char *text) {
    cli_options o = fx_options();
    o.sample = sample;
    o.text = text;
    return fx_app_state(&o, h, d, NULL, NULL, 0); /* init leaves the caller's tokens empty */
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static int has(const char *hay, const char *needle) {
    return hay && strstr(hay, needle) != NULL;
}

/* the next divisor of d above (dir > 0) or below h, computed here by brute force */
static int next_divisor(int h, int d, int dir) {
    for (int k = h + dir; k >= 1 && k <= d; k += dir)
        if (d % k == 0) return k;
    return 0;
}

/* --- defaults in one place -------------------------------------------------------- */

static void test_init_defaults(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 0, NULL);
    CHECK_INT("width", 1600, s->width);
    CHECK_INT("height", 900, s->height);
    CHECK_INT("theme light", 0, s->look.theme);
    CHECK_INT("colormap viridis", CMAP_VIRIDIS, s->look.cmap);
    CHECK_INT("PNG x2", 2, s->png_scale);
    CHECK_NEAR("zoom", 1.0, s->look.zoom, 0);
    CHECK_INT("sample 1", 1, s->sample);
    CHECK_INT("h", 4, s->cfg.h);
    CHECK_INT("d_model", 64, s->cfg.d_model);
    CHECK_INT("model n = tokens", s->toks.count, s->m->n);
    CHECK_TRUE("redraw wanted", s->dirty);
    CHECK_STR("no status", "", s->status);
    app_state_destroy(s);

    /* options win over defaults */
    app_state *t = app_state_create(fx_measure, NULL);
    cli_options o;
    memset(&o, 0, sizeof o);
    o.theme = 1;
    o.colormap = CMAP_GREYS;
    o.scale = 3;
    o.size_w = 1000;
    o.size_h = 700;
    o.text = "a b c";
    tok_list toks = {0};
    int total;
    char err[256];
    assert_int_equal(tok_split(&toks, o.text, MHA_MAX_N, &total, err, sizeof err), 0);
    mha_config cfg = {.h = 2, .d_model = 8, .seed = 5};
    assert_int_equal(app_state_init(t, &o, &toks, &cfg, err, sizeof err), 0);
    CHECK_INT("theme dark", 1, t->look.theme);
    CHECK_INT("greys", CMAP_GREYS, t->look.cmap);
    CHECK_INT("PNG x3", 3, t->png_scale);
    CHECK_INT("--size w", 1000, t->width);
    CHECK_INT("--size h", 700, t->height);
    CHECK_INT("custom text", 0, t->sample);
    CHECK_STR("custom text kept", "a b c", t->custom);
    CHECK_INT("seed", 5, (int)t->cfg.seed);
    app_state_destroy(t);
    app_state_destroy(NULL);
}

/* --- h and d_model ------------------------------------------------------------------ */

static void test_h_keys(void **st) {
    (void)st;
    static const int ds[] = {8, 24, 64, 96, 384};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        int d = ds[i];
        app_state *s = make_state(1, d, 2, NULL);
        int h = 1, steps = 0;
        while (next_divisor(h, d, +1)) {
            float w0 = s->m->w_q[d + 1];
            CHECK_TRUE("Up redraws", press(s, APP_KEY_UP, 0));
            h = next_divisor(h, d, +1);
            CHECK_INT("Up: next divisor of d_model", h, s->cfg.h);
            CHECK_INT("model follows", h, s->m->cfg.h);
            CHECK_INT("d_k", d / h, s->m->d_k);
            CHECK_NEAR("weights kept across h", w0, s->m->w_q[d + 1], 0);
            CHECK_STR("no status", "", s->status);
            steps++;
        }
        CHECK_INT("reached h = d_model", d, s->cfg.h);
        press(s, APP_KEY_UP, 0);
        CHECK_INT("Up at h = d_model refused", d, s->cfg.h);
        CHECK_TRUE("status says why", has(s->status, "most heads"));
        while (steps-- > 0) {
            int want = next_divisor(s->cfg.h, d, -1);
            press(s, APP_KEY_DOWN, 0);
            CHECK_INT("Down: previous divisor", want, s->cfg.h);
        }
        CHECK_INT("back to h = 1", 1, s->cfg.h);
        press(s, APP_KEY_DOWN, 0);
        CHECK_INT("Down at h = 1 refused", 1, s->cfg.h);
        CHECK_TRUE("status says why", has(s->status, "fewest"));
        app_state_destroy(s);
    }
}

static void test_d_keys(void **st) {
    (void)st;
    app_state *s = make_state(3, 24, 1, NULL);
    /* sizes on the ladder that 3 divides, from 24 up */
    static const int up[] = {48, 96, 192, 384, 768, 1536, 3072};
    for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
        press(s, APP_KEY_RIGHT, 0);
        CHECK_INT("Right: next ladder size h divides", up[i], s->cfg.d_model);
        CHECK_INT("h kept", 3, s->cfg.h);
        CHECK_INT("W^Q resized", up[i], s->m->cfg.d_model);
    }
    press(s, APP_KEY_RIGHT, 0);
    CHECK_INT("no larger size divisible by 3", 3072, s->cfg.d_model);
    CHECK_TRUE("status says why", has(s->status, "no larger d_model"));
    press(s, APP_KEY_LEFT, 0);
    CHECK_INT("Left", 1536, s->cfg.d_model);
    CHECK_STR("status cleared by a change", "", s->status);
    app_state_destroy(s);

    app_state *t = make_state(8, 8, 1, NULL);
    press(t, APP_KEY_LEFT, 0);
    CHECK_INT("Left refused below h", 8, t->cfg.d_model);
    CHECK_TRUE("status says lower h first", has(t->status, "lower h first"));
    app_state_destroy(t);
}

/* --- samples and text ------------------------------------------------------------ */

static void check_tokens_of(app_state *s, const char *text, const char *what) {
    tok_list t = {0};
    int total;
    char err[256];
    assert_int_equal(tok_split(&t, text, MHA_MAX_N, &total, err, sizeof err), 0);
    CHECK_INT(what, t.count, s->toks.count);
    for (int i = 0; i < t.count && i < s->toks.count; i++)
        CHECK_STR(what, t.tokens[i], s->toks.tokens[i]);
    CHECK_INT("model n", t.count, s->m->n);
    tok_free(&t);
}

static void test_sample_keys(void **st) {
    (void)st;
    int count = samples_count();
    app_state *s = make_state(4, 64, 1, NULL);
    for (int i = 2; i <= count + 1; i++) {
        unsigned long v = s->data_version;
        press(s, APP_KEY_TAB, 0);
        int want = i > count ? 1 : i;
        CHECK_INT("Tab: next sample, wrapping", want, s->sample);
        check_tokens_of(s, samples_get(want - 1)->text, "Tab: tokens of the sample");
        CHECK_TRUE("numbers changed", s->data_version != v);
    }
    press(s, APP_KEY_TAB, APP_MOD_SHIFT);
    CHECK_INT("Shift+Tab wraps back", count, s->sample);
    check_tokens_of(s, samples_get(count - 1)->text, "Shift+Tab: tokens");
    app_state_destroy(s);
}

static void type(app_state *s, const char *text) {
    app_action a = {.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
}

static void test_text_editing(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 3, NULL);
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("Enter opens the text field", 1, s->editing);
    CHECK_STR("field starts with the current text", samples_get(2)->text, s->edit);
    /* keys now edit, they do not act */
    CHECK_INT("M types, it does not toggle the mask", ACT_NONE, app_key_action(s, 'm', 0).kind);
    press(s, 'u', APP_MOD_CTRL);
    CHECK_STR("Ctrl+U clears", "", s->edit);
    type(s, "Z\xC3\xBCrich ist sch\xC3\xB6n");
    press(s, APP_KEY_BACKSPACE, 0);
    CHECK_STR("Backspace removes one character (2 bytes)", "Z\xC3\xBCrich ist sch\xC3\xB6",
              s->edit);
    press(s, APP_KEY_BACKSPACE, 0);
    CHECK_STR("then the UTF-8 sequence whole", "Z\xC3\xBCrich ist sch", s->edit);
    type(s, "\xC3\xB6n .");
    app_action pre = {.kind = ACT_EDIT_PREEDIT, .text = "\xE3\x81\x8B"};
    app_apply(s, &pre);
    CHECK_STR("IME pre-edit kept apart", "\xE3\x81\x8B", s->preedit);
    CHECK_INT("Ctrl+V asks the window for the clipboard", ACT_EDIT_INSERT,
              app_key_action(s, 'v', APP_MOD_CTRL).kind);
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("Enter applies", 0, s->editing);
    CHECK_INT("custom text", 0, s->sample);
    check_tokens_of(s, "Z\xC3\xBCrich ist sch\xC3\xB6n .", "typed tokens");

    /* Escape cancels: the text stays what it was */
    press(s, APP_KEY_RETURN, 0);
    type(s, " more words");
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Escape closes the field", 0, s->editing);
    CHECK_INT("the app did not quit", 0, s->quit);
    check_tokens_of(s, "Z\xC3\xBCrich ist sch\xC3\xB6n .", "tokens unchanged after Escape");

    /* empty text is refused and the old text stays */
    press(s, APP_KEY_RETURN, 0);
    press(s, 'u', APP_MOD_CTRL);
    press(s, APP_KEY_RETURN, 0);
    CHECK_TRUE("status says why", s->status[0] != '\0');
    check_tokens_of(s, "Z\xC3\xBCrich ist sch\xC3\xB6n .", "tokens unchanged after empty text");

    /* more than 512 tokens are cut, and the status line says so */
    press(s, APP_KEY_RETURN, 0);
    press(s, 'u', APP_MOD_CTRL);
    for (int i = 0; i < 600; i++) type(s, "w ");
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("cut to 512", MHA_MAX_N, s->m->n);
    CHECK_TRUE("status says cut", has(s->status, "cut to the first 512 of its 600"));

    /* the field is bounded */
    press(s, APP_KEY_RETURN, 0);
    press(s, APP_KEY_END, 0); /* keep the text: typing appends */
    char big[APP_EDIT_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    type(s, big);
    CHECK_TRUE("full field says so", has(s->status, "full"));
    CHECK_TRUE("field stays a C string", strlen(s->edit) < APP_EDIT_MAX);
    app_state_destroy(s);
}

static void test_text_cursor(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 0, "one two");
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("opens with the text selected", 1, s->edit_selected);
    CHECK_INT("token count shown", 2, s->edit_tokens);
    type(s, "x");
    CHECK_STR("typing replaces the selection", "x", s->edit);
    CHECK_INT("count follows", 1, s->edit_tokens);
    press(s, 'u', APP_MOD_CTRL);
    type(s, "ab \xC3\xA9t\xC3\xA9 cd");
    press(s, APP_KEY_LEFT, 0);
    press(s, APP_KEY_LEFT, 0);
    type(s, "X");
    CHECK_STR("Left moves by a character", "ab \xC3\xA9t\xC3\xA9 Xcd", s->edit);
    press(s, APP_KEY_LEFT, APP_MOD_CTRL);
    press(s, APP_KEY_LEFT, APP_MOD_CTRL);
    type(s, "[");
    CHECK_STR("Ctrl+Left moves by a word", "ab [\xC3\xA9t\xC3\xA9 Xcd", s->edit);
    press(s, APP_KEY_RIGHT, 0);
    press(s, APP_KEY_DELETE, 0);
    CHECK_STR("Delete takes the character after (2 bytes)", "ab [\xC3\xA9\xC3\xA9 Xcd", s->edit);
    press(s, APP_KEY_BACKSPACE, 0);
    CHECK_STR("Backspace takes the one before", "ab [\xC3\xA9 Xcd", s->edit);
    press(s, APP_KEY_HOME, 0);
    type(s, "<");
    CHECK_STR("Home", "<ab [\xC3\xA9 Xcd", s->edit);
    press(s, APP_KEY_RIGHT, APP_MOD_CTRL);
    type(s, "|");
    CHECK_STR("Ctrl+Right to the next word", "<ab |[\xC3\xA9 Xcd", s->edit);
    press(s, APP_KEY_END, 0);
    type(s, ">");
    CHECK_STR("End", "<ab |[\xC3\xA9 Xcd>", s->edit);
    press(s, APP_KEY_END, 0);
    press(s, APP_KEY_DELETE, 0);
    CHECK_STR("Delete at the end does nothing", "<ab |[\xC3\xA9 Xcd>", s->edit);
    press(s, APP_KEY_HOME, 0);
    press(s, APP_KEY_BACKSPACE, 0);
    press(s, APP_KEY_LEFT, 0);
    CHECK_INT("nothing before the start", 0, s->edit_cursor);
    app_action at = {.kind = ACT_EDIT_CURSOR, .arg = 7}; /* inside the 2-byte e-acute */
    app_apply(s, &at);
    CHECK_INT("a click never lands inside a character", 6, s->edit_cursor);
    at.arg = 1000;
    app_apply(s, &at);
    CHECK_INT("nor past the end", (int)strlen(s->edit), s->edit_cursor);
    CHECK_INT("tokens: < ab | [ e-acute Xcd >", 7, s->edit_tokens);
    /* the first move ends a fresh selection at its side */
    press(s, APP_KEY_ESCAPE, 0);
    press(s, APP_KEY_RETURN, 0);
    press(s, APP_KEY_LEFT, 0);
    CHECK_INT("Left on a selection: cursor at the start", 0, s->edit_cursor);
    CHECK_INT("selection gone", 0, s->edit_selected);
    type(s, "so ");
    /* a click in the text puts the cursor there: the field's first character */
    view_state vs;
    view_editor E;
    app_view(s, &vs);
    view_editor_layout(&E, &vs, app_layout(s), fx_measure, NULL);
    app_action ck = {.kind = ACT_CLICK, .x = E.text_x + 1, .y = E.text_y + 1};
    app_apply(s, &ck);
    CHECK_INT("click at the text's start", 0, s->edit_cursor);
    type(s, "and ");
    ck.x = E.box.x - 5; /* outside the field: nothing */
    app_apply(s, &ck);
    CHECK_INT("a click outside leaves the cursor", 4, s->edit_cursor);
    CHECK_INT("and the field open", 1, s->editing);
    press(s, APP_KEY_RETURN, 0);
    check_tokens_of(s, "and so one two", "inserted at the start");
    app_state_destroy(s);
}

/* --- recompute keys: seed, mask, scale ------------------------------------------- */

static void test_seed_key(void **st) {
    (void)st;
    app_state *s = make_state(4, 32, 1, NULL);
    float *want = malloc(32 * 32 * sizeof *want);
    press(s, 'r', 0);
    CHECK_INT("R: seed + 1", 2, (int)s->cfg.seed);
    mha_weights_init(want, 2, 32, 0);
    CHECK_TRUE("W^Q drawn for the new seed", memcmp(want, s->m->w_q, 32 * 32 * 4) == 0);
    press(s, 'R', APP_MOD_SHIFT);
    CHECK_INT("Shift+R is R too", 3, (int)s->cfg.seed);
    free(want);
    app_state_destroy(s);
}

static void test_mask_key(void **st) {
    (void)st;
    app_state *s = make_state(2, 16, 2, NULL);
    const int n = s->m->n, h = s->cfg.h;
    press(s, 'm', 0);
    CHECK_INT("M: causal", MHA_MASK_CAUSAL, s->cfg.mask);
    double above = 0.0;
    for (int i = 0; i < h; i++)
        for (int r = 0; r < n; r++)
            for (int c = r + 1; c < n; c++) above += s->m->attn[((size_t)i * n + r) * n + c];
    CHECK_NEAR("no weight on later keys", 0.0, above, 0.0);
    CHECK_NEAR("first row attends to itself", 1.0, s->m->attn[0], 1e-6);
    press(s, 'm', 0);
    CHECK_INT("M again: none", MHA_MASK_NONE, s->cfg.mask);
    CHECK_TRUE("weight on later keys again", s->m->attn[1] > 0.0f);
    app_state_destroy(s);
}

static void test_scale_key(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    float scaled = s->m->scores[1];
    press(s, 'n', 0);
    CHECK_INT("N: unscaled", 1, s->cfg.no_scale);
    CHECK_NEAR("scores times sqrt(d_k)", scaled * sqrt(16.0), s->m->scores[1], 1e-4);
    press(s, 'n', 0);
    CHECK_INT("N again: scaled", 0, s->cfg.no_scale);
    CHECK_NEAR("scores back", scaled, s->m->scores[1], 1e-6);
    app_state_destroy(s);
}

/* --- how it is shown: colormap, theme, zoom, pages, focus, help ---------------------- */

/* app_keys lists exactly the keys the key map gives a meaning: a key mapped in the
   ordinary state, in the text field or under the help overlay (any modifier) is
   listed, and every listed key means something in one of them */
static int key_listed(int key) {
    int n = 0;
    const int *k = app_keys(&n);
    for (int i = 0; i < n; i++)
        if (k[i] == key) return 1;
    return 0;
}

static void test_key_list(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 0, NULL);
    int codes[0x80 + 32], nc = 0;
    for (int c = 0x20; c < 0x7F; c++)
        if (c < 'A' || c > 'Z') codes[nc++] = c; /* upper case maps as lower case */
    for (int c = APP_KEY_UP; c <= APP_KEY_DELETE; c++) codes[nc++] = c;
    int listed_used[0x80 + 32] = {0};
    for (int mode = 0; mode < 2; mode++) { /* 0 ordinary, 1 text field open */
        if (mode == 1) press(s, APP_KEY_RETURN, 0);
        CHECK_INT("the mode", mode, s->editing);
        for (int i = 0; i < nc; i++)
            for (int mods = 0; mods < 4; mods++) {
                app_action a = app_key_action(s, codes[i], mods);
                if (a.kind == ACT_NONE) continue;
                listed_used[i] = 1;
                if (!key_listed(codes[i]))
                    fail_msg("key 0x%x (mods %d) maps to action %d but app_keys leaves it out",
                             codes[i], mods, (int)a.kind);
            }
    }
    int n = 0;
    const int *k = app_keys(&n);
    for (int j = 0; j < n; j++) {
        int found = 0;
        for (int i = 0; i < nc; i++)
            if (codes[i] == k[j]) found = listed_used[i];
        if (!found) fail_msg("app_keys lists 0x%x, which maps to nothing", k[j]);
    }
    app_state_destroy(s);
}

static void test_view_keys(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    int seen = 0;
    for (int i = 1; i <= CMAP_COUNT; i++) {
        s->dirty = 0;
        CHECK_TRUE("C redraws", press(s, 'c', 0));
        CHECK_INT("C: next colormap", i % CMAP_COUNT, s->look.cmap);
        seen |= 1 << s->look.cmap;
    }
    CHECK_INT("C visits every colormap", (1 << CMAP_COUNT) - 1, seen);
    view_state vs;
    press(s, 'c', 0);
    app_view(s, &vs);
    CHECK_INT("the view draws the colormap", s->look.cmap, vs.look.cmap);
    press(s, 't', 0);
    CHECK_INT("T: dark", 1, s->look.theme);
    app_view(s, &vs);
    CHECK_INT("the view draws the theme", 1, vs.look.theme);
    press(s, 't', 0);
    CHECK_INT("T: light", 0, s->look.theme);

    /* zoom: ladder 80 % ... 300 %, Ctrl+0 resets, text in the layout grows */
    int font100 = app_layout(s)->font;
    press(s, '=', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+= 110 %", 1.1, s->look.zoom, 1e-6);
    CHECK_STR("status says the zoom", "zoom 110%", s->status);
    CHECK_TRUE("layout text grows", app_layout(s)->font > font100);
    for (int i = 0; i < 20; i++) press(s, '+', APP_MOD_CTRL);
    CHECK_NEAR("capped at 300 %", 3.0, s->look.zoom, 1e-6);
    press(s, '0', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+0 100 %", 1.0, s->look.zoom, 1e-6);
    CHECK_INT("layout text back", font100, app_layout(s)->font);
    for (int i = 0; i < 20; i++) press(s, '-', APP_MOD_CTRL);
    CHECK_NEAR("floor 80 %", 0.8, s->look.zoom, 1e-6);
    CHECK_STR("status", "zoom 80%", s->status);
    app_state_destroy(s);
}

static void test_pages(void **st) {
    (void)st;
    /* 64 heads of 59 tokens at 800x600 cannot fit at a pixel a cell: the grid pages */
    app_state *s = make_state(64, 64, 7, NULL);
    app_action rs = {.kind = ACT_RESIZE, .x = 800, .y = 600, .f = 1.0f};
    app_apply(s, &rs);
    int pages = app_layout(s)->pages;
    CHECK_TRUE("several pages", pages > 1);
    int first0 = app_layout(s)->first_head;
    press(s, APP_KEY_PAGEDOWN, 0);
    CHECK_INT("PgDn: page 2", 1, s->look.page);
    CHECK_TRUE("other heads shown", app_layout(s)->first_head > first0);
    for (int i = 0; i < pages + 3; i++) press(s, APP_KEY_PAGEDOWN, 0);
    app_layout(s);
    CHECK_INT("clamped at the last page", pages - 1, s->look.page);
    for (int i = 0; i < pages + 3; i++) press(s, APP_KEY_PAGEUP, 0);
    CHECK_INT("PgUp stops at page 1", 0, s->look.page);
    app_state_destroy(s);
}

/* A long text (a --text-file's): the figure has its first 512 tokens, the status
 * says it was cut, and the text field holds as much as fits, never half a
 * character. */
static void test_long_text(void **st) {
    (void)st;
    static char text[3000 * 7 + 1];
    for (int i = 0; i < 3000; i++)
        memcpy(text + 7 * i, "\xC3\xA9\xC3\xA9\xC3\xA9 ", 7); /* "ééé " */
    app_state *s = make_state(4, 64, 0, text);
    CHECK_INT("512 tokens", MHA_MAX_N, s->toks.count);
    CHECK_TRUE("the status says it was cut",
               has(s->status, "text cut to the first 512 of its 3000 tokens"));
    const size_t n = strlen(s->custom);
    CHECK_TRUE("the field holds what fits", n > APP_EDIT_MAX - 8 && n < APP_EDIT_MAX);
    CHECK_TRUE("and ends between characters",
               memcmp(s->custom, text, n) == 0 && ((unsigned char)text[n] & 0xC0) != 0x80);
    app_state_destroy(s);
}

/* Compare: the pinned pane pages on its own, with Shift+PgUp/PgDn; the live page
 * stays. Pinned h = 64 beside a live h = 1 at 800x600: the pinned heads page. */
static void test_pinned_pages(void **st) {
    (void)st;
    app_state *s = make_state(64, 64, 7, NULL);
    app_action rs = {.kind = ACT_RESIZE, .x = 800, .y = 600, .f = 1.0f};
    app_apply(s, &rs);
    press(s, 'b', 0);
    CHECK_TRUE("B pins h = 64", s->pin != NULL);
    while (s->cfg.h > 1) press(s, APP_KEY_DOWN, 0);
    app_layout(s);
    const int pages = app_compare_pages(s, NULL);
    CHECK_TRUE("the pinned heads page", pages > 1);
    view_state vs;
    app_view(s, &vs);
    const int first0 = vs.pinned_layout->first_head;
    press(s, APP_KEY_PAGEDOWN, APP_MOD_SHIFT);
    app_layout(s);
    CHECK_INT("Shift+PgDn: the pinned page 2", 1, s->pinned_page);
    CHECK_INT("the live page stays", 0, s->look.page);
    app_view(s, &vs);
    CHECK_TRUE("other pinned heads shown", vs.pinned_layout->first_head > first0);
    for (int i = 0; i < pages + 3; i++) press(s, APP_KEY_PAGEDOWN, APP_MOD_SHIFT);
    app_layout(s);
    CHECK_INT("clamped at the pinned view's last page", pages - 1, s->pinned_page);
    for (int i = 0; i < pages + 3; i++) press(s, APP_KEY_PAGEUP, APP_MOD_SHIFT);
    CHECK_INT("Shift+PgUp stops at page 1", 0, s->pinned_page);
    press(s, 'b', 0); /* unpinned: Shift+PgDn pages the live view (h = 1: one page) */
    press(s, APP_KEY_PAGEDOWN, APP_MOD_SHIFT);
    app_layout(s);
    CHECK_INT("no pin: the live page, clamped", 0, s->look.page);
    app_state_destroy(s);
}

/* P: presentation mode. The view has no controls and no status line; Escape
 * closes what is inside it first (help, focus), then leaves it, and never quits. */
static void test_presentation(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    CHECK_TRUE("the window has buttons", app_layout(s)->buttons[BTN_HELP].present);
    CHECK_TRUE("P redraws", press(s, 'p', 0));
    CHECK_INT("P: presentation on", 1, s->look.present);
    CHECK_TRUE("status says how to leave", has(s->status, "Esc"));
    view_state vs;
    app_view(s, &vs);
    CHECK_INT("the view presents", 1, vs.look.present);
    const view_layout *L = app_layout(s);
    int buttons = 0;
    for (int b = 0; b < BTN_COUNT; b++) buttons += L->buttons[b].present;
    CHECK_INT("no buttons", 0, buttons);
    CHECK_INT("no status line", 0, L->status.w);
    CHECK_INT("every head shown", 4, L->shown_heads);
    /* keys still work while presenting */
    press(s, APP_KEY_UP, 0);
    CHECK_INT("Up: h = 8 while presenting", 8, s->cfg.h);
    CHECK_INT("still presenting", 1, s->look.present);
    /* a pointer over a head cell is drawn: hover marks the state dirty */
    L = app_layout(s);
    view_rect map = L->heads[1].map;
    s->dirty = 0;
    app_action hv = {.kind = ACT_HOVER, .x = map.x + map.w / 2, .y = map.y + map.h / 3};
    app_apply(s, &hv);
    CHECK_INT("hover over a cell redraws", 1, s->dirty);
    CHECK_INT("the pointer is on head 2", 1, s->hover.head);
    /* Escape: help first, then focus, then presentation; never quits */
    press(s, '2', 0);
    press(s, APP_KEY_F1, 0);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc closes the help", 0, s->help);
    CHECK_INT("presentation kept", 1, s->look.present);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc leaves the focus", 0, s->look.focus);
    CHECK_INT("presentation kept", 1, s->look.present);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc leaves the presentation", 0, s->look.present);
    CHECK_INT("and does not quit", 0, s->quit);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc with nothing open never quits", 0, s->quit);
    press(s, 'p', 0);
    press(s, 'p', 0);
    CHECK_INT("P twice leaves it", 0, s->look.present);
    /* a figure saved while presenting is what the window shows: presented, at the
       presentation's text floor; saved otherwise, at the zoom of its size */
    static view_layout FL;
    app_figure_view(s, APP_SAVE_VIEW, &vs);
    CHECK_INT("figure, not presenting: not presented", 0, vs.look.present);
    view_layout_compute(&FL, &vs, s->measure, s->measure_ud);
    const int floor_px = view_text_floor(vs.width, vs.height);
    CHECK_INT("premise: the window's smallest text under the floor at 100 %", 1,
              FL.font_small < floor_px);
    press(s, 'p', 0);
    app_figure_view(s, APP_SAVE_VIEW, &vs);
    CHECK_INT("figure, presenting: presented", 1, vs.look.present);
    CHECK_INT("figure: a figure", 1, vs.figure);
    view_layout_compute(&FL, &vs, s->measure, s->measure_ud);
    CHECK_INT("figure, presenting: its smallest text at the floor at least", 1,
              FL.font_small >= floor_px);
    app_state_destroy(s);
}

/* Ctrl+0 returns to the zoom of the window's size (3840x2160: 200 %); a zoom the
 * window cannot show the data at says which it shows. */
static void test_zoom_base(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    s->look.zoom = s->zoom_base = 2.0f;
    s->layout_valid = 0;
    press(s, '=', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+= from 200 %", 2.5, s->look.zoom, 1e-6);
    press(s, '0', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+0 returns to the display's 200 %", 2.0, s->look.zoom, 1e-6);
    view_state vs;
    app_view(s, &vs);
    CHECK_NEAR("the view knows the base", 2.0, vs.zoom_base, 1e-6);
    /* the base follows the window: 1600x900 is 100 %, 3840x2160 200 % */
    app_action small = {.kind = ACT_RESIZE, .x = 1600, .y = 900, .f = 1.0f};
    app_apply(s, &small);
    press(s, '0', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+0 at 1600x900", 1.0, s->look.zoom, 1e-6);
    app_action big = {.kind = ACT_RESIZE, .x = 3840, .y = 2160, .f = 1.0f};
    app_apply(s, &big);
    CHECK_NEAR("a resize keeps the zoom", 1.0, s->look.zoom, 1e-6);
    press(s, '0', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+0 at 3840x2160", 2.0, s->look.zoom, 1e-6);
    app_action hidpi = {.kind = ACT_RESIZE, .x = 3840, .y = 2160, .f = 2.0f};
    app_apply(s, &hidpi);
    press(s, '0', APP_MOD_CTRL);
    CHECK_NEAR("Ctrl+0 at 3840x2160 device pixels, 2 per layout pixel", 1.0, s->look.zoom, 1e-6);
    app_state_destroy(s);
    /* 800x600 cannot hold one head at its 100 % size past some zoom */
    app_state *t = make_state(4, 64, 1, NULL);
    app_action rs = {.kind = ACT_RESIZE, .x = 800, .y = 600, .f = 1.0f};
    app_apply(t, &rs);
    for (int i = 0; i < 8; i++) press(t, '=', APP_MOD_CTRL);
    CHECK_NEAR("300 %", 3.0, t->look.zoom, 1e-6);
    const view_layout *L = app_layout(t);
    CHECK_TRUE("the data is shown at less than 300 %", L->data_zoom < 3.0f - 1e-3f);
    CHECK_TRUE("the status line says so", has(t->status, "shows the data at"));
    app_state_destroy(t);
}

/* --page K: an export's figure starts at page K, and a page it does not have is
 * a usage error (2) naming the pages there are. */
static void test_page_option(void **st) {
    (void)st;
    for (int k = 1; k <= 3; k++) {
        app_state *s = app_state_create(fx_measure, NULL);
        cli_options o;
        memset(&o, 0, sizeof o);
        o.theme = o.colormap = -1;
        o.mode = CLI_EXPORT;
        o.size_w = 800, o.size_h = 600;
        o.page = k;
        tok_list toks = {0};
        int total = 0;
        char err[256] = "";
        assert_int_equal(tok_split(&toks, samples_get(6)->text, MHA_MAX_N, &total, err, sizeof err),
                         0);
        mha_config cfg = {.h = 64, .d_model = 64, .seed = 1};
        int rc = app_state_init(s, &o, &toks, &cfg, err, sizeof err);
        view_state vs;
        app_figure_view(s, APP_SAVE_EXPORT, &vs);
        vs.look.page = 0;
        static view_layout L;
        view_layout_compute(&L, &vs, fx_measure, NULL);
        if (k <= L.pages) {
            CHECK_INT("--page within the pages: init ok", 0, rc);
            CHECK_INT("the state starts at that page", k - 1, s->look.page);
            app_figure_view(s, APP_SAVE_EXPORT, &vs); /* at the state's page */
            int per_page = L.per_page;
            view_layout_compute(&L, &vs, fx_measure, NULL);
            CHECK_INT("and its figure shows it", (k - 1) * per_page, L.first_head);
        } else {
            CHECK_INT("--page past the pages: usage error", 2, rc);
            CHECK_TRUE("the message names --page", has(err, "--page"));
        }
        tok_free(&toks);
        app_state_destroy(s);
    }
}

static void test_focus_help_escape_quit(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    press(s, '3', 0);
    CHECK_INT("3: focus head 3", 3, s->look.focus);
    CHECK_INT("layout shows the focus", 3, app_layout(s)->focus);
    press(s, '9', 0);
    CHECK_INT("9 refused with h = 4", 3, s->look.focus);
    CHECK_STR("status says why", "there is no head 9: h = 4", s->status);
    press(s, APP_KEY_UP, 0); /* h = 8 keeps head 3 */
    CHECK_INT("focus kept while it exists", 3, s->look.focus);
    press(s, APP_KEY_DOWN, 0);
    press(s, APP_KEY_DOWN, 0); /* h = 2: no head 3 */
    CHECK_INT("focus dropped when its head goes", 0, s->look.focus);
    press(s, '2', 0);

    press(s, APP_KEY_F1, 0);
    CHECK_INT("F1 opens help", 1, s->help);
    press(s, APP_KEY_F1, 0);
    CHECK_INT("F1 closes help", 0, s->help);
    press(s, '?', 0);
    CHECK_INT("? opens help", 1, s->help);
    press(s, '?', 0);
    press(s, '/', APP_MOD_SHIFT);
    CHECK_INT("Shift+/ opens help", 1, s->help);
    /* keys behind the overlay only close it */
    int cmap = s->look.cmap, h = s->cfg.h;
    press(s, 'c', 0);
    CHECK_INT("C behind help closes it", 0, s->help);
    CHECK_INT("and does not change the colormap", cmap, s->look.cmap);
    press(s, APP_KEY_F1, 0);
    press(s, APP_KEY_UP, 0);
    CHECK_INT("Up behind help closes it", 0, s->help);
    CHECK_INT("and does not change h", h, s->cfg.h);
    press(s, '/', 0);
    CHECK_INT("/ alone does not open help", 0, s->help);

    press(s, APP_KEY_F1, 0);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc closes help first", 0, s->help);
    CHECK_INT("focus still on", 2, s->look.focus);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc then leaves the focus", 0, s->look.focus);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Esc with nothing open never quits", 0, s->quit);
    CHECK_STR("it says how to quit", "nothing to close (Ctrl+Q quits)", s->status);
    press(s, APP_KEY_F1, 0);
    press(s, 'q', APP_MOD_CTRL);
    CHECK_INT("Ctrl+Q quits even behind help", 1, s->quit);

    app_state *t = make_state(4, 64, 1, NULL);
    press(t, 'q', 0);
    CHECK_INT("Q alone does not quit", 0, t->quit);
    press(t, 'q', APP_MOD_CTRL);
    CHECK_INT("Ctrl+Q quits", 1, t->quit);
    press(t, APP_KEY_F11, 0);
    CHECK_INT("F11 fullscreen", 1, t->fullscreen);
    press(t, APP_KEY_F11, 0);
    CHECK_INT("F11 again windowed", 0, t->fullscreen);
    app_state_destroy(t);
    app_state_destroy(s);
}

/* --- saving ---------------------------------------------------------------------- */

static void test_save_keys(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    CHECK_INT("nothing pending", APP_SAVE_NONE, app_take_save(s));
    press(s, 's', APP_MOD_CTRL);
    CHECK_INT("Ctrl+S: the view", APP_SAVE_VIEW, app_take_save(s));
    CHECK_INT("taken once", APP_SAVE_NONE, app_take_save(s));
    press(s, 's', APP_MOD_CTRL | APP_MOD_SHIFT);
    app_save_kind k = app_take_save(s);
    CHECK_INT("Ctrl+Shift+S: a panel", APP_SAVE_PANEL, k);
    view_state vs;
    app_figure_view(s, k, &vs);
    CHECK_INT("no head focused: the equation", VIEW_PANEL_EQUATION, vs.panel);
    press(s, '2', 0);
    app_figure_view(s, APP_SAVE_PANEL, &vs);
    CHECK_INT("head 2 focused: that head", VIEW_PANEL_HEAD, vs.panel);
    CHECK_INT("head 2", 2, vs.panel_head);
    app_notify(s, "saved x.png", 0);
    press(s, APP_KEY_F1, 0);
    s->hover_x = s->hover_y = 10;
    app_figure_view(s, APP_SAVE_VIEW, &vs);
    CHECK_INT("figure: no help", 0, vs.help);
    CHECK_TRUE("figure: no notice", vs.toast == NULL);
    CHECK_INT("figure: no pointer", -1, vs.hover_x);
    CHECK_INT("figure flag", 1, vs.figure);

    for (int want = 3; want != 2; want = want % 4 + 1) {
        press(s, 0, 0); /* no key: nothing */
        app_do(s, ACT_PNG_SCALE);
        CHECK_INT("PNG button cycles 1..4", want, s->png_scale);
        char msg[64];
        snprintf(msg, sizeof msg, "saves PNGs at %d", want);
        CHECK_TRUE("status names the multiplier", has(s->status, msg));
    }
    app_state_destroy(s);
}

static void test_notices(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    app_tick(s, 1000.0);
    CHECK_INT("no timer", -1, app_next_timeout_ms(s));
    app_notify(s, "saved /tmp/a.png", 0);
    view_state vs;
    app_view(s, &vs);
    CHECK_STR("notice shown", "saved /tmp/a.png", vs.toast);
    CHECK_INT("expires in 6 s", 6000, app_next_timeout_ms(s));
    CHECK_INT("still there at 6.9 s", 0, app_tick(s, 6999.0));
    CHECK_TRUE("gone at 7 s", app_tick(s, 7000.0));
    app_view(s, &vs);
    CHECK_TRUE("no notice", vs.toast == NULL);
    app_notify(s, "cannot write /x: Permission denied", 1);
    CHECK_STR("errors go to the status line", "cannot write /x: Permission denied", s->status);
    CHECK_TRUE("the error expires too", app_next_timeout_ms(s) > 0);
    app_notify(s, "saved /tmp/b.png", 0);
    CHECK_STR("a success replaces the error", "", s->status);
    app_view(s, &vs);
    CHECK_STR("and is shown alone", "saved /tmp/b.png", vs.toast);
    app_notify(s, "cannot write /y: No space left on device", 1);
    app_view(s, &vs);
    CHECK_TRUE("an error replaces the success", vs.toast == NULL);
    app_tick(s, 20000.0);
    CHECK_STR("the error goes after a while", "", s->status);
    /* an action's answer expires as well, and replaces a notice */
    app_notify(s, "saved /tmp/c.png", 0);
    press(s, '9', 0);
    CHECK_STR("refusal shown", "there is no head 9: h = 4", s->status);
    app_view(s, &vs);
    CHECK_TRUE("the notice made way", vs.toast == NULL);
    CHECK_INT("refusal expires in 6 s", 6000, app_next_timeout_ms(s));
    app_tick(s, 26000.0);
    CHECK_STR("refusal gone", "", s->status);
    app_state_destroy(s);
}

/* --- the pointer: hover, clicks on heads and buttons, resize ------------------------ */

static void centre(view_rect r, int *x, int *y) {
    *x = r.x + r.w / 2;
    *y = r.y + r.h / 2;
}

static void test_pointer(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 2, NULL);
    const view_layout *L = app_layout(s);
    const int n = s->m->n;
    /* hover the centre of cell (row 2, col 5) of head 3 */
    view_rect map = L->heads[2].map;
    int x = map.x + (int)((5.5 * map.w) / n), y = map.y + (int)((2.5 * map.h) / n);
    app_action hv = {.kind = ACT_HOVER, .x = x, .y = y};
    CHECK_TRUE("hover on a new cell redraws", app_apply(s, &hv));
    CHECK_INT("hit a head cell", HIT_HEAD_CELL, s->hover.kind);
    CHECK_INT("head 3", 2, s->hover.head);
    CHECK_INT("row 2", 2, s->hover.row);
    CHECK_INT("col 5", 5, s->hover.col);
    CHECK_INT("same cell: no redraw", 0, app_apply(s, &hv));
    app_action lv = {.kind = ACT_LEAVE};
    CHECK_TRUE("leaving redraws", app_apply(s, &lv));
    CHECK_INT("nothing hovered", HIT_NONE, s->hover.kind);

    /* a click on a head focuses it */
    app_action ck = {.kind = ACT_CLICK, .x = x, .y = y};
    app_apply(s, &ck);
    CHECK_INT("click focuses head 3", 3, s->look.focus);
    press(s, APP_KEY_ESCAPE, 0);

    /* every button does what its key does */
    static const struct {
        int button;
        const char *what;
    } buttons[] = {{BTN_MASK, "mask"},   {BTN_SCALE, "scale"}, {BTN_CMAP, "colormap"},
                   {BTN_THEME, "theme"}, {BTN_SEED, "seed"},   {BTN_H_UP, "h up"},
                   {BTN_D_UP, "d up"},   {BTN_HELP, "help"},   {BTN_ZOOM_IN, "zoom in"},
                   {BTN_SAVE, "save"},   {BTN_TEXT, "text"},   {BTN_SAMPLE_NEXT, "sample"}};
    for (size_t i = 0; i < sizeof buttons / sizeof buttons[0]; i++) {
        L = app_layout(s);
        CHECK_TRUE(buttons[i].what, L->buttons[buttons[i].button].present);
        int bx, by;
        centre(L->buttons[buttons[i].button].r, &bx, &by);
        mha_config before = s->cfg;
        int cmap = s->look.cmap, theme = s->look.theme, sample = s->sample;
        float zoom = s->look.zoom;
        app_action b = {.kind = ACT_CLICK, .x = bx, .y = by};
        app_apply(s, &b);
        switch (buttons[i].button) {
        case BTN_MASK: CHECK_TRUE("mask button", s->cfg.mask != before.mask); break;
        case BTN_SCALE: CHECK_TRUE("scale button", s->cfg.no_scale != before.no_scale); break;
        case BTN_CMAP: CHECK_TRUE("cmap button", s->look.cmap != cmap); break;
        case BTN_THEME: CHECK_TRUE("theme button", s->look.theme != theme); break;
        case BTN_SEED: CHECK_TRUE("seed button", s->cfg.seed == before.seed + 1); break;
        case BTN_H_UP: CHECK_INT("h button", next_divisor(before.h, 64, 1), s->cfg.h); break;
        case BTN_D_UP: CHECK_INT("d button", 96, s->cfg.d_model); break;
        case BTN_HELP:
            CHECK_INT("help button", 1, s->help);
            app_apply(s, &ck); /* a click anywhere closes help, and does only that */
            CHECK_INT("click closes help", 0, s->help);
            CHECK_INT("the click behind help did not focus a head", 0, s->look.focus);
            break;
        case BTN_ZOOM_IN: CHECK_TRUE("zoom button", s->look.zoom > zoom); break;
        case BTN_SAVE: CHECK_INT("save button", APP_SAVE_VIEW, app_take_save(s)); break;
        case BTN_TEXT:
            CHECK_INT("text button", 1, s->editing);
            app_apply(s, &b);
            CHECK_INT("clicks do nothing while editing", 1, s->editing);
            press(s, APP_KEY_ESCAPE, 0);
            break;
        case BTN_SAMPLE_NEXT: CHECK_INT("sample button", sample + 1, s->sample); break;
        }
    }

    /* resize: the layout follows */
    app_action rs = {.kind = ACT_RESIZE, .x = 1024, .y = 700, .f = 1.0f};
    CHECK_TRUE("resize redraws", app_apply(s, &rs));
    L = app_layout(s);
    CHECK_INT("width", 1024, s->width);
    CHECK_TRUE("status line inside the new height", L->status.y + L->status.h <= 700);
    app_action bad = {.kind = ACT_RESIZE, .x = 0, .y = 700};
    CHECK_INT("a zero size is ignored", 0, app_apply(s, &bad));
    CHECK_INT("width kept", 1024, s->width);
    app_state_destroy(s);
}

/* --- the lesson's keys ---------------------------------------------------------- */

static void test_lesson_pad_and_temperature(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL); /* 7 tokens */
    const int n0 = s->m->n;
    press(s, 'e', 0);
    CHECK_INT("E pads: n + max(2, n/4)", n0 + 2, s->m->n);
    CHECK_INT("the text is unchanged", n0, s->m->n_real);
    CHECK_TRUE("status says padded", has(s->status, "padded to 9"));
    for (int i = 0; i < s->cfg.h; i++)
        for (int r = 0; r < s->m->n; r++)
            for (int c = n0; c < s->m->n; c++)
                CHECK_NEAR("no weight on a [PAD] key", 0.0,
                           s->m->attn[((size_t)i * s->m->n + r) * s->m->n + c], 0.0);
    press(s, APP_KEY_TAB, 0);    /* a longer sample: the padding follows the text */
    const int t = s->toks.count; /* 12 tokens: 3 more */
    CHECK_INT("padded anew for the new text: a quarter more", t + (t / 4 > 2 ? t / 4 : 2), s->m->n);
    CHECK_INT("sample 2 has 12 tokens", 12, t);
    press(s, 'e', 0);
    CHECK_INT("E again: no padding", s->toks.count, s->m->n);

    /* temperature: the ladder, and the scores divided by T */
    float s1 = s->m->scores[1];
    press(s, ']', 0);
    CHECK_NEAR("] : T = 1.5", 1.5, s->cfg.temperature, 1e-6);
    CHECK_NEAR("scores / 1.5", s1 / 1.5, s->m->scores[1], 1e-5);
    CHECK_TRUE("status says flatter", has(s->status, "flatter"));
    press(s, '[', 0);
    press(s, '[', 0);
    CHECK_NEAR("[ [ : T = 0.75", 0.75, s->cfg.temperature, 1e-6);
    CHECK_TRUE("status says sharper", has(s->status, "sharper"));
    for (int i = 0; i < 20; i++) press(s, '[', 0);
    CHECK_NEAR("floor 0.05", 0.05, s->cfg.temperature, 1e-6);
    CHECK_TRUE("status says lowest", has(s->status, "lowest"));
    for (int i = 0; i < 20; i++) press(s, ']', 0);
    CHECK_NEAR("ceiling 20", 20.0, s->cfg.temperature, 1e-6);
    app_state_destroy(s);
}

static void test_lesson_weights_and_ablation(void **st) {
    (void)st;
    app_state *s = make_state(6, 96, 2, NULL);
    press(s, 'w', 0);
    CHECK_INT("W: designed heads", MHA_WEIGHTS_PATTERNS, s->cfg.weights);
    CHECK_STR("head 1 is named", "previous", mha_head_pattern_name(s->m, 0));
    /* head 1 'previous': every row but the first puts its most weight on r - 1 */
    const int n = s->m->n;
    for (int r = 1; r < n; r++) {
        const float *row = s->m->attn + (size_t)r * n;
        int best = 0;
        for (int c = 1; c < n; c++)
            if (row[c] > row[best]) best = c;
        CHECK_INT("previous head's argmax", r - 1, best);
    }
    press(s, 'w', 0);
    CHECK_INT("W again: random", MHA_WEIGHTS_RANDOM, s->cfg.weights);

    press(s, 'x', 0);
    CHECK_INT("X with no focus: nothing off", 0, mha_config_ablated_count(&s->cfg));
    CHECK_TRUE("status says focus first", has(s->status, "focus a head first"));
    press(s, '2', 0);
    press(s, 'x', 0);
    CHECK_INT("X: the focused head off", 1, mha_config_is_ablated(&s->cfg, 1));
    const int d = s->cfg.d_model, dk = s->m->d_k;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < dk; k++)
            CHECK_NEAR("its band of Concat is 0", 0.0, s->m->concat[(size_t)r * d + dk + k], 0.0);
    CHECK_TRUE("MultiHead changed", mha_ablation_delta(s->m) > 0.0);
    CHECK_TRUE("status gives the change", has(s->status, "MultiHead changes by"));
    view_state vs;
    press(s, 'd', 0);
    app_view(s, &vs);
    CHECK_INT("D: difference view", 1, vs.look.diff);
    CHECK_TRUE("the difference is there", vs.out_diff != NULL);
    for (size_t k = 0; k < (size_t)n * d; k++)
        CHECK_NEAR("difference = out - out_full", s->m->out[k] - s->m->out_full[k], vs.out_diff[k],
                   0.0);
    press(s, 'x', 0);
    CHECK_INT("X again: on", 0, mha_config_is_ablated(&s->cfg, 1));

    /* the x in head 3's title */
    press(s, APP_KEY_ESCAPE, 0);
    const view_layout *L = app_layout(s);
    view_rect xb = view_head_off_box(L, &vs, 2);
    CHECK_TRUE("head 3 has an x", xb.w > 0);
    app_action ck = {.kind = ACT_CLICK, .x = xb.x + xb.w / 2, .y = xb.y + xb.h / 2};
    app_apply(s, &ck);
    CHECK_INT("click on the x: head 3 off", 1, mha_config_is_ablated(&s->cfg, 2));
    CHECK_INT("and no focus", 0, s->look.focus);
    press(s, 'x', APP_MOD_SHIFT);
    CHECK_INT("Shift+X: every head on", 0, mha_config_ablated_count(&s->cfg));
    app_apply(s, &ck);
    press(s, APP_KEY_UP, 0);
    CHECK_INT("h changes: the heads are new, every one on", 0, mha_config_ablated_count(&s->cfg));
    CHECK_TRUE("status says so", has(s->status, "every head on again"));
    app_state_destroy(s);
}

static void test_lesson_view_keys(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    view_state vs;
    app_view(s, &vs);
    CHECK_INT("lesson panels on by default", 1, vs.lesson);
    CHECK_TRUE("entropy derived", vs.head_entropy != NULL);
    CHECK_TRUE("divergence derived", vs.head_divergence != NULL);
    press(s, 'i', 0);
    app_view(s, &vs);
    CHECK_INT("I hides them", 0, vs.lesson);
    press(s, 'v', 0);
    app_view(s, &vs);
    CHECK_INT("V: values", 1, vs.look.values);
    for (int k = 1; k <= 3; k++) {
        press(s, 'k', 0);
        app_view(s, &vs);
        CHECK_INT("K cycles the contrast", k % 3, vs.look.contrast);
    }
    press(s, '.', 0);
    CHECK_INT("step without focus: nothing", 0, s->look.step);
    CHECK_TRUE("status says focus first", has(s->status, "focus view"));
    press(s, '3', 0);
    for (int k = 1; k <= 9; k++) {
        press(s, '.', 0);
        CHECK_INT(". steps forward", k, s->look.step);
        app_view(s, &vs);
        CHECK_TRUE("the head's raw scores are derived", vs.step_raw != NULL);
        CHECK_TRUE("the layout shows the stages", app_layout(s)->steps.shown);
    }
    press(s, '.', 0);
    CHECK_INT("past the last stage: back to the whole head", 0, s->look.step);
    press(s, ',', 0);
    CHECK_INT(", steps back (wrapping)", 9, s->look.step);
    app_figure_view(s, APP_SAVE_PANEL, &vs);
    CHECK_INT("Ctrl+Shift+S saves the steps", VIEW_PANEL_STEPS, vs.panel);
    CHECK_INT("of head 3", 3, vs.panel_head);
    /* raw scores really are Q_3 K_3^T */
    const int n = s->m->n, d = s->cfg.d_model, dk = s->m->d_k;
    app_view(s, &vs);
    double want = 0.0;
    for (int k = 0; k < dk; k++)
        want += (double)s->m->q[1 * d + 2 * dk + k] * (double)s->m->k[0 * d + 2 * dk + k];
    CHECK_NEAR("S_3[1, 0]", want, vs.step_raw[1 * n + 0], 1e-4);
    /* the scaled stage is S_3 / (sqrt(d_k) T), the scores before the mask: with the
       scale, with T = 1.5 too, and without the scale */
    static const char keys[3] = {0, ']', 'n'};
    static const double divide[3] = {4.0, 4.0 * 1.5, 1.5}; /* d_k = 16 */
    for (int c = 0; c < 3; c++) {
        if (keys[c]) press(s, keys[c], 0);
        app_view(s, &vs);
        if (!vs.step_raw || !vs.step_scaled)
            fail_msg("the step-through's stages: expected derived");
        char what[64];
        snprintf(what, sizeof what, "scaled stage = S / %g (tol 1e-6 rel)", divide[c]);
        for (int k = 0; k < n * n; k++)
            CHECK_NEAR(what, vs.step_raw[k] / divide[c], vs.step_scaled[k],
                       1e-6 * (1.0 + fabs(vs.step_raw[k] / divide[c])));
        CHECK_NEAR("the scaled stage is the layer's score where no mask is",
                   s->m->scores[((size_t)2 * n + 1) * n + 0], vs.step_scaled[1 * n + 0], 1e-5);
    }
    app_state_destroy(s);
}

/* --- training mode ---------------------------------------------------------------- */

/* Polls the state like the window does until pred holds or about 60 s pass (the
   worker needs a moment; this waits for it, it does not time it). */
static int wait_for(app_state *s, int (*pred)(const app_state *), double *clock) {
    for (int i = 0; i < 6000; i++) {
        *clock += 10.0;
        app_tick(s, *clock);
        app_async_poll(s); /* the jobs layer hands the trainer's newest snapshot down */
        if (pred(s)) return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static const view_train *train_of(const app_state *s) {
    view_state vs;
    app_view(s, &vs);
    return vs.train;
}

static int has_snapshot(const app_state *s) {
    const view_train *t = train_of(s);
    return t && t->step > 0;
}

static int learned(const app_state *s) {
    const view_train *t = train_of(s);
    return t && t->acc >= 0.99f && t->step >= 50;
}

static int pruned(const app_state *s) {
    const view_train *t = train_of(s);
    return t && !t->running && t->pruning_valid && t->pruning_step == t->step;
}

static int two_runs(const app_state *s) {
    const view_train *t = train_of(s);
    return t && t->runs == 2 && t->step > 0 && t->h == 4;
}

static int induction_runs(const app_state *s) {
    const view_train *t = train_of(s);
    return t && strcmp(t->task, "induction") == 0 && t->step > 0;
}

static void test_training_mode(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    CHECK_INT("the jobs layer: the trainer's runner", 0, app_async_enable(s, NULL, NULL, -1.0));
    double clock = 0.0;
    CHECK_INT("not training", 0, s->train_mode);
    CHECK_INT("no redraws are due", -1, app_next_timeout_ms(s));
    press(s, 'l', 0);
    CHECK_INT("L: training mode", 1, s->train_mode);
    CHECK_INT("redraws ten times a second", 100, app_next_timeout_ms(s));
    CHECK_TRUE("a snapshot comes", wait_for(s, has_snapshot, &clock));
    view_state vs;
    app_view(s, &vs);
    CHECK_STR("the default task", "pair", vs.train->task);
    const attn_layer *tl = vs.layer;
    assert_non_null(tl);
    CHECK_INT("h = 2", 2, tl->h);
    CHECK_INT("12 tokens", 12, tl->n);
    CHECK_INT("the trained heads are causal", ATTN_MASK_CAUSAL, tl->mask);
    CHECK_TRUE("token labels are the task's symbols", strlen(attn_layer_token(tl, 0)) == 1);
    CHECK_TRUE("the real Q, K, V, Concat and W^O",
               tl->q && tl->k && tl->v && tl->concat && tl->w_o);
    for (int r = 0; r < tl->n; r++) { /* its attention rows are distributions */
        double sum = 0.0;
        for (int c = 0; c < tl->n; c++) sum += tl->attn[(size_t)r * tl->n + c];
        CHECK_NEAR("a trained row sums to 1", 1.0, sum, 1e-4);
    }
    CHECK_TRUE("pair is learned (>= 99 % held out)", wait_for(s, learned, &clock));
    /* a new h restarts; the first run's curve stays on the plot */
    press(s, APP_KEY_UP, 0);
    CHECK_TRUE("h = 4 trains as a second run", wait_for(s, two_runs, &clock));
    app_view(s, &vs);
    CHECK_TRUE("the first run's curve is kept", vs.train->run[0].points > 1);
    CHECK_TRUE("labelled by its h", has(vs.train->run[0].label, "h=2"));
    CHECK_TRUE("the new one by its own", has(vs.train->run[1].label, "h=4"));
    CHECK_INT("the MHA view's h is untouched", 4, s->cfg.h);
    /* pause: the pruning bars are measured for the weights there are */
    press(s, 'l', 0);
    CHECK_TRUE("paused, bars for these weights", wait_for(s, pruned, &clock));
    app_view(s, &vs);
    for (int i = 0; i < vs.train->layers * vs.train->h; i++)
        CHECK_TRUE("accuracy without a head in [0, 1]",
                   vs.train->ablated_acc[i] >= 0.0f && vs.train->ablated_acc[i] <= 1.0f);
    int cheap = 0;
    for (int i = 0; i < vs.train->layers * vs.train->h; i++)
        cheap += vs.train->acc - vs.train->ablated_acc[i] < 0.01f;
    CHECK_INT("the heads that each cost under a point are counted", cheap, vs.train->pruned);
    CHECK_TRUE("accuracy with them all removed in [0, 1]",
               vs.train->pruned_acc >= 0.0f && vs.train->pruned_acc <= 1.0f);
    CHECK_TRUE("paused: no polling (only the message expiring)", app_next_timeout_ms(s) != 100);
    /* tasks, layers, leaving */
    press(s, APP_KEY_TAB, 0);
    press(s, APP_KEY_TAB, 0);
    CHECK_TRUE("induction trains", wait_for(s, induction_runs, &clock));
    app_view(s, &vs);
    CHECK_STR("Tab picks tasks in training mode", "induction", vs.train->task);
    CHECK_INT("with two layers", 2, vs.train->layers);
    press(s, 'y', 0);
    app_view(s, &vs);
    CHECK_INT("Y shows layer 2", 1, vs.train->layer);
    CHECK_INT("the sample is untouched", 1, s->sample);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Escape leaves training mode", 0, s->train_mode);
    app_view(s, &vs);
    CHECK_TRUE("the MHA view is back", vs.train == NULL && vs.layer &&
                                           vs.layer->attn == s->m->attn &&
                                           vs.layer->h == s->m->cfg.h);
    app_async_disable(s); /* stops the worker */
    app_state_destroy(s);
}

/* --- compare (B) -------------------------------------------------------------------- */

static int inside(view_rect in, view_rect r) {
    return r.x >= in.x && r.y >= in.y && r.x + r.w <= in.x + in.w && r.y + r.h <= in.y + in.h;
}

/* the compare_what pair that names setting `prefix` on the pinned side, or -1 */
static int what_index(const view_state *vs, const char *pinned, const char *live) {
    for (int i = 0; i < vs->compare_count; i++)
        if (strcmp(vs->compare_what[i][0], pinned) == 0 &&
            strcmp(vs->compare_what[i][1], live) == 0)
            return i;
    return -1;
}

static void test_compare(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 2, NULL);
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("no pinned view at the start", vs.pinned == NULL);

    press(s, 'b', 0);
    CHECK_TRUE("B pins", s->pin != NULL);
    CHECK_TRUE("B says what to do", has(s->status, "pinned"));
    app_view(s, &vs);
    CHECK_TRUE("the view has the pinned one", vs.pinned != NULL);
    CHECK_INT("nothing differs yet", 0, vs.compare_count);
    const view_layout *L = app_layout(s);
    CHECK_TRUE("the layout compares", L->compare);
    CHECK_TRUE("the same-settings hint shows", L->compare_same.w > 0);

    /* Up: the live view changes, the pinned one keeps h = 4 */
    press(s, APP_KEY_UP, 0);
    const int h2 = next_divisor(4, 64, +1);
    CHECK_INT("live h", h2, s->cfg.h);
    app_view(s, &vs);
    CHECK_INT("pinned h", 4, vs.pinned->layer->h);
    char live_h[32];
    snprintf(live_h, sizeof live_h, "h = %d", h2);
    CHECK_TRUE("banner: h = 4 beside the new h", what_index(&vs, "h = 4", live_h) >= 0);
    char live_dk[32];
    snprintf(live_dk, sizeof live_dk, "d\xE2\x82\x96 = %d", 64 / h2);
    CHECK_TRUE("banner: d_k shrinks with more heads",
               what_index(&vs, "d\xE2\x82\x96 = 16", live_dk) >= 0);
    CHECK_INT("only h and d_k differ", 2, vs.compare_count);

    /* the pinned numbers are a model of their own: equal to one computed here */
    mha_model *ref = mha_model_create();
    mha_config rc = {.h = 4, .d_model = 64, .seed = 1};
    char err[256];
    assert_int_equal(mha_model_compute(ref, &rc, &s->toks, err, sizeof err), 0);
    const attn_layer *pm = vs.pinned->layer;
    CHECK_INT("pinned n", ref->n, pm->n);
    CHECK_TRUE("pinned attention equals an independent compute",
               memcmp(ref->attn, pm->attn, sizeof(float) * 4 * (size_t)ref->n * ref->n) == 0);
    CHECK_TRUE("pinned MultiHead equals it",
               memcmp(ref->out, pm->out, sizeof(float) * 64 * (size_t)ref->n) == 0);
    mha_model_destroy(ref);

    /* mask, scaling and designed heads show as settings that differ */
    press(s, 'm', 0);
    press(s, 'n', 0);
    press(s, 'w', 0);
    app_view(s, &vs);
    CHECK_TRUE("mask differs", what_index(&vs, "no mask", "causal mask") >= 0);
    CHECK_TRUE("scaling differs", what_index(&vs,
                                             "\xC3\xB7 \xE2\x88\x9A"
                                             "d_k",
                                             "not scaled") >= 0);
    CHECK_TRUE("weights differ", what_index(&vs, "random weights", "designed heads") >= 0);
    CHECK_INT("five settings differ", 5, vs.compare_count);
    press(s, 'm', 0); /* the mask back: it no longer differs */
    app_view(s, &vs);
    CHECK_TRUE("mask back: not named", what_index(&vs, "no mask", "causal mask") < 0);
    CHECK_INT("four differ", 4, vs.compare_count);

    /* the layout: the live pane's rectangles inside its pane, window coordinates */
    L = app_layout(s);
    CHECK_TRUE("panes side by side",
               L->compare_pane[1].x >= L->compare_pane[0].x + L->compare_pane[0].w);
    for (int i = 0; i < L->shown_heads; i++)
        CHECK_TRUE("live heads in the live pane", inside(L->compare_pane[1], L->heads[i].map));
    CHECK_TRUE("live W^O in the live pane", inside(L->compare_pane[1], L->w_o.map));
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < L->compare_side[side].chips; i++)
            CHECK_TRUE("chips in the banner",
                       inside(L->compare_banner, L->compare_side[side].chip[i]));
    CHECK_INT("every differing setting has its chip", vs.compare_count, L->compare_side[1].chips);

    /* the pointer: a live head's cell is hit where it is drawn, the pinned pane is not live */
    view_rect m = L->heads[0].map;
    app_action hv = {.kind = ACT_HOVER, .x = m.x + 1, .y = m.y + 1};
    app_apply(s, &hv);
    CHECK_INT("hover a live cell", HIT_HEAD_CELL, s->hover.kind);
    CHECK_INT("its row", 0, s->hover.row);
    view_rect p0 = L->compare_pane[0];
    hv.x = p0.x + p0.w / 2, hv.y = p0.y + p0.h / 2;
    app_apply(s, &hv);
    CHECK_TRUE("the pinned pane is not hit as live heads", s->hover.kind != HIT_HEAD_CELL);

    /* drawing: the pinned pane's images lie in the pinned pane, the live ones in theirs */
    draw_list dl;
    draw_list_init(&dl);
    view_cache *cache = view_cache_create();
    app_view(s, &vs);
    view_render(&dl, cache, L, &vs, fx_measure, NULL);
    int in[2] = {0, 0}, stray = 0;
    for (int i = 0; i < dl.count; i++) {
        const draw_cmd *c = &dl.cmds[i];
        if (c->kind != DC_IMAGE) continue;
        view_rect r = {c->x, c->y, c->w, c->h};
        if (inside(L->compare_pane[0], r))
            in[0]++;
        else if (inside(L->compare_pane[1], r))
            in[1]++;
        else
            stray++;
    }
    CHECK_TRUE("pinned heads and equation drawn in its pane", in[0] >= 4 + 3);
    CHECK_TRUE("live heads and equation drawn in its pane", in[1] >= 1 + 3);
    CHECK_INT("no heatmap outside both panes", 0, stray);
    /* each pinned head is drawn where its layout puts it, moved into the pinned pane */
    const view_layout *PL = vs.pinned_layout;
    CHECK_TRUE("the pinned pane was laid out", PL != NULL && PL->shown_heads == 4);
    for (int hd = 0; PL && hd < PL->shown_heads; hd++) {
        view_rect want = PL->heads[hd].map;
        want.x += L->compare_pane[0].x, want.y += L->compare_pane[0].y;
        int found = 0;
        for (int i = 0; i < dl.count; i++) {
            const draw_cmd *c = &dl.cmds[i];
            found |= c->kind == DC_IMAGE && c->x == want.x && c->y == want.y && c->w == want.w &&
                     c->h == want.h;
        }
        CHECK_TRUE("pinned head drawn at its place in the pinned pane", found);
    }

    /* the pointer on a live cell outlines its query row in the pinned heads too */
    int frames_pinned[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        app_action mv = {.kind = ACT_HOVER, .x = -1, .y = -1};
        if (k) mv.x = L->heads[0].map.x + 1, mv.y = L->heads[0].map.y + 1;
        app_apply(s, &mv);
        app_view(s, &vs);
        view_render(&dl, cache, app_layout(s), &vs, fx_measure, NULL);
        for (int i = 0; i < dl.count; i++) {
            const draw_cmd *c = &dl.cmds[i];
            if (c->kind == DC_FRAME &&
                inside(L->compare_pane[0], (view_rect){c->x, c->y, c->w, c->h}))
                frames_pinned[k]++;
        }
    }
    CHECK_TRUE("hover outlines rows in the pinned pane too",
               frames_pinned[1] >= frames_pinned[0] + 4);
    view_cache_destroy(cache);
    draw_list_free(&dl);

    /* the lesson's panels make no room in two panes; I says so */
    CHECK_INT("no lesson panels while comparing", 0, vs.lesson);
    press(s, 'i', 0);
    CHECK_TRUE("I explains", has(s->status, "compare is off"));

    /* B unpins; Escape also closes compare, after what else is open */
    press(s, 'b', 0);
    CHECK_TRUE("B unpins", s->pin == NULL);
    L = app_layout(s);
    CHECK_INT("layout without compare", 0, L->compare);
    press(s, 'b', 0);
    press(s, '1', 0);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("Escape leaves the focus first", s->pin != NULL && s->look.focus == 0);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("then compare", s->pin == NULL);
    CHECK_INT("and does not quit", 0, s->quit);
    app_state_destroy(s);
}

/* --compare SPEC: the pinned view is this one with the named settings */
static void test_compare_option(void **st) {
    (void)st;
    static const struct {
        const char *spec;
        int rc;
        int h, no_scale, mask, weights;
    } cases[] = {
        {"h=1", 0, 1, 0, 0, 0},
        {"scale=off,mask=causal", 0, 8, 1, 1, 0},
        {"weights=patterns,h=2", 0, 2, 0, 0, 1},
        {"h=3", 2, 0, 0, 0, 0},     /* 3 does not divide 64 */
        {"h=1,h=2", 2, 0, 0, 0, 0}, /* twice */
        {"colour=red", 2, 0, 0, 0, 0},
        {"h", 2, 0, 0, 0, 0},
        {"", 2, 0, 0, 0, 0},
        {"scale=maybe", 2, 0, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *argv[] = {
            "mhaviz", "-H", "8", "--export", "x.png", "--compare", (char *)cases[k].spec, NULL};
        cli_options o;
        char err[256] = "";
        int rc = cli_parse(&o, 7, argv, err, sizeof err);
        app_state *s = app_state_create(fx_measure, NULL);
        if (rc == 0) {
            tok_list toks = {0};
            assert_int_equal(
                tok_split(&toks, samples_get(0)->text, MHA_MAX_N, NULL, err, sizeof err), 0);
            mha_config cfg = o.cfg;
            cfg.d_model = 64;
            rc = app_state_init(s, &o, &toks, &cfg, err, sizeof err);
            tok_free(&toks);
        }
        if (cases[k].rc) {
            CHECK_INT(cases[k].spec, cases[k].rc, rc);
            CHECK_TRUE("the message names --compare", strstr(err, "--compare") != NULL);
            CHECK_TRUE("one line", strchr(err, '\n') == NULL);
        } else {
            CHECK_INT(cases[k].spec, 0, rc);
            view_state vs;
            app_view(s, &vs);
            if (vs.pinned) {
                const attn_layer *c = vs.pinned->layer;
                CHECK_INT("pinned h", cases[k].h, c->h);
                CHECK_INT("pinned scaling", cases[k].no_scale, !c->scaled);
                CHECK_INT("pinned mask", cases[k].mask == MHA_MASK_CAUSAL,
                          c->mask == ATTN_MASK_CAUSAL);
                CHECK_INT("pinned weights", cases[k].weights == MHA_WEIGHTS_PATTERNS, c->designed);
                CHECK_INT("live h as -H says", 8, s->cfg.h);
            } else {
                CHECK_TRUE("a pinned view", 0);
            }
        }
        app_state_destroy(s);
    }
}

/* Tab through every sample and to custom text: the buttons after the sample's
   caption keep their place (the caption is as wide as the widest one), and the theme
   button names the theme shown, as the mask and colormap buttons name theirs. */
static void test_header_stays_put(void **st) {
    (void)st;
    app_state *s = make_state(4, 64, 1, NULL);
    const view_layout *L = app_layout(s);
    const int x_text = L->buttons[BTN_TEXT].r.x, x_theme = L->buttons[BTN_THEME].r.x;
    CHECK_TRUE("the theme button names the light theme",
               has(L->buttons[BTN_THEME].label, "Theme: light"));
    for (int k = 1; k < samples_count(); k++) {
        press(s, APP_KEY_TAB, 0);
        L = app_layout(s);
        CHECK_INT("sample shown", k + 1, s->sample);
        CHECK_INT("Text button's x", x_text, L->buttons[BTN_TEXT].r.x);
        CHECK_INT("theme button's x", x_theme, L->buttons[BTN_THEME].r.x);
    }
    app_load_text(s, "a much longer custom sentence than any sample name", 0);
    L = app_layout(s);
    CHECK_INT("custom text: Text button's x", x_text, L->buttons[BTN_TEXT].r.x);
    press(s, 't', 0);
    L = app_layout(s);
    CHECK_TRUE("the theme button names the dark theme",
               has(L->buttons[BTN_THEME].label, "Theme: dark"));
    app_state_destroy(s);
    /* h and d_model of one to four digits: the buttons after them keep their place
       (h = 8 -> 16 moved every button 11 px and wrapped A-/A+ to the second row) */
    static const int hs[] = {1, 2, 8, 16, 64}, ds[] = {64, 128, 1024, 4096};
    int x_up = -1, x_prev = -1, x_dup = -1;
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        s = make_state(hs[i], 64, 1, NULL);
        L = app_layout(s);
        if (x_up < 0) x_up = L->buttons[BTN_H_UP].r.x, x_dup = L->buttons[BTN_D_UP].r.x;
        CHECK_INT("h's + button's x", x_up, L->buttons[BTN_H_UP].r.x);
        CHECK_INT("d_model's + button's x", x_dup, L->buttons[BTN_D_UP].r.x);
        app_state_destroy(s);
    }
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        s = make_state(4, ds[i], 1, NULL);
        L = app_layout(s);
        if (x_prev < 0) x_prev = L->buttons[BTN_SAMPLE_PREV].r.x;
        CHECK_INT("d_model's + button's x", x_dup, L->buttons[BTN_D_UP].r.x);
        CHECK_INT("the sample's < button's x", x_prev, L->buttons[BTN_SAMPLE_PREV].r.x);
        app_state_destroy(s);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_defaults),
        cmocka_unit_test(test_h_keys),
        cmocka_unit_test(test_d_keys),
        cmocka_unit_test(test_sample_keys),
        cmocka_unit_test(test_text_editing),
        cmocka_unit_test(test_text_cursor),
        cmocka_unit_test(test_seed_key),
        cmocka_unit_test(test_mask_key),
        cmocka_unit_test(test_scale_key),
        cmocka_unit_test(test_view_keys),
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_pinned_pages),
        cmocka_unit_test(test_long_text),
        cmocka_unit_test(test_focus_help_escape_quit),
        cmocka_unit_test(test_save_keys),
        cmocka_unit_test(test_notices),
        cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_lesson_pad_and_temperature),
        cmocka_unit_test(test_lesson_weights_and_ablation),
        cmocka_unit_test(test_lesson_view_keys),
        cmocka_unit_test(test_training_mode),
        cmocka_unit_test(test_presentation),
        cmocka_unit_test(test_zoom_base),
        cmocka_unit_test(test_page_option),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_key_list),
        cmocka_unit_test(test_compare_option),
        cmocka_unit_test(test_header_stays_put),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
