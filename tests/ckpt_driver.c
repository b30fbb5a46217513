/* ckpt_driver.c: loads a checkpoint with ckpt_resolve and ckpt_load, as mhaviz
 * --model does, and prints one line of JSON: the config, n_params, load_ms (the
 * time ckpt_load took), the progress calls and, per tensor of the transformer,
 * its shape, sum, a position-weighted sum (weights 1 + i % 13, so that a
 * transposed or shuffled copy of the right values is caught) and its first
 * values. ckpt_hostile.py recomputes these with NumPy from the arrays it wrote.
 * On failure: "mhaviz: <err>" on stderr and the loader's exit code (1 or 2).
 *
 *   ckpt_driver PATH [--cancel-at FRACTION]
 *
 * --cancel-at: the progress callback stops the load at the first fraction >= it. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"

typedef struct {
    int calls;
    double last;
    int backwards; /* a fraction below the one before, or outside [0, 1] */
    double cancel_at;
} progress_state;

static int on_progress(void *ud, double fr) {
    progress_state *p = ud;
    if (fr < p->last || fr < 0.0 || fr > 1.0) p->backwards = 1;
    p->last = fr;
    p->calls++;
    return fr >= p->cancel_at;
}

/* A JSON string: the folder's name may hold quotes or control characters. */
static void put_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--cancel-at") == 0)) {
        fprintf(stderr, "usage: ckpt_driver PATH [--cancel-at FRACTION]\n");
        return 2;
    }
    progress_state ps = {0, 0.0, 0, 2.0};
    if (argc == 4) ps.cancel_at = strtod(argv[3], NULL);
    char err[1024];
    ckpt_paths paths;
    int rc = ckpt_resolve(argv[1], &paths, err, sizeof err);
    transformer *tf = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ckpt_config cfg;
    if (rc == 0) rc = ckpt_config_read(&cfg, paths.config, err, sizeof err);
    if (rc == 0) rc = ckpt_load(&paths, &cfg, &tf, on_progress, &ps, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        fprintf(stderr, "mhaviz: %s\n", err);
        return rc;
    }
    const tf_config *c = &tf->cfg;
    printf("{\"name\":");
    put_json_string(paths.name);
    printf(",\"config\":{\"n_layer\":%d,\"n_head\":%d,\"n_embd\":%d,"
           "\"n_positions\":%d,\"vocab_size\":%d,\"layer_norm_epsilon\":%.9g,\"d_ff\":%d,"
           "\"tied\":%d,\"attn_bias\":%d,\"act\":%d},\"n_params\":%zu,"
           "\"load_ms\":%.3f,\"progress\":{\"calls\":%d,\"last\":%.17g,\"backwards\":%d},"
           "\"tensors\":[",
           c->layers, c->h, c->d_model, c->ctx, c->vocab, (double)c->ln_eps, c->d_ff, c->tied,
           c->attn_bias, (int)c->act, tf->n_params,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6,
           ps.calls, ps.last, ps.backwards);
    for (int i = 0; i < tf->n_tensors; i++) {
        const tf_tensor *t = &tf->tensors[i];
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? (size_t)t->shape[1] : 1);
        double sum = 0.0, wsum = 0.0;
        for (size_t k = 0; k < n; k++) {
            sum += t->data[k];
            wsum += (double)t->data[k] * (double)(1 + k % 13);
        }
        printf("%s{\"name\":\"%s\",\"shape\":[%d", i ? "," : "", t->name, t->shape[0]);
        if (t->ndim == 2) printf(",%d", t->shape[1]);
        printf("],\"sum\":%.17g,\"wsum\":%.17g,\"first\":[", sum, wsum);
        for (size_t k = 0; k < n && k < 3; k++) printf("%s%.9g", k ? "," : "", (double)t->data[k]);
        printf("]}");
    }
    printf("]}\n");
    tf_destroy(tf);
    return 0;
}
