/* train_mode.c: --train TASK without a window. Trains the learner (src/learn),
 * evaluates on the held-out set every few steps, draws a progress bar on a
 * terminal (a line every few hundred steps otherwise), prints a per-head summary
 * and, with --dump DIR, writes weights, the held-out example's tensors per layer
 * and train.json. The numbers all come from src/learn; this file only reports. */
#define _POSIX_C_SOURCE 200809L
#include "train_mode.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "blas.h"
#include "dump.h"
#include "learn.h"
#include "npy.h"
#include "train_loop.h"

#define LOG_EVERY 250 /* steps between progress lines when stderr is not a terminal */
#define BAR_WIDTH 30

typedef train_point curve_row; /* a point every TRAIN_CURVE_EVERY steps (train_loop.h) */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress(int tty, const char *task, long step, long steps, const curve_row *last,
                     double rate) {
    if (tty) {
        int fill = (int)((long)BAR_WIDTH * step / steps);
        char bar[BAR_WIDTH + 1];
        for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
        bar[BAR_WIDTH] = '\0';
        fprintf(stderr, "\r%s [%s] %ld/%ld  loss %.4f  held-out %5.1f%%  %.0f steps/s ", task, bar,
                step, steps, (double)last->loss, 100.0 * last->acc, rate);
        if (step == steps) fputc('\n', stderr);
    } else {
        fprintf(stderr, "%s: step %ld/%ld  loss %.4f  held-out %.1f%%  %.0f steps/s\n", task, step,
                steps, (double)last->loss, 100.0 * last->acc, rate);
    }
    fflush(stderr);
}

/* path = dir/name; -1 with a message when it does not fit */
static int join(char *path, size_t len, const char *dir, const char *name, char *err,
                size_t errlen) {
    int n = snprintf(path, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        snprintf(err, errlen, "--dump: folder name too long");
        return -1;
    }
    return 0;
}

/* a JSON number, or null for what JSON cannot hold */
static void json_num(FILE *f, double v) {
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    fprintf(f, "%s%s", buf, strpbrk(buf, ".eEn") ? "" : ".0"); /* 1 is written 1.0 */
}

typedef struct {
    const learn_config *cfg;
    int steps;
    const curve_row *curve;
    int rows;
    float acc;
    const float *mass_prev, *mass_first, *mass_induction, *ablated; /* (layers, h) */
} train_result;

static int write_json(const char *dir, const train_result *r, char *err, size_t errlen) {
    char path[4200];
    if (join(path, sizeof path, dir, "train.json", err, errlen) != 0) return -1;
    atomic_file af;
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    FILE *f = af.fp;
    const learn_config *c = r->cfg;
    fprintf(f, "{\n  \"task\": \"%s\",\n  \"layers\": %d,\n  \"h\": %d,\n  \"d_model\": %d,\n",
            learn_task(c->task)->name, c->layers, c->h, c->d_model);
    fprintf(f, "  \"steps\": %d,\n  \"seed\": %llu,\n  \"curve\": [", r->steps,
            (unsigned long long)c->seed);
    for (int i = 0; i < r->rows; i++) {
        fprintf(f, "%s\n    [%ld, ", i ? "," : "", r->curve[i].step);
        json_num(f, r->curve[i].loss);
        fputs(", ", f);
        json_num(f, r->curve[i].acc);
        fputc(']', f);
    }
    fputs("\n  ],\n  \"acc\": ", f);
    json_num(f, r->acc);
    fputs(",\n  \"heads\": [", f);
    for (int k = 0; k < c->layers * c->h; k++) {
        fprintf(f, "%s\n    {\"layer\": %d, \"head\": %d, \"mass_prev\": ", k ? "," : "",
                k / c->h + 1, k % c->h + 1);
        json_num(f, r->mass_prev[k]);
        fputs(", \"mass_first\": ", f);
        json_num(f, r->mass_first[k]);
        fputs(", \"mass_induction\": ", f);
        json_num(f, r->mass_induction[k]);
        fputs(", \"ablated_acc\": ", f);
        json_num(f, r->ablated[k]);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    return atomic_commit(&af, err, errlen);
}

static int write_npy(const char *dir, const char *name, const float *data, int a, int b, int c,
                     char *err, size_t errlen) {
    char path[4200], file[80];
    snprintf(file, sizeof file, "%s.npy", name);
    if (join(path, sizeof path, dir, file, err, errlen) != 0) return -1;
    int shape[3] = {a, b, c};
    int ndim = c > 0 ? 3 : b > 0 ? 2 : 1;
    return npy_write_f32(path, data, shape, ndim, err, errlen);
}

/* one string a line: the example's tokens, or its targets ("-" where none) */
static int write_lines(const char *dir, const char *name, const int *ids, int n,
                       const char *const *strings, char *err, size_t errlen) {
    char path[4200];
    if (join(path, sizeof path, dir, name, err, errlen) != 0) return -1;
    atomic_file af;
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    for (int i = 0; i < n; i++) fprintf(af.fp, "%s\n", ids[i] >= 0 ? strings[ids[i]] : "-");
    return atomic_commit(&af, err, errlen);
}

/* DIR/weights/<name>.npy for every parameter ("layer1.W_Q" becomes layer1_W_Q.npy);
 * DIR/layerN/ the held-out example's tensors with the names of the app's --dump;
 * DIR/logits.npy, tokens.txt, targets.txt; DIR/train.json. */
static int write_dump(const char *dir, learn_model *l, const train_result *r, char *err,
                      size_t errlen) {
    const learn_config *c = learn_get_config(l);
    const learn_task_info *ti = learn_task(c->task);
    const int T = ti->seq_len, d = c->d_model, h = c->h, dk = d / h;
    char sub[4200];
    if (join(sub, sizeof sub, dir, "weights", err, errlen) != 0 ||
        dump_mkdirs(sub, err, errlen) != 0)
        return -1;
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        char name[64];
        snprintf(name, sizeof name, "%s", t.name);
        for (char *p = name; *p; p++)
            if (*p == '.') *p = '_';
        if (write_npy(sub, name, t.data, t.shape[0], t.ndim == 2 ? t.shape[1] : 0, 0, err,
                      errlen) != 0)
            return -1;
    }
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    const float *logits = NULL;
    learn_example_tensors(l, lt, &logits);
    float *heads = malloc(sizeof(float) * (size_t)T * d);
    if (!heads) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < c->layers && rc == 0; i++) {
        char layer[16];
        snprintf(layer, sizeof layer, "layer%d", i + 1);
        rc = join(sub, sizeof sub, dir, layer, err, errlen) != 0;
        if (rc) break;
        for (int hd = 0; hd < h; hd++) /* head_i: its band of Concat, (T, d_k) */
            for (int t = 0; t < T; t++)
                memcpy(heads + ((size_t)hd * T + t) * dk, lt[i].concat + (size_t)t * d + hd * dk,
                       sizeof(float) * (size_t)dk);
        rc = dump_mkdirs(sub, err, errlen) != 0 ||
             write_npy(sub, "resid_in", lt[i].x, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "X", lt[i].ln1, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "Q", lt[i].q, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "K", lt[i].k, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "V", lt[i].v, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "scores", lt[i].scores, h, T, T, err, errlen) != 0 ||
             write_npy(sub, "attn", lt[i].attn, h, T, T, err, errlen) != 0 ||
             write_npy(sub, "heads", heads, h, T, dk, err, errlen) != 0 ||
             write_npy(sub, "concat", lt[i].concat, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "out", lt[i].out, T, d, 0, err, errlen) != 0 ||
             write_npy(sub, "resid_out", lt[i].resid, T, d, 0, err, errlen) != 0;
    }
    free(heads);
    if (rc) return -1;
    const int *tok, *tgt;
    learn_example(l, &tok, &tgt);
    if (write_npy(dir, "logits", logits, T, ti->classes, 0, err, errlen) != 0 ||
        write_lines(dir, "tokens.txt", tok, T, ti->symbols, err, errlen) != 0 ||
        write_lines(dir, "targets.txt", tgt, T, ti->class_name, err, errlen) != 0)
        return -1;
    return write_json(dir, r, err, errlen);
}

/* Fails with a message when dir or a folder above it exists and is not a folder,
   or when the deepest existing folder cannot be written: what dump_mkdirs would
   meet, found before training (nothing is created). */
static int check_dump_path(const char *dir, char *err, size_t errlen) {
    char p[4200];
    snprintf(p, sizeof p, "%s", dir);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/') p[--len] = '\0';
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "cannot write %s: %s exists and is not a folder", dir, p);
                return -1;
            }
            if (access(p, W_OK) != 0) {
                snprintf(err, errlen, "cannot write %s: %s", dir, strerror(errno));
                return -1;
            }
            return 0;
        }
        char *slash = strrchr(p, '/');
        if (!slash) { /* a name in the current folder */
            if (access(".", W_OK) == 0) return 0;
            snprintf(err, errlen, "cannot write %s: %s", dir, strerror(errno));
            return -1;
        }
        if (slash == p) {
            p[1] = '\0';
            continue;
        }
        *slash = '\0';
    }
}

/* The loop of train_loop.h with progress on stderr: fills curve (room for
   steps / TRAIN_CURVE_EVERY + 1 points) and returns its points; *rate the
   steps a second. */
static int train_steps(learn_model *l, long steps, const char *task, curve_row *curve,
                       double *rate) {
    const int tty = isatty(STDERR_FILENO);
    int rows = 0;
    double t0 = now_s(), t_draw = 0.0;
    curve_row last = {0, NAN, 0.0f};
    train_loop tl;
    train_loop_begin(&tl, l, steps, NULL);
    for (long s = 1; s <= steps; s++) {
        if (train_loop_step(&tl, &last)) curve[rows++] = last;
        double t = now_s(); /* a bar redrawn 10 times a second, or a line per LOG_EVERY */
        int draw = s == steps || (tty ? t - t_draw > 0.1 && rows > 0 : s % LOG_EVERY == 0);
        if (draw) {
            progress(tty, task, s, steps, &last, s / fmax(t - t0, 1e-9));
            t_draw = t;
        }
    }
    *rate = steps / fmax(now_s() - t0, 1e-9);
    return rows;
}

/* The summary on stdout. */
static void print_summary(const learn_config *cfg, const train_result *r) {
    const learn_task_info *ti = learn_task(cfg->task);
    const int nh = cfg->layers * cfg->h;
    printf("%s: held-out accuracy %.1f%% after %d steps (h=%d, d_model=%d, %d layer%s%s, "
           "seed %llu)\n",
           ti->name, 100.0 * r->acc, r->steps, cfg->h, cfg->d_model, cfg->layers,
           cfg->layers > 1 ? "s" : "", cfg->mlp ? ", MLP" : "", (unsigned long long)cfg->seed);
    printf("layer head  on i-1  on 0  induction  accuracy without it\n");
    for (int k = 0; k < nh; k++)
        printf("%5d %4d  %6.2f %5.2f  %9.2f  %6.1f%%\n", k / cfg->h + 1, k % cfg->h + 1,
               (double)r->mass_prev[k], (double)r->mass_first[k], (double)r->mass_induction[k],
               100.0 * r->ablated[k]);
    fflush(stdout);
}

int app_train(const train_options *o, int h, int d_model, uint64_t seed, const char *dump_dir,
              char *err, size_t errlen) {
    return app_train_keep(o, h, d_model, seed, dump_dir, NULL, err, errlen);
}

int app_train_keep(const train_options *o, int h, int d_model, uint64_t seed, const char *dump_dir,
                   train_outcome *keep, char *err, size_t errlen) {
    learn_config cfg = {0};
    cfg.task = (learn_task_id)(o->task - 1);
    cfg.layers = o->layers;
    cfg.h = h;
    cfg.d_model = d_model;
    cfg.mlp = o->mlp;
    cfg.batch = o->batch;
    cfg.lr = o->lr;
    cfg.seed = seed;
    learn_config_resolve(&cfg);
    if (learn_config_check(&cfg, err, errlen) != 0) return 2;
    const learn_task_info *ti = learn_task(cfg.task);
    const int steps = o->steps ? o->steps : ti->default_steps;
    /* the dump folder is made only when training is done, so an interrupted run
       leaves nothing behind; what can be known now is checked now */
    if (dump_dir && check_dump_path(dump_dir, err, errlen) != 0) return 1;

    /* The products of training are small: one thread is faster than two here
     * (0.40 against 0.54 ms a step at d_model 32) and makes a run the same on
     * every machine. OPENBLAS_NUM_THREADS, when set, still decides. */
    if (!getenv("OPENBLAS_NUM_THREADS")) mm_set_threads(1);

    learn_model *l = learn_create(&cfg, err, errlen);
    /* curve[0]: the point before training, for the figure only; train.json has the rest */
    curve_row *curve = malloc(sizeof(curve_row) * (size_t)(steps / TRAIN_CURVE_EVERY + 3));
    const int nh = cfg.layers * cfg.h;
    float *stats = malloc(sizeof(float) * 4 * (size_t)nh);
    if (!l || !curve || !stats) {
        if (l) snprintf(err, errlen, "out of memory");
        learn_destroy(l);
        free(curve), free(stats);
        return 1;
    }
    if (keep) learn_eval(l, NULL, &curve[0].acc, &curve[0].loss), curve[0].step = 0;
    double rate = 0.0;
    const int rows = train_steps(l, steps, ti->name, curve + 1, &rate);

    train_result r = {learn_get_config(l), steps,          curve + 1,     rows, 0.0f, stats,
                      stats + nh,          stats + 2 * nh, stats + 3 * nh};
    train_pruning pr = {0}; /* with keep, the pruned set too: the figure's bars use this pass */
    int rc = train_ablate(l, &r.acc, stats + 3 * nh, keep ? &pr.pruned : NULL,
                          keep ? &pr.pruned_acc : NULL, NULL, NULL) != 0;
    if (rc) snprintf(err, errlen, "out of memory");
    learn_head_masses(l, stats, stats + nh, stats + 2 * nh);
    if (!rc) print_summary(&cfg, &r);
    if (!rc && dump_dir &&
        (dump_mkdirs(dump_dir, err, errlen) != 0 || write_dump(dump_dir, l, &r, err, errlen) != 0))
        rc = 1;
    if (!rc && keep) { /* the figure is made from this very model */
        pr.full = r.acc;
        float *ablated = malloc(sizeof(float) * (size_t)nh);
        if (ablated) {
            memcpy(ablated, stats + 3 * nh, sizeof(float) * (size_t)nh);
            pr.ablated_acc = ablated;
        }
        *keep = (train_outcome){l, curve, rows + 1, (float)rate, ablated, pr};
        free(stats);
        return 0;
    }
    learn_destroy(l);
    free(curve), free(stats);
    return rc;
}
