/* lesson_mode.c: a lesson without a window: the file checked first (main.c),
 * one step's tensors (--step K --dump), and the deck: every step shown as the
 * window shows it in presentation mode, with its caption and no UI hints, one
 * page each through the deck writer. Timed actions run to their end first, so a
 * deck is the same every time it is made. */
#define _POSIX_C_SOURCE 200809L
#include "lesson_mode.h"

#include <SDL.h>
#include <SDL_ttf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "async.h"
#include "budget.h"
#include "deck.h"
#include "dump.h"
#include "export.h"
#include "font.h"
#include "lesson_file.h"
#include "state.h"
#include "state_internal.h"
#include "teach.h"

#define DECK_W 1920 /* a deck's page without --size: 16:9 */
#define DECK_H 1080

static int check_training_time(const lesson *L, const char *path, char *err, size_t errlen);

int app_lesson_check(const cli_options *o, char *err, size_t errlen) {
    lesson L;
    int rc = lesson_read(o->lesson_path, &L, err, errlen);
    if (rc != 0) return rc;
    if (o->lesson_step > L.count) {
        snprintf(err, errlen, "--step %d: %s has %d step%s", o->lesson_step, o->lesson_path,
                 L.count, L.count == 1 ? "" : "s");
        rc = 2;
    } else if (o->export_path && !o->lesson_step && L.count > DECK_MAX_PAGES) {
        snprintf(err, errlen, "%s: %d steps; a deck holds at most %d pages", o->lesson_path,
                 L.count, DECK_MAX_PAGES);
        rc = 2;
    } else if (o->export_path) { /* a deck, or one step: the training it runs is bounded */
        rc = check_training_time(&L, o->lesson_path, err, errlen);
    }
    if (rc == 0 && o->export_path && !o->lesson_step) /* a deck needs every step's model */
        rc = app_teach_models_check(&L, 1, L.count, o->lesson_path, err, errlen);
    lesson_free(&L);
    return rc;
}

/* A state with fonts at the options' size, the lesson opened at its step. */
static app_state *open_state(const cli_options *o, tok_list *toks, const mha_config *cfg,
                             font_set **fonts, int w, int h, char *err, size_t errlen, int *rc) {
    *rc = 1;
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        return NULL;
    }
    *fonts = font_set_open(o->font, err, errlen);
    if (!*fonts) return NULL;
    app_state *s = app_state_create(font_measure, *fonts);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cli_options so = *o;
    so.size_w = w;
    so.size_h = h;
    int init = app_state_init(s, &so, toks, cfg, err, errlen);
    if (init != 0) {
        *rc = init;
        app_state_destroy(s);
        return NULL;
    }
    *rc = 0;
    return s;
}

/* 1 if a step of the lesson trains (`do = train N`). */
static int lesson_trains(const app_state *s) {
    const lesson *L = app_teach_lesson(s, NULL, NULL);
    for (int k = 0; L && k < L->count; k++)
        for (int i = 0; i < L->steps[k].nacts; i++)
            if (L->steps[k].acts[i].kind == LESSON_DO_TRAIN) return 1;
    return 0;
}

/* Lets a step's training run to its N steps on the trainer (recomputes stay on
   this thread) and its pruning bars come: the page then shows that run. The
   estimate kept it under LESSON_DECK_TRAIN_S; a run that takes three times
   that in wall time is given up: -1. */
static int settle_training(app_state *s) {
    const struct timespec nap = {0, 5 * 1000 * 1000};
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (app_training_running(s)) {
        app_async_poll(s);
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 3 * LESSON_DECK_TRAIN_S) return -1;
    }
    app_async_poll(s);
    return 0;
}

static void close_state(app_state *s, font_set *fonts) {
    if (s) app_async_disable(s);
    app_state_destroy(s);
    if (fonts) font_set_close(fonts);
    TTF_Quit();
}

int app_lesson_dump(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                    size_t errlen) {
    font_set *fonts = NULL;
    int rc;
    app_state *s = open_state(o, toks, cfg, &fonts, o->size_w, o->size_h, err, errlen, &rc);
    if (s && s->train_mode) { /* the step shows a training run, which this dump is not */
        snprintf(err, errlen,
                 "--step %d shows training mode: --dump writes an attention view; --train with "
                 "the step's task, -H, -d, -s and --steps dumps its run",
                 o->lesson_step);
        rc = 2;
    } else if (s && (s->gpt || s->gpt_wanted || s->gpt_loading)) { /* the step's model */
        const gpt2_model *m = NULL;
        gpt2_run *run = NULL;
        int h = 0;
        if (app_gpt_shown_run(s, &m, &run, &h) != 0) {
            snprintf(err, errlen, "--step %d: its model is not computed", o->lesson_step);
            rc = 1;
        } else {
            rc = app_model_dump_run(o->dump_dir, m, run, h, err, errlen);
        }
    } else if (s) {
        attn_layer layer;
        mha_layer_text text;
        mha_layer_fill(&layer, &text, s->m, &s->toks);
        rc = dump_write_layer(o->dump_dir, &layer, err, errlen) != 0 ? 1 : 0;
    }
    close_state(s, fonts);
    return rc;
}

int app_lesson_deck(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                    size_t errlen) {
    const int w = o->size_w ? o->size_w : DECK_W, h = o->size_h ? o->size_h : DECK_H;
    font_set *fonts = NULL;
    int rc;
    app_state *s = open_state(o, toks, cfg, &fonts, w, h, err, errlen, &rc);
    if (!s) {
        close_state(s, fonts);
        return rc;
    }
    int n = 0;
    app_teach_lesson(s, NULL, &n);
    const int trains = lesson_trains(s);
    if (trains && app_async_enable(s, NULL, NULL, 1e12) != 0) { /* the trainer only */
        snprintf(err, errlen, "cannot train the lesson's steps: out of resources");
        close_state(s, fonts);
        return 1;
    }
    const char *dot = strrchr(o->export_path, '.');
    const int scale = dot && strcmp(dot, ".png") == 0 && o->scale ? o->scale : 1;
    deck *d = deck_open(o->export_path, w, h, scale, fonts, err, errlen);
    rc = d ? 0 : 1;
    for (int k = 1; d && k <= n && rc == 0; k++) {
        if (app_teach_goto(s, k) != 0) {
            snprintf(err, errlen, "%s", app_teach_why(s));
            rc = 2;
            break;
        }
        app_teach_finish(s); /* stages and sweeps where they end */
        if (trains && settle_training(s) != 0) {
            snprintf(err, errlen, "%s: step %d: its training ran more than %d min; given up",
                     o->lesson_path, k, 3 * LESSON_DECK_TRAIN_S / 60);
            rc = 1;
            break;
        }
        s->status[0] = '\0';
        view_state vs;
        app_figure_view(s, APP_SAVE_VIEW, &vs);
        vs.look.present = 1;
        if (deck_page(d, &vs, err, errlen) != 0) {
            rc = 1;
            break;
        }
        char page[4200];
        deck_page_path(d, k, page, sizeof page);
        fprintf(stderr, "deck: page %d of %d: %s\n", k, n, page);
    }
    char why[600]; /* after a failure err keeps the first reason */
    if (d && deck_close(d, rc == 0, why, sizeof why) != 0 && rc == 0) {
        snprintf(err, errlen, "%s", why);
        rc = 1;
    }
    close_state(s, fonts);
    return rc;
}

int app_lesson_step_export(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                           size_t errlen) {
    font_set *fonts = NULL;
    int rc;
    app_state *s = open_state(o, toks, cfg, &fonts, o->size_w, o->size_h, err, errlen, &rc);
    /* a training step: its run trained to its N steps first, as the deck's page shows it */
    if (s && s->train_mode && app_async_enable(s, NULL, NULL, 1e12) != 0) {
        snprintf(err, errlen, "cannot train the lesson's steps: out of resources");
        rc = 1;
    } else if (s && s->train_mode && app_teach_goto(s, o->lesson_step) != 0) {
        snprintf(err, errlen, "%s", app_teach_why(s));
        rc = 2;
    } else if (s && s->train_mode && (app_teach_finish(s), settle_training(s) != 0)) {
        snprintf(err, errlen, "%s: step %d: its training ran more than %d min; given up",
                 o->lesson_path, o->lesson_step, 3 * LESSON_DECK_TRAIN_S / 60);
        rc = 1;
    } else if (s) {
        s->status[0] = '\0';
        view_state vs;
        app_figure_view(s, APP_SAVE_EXPORT, &vs);
        const char *dot = strrchr(o->export_path, '.');
        rc = dot && strcmp(dot, ".png") == 0
                 ? export_png(o->export_path, &vs, o->scale ? o->scale : 1, fonts, err, errlen)
                 : export_vector(o->export_path, &vs, fonts, err, errlen);
        rc = rc != 0;
    }
    close_state(s, fonts);
    return rc;
}

/* The training configuration a lesson step's view names (the settings train,
   train-h, train-d_model, train-layers, train-mlp), resolved; *task is the
   task the steps so far last named (a view with train = off keeps it). */
static learn_config step_training(const app_settings *view, learn_task_id *task) {
    char v[64];
    const int t = learn_task_find(app_settings_get(view, "train", v, sizeof v));
    if (t >= 0) *task = (learn_task_id)t;
    learn_config lc = {.task = *task};
    lc.h = atoi(app_settings_get(view, "train-h", v, sizeof v));
    lc.d_model = atoi(app_settings_get(view, "train-d_model", v, sizeof v));
    lc.layers = atoi(app_settings_get(view, "train-layers", v, sizeof v));
    lc.mlp = strcmp(app_settings_get(view, "train-mlp", v, sizeof v), "on") == 0;
    learn_config_resolve(&lc);
    return lc;
}

/* A deck runs every `do = train N` to its end before drawing the page, so its
   training must end in reasonable time: the steps' estimated seconds
   (budget.h) in all at most LESSON_DECK_TRAIN_S. 0, or 2 with the estimate and
   the step that trains the longest. */
static int check_training_time(const lesson *L, const char *path, char *err, size_t errlen) {
    learn_task_id task = LEARN_PAIR; /* training.c's first run */
    double total = 0.0, worst = 0.0;
    int worst_k = -1;
    long worst_n = 0;
    learn_config worst_cfg = {0};
    for (int k = 0; k < L->count; k++) {
        const learn_config lc = step_training(L->steps[k].view, &task);
        for (int i = 0; i < L->steps[k].nacts; i++) {
            const lesson_do *a = &L->steps[k].acts[i];
            if (a->kind != LESSON_DO_TRAIN) continue;
            const double sec = (double)a->n * learn_config_step_seconds(&lc);
            total += sec;
            if (sec > worst) worst = sec, worst_k = k, worst_n = a->n, worst_cfg = lc;
        }
    }
    if (total <= LESSON_DECK_TRAIN_S) return 0;
    const learn_config *c = &worst_cfg;
    snprintf(err, errlen,
             "%s:%d: do = train %ld: a deck's training would take about %.0f min (%s, h %d, "
             "d_model %d, %d layer%s%s: about %.1f ms a step, %.2g GFLOP at an estimated %.0f "
             "GFLOP/s), more than the %d min a deck may train; use fewer steps, or present it "
             "in the window",
             path, L->steps[worst_k].line, worst_n, total / 60.0, learn_task(c->task)->name, c->h,
             c->d_model, c->layers, c->layers > 1 ? "s" : "", c->mlp ? ", MLP" : "",
             1e3 * learn_config_step_seconds(c), learn_config_step_flops(c) / 1e9,
             LEARN_STEP_FLOPS_PER_S / 1e9, LESSON_DECK_TRAIN_S / 60);
    return 2;
}
