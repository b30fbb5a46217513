/* cli_compute.c: the options of what is computed (--help's "Computation"): -H, -d,
 * -s, the text or sample, the mask, the scale, the temperature, the padding, the
 * ablated heads, the weights and the pinned --compare view. Whether the values fit
 * together (h divides d_model, the padding holds the text) is mha_config_check's. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"

/* --ablate LIST: 1-based heads separated by commas, no empty items, no repeats.
 * Whether each is at most h is checked with the whole configuration. Its messages
 * are not made one line here (main's are, when it prints them). */
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
            return 2;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (cli_parse_int(item, 1, MHA_MAX_D_MODEL, &v) != 0) {
            snprintf(err, errlen, "--ablate '%s': '%s' is not a head from 1 to h", s, item);
            return 2;
        }
        if (mha_config_is_ablated(cfg, (int)v - 1)) {
            snprintf(err, errlen, "--ablate '%s': head %ld is listed twice", s, v);
            return 2;
        }
        mha_config_set_ablated(cfg, (int)v - 1, 1);
        if (p[len] == '\0') return 0;
        p += len + 1;
    }
}

/* --compare SPEC: key=value items separated by commas, each key once (a second
 * --compare is refused in cli_parse); values.c parses it, for view files too. */
static int parse_compare(cli_options *o, const char *s, char *err, size_t errlen) {
    if (cli_parse_compare_spec(s, &o->compare_set, &o->compare_cfg, err, errlen) != 0) {
        cli_one_line(err);
        return 2;
    }
    o->compare = 1;
    return 0;
}

int cli_computation_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                           size_t errlen) {
    long v = 0;
    double fv = 0.0;
    int w = 0;
    switch (opt) {
    case 'H':
        if (cli_parse_int(arg, 1, MHA_MAX_D_MODEL, &v) != 0)
            return cli_fail(err, errlen,
                            "--heads '%s': must be a whole number between 1 and d_model "
                            "(at most %d)",
                            arg, MHA_MAX_D_MODEL);
        o->cfg.h = (int)v;
        return 0;
    case 'd':
        if (cli_parse_int(arg, 1, MHA_MAX_D_MODEL, &v) != 0)
            return cli_fail(err, errlen, "--d-model '%s': must be a whole number between 1 and %d",
                            arg, MHA_MAX_D_MODEL);
        o->cfg.d_model = (int)v;
        return 0;
    case 's':
        if (cli_parse_int(arg, 1, LONG_MAX, &v) != 0)
            return cli_fail(err, errlen, "--seed '%s': must be a whole number between 1 and %ld",
                            arg, LONG_MAX);
        o->cfg.seed = (uint64_t)v;
        return 0;
    case 't': o->text = arg; return 0;
    case OPT_TEXT_FILE: /* read by main, before any mode starts */
        if (!*arg)
            return cli_fail(err, errlen,
                            "--text-file: needs a file name (or - for standard input)");
        o->text_file = arg;
        return 0;
    case OPT_SAMPLE:
        if (cli_parse_int(arg, 1, INT_MAX, &v) != 0)
            return cli_fail(err, errlen,
                            "--sample '%s': must be a whole number from 1 (see --list-samples)",
                            arg);
        o->sample = (int)v;
        return 0;
    case OPT_LIST: f->list = 1; return 0;
    case OPT_MASK:
        if (cli_parse_word(arg, cli_mask_words, &w) != 0)
            return cli_fail(err, errlen, "--mask '%s': must be none or causal", arg);
        o->cfg.mask = (mha_mask)w;
        return 0;
    case OPT_NO_SCALE: o->cfg.no_scale = 1; return 0;
    case OPT_TEMPERATURE:
        if (cli_parse_float(arg, MHA_MIN_TEMPERATURE, MHA_MAX_TEMPERATURE, &fv) != 0)
            return cli_fail(err, errlen,
                            "--temperature '%s': must be a decimal number between %g and %g", arg,
                            (double)MHA_MIN_TEMPERATURE, (double)MHA_MAX_TEMPERATURE);
        o->cfg.temperature = (float)fv;
        return 0;
    case OPT_PAD:
        if (cli_parse_int(arg, 1, MHA_MAX_N, &v) != 0)
            return cli_fail(err, errlen,
                            "--pad '%s': must be a whole number from the number of tokens to %d",
                            arg, MHA_MAX_N);
        o->cfg.pad = (int)v;
        return 0;
    case OPT_ABLATE:
        if (strchr(arg, ':')) { /* LAYER:HEAD items: a loaded model's (cli_model.c) */
            o->model_ablate = arg;
            return 0;
        }
        return parse_ablate(arg, &o->cfg, err, errlen);
    case OPT_WEIGHTS:
        if (cli_parse_word(arg, cli_weights_words, &w) != 0)
            return cli_fail(err, errlen, "--weights '%s': must be random or patterns", arg);
        o->cfg.weights = (mha_weights)w;
        return 0;
    case OPT_COMPARE: return parse_compare(o, arg, err, errlen);
    default: return CLI_NOT_MINE;
    }
}
