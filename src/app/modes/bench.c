/* bench.c: mhaviz --bench (a table for people), --bench-json (one JSON object a
 * line) and --bench-quick (every case once, to check the output, not the speed).
 * Times sgemm (the machine's limit, in this process), the forward pass at a
 * ladder of shapes, a frame of the view, an h step from the key to a finished
 * frame, the exports, and the peak memory of a process at (512, 1024, 16).
 * Speed is measured here, never in tests. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
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
#include "bench_internal.h"
#include "blas.h"
#include "export.h"
#include "font.h"
#include "learn.h"
#include "mha.h"
#include "sdl_draw.h"
#include "state.h"
#include "view.h"

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

/* Like time_runs for two functions, timed in alternating blocks (a, b, a, b),
 * each block at least half of BENCH_MIN_S and half of BENCH_MIN_RUNS, so that
 * both see the machine of the same second. Not by turns: after a product on
 * several threads, OpenBLAS's own threads spin for about 0.1 s (its
 * THREAD_TIMEOUT) and would take the second core from the forward's helper
 * (measured: the forward at (512, 1024, 16) by turns with sgemm ran 27-50 ms,
 * alone 24-27 ms). So each b block starts with BLOCK_SETTLE_S of untimed runs. */
#define BLOCK_SETTLE_S 0.15
static int time_blocks(bench *b, timing *ta, int (*fa)(bench *, void *), void *ua, timing *tb,
                       int (*fb)(bench *, void *), void *ub) {
    enum { RUNS_MAX = 4096 };
    static double s[2][RUNS_MAX];
    int runs[2] = {0, 0};
    for (int block = 0; block < (b->quick ? 2 : 4); block++) {
        const int w = block % 2;
        int (*fn)(bench *, void *) = w ? fb : fa;
        void *ud = w ? ub : ua;
        if (!b->quick) { /* a warm-up, and for b the settling time */
            const double t0 = now_s();
            do
                if (fn(b, ud) != 0) return -1;
            while (w && now_s() - t0 < BLOCK_SETTLE_S);
        }
        const double start = now_s();
        const int first = runs[w];
        do {
            const double t0 = now_s();
            if (fn(b, ud) != 0) return -1;
            s[w][runs[w]++] = now_s() - t0;
        } while (!b->quick && runs[w] < RUNS_MAX &&
                 (now_s() - start < BENCH_MIN_S / 2 || runs[w] - first < (BENCH_MIN_RUNS + 1) / 2));
    }
    timing *t[2] = {ta, tb};
    for (int w = 0; w < 2; w++) {
        t[w]->runs = runs[w];
        t[w]->median = median_sorted(s[w], runs[w]);
        t[w]->p95 = s[w][(int)ceil(0.95 * runs[w]) - 1];
    }
    return 0;
}

/* sgemm 1024^3 (the machine's limit: OpenBLAS's best case, on its own threads)
 * in alternating blocks with the forward at the last shape of the ladder, whose
 * timing is kept for the ladder. */
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
    if (time_blocks(b, &t, run_sgemm, &s, top, run_forward, model) != 0) goto done;
    top->allocs = model->allocations_ - before;
    const double flops = 2.0 * m * m * m;
    const int threads = mm_threads_for(flops);
    *sgemm_gflops = flops / t.median * 1e-9;
    if (b->json)
        printf("{\"case\":\"sgemm\",\"m\":%d,\"gflops\":%.2f,\"core\":\"%s\",\"threads\":%d}\n", m,
               *sgemm_gflops, mm_backend_name(), threads);
    else
        printf(
            "sgemm %dx%dx%d: %.1f GFLOP/s on %d thread%s (OpenBLAS \"%s\"%s), timed in alternating "
            "blocks with the forward at (%d, %d, %d)\n\n",
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
            const int threads = mm_workers_for(flops); /* the forward's workers */
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
        if (b.fonts) rc = bench_one_frame(&b, 16, 512, 1024) == 0 ? 0 : 1;
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

/* ---- training at a larger size: issue 19's d_model 128, T 64, 2 layers, MLP ------- */

#define BIG_D 128
#define BIG_H 8
#define BIG_T 64
#define BIG_LAYERS 2
#define BIG_BATCH 32
#define BIG_VOCAB 16 /* symbols, and as many classes */
#define BIG_BATCHES 4
#define BIG_CPU_MAX 4096

typedef struct {
    learn_model *l;
    int *tok, *tgt; /* BIG_BATCHES batches of (BIG_BATCH, BIG_T), taken in turn */
    int next;
    double cpu[BIG_CPU_MAX]; /* each step's processor time (the warm-up's too) */
    int cpu_n;
} big_step;

static double cpu_s(void) { /* the process's processor time: every thread's */
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_train_step_big(bench *b, void *ud) {
    (void)b;
    big_step *s = ud;
    const double c0 = cpu_s();
    const size_t off = (size_t)s->next * BIG_BATCH * BIG_T;
    learn_gradients(s->l, s->tok + off, s->tgt + off, BIG_BATCH);
    learn_update(s->l);
    s->next = (s->next + 1) % BIG_BATCHES;
    if (s->cpu_n < BIG_CPU_MAX) s->cpu[s->cpu_n++] = cpu_s() - c0;
    return 0;
}

/* One AdamW step of the learner (learn.h: pre-LayerNorm blocks of causal attention
 * with the MLP, GELU, learned positions, final LayerNorm, W_U + b_U, cross-entropy)
 * at d_model 128, h 8, 2 layers with the MLP, batch 32, on a bench-only sequence of
 * T = 64 (no task has T 64): tokens uniform over 16 symbols, the target at i >= 1
 * the token at i - 1 (the `prev` rule), none at 0. Four batches drawn once, taken in
 * turn. On `threads` workers (1 or 2); examples/bench_compare.py times PyTorch's same
 * step (the same batches' rule) in the same run. */
static int bench_train_step_big(bench *b, int threads) {
    learn_config cfg = {.task = LEARN_PREV,
                        .h = BIG_H,
                        .d_model = BIG_D,
                        .layers = BIG_LAYERS,
                        .mlp = 1,
                        .batch = BIG_BATCH};
    static big_step s; /* 32 KiB of samples: not on the stack */
    memset(&s, 0, sizeof s);
    s.l = learn_create_shape(&cfg, BIG_VOCAB, BIG_VOCAB, BIG_T, b->err, b->errlen);
    if (!s.l) return -1;
    const size_t n = (size_t)BIG_BATCHES * BIG_BATCH * BIG_T;
    s.tok = malloc(n * sizeof(int));
    s.tgt = malloc(n * sizeof(int));
    if (!s.tok || !s.tgt) {
        free(s.tok);
        free(s.tgt);
        learn_destroy(s.l);
        snprintf(b->err, b->errlen, "out of memory");
        return -1;
    }
    uint64_t x = 0x9E3779B97F4A7C15ull; /* a fixed stream: the same batches every run */
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        s.tok[i] = (int)((x >> 33) % BIG_VOCAB);
        s.tgt[i] = i % BIG_T == 0 ? -1 : s.tok[i - 1];
    }
    const int env = getenv("OPENBLAS_NUM_THREADS") != NULL;
    if (!env) mm_set_threads(threads);
    timing t;
    int rc = time_runs(b, &t, run_train_step_big, &s);
    if (!env) mm_set_threads(0);
    learn_destroy(s.l);
    free(s.tok);
    free(s.tgt);
    if (rc != 0) return rc;
    const int used = env ? mm_threads_max() : threads;
    /* the processor time of the timed steps (the warm-up is the first sample, when there
       is one): on a shared machine it moves much less than the wall time */
    const int first = s.cpu_n > t.runs ? s.cpu_n - t.runs : 0;
    const double cpu = median_sorted(s.cpu + first, s.cpu_n - first);
    if (b->json)
        printf("{\"case\":\"train_step_big\",\"task\":\"prev64\",\"d_model\":%d,\"h\":%d,"
               "\"batch\":%d,\"T\":%d,\"layers\":%d,\"mlp\":1,\"threads\":%d,"
               "\"median_us\":%.2f,\"p95_us\":%.2f,\"cpu_us\":%.2f}\n",
               BIG_D, BIG_H, BIG_BATCH, BIG_T, BIG_LAYERS, used, t.median * 1e6, t.p95 * 1e6,
               cpu * 1e6);
    else
        printf("training step (bench-only prev rule at T %d, d_model %d, h %d, %d layers with the "
               "MLP, batch %d) on %d thread%s: median %.2f ms, p95 %.2f ms over %d steps; "
               "processor time %.2f ms a step\n",
               BIG_T, BIG_D, BIG_H, BIG_LAYERS, BIG_BATCH, used, used == 1 ? "" : "s",
               t.median * 1e3, t.p95 * 1e3, t.runs, cpu * 1e3);
    return 0;
}

/* ---- the sweep of h on cards, as a user runs it ------------------------------------ */

/* Seconds of one `mhaviz --train cards -d 16 --sweep h --seeds 3 --steps STEPS`, this
 * program run again as a child (its table and progress to /dev/null), from the start
 * to its exit; -1 on a failure. */
static double sweep_once(bench *b, int steps) {
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    char *const argv[] = {"mhaviz", "--train", "cards", "-d",      "16",    "--sweep",
                          "h",      "--seeds", "3",     "--steps", steps_s, NULL};
    fflush(stdout);
    const double t0 = now_s();
    const pid_t pid = fork();
    if (pid == 0) {
        const int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        snprintf(b->err, b->errlen, "the sweep of cards (--train cards --sweep h) failed");
        return -1.0;
    }
    return now_s() - t0;
}

/* Issue 19's sweep: cards at d_model 16, h = 1, 2, 4, 8, 16, 3 seeds, 1000 steps (15
 * runs side by side on the workers, sweep.c), timed whole as a user runs it: the
 * median of 3 (with --bench-quick once, at 10 steps: a check of the output only). */
static int bench_sweep_cards(bench *b) {
    const int steps = b->quick ? 10 : 1000, repeats = b->quick ? 1 : 3;
    double t[3];
    for (int i = 0; i < repeats; i++)
        if ((t[i] = sweep_once(b, steps)) < 0.0) return -1;
    const double med = median_sorted(t, repeats);
    if (b->json)
        printf("{\"case\":\"sweep_cards\",\"d_model\":16,\"seeds\":3,\"steps\":%d,"
               "\"runs\":15,\"repeats\":%d,\"median_s\":%.3f,\"min_s\":%.3f,\"max_s\":%.3f}\n",
               steps, repeats, med, t[0], t[repeats - 1]);
    else
        printf("sweep of h on cards (d_model 16, h 1-16, 3 seeds, %d steps: 15 runs), the whole "
               "command: median %.2f s of %d (%.2f-%.2f s)\n",
               steps, med, repeats, t[0], t[repeats - 1]);
    return 0;
}

/* The training cases (MHAVIZ_BENCH_ONLY=train runs them alone, and
 * MHAVIZ_BENCH_ONLY=sweep the sweep alone: what bench_compare.py's training rounds
 * need, without the minutes of the rest). */
static int bench_training(bench *b) {
    int rc = bench_train_step(b);
    /* on 1 and 2 workers; when the environment fixes OpenBLAS's threads, its count only */
    const int counts = mm_threads_fixed() || mm_workers_max() < 2 ? 1 : 2;
    for (int t = 1; t <= counts && rc == 0; t++) rc = bench_train_step_big(b, t);
    return rc;
}

int app_bench(const cli_options *o, char *err, size_t errlen) {
    bench b = {.quick = o->bench_quick, .json = o->bench_json, .err = err, .errlen = errlen};
    const char *only = getenv("MHAVIZ_BENCH_ONLY");
    if (only && !o->model_path && (strcmp(only, "train") == 0 || strcmp(only, "sweep") == 0)) {
        b.samples = malloc(BENCH_MAX_RUNS * sizeof(double)); /* those cases alone */
        int rc = !b.samples ? -1 : only[0] == 't' ? bench_training(&b) : bench_sweep_cards(&b);
        if (!b.samples) snprintf(err, errlen, "out of memory");
        free(b.samples);
        fflush(stdout);
        return rc == 0 ? 0 : 1;
    }
    const pid_t rss_pid = o->model_path ? -1 : rss_start();
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
    errno = 0; /* a standard output that cannot be written is found now, not after minutes */
    if (!b.json && (fflush(stdout) != 0 || ferror(stdout))) {
        snprintf(err, errlen, "cannot write standard output: %s", strerror(errno ? errno : EIO));
        free(b.samples);
        if (rss_pid > 0) waitpid(rss_pid, NULL, 0);
        return 1;
    }
    double sgemm_gflops = 0.0;
    timing top;
    int rc = bench_limit(&b, &sgemm_gflops, &top);
    if (o->model_path) { /* a checkpoint's cases only, beside sgemm */
        if (rc == 0) rc = bench_model(&b, o->model_path);
        free(b.samples);
        fflush(stdout);
        return rc == 0 ? 0 : 1;
    }
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
    if (rc == 0) rc = bench_training(&b);
    if (rc == 0) rc = bench_sweep_cards(&b);
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
