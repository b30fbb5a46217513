/* save_files.c: what the window writes, mhaviz reads (issue 34): the save soak's
 * texts, view files and lessons. Texts come typed into the field (Enter, Ctrl+U,
 * the text, Enter) or opened from a file (its path typed and Ctrl+O, or dropped):
 * non-ASCII over the field's 8 KiB at shifting offsets, blank ones (refused, the
 * view kept), short ones, and a FIFO whose writer stays open (refused by type). A
 * view file saved with Ctrl+Shift+V is exported by `mhaviz --state F --export
 * B.png --size WxH` and must exit 0 with the PNG the state's own figure gives
 * (export_png of app_figure_view, the window's Ctrl+S path); a lesson recorded
 * with Ctrl+R, A and Ctrl+R must export with `mhaviz --lesson F --export L.pdf`
 * (exit 0) and read back with as many steps as were recorded. Under MHAVIZ_TEST_SAMPLE=k
 * (the sanitizer build) every k-th view file saved is exported and compared (sample.h). */
#define _POSIX_C_SOURCE 200809L
#include "save_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export.h"
#include "lesson_file.h"
#include "sample.h"
#include "settings.h"
#include "soak_rng.h"
#include "teach.h"
#include "text_file.h"
#include "tok.h"

#define LONG_TEXTS 4

struct save_files {
    const char *mhaviz, *dir;
    font_set *fonts;
    char texts[LONG_TEXTS + 3][600]; /* long ones, then short, blank, fifo */
    int fifo_writer;
    long views, lessons, steps, opened, refused, typed, blanks;
    long views_off;       /* of the views: with a loaded model's heads removed (X) */
    test_sample exported; /* the view files exported and compared: every k-th */
};

static long fail_step;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "save_soak: step %ld: ", fail_step);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void write_text(const char *path, const char *text, size_t len);
static char *random_text(size_t min_bytes, size_t *len);
static void open_text(save_files *f, app_state *s);
static void type_text(save_files *f, app_state *s);
static void save_view(save_files *f, app_state *s);
static void lesson_key(save_files *f, app_state *s);
static void stop_recording(save_files *f, app_state *s);
static int run(const save_files *f, const char *const *argv);
static int same_file(const char *a, const char *b);

save_files *save_files_create(const char *mhaviz, const char *dir, font_set *fonts) {
    save_files *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->mhaviz = mhaviz;
    f->dir = dir;
    f->fonts = fonts;
    f->exported = test_sample_begin("save_soak's view files exported");
    for (int i = 0; i < LONG_TEXTS; i++) { /* 8.2 .. 20 KiB: the field's cut falls anywhere */
        size_t len = 0;
        char *t = random_text(8200 + (size_t)rnd_below(12000), &len);
        snprintf(f->texts[i], sizeof f->texts[i], "%s/long-%d.txt", dir, i + 1);
        write_text(f->texts[i], t, len);
        free(t);
    }
    snprintf(f->texts[LONG_TEXTS], sizeof f->texts[0], "%s/short.txt", dir);
    const char *short_text = "K\xC3\xB6pfe sehen \xE6\xB3\xA8\xE6\x84\x8F andere Tokens.\n";
    write_text(f->texts[LONG_TEXTS], short_text, strlen(short_text));
    snprintf(f->texts[LONG_TEXTS + 1], sizeof f->texts[0], "%s/blank.txt", dir);
    write_text(f->texts[LONG_TEXTS + 1], " \n\t\xC2\xA0 \n", 7);
    snprintf(f->texts[LONG_TEXTS + 2], sizeof f->texts[0], "%s/fifo", dir);
    EXPECT(mkfifo(f->texts[LONG_TEXTS + 2], 0600) == 0, "mkfifo");
    f->fifo_writer = open(f->texts[LONG_TEXTS + 2], O_RDWR); /* stays open: a read would wait */
    EXPECT(f->fifo_writer >= 0, "the FIFO's writer");
    return f;
}

void save_files_act(save_files *f, app_state *s, long step) {
    fail_step = step;
    const int pick = rnd_below(100);
    if (pick < 20)
        open_text(f, s);
    else if (pick < 40)
        type_text(f, s);
    else if (pick < 65)
        save_view(f, s);
    else
        lesson_key(f, s);
    app_layout(s); /* the frame after it: the page clamped to the pages there are */
}

void save_files_finish(save_files *f, app_state *s, long step) {
    fail_step = step;
    if (app_teach_recording(s, NULL)) stop_recording(f, s);
    printf("save_soak: %ld view files saved, %ld of them (%ld with a model's heads removed) "
           "exported by mhaviz --state byte for byte as the state draws them; %ld lessons (%ld "
           "steps) exported by "
           "mhaviz --lesson; %ld text files "
           "opened, %ld refused; %ld texts typed, %ld blank ones refused\n",
           f->views, f->exported.run, f->views_off, f->lessons, f->steps, f->opened, f->refused,
           f->typed, f->blanks);
}

void save_files_destroy(save_files *f) {
    if (!f) return;
    for (size_t i = 0; i < sizeof f->texts / sizeof f->texts[0]; i++) unlink(f->texts[i]);
    if (f->fifo_writer >= 0) close(f->fifo_writer);
    free(f);
}

/* ---- texts ---- */

static void write_text(const char *path, const char *text, size_t len) {
    FILE *fp = fopen(path, "wb");
    EXPECT(fp && fwrite(text, 1, len, fp) == len && fclose(fp) == 0, "cannot write %s", path);
}

/* Words of one to three pieces from several scripts (1 to 4 bytes a character),
   spaces and line breaks between them: at least min_bytes (malloc'd). */
static char *random_text(size_t min_bytes, size_t *len) {
    static const char *piece[] = {"ka",
                                  "the",
                                  "of",
                                  "d\xC3\xA9",
                                  "j\xC3\xA0",
                                  "stra\xC3\x9F"
                                  "e",
                                  "\xCE\xBD\xCE\xBF",
                                  "\xCE\xBB\xCF\x8C",
                                  "\xD1\x89\xD0\xB8",
                                  "\xE6\xB3\xA8",
                                  "\xE6\x84\x8F",
                                  "\xE5\x8A\x9B",
                                  "\xF0\x9F\x98\x80",
                                  "\xC3\xBC",
                                  ",",
                                  "."};
    const int np = (int)(sizeof piece / sizeof piece[0]);
    char *t = malloc(min_bytes + 64);
    EXPECT(t != NULL, "out of memory");
    size_t o = 0;
    while (o < min_bytes) {
        for (int k = 1 + rnd_below(3); k > 0; k--)
            o += (size_t)sprintf(t + o, "%s", piece[rnd_below(np)]);
        t[o++] = rnd_below(12) ? ' ' : '\n';
    }
    t[o] = '\0';
    *len = o;
    return t;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static void type(app_state *s, const char *text) {
    app_action a = {.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
}

/* A file's path typed and Ctrl+O, or the file dropped. A file that is not a text
   to use keeps the view and says why; the field, if open, is closed with Esc. */
static void open_text(save_files *f, app_state *s) {
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
    const int which = rnd_below((int)(sizeof f->texts / sizeof f->texts[0]));
    const char *path = f->texts[which];
    char before[sizeof s->custom];
    memcpy(before, s->custom, sizeof before);
    const int sample = s->sample;
    int rc;
    if (rnd_below(2)) {
        press(s, APP_KEY_RETURN, 0);
        press(s, 'u', APP_MOD_CTRL);
        type(s, path);
        press(s, 'o', APP_MOD_CTRL);
        rc = s->editing ? -1 : 0;
    } else {
        rc = app_open_text_file(s, path);
    }
    const int bad = which >= LONG_TEXTS + 1; /* blank.txt, the FIFO */
    EXPECT(bad ? rc != 0 : rc == 0, "%s: %s (status \"%s\")", path, rc ? "refused" : "opened",
           s->status);
    if (rc == 0) {
        EXPECT(s->sample == 0 && !tok_blank(s->custom), "%s: the text kept is blank", path);
        ++f->opened;
    } else {
        EXPECT(s->sample == sample && strcmp(s->custom, before) == 0,
               "%s refused, but the text changed", path);
        ++f->refused;
    }
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
}

/* Enter, Ctrl+U, a text, Enter: a blank one is refused with the reason, the view kept. */
static void type_text(save_files *f, app_state *s) {
    static const char *blank[] = {"   ", "\t \xC2\xA0 ", "\n\xE3\x80\x80"};
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
    const int is_blank = rnd_below(4) == 0;
    size_t len = 0;
    char *text = is_blank ? NULL : random_text(1 + (size_t)rnd_below(300), &len);
    char before[sizeof s->custom];
    memcpy(before, s->custom, sizeof before);
    const int sample = s->sample;
    press(s, APP_KEY_RETURN, 0);
    press(s, 'u', APP_MOD_CTRL);
    type(s, text ? text : blank[rnd_below(3)]);
    press(s, APP_KEY_RETURN, 0);
    if (is_blank) {
        EXPECT(strcmp(s->status, TOK_BLANK_WHY) == 0, "a blank text: status \"%s\"", s->status);
        EXPECT(s->sample == sample && strcmp(s->custom, before) == 0,
               "a blank text changed the view's text");
        ++f->blanks;
    } else {
        ++f->typed;
    }
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
    free(text);
}

/* ---- view files ---- */

static void save_view(save_files *f, app_state *s) {
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
    app_layout(s);
    press(s, 'v', APP_MOD_CTRL | APP_MOD_SHIFT);
    EXPECT(app_take_save(s) == APP_SAVE_VIEW_FILE, "Ctrl+Shift+V asks for no view file");
    char path[4096], err[1024] = "";
    EXPECT(app_view_file_save(s, path, sizeof path) == 0, "Ctrl+Shift+V: %s", s->status);
    ++f->views;
    if (!test_sample_next(&f->exported)) {
        unlink(path);
        return;
    }
    char drawn[700], read[700], size[64];
    snprintf(drawn, sizeof drawn, "%s/drawn.png", f->dir);
    snprintf(read, sizeof read, "%s/read.png", f->dir);
    snprintf(size, sizeof size, "%dx%d", s->width, s->height);
    view_state vs;
    app_figure_view(s, APP_SAVE_EXPORT, &vs);
    int off = 0;
    for (int k = 0; vs.overview && vs.overview->off && k < vs.overview->layers * vs.overview->h;
         k++)
        off |= vs.overview->off[k];
    f->views_off += off;
    EXPECT(export_png(drawn, &vs, 1, f->fonts, err, sizeof err) == 0, "the state's PNG: %s", err);
    const char *argv[] = {f->mhaviz, "--state", path, "--export", read, "--size", size, NULL};
    const int rc = run(f, argv);
    EXPECT(rc == 0, "mhaviz --state %s --export: exit %d (kept)", path, rc);
    EXPECT(same_file(drawn, read),
           "mhaviz --state %s --export draws another PNG than the state (kept: %s, %s)", path,
           drawn, read);
    unlink(path);
    unlink(drawn);
    unlink(read);
}

/* ---- lessons ---- */

static void lesson_key(save_files *f, app_state *s) {
    int steps = 0;
    const char *rec = app_teach_recording(s, &steps);
    if (!rec) {
        if (s->editing) press(s, APP_KEY_ESCAPE, 0);
        press(s, 'r', APP_MOD_CTRL);
        EXPECT(app_teach_recording(s, NULL) != NULL, "Ctrl+R: not recording (\"%s\")", s->notice);
        return;
    }
    if (rnd_below(5) == 0 && !s->editing) {
        stop_recording(f, s);
        return;
    }
    if (s->editing) press(s, APP_KEY_ESCAPE, 0); /* a caption field left open: no caption */
    press(s, 'a', 0);
    const int how = rnd_below(3);
    if (how == 0) {
        press(s, APP_KEY_ESCAPE, 0);
    } else {
        static const char *caption[] = {"Heads", "Heads | each looks elsewhere", "| only a line",
                                        "K\xC3\xB6pfe | \xE6\xB3\xA8\xE6\x84\x8F"};
        type(s, caption[rnd_below(4)]);
        press(s, APP_KEY_RETURN, 0);
    }
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
}

/* Ctrl+R: the lesson's file holds the steps recorded, and mhaviz exports it. */
static void stop_recording(save_files *f, app_state *s) {
    int steps = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s", app_teach_recording(s, &steps));
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);
    press(s, 'r', APP_MOD_CTRL);
    struct stat sb;
    if (steps == 0) {
        EXPECT(stat(path, &sb) != 0, "%s: written with no step", path);
        return;
    }
    lesson L;
    char err[1024] = "";
    EXPECT(lesson_read(path, &L, err, sizeof err) == 0, "the recorded lesson: %s", err);
    EXPECT(L.count == steps, "%s: %d steps read, %d recorded", path, L.count, steps);
    lesson_free(&L);
    char deck[700];
    snprintf(deck, sizeof deck, "%s/lesson.pdf", f->dir);
    const char *argv[] = {f->mhaviz, "--lesson", path, "--export", deck, "--size", "640x360", NULL};
    const int rc = run(f, argv);
    EXPECT(rc == 0, "mhaviz --lesson %s --export: exit %d (kept)", path, rc);
    unlink(deck);
    unlink(path);
    ++f->lessons;
    f->steps += steps;
}

/* ---- helpers ---- */

/* Runs argv (stdout to /dev/null, stderr to DIR/run.log, shown when it fails); its
   exit status, 128 + a signal. */
static int run(const save_files *f, const char *const *argv) {
    char log[700];
    snprintf(log, sizeof log, "%s/run.log", f->dir);
    fflush(NULL);
    const pid_t pid = fork();
    EXPECT(pid >= 0, "fork");
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen(log, "w", stderr)) _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid, "waitpid");
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (rc != 0) { /* its messages before the failure's line */
        FILE *fp = fopen(log, "r");
        int c;
        while (fp && (c = getc(fp)) != EOF) fputc(c, stderr);
        if (fp) fclose(fp);
    }
    unlink(log);
    return rc;
}

static int same_file(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        const int ca = getc(fa), cb = getc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}
