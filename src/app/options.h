/* options.h: what the command line asks for, as plain data: the mode, the
 * configuration and how to show it. cli.c fills it; main, the modes and the state
 * read it. No functions and no SDL, so every layer may include it. */
#ifndef MHAVIZ_OPTIONS_H
#define MHAVIZ_OPTIONS_H

#include "mha.h"

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

typedef enum {
    CLI_PANEL_ALL = 0,
    CLI_PANEL_HEAD,
    CLI_PANEL_EQUATION,
    CLI_PANEL_STEPS,
    CLI_PANEL_MODEL, /* --model: every layer x head */
    CLI_PANEL_NEXT,  /* --model: the next-token panel */
    CLI_PANEL_LINES, /* the head view: lines (every head overlaid), lines:K (head K) */
} cli_panel;

/* The training options of the command line; zero means "default". */
typedef struct {
    int task;    /* 1 + the task's id (see learn.h); 0: no --train */
    int steps;   /* --steps; 0: the task's default */
    int layers;  /* --layers 1|2; 0: the task's default */
    int mlp;     /* --mlp */
    float lr;    /* --lr; 0: 3e-3 */
    int batch;   /* --batch; 0: 32 */
    int layer;   /* --layer L: the layer --export draws, 1-based; 0: the first */
    int sweep;   /* --sweep h: 1 (sweep.c); 0: one run */
    int seeds;   /* --seeds K with --sweep; 0: 3 */
    int moments; /* --moments K with --export: K of the run's moments as pages; 0: none */
} train_options;

typedef struct {
    cli_mode mode;
    mha_config cfg;          /* h, d_model, seed, mask, no_scale, pad, temperature,
                                weights, ablate; zero = default */
    int sample;              /* 1-based; 0: not given */
    const char *text;        /* --text, or NULL; main sets it to --text-file's text */
    const char *text_file;   /* --text-file FILE ("-": standard input), or NULL */
    const char *dump_dir;    /* --dump */
    const char *export_path; /* --export */
    const char *export_dir;  /* --export-dir (window Ctrl+S) */
    const char *font;        /* --font */
    int size_w, size_h;      /* --size, layout pixels; 0: default 1600x900 */
    int scale;               /* --scale 1..4; 0: default */
    cli_panel panel;         /* --panel */
    int panel_head;          /* 1-based with CLI_PANEL_HEAD and CLI_PANEL_STEPS */
    int panel_step;      /* steps:K:S, the stage S drawn large (1..9, 10 in a RoPE model); 0: all */
    int page;            /* --page K: page K of the heads grid, 1-based; 0: first */
    int pinned_page;     /* --pinned-page K: the pinned pane's page, 1-based; 0: first */
    int values;          /* --values: numbers in the cells */
    int contrast;        /* --contrast: 0 fixed, 1 row, 2 log */
    int contrast_given;  /* --contrast was on the command line */
    int diff;            /* --diff: MultiHead minus the unablated MultiHead */
    int present;         /* --present: the window in presentation mode */
    int theme;           /* 0 light (default), 1 dark; -1 not given */
    int colormap;        /* index into view colormaps; -1 not given */
    int transparent;     /* --background transparent */
    int bench_json;      /* --bench-json: one JSON object a line */
    int bench_quick;     /* --bench-quick: every case once (checks the output) */
    train_options train; /* --train and --steps, --layers, --mlp, --lr, --batch, --layer */
    const char *model_path;   /* --model PATH: a GPT-2-family checkpoint, or NULL */
    const char *model_ablate; /* --ablate LAYER:HEAD,... with --model */
    int model_kv;             /* --kv-heads N with --model: K/V heads regrouped to N; 0: own */
    int model_generate;       /* --generate N with --model: N tokens written; 0: none */
    float sample_temperature; /* --sample-temperature T > 0 on the logits; 0: not given (1) */
    int sample_argmax;        /* --sample-temperature 0: the most likely token each step */
    int sample_top_k;         /* --top-k K; 0: every token */
    float sample_top_p;       /* --top-p P in (0, 1]; 0: not given (1) */
    int compare;              /* --compare SPEC: a view pinned beside this one */
    unsigned compare_set;     /* CLI_CMP_* bits: the settings SPEC names */
    mha_config compare_cfg;   /* their values (the others are this view's) */
    const char *lesson_path;  /* --lesson FILE, or NULL */
    int lesson_step;          /* --step K (1-based); 0: not given */
    /* --state FILE (a view file, or NULL); the view-file settings the options given
       set (they win over the file's); main: the file's settings less those */
    const char *state_file;
    const char *state_given[32];
    int state_given_count;
    const struct app_settings *state;
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

#endif
