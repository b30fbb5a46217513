/* cli_internal.h: what the parts of the command line share. cli.c runs getopt
 * and hands each option to the parser of its group (cli_compute.c, cli_output.c,
 * cli_learn.c), which checks its value with the shared parsers (cli_values.c). */
#ifndef MHAVIZ_CLI_INTERNAL_H
#define MHAVIZ_CLI_INTERNAL_H

#include <stddef.h>

#include "cli.h"

/* The long options without a short form, by group as --help lists them. The
 * short ones are their letter: 'H', 'd', 's', 't' (computation), 'h', 'V'. */
enum {
    /* computation */
    OPT_SAMPLE = 256,
    OPT_TEXT_FILE,
    OPT_LIST,
    OPT_MASK,
    OPT_NO_SCALE,
    OPT_TEMPERATURE,
    OPT_PAD,
    OPT_ABLATE,
    OPT_WEIGHTS,
    OPT_COMPARE,
    /* output */
    OPT_DUMP,
    OPT_EXPORT,
    OPT_SIZE,
    OPT_SCALE,
    OPT_PANEL,
    OPT_PAGE,
    OPT_PINNED_PAGE,
    OPT_VALUES,
    OPT_CONTRAST,
    OPT_DIFF,
    OPT_PRESENT,
    OPT_THEME,
    OPT_COLORMAP,
    OPT_BACKGROUND,
    OPT_EXPORT_DIR,
    OPT_FONT,
    OPT_STATE,
    OPT_BENCH,
    OPT_BENCH_JSON,
    OPT_BENCH_QUICK,
    /* learning */
    OPT_TRAIN,
    OPT_STEPS,
    OPT_LAYERS,
    OPT_MLP,
    OPT_LR,
    OPT_BATCH,
    OPT_LAYER,
    OPT_MOMENTS, /* --moments K: the replay's flip-book (train_figure.c) */
    OPT_SWEEP,   /* --sweep h and --seeds K: sweep.c */
    OPT_SEEDS,
    /* a loaded model */
    OPT_MODEL,
    OPT_GENERATE, /* --generate N and its sampler's options (cli_model.c) */
    OPT_SAMPLE_TEMPERATURE,
    OPT_TOP_K,
    OPT_TOP_P,
    OPT_KV_HEADS, /* --kv-heads N: the K/V heads regrouped (cli_model.c) */
    /* a lesson (cli_lesson.c) */
    OPT_LESSON,
    OPT_STEP,
    OPT_END /* one past the last: the size of cli_flags' tables */
};

/* The most tokens --generate writes: a GPT-2's whole context. */
#define CLI_GENERATE_MAX 1024

/* What a parse has seen that is not a field of cli_options: the modes that are
 * decided once every option is read. */
typedef struct {
    int help, version, list, bench;
    unsigned char seen[OPT_END]; /* by getopt's answer: the option was given */
    const char *first[OPT_END];  /* and its value then (NULL: an option without one) */
} cli_flags;

/* A group's parser of one option: opt is getopt's answer, arg its value (NULL
 * for an option without one). Returns 0 when it took the option, CLI_NOT_MINE
 * when opt is not of its group (nothing changed), or 2 with the message in err. */
#define CLI_NOT_MINE (-1)
typedef int (*cli_group_fn)(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                            size_t errlen);

int cli_computation_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                           size_t errlen);
int cli_output_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                      size_t errlen);
int cli_learning_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                        size_t errlen);

/* Once every option is read: --train alone or with --dump / --export, the other
 * learning options only with it; sets CLI_TRAIN. Returns 0, or 2 with a message. */
int cli_learning_check(cli_options *o, char *err, size_t errlen);
int cli_model_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                     size_t errlen);
/* --model's company (cli_model.c): 0, or 2 with a message. */
int cli_model_check(cli_options *o, char *err, size_t errlen);

/* --lesson FILE and --step K (cli_lesson.c), and what they go with once every
   option is read: 0, or 2 with a message. */
int cli_lesson_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                      size_t errlen);
int cli_lesson_check(const cli_options *o, char *err, size_t errlen);

/* Once every option is read and the mode is known (cli_company.c): the option
 * that nothing reads in that mode (--page with --dump, --panel in the window ...),
 * 0 for none. why gets the reason, naming the modes it works with: "does nothing
 * with --dump (only with the window or --export)". */
int cli_idle_option(const cli_options *o, const cli_flags *f, char *why, size_t whylen);

/* --state FILE (cli_state.c): the view-file settings that the options seen (by
 * getopt's answer; opts getopt's table) set, into o->state_given: an option beside
 * --state wins. */
struct option;
void cli_state_given(cli_options *o, const unsigned char *seen, const struct option *opts);

/* ---- shared by the groups (cli_values.c) ---- */

#if defined(__GNUC__)
#define CLI_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define CLI_PRINTF(fmt, first)
#endif

/* Writes the message to err as one line (a control character that a quoted
 * value holds shows as '?') and returns 2, the usage status. */
int cli_fail(char *err, size_t errlen, const char *fmt, ...) CLI_PRINTF(3, 4);

/* Replaces the control characters of err with '?'. */
void cli_one_line(char *err);

/* Sets the output mode m, named opt in the message when another one is set
 * already. Returns 0, or 2 with a message. */
int cli_set_mode(cli_options *o, cli_mode m, const char *opt, char *err, size_t errlen);

/* Parses WxH with each side a whole number in 200..8192. Returns 0 and *w, *h,
 * or -1 (*w and *h untouched). */
int cli_parse_size(const char *s, int *w, int *h);

#endif
