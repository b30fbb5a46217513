/* fuzz_lesson.c: the lesson and view-file readers (src/app/state/lesson_file.c,
 * view_file.c, settings.c) on any text. The first byte picks which: even a lesson,
 * odd a view file; the rest is the file.
 * Invariants: a refusal is 2 with one line in err naming the file ("f.lesson:" /
 * "f.view:"), nothing set; an accepted lesson has a step at least, each with a
 * view, and written out by lesson_format it reads back to the same steps with the
 * same views (app_settings_equal) and the same captions; an accepted view file
 * written out by app_settings_write reads back equal. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lesson_file.h"
#include "settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *err, const char *file) {
    FUZZ_EXPECT(strchr(err, '\n') == NULL, "the error is one line: \"%s\"", err);
    FUZZ_EXPECT(strncmp(err, file, strlen(file)) == 0, "the error names %s: \"%s\"", file, err);
}

static void check_lesson(const char *text, size_t len) {
    lesson L, R;
    char err[1024] = "";
    int rc = lesson_parse(text, len, "f.lesson", "/nonexistent-fuzz-dir", &L, err, sizeof err);
    FUZZ_EXPECT(rc == 0 || rc == 2, "lesson_parse returns 0 or 2, got %d", rc);
    if (rc != 0) {
        one_line(err, "f.lesson:");
        return;
    }
    FUZZ_EXPECT(L.count >= 1, "an accepted lesson has a step, got %d", L.count);
    const size_t need = lesson_format(&L, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf) {
        lesson_free(&L);
        return;
    }
    lesson_format(&L, buf, need + 1);
    rc = lesson_parse(buf, strlen(buf), "f.lesson", "/nonexistent-fuzz-dir", &R, err, sizeof err);
    FUZZ_EXPECT(rc == 0, "the written lesson reads back: %s\n%s", err, buf);
    FUZZ_EXPECT(R.count == L.count, "steps %d, read back %d", L.count, R.count);
    for (int k = 0; k < L.count && k < R.count; k++) {
        FUZZ_EXPECT(app_settings_equal(L.steps[k].view, R.steps[k].view),
                    "step %d's view read back differs", k + 1);
        FUZZ_EXPECT(strcmp(L.steps[k].heading, R.steps[k].heading) == 0,
                    "step %d's heading \"%s\" read back \"%s\"", k + 1, L.steps[k].heading,
                    R.steps[k].heading);
        FUZZ_EXPECT(strcmp(L.steps[k].text, R.steps[k].text) == 0, "step %d's caption differs",
                    k + 1);
    }
    lesson_free(&R);
    lesson_free(&L);
    free(buf);
}

static void check_view(const char *text, size_t len) {
    app_settings *st = app_settings_create(), *back = app_settings_create();
    if (!st || !back) {
        app_settings_free(st), app_settings_free(back);
        return;
    }
    char err[1024] = "";
    int rc = app_view_file_parse(text, len, "f.view", "/nonexistent-fuzz-dir", st, err, sizeof err);
    FUZZ_EXPECT(rc == 0 || rc == 2, "app_view_file_parse returns 0 or 2, got %d", rc);
    if (rc != 0) {
        one_line(err, "f.view:");
        FUZZ_EXPECT(app_settings_count(st) == 0, "a refused file sets nothing");
    } else {
        const size_t need = app_settings_write(st, NULL, NULL, 0);
        char *buf = malloc(need + 1);
        if (buf) {
            app_settings_write(st, NULL, buf, need + 1);
            rc = app_view_file_parse(buf, strlen(buf), "f.view", "/nonexistent-fuzz-dir", back, err,
                                     sizeof err);
            FUZZ_EXPECT(rc == 0, "the written view file reads back: %s\n%s", err, buf);
            FUZZ_EXPECT(app_settings_equal(st, back), "read back differs:\n%s", buf);
            free(buf);
        }
    }
    app_settings_free(st);
    app_settings_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 16) return 0;
    const int view = data[0] & 1;
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (view)
        check_view(text, size - 1);
    else
        check_lesson(text, size - 1);
    free(text);
    return 0;
}
