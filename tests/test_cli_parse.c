/* test_cli_parse.c: cli_parse in-process. Parsing twice in one process gives the
 * same result as parsing once (getopt is fully reset each time), and the new
 * options (--temperature, --pad, --ablate, --weights, --page) parse strictly. The
 * command-line behaviour end to end (exit codes, messages) is cli_check.py's. */
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
    /* the last ablate list wins, not the union */
    static const char *const TWO[] = {"mhaviz", "--ablate", "1,2", "--ablate", "3", NULL};
    CHECK_INT("two --ablate", 0, parse(&o, err, sizeof err, TWO));
    CHECK_INT("two --ablate: count", 1, mha_config_ablated_count(&o.cfg));
    CHECK_INT("two --ablate: head 3", 1, mha_config_is_ablated(&o.cfg, 2));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_twice),
        cmocka_unit_test(test_parse_float),
        cmocka_unit_test(test_new_options),
    };
    return cmocka_run_group_tests_name("cli_parse", tests, NULL, NULL);
}
