/* settings.c: a view as named settings (settings.h): parsing each value,
 * writing its canonical form, reading every setting from a state (capture) and
 * making a state show them (apply). apply checks every value against the state it
 * will be applied to before it changes anything, then changes the state through
 * the same paths the keys take (app_change_cfg, app_recompute, app_compare_start),
 * so a recompute that goes to the jobs layer goes there as a key's would. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "settings.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "samples.h"
#include "state_internal.h"
#include "text_file.h"
#include "values.h"

/* training mode and a loaded model (below apply) */
static void capture_more(const app_state *s, app_settings *st);
static int check_more(const app_state *s, const app_settings *st, char *err, size_t errlen);
static void apply_more(app_state *s, const app_settings *st);
/* a loaded model: what apply will do, decided (and the model read) before anything changes */
typedef struct {
    int act; /* 0 nothing, 1 show g, 2 ask the jobs layer, 3 close it, 4 another layer or split */
    app_gpt *g;
    int layer, h, overview;
} model_plan;
static int model_is_new(const app_state *s, const app_settings *st);
static int model_check(const app_state *s, const app_settings *st, const char *text, model_plan *mp,
                       char *err, size_t errlen);
static void model_apply(app_state *s, const app_settings *st, model_plan *mp, const char *text);

/* The settings, in the order the writer writes them. */
typedef enum {
    ST_TEXT = 0, /* sample | text | text-file: one slot */
    ST_H,
    ST_D,
    ST_SEED,
    ST_MASK,
    ST_PAD,
    ST_SCALE,
    ST_TEMP,
    ST_WEIGHTS,
    ST_ABLATE,
    ST_FOCUS,
    ST_STAGE,
    ST_VALUES,
    ST_CONTRAST,
    ST_COLORMAP,
    ST_THEME,
    ST_ZOOM,
    ST_PRESENT,
    ST_PAGE,
    ST_PANELS,
    ST_DIFF,
    ST_COMPARE,
    ST_PIN_TEXT, /* pinned-sample | pinned-text: the pinned view's own text */
    ST_PIN_ABLATE,
    ST_PINNED_PAGE,
    ST_TRAIN,
    ST_TRAIN_H,
    ST_TRAIN_D,
    ST_TRAIN_SEED,
    ST_TRAIN_STEPS,
    ST_TRAIN_LAYERS,
    ST_TRAIN_MLP,
    ST_TRAIN_LAYER,
    ST_MODEL,
    ST_LAYER,
    ST_MODEL_H,
    ST_OVERVIEW,
    ST_HEAD_VIEW, /* head-view = heatmap | lines (key H) */
    ST_COUNT
} st_id;

static const char *const st_names[ST_COUNT] = {
    "sample",       "h",           "d_model",     "seed",          "mask",          "pad",
    "scale",        "temperature", "weights",     "ablate",        "focus",         "stage",
    "values",       "contrast",    "colormap",    "theme",         "zoom",          "present",
    "page",         "panels",      "diff",        "compare",       "pinned-sample", "pinned-ablate",
    "pinned-page",  "train",       "train-h",     "train-d_model", "train-seed",    "train-steps",
    "train-layers", "train-mlp",   "train-layer", "model",         "layer",         "model-h",
    "overview",     "head-view"};

enum { SRC_SAMPLE = 1, SRC_TEXT, SRC_TEXT_FILE };

#define STAGE_MAX 9 /* lesson.c's STEP_COUNT: stages 1..9, 0 the whole head */

struct app_settings {
    unsigned char set[ST_COUNT];
    int line[ST_COUNT]; /* where each was read (0: not from a file) */
    char origin[1024];  /* the file they were read from, "" none */
    /* the text */
    int src; /* SRC_* */
    int sample;
    char *text;           /* SRC_TEXT, SRC_TEXT_FILE: the text itself (malloc'd) */
    char text_path[1024]; /* SRC_TEXT_FILE: as written in the file */
    /* the model's configuration */
    int h, d_model;
    uint64_t seed;
    int mask, pad, no_scale;
    float temperature;
    int weights;
    uint64_t ablate[MHA_ABLATE_WORDS];
    /* how it is shown */
    int focus, stage, values, contrast, cmap, theme, zoom, present, page, panels, diff;
    /* compare: 0 off, 1 pinned; compare_set the CLI_CMP_* it changes (0: as the live one) */
    int compare;
    unsigned compare_set;
    mha_config compare_cfg;
    int pin_src; /* 0: the live text; SRC_SAMPLE pin_sample; SRC_TEXT pin_text */
    int pin_sample;
    char *pin_text;
    uint64_t pin_ablate[MHA_ABLATE_WORDS];
    int pinned_page;
    /* training mode: train 0 off, else 1 + the task */
    int train, train_h, train_d, train_layers, train_mlp, train_layer;
    uint64_t train_seed;
    long train_steps;
    /* a loaded model: "" off */
    char model[4096];
    int layer, model_h, overview;
    int head_view; /* VIEW_HEAD_* */
};

/* ---- values ------------------------------------------------------------------------- */

static const char *const contrast_words[] = {"fixed", "row", "log"};

static int find_name(const char *name) {
    if (strcmp(name, "text") == 0 || strcmp(name, "text-file") == 0) return ST_TEXT;
    if (strcmp(name, "pinned-text") == 0) return ST_PIN_TEXT;
    for (int i = 0; i < ST_COUNT; i++)
        if (strcmp(name, st_names[i]) == 0) return i;
    return -1;
}

static int on_off(const char *v, int *out) {
    if (strcmp(v, "on") == 0) return *out = 1, 0;
    if (strcmp(v, "off") == 0) return *out = 0, 0;
    return -1;
}

static int parse_int(const char *v, long lo, long hi, long *out) {
    return cli_parse_int(v, lo, hi, out);
}

/* Unescapes a text value: \n \t \r \\ (and \" ); a value wrapped in double quotes
   keeps its spaces. Returns malloc'd text, or NULL with why. */
static char *unescape_text(const char *v, const char **why) {
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') v++, n -= 2;
    char *out = malloc(n + 1);
    if (!out) {
        *why = "out of memory";
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == '\\') {
            if (i + 1 >= n) {
                free(out);
                *why = "ends with a lone \\ (write \\\\ for a backslash)";
                return NULL;
            }
            char e = v[++i];
            c = e == 'n'    ? '\n'
                : e == 't'  ? '\t'
                : e == 'r'  ? '\r'
                : e == '\\' ? '\\'
                : e == '"'  ? '"'
                            : 0;
            if (!c) {
                free(out);
                *why = "has an unknown escape (\\n, \\t, \\r, \\\\ and \\\" are known)";
                return NULL;
            }
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

/* ablate = none | 2,5 (1-based heads, each once). */
static int parse_heads_into(const char *v, uint64_t *bits, char *err, size_t errlen) {
    if (strcmp(v, "none") == 0) return 0;
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        char item[16];
        long k = 0;
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "ablate = %s: must be none or heads such as 2,5", v);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_int(item, 1, MHA_MAX_D_MODEL, &k) != 0) {
            snprintf(err, errlen, "ablate = %s: '%s' is not a head from 1", v, item);
            return -1;
        }
        if (bits[(k - 1) / 64] >> ((k - 1) % 64) & 1) {
            snprintf(err, errlen, "ablate = %s: head %ld is listed twice", v, k);
            return -1;
        }
        bits[(k - 1) / 64] |= UINT64_C(1) << ((k - 1) % 64);
        if (!p[len]) return 0;
        p += len + 1;
    }
}

static int parse_heads(const char *v, uint64_t *bits, char *err, size_t errlen) {
    uint64_t got[MHA_ABLATE_WORDS] = {0};
    if (parse_heads_into(v, got, err, errlen) != 0) return -1;
    memcpy(bits, got, sizeof got);
    return 0;
}

/* The keys of --compare SPEC, in the order the writer writes them (cli_compute.c's). */
static const struct {
    const char *key;
    unsigned bit;
} cmp_keys[] = {{"h", CLI_CMP_H},
                {"d_model", CLI_CMP_D},
                {"seed", CLI_CMP_SEED},
                {"mask", CLI_CMP_MASK},
                {"scale", CLI_CMP_SCALE},
                {"temperature", CLI_CMP_TEMPERATURE},
                {"weights", CLI_CMP_WEIGHTS},
                {"pad", CLI_CMP_PAD}};
#define CMP_KEYS ((int)(sizeof cmp_keys / sizeof cmp_keys[0]))

/* compare = off | on | SPEC: SPEC parsed as --compare's (values.h), so the two
   accept exactly the same SPECs. */
static int parse_compare(app_settings *st, const char *v, char *err, size_t errlen) {
    if (strcmp(v, "off") == 0 || strcmp(v, "on") == 0) {
        st->compare = v[1] == 'n';
        st->compare_set = 0;
        memset(&st->compare_cfg, 0, sizeof st->compare_cfg);
        return 0;
    }
    unsigned set = 0;
    mha_config cfg;
    char why[512];
    if (cli_parse_compare_spec(v, &set, &cfg, why, sizeof why) != 0) {
        snprintf(err, errlen, "compare = %s: %s", v, why);
        return -1;
    }
    st->compare = 1;
    st->compare_set = set;
    st->compare_cfg = cfg;
    return 0;
}

int app_settings_set(app_settings *st, const char *name, const char *v, const char *base_dir,
                     char *err, size_t errlen) {
    const int id = find_name(name);
    long k = 0;
    double f = 0.0;
    int b = 0;
    if (id < 0) {
        snprintf(err, errlen, "unknown setting '%s' (the README's \"View files\" lists them)",
                 name);
        return -1;
    }
#define BAD(...)                                                                                   \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return -1;                                                                                 \
    } while (0)
    switch (id) {
    case ST_TEXT:
        if (strcmp(name, "sample") == 0) {
            if (parse_int(v, 1, samples_count(), &k) != 0)
                BAD("sample = %s: must be a built-in sample from 1 to %d", v, samples_count());
            free(st->text);
            st->text = NULL;
            st->src = SRC_SAMPLE;
            st->sample = (int)k;
        } else if (strcmp(name, "text") == 0) {
            const char *why = NULL;
            char *t = unescape_text(v, &why);
            if (!t) BAD("text: %s", why);
            if (!t[0]) {
                free(t);
                BAD("text is empty (sample = 1 shows the first sample)");
            }
            free(st->text);
            st->text = t;
            st->src = SRC_TEXT;
            st->sample = 0;
        } else { /* text-file */
            if (!v[0]) BAD("text-file: needs a file name");
            char path[2048];
            if (v[0] == '/' || !base_dir || !base_dir[0] || strcmp(base_dir, ".") == 0 ||
                strcmp(v, "-") == 0)
                snprintf(path, sizeof path, "%s", v);
            else
                snprintf(path, sizeof path, "%s/%s", base_dir, v);
            char *t = NULL, why[1200];
            if (text_file_read_regular(path, &t, why, sizeof why) != 0) /* never waits */
                BAD("text-file: %s", why);
            free(st->text);
            st->text = t;
            st->src = SRC_TEXT_FILE;
            st->sample = 0;
            snprintf(st->text_path, sizeof st->text_path, "%s", v);
        }
        break;
    case ST_H:
    case ST_D:
        if (parse_int(v, 1, MHA_MAX_D_MODEL, &k) != 0)
            BAD("%s = %s: must be a whole number from 1 to %d", name, v, MHA_MAX_D_MODEL);
        *(id == ST_H ? &st->h : &st->d_model) = (int)k;
        break;
    case ST_SEED:
        if (parse_int(v, 1, LONG_MAX, &k) != 0) BAD("seed = %s: must be a whole number from 1", v);
        st->seed = (uint64_t)k;
        break;
    case ST_MASK:
        if (strcmp(v, "none") && strcmp(v, "causal")) BAD("mask = %s: must be none or causal", v);
        st->mask = v[0] == 'c' ? MHA_MASK_CAUSAL : MHA_MASK_NONE;
        break;
    case ST_PAD:
        if (strcmp(v, "off") == 0)
            st->pad = 0;
        else if (parse_int(v, 1, MHA_MAX_N, &k) == 0)
            st->pad = (int)k;
        else
            BAD("pad = %s: must be off or a whole number up to %d", v, MHA_MAX_N);
        break;
    case ST_SCALE:
        if (on_off(v, &b) != 0) BAD("scale = %s: must be on or off", v);
        st->no_scale = !b;
        break;
    case ST_TEMP:
        if (cli_parse_float(v, MHA_MIN_TEMPERATURE, MHA_MAX_TEMPERATURE, &f) != 0)
            BAD("temperature = %s: must be a decimal number from %g to %g", v,
                (double)MHA_MIN_TEMPERATURE, (double)MHA_MAX_TEMPERATURE);
        st->temperature = (float)f;
        break;
    case ST_WEIGHTS:
        if (strcmp(v, "random") == 0)
            st->weights = MHA_WEIGHTS_RANDOM;
        else if (strcmp(v, "designed") == 0 || strcmp(v, "patterns") == 0)
            st->weights = MHA_WEIGHTS_PATTERNS;
        else
            BAD("weights = %s: must be random or designed", v);
        break;
    case ST_ABLATE:
        if (parse_heads(v, st->ablate, err, errlen) != 0) return -1;
        break;
    case ST_FOCUS:
        if (strcmp(v, "none") == 0)
            st->focus = 0;
        else if (parse_int(v, 1, MHA_MAX_D_MODEL, &k) == 0)
            st->focus = (int)k;
        else
            BAD("focus = %s: must be none or a head from 1", v);
        break;
    case ST_STAGE:
        if (parse_int(v, 0, STAGE_MAX, &k) != 0)
            BAD("stage = %s: must be a stage from 0 (the whole head) to %d", v, STAGE_MAX);
        st->stage = (int)k;
        break;
    case ST_VALUES:
    case ST_PRESENT:
    case ST_PANELS:
    case ST_DIFF:
    case ST_TRAIN_MLP:
    case ST_OVERVIEW:
        if (on_off(v, &b) != 0) BAD("%s = %s: must be on or off", name, v);
        *(id == ST_VALUES     ? &st->values
          : id == ST_PRESENT  ? &st->present
          : id == ST_PANELS   ? &st->panels
          : id == ST_DIFF     ? &st->diff
          : id == ST_OVERVIEW ? &st->overview
                              : &st->train_mlp) = b;
        break;
    case ST_HEAD_VIEW:
        if (strcmp(v, "heatmap") && strcmp(v, "lines"))
            BAD("head-view = %s: must be heatmap or lines", v);
        st->head_view = v[0] == 'l' ? VIEW_HEAD_LINES : VIEW_HEAD_HEATMAP;
        break;
    case ST_CONTRAST:
        for (b = 0; b < 3 && strcmp(v, contrast_words[b]) != 0; b++) continue;
        if (b == 3) BAD("contrast = %s: must be fixed, row or log", v);
        st->contrast = b;
        break;
    case ST_COLORMAP:
        b = cmap_find(v);
        if (b < 0) BAD("colormap = %s: must be one of %s", v, cmap_names_list());
        st->cmap = b;
        break;
    case ST_THEME:
        if (strcmp(v, "light") && strcmp(v, "dark")) BAD("theme = %s: must be light or dark", v);
        st->theme = v[0] == 'd';
        break;
    case ST_ZOOM:
        if (parse_int(v, (long)(APP_ZOOM_MIN * 100.0f + 0.5f), (long)(APP_ZOOM_MAX * 100.0f + 0.5f),
                      &k) != 0)
            BAD("zoom = %s: must be a percentage from %d to %d", v,
                (int)(APP_ZOOM_MIN * 100.0f + 0.5f), (int)(APP_ZOOM_MAX * 100.0f + 0.5f));
        st->zoom = (int)k;
        break;
    case ST_PAGE:
    case ST_PINNED_PAGE:
    case ST_LAYER:
    case ST_TRAIN_LAYER:
        if (parse_int(v, 1, INT_MAX, &k) != 0)
            BAD("%s = %s: must be a whole number from 1", name, v);
        *(id == ST_PAGE          ? &st->page
          : id == ST_PINNED_PAGE ? &st->pinned_page
          : id == ST_LAYER       ? &st->layer
                                 : &st->train_layer) = (int)k;
        break;
    case ST_COMPARE:
        if (parse_compare(st, v, err, errlen) != 0) return -1;
        break;
    case ST_PIN_TEXT:
        if (strcmp(name, "pinned-sample") == 0) {
            if (strcmp(v, "live") == 0) {
                st->pin_src = 0;
            } else if (parse_int(v, 1, samples_count(), &k) == 0) {
                st->pin_src = SRC_SAMPLE;
                st->pin_sample = (int)k;
            } else {
                BAD("pinned-sample = %s: must be live (the live view's text) or a sample from 1 "
                    "to %d",
                    v, samples_count());
            }
            free(st->pin_text);
            st->pin_text = NULL;
        } else {
            const char *why = NULL;
            char *t = unescape_text(v, &why);
            if (!t) BAD("pinned-text: %s", why);
            if (!t[0]) {
                free(t);
                BAD("pinned-text is empty (pinned-sample = live pins the live text)");
            }
            free(st->pin_text);
            st->pin_text = t;
            st->pin_src = SRC_TEXT;
            st->pin_sample = 0;
        }
        break;
    case ST_PIN_ABLATE:
        if (parse_heads(v, st->pin_ablate, err, errlen) != 0) return -1;
        break;
    case ST_TRAIN:
        if (strcmp(v, "off") == 0) {
            st->train = 0;
        } else {
            b = learn_task_find(v);
            if (b < 0) {
                char list[256] = "";
                for (int i = 0; i < LEARN_TASK_COUNT; i++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                             learn_task((learn_task_id)i)->name);
                BAD("train = %s: must be off or a task (%s)", v, list);
            }
            st->train = b + 1;
        }
        break;
    case ST_TRAIN_H:
        if (parse_int(v, 1, 64, &k) != 0)
            BAD("train-h = %s: must be a whole number from 1 to 64", v);
        st->train_h = (int)k;
        break;
    case ST_TRAIN_D:
        if (parse_int(v, 1, 256, &k) != 0)
            BAD("train-d_model = %s: must be a whole number from 1 to 256", v);
        st->train_d = (int)k;
        break;
    case ST_TRAIN_SEED:
        if (parse_int(v, 1, LONG_MAX, &k) != 0)
            BAD("train-seed = %s: must be a whole number from 1", v);
        st->train_seed = (uint64_t)k;
        break;
    case ST_TRAIN_STEPS:
        if (parse_int(v, 0, 100000000L, &k) != 0)
            BAD("train-steps = %s: must be a whole number from 0 (train on) to 100000000", v);
        st->train_steps = k;
        break;
    case ST_TRAIN_LAYERS:
        if (parse_int(v, 1, LEARN_MAX_LAYERS, &k) != 0)
            BAD("train-layers = %s: must be 1 or %d", v, LEARN_MAX_LAYERS);
        st->train_layers = (int)k;
        break;
    case ST_MODEL:
        if (!v[0]) BAD("model: must be off or a model's folder or .safetensors file");
        if (strcmp(v, "off") == 0) {
            st->model[0] = '\0';
        } else {
            if (v[0] == '/' || !base_dir || !base_dir[0] || strcmp(base_dir, ".") == 0)
                snprintf(st->model, sizeof st->model, "%s", v);
            else
                snprintf(st->model, sizeof st->model, "%s/%s", base_dir, v);
        }
        break;
    case ST_MODEL_H:
        if (strcmp(v, "own") == 0)
            st->model_h = 0;
        else if (parse_int(v, 1, MHA_MAX_D_MODEL, &k) == 0)
            st->model_h = (int)k;
        else
            BAD("model-h = %s: must be own or a whole number from 1", v);
        break;
    default: BAD("unknown setting '%s'", name);
    }
#undef BAD
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

/* Copies setting id's value from src to dst (the text too). */
static void copy_one(app_settings *dst, const app_settings *src, int id) {
    switch (id) {
    case ST_TEXT:
        free(dst->text);
        dst->text = src->text ? strdup(src->text) : NULL;
        dst->src = src->src;
        dst->sample = src->sample;
        memcpy(dst->text_path, src->text_path, sizeof dst->text_path);
        break;
    case ST_H: dst->h = src->h; break;
    case ST_D: dst->d_model = src->d_model; break;
    case ST_SEED: dst->seed = src->seed; break;
    case ST_MASK: dst->mask = src->mask; break;
    case ST_PAD: dst->pad = src->pad; break;
    case ST_SCALE: dst->no_scale = src->no_scale; break;
    case ST_TEMP: dst->temperature = src->temperature; break;
    case ST_WEIGHTS: dst->weights = src->weights; break;
    case ST_ABLATE: memcpy(dst->ablate, src->ablate, sizeof dst->ablate); break;
    case ST_FOCUS: dst->focus = src->focus; break;
    case ST_STAGE: dst->stage = src->stage; break;
    case ST_VALUES: dst->values = src->values; break;
    case ST_CONTRAST: dst->contrast = src->contrast; break;
    case ST_COLORMAP: dst->cmap = src->cmap; break;
    case ST_THEME: dst->theme = src->theme; break;
    case ST_ZOOM: dst->zoom = src->zoom; break;
    case ST_PRESENT: dst->present = src->present; break;
    case ST_PAGE: dst->page = src->page; break;
    case ST_PANELS: dst->panels = src->panels; break;
    case ST_DIFF: dst->diff = src->diff; break;
    case ST_COMPARE:
        dst->compare = src->compare;
        dst->compare_set = src->compare_set;
        dst->compare_cfg = src->compare_cfg;
        break;
    case ST_PIN_TEXT:
        free(dst->pin_text);
        dst->pin_text = src->pin_text ? strdup(src->pin_text) : NULL;
        dst->pin_src = src->pin_src;
        dst->pin_sample = src->pin_sample;
        break;
    case ST_PIN_ABLATE: memcpy(dst->pin_ablate, src->pin_ablate, sizeof dst->pin_ablate); break;
    case ST_PINNED_PAGE: dst->pinned_page = src->pinned_page; break;
    case ST_TRAIN: dst->train = src->train; break;
    case ST_TRAIN_H: dst->train_h = src->train_h; break;
    case ST_TRAIN_D: dst->train_d = src->train_d; break;
    case ST_TRAIN_SEED: dst->train_seed = src->train_seed; break;
    case ST_TRAIN_STEPS: dst->train_steps = src->train_steps; break;
    case ST_TRAIN_LAYERS: dst->train_layers = src->train_layers; break;
    case ST_TRAIN_MLP: dst->train_mlp = src->train_mlp; break;
    case ST_TRAIN_LAYER: dst->train_layer = src->train_layer; break;
    case ST_MODEL: memcpy(dst->model, src->model, sizeof dst->model); break;
    case ST_LAYER: dst->layer = src->layer; break;
    case ST_MODEL_H: dst->model_h = src->model_h; break;
    case ST_OVERVIEW: dst->overview = src->overview; break;
    case ST_HEAD_VIEW: dst->head_view = src->head_view; break;
    default: break;
    }
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
    switch (id) {
    case ST_TEXT:
        if ((a->src == SRC_SAMPLE) != (b->src == SRC_SAMPLE)) return 0;
        if (a->src == SRC_SAMPLE) return a->sample == b->sample;
        return a->text && b->text && strcmp(a->text, b->text) == 0;
    case ST_H: return a->h == b->h;
    case ST_D: return a->d_model == b->d_model;
    case ST_SEED: return a->seed == b->seed;
    case ST_MASK: return a->mask == b->mask;
    case ST_PAD: return a->pad == b->pad;
    case ST_SCALE: return a->no_scale == b->no_scale;
    case ST_TEMP: return a->temperature == b->temperature;
    case ST_WEIGHTS: return a->weights == b->weights;
    case ST_ABLATE: return memcmp(a->ablate, b->ablate, sizeof a->ablate) == 0;
    case ST_FOCUS: return a->focus == b->focus;
    case ST_STAGE: return a->stage == b->stage;
    case ST_VALUES: return a->values == b->values;
    case ST_CONTRAST: return a->contrast == b->contrast;
    case ST_COLORMAP: return a->cmap == b->cmap;
    case ST_THEME: return a->theme == b->theme;
    case ST_ZOOM: return a->zoom == b->zoom;
    case ST_PRESENT: return a->present == b->present;
    case ST_PAGE: return a->page == b->page;
    case ST_PANELS: return a->panels == b->panels;
    case ST_DIFF: return a->diff == b->diff;
    case ST_COMPARE: {
        if (a->compare != b->compare || a->compare_set != b->compare_set) return 0;
        const mha_config *x = &a->compare_cfg, *y = &b->compare_cfg;
        const unsigned s = a->compare_set;
        return (!(s & CLI_CMP_H) || x->h == y->h) &&
               (!(s & CLI_CMP_D) || x->d_model == y->d_model) &&
               (!(s & CLI_CMP_SEED) || x->seed == y->seed) &&
               (!(s & CLI_CMP_MASK) || x->mask == y->mask) &&
               (!(s & CLI_CMP_SCALE) || x->no_scale == y->no_scale) &&
               (!(s & CLI_CMP_TEMPERATURE) || x->temperature == y->temperature) &&
               (!(s & CLI_CMP_WEIGHTS) || x->weights == y->weights) &&
               (!(s & CLI_CMP_PAD) || x->pad == y->pad);
    }
    case ST_PIN_TEXT:
        if (a->pin_src != b->pin_src) return 0;
        if (a->pin_src == SRC_SAMPLE) return a->pin_sample == b->pin_sample;
        if (a->pin_src == SRC_TEXT)
            return a->pin_text && b->pin_text && strcmp(a->pin_text, b->pin_text) == 0;
        return 1;
    case ST_PIN_ABLATE: return memcmp(a->pin_ablate, b->pin_ablate, sizeof a->pin_ablate) == 0;
    case ST_PINNED_PAGE: return a->pinned_page == b->pinned_page;
    case ST_TRAIN: return a->train == b->train;
    case ST_TRAIN_H: return a->train_h == b->train_h;
    case ST_TRAIN_D: return a->train_d == b->train_d;
    case ST_TRAIN_SEED: return a->train_seed == b->train_seed;
    case ST_TRAIN_STEPS: return a->train_steps == b->train_steps;
    case ST_TRAIN_LAYERS: return a->train_layers == b->train_layers;
    case ST_TRAIN_MLP: return a->train_mlp == b->train_mlp;
    case ST_TRAIN_LAYER: return a->train_layer == b->train_layer;
    case ST_MODEL: return strcmp(a->model, b->model) == 0;
    case ST_LAYER: return a->layer == b->layer;
    case ST_MODEL_H: return a->model_h == b->model_h;
    case ST_OVERVIEW: return a->overview == b->overview;
    case ST_HEAD_VIEW: return a->head_view == b->head_view;
    default: return 1;
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
    const int id = find_name(name);
    if (id < 0 || !st->set[id]) return 0;
    if (id == ST_TEXT) /* which of the three it is */
        return strcmp(name, "sample") == 0 ? st->src == SRC_SAMPLE
               : strcmp(name, "text") == 0 ? st->src == SRC_TEXT
                                           : st->src == SRC_TEXT_FILE;
    return 1;
}

void app_settings_unset(app_settings *st, const char *name) {
    const int id = find_name(name);
    if (id < 0) return;
    st->set[id] = 0;
    st->line[id] = 0;
}

void app_settings_defaults(app_settings *st) {
    free(st->text);
    free(st->pin_text);
    memset(st, 0, sizeof *st);
    mha_config c = {0};
    mha_config_resolve(&c);
    st->src = SRC_SAMPLE;
    st->sample = 1;
    st->h = c.h;
    st->d_model = c.d_model;
    st->seed = c.seed;
    st->mask = c.mask;
    st->pad = 0;
    st->no_scale = 0;
    st->temperature = 1.0f;
    st->weights = MHA_WEIGHTS_RANDOM;
    st->cmap = CMAP_VIRIDIS;
    st->zoom = (int)(view_zoom_for_size(APP_DEFAULT_W, APP_DEFAULT_H) * 100.0f + 0.5f);
    st->page = 1;
    st->panels = 1; /* app_state_init's s->lesson */
    st->pinned_page = 1;
    st->train_h = 2; /* training.c's first run: pair at h = 2, d_model = 32 */
    st->train_d = 32;
    st->train_seed = 1;
    st->train_layers = 1;
    st->train_layer = 1;
    st->layer = 1;
    for (int i = 0; i < ST_COUNT; i++) st->set[i] = 1;
}

/* ---- capture ------------------------------------------------------------------------- */

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
    st->h = c.h;
    st->d_model = c.d_model;
    st->seed = c.seed;
    st->mask = c.mask;
    st->pad = c.pad;
    st->no_scale = c.no_scale;
    st->temperature = c.temperature > 0.0f ? c.temperature : 1.0f;
    st->weights = c.weights;
    memcpy(st->ablate, c.ablate, sizeof st->ablate);
    st->focus = s->focus;
    st->stage = s->step;
    st->values = s->values;
    st->contrast = s->contrast;
    st->cmap = s->cmap;
    st->theme = s->theme;
    st->zoom = (int)(s->zoom * 100.0f + 0.5f);
    st->present = s->present;
    st->page = s->page + 1;
    st->panels = s->lesson;
    st->diff = s->diff;
    st->head_view = s->head_view;
    mha_config pc;
    const tok_list *ptoks = NULL;
    int psample = 0;
    if (app_compare_pinned(s, &pc, &ptoks, &psample)) {
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
        st->compare = 1;
        st->compare_set = 0;
        mha_config *w = &st->compare_cfg;
        mha_config_resolve(&pc);
        if (pc.h != c.h) st->compare_set |= CLI_CMP_H, w->h = pc.h;
        if (pc.d_model != c.d_model) st->compare_set |= CLI_CMP_D, w->d_model = pc.d_model;
        if (pc.seed != c.seed) st->compare_set |= CLI_CMP_SEED, w->seed = pc.seed;
        if (pc.mask != c.mask) st->compare_set |= CLI_CMP_MASK, w->mask = pc.mask;
        if (pc.no_scale != c.no_scale) st->compare_set |= CLI_CMP_SCALE, w->no_scale = pc.no_scale;
        const float ta = pc.temperature > 0.0f ? pc.temperature : 1.0f;
        if (ta != st->temperature) st->compare_set |= CLI_CMP_TEMPERATURE, w->temperature = ta;
        if (pc.weights != c.weights) st->compare_set |= CLI_CMP_WEIGHTS, w->weights = pc.weights;
        if (pc.pad != c.pad) st->compare_set |= CLI_CMP_PAD, w->pad = pc.pad;
    }
    st->pinned_page = s->pin ? s->pinned_page + 1 : 1; /* B pins at its first page */
    capture_more(s, st);
}

/* ---- write --------------------------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t len, used;
} out_buf;

static void put(out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = o->used < o->len ? o->len - o->used : 0;
    int n = vsnprintf(room ? o->buf + o->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->used += (size_t)n;
}

static void put_char(out_buf *o, char c) {
    if (o->used + 1 < o->len) {
        o->buf[o->used] = c;
        o->buf[o->used + 1] = '\0';
    }
    o->used++;
}

/* The shortest decimal that reads back as the same float. */
static void put_float(out_buf *o, float v) {
    char b[32];
    for (int p = 0; p <= 9; p++) { /* fixed point: the reader takes no exponent */
        snprintf(b, sizeof b, "%.*f", p, (double)v);
        if ((float)strtod(b, NULL) == v) break;
    }
    put(o, "%s", b);
}

static void put_text(out_buf *o, const char *t) {
    const size_t n = strlen(t);
    const int quote = n && (t[0] == ' ' || t[0] == '\t' || t[0] == '"' || t[n - 1] == ' ' ||
                            t[n - 1] == '\t' || t[n - 1] == '"');
    if (quote) put_char(o, '"');
    for (const char *p = t; *p; p++) {
        switch (*p) {
        case '\n': put(o, "\\n"); break;
        case '\t': put(o, "\\t"); break;
        case '\r': put(o, "\\r"); break;
        case '\\': put(o, "\\\\"); break;
        default: put_char(o, *p);
        }
    }
    if (quote) put_char(o, '"');
}

static void put_heads(out_buf *o, const uint64_t *bits) {
    int any = 0;
    for (int k = 0; k < MHA_ABLATE_WORDS * 64; k++)
        if (bits[k / 64] >> (k % 64) & 1) put(o, "%s%d", any++ ? "," : "", k + 1);
    if (!any) put(o, "none");
}

static void put_value(out_buf *o, const app_settings *st, int id) {
    switch (id) {
    case ST_PIN_TEXT:
        if (st->pin_src == SRC_TEXT) {
            put(o, "pinned-text = ");
            put_text(o, st->pin_text ? st->pin_text : "");
        } else if (st->pin_src == SRC_SAMPLE) {
            put(o, "pinned-sample = %d", st->pin_sample);
        } else {
            put(o, "pinned-sample = live");
        }
        return;
    case ST_TEXT:
        if (st->src == SRC_SAMPLE)
            put(o, "sample = %d", st->sample);
        else if (st->src == SRC_TEXT_FILE && st->text_path[0])
            put(o, "text-file = %s", st->text_path);
        else {
            put(o, "text = ");
            put_text(o, st->text ? st->text : "");
        }
        return;
    default: break;
    }
    put(o, "%s = ", st_names[id]);
    switch (id) {
    case ST_H: put(o, "%d", st->h); break;
    case ST_D: put(o, "%d", st->d_model); break;
    case ST_SEED: put(o, "%llu", (unsigned long long)st->seed); break;
    case ST_MASK: put(o, "%s", st->mask == MHA_MASK_CAUSAL ? "causal" : "none"); break;
    case ST_PAD:
        if (st->pad)
            put(o, "%d", st->pad);
        else
            put(o, "off");
        break;
    case ST_SCALE: put(o, "%s", st->no_scale ? "off" : "on"); break;
    case ST_TEMP: put_float(o, st->temperature); break;
    case ST_WEIGHTS:
        put(o, "%s", st->weights == MHA_WEIGHTS_PATTERNS ? "designed" : "random");
        break;
    case ST_ABLATE: put_heads(o, st->ablate); break;
    case ST_FOCUS:
        if (st->focus)
            put(o, "%d", st->focus);
        else
            put(o, "none");
        break;
    case ST_STAGE: put(o, "%d", st->stage); break;
    case ST_VALUES: put(o, "%s", st->values ? "on" : "off"); break;
    case ST_CONTRAST: put(o, "%s", contrast_words[st->contrast % 3]); break;
    case ST_COLORMAP: put(o, "%s", cmap_name(st->cmap)); break;
    case ST_THEME: put(o, "%s", st->theme ? "dark" : "light"); break;
    case ST_ZOOM: put(o, "%d", st->zoom); break;
    case ST_PRESENT: put(o, "%s", st->present ? "on" : "off"); break;
    case ST_PAGE: put(o, "%d", st->page); break;
    case ST_PANELS: put(o, "%s", st->panels ? "on" : "off"); break;
    case ST_DIFF: put(o, "%s", st->diff ? "on" : "off"); break;
    case ST_COMPARE: {
        if (!st->compare) {
            put(o, "off");
            break;
        }
        if (!st->compare_set) {
            put(o, "on");
            break;
        }
        const mha_config *w = &st->compare_cfg;
        int any = 0;
        for (int k = 0; k < CMP_KEYS; k++) {
            const unsigned bit = cmp_keys[k].bit;
            if (!(st->compare_set & bit)) continue;
            put(o, "%s%s=", any++ ? "," : "", cmp_keys[k].key);
            switch (bit) {
            case CLI_CMP_H: put(o, "%d", w->h); break;
            case CLI_CMP_D: put(o, "%d", w->d_model); break;
            case CLI_CMP_SEED: put(o, "%llu", (unsigned long long)w->seed); break;
            case CLI_CMP_MASK: put(o, "%s", w->mask == MHA_MASK_CAUSAL ? "causal" : "none"); break;
            case CLI_CMP_SCALE: put(o, "%s", w->no_scale ? "off" : "on"); break;
            case CLI_CMP_TEMPERATURE: put_float(o, w->temperature); break;
            case CLI_CMP_WEIGHTS:
                put(o, "%s", w->weights == MHA_WEIGHTS_PATTERNS ? "patterns" : "random");
                break;
            default:
                if (w->pad)
                    put(o, "%d", w->pad);
                else
                    put(o, "off");
            }
        }
        break;
    }
    case ST_PIN_ABLATE: put_heads(o, st->pin_ablate); break;
    case ST_PINNED_PAGE: put(o, "%d", st->pinned_page); break;
    case ST_TRAIN:
        put(o, "%s", st->train ? learn_task((learn_task_id)(st->train - 1))->name : "off");
        break;
    case ST_TRAIN_H: put(o, "%d", st->train_h); break;
    case ST_TRAIN_D: put(o, "%d", st->train_d); break;
    case ST_TRAIN_SEED: put(o, "%llu", (unsigned long long)st->train_seed); break;
    case ST_TRAIN_STEPS: put(o, "%ld", st->train_steps); break;
    case ST_TRAIN_LAYERS: put(o, "%d", st->train_layers); break;
    case ST_TRAIN_MLP: put(o, "%s", st->train_mlp ? "on" : "off"); break;
    case ST_TRAIN_LAYER: put(o, "%d", st->train_layer); break;
    case ST_MODEL: put(o, "%s", st->model[0] ? st->model : "off"); break;
    case ST_LAYER: put(o, "%d", st->layer); break;
    case ST_MODEL_H:
        if (st->model_h)
            put(o, "%d", st->model_h);
        else
            put(o, "own");
        break;
    case ST_OVERVIEW: put(o, "%s", st->overview ? "on" : "off"); break;
    case ST_HEAD_VIEW: put(o, "%s", st->head_view == VIEW_HEAD_LINES ? "lines" : "heatmap"); break;
    default: break;
    }
}

size_t app_settings_write(const app_settings *st, const app_settings *base, char *buf, size_t len) {
    out_buf o = {buf, len, 0};
    if (len) buf[0] = '\0';
    for (int i = 0; i < ST_COUNT; i++) {
        if (!st->set[i]) continue;
        if (base && base->set[i] && same_one(st, base, i)) continue;
        put_value(&o, st, i);
        put_char(&o, '\n');
    }
    return o.used;
}

/* ---- apply --------------------------------------------------------------------------- */

/* err gets "FILE:LINE: " for setting id when it was read from a file, then the reason. */
static int fail(const app_settings *st, int id, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(const app_settings *st, int id, char *err, size_t errlen, const char *fmt, ...) {
    size_t at = 0;
    if (id >= 0 && st->origin[0] && st->line[id] > 0)
        at = (size_t)snprintf(err, errlen, "%s:%d: ", st->origin, st->line[id]);
    else if (st->origin[0])
        at = (size_t)snprintf(err, errlen, "%s: ", st->origin);
    if (at >= errlen) at = errlen ? errlen - 1 : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + at, errlen - at, fmt, ap);
    va_end(ap);
    return -1;
}

static int tokens_of(const app_settings *st, const app_state *s, const char **text, int *sample) {
    if (st->set[ST_TEXT]) {
        if (st->src == SRC_SAMPLE) {
            *sample = st->sample;
            *text = samples_get(st->sample - 1)->text;
        } else {
            *sample = 0;
            *text = st->text ? st->text : "";
        }
        return 1;
    }
    *sample = s->sample;
    *text = s->sample ? samples_get(s->sample - 1)->text : s->custom;
    return 0;
}

int app_settings_apply(app_state *s, const app_settings *st, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    /* ---- check everything first ---- */
    const char *text = NULL;
    int sample = 0;
    const int new_text = tokens_of(st, s, &text, &sample);
    if (st->set[ST_TEXT] && st->src == SRC_SAMPLE &&
        (st->sample < 1 || st->sample > samples_count()))
        return fail(st, ST_TEXT, err, errlen, "sample = %d: there are %d samples", st->sample,
                    samples_count());
    tok_list t = {0};
    int total = 0, n = s->toks.count;
    char why[MHA_ERR_LEN];
    if (new_text) {
        if (tok_split(&t, text, MHA_MAX_N, &total, why, sizeof why) != 0)
            return fail(st, ST_TEXT, err, errlen, "%s", why);
        n = t.count;
    } else if (app_request_busy(s)) {
        n = app_request_want(s)->count;
    }
    mha_config c = s->cfg;
    if (st->set[ST_H]) c.h = st->h;
    if (st->set[ST_D]) c.d_model = st->d_model;
    if ((st->set[ST_H] || st->set[ST_D]) && (c.h != s->cfg.h || c.d_model != s->cfg.d_model))
        memset(c.ablate, 0, sizeof c.ablate); /* the heads are split anew, as the keys do */
    if (st->set[ST_SEED]) c.seed = st->seed;
    if (st->set[ST_MASK]) c.mask = (mha_mask)st->mask;
    if (st->set[ST_PAD]) c.pad = st->pad;
    if (st->set[ST_SCALE]) c.no_scale = st->no_scale;
    if (st->set[ST_TEMP]) c.temperature = st->temperature;
    if (st->set[ST_WEIGHTS]) c.weights = (mha_weights)st->weights;
    if (st->set[ST_ABLATE]) memcpy(c.ablate, st->ablate, sizeof c.ablate);
    mha_config_resolve(&c);
    if (c.h > c.d_model || c.d_model % c.h != 0) {
        tok_free(&t);
        return fail(st, st->set[ST_H] ? ST_H : ST_D, err, errlen,
                    "h = %d does not divide d_model = %d", c.h, c.d_model);
    }
    if (c.pad && st->set[ST_PAD] && c.pad < n) {
        tok_free(&t);
        return fail(st, ST_PAD, err, errlen, "pad = %d: the text has %d tokens (pad at least that)",
                    c.pad, n);
    }
    if (!st->set[ST_PAD] && c.pad && c.pad < n) c.pad = app_pad_length(n); /* as the text grows */
    for (int k = c.h; k < MHA_ABLATE_WORDS * 64; k++)
        if (mha_config_is_ablated(&c, k)) {
            tok_free(&t);
            return fail(st, ST_ABLATE, err, errlen, "ablate: there is no head %d (h = %d)", k + 1,
                        c.h);
        }
    if (mha_config_check(&c, n, why, sizeof why) != 0) {
        tok_free(&t);
        return fail(st, st->set[ST_D] ? ST_D : ST_H, err, errlen, "%s", why);
    }
    /* a loaded model's heads: the file's model-h (own: its trained ones), else those shown */
    const int heads = !s->gpt                ? c.h
                      : !st->set[ST_MODEL_H] ? app_gpt_heads(s)
                      : st->model_h          ? st->model_h
                                             : app_gpt_own_heads(s);
    const int new_model = model_is_new(s, st);
    const int focus = st->set[ST_FOCUS] ? st->focus : (s->focus <= heads ? s->focus : 0);
    if (focus > heads && !new_model) { /* a model still to be read: checked once it is */
        tok_free(&t);
        return fail(st, ST_FOCUS, err, errlen, "focus = %d: there is no head %d (h = %d)", focus,
                    focus, heads);
    }
    const int want_pin = st->set[ST_COMPARE] ? st->compare : s->pin != NULL;
    const int model_after = st->set[ST_MODEL] ? st->model[0] != '\0' : s->gpt != NULL;
    if (st->set[ST_COMPARE] && st->compare && model_after) {
        tok_free(&t);
        return fail(st, ST_COMPARE, err, errlen,
                    "compare pins a random model's view: not with a loaded model (model = off)");
    }
    mha_config pc = c;
    tok_list pt = {0}; /* the pinned view's own text, when it has one */
    int pin_n = n, pin_own = 0;
    if (st->set[ST_COMPARE] && st->compare) { /* the pinned view's configuration */
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
        if (st->set[ST_PIN_TEXT] && st->pin_src) { /* the pinned view's own text */
            const char *ptext =
                st->pin_src == SRC_SAMPLE ? samples_get(st->pin_sample - 1)->text : st->pin_text;
            int ptotal = 0;
            if (tok_split(&pt, ptext, MHA_MAX_N, &ptotal, why, sizeof why) != 0) {
                tok_free(&t);
                return fail(st, ST_PIN_TEXT, err, errlen, "%s", why);
            }
            pin_n = pt.count;
            pin_own = 1;
            if (pc.pad && pc.pad < pin_n && !(st->compare_set & CLI_CMP_PAD))
                pc.pad =
                    app_pad_length(pin_n); /* the padding follows its text, as the live one's */
        }
        for (int k = pc.h; k < MHA_ABLATE_WORDS * 64; k++)
            if (mha_config_is_ablated(&pc, k)) {
                tok_free(&t);
                tok_free(&pt);
                return fail(st, ST_PIN_ABLATE, err, errlen,
                            "pinned-ablate: the pinned view has no head %d (h = %d)", k + 1, pc.h);
            }
        if (mha_config_check(&pc, pin_n, why, sizeof why) != 0) {
            tok_free(&t);
            tok_free(&pt);
            return fail(st, ST_COMPARE, err, errlen, "compare: %s", why);
        }
    } else {
        int any_off = 0;
        for (int k = 0; k < MHA_ABLATE_WORDS; k++) any_off |= st->pin_ablate[k] != 0;
        const int id = st->set[ST_PIN_TEXT] && st->pin_src ? ST_PIN_TEXT
                       : st->set[ST_PIN_ABLATE] && any_off ? ST_PIN_ABLATE
                                                           : -1;
        if (id >= 0) {
            tok_free(&t);
            return fail(st, id, err, errlen, "%s: only with compare (the pinned view's)",
                        id == ST_PIN_TEXT ? "pinned-sample / pinned-text" : "pinned-ablate");
        }
    }
    if (st->set[ST_PINNED_PAGE] && st->pinned_page > 1 && !want_pin) {
        tok_free(&t);
        tok_free(&pt);
        return fail(st, ST_PINNED_PAGE, err, errlen,
                    "pinned-page = %d: only with compare (the pinned view's page)",
                    st->pinned_page);
    }
    if (check_more(s, st, err, errlen) != 0) {
        tok_free(&t);
        tok_free(&pt);
        return -1;
    }
    model_plan mp; /* last: it may read a model */
    if (model_check(s, st, text, &mp, err, errlen) != 0) {
        tok_free(&t);
        tok_free(&pt);
        return -1;
    }

    /* ---- then change the state, through the keys' own paths ---- */
    char before[sizeof s->status];
    memcpy(before, s->status, sizeof before);
    s->status[0] = '\0';
    const int cfg_changed = memcmp(&c, &s->cfg, sizeof c) != 0;
    if (new_text) {
        if (s->gpt) {
            tok_free(&t);
            if (app_gpt_text(s, text, sample) != 0)
                return fail(st, ST_TEXT, err, errlen, "%s", s->status);
            if (cfg_changed) app_change_cfg(s, c);
        } else {
            if (app_recompute(s, &c, &t) != 0) {
                tok_free(&t);
                app_gpt_free(mp.g);
                return fail(st, ST_TEXT, err, errlen, "%s", s->status);
            }
            tok_free(&t);
            s->sample = sample;
            if (!sample) tok_copy_fit(s->custom, sizeof s->custom, text);
            s->page = 0;
            if (total > MHA_MAX_N)
                snprintf(s->status, sizeof s->status, "text cut to the first %d of its %d tokens",
                         MHA_MAX_N, total);
        }
    } else if (cfg_changed) {
        app_change_cfg(s, c);
        if (memcmp(&s->cfg, &c, sizeof c) != 0 && s->status[0])
            return fail(st, ST_H, err, errlen, "%s", s->status);
    }
    if (st->set[ST_VALUES]) s->values = st->values;
    if (st->set[ST_CONTRAST]) s->contrast = st->contrast;
    if (st->set[ST_COLORMAP]) s->cmap = st->cmap;
    if (st->set[ST_THEME]) s->theme = st->theme;
    if (st->set[ST_ZOOM]) s->zoom = (float)st->zoom / 100.0f;
    if (st->set[ST_PRESENT]) s->present = st->present;
    if (st->set[ST_PANELS]) s->lesson = st->panels;
    if (st->set[ST_DIFF]) s->diff = st->diff;
    if (st->set[ST_HEAD_VIEW]) s->head_view = st->head_view;
    apply_more(s, st); /* training mode first: entering it unfocuses, as L does */
    model_apply(s, st, &mp, text);
    s->focus = !s->gpt || focus <= app_gpt_heads(s) ? focus : 0;
    if (st->set[ST_STAGE]) s->step = st->stage;
    if (st->set[ST_PAGE]) s->page = st->page - 1; /* app_layout clamps it to the pages there are */
    if (st->set[ST_COMPARE]) {
        if (!st->compare && s->pin) {
            app_compare_toggle(s);
        } else if (st->compare) {
            const int live_sample = s->sample;
            if (app_compare_pin(s, &pc, pin_own ? &pt : app_request_want(s),
                                pin_own ? st->pin_sample : live_sample, why, sizeof why) != 0)
                snprintf(s->status, sizeof s->status, "%s", why);
        }
    }
    tok_free(&pt);
    if (st->set[ST_PINNED_PAGE]) s->pinned_page = st->pinned_page - 1;
    if (!s->status[0]) memcpy(s->status, before, sizeof before);
    s->layout_valid = 0;
    s->dirty = 1; /* app_layout refreshes the pinned pane and the progress sign */
    app_derive(s);
    return 0;
}

/* ---- a view file's text ------------------------------------------------------------------ */

static void trim(char **b, char **e) {
    while (*b < *e && (**b == ' ' || **b == '\t')) (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) (*e)--;
}

int app_view_file_parse(const char *text, size_t len, const char *file, const char *base_dir,
                        app_settings *st, char *err, size_t errlen) {
    char *copy = malloc(len + 1);
    if (!copy) {
        snprintf(err, errlen, "%s: out of memory", file);
        return 2;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    app_settings *got = app_settings_create();
    if (!got) {
        free(copy);
        snprintf(err, errlen, "%s: out of memory", file);
        return 2;
    }
    int lineno = 0, rc = 0;
    char *p = copy, *end = copy + len;
    while (p < end && !rc) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        lineno++;
        char *b = p, *e = le;
        p = nl ? nl + 1 : end;
        trim(&b, &e);
        if (b == e || *b == '#') continue;
        *e = '\0';
        char *eq = strchr(b, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: '%.60s' is not 'name = value'", file, lineno, b);
            rc = 2;
            break;
        }
        char *ne = eq, *vb = eq + 1, *ve = e;
        char *nb = b;
        trim(&nb, &ne);
        trim(&vb, &ve);
        *ne = '\0';
        *ve = '\0';
        const int id = find_name(nb);
        if (id >= 0 && got->set[id]) {
            if (id == ST_PIN_TEXT)
                snprintf(err, errlen,
                         "%s:%d: %s: the pinned text is set already on line %d (one of "
                         "pinned-sample, pinned-text)",
                         file, lineno, nb, got->line[id]);
            else if (id == ST_TEXT)
                snprintf(err, errlen,
                         "%s:%d: %s: the text is set already on line %d (one of sample, text, "
                         "text-file)",
                         file, lineno, nb, got->line[id]);
            else
                snprintf(err, errlen, "%s:%d: %s is given twice (first on line %d)", file, lineno,
                         nb, got->line[id]);
            rc = 2;
            break;
        }
        char why[1400];
        if (app_settings_set(got, nb, vb, base_dir, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%d: %s", file, lineno, why);
            rc = 2;
            break;
        }
        got->line[id] = lineno;
    }
    if (!rc && !app_settings_count(got)) {
        snprintf(err, errlen, "%s: sets nothing (a view file holds lines such as 'h = 4')", file);
        rc = 2;
    }
    if (!rc) {
        /* checks that need two settings: a head against h given in the same file */
        const int h = got->set[ST_H] ? got->h : 0;
        if (h && got->set[ST_D] && (h > got->d_model || got->d_model % h != 0)) {
            snprintf(err, errlen, "%s:%d: h = %d does not divide d_model = %d (line %d)", file,
                     got->line[ST_H], h, got->d_model, got->line[ST_D]);
            rc = 2;
        }
        if (!rc && h && got->set[ST_FOCUS] && got->focus > h) {
            snprintf(err, errlen, "%s:%d: focus = %d: there is no head %d (h = %d)", file,
                     got->line[ST_FOCUS], got->focus, got->focus, h);
            rc = 2;
        }
        for (int k = h; !rc && h && got->set[ST_ABLATE] && k < MHA_ABLATE_WORDS * 64; k++)
            if (got->ablate[k / 64] >> (k % 64) & 1) {
                snprintf(err, errlen, "%s:%d: ablate: there is no head %d (h = %d)", file,
                         got->line[ST_ABLATE], k + 1, h);
                rc = 2;
            }
    }
    if (!rc) {
        snprintf(got->origin, sizeof got->origin, "%s", file);
        app_settings_merge(st, got);
    }
    app_settings_free(got);
    free(copy);
    return rc;
}

/* ---- training mode and a loaded model ------------------------------------------------------ */

static void capture_more(const app_state *s, app_settings *st) {
    const char *path = NULL;
    int mlayer = 0, mh = 0, mov = 0;
    if (app_gpt_settings(s, &path, &mlayer, &mh, &mov)) {
        char real[4096];
        snprintf(st->model, sizeof st->model, "%s", realpath(path, real) ? real : path);
        st->layer = mlayer + 1;
        st->model_h = mh;
        st->overview = mov;
    }
    learn_config lc;
    long steps = 0;
    int layer = 0;
    const int on = app_training_get(s, &lc, &steps, &layer);
    st->train = on ? (int)lc.task + 1 : 0;
    st->train_h = lc.h ? lc.h : 4; /* learn_config_resolve's */
    st->train_d = lc.d_model ? lc.d_model : 32;
    st->train_seed = lc.seed ? lc.seed : 1;
    st->train_layers = lc.layers ? lc.layers : learn_task(lc.task)->default_layers;
    st->train_mlp = lc.mlp;
    st->train_steps = steps;
    st->train_layer = layer + 1;
}

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
        *on = st->train != 0;
        if (st->train) lc->task = (learn_task_id)(st->train - 1);
    }
    if (st->set[ST_TRAIN_H]) lc->h = st->train_h;
    if (st->set[ST_TRAIN_D]) lc->d_model = st->train_d;
    if (st->set[ST_TRAIN_SEED]) lc->seed = st->train_seed;
    if (st->set[ST_TRAIN_LAYERS]) lc->layers = st->train_layers;
    if (st->set[ST_TRAIN_MLP]) lc->mlp = st->train_mlp;
    if (st->set[ST_TRAIN_STEPS]) *steps = st->train_steps;
    if (st->set[ST_TRAIN_LAYER]) *layer = st->train_layer - 1;
}

static int check_more(const app_state *s, const app_settings *st, char *err, size_t errlen) {
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
        return fail(st, id, err, errlen, "training: %s", why);
    }
    if (r.h > 64 || r.d_model > 256)
        return fail(st, r.h > 64 ? ST_TRAIN_H : ST_TRAIN_D, err, errlen,
                    "training in the window goes up to h = 64, d_model = 256");
    if (layer >= r.layers)
        return fail(st, ST_TRAIN_LAYER, err, errlen,
                    "train-layer = %d: the trained model has %d layer%s", layer + 1, r.layers,
                    r.layers == 1 ? "" : "s");
    return 0;
}

static void apply_more(app_state *s, const app_settings *st) {
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

static int model_is_new(const app_state *s, const app_settings *st) {
    if (!st->set[ST_MODEL] || !st->model[0]) return 0;
    const char *path = NULL;
    int layer, h, ov;
    return !app_gpt_settings(s, &path, &layer, &h, &ov) || strcmp(path, st->model) != 0;
}

static int model_check(const app_state *s, const app_settings *st, const char *text, model_plan *mp,
                       char *err, size_t errlen) {
    memset(mp, 0, sizeof *mp);
    const char *path = NULL;
    int layer = 0, h = 0, ov = 0;
    const int shown = app_gpt_settings(s, &path, &layer, &h, &ov);
    if (st->set[ST_LAYER]) layer = st->layer - 1;
    if (st->set[ST_MODEL_H]) h = st->model_h;
    if (st->set[ST_OVERVIEW]) ov = st->overview;
    mp->layer = layer;
    mp->h = h;
    mp->overview = ov;
    if (st->set[ST_MODEL] && !st->model[0]) {
        mp->act = shown ? 3 : 0;
        return 0;
    }
    char why[1200];
    if (model_is_new(s, st)) {
        if (s->req.attached) { /* the jobs layer reads it, as a folder dropped on the window */
            mp->act = 2;
            return 0;
        }
        app_gpt_request *q = calloc(1, sizeof *q);
        if (!q) return fail(st, ST_MODEL, err, errlen, "out of memory");
        snprintf(q->path, sizeof q->path, "%s", st->model);
        tok_copy_fit(q->text, sizeof q->text, text);
        int rc = 0; /* its own layer 1 and heads first: the file's are checked with its lines */
        mp->g = app_gpt_load(q, NULL, NULL, &rc, why, sizeof why);
        free(q);
        if (!mp->g) return fail(st, ST_MODEL, err, errlen, "model: %s", why);
        if (app_gpt_check(mp->g, layer, h, why, sizeof why) != 0) {
            app_gpt_free(mp->g);
            mp->g = NULL;
            return fail(st, strncmp(why, "layer", 5) == 0 ? ST_LAYER : ST_MODEL_H, err, errlen,
                        "%s", why);
        }
        mp->act = 1;
        return 0;
    }
    if (!shown || !(st->set[ST_LAYER] || st->set[ST_MODEL_H] || st->set[ST_OVERVIEW])) return 0;
    if (s->gpt && app_gpt_check_view(s, layer, h, why, sizeof why) != 0)
        return fail(st, st->set[ST_LAYER] ? ST_LAYER : ST_MODEL_H, err, errlen, "%s", why);
    mp->act = s->gpt ? 4 : 0;
    return 0;
}

static void model_apply(app_state *s, const app_settings *st, model_plan *mp, const char *text) {
    switch (mp->act) {
    case 1:
        if (s->pin) app_compare_toggle(s); /* a random model's pin does not compare with it */
        app_gpt_adopt(s, mp->g, NULL);
        app_gpt_set_view(s, mp->layer, mp->h, mp->overview);
        break;
    case 2: {
        app_gpt_request *q = &s->gpt_want;
        snprintf(q->path, sizeof q->path, "%s", st->model);
        tok_copy_fit(q->text, sizeof q->text, text);
        q->layer = mp->layer;
        q->h = mp->h;
        q->ablate[0] = '\0';
        s->gpt_wanted = 1;
        break;
    }
    case 3: app_gpt_close(s); break;
    case 4: app_gpt_set_view(s, mp->layer, mp->h, mp->overview); break;
    default: break;
    }
}

char *app_settings_where(const app_settings *st, const char *name, char *buf, size_t len) {
    const int id = find_name(name);
    if (id >= 0 && st->origin[0] && st->line[id] > 0)
        snprintf(buf, len, "%s:%d: %s = ", st->origin, st->line[id], name);
    else
        snprintf(buf, len, "%s = ", name);
    return buf;
}

void app_settings_shape(const app_settings *st, int *h, int *d_model) {
    if (!*h && !*d_model) return; /* the file's own pair: apply checks it, naming its line */
    if (!*h && st->set[ST_H]) *h = st->h;
    if (!*d_model && st->set[ST_D]) *d_model = st->d_model;
}

char *app_settings_get(const app_settings *st, const char *name, char *buf, size_t len) {
    if (len) buf[0] = '\0';
    if (!app_settings_has(st, name)) return buf;
    const int id = find_name(name);
    char line[4200];
    out_buf o = {line, sizeof line, 0};
    line[0] = '\0';
    put_value(&o, st, id);
    const char *eq = strstr(line, " = ");
    snprintf(buf, len, "%s", eq ? eq + 3 : "");
    return buf;
}

void app_settings_origin(app_settings *st, const char *file) {
    snprintf(st->origin, sizeof st->origin, "%s", file ? file : "");
}

void app_settings_line(app_settings *st, const char *name, int line) {
    const int id = find_name(name);
    if (id >= 0) st->line[id] = line;
}
