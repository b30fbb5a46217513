/* train_figure.c: --train TASK --export FILE: trains once, as --train does
 * (train_mode.c: its summary and --dump too), then shows that very model in the
 * window's training mode (training.c) and writes what that mode shows: the
 * trained heads of layer 1 (or --layer's), the accuracy and loss curves and the pruning bars,
 * as PNG, SVG or PDF (export.c). With --moments K, K of the run's moments
 * (replay.h) instead, one page each, all or nothing (deck.h): the pages of one
 * PDF (a flip-book), or PATH-01.png ... No display needed. The folder, the font,
 * the count of moments and the state are made ready before training, so none
 * fails after it. */
#include <SDL.h>
#include <SDL_ttf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "async.h"
#include "deck.h"
#include "export.h"
#include "font.h"
#include "learn.h"
#include "replay.h"
#include "samples.h"
#include "state_internal.h"
#include "train_figure.h"
#include "train_mode.h"

/* What the figure needs, made before training: so a missing font or an
   unwritable folder is found before the run, not after it. */
typedef struct {
    const cli_options *o;
    app_state *s;
    font_set *fonts;
} figure;

/* The pages of --moments K: K of the run's moments, evenly spaced among them
   (so about evenly on the log step axis), the first (step 0) and the last. */
static int flip_book(figure *fg, char *err, size_t errlen) {
    const cli_options *o = fg->o;
    view_state vs;
    app_figure_view(fg->s, APP_SAVE_EXPORT, &vs);
    const view_train *t = vs.train;
    const int K = o->train.moments, n = t ? t->moments : 0;
    if (n < K) {
        snprintf(err, errlen, "cannot write %s: the run kept %d moments, not %d", o->export_path, n,
                 K);
        return 1;
    }
    long steps[TRAIN_REPLAY_MAX];
    for (int i = 0; i < n; i++) steps[i] = t->moment_step[i];
    deck *d = deck_open(o->export_path, o->size_w ? o->size_w : APP_DEFAULT_W,
                        o->size_h ? o->size_h : APP_DEFAULT_H, o->scale ? o->scale : 1, fg->fonts,
                        err, errlen);
    if (!d) return 1;
    for (int j = 0; j < K; j++) {
        const int i = replay_page_index(j, n, K); /* the moments --train measured */
        if (app_training_replay_at(fg->s, steps[i]) != 0) {
            snprintf(err, errlen, "cannot write %s: no moment at step %ld", o->export_path,
                     steps[i]);
            deck_close(d, 0, NULL, 0);
            return 1;
        }
        app_async_poll(fg->s); /* the moment copied, the view made from it */
        app_figure_view(fg->s, APP_SAVE_EXPORT, &vs);
        if (!vs.train || !vs.train->replay || vs.train->step != steps[i]) {
            snprintf(err, errlen, "cannot write %s: the moment at step %ld is not shown",
                     o->export_path, steps[i]);
            deck_close(d, 0, NULL, 0);
            return 1;
        }
        if (deck_page(d, &vs, err, errlen) != 0) {
            deck_close(d, 0, NULL, 0);
            return 1;
        }
    }
    return deck_close(d, 1, err, errlen) ? 1 : 0;
}

/* train_finish_fn: shows the trained model in the state and writes the file. */
static int draw_figure(train_outcome *run, void *ud, char *err, size_t errlen) {
    figure *fg = ud;
    const cli_options *o = fg->o;
    const int layer = o->train.layer ? o->train.layer - 1 : 0; /* --layer is 1-based */
    int rc = app_async_training_adopt(fg->s, run->l, run->curve, run->points, run->steps_per_s,
                                      &run->pruning, layer, err, errlen);
    run->l = NULL; /* the state's now */
    if (rc != 0) return rc;
    if (o->train.moments) {
        rc = app_async_training_moments(fg->s, run->replay, err, errlen);
        run->replay = NULL; /* the trainer's now */
        return rc ? rc : flip_book(fg, err, errlen);
    }
    view_state vs;
    app_figure_view(fg->s, APP_SAVE_EXPORT, &vs);
    const char *dot = strrchr(o->export_path, '.');
    if (dot && strcmp(dot, ".png") == 0)
        return export_png(o->export_path, &vs, o->scale ? o->scale : 1, fg->fonts, err, errlen) ? 1
                                                                                                : 0;
    return export_vector(o->export_path, &vs, fg->fonts, err, errlen) ? 1 : 0;
}

/* The folder of the export file must exist and be writable (as app_export). */
static int check_export_folder(const char *path, char *err, size_t errlen) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (slash && dir[0] == '\0') snprintf(dir, sizeof dir, "/");
    if (access(dir, W_OK) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int app_train_export(const cli_options *o, char *err, size_t errlen) {
    if (o->train.moments) { /* as many moments as the run will keep: known now */
        const int steps = o->train.steps
                              ? o->train.steps
                              : learn_task((learn_task_id)(o->train.task - 1))->default_steps;
        const int kept = replay_count_for(steps);
        if (o->train.moments > kept) {
            snprintf(err, errlen,
                     "--moments %d: a run of %d steps keeps %d moments (steps 0, 1, 2, 3, 4, 5, "
                     "7, 9, 12, 16, ..., each about 1.3 times the one before, and its last)",
                     o->train.moments, steps, kept);
            return 2;
        }
    }
    if (check_export_folder(o->export_path, err, errlen) != 0) return 1;
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        return 1;
    }
    int rc = 1;
    figure fg = {o, NULL, NULL};
    tok_list toks = {0};
    fg.fonts = font_set_open(o->font, err, errlen);
    if (!fg.fonts) goto done;
    fg.s = app_state_create(font_measure, fg.fonts);
    int total = 0;
    mha_config mcfg = {0}; /* the attention view underneath: the defaults */
    mha_config_resolve(&mcfg);
    if (!fg.s || tok_split(&toks, samples_get(0)->text, MHA_MAX_N, &total, err, errlen) != 0) {
        if (!fg.s) snprintf(err, errlen, "out of memory");
        goto done;
    }
    cli_options view = *o;
    view.text = NULL;
    view.sample = 0;
    if (app_state_init(fg.s, &view, &toks, &mcfg, err, errlen) != 0) goto done;
    if (app_async_enable(fg.s, NULL, NULL, -1.0) != 0) { /* the trainer measures the bars */
        snprintf(err, errlen, "cannot show training: out of resources");
        goto done;
    }
    /* trains once; the figure is drawn from that very model (inside the dump) */
    rc = app_train_run(&o->train, o->cfg.h, o->cfg.d_model, o->cfg.seed, o->dump_dir, draw_figure,
                       &fg, err, errlen);
done:
    tok_free(&toks);
    if (fg.s) app_async_disable(fg.s);
    app_state_destroy(fg.s);
    font_set_close(fg.fonts);
    TTF_Quit();
    return rc;
}
