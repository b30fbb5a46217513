/* train_figure.c: --train TASK --export FILE: trains once, as --train does
 * (train_mode.c: its summary and --dump too), then shows that very model in the
 * window's training mode (training.c) and writes what that mode shows: the
 * trained heads of layer 1 (or --layer's), the accuracy and loss curves and the pruning bars,
 * as PNG, SVG or PDF (export.c). No display needed. The folder, the font and the
 * state are made ready before training, so none fails after it. */
#include <SDL.h>
#include <SDL_ttf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "async.h"
#include "export.h"
#include "font.h"
#include "learn.h"
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

/* train_finish_fn: shows the trained model in the state and writes the file. */
static int draw_figure(train_outcome *run, void *ud, char *err, size_t errlen) {
    figure *fg = ud;
    const cli_options *o = fg->o;
    const int layer = o->train.layer ? o->train.layer - 1 : 0; /* --layer is 1-based */
    int rc = app_async_training_adopt(fg->s, run->l, run->curve, run->points, run->steps_per_s,
                                      &run->pruning, layer, err, errlen);
    run->l = NULL; /* the state's now */
    if (rc != 0) return rc;
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
