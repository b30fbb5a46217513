/* bench_internal.h: what bench.c (the core's cases and the driver) and
 * bench_view.c (frames, the h step, exports) share: the timing loop and its
 * records. Not part of the program's API. */
#ifndef MHAVIZ_BENCH_INTERNAL_H
#define MHAVIZ_BENCH_INTERNAL_H

#include <stddef.h>

#include "font.h"
#include "gpt2.h"
#include "tok.h"

#define BENCH_MIN_S 0.5       /* each median is over at least this long ... */
#define BENCH_MIN_RUNS 9      /* ... and at least this many runs */
#define BENCH_MAX_RUNS 262144 /* samples kept per case (a 2 us case fills it in 0.5 s) */
#define FRAME_W 1920
#define FRAME_H 1080
#define EXPORT_W 3840
#define EXPORT_H 2160

typedef struct {
    int quick, json;
    double *samples; /* BENCH_MAX_RUNS seconds */
    font_set *fonts;
    char *err;
    size_t errlen;
} bench;

typedef struct {
    double median, p95; /* seconds */
    int runs;
    unsigned long allocs; /* the model's allocations during the runs (forward only) */
} timing;

/* Seconds on the monotonic clock. */
double now_s(void);
/* qsort order of doubles. */
int cmp_double(const void *a, const void *b);
/* Sorts v and returns its median. */
double median_sorted(double *v, int count);
/* Runs fn(ud) once to warm up, then again until BENCH_MIN_S have passed and
 * BENCH_MIN_RUNS were made; with quick, once and no warm-up. Returns 0 or -1
 * with a message in b->err. */
int time_runs(bench *b, timing *t, int (*fn)(bench *, void *), void *ud);
/* n tokens cycling through a short sentence. */
int make_tokens(tok_list *t, int n);

/* bench_model.c: a checkpoint's load, forward at n = 64 and 256, a re-split and
 * the peak memory, in a child process. 0, or -1 with the reason in b->err. */
int bench_model(bench *b, const char *path);
/* bench_model_edit.c: the edits on run (a gpt2_run, from bench_model's child):
 * model_edit_append and model_edit_middle at n = 64, 256, 1024 (or the most the
 * run holds), model_ablate in the first and the last layer and model_generate at
 * n = 256, each with the whole forward at the same n. 0, or -1 with b->err. */
int bench_model_edits(bench *b, gpt2_run *run);
/* bench_model_window.c: changes as the window's jobs compute them, into a second
 * run (model_window_ablate, _layer, _resplit at n = 256), brought to the run shown
 * by copying and, beside it, by computing. Two traces of m. 0, or -1 with b->err. */
int bench_model_window(bench *b, const gpt2_model *m);

/* bench_view.c: a frame of the view at three shapes; the h step (name
 * "update" or "h_step") from the key to a finished frame; the exports. */
int bench_frames(bench *b);
int bench_h_step(bench *b, const char *name, int heads, int n, int d);
int bench_exports(bench *b);
/* One frame of (h, n, d_model) at 1920 x 1080, drawn once (for the memory case). */
int bench_one_frame(bench *b, int heads, int n, int d);

#endif
