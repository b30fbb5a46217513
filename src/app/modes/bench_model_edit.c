/* bench_model_edit.c: a loaded model's edits as the window computes them, each
 * beside the whole forward at the same n (--bench --model; bench_model.c runs
 * them in its child process): one token typed at the end, one changed at n/2, a
 * head removed in the first and the last layer, and the model writing (a token
 * appended after the most likely one, as --generate at temperature 0). Each
 * timed edit ends with the data of the finished frame: the forward, the
 * next-token distribution and its top tokens, the shown layer's view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "gpt2.h"

typedef struct {
    gpt2_run *run;
    int *ids;     /* (cap) the base text */
    int *edited;  /* (cap) the text edited */
    int n, layer; /* tokens; the layer of a head removed */
    int kind;     /* EDIT_* */
} edit_case;

enum { EDIT_APPEND, EDIT_MIDDLE, EDIT_ABLATE, EDIT_GENERATE, EDIT_FULL };

/* Brings the run to the state before the edit (not timed). */
static void before(edit_case *c) {
    gpt2_run *r = c->run;
    switch (c->kind) {
    case EDIT_APPEND:
    case EDIT_GENERATE: gpt2_run_tokens(r, c->ids, c->n - 1); break;
    case EDIT_MIDDLE: gpt2_run_tokens(r, c->ids, c->n); break;
    case EDIT_ABLATE:
        gpt2_run_tokens(r, c->ids, c->n);
        gpt2_run_set_off(r, c->layer, 0, 0);
        break;
    default: /* the whole forward: nothing kept */
        gpt2_run_clear_off(r);
        gpt2_run_tokens(r, c->ids, c->n);
        tf_infer_forget(r->inf);
        break;
    }
}

/* The edit (timed). */
static void edit(edit_case *c) {
    gpt2_run *r = c->run;
    switch (c->kind) {
    case EDIT_APPEND: gpt2_run_tokens(r, c->ids, c->n); break;
    case EDIT_MIDDLE: gpt2_run_tokens(r, c->edited, c->n); break;
    case EDIT_ABLATE: gpt2_run_set_off(r, c->layer, 0, 1); break;
    case EDIT_GENERATE: /* the most likely token after the n - 1 */
        c->edited[c->n - 1] = r->top[0];
        gpt2_run_tokens(r, c->edited, c->n);
        break;
    default: gpt2_run_tokens(r, c->ids, c->n); break;
    }
}

/* Median seconds of the edit over BENCH_MIN_S and BENCH_MIN_RUNS (quick: one). */
static double time_edit(bench *b, edit_case *c, int *runs) {
    int k = 0;
    const double start = now_s();
    if (!b->quick) { /* a warm-up */
        before(c);
        edit(c);
    }
    do {
        before(c);
        const double t0 = now_s();
        edit(c);
        b->samples[k++] = now_s() - t0;
    } while (!b->quick && k < BENCH_MAX_RUNS &&
             (k < BENCH_MIN_RUNS || now_s() - start < BENCH_MIN_S));
    *runs = k;
    return median_sorted(b->samples, k);
}

static void say(const bench *b, const char *name, const char *extra, int n, double ms,
                double full_ms, int runs) {
    if (b->json)
        printf("{\"case\":\"%s\",%s\"n\":%d,\"median_ms\":%.3f,\"full_ms\":%.3f,\"runs\":%d}\n",
               name, extra, n, ms, full_ms, runs);
    else
        printf("%s %sn = %d: median %.2f ms (the whole forward %.1f ms, %.1fx) over %d\n", name,
               extra, n, ms, full_ms, full_ms / (ms > 0.0 ? ms : 1e-9), runs);
}

int bench_model_edits(bench *b, gpt2_run *run) {
    const tf_config *c = &run->m->tf->cfg;
    const int cap = run->inf->cap;
    int *ids = malloc((size_t)cap * sizeof(int)), *edited = malloc((size_t)cap * sizeof(int));
    if (!ids || !edited) {
        free(ids);
        free(edited);
        snprintf(b->err, b->errlen, "out of memory for the edits' tokens");
        return -1;
    }
    for (int i = 0; i < cap; i++) ids[i] = edited[i] = (int)(((long)i * 7919 + 13) % c->vocab);
    static const int ns[] = {64, 256, 1024};
    const char *only = getenv("MHAVIZ_BENCH_ONLY"); /* "ablate": its cases alone */
    const int ablate_only = only && strcmp(only, "ablate") == 0, n_ablate = 256 < cap ? 256 : cap;
    int runs = 0, last_n = 0;
    for (int k = 0; k < 3; k++) {
        const int n = ns[k] < cap ? ns[k] : cap;
        if (n == last_n || n < 2 || (ablate_only && n != n_ablate)) continue;
        last_n = n;
        edit_case e = {run, ids, edited, n, 0, EDIT_FULL};
        const double full = time_edit(b, &e, &runs) * 1e3;
        e.kind = EDIT_APPEND;
        if (!ablate_only)
            say(b, "model_edit_append", "", n, time_edit(b, &e, &runs) * 1e3, full, runs);
        for (int i = 0; i < n; i++) edited[i] = ids[i];
        edited[n / 2] = (ids[n / 2] + 1) % c->vocab;
        e.kind = EDIT_MIDDLE;
        if (!ablate_only)
            say(b, "model_edit_middle", "", n, time_edit(b, &e, &runs) * 1e3, full, runs);
        if (n != n_ablate) continue;
        for (int l = 0; l<c->layers; l += c->layers> 1 ? c->layers - 1 : 1) {
            char extra[32];
            snprintf(extra, sizeof extra, "\"layer\":%d,", l + 1);
            e = (edit_case){run, ids, edited, n, l, EDIT_ABLATE};
            say(b, "model_ablate", extra, n, time_edit(b, &e, &runs) * 1e3, full, runs);
            gpt2_run_clear_off(run);
        }
        if (gpt2_run_is_encoder(run) || ablate_only) continue; /* an encoder does not write */
        for (int i = 0; i < n; i++) edited[i] = ids[i];
        e = (edit_case){run, ids, edited, n, 0, EDIT_GENERATE};
        const double ms = time_edit(b, &e, &runs) * 1e3;
        if (b->json)
            printf("{\"case\":\"model_generate\",\"n\":%d,\"tokens_per_s\":%.1f,"
                   "\"full_tokens_per_s\":%.1f,\"runs\":%d}\n",
                   n, 1e3 / ms, 1e3 / full, runs);
        else
            printf("model_generate at n = %d: %.1f tokens/s (the whole forward each token: %.1f)\n",
                   n, 1e3 / ms, 1e3 / full);
    }
    free(ids);
    free(edited);
    return 0;
}
