/* train_figure.c: --train TASK --export FILE: trains once, as --train does
 * (train_mode.c: its summary and --dump too), then shows that very model in the
 * window's training mode (training.c) and writes what that mode shows: the
 * trained heads of layer 1 (or --layer's), the accuracy and loss curves and the pruning bars,
 * as PNG, SVG or PDF (export.c). No display needed. */
#include <SDL.h>
#include <SDL_ttf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "async.h"
#include "export.h"
#include "font.h"
#include "learn.h"
#include "samples.h"
#include "state_internal.h"
#include "train_figure.h"
#include "train_mode.h"

int app_train_export(const cli_options *o, char *err, size_t errlen) {
    train_outcome run = {0};
    int rc = app_train_keep(&o->train, o->cfg.h, o->cfg.d_model, o->cfg.seed, o->dump_dir, &run,
                            err, errlen);
    if (rc != 0) return rc;
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        learn_destroy(run.l);
        free(run.curve);
        free(run.ablated);
        return 1;
    }
    rc = 1;
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
    if (app_async_enable(s, NULL, NULL, -1.0) != 0) { /* the trainer measures the bars */
        snprintf(err, errlen, "cannot show training: out of resources");
        goto done;
    }
    const int layer = o->train.layer ? o->train.layer - 1 : 0; /* --layer is 1-based */
    rc = app_async_training_adopt(s, run.l, run.curve, run.points, run.steps_per_s, &run.pruning,
                                  layer, err, errlen);
    run.l = NULL; /* the state's now */
    if (rc != 0) goto done;
    view_state vs;
    app_figure_view(s, APP_SAVE_EXPORT, &vs);
    const char *dot = strrchr(o->export_path, '.');
    if (dot && strcmp(dot, ".png") == 0)
        rc = export_png(o->export_path, &vs, o->scale ? o->scale : 1, fonts, err, errlen) ? 1 : 0;
    else
        rc = export_vector(o->export_path, &vs, fonts, err, errlen) ? 1 : 0;
done:
    learn_destroy(run.l);
    free(run.curve);
    free(run.ablated);
    tok_free(&toks);
    if (s) app_async_disable(s);
    app_state_destroy(s);
    font_set_close(fonts);
    TTF_Quit();
    return rc;
}
