/* settings_special.c: the settings a row of settings.c's table cannot say alone:
 * the text (sample, text or text-file in one slot), the pinned view's text,
 * compare's SPEC, the heads removed from the random model and from a loaded
 * one, the colormap and the task (words from their own modules), and a model's
 * path. Each is a parse, a put and, where its value is not one number, a
 * same and a copy. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "samples.h"
#include "settings_internal.h"
#include "state_internal.h"
#include "text_file.h"
#include "values.h"

#define BAD(...)                                                                                   \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return -1;                                                                                 \
    } while (0)

/* ---- the text: sample = K | text = ... | text-file = PATH ---- */

static int text_file(app_settings *st, const char *v, const char *base_dir, char *err,
                     size_t errlen) {
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
    return 0;
}

static int text_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                      char *err, size_t errlen) {
    if (strcmp(name, "text-file") == 0) return text_file(st, v, base_dir, err, errlen);
    if (strcmp(name, "sample") == 0) {
        long k = 0;
        if (cli_parse_int(v, 1, samples_count(), &k) != 0)
            BAD("sample = %s: must be a built-in sample from 1 to %d", v, samples_count());
        free(st->text);
        st->text = NULL;
        st->src = SRC_SAMPLE;
        st->sample = (int)k;
        return 0;
    }
    const char *why = NULL;
    char *t = stg_unescape_text(v, &why);
    if (!t) BAD("text: %s", why);
    if (!t[0]) {
        free(t);
        BAD("text is empty (sample = 1 shows the first sample)");
    }
    free(st->text);
    st->text = t;
    st->src = SRC_TEXT;
    st->sample = 0;
    return 0;
}

static const char *text_name(const app_settings *st) {
    return st->src == SRC_SAMPLE                          ? "sample"
           : st->src == SRC_TEXT_FILE && st->text_path[0] ? "text-file"
                                                          : "text";
}

static void text_put(out_buf *o, const app_settings *st) {
    if (st->src == SRC_SAMPLE)
        stg_put(o, "%d", st->sample);
    else if (st->src == SRC_TEXT_FILE && st->text_path[0])
        stg_put(o, "%s", st->text_path);
    else
        stg_put_text(o, st->text ? st->text : "");
}

static int text_same(const app_settings *a, const app_settings *b) {
    if ((a->src == SRC_SAMPLE) != (b->src == SRC_SAMPLE)) return 0;
    if (a->src == SRC_SAMPLE) return a->sample == b->sample;
    return a->text && b->text && strcmp(a->text, b->text) == 0;
}

static void text_copy(app_settings *dst, const app_settings *src) {
    free(dst->text);
    dst->text = src->text ? strdup(src->text) : NULL;
    dst->src = src->src;
    dst->sample = src->sample;
    memcpy(dst->text_path, src->text_path, sizeof dst->text_path);
}

const st_special stg_text_sp = {text_parse, text_put, text_same, text_copy, text_name};

/* ---- the pinned view's text: pinned-sample = live | K, pinned-text = ... ---- */

static int pin_text_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                          char *err, size_t errlen) {
    (void)base_dir;
    if (strcmp(name, "pinned-sample") == 0) {
        long k = 0;
        if (strcmp(v, "live") == 0) {
            st->pin_src = 0;
        } else if (cli_parse_int(v, 1, samples_count(), &k) == 0) {
            st->pin_src = SRC_SAMPLE;
            st->pin_sample = (int)k;
        } else {
            BAD("pinned-sample = %s: must be live (the live view's text) or a sample from 1 "
                "to %d",
                v, samples_count());
        }
        free(st->pin_text);
        st->pin_text = NULL;
        return 0;
    }
    const char *why = NULL;
    char *t = stg_unescape_text(v, &why);
    if (!t) BAD("pinned-text: %s", why);
    if (!t[0]) {
        free(t);
        BAD("pinned-text is empty (pinned-sample = live pins the live text)");
    }
    free(st->pin_text);
    st->pin_text = t;
    st->pin_src = SRC_TEXT;
    st->pin_sample = 0;
    return 0;
}

static const char *pin_text_name(const app_settings *st) {
    return st->pin_src == SRC_TEXT ? "pinned-text" : "pinned-sample";
}

static void pin_text_put(out_buf *o, const app_settings *st) {
    if (st->pin_src == SRC_TEXT)
        stg_put_text(o, st->pin_text ? st->pin_text : "");
    else if (st->pin_src == SRC_SAMPLE)
        stg_put(o, "%d", st->pin_sample);
    else
        stg_put(o, "live");
}

static int pin_text_same(const app_settings *a, const app_settings *b) {
    if (a->pin_src != b->pin_src) return 0;
    if (a->pin_src == SRC_SAMPLE) return a->pin_sample == b->pin_sample;
    if (a->pin_src == SRC_TEXT)
        return a->pin_text && b->pin_text && strcmp(a->pin_text, b->pin_text) == 0;
    return 1;
}

static void pin_text_copy(app_settings *dst, const app_settings *src) {
    free(dst->pin_text);
    dst->pin_text = src->pin_text ? strdup(src->pin_text) : NULL;
    dst->pin_src = src->pin_src;
    dst->pin_sample = src->pin_sample;
}

const st_special stg_pin_text_sp = {pin_text_parse, pin_text_put, pin_text_same, pin_text_copy,
                                    pin_text_name};

/* ---- compare = off | on | SPEC (--compare's SPEC, values.h) ---- */

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

static int compare_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                         char *err, size_t errlen) {
    (void)name, (void)base_dir;
    if (strcmp(v, "off") == 0 || strcmp(v, "on") == 0) {
        SV(st, ST_COMPARE) = v[1] == 'n';
        st->compare_set = 0;
        memset(&st->compare_cfg, 0, sizeof st->compare_cfg);
        return 0;
    }
    unsigned set = 0;
    mha_config cfg;
    char why[512];
    if (cli_parse_compare_spec(v, &set, &cfg, why, sizeof why) != 0)
        BAD("compare = %s: %s", v, why);
    SV(st, ST_COMPARE) = 1;
    st->compare_set = set;
    st->compare_cfg = cfg;
    return 0;
}

static void compare_key(out_buf *o, const mha_config *w, unsigned bit) {
    switch (bit) {
    case CLI_CMP_H: stg_put(o, "%d", w->h); break;
    case CLI_CMP_D: stg_put(o, "%d", w->d_model); break;
    case CLI_CMP_SEED: stg_put(o, "%llu", (unsigned long long)w->seed); break;
    case CLI_CMP_MASK: stg_put(o, "%s", w->mask == MHA_MASK_CAUSAL ? "causal" : "none"); break;
    case CLI_CMP_SCALE: stg_put(o, "%s", w->no_scale ? "off" : "on"); break;
    case CLI_CMP_TEMPERATURE: stg_put_float(o, w->temperature); break;
    case CLI_CMP_WEIGHTS:
        stg_put(o, "%s", w->weights == MHA_WEIGHTS_PATTERNS ? "patterns" : "random");
        break;
    default:
        if (w->pad)
            stg_put(o, "%d", w->pad);
        else
            stg_put(o, "off");
    }
}

static void compare_put(out_buf *o, const app_settings *st) {
    if (!SV(st, ST_COMPARE)) {
        stg_put(o, "off");
        return;
    }
    if (!st->compare_set) {
        stg_put(o, "on");
        return;
    }
    int any = 0;
    for (int k = 0; k < CMP_KEYS; k++) {
        if (!(st->compare_set & cmp_keys[k].bit)) continue;
        stg_put(o, "%s%s=", any++ ? "," : "", cmp_keys[k].key);
        compare_key(o, &st->compare_cfg, cmp_keys[k].bit);
    }
}

static int compare_same(const app_settings *a, const app_settings *b) {
    if (SV(a, ST_COMPARE) != SV(b, ST_COMPARE) || a->compare_set != b->compare_set) return 0;
    const mha_config *x = &a->compare_cfg, *y = &b->compare_cfg;
    const unsigned s = a->compare_set;
    return (!(s & CLI_CMP_H) || x->h == y->h) && (!(s & CLI_CMP_D) || x->d_model == y->d_model) &&
           (!(s & CLI_CMP_SEED) || x->seed == y->seed) &&
           (!(s & CLI_CMP_MASK) || x->mask == y->mask) &&
           (!(s & CLI_CMP_SCALE) || x->no_scale == y->no_scale) &&
           (!(s & CLI_CMP_TEMPERATURE) || x->temperature == y->temperature) &&
           (!(s & CLI_CMP_WEIGHTS) || x->weights == y->weights) &&
           (!(s & CLI_CMP_PAD) || x->pad == y->pad);
}

static void compare_copy(app_settings *dst, const app_settings *src) {
    dst->v[ST_COMPARE] = src->v[ST_COMPARE];
    dst->compare_set = src->compare_set;
    dst->compare_cfg = src->compare_cfg;
}

const st_special stg_compare_sp = {compare_parse, compare_put, compare_same, compare_copy, NULL};

/* ---- ablate, pinned-ablate = none | 2,5 ---- */

static int ablate_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                        char *err, size_t errlen) {
    (void)name, (void)base_dir;
    return stg_parse_heads(v, st->ablate, err, errlen);
}
static void ablate_put(out_buf *o, const app_settings *st) {
    stg_put_heads(o, st->ablate);
}
static int ablate_same(const app_settings *a, const app_settings *b) {
    return memcmp(a->ablate, b->ablate, sizeof a->ablate) == 0;
}
static void ablate_copy(app_settings *dst, const app_settings *src) {
    memcpy(dst->ablate, src->ablate, sizeof dst->ablate);
}
const st_special stg_ablate_sp = {ablate_parse, ablate_put, ablate_same, ablate_copy, NULL};

static int pin_ablate_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                            char *err, size_t errlen) {
    (void)name, (void)base_dir;
    return stg_parse_heads(v, st->pin_ablate, err, errlen);
}
static void pin_ablate_put(out_buf *o, const app_settings *st) {
    stg_put_heads(o, st->pin_ablate);
}
static int pin_ablate_same(const app_settings *a, const app_settings *b) {
    return memcmp(a->pin_ablate, b->pin_ablate, sizeof a->pin_ablate) == 0;
}
static void pin_ablate_copy(app_settings *dst, const app_settings *src) {
    memcpy(dst->pin_ablate, src->pin_ablate, sizeof dst->pin_ablate);
}
const st_special stg_pin_ablate_sp = {pin_ablate_parse, pin_ablate_put, pin_ablate_same,
                                      pin_ablate_copy, NULL};

/* ---- colormap and train: words their own modules keep ---- */

static int colormap_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                          char *err, size_t errlen) {
    (void)name, (void)base_dir;
    const int b = cmap_find(v);
    if (b < 0) BAD("colormap = %s: must be one of %s", v, cmap_names_list());
    SV(st, ST_COLORMAP) = b;
    return 0;
}
static void colormap_put(out_buf *o, const app_settings *st) {
    stg_put(o, "%s", cmap_name((int)SV(st, ST_COLORMAP)));
}
const st_special stg_colormap_sp = {colormap_parse, colormap_put, NULL, NULL, NULL};

/* train = off | TASK: 0 off, else 1 + the task */
static int train_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                       char *err, size_t errlen) {
    (void)name, (void)base_dir;
    if (strcmp(v, "off") == 0) {
        SV(st, ST_TRAIN) = 0;
        return 0;
    }
    const int b = learn_task_find(v);
    if (b < 0) {
        char list[256] = "";
        for (int i = 0; i < LEARN_TASK_COUNT; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     learn_task((learn_task_id)i)->name);
        BAD("train = %s: must be off or a task (%s)", v, list);
    }
    SV(st, ST_TRAIN) = b + 1;
    return 0;
}
static void train_put(out_buf *o, const app_settings *st) {
    const long t = SV(st, ST_TRAIN);
    stg_put(o, "%s", t ? learn_task((learn_task_id)(t - 1))->name : "off");
}
const st_special stg_train_sp = {train_parse, train_put, NULL, NULL, NULL};

/* ---- model = off | PATH (beside the file) ---- */

static int model_parse(app_settings *st, const char *name, const char *v, const char *base_dir,
                       char *err, size_t errlen) {
    (void)name;
    if (!v[0]) BAD("model: must be off or a model's folder or .safetensors file");
    if (strcmp(v, "off") == 0)
        st->model[0] = '\0';
    else if (v[0] == '/' || !base_dir || !base_dir[0] || strcmp(base_dir, ".") == 0)
        snprintf(st->model, sizeof st->model, "%s", v);
    else
        snprintf(st->model, sizeof st->model, "%s/%s", base_dir, v);
    return 0;
}
static void model_put(out_buf *o, const app_settings *st) {
    stg_put(o, "%s", st->model[0] ? st->model : "off");
}
static int model_same(const app_settings *a, const app_settings *b) {
    return strcmp(a->model, b->model) == 0;
}
static void model_copy(app_settings *dst, const app_settings *src) {
    memcpy(dst->model, src->model, sizeof dst->model);
}
const st_special stg_model_sp = {model_parse, model_put, model_same, model_copy, NULL};

/* ---- model-ablate = none | LAYER:HEAD,... (1-based, as --ablate with --model) ---- */

static int cmp_items(const void *a, const void *b) {
    const long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The items of v, sorted by layer then head, each once: "" for none. */
static int model_ablate_parse(app_settings *st, const char *name, const char *v,
                              const char *base_dir, char *err, size_t errlen) {
    (void)name, (void)base_dir;
    enum { MAX_ITEMS = ST_MODEL_ABLATE_MAX / 4 };
    static const char *const form = "must be none or LAYER:HEAD items (1-based) such as 3:5,12:6";
    if (strcmp(v, "none") == 0) {
        st->model_ablate[0] = '\0';
        return 0;
    }
    if (v[strspn(v, "0123456789:,")] != '\0') BAD("model-ablate = %.200s: %s", v, form);
    long *item = malloc(MAX_ITEMS * sizeof *item);
    if (!item) BAD("model-ablate: out of memory");
    int n = 0;
    for (const char *p = v;; n++) {
        int l = 0, h = 0, used = 0;
        if (n == MAX_ITEMS || sscanf(p, "%9d:%9d%n", &l, &h, &used) != 2 || l < 1 || h < 1 ||
            l > 4096 || h > MHA_MAX_D_MODEL || (p[used] != ',' && p[used] != '\0')) {
            free(item);
            BAD("model-ablate = %.200s: %s", v, form);
        }
        item[n] = (long)l * 65536 + h;
        p += used;
        if (!*p++) {
            n++;
            break;
        }
    }
    qsort(item, (size_t)n, sizeof *item, cmp_items);
    out_buf o = {st->model_ablate, sizeof st->model_ablate, 0};
    st->model_ablate[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i && item[i] == item[i - 1]) {
            const long dup = item[i];
            free(item);
            st->model_ablate[0] = '\0';
            BAD("model-ablate = %.200s: %ld:%ld is listed twice", v, dup / 65536, dup % 65536);
        }
        stg_put(&o, "%s%ld:%ld", i ? "," : "", item[i] / 65536, item[i] % 65536);
    }
    free(item);
    return 0;
}
static void model_ablate_put(out_buf *o, const app_settings *st) {
    stg_put(o, "%s", st->model_ablate[0] ? st->model_ablate : "none");
}
static int model_ablate_same(const app_settings *a, const app_settings *b) {
    return strcmp(a->model_ablate, b->model_ablate) == 0;
}
static void model_ablate_copy(app_settings *dst, const app_settings *src) {
    memcpy(dst->model_ablate, src->model_ablate, sizeof dst->model_ablate);
}
const st_special stg_model_ablate_sp = {model_ablate_parse, model_ablate_put, model_ablate_same,
                                        model_ablate_copy, NULL};
