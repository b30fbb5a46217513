/* settings_apply.c: capture (every setting of what a state shows) and apply
 * (make a state show a set of settings). The rows that live in the random
 * model's configuration or in the state's look are loops over settings.c's
 * table; the text, the pinned view, the focus, the zoom and the pages are named
 * here, training and a loaded model in settings_model.c. apply checks every
 * value against the state it will be applied to before it changes anything, then
 * changes the state through the same paths the keys take (app_change_cfg,
 * app_recompute, app_compare_pin), so a recompute that goes to the jobs layer
 * goes there as a key's would. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "settings_internal.h"
#include "state_internal.h"

/* ---- a row's field in the state or the configuration ---------------------------------- */

/* the rows' int fields include mha_config's enums (mask, weights): read and written as int */
_Static_assert(sizeof(mha_mask) == sizeof(int) && sizeof(mha_weights) == sizeof(int),
               "an enum of mha_config is not an int");

static st_value field_get(const st_row *r, const void *base) {
    const char *at = (const char *)base + r->at;
    st_value v = {0};
    if (r->kind == ST_U64)
        memcpy(&v.u, at, sizeof v.u);
    else if (r->kind == ST_FLOAT) {
        float f;
        memcpy(&f, at, sizeof f);
        v.f = f;
    } else {
        int i;
        memcpy(&i, at, sizeof i);
        v.i = i;
    }
    return v;
}

static void field_set(const st_row *r, void *base, st_value v) {
    char *at = (char *)base + r->at;
    if (r->kind == ST_U64) {
        memcpy(at, &v.u, sizeof v.u);
    } else if (r->kind == ST_FLOAT) {
        const float f = (float)v.f;
        memcpy(at, &f, sizeof f);
    } else {
        const int i = (int)v.i;
        memcpy(at, &i, sizeof i);
    }
}

/* ---- capture -------------------------------------------------------------------------- */

/* The pinned view: its text, heads removed and what its configuration changes. */
static void capture_pin(const app_state *s, app_settings *st, const mha_config *c) {
    mha_config pc;
    const tok_list *ptoks = NULL;
    int psample = 0;
    if (!app_compare_pinned(s, &pc, &ptoks, &psample)) return;
    memcpy(st->pin_ablate, pc.ablate, sizeof st->pin_ablate);
    const tok_list *live = app_request_want((app_state *)s);
    int same = ptoks->count == live->count && psample == s->sample;
    for (int i = 0; same && i < live->count; i++)
        same = strcmp(ptoks->tokens[i], live->tokens[i]) == 0;
    if (same) {
        st->pin_src = 0;
    } else if (psample > 0) {
        st->pin_src = SRC_SAMPLE;
        st->pin_sample = psample;
    } else { /* its tokens, one space between: they split into the same tokens */
        size_t len = 1;
        for (int i = 0; i < ptoks->count; i++) len += strlen(ptoks->tokens[i]) + 1;
        st->pin_text = malloc(len);
        if (st->pin_text) {
            st->pin_text[0] = '\0';
            for (int i = 0; i < ptoks->count; i++) {
                if (i) strcat(st->pin_text, " ");
                strcat(st->pin_text, ptoks->tokens[i]);
            }
        }
        st->pin_src = SRC_TEXT;
    }
    SV(st, ST_COMPARE) = 1;
    st->compare_set = 0;
    mha_config *w = &st->compare_cfg;
    mha_config_resolve(&pc);
    if (pc.h != c->h) st->compare_set |= CLI_CMP_H, w->h = pc.h;
    if (pc.d_model != c->d_model) st->compare_set |= CLI_CMP_D, w->d_model = pc.d_model;
    if (pc.seed != c->seed) st->compare_set |= CLI_CMP_SEED, w->seed = pc.seed;
    if (pc.mask != c->mask) st->compare_set |= CLI_CMP_MASK, w->mask = pc.mask;
    if (pc.no_scale != c->no_scale) st->compare_set |= CLI_CMP_SCALE, w->no_scale = pc.no_scale;
    const float ta = pc.temperature > 0.0f ? pc.temperature : 1.0f;
    if (ta != (float)st->v[ST_TEMP].f) st->compare_set |= CLI_CMP_TEMPERATURE, w->temperature = ta;
    if (pc.weights != c->weights) st->compare_set |= CLI_CMP_WEIGHTS, w->weights = pc.weights;
    if (pc.pad != c->pad) st->compare_set |= CLI_CMP_PAD, w->pad = pc.pad;
}

void app_settings_capture(const app_state *s, app_settings *st) {
    app_settings_defaults(st);
    if (s->sample > 0) {
        st->src = SRC_SAMPLE;
        st->sample = s->sample;
    } else {
        st->src = SRC_TEXT;
        st->sample = 0;
        st->text = strdup(s->custom);
    }
    mha_config c = s->cfg;
    mha_config_resolve(&c);
    for (int i = 0; i < ST_COUNT; i++) {
        const st_row *r = &stg_rows[i];
        if (r->where == AT_CFG) st->v[i] = field_get(r, &c);
        if (r->where == AT_STATE || r->where == AT_LATE) st->v[i] = field_get(r, s);
    }
    if (!(st->v[ST_TEMP].f > 0.0)) st->v[ST_TEMP].f = 1.0; /* 0 means 1 */
    memcpy(st->ablate, c.ablate, sizeof st->ablate);
    SV(st, ST_FOCUS) = s->look.focus;
    SV(st, ST_ZOOM) = (long)(s->look.zoom * 100.0f + 0.5f);
    SV(st, ST_PAGE) = s->look.page + 1;
    capture_pin(s, st, &c);
    SV(st, ST_PINNED_PAGE) = s->pin ? s->pinned_page + 1 : 1; /* B pins at its first page */
    stg_capture_more(s, st);
}

/* ---- apply: first check everything ----------------------------------------------------- */

/* What apply will do, decided before anything changes. */
typedef struct {
    const char *text; /* the text shown after */
    int sample, new_text, total;
    tok_list t;   /* new_text: its tokens */
    int n;        /* tokens of the text shown after */
    mha_config c; /* the random model's configuration after */
    int focus;
    mha_config pc; /* compare on: the pinned view's */
    tok_list pt;   /* ... its own text, when pin_own */
    int pin_own;
    st_model_plan mp;
} apply_plan;

static void plan_free(apply_plan *p) {
    tok_free(&p->t);
    tok_free(&p->pt);
    app_gpt_free(p->mp.g);
    p->mp.g = NULL;
}

/* The text st asks for (new_text) or the one shown. */
static int check_text(const app_state *s, const app_settings *st, apply_plan *p, char *err,
                      size_t errlen) {
    p->new_text = st->set[ST_TEXT];
    if (p->new_text) {
        p->sample = st->src == SRC_SAMPLE ? st->sample : 0;
        if (st->src == SRC_SAMPLE && (st->sample < 1 || st->sample > samples_count()))
            return stg_fail(st, ST_TEXT, err, errlen, "sample = %d: there are %d samples",
                            st->sample, samples_count());
        p->text = p->sample ? samples_get(p->sample - 1)->text : st->text ? st->text : "";
    } else {
        p->sample = s->sample;
        p->text = s->sample ? samples_get(s->sample - 1)->text : s->custom;
    }
    p->n = s->toks.count;
    char why[MHA_ERR_LEN];
    if (p->new_text) {
        if (tok_split(&p->t, p->text, MHA_MAX_N, &p->total, why, sizeof why) != 0)
            return stg_fail(st, ST_TEXT, err, errlen, "%s", why);
        p->n = p->t.count;
    } else if (app_request_busy(s)) {
        p->n = app_request_want((app_state *)s)->count;
    }
    return 0;
}

/* The random model's configuration: the rows that live in it, over the state's. */
static int check_cfg(const app_state *s, const app_settings *st, apply_plan *p, char *err,
                     size_t errlen) {
    mha_config c = s->cfg;
    for (int i = 0; i < ST_COUNT; i++)
        if (st->set[i] && stg_rows[i].where == AT_CFG) field_set(&stg_rows[i], &c, st->v[i]);
    if (st->set[ST_ABLATE])
        memcpy(c.ablate, st->ablate, sizeof c.ablate);
    else if ((st->set[ST_H] || st->set[ST_D]) && (c.h != s->cfg.h || c.d_model != s->cfg.d_model))
        memset(c.ablate, 0, sizeof c.ablate); /* the heads are split anew, as the keys do */
    if (!st->set[ST_KV] && st->set[ST_H] && c.h != s->cfg.h) c.kv_heads = 0; /* and K/V too */
    mha_config_resolve(&c);
    const int n = p->n;
    if (c.h > c.d_model || c.d_model % c.h != 0)
        return stg_fail(st, st->set[ST_H] ? ST_H : ST_D, err, errlen,
                        "h = %d does not divide d_model = %d", c.h, c.d_model);
    if (c.pad && st->set[ST_PAD] && c.pad < n)
        return stg_fail(st, ST_PAD, err, errlen,
                        "pad = %d: the text has %d tokens (pad at least that)", c.pad, n);
    if (!st->set[ST_PAD] && c.pad && c.pad < n) c.pad = app_pad_length(n); /* as the text grows */
    for (int k = c.h; k < MHA_ABLATE_WORDS * 64; k++)
        if (mha_config_is_ablated(&c, k))
            return stg_fail(st, ST_ABLATE, err, errlen, "ablate: there is no head %d (h = %d)",
                            k + 1, c.h);
    if (c.kv_heads && c.h % c.kv_heads != 0)
        return stg_fail(st, st->set[ST_KV] ? ST_KV : ST_H, err, errlen,
                        "kv = %d does not divide h = %d", c.kv_heads, c.h);
    char why[MHA_ERR_LEN];
    if (mha_config_check(&c, n, why, sizeof why) != 0)
        return stg_fail(st, st->set[ST_D] ? ST_D : ST_H, err, errlen, "%s", why);
    p->c = c;
    return 0;
}

/* The focused head: among the heads shown after (a model still to be read: checked
   once it is). */
static int check_focus(const app_state *s, const app_settings *st, apply_plan *p, char *err,
                       size_t errlen) {
    /* a loaded model's heads: the file's model-h (own: its trained ones), else those shown */
    const int model_h = (int)SV(st, ST_MODEL_H);
    const int heads = !s->gpt                ? p->c.h
                      : !st->set[ST_MODEL_H] ? app_gpt_heads(s)
                      : model_h              ? model_h
                                             : app_gpt_own_heads(s);
    const int focus = st->set[ST_FOCUS]        ? (int)SV(st, ST_FOCUS)
                      : s->look.focus <= heads ? s->look.focus
                                               : 0;
    if (focus > heads && !stg_model_is_new(s, st))
        return stg_fail(st, ST_FOCUS, err, errlen, "focus = %d: there is no head %d (h = %d)",
                        focus, focus, heads);
    p->focus = focus;
    return 0;
}

/* The pinned view's configuration and text (compare on). */
static int check_pin_on(const app_settings *st, apply_plan *p, char *err, size_t errlen) {
    mha_config pc = p->c;
    const mha_config *w = &st->compare_cfg;
    const unsigned set = st->compare_set;
    if (set & CLI_CMP_H) pc.h = w->h;
    if (set & CLI_CMP_D) pc.d_model = w->d_model;
    if (set & (CLI_CMP_H | CLI_CMP_D)) memset(pc.ablate, 0, sizeof pc.ablate);
    if (set & CLI_CMP_SEED) pc.seed = w->seed;
    if (set & CLI_CMP_MASK) pc.mask = w->mask;
    if (set & CLI_CMP_SCALE) pc.no_scale = w->no_scale;
    if (set & CLI_CMP_TEMPERATURE) pc.temperature = w->temperature;
    if (set & CLI_CMP_WEIGHTS) pc.weights = w->weights;
    if (set & CLI_CMP_PAD) pc.pad = w->pad;
    if (st->set[ST_PIN_ABLATE]) memcpy(pc.ablate, st->pin_ablate, sizeof pc.ablate);
    mha_config_resolve(&pc);
    int pin_n = p->n;
    char why[MHA_ERR_LEN];
    if (st->set[ST_PIN_TEXT] && st->pin_src) { /* the pinned view's own text */
        const char *ptext =
            st->pin_src == SRC_SAMPLE ? samples_get(st->pin_sample - 1)->text : st->pin_text;
        int ptotal = 0;
        if (tok_split(&p->pt, ptext, MHA_MAX_N, &ptotal, why, sizeof why) != 0)
            return stg_fail(st, ST_PIN_TEXT, err, errlen, "%s", why);
        pin_n = p->pt.count;
        p->pin_own = 1;
        if (pc.pad && pc.pad < pin_n && !(set & CLI_CMP_PAD))
            pc.pad = app_pad_length(pin_n); /* the padding follows its text, as the live one's */
    }
    for (int k = pc.h; k < MHA_ABLATE_WORDS * 64; k++)
        if (mha_config_is_ablated(&pc, k))
            return stg_fail(st, ST_PIN_ABLATE, err, errlen,
                            "pinned-ablate: the pinned view has no head %d (h = %d)", k + 1, pc.h);
    if (mha_config_check(&pc, pin_n, why, sizeof why) != 0)
        return stg_fail(st, ST_COMPARE, err, errlen, "compare: %s", why);
    p->pc = pc;
    return 0;
}

/* compare: not with a model; the pinned view's settings only with compare on. */
static int check_pin(const app_state *s, const app_settings *st, apply_plan *p, char *err,
                     size_t errlen) {
    const int compare = st->set[ST_COMPARE] && SV(st, ST_COMPARE);
    const int want_pin = st->set[ST_COMPARE] ? compare : s->pin != NULL;
    const int model_after = st->set[ST_MODEL] ? st->model[0] != '\0' : s->gpt != NULL;
    if (compare && model_after)
        return stg_fail(
            st, ST_COMPARE, err, errlen,
            "compare pins a random model's view: not with a loaded model (model = off)");
    if (compare) {
        if (check_pin_on(st, p, err, errlen) != 0) return -1;
    } else {
        int any_off = 0;
        for (int k = 0; k < MHA_ABLATE_WORDS; k++) any_off |= st->pin_ablate[k] != 0;
        const int id = st->set[ST_PIN_TEXT] && st->pin_src ? ST_PIN_TEXT
                       : st->set[ST_PIN_ABLATE] && any_off ? ST_PIN_ABLATE
                                                           : -1;
        if (id >= 0)
            return stg_fail(st, id, err, errlen, "%s: only with compare (the pinned view's)",
                            id == ST_PIN_TEXT ? "pinned-sample / pinned-text" : "pinned-ablate");
    }
    if (st->set[ST_PINNED_PAGE] && SV(st, ST_PINNED_PAGE) > 1 && !want_pin)
        return stg_fail(st, ST_PINNED_PAGE, err, errlen,
                        "pinned-page = %ld: only with compare (the pinned view's page)",
                        SV(st, ST_PINNED_PAGE));
    return 0;
}

static int check_all(const app_state *s, const app_settings *st, apply_plan *p, char *err,
                     size_t errlen) {
    if (check_text(s, st, p, err, errlen) != 0 || check_cfg(s, st, p, err, errlen) != 0 ||
        check_focus(s, st, p, err, errlen) != 0 || check_pin(s, st, p, err, errlen) != 0 ||
        stg_check_more(s, st, err, errlen) != 0)
        return -1;
    return stg_model_check(s, st, p->text, &p->mp, err, errlen); /* last: it may read a model */
}

/* ---- then change the state, through the keys' own paths --------------------------------- */

/* The text and the random model's configuration; 0, or -1 with err. */
static int change_model(app_state *s, const app_settings *st, apply_plan *p, char *err,
                        size_t errlen) {
    const int cfg_changed = memcmp(&p->c, &s->cfg, sizeof p->c) != 0;
    if (!p->new_text) {
        if (!cfg_changed) return 0;
        app_change_cfg(s, p->c);
        if (memcmp(&s->cfg, &p->c, sizeof p->c) != 0 && s->status[0])
            return stg_fail(st, ST_H, err, errlen, "%s", s->status);
        return 0;
    }
    if (s->gpt) {
        if (app_gpt_text(s, p->text, p->sample) != 0)
            return stg_fail(st, ST_TEXT, err, errlen, "%s", s->status);
        if (cfg_changed) app_change_cfg(s, p->c);
        return 0;
    }
    if (app_recompute(s, &p->c, &p->t) != 0)
        return stg_fail(st, ST_TEXT, err, errlen, "%s", s->status);
    s->sample = p->sample;
    if (!p->sample) tok_copy_fit(s->custom, sizeof s->custom, p->text);
    s->look.page = 0;
    if (p->total > MHA_MAX_N)
        snprintf(s->status, sizeof s->status, "text cut to the first %d of its %d tokens",
                 MHA_MAX_N, p->total);
    return 0;
}

static void change_compare(app_state *s, const app_settings *st, apply_plan *p) {
    if (!st->set[ST_COMPARE]) return;
    if (!SV(st, ST_COMPARE)) {
        if (s->pin) app_compare_toggle(s);
        return;
    }
    char why[MHA_ERR_LEN];
    if (app_compare_pin(s, &p->pc, p->pin_own ? &p->pt : app_request_want(s),
                        p->pin_own ? st->pin_sample : s->sample, why, sizeof why) != 0)
        snprintf(s->status, sizeof s->status, "%s", why);
}

/* The rows that live in the state's look (when = AT_STATE or AT_LATE). */
static void change_look(app_state *s, const app_settings *st, st_where when) {
    for (int i = 0; i < ST_COUNT; i++)
        if (st->set[i] && stg_rows[i].where == when) field_set(&stg_rows[i], s, st->v[i]);
}

int app_settings_apply(app_state *s, const app_settings *st, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    apply_plan p = {0};
    if (check_all(s, st, &p, err, errlen) != 0) {
        plan_free(&p);
        return -1;
    }
    char before[sizeof s->status];
    memcpy(before, s->status, sizeof before);
    s->status[0] = '\0';
    if (change_model(s, st, &p, err, errlen) != 0) {
        plan_free(&p);
        return -1;
    }
    change_look(s, st, AT_STATE);
    if (st->set[ST_ZOOM]) s->look.zoom = (float)SV(st, ST_ZOOM) / 100.0f;
    stg_apply_more(s, st); /* training mode first: entering it unfocuses, as L does */
    stg_model_apply(s, st, &p.mp, p.text);
    s->look.focus = !s->gpt || p.focus <= app_gpt_heads(s) ? p.focus : 0;
    change_look(s, st, AT_LATE);
    if (st->set[ST_PAGE]) s->look.page = (int)SV(st, ST_PAGE) - 1; /* app_layout clamps it */
    change_compare(s, st, &p);
    plan_free(&p);
    if (st->set[ST_PINNED_PAGE]) s->pinned_page = (int)SV(st, ST_PINNED_PAGE) - 1;
    if (!s->status[0]) memcpy(s->status, before, sizeof before);
    s->layout_valid = 0;
    s->dirty = 1; /* app_layout refreshes the pinned pane and the progress sign */
    app_derive_after(s);
    return 0;
}
