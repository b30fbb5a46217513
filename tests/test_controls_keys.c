#define _POSIX_C_SOURCE 200809L
/* test_controls_keys.c: every control findable, nothing acting where it should not.
 * (1) In training mode each key of app_keys() that is the attention view's leaves the
 * state byte for byte as it was (the trainer is told nothing) and the status line
 * names the key; (2) every key of the README's key tables ("Using the window" and
 * "Learn live", read from README.md here) has a button that does what the key does,
 * in the mode the table is for; (3) the buttons, the "More" panel and the help fit at
 * 1024x768 ... 3840x2160 and zooms 80-300 %, no label wider than its button, and the
 * toolbar does not move as the values its buttons name change. */
#include <ctype.h>
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
#include "draw.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "view_fixture.h"

static app_state *make_state(int w, int h) {
    cli_options o = fx_options();
    o.sample = 1;
    o.size_w = w;
    o.size_h = h;
    return fx_app_state(&o, 4, 64, NULL, NULL, 0);
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

/* The key's name as the README and the status line spell it. */
static void key_name(int key, int mods, char *out, size_t len) {
    static const struct {
        int key;
        const char *name;
    } named[] = {
        {APP_KEY_UP, "Up"},         {APP_KEY_DOWN, "Down"},      {APP_KEY_LEFT, "Left"},
        {APP_KEY_RIGHT, "Right"},   {APP_KEY_TAB, "Tab"},        {APP_KEY_RETURN, "Enter"},
        {APP_KEY_ESCAPE, "Esc"},    {APP_KEY_BACKSPACE, "Bksp"}, {APP_KEY_PAGEUP, "PgUp"},
        {APP_KEY_PAGEDOWN, "PgDn"}, {APP_KEY_F1, "F1"},          {APP_KEY_F11, "F11"},
        {APP_KEY_HOME, "Home"},     {APP_KEY_END, "End"},        {APP_KEY_DELETE, "Delete"},
        {APP_KEY_F5, "F5"}};
    char k[16] = "?";
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].key == key) snprintf(k, sizeof k, "%s", named[i].name);
    if (key > 0 && key < 128) snprintf(k, sizeof k, "%c", toupper(key));
    snprintf(out, len, "%s%s%s", mods & APP_MOD_CTRL ? "Ctrl+" : "",
             mods & APP_MOD_SHIFT ? "Shift+" : "", k);
}

/* --- (1) training mode: the attention view's keys change nothing, and say so ------- */

/* Keys that are training mode's own or apply to what it shows (the README's "Learn
   live" table): pressed, they may change the state. H, [ ], End are the sweep's and
   the replay's (other branches may not have them yet). */
static int applies_in_training(int key, int mods) {
    if (mods & APP_MOD_CTRL) return 1; /* zoom, saves, quit */
    if (key > 0 && key < 128 && strchr("lsyr.tcvkpgh[]?/", key)) return 1;
    switch (key) {
    case APP_KEY_UP:
    case APP_KEY_DOWN:
    case APP_KEY_LEFT:
    case APP_KEY_RIGHT:
    case APP_KEY_TAB:
    case APP_KEY_ESCAPE:
    case APP_KEY_PAGEUP:
    case APP_KEY_PAGEDOWN:
    case APP_KEY_F1:
    case APP_KEY_F11:
    case APP_KEY_END: return 1;
    default: return 0;
    }
}

static void test_training_refusals(void **st) {
    (void)st;
    app_state *s = make_state(1600, 900);
    press(s, 'l', 0);
    CHECK_INT("L: training mode", 1, s->train_mode);
    app_train_cmd cmd;
    app_training_command(s, &cmd); /* the start L asked for: taken, as the jobs layer would */
    int count = 0, refused = 0;
    const int *keys = app_keys(&count);
    app_state *before = malloc(sizeof *s);
    assert_non_null(before);
    for (int i = 0; i < count; i++)
        for (int m = 0; m < 2; m++) {
            const int key = keys[i], mods = m ? APP_MOD_SHIFT : 0;
            if (applies_in_training(key, mods)) continue;
            const app_action a = app_key_action(s, key, mods);
            char name[32], where[96];
            key_name(key, mods, name, sizeof name);
            snprintf(where, sizeof where, "training mode, key %s", name);
            s->status[0] = '\0';
            s->status_until = 0;
            learn_config c0, c1;
            long steps0, steps1;
            int layer0, layer1;
            app_training_get(s, &c0, &steps0, &layer0);
            memcpy(before, s, sizeof *s);
            press(s, key, mods);
            /* everything but the message (and when it goes, and the redraw it asks for) */
            memcpy(before->status, s->status, sizeof s->status);
            before->status_until = s->status_until;
            before->dirty = s->dirty;
            before->layout_valid = s->layout_valid;
            memcpy(before->notice, s->notice, sizeof s->notice);
            before->notice_until = s->notice_until;
            if (memcmp(before, s, sizeof *s) != 0) {
                size_t at = 0;
                while (((const unsigned char *)before)[at] == ((const unsigned char *)s)[at]) at++;
                fail_msg("%s: expected the state unchanged but the message, got byte %zu of %zu "
                         "changed (status \"%s\")",
                         where, at, sizeof *s, s->status);
            }
            app_training_get(s, &c1, &steps1, &layer1);
            CHECK_TRUE(where,
                       memcmp(&c0, &c1, sizeof c0) == 0 && steps0 == steps1 && layer0 == layer1);
            CHECK_INT("the trainer is told nothing", 0, app_training_command(s, &cmd));
            if (a.kind == ACT_NONE) continue; /* a key that means nothing here: silent */
            refused++;
            char start[40], base[40]; /* Shift+Enter does what Enter does: either name */
            snprintf(start, sizeof start, "%s (", name);
            key_name(key, 0, base, sizeof base);
            strncat(base, " (", sizeof base - strlen(base) - 1);
            if ((strncmp(s->status, start, strlen(start)) != 0 &&
                 (!mods || strncmp(s->status, base, strlen(base)) != 0)) ||
                !strstr(s->status, "is for the attention view"))
                fail_msg("%s: expected the status line to start \"%s\" and say it is for the "
                         "attention view, got \"%s\"",
                         where, start, s->status);
        }
    /* E, M, N, W, X, Shift+X, D, I, B, O, ",", Enter and the nine digits at least */
    CHECK_TRUE("the attention view's keys were pressed", refused >= 21);
    /* a head's x clicked: refused the same way */
    app_action off = {.kind = ACT_ABLATE, .arg = 1};
    memcpy(before, s, sizeof *s);
    app_apply(s, &off);
    CHECK_TRUE("the x: the message says so", strstr(s->status, "is for the attention view"));
    CHECK_TRUE("the x: no head switched off",
               memcmp(before->cfg.ablate, s->cfg.ablate, sizeof s->cfg.ablate) == 0);
    /* Escape closes the innermost first: the panel, the presentation, then training */
    app_do(s, ACT_MENU);
    CHECK_INT("the More panel opens", 1, s->menu);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("Escape: the panel closed, training stays", !s->menu && s->train_mode);
    press(s, APP_KEY_F1, 0);
    CHECK_INT("F1 in training mode: help", 1, s->help);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("Escape: the help closed, training stays", !s->help && s->train_mode);
    press(s, 'p', 0);
    CHECK_INT("P in training mode: presentation", 1, s->look.present);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("Escape: the presentation closed, training stays",
               !s->look.present && s->train_mode);
    /* the same keys in the attention view do act: W draws designed heads */
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("Escape: the attention view", 0, s->train_mode);
    press(s, 'w', 0);
    CHECK_INT("W in the attention view: designed heads", MHA_WEIGHTS_PATTERNS, s->cfg.weights);
    free(before);
    app_state_destroy(s);
}

/* --- (2) every key of the README's tables has a button ----------------------------- */

typedef struct {
    int key, mods;
    char name[48];
} readme_key;

/* The key cells of the first table after the heading `heading`, as (key, mods); the
   rows whose text says the keys are the attention view's are skipped (they have,
   on purpose, no button there). Mouse alternatives ("click a head") are skipped;
   "1 … 9" becomes key '1' (a click on a head is its control). */
static int readme_keys(const char *readme, const char *heading, readme_key *out, int max) {
    const char *p = strstr(readme, heading);
    if (!p) fail_msg("README: expected a section \"%s\"", heading);
    p = strstr(p, "\n| ");
    if (!p) fail_msg("README %s: expected a table", heading);
    int n = 0, rows = 0;
    p++;
    while (*p == '|') {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(eol - p), p);
        p = *eol ? eol + 1 : eol;
        char *cell = line + 2, *end = strstr(cell, " | ");
        if (!end) continue;
        *end = '\0';
        if (!strcmp(cell, "key") || !strncmp(cell, "---", 3)) continue;
        if (strstr(end + 3, "is for the attention view")) continue;
        rows++;
        /* split on " / ", ", " and " or " */
        char *tok = cell;
        while (tok && *tok) {
            char *next = NULL, *cut = NULL;
            const char *seps[] = {" / ", ", ", " or "};
            for (int k = 0; k < 3; k++) {
                char *q = *tok ? strstr(tok + 1, seps[k]) : NULL; /* "," is a key too */
                if (q && (!cut || q < cut)) cut = q, next = q + strlen(seps[k]);
            }
            if (cut) *cut = '\0';
            while (*tok == ' ') tok++;
            if (!strncmp(tok, "or ", 3)) tok += 3;
            int key = 0, mods = 0;
            const char *k = tok;
            for (;;) {
                if (!strncmp(k, "Ctrl+", 5) && k[5])
                    mods |= APP_MOD_CTRL, k += 5;
                else if (!strncmp(k, "Shift+", 6) && k[6])
                    mods |= APP_MOD_SHIFT, k += 6;
                else
                    break;
            }
            static const struct {
                const char *name;
                int key;
            } named[] = {
                {"Up", APP_KEY_UP},         {"Down", APP_KEY_DOWN},  {"Left", APP_KEY_LEFT},
                {"Right", APP_KEY_RIGHT},   {"Tab", APP_KEY_TAB},    {"Enter", APP_KEY_RETURN},
                {"Escape", APP_KEY_ESCAPE}, {"Esc", APP_KEY_ESCAPE}, {"PgUp", APP_KEY_PAGEUP},
                {"PgDn", APP_KEY_PAGEDOWN}, {"F1", APP_KEY_F1},      {"F11", APP_KEY_F11},
                {"End", APP_KEY_END},       {"Home", APP_KEY_HOME},  {"1 \xE2\x80\xA6 9", '1'}};
            for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
                if (!strcmp(k, named[i].name)) key = named[i].key;
            if (!key && strlen(k) == 1) key = tolower((unsigned char)k[0]);
            if (!key && strlen(k) == 3 && k[0] == '"' && k[2] == '"') key = k[1];
            if (!key && !strchr(k, ' '))
                fail_msg("README %s: expected a key name, got \"%s\"", heading, tok);
            if (key && n < max) {
                out[n].key = key;
                out[n].mods = mods;
                snprintf(out[n].name, sizeof out[n].name, "%.40s", tok);
                n++;
            }
            tok = next;
        }
    }
    if (rows < 8) fail_msg("README %s: expected the key table, got %d rows", heading, rows);
    return n;
}

static char *read_readme(void) {
    FILE *f = fopen(MHAVIZ_README, "rb");
    if (!f) fail_msg("expected to read %s", MHAVIZ_README);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int same_action(app_action a, app_action b) {
    return a.kind == b.kind && a.arg == b.arg;
}

/* 1 if a button of the state's layout (the "More" panel open) does what the key
   does: a panel button that sends the key, or a click whose action is the key's. */
static int has_button(app_state *s, int key, int mods, char *found, size_t len) {
    const app_action want = app_key_action(s, key, mods);
    for (int b = 0; b < BTN_COUNT; b++) {
        s->menu = 1;
        s->layout_valid = 0;
        const view_layout *L = app_layout(s);
        if (!L->buttons[b].present) continue;
        char label[64];
        snprintf(label, sizeof label, "%s", L->buttons[b].label);
        if (b >= BTN_MENU && b <= BTN_MENU_LAST) {
            if (L->buttons[b].key == key && L->buttons[b].mods == mods) {
                snprintf(found, len, "%s", label);
                return 1;
            }
            continue;
        }
        const view_rect r = L->buttons[b].r;
        app_action then;
        app_click(s, r.x + r.w / 2, r.y + r.h / 2, &then);
        if (want.kind != ACT_NONE && same_action(then, want)) {
            snprintf(found, len, "%s", label);
            return 1;
        }
    }
    return 0;
}

static int has_snapshot(const app_state *s) {
    view_state vs;
    app_view(s, &vs);
    return vs.train && vs.train->step > 0;
}

static int wait_for(app_state *s, int (*pred)(const app_state *), double *clock) {
    for (int i = 0; i < 6000; i++) {
        *clock += 10.0;
        app_tick(s, *clock);
        app_async_poll(s);
        if (pred(s)) return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void check_table(app_state *s, const char *readme, const char *heading) {
    static readme_key keys[128];
    const int n = readme_keys(readme, heading, keys, 128);
    CHECK_TRUE("the table has keys", n >= 15);
    for (int i = 0; i < n; i++) {
        char found[64] = "";
        if (keys[i].key == '1' && !keys[i].mods) { /* 1 … 9: a click on a head */
            s->menu = 0;
            s->layout_valid = 0;
            const view_layout *L = app_layout(s);
            const view_rect m = L->heads[0].map;
            app_action then;
            app_click(s, m.x + m.w / 2, m.y + m.h / 2, &then);
            if (then.kind != ACT_FOCUS || then.arg != 1)
                fail_msg("README %s, \"1 … 9\": expected a click on head 1 to focus it", heading);
            continue;
        }
        if (!has_button(s, keys[i].key, keys[i].mods, found, sizeof found))
            fail_msg("README %s, key \"%s\": expected a button that does what it does", heading,
                     keys[i].name);
    }
    s->menu = 0;
    s->layout_valid = 0;
}

static void test_every_key_has_a_button(void **st) {
    (void)st;
    char *readme = read_readme();
    app_state *s = make_state(1024, 768);
    check_table(s, readme, "## Using the window");
    /* training mode, with the trainer's snapshot shown */
    CHECK_INT("the jobs layer", 0, app_async_enable(s, NULL, NULL, -1.0));
    double clock = 0.0;
    press(s, 'l', 0);
    CHECK_TRUE("a snapshot comes", wait_for(s, has_snapshot, &clock));
    check_table(s, readme, "## Learn live");
    /* training mode's header: no Text, Mask or Scale; its own buttons */
    const view_layout *L = app_layout(s);
    CHECK_TRUE("training: no Text button", !L->buttons[BTN_TEXT].present);
    CHECK_TRUE("training: no Mask button", !L->buttons[BTN_MASK].present);
    CHECK_TRUE("training: no Scale button", !L->buttons[BTN_SCALE].present);
    CHECK_TRUE("training: L, S, . and Esc buttons",
               L->buttons[BTN_TRAIN_GO].present && L->buttons[BTN_TRAIN_SPEED].present &&
                   L->buttons[BTN_TRAIN_STEP].present && L->buttons[BTN_TRAIN_BACK].present);
    /* and no panel button does what training refuses */
    s->menu = 1;
    s->layout_valid = 0;
    L = app_layout(s);
    for (int b = BTN_MENU; b <= BTN_MENU_LAST; b++)
        if (L->buttons[b].present) {
            const int k = L->buttons[b].key;
            CHECK_TRUE("training's panel: only keys that apply",
                       applies_in_training(k, L->buttons[b].mods));
        }
    app_async_disable(s);
    app_state_destroy(s);
    free(readme);
}

/* --- (3) they fit, and the toolbar stays put --------------------------------------- */

static void check_buttons_fit(app_state *s, const char *where) {
    s->layout_valid = 0;
    const view_layout *L = app_layout(s);
    for (int b = 0; b < BTN_COUNT; b++) {
        const view_button_box *x = &L->buttons[b];
        if (!x->present) continue;
        const int menu = b >= BTN_MENU && b <= BTN_MENU_LAST;
        const int size = menu                                         ? L->menu_font
                         : (b == BTN_PAGE_PREV || b == BTN_PAGE_NEXT) ? L->font_small
                                                                      : L->ui_font;
        const int tw = fx_text_w(x->label, size);
        EXPECT(tw <= x->r.w && fx_line_h(size) <= x->r.h,
               "%s: button \"%s\" " FX_RFMT ": expected its label (%d x %d) inside", where,
               x->label, FX_R(x->r), tw, fx_line_h(size));
        EXPECT(x->r.x >= 0 && x->r.y >= 0 && x->r.x + x->r.w <= s->width &&
                   x->r.y + x->r.h <= s->height,
               "%s: button \"%s\" " FX_RFMT ": expected inside the %dx%d window", where, x->label,
               FX_R(x->r), s->width, s->height);
        if (menu)
            EXPECT(x->r.x >= L->menu.x && x->r.y >= L->menu.y &&
                       x->r.x + x->r.w <= L->menu.x + L->menu.w &&
                       x->r.y + x->r.h <= L->menu.y + L->menu.h,
                   "%s: panel button \"%s\" " FX_RFMT ": expected inside the panel " FX_RFMT, where,
                   x->label, FX_R(x->r), FX_R(L->menu));
        for (int c = b + 1; c < BTN_COUNT; c++)
            if (L->buttons[c].present && b != BTN_PAGE_PREV && b != BTN_PAGE_NEXT)
                EXPECT(!fx_rect_overlap(x->r, L->buttons[c].r),
                       "%s: button \"%s\" " FX_RFMT " overlaps \"%s\" " FX_RFMT, where, x->label,
                       FX_R(x->r), L->buttons[c].label, FX_R(L->buttons[c].r));
    }
    if (s->menu) {
        EXPECT(L->menu.w > 0 && L->menu.x >= 0 && L->menu.x + L->menu.w <= s->width &&
                   L->menu.y >= L->header.y + L->header.h && L->menu.y + L->menu.h <= s->height,
               "%s: the panel " FX_RFMT ": expected under the header, inside the window", where,
               FX_R(L->menu));
        EXPECT(fx_text_w(VIEW_MENU_TITLE, L->menu_font) + 4 <= L->menu.w,
               "%s: the panel's title: expected it to fit", where);
    }
}

/* The help as drawn: every line inside the window, none over another. */
static void check_help_fits(app_state *s, const char *where) {
    s->help = 1;
    s->layout_valid = 0;
    const view_layout *L = app_layout(s);
    view_state vs;
    app_view(s, &vs);
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_render(&dl, cache, L, &vs, fx_measure, NULL);
    /* the help's text: what is drawn after its box (the last frame of width 2) */
    int first = 0;
    for (int i = 0; i < dl.count; i++)
        if (dl.cmds[i].kind == DC_TEXT && strstr(draw_cmd_text(&dl, &dl.cmds[i]), "(F1 or Esc"))
            first = i;
    int lines = 0;
    for (int i = first; i < dl.count; i++) {
        const draw_cmd *c = &dl.cmds[i];
        if (c->kind != DC_TEXT) continue;
        const char *t = draw_cmd_text(&dl, c);
        view_rect r = {c->x, c->y, fx_text_w(t, c->size), fx_line_h(c->size)};
        lines++;
        EXPECT(r.x >= 0 && r.y >= 0 && r.x + r.w <= s->width && r.y + r.h <= s->height,
               "%s: help line \"%.40s\" " FX_RFMT ": expected inside the %dx%d window", where, t,
               FX_R(r), s->width, s->height);
        EXPECT(c->size >= 9, "%s: help line \"%.30s\": expected legible, got %d px", where, t,
               c->size);
        for (int k = i + 1; k < dl.count; k++) {
            const draw_cmd *d = &dl.cmds[k];
            if (d->kind != DC_TEXT) continue;
            const char *u = draw_cmd_text(&dl, d);
            view_rect q = {d->x, d->y, fx_text_w(u, d->size), fx_line_h(d->size)};
            EXPECT(!fx_rect_overlap(r, q), "%s: help \"%.30s\" over \"%.30s\"", where, t, u);
        }
    }
    EXPECT(lines >= 20, "%s: expected the help's lines drawn, got %d", where, lines);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    s->help = 0;
}

static void resize(app_state *s, int w, int h, float zoom) {
    app_action a = {.kind = ACT_RESIZE, .x = w, .y = h, .f = 1.0f};
    app_apply(s, &a);
    s->look.zoom = zoom;
    s->layout_valid = 0;
}

static void sweep_sizes(app_state *s, const char *mode) {
    static const struct {
        int w, h;
    } sizes[] = {{1024, 768}, {1280, 720}, {1600, 900}, {1920, 1080}, {3840, 2160}, {768, 1024}};
    static const float zooms[] = {0.8f, 1.0f, 1.5f, 2.0f, 3.0f};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t z = 0; z < sizeof zooms / sizeof zooms[0]; z++) {
            char where[96];
            snprintf(where, sizeof where, "%s %dx%d zoom %.0f%%", mode, sizes[i].w, sizes[i].h,
                     100.0 * zooms[z]);
            resize(s, sizes[i].w, sizes[i].h, zooms[z]);
            s->menu = 0;
            check_buttons_fit(s, where);
            s->menu = 1;
            check_buttons_fit(s, where);
            s->menu = 0;
            if (zooms[z] == 1.0f) check_help_fits(s, where);
        }
}

/* The header's rectangles, to compare before and after a value changes. */
static void header_rects(app_state *s, view_rect out[BTN_MENU]) {
    s->layout_valid = 0;
    const view_layout *L = app_layout(s);
    for (int b = 0; b < BTN_MENU; b++)
        out[b] = L->buttons[b].present ? L->buttons[b].r : (view_rect){0, 0, 0, 0};
}

static void check_stays_put(app_state *s, const int *keys, int n, const char *where) {
    view_rect a[BTN_MENU], b[BTN_MENU];
    header_rects(s, a);
    for (int i = 0; i < n; i++) {
        press(s, keys[i], 0);
        header_rects(s, b);
        for (int k = 0; k < BTN_MENU; k++)
            EXPECT(fx_rect_eq(a[k], b[k]),
                   "%s: after key %c, button %d " FX_RFMT ": expected where it was " FX_RFMT, where,
                   keys[i] < 128 ? keys[i] : '?', k, FX_R(b[k]), FX_R(a[k]));
    }
}

static void test_fit_and_stay_put(void **st) {
    (void)st;
    fx_reset();
    app_state *s = make_state(1024, 768);
    sweep_sizes(s, "attention view");
    /* every value of the mask, scaling, colormap, theme and PNG buttons */
    resize(s, 1024, 768, 1.0f);
    static const int look[] = {'m', 'm', 'n', 'n', 'c', 'c', 'c', 'c', 't', 't'};
    check_stays_put(s, look, (int)(sizeof look / sizeof look[0]), "attention 1024x768");
    resize(s, 1600, 900, 1.0f);
    check_stays_put(s, look, (int)(sizeof look / sizeof look[0]), "attention 1600x900");
    for (int i = 0; i < 4; i++) { /* PNG ×1 … ×4 */
        view_rect a[BTN_MENU], b[BTN_MENU];
        header_rects(s, a);
        app_do(s, ACT_PNG_SCALE);
        header_rects(s, b);
        for (int k = 0; k < BTN_MENU; k++)
            EXPECT(fx_rect_eq(a[k], b[k]), "PNG button: button %d moved", k);
    }
    /* training mode: Pause / Go on and the three speeds */
    CHECK_INT("the jobs layer", 0, app_async_enable(s, NULL, NULL, -1.0));
    double clock = 0.0;
    press(s, 'l', 0);
    CHECK_TRUE("a snapshot comes", wait_for(s, has_snapshot, &clock));
    static const int pace[] = {'s', 's', 's', 'l', 'l'};
    for (int i = 0; i < 5; i++) {
        view_rect a[BTN_MENU], b[BTN_MENU];
        header_rects(s, a);
        press(s, pace[i], 0);
        for (int k = 0; k < 30; k++) { /* the snapshot that shows it */
            clock += 10.0;
            app_tick(s, clock);
            app_async_poll(s);
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        header_rects(s, b);
        for (int k = 0; k < BTN_MENU; k++)
            EXPECT(fx_rect_eq(a[k], b[k]),
                   "training: after key %c, button %d " FX_RFMT ": expected where it was " FX_RFMT,
                   pace[i], k, FX_R(b[k]), FX_R(a[k]));
    }
    press(s, 'l', 0); /* paused: the sweep sees one state */
    sweep_sizes(s, "training mode");
    app_async_disable(s);
    app_state_destroy(s);
    fx_finish("controls fit and stay put");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_training_refusals),
        cmocka_unit_test(test_every_key_has_a_button),
        cmocka_unit_test(test_fit_and_stay_put),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
