/* values.c: the grammar of option values (values.h): numbers, words and the
 * --compare SPEC, for the command line and the view files alike. */
#include "values.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_word cli_mask_words[] = {{"none", MHA_MASK_NONE}, {"causal", MHA_MASK_CAUSAL}, {NULL, 0}};
const cli_word cli_weights_words[] = {
    {"random", MHA_WEIGHTS_RANDOM}, {"patterns", MHA_WEIGHTS_PATTERNS}, {NULL, 0}};
const cli_word cli_scale_words[] = {{"on", 0}, {"off", 1}, {NULL, 0}}; /* no_scale */

/* Writes the message to err and returns 2, the usage status. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 2;
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

int cli_parse_word(const char *s, const cli_word *words, int *out) {
    for (const cli_word *w = words; w->word; w++)
        if (strcmp(s, w->word) == 0) {
            *out = w->value;
            return 0;
        }
    return -1;
}

/* The settings --compare SPEC may name, in the order its messages list them. */
static const struct {
    const char *key;
    unsigned bit;     /* CLI_CMP_* */
    const char *want; /* what its value must be */
} compare_keys[] = {
    {"h", CLI_CMP_H, "a whole number from 1 to 4096"},
    {"d_model", CLI_CMP_D, "a whole number from 1 to 4096"},
    {"seed", CLI_CMP_SEED, "a whole number from 1"},
    {"mask", CLI_CMP_MASK, "none or causal"},
    {"scale", CLI_CMP_SCALE, "on or off"},
    {"temperature", CLI_CMP_TEMPERATURE, "a decimal number between 0.05 and 20"},
    {"weights", CLI_CMP_WEIGHTS, "random or patterns"},
    {"pad", CLI_CMP_PAD, "off or a whole number up to 512"},
};
#define COMPARE_KEYS (sizeof compare_keys / sizeof compare_keys[0])

/* Sets the setting bit (CLI_CMP_*) of c to val. Returns 0, or -1 for a bad value. */
static int compare_value(unsigned bit, const char *val, mha_config *c) {
    long v = 0;
    double fv = 0.0;
    int w = 0;
    switch (bit) {
    case CLI_CMP_H:
        if (cli_parse_int(val, 1, MHA_MAX_D_MODEL, &v) != 0) return -1;
        c->h = (int)v;
        return 0;
    case CLI_CMP_D:
        if (cli_parse_int(val, 1, MHA_MAX_D_MODEL, &v) != 0) return -1;
        c->d_model = (int)v;
        return 0;
    case CLI_CMP_SEED:
        if (cli_parse_int(val, 1, LONG_MAX, &v) != 0) return -1;
        c->seed = (uint64_t)v;
        return 0;
    case CLI_CMP_MASK:
        if (cli_parse_word(val, cli_mask_words, &w) != 0) return -1;
        c->mask = (mha_mask)w;
        return 0;
    case CLI_CMP_SCALE:
        if (cli_parse_word(val, cli_scale_words, &w) != 0) return -1;
        c->no_scale = w;
        return 0;
    case CLI_CMP_TEMPERATURE:
        if (cli_parse_float(val, MHA_MIN_TEMPERATURE, MHA_MAX_TEMPERATURE, &fv) != 0) return -1;
        c->temperature = (float)fv;
        return 0;
    case CLI_CMP_WEIGHTS:
        if (cli_parse_word(val, cli_weights_words, &w) != 0) return -1;
        c->weights = (mha_weights)w;
        return 0;
    default: /* CLI_CMP_PAD */
        if (strcmp(val, "off") == 0) {
            c->pad = 0;
            return 0;
        }
        if (cli_parse_int(val, 1, MHA_MAX_N, &v) != 0) return -1;
        c->pad = (int)v;
        return 0;
    }
}

/* One key=value item of --compare spec, in a buffer it may cut. Returns 0, or 2. */
static int compare_item(unsigned *set, mha_config *cfg, const char *spec, char *item, char *err,
                        size_t errlen) {
    char *val = strchr(item, '=');
    if (!val) return fail(err, errlen, "--compare '%s': '%s' has no '=' (e.g. h=1)", spec, item);
    *val++ = '\0';
    size_t k = 0;
    while (k < COMPARE_KEYS && strcmp(item, compare_keys[k].key) != 0) k++;
    if (k == COMPARE_KEYS)
        return fail(err, errlen,
                    "--compare: unknown setting '%s' (h, d_model, seed, mask, scale, "
                    "temperature, weights, pad)",
                    item);
    if (*set & compare_keys[k].bit)
        return fail(err, errlen, "--compare '%s': %s is given twice", spec, item);
    if (compare_value(compare_keys[k].bit, val, cfg) != 0)
        return fail(err, errlen, "--compare: %s='%s' must be %s", item, val, compare_keys[k].want);
    *set |= compare_keys[k].bit;
    return 0;
}

int cli_parse_compare_spec(const char *s, unsigned *set, mha_config *cfg, char *err,
                           size_t errlen) {
    memset(cfg, 0, sizeof *cfg);
    *set = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0 || len >= sizeof item)
            return fail(err, errlen,
                        "--compare '%s': must be key=value items such as h=1,scale=off", s);
        memcpy(item, p, len);
        item[len] = '\0';
        if (compare_item(set, cfg, s, item, err, errlen) != 0) return 2;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    return 0;
}
