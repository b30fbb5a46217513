/* train_figure.c: --train TASK --export FILE: trains through the window's
 * training mode (trainer.c, training.c) to the steps asked for, then writes what
 * that mode shows: the trained heads of layer 1, the accuracy and loss curves
 * and the pruning bars, as PNG, SVG or PDF (export.c). No display needed. */
#include <SDL.h>
#include <SDL_ttf.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "export.h"
#include "font.h"
#include "learn.h"
#include "samples.h"
#include "state_internal.h"
#include "train_figure.h"

int app_train_export(const cli_options *o, char *err, size_t errlen) {
    learn_config cfg = {0};
    cfg.task = (learn_task_id)(o->train.task - 1);
    cfg.layers = o->train.layers;
    cfg.h = o->cfg.h;
    cfg.d_model = o->cfg.d_model;
    cfg.mlp = o->train.mlp;
    cfg.batch = o->train.batch;
    cfg.lr = o->train.lr;
    cfg.seed = o->cfg.seed;
    learn_config_resolve(&cfg);
    if (learn_config_check(&cfg, err, errlen) != 0) return 2;
    const long steps = o->train.steps ? o->train.steps : learn_task(cfg.task)->default_steps;
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        return 1;
    }
    int rc = 1;
    app_state *s = NULL;
    tok_list toks = {0};
    font_set *fonts = font_set_open(o->font, err, errlen);
    if (!fonts) goto done;
    s = app_state_create(font_measure, fonts);
    int total = 0;
    mha_config mcfg = {0}; /* the attention view underneath: the defaults */
    mha_config_resolve(&mcfg);
    if (!s || tok_split(&toks, samples_get(0)->text, MHA_MAX_N, &total, err, errlen) != 0) {
        if (!s) snprintf(err, errlen, "out of memory");
        goto done;
    }
    cli_options view = *o;
    view.text = NULL;
    view.sample = 0;
    if (app_state_init(s, &view, &toks, &mcfg, err, errlen) != 0) goto done;
    rc = app_training_run(s, &cfg, steps, err, errlen);
    if (rc != 0) goto done;
    view_state vs;
    app_figure_view(s, APP_SAVE_EXPORT, &vs);
    const char *dot = strrchr(o->export_path, '.');
    if (dot && strcmp(dot, ".png") == 0)
        rc = export_png(o->export_path, &vs, o->scale ? o->scale : 1, fonts, err, errlen) ? 1 : 0;
    else
        rc = export_vector(o->export_path, &vs, fonts, err, errlen) ? 1 : 0;
done:
    tok_free(&toks);
    app_state_destroy(s);
    font_set_close(fonts);
    TTF_Quit();
    return rc;
}
