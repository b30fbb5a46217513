/* spec_driver.c: a checkpoint of any family the loader knows, run on token ids
 * through the one layer forward (src/learn/block.c), every layer written out for
 * spec_check.py to compare with its PyTorch reference. No tokenizer: the ids are
 * given.
 *
 *   spec_driver DIR IDS OUT [--off L:H,...] [--fill P,...]
 *
 * DIR holds config.json and model.safetensors; IDS is a comma list of token ids;
 * --off removes heads (0-based layer:head) as --ablate does. Writes into OUT (which
 * must exist) per layer l: attn_l.npy (h, n, n), q_l.npy (n, h head_dim) after
 * QK-norm and RoPE, k_l.npy (n, h_kv head_dim), out_l.npy (n, d) the attention's
 * output projection before the residual add, resid_l.npy (n, d) the stream out of
 * layer l, heads_l.npy (h, n, head_dim) each head's head_i = A_i V (the step-through's
 * and the focus view's, removed heads' too); a RoPE model's qpre_l.npy and kpre_l.npy, Q
 * and K before the rotation (after QK-norm); and final.npy (n, d) after the final norm, logits.npy
 * (vocab) of the last position. With --fill (an encoder with its masked-LM head), the head's top 10
 * at positions P (0-based): fill_ids.npy (m, 10) as floats and fill_p.npy (m, 10).
 * With --split L:H2, layer L's attention re-split into H2 heads (tf_infer_split):
 * split_attn.npy (H2, n, n) and split_out.npy (n, d).
 * With --bench R nothing is written: the forward runs once, then R times timed, and
 * one JSON line {"case": "model_forward", "n", "median_ms", "min_ms", "runs"} is
 * printed (a measurement for encoder_bench.py, not a test).
 * Prints the spec as one line of JSON. On failure: "mhaviz: <err>"
 * on stderr and the loader's code (1 or 2). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"
#include "fill.h"
#include "npy.h"

#define MAX_IDS 1024

static int parse_ids(const char *s, int *ids) {
    int n = 0;
    while (*s && n < MAX_IDS) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0) return -1;
        ids[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int put(const char *out, const char *name, int l, const float *data, int ndim, int a, int b,
               int c) {
    char path[4200], err[256];
    if (l >= 0)
        snprintf(path, sizeof path, "%s/%s_%d.npy", out, name, l);
    else
        snprintf(path, sizeof path, "%s/%s.npy", out, name);
    const int shape[3] = {a, b, c};
    if (npy_write_f32(path, data, shape, ndim, err, sizeof err) != 0) {
        fprintf(stderr, "mhaviz: %s\n", err);
        return -1;
    }
    return 0;
}

static int write_unrotated(tf_infer *t, int l, const char *out);

/* Every layer's tensors of the run in t, as the header says; each layer's attention
   computed again from its Q, K, V (tf_infer_attn: the run keeps none) into t's own
   scratch. */
static int write_run(tf_infer *t, const char *out) {
    const model_spec *s = &t->tf->spec;
    const int n = t->n, d = s->d_model, qd = spec_q_dim(s), kvd = spec_kv_dim(s), h = s->h;
    float *heads = malloc((size_t)h * n * s->head_dim * sizeof *heads); /* (h, n, head_dim) */
    if (!heads) return -1;
    int rc = 0;
    for (int l = 0; l < s->layers && rc == 0; l++) {
        tf_infer_attn_rows(t, l, 0, t->scores, t->scores, t->concat, heads);
        const size_t cd = (size_t)t->cap * d;
        if (put(out, "q", l, t->q + (size_t)l * t->cap * qd, 2, n, qd, 0) ||
            put(out, "k", l, t->k + (size_t)l * t->cap * kvd, 2, n, kvd, 0) ||
            put(out, "out", l, t->out + (size_t)l * cd, 2, n, d, 0) ||
            put(out, "resid", l, t->resid + (size_t)(l + 1) * cd, 2, n, d, 0) ||
            put(out, "attn", l, t->scores, 3, h, n, n) ||
            put(out, "heads", l, heads, 3, h, n, s->head_dim) ||
            (s->pos == SPEC_POS_ROPE && write_unrotated(t, l, out) != 0))
            rc = -1;
    }
    free(heads);
    if (rc != 0) return -1;
    if (put(out, "final", -1, t->lnf, 2, n, d, 0) ||
        put(out, "logits", -1, t->logits, 1, s->vocab, 0, 0))
        return -1;
    return 0;
}

/* --split L:H2: layer L's attention re-split; 0, 1 (write failed), 2 (bad split) */
/* A RoPE model's layer l: qpre_l.npy, kpre_l.npy, Q and K before the rotation, as the
   step-through's rotation stage shows them (tf_infer_qk_unrotated). */
static int write_unrotated(tf_infer *t, int l, const char *out) {
    const model_spec *s = &t->tf->spec;
    const int n = t->n, qd = spec_q_dim(s), kvd = spec_kv_dim(s);
    float *q = malloc((size_t)n * qd * sizeof(float)), *k = malloc((size_t)n * kvd * sizeof(float));
    int rc = -1;
    if (q && k) {
        tf_infer_qk_unrotated(t, l, q, k);
        rc = put(out, "qpre", l, q, 2, n, qd, 0) || put(out, "kpre", l, k, 2, n, kvd, 0) ? -1 : 0;
    }
    free(q);
    free(k);
    return rc;
}

static int write_split(const tf_infer *t, const char *arg, const char *out) {
    const model_spec *s = &t->tf->spec;
    int l, h2;
    const int n = t->n, d = s->d_model;
    if (sscanf(arg, "%d:%d", &l, &h2) != 2 || l < 0 || l >= s->layers || h2 < 1 || h2 > d ||
        d % h2 || !tf_infer_can_split(t->tf)) {
        fprintf(stderr, "mhaviz: bad split or a model that cannot be re-split\n");
        return 2;
    }
    float *scores = malloc((size_t)h2 * n * n * sizeof(float) * 2);
    float *concat = malloc((size_t)n * d * sizeof(float) * 2);
    if (!scores || !concat) {
        free(scores), free(concat);
        fprintf(stderr, "mhaviz: out of memory\n");
        return 1;
    }
    float *attn = scores + (size_t)h2 * n * n, *o = concat + (size_t)n * d;
    tf_infer_split(t, l, h2, scores, attn, concat, NULL, o);
    int rc =
        put(out, "split_attn", -1, attn, 3, h2, n, n) || put(out, "split_out", -1, o, 2, n, d, 0);
    free(scores), free(concat);
    return rc;
}

/* The masked-LM head's top 10 at the positions listed in fill: 0, or 1 (written
 * nothing or failed), 2 (bad positions, no head). */
static int write_fill(const tf_infer *t, const char *fill, const char *out) {
    enum { K = 10 };
    static int pos[MAX_IDS], ids[MAX_IDS * K];
    static float p[MAX_IDS * K], idf[MAX_IDS * K];
    const int m = parse_ids(fill, pos);
    int bad = m < 1;
    for (int i = 0; i < m && !bad; i++) bad = pos[i] >= t->n;
    tf_fill *f = bad ? NULL : tf_fill_create(t->tf, m);
    if (!f) {
        fprintf(stderr, "mhaviz: %s\n", bad ? "bad fill positions" : "no masked-LM head");
        return 2;
    }
    tf_fill_run(f, t, pos, m, K, ids, p);
    for (int i = 0; i < m * K; i++) idf[i] = (float)ids[i];
    tf_fill_destroy(f);
    return put(out, "fill_ids", -1, idf, 2, m, K, 0) || put(out, "fill_p", -1, p, 2, m, K, 0);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --bench: the forward once, then runs times, timed */
static void bench(tf_infer *t, const int *ids, int n, int runs) {
    enum { MAX_RUNS = 101 };
    double ms[MAX_RUNS];
    runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    tf_infer_run(t, ids, n, NULL, 0);
    for (int r = 0; r < runs; r++) {
        double t0 = now_ms();
        tf_infer_run(t, ids, n, NULL, 0);
        ms[r] = now_ms() - t0;
    }
    qsort(ms, (size_t)runs, sizeof ms[0], cmp_double);
    printf("{\"case\":\"model_forward\",\"n\":%d,\"median_ms\":%.3f,\"min_ms\":%.3f,"
           "\"runs\":%d}\n",
           n, ms[runs / 2], ms[0], runs);
}

int main(int argc, char **argv) {
    const char *offs = "", *fill = NULL, *split = NULL;
    int bench_runs = 0;
    int usage = argc < 4 || argc % 2;
    for (int a = 4; a + 1 < argc && !usage; a += 2)
        if (strcmp(argv[a], "--off") == 0)
            offs = argv[a + 1];
        else if (strcmp(argv[a], "--fill") == 0)
            fill = argv[a + 1];
        else if (strcmp(argv[a], "--split") == 0)
            split = argv[a + 1];
        else if (strcmp(argv[a], "--bench") == 0)
            bench_runs = atoi(argv[a + 1]);
        else
            usage = 1;
    if (usage) {
        fprintf(stderr, "usage: spec_driver DIR IDS OUT [--off L:H,...] [--fill P,...] "
                        "[--split L:H2] [--bench R]\n");
        return 2;
    }
    static int ids[MAX_IDS];
    const int n = parse_ids(argv[2], ids);
    char err[1024];
    ckpt_paths paths = {0};
    snprintf(paths.config, sizeof paths.config, "%s/config.json", argv[1]);
    snprintf(paths.weights, sizeof paths.weights, "%s/model.safetensors", argv[1]);
    ckpt_config cfg;
    transformer *tf = NULL;
    int rc = ckpt_config_read(&cfg, paths.config, err, sizeof err);
    if (rc == 0) rc = ckpt_load(&paths, &cfg, &tf, NULL, NULL, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "mhaviz: %s\n", err);
        return rc;
    }
    const model_spec *s = &tf->spec;
    int bad = n < 1 || n > s->ctx;
    for (int i = 0; i < n && !bad; i++) bad = ids[i] >= s->vocab;
    unsigned char *off = calloc((size_t)s->layers * s->h, 1);
    for (const char *p = offs; *p && !bad && off;) {
        int l, hh, used;
        bad = sscanf(p, "%d:%d%n", &l, &hh, &used) != 2 || l < 0 || l >= s->layers || hh < 0 ||
              hh >= s->h;
        if (!bad) off[(size_t)l * s->h + hh] = 1, p += used + (p[used] == ',');
    }
    tf_infer *t = bad || !off ? NULL : tf_infer_create(tf, n, s->h);
    if (!t) {
        fprintf(stderr, "mhaviz: %s\n", bad ? "bad ids or heads" : "out of memory");
        free(off);
        tf_destroy(tf);
        return 2;
    }
    if (bench_runs > 0) {
        bench(t, ids, n, bench_runs);
        tf_infer_destroy(t);
        free(off);
        tf_destroy(tf);
        return 0;
    }
    tf_infer_run(t, ids, n, off, 0);
    rc = write_run(t, argv[3]) ? 1 : 0;
    if (rc == 0 && fill) rc = write_fill(t, fill, argv[3]);
    if (rc == 0 && split) rc = write_split(t, split, argv[3]);
    printf("{\"type\":\"%s\",\"mlm\":%d,\"d_embed\":%d,\"layers\":%d,\"d_model\":%d,\"h\":%d,\"h_"
           "kv\":%d,\"head_dim\":%d,"
           "\"d_ff\":%d,\"norm\":%d,\"pos\":%d,\"rope_scaling\":%d,\"mlp\":%d,\"head\":%d,"
           "\"qk_norm\":%d,\"qkv_bias\":%d,\"o_bias\":%d,\"emb_scale\":%.9g,\"n_params\":%zu}\n",
           cfg.family->type, s->mlm, spec_emb_dim(s), s->layers, s->d_model, s->h, s->h_kv,
           s->head_dim, s->d_ff, s->norm, s->pos, s->rope_scaling, s->mlp, s->head, s->qk_norm,
           s->qkv_bias, s->o_bias, (double)s->emb_scale, tf->n_params);
    tf_infer_destroy(t);
    free(off);
    tf_destroy(tf);
    return rc;
}
