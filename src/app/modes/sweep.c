/* sweep.c: --train TASK --sweep h [--seeds K]. Trains one run per divisor h of
 * d_model and seed (-s, -s + 1, ...), every run the same as `--train TASK -H h -s
 * seed` alone (the same learner, steps and held-out set: the final accuracy is the
 * same number), the runs side by side on mhaviz's workers (mm_parallel, one
 * OpenBLAS thread each). Prints a table of the final held-out accuracy against h;
 * with --dump DIR writes sweep.json through the all-or-nothing dump (dump.c); with
 * --export FILE draws the plot: the mean and range over the seeds at each h, d_k
 * under it. Every output target is checked before the first step. */
#define _POSIX_C_SOURCE 200809L
#include "sweep.h"

#include <SDL_ttf.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blas.h"
#include "draw.h"
#include "dump.h"
#include "export.h"
#include "font.h"
#include "learn.h"
#include "view.h"

#define SWEEP_MAX_H 16 /* divisors of a d_model up to 512: at most 10 */

typedef struct {
    int h, seed_index;
    float acc, loss;
    int failed;
} sweep_run;

typedef struct {
    learn_config base; /* resolved but for h and seed */
    long steps;
    uint64_t seed0;
    sweep_run *runs;
    int count;
    _Atomic int done;
    pthread_mutex_t print; /* progress lines whole */
    char err[160];         /* the first failure */
} sweep_job;

/* one run: the learner of --train, stepped as train_loop does, evaluated at the end */
static void run_task(void *ctx, int task) {
    sweep_job *j = ctx;
    /* the largest h first: its runs are the slowest (h = 16 at d_model 16 takes 7 times
       h = 1's time, the heads' many small products), so the workers end together */
    sweep_run *r = &j->runs[j->count - 1 - task];
    learn_config c = j->base;
    c.h = r->h;
    c.seed = j->seed0 + (uint64_t)r->seed_index;
    char err[160] = "";
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) {
        r->failed = 1;
        pthread_mutex_lock(&j->print);
        if (!j->err[0]) snprintf(j->err, sizeof j->err, "%s", err);
        pthread_mutex_unlock(&j->print);
        return;
    }
    for (long s = 0; s < j->steps; s++) learn_step(l);
    learn_eval(l, NULL, &r->acc, &r->loss);
    learn_destroy(l);
    const int n = atomic_fetch_add(&j->done, 1) + 1;
    pthread_mutex_lock(&j->print);
    fprintf(stderr, "%s: sweep %d/%d  h=%d seed %llu  held-out %.1f%%\n", learn_task(c.task)->name,
            n, j->count, c.h, (unsigned long long)c.seed, 100.0 * r->acc);
    fflush(stderr);
    pthread_mutex_unlock(&j->print);
}

/* ---- summaries per h ------------------------------------------------------------ */

typedef struct {
    int h, dk;
    float mean, lo, hi;
} sweep_point;

static int summarise(const sweep_job *j, int nh, int seeds, sweep_point *pt) {
    for (int a = 0; a < nh; a++) {
        const sweep_run *r = &j->runs[a * seeds];
        double sum = 0.0;
        float lo = r[0].acc, hi = r[0].acc;
        for (int s = 0; s < seeds; s++) {
            sum += r[s].acc;
            lo = fminf(lo, r[s].acc);
            hi = fmaxf(hi, r[s].acc);
        }
        pt[a] = (sweep_point){r[0].h, j->base.d_model / r[0].h, (float)(sum / seeds), lo, hi};
    }
    return nh;
}

static void print_table(const sweep_job *j, int nh, int seeds, const sweep_point *pt) {
    const learn_config *c = &j->base;
    printf("%s: held-out accuracy after %ld steps against h (d_model=%d, %d layer%s%s, "
           "seed%s %llu",
           learn_task(c->task)->name, j->steps, c->d_model, c->layers, c->layers > 1 ? "s" : "",
           c->mlp ? ", MLP" : "", seeds > 1 ? "s" : "", (unsigned long long)j->seed0);
    if (seeds > 1) printf("-%llu", (unsigned long long)(j->seed0 + (uint64_t)seeds - 1));
    printf(")\n   h  d_k");
    const int cols = seeds <= 8; /* a column per seed while they fit a line */
    int width[8];                /* each seed's column as wide as its name, at least "100.0%" */
    for (int s = 0; cols && s < seeds; s++) {
        char name[32];
        width[s] =
            snprintf(name, sizeof name, "seed %llu", (unsigned long long)(j->seed0 + (uint64_t)s));
        printf("  %6s", name);
    }
    printf("    mean         range\n");
    for (int a = 0; a < nh; a++) {
        printf("%4d %4d", pt[a].h, pt[a].dk);
        for (int s = 0; cols && s < seeds; s++)
            printf("  %*.1f%%", (width[s] > 6 ? width[s] : 6) - 1,
                   100.0 * j->runs[a * seeds + s].acc);
        printf("  %6.1f%%  %5.1f-%5.1f%%\n", 100.0 * pt[a].mean, 100.0 * pt[a].lo,
               100.0 * pt[a].hi);
    }
    fflush(stdout);
}

/* ---- sweep.json ------------------------------------------------------------------ */

/* a JSON number as train.json writes it (%.6g, 1 as 1.0), null when not finite */
static void json_num(FILE *f, double v) {
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    fprintf(f, "%s%s", buf, strpbrk(buf, ".eEn") ? "" : ".0");
}

typedef struct {
    char *text;
    size_t len;
} json_text;

/* The dump's one file, sweep.json. */
static int json_file(void *ud, int i, dump_file *f, char *err, size_t errlen) {
    (void)err, (void)errlen;
    const json_text *t = ud;
    if (i > 0) return 0;
    memset(f, 0, sizeof *f);
    f->kind = DUMP_TEXT;
    snprintf(f->rel, sizeof f->rel, "sweep.json");
    f->text = t->text;
    f->len = t->len;
    return 1;
}

static int write_json(const char *dir, const sweep_job *j, int nh, int seeds, char *err,
                      size_t errlen) {
    json_text t = {NULL, 0};
    FILE *f = open_memstream(&t.text, &t.len);
    if (!f) {
        snprintf(err, errlen, "cannot write %s: out of memory", dir);
        return -1;
    }
    const learn_config *c = &j->base;
    fprintf(f, "{\n  \"task\": \"%s\",\n  \"d_model\": %d,\n  \"steps\": %ld,\n",
            learn_task(c->task)->name, c->d_model, j->steps);
    fprintf(f, "  \"layers\": %d,\n  \"mlp\": %s,\n  \"batch\": %d,\n  \"lr\": ", c->layers,
            c->mlp ? "true" : "false", c->batch);
    json_num(f, c->lr);
    fputs(",\n  \"runs\": [", f);
    for (int i = 0; i < nh * seeds; i++) {
        const sweep_run *r = &j->runs[i];
        fprintf(f, "%s\n    {\"h\": %d, \"d_k\": %d, \"seed\": %llu, \"acc\": ", i ? "," : "", r->h,
                c->d_model / r->h, (unsigned long long)(j->seed0 + (uint64_t)r->seed_index));
        json_num(f, r->acc);
        fputs(", \"loss\": ", f);
        json_num(f, r->loss);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(t.text);
        snprintf(err, errlen, "cannot write %s: out of memory", dir);
        return -1;
    }
    int rc = dump_write(dir, json_file, &t, err, errlen);
    free(t.text);
    return rc;
}

/* ---- the plot -------------------------------------------------------------------- */

typedef struct {
    draw_list *dl;
    font_set *fonts;
    int sc; /* pixels per layout pixel (--scale) */
} pen;

static int text_w(const pen *p, const char *s, int size, int bold) {
    int w = 0, h = 0;
    font_measure(p->fonts, s, size * p->sc, bold, &w, &h);
    return w;
}

/* text centred on x (layout pixels), top at y */
static void text_c(const pen *p, int x, int y, const char *s, int size, rgba c, int bold) {
    draw_text(p->dl, x * p->sc - text_w(p, s, size, bold) / 2, y * p->sc, s, size * p->sc, c, bold,
              0);
}

static void text_at(const pen *p, int x, int y, const char *s, int size, rgba c, int bold) {
    draw_text(p->dl, x * p->sc, y * p->sc, s, size * p->sc, c, bold, 0);
}

/* a slanted line is drawn 1 pixel wide by the PNG backend: its thickness is made of
   copies a pixel apart, one above the other */
static void line(const pen *p, int x0, int y0, int x1, int y1, rgba c, int thick) {
    const int t = thick * p->sc;
    if (x0 == x1 || y0 == y1) {
        draw_line(p->dl, x0 * p->sc, y0 * p->sc, x1 * p->sc, y1 * p->sc, c, t);
        return;
    }
    for (int k = 0; k < t; k++)
        draw_line(p->dl, x0 * p->sc, y0 * p->sc + k - t / 2, x1 * p->sc, y1 * p->sc + k - t / 2, c,
                  1);
}

static void box(const pen *p, int cx, int cy, int half, rgba c, int fill) {
    view_rect r = {(cx - half) * p->sc, (cy - half) * p->sc, 2 * half * p->sc, 2 * half * p->sc};
    if (fill)
        draw_fill(p->dl, r, c);
    else
        draw_frame(p->dl, r, c, p->sc);
}

/* Held-out accuracy (0-100 %) up, h along (the divisors evenly spaced, as on a log
   scale for powers of two), d_k under each h; per h a bar over the seeds' range, a
   hollow square per seed, the mean filled and labelled, the means joined. */
static void draw_plot(draw_list *dl, font_set *fonts, const cli_options *o, const sweep_job *j,
                      int nh, int seeds, const sweep_point *pt) {
    const int sc = o->scale > 0 ? o->scale : 1;
    const int W = o->size_w ? o->size_w : 1200, H = o->size_h ? o->size_h : 720;
    const int theme = o->theme > 0 ? 1 : 0;
    const view_theme th = view_theme_get(theme);
    rgba bg = th.bg;
    if (o->transparent) bg.a = 0;
    draw_list_clear(dl, W * sc, H * sc, bg);
    const pen p = {dl, fonts, sc};
    const rgba acc = view_head_color(0, theme), seed_c = view_head_color(1, theme);
    const learn_config *c = &j->base;
    const learn_task_info *ti = learn_task(c->task);
    char buf[256];

    snprintf(buf, sizeof buf, "%s: held-out accuracy after %ld step%s, by the number of heads h",
             ti->name, j->steps, j->steps == 1 ? "" : "s");
    text_at(&p, 40, 18, buf, 24, th.text, 1);
    snprintf(buf, sizeof buf,
             "d_model %d, %d layer%s%s; %d seed%s from %llu: bar the range, filled square the "
             "mean, hollow squares the seeds",
             c->d_model, c->layers, c->layers > 1 ? "s" : "", c->mlp ? ", MLP" : ", attention only",
             seeds, seeds > 1 ? "s" : "", (unsigned long long)j->seed0);
    text_at(&p, 40, 54, buf, 16, th.muted, 0);

    const int left = 110, right = W - 50, top = 100, bottom = H - 120;
    const int pw = right - left, ph = bottom - top;
#define Y_OF(a) (bottom - (int)lroundf((a) * (float)ph))
    for (int g = 0; g <= 4; g++) { /* grid every 25 % */
        const int y = bottom - ph * g / 4;
        line(&p, left, y, right, y, th.grid, 1);
        snprintf(buf, sizeof buf, "%d%%", 25 * g);
        draw_text(dl, (left - 12) * sc - text_w(&p, buf, 16, 0), (y - 10) * sc, buf, 16 * sc,
                  th.muted, 0, 0);
    }
    const float chance = 1.0f / (float)ti->classes; /* a guess among the classes */
    for (int x = left; x < right; x += 16)
        line(&p, x, Y_OF(chance), x + 8, Y_OF(chance), th.muted, 1);
    snprintf(buf, sizeof buf, "chance (1 in %d)", ti->classes);
    text_at(&p, left + 8, Y_OF(chance) - 20, buf, 14, th.muted, 0);
    line(&p, left, top, left, bottom, th.text, 1);
    line(&p, left, bottom, right, bottom, th.text, 1);
    draw_text(dl, 30 * sc, (top + ph / 2 + text_w(&p, "held-out accuracy", 16, 0) / sc / 2) * sc,
              "held-out accuracy", 16 * sc, th.text, 0, 1);

    int px[SWEEP_MAX_H];
    for (int a = 0; a < nh; a++) px[a] = left + (int)((a + 0.5) * pw / nh);
    for (int a = 0; a + 1 < nh; a++) /* the means joined */
        line(&p, px[a], Y_OF(pt[a].mean), px[a + 1], Y_OF(pt[a + 1].mean), acc, 3);
    for (int a = 0; a < nh; a++) {
        const int x = px[a];
        line(&p, x, Y_OF(pt[a].lo), x, Y_OF(pt[a].hi), acc, 3);
        line(&p, x - 9, Y_OF(pt[a].lo), x + 9, Y_OF(pt[a].lo), acc, 2);
        line(&p, x - 9, Y_OF(pt[a].hi), x + 9, Y_OF(pt[a].hi), acc, 2);
        for (int s = 0; s < seeds; s++)
            box(&p, x + 16, Y_OF(j->runs[a * seeds + s].acc), 4, seed_c, 0);
        box(&p, x, Y_OF(pt[a].mean), 7, acc, 1);
        snprintf(buf, sizeof buf, "%.0f%%", 100.0 * pt[a].mean);
        const int ly = Y_OF(pt[a].hi) - 30 < top - 24 ? top - 24 : Y_OF(pt[a].hi) - 30;
        text_c(&p, x, ly, buf, 18, th.text, 1);
        line(&p, x, bottom, x, bottom + 6, th.text, 1);
        snprintf(buf, sizeof buf, "h = %d", pt[a].h);
        text_c(&p, x, bottom + 12, buf, 20, th.text, 1);
        snprintf(buf, sizeof buf, "d\xE2\x82\x96 = %d", pt[a].dk);
        text_c(&p, x, bottom + 40, buf, 17, th.muted, 0);
    }
    snprintf(buf, sizeof buf, "heads h, with the size of each head d\xE2\x82\x96 = %d / h under it",
             c->d_model);
    text_c(&p, left + pw / 2, bottom + 76, buf, 16, th.text, 0);
#undef Y_OF
}

/* ---- checks before training ------------------------------------------------------ */

/* The folder that would hold path (a file): it must exist and be writable. */
static int check_export_path(const char *path, char *err, size_t errlen) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path,
                 stat(dir, &st) != 0    ? strerror(errno)
                 : !S_ISDIR(st.st_mode) ? "its folder is not a folder"
                                        : strerror(errno));
        return -1;
    }
    return 0;
}

/* The dump folder or its deepest existing parent: a folder, writable (dump.c
   decides the rest when it writes, all or nothing). */
static int check_dump_path(const char *dir, char *err, size_t errlen) {
    char p[4200];
    snprintf(p, sizeof p, "%s", dir);
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
        while (slash && slash > p && slash[1] == '\0') { /* "a/b/" */
            *slash = '\0';
            slash = strrchr(p, '/');
        }
        if (!slash) {
            snprintf(p, sizeof p, ".");
            continue;
        }
        if (slash == p) {
            p[1] = '\0';
            continue;
        }
        *slash = '\0';
    }
}

/* ---- the sweep ------------------------------------------------------------------- */

int app_sweep(const cli_options *o, char *err, size_t errlen) {
    const train_options *t = &o->train;
    learn_config base = {0};
    base.task = (learn_task_id)(t->task - 1);
    base.layers = t->layers;
    base.h = 1;
    base.d_model = o->cfg.d_model;
    base.mlp = t->mlp;
    base.batch = t->batch;
    base.lr = t->lr;
    base.seed = o->cfg.seed;
    learn_config_resolve(&base);
    if (learn_config_check(&base, err, errlen) != 0) return 2;
    const learn_task_info *ti = learn_task(base.task);
    const int seeds = t->seeds ? t->seeds : SWEEP_DEFAULT_SEEDS;
    int hs[SWEEP_MAX_H], nh = 0;
    for (int h = 1; h <= base.d_model && nh < SWEEP_MAX_H; h++)
        if (base.d_model % h == 0) hs[nh++] = h;
    if (o->dump_dir && check_dump_path(o->dump_dir, err, errlen) != 0) return 1;
    if (o->export_path && check_export_path(o->export_path, err, errlen) != 0) return 1;
    font_set *fonts = NULL;
    if (o->export_path) { /* the fonts found before training, not after */
        if (TTF_Init() != 0) {
            snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
            return 1;
        }
        fonts = font_set_open(o->font, err, errlen);
        if (!fonts) {
            TTF_Quit();
            return 1;
        }
    }

    sweep_job j = {.base = base,
                   .steps = t->steps ? t->steps : ti->default_steps,
                   .seed0 = base.seed,
                   .count = nh * seeds};
    pthread_mutex_init(&j.print, NULL);
    j.runs = calloc((size_t)j.count, sizeof *j.runs);
    sweep_point *pt = calloc((size_t)nh, sizeof *pt);
    draw_list dl;
    draw_list_init(&dl);
    int rc = 1;
    if (!j.runs || !pt) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int a = 0; a < nh; a++)
        for (int s = 0; s < seeds; s++) j.runs[a * seeds + s] = (sweep_run){hs[a], s, 0, 0, 0};
    /* the runs side by side, each on one OpenBLAS thread (a run alone is fastest on
       one: see train_mode.c) */
    mm_parallel(j.count, mm_workers_max(), run_task, &j);
    for (int i = 0; i < j.count; i++)
        if (j.runs[i].failed) {
            snprintf(err, errlen, "%s", j.err[0] ? j.err : "out of memory");
            goto done;
        }
    summarise(&j, nh, seeds, pt);
    print_table(&j, nh, seeds, pt);
    if (fflush(stdout) != 0 || ferror(stdout)) { /* before any file is put in place */
        snprintf(err, errlen, "cannot write standard output: %s",
                 errno ? strerror(errno) : "write error");
        goto done;
    }
    if (o->dump_dir && write_json(o->dump_dir, &j, nh, seeds, err, errlen) != 0) goto done;
    if (o->export_path) {
        draw_plot(&dl, fonts, o, &j, nh, seeds, pt);
        if (export_draw_list(o->export_path, &dl, o->transparent, fonts, err, errlen) != 0)
            goto done;
    }
    rc = 0;
done:
    draw_list_free(&dl);
    free(pt);
    free(j.runs);
    pthread_mutex_destroy(&j.print);
    if (fonts) {
        font_set_close(fonts);
        TTF_Quit();
    }
    return rc;
}
