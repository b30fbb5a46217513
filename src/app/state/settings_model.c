/* settings_model.c: the settings of training mode (train, train-h ... train-layer)
 * and of a loaded model (model, layer, model-h, overview, model-ablate, model-kv): what a
 * state has of them (capture), whether a set of them fits (check, which reads a
 * model that is new to the state) and making the state show them (apply). The
 * rows and the rest of apply are settings.c's and settings_apply.c's. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings_internal.h"
#include "state_internal.h"

/* ---- capture -------------------------------------------------------------------------- */

void stg_capture_more(const app_state *s, app_settings *st) {
    const char *path = NULL;
    int mlayer = 0, mh = 0, mov = 0;
    if (app_gpt_settings(s, &path, &mlayer, &mh, &mov)) {
        char real[PATH_MAX];
        snprintf(st->model, sizeof st->model, "%s", realpath(path, real) ? real : path);
        SV(st, ST_LAYER) = mlayer + 1;
        SV(st, ST_MODEL_H) = mh;
        SV(st, ST_OVERVIEW) = mov;
        SV(st, ST_MODEL_KV) = app_gpt_kv(s);
        char off[APP_ABLATE_MAX], why[64];
        app_gpt_off_list(s, off, sizeof off);
        if (off[0] && stg_model_ablate_sp.parse(st, "model-ablate", off, NULL, why, sizeof why))
            st->model_ablate[0] = '\0'; /* sorted as the reader sorts them */
    }
    learn_config lc;
    long steps = 0;
    int layer = 0;
    const int on = app_training_get(s, &lc, &steps, &layer);
    SV(st, ST_TRAIN) = on ? (int)lc.task + 1 : 0;
    SV(st, ST_TRAIN_H) = lc.h ? lc.h : 4; /* learn_config_resolve's */
    SV(st, ST_TRAIN_D) = lc.d_model ? lc.d_model : learn_task_d_model(lc.task);
    st->v[ST_TRAIN_SEED].u = lc.seed ? lc.seed : 1;
    SV(st, ST_TRAIN_LAYERS) = lc.layers ? lc.layers : learn_task(lc.task)->default_layers;
    SV(st, ST_TRAIN_MLP) = lc.mlp;
    SV(st, ST_TRAIN_STEPS) = steps;
    SV(st, ST_TRAIN_LAYER) = layer + 1;
}

/* ---- training mode -------------------------------------------------------------------- */

static int any_train(const app_settings *st) {
    for (int i = ST_TRAIN; i <= ST_TRAIN_LAYER; i++)
        if (st->set[i]) return 1;
    return 0;
}

/* The training settings st asks for, over what s has: *on, the configuration, the
   steps and the layer (0-based). */
static void train_wanted(const app_state *s, const app_settings *st, int *on, learn_config *lc,
                         long *steps, int *layer) {
    *on = app_training_get(s, lc, steps, layer);
    if (st->set[ST_TRAIN]) {
        *on = SV(st, ST_TRAIN) != 0;
        if (*on) app_training_task_shape(lc, (learn_task_id)(SV(st, ST_TRAIN) - 1));
    }
    if (st->set[ST_TRAIN_H]) lc->h = (int)SV(st, ST_TRAIN_H);
    if (st->set[ST_TRAIN_D]) lc->d_model = (int)SV(st, ST_TRAIN_D);
    if (st->set[ST_TRAIN_SEED]) lc->seed = st->v[ST_TRAIN_SEED].u;
    if (st->set[ST_TRAIN_LAYERS]) lc->layers = (int)SV(st, ST_TRAIN_LAYERS);
    if (st->set[ST_TRAIN_MLP]) lc->mlp = (int)SV(st, ST_TRAIN_MLP);
    if (st->set[ST_TRAIN_STEPS]) *steps = SV(st, ST_TRAIN_STEPS);
    if (st->set[ST_TRAIN_LAYER]) *layer = (int)SV(st, ST_TRAIN_LAYER) - 1;
}

int stg_check_more(const app_state *s, const app_settings *st, char *err, size_t errlen) {
    if (!any_train(st)) return 0;
    int on, layer;
    long steps;
    learn_config lc;
    train_wanted(s, st, &on, &lc, &steps, &layer);
    learn_config r = lc;
    learn_config_resolve(&r);
    char why[256];
    if (learn_config_check(&r, why, sizeof why) != 0) {
        const int id = st->set[ST_TRAIN_H]        ? ST_TRAIN_H
                       : st->set[ST_TRAIN_D]      ? ST_TRAIN_D
                       : st->set[ST_TRAIN_LAYERS] ? ST_TRAIN_LAYERS
                                                  : ST_TRAIN;
        return stg_fail(st, id, err, errlen, "training: %s", why);
    }
    if (r.h > 64 || r.d_model > 256)
        return stg_fail(st, r.h > 64 ? ST_TRAIN_H : ST_TRAIN_D, err, errlen,
                        "training in the window goes up to h = 64, d_model = 256");
    if (layer >= r.layers)
        return stg_fail(st, ST_TRAIN_LAYER, err, errlen,
                        "train-layer = %d: the trained model has %d layer%s", layer + 1, r.layers,
                        r.layers == 1 ? "" : "s");
    return 0;
}

void stg_apply_more(app_state *s, const app_settings *st) {
    if (!any_train(st)) return;
    int on, layer;
    long steps;
    learn_config lc;
    train_wanted(s, st, &on, &lc, &steps, &layer);
    const learn_config first = {.task = LEARN_PAIR, .h = 2, .d_model = 32};
    learn_config r = lc, f = first;
    learn_config_resolve(&r);
    learn_config_resolve(&f);
    if (!on && !s->training && memcmp(&r, &f, sizeof r) == 0 && !steps && !layer)
        return; /* nothing to keep for a later L */
    if (lc.layers == 0) lc.layers = r.layers;
    if (lc.seed == 0) lc.seed = r.seed;
    app_training_set(s, on, &lc, steps, layer);
}

/* ---- a loaded model ---------------------------------------------------------------------- */

int stg_model_is_new(const app_state *s, const app_settings *st) {
    if (!st->set[ST_MODEL] || !st->model[0]) return 0;
    const char *path = NULL;
    int layer, h, ov;
    return !app_gpt_settings(s, &path, &layer, &h, &ov) || strcmp(path, st->model) != 0;
}

/* A model new to the state: read now (1), or by the jobs layer (2). */
static int check_new(const app_settings *st, const char *text, st_model_plan *mp, int attached,
                     char *err, size_t errlen) {
    if (attached) { /* the jobs layer reads it, as a folder dropped on the window */
        mp->act = 2;
        return 0;
    }
    app_gpt_request *q = calloc(1, sizeof *q);
    if (!q) return stg_fail(st, ST_MODEL, err, errlen, "out of memory");
    snprintf(q->path, sizeof q->path, "%s", st->model);
    tok_copy_fit(q->text, sizeof q->text, text);
    int rc = 0; /* its own layer 1 and heads first: the file's are checked with its lines */
    char why[1200];
    mp->g = app_gpt_load(q, NULL, NULL, &rc, why, sizeof why);
    free(q);
    if (!mp->g) return stg_fail(st, ST_MODEL, err, errlen, "model: %s", why);
    if (app_gpt_check(mp->g, mp->layer, mp->h, why, sizeof why) != 0)
        return stg_fail(st, strncmp(why, "layer", 5) == 0 ? ST_LAYER : ST_MODEL_H, err, errlen,
                        "%s", why);
    if (mp->off && app_gpt_check_off(mp->g, mp->off, why, sizeof why) != 0)
        return stg_fail(st, ST_MODEL_ABLATE, err, errlen, "%s", why);
    if (app_gpt_check_kv(mp->g, mp->kv, mp->h, why, sizeof why) != 0)
        return stg_fail(st, st->set[ST_MODEL_KV] ? ST_MODEL_KV : ST_MODEL_H, err, errlen, "%s",
                        why);
    mp->act = 1;
    return 0;
}

int stg_model_check(const app_state *s, const app_settings *st, const char *text, st_model_plan *mp,
                    char *err, size_t errlen) {
    memset(mp, 0, sizeof *mp);
    const char *path = NULL;
    int layer = 0, h = 0, ov = 0;
    const int shown = app_gpt_settings(s, &path, &layer, &h, &ov);
    if (st->set[ST_LAYER]) layer = (int)SV(st, ST_LAYER) - 1;
    if (st->set[ST_MODEL_H]) h = (int)SV(st, ST_MODEL_H);
    if (st->set[ST_OVERVIEW]) ov = (int)SV(st, ST_OVERVIEW);
    const int kv_changed = st->set[ST_MODEL_KV] && SV(st, ST_MODEL_KV) != app_gpt_kv(s);
    /* a new model, or a re-split without model-kv: each head its own K/V again, as Up/Down
       refuses a regrouped model's re-split */
    mp->kv = st->set[ST_MODEL_KV]                                    ? (int)SV(st, ST_MODEL_KV)
             : stg_model_is_new(s, st) || (st->set[ST_MODEL_H] && h) ? 0
                                                                     : app_gpt_kv(s);
    mp->layer = layer;
    mp->h = h;
    mp->overview = ov;
    mp->off = st->set[ST_MODEL_ABLATE] ? st->model_ablate : NULL;
    const int model_after = st->set[ST_MODEL] ? st->model[0] != '\0' : shown;
    if (mp->off && mp->off[0] && !model_after)
        return stg_fail(st, ST_MODEL_ABLATE, err, errlen,
                        "model-ablate = %.200s: heads of a loaded model (model = PATH)", mp->off);
    if (mp->kv && !model_after)
        return stg_fail(st, ST_MODEL_KV, err, errlen,
                        "model-kv = %d: a loaded model's K/V heads (model = PATH; the built-in "
                        "model's are kv)",
                        mp->kv);
    if (st->set[ST_MODEL] && !st->model[0]) {
        mp->act = shown ? 3 : 0;
        return 0;
    }
    if (stg_model_is_new(s, st)) return check_new(st, text, mp, s->req.attached, err, errlen);
    if (!shown || !(st->set[ST_LAYER] || st->set[ST_MODEL_H] || st->set[ST_OVERVIEW] || mp->off ||
                    kv_changed))
        return 0;
    char why[1200];
    if (s->gpt && app_gpt_check_view(s, layer, h, why, sizeof why) != 0)
        return stg_fail(st, st->set[ST_LAYER] ? ST_LAYER : ST_MODEL_H, err, errlen, "%s", why);
    if (s->gpt && mp->off && app_gpt_check_off(s->gpt, mp->off, why, sizeof why) != 0)
        return stg_fail(st, ST_MODEL_ABLATE, err, errlen, "%s", why);
    if (s->gpt && app_gpt_check_kv(s->gpt, mp->kv, h, why, sizeof why) != 0)
        return stg_fail(st, st->set[ST_MODEL_KV] ? ST_MODEL_KV : ST_MODEL_H, err, errlen, "%s",
                        why);
    mp->act = s->gpt ? 4 : 0;
    if (!s->gpt && (mp->off || kv_changed) && s->gpt_wanted) /* asked for, not read yet */
        mp->act = 5;
    return 0;
}

void stg_model_apply(app_state *s, const app_settings *st, st_model_plan *mp, const char *text) {
    switch (mp->act) {
    case 1:
        if (s->pin) app_compare_toggle(s); /* a random model's pin does not compare with it */
        app_gpt_adopt(s, mp->g, NULL);
        mp->g = NULL; /* the state's now */
        if (mp->off) app_gpt_set_off(s, mp->off);
        app_gpt_set_view(s, mp->layer, mp->h, mp->kv, mp->overview);
        break;
    case 2: {
        app_gpt_request *q = &s->gpt_want;
        snprintf(q->path, sizeof q->path, "%s", st->model);
        tok_copy_fit(q->text, sizeof q->text, text);
        q->layer = mp->layer;
        q->h = mp->h;
        snprintf(q->ablate, sizeof q->ablate, "%s", mp->off ? mp->off : "");
        q->kv = mp->kv;
        s->gpt_wanted = 1;
        break;
    }
    case 3: app_gpt_close(s); break;
    case 4:
        if (mp->off) app_gpt_set_off(s, mp->off);
        app_gpt_set_view(s, mp->layer, mp->h, mp->kv, mp->overview);
        break;
    case 5: /* the model asked for, not read yet: it removes these heads, shares so */
        if (mp->off) snprintf(s->gpt_want.ablate, sizeof s->gpt_want.ablate, "%s", mp->off);
        s->gpt_want.kv = mp->kv;
        break;
    default: break;
    }
}
