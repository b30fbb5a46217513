/* cli.c: the mhaviz command line: the --help text, the table of options, and
 * cli_parse, which runs getopt_long over them and hands each to the parser of its
 * group (cli_compute.c, cli_output.c, cli_learn.c), then checks what combines. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"

/* in two parts: C11 promises string literals of 4095 characters only */
static const char usage_a[] =
    "usage: mhaviz [options]\n"
    "Multi-head attention, computed and drawn: every head, Concat and W^O.\n"
    "\n"
    "Computation:\n"
    "  -H, --heads N         number of heads h, divides d_model (default 4)\n"
    "  -d, --d-model N       model width d_model, 1..4096 (default 64)\n"
    "  -s, --seed N          seed for weights and embeddings, 1..2^63-1 (default 1)\n"
    "  -t, --text TEXT       your own sentence (UTF-8, at most 512 tokens)\n"
    "      --text-file FILE  the text of FILE (- for standard input): UTF-8, at most\n"
    "                        1 MiB, cut to its first 512 tokens\n"
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
    "                        steps:K:S (its stage S, 1..9, large); lines | lines:K\n"
    "                        (head view); one panel is cropped to its content\n"
    "      --page K          export page K of the heads grid when it pages (default 1)\n"
    "      --pinned-page K   with --compare, page K of the pinned view's heads\n"
    "      --values          numbers in the cells where they fit\n"
    "      --contrast C      attention scale: fixed | row | log (default fixed,\n"
    "                        row on a dark field)\n"
    "      --diff            MultiHead drawn as its change from the unablated one\n"
    "      --present         open the window in presentation mode (P); with --export,\n"
    "                        the figure at the presentation's text floor\n"
    "      --theme T         light | dark (default light)\n"
    "      --colormap NAME   viridis | magma | cividis | greys (default viridis)\n"
    "      --background B    opaque | transparent (default opaque)\n"
    "      --export-dir DIR  where Ctrl+S in the window saves (default: current folder)\n"
    "      --font PATH       TrueType font to use instead of the fontconfig match\n"
    "      --bench           time the forward pass and the drawing; print; exit\n"
    "      --bench-json      the same, one JSON object a line\n"
    "      --bench-quick     every case once: checks the output, measures nothing\n";
static const char usage_b[] =
    "\n"
    "Learning (in the window: the L key):\n"
    "      --train TASK      train a small attention model on prev, first, pair, sort,\n"
    "                        induction or cards, with -H, -d (default 32 here, 16\n"
    "                        for cards) and -s; print each head's attention and the\n"
    "                        accuracy without it; with --dump DIR also write\n"
    "                        weights, tensors and train.json, with --export FILE a\n"
    "                        figure of the trained model\n"
    "      --steps N         training steps, 1..1000000 (default: the task's, 500..3000)\n"
    "      --layers N        1 or 2 (default 1; 2 for induction)\n"
    "      --mlp             an MLP block (4 d_model wide, GELU) after each attention\n"
    "      --lr R            AdamW learning rate, 0.00001..1 (default 0.003)\n"
    "      --batch N         examples per step, 1..1024 (default 32)\n"
    "      --layer L         with --export, the trained model's layer L (default 1);\n"
    "                        with --model, the layer shown (default 1)\n"
    "      --sweep h         one run per divisor h of d_model at the same budget and\n"
    "                        seeds: a table; sweep.json with --dump, a plot with --export\n"
    "      --seeds K         with --sweep, seeds -s, -s + 1, ... (K of them, 1..64;\n"
    "                        default 3)\n"
    "      --moments K       with --export, K moments of the run (2..60, from step 0\n"
    "                        to the last), one page each: a PDF's pages, or numbered\n"
    "                        .png/.svg files\n"
    "\nView files:\n"
    "      --state FILE      open a view file (README \"View files\"; Ctrl+Shift+V in\n"
    "                        the window saves one); with the window, --export or\n"
    "                        --dump; an option given beside it wins over the file\n"
    "\nReal models:\n"
    "      --model PATH      a checkpoint (GPT-2, Llama-family, BERT-family): a folder\n"
    "                        with config.json, model.safetensors, tokenizer.json\n"
    "                        (or vocab.json and merges.txt, or vocab.txt) (README)\n"
    "                        -H K re-splits its layers into K heads; --ablate L:H,...\n"
    "                        removes heads; --panel model | next; --dump writes\n"
    "                        every layer\n"
    "      --kv-heads N      the heads share N K/V heads, each the mean of the ones\n"
    "                        it replaces (N divides h, or with --model its own K/V)\n"
    "      --generate N      with --model: write N tokens after the text, printed\n"
    "                        (with --dump, generated.json too); sampled with\n"
    "      --sample-temperature T  on the logits (default 1; 0: the most likely)\n"
    "      --top-k K, --top-p P    and -s SEED (README \"The model writes\"); without\n"
    "                        --generate they set the window's W (the model writes)\n"
    "\n"
    "Lessons (README \"Lessons\"):\n"
    "      --lesson FILE     present a lesson in the window (G lists the built-in\n"
    "                        ones); with --export deck.pdf|.svg|.png every step as\n"
    "                        a 16:9 page (default 1920x1080); with --step K and\n"
    "                        --export or --dump, step K's view\n"
    "      --step K          the step --export or --dump writes (1-based)\n"
    "\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "\n"
    "Exit status: 0 ok, 2 bad usage or value, 1 runtime failure.\n";

const char *cli_usage(void) {
    static char text[sizeof usage_a + sizeof usage_b];
    if (!text[0]) {
        memcpy(text, usage_a, sizeof usage_a - 1);
        memcpy(text + sizeof usage_a - 1, usage_b, sizeof usage_b);
    }
    return text;
}

/* Every option, by group as --help lists them. The order does not matter to
 * getopt: an abbreviation that fits two options is refused either way. */
static const struct option long_opts[] = {
    /* computation: cli_computation_option */
    {"heads", required_argument, NULL, 'H'},
    {"d-model", required_argument, NULL, 'd'},
    {"seed", required_argument, NULL, 's'},
    {"text", required_argument, NULL, 't'},
    {"text-file", required_argument, NULL, OPT_TEXT_FILE},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"list-samples", no_argument, NULL, OPT_LIST},
    {"mask", required_argument, NULL, OPT_MASK},
    {"no-scale", no_argument, NULL, OPT_NO_SCALE},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"pad", required_argument, NULL, OPT_PAD},
    {"ablate", required_argument, NULL, OPT_ABLATE},
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"compare", required_argument, NULL, OPT_COMPARE},
    /* output: cli_output_option */
    {"dump", required_argument, NULL, OPT_DUMP},
    {"export", required_argument, NULL, OPT_EXPORT},
    {"size", required_argument, NULL, OPT_SIZE},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"panel", required_argument, NULL, OPT_PANEL},
    {"page", required_argument, NULL, OPT_PAGE},
    {"pinned-page", required_argument, NULL, OPT_PINNED_PAGE},
    {"values", no_argument, NULL, OPT_VALUES},
    {"contrast", required_argument, NULL, OPT_CONTRAST},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"present", no_argument, NULL, OPT_PRESENT},
    {"theme", required_argument, NULL, OPT_THEME},
    {"colormap", required_argument, NULL, OPT_COLORMAP},
    {"background", required_argument, NULL, OPT_BACKGROUND},
    {"export-dir", required_argument, NULL, OPT_EXPORT_DIR},
    {"font", required_argument, NULL, OPT_FONT},
    {"state", required_argument, NULL, OPT_STATE},
    {"bench", no_argument, NULL, OPT_BENCH},
    {"bench-json", no_argument, NULL, OPT_BENCH_JSON},
    {"bench-quick", no_argument, NULL, OPT_BENCH_QUICK},
    /* learning: cli_learning_option */
    {"train", required_argument, NULL, OPT_TRAIN},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"mlp", no_argument, NULL, OPT_MLP},
    {"lr", required_argument, NULL, OPT_LR},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"layer", required_argument, NULL, OPT_LAYER},
    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"seeds", required_argument, NULL, OPT_SEEDS},
    {"moments", required_argument, NULL, OPT_MOMENTS},
    {"model", required_argument, NULL, OPT_MODEL},
    {"generate", required_argument, NULL, OPT_GENERATE},
    {"sample-temperature", required_argument, NULL, OPT_SAMPLE_TEMPERATURE},
    {"top-k", required_argument, NULL, OPT_TOP_K},
    {"top-p", required_argument, NULL, OPT_TOP_P},
    {"kv-heads", required_argument, NULL, OPT_KV_HEADS},
    /* a lesson: cli_lesson_option */
    {"lesson", required_argument, NULL, OPT_LESSON},
    {"step", required_argument, NULL, OPT_STEP},
    /* cli_parse's own */
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};
#define SHORT_OPTS ":H:d:s:t:hV" /* ':' first: a missing value is ':', not '?' */

/* The parsers of the groups, asked in turn until one takes the option. */
static const cli_group_fn groups[] = {cli_computation_option, cli_output_option,
                                      cli_learning_option, cli_model_option, cli_lesson_option};

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

/* The option's long name without its dashes: "heads" for 'H', "page" for OPT_PAGE. */
static const char *option_long_name(int opt) {
    for (const struct option *o = long_opts; o->name; o++)
        if (o->val == opt) return o->name;
    return "?";
}

/* An option given a second time: refused, whatever the values (none accumulates:
 * --ablate takes one list, --compare one SPEC). -h and -V may repeat. Returns 0,
 * or 2 with "--export: given twice ('x.png', then 'y.png')". */
static int once(cli_flags *f, int c, const char *arg, char *err, size_t errlen) {
    if (c <= 0 || c >= OPT_END || c == 'h' || c == 'V' || c == '?' || c == ':') return 0;
    if (!f->seen[c]) {
        f->seen[c] = 1;
        f->first[c] = arg;
        return 0;
    }
    if (arg)
        return cli_fail(err, errlen, "--%s: given twice ('%s', then '%s'); give it once",
                        option_long_name(c), f->first[c], arg);
    return cli_fail(err, errlen, "--%s: given twice; give it once", option_long_name(c));
}

/* -h and -V, and what getopt could not take: a missing value (':'), an unknown
 * option or a value where none goes ('?'). arg is the argument getopt read last. */
static int other_option(cli_flags *f, int opt, const char *arg, char *err, size_t errlen) {
    switch (opt) {
    case 'h': f->help = 1; return 0;
    case 'V': f->version = 1; return 0;
    case ':':
        return cli_fail(err, errlen, "%s: needs a value (see --help)", option_name(optopt, arg));
    default:
        if (optopt)
            return cli_fail(err, errlen, "%s: unknown option or unexpected value (see --help)",
                            option_name(optopt, arg));
        return cli_fail(err, errlen, "%s: unknown option (see --help)", arg);
    }
}

/* What the options ask together, once all are read: one source of text, one
 * output mode, --train's company, --compare's, and a panel's head among h. */
static int check_combinations(cli_options *o, const cli_flags *f, char *err, size_t errlen) {
    if (o->text && o->sample)
        return cli_fail(err, errlen, "--text and --sample: give one or the other");
    if (o->text_file && (o->text || o->sample))
        return cli_fail(err, errlen, "--text-file and %s: give one or the other",
                        o->text ? "--text" : "--sample");
    if (f->list && cli_set_mode(o, CLI_LIST_SAMPLES, "--list-samples", err, errlen) != 0) return 2;
    if (f->bench && cli_set_mode(o, CLI_BENCH, "--bench", err, errlen) != 0) return 2;
    if (o->dump_dir && o->export_path && !o->train.task)
        return cli_fail(err, errlen, "--dump and --export: together only with --train");
    if (cli_model_check(o, err, errlen) != 0) return 2;
    if (cli_lesson_check(o, err, errlen) != 0) return 2;
    if (!o->model_path && cli_learning_check(o, err, errlen) != 0) return 2;
    if (o->compare && o->mode != CLI_WINDOW && o->mode != CLI_EXPORT)
        return cli_fail(err, errlen, "--compare: only with the window or --export");
    if (o->pinned_page && !o->compare)
        return cli_fail(err, errlen,
                        "--pinned-page %d: only with --compare (the pinned view's page)",
                        o->pinned_page);
    if (o->compare && o->panel != CLI_PANEL_ALL)
        return cli_fail(err, errlen,
                        "--compare: the compare view is one figure: only with --panel all");
    int h = o->cfg.h ? o->cfg.h : MHA_DEFAULT_H;
    if (!o->model_path &&
        (o->panel == CLI_PANEL_HEAD || o->panel == CLI_PANEL_STEPS ||
         o->panel == CLI_PANEL_LINES) &&
        o->panel_head > h)
        return cli_fail(err, errlen, "--panel %s:%d: there are only %d heads",
                        o->panel == CLI_PANEL_HEAD    ? "head"
                        : o->panel == CLI_PANEL_LINES ? "lines"
                                                      : "steps",
                        o->panel_head, h);
    char why[256];
    const int idle = cli_idle_option(o, f, why, sizeof why);
    if (idle) return cli_fail(err, errlen, "--%s: %s", option_long_name(idle), why);
    return 0;
}

int cli_parse(cli_options *o, int argc, char **argv, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    o->theme = -1;
    o->colormap = -1;
    cli_flags f = {0};
    /* optind = 0, not 1: glibc (and musl) then reinitialise getopt completely. With
       1, a parse that stopped inside a group of short options ("-xh" failing at x)
       leaves getopt's pointer into that old argument, and the next parse would
       carry on reading "h" from it. The tests parse many argv in one process. */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, SHORT_OPTS, long_opts, NULL)) != -1) {
        if (once(&f, c, optarg, err, errlen) != 0) return 2;
        int rc = CLI_NOT_MINE;
        for (size_t g = 0; rc == CLI_NOT_MINE && g < sizeof groups / sizeof groups[0]; g++)
            rc = groups[g](o, &f, c, optarg, err, errlen);
        if (rc == CLI_NOT_MINE) rc = other_option(&f, c, argv[optind - 1], err, errlen);
        if (rc != 0) return 2;
    }
    if (optind < argc)
        return cli_fail(err, errlen, "'%s': unexpected argument (see --help)", argv[optind]);
    if (f.help) {
        o->mode = CLI_HELP;
        return 0;
    }
    if (f.version) {
        o->mode = CLI_VERSION;
        return 0;
    }
    cli_state_given(o, f.seen, long_opts); /* what --state FILE's settings give way to */
    return check_combinations(o, &f, err, errlen);
}
