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
#include <time.h>
#include <unistd.h>

#include "blas.h"
#include "budget.h"
#include "diverge.h"
#include "dump.h"
#include "learn.h"
#include "replay.h"
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

/* What the dump's files come from, and what the run makes besides (the figure):
   it is made last, inside the dump, so a failure there leaves no new dump. */
typedef struct {
    learn_model *l;
    const train_result *r;
    train_finish_fn finish;
    void *ud;
    train_outcome *run;
    int finish_rc; /* finish's status when it failed (1 or 2) */
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    const float *logits;
    float *heads; /* (h, T, d_k) the layer last asked for, as bands of its Concat */
    char *text;   /* the text file last asked for */
    size_t len;
} train_dump;

/* Text printed into memory (open_memstream): td->text, td->len once closed. */
static FILE *text_open(train_dump *td, const char *what, char *err, size_t errlen) {
    free(td->text);
    td->text = NULL;
    td->len = 0;
    FILE *f = open_memstream(&td->text, &td->len);
    if (!f) snprintf(err, errlen, "cannot write %s: out of memory", what);
    return f;
}

/* Closes f and makes its text file rel. 1, or -1 on out of memory. */
static int text_file(train_dump *td, FILE *f, const char *rel, dump_file *out, char *err,
                     size_t errlen) {
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: out of memory", rel);
        return -1;
    }
    out->kind = DUMP_TEXT;
    snprintf(out->rel, sizeof out->rel, "%s", rel);
    out->text = td->text;
    out->len = td->len;
    return 1;
}

static int json_file(train_dump *td, dump_file *out, char *err, size_t errlen) {
    FILE *f = text_open(td, "train.json", err, errlen);
    if (!f) return -1;
    const train_result *r = td->r;
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
    return text_file(td, f, "train.json", out, err, errlen);
}

/* one string a line: the example's tokens, or its targets ("-" where none) */
static int lines_file(train_dump *td, const char *rel, const int *ids, int n,
                      const char *const *strings, dump_file *out, char *err, size_t errlen) {
    FILE *f = text_open(td, rel, err, errlen);
    if (!f) return -1;
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", ids[i] >= 0 ? strings[ids[i]] : "-");
    return text_file(td, f, rel, out, err, errlen);
}

/* data as folder/name.npy (folder NULL: the top), of shape (a[, b[, c]]). 1. */
static int npy_file(dump_file *out, const char *folder, const char *name, const float *data, int a,
                    int b, int c) {
    out->kind = DUMP_NPY;
    snprintf(out->rel, sizeof out->rel, "%s%s%s.npy", folder ? folder : "", folder ? "/" : "",
             name);
    out->data = data;
    out->shape[0] = a, out->shape[1] = b, out->shape[2] = c;
    out->ndim = c > 0 ? 3 : b > 0 ? 2 : 1;
    return 1;
}

#define LAYER_FILES 12 /* layerN/ and its 11 tensors */

/* File k of layer i's: its folder, then resid_in, X, Q, K, V, scores, attn, heads,
   concat, out, resid_out. */
static int layer_file(train_dump *td, int i, int k, dump_file *out) {
    const learn_config *c = learn_get_config(td->l);
    const int T = learn_task(c->task)->seq_len, dm = c->d_model, h = c->h, dk = dm / h;
    const learn_layer_tensors *t = &td->lt[i];
    char layer[16];
    snprintf(layer, sizeof layer, "layer%d", i + 1);
    switch (k) {
    case 0:
        out->kind = DUMP_FOLDER;
        snprintf(out->rel, sizeof out->rel, "%s", layer);
        return 1;
    case 1: return npy_file(out, layer, "resid_in", t->x, T, dm, 0);
    case 2: return npy_file(out, layer, "X", t->ln1, T, dm, 0);
    case 3: return npy_file(out, layer, "Q", t->q, T, dm, 0);
    case 4: return npy_file(out, layer, "K", t->k, T, dm, 0);
    case 5: return npy_file(out, layer, "V", t->v, T, dm, 0);
    case 6: return npy_file(out, layer, "scores", t->scores, h, T, T);
    case 7: return npy_file(out, layer, "attn", t->attn, h, T, T);
    case 8:
        for (int hd = 0; hd < h; hd++) /* head_i: its band of Concat, (T, d_k) */
            for (int p = 0; p < T; p++)
                memcpy(td->heads + ((size_t)hd * T + p) * dk, t->concat + (size_t)p * dm + hd * dk,
                       sizeof(float) * (size_t)dk);
        return npy_file(out, layer, "heads", td->heads, h, T, dk);
    case 9: return npy_file(out, layer, "concat", t->concat, T, dm, 0);
    case 10: return npy_file(out, layer, "out", t->out, T, dm, 0);
    default: return npy_file(out, layer, "resid_out", t->resid, T, dm, 0);
    }
}

/* The files in order: weights/<name>.npy for every parameter ("layer1.W_Q" becomes
 * layer1_W_Q.npy); layerN/ the held-out example's tensors with the names of the
 * app's --dump; logits.npy, tokens.txt, targets.txt; train.json. After the last,
 * the finish. */
static int train_file(void *ud, int i, dump_file *out, char *err, size_t errlen) {
    train_dump *td = ud;
    learn_model *l = td->l;
    const learn_config *c = learn_get_config(l);
    const learn_task_info *ti = learn_task(c->task);
    const int T = ti->seq_len, P = learn_param_count(l);
    memset(out, 0, sizeof *out);
    if (i == 0) {
        out->kind = DUMP_FOLDER;
        snprintf(out->rel, sizeof out->rel, "weights");
        return 1;
    }
    if (i <= P) {
        learn_tensor t;
        learn_param(l, i - 1, &t);
        char name[64];
        snprintf(name, sizeof name, "%s", t.name);
        for (char *p = name; *p; p++)
            if (*p == '.') *p = '_';
        return npy_file(out, "weights", name, t.data, t.shape[0], t.ndim == 2 ? t.shape[1] : 0, 0);
    }
    i -= P + 1;
    if (i == 0) { /* the example's tensors, and room for one layer's heads */
        learn_example_tensors(l, td->lt, &td->logits);
        td->heads = malloc(sizeof(float) * (size_t)T * c->d_model);
        if (!td->heads) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (i < c->layers * LAYER_FILES) return layer_file(td, i / LAYER_FILES, i % LAYER_FILES, out);
    i -= c->layers * LAYER_FILES;
    const int *tok, *tgt;
    learn_example(l, &tok, &tgt);
    switch (i) {
    case 0: return npy_file(out, NULL, "logits", td->logits, T, ti->classes, 0);
    case 1: return lines_file(td, "tokens.txt", tok, T, ti->symbols, out, err, errlen);
    case 2: return lines_file(td, "targets.txt", tgt, T, ti->class_name, out, err, errlen);
    case 3: return json_file(td, out, err, errlen);
    default: break;
    }
    if (td->finish && (td->finish_rc = td->finish(td->run, td->ud, err, errlen)) != 0) return -1;
    return 0;
}

/* The loop of train_loop.h with progress on stderr: fills curve (room for
   steps / TRAIN_CURVE_EVERY + 1 points), *rows its points and *rate the steps a
   second; with replay, a moment at every step of its schedule (replay.h), step 0
   too. Returns 0, or 1 with the message when the run diverged (diverge.h) or
   there was no memory for a moment. */
static int train_steps(learn_model *l, long steps, const char *task, curve_row *curve, int *rows,
                       curve_row *dense, int *dense_rows, double *rate, train_replay *replay,
                       char *err, size_t errlen) {
    const int tty = isatty(STDERR_FILENO);
    int n = 0, drawn = 0;
    double t0 = now_s(), t_draw = 0.0;
    curve_row last = {0, NAN, 0.0f};
    train_loop tl;
    train_loop_begin(&tl, l, steps, NULL);
    learn_diverge dv;
    learn_diverge_begin(&dv, 0.0f); /* from the first step's loss */
    long next_moment = 0;
    double dense_sum = 0.0; /* the figure's curve, on the window's dense schedule */
    int dense_since = 0, dn = 0;
    for (long s = 0; s <= steps; s++) {
        const int point = s > 0 && train_loop_step(&tl, &last);
        if (point) curve[n++] = last;
        float acc_here = point ? last.acc : NAN; /* the held-out accuracy at s, when measured */
        if (s > 0) {
            dense_sum += tl.last_loss, dense_since++;
            if (train_loop_dense_point(s) || s == steps) {
                curve_row d = {s, (float)(dense_sum / dense_since), last.acc};
                if (!point) learn_eval(l, NULL, &d.acc, NULL);
                acc_here = d.acc;
                dense[dn++] = d;
                dense_sum = 0.0, dense_since = 0;
            }
        }
        *dense_rows = dn;
        if (replay && s == next_moment) { /* its bars later, for the pages shown (lazy) */
            next_moment = replay_next_step(s);
            if (replay_take(replay, l, last.loss, acc_here, NULL, NULL) < 0) {
                snprintf(err, errlen, "out of memory for the run's moments");
                *rows = n;
                return 1;
            }
        }
        if (s == 0) continue;
        float why = 0.0f;
        if (learn_diverge_feed(&dv, tl.last_loss, &why)) {
            if (tty && drawn) fputc('\n', stderr); /* the message on a line of its own */
            snprintf(err, errlen, "training diverged at step %ld (loss %.4g); try a smaller --lr",
                     s, (double)why);
            *rows = n;
            return 1;
        }
        double t = now_s(); /* a bar redrawn 10 times a second, or a line per LOG_EVERY */
        int draw = s == steps || (tty ? t - t_draw > 0.1 && n > 0 : s % LOG_EVERY == 0);
        if (draw) {
            progress(tty, task, s, steps, &last, s / fmax(t - t0, 1e-9));
            t_draw = t;
            drawn = 1;
        }
    }
    *rate = steps / fmax(now_s() - t0, 1e-9);
    *rows = n;
    return 0;
}

/* The bars of the moments the flip-book's K pages show (replay_page_index), and
   only those: each an ablation pass over the moment's weights, on l (its own
   weights back after). 0, or -1 when out of memory. */
static int measure_pages(train_replay *replay, learn_model *l, int K) {
    long steps[TRAIN_REPLAY_MAX];
    int n = replay_steps(replay, steps, TRAIN_REPLAY_MAX);
    if (n > TRAIN_REPLAY_MAX) n = TRAIN_REPLAY_MAX;
    for (int j = 0; j < K && n > 0; j++)
        if (replay_measure(replay, steps[replay_page_index(j, n, K)], l, NULL, NULL) != 0)
            return -1;
    return 0;
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
}

int app_train(const train_options *o, int h, int d_model, uint64_t seed, const char *dump_dir,
              char *err, size_t errlen) {
    return app_train_run(o, h, d_model, seed, dump_dir, NULL, NULL, err, errlen);
}

/* The summary must have reached standard output before the dump takes its
   place: a full disk or a closed pipe there fails the run with nothing written. */
static int flush_stdout(char *err, size_t errlen) {
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    snprintf(err, errlen, "cannot write standard output: %s", strerror(errno ? errno : EIO));
    return 1;
}

static int train_config(learn_config *cfg, const train_options *o, int h, int d_model,
                        uint64_t seed, char *err, size_t errlen);
static void pick_threads(const learn_config *cfg, const learn_task_info *ti);
static int take_moments(train_replay *replay, learn_model *l, float last_loss,
                        const train_result *r, const train_pruning *pr, const float *ablated,
                        int moments, char *err, size_t errlen);

int app_train_run(const train_options *o, int h, int d_model, uint64_t seed, const char *dump_dir,
                  train_finish_fn finish, void *ud, char *err, size_t errlen) {
    learn_config cfg = {0};
    if (train_config(&cfg, o, h, d_model, seed, err, errlen) != 0) return 2;
    const learn_task_info *ti = learn_task(cfg.task);
    const int steps = o->steps ? o->steps : ti->default_steps;
    /* the dump's folder is checked before training too (the caller checked the figure's) */
    if (dump_dir && dump_check(dump_dir, err, errlen) != 0) return 1;
    pick_threads(&cfg, ti);

    learn_model *l = learn_create(&cfg, err, errlen);
    /* curve: every TRAIN_CURVE_EVERY steps, train.json's; dense: the figure's, on the
       window's schedule (every step up to 50 ...), dense[0] the point before training */
    curve_row *curve = malloc(sizeof(curve_row) * (size_t)(steps / TRAIN_CURVE_EVERY + 3));
    long dense_max = 2;
    for (long s = 1; s <= steps; s++) dense_max += train_loop_dense_point(s) || s == steps;
    curve_row *dense = malloc(sizeof(curve_row) * (size_t)dense_max);
    const int nh = cfg.layers * cfg.h;
    float *stats = malloc(sizeof(float) * 4 * (size_t)nh);
    float *ablated = malloc(sizeof(float) * (size_t)nh); /* the figure's copy */
    if (!l || !curve || !dense || !stats || !ablated) {
        if (l) snprintf(err, errlen, "out of memory");
        learn_destroy(l);
        free(curve), free(dense), free(stats), free(ablated);
        return 1;
    }
    if (finish) learn_eval(l, NULL, &dense[0].acc, &dense[0].loss), dense[0].step = 0;
    double rate = 0.0;
    int rows = 0;
    train_replay *replay = o->moments > 0 ? replay_create() : NULL;
    if (o->moments > 0 && !replay) {
        snprintf(err, errlen, "out of memory");
        learn_destroy(l);
        free(curve), free(dense), free(stats), free(ablated);
        return 1;
    }
    if (replay) replay_plan(replay, l, steps); /* lazy bars when the copies fit */
    int dense_rows = 0;
    int rc = train_steps(l, steps, ti->name, curve + 1, &rows, dense + 1, &dense_rows, &rate,
                         replay, err, errlen);

    train_result r = {learn_get_config(l), steps,          curve + 1,     rows, 0.0f, stats,
                      stats + nh,          stats + 2 * nh, stats + 3 * nh};
    train_pruning pr = {0}; /* the figure's bars use this very pass */
    if (!rc && train_ablate(l, &r.acc, stats + 3 * nh, &pr.pruned, &pr.pruned_acc, NULL, NULL)) {
        snprintf(err, errlen, "out of memory");
        rc = 1;
    }
    if (!rc) {
        learn_head_masses(l, stats, stats + nh, stats + 2 * nh);
        print_summary(&cfg, &r);
        rc = flush_stdout(err, errlen);
    }
    if (!rc) {
        pr.full = r.acc;
        memcpy(ablated, stats + 3 * nh, sizeof(float) * (size_t)nh);
    }
    if (!rc && replay)
        rc = take_moments(replay, l, rows ? curve[rows].loss : NAN, &r, &pr, ablated, o->moments,
                          err, errlen);
    pr.ablated_acc = ablated;
    train_outcome run = {l, dense, dense_rows + 1, (float)rate, ablated, pr, replay};
    if (!rc && dump_dir) { /* the figure is written inside the dump, before its rename */
        train_dump td = {.l = l, .r = &r, .finish = finish, .ud = ud, .run = &run};
        if (dump_write(dump_dir, train_file, &td, err, errlen) != 0)
            rc = td.finish_rc ? td.finish_rc : 1;
        free(td.heads);
        free(td.text);
    } else if (!rc && finish) {
        rc = finish(&run, ud, err, errlen);
    }
    learn_destroy(run.l); /* what finish did not take */
    replay_destroy(run.replay);
    free(run.curve);
    free(curve);
    free(run.ablated);
    free(stats);
    return rc;
}

/* The learner's configuration from the options, resolved and checked, with
 * everything that can be known before training: the memory the learner takes.
 * Returns 0, or 2 (a usage error) with a message. */
static int train_config(learn_config *cfg, const train_options *o, int h, int d_model,
                        uint64_t seed, char *err, size_t errlen) {
    cfg->task = (learn_task_id)(o->task - 1);
    cfg->layers = o->layers;
    cfg->h = h;
    cfg->d_model = d_model;
    cfg->mlp = o->mlp;
    cfg->batch = o->batch;
    cfg->lr = o->lr;
    cfg->seed = seed;
    learn_config_resolve(cfg);
    if (learn_config_check(cfg, err, errlen) != 0) return 2;
    return learn_config_check_memory(cfg, err, errlen) != 0 ? 2 : 0;
}

/* The products of a task at its README size are small: one thread is faster
 * than two there (0.40 against 0.54 ms a step at d_model 32) and makes a run the
 * same on every machine. A step of LEARN_SHARD_MIN_FLOPS or more runs its
 * batch's two halves on both cores (learn.h: the halves are the same on any
 * number of cores; only a held-out product of 5e8 FLOPs or more, from d_model
 * about 300 with the MLP, is split in bands that may round its last bit
 * differently). OPENBLAS_NUM_THREADS, when set, still decides. */
static void pick_threads(const learn_config *cfg, const learn_task_info *ti) {
    if (!getenv("OPENBLAS_NUM_THREADS"))
        mm_set_threads(learn_config_shards(cfg, ti->vocab, ti->classes, ti->seq_len) > 1 ? 0 : 1);
}

/* The run's moments for --moments: the last step's, with the summary's bars
 * (ablated, pr), then the bars of every page's moment. Returns 0, or 1 with a message. */
static int take_moments(train_replay *replay, learn_model *l, float last_loss,
                        const train_result *r, const train_pruning *pr, const float *ablated,
                        int moments, char *err, size_t errlen) {
    const int taken =
        replay_take_measured(replay, l, last_loss, r->acc, ablated, pr->pruned, pr->pruned_acc);
    if (taken < 0) {
        snprintf(err, errlen, "out of memory for the run's moments");
        return 1;
    }
    if (measure_pages(replay, l, moments) != 0) {
        snprintf(err, errlen, "out of memory for the bars of the run's moments");
        return 1;
    }
    return 0;
}
