/* cli.c: getopt_long parsing of the mhaviz options (see cli.h and the README's
 * CLI reference). Every value is checked strictly here; errors name the option. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "learn.h"

const char *cli_usage(void) {
    return "usage: mhaviz [options]\n"
           "Multi-head attention, computed and drawn: every head, Concat and W^O.\n"
           "\n"
           "Computation:\n"
           "  -H, --heads N         number of heads h, divides d_model (default 4)\n"
           "  -d, --d-model N       model width d_model, 1..4096 (default 64)\n"
           "  -s, --seed N          seed for weights and embeddings, 1..2^63-1 (default 1)\n"
           "  -t, --text TEXT       your own sentence (UTF-8, at most 512 tokens)\n"
           "      --sample K        built-in sample K (1-based; see --list-samples)\n"
           "      --list-samples    list the built-in samples and exit\n"
           "      --mask none|causal   causal: a token sees only itself and earlier ones\n"
           "      --no-scale        scores are Q K^T without dividing by sqrt(d_k)\n"
           "      --temperature T   scores are also divided by T, 0.05..20 (default 1)\n"
           "      --pad N           pad the text to N positions with [PAD] tokens, masked\n"
           "                        as keys; N from the number of tokens to 512\n"
           "      --ablate LIST     zero these heads' bands of Concat, e.g. 1,3 (1-based)\n"
           "      --weights W       random | patterns: designed heads (previous, next,\n"
           "                        first, self, same-word, broad) (default random)\n"
           "      --compare SPEC    pin a view beside this one that differs in SPEC:\n"
           "                        h=N, d_model=N, seed=N, mask=none|causal,\n"
           "                        scale=on|off, temperature=T, weights=random|patterns,\n"
           "                        pad=N|off, comma-separated (e.g. h=1 or scale=off)\n"
           "\n"
           "Output (without these, the visualizer window opens):\n"
           "      --dump DIR        write every tensor as .npy, tokens.txt, meta.json; exit\n"
           "      --export FILE     render the view to FILE (.png, .svg or .pdf); exit\n"
           "      --size WxH        view size in layout pixels, 200..8192 (default 1600x900)\n"
           "      --scale F         PNG pixel multiplier, 1..4 (default 1)\n"
           "      --panel P         all | head:K | equation | steps:K (head K step by step);\n"
           "                        one panel is cropped to its content\n"
           "      --page K          export page K of the heads grid when it pages (default 1)\n"
           "      --values          numbers in the cells where they fit\n"
           "      --contrast C      attention scale: fixed | row | log (default fixed)\n"
           "      --diff            MultiHead drawn as its change from the unablated one\n"
           "      --theme T         light | dark (default light)\n"
           "      --colormap NAME   viridis | magma | cividis | greys (default viridis)\n"
           "      --background B    opaque | transparent (default opaque)\n"
           "      --export-dir DIR  where Ctrl+S in the window saves (default: current folder)\n"
           "      --font PATH       TrueType font to use instead of the fontconfig match\n"
           "      --bench           time the forward pass and the drawing; print; exit\n"
           "      --bench-json      the same, one JSON object a line\n"
           "      --bench-quick     every case once: checks the output, measures nothing\n"
           "\n"
           "Learning (in the window: the L key):\n"
           "      --train TASK      train a small attention model on prev, first, pair, sort\n"
           "                        or induction, with -H, -d (default 32 here) and -s; print\n"
           "                        each head's attention and the accuracy without it; with\n"
           "                        --dump DIR also write weights, tensors and train.json,\n"
           "                        with --export FILE a figure of the trained model\n"
           "      --steps N         training steps, 1..1000000 (default: the task's, 500..3000)\n"
           "      --layers N        1 or 2 (default 1; 2 for induction)\n"
           "      --mlp             an MLP block (4 d_model wide, GELU) after each attention\n"
           "      --lr R            AdamW learning rate, 0.00001..1 (default 0.003)\n"
           "      --batch N         examples per step, 1..1024 (default 32)\n"
           "\n"
           "  -h, --help            this text\n"
           "  -V, --version         the version\n"
           "\n"
           "Exit status: 0 ok, 2 bad usage or value, 1 runtime failure.\n";
}

int cli_parse_float(const char *s, double lo, double hi, double *out) {
    if (!s) return -1;
    size_t digits = 0, points = 0;
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
        } else if (*p == '.' && points == 0 && p[1] >= '0' && p[1] <= '9') {
            points++;
        } else {
            return -1; /* sign, exponent, space, letters (nan, inf), a second '.' */
        }
    }
    if (digits == 0) return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end); /* the C locale: the program never calls setlocale */
    if (errno == ERANGE || *end != '\0' || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

int cli_parse_int(const char *s, long lo, long hi, long *out) {
    if (!s || !*s) return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1; /* digits only: no sign, space or junk */
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno == ERANGE || *end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

enum {
    OPT_SAMPLE = 256,
    OPT_LIST,
    OPT_MASK,
    OPT_NO_SCALE,
    OPT_DUMP,
    OPT_EXPORT,
    OPT_EXPORT_DIR,
    OPT_SIZE,
    OPT_SCALE,
    OPT_PANEL,
    OPT_THEME,
    OPT_COLORMAP,
    OPT_BACKGROUND,
    OPT_FONT,
    OPT_BENCH,
    OPT_PAD,
    OPT_TEMPERATURE,
    OPT_ABLATE,
    OPT_WEIGHTS,
    OPT_PAGE,
    OPT_BENCH_JSON,
    OPT_BENCH_QUICK,
    OPT_VALUES,
    OPT_CONTRAST,
    OPT_DIFF,
    OPT_TRAIN,
    OPT_STEPS,
    OPT_LAYERS,
    OPT_MLP,
    OPT_LR,
    OPT_BATCH,
    OPT_COMPARE,
};

static const struct option long_opts[] = {
    {"heads", required_argument, NULL, 'H'},
    {"d-model", required_argument, NULL, 'd'},
    {"seed", required_argument, NULL, 's'},
    {"text", required_argument, NULL, 't'},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"list-samples", no_argument, NULL, OPT_LIST},
    {"mask", required_argument, NULL, OPT_MASK},
    {"no-scale", no_argument, NULL, OPT_NO_SCALE},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"export", required_argument, NULL, OPT_EXPORT},
    {"export-dir", required_argument, NULL, OPT_EXPORT_DIR},
    {"size", required_argument, NULL, OPT_SIZE},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"panel", required_argument, NULL, OPT_PANEL},
    {"theme", required_argument, NULL, OPT_THEME},
    {"colormap", required_argument, NULL, OPT_COLORMAP},
    {"background", required_argument, NULL, OPT_BACKGROUND},
    {"font", required_argument, NULL, OPT_FONT},
    {"bench", no_argument, NULL, OPT_BENCH},
    {"bench-json", no_argument, NULL, OPT_BENCH_JSON},
    {"bench-quick", no_argument, NULL, OPT_BENCH_QUICK},
    {"pad", required_argument, NULL, OPT_PAD},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"ablate", required_argument, NULL, OPT_ABLATE},
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"page", required_argument, NULL, OPT_PAGE},
    {"values", no_argument, NULL, OPT_VALUES},
    {"contrast", required_argument, NULL, OPT_CONTRAST},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"train", required_argument, NULL, OPT_TRAIN},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"mlp", no_argument, NULL, OPT_MLP},
    {"lr", required_argument, NULL, OPT_LR},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"compare", required_argument, NULL, OPT_COMPARE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* The option's name for messages: "--mask" for a long option, "-H" for a short one. */
static const char *option_name(int opt, const char *arg) {
    static char buf[64];
    if (arg && arg[0] == '-' && arg[1] == '-') {
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(arg, "="), arg);
        return buf;
    }
    for (const struct option *o = long_opts; o->name; o++)
        if (o->val == opt && opt >= 256) {
            snprintf(buf, sizeof buf, "--%s", o->name);
            return buf;
        }
    snprintf(buf, sizeof buf, "-%c", opt > 32 && opt < 127 ? opt : '?');
    return buf;
}

static int set_mode(cli_options *o, cli_mode m, const char *opt, char *err, size_t errlen) {
    if (o->mode != CLI_WINDOW && o->mode != m) {
        snprintf(err, errlen, "%s: cannot be combined with another output option", opt);
        return -1;
    }
    o->mode = m;
    return 0;
}

static int parse_size(const char *s, int *w, int *h) {
    char buf[32];
    const char *x = strchr(s, 'x');
    if (!x || (size_t)(x - s) >= sizeof buf) return -1;
    memcpy(buf, s, (size_t)(x - s));
    buf[x - s] = '\0';
    long a = 0, b = 0;
    if (cli_parse_int(buf, 200, 8192, &a) != 0 || cli_parse_int(x + 1, 200, 8192, &b) != 0)
        return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

/* --ablate LIST: 1-based heads separated by commas, no empty items, no repeats.
 * Whether each is at most h is checked with the whole configuration. */
static int parse_ablate(const char *s, mha_config *cfg, char *err, size_t errlen) {
    memset(cfg->ablate, 0, sizeof cfg->ablate);
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        char item[16];
        long v = 0;
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen,
                     "--ablate '%s': must be a comma list of heads from 1 to h, e.g. 1,3", s);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (cli_parse_int(item, 1, MHA_MAX_D_MODEL, &v) != 0) {
            snprintf(err, errlen, "--ablate '%s': '%s' is not a head from 1 to h", s, item);
            return -1;
        }
        if (mha_config_is_ablated(cfg, (int)v - 1)) {
            snprintf(err, errlen, "--ablate '%s': head %ld is listed twice", s, v);
            return -1;
        }
        mha_config_set_ablated(cfg, (int)v - 1, 1);
        if (p[len] == '\0') return 0;
        p += len + 1;
    }
}

/* --compare SPEC: key=value items separated by commas, each key once. */
static int parse_compare(const char *s, cli_options *o, char *err, size_t errlen) {
    static const char *keys[] = {"h",     "d_model",     "seed",    "mask",
                                 "scale", "temperature", "weights", "pad"};
    const char *p = s;
    mha_config *c = &o->compare_cfg;
    for (;;) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "--compare '%s': must be key=value items such as h=1,scale=off",
                     s);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *val = strchr(item, '=');
        if (!val) {
            snprintf(err, errlen, "--compare '%s': '%s' has no '=' (e.g. h=1)", s, item);
            return -1;
        }
        *val++ = '\0';
        int k = -1;
        for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
            if (strcmp(item, keys[i]) == 0) k = i;
        if (k < 0) {
            snprintf(err, errlen,
                     "--compare: unknown setting '%s' (h, d_model, seed, mask, scale, "
                     "temperature, weights, pad)",
                     item);
            return -1;
        }
        if (o->compare_set & (1u << k)) {
            snprintf(err, errlen, "--compare '%s': %s is given twice", s, item);
            return -1;
        }
        long v = 0;
        double fv = 0;
        int bad = 0;
        switch (k) {
        case 0: bad = cli_parse_int(val, 1, MHA_MAX_D_MODEL, &v) != 0, c->h = (int)v; break;
        case 1: bad = cli_parse_int(val, 1, MHA_MAX_D_MODEL, &v) != 0, c->d_model = (int)v; break;
        case 2:
            bad = cli_parse_int(val, 1, LONG_MAX, &v) != 0;
            c->seed = (uint64_t)v;
            break;
        case 3:
            bad = strcmp(val, "none") != 0 && strcmp(val, "causal") != 0;
            c->mask = strcmp(val, "causal") == 0 ? MHA_MASK_CAUSAL : MHA_MASK_NONE;
            break;
        case 4:
            bad = strcmp(val, "on") != 0 && strcmp(val, "off") != 0;
            c->no_scale = strcmp(val, "off") == 0;
            break;
        case 5:
            bad = cli_parse_float(val, MHA_MIN_TEMPERATURE, MHA_MAX_TEMPERATURE, &fv) != 0;
            c->temperature = (float)fv;
            break;
        case 6:
            bad = strcmp(val, "random") != 0 && strcmp(val, "patterns") != 0;
            c->weights = strcmp(val, "patterns") == 0 ? MHA_WEIGHTS_PATTERNS : MHA_WEIGHTS_RANDOM;
            break;
        case 7:
            if (strcmp(val, "off") == 0)
                c->pad = 0;
            else
                bad = cli_parse_int(val, 1, MHA_MAX_N, &v) != 0, c->pad = (int)v;
            break;
        }
        if (bad) {
            static const char *want[] = {"a whole number from 1 to 4096",
                                         "a whole number from 1 to 4096",
                                         "a whole number from 1",
                                         "none or causal",
                                         "on or off",
                                         "a decimal number between 0.05 and 20",
                                         "random or patterns",
                                         "off or a whole number up to 512"};
            snprintf(err, errlen, "--compare: %s='%s' must be %s", item, val, want[k]);
            return -1;
        }
        o->compare_set |= 1u << k;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    o->compare = 1;
    return 0;
}

/* One line, whatever the quoted value holds: control characters show as '?'. */
static void one_line(char *err) {
    for (unsigned char *p = (unsigned char *)err; *p; p++)
        if (*p < 0x20 || *p == 0x7F) *p = '?';
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        one_line(err);                                                                             \
        return 2;                                                                                  \
    } while (0)

int cli_parse(cli_options *o, int argc, char **argv, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    o->theme = -1;
    o->colormap = -1;
    int help = 0, version = 0, list = 0, bench = 0;
    long v = 0;
    double fv = 0.0;
    /* optind = 0, not 1: glibc (and musl) then reinitialise getopt completely. With
       1, a parse that stopped inside a group of short options ("-xh" failing at x)
       leaves getopt's pointer into that old argument, and the next parse would
       carry on reading "h" from it. The tests parse many argv in one process. */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":H:d:s:t:hV", long_opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            if (cli_parse_int(optarg, 1, MHA_MAX_D_MODEL, &v) != 0)
                FAIL("--heads '%s': must be a whole number between 1 and d_model (at most %d)",
                     optarg, MHA_MAX_D_MODEL);
            o->cfg.h = (int)v;
            break;
        case 'd':
            if (cli_parse_int(optarg, 1, MHA_MAX_D_MODEL, &v) != 0)
                FAIL("--d-model '%s': must be a whole number between 1 and %d", optarg,
                     MHA_MAX_D_MODEL);
            o->cfg.d_model = (int)v;
            break;
        case 's':
            if (cli_parse_int(optarg, 1, LONG_MAX, &v) != 0)
                FAIL("--seed '%s': must be a whole number between 1 and %ld", optarg, LONG_MAX);
            o->cfg.seed = (uint64_t)v;
            break;
        case 't': o->text = optarg; break;
        case OPT_SAMPLE:
            if (cli_parse_int(optarg, 1, INT_MAX, &v) != 0)
                FAIL("--sample '%s': must be a whole number from 1 (see --list-samples)", optarg);
            o->sample = (int)v;
            break;
        case OPT_LIST: list = 1; break;
        case OPT_MASK:
            if (strcmp(optarg, "none") == 0)
                o->cfg.mask = MHA_MASK_NONE;
            else if (strcmp(optarg, "causal") == 0)
                o->cfg.mask = MHA_MASK_CAUSAL;
            else
                FAIL("--mask '%s': must be none or causal", optarg);
            break;
        case OPT_NO_SCALE: o->cfg.no_scale = 1; break;
        case OPT_DUMP:
            if (!*optarg) FAIL("--dump: needs a folder name");
            if (set_mode(o, CLI_DUMP, "--dump", err, errlen) != 0) return 2;
            o->dump_dir = optarg;
            break;
        case OPT_EXPORT: {
            const char *dot = strrchr(optarg, '.');
            const char *slash = strrchr(optarg, '/');
            if (!dot || (slash && dot < slash) ||
                (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0 && strcmp(dot, ".pdf") != 0))
                FAIL("--export '%s': the file name must end in .png, .svg or .pdf", optarg);
            if (set_mode(o, CLI_EXPORT, "--export", err, errlen) != 0) return 2;
            o->export_path = optarg;
            break;
        }
        case OPT_EXPORT_DIR:
            if (!*optarg) FAIL("--export-dir: needs a folder name");
            o->export_dir = optarg;
            break;
        case OPT_SIZE:
            if (parse_size(optarg, &o->size_w, &o->size_h) != 0)
                FAIL("--size '%s': must be WxH with each side between 200 and 8192", optarg);
            break;
        case OPT_SCALE:
            if (cli_parse_int(optarg, 1, 4, &v) != 0)
                FAIL("--scale '%s': must be a whole number between 1 and 4", optarg);
            o->scale = (int)v;
            break;
        case OPT_PANEL:
            if (strcmp(optarg, "all") == 0) {
                o->panel = CLI_PANEL_ALL;
            } else if (strcmp(optarg, "equation") == 0) {
                o->panel = CLI_PANEL_EQUATION;
            } else if (strncmp(optarg, "head:", 5) == 0 &&
                       cli_parse_int(optarg + 5, 1, MHA_MAX_D_MODEL, &v) == 0) {
                o->panel = CLI_PANEL_HEAD;
                o->panel_head = (int)v;
            } else if (strncmp(optarg, "steps:", 6) == 0 &&
                       cli_parse_int(optarg + 6, 1, MHA_MAX_D_MODEL, &v) == 0) {
                o->panel = CLI_PANEL_STEPS;
                o->panel_head = (int)v;
            } else {
                FAIL("--panel '%s': must be all, equation, head:K or steps:K with K from 1 to h",
                     optarg);
            }
            break;
        case OPT_PAGE:
            if (cli_parse_int(optarg, 1, MHA_MAX_D_MODEL, &v) != 0)
                FAIL("--page '%s': must be a whole number from 1 to the number of pages", optarg);
            o->page = (int)v;
            break;
        case OPT_THEME:
            if (strcmp(optarg, "light") == 0)
                o->theme = 0;
            else if (strcmp(optarg, "dark") == 0)
                o->theme = 1;
            else
                FAIL("--theme '%s': must be light or dark", optarg);
            break;
        case OPT_COLORMAP:
            o->colormap = cmap_find(optarg);
            if (o->colormap < 0)
                FAIL("--colormap '%s': must be one of %s", optarg, cmap_names_list());
            break;
        case OPT_BACKGROUND:
            if (strcmp(optarg, "opaque") == 0)
                o->transparent = 0;
            else if (strcmp(optarg, "transparent") == 0)
                o->transparent = 1;
            else
                FAIL("--background '%s': must be opaque or transparent", optarg);
            break;
        case OPT_FONT:
            if (!*optarg) FAIL("--font: needs a file name");
            o->font = optarg;
            break;
        case OPT_BENCH: bench = 1; break;
        case OPT_BENCH_JSON: bench = o->bench_json = 1; break;
        case OPT_BENCH_QUICK: bench = o->bench_quick = 1; break;
        case OPT_PAD:
            if (cli_parse_int(optarg, 1, MHA_MAX_N, &v) != 0)
                FAIL("--pad '%s': must be a whole number from the number of tokens to %d", optarg,
                     MHA_MAX_N);
            o->cfg.pad = (int)v;
            break;
        case OPT_TEMPERATURE:
            if (cli_parse_float(optarg, MHA_MIN_TEMPERATURE, MHA_MAX_TEMPERATURE, &fv) != 0)
                FAIL("--temperature '%s': must be a decimal number between %g and %g", optarg,
                     (double)MHA_MIN_TEMPERATURE, (double)MHA_MAX_TEMPERATURE);
            o->cfg.temperature = (float)fv;
            break;
        case OPT_ABLATE:
            if (parse_ablate(optarg, &o->cfg, err, errlen) != 0) return 2;
            break;
        case OPT_WEIGHTS:
            if (strcmp(optarg, "random") == 0)
                o->cfg.weights = MHA_WEIGHTS_RANDOM;
            else if (strcmp(optarg, "patterns") == 0)
                o->cfg.weights = MHA_WEIGHTS_PATTERNS;
            else
                FAIL("--weights '%s': must be random or patterns", optarg);
            break;
        case OPT_VALUES: o->values = 1; break;
        case OPT_DIFF: o->diff = 1; break;
        case OPT_CONTRAST:
            if (strcmp(optarg, "fixed") == 0)
                o->contrast = 0;
            else if (strcmp(optarg, "row") == 0)
                o->contrast = 1;
            else if (strcmp(optarg, "log") == 0)
                o->contrast = 2;
            else
                FAIL("--contrast '%s': must be fixed, row or log", optarg);
            break;
        case OPT_TRAIN: {
            int id = learn_task_find(optarg);
            if (id < 0) FAIL("--train '%s': must be prev, first, pair, sort or induction", optarg);
            o->train.task = id + 1;
            break;
        }
        case OPT_STEPS:
            if (cli_parse_int(optarg, 1, 1000000, &v) != 0)
                FAIL("--steps '%s': must be a whole number between 1 and 1000000", optarg);
            o->train.steps = (int)v;
            break;
        case OPT_LAYERS:
            if (cli_parse_int(optarg, 1, LEARN_MAX_LAYERS, &v) != 0)
                FAIL("--layers '%s': must be 1 or 2", optarg);
            o->train.layers = (int)v;
            break;
        case OPT_MLP: o->train.mlp = 1; break;
        case OPT_LR:
            if (cli_parse_float(optarg, 1e-5, 1.0, &fv) != 0)
                FAIL("--lr '%s': must be a decimal number between 0.00001 and 1", optarg);
            o->train.lr = (float)fv;
            break;
        case OPT_BATCH:
            if (cli_parse_int(optarg, 1, LEARN_MAX_BATCH, &v) != 0)
                FAIL("--batch '%s': must be a whole number between 1 and %d", optarg,
                     LEARN_MAX_BATCH);
            o->train.batch = (int)v;
            break;
        case OPT_COMPARE:
            memset(&o->compare_cfg, 0, sizeof o->compare_cfg);
            o->compare_set = 0;
            if (parse_compare(optarg, o, err, errlen) != 0) {
                one_line(err);
                return 2;
            }
            break;
        case 'h': help = 1; break;
        case 'V': version = 1; break;
        case ':': FAIL("%s: needs a value (see --help)", option_name(optopt, argv[optind - 1]));
        default:
            if (optopt)
                FAIL("%s: unknown option or unexpected value (see --help)",
                     option_name(optopt, argv[optind - 1]));
            FAIL("%s: unknown option (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) FAIL("'%s': unexpected argument (see --help)", argv[optind]);
    if (help) {
        o->mode = CLI_HELP;
        return 0;
    }
    if (version) {
        o->mode = CLI_VERSION;
        return 0;
    }
    if (o->text && o->sample) FAIL("--text and --sample: give one or the other");
    if (list) {
        if (set_mode(o, CLI_LIST_SAMPLES, "--list-samples", err, errlen) != 0) return 2;
    }
    if (bench) {
        if (set_mode(o, CLI_BENCH, "--bench", err, errlen) != 0) return 2;
    }
    if (o->train.task) { /* --train: alone, or with --dump for its files */
        if (o->mode != CLI_WINDOW && o->mode != CLI_DUMP && o->mode != CLI_EXPORT)
            FAIL("--train: cannot be combined with another output option");
        if (o->text || o->sample || o->cfg.mask || o->cfg.no_scale || o->cfg.pad ||
            o->cfg.temperature != 0.0f || o->cfg.weights || o->panel || o->export_dir ||
            o->values || o->contrast || o->diff)
            FAIL("--train: takes -H, -d, -s, --steps, --layers, --mlp, --lr, --batch, "
                 "--dump and --export (with --size, --scale, --theme, --colormap) only");
        for (int i = 0; i < MHA_ABLATE_WORDS; i++)
            if (o->cfg.ablate[i]) FAIL("--train: takes no --ablate (it ablates every head)");
        o->mode = CLI_TRAIN;
    } else if (o->train.steps || o->train.layers || o->train.mlp || o->train.lr != 0.0f ||
               o->train.batch) {
        FAIL("--steps, --layers, --mlp, --lr and --batch: only with --train");
    }
    if (o->compare && o->mode != CLI_WINDOW && o->mode != CLI_EXPORT)
        FAIL("--compare: only with the window or --export");
    if (o->compare && o->panel != CLI_PANEL_ALL)
        FAIL("--compare: the compare view is one figure: only with --panel all");
    if ((o->panel == CLI_PANEL_HEAD || o->panel == CLI_PANEL_STEPS) &&
        o->panel_head > (o->cfg.h ? o->cfg.h : MHA_DEFAULT_H))
        FAIL("--panel %s:%d: there are only %d heads",
             o->panel == CLI_PANEL_HEAD ? "head" : "steps", o->panel_head,
             o->cfg.h ? o->cfg.h : MHA_DEFAULT_H);
    return 0;
}
