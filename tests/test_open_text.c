#define _POSIX_C_SOURCE 200809L
/* test_open_text.c: a text file opened from the window's text field (Ctrl+O with
 * the file's path typed in it) or dropped on the window (app_open_text_file):
 * the view shows the file's text, tokenised independently here; a file that is
 * not a text to use leaves the view as it was, the field open and one reason on
 * the status line. The reader is the one the window uses (text_file_read_regular):
 * a FIFO whose writer stays open is refused by its type, never read (a read would
 * wait for the writer and freeze the window). */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "cli.h"
#include "samples.h"
#include "settings.h"
#include "state.h"
#include "state_fixture.h"
#include "text_file.h"
#include "view_fixture.h"

static char dir[] = "/tmp/mhaviz-open-text-XXXXXX";

static app_state *make_state(void) {
    const cli_options o = fx_options();
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    s->read_text = text_file_read_regular;
    return s;
}

static void write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

/* Types text into the open field (replacing the selected text). */
static void type(app_state *s, const char *text) {
    app_action a = {.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
}

/* The tokens a text has, as the tokenizer splits it (the reference). */
static int count_tokens(const char *text) {
    tok_list t = {0};
    int total = 0;
    char err[256];
    if (tok_split(&t, text, MHA_MAX_N, &total, err, sizeof err) != 0) total = -1;
    tok_free(&t);
    return total;
}

static void test_ctrl_o_opens_the_named_file(void **st) {
    (void)st;
    char path[256];
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    const char *text = "Heads look at other tokens.\nEach head its own way.\n";
    write_file(path, text, strlen(text));
    app_state *s = make_state();
    CHECK_TRUE("Ctrl+O outside the field is not the field's",
               app_key_action(s, 'o', APP_MOD_CTRL).kind != ACT_EDIT_OPEN);
    press(s, APP_KEY_RETURN, 0);
    CHECK_TRUE("the field is open", s->editing);
    CHECK_INT("Ctrl+O in the field", ACT_EDIT_OPEN, app_key_action(s, 'o', APP_MOD_CTRL).kind);
    char typed[300];
    snprintf(typed, sizeof typed, "  %s \n", path); /* spaces around a pasted path */
    type(s, typed);
    press(s, 'o', APP_MOD_CTRL);
    CHECK_TRUE("the field closed", !s->editing);
    CHECK_INT("custom text", 0, s->sample);
    CHECK_STR("the file's text", text, s->custom);
    CHECK_INT("its tokens are the model's positions", count_tokens(text), s->m->n);
    CHECK_INT("and the token list", count_tokens(text), s->toks.count);
    char want[128];
    snprintf(want, sizeof want, "opened notes.txt: %d tokens", count_tokens(text));
    CHECK_STR("status", want, s->status);
    app_state_destroy(s);
}

/* Every file that is not a text to use: the view stays, the field stays open with
   the path in it, and the status line gives the file's reason. */
static void test_bad_files_keep_the_view(void **st) {
    (void)st;
    char bin[256], folder[256], missing[256], blank[256], bad[256];
    snprintf(bin, sizeof bin, "%s/nul.bin", dir);
    snprintf(folder, sizeof folder, "%s/folder", dir);
    snprintf(missing, sizeof missing, "%s/missing.txt", dir);
    snprintf(blank, sizeof blank, "%s/blank.txt", dir);
    snprintf(bad, sizeof bad, "%s/latin1.txt", dir);
    write_file(bin, "ab\0cd", 5);
    assert_int_equal(mkdir(folder, 0700), 0);
    write_file(blank, " \n\t \n", 5);
    write_file(bad, "caf\xe9\n", 5);
    const char *paths[] = {bin, folder, missing, blank, bad, "/dev/zero"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        app_state *s = make_state();
        const int n = s->m->n, sample = s->sample;
        const unsigned long version = s->data_version;
        press(s, APP_KEY_RETURN, 0);
        type(s, paths[i]);
        press(s, 'o', APP_MOD_CTRL);
        char what[300];
        snprintf(what, sizeof what, "%s: the field stays open", paths[i]);
        CHECK_TRUE(what, s->editing);
        CHECK_STR("the path is still in it", paths[i], s->edit);
        CHECK_INT("the view's text is kept", n, s->m->n);
        CHECK_INT("the sample is kept", sample, s->sample);
        CHECK_INT("no recompute", (long long)version, (long long)s->data_version);
        const char *slash = strrchr(paths[i], '/');
        snprintf(what, sizeof what, "%s: the status names the file: \"%s\"", paths[i], s->status);
        CHECK_TRUE(what, strstr(s->status, slash + 1) != NULL);
        CHECK_TRUE("and gives a reason after it", strstr(s->status, ": ") != NULL);
        app_state_destroy(s);
    }
    rmdir(folder);
}

static void test_empty_field_says_what_to_do(void **st) {
    (void)st;
    app_state *s = make_state();
    press(s, APP_KEY_RETURN, 0);
    press(s, 'u', APP_MOD_CTRL); /* clears the field */
    press(s, 'o', APP_MOD_CTRL);
    CHECK_TRUE("still editing", s->editing);
    CHECK_STR("status", "type a text file's path in the field, then Ctrl+O", s->status);
    app_state_destroy(s);
}

/* A dropped file of 600 words: the view takes its first 512 tokens and says so;
   the field, if it was open, closes. */
static void test_dropped_long_file_is_cut(void **st) {
    (void)st;
    char path[256];
    snprintf(path, sizeof path, "%s/long.txt", dir);
    size_t len = 600 * 6 + 1;
    char *text = malloc(len);
    assert_non_null(text);
    text[0] = '\0';
    for (int i = 0; i < 600; i++) strcat(text, i % 7 ? "word " : "head ");
    write_file(path, text, strlen(text));
    app_state *s = make_state();
    CHECK_INT("opened", 0, app_open_text_file(s, path));
    CHECK_INT("cut to 512 positions", MHA_MAX_N, s->m->n);
    CHECK_STR("status", "text cut to the first 512 of its 600 tokens", s->status);
    free(text);
    app_state_destroy(s);
}

/* In a child with an alarm, so that a read that waits fails the test instead of
   hanging it: Ctrl+O on the FIFO's path and the FIFO dropped (as text and as a
   .view file) are refused at once, the view kept. Exit 0 when all held, 1 when a
   check failed; killed by SIGALRM when a read waited. */
static int open_fifos_in_child(const char *fifo, const char *fifo_view) {
    alarm(20); /* a guard only: the refusal takes no read at all */
    app_state *s = make_state();
    const unsigned long version = s->data_version;
    const int sample = s->sample;
    press(s, APP_KEY_RETURN, 0);
    type(s, fifo);
    press(s, 'o', APP_MOD_CTRL);
    int ok = s->editing && strstr(s->status, "fifo: not a regular file (a FIFO)") != NULL;
    if (!ok) fprintf(stderr, "Ctrl+O on a FIFO: status \"%s\"\n", s->status);
    press(s, APP_KEY_ESCAPE, 0);
    const int dropped = app_open_text_file(s, fifo);
    if (dropped != -1 || !strstr(s->status, "not a regular file")) {
        fprintf(stderr, "a dropped FIFO: %d, status \"%s\"\n", dropped, s->status);
        ok = 0;
    }
    if (app_view_file_open(s, fifo_view) != -1) {
        fprintf(stderr, "a dropped .view FIFO was opened\n");
        ok = 0;
    }
    if (s->data_version != version || s->sample != sample) {
        fprintf(stderr, "the view changed\n");
        ok = 0;
    }
    app_state_destroy(s);
    return ok ? 0 : 1;
}

static void test_fifo_with_a_writer_is_refused(void **st) {
    (void)st;
    char fifo[256], fifo_view[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(fifo_view, sizeof fifo_view, "%s/fifo.view", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkfifo(fifo_view, 0600), 0);
    /* a writer that stays open (O_RDWR never waits for a reader), with a few bytes */
    const int w = open(fifo, O_RDWR), wv = open(fifo_view, O_RDWR);
    assert_true(w >= 0 && wv >= 0);
    assert_int_equal(write(w, "Heads ", 6), 6);
    assert_int_equal(write(wv, "h = 2\n", 6), 6);
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(open_fifos_in_child(fifo, fifo_view));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(w);
    close(wv);
    unlink(fifo);
    unlink(fifo_view);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        fail_msg("opening a FIFO whose writer stays open waited 20 s in a read");
    CHECK_TRUE("refused at once, the view kept", WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_no_reader(void **st) {
    (void)st;
    app_state *s = make_state();
    s->read_text = NULL;
    const int n = s->m->n;
    CHECK_INT("refused", -1, app_open_text_file(s, "/etc/hostname"));
    CHECK_INT("view kept", n, s->m->n);
    CHECK_TRUE("says so", s->status[0] != '\0');
    app_state_destroy(s);
}

static int setup(void **st) {
    (void)st;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st) {
    (void)st;
    const char *names[] = {"notes.txt", "nul.bin", "blank.txt", "latin1.txt", "long.txt"};
    char p[300];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    return rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctrl_o_opens_the_named_file),
        cmocka_unit_test(test_bad_files_keep_the_view),
        cmocka_unit_test(test_empty_field_says_what_to_do),
        cmocka_unit_test(test_dropped_long_file_is_cut),
        cmocka_unit_test(test_fifo_with_a_writer_is_refused),
        cmocka_unit_test(test_no_reader),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
