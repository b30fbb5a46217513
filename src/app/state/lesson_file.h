/* lesson_file.h: a lesson as data: a title and steps, each step the settings it
 * changes (settings.h), a caption (a heading and lines of text, in the caption
 * markup) and the actions it runs on arrival; the view each step shows is the
 * defaults with every step up to it applied. The format is the README's
 * "Lessons" section:
 *
 *     title = Multi-head attention, step by step
 *     step = X: the input, n × d_model
 *     h = 4
 *     | Each token is a row of X.
 *     do = stages 1.5
 *
 * Reading checks everything (FILE:LINE: what) before a lesson is handed out;
 * writing is diff-friendly: each step writes only what differs from the one
 * before. No SDL, no state: presenting is teach.c's. */
#ifndef MHAVIZ_LESSON_FILE_H
#define MHAVIZ_LESSON_FILE_H

#include <stddef.h>

#include "settings.h"

#define LESSON_FILE_MAX (1u << 20) /* a lesson file larger than 1 MiB is refused */
#define LESSON_MAX_STEPS 999
#define LESSON_MAX_DO 8        /* actions a step runs on arrival */
#define LESSON_STAGE_MIN_S 0.1 /* `do = stages S`: S in seconds */
#define LESSON_STAGE_MAX_S 60.0
#define LESSON_TRAIN_MAX 1000000 /* `do = train N` */
#define LESSON_DECK_TRAIN_S 600  /* a deck's training, all steps, estimated (budget.h): 10 min */
#define LESSON_SWEEP_S 2.0       /* `do = sweep h`: one h every 2 s */

typedef enum {
    LESSON_DO_TRAIN,   /* n: steps */
    LESSON_DO_STAGES,  /* seconds: one stage of the focused head every that many */
    LESSON_DO_COMPARE, /* spec: --compare's SPEC, pinned */
    LESSON_DO_SWEEP_H, /* h over every divisor of d_model, one every LESSON_SWEEP_S */
    LESSON_DO_WRITE,   /* n: tokens the step's model writes (W), at the step's pace */
} lesson_do_kind;

typedef struct {
    lesson_do_kind kind;
    long n;
    double seconds;
    char spec[256];
} lesson_do;

typedef struct {
    char *heading;      /* markup; "" for none */
    char *text;         /* caption lines joined by '\n'; "" for none */
    app_settings *set;  /* what this step changes (as written) */
    app_settings *view; /* what it shows: the defaults with steps 1..k applied */
    lesson_do acts[LESSON_MAX_DO];
    int nacts;
    int line; /* its `step =` line in the file (0: recorded) */
} lesson_step;

typedef struct {
    char *title;
    lesson_step *steps;
    int count, cap;
    size_t copied_; /* caption bytes written or moved while parsing, for tests */
} lesson;

/* Parses a lesson's text (len bytes, any content). file names it in messages
 * ("FILE:LINE: what"), base_dir resolves text-file. Returns 0 with *L filled
 * (free with lesson_free), or 2 with err and *L empty. */
int lesson_parse(const char *text, size_t len, const char *file, const char *base_dir, lesson *L,
                 char *err, size_t errlen);

/* Reads and parses path (at most LESSON_FILE_MAX bytes, UTF-8, no NUL): 0, 1
 * when a file that is there cannot be read, 2 when it is not a lesson to use or
 * the path names none (missing, a folder); err is "FILE:LINE: what" either way. */
int lesson_read(const char *path, lesson *L, char *err, size_t errlen);

void lesson_free(lesson *L);

/* 1 when view (every setting set) differs from the view the next step starts
   from: the last step's, or the defaults before the first. A step that changes
   nothing and has no caption is empty (the reader refuses it): not to be added. */
int lesson_changes(const lesson *L, const app_settings *view);

/* Appends a step that shows view (every setting set, as app_settings_capture
   gives) with this caption; the step's own settings are what differs from the
   step before (when nothing does and there are no caption lines, the first
   setting is set again, so that a step with only a heading reads back as one).
   0, or -1 out of memory. */
int lesson_append(lesson *L, const app_settings *view, const char *heading, const char *text);

/* Sets the caption of step k (0-based). 0, or -1 out of memory. */
int lesson_set_caption(lesson *L, int k, const char *heading, const char *text);

/* The lesson as its file's text: each step writes only the settings that differ
   from the step before (step 1: from the defaults). Returns the bytes needed (like
   snprintf); buf may be NULL with len 0. */
size_t lesson_format(const lesson *L, char *buf, size_t len);

/* Writes the lesson to path atomically. 0, or -1 with "cannot write PATH: why". */
int lesson_write(const char *path, const lesson *L, char *err, size_t errlen);

/* Checks a caption's markup (view_markup_check): 0, or -1 with "column C: what". */
int lesson_markup_check(const char *markup, char *err, size_t errlen);

#endif
