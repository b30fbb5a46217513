/* bench.c: mhaviz --bench (a table for people), --bench-json (one JSON object a
 * line) and --bench-quick (every case once, to check the output, not the speed).
 * Times sgemm (the machine's limit, in this process), the forward pass at a
 * ladder of shapes, a frame of the view, an h step from the key to a finished
 * frame, the exports, and the peak memory of a process at (512, 1024, 16).
 * Speed is measured here, never in tests. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "app.h"
#include "blas.h"
#include "export.h"
#include "font.h"
#include "learn.h"
#include "mha.h"
#include "sdl_draw.h"
#include "state.h"
#include "view.h"

#define BENCH_MIN_S 0.5       /* each median is over at least this long ... */
#define BENCH_MIN_RUNS 9      /* ... and at least this many runs */
#define BENCH_MAX_RUNS 262144 /* samples kept per case (a 2 us case fills it in 0.5 s) */
#define FRAME_W 1920
#define FRAME_H 1080
#define EXPORT_W 3840
#define EXPORT_H 2160

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorts v and returns its median */
static double median_sorted(double *v, int count) {
    qsort(v, (size_t)count, sizeof(double), cmp_double);
    return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

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

/* Runs fn(ud) once to warm up, then again until BENCH_MIN_S have passed and
 * BENCH_MIN_RUNS were made; with quick, once and no warm-up. fn returns 0, or
 * -1 with a message in b->err (the timing then stops). Returns 0 or -1. */
static int time_runs(bench *b, timing *t, int (*fn)(bench *, void *), void *ud) {
    if (!b->quick && fn(b, ud) != 0) return -1;
    const double start = now_s();
    int runs = 0;
    do {
        const double t0 = now_s();
        if (fn(b, ud) != 0) return -1;
        b->samples[runs++] = now_s() - t0;
    } while (!b->quick && runs < BENCH_MAX_RUNS &&
             (now_s() - start < BENCH_MIN_S || runs < BENCH_MIN_RUNS));
    qsort(b->samples, (size_t)runs, sizeof(double), cmp_double);
    t->runs = runs;
    t->median =
        runs % 2 ? b->samples[runs / 2] : 0.5 * (b->samples[runs / 2 - 1] + b->samples[runs / 2]);
    t->p95 = b->samples[(int)ceil(0.95 * runs) - 1];
    return 0;
}

/* n tokens cycling through a short sentence */
static int make_tokens(tok_list *t, int n) {
    static const char *words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "looked", "."};
    memset(t, 0, sizeof *t);
    t->tokens = calloc((size_t)n, sizeof(char *));
    if (!t->tokens) return -1;
    for (int i = 0; i < n; i++) {
        const char *w = words[i % 9];
        t->tokens[i] = malloc(strlen(w) + 1);
        if (!t->tokens[i]) return -1;
        strcpy(t->tokens[i], w);
        t->count++;
    }
    return 0;
}

/* ---- sgemm, the limit, and the forward pass ---------------------------------------- */

typedef struct {
    float *a, *b, *c;
    int m;
} sgemm_case;

static int run_sgemm(bench *b, void *ud) {
    (void)b;
    sgemm_case *s = ud;
    mm_sgemm(s->c, s->m, s->a, s->m, s->b, s->m, s->m, s->m, s->m, 0, 1.0f, 0.0f);
    return 0;
}

static int run_forward(bench *b, void *ud) {
    (void)b;
    mha_forward(ud);
    return 0;
}

/* (n, d_model, h) of the forward ladder; the last is the one compared with sgemm */
static const int FORWARD_SHAPES[][3] = {{8, 64, 4},    {12, 64, 4},    {16, 128, 8},   {64, 256, 8},
                                        {128, 512, 8}, {256, 512, 16}, {512, 1024, 16}};
enum { FORWARD_COUNT = 7, FORWARD_LIMIT = 6 };

/* A model computed at shape i of FORWARD_SHAPES (the caller frees both). */
static int forward_open(bench *b, mha_model **m, tok_list *toks, int i) {
    mha_config cfg = {.h = FORWARD_SHAPES[i][2], .d_model = FORWARD_SHAPES[i][1], .seed = 1};
    *m = mha_model_create();
    if (!*m || make_tokens(toks, FORWARD_SHAPES[i][0]) != 0) {
        snprintf(b->err, b->errlen, "out of memory");
        return -1;
    }
    return mha_model_compute(*m, &cfg, toks, b->err, b->errlen);
}

/* Like time_runs for two functions called by turns, so that both see the same
 * machine: runs until each has had BENCH_MIN_S and BENCH_MIN_RUNS. */
static int time_pair(bench *b, timing *ta, int (*fa)(bench *, void *), void *ua, timing *tb,
                     int (*fb)(bench *, void *), void *ub) {
    enum { PAIRS_MAX = 4096 };
    static double sa[PAIRS_MAX], sb[PAIRS_MAX];
    if (!b->quick && (fa(b, ua) != 0 || fb(b, ub) != 0)) return -1;
    double total_a = 0.0, total_b = 0.0;
    int runs = 0;
    do {
        double t0 = now_s();
        if (fa(b, ua) != 0) return -1;
        sa[runs] = now_s() - t0;
        t0 = now_s();
        if (fb(b, ub) != 0) return -1;
        sb[runs] = now_s() - t0;
        total_a += sa[runs];
        total_b += sb[runs++];
    } while (!b->quick && runs < PAIRS_MAX &&
             (total_a < BENCH_MIN_S || total_b < BENCH_MIN_S || runs < BENCH_MIN_RUNS));
    ta->runs = tb->runs = runs;
    ta->median = median_sorted(sa, runs);
    tb->median = median_sorted(sb, runs);
    ta->p95 = sa[(int)ceil(0.95 * runs) - 1];
    tb->p95 = sb[(int)ceil(0.95 * runs) - 1];
    return 0;
}

/* sgemm 1024^3 (the machine's limit: OpenBLAS's best case) by turns with the
 * forward at the last shape of the ladder, whose timing is kept for the ladder. */
static int bench_limit(bench *b, double *sgemm_gflops, timing *top) {
    const int m = 1024;
    const size_t mm = (size_t)m * m;
    sgemm_case s = {malloc(mm * sizeof(float)), malloc(mm * sizeof(float)),
                    malloc(mm * sizeof(float)), m};
    mha_model *model = NULL;
    tok_list toks = {0};
    timing t;
    int rc = -1;
    if (!s.a || !s.b || !s.c) {
        snprintf(b->err, b->errlen, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < mm; i++) {
        s.a[i] = (float)(i % 13) * 0.01f - 0.06f;
        s.b[i] = (float)(i % 11) * 0.01f - 0.05f;
    }
    if (forward_open(b, &model, &toks, FORWARD_LIMIT) != 0) goto done;
    const unsigned long before = model->allocations_;
    if (time_pair(b, &t, run_sgemm, &s, top, run_forward, model) != 0) goto done;
    top->allocs = model->allocations_ - before;
    const double flops = 2.0 * m * m * m;
    const int threads = mm_threads_for(flops);
    *sgemm_gflops = flops / t.median * 1e-9;
    if (b->json)
        printf("{\"case\":\"sgemm\",\"m\":%d,\"gflops\":%.2f,\"core\":\"%s\",\"threads\":%d}\n", m,
               *sgemm_gflops, mm_backend_name(), threads);
    else
        printf("sgemm %dx%dx%d: %.1f GFLOP/s on %d thread%s (OpenBLAS \"%s\"%s), timed by turns "
               "with the forward at (%d, %d, %d)\n\n",
               m, m, m, *sgemm_gflops, threads, threads == 1 ? "" : "s", mm_backend_name(),
               mm_threads_fixed() ? ", threads fixed by the environment" : "",
               FORWARD_SHAPES[FORWARD_LIMIT][0], FORWARD_SHAPES[FORWARD_LIMIT][1],
               FORWARD_SHAPES[FORWARD_LIMIT][2]);
    rc = 0;
done:
    free(s.a);
    free(s.b);
    free(s.c);
    mha_model_destroy(model);
    tok_free(&toks);
    return rc;
}

/* The forward ladder; the last shape's timing comes from bench_limit. */
static int bench_forward(bench *b, double sgemm_gflops, const timing *top) {
    if (!b->json) {
        printf("forward pass (mha_forward, all of it), FLOPs = 8 n d^2 + 4 n^2 d\n");
        printf("%5s %7s %4s %7s %11s %11s %8s %9s %8s %11s\n", "n", "d_model", "h", "runs",
               "median_us", "p95_us", "GFLOP/s", "of_sgemm", "threads", "allocs/run");
    }
    int rc = 0;
    for (int i = 0; i < FORWARD_COUNT && rc == 0; i++) {
        const int n = FORWARD_SHAPES[i][0], d = FORWARD_SHAPES[i][1], h = FORWARD_SHAPES[i][2];
        mha_model *m = NULL;
        tok_list toks = {0};
        timing t = *top;
        rc = forward_open(b, &m, &toks, i);
        const unsigned long before = rc == 0 ? m->allocations_ : 0;
        if (rc == 0 && i != FORWARD_LIMIT) {
            rc = time_runs(b, &t, run_forward, m);
            t.allocs = m->allocations_ - before;
        }
        if (rc == 0) {
            const double allocs = (double)t.allocs / t.runs;
            const double flops = 8.0 * n * d * d + 4.0 * n * n * d;
            const double gflops = flops / t.median * 1e-9;
            const int threads = mm_threads_for(2.0 * n * d * d); /* the projections' */
            if (b->json)
                printf("{\"case\":\"forward\",\"n\":%d,\"d_model\":%d,\"h\":%d,\"median_us\":%.2f,"
                       "\"p95_us\":%.2f,\"gflops\":%.2f,\"threads\":%d}\n",
                       n, d, h, t.median * 1e6, t.p95 * 1e6, gflops, threads);
            else
                printf("%5d %7d %4d %7d %11.1f %11.1f %8.1f %8.0f%% %8d %11.2f\n", n, d, h, t.runs,
                       t.median * 1e6, t.p95 * 1e6, gflops, 100.0 * gflops / sgemm_gflops, threads,
                       allocs);
        }
        mha_model_destroy(m);
        tok_free(&toks);
    }
    return rc;
}

/* ---- the view: frames, an h step, exports ----------------------------------------- */

/* An app state of (h, n, d_model) at (w, h) output pixels, as the window makes it. */
static app_state *make_state(bench *b, int heads, int n, int d, int width, int height) {
    cli_options o = {.theme = -1, .colormap = -1, .size_w = width, .size_h = height};
    mha_config cfg = {.h = heads, .d_model = d, .seed = 1};
    tok_list toks;
    app_state *s = app_state_create(font_measure, b->fonts);
    if (!s || make_tokens(&toks, n) != 0) {
        snprintf(b->err, b->errlen, "out of memory");
        tok_free(&toks);
        app_state_destroy(s);
        return NULL;
    }
    if (app_state_init(s, &o, &toks, &cfg, b->err, b->errlen) != 0) {
        tok_free(&toks);
        app_state_destroy(s);
        return NULL;
    }
    return s;
}

typedef struct {
    app_state *s;
    view_cache *cache;
    draw_list dl;
    int recolour; /* 1: every heatmap coloured again, as after a change */
} frame_case;

/* One frame as the window draws it: layout, drawing list, then a software
 * raster of that list (the window hands the list to SDL's renderer instead). */
static int frame_draw(bench *b, frame_case *f) {
    const view_layout *L = app_layout(f->s);
    view_state vs;
    app_view(f->s, &vs);
    view_render(&f->dl, f->cache, L, &vs, font_measure, b->fonts);
    SDL_Surface *surf = sdl_draw_to_surface(&f->dl, b->fonts, b->err, b->errlen);
    if (!surf) return -1;
    SDL_FreeSurface(surf);
    return 0;
}

static int run_frame(bench *b, void *ud) {
    frame_case *f = ud;
    f->s->layout_valid = 0;
    if (f->recolour) f->s->data_version++;
    return frame_draw(b, f);
}

/* Up (h to the next divisor), then a finished frame. Down and its frame are
 * not timed: they put h back for the next run. */
static int run_h_up(bench *b, void *ud) {
    frame_case *f = ud;
    const int h = f->s->cfg.h;
    app_do(f->s, ACT_H_UP);
    if (f->s->cfg.h == h) {
        snprintf(b->err, b->errlen, "h up did not change h (%s)", f->s->status);
        return -1;
    }
    return frame_draw(b, f);
}

static int run_h_down(bench *b, frame_case *f) {
    app_do(f->s, ACT_H_DOWN);
    return frame_draw(b, f);
}

/* frame_case over a new state; NULL with b->err on failure */
static int frame_open(bench *b, frame_case *f, int heads, int n, int d, int w, int h) {
    memset(f, 0, sizeof *f);
    draw_list_init(&f->dl);
    f->s = make_state(b, heads, n, d, w, h);
    f->cache = view_cache_create();
    if (!f->s || !f->cache) {
        if (f->s && !f->cache) snprintf(b->err, b->errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void frame_close(frame_case *f) {
    draw_list_free(&f->dl);
    view_cache_destroy(f->cache);
    app_state_destroy(f->s);
}

static int bench_frames(bench *b) {
    static const int shapes[][3] = {{4, 12, 64}, {16, 64, 256}, {16, 256, 256}}; /* h, n, d */
    if (!b->json) {
        printf("\nframe at %dx%d: layout + drawing list + software raster of the whole view\n",
               FRAME_W, FRAME_H);
        printf("%4s %5s %7s %7s %12s %12s %8s\n", "h", "n", "d_model", "runs", "after_change",
               "colours_kept", "cmds");
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && rc == 0; i++) {
        const int heads = shapes[i][0], n = shapes[i][1], d = shapes[i][2];
        frame_case f;
        timing t_change, t_kept;
        rc = frame_open(b, &f, heads, n, d, FRAME_W, FRAME_H);
        if (rc == 0) {
            f.recolour = 1;
            rc = time_runs(b, &t_change, run_frame, &f);
        }
        if (rc == 0) {
            f.recolour = 0;
            rc = time_runs(b, &t_kept, run_frame, &f);
        }
        if (rc == 0 && b->json)
            printf("{\"case\":\"frame\",\"width\":%d,\"height\":%d,\"h\":%d,\"n\":%d,"
                   "\"d_model\":%d,\"median_ms\":%.3f,\"colours_kept_ms\":%.3f}\n",
                   FRAME_W, FRAME_H, heads, n, d, t_change.median * 1e3, t_kept.median * 1e3);
        else if (rc == 0)
            printf("%4d %5d %7d %7d %9.2f ms %9.2f ms %8d\n", heads, n, d, t_change.runs,
                   t_change.median * 1e3, t_kept.median * 1e3, f.dl.count);
        frame_close(&f);
    }
    return rc;
}

/* From h up to a finished frame, at (h, n, d_model); also the share of that the
 * model's recompute took (the state's compute_ms). */
static int bench_h_step(bench *b, const char *name, int heads, int n, int d) {
    enum { RUNS_MAX = 1000 };
    static double compute_ms[RUNS_MAX];
    frame_case f;
    int rc = frame_open(b, &f, heads, n, d, FRAME_W, FRAME_H);
    if (rc == 0) rc = frame_draw(b, &f);
    /* time_runs cannot interleave the untimed Down: time each Up by hand */
    const int runs_max = b->quick ? 1 : RUNS_MAX;
    int runs = 0, h_up = heads;
    const double start = now_s();
    if (rc == 0 && !b->quick) rc = run_h_up(b, &f) || run_h_down(b, &f); /* warm-up */
    while (rc == 0 && runs < runs_max) {
        const double t0 = now_s();
        rc = run_h_up(b, &f);
        b->samples[runs] = now_s() - t0;
        compute_ms[runs++] = f.s->compute_ms;
        h_up = f.s->cfg.h;
        if (rc == 0) rc = run_h_down(b, &f);
        if (now_s() - start >= BENCH_MIN_S && runs >= BENCH_MIN_RUNS) break;
    }
    if (rc == 0) {
        const double med = median_sorted(b->samples, runs) * 1e3;
        const double comp = median_sorted(compute_ms, runs);
        if (b->json && strcmp(name, "update") == 0)
            printf("{\"case\":\"update\",\"h\":%d,\"n\":%d,\"d_model\":%d,\"median_ms\":%.3f,"
                   "\"compute_ms\":%.3f}\n",
                   heads, n, d, med, comp);
        else if (b->json)
            printf("{\"case\":\"%s\",\"d_model\":%d,\"n\":%d,\"h\":%d,\"median_ms\":%.3f,"
                   "\"compute_ms\":%.3f}\n",
                   name, d, n, heads, med, comp);
        else
            printf("%-8s h %d -> %d, n %d, d_model %d: %.2f ms, of which the model %.2f ms "
                   "(median of %d)\n",
                   name, heads, h_up, n, d, med, comp, runs);
    }
    frame_close(&f);
    return rc;
}

typedef struct {
    app_state *s;
    const char *path;
} export_case;

static int run_export(bench *b, void *ud) {
    export_case *e = ud;
    view_state vs;
    app_figure_view(e->s, APP_SAVE_VIEW, &vs);
    const char *dot = strrchr(e->path, '.');
    if (strcmp(dot, ".png") == 0) return export_png(e->path, &vs, 1, b->fonts, b->err, b->errlen);
    return export_vector(e->path, &vs, b->fonts, b->err, b->errlen);
}

static int bench_exports(bench *b) {
    static const char *formats[] = {"png", "svg", "pdf"};
    const int heads = 4, n = 12, d = 64; /* the window's first picture */
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/mhaviz-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(b->err, b->errlen, "cannot make a temporary folder in %s",
                 tmp && *tmp ? tmp : "/tmp");
        return -1;
    }
    if (!b->json)
        printf("\nexport at %dx%d (h %d, n %d, d_model %d), written to a temporary folder\n",
               EXPORT_W, EXPORT_H, heads, n, d);
    app_state *s = make_state(b, heads, n, d, EXPORT_W, EXPORT_H);
    int rc = s ? 0 : -1;
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/bench.%s", dir, formats[i]);
        export_case e = {s, path};
        timing t;
        rc = time_runs(b, &t, run_export, &e);
        if (rc == 0 && b->json)
            printf("{\"case\":\"export\",\"format\":\"%s\",\"width\":%d,\"height\":%d,\"h\":%d,"
                   "\"n\":%d,\"d_model\":%d,\"ms\":%.2f}\n",
                   formats[i], EXPORT_W, EXPORT_H, heads, n, d, t.median * 1e3);
        else if (rc == 0)
            printf("%s: %.1f ms (median of %d)\n", formats[i], t.median * 1e3, t.runs);
        unlink(path);
    }
    app_state_destroy(s);
    rmdir(dir);
    return rc;
}

/* ---- peak memory ------------------------------------------------------------------- */

/* A child process builds the app's state at (512, 1024, 16) and draws one frame;
 * its peak resident memory (getrusage of the child) is the number. Started before
 * the rest of the bench has allocated anything, so the child inherits nothing big. */
static pid_t rss_start(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0) return pid; /* the parent, or -1 */
    char err[512];
    int rc = 1;
    if (TTF_Init() == 0) {
        bench b = {.quick = 1, .err = err, .errlen = sizeof err};
        b.fonts = font_set_open(NULL, err, sizeof err);
        frame_case f;
        if (b.fonts && frame_open(&b, &f, 16, 512, 1024, FRAME_W, FRAME_H) == 0)
            rc = frame_draw(&b, &f) == 0 ? 0 : 1;
        if (b.fonts) frame_close(&f);
    }
    _exit(rc); /* no exit handlers: the parent's stdio buffers are not the child's */
}

static int rss_finish(bench *b, pid_t pid) {
    int status = 0;
    struct rusage ru;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || getrusage(RUSAGE_CHILDREN, &ru) != 0) {
        snprintf(b->err, b->errlen, "the memory measurement at (512, 1024, 16) failed");
        return -1;
    }
    const double mb = (double)ru.ru_maxrss / 1024.0; /* the only child's, in KiB on Linux */
    mha_config cfg = {.h = 16, .d_model = 1024};
    const double model_mb = (double)mha_model_bytes(&cfg, 512) / (1024.0 * 1024.0);
    if (b->json)
        printf("{\"case\":\"rss\",\"n\":512,\"d_model\":1024,\"h\":16,\"peak_mb\":%.1f,"
               "\"model_mb\":%.1f}\n",
               mb, model_mb);
    else
        printf("\npeak memory of a process at (n 512, d_model 1024, h 16) after one frame: %.1f "
               "MB (the model's tensors: %.0f MB)\n",
               mb, model_mb);
    return 0;
}

/* ---- training: one AdamW step of the task the README's lesson uses -------------- */

static int run_train_step(bench *b, void *ud) {
    (void)b;
    learn_step(ud);
    return 0;
}

/* A training step at d_model 32, h 4, batch 32, T 12, 1 layer, attention only (the
 * size PyTorch is compared at: examples/bench_compare.py --train), on one thread
 * as --train runs. */
static int bench_train_step(bench *b) {
    learn_config cfg = {.task = LEARN_PAIR, .h = 4, .d_model = 32, .layers = 1, .batch = 32};
    learn_model *l = learn_create(&cfg, b->err, b->errlen);
    if (!l) return -1;
    if (!getenv("OPENBLAS_NUM_THREADS")) mm_set_threads(1);
    timing t;
    int rc = time_runs(b, &t, run_train_step, l);
    if (!getenv("OPENBLAS_NUM_THREADS")) mm_set_threads(0);
    learn_destroy(l);
    if (rc != 0) return rc;
    if (b->json)
        printf("{\"case\":\"train_step\",\"task\":\"pair\",\"d_model\":32,\"h\":4,"
               "\"batch\":32,\"T\":12,\"layers\":1,\"median_us\":%.2f,\"p95_us\":%.2f}\n",
               t.median * 1e6, t.p95 * 1e6);
    else
        printf("\ntraining step (pair, d_model 32, h 4, batch 32, T 12, 1 layer): median %.1f us, "
               "p95 %.1f us over %d steps\n",
               t.median * 1e6, t.p95 * 1e6, t.runs);
    return 0;
}

int app_bench(const cli_options *o, char *err, size_t errlen) {
    bench b = {.quick = o->bench_quick, .json = o->bench_json, .err = err, .errlen = errlen};
    const pid_t rss_pid = rss_start();
    b.samples = malloc(BENCH_MAX_RUNS * sizeof(double));
    if (!b.samples) {
        snprintf(err, errlen, "out of memory");
        if (rss_pid > 0) waitpid(rss_pid, NULL, 0);
        return 1;
    }
    if (!b.json)
        printf("mhaviz --bench%s: medians over at least %.1f s after a warm-up%s\n\n",
               b.quick ? " --bench-quick" : "", BENCH_MIN_S,
               b.quick ? " (here: every case once, no warm-up: not a measurement)" : "");
    double sgemm_gflops = 0.0;
    timing top;
    int rc = bench_limit(&b, &sgemm_gflops, &top);
    if (rc == 0) rc = bench_forward(&b, sgemm_gflops, &top);
    int ttf = 0;
    if (rc == 0) {
        ttf = TTF_Init() == 0;
        if (!ttf) {
            snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
            rc = -1;
        }
    }
    if (rc == 0) {
        b.fonts = font_set_open(o->font, err, errlen);
        if (!b.fonts) rc = -1;
    }
    if (rc == 0) rc = bench_frames(&b);
    if (rc == 0 && !b.json)
        printf("\nfrom the key to a finished frame at %dx%d\n", FRAME_W, FRAME_H);
    if (rc == 0) rc = bench_h_step(&b, "update", 8, 16, 128);
    if (rc == 0) rc = bench_h_step(&b, "h_step", 8, 7, 4096);
    if (rc == 0) rc = bench_exports(&b);
    if (rc == 0) rc = bench_train_step(&b);
    if (rc == 0)
        rc = rss_finish(&b, rss_pid);
    else if (rss_pid > 0)
        waitpid(rss_pid, NULL, 0); /* reap the child; the first error is the message */
    font_set_close(b.fonts);
    if (ttf) TTF_Quit();
    free(b.samples);
    fflush(stdout);
    return rc == 0 ? 0 : 1;
}
