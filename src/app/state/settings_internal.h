/* settings_internal.h: what the settings' files share (settings.h is the API).
 * One row per setting in settings.c's table says its name, the command-line
 * options that set it, its kind, its range or words, its default and where it
 * lives in the state; the loops over the table parse, write, compare, capture and
 * apply it. The settings no row can say (the text, compare, the heads removed,
 * a model, training) are small named functions in settings_special.c,
 * settings_apply.c and settings_model.c. */
#ifndef MHAVIZ_SETTINGS_INTERNAL_H
#define MHAVIZ_SETTINGS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "settings.h"

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
    ST_HEAD_VIEW,    /* head-view = heatmap | lines (key H) */
    ST_MODEL_ABLATE, /* model-ablate = none | 3:5,12:6: a loaded model's heads removed (X) */
    ST_BACKGROUND,   /* background = opaque | transparent: an exported figure's */
    ST_SAMPLE_TEMP,  /* sample-temperature: the model writes (W), on the logits */
    ST_TOP_K,
    ST_TOP_P,
    ST_SAMPLE_SEED,
    ST_WRITE_LENGTH,
    ST_WRITE_PACE,
    ST_KV,       /* kv = own | G: the random model's heads share G K/V heads (key J) */
    ST_MODEL_KV, /* model-kv = own | G: a loaded model's K/V heads regrouped to G (key J) */
    ST_COUNT
} st_id;

enum { SRC_SAMPLE = 1, SRC_TEXT, SRC_TEXT_FILE };

#define ST_STAGE_MAX 10 /* stages 1..9, 10 in a RoPE model (app_stage_count), 0 the whole head */
#define ST_MODEL_ABLATE_MAX APP_ABLATE_MAX

/* One setting's value, as its row's kind holds it. */
typedef union {
    long i;     /* ST_INT, ST_BOOL, ST_WORDS */
    uint64_t u; /* ST_U64 */
    double f;   /* ST_FLOAT (a float's value) */
} st_value;

struct app_settings {
    unsigned char set[ST_COUNT];
    int line[ST_COUNT];   /* where each was read (0: not from a file) */
    char origin[1024];    /* the file they were read from, "" none */
    st_value v[ST_COUNT]; /* the rows' values (the special settings' are below) */
    /* the text */
    int src; /* SRC_* */
    int sample;
    char *text;           /* SRC_TEXT, SRC_TEXT_FILE: the text itself (malloc'd) */
    char text_path[1024]; /* SRC_TEXT_FILE: as written in the file */
    uint64_t ablate[MHA_ABLATE_WORDS];
    /* compare: v[ST_COMPARE] 0 off, 1 pinned; compare_set the CLI_CMP_* it changes */
    unsigned compare_set;
    mha_config compare_cfg;
    int pin_src; /* 0: the live text; SRC_SAMPLE pin_sample; SRC_TEXT pin_text */
    int pin_sample;
    char *pin_text;
    uint64_t pin_ablate[MHA_ABLATE_WORDS];
    /* a loaded model: "" off; its heads removed, "LAYER:HEAD,..." sorted, "" none */
    char model[4096];
    char model_ablate[ST_MODEL_ABLATE_MAX];
};

#define SV(st, id) ((st)->v[(id)].i) /* an int-like setting's value */

/* ---- the table ---- */

typedef enum {
    ST_INT,     /* a whole number in [lo, hi]; zero's word (off, none, own) for 0 */
    ST_BOOL,    /* on | off */
    ST_WORDS,   /* words[i] means i; "a|b": b is another word for a */
    ST_U64,     /* a seed: a whole number from lo */
    ST_FLOAT,   /* a decimal number in [flo, fhi] */
    ST_SPECIAL, /* its own functions (st_special) */
} st_kind;

typedef enum {
    AT_NONE,  /* applied by name (settings_apply.c, settings_model.c) */
    AT_CFG,   /* a field of the random model's mha_config */
    AT_STATE, /* an int of app_state: how it is shown */
    AT_LATE,  /* an int of app_state set after a model is adopted (which resets it) */
} st_where;

typedef struct out_buf out_buf;

/* A setting no row can say: parse v into st (err "name = v: why"), write its
   value, compare and copy it. name: the line's name when one slot has several
   (sample, text, text-file). */
typedef struct {
    int (*parse)(app_settings *st, const char *name, const char *v, const char *base_dir, char *err,
                 size_t errlen);
    void (*put)(out_buf *o, const app_settings *st);
    int (*same)(const app_settings *a, const app_settings *b);
    void (*copy)(app_settings *dst, const app_settings *src);
    const char *(*name)(const app_settings *st); /* NULL: the row's */
} st_special;

typedef struct {
    const char *name;    /* in view files and lessons */
    const char *options; /* the long options that set it ("heads"), space-separated; NULL none */
    st_kind kind;
    long lo, hi;              /* ST_INT, ST_U64 */
    double flo, fhi;          /* ST_FLOAT */
    const char *zero;         /* ST_INT: the word written for 0, NULL none */
    const char *const *words; /* ST_WORDS, NULL-terminated */
    const char *must;         /* "must be ..." ({lo} and {hi} replaced); NULL: from the words */
    double def;               /* the default (what `mhaviz` opens) */
    st_where where;
    size_t at; /* offsetof(app_state or mha_config, the field) */
    const st_special *sp;
} st_row;

extern const st_row stg_rows[ST_COUNT];

int stg_find(const char *name); /* the row of name (text-file: ST_TEXT), -1 none */

/* ---- writing values (settings_write.c) ---- */

struct out_buf {
    char *buf;
    size_t len, used;
};

void stg_put(out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void stg_put_char(out_buf *o, char c);
void stg_put_float(out_buf *o, float v); /* the shortest decimal that reads back the same */
void stg_put_text(out_buf *o, const char *t);
void stg_put_heads(out_buf *o, const uint64_t *bits); /* 2,5 or none */
/* Unescapes a text value; malloc'd, or NULL with why. */
char *stg_unescape_text(const char *v, const char **why);
/* ablate = none | 2,5 into bits (pinned-ablate's messages say "ablate" too); 0 or -1. */
int stg_parse_heads(const char *v, uint64_t *bits, char *err, size_t errlen);
/* err gets "FILE:LINE: " for setting id when it was read from a file, then the reason. */
int stg_fail(const app_settings *st, int id, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- the special settings (settings_special.c) ---- */

extern const st_special stg_text_sp, stg_pin_text_sp, stg_compare_sp, stg_ablate_sp,
    stg_pin_ablate_sp, stg_colormap_sp, stg_train_sp, stg_model_sp, stg_model_ablate_sp;

/* ---- training mode and a loaded model (settings_model.c) ---- */

/* a loaded model: what apply will do, decided (and the model read) before anything changes */
typedef struct {
    int act; /* 0 nothing, 1 show g, 2 ask the jobs layer, 3 close it, 4 another layer or split */
    app_gpt *g;
    int layer, h, overview;
    int kv;          /* the K/V heads shared after (0: the model's own) */
    const char *off; /* the heads removed, "LAYER:HEAD,..."; NULL: as they are */
} st_model_plan;

void stg_capture_more(const app_state *s, app_settings *st);
int stg_check_more(const app_state *s, const app_settings *st, char *err, size_t errlen);
void stg_apply_more(app_state *s, const app_settings *st);
int stg_model_is_new(const app_state *s, const app_settings *st);
int stg_model_check(const app_state *s, const app_settings *st, const char *text, st_model_plan *mp,
                    char *err, size_t errlen);
void stg_model_apply(app_state *s, const app_settings *st, st_model_plan *mp, const char *text);

#endif
