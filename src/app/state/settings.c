/* settings.c: a view as named settings (settings.h), one row per setting in the
 * table below: its name in view files and lessons, the long options that set it,
 * its kind, range or words, default and where it lives in the state. Parsing,
 * writing, comparing, copying and the defaults are loops over the rows; the
 * settings a row cannot say have their functions in settings_special.c, and
 * capture and apply (which also loop over the rows) are settings_apply.c's.
 *
 * Adding a setting: one id in settings_internal.h, one row here (and, when it is
 * new to the state, what it means in the view). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "settings.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "settings_internal.h"
#include "state_internal.h"
#include "values.h"

static const char *const mask_words[] = {"none", "causal", NULL};
static const char *const scale_words[] = {"on", "off", NULL}; /* the value: no_scale */
static const char *const weights_words[] = {"random", "designed|patterns", NULL};
static const char *const contrast_words[] = {"fixed", "row", "log", NULL};
static const char *const theme_words[] = {"light", "dark", NULL};
static const char *const head_view_words[] = {"heatmap", "lines", NULL};
static const char *const background_words[] = {"opaque", "transparent", NULL};

#define ZOOM_LO ((long)(APP_ZOOM_MIN * 100.0f + 0.5f))
#define ZOOM_HI ((long)(APP_ZOOM_MAX * 100.0f + 0.5f))
#define CFG(f) .where = AT_CFG, .at = offsetof(mha_config, f)
#define STATE(f) .where = AT_STATE, .at = offsetof(app_state, f)
#define LOOK(f) .where = AT_STATE, .at = offsetof(app_state, look.f) /* the view's look */
#define WHOLE "a whole number from {lo} to {hi}"
#define FROM_1 "a whole number from {lo}"

/* One row per setting, in st_id's order (the order the writer writes them). */
const st_row stg_rows[ST_COUNT] = {
    [ST_TEXT] = {"sample", "text sample text-file", ST_SPECIAL, .sp = &stg_text_sp},
    [ST_H] = {"h", "heads", ST_INT, 1, MHA_MAX_D_MODEL, .must = WHOLE, .def = MHA_DEFAULT_H,
              CFG(h)},
    [ST_D] = {"d_model", "d-model", ST_INT, 1, MHA_MAX_D_MODEL, .must = WHOLE,
              .def = MHA_DEFAULT_D_MODEL, CFG(d_model)},
    [ST_SEED] = {"seed", "seed", ST_U64, 1, LONG_MAX, .must = FROM_1, .def = MHA_DEFAULT_SEED,
                 CFG(seed)},
    [ST_MASK] = {"mask", "mask", ST_WORDS, .words = mask_words, CFG(mask)},
    [ST_PAD] = {"pad", "pad", ST_INT, 1, MHA_MAX_N, .zero = "off",
                .must = "off or a whole number up to {hi}", CFG(pad)},
    [ST_SCALE] = {"scale", "no-scale", ST_WORDS, .words = scale_words, CFG(no_scale)},
    [ST_TEMP] = {"temperature", "temperature", ST_FLOAT, .flo = MHA_MIN_TEMPERATURE,
                 .fhi = MHA_MAX_TEMPERATURE, .must = "a decimal number from {lo} to {hi}",
                 .def = 1.0, CFG(temperature)},
    [ST_WEIGHTS] = {"weights", "weights", ST_WORDS, .words = weights_words, CFG(weights)},
    [ST_ABLATE] = {"ablate", "ablate", ST_SPECIAL, .sp = &stg_ablate_sp},
    [ST_FOCUS] = {"focus", NULL, ST_INT, 1, MHA_MAX_D_MODEL, .zero = "none",
                  .must = "none or a head from {lo}"},
    [ST_STAGE] = {"stage", NULL, ST_INT, 0, ST_STAGE_MAX,
                  .must = "a stage from 0 (the whole head) to {hi}", .where = AT_LATE,
                  .at = offsetof(app_state, look.step)},
    [ST_VALUES] = {"values", "values", ST_BOOL, LOOK(values)},
    [ST_CONTRAST] = {"contrast", "contrast", ST_WORDS, .words = contrast_words, LOOK(contrast)},
    [ST_COLORMAP] = {"colormap", "colormap", ST_SPECIAL, .def = CMAP_VIRIDIS, LOOK(cmap),
                     .sp = &stg_colormap_sp},
    [ST_THEME] = {"theme", "theme", ST_WORDS, .words = theme_words, LOOK(theme)},
    [ST_ZOOM] = {"zoom", NULL, ST_INT, ZOOM_LO, ZOOM_HI, .must = "a percentage from {lo} to {hi}"},
    [ST_PRESENT] = {"present", "present", ST_BOOL, LOOK(present)},
    [ST_PAGE] = {"page", "page", ST_INT, 1, INT_MAX, .must = FROM_1, .def = 1},
    [ST_PANELS] = {"panels", NULL, ST_BOOL, .def = 1, STATE(lesson)},
    [ST_DIFF] = {"diff", "diff", ST_BOOL, LOOK(diff)},
    [ST_COMPARE] = {"compare", "compare", ST_SPECIAL, .sp = &stg_compare_sp},
    [ST_PIN_TEXT] = {"pinned-sample", "compare", ST_SPECIAL, .sp = &stg_pin_text_sp},
    [ST_PIN_ABLATE] = {"pinned-ablate", "compare", ST_SPECIAL, .sp = &stg_pin_ablate_sp},
    [ST_PINNED_PAGE] = {"pinned-page", "pinned-page", ST_INT, 1, INT_MAX, .must = FROM_1, .def = 1},
    [ST_TRAIN] = {"train", NULL, ST_SPECIAL, .sp = &stg_train_sp},
    [ST_TRAIN_H] = {"train-h", "heads", ST_INT, 1, 64, .must = WHOLE, .def = 2},
    [ST_TRAIN_D] = {"train-d_model", "d-model", ST_INT, 1, 256, .must = WHOLE, .def = 32},
    [ST_TRAIN_SEED] = {"train-seed", "seed", ST_U64, 1, LONG_MAX, .must = FROM_1, .def = 1},
    [ST_TRAIN_STEPS] = {"train-steps", NULL, ST_INT, 0, 100000000L,
                        .must = "a whole number from 0 (train on) to {hi}"},
    [ST_TRAIN_LAYERS] = {"train-layers", NULL, ST_INT, 1, LEARN_MAX_LAYERS, .must = "1 or {hi}",
                         .def = 1},
    [ST_TRAIN_MLP] = {"train-mlp", NULL, ST_BOOL, .def = 0},
    [ST_TRAIN_LAYER] = {"train-layer", "layer", ST_INT, 1, INT_MAX, .must = FROM_1, .def = 1},
    [ST_MODEL] = {"model", "model", ST_SPECIAL, .sp = &stg_model_sp},
    [ST_LAYER] = {"layer", "layer", ST_INT, 1, INT_MAX, .must = FROM_1, .def = 1},
    [ST_MODEL_H] = {"model-h", "heads", ST_INT, 1, MHA_MAX_D_MODEL, .zero = "own",
                    .must = "own or a whole number from {lo}"},
    [ST_OVERVIEW] = {"overview", NULL, ST_BOOL, .def = 0},
    [ST_HEAD_VIEW] = {"head-view", NULL, ST_WORDS, .words = head_view_words, LOOK(head_view)},
    [ST_MODEL_ABLATE] = {"model-ablate", "ablate", ST_SPECIAL, .sp = &stg_model_ablate_sp},
    [ST_BACKGROUND] = {"background", "background", ST_WORDS, .words = background_words,
                       STATE(transparent)},
    [ST_SAMPLE_TEMP] = {"sample-temperature", "sample-temperature", ST_FLOAT, .flo = 0.0,
                        .fhi = 100.0,
                        .must = "a decimal number from {lo} (the most likely) to {hi}", .def = 1.0,
                        STATE(write.temperature)},
    [ST_TOP_K] = {"top-k", "top-k", ST_INT, 1, INT_MAX, .zero = "off",
                  .must = "off or a whole number from {lo}", STATE(write.top_k)},
    [ST_TOP_P] = {"top-p", "top-p", ST_FLOAT, .flo = 0.0, .fhi = 1.0,
                  .must = "a decimal number from {lo} to {hi} (0 and 1: every token)", .def = 1.0,
                  STATE(write.top_p)},
    [ST_SAMPLE_SEED] = {"sample-seed", "seed", ST_U64, 1, LONG_MAX, .must = FROM_1,
                        .def = MHA_DEFAULT_SEED, STATE(write.seed)},
    [ST_WRITE_LENGTH] = {"write-length", NULL, ST_INT, 1, APP_WRITE_LENGTH_MAX, .must = WHOLE,
                         .def = APP_WRITE_LENGTH, STATE(write.length)},
    [ST_WRITE_PACE] = {"write-pace", NULL, ST_INT, APP_WRITE_PACE_MIN, APP_WRITE_PACE_MAX,
                       .must = "milliseconds a token, {lo} to {hi}", .def = APP_WRITE_PACE_MS,
                       STATE(write.pace_ms)},
    [ST_KV] = {"kv", "kv-heads", ST_INT, 1, MHA_MAX_D_MODEL, .zero = "own",
               .must = "own or a whole number that divides h", CFG(kv_heads)},
    [ST_MODEL_KV] = {"model-kv", "kv-heads", ST_INT, 1, MHA_MAX_D_MODEL, .zero = "own",
                     .must = "own or a whole number that divides the model's K/V heads"},
};

/* The names one slot has besides its row's. */
static const struct {
    const char *name;
    int id;
} other_names[] = {{"text", ST_TEXT}, {"text-file", ST_TEXT}, {"pinned-text", ST_PIN_TEXT}};

int stg_find(const char *name) {
    for (size_t i = 0; i < sizeof other_names / sizeof other_names[0]; i++)
        if (strcmp(name, other_names[i].name) == 0) return other_names[i].id;
    for (int i = 0; i < ST_COUNT; i++)
        if (strcmp(name, stg_rows[i].name) == 0) return i;
    return -1;
}

/* ---- parsing one value --------------------------------------------------------------- */

/* The row's "must be ..." text: its own with {lo} and {hi} filled in, or its words. */
static void must_text(const st_row *r, char *buf, size_t len) {
    out_buf o = {buf, len, 0};
    buf[0] = '\0';
    if (r->kind == ST_BOOL) {
        stg_put(&o, "on or off");
        return;
    }
    if (!r->must) { /* "a, b or c" from the words */
        int n = 0;
        while (r->words[n]) n++;
        for (int i = 0; i < n; i++)
            stg_put(&o, "%s%.*s",
                    i == 0       ? ""
                    : i == n - 1 ? " or "
                                 : ", ",
                    (int)strcspn(r->words[i], "|"), r->words[i]);
        return;
    }
    for (const char *p = r->must; *p; p++) {
        const int lo = strncmp(p, "{lo}", 4) == 0, hi = strncmp(p, "{hi}", 4) == 0;
        if (!lo && !hi) {
            stg_put_char(&o, *p);
            continue;
        }
        if (r->kind == ST_FLOAT)
            stg_put(&o, "%g", lo ? r->flo : r->fhi);
        else
            stg_put(&o, "%ld", lo ? r->lo : r->hi);
        p += 3;
    }
}

/* v as one of the row's words ("a|b": either means the same); -1 none. */
static int find_word(const st_row *r, const char *v) {
    for (int i = 0; r->words[i]; i++)
        for (const char *w = r->words[i]; *w;) {
            const size_t n = strcspn(w, "|");
            if (strlen(v) == n && strncmp(v, w, n) == 0) return i;
            w += n + (w[n] == '|');
        }
    return -1;
}

/* v into the row's value; 0, or -1 (the caller says what it must be). */
static int parse_value(const st_row *r, const char *v, st_value *out) {
    long k = 0;
    double f = 0.0;
    switch (r->kind) {
    case ST_INT:
        if (r->zero && strcmp(v, r->zero) == 0) return out->i = 0, 0;
        if (cli_parse_int(v, r->lo, r->hi, &k) != 0) return -1;
        return out->i = k, 0;
    case ST_U64:
        if (cli_parse_int(v, r->lo, r->hi, &k) != 0) return -1;
        return out->u = (uint64_t)k, 0;
    case ST_BOOL:
        if (strcmp(v, "on") && strcmp(v, "off")) return -1;
        return out->i = v[1] == 'n', 0;
    case ST_WORDS: return (out->i = find_word(r, v)) < 0 ? -1 : 0;
    case ST_FLOAT:
        if (cli_parse_float(v, r->flo, r->fhi, &f) != 0) return -1;
        return out->f = (double)(float)f, 0;
    default: return -1;
    }
}

int app_settings_set(app_settings *st, const char *name, const char *v, const char *base_dir,
                     char *err, size_t errlen) {
    const int id = stg_find(name);
    if (id < 0) {
        snprintf(err, errlen, "unknown setting '%s' (the README's \"View files\" lists them)",
                 name);
        return -1;
    }
    const st_row *r = &stg_rows[id];
    if (r->kind == ST_SPECIAL) {
        if (r->sp->parse(st, name, v, base_dir, err, errlen) != 0) return -1;
    } else if (parse_value(r, v, &st->v[id]) != 0) {
        char must[160];
        must_text(r, must, sizeof must);
        snprintf(err, errlen, "%s = %s: must be %s", name, v, must);
        return -1;
    }
    st->set[id] = 1;
    st->line[id] = 0;
    return 0;
}

/* ---- the set --------------------------------------------------------------------------- */

app_settings *app_settings_create(void) {
    return calloc(1, sizeof(app_settings));
}

void app_settings_free(app_settings *st) {
    if (!st) return;
    free(st->text);
    free(st->pin_text);
    free(st);
}

app_settings *app_settings_clone(const app_settings *st) {
    app_settings *c = app_settings_create();
    if (!c) return NULL;
    *c = *st;
    c->text = c->pin_text = NULL;
    if ((st->text && !(c->text = strdup(st->text))) ||
        (st->pin_text && !(c->pin_text = strdup(st->pin_text)))) {
        app_settings_free(c);
        return NULL;
    }
    return c;
}

static void copy_one(app_settings *dst, const app_settings *src, int id) {
    const st_special *sp = stg_rows[id].sp;
    if (sp && sp->copy)
        sp->copy(dst, src);
    else
        dst->v[id] = src->v[id];
    dst->set[id] = 1;
    dst->line[id] = src->line[id];
}

void app_settings_merge(app_settings *dst, const app_settings *src) {
    for (int i = 0; i < ST_COUNT; i++)
        if (src->set[i]) copy_one(dst, src, i);
    if (src->origin[0]) memcpy(dst->origin, src->origin, sizeof dst->origin);
}

int app_settings_count(const app_settings *st) {
    int n = 0;
    for (int i = 0; i < ST_COUNT; i++) n += st->set[i];
    return n;
}

/* 1 if setting id has the same value in a and b (both set). */
static int same_one(const app_settings *a, const app_settings *b, int id) {
    const st_row *r = &stg_rows[id];
    if (r->sp && r->sp->same) return r->sp->same(a, b);
    switch (r->kind) {
    case ST_U64: return a->v[id].u == b->v[id].u;
    case ST_FLOAT: return a->v[id].f == b->v[id].f;
    default: return a->v[id].i == b->v[id].i;
    }
}

int app_settings_equal(const app_settings *a, const app_settings *b) {
    for (int i = 0; i < ST_COUNT; i++) {
        if (a->set[i] != b->set[i]) return 0;
        if (a->set[i] && !same_one(a, b, i)) return 0;
    }
    return 1;
}

int app_settings_has(const app_settings *st, const char *name) {
    const int id = stg_find(name);
    if (id < 0 || !st->set[id]) return 0;
    if (id == ST_TEXT) /* which of the three it is */
        return strcmp(name, "sample") == 0 ? st->src == SRC_SAMPLE
               : strcmp(name, "text") == 0 ? st->src == SRC_TEXT
                                           : st->src == SRC_TEXT_FILE;
    return 1;
}

void app_settings_unset(app_settings *st, const char *name) {
    const int id = stg_find(name);
    if (id < 0) return;
    st->set[id] = 0;
    st->line[id] = 0;
}

void app_settings_defaults(app_settings *st) {
    free(st->text);
    free(st->pin_text);
    memset(st, 0, sizeof *st);
    for (int i = 0; i < ST_COUNT; i++) {
        const st_row *r = &stg_rows[i];
        if (r->kind == ST_FLOAT)
            st->v[i].f = r->def;
        else if (r->kind == ST_U64)
            st->v[i].u = (uint64_t)r->def;
        else
            st->v[i].i = (long)r->def;
        st->set[i] = 1;
    }
    st->src = SRC_SAMPLE;
    st->sample = 1;
    SV(st, ST_ZOOM) = (long)(view_zoom_for_size(APP_DEFAULT_W, APP_DEFAULT_H) * 100.0f + 0.5f);
}

/* ---- writing ---------------------------------------------------------------------------- */

static void put_value(out_buf *o, const app_settings *st, int id) {
    const st_row *r = &stg_rows[id];
    const st_value *v = &st->v[id];
    switch (r->kind) {
    case ST_SPECIAL: r->sp->put(o, st); break;
    case ST_INT:
        if (r->zero && !v->i)
            stg_put(o, "%s", r->zero);
        else
            stg_put(o, "%ld", v->i);
        break;
    case ST_U64: stg_put(o, "%llu", (unsigned long long)v->u); break;
    case ST_BOOL: stg_put(o, "%s", v->i ? "on" : "off"); break;
    case ST_WORDS: stg_put(o, "%.*s", (int)strcspn(r->words[v->i], "|"), r->words[v->i]); break;
    case ST_FLOAT: stg_put_float(o, (float)v->f); break;
    }
}

static const char *line_name(const app_settings *st, int id) {
    const st_row *r = &stg_rows[id];
    return r->sp && r->sp->name ? r->sp->name(st) : r->name;
}

size_t app_settings_write(const app_settings *st, const app_settings *base, char *buf, size_t len) {
    out_buf o = {buf, len, 0};
    if (len) buf[0] = '\0';
    for (int i = 0; i < ST_COUNT; i++) {
        if (!st->set[i]) continue;
        if (base && base->set[i] && same_one(st, base, i)) continue;
        stg_put(&o, "%s = ", line_name(st, i));
        put_value(&o, st, i);
        stg_put_char(&o, '\n');
    }
    return o.used;
}

char *app_settings_get(const app_settings *st, const char *name, char *buf, size_t len) {
    if (len) buf[0] = '\0';
    if (!app_settings_has(st, name)) return buf;
    out_buf o = {buf, len, 0};
    put_value(&o, st, stg_find(name));
    return buf;
}

char *app_settings_where(const app_settings *st, const char *name, char *buf, size_t len) {
    const int id = stg_find(name);
    if (id >= 0 && st->origin[0] && st->line[id] > 0)
        snprintf(buf, len, "%s:%d: %s = ", st->origin, st->line[id], name);
    else
        snprintf(buf, len, "%s = ", name);
    return buf;
}

void app_settings_shape(const app_settings *st, int *h, int *d_model) {
    if (!*h && !*d_model) return; /* the file's own pair: apply checks it, naming its line */
    if (!*h && st->set[ST_H]) *h = (int)SV(st, ST_H);
    if (!*d_model && st->set[ST_D]) *d_model = (int)SV(st, ST_D);
}

void app_settings_origin(app_settings *st, const char *file) {
    snprintf(st->origin, sizeof st->origin, "%s", file ? file : "");
}

void app_settings_line(app_settings *st, const char *name, int line) {
    const int id = stg_find(name);
    if (id >= 0) st->line[id] = line;
}

int app_settings_of_option(const char *option, const char **names, int max) {
    int n = 0;
    const size_t len = strlen(option);
    for (int i = 0; i < ST_COUNT; i++)
        for (const char *p = stg_rows[i].options; p && *p;) {
            const size_t w = strcspn(p, " ");
            if (w == len && strncmp(p, option, len) == 0 && n < max) names[n++] = stg_rows[i].name;
            p += w + (p[w] == ' ');
        }
    return n;
}
