#define _POSIX_C_SOURCE 200809L
/* test_view_file.c: view files (src/app/state/settings.c, view_file.c).
 * - the round trip (issue 18, item 7): random states, each made by a random view
 *   file and a few random keys, are captured, written, read back and applied to a
 *   fresh state; the second capture must equal the first and the two states must
 *   draw the same drawing list, command by command and pixel by pixel. The seed is
 *   fixed, or MHAVIZ_VIEW_SEED's (CI varies it); the count MHAVIZ_VIEW_COUNT's.
 * - every value's text form read back (write then parse gives equal settings);
 * - broken files and values: one "FILE:LINE: what" each, and the state applied to
 *   is unchanged (its capture equal before and after) with the message on the
 *   status line (app_view_file_open, as a file dropped on the window);
 * - Ctrl+Shift+V writes a file that reopens to the same view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "cli.h"
#include "colormap.h"
#include "draw.h"
#include "learn.h"
#include "sample.h"
#include "samples.h"
#include "settings.h"
#include "state.h"
#include "state_internal.h"
#include "view_fixture.h"

/* A state as `mhaviz` with no option starts it. */
static app_state *fresh(void) {
    app_state *s = app_state_create(fx_measure, NULL);
    assert_non_null(s);
    cli_options o;
    char err[512];
    char *argv[] = {"mhaviz", NULL};
    assert_int_equal(cli_parse(&o, 1, argv, err, sizeof err), 0);
    tok_list toks = {0};
    int total = 0;
    assert_int_equal(tok_split(&toks, samples_get(0)->text, MHA_MAX_N, &total, err, sizeof err), 0);
    mha_config cfg = o.cfg;
    mha_config_resolve(&cfg);
    if (app_state_init(s, &o, &toks, &cfg, err, sizeof err) != 0) fail_msg("init: %s", err);
    return s;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

/* --- the random generator (splitmix64) --------------------------------------------- */

static uint64_t rng;
static uint64_t next_u64(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int below(int n) {
    return (int)(next_u64() % (uint64_t)n);
}

typedef struct {
    char *buf;
    size_t len, cap;
} sbuf;
static void add(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[4096];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->buf = realloc(b->buf, b->cap);
        assert_non_null(b->buf);
    }
    memcpy(b->buf + b->len, tmp, (size_t)n + 1);
    b->len += (size_t)n;
}

static int divisor_of(int d) {
    int divs[64], k = 0;
    for (int i = 1; i <= d && i <= 16; i++)
        if (d % i == 0) divs[k++] = i;
    return divs[below(k)];
}

static const char *const temps[] = {"0.05", "0.1", "0.2", "0.25", "0.5", "0.75", "1",
                                    "1.5",  "2",   "3",   "5",    "10",  "20",   "0.37"};
static const int zooms[] = {80, 90, 100, 110, 125, 150, 175, 200, 250, 300};

/* A text of random pieces, with what the file format must carry: spaces at the
   ends, backslashes, quotes, tabs, line breaks and UTF-8. Its value as written in
   a file into esc. */
static void random_text(char *text, size_t len, char *esc, size_t esclen) {
    static const char *const pieces[] = {"the cat",
                                         "sat on",
                                         " the mat",
                                         "\\ back",
                                         "\"quoted\"",
                                         "tab\there",
                                         "two\nlines",
                                         "h\xC3\xA9llo",
                                         "\xE2\x88\x9A"
                                         "d_k",
                                         "  ",
                                         "x",
                                         "=",
                                         "# not a comment",
                                         "end "};
    text[0] = '\0';
    const int count = 1 + below(6);
    for (int i = 0; i < count; i++)
        snprintf(text + strlen(text), len - strlen(text), "%s%s", i ? " " : "",
                 pieces[below((int)(sizeof pieces / sizeof pieces[0]))]);
    if (!text[strspn(text, " \t\n")]) snprintf(text, len, "x");
    /* escaped by hand (the writer's rules, independently): quotes when an end is a
       space, tab or quote */
    size_t n = strlen(text), o = 0;
    const int q = text[0] == ' ' || text[0] == '\t' || text[0] == '"' || text[n - 1] == ' ' ||
                  text[n - 1] == '\t' || text[n - 1] == '"';
    if (q) esc[o++] = '"';
    for (size_t i = 0; i < n && o + 4 < esclen; i++) {
        const char c = text[i];
        if (c == '\n')
            esc[o++] = '\\', esc[o++] = 'n';
        else if (c == '\t')
            esc[o++] = '\\', esc[o++] = 't';
        else if (c == '\\')
            esc[o++] = '\\', esc[o++] = '\\';
        else
            esc[o++] = c;
    }
    if (q) esc[o++] = '"';
    esc[o] = '\0';
}

/* A random view file that sets a random subset of the settings, every one of them
   valid with the others. */
static void random_file(sbuf *b) {
    b->len = 0;
    add(b, "# random view\n");
    static char text[2048], esc[4096];
    int n_tokens = 0;
    const int which = below(3);
    if (which == 0) {
        const int k = 1 + below(samples_count());
        add(b, "sample = %d\n", k);
        tok_list t = {0};
        int total = 0;
        char err[256];
        tok_split(&t, samples_get(k - 1)->text, MHA_MAX_N, &total, err, sizeof err);
        n_tokens = t.count;
        tok_free(&t);
    } else if (which == 1) {
        random_text(text, sizeof text, esc, sizeof esc);
        add(b, "text = %s\n", esc);
        tok_list t = {0};
        int total = 0;
        char err[256];
        tok_split(&t, text, MHA_MAX_N, &total, err, sizeof err);
        n_tokens = t.count;
        tok_free(&t);
    } else {
        tok_list t = {0};
        int total = 0;
        char err[256];
        tok_split(&t, samples_get(0)->text, MHA_MAX_N, &total, err, sizeof err);
        n_tokens = t.count;
        tok_free(&t);
    }
    static const int ds[] = {8, 12, 16, 24, 32, 48, 64};
    const int d = ds[below(7)], h = divisor_of(d);
    const int set_shape = below(4) != 0;
    if (set_shape) add(b, "d_model = %d\nh = %d\n", d, h);
    const int hh = set_shape ? h : 4;
    if (below(2)) add(b, "seed = %d\n", 1 + below(1000));
    if (below(2)) add(b, "mask = %s\n", below(2) ? "causal" : "none");
    if (below(3) == 0)
        add(b, "pad = %d\n", n_tokens + below(8));
    else if (below(2))
        add(b, "pad = off\n");
    if (below(2)) add(b, "scale = %s\n", below(2) ? "on" : "off");
    if (below(2)) add(b, "temperature = %s\n", temps[below(14)]);
    if (below(2)) add(b, "weights = %s\n", below(2) ? "designed" : "random");
    if (below(3) == 0) {
        char list[256] = "";
        for (int k = 1; k <= hh; k++)
            if (below(3) == 0)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d",
                         list[0] ? "," : "", k);
        add(b, "ablate = %s\n", list[0] ? list : "none");
    }
    if (below(2)) {
        if (below(2))
            add(b, "focus = %d\n", 1 + below(hh));
        else
            add(b, "focus = none\n");
    }
    if (below(2)) add(b, "stage = %d\n", below(10));
    if (below(2)) add(b, "values = %s\n", below(2) ? "on" : "off");
    if (below(2)) add(b, "contrast = %s\n", (const char *[]){"fixed", "row", "log"}[below(3)]);
    if (below(2)) add(b, "colormap = %s\n", cmap_name(below(CMAP_COUNT)));
    if (below(2)) add(b, "theme = %s\n", below(2) ? "dark" : "light");
    if (below(2)) add(b, "zoom = %d\n", zooms[below(10)]);
    if (below(3) == 0) add(b, "present = %s\n", below(2) ? "on" : "off");
    if (below(2)) add(b, "page = %d\n", 1 + below(3));
    if (below(2)) add(b, "panels = %s\n", below(2) ? "on" : "off");
    if (below(2)) add(b, "diff = %s\n", below(2) ? "on" : "off");
    if (below(2)) add(b, "head-view = %s\n", below(2) ? "lines" : "heatmap");
    const int cmp = below(3);
    if (cmp == 1) add(b, "compare = on\n");
    if (cmp == 2) {
        const int dd = set_shape ? d : 64;
        char spec[256] = "";
        if (below(2))
            snprintf(spec + strlen(spec), 40, "%sh=%d", spec[0] ? "," : "", divisor_of(dd));
        if (below(2))
            snprintf(spec + strlen(spec), 40, "%sseed=%d", spec[0] ? "," : "", 1 + below(50));
        if (below(2))
            snprintf(spec + strlen(spec), 40, "%smask=%s", spec[0] ? "," : "",
                     below(2) ? "causal" : "none");
        if (below(2))
            snprintf(spec + strlen(spec), 40, "%sscale=%s", spec[0] ? "," : "",
                     below(2) ? "on" : "off");
        if (below(2))
            snprintf(spec + strlen(spec), 40, "%stemperature=%s", spec[0] ? "," : "",
                     temps[below(14)]);
        if (below(2))
            snprintf(spec + strlen(spec), 40, "%sweights=%s", spec[0] ? "," : "",
                     below(2) ? "patterns" : "random");
        add(b, "compare = %s\n", spec[0] ? spec : "on");
    }
    if (cmp && below(3) == 0)
        add(b, "pinned-sample = %d\n", 1 + below(samples_count()));
    else if (cmp && below(4) == 0) {
        static char ptext[2048], pesc[4096];
        random_text(ptext, sizeof ptext, pesc, sizeof pesc);
        add(b, "pinned-text = %s\n", pesc);
    }
    if (cmp == 1 && below(3) == 0) add(b, "pinned-ablate = %d\n", 1 + below(hh));
    if (cmp && below(2)) add(b, "pinned-page = %d\n", 1 + below(2));
    if (below(6) == 0) { /* training mode, or its settings for a later L */
        static const int tds[] = {8, 16, 32, 64};
        const int td = tds[below(4)];
        add(b, "train = %s\n",
            below(4) ? learn_task((learn_task_id)below(LEARN_TASK_COUNT))->name : "off");
        if (below(2)) add(b, "train-d_model = %d\ntrain-h = %d\n", td, divisor_of(td));
        if (below(2)) add(b, "train-seed = %d\n", 1 + below(9));
        if (below(2)) add(b, "train-steps = %d\n", below(3) * 100);
        if (below(2)) add(b, "train-mlp = %s\n", below(2) ? "on" : "off");
    }
}

/* A few keys a person might press after opening it. */
static int random_keys(app_state *s) {
    static const int keys[] = {APP_KEY_UP,    APP_KEY_DOWN,
                               APP_KEY_RIGHT, APP_KEY_LEFT,
                               'r',           'm',
                               'n',           'e',
                               '[',           ']',
                               'w',           'x',
                               'd',           'v',
                               'k',           ',',
                               '.',           'i',
                               'b',           'c',
                               't',           'p',
                               '1',           '2',
                               APP_KEY_TAB,   APP_KEY_PAGEDOWN,
                               'h',           '3'};
    const int count = below(4);
    for (int i = 0; i < count; i++) {
        press(s, keys[below((int)(sizeof keys / sizeof keys[0]))], 0);
    }
    if (below(8) == 0) press(s, '=', APP_MOD_CTRL);
    return count;
}

/* --- drawing lists ------------------------------------------------------------------------ */

static void render(app_state *s, draw_list *dl, view_cache *cache) {
    const view_layout *L = app_layout(s);
    view_state vs;
    app_view(s, &vs);
    view_render(dl, cache, L, &vs, fx_measure, NULL);
}

/* "" when equal, else where they first differ. */
static const char *dl_diff(const draw_list *a, const draw_list *b) {
    static char why[512];
    if (a->count != b->count || a->width != b->width || a->height != b->height) {
        snprintf(why, sizeof why, "%d commands at %dx%d vs %d at %dx%d", a->count, a->width,
                 a->height, b->count, b->width, b->height);
        return why;
    }
    for (int i = 0; i < a->count; i++) {
        const draw_cmd *x = &a->cmds[i], *y = &b->cmds[i];
        if (x->kind != y->kind || x->x != y->x || x->y != y->y || x->w != y->w || x->h != y->h ||
            memcmp(&x->color, &y->color, sizeof x->color) != 0 || x->thick != y->thick ||
            x->size != y->size || x->bold != y->bold || x->rot != y->rot || x->group != y->group) {
            snprintf(why, sizeof why,
                     "command %d: kind %d at %d,%d %dx%d vs kind %d at %d,%d %dx%d", i, x->kind,
                     x->x, x->y, x->w, x->h, y->kind, y->x, y->y, y->w, y->h);
            return why;
        }
        if ((x->kind == DC_TEXT || x->kind == DC_GROUP) &&
            strcmp(draw_cmd_text(a, x), draw_cmd_text(b, y)) != 0) {
            snprintf(why, sizeof why, "command %d: text '%.200s' vs '%.200s'", i,
                     draw_cmd_text(a, x), draw_cmd_text(b, y));
            return why;
        }
        if (x->kind == DC_IMAGE) {
            const draw_image *p = &a->images[x->img], *q = &b->images[y->img];
            if (p->w != q->w || p->h != q->h ||
                memcmp(p->px, q->px, (size_t)p->w * (size_t)p->h * sizeof *p->px) != 0) {
                snprintf(why, sizeof why, "command %d: image %dx%d differs", i, p->w, p->h);
                return why;
            }
        }
    }
    return "";
}

/* --- the round trip ------------------------------------------------------------------------- */

static void test_round_trip(void **unused) {
    (void)unused;
    const char *env = getenv("MHAVIZ_VIEW_SEED");
    const uint64_t seed = env && *env ? strtoull(env, NULL, 10) : 20261202u;
    const char *cenv = getenv("MHAVIZ_VIEW_COUNT");
    const int count = cenv && *cenv ? atoi(cenv) : 1000;
    printf("round trip: %d random states from seed %llu (MHAVIZ_VIEW_SEED)\n", count,
           (unsigned long long)seed);
    /* each state from a generator of its own (the seed's i-th output), so that a sampled
       run (the sanitizer build's) meets the very states the normal build meets */
    test_sample smp = test_sample_begin("view file round trip");
    sbuf file = {0};
    draw_list da, db;
    draw_list_init(&da);
    draw_list_init(&db);
    int pinned = 0, focused = 0, custom = 0, pressed = 0, training = 0;
    char err[1024];
    int ran = 0;
    for (int i = 0; i < count; i++) {
        if (!test_sample_next(&smp)) continue;
        rng = seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
        rng = next_u64();
        ran++;
        random_file(&file);
        app_settings *st = app_settings_create(), *c1 = app_settings_create(),
                     *st2 = app_settings_create(), *c2 = app_settings_create();
        if (app_view_file_parse(file.buf, file.len, "random.view", ".", st, err, sizeof err) != 0)
            fail_msg("state %d: the random file is refused: %s\n%s", i, err, file.buf);
        app_state *a = fresh();
        if (app_settings_apply(a, st, err, sizeof err) != 0)
            fail_msg("state %d: apply refused it: %s\n%s", i, err, file.buf);
        pressed += random_keys(a) > 0;
        app_settings_capture(a, c1);
        const size_t need = app_settings_write(c1, NULL, NULL, 0);
        char *text = malloc(need + 1);
        assert_non_null(text);
        CHECK_INT("write's length", need, app_settings_write(c1, NULL, text, need + 1));
        if (app_view_file_parse(text, need, "captured.view", ".", st2, err, sizeof err) != 0)
            fail_msg("state %d: the captured file is refused: %s\n%s", i, err, text);
        if (!app_settings_equal(c1, st2))
            fail_msg("state %d: written and read back, the settings differ:\n%s", i, text);
        app_state *b = fresh();
        if (app_settings_apply(b, st2, err, sizeof err) != 0)
            fail_msg("state %d: the captured view is refused: %s\n%s", i, err, text);
        app_settings_capture(b, c2);
        if (!app_settings_equal(c1, c2)) {
            const size_t n2 = app_settings_write(c2, c1, NULL, 0);
            char *d2 = malloc(n2 + 1);
            app_settings_write(c2, c1, d2, n2 + 1);
            fail_msg("state %d: applied to a fresh state, it captures differently:\n%s\nnow:\n%s",
                     i, text, d2);
        }
        /* the same message shown, so the whole drawing can be compared */
        snprintf(b->status, sizeof b->status, "%s", a->status);
        snprintf(b->notice, sizeof b->notice, "%s", a->notice);
        b->compute_ms = a->compute_ms; /* and the same timings: the footer prints them */
        b->frame_ms = a->frame_ms;
        /* caches of their own: a cache keys its pictures by the data version, which
           counts from the same start in every fresh state */
        view_cache *ca = view_cache_create(), *cb = view_cache_create();
        render(a, &da, ca);
        render(b, &db, cb);
        const char *why = dl_diff(&da, &db); /* the images' pixels are the caches' */
        if (why[0]) fail_msg("state %d: the drawing lists differ: %s\n%s", i, why, text);
        view_cache_destroy(ca);
        view_cache_destroy(cb);
        pinned += a->pin != NULL;
        training += a->train_mode;
        focused += a->look.focus != 0;
        custom += a->sample == 0;
        free(text);
        app_state_destroy(a);
        app_state_destroy(b);
        app_settings_free(st);
        app_settings_free(st2);
        app_settings_free(c1);
        app_settings_free(c2);
    }
    printf("round trip: %d states equal and drawn alike (%d pinned, %d focused, %d own texts, "
           "%d training, %d with keys pressed)\n",
           ran, pinned, focused, custom, training, pressed);
    CHECK_TRUE("some pinned", ran < 100 || pinned > ran / 10);
    CHECK_TRUE("some focused", ran < 100 || focused > ran / 10);
    CHECK_TRUE("some own texts", ran < 100 || custom > ran / 10);
    free(file.buf);
    draw_list_free(&da);
    draw_list_free(&db);
}

/* --- broken files: one message, the view kept -------------------------------------------- */

static char tmpdir[256];

static void make_tmpdir(void) {
    if (tmpdir[0]) return;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mhaviz-view-test-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
}

static const char *write_file(const char *name, const void *data, size_t len) {
    static char path[512];
    make_tmpdir();
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    return path;
}

static char *captured_text(const app_state *s) {
    app_settings *st = app_settings_create();
    app_settings_capture(s, st);
    const size_t n = app_settings_write(st, NULL, NULL, 0);
    char *t = malloc(n + 1);
    app_settings_write(st, NULL, t, n + 1);
    app_settings_free(st);
    return t;
}

static void test_broken_files_keep_the_view(void **unused) {
    (void)unused;
    app_state *s = fresh();
    char err[2048];
    app_settings *st = app_settings_create();
    const char *good = "h = 8\ntheme = dark\nfocus = 2\nsample = 3\ncompare = h=2\n";
    assert_int_equal(app_view_file_parse(good, strlen(good), "good.view", ".", st, err, sizeof err),
                     0);
    assert_int_equal(app_settings_apply(s, st, err, sizeof err), 0);
    app_settings_free(st);
    char *before = captured_text(s);
    static const struct {
        const char *name, *text, *want; /* want: what the message must hold after FILE */
    } cases[] = {
        {"unknown.view", "# a view\nh = 4\nheads = 4\n", ":3: unknown setting 'heads'"},
        {"bad.view", "mask = sideways\n", ":1: mask = sideways: must be none or causal"},
        {"twice.view", "h = 4\ntheme = dark\nh = 2\n", ":3: h is given twice (first on line 1)"},
        {"texts.view", "sample = 2\ntext = hello\n", ":2: text: the text is set already on line 1"},
        {"nohead.view", "focus = 9\n", ":1: focus = 9: there is no head 9 (h = 8)"},
        {"noablate.view", "h = 4\nablate = 2,7\n", ":2: ablate: there is no head 7 (h = 4)"},
        {"divide.view", "theme = light\nd_model = 60\nh = 8\n", ":3: h = 8 does not divide"},
        {"late.view", "theme = light\nd_model = 60\n", ":2: h = 8 does not divide d_model = 60"},
        {"modelkv.view", "theme = light\nmodel-kv = 2\n",
         ":2: model-kv = 2: a loaded model's K/V heads (model = PATH"},
        {"nosample.view", "sample = 99\n", ":1: sample = 99: must be a built-in sample"},
        {"noequals.view", "dark theme\n", ":1: 'dark theme' is not 'name = value'"},
        {"comments.view", "# only a comment\n\n", ": sets nothing"},
        {"empty.view", "", ": "},
        {"utf8.view", "text = caf\xC3\n", ": "},
        {"nul.view", "h = 4\n\0\n", ": "},
        {"pinned.view", "compare = off\npinned-page = 2\n", ":2: pinned-page = 2: only with"},
        {"cmp.view", "compare = h=3\n", ":1: compare: "},
        {"cmpkey.view", "compare = heads=3\n", ":1: compare = heads=3: --compare: unknown"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t len = strcmp(cases[i].name, "nul.view") == 0 ? 8 : strlen(cases[i].text);
        const char *path = write_file(cases[i].name, cases[i].text, len);
        char want[1024];
        snprintf(want, sizeof want, "%s%s", path, cases[i].want);
        CHECK_INT(cases[i].name, -1, app_view_file_open(s, path));
        if (strncmp(s->status, want, strlen(want)) != 0)
            fail_msg("%s: status '%s', want it to start '%s'", cases[i].name, s->status, want);
        CHECK_STR("no notice beside it", "", s->notice);
        char *after = captured_text(s);
        if (strcmp(before, after) != 0) fail_msg("%s changed the view:\n%s", cases[i].name, after);
        free(after);
        app_settings *r = app_settings_create(); /* the reader's rc: 2 unusable, or 0 when */
        const int rc = app_view_file_read(path, r, err, sizeof err); /* only the state can say */
        const int late = strstr("nohead.view late.view pinned.view cmp.view modelkv.view",
                                cases[i].name) != NULL;
        CHECK_INT(cases[i].name, late ? 0 : 2, rc);
        app_settings_free(r);
    }
    /* a 50 MB file (sparse), a binary file, a folder, a missing file */
    char big[600];
    snprintf(big, sizeof big, "%s/big.view", tmpdir);
    FILE *f = fopen(big, "wb");
    assert_non_null(f);
    fputs("h = 4\n", f);
    assert_int_equal(fseek(f, 50l << 20, SEEK_SET), 0);
    fputc('\n', f);
    fclose(f);
    unsigned char bin[256];
    for (int i = 0; i < 256; i++) bin[i] = (unsigned char)(i * 37 + 11);
    const char *binp = write_file("binary.view", bin, sizeof bin);
    char binpath[600], missing[600], folder[600];
    snprintf(binpath, sizeof binpath, "%s", binp);
    snprintf(missing, sizeof missing, "%s/missing.view", tmpdir);
    snprintf(folder, sizeof folder, "%s", tmpdir);
    const struct {
        const char *path;
        int rc;
    } files[] = {{big, 2}, {binpath, 2}, {missing, 2}, {folder, 2}}; /* a wrong path: usage */
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        app_settings *r = app_settings_create();
        CHECK_INT(files[i].path, files[i].rc,
                  app_view_file_read(files[i].path, r, err, sizeof err));
        CHECK_INT("nothing set", 0, app_settings_count(r));
        app_settings_free(r);
        char want[700];
        snprintf(want, sizeof want, "%s: ", files[i].path);
        if (strncmp(err, want, strlen(want)) != 0 || strchr(err, '\n'))
            fail_msg("%s: '%s' is not one line starting with '%s'", files[i].path, err, want);
        CHECK_INT(files[i].path, -1, app_view_file_open(s, files[i].path));
        CHECK_TRUE("the status says it", strncmp(s->status, want, strlen(want)) == 0);
        char *after = captured_text(s);
        if (strcmp(before, after) != 0) fail_msg("%s changed the view", files[i].path);
        free(after);
    }
    remove(big);
    /* and a good file after all that: opened, a notice says so */
    const char *ok = write_file("ok.view", "h = 2\ntheme = light\n", 20);
    CHECK_INT("a good file opens", 0, app_view_file_open(s, ok));
    CHECK_INT("h", 2, s->cfg.h);
    CHECK_INT("light", 0, s->look.theme);
    CHECK_TRUE("a notice", strstr(s->notice, "opened the view") != NULL);
    free(before);
    app_state_destroy(s);
}

/* --- Ctrl+Shift+V -------------------------------------------------------------------------- */

static void test_save_key(void **unused) {
    (void)unused;
    make_tmpdir();
    app_state *s = fresh();
    s->export_dir = tmpdir;
    press(s, APP_KEY_UP, 0); /* h = 8 */
    press(s, 'm', 0);        /* causal */
    press(s, '3', 0);        /* head 3 */
    press(s, '.', 0);        /* stage 1 */
    press(s, 't', 0);        /* dark */
    app_action a = app_key_action(s, 'v', APP_MOD_CTRL | APP_MOD_SHIFT);
    CHECK_INT("Ctrl+Shift+V", ACT_SAVE_VIEW_FILE, a.kind);
    app_action plain = app_key_action(s, 'v', 0);
    CHECK_INT("V alone is still the numbers", ACT_VALUES, plain.kind);
    app_apply(s, &a);
    CHECK_INT("a save request, as Ctrl+S's", APP_SAVE_VIEW_FILE, app_take_save(s));
    char saved[4200];
    CHECK_INT("the window saves it", 0, app_view_file_save(s, saved, sizeof saved));
    const char *at = strstr(s->notice, tmpdir);
    if (!at) fail_msg("the notice '%s' names no file in %s", s->notice, tmpdir);
    char path[1024];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(at, " "), at);
    CHECK_TRUE("named .view", strstr(path, ".view") != NULL);
    CHECK_TRUE("named by h and d_model", strstr(path, "/mhaviz-h8-d64-") != NULL);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("no file %s", path);
    char head[64] = "";
    CHECK_TRUE("a first line", fgets(head, sizeof head, f) != NULL);
    fclose(f);
    CHECK_STR("the first line", "# mhaviz view 1\n", head);
    app_state *b = fresh();
    CHECK_INT("it reopens", 0, app_view_file_open(b, path));
    char *x = captured_text(s), *y = captured_text(b);
    CHECK_STR("the same view", x, y);
    CHECK_INT("h", 8, b->cfg.h);
    CHECK_INT("focus", 3, b->look.focus);
    CHECK_INT("stage", 1, b->look.step);
    free(x);
    free(y);
    remove(path);
    /* a folder that is not there: the status line says why, nothing written */
    s->export_dir = "/nonexistent-folder";
    app_apply(s, &a);
    CHECK_INT("failing: -1", -1, app_view_file_save(s, saved, sizeof saved));
    CHECK_TRUE("a failure is a status message", strstr(s->status, "cannot write") != NULL);
    CHECK_STR("and no notice", "", s->notice);
    app_state_destroy(s);
    app_state_destroy(b);
}

/* H: the heads as lines (the head view) and back, in the grid and the focus view;
   Ctrl+Shift+S saves the lines panel; the view file keeps it. */
static void test_head_view_key(void **unused) {
    (void)unused;
    make_tmpdir();
    app_state *s = fresh();
    s->export_dir = tmpdir;
    CHECK_INT("heatmaps at the start", VIEW_HEAD_HEATMAP, s->look.head_view);
    app_action a = app_key_action(s, 'h', 0);
    CHECK_INT("H", ACT_HEAD_VIEW, a.kind);
    CHECK_INT("Shift+H too", ACT_HEAD_VIEW, app_key_action(s, 'H', APP_MOD_SHIFT).kind);
    app_apply(s, &a);
    CHECK_INT("H: lines", VIEW_HEAD_LINES, s->look.head_view);
    CHECK_TRUE("the status says so", strstr(s->status, "lines") != NULL);
    const view_layout *L = app_layout(s);
    CHECK_TRUE("the grid as lines", L->lines_shown == L->shown_heads && L->shown_heads == 4);
    press(s, '2', 0);
    L = app_layout(s);
    CHECK_INT("the focus view as lines: one tile", 1, L->lines_shown);
    CHECK_INT("of head 2", 1, L->first_head);
    view_state vs;
    app_figure_view(s, APP_SAVE_PANEL, &vs);
    CHECK_INT("Ctrl+Shift+S saves the lines panel", VIEW_PANEL_LINES, vs.panel);
    CHECK_INT("of head 2", 2, vs.panel_head);
    app_action save = app_key_action(s, 'v', APP_MOD_CTRL | APP_MOD_SHIFT);
    app_apply(s, &save);
    char saved[4200];
    CHECK_INT("saved", 0, app_view_file_save(s, saved, sizeof saved));
    const char *at = strstr(s->notice, tmpdir);
    if (!at) fail_msg("the notice '%s' names no file in %s", s->notice, tmpdir);
    char path[1024];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(at, " "), at);
    char *x = captured_text(s);
    CHECK_TRUE("the file says head-view = lines", strstr(x, "head-view = lines") != NULL);
    app_state *b = fresh();
    CHECK_INT("it reopens", 0, app_view_file_open(b, path));
    CHECK_INT("as lines", VIEW_HEAD_LINES, b->look.head_view);
    CHECK_INT("focused", 2, b->look.focus);
    press(b, 'h', 0);
    CHECK_INT("H again: heatmaps", VIEW_HEAD_HEATMAP, b->look.head_view);
    CHECK_INT("no lines", 0, app_layout(b)->lines_shown);
    press(b, 'l', 0); /* training mode: H is the sweep of h there, not the head view */
    CHECK_INT("L: training mode", 1, b->train_mode);
    press(b, 'h', 0);
    CHECK_INT("H in training mode leaves the head view", VIEW_HEAD_HEATMAP, b->look.head_view);
    CHECK_TRUE("the sweep of h is asked for instead", b->sweep != NULL);
    free(x);
    remove(path);
    app_state_destroy(s);
    app_state_destroy(b);
}

/* --- every value's canonical form; text-file next to the file -------------------------------- */

static void test_values(void **unused) {
    (void)unused;
    static const char *const cases[][2] = {
        {"weights = patterns", "weights = designed"},
        {"weights = designed", "weights = designed"},
        {"temperature = 0.50", "temperature = 0.5"},
        {"temperature = 20", "temperature = 20"},
        {"pad = off", "pad = off"},
        {"pad = 12", "pad = 12"},
        {"ablate = 3,1", "ablate = 1,3"},
        {"scale = off", "scale = off"},
        {"compare = temperature=2,h=2", "compare = h=2,temperature=2"},
        {"compare = on", "compare = on"},
        {"text = \"  two spaces  \"", "text = \"  two spaces  \""},
        {"text = a\\tb\\nc\\\\d", "text = a\\tb\\nc\\\\d"},
        {"pinned-text = x y", "pinned-text = x y"},
        {"model-h = own", "model-h = own"},
        {"model-kv = own", "model-kv = own"},
        {"model-kv = 3", "model-kv = 3"},
        {"train = prev", "train = prev"},
        {"zoom = 125", "zoom = 125"},
        {"contrast = log", "contrast = log"},
        {"focus = none", "focus = none"},
        {"head-view = lines", "head-view = lines"},
        {"head-view = heatmap", "head-view = heatmap"},
        {"sample-temperature = 0.70", "sample-temperature = 0.7"},
        {"sample-temperature = 0", "sample-temperature = 0"},
        {"top-k = off", "top-k = off"},
        {"top-k = 40", "top-k = 40"},
        {"top-p = 0.9", "top-p = 0.9"},
        {"sample-seed = 7", "sample-seed = 7"},
        {"write-length = 8", "write-length = 8"},
        {"write-pace = 250", "write-pace = 250"},
    };
    char err[512], out[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        app_settings *st = app_settings_create();
        char line[256];
        snprintf(line, sizeof line, "%s\n", cases[i][0]);
        if (app_view_file_parse(line, strlen(line), "v.view", ".", st, err, sizeof err) != 0)
            fail_msg("%s: %s", cases[i][0], err);
        CHECK_INT("one setting", 1, app_settings_count(st));
        app_settings_write(st, NULL, out, sizeof out);
        char want[300];
        snprintf(want, sizeof want, "%s\n", cases[i][1]);
        CHECK_STR(cases[i][0], want, out);
        app_settings_free(st);
    }
    /* bad values, each refused with the name and value */
    static const char *const bad[] = {"h = 0",
                                      "h = four",
                                      "seed = -1",
                                      "temperature = 30",
                                      "temperature = 1e1",
                                      "zoom = 50",
                                      "stage = 11",
                                      "pad = 513",
                                      "colormap = jet",
                                      "theme = blue",
                                      "ablate = 1,1",
                                      "model-kv = 0",
                                      "train = nothing",
                                      "text = a\\q",
                                      "values = yes",
                                      "train-layers = 3",
                                      "head-view = dots",
                                      "sample-temperature = -1",
                                      "top-k = 0",
                                      "top-p = 1.5",
                                      "sample-seed = 0",
                                      "write-length = 0",
                                      "write-pace = 10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        app_settings *st = app_settings_create();
        char line[256];
        snprintf(line, sizeof line, "%s\n", bad[i]);
        CHECK_INT(bad[i], 2,
                  app_view_file_parse(line, strlen(line), "v.view", ".", st, err, sizeof err));
        CHECK_TRUE("FILE:LINE:", strncmp(err, "v.view:1: ", 10) == 0);
        CHECK_INT("nothing set", 0, app_settings_count(st));
        app_settings_free(st);
    }
    /* the sampler's settings: into the state W reads (write.c) */
    {
        static const char sampler_lines[] = "sample-temperature = 0.5\ntop-k = 3\ntop-p = 0.8\n"
                                            "sample-seed = 9\nwrite-length = 5\nwrite-pace = 250\n";
        app_settings *ss = app_settings_create();
        CHECK_INT("the sampler's lines", 0,
                  app_view_file_parse(sampler_lines, strlen(sampler_lines), "w.view", ".", ss, err,
                                      sizeof err));
        app_state *ws = fresh();
        CHECK_INT("apply", 0, app_settings_apply(ws, ss, err, sizeof err));
        CHECK_TRUE("sample-temperature", ws->write.temperature == 0.5f);
        CHECK_INT("top-k", 3, ws->write.top_k);
        CHECK_TRUE("top-p", ws->write.top_p == 0.8f);
        CHECK_INT("sample-seed", 9, (int)ws->write.seed);
        CHECK_INT("write-length", 5, ws->write.length);
        CHECK_INT("write-pace", 250, ws->write.pace_ms);
        app_settings *back = app_settings_create();
        app_settings_capture(ws, back);
        char got[256], name[32];
        static const char *const names[] = {"sample-temperature", "top-k",        "top-p",
                                            "sample-seed",        "write-length", "write-pace"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            snprintf(name, sizeof name, "%s", names[i]);
            char want_v[64];
            app_settings_get(ss, name, want_v, sizeof want_v);
            CHECK_STR(name, want_v, app_settings_get(back, name, got, sizeof got));
        }
        app_settings_free(back);
        app_settings_free(ss);
        app_state_destroy(ws);
    }
    /* text-file: relative to the view file's folder, read with --text-file's rules */
    make_tmpdir();
    write_file("words.txt", "alpha beta gamma\n", 17);
    const char *vp = write_file("tf.view", "text-file = words.txt\n", 22);
    char vpath[600];
    snprintf(vpath, sizeof vpath, "%s", vp);
    app_settings *st = app_settings_create();
    CHECK_INT("text-file reads", 0, app_view_file_read(vpath, st, err, sizeof err));
    app_state *s = fresh();
    CHECK_INT("and applies", 0, app_settings_apply(s, st, err, sizeof err));
    CHECK_INT("its tokens", 3, s->toks.count);
    CHECK_INT("custom text", 0, s->sample);
    app_settings_write(st, NULL, out, sizeof out);
    CHECK_STR("written as it was named", "text-file = words.txt\n", out);
    app_settings_free(st);
    app_state_destroy(s);
    const char *bp = write_file("tf2.view", "\ntext-file = nothing.txt\n", 24);
    snprintf(vpath, sizeof vpath, "%s", bp);
    st = app_settings_create();
    CHECK_INT("a missing text file", 2, app_view_file_read(vpath, st, err, sizeof err));
    char want[1200];
    snprintf(want, sizeof want, "%s:2: text-file: %s/nothing.txt", vpath, tmpdir);
    if (strncmp(err, want, strlen(want)) != 0) fail_msg("'%s' does not start '%s'", err, want);
    app_settings_free(st);
}

/* --- merge, defaults, equal (what lessons build on) ---------------------------------------- */

static void test_merge_defaults(void **unused) {
    (void)unused;
    app_settings *d = app_settings_create(), *c = app_settings_create();
    app_settings_defaults(d);
    app_state *s = fresh();
    app_settings_capture(s, c);
    char out[8192];
    const size_t n = app_settings_write(c, d, out, sizeof out);
    if (n) fail_msg("`mhaviz` with no option differs from the defaults in:\n%s", out);
    CHECK_TRUE("equal", app_settings_equal(c, d));
    app_settings *a = app_settings_create(), *b = app_settings_create();
    char err[256];
    CHECK_INT("set", 0, app_settings_set(a, "h", "8", NULL, err, sizeof err));
    CHECK_INT("set", 0, app_settings_set(a, "theme", "dark", NULL, err, sizeof err));
    CHECK_INT("set", 0, app_settings_set(b, "h", "2", NULL, err, sizeof err));
    CHECK_INT("bad", -1, app_settings_set(b, "h", "x", NULL, err, sizeof err));
    CHECK_INT("still 1", 1, app_settings_count(b));
    app_settings_merge(a, b);
    CHECK_INT("two set", 2, app_settings_count(a));
    app_settings_write(a, NULL, out, sizeof out);
    CHECK_STR("b's h wins, a's theme stays", "h = 2\ntheme = dark\n", out);
    /* where a setting was read: apply's message starts FILE:LINE: */
    app_settings *f = app_settings_create();
    CHECK_INT("set", 0, app_settings_set(f, "focus", "7", NULL, err, sizeof err));
    app_settings_origin(f, "steps.lesson");
    app_settings_line(f, "focus", 12);
    CHECK_INT("no head 7", -1, app_settings_apply(s, f, err, sizeof err));
    CHECK_STR("FILE:LINE:", "steps.lesson:12: focus = 7: there is no head 7 (h = 4)", err);
    app_settings_free(f);
    /* an option beside --state: the settings it gives are named */
    cli_options o;
    char *argv[] = {"mhaviz", "--state", "x.view", "-H", "2", "--theme", "dark", NULL};
    CHECK_INT("parses", 0, cli_parse(&o, 7, argv, err, sizeof err));
    CHECK_STR("--state", "x.view", o.state_file);
    char given[256] = "";
    for (int i = 0; i < o.state_given_count; i++)
        snprintf(given + strlen(given), sizeof given - strlen(given), "%s ", o.state_given[i]);
    CHECK_STR("what -H and --theme give", "h train-h model-h theme ", given);
    app_settings *k = app_settings_clone(a);
    CHECK_TRUE("a clone is equal", app_settings_equal(a, k));
    app_settings_unset(k, "theme");
    CHECK_TRUE("not after an unset", !app_settings_equal(a, k));
    app_settings_free(a);
    app_settings_free(b);
    app_settings_free(k);
    app_settings_free(c);
    app_settings_free(d);
    app_state_destroy(s);
}

/* --- with the jobs layer: the recompute goes to the worker, as a key's ------------------- */

static void test_apply_async(void **unused) {
    (void)unused;
    app_state *s = fresh();
    if (app_async_enable(s, NULL, NULL, 0.0) != 0) skip(); /* every recompute to the worker */
    app_async_hold(s, 1);
    const char *text = "sample = 3\nh = 16\nd_model = 256\nfocus = 5\nmask = causal\n";
    app_settings *st = app_settings_create(), *c = app_settings_create();
    char err[512];
    assert_int_equal(app_view_file_parse(text, strlen(text), "a.view", ".", st, err, sizeof err),
                     0);
    if (app_settings_apply(s, st, err, sizeof err) != 0) fail_msg("apply: %s", err);
    CHECK_TRUE("the recompute went to the worker", app_async_busy(s));
    CHECK_INT("the model shown is still the old one", 4, s->m->cfg.h);
    CHECK_INT("h asked for", 16, s->cfg.h);
    app_settings_capture(s, c);
    app_settings *want = app_settings_clone(c);
    app_settings_merge(want, st);
    CHECK_TRUE("captured while busy: what was asked for", app_settings_equal(c, want));
    app_async_hold(s, 0);
    app_async_wait(s);
    CHECK_INT("shown: h", 16, s->m->cfg.h);
    CHECK_INT("shown: d_model", 256, s->m->cfg.d_model);
    CHECK_INT("shown: causal", MHA_MASK_CAUSAL, s->m->cfg.mask);
    CHECK_INT("shown: sample 3", 3, s->sample);
    CHECK_INT("focus kept", 5, s->look.focus);
    /* the same view computed at once has the same numbers */
    app_state *b = fresh();
    assert_int_equal(app_settings_apply(b, st, err, sizeof err), 0);
    CHECK_INT("n", b->m->n, s->m->n);
    CHECK_TRUE("the same attention",
               memcmp(b->m->attn, s->m->attn, sizeof(float) * 16 * (size_t)b->m->n * b->m->n) == 0);
    app_settings_capture(s, c);
    app_settings *cb = app_settings_create();
    app_settings_capture(b, cb);
    CHECK_TRUE("and the same settings", app_settings_equal(c, cb));
    app_async_disable(s);
    app_state_destroy(s);
    app_state_destroy(b);
    app_settings_free(st);
    app_settings_free(c);
    app_settings_free(cb);
    app_settings_free(want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_merge_defaults),
        cmocka_unit_test(test_broken_files_keep_the_view),
        cmocka_unit_test(test_save_key),
        cmocka_unit_test(test_head_view_key),
        cmocka_unit_test(test_apply_async),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
