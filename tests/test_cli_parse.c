/* test_cli_parse.c: cli_parse in-process. Parsing twice in one process gives the
 * same result as parsing once (getopt is fully reset each time), and the new
 * options (--temperature, --pad, --ablate, --weights, --page) parse strictly. Each
 * option group's parser takes its options and no other, with its exact messages,
 * and the shared value parsers and the checks of what combines hold on their own.
 * The command-line behaviour end to end (exit codes, messages) is cli_check.py's. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "cli.h"
#include "cli_internal.h"

/* Parses a NULL-terminated list, copied (getopt_long may permute argv) into the
 * next of 8 stores, so the strings of the previous parses stay as they were, as
 * they would in a program parsing several argv (a stale pointer into them would
 * still read the old text). */
static int parse(cli_options *o, char *err, size_t errlen, const char *const *args) {
    static char store[8][32][128];
    static int next;
    char(*s)[128] = store[next];
    next = (next + 1) % 8;
    char *argv[33];
    int argc = 0;
    for (; args[argc]; argc++) {
        assert_true(argc < 32 && strlen(args[argc]) < sizeof s[0]);
        strcpy(s[argc], args[argc]);
        argv[argc] = s[argc];
    }
    argv[argc] = NULL;
    err[0] = '\0';
    return cli_parse(o, argc, argv, err, errlen);
}

/* the fields a parse sets, compared as a whole */
static void check_same(const char *what, const cli_options *a, const cli_options *b) {
    CHECK_INT(what, 0, memcmp(&a->cfg, &b->cfg, sizeof a->cfg) != 0);
    CHECK_INT(what, a->mode, b->mode);
    CHECK_INT(what, a->sample, b->sample);
    CHECK_INT(what, a->scale, b->scale);
    CHECK_INT(what, a->theme, b->theme);
    CHECK_INT(what, a->panel, b->panel);
    CHECK_INT(what, a->panel_head, b->panel_head);
}

static void test_parse_twice(void **state) {
    (void)state;
    static const char *const A[] = {
        "mhaviz",   "--mask", "causal", "--pad",         "20",  "--dump", "x", "-H", "8",
        "--ablate", "2,7",    "-Vh",    "--temperature", "2.5", NULL};
    static const char *const B[] = {"mhaviz", "--weights", "patterns", "--sample", "3", NULL};
    char err[256];
    cli_options a1, b1, a2, b2, fresh;
    CHECK_INT("parse A", 0, parse(&a1, err, sizeof err, A));
    CHECK_INT("parse B after A", 0, parse(&b1, err, sizeof err, B));
    CHECK_INT("B: mode after A", CLI_WINDOW, b1.mode);
    CHECK_INT("B: mask after A", MHA_MASK_NONE, b1.cfg.mask);
    CHECK_INT("B: pad after A", 0, b1.cfg.pad);
    CHECK_INT("B: h after A", 0, b1.cfg.h);
    CHECK_INT("B: ablated after A", 0, mha_config_ablated_count(&b1.cfg));
    CHECK_NEAR("B: temperature after A", 0.0, b1.cfg.temperature, 0.0);
    CHECK_INT("B: weights", MHA_WEIGHTS_PATTERNS, b1.cfg.weights);
    CHECK_INT("B: sample", 3, b1.sample);
    CHECK_INT("parse A again", 0, parse(&a2, err, sizeof err, A));
    CHECK_INT("parse B again", 0, parse(&b2, err, sizeof err, B));
    check_same("A parsed twice", &a1, &a2);
    check_same("B parsed twice", &b1, &b2);
    CHECK_INT("A: help wins", CLI_HELP, a1.mode);
    CHECK_INT("A: h", 8, a1.cfg.h);
    CHECK_INT("A: pad", 20, a1.cfg.pad);
    CHECK_INT("A: head 2 ablated", 1, mha_config_is_ablated(&a1.cfg, 1));
    CHECK_INT("A: head 7 ablated", 1, mha_config_is_ablated(&a1.cfg, 6));
    CHECK_INT("A: two heads ablated", 2, mha_config_ablated_count(&a1.cfg));
    CHECK_NEAR("A: temperature", 2.5, a1.cfg.temperature, 0.0);

    /* A parse that fails inside a group of short options ("-x" of "-xh") must not
       leave the rest of that group ("h") to the next parse: with optind = 1 glibc's
       getopt would carry on reading it and the next parse would ask for help. */
    static const char *const BAD[] = {"mhaviz", "-xh", NULL};
    static const char *const C[] = {"mhaviz", "-H", "2", NULL};
    CHECK_INT("parse -xh", 2, parse(&fresh, err, sizeof err, BAD));
    CHECK_MSG("parse -xh message", err);
    cli_options c1;
    CHECK_INT("parse -H 2 after a failed -xh", 0, parse(&c1, err, sizeof err, C));
    CHECK_INT("mode of -H 2 after a failed -xh", CLI_WINDOW, c1.mode);
    CHECK_INT("h of -H 2 after a failed -xh", 2, c1.cfg.h);

    /* an error in a bad value, then a permuted argv */
    static const char *const BADV[] = {"mhaviz", "-hH", "0", NULL};
    static const char *const PERM[] = {"mhaviz", "-H", "2", "--sample", "2", NULL};
    CHECK_INT("parse -hH 0", 2, parse(&fresh, err, sizeof err, BADV));
    cli_options p1, p2;
    CHECK_INT("parse after -hH 0", 0, parse(&p1, err, sizeof err, PERM));
    CHECK_INT("mode after -hH 0", CLI_WINDOW, p1.mode);
    CHECK_INT("parse again", 0, parse(&p2, err, sizeof err, PERM));
    check_same("after a failed parse vs again", &p1, &p2);
}

static void test_parse_float(void **state) {
    (void)state;
    static const struct {
        const char *s;
        double want; /* < 0: rejected */
    } F[] = {
        {"0.05", 0.05},   {"20", 20.0},      {"1", 1.0},    {".5", 0.5},  {"1.25", 1.25},
        {"020", 20.0},    {"0.0500", 0.05},  {"0", -1},     {"0.04", -1}, {"0.0499999", -1},
        {"20.5", -1},     {"20.000001", -1}, {"nan", -1},   {"NaN", -1},  {"inf", -1},
        {"infinity", -1}, {"1e", -1},        {"1e0", -1},   {"1E1", -1},  {"-1", -1},
        {"+1", -1},       {" 1", -1},        {"1 ", -1},    {"", -1},     {".", -1},
        {"1.", -1},       {"1.2.3", -1},     {"0x1p1", -1}, {"1,5", -1},  {"1..2", -1},
    };
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        double v = -7.0;
        int rc = cli_parse_float(F[i].s, 0.05, 20.0, &v);
        char what[64];
        snprintf(what, sizeof what, "cli_parse_float('%s')", F[i].s);
        CHECK_INT(what, F[i].want < 0 ? -1 : 0, rc);
        if (F[i].want >= 0)
            CHECK_NEAR(what, F[i].want, v, 0.0);
        else
            CHECK_NEAR("value untouched on error", -7.0, v, 0.0);
    }
    CHECK_INT("cli_parse_float(NULL)", -1, cli_parse_float(NULL, 0, 1, &(double){0}));
}

static void test_new_options(void **state) {
    (void)state;
    char err[256];
    cli_options o;
    static const struct {
        const char *args[8];
        int rc;
        const char *name; /* the option the message must name */
    } P[] = {
        {{"mhaviz", "--dump", "x", "--pad", "512", NULL}, 0, NULL},
        {{"mhaviz", "--dump", "x", "--pad", "513", NULL}, 2, "--pad"},
        {{"mhaviz", "--dump", "x", "--pad", "0", NULL}, 2, "--pad"},
        {{"mhaviz", "--pad", "20", NULL}, 0, NULL}, /* the window draws padding */
        {{"mhaviz", "--export", "a.png", "--pad", "20", NULL}, 0, NULL},
        {{"mhaviz", "--ablate", "1,2,3,4", NULL}, 0, NULL},
        {{"mhaviz", "--ablate", "4096", NULL}, 0, NULL}, /* h is checked later */
        {{"mhaviz", "--ablate", "4097", NULL}, 2, "--ablate"},
        {{"mhaviz", "--ablate", "0", NULL}, 2, "--ablate"},
        {{"mhaviz", "--ablate", "1,,2", NULL}, 2, "--ablate"},
        {{"mhaviz", "--ablate", "1,2,1", NULL}, 2, "--ablate"},
        {{"mhaviz", "--ablate", ",", NULL}, 2, "--ablate"},
        {{"mhaviz", "--ablate", "1,", NULL}, 2, "--ablate"},
        {{"mhaviz", "--ablate", "", NULL}, 2, "--ablate"},
        {{"mhaviz", "--weights", "patterns", NULL}, 0, NULL},
        {{"mhaviz", "--weights", "pattern", NULL}, 2, "--weights"},
        {{"mhaviz", "--temperature", "0.04", NULL}, 2, "--temperature"},
        {{"mhaviz", "--temperature", "inf", NULL}, 2, "--temperature"},
        {{"mhaviz", "--export", "a.png", "--page", "3", NULL}, 0, NULL},
        {{"mhaviz", "--page", "0", NULL}, 2, "--page"},
        {{"mhaviz", "--page", "-1", NULL}, 2, "--page"},
        {{"mhaviz", "--page", "2x", NULL}, 2, "--page"},
        {{"mhaviz", "--page", "4097", NULL}, 2, "--page"},
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "cli_parse #%zu (%s %s)", i, P[i].args[1],
                 P[i].args[2] ? P[i].args[2] : "");
        CHECK_INT(what, P[i].rc, parse(&o, err, sizeof err, P[i].args));
        if (P[i].name) {
            CHECK_TRUE(what, strstr(err, P[i].name) != NULL);
            CHECK_TRUE("one line", strchr(err, '\n') == NULL);
        }
    }
    static const char *const PAGE[] = {"mhaviz", "--export", "a.svg", "--page", "7", NULL};
    CHECK_INT("--page 7", 0, parse(&o, err, sizeof err, PAGE));
    CHECK_INT("--page 7: page", 7, o.page);
    static const char *const NOPAGE[] = {"mhaviz", "--export", "a.svg", NULL};
    CHECK_INT("no --page", 0, parse(&o, err, sizeof err, NOPAGE));
    CHECK_INT("no --page: 0 (the first)", 0, o.page);
    /* one list: a second --ablate is refused, neither the last nor the union */
    static const char *const TWO[] = {"mhaviz", "--ablate", "1,2", "--ablate", "3", NULL};
    CHECK_INT("two --ablate", 2, parse(&o, err, sizeof err, TWO));
    CHECK_STR("two --ablate", "--ablate: given twice ('1,2', then '3'); give it once", err);
}

/* Every option given twice is refused naming it, with both values; the same
 * option under its short and long name is the same option. */
static void test_given_twice(void **state) {
    (void)state;
    static const struct {
        const char *args[6];
        const char *err;
    } P[] = {
        {{"mhaviz", "--export", "x.png", "--export", "y.png", NULL},
         "--export: given twice ('x.png', then 'y.png'); give it once"},
        {{"mhaviz", "--dump", "a", "--dump", "b", NULL},
         "--dump: given twice ('a', then 'b'); give it once"},
        {{"mhaviz", "--compare", "h=1", "--compare", "h=2", NULL},
         "--compare: given twice ('h=1', then 'h=2'); give it once"},
        {{"mhaviz", "-H", "2", "-H", "4", NULL},
         "--heads: given twice ('2', then '4'); give it once"},
        {{"mhaviz", "-H", "2", "--heads=2", NULL},
         "--heads: given twice ('2', then '2'); give it once"},
        {{"mhaviz", "--values", "--values", NULL}, "--values: given twice; give it once"},
        {{"mhaviz", "--page", "1", "--page", "2", NULL},
         "--page: given twice ('1', then '2'); give it once"},
        {{"mhaviz", "--text", "a b", "-t", "c", NULL},
         "--text: given twice ('a b', then 'c'); give it once"},
        {{"mhaviz", "--bench", "--bench", NULL}, "--bench: given twice; give it once"},
        {{"mhaviz", "--train", "prev", "--train", "sort", NULL},
         "--train: given twice ('prev', then 'sort'); give it once"},
        {{"mhaviz", "--model", "m", "--model", "n", NULL},
         "--model: given twice ('m', then 'n'); give it once"},
        {{"mhaviz", "-h", "-h", NULL}, NULL}, /* help and version may repeat */
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        cli_options o;
        char err[256] = "";
        CHECK_INT(P[i].args[1], P[i].err ? 2 : 0, parse(&o, err, sizeof err, P[i].args));
        CHECK_STR(P[i].args[1], P[i].err ? P[i].err : "", err);
    }
    /* every option of the table: twice is 2, naming it (values that parse) */
    static const struct {
        const char *opt, *val;
    } ALL[] = {
        {"--heads", "2"},
        {"--d-model", "8"},
        {"--seed", "3"},
        {"--text", "a"},
        {"--sample", "1"},
        {"--list-samples", NULL},
        {"--mask", "causal"},
        {"--no-scale", NULL},
        {"--temperature", "2"},
        {"--pad", "20"},
        {"--ablate", "1"},
        {"--weights", "random"},
        {"--compare", "h=1"},
        {"--dump", "d"},
        {"--export", "a.png"},
        {"--size", "400x400"},
        {"--scale", "2"},
        {"--panel", "all"},
        {"--page", "1"},
        {"--values", NULL},
        {"--contrast", "row"},
        {"--diff", NULL},
        {"--theme", "dark"},
        {"--colormap", "magma"},
        {"--background", "opaque"},
        {"--export-dir", "x"},
        {"--font", "f.ttf"},
        {"--bench", NULL},
        {"--bench-json", NULL},
        {"--bench-quick", NULL},
        {"--train", "prev"},
        {"--steps", "2"},
        {"--layers", "1"},
        {"--mlp", NULL},
        {"--lr", "0.1"},
        {"--batch", "2"},
        {"--layer", "1"},
        {"--model", "m"},
    };
    for (size_t i = 0; i < sizeof ALL / sizeof ALL[0]; i++) {
        const char *args[6] = {"mhaviz", ALL[i].opt, ALL[i].val, ALL[i].opt, ALL[i].val, NULL};
        if (!ALL[i].val) args[2] = ALL[i].opt, args[3] = NULL;
        cli_options o;
        char err[256] = "", want[64];
        snprintf(want, sizeof want, "%s: given twice", ALL[i].opt);
        CHECK_INT(ALL[i].opt, 2, parse(&o, err, sizeof err, args));
        CHECK_TRUE(want, strncmp(err, want, strlen(want)) == 0);
    }
}

/* An option that nothing reads in the mode given is refused, naming the option
 * and the modes it works with: every refused pair of option and mode. */
static void test_idle_options(void **state) {
    (void)state;
    static const struct {
        const char *args[10];
        const char *err; /* NULL: accepted */
    } P[] = {
        {{"mhaviz", "--train", "pair", "--page", "2", NULL},
         "--page: does nothing with --train (only with the window or --export)"},
        {{"mhaviz", "--dump", "d", "--page", "2", NULL},
         "--page: does nothing with --dump (only with the window or --export)"},
        {{"mhaviz", "--dump", "d", "--panel", "all", NULL},
         "--panel: does nothing with --dump (only with --export)"},
        {{"mhaviz", "--panel", "equation", NULL},
         "--panel: does nothing in the window (only with --export)"},
        {{"mhaviz", "--background", "transparent", NULL},
         "--background: does nothing in the window (only with --export or --train --export)"},
        {{"mhaviz", "--dump", "d", "--size", "400x400", NULL},
         "--size: does nothing with --dump (only with the window, --export or --train --export)"},
        {{"mhaviz", "--dump", "d", "--scale", "2", NULL},
         "--scale: does nothing with --dump (only with the window, --export or --train --export)"},
        {{"mhaviz", "--dump", "d", "--background", "opaque", NULL},
         "--background: does nothing with --dump (only with --export or --train --export)"},
        {{"mhaviz", "--dump", "d", "--values", NULL},
         "--values: does nothing with --dump (only with the window or --export)"},
        {{"mhaviz", "--dump", "d", "--contrast", "row", NULL},
         "--contrast: does nothing with --dump (only with the window or --export)"},
        {{"mhaviz", "--dump", "d", "--diff", NULL},
         "--diff: does nothing with --dump (only with the window or --export)"},
        {{"mhaviz", "--dump", "d", "--theme", "dark", NULL},
         "--theme: does nothing with --dump (only with the window, --export or --train --export)"},
        {{"mhaviz", "--dump", "d", "--colormap", "magma", NULL},
         "--colormap: does nothing with --dump (only with the window, --export or --train "
         "--export)"},
        {{"mhaviz", "--bench", "--values", NULL},
         "--values: does nothing with --bench (only with the window or --export)"},
        {{"mhaviz", "--bench", "--contrast", "log", NULL},
         "--contrast: does nothing with --bench (only with the window or --export)"},
        {{"mhaviz", "--bench", "--diff", NULL},
         "--diff: does nothing with --bench (only with the window or --export)"},
        {{"mhaviz", "--bench", "--theme", "dark", NULL},
         "--theme: does nothing with --bench (only with the window, --export or --train --export)"},
        {{"mhaviz", "--bench", "--colormap", "greys", NULL},
         "--colormap: does nothing with --bench (only with the window, --export or --train "
         "--export)"},
        {{"mhaviz", "--bench", "-H", "2", NULL},
         "--heads: does nothing with --bench (only with the window, --export, --dump or --train)"},
        {{"mhaviz", "--bench", "--size", "400x400", NULL},
         "--size: does nothing with --bench (only with the window, --export or --train --export)"},
        {{"mhaviz", "--export-dir", "x", "--export", "a.png", NULL},
         "--export-dir: does nothing with --export (only with the window)"},
        {{"mhaviz", "--export-dir", "x", "--dump", "d", NULL},
         "--export-dir: does nothing with --dump (only with the window)"},
        {{"mhaviz", "--dump", "d", "--font", "f.ttf", NULL},
         "--font: does nothing with --dump (only with the window, --export, --bench or --train "
         "--export)"},
        {{"mhaviz", "--train", "prev", "--size", "400x400", NULL},
         "--size: does nothing with --train (only with the window, --export or --train --export)"},
        {{"mhaviz", "--train", "prev", "--dump", "d", "--theme", "dark", NULL},
         "--theme: does nothing with --train --dump (only with the window, --export or --train "
         "--export)"},
        {{"mhaviz", "--list-samples", "-H", "2", NULL},
         "--heads: does nothing with --list-samples (only with the window, --export, --dump or "
         "--train)"},
        {{"mhaviz", "--export", "a.svg", "--scale", "2", NULL},
         "--scale: does nothing with a .svg export (only with .png)"},
        {{"mhaviz", "--model", "m", "--dump", "d", "--layer", "2", NULL},
         "--layer: does nothing with --model --dump (only with the window or --export)"},
        {{"mhaviz", "--model", "m", "--bench", "-t", "a", NULL},
         "--text: does nothing with --model --bench (only with the window, --export or --dump)"},
        {{"mhaviz", "--model", "m", "--bench", "--font", "f.ttf", NULL},
         "--font: does nothing with --model --bench (only with the window or --export)"},
        /* what each mode takes */
        {{"mhaviz", "--export", "a.png", "--scale", "2", "--panel", "equation", NULL}, NULL},
        {{"mhaviz", "--page", "2", "--values", "--export-dir", "x", "--font", "f.ttf", NULL}, NULL},
        {{"mhaviz", "--train", "prev", "--export", "a.png", "--scale", "2", "--theme", NULL},
         "--theme: needs a value (see --help)"},
        {{"mhaviz", "--train", "prev", "--export", "a.png", "--background", "transparent", NULL},
         NULL},
        {{"mhaviz", "--bench", "--font", "f.ttf", "--bench-json", NULL}, NULL},
        {{"mhaviz", "--dump", "d", "-H", "2", "--mask", "causal", "--no-scale", NULL}, NULL},
        {{"mhaviz", "--model", "m", "--layer", "2", "--size", "400x400", NULL}, NULL},
        {{"mhaviz", "--help", "--dump", "d", "--page", "2", NULL}, NULL},
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        cli_options o;
        char err[256] = "";
        char what[96];
        snprintf(what, sizeof what, "idle #%zu (%s %s)", i, P[i].args[1], P[i].args[3]);
        CHECK_INT(what, P[i].err ? 2 : 0, parse(&o, err, sizeof err, P[i].args));
        CHECK_STR(what, P[i].err ? P[i].err : "", err);
    }
}

static const struct {
    const char *name;
    cli_group_fn fn;
} GROUPS[] = {
    {"computation", cli_computation_option},
    {"output", cli_output_option},
    {"learning", cli_learning_option},
};
#define NGROUPS (sizeof GROUPS / sizeof GROUPS[0])

/* Every option id is taken by exactly one group's parser, and -h, -V and getopt's
 * ':' and '?' by none (cli_parse's own); a group that does not take an option
 * leaves the options and the message as they were. */
static void test_groups_claim(void **state) {
    (void)state;
    int ids[64], n = 0;
    for (const char *c = "Hdst"; *c; c++) ids[n++] = *c;
    for (int id = OPT_SAMPLE; id <= OPT_SEEDS; id++) ids[n++] = id;
    for (int i = 0; i < n; i++) {
        int takers = 0;
        for (size_t g = 0; g < NGROUPS; g++) {
            cli_options o = {.theme = -1, .colormap = -1};
            cli_flags f = {0};
            char err[256] = "";
            int rc = GROUPS[g].fn(&o, &f, ids[i], "1", err, sizeof err);
            char what[96];
            snprintf(what, sizeof what, "%s parser on option %d", GROUPS[g].name, ids[i]);
            CHECK_TRUE(what, rc == 0 || rc == 2 || rc == CLI_NOT_MINE);
            takers += rc != CLI_NOT_MINE;
        }
        char what[64];
        snprintf(what, sizeof what, "groups taking option %d", ids[i]);
        CHECK_INT(what, 1, takers);
    }
    static const int others[] = {'h', 'V', ':', '?', 0, OPT_SEEDS + 1};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        for (size_t g = 0; g < NGROUPS; g++) {
            cli_options o = {.theme = -1, .colormap = -1}, before = o;
            cli_flags f = {0};
            char err[256] = "untouched";
            char what[96];
            snprintf(what, sizeof what, "%s parser on %d", GROUPS[g].name, others[i]);
            CHECK_INT(what, CLI_NOT_MINE, GROUPS[g].fn(&o, &f, others[i], "1", err, sizeof err));
            CHECK_STR(what, "untouched", err);
            CHECK_INT(what, 0, memcmp(&o, &before, sizeof o));
            CHECK_INT(what, 0, f.help | f.version | f.list | f.bench);
        }
}

/* One option through its group's parser: the status and the whole message. */
static void test_group_values(void **state) {
    (void)state;
    static const struct {
        cli_group_fn fn;
        int opt;
        const char *arg;
        const char *err; /* NULL: accepted */
    } V[] = {
        {cli_computation_option, 'H', "8", NULL},
        {cli_computation_option, 'H', "0",
         "--heads '0': must be a whole number between 1 and d_model (at most 4096)"},
        {cli_computation_option, 'd', "4097",
         "--d-model '4097': must be a whole number between 1 and 4096"},
        {cli_computation_option, 's', "-1",
         "--seed '-1': must be a whole number between 1 and 9223372036854775807"},
        {cli_computation_option, OPT_SAMPLE, "x",
         "--sample 'x': must be a whole number from 1 (see --list-samples)"},
        {cli_computation_option, OPT_MASK, "Causal", "--mask 'Causal': must be none or causal"},
        {cli_computation_option, OPT_TEMPERATURE, "inf",
         "--temperature 'inf': must be a decimal number between 0.05 and 20"},
        {cli_computation_option, OPT_PAD, "513",
         "--pad '513': must be a whole number from the number of tokens to 512"},
        {cli_computation_option, OPT_ABLATE, "1,,2",
         "--ablate '1,,2': must be a comma list of heads from 1 to h, e.g. 1,3"},
        {cli_computation_option, OPT_ABLATE, "2,x",
         "--ablate '2,x': 'x' is not a head from 1 to h"},
        {cli_computation_option, OPT_ABLATE, "3,1,3", "--ablate '3,1,3': head 3 is listed twice"},
        {cli_computation_option, OPT_WEIGHTS, "pattern",
         "--weights 'pattern': must be random or patterns"},
        {cli_computation_option, OPT_COMPARE, "h=1,scale=off", NULL},
        {cli_computation_option, OPT_COMPARE, "h=1,",
         "--compare 'h=1,': must be key=value items such as h=1,scale=off"},
        {cli_computation_option, OPT_COMPARE, "h", "--compare 'h': 'h' has no '=' (e.g. h=1)"},
        {cli_computation_option, OPT_COMPARE, "depth=2",
         "--compare: unknown setting 'depth' (h, d_model, seed, mask, scale, temperature, "
         "weights, pad)"},
        {cli_computation_option, OPT_COMPARE, "seed=2,seed=3",
         "--compare 'seed=2,seed=3': seed is given twice"},
        {cli_computation_option, OPT_COMPARE, "pad=x\n",
         "--compare: pad='x?' must be off or a whole number up to 512"},
        {cli_computation_option, OPT_COMPARE, "temperature=0",
         "--compare: temperature='0' must be a decimal number between 0.05 and 20"},
        {cli_output_option, OPT_DUMP, "", "--dump: needs a folder name"},
        {cli_output_option, OPT_EXPORT, "dir.png/a",
         "--export 'dir.png/a': the file name must end in .png, .svg or .pdf"},
        {cli_output_option, OPT_EXPORT, "a.pdf", NULL},
        {cli_output_option, OPT_SIZE, "800x199",
         "--size '800x199': must be WxH with each side between 200 and 8192"},
        {cli_output_option, OPT_SCALE, "5", "--scale '5': must be a whole number between 1 and 4"},
        {cli_output_option, OPT_PANEL, "head:0",
         "--panel 'head:0': must be all, equation, head:K, steps:K, lines, lines:K "
         "(K from 1 to h), model or next"},
        {cli_output_option, OPT_PANEL, "lines:0",
         "--panel 'lines:0': must be all, equation, head:K, steps:K, lines, lines:K "
         "(K from 1 to h), model or next"},
        {cli_output_option, OPT_PAGE, "0",
         "--page '0': must be a whole number from 1 to the number of pages"},
        {cli_output_option, OPT_CONTRAST, "lin", "--contrast 'lin': must be fixed, row or log"},
        {cli_output_option, OPT_THEME, "grey", "--theme 'grey': must be light or dark"},
        {cli_output_option, OPT_COLORMAP, "jet",
         "--colormap 'jet': must be one of viridis, magma, cividis, greys"},
        {cli_output_option, OPT_BACKGROUND, "clear",
         "--background 'clear': must be opaque or transparent"},
        {cli_output_option, OPT_EXPORT_DIR, "", "--export-dir: needs a folder name"},
        {cli_output_option, OPT_FONT, "", "--font: needs a file name"},
        {cli_learning_option, OPT_TRAIN, "copy",
         "--train 'copy': must be prev, first, pair, sort, induction or cards"},
        {cli_learning_option, OPT_STEPS, "1000001",
         "--steps '1000001': must be a whole number between 1 and 1000000"},
        {cli_learning_option, OPT_LAYERS, "3", "--layers '3': must be 1 or 2"},
        {cli_learning_option, OPT_LR, "1.5",
         "--lr '1.5': must be a decimal number between 0.00001 and 1"},
        {cli_learning_option, OPT_BATCH, "0",
         "--batch '0': must be a whole number between 1 and 1024"},
        {cli_learning_option, OPT_BATCH, "1024", NULL},
        {cli_learning_option, OPT_LAYER, "0", "--layer '0': must be a layer's number, 1 or more"},
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        cli_options o = {.theme = -1, .colormap = -1};
        cli_flags f = {0};
        char err[256] = "";
        char what[96];
        snprintf(what, sizeof what, "option %d '%s'", V[i].opt, V[i].arg);
        CHECK_INT(what, V[i].err ? 2 : 0, V[i].fn(&o, &f, V[i].opt, V[i].arg, err, sizeof err));
        CHECK_STR(what, V[i].err ? V[i].err : "", err);
    }

    /* what the accepted values set */
    cli_options o = {.theme = -1, .colormap = -1};
    cli_flags f = {0};
    char err[256] = "";
    CHECK_INT(
        "--compare h=2,mask=causal,pad=off", 0,
        cli_computation_option(&o, &f, OPT_COMPARE, "h=2,mask=causal,pad=off", err, sizeof err));
    CHECK_INT("--compare: on", 1, o.compare);
    CHECK_INT("--compare: set", CLI_CMP_H | CLI_CMP_MASK | CLI_CMP_PAD, o.compare_set);
    CHECK_INT("--compare: h", 2, o.compare_cfg.h);
    CHECK_INT("--compare: mask", MHA_MASK_CAUSAL, o.compare_cfg.mask);
    CHECK_INT("--compare again", 0,
              cli_computation_option(&o, &f, OPT_COMPARE, "scale=off", err, sizeof err));
    CHECK_INT("--compare again: replaces the set", CLI_CMP_SCALE, o.compare_set);
    CHECK_INT("--compare again: h back to 0", 0, o.compare_cfg.h);
    CHECK_INT("--compare again: no_scale", 1, o.compare_cfg.no_scale);
    CHECK_INT("--list-samples", 0, cli_computation_option(&o, &f, OPT_LIST, NULL, err, sizeof err));
    CHECK_INT("--list-samples: a flag, not yet a mode", 1, f.list);
    CHECK_INT("--list-samples: mode", CLI_WINDOW, o.mode);
    CHECK_INT("--panel steps:3", 0,
              cli_output_option(&o, &f, OPT_PANEL, "steps:3", err, sizeof err));
    CHECK_INT("--panel steps:3: panel", CLI_PANEL_STEPS, o.panel);
    CHECK_INT("--panel steps:3: head", 3, o.panel_head);
    CHECK_INT("--bench-quick", 0,
              cli_output_option(&o, &f, OPT_BENCH_QUICK, NULL, err, sizeof err));
    CHECK_INT("--bench-quick: bench", 1, f.bench);
    CHECK_INT("--bench-quick: quick", 1, o.bench_quick);
    CHECK_INT("--dump d", 0, cli_output_option(&o, &f, OPT_DUMP, "d", err, sizeof err));
    /* both: only with --train, which check_combinations asks once all are read */
    CHECK_INT("--export after --dump", 0,
              cli_output_option(&o, &f, OPT_EXPORT, "a.png", err, sizeof err));
    CHECK_INT("--export after --dump: mode", CLI_EXPORT, o.mode);
    CHECK_INT("--dump after --dump", 0, cli_output_option(&o, &f, OPT_DUMP, "e", err, sizeof err));
    CHECK_STR("--dump after --dump: the last", "e", o.dump_dir);
}

/* The shared value parsers and the one way to refuse. */
static void test_shared_values(void **state) {
    (void)state;
    static const struct {
        const char *s;
        int w, h; /* 0: refused */
    } S[] = {
        {"200x200", 200, 200},   {"8192x8192", 8192, 8192},
        {"0800x0600", 800, 600}, {"199x300", 0, 0},
        {"300x8193", 0, 0},      {"800", 0, 0},
        {"x600", 0, 0},          {"800x", 0, 0},
        {"800x600x", 0, 0},      {"800X600", 0, 0},
        {"+800x600", 0, 0},      {"123456789012345678901234567890123x300", 0, 0},
    };
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        int w = -1, h = -1;
        char what[96];
        snprintf(what, sizeof what, "cli_parse_size('%s')", S[i].s);
        CHECK_INT(what, S[i].w ? 0 : -1, cli_parse_size(S[i].s, &w, &h));
        CHECK_INT(what, S[i].w ? S[i].w : -1, w);
        CHECK_INT(what, S[i].w ? S[i].h : -1, h);
    }
    static const cli_word words[] = {{"fixed", 0}, {"row", 7}, {NULL, 0}};
    int v = -1;
    CHECK_INT("word row", 0, cli_parse_word("row", words, &v));
    CHECK_INT("word row: value", 7, v);
    v = -1;
    CHECK_INT("word Row", -1, cli_parse_word("Row", words, &v));
    CHECK_INT("word rows", -1, cli_parse_word("rows", words, &v));
    CHECK_INT("word ''", -1, cli_parse_word("", words, &v));
    CHECK_INT("word refused: value untouched", -1, v);
    long n = -1;
    CHECK_INT("int 9223372036854775807", 0, cli_parse_int("9223372036854775807", 1, LONG_MAX, &n));
    CHECK_INT("int 9223372036854775808", -1, cli_parse_int("9223372036854775808", 1, LONG_MAX, &n));
    CHECK_INT("int ''", -1, cli_parse_int("", 0, 9, &n));
    CHECK_INT("int NULL", -1, cli_parse_int(NULL, 0, 9, &n));

    char err[16];
    CHECK_INT("cli_fail status", 2, cli_fail(err, sizeof err, "a\tb\n%s", "c\x7f"));
    CHECK_STR("cli_fail: one line", "a?b?c?", err);
    CHECK_INT("cli_fail truncated", 2, cli_fail(err, sizeof err, "%s", "0123456789abcdefghij"));
    CHECK_STR("cli_fail truncated", "0123456789abcde", err);
    cli_options o = {0};
    char msg[128];
    CHECK_INT("set_mode dump", 0, cli_set_mode(&o, CLI_DUMP, "--dump", msg, sizeof msg));
    CHECK_INT("set_mode dump again", 0, cli_set_mode(&o, CLI_DUMP, "--dump", msg, sizeof msg));
    CHECK_INT("set_mode bench", 2, cli_set_mode(&o, CLI_BENCH, "--bench", msg, sizeof msg));
    CHECK_STR("set_mode bench", "--bench: cannot be combined with another output option", msg);
    CHECK_INT("set_mode bench: mode kept", CLI_DUMP, o.mode);
}

/* What the learning options need of the others, on options as cli_parse leaves
 * them after the loop. */
static void test_learning_check(void **state) {
    (void)state;
    char err[256];
    cli_options o = {.theme = -1, .colormap = -1};
    CHECK_INT("no --train", 0, cli_learning_check(&o, err, sizeof err));
    CHECK_INT("no --train: mode", CLI_WINDOW, o.mode);
    o.train.lr = 0.5f;
    CHECK_INT("--lr alone", 2, cli_learning_check(&o, err, sizeof err));
    CHECK_STR("--lr alone", "--steps, --layers, --mlp, --lr and --batch: only with --train", err);
    o.train.task = 1;
    o.mode = CLI_EXPORT;
    CHECK_INT("--train --export", 0, cli_learning_check(&o, err, sizeof err));
    CHECK_INT("--train --export: mode", CLI_TRAIN, o.mode);
    o.mode = CLI_BENCH;
    CHECK_INT("--train --bench", 2, cli_learning_check(&o, err, sizeof err));
    CHECK_STR("--train --bench", "--train: cannot be combined with another output option", err);
    o.mode = CLI_DUMP;
    o.values = 1;
    CHECK_INT("--train --values", 2, cli_learning_check(&o, err, sizeof err));
    CHECK_STR("--train --values",
              "--train: takes -H, -d, -s, --steps, --layers, --mlp, --lr, --batch, --dump and "
              "--export (with --size, --scale, --theme, --colormap) only",
              err);
    o.values = 0;
    mha_config_set_ablated(&o.cfg, 200, 1);
    CHECK_INT("--train --ablate 201", 2, cli_learning_check(&o, err, sizeof err));
    CHECK_STR("--train --ablate 201", "--train: takes no --ablate (it ablates every head)", err);
    cli_options g = {.theme = -1, .colormap = -1, .mode = CLI_EXPORT}; /* --layer */
    g.train.task = 5, g.train.layer = 3;                               /* induction: 2 layers */
    CHECK_INT("induction --layer 3", 2, cli_learning_check(&g, err, sizeof err));
    CHECK_STR("induction --layer 3", "--layer 3: the model trained has 2 layers", err);
    g.train.layer = 2;
    CHECK_INT("induction --layer 2 --export", 0, cli_learning_check(&g, err, sizeof err));
    g.mode = CLI_DUMP;
    CHECK_INT("--layer 2 --dump", 2, cli_learning_check(&g, err, sizeof err));
    CHECK_STR("--layer 2 --dump", "--layer 2: only with --train TASK --export FILE", err);
}

/* cli_parse over each group, and the checks after the loop in their order: the
 * first that fails names itself. */
static void test_parse_groups(void **state) {
    (void)state;
    static const struct {
        const char *args[10];
        const char *err; /* NULL: accepted */
    } P[] = {
        {{"mhaviz", "-H", "8", "-d", "32", "--mask=causal", "--weights", "patterns", NULL}, NULL},
        {{"mhaviz", "--export", "a.svg", "--size", "800x600", "--theme", "dark", NULL}, NULL},
        {{"mhaviz", "--train", "sort", "--steps", "10", "--mlp", "--dump", "d", NULL}, NULL},
        {{"mhaviz", "-H", "8", "--mask", "x", "--theme", "x", NULL},
         "--mask 'x': must be none or causal"},
        {{"mhaviz", "--theme", "x", "--mask", "x", NULL}, "--theme 'x': must be light or dark"},
        {{"mhaviz", "--layers", "3", "--theme", "x", NULL}, "--layers '3': must be 1 or 2"},
        {{"mhaviz", "--heads", NULL}, "--heads: needs a value (see --help)"},
        {{"mhaviz", "-s", NULL}, "-s: needs a value (see --help)"},
        {{"mhaviz", "--mlp=2", NULL}, "--mlp: unknown option or unexpected value (see --help)"},
        {{"mhaviz", "--ex", "a.png", NULL}, "--ex: unknown option (see --help)"},
        {{"mhaviz", "-q", NULL}, "-q: unknown option or unexpected value (see --help)"},
        {{"mhaviz", "--temp", "2", "extra", NULL}, "'extra': unexpected argument (see --help)"},
        {{"mhaviz", "--mask", "x", "-h", NULL}, "--mask 'x': must be none or causal"},
        {{"mhaviz", "-t", "x", "--sample", "2", "--list-samples", "--dump", "d", NULL},
         "--text and --sample: give one or the other"},
        {{"mhaviz", "--list-samples", "--bench", NULL},
         "--bench: cannot be combined with another output option"},
        {{"mhaviz", "--dump", "d", "--list-samples", NULL},
         "--list-samples: cannot be combined with another output option"},
        {{"mhaviz", "--dump", "d", "--export", "a.png", NULL},
         "--dump and --export: together only with --train"},
        {{"mhaviz", "--bench", "--train", "prev", NULL},
         "--train: cannot be combined with another output option"},
        {{"mhaviz", "--train", "prev", "--compare", "h=1", NULL},
         "--compare: only with the window or --export"},
        {{"mhaviz", "--compare", "h=1", "--panel", "head:9", NULL},
         "--compare: the compare view is one figure: only with --panel all"},
        {{"mhaviz", "--panel", "steps:5", NULL}, "--panel steps:5: there are only 4 heads"},
        {{"mhaviz", "--panel", "lines:5", NULL}, "--panel lines:5: there are only 4 heads"},
        {{"mhaviz", "-H", "8", "--panel", "lines:8", "--export", "a.svg", NULL}, NULL},
        {{"mhaviz", "--panel", "lines", "--export", "a.svg", NULL}, NULL},
        {{"mhaviz", "-H", "8", "--panel", "head:8", "--export", "a.png", NULL}, NULL},
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        cli_options o;
        char err[256];
        char what[64];
        snprintf(what, sizeof what, "cli_parse #%zu (%s)", i, P[i].args[1]);
        CHECK_INT(what, P[i].err ? 2 : 0, parse(&o, err, sizeof err, P[i].args));
        CHECK_STR(what, P[i].err ? P[i].err : "", err);
    }
    cli_options o;
    char err[256];
    static const char *const TRAIN[] = {"mhaviz", "--train", "sort",     "--lr",  "0.01",
                                        "-d",     "16",      "--export", "t.png", NULL};
    CHECK_INT("--train --export", 0, parse(&o, err, sizeof err, TRAIN));
    CHECK_INT("--train --export: mode", CLI_TRAIN, o.mode);
    CHECK_INT("--train --export: d_model", 16, o.cfg.d_model);
    CHECK_NEAR("--train --export: lr", 0.01, o.train.lr, 1e-9);
    CHECK_STR("--train --export: path", "t.png", o.export_path);
}

/* --state FILE beside options: each option gives way to the settings whose row in the
   table of settings names it (settings.c), in the options' order. */
static void test_state_given(void **state) {
    (void)state;
    static const struct {
        const char *args[12];
        const char *given;
    } G[] = {
        {{"mhaviz", "--state", "x.view", "-H", "2", "--theme", "dark", NULL},
         "h train-h model-h theme "},
        {{"mhaviz", "--state", "x.view", "--background", "transparent", "--ablate", "1", "--export",
          "x.png", NULL},
         "ablate model-ablate background "},
        {{"mhaviz", "--state", "x.view", "--no-scale", "--sample", "2", "--pad", "20", NULL},
         "sample scale pad "},
    };
    for (size_t i = 0; i < sizeof G / sizeof G[0]; i++) {
        cli_options o;
        char err[256], given[256] = "";
        if (parse(&o, err, sizeof err, G[i].args) != 0) fail_msg("#%zu: %s", i, err);
        for (int k = 0; k < o.state_given_count; k++)
            snprintf(given + strlen(given), sizeof given - strlen(given), "%s ", o.state_given[k]);
        CHECK_STR(G[i].given, G[i].given, given);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_twice),    cmocka_unit_test(test_parse_float),
        cmocka_unit_test(test_new_options),    cmocka_unit_test(test_groups_claim),
        cmocka_unit_test(test_group_values),   cmocka_unit_test(test_shared_values),
        cmocka_unit_test(test_learning_check), cmocka_unit_test(test_parse_groups),
        cmocka_unit_test(test_given_twice),    cmocka_unit_test(test_idle_options),
        cmocka_unit_test(test_state_given),
    };
    return cmocka_run_group_tests_name("cli_parse", tests, NULL, NULL);
}
