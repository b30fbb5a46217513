/* cli_model.c: --model PATH, a GPT-2-family checkpoint, and what goes with it.
 * A loaded model fixes its own d_model, weights, causal mask and scaling: the
 * options that build the random model are refused beside it, -H re-splits its
 * layers, --layer picks the layer shown, --ablate takes LAYER:HEAD items, and
 * --panel model | next draws the overview or the next-token panel, --generate N
 * writes N tokens (its sampler: --sample-temperature, --top-k, --top-p, -s, which
 * the window's W, the model writing, takes too).
 * Whether the layer and the heads exist is checked once the model is read. */
#include <limits.h>
#include <string.h>

#include "cli_internal.h"

int cli_model_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                     size_t errlen) {
    (void)f;
    long v = 0;
    double fv = 0.0;
    switch (opt) {
    case OPT_MODEL:
        if (!arg[0]) return cli_fail(err, errlen, "--model: needs a folder or a .safetensors file");
        o->model_path = arg;
        return 0;
    case OPT_GENERATE:
        if (cli_parse_int(arg, 1, CLI_GENERATE_MAX, &v) != 0)
            return cli_fail(err, errlen, "--generate '%s': must be a whole number between 1 and %d",
                            arg, CLI_GENERATE_MAX);
        o->model_generate = (int)v;
        return 0;
    case OPT_SAMPLE_TEMPERATURE:
        if (cli_parse_float(arg, 0.0, 100.0, &fv) != 0)
            return cli_fail(err, errlen,
                            "--sample-temperature '%s': must be a decimal number between 0 and "
                            "100 (0: the most likely token)",
                            arg);
        o->sample_argmax = fv == 0.0;
        o->sample_temperature = (float)fv;
        return 0;
    case OPT_TOP_K:
        if (cli_parse_int(arg, 1, INT_MAX, &v) != 0)
            return cli_fail(err, errlen, "--top-k '%s': must be a whole number from 1", arg);
        o->sample_top_k = (int)v;
        return 0;
    case OPT_TOP_P:
        if (cli_parse_float(arg, 0.0, 1.0, &fv) != 0 || fv == 0.0)
            return cli_fail(err, errlen,
                            "--top-p '%s': must be a decimal number above 0, at most 1", arg);
        o->sample_top_p = (float)fv;
        return 0;
    case OPT_KV_HEADS: /* whether N divides the model's own is the model's to say */
        if (cli_parse_int(arg, 1, 4096, &v) != 0)
            return cli_fail(err, errlen, "--kv-heads '%s': must be a whole number from 1", arg);
        o->model_kv = (int)v;
        return 0;
    default: return CLI_NOT_MINE;
    }
}

/* --ablate L:H,... : items LAYER:HEAD, each a whole number from 1; no repeats is
   the model's to check (a repeat would switch a head off twice: refused there). */
static int ablate_items_ok(const char *s) {
    for (const char *p = s;;) {
        long v;
        char item[16];
        for (int part = 0; part < 2; part++) {
            size_t len = strcspn(p, part ? "," : ":");
            if (len == 0 || len >= sizeof item) return 0;
            memcpy(item, p, len);
            item[len] = '\0';
            if (cli_parse_int(item, 1, 1 << 20, &v) != 0) return 0;
            p += len;
            if (!part && *p++ != ':') return 0;
        }
        if (*p == '\0') return 1;
        if (*p++ != ',') return 0;
    }
}

int cli_model_check(cli_options *o, char *err, size_t errlen) {
    if (o->model_kv && !o->model_path) { /* the random model's heads share K/V heads */
        o->cfg.kv_heads = o->model_kv;
        o->model_kv = 0;
    }
    if (o->model_kv && o->cfg.h)
        return cli_fail(err, errlen, "--kv-heads and -H: heads sharing K/V heads are not re-split");
    if (o->model_ablate && !o->model_path)
        return cli_fail(err, errlen, "--ablate '%s': LAYER:HEAD items only with --model",
                        o->model_ablate);
    if ((o->panel == CLI_PANEL_MODEL || o->panel == CLI_PANEL_NEXT) && !o->model_path)
        return cli_fail(err, errlen, "--panel %s: only with --model",
                        o->panel == CLI_PANEL_MODEL ? "model" : "next");
    const int sampling =
        o->sample_temperature != 0.0f || o->sample_argmax || o->sample_top_k || o->sample_top_p;
    if ((o->model_generate || sampling) && !o->model_path)
        return cli_fail(err, errlen, "--generate and its sampler's options: only with --model");
    const int writes = o->model_generate || o->mode == CLI_WINDOW; /* the window's W */
    if (sampling && !writes)
        return cli_fail(err, errlen,
                        "--sample-temperature, --top-k and --top-p: only with --generate N or "
                        "in the window (W)");
    if (!o->model_path) return 0;
    if (o->train.task) return cli_fail(err, errlen, "--model and --train: give one or the other");
    const train_options *t = &o->train;
    if (t->steps || t->layers || t->mlp || t->lr != 0.0f || t->batch)
        return cli_fail(err, errlen,
                        "--steps, --layers, --mlp, --lr and --batch: only with --train");
    if (o->compare)
        return cli_fail(err, errlen, "--compare: not yet with --model (pin a random model)");
    const char *which = o->cfg.d_model           ? "-d"
                        : o->cfg.seed && !writes ? "-s (with --model: the sampler's seed)"
                        : o->cfg.mask            ? "--mask"
                        : o->cfg.no_scale        ? "--no-scale"
                        : o->cfg.temperature     ? "--temperature"
                        : o->cfg.pad             ? "--pad"
                        : o->cfg.weights         ? "--weights"
                                                 : NULL;
    if (which)
        return cli_fail(err, errlen,
                        "%s: a loaded model's d_model, weights, causal mask and scaling are its "
                        "own (-H re-splits its heads)",
                        which);
    for (int i = 0; i < MHA_ABLATE_WORDS; i++)
        if (o->cfg.ablate[i])
            return cli_fail(err, errlen,
                            "--ablate: with --model the items are LAYER:HEAD, e.g. 5:1,5:3");
    if (o->model_ablate && !ablate_items_ok(o->model_ablate))
        return cli_fail(err, errlen,
                        "--ablate '%s': must be a comma list of LAYER:HEAD items, e.g. 5:1,5:3",
                        o->model_ablate);
    if (o->model_ablate && strlen(o->model_ablate) > 255)
        return cli_fail(err, errlen, "--ablate: at most 255 characters of LAYER:HEAD items");
    if (o->model_ablate && o->cfg.h)
        return cli_fail(err, errlen,
                        "--ablate and -H: heads are removed at the model's own split only");
    return 0;
}
