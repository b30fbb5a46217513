/* bench_model_window.c: a loaded model's changes as the window's jobs compute
 * them (--bench --model; bench_model.c runs them in its child process after its
 * peak memory is said, as they hold a second trace): the window shows one run and
 * computes a change into the other, which holds the state before the last change
 * shown. Here the last change shown was head 1 of layer 1 removed; the change
 * timed is head 2 removed in layer 1 or in the last layer (model_window_ablate), a
 * switch to the last layer (model_window_layer) or layer 1 re-split
 * (model_window_resplit), at n = 256. Each reports median_ms, the run not shown
 * brought to the one shown by copying (gpt2_run_sync) and then the change
 * computed, as the window does, and catch_up_ms, the change before computed
 * again in that run with it (what the window did before), with full_ms, the
 * whole forward, beside them: all in the same run, in the same conditions. */
#include <stdio.h>
#include <string.h>

#include "bench_internal.h"
#include "gpt2.h"

enum { WIN_ABLATE, WIN_LAYER, WIN_RESPLIT };

typedef struct {
    gpt2_run *shown, *back; /* the run shown and the one the change goes into */
    const int *ids;
    int n, kind, layer, h2; /* the layer of the head removed; the re-split's heads */
    int sync;               /* 1: brought to the run shown first */
} win_case;

/* The layer both runs show before the change: the one X removes a head of, else 1. */
static int layer_before(const win_case *c) {
    return c->kind == WIN_ABLATE ? c->layer : 0;
}

/* The run not shown at the state before the last change: every head on (not timed). */
static void before(win_case *c) {
    gpt2_run *r = c->back;
    gpt2_run_clear_off(r);
    gpt2_run_tokens(r, c->ids, c->n);
    gpt2_run_show(r, layer_before(c), r->m->tf->cfg.h);
}

/* The change (timed), as gpt2_run_reach computes it: a layer or h that changes is
   shown once, after the forward. */
static void change(win_case *c) {
    gpt2_run *r = c->back;
    const tf_config *cfg = &r->m->tf->cfg;
    if (c->sync) gpt2_run_sync(r, c->shown, 0);
    if (c->kind != WIN_ABLATE) r->shown = -1;
    gpt2_run_set_off(r, 0, 0, 1); /* the last change shown (nothing when synced) */
    if (c->kind == WIN_ABLATE) gpt2_run_set_off(r, c->layer, 1, 1);
    if (c->kind == WIN_LAYER) gpt2_run_show(r, cfg->layers - 1, cfg->h);
    if (c->kind == WIN_RESPLIT) gpt2_run_show(r, 0, c->h2);
}

static double time_change(bench *b, win_case *c, int *runs) {
    int k = 0;
    const double start = now_s();
    if (!b->quick) { /* a warm-up */
        before(c);
        change(c);
    }
    do {
        before(c);
        const double t0 = now_s();
        change(c);
        b->samples[k++] = now_s() - t0;
    } while (!b->quick && k < BENCH_MAX_RUNS &&
             (k < BENCH_MIN_RUNS || now_s() - start < BENCH_MIN_S));
    *runs = k;
    return median_sorted(b->samples, k) * 1e3;
}

/* The whole forward at n, in ms (as bench_model_edit.c's full_ms). */
static double time_full(bench *b, gpt2_run *r, const int *ids, int n) {
    int k = 0;
    const double start = now_s();
    do {
        tf_infer_forget(r->inf);
        const double t0 = now_s();
        gpt2_run_tokens(r, ids, n);
        b->samples[k++] = now_s() - t0;
    } while (!b->quick && k < BENCH_MAX_RUNS &&
             (k < BENCH_MIN_RUNS || now_s() - start < BENCH_MIN_S));
    return median_sorted(b->samples, k) * 1e3;
}

static void say(const bench *b, const char *name, const char *extra, int n, double ms,
                double catch_ms, double full_ms, int runs) {
    if (b->json)
        printf("{\"case\":\"%s\",%s\"n\":%d,\"median_ms\":%.3f,\"catch_up_ms\":%.3f,"
               "\"full_ms\":%.3f,\"runs\":%d}\n",
               name, extra, n, ms, catch_ms, full_ms, runs);
    else
        printf("%s %sn = %d: median %.2f ms (catching up by computing %.1f ms, the whole forward "
               "%.1f ms) over %d\n",
               name, extra, n, ms, catch_ms, full_ms, runs);
}

int bench_model_window(bench *b, const gpt2_model *m) {
    const tf_config *cfg = &m->tf->cfg;
    static gpt2_run shown, back;
    static int ids[GPT2_MAX_N];
    if (gpt2_run_init(&shown, m) != 0 || gpt2_run_init(&back, m) != 0) {
        gpt2_run_free(&shown);
        snprintf(b->err, b->errlen, "out of memory for the window's two runs");
        return -1;
    }
    const int n = 256 < shown.inf->cap ? 256 : shown.inf->cap;
    for (int i = 0; i < n; i++) ids[i] = (int)(((long)i * 7919 + 13) % cfg->vocab);
    const double full = time_full(b, &shown, ids, n);
    gpt2_run_set_off(&shown, 0, 0, 1); /* the last change shown: head 1 of layer 1 removed */
    int h2 = cfg->h % 2 == 0 ? cfg->h / 2 : cfg->h * 2;
    if (cfg->d_model % h2 != 0) h2 = cfg->h;
    int runs = 0;
    for (int kind = WIN_ABLATE; kind <= WIN_RESPLIT; kind++) {
        if (kind == WIN_RESPLIT && !tf_infer_can_split(m->tf)) continue;
        for (int l = 0; l<cfg->layers; l += cfg->layers> 1 ? cfg->layers - 1 : 1) {
            if (kind != WIN_ABLATE && l > 0) break;
            win_case c = {&shown, &back, ids, n, kind, l, h2, 0};
            gpt2_run_show(&shown, layer_before(&c), cfg->h);
            const double catch_ms = time_change(b, &c, &runs);
            c.sync = 1;
            const double ms = time_change(b, &c, &runs);
            char extra[48] = "";
            if (kind == WIN_ABLATE) snprintf(extra, sizeof extra, "\"layer\":%d,", l + 1);
            if (kind == WIN_RESPLIT) snprintf(extra, sizeof extra, "\"h2\":%d,", h2);
            say(b,
                kind == WIN_ABLATE  ? "model_window_ablate"
                : kind == WIN_LAYER ? "model_window_layer"
                                    : "model_window_resplit",
                extra, n, ms, catch_ms, full, runs);
        }
    }
    gpt2_run_free(&shown);
    gpt2_run_free(&back);
    return 0;
}
