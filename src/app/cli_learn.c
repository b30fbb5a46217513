/* cli_learn.c: the options of the headless training (--help's "Learning"): --train
 * TASK and its --steps, --layers, --mlp, --lr, --batch, --layer, and which of the other
 * options may go with them. The training itself is train_mode.c's. */
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"
#include "learn.h"

int cli_learning_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                        size_t errlen) {
    (void)f;
    long v = 0;
    double fv = 0.0;
    switch (opt) {
    case OPT_TRAIN: {
        int id = learn_task_find(arg);
        if (id < 0)
            return cli_fail(err, errlen,
                            "--train '%s': must be prev, first, pair, sort, induction or cards",
                            arg);
        o->train.task = id + 1;
        return 0;
    }
    case OPT_STEPS:
        if (cli_parse_int(arg, 1, 1000000, &v) != 0)
            return cli_fail(err, errlen,
                            "--steps '%s': must be a whole number between 1 and 1000000", arg);
        o->train.steps = (int)v;
        return 0;
    case OPT_LAYERS:
        if (cli_parse_int(arg, 1, LEARN_MAX_LAYERS, &v) != 0)
            return cli_fail(err, errlen, "--layers '%s': must be 1 or 2", arg);
        o->train.layers = (int)v;
        return 0;
    case OPT_MLP: o->train.mlp = 1; return 0;
    case OPT_LR:
        if (cli_parse_float(arg, 1e-5, 1.0, &fv) != 0)
            return cli_fail(err, errlen,
                            "--lr '%s': must be a decimal number between 0.00001 and 1", arg);
        o->train.lr = (float)fv;
        return 0;
    case OPT_BATCH:
        if (cli_parse_int(arg, 1, LEARN_MAX_BATCH, &v) != 0)
            return cli_fail(err, errlen, "--batch '%s': must be a whole number between 1 and %d",
                            arg, LEARN_MAX_BATCH);
        o->train.batch = (int)v;
        return 0;
    case OPT_LAYER: /* which of the run's layers is checked once --layers is known */
        if (cli_parse_int(arg, 1, 1000000, &v) != 0)
            return cli_fail(err, errlen, "--layer '%s': must be a layer's number, 1 or more", arg);
        o->train.layer = (int)v;
        return 0;
    case OPT_SWEEP: /* the one setting swept so far */
        if (strcmp(arg, "h") != 0)
            return cli_fail(err, errlen, "--sweep '%s': must be h (the number of heads)", arg);
        o->train.sweep = 1;
        return 0;
    case OPT_MOMENTS:
        if (cli_parse_int(arg, 2, 60, &v) != 0)
            return cli_fail(err, errlen, "--moments '%s': must be a whole number between 2 and 60",
                            arg);
        o->train.moments = (int)v;
        return 0;
    case OPT_SEEDS:
        if (cli_parse_int(arg, 1, 64, &v) != 0)
            return cli_fail(err, errlen, "--seeds '%s': must be a whole number between 1 and 64",
                            arg);
        o->train.seeds = (int)v;
        return 0;
    default: return CLI_NOT_MINE;
    }
}

int cli_learning_check(cli_options *o, char *err, size_t errlen) {
    const train_options *t = &o->train;
    if (t->layer && (!t->task || o->mode != CLI_EXPORT))
        return cli_fail(err, errlen, "--layer %d: only with --train TASK --export FILE", t->layer);
    if (t->layer) { /* the run's layers: --layers, else the task's own */
        const int layers =
            t->layers ? t->layers : learn_task((learn_task_id)(t->task - 1))->default_layers;
        if (t->layer > layers)
            return cli_fail(err, errlen, "--layer %d: the model trained has %d layer%s", t->layer,
                            layers, layers > 1 ? "s" : "");
    }
    if (t->seeds && !t->sweep) return cli_fail(err, errlen, "--seeds: only with --sweep h");
    if (t->moments && (!t->task || o->mode != CLI_EXPORT || t->sweep))
        return cli_fail(err, errlen, "--moments %d: only with --train TASK --export FILE%s",
                        t->moments, t->sweep ? " (one run, no --sweep)" : "");
    if (t->sweep && !t->task) return cli_fail(err, errlen, "--sweep: only with --train TASK");
    if (t->sweep && (o->cfg.h || t->layer || o->colormap >= 0))
        return cli_fail(err, errlen, "--sweep h: takes no %s",
                        o->cfg.h   ? "-H (it trains every divisor of d_model)"
                        : t->layer ? "--layer (the plot shows accuracy against h)"
                                   : "--colormap (the plot has no heatmap)");
    if (!t->task) {
        if (t->steps || t->layers || t->mlp || t->lr != 0.0f || t->batch)
            return cli_fail(err, errlen,
                            "--steps, --layers, --mlp, --lr and --batch: only with --train");
        return 0;
    }
    /* --train: alone, or with --dump for its files, --export for its figure */
    if (o->mode != CLI_WINDOW && o->mode != CLI_DUMP && o->mode != CLI_EXPORT)
        return cli_fail(err, errlen, "--train: cannot be combined with another output option");
    if (o->text || o->text_file || o->sample || o->cfg.mask || o->cfg.no_scale || o->cfg.pad ||
        o->cfg.temperature != 0.0f || o->cfg.weights || o->panel || o->export_dir || o->values ||
        o->contrast || o->diff)
        return cli_fail(err, errlen,
                        "--train: takes -H, -d, -s, --steps, --layers, --mlp, --lr, --batch, "
                        "--dump and --export (with --size, --scale, --theme, --colormap) only");
    for (int i = 0; i < MHA_ABLATE_WORDS; i++)
        if (o->cfg.ablate[i])
            return cli_fail(err, errlen, "--train: takes no --ablate (it ablates every head)");
    o->mode = CLI_TRAIN;
    return 0;
}
