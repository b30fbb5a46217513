/* cli_company.c: which options work in which mode. Once the mode is known, an
 * option that would be read by nothing (--page with --dump, --panel in the
 * window, --size with --bench ...) is refused with the modes it works with, so
 * no option is ever ignored in silence. The README's option table says the same
 * in "Which options go together"; keep the two together. */
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"

/* The modes, one bit each; with --model a mode is its own (MW ... MB). */
enum {
    W = 1 << 0,   /* the window */
    E = 1 << 1,   /* --export */
    D = 1 << 2,   /* --dump */
    B = 1 << 3,   /* --bench */
    L = 1 << 4,   /* --list-samples */
    TW = 1 << 5,  /* --train alone: printed */
    TD = 1 << 6,  /* --train --dump */
    TE = 1 << 7,  /* --train --export */
    MW = 1 << 8,  /* --model in the window */
    ME = 1 << 9,  /* --model --export */
    MD = 1 << 10, /* --model --dump */
    MB = 1 << 11, /* --model --bench */
};
#define MODES 12
#define T_ALL (TW | TD | TE)

static const char *const mode_with[MODES] = {
    "in the window",         "with --export",         "with --dump",
    "with --bench",          "with --list-samples",   "with --train",
    "with --train --dump",   "with --train --export", "with --model in the window",
    "with --model --export", "with --model --dump",   "with --model --bench",
};

/* What each option works with. An option missing here works everywhere it
 * parses (-h, -V); the learning options' and --model's own rules are checked
 * before (cli_learn.c, cli_model.c), these only catch what they leave. */
static const struct {
    int opt;
    unsigned modes;
} company[] = {
    {'H', W | E | D | T_ALL | MW | ME | MD},
    {'d', W | E | D | T_ALL},
    {'s', W | E | D | T_ALL | MW | MD}, /* with --model: --generate's seed (cli_model.c) */
    {'t', W | E | D | MW | ME | MD},
    {OPT_SAMPLE, W | E | D | MW | ME | MD},
    {OPT_TEXT_FILE, W | E | D | MW | ME | MD},
    {OPT_LIST, L},
    {OPT_MASK, W | E | D},
    {OPT_NO_SCALE, W | E | D},
    {OPT_TEMPERATURE, W | E | D},
    {OPT_PAD, W | E | D},
    {OPT_ABLATE, W | E | D | MW | ME | MD},
    {OPT_WEIGHTS, W | E | D},
    {OPT_COMPARE, W | E},
    {OPT_DUMP, D | TD | MD},
    {OPT_EXPORT, E | TE | ME},
    {OPT_SIZE, W | E | TE | MW | ME},
    {OPT_SCALE, W | E | TE | MW | ME},
    {OPT_PANEL, E | ME},
    {OPT_PAGE, W | E | MW | ME},
    {OPT_PINNED_PAGE, W | E},
    {OPT_VALUES, W | E | MW | ME},
    {OPT_CONTRAST, W | E | MW | ME},
    {OPT_DIFF, W | E | MW | ME},
    {OPT_PRESENT, W | E | MW | ME}, /* an export: drawn at the presentation's text floor */
    {OPT_THEME, W | E | TE | MW | ME},
    {OPT_COLORMAP, W | E | TE | MW | ME},
    {OPT_BACKGROUND, E | TE | ME},
    {OPT_EXPORT_DIR, W | MW},
    {OPT_FONT, W | E | B | TE | MW | ME},
    {OPT_STATE, W | E | D},
    {OPT_BENCH, B | MB},
    {OPT_BENCH_JSON, B | MB},
    {OPT_BENCH_QUICK, B | MB},
    {OPT_TRAIN, T_ALL},
    {OPT_STEPS, T_ALL},
    {OPT_LAYERS, T_ALL},
    {OPT_MLP, T_ALL},
    {OPT_LR, T_ALL},
    {OPT_BATCH, T_ALL},
    {OPT_LAYER, TE | MW | ME},
    {OPT_SWEEP, T_ALL},
    {OPT_SEEDS, T_ALL},
    {OPT_MOMENTS, TE},
    {OPT_MODEL, MW | ME | MD | MB},
    {OPT_GENERATE, MW | MD}, /* prints (in place of the window), or with --dump */
    {OPT_SAMPLE_TEMPERATURE, MW | MD},
    {OPT_TOP_K, MW | MD},
    {OPT_TOP_P, MW | MD},
    {OPT_KV_HEADS, W | E | D | MW | ME | MD},
    {OPT_LESSON, W | E | D},
    {OPT_STEP, E | D},
};

/* The mode of o as one of the bits, or 0 for --help and --version (which take
 * anything: they print and exit). */
static unsigned mode_bit(const cli_options *o) {
    unsigned m;
    switch (o->mode) {
    case CLI_WINDOW: m = W; break;
    case CLI_EXPORT: m = E; break;
    case CLI_DUMP: m = D; break;
    case CLI_BENCH: m = B; break;
    case CLI_LIST_SAMPLES: return L;
    case CLI_TRAIN: /* with --dump and --export, what either takes */
        return o->dump_dir || o->export_path ? (o->dump_dir ? TD : 0u) | (o->export_path ? TE : 0u)
                                             : TW;
    default: return 0;
    }
    return o->model_path ? m << 8 : m;
}

/* Writes the modes of bits (W ... TE) to buf as "the window, --export or --train
 * --export": the --train modes named once when all three are there. */
static void modes_list(unsigned bits, char *buf, size_t len) {
    static const char *const name[8] = {
        "the window",     "--export", "--dump",         "--bench",
        "--list-samples", "--train",  "--train --dump", "--train --export",
    };
    if ((bits & T_ALL) == T_ALL) bits &= ~(unsigned)(TD | TE); /* "--train" says all three */
    int n = 0, total = 0;
    for (int i = 0; i < 8; i++) total += (bits >> i) & 1;
    buf[0] = '\0';
    for (int i = 0; i < 8; i++) {
        if (!((bits >> i) & 1)) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s",
                 n == 0           ? ""
                 : n == total - 1 ? " or "
                                  : ", ",
                 name[i]);
        n++;
    }
}

int cli_idle_option(const cli_options *o, const cli_flags *f, char *why, size_t whylen) {
    unsigned m = mode_bit(o);
    if (!m) return 0;
    /* --generate without --dump prints in place of the window: it reads what the
       model's --dump reads */
    const int printing = o->model_generate && m == MW;
    if (printing) m = MD;
    int mi = 0;
    while (!((m >> mi) & 1)) mi++;
    for (size_t i = 0; i < sizeof company / sizeof company[0]; i++) {
        if (!f->seen[company[i].opt] || (company[i].modes & m)) continue;
        /* the modes of the same kind: with --model, the model's (named as without) */
        const unsigned kind =
            o->model_path ? (company[i].modes >> 8) & 0xFu : company[i].modes & 0xFFu;
        char with[200];
        modes_list(kind, with, sizeof with);
        snprintf(why, whylen, "does nothing %s (only with %s)",
                 printing ? "with --model --generate" : mode_with[mi], with);
        return company[i].opt;
    }
    /* --scale multiplies PNG pixels: an .svg or .pdf has none */
    if (f->seen[OPT_SCALE] && o->export_path && (m & (E | TE | ME))) {
        const char *dot = strrchr(o->export_path, '.');
        if (dot && strcmp(dot, ".png") != 0) {
            snprintf(why, whylen, "does nothing with a %s export (only with .png)", dot);
            return OPT_SCALE;
        }
    }
    return 0;
}
