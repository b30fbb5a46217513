#define _POSIX_C_SOURCE 200809L
/* test_save_rules.c: what the window writes, the reader reads (issue 34, item 2).
 * Each case drives the state machine as the window's keys do and then reads the
 * saved view file and lesson back with the readers `--state` and `--lesson` use:
 *   (a) a non-ASCII text file over 8 KiB opened with a model loaded: the kept text
 *       is cut at a character boundary, and the view file and lesson read back;
 *   (b) a blank text typed with a model loaded is refused, the view kept;
 *   (c) Ctrl+R, A, Esc, Ctrl+R on the view the lesson starts from adds no step,
 *       and a step with only a heading reads back;
 *   (d) a view saved with the model's overview on, or a head focused on page 2,
 *       exports (`--state F --export`);
 *   (e) a loaded model's heads removed with X are saved (model-ablate) and removed
 *       again by the window that opens the file and by `--state F --export`: the
 *       next-token probabilities are those of tests/gpt2_ref.py with that head
 *       removed (MHAVIZ_TEST_REF, when PyTorch was there), and the figure is byte
 *       for byte that of `--model M --ablate 1:2`;
 * and what the save soak found: a lesson step back to a model's own heads with a
 * head focused exports, and a figure saved while recording has no recording band.
 * MHAVIZ_TEST_MODEL names a checkpoint (state_model_check.py writes one); without
 * it the model cases are skipped. argv[1], when given, is the mhaviz binary that
 * (d) runs. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "async.h"
#include "check.h"
#include "cli.h"
#include "lesson_file.h"
#include "samples.h"
#include "settings.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "teach.h"
#include "text_file.h"
#include "view_fixture.h"

static char dir[] = "/tmp/mhaviz-save-rules-XXXXXX";
static const char *mhaviz_bin;

static const char *model_path(void) {
    const char *p = getenv("MHAVIZ_TEST_MODEL");
    return p && *p ? p : NULL;
}

/* A window's state: the first sample, and the model at path loaded (NULL: none). */
static app_state *make_state(const char *path) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT; /* the model read at once, as the jobs layer would */
    o.model_path = path;
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    s->read_text = text_file_read_regular; /* the window's reader */
    s->export_dir = dir;
    return s;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static void type(app_state *s, const char *text) {
    app_action a = {.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
}

/* Removes every file in dir (the saved views and lessons of one case). */
static void clear_dir(void) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

/* The one file in dir whose name ends with ext into out; 0 when there is none. */
static int find_saved(const char *ext, char *out, size_t len) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL) {
        const size_t n = strlen(e->d_name), el = strlen(ext);
        if (n > el && strcmp(e->d_name + n - el, ext) == 0) {
            snprintf(out, len, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    return found;
}

/* Ctrl+Shift+V as the window does it; the view file must read back. */
static void save_view_and_read(app_state *s, const char *what) {
    press(s, 'v', APP_MOD_CTRL | APP_MOD_SHIFT);
    assert_int_equal(app_take_save(s), APP_SAVE_VIEW_FILE);
    char path[4096];
    assert_int_equal(app_view_file_save(s, path, sizeof path), 0);
    app_settings *st = app_settings_create();
    char err[1024] = "";
    const int rc = app_view_file_read(path, st, err, sizeof err);
    char msg[1200];
    snprintf(msg, sizeof msg, "%s: the saved view reads back (%s)", what, err);
    CHECK_INT(msg, 0, rc);
    app_settings_free(st);
}

/* Ctrl+R, A, Esc, Ctrl+R: a lesson of the view; 1 when a file was written, which
   must then read back. */
static int record_and_read(app_state *s, const char *what) {
    press(s, 'r', APP_MOD_CTRL);
    press(s, 'a', 0);
    press(s, APP_KEY_ESCAPE, 0);
    press(s, 'r', APP_MOD_CTRL);
    char path[4096];
    if (!find_saved(".lesson", path, sizeof path)) return 0;
    lesson L;
    char err[1024] = "";
    const int rc = lesson_read(path, &L, err, sizeof err);
    char msg[1200];
    snprintf(msg, sizeof msg, "%s: the recorded lesson reads back (%s)", what, err);
    CHECK_INT(msg, 0, rc);
    if (rc == 0) lesson_free(&L);
    return 1;
}

static int valid_utf8(const char *t) {
    tok_list toks = {0};
    char err[256];
    tok_split(&toks, t, 1, NULL, err, sizeof err);
    const int ok = toks.replaced == 0;
    tok_free(&toks);
    return ok;
}

/* (a): byte 8192 of the file (the first past the field's 8 KiB) is inside a
   two-byte character. */
static void test_long_non_ascii_text_reads_back(void **st) {
    (void)st;
    if (!model_path()) skip();
    const size_t len = 12000;
    char *text = malloc(len + 1);
    assert_non_null(text);
    size_t o = 0;
    /* "déjà " is 7 bytes, the second byte of its é at offset 2: the a's before it
       shift one onto byte 8192 (index 8191, the first the field cannot hold) */
    while ((APP_EDIT_MAX - 1 - o) % 7 != 2) text[o++] = 'a';
    while (o + 7 <= len) o += (size_t)sprintf(text + o, "d\xC3\xA9j\xC3\xA0 ");
    text[o] = '\0';
    assert_true(((unsigned char)text[APP_EDIT_MAX - 1] & 0xC0) == 0x80);
    char path[600];
    snprintf(path, sizeof path, "%s/long.txt", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, o, f);
    fclose(f);
    app_state *s = make_state(model_path());
    CHECK_INT("opened", 0, app_open_text_file(s, path));
    unlink(path);
    CHECK_TRUE("the kept text is whole characters", valid_utf8(s->custom));
    CHECK_TRUE("and at most the field's size", strlen(s->custom) < APP_EDIT_MAX);
    CHECK_TRUE("and the file's beginning", strncmp(s->custom, text, strlen(s->custom)) == 0);
    save_view_and_read(s, "(a)");
    CHECK_TRUE("a lesson was recorded", record_and_read(s, "(a)"));
    app_state_destroy(s);
    free(text);
    clear_dir();
}

/* (b): three spaces typed with a model loaded. */
static void test_blank_text_refused_with_a_model(void **st) {
    (void)st;
    if (!model_path()) skip();
    app_state *s = make_state(model_path());
    const int sample = s->sample;
    press(s, APP_KEY_RETURN, 0);
    type(s, "   ");
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("the sample is kept", sample, s->sample);
    CHECK_TRUE("the status says why", strstr(s->status, "blank") != NULL);
    save_view_and_read(s, "(b)");
    app_state_destroy(s);
    clear_dir();
}

/* (b) without a model: the same rule, the same status. */
static void test_blank_text_refused_without_a_model(void **st) {
    (void)st;
    app_state *s = make_state(NULL);
    const int sample = s->sample;
    press(s, APP_KEY_RETURN, 0);
    type(s, " \t\xC2\xA0 ");
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("the sample is kept", sample, s->sample);
    CHECK_TRUE("the status says why", strstr(s->status, "blank") != NULL);
    app_state_destroy(s);
}

/* (c): the lesson's first step would be the defaults with no caption. */
static void test_empty_first_step_not_added(void **st) {
    (void)st;
    app_state *s = make_state(NULL);
    CHECK_TRUE("no lesson file for a step that is not added", !record_and_read(s, "(c)"));
    clear_dir();
    /* a heading alone on that view is a step, and reads back */
    press(s, 'r', APP_MOD_CTRL);
    press(s, 'a', 0);
    type(s, "Where we start");
    press(s, APP_KEY_RETURN, 0);
    press(s, 'r', APP_MOD_CTRL);
    char path[4096];
    CHECK_INT("a lesson of one step", 1, find_saved(".lesson", path, sizeof path));
    lesson L;
    char err[1024] = "";
    const int rc = lesson_read(path, &L, err, sizeof err);
    if (rc != 0) fail_msg("the heading-only step does not read back: %s", err);
    CHECK_INT("one step", 1, L.count);
    CHECK_STR("its heading", "Where we start", L.steps[0].heading);
    lesson_free(&L);
    app_state_destroy(s);
    clear_dir();
}

/* Runs mhaviz with args (NULL-terminated) quietly; its exit status. */
static int run_mhaviz(const char *const *args) {
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout)) _exit(127);
        execv(mhaviz_bin, (char *const *)args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Saves the view (Ctrl+Shift+V), reads the file back, and exports it headless with
   `mhaviz --state F --export`, which must exit 0. */
static void save_view_and_export(app_state *s, const char *what) {
    char path[4096];
    save_view_and_read(s, what);
    assert_int_equal(find_saved(".view", path, sizeof path), 1);
    char png[600];
    snprintf(png, sizeof png, "%s/x.png", dir);
    const char *args[] = {mhaviz_bin, "--state", path, "--export", png, NULL};
    CHECK_INT("--state F --export exits 0", 0, run_mhaviz(args));
}

/* must equal TEXT in state_model_check.py, whose reference is on it */
#define REF_TEXT "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."

static int cmp_desc(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The next-token panel's probabilities against the reference's largest (name in
   MHAVIZ_TEST_REF: V, then V values); nothing without the reference. */
static void check_next_ref(const char *where, const view_next *nx, const char *name) {
    const char *ref = getenv("MHAVIZ_TEST_REF");
    if (!ref || !*ref) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ref, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int v = 0;
    assert_int_equal(fscanf(f, "%d", &v), 1);
    double *p = malloc((size_t)v * sizeof *p);
    assert_non_null(p);
    for (int i = 0; i < v; i++) assert_int_equal(fscanf(f, "%lf", &p[i]), 1);
    fclose(f);
    qsort(p, (size_t)v, sizeof *p, cmp_desc);
    for (int k = 0; k < nx->k; k++)
        if (fabs(p[k] - nx->p[k]) > 1e-4)
            fail_msg("%s: rank %d: p %.7f, reference %.7f", where, k + 1, nx->p[k], p[k]);
    free(p);
}

/* The file at path, whole (malloc'd). */
static char *slurp(const char *path) {
    char *t = NULL, err[600];
    if (text_file_read(path, &t, err, sizeof err) != 0) fail_msg("%s", err);
    return t;
}

/* 1 when the files at a and b hold the same bytes (both readable). */
static int same_bytes(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    for (int x = 0, y = 0; same && (x != EOF || y != EOF);) {
        x = fgetc(fa);
        y = fgetc(fb);
        same = x == y;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* (e): head 2 of layer 1 removed with X, the view saved and opened again. */
static void test_removed_heads_saved(void **st) {
    (void)st;
    if (!model_path() || !mhaviz_bin) skip();
    app_state *s = make_state(model_path());
    press(s, APP_KEY_RETURN, 0); /* the field opens with its text selected: typing replaces it */
    type(s, REF_TEXT);
    press(s, APP_KEY_RETURN, 0);
    app_action x = {.kind = ACT_ABLATE, .arg = 2};
    app_apply(s, &x);
    view_state vs;
    app_view(s, &vs);
    CHECK_INT("head 2 of layer 1 is off", 1, vs.overview->off[1]);
    check_next_ref("X in the window", vs.next, "off_l1h2.txt");
    float p[VIEW_NEXT_MAX];
    memcpy(p, vs.next->p, sizeof p);
    save_view_and_read(s, "(e)");
    char path[4096];
    assert_int_equal(find_saved(".view", path, sizeof path), 1);
    char *text = slurp(path);
    CHECK_TRUE("the file says model-ablate = 1:2", strstr(text, "\nmodel-ablate = 1:2\n") != NULL);
    free(text);

    /* a window with no model opens it: the model, and head 2 of layer 1 off */
    app_state *t = make_state(NULL);
    CHECK_INT("the window opens it", 0, app_view_file_open(t, path));
    app_view(t, &vs);
    assert_non_null(vs.next);
    CHECK_INT("head 2 of layer 1 is off again", 1, vs.overview->off[1]);
    for (int k = 0; k < vs.next->k; k++)
        CHECK_TRUE("the next tokens as the window had them", vs.next->p[k] == p[k]);
    check_next_ref("the view opened", vs.next, "off_l1h2.txt");
    const attn_layer *L = vs.layer;
    for (int r = 0; r < L->n; r++)
        for (int c = 0; c < L->d_k; c++)
            CHECK_TRUE("Concat's band of head 2 is zero",
                       L->concat[(size_t)r * L->d_model + L->d_k + c] == 0.0f);
    app_state_destroy(t);

    /* the window's way: the jobs layer reads the model, with its heads off */
    t = make_state(NULL);
    if (app_async_enable(t, NULL, NULL, 0.0) != 0) fail_msg("the jobs layer does not start");
    CHECK_INT("the window opens it on the jobs layer", 0, app_view_file_open(t, path));
    CHECK_TRUE("the model is asked for, not read yet", !app_gpt_active(t));
    app_async_wait(t);
    CHECK_TRUE("the jobs layer read it", app_gpt_active(t));
    app_view(t, &vs);
    assert_non_null(vs.next);
    CHECK_INT("head 2 of layer 1 is off there too", 1, vs.overview->off[1]);
    for (int k = 0; k < vs.next->k; k++)
        CHECK_TRUE("the next tokens as the window had them", vs.next->p[k] == p[k]);
    app_async_disable(t);
    app_state_destroy(t);

    /* headless: the figure --ablate 1:2 draws, byte for byte; not the one with every head */
    char a[600], b[600], c[600];
    snprintf(a, sizeof a, "%s/a.png", dir);
    snprintf(b, sizeof b, "%s/b.png", dir);
    snprintf(c, sizeof c, "%s/c.png", dir);
    const char *from_file[] = {mhaviz_bin, "--state", path, "--export", a, NULL};
    CHECK_INT("--state F --export exits 0", 0, run_mhaviz(from_file));
    const char *with_x[] = {mhaviz_bin, "--model", model_path(), "--text", REF_TEXT,
                            "--ablate", "1:2",     "--export",   b,        NULL};
    CHECK_INT("--ablate 1:2 exits 0", 0, run_mhaviz(with_x));
    const char *all_on[] = {mhaviz_bin, "--model", model_path(), "--text", REF_TEXT,
                            "--export", c,         NULL};
    CHECK_INT("every head exits 0", 0, run_mhaviz(all_on));
    CHECK_TRUE("the figure of --ablate 1:2", same_bytes(a, b));
    CHECK_TRUE("not every head's", !same_bytes(a, c));
    app_state_destroy(s);
    clear_dir();
}

/* (d): the overview (O) on, saved, exported from the file. */
static void test_overview_view_exports(void **st) {
    (void)st;
    if (!model_path() || !mhaviz_bin) skip();
    app_state *s = make_state(model_path());
    press(s, 'o', 0);
    app_layout(s);
    save_view_and_export(s, "(d)");
    app_state_destroy(s);
    clear_dir();
}

/* (d) again: the soak's case, a head focused on page 2 of 32 heads (the focus view
   draws no pages of heads; the window keeps the page for later, as with the overview). */
static void test_focused_page_two_exports(void **st) {
    (void)st;
    if (!model_path() || !mhaviz_bin) skip();
    app_state *s = make_state(model_path());
    app_action small = {.kind = ACT_RESIZE, .x = 800, .y = 600, .f = 1.0f};
    app_apply(s, &small);
    char given[600];
    snprintf(given, sizeof given, "%s/given.view", dir);
    FILE *f = fopen(given, "w");
    assert_non_null(f);
    fputs("model-h = 32\nzoom = 200\npage = 2\nfocus = 2\nstage = 1\n", f);
    fclose(f);
    CHECK_INT("the window opens it", 0, app_view_file_open(s, given));
    unlink(given);
    app_layout(s);
    CHECK_INT("head 2 focused", 2, s->look.focus);
    CHECK_INT("page 2 kept", 1, s->look.page);
    save_view_and_export(s, "(d) focused");
    app_state_destroy(s);
    clear_dir();
}

/* A lesson whose step re-splits a model to one head, and the next goes back to its
   own heads with head 2 focused: the focus is checked against the step's own heads. */
static void test_lesson_focus_after_resplit_exports(void **st) {
    (void)st;
    if (!model_path() || !mhaviz_bin) skip();
    app_state *s = make_state(model_path());
    press(s, 'r', APP_MOD_CTRL);
    for (int i = 0; i < 4 && app_gpt_heads(s) > 1; i++) press(s, APP_KEY_DOWN, 0);
    CHECK_INT("re-split to one head", 1, app_gpt_heads(s));
    press(s, 'a', 0);
    press(s, APP_KEY_ESCAPE, 0);
    for (int i = 0; i < 4 && app_gpt_heads(s) < 4; i++) press(s, APP_KEY_UP, 0);
    press(s, '2', 0);
    CHECK_INT("head 2 focused", 2, s->look.focus);
    press(s, 'a', 0);
    press(s, APP_KEY_ESCAPE, 0);
    int steps = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s", app_teach_recording(s, &steps));
    CHECK_INT("two steps", 2, steps);
    press(s, 'r', APP_MOD_CTRL);
    char pdf[600];
    snprintf(pdf, sizeof pdf, "%s/deck.pdf", dir);
    const char *args[] = {mhaviz_bin, "--lesson", path, "--export", pdf, "--size", "640x360", NULL};
    CHECK_INT("--lesson F --export exits 0", 0, run_mhaviz(args));
    app_state_destroy(s);
    clear_dir();
}

/* While recording, the window shows a band ("Recording: 0 steps ..."); a figure
   never does (README), so the figure saved is the one a view file reopens. */
static void test_figure_has_no_recording_band(void **st) {
    (void)st;
    app_state *s = make_state(NULL);
    press(s, 'r', APP_MOD_CTRL);
    CHECK_TRUE("recording", app_teach_recording(s, NULL) != NULL);
    view_state vs;
    app_view(s, &vs);
    CHECK_TRUE("the window shows the band", vs.caption != NULL);
    app_figure_view(s, APP_SAVE_EXPORT, &vs);
    CHECK_TRUE("a figure does not", vs.caption == NULL);
    press(s, 'r', APP_MOD_CTRL);
    app_state_destroy(s);
    clear_dir();
}

static int setup(void **st) {
    (void)st;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st) {
    (void)st;
    clear_dir();
    return rmdir(dir);
}

int main(int argc, char **argv) {
    mhaviz_bin = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_non_ascii_text_reads_back),
        cmocka_unit_test(test_blank_text_refused_with_a_model),
        cmocka_unit_test(test_blank_text_refused_without_a_model),
        cmocka_unit_test(test_empty_first_step_not_added),
        cmocka_unit_test(test_overview_view_exports),
        cmocka_unit_test(test_focused_page_two_exports),
        cmocka_unit_test(test_lesson_focus_after_resplit_exports),
        cmocka_unit_test(test_figure_has_no_recording_band),
        cmocka_unit_test(test_removed_heads_saved),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
