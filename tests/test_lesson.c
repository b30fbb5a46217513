#define _POSIX_C_SOURCE 200809L
/* test_lesson.c: a lesson in the SDL-free state machine (teach.c, lesson_file.c):
 * every lesson key pressed through the real key map, each checked against what
 * the lesson file says its step shows (so a key that does nothing fails), the
 * timed actions on the state's clock, the built-in list, a recording that
 * reopens to the same views, and a long caption parsed with work linear in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "lesson_file.h"
#include "request.h"
#include "samples.h"
#include "settings.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "teach.h"
#include "view_fixture.h"

static char dir[256];

/* Four steps: h 1, 2, 8 (head 3 focused, stages every 0.5 s), then causal. */
static const char lesson_text[] = "# test\n"
                                  "title = Four steps\n"
                                  "\n"
                                  "step = One head\n"
                                  "h = 1\n"
                                  "| All of d_model in one head.\n"
                                  "\n"
                                  "step = Two heads\n"
                                  "h = 2\n"
                                  "| d_k = d_model / h\n"
                                  "\n"
                                  "step = Eight heads\n"
                                  "h = 8\n"
                                  "focus = 3\n"
                                  "do = stages 0.5\n"
                                  "\n"
                                  "step = Causal\n"
                                  "mask = causal\n"
                                  "focus = none\n"
                                  "| A token sees only itself and earlier ones.\n";
static const int want_h[] = {1, 2, 8, 8};
static const int want_causal[] = {0, 0, 0, 1};

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static app_state *make_state(void) {
    cli_options o = fx_options();
    o.export_dir = dir;
    return fx_app_state(&o, 4, 64, NULL, NULL, 0);
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static app_state *open_lesson(void) {
    app_state *s = make_state();
    char path[512], err[600];
    snprintf(path, sizeof path, "%s/four.lesson", dir);
    write_file(path, lesson_text);
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    return s;
}

/* The step shown is k: the lesson says so and the state shows its h and mask. */
static void check_step(app_state *s, int k, const char *where) {
    int at = 0, n = 0;
    char what[200];
    snprintf(what, sizeof what, "%s: the lesson's step", where);
    CHECK_TRUE(what, app_teach_lesson(s, &at, &n) != NULL);
    CHECK_INT(what, k, at);
    CHECK_INT("steps", 4, n);
    snprintf(what, sizeof what, "%s: h of step %d", where, k);
    CHECK_INT(what, want_h[k - 1], s->cfg.h);
    snprintf(what, sizeof what, "%s: mask of step %d", where, k);
    CHECK_INT(what, want_causal[k - 1], s->cfg.mask == MHA_MASK_CAUSAL);
}

static void test_next_keys(void **st) {
    (void)st;
    const int keys[] = {' ', APP_KEY_PAGEDOWN, APP_KEY_RIGHT};
    for (int i = 0; i < 3; i++) {
        app_state *s = open_lesson();
        check_step(s, 1, "opened");
        const int d = s->cfg.d_model;
        press(s, keys[i], 0);
        check_step(s, 2, "next");
        CHECK_INT("Right steps the lesson, not d_model", d, s->cfg.d_model);
        press(s, keys[i], 0);
        press(s, keys[i], 0);
        check_step(s, 4, "next twice more");
        press(s, keys[i], 0);
        check_step(s, 4, "past the last");
        CHECK_TRUE("says it is the last", strstr(s->status, "last step") != NULL);
        app_state_destroy(s);
    }
}

static void test_back_keys(void **st) {
    (void)st;
    const int keys[] = {APP_KEY_BACKSPACE, APP_KEY_PAGEUP, APP_KEY_LEFT};
    for (int i = 0; i < 3; i++) {
        app_state *s = open_lesson();
        press(s, APP_KEY_END, 0);
        check_step(s, 4, "End");
        press(s, keys[i], 0);
        check_step(s, 3, "back");
        CHECK_INT("step 3 focuses head 3", 3, s->look.focus);
        press(s, keys[i], 0);
        check_step(s, 2, "back again");
        CHECK_INT("step 2's view: step 3's focus gone", 0, s->look.focus);
        press(s, APP_KEY_HOME, 0);
        check_step(s, 1, "Home");
        press(s, keys[i], 0);
        check_step(s, 1, "before the first");
        app_state_destroy(s);
    }
}

static void test_jump_reset_leave(void **st) {
    (void)st;
    app_state *s = open_lesson();
    press(s, '3', 0);
    check_step(s, 1, "a digit alone does not move");
    press(s, APP_KEY_RETURN, 0);
    check_step(s, 3, "3 then Enter");
    CHECK_INT("not the text field", 0, s->editing);
    press(s, '1', 0);
    press(s, '2', 0);
    press(s, APP_KEY_RETURN, 0);
    CHECK_TRUE("there is no step 12", strstr(s->status, "no step 12") != NULL);
    check_step(s, 3, "12 then Enter");
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("Enter without digits: the text field", 1, s->editing);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_INT("closed", 0, s->editing);
    /* exploring: every other key acts as usual; F5 returns */
    press(s, APP_KEY_DOWN, 0);
    CHECK_INT("Down still steps h", 4, s->cfg.h);
    press(s, 'm', 0);
    CHECK_INT("M still masks", MHA_MASK_CAUSAL, (int)s->cfg.mask);
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("the caption says the view was explored", vs.caption && vs.caption->explored);
    press(s, APP_KEY_F5, 0);
    check_step(s, 3, "F5");
    app_view(s, &vs);
    CHECK_TRUE("caption", vs.caption != NULL);
    CHECK_INT("caption: step", 3, vs.caption->step);
    CHECK_INT("caption: of", 4, vs.caption->steps);
    CHECK_STR("caption: heading", "Eight heads", vs.caption->heading);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("left", app_teach_lesson(s, NULL, NULL) == NULL);
    CHECK_INT("the view stays: h", 8, s->cfg.h);
    app_view(s, &vs);
    CHECK_TRUE("no caption after leaving", vs.caption == NULL);
    const int d = s->cfg.d_model;
    press(s, APP_KEY_RIGHT, 0);
    CHECK_TRUE("Right is d_model's again", s->cfg.d_model != d);
    app_state_destroy(s);
}

/* Presentation is the presenter's: P at step 1 stays through Space, Backspace, a jump
   and F5; a step whose own lines say `present` changes it, and the step after keeps it. */
static void test_presentation_stays(void **st) {
    (void)st;
    app_state *s = open_lesson();
    CHECK_INT("opened: not presenting (the lesson does not say)", 0, s->look.present);
    press(s, 'p', 0);
    CHECK_INT("P presents", 1, s->look.present);
    press(s, ' ', 0);
    check_step(s, 2, "Space");
    CHECK_INT("Space keeps the presentation", 1, s->look.present);
    press(s, APP_KEY_BACKSPACE, 0);
    CHECK_INT("Backspace keeps it", 1, s->look.present);
    press(s, '4', 0);
    press(s, APP_KEY_RETURN, 0);
    check_step(s, 4, "4 then Enter");
    CHECK_INT("a jump keeps it", 1, s->look.present);
    press(s, APP_KEY_F5, 0);
    CHECK_INT("F5 keeps it", 1, s->look.present);
    app_state_destroy(s);

    /* a lesson that says it: on at step 1, off at step 3 (its own line), kept at 4 */
    s = make_state();
    char path[512], err[600];
    snprintf(path, sizeof path, "%s/present.lesson", dir);
    write_file(path, "title = Presented\n"
                     "step = One\nh = 1\npresent = on\n"
                     "step = Two\nh = 2\n"
                     "step = Three\nh = 8\npresent = off\n"
                     "step = Four\nmask = causal\n");
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    CHECK_INT("step 1 says present = on", 1, s->look.present);
    press(s, ' ', 0);
    CHECK_INT("step 2 keeps it", 1, s->look.present);
    press(s, ' ', 0);
    CHECK_INT("step 3 says present = off", 0, s->look.present);
    press(s, 'p', 0);
    press(s, ' ', 0);
    CHECK_INT("step 4 keeps the presenter's P", 1, s->look.present);
    press(s, APP_KEY_HOME, 0);
    CHECK_INT("Home: step 1 says on", 1, s->look.present);
    app_state_destroy(s);
}

/* The text of every run drawn for the state's view, joined by '\n' into buf. */
static void drawn_text(app_state *s, char *buf, size_t len) {
    view_state vs;
    app_view(s, &vs);
    const view_layout *L = app_layout(s);
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    view_render(&dl, cache, L, &vs, fx_measure, NULL);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < dl.count; i++)
        if (dl.cmds[i].kind == DC_TEXT && o < len)
            o += (size_t)snprintf(buf + o, len - o, "%s\n", draw_cmd_text(&dl, &dl.cmds[i]));
    draw_list_free(&dl);
    view_cache_destroy(cache);
}

/* While a lesson runs, PgUp/PgDn step it: the page note names Shift+PgUp/PgDn, the keys
   that page there, and names PgUp/PgDn again once the lesson is left. */
static void test_page_note_keys(void **st) {
    (void)st;
    app_state *s = make_state();
    char path[512], err[600];
    snprintf(path, sizeof path, "%s/pages.lesson", dir);
    write_file(path, "title = Pages\nstep = Sixteen heads, large\nh = 16\nzoom = 300\n");
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    CHECK_TRUE("premise: the heads page", app_layout(s)->pages > 1);
    static char text[1 << 16];
    drawn_text(s, text, sizeof text);
    CHECK_TRUE("the note names Shift+PgUp/PgDn", strstr(text, "Shift+PgUp/PgDn") != NULL);
    press(s, APP_KEY_PAGEDOWN, 0);
    CHECK_TRUE("PgDn steps the lesson (there is no next step)",
               strstr(s->status, "last step") != NULL);
    const int first = app_layout(s)->first_head;
    press(s, APP_KEY_PAGEDOWN, APP_MOD_SHIFT);
    CHECK_TRUE("Shift+PgDn pages", app_layout(s)->first_head > first);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_TRUE("premise: the lesson is left", app_teach_lesson(s, NULL, NULL) == NULL);
    drawn_text(s, text, sizeof text);
    CHECK_TRUE("left: the note names PgUp/PgDn", strstr(text, "PgUp/PgDn") != NULL);
    CHECK_TRUE("left: not Shift+", strstr(text, "Shift+PgUp/PgDn") == NULL);
    app_state_destroy(s);
}

static void test_stages_on_the_clock(void **st) {
    (void)st;
    app_state *s = open_lesson();
    app_tick(s, 1000.0);
    press(s, '3', 0);
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("arrival: stage 1", 1, s->look.step);
    CHECK_INT("next in 500 ms", 500, app_next_timeout_ms(s) > 500 ? 999 : app_teach_timeout_ms(s));
    app_tick(s, 1499.0);
    CHECK_INT("not yet", 1, s->look.step);
    app_tick(s, 1500.0);
    CHECK_INT("stage 2 after 0.5 s", 2, s->look.step);
    app_tick(s, 1000.0 + 500.0 * 20);
    CHECK_INT("the last stage", 9, s->look.step);
    CHECK_INT("nothing timed after the last", -1, app_teach_timeout_ms(s));
    app_state_destroy(s);
}

static void test_sweep(void **st) {
    (void)st;
    app_state *s = make_state();
    char path[512], err[600];
    snprintf(path, sizeof path, "%s/sweep.lesson", dir);
    write_file(path, "title = sweep\nstep = every h\nd_model = 12\ndo = sweep h\n");
    app_tick(s, 0.0);
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    const int divisors[] = {1, 2, 3, 4, 6, 12};
    for (int i = 0; i < 6; i++) {
        CHECK_INT("h sweeps the divisors of 12", divisors[i], s->cfg.h);
        app_tick(s, 2000.0 * (i + 1));
    }
    CHECK_INT("ends at d_model", 12, s->cfg.h);
    app_state_destroy(s);
}

static void test_train_and_compare(void **st) {
    (void)st;
    app_state *s = make_state();
    char path[512], err[600];
    snprintf(path, sizeof path, "%s/train.lesson", dir);
    write_file(path, "title = t\nstep = a\nh = 2\n| x\nstep = trained\ndo = train 120\n"
                     "step = pinned\ndo = compare h=1\nstep = plain\nh = 4\n");
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    CHECK_INT("step 1: attention", 0, s->train_mode);
    press(s, ' ', 0);
    CHECK_INT("do = train: training mode", 1, s->train_mode);
    learn_config lc;
    long steps = 0;
    int layer = 0;
    app_training_get(s, &lc, &steps, &layer);
    CHECK_INT("do = train 120: the run stops at 120", 120, steps);
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("training is the step's own: not explored", vs.caption && !vs.caption->explored);
    press(s, ' ', 0);
    CHECK_INT("the next step: attention again", 0, s->train_mode);
    CHECK_TRUE("do = compare h=1 pins", s->pin != NULL);
    app_view(s, &vs);
    CHECK_TRUE("compare is the step's own: not explored", vs.caption && !vs.caption->explored);
    press(s, ' ', 0);
    CHECK_TRUE("the next step unpins (its view: compare = off)", s->pin == NULL);
    CHECK_INT("h", 4, s->cfg.h);
    app_state_destroy(s);
}

static void test_builtin_list(void **st) {
    (void)st;
    char ldir[300], p[400];
    snprintf(ldir, sizeof ldir, "%s/lessons", dir);
    mkdir(ldir, 0777);
    snprintf(p, sizeof p, "%s/a.lesson", ldir);
    write_file(p, "title = Alpha lesson\nstep = a\nh = 2\n");
    snprintf(p, sizeof p, "%s/b.lesson", ldir);
    write_file(p, "title = Beta lesson\nstep = b\nh = 16\nstep = c\nh = 8\n");
    snprintf(p, sizeof p, "%s/c.lesson", ldir);
    write_file(p, "title = Broken\nstep = c\nh = 4\nfocus = 7\n");
    setenv("MHAVIZ_LESSONS", ldir, 1);
    app_state *s = make_state();
    press(s, 'g', 0);
    CHECK_TRUE("G lists Alpha", strstr(s->notice, "1 Alpha lesson") != NULL);
    CHECK_TRUE("G lists Beta", strstr(s->notice, "2 Beta lesson") != NULL);
    press(s, APP_KEY_ESCAPE, 0);
    CHECK_STR("Esc closes the list", "", s->notice);
    const view_layout *L = app_layout(s);
    CHECK_TRUE("the header has a Lessons button", L->buttons[BTN_LESSONS].present);
    const view_rect r = L->buttons[BTN_LESSONS].r;
    app_action click = {.kind = ACT_CLICK, .x = r.x + r.w / 2, .y = r.y + r.h / 2};
    app_apply(s, &click);
    CHECK_TRUE("the button lists the lessons", strstr(s->notice, "2 Beta lesson") != NULL);
    press(s, APP_KEY_ESCAPE, 0);
    press(s, 'g', 0);
    press(s, '2', 0);
    int k = 0, n = 0;
    CHECK_TRUE("2 opens Beta", app_teach_lesson(s, &k, &n) != NULL);
    CHECK_INT("Beta's steps", 2, n);
    CHECK_INT("Beta's step 1: h", 16, s->cfg.h);
    CHECK_INT("the digit did not focus a head", 0, s->look.focus);
    press(s, 'g', 0);
    CHECK_TRUE("G lists the broken one too", strstr(s->notice, "3 c.lesson (broken)") != NULL);
    press(s, '3', 0);
    CHECK_TRUE("a broken lesson: FILE:LINE: on the status line",
               strstr(s->status, "c.lesson:4: focus = 7") != NULL);
    CHECK_INT("the view stays", 16, s->cfg.h);
    CHECK_TRUE("Beta stays open", app_teach_lesson(s, &k, &n) != NULL && n == 2);
    app_state_destroy(s);
    unsetenv("MHAVIZ_LESSONS");
}

static void type(app_state *s, const char *text) {
    app_action a = {.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
}

static void test_record_round_trip(void **st) {
    (void)st;
    app_state *s = make_state();
    press(s, 'a', 0);
    CHECK_INT("A without recording: no field", 0, s->editing);
    press(s, 'r', APP_MOD_CTRL);
    int steps = -1;
    const char *path = app_teach_recording(s, &steps);
    CHECK_TRUE("Ctrl+R records", path != NULL);
    char file[4096];
    snprintf(file, sizeof file, "%s", path);
    CHECK_INT("no step yet", 0, steps);
    app_settings *views[4];
    /* four views, each with a caption: h, the mask and a focus, then typed text
       with "quotes" and a tab, pinned for compare */
    for (int i = 0; i < 4; i++) {
        if (i == 1) press(s, APP_KEY_UP, 0), press(s, APP_KEY_UP, 0);
        if (i == 2) press(s, 'm', 0), press(s, '2', 0);
        if (i == 3) {
            press(s, APP_KEY_ESCAPE, 0);
            press(s, APP_KEY_RETURN, 0);
            type(s, "the \"cat\"\tsat  ");
            press(s, APP_KEY_RETURN, 0);
            CHECK_INT("custom text", 0, s->sample);
            press(s, 'b', 0);
            press(s, APP_KEY_DOWN, 0);
        }
        views[i] = app_settings_create();
        app_settings_capture(s, views[i]);
        press(s, 'a', 0);
        CHECK_INT("A opens the caption field", 1, s->editing);
        char cap[64];
        snprintf(cap, sizeof cap, "Step %d | the line of W_%d", i + 1, i + 1);
        type(s, cap);
        press(s, APP_KEY_RETURN, 0);
        CHECK_INT("Enter stores it", 0, s->editing);
        app_teach_recording(s, &steps);
        CHECK_INT("steps recorded", i + 1, steps);
        lesson L;
        char err[600];
        if (lesson_read(file, &L, err, sizeof err) != 0) fail_msg("reread: %s", err);
        CHECK_INT("the file has every step so far", i + 1, L.count);
        lesson_free(&L);
    }
    press(s, 'r', APP_MOD_CTRL);
    CHECK_TRUE("Ctrl+R stops", app_teach_recording(s, NULL) == NULL);
    CHECK_TRUE("the notice names the file", strstr(s->notice, "recorded 4 steps") != NULL);
    /* reopening gives the same views */
    lesson L;
    char err[600];
    if (lesson_read(file, &L, err, sizeof err) != 0) fail_msg("reread: %s", err);
    CHECK_INT("steps", 4, L.count);
    for (int i = 0; i < 4; i++) {
        char what[64];
        snprintf(what, sizeof what, "step %d's view as recorded", i + 1);
        CHECK_TRUE(what, app_settings_equal(L.steps[i].view, views[i]));
        char h[32];
        snprintf(h, sizeof h, "Step %d", i + 1);
        CHECK_STR("heading", h, L.steps[i].heading);
    }
    CHECK_STR("caption line", "the line of W_2", L.steps[1].text);
    /* and presenting it shows them */
    app_state *p = make_state();
    if (app_teach_open(p, file, err, sizeof err) != 0) fail_msg("open: %s", err);
    for (int i = 0; i < 4; i++) {
        app_settings *now = app_settings_create();
        app_settings_capture(p, now);
        CHECK_TRUE("presented as recorded", app_settings_equal(now, views[i]));
        app_settings_free(now);
        press(p, ' ', 0);
    }
    /* the file is diff-friendly: step 2 writes only h */
    size_t need = lesson_format(&L, NULL, 0);
    char *txt = malloc(need + 1);
    lesson_format(&L, txt, need + 1);
    const char *s2 = strstr(txt, "step = Step 2\n");
    CHECK_TRUE("step 2 is there", s2 != NULL);
    CHECK_TRUE("step 2 sets h", strncmp(s2 + 14, "h = ", 4) == 0);
    const char *s3 = strstr(txt, "step = Step 3\n");
    CHECK_TRUE("step 2 sets only h", s3 && strchr(strchr(s2 + 14, '\n') + 1, '|') < s3 &&
                                         strchr(s2 + 14, '\n')[1] == '|');
    free(txt);
    lesson_free(&L);
    for (int i = 0; i < 4; i++) app_settings_free(views[i]);
    app_state_destroy(p);
    app_state_destroy(s);
}

/* A hand-written lesson written back (lesson_format) and read again: the same
   views, captions and actions; each step writes only what differs. */
static void test_format_round_trip(void **st) {
    (void)st;
    lesson A, B;
    char err[600];
    if (lesson_parse(lesson_text, strlen(lesson_text), "four.lesson", ".", &A, err, sizeof err))
        fail_msg("parse: %s", err);
    size_t need = lesson_format(&A, NULL, 0);
    char *txt = malloc(need + 1);
    CHECK_INT("the length it said", need, lesson_format(&A, txt, need + 1));
    if (lesson_parse(txt, need, "again.lesson", ".", &B, err, sizeof err))
        fail_msg("reparse: %s\n%s", err, txt);
    CHECK_INT("steps", A.count, B.count);
    CHECK_STR("title", A.title, B.title);
    for (int k = 0; k < A.count; k++) {
        CHECK_TRUE("the same view", app_settings_equal(A.steps[k].view, B.steps[k].view));
        CHECK_STR("heading", A.steps[k].heading, B.steps[k].heading);
        CHECK_STR("caption", A.steps[k].text, B.steps[k].text);
        CHECK_INT("actions", A.steps[k].nacts, B.steps[k].nacts);
        for (int i = 0; i < A.steps[k].nacts; i++) {
            CHECK_INT("action", A.steps[k].acts[i].kind, B.steps[k].acts[i].kind);
            CHECK_NEAR("seconds", A.steps[k].acts[i].seconds, B.steps[k].acts[i].seconds, 0);
        }
    }
    CHECK_TRUE("step 2 writes h = 2 alone",
               strstr(txt, "step = Two heads\nh = 2\n| d_k = d_model / h\n") != NULL);
    free(txt);
    lesson_free(&A);
    lesson_free(&B);
}

/* Parses a lesson of one step whose caption is n lines of "| caption line\n":
   the bytes the parser wrote or moved for the caption (lesson.copied_); the
   caption's own length into *len. */
static size_t parse_lines(int n, size_t *len) {
    static const char one[] = "| caption line\n";
    const size_t l1 = sizeof one - 1;
    char *text = malloc(16 + (size_t)n * l1), err[600];
    assert_non_null(text);
    size_t o = (size_t)sprintf(text, "step = a\n");
    for (int i = 0; i < n; i++, o += l1) memcpy(text + o, one, l1);
    lesson L;
    if (lesson_parse(text, o, "long.lesson", ".", &L, err, sizeof err)) fail_msg("%s", err);
    free(text);
    *len = strlen(L.steps[0].text);
    CHECK_INT("the caption's bytes", (long)*len, (long)((size_t)n * (l1 - 2) - 1));
    const size_t copied = L.copied_;
    lesson_free(&L);
    return copied;
}

/* A caption of many lines is read in time linear in its length (issue 34: 140k
   lines took 3.8 s, each line copying all before it): for n and 4n lines the
   parser writes or moves at most 4 bytes per caption byte (doubling growth: under
   3), so 4n lines cost at most about 4 times n's; appending by copying the whole
   caption each line costs n / 2 bytes per byte, 20,000 times here. Counted, not
   timed. */
static void test_caption_linear(void **st) {
    (void)st;
    size_t len1, len4;
    const size_t w1 = parse_lines(10000, &len1), w4 = parse_lines(40000, &len4);
    printf("caption bytes %zu and %zu: %zu and %zu written or moved\n", len1, len4, w1, w4);
    CHECK_TRUE("n lines: at most 4 bytes of work a caption byte", w1 <= 4 * len1);
    CHECK_TRUE("4n lines: at most 4 bytes of work a caption byte", w4 <= 4 * len4);
    CHECK_TRUE("4n lines: at most 5 times n's work", w4 <= 5 * w1);
}

/* In the window a step's model is read later, on the jobs layer: a step naming a folder
   that is not there (a README model not downloaded) is refused at once, the step before
   it kept with its caption, and the status names the files and the page. */
static void test_missing_model_step(void **st) {
    (void)st;
    app_state *s = make_state();
    app_request_attach(s, 1e12);
    char path[512], err[600];
    snprintf(path, sizeof path, "%s/smol.lesson", dir);
    write_file(path, "title = Built-in, then a model\n"
                     "step = Two heads\n"
                     "h = 2\n"
                     "| the built-in model\n"
                     "step = SmolLM2\n"
                     "model = models/SmolLM2-135M\n"
                     "| nine query heads\n");
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("open: %s", err);
    press(s, ' ', 0);
    int at = 0;
    app_teach_lesson(s, &at, NULL);
    CHECK_INT("the step before stays", 1, at);
    CHECK_INT("no model asked for", 0, s->gpt_wanted);
    CHECK_INT("its view: h", 2, s->cfg.h);
    CHECK_TRUE("the status names the files and the page",
               strstr(s->status, "step 2: model: ") &&
                   strstr(s->status, "download config.json, model.safetensors and "
                                     "tokenizer.json from huggingface.co/HuggingFaceTB/"
                                     "SmolLM2-135M into it"));
    CHECK_TRUE("why: the lesson's line naming it",
               strstr(app_teach_why(s), "smol.lesson:6: model: "));
    view_state vs;
    app_view(s, &vs);
    CHECK_STR("the caption stays step 1's", "Two heads", vs.caption ? vs.caption->heading : "");
    app_state_destroy(s);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/mhaviz-test-lesson-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_keys),
        cmocka_unit_test(test_back_keys),
        cmocka_unit_test(test_jump_reset_leave),
        cmocka_unit_test(test_presentation_stays),
        cmocka_unit_test(test_page_note_keys),
        cmocka_unit_test(test_stages_on_the_clock),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_train_and_compare),
        cmocka_unit_test(test_builtin_list),
        cmocka_unit_test(test_record_round_trip),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_caption_linear),
        cmocka_unit_test(test_missing_model_step),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
