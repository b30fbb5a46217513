/* cli.h: the mhaviz command line, parsed with getopt_long into one options struct.
 * Parsing only checks syntax and ranges; main resolves the text and the config. */
#ifndef MHAVIZ_CLI_H
#define MHAVIZ_CLI_H

#include <stddef.h>

#include "mha.h"
#include "train_mode.h"

typedef enum {
    CLI_WINDOW = 0, /* default: open the visualizer */
    CLI_DUMP,
    CLI_EXPORT,
    CLI_LIST_SAMPLES,
    CLI_HELP,
    CLI_VERSION,
    CLI_BENCH,
    CLI_TRAIN, /* --train TASK: headless training (train_mode.c) */
} cli_mode;

typedef enum { CLI_PANEL_ALL = 0, CLI_PANEL_HEAD, CLI_PANEL_EQUATION, CLI_PANEL_STEPS } cli_panel;

typedef struct {
    cli_mode mode;
    mha_config cfg;          /* h, d_model, seed, mask, no_scale, pad, temperature,
                                weights, ablate; zero = default */
    int sample;              /* 1-based; 0: not given */
    const char *text;        /* --text, or NULL */
    const char *dump_dir;    /* --dump */
    const char *export_path; /* --export */
    const char *export_dir;  /* --export-dir (window Ctrl+S) */
    const char *font;        /* --font */
    int size_w, size_h;      /* --size, layout pixels; 0: default 1600x900 */
    int scale;               /* --scale 1..4; 0: default */
    cli_panel panel;         /* --panel */
    int panel_head;          /* 1-based with CLI_PANEL_HEAD and CLI_PANEL_STEPS */
    int page;                /* --page K: page K of the heads grid, 1-based; 0: first */
    int values;              /* --values: numbers in the cells */
    int contrast;            /* --contrast: 0 fixed, 1 row, 2 log */
    int diff;                /* --diff: MultiHead minus the unablated MultiHead */
    int theme;               /* 0 light (default), 1 dark; -1 not given */
    int colormap;            /* index into view colormaps; -1 not given */
    int transparent;         /* --background transparent */
    int bench_json;          /* --bench-json: one JSON object a line */
    int bench_quick;         /* --bench-quick: every case once (checks the output) */
    train_options train;     /* --train and --steps, --layers, --mlp, --lr, --batch */
    int compare;             /* --compare SPEC: a view pinned beside this one */
    unsigned compare_set;    /* CLI_CMP_* bits: the settings SPEC names */
    mha_config compare_cfg;  /* their values (the others are this view's) */
} cli_options;

enum {
    CLI_CMP_H = 1,
    CLI_CMP_D = 2,
    CLI_CMP_SEED = 4,
    CLI_CMP_MASK = 8,
    CLI_CMP_SCALE = 16,
    CLI_CMP_TEMPERATURE = 32,
    CLI_CMP_WEIGHTS = 64,
    CLI_CMP_PAD = 128,
};

/* Parses argv into opts. Returns 0 on success, or 2 (usage) with a one-line
 * message in err (without the "mhaviz: " prefix). Can be called any number of
 * times in one process: each call restarts getopt from scratch. */
int cli_parse(cli_options *opts, int argc, char **argv, char *err, size_t errlen);

/* Parses a whole decimal integer in [lo, hi]: no sign tricks, no trailing junk,
 * no overflow. Returns 0 and *out, or -1. */
int cli_parse_int(const char *s, long lo, long hi, long *out);

/* Parses a decimal number in [lo, hi]: digits with at most one '.', which must be
 * followed by a digit ("0.5", ".5", "20"); no sign, exponent, spaces, nan or inf.
 * Returns 0 and *out, or -1. */
int cli_parse_float(const char *s, double lo, double hi, double *out);

/* The --help text. */
const char *cli_usage(void);

#endif
