/* main.c: parses the options, resolves the text and configuration, and picks a
 * mode (window, dump, export, bench, list). The single place that prints
 * "mhaviz: ..." and chooses the exit status: 0 ok, 2 usage, 1 runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cli.h"
#include "dump.h"
#include "mha.h"
#include "samples.h"
#include "tok.h"
#include "train_figure.h"

#ifndef MHAVIZ_VERSION
#define MHAVIZ_VERSION "0.0.0"
#endif

static int fail(int status, const char *msg) {
    fprintf(stderr, "mhaviz: %s\n", msg);
    return status;
}

/* Resolves --text / --sample into tokens and checks the whole configuration.
 * Returns 0, or 2 with a message: every usage error is found before anything
 * is written. */
static int resolve_input(const cli_options *o, tok_list *toks, mha_config *cfg, char *err,
                         size_t errlen) {
    const char *text = NULL;
    if (o->text) {
        text = o->text;
    } else {
        int k = o->sample ? o->sample : 1;
        const sample *s = samples_get(k - 1);
        if (!s) {
            snprintf(err, errlen, "--sample %d: must be between 1 and %d (see --list-samples)", k,
                     samples_count());
            return 2;
        }
        text = s->text;
    }
    int total = 0;
    char terr[MHA_ERR_LEN];
    if (tok_split(toks, text, MHA_MAX_N, &total, terr, sizeof terr) != 0) {
        snprintf(err, errlen, "--text: %s", terr);
        return 2;
    }
    if (total > MHA_MAX_N) {
        tok_free(toks);
        snprintf(err, errlen, "--text: %d tokens; at most %d are allowed", total, MHA_MAX_N);
        return 2;
    }
    *cfg = o->cfg;
    mha_config_resolve(cfg);
    if (mha_config_check(cfg, toks->count, err, errlen) != 0) {
        tok_free(toks);
        return 2;
    }
    if (o->panel == CLI_PANEL_HEAD && o->panel_head > cfg->h) {
        tok_free(toks);
        snprintf(err, errlen, "--panel head:%d: must be between 1 and h (%d)", o->panel_head,
                 cfg->h);
        return 2;
    }
    return 0;
}

static int run_dump(const cli_options *o, const tok_list *toks, const mha_config *cfg) {
    char err[512];
    mha_model *m = mha_model_create();
    if (!m) return fail(1, "out of memory");
    if (mha_model_compute(m, cfg, toks, err, sizeof err) != 0) {
        mha_model_destroy(m);
        return fail(1, err);
    }
    int rc = dump_write(o->dump_dir, m, toks, err, sizeof err);
    mha_model_destroy(m);
    if (rc != 0) return fail(1, err);
    return 0;
}

int main(int argc, char **argv) {
    cli_options o;
    char err[512];
    if (cli_parse(&o, argc, argv, err, sizeof err) != 0) return fail(2, err);

    switch (o.mode) {
    case CLI_HELP: fputs(cli_usage(), stdout); return 0;
    case CLI_VERSION: printf("mhaviz %s\n", MHAVIZ_VERSION); return 0;
    case CLI_LIST_SAMPLES:
        for (int i = 0; i < samples_count(); i++)
            printf("%d\t%s\t%s\n", i + 1, samples_get(i)->name, samples_get(i)->text);
        return 0;
    case CLI_TRAIN: {
        int rc =
            app_train(&o.train, o.cfg.h, o.cfg.d_model, o.cfg.seed, o.dump_dir, err, sizeof err);
        if (rc == 0 && o.export_path) rc = app_train_export(&o, err, sizeof err);
        return rc ? fail(rc, err) : 0;
    }
    default: break;
    }

    tok_list toks = {0};
    mha_config cfg;
    int rc = resolve_input(&o, &toks, &cfg, err, sizeof err);
    if (rc != 0) return fail(rc, err);

    switch (o.mode) {
    case CLI_DUMP: rc = run_dump(&o, &toks, &cfg); break;
    case CLI_BENCH:
        rc = app_bench(&o, err, sizeof err);
        if (rc != 0) fail(rc, err);
        break;
    case CLI_EXPORT:
        rc = app_export(&o, &toks, &cfg, err, sizeof err);
        if (rc != 0) fail(rc, err);
        break;
    default:
        rc = app_window(&o, &toks, &cfg, err, sizeof err);
        if (rc != 0) fail(rc, err);
        break;
    }
    tok_free(&toks);
    return rc;
}
