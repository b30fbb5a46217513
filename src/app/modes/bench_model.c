/* bench_model.c: mhaviz --bench --model PATH: a loaded checkpoint's cases, in a
 * child process so its peak memory is the checkpoint's alone: the load (open,
 * check, convert to float32), the forward at n = 64 and 256 (an encoder's at 128
 * and 512; every layer, the attention of each kept, the next-token distribution),
 * an encoder's masked-LM head on one blank (model_fill), a re-split of one layer
 * as Up/Down makes it in the window, the edits (bench_model_edit.c) and the
 * child's peak resident memory, with one run at the longest text the model holds
 * (n_max: its positions, 1024 for GPT-2), then the changes as the window's jobs
 * compute them (bench_model_window.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_internal.h"
#include "gpt2.h"

typedef struct {
    const char *path;
    gpt2_model *m;
} load_case;

static int run_load(bench *b, void *ud) {
    load_case *c = ud;
    gpt2_free(c->m);
    c->m = NULL;
    int rc = gpt2_load(&c->m, c->path, NULL, NULL, b->err, b->errlen);
    return rc ? -1 : 0;
}

typedef struct {
    gpt2_run *run;
    int ids[GPT2_MAX_N];
    int n;
} forward_case;

static int run_forward(bench *b, void *ud) {
    (void)b;
    forward_case *c = ud;
    tf_infer_run(c->run->inf, c->ids, c->n, NULL, 0);
    return 0;
}

static int run_fill(bench *b, void *ud) {
    (void)b;
    gpt2_run *r = ud;
    tf_fill_run(r->fill, r->inf, (const int[]){0}, 1, GPT2_TOP, r->fill_ids[0], r->fill_p[0]);
    return 0;
}

typedef struct {
    gpt2_run *run;
    int layer, h[2], turn;
} split_case;

static int run_split(bench *b, void *ud) {
    split_case *c = ud;
    c->turn ^= 1; /* to and fro, as Up then Down */
    if (gpt2_run_show(c->run, c->layer, c->h[c->turn]) != 0) {
        snprintf(b->err, b->errlen, "re-split: out of memory");
        return -1;
    }
    return 0;
}

/* The child's work: prints its lines, returns 0 or 1. */
static int model_cases(bench *b, const char *path) {
    struct stat st;
    char weights[CKPT_PATH_MAX + 32];
    load_case lc = {path, NULL};
    timing t;
    if (time_runs(b, &t, run_load, &lc) != 0) return 1;
    const tf_config *c = &lc.m->tf->cfg;
    snprintf(weights, sizeof weights, "%s", lc.m->paths.weights);
    const double file_mb = stat(weights, &st) == 0 ? (double)st.st_size / (1 << 20) : 0.0;
    if (b->json)
        printf("{\"case\":\"model_load\",\"n_layer\":%d,\"d_model\":%d,\"n_vocab\":%d,"
               "\"file_mb\":%.1f,\"median_ms\":%.2f,\"runs\":%d}\n",
               c->layers, c->d_model, c->vocab, file_mb, t.median * 1e3, t.runs);
    else
        printf("model_load (%d layers, d_model %d, %d tokens, %.0f MB): median %.1f ms over %d\n",
               c->layers, c->d_model, c->vocab, file_mb, t.median * 1e3, t.runs);
    gpt2_run run;
    if (gpt2_run_init(&run, lc.m) != 0) {
        snprintf(b->err, b->errlen, "out of memory for the trace");
        gpt2_free(lc.m);
        return 1;
    }
    int rc = 0;
    const int n_max = run.inf->cap; /* the edits run a text this long (bench_model_edit.c) */
    /* an encoder at BERT's usual lengths (128, and its 512 positions) */
    const int *ns = gpt2_run_is_encoder(&run) ? (const int[]){128, 512} : (const int[]){64, 256};
    forward_case fc = {.run = &run};
    for (int i = 0; i < GPT2_MAX_N; i++) fc.ids[i] = (int)(((long)i * 7919 + 13) % c->vocab);
    for (int k = 0; k < 2 && rc == 0; k++) {
        fc.n = ns[k] < run.inf->cap ? ns[k] : run.inf->cap;
        if (time_runs(b, &t, run_forward, &fc) != 0) {
            rc = 1;
            break;
        }
        if (b->json)
            printf("{\"case\":\"model_forward\",\"n_layer\":%d,\"d_model\":%d,\"h\":%d,\"n\":%d,"
                   "\"median_ms\":%.2f,\"p95_ms\":%.2f,\"runs\":%d}\n",
                   c->layers, c->d_model, c->h, fc.n, t.median * 1e3, t.p95 * 1e3, t.runs);
        else
            printf("model_forward n = %d: median %.1f ms, p95 %.1f ms over %d\n", fc.n,
                   t.median * 1e3, t.p95 * 1e3, t.runs);
    }
    if (rc == 0 && run.fill) { /* the fill panel's own cost: the head on one blank */
        if (time_runs(b, &t, run_fill, &run) != 0) rc = 1;
        if (rc == 0 && b->json)
            printf("{\"case\":\"model_fill\",\"n_vocab\":%d,\"median_ms\":%.3f,\"runs\":%d}\n",
                   c->vocab, t.median * 1e3, t.runs);
        else if (rc == 0)
            printf("model_fill (one blank, %d tokens): median %.2f ms\n", c->vocab, t.median * 1e3);
    }
    /* a re-split of layer 1 at n = 64, between the model's own h and its half (or double);
       none for a model whose heads cannot be re-split (RoPE, K/V groups) */
    if (rc == 0 && tf_infer_can_split(lc.m->tf)) {
        fc.n = 64 < run.inf->cap ? 64 : run.inf->cap;
        tf_infer_run(run.inf, fc.ids, fc.n, NULL, 0);
        run.n = fc.n;
        split_case sc = {&run, 0, {c->h, c->h % 2 == 0 ? c->h / 2 : c->h * 2}, 0};
        if (c->d_model % sc.h[1] != 0) sc.h[1] = c->h;
        if (time_runs(b, &t, run_split, &sc) != 0) rc = 1;
        if (rc == 0 && b->json)
            printf("{\"case\":\"model_resplit\",\"d_model\":%d,\"h\":%d,\"h2\":%d,\"n\":%d,"
                   "\"median_ms\":%.3f}\n",
                   c->d_model, sc.h[0], sc.h[1], fc.n, t.median * 1e3);
        else if (rc == 0)
            printf("model_resplit %d <-> %d heads at n = %d: median %.2f ms\n", sc.h[0], sc.h[1],
                   fc.n, t.median * 1e3);
    }
    if (rc == 0) {
        gpt2_run_tokens(&run, fc.ids, fc.n);
        if (gpt2_run_show(&run, 0, c->h) != 0 || bench_model_edits(b, &run) != 0) rc = 1;
    }
    gpt2_run_free(&run);
    struct rusage ru;
    if (rc == 0 && getrusage(RUSAGE_SELF, &ru) == 0) {
        const double mb = (double)ru.ru_maxrss / 1024.0;
        if (b->json)
            printf("{\"case\":\"model_rss\",\"peak_mb\":%.1f,\"file_mb\":%.1f,\"n_max\":%d}\n", mb,
                   file_mb, n_max);
        else
            printf("model peak memory: %.1f MB (file %.1f MB; one trace at n = %d)\n", mb, file_mb,
                   n_max);
    }
    /* after the peak is said: the window's two traces */
    if (rc == 0 && bench_model_window(b, lc.m) != 0) rc = 1;
    gpt2_free(lc.m);
    return rc;
}

int bench_model(bench *b, const char *path) {
    int fds[2];
    fflush(stdout);
    pid_t pid = pipe(fds) == 0 ? fork() : -1;
    if (pid < 0) {
        snprintf(b->err, b->errlen, "cannot start the model's bench process");
        return -1;
    }
    if (pid == 0) { /* the reason of a failure goes back through the pipe */
        close(fds[0]);
        int rc = model_cases(b, path);
        if (rc) {
            ssize_t w = write(fds[1], b->err, strlen(b->err));
            (void)w;
        }
        fflush(stdout);
        _exit(rc);
    }
    close(fds[1]);
    char why[512];
    ssize_t got = read(fds[0], why, sizeof why - 1);
    close(fds[0]);
    why[got > 0 ? got : 0] = '\0';
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(b->err, b->errlen, "%s", why[0] ? why : "the model's bench failed");
        return -1;
    }
    return 0;
}
