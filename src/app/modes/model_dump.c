/* model_dump.c: `mhaviz --model PATH --dump OUT`: every layer of a loaded model on
 * the text, as the README lists: tokens.json, meta.json, layer_L/attn.npy and
 * layer_L/out.npy for L = 1 .. n_layer, final.npy, next.json. With -H K every
 * layer is re-split into K heads from its own input (the native model's stream);
 * with --ablate L:H the heads are removed and the layers after see it; with
 * --generate N the model first writes N tokens (model_generate.c: printed, and
 * generated.json; without --dump only printed). All or nothing, as every --dump
 * (dump.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "dump.h"
#include "gpt2.h"
#include "model_generate.h"
#include "samples.h"

typedef struct {
    const gpt2_model *m;
    gpt2_run *run;
    int h;                 /* heads written: the model's own, or the re-split */
    const char *generated; /* generated.json's text (--generate), or NULL */
} model_dump;

/* A token's text for JSON: its bytes when they are valid UTF-8, else its label
   (the "<e2>" form for the bytes that are not whole characters). */
json_t *model_token_json(const gpt2_model *m, int id) {
    size_t len = 0;
    const unsigned char *b = bpe_token_bytes(m->tok, id, &len);
    json_t *s = b ? json_stringn((const char *)b, len) : NULL; /* NULL: not valid UTF-8 */
    if (s) return s;
    char label[GPT2_LABEL * 2];
    bpe_token_label(m->tok, id, label, sizeof label);
    return json_string(label);
}

static int put_json(dump_run *r, const char *rel, json_t *j, char *err, size_t errlen) {
    char *text = j ? json_dumps(j, JSON_INDENT(1) | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    if (!text) {
        snprintf(err, errlen, "out of memory for %s", rel);
        return -1;
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* a text file ends with a newline: json_dumps leaves room for its NUL */
    int rc = dump_put_text(r, rel, text, len + 1, err, errlen);
    free(text);
    return rc;
}

static int fill(dump_run *r, void *ud, char *err, size_t errlen) {
    model_dump *md = ud;
    const gpt2_model *m = md->m;
    gpt2_run *run = md->run;
    const tf_config *c = &m->tf->cfg;
    const int n = run->n, d = c->d_model;

    json_t *ids = json_array(), *toks = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(ids, json_integer(run->ids[i]));
        json_array_append_new(toks, model_token_json(m, run->ids[i]));
    }
    json_t *tokens = json_object();
    json_object_set_new(tokens, "ids", ids);
    json_object_set_new(tokens, "tokens", toks);
    if (put_json(r, "tokens.json", tokens, err, errlen) != 0) return -1;

    json_t *model = json_object();
    json_object_set_new(model, "name", json_string(m->paths.name));
    json_object_set_new(model, "n_layer", json_integer(c->layers));
    json_object_set_new(model, "n_head", json_integer(c->h));
    json_object_set_new(model, "d_model", json_integer(d));
    json_object_set_new(model, "n_vocab", json_integer(c->vocab));
    json_object_set_new(model, "n_positions", json_integer(c->ctx));
    json_object_set_new(model, "layer_norm_epsilon", json_real(c->ln_eps));
    json_t *meta = json_object();
    json_object_set_new(meta, "model", model);
    json_object_set_new(meta, "h", json_integer(md->h));
    json_object_set_new(meta, "d_k", json_integer(d / md->h));
    json_object_set_new(meta, "resplit", json_boolean(md->h != c->h));
    json_object_set_new(meta, "n", json_integer(n));
    json_object_set_new(meta, "n_text", json_integer(run->n_text));
    json_object_set_new(meta, "mask", json_string("causal"));
    json_t *removed = json_array();
    for (int l = 0; l < c->layers; l++)
        for (int hd = 0; hd < c->h; hd++)
            if (gpt2_run_is_off(run, l, hd)) {
                json_t *pair = json_array();
                json_array_append_new(pair, json_integer(l + 1));
                json_array_append_new(pair, json_integer(hd + 1));
                json_array_append_new(removed, pair);
            }
    json_object_set_new(meta, "ablated", removed);
    if (put_json(r, "meta.json", meta, err, errlen) != 0) return -1;

    for (int l = 0; l < c->layers; l++) {
        char rel[64];
        snprintf(rel, sizeof rel, "layer_%d", l + 1);
        if (dump_put_folder(r, rel, err, errlen) != 0) return -1;
        if (gpt2_run_show(run, l, md->h) != 0) {
            snprintf(err, errlen, "out of memory for layer %d at %d heads", l + 1, md->h);
            return -1;
        }
        attn_layer L;
        model_source src;
        gpt2_run_source(&src, run);
        if (model_source_layer(&src, l, &L) != 0) {
            snprintf(err, errlen, "layer %d cannot be shown", l + 1);
            return -1;
        }
        const int ashape[3] = {L.h, n, n}, oshape[2] = {n, d};
        snprintf(rel, sizeof rel, "layer_%d/attn.npy", l + 1);
        if (dump_put_npy(r, rel, L.attn, ashape, 3, err, errlen) != 0) return -1;
        snprintf(rel, sizeof rel, "layer_%d/out.npy", l + 1);
        if (dump_put_npy(r, rel, L.out, oshape, 2, err, errlen) != 0) return -1;
    }
    const int fshape[2] = {n, d};
    if (dump_put_npy(r, "final.npy", run->inf->lnf, fshape, 2, err, errlen) != 0) return -1;

    const float *p = gpt2_run_probs(run);
    json_t *top = json_array();
    for (int k = 0; k < GPT2_TOP; k++) {
        json_t *e = json_object();
        json_object_set_new(e, "id", json_integer(run->top[k]));
        json_object_set_new(e, "token", model_token_json(m, run->top[k]));
        json_object_set_new(e, "p", json_real(p[run->top[k]]));
        json_array_append_new(top, e);
    }
    json_t *next = json_object();
    json_object_set_new(next, "top", top);
    if (put_json(r, "next.json", next, err, errlen) != 0) return -1;
    return md->generated ? dump_put_text(r, "generated.json", md->generated, strlen(md->generated),
                                         err, errlen)
                         : 0;
}

int app_model_dump(const cli_options *o, char *err, size_t errlen) {
    gpt2_model *m = NULL;
    int rc = gpt2_load(&m, o->model_path, NULL, NULL, err, errlen);
    if (rc != 0) return rc;
    gpt2_run run;
    if (gpt2_run_init(&run, m) != 0) {
        snprintf(err, errlen, "%s: out of memory for its trace", o->model_path);
        gpt2_free(m);
        return 1;
    }
    const tf_config *c = &m->tf->cfg;
    model_dump md = {m, &run, o->cfg.h ? o->cfg.h : c->h, NULL};
    if (c->d_model % md.h != 0 || md.h > ATTN_LAYER_MAX_HEADS) {
        snprintf(err, errlen, "-H %d: must divide %s's d_model (%d)", md.h, m->paths.name,
                 c->d_model);
        rc = 2;
    }
    const sample *smp = samples_get((o->sample ? o->sample : 1) - 1);
    const char *text = o->text ? o->text : smp ? smp->text : "";
    char why[256];
    if (rc == 0 && gpt2_run_text(&run, text, strlen(text), why, sizeof why) != 0) {
        snprintf(err, errlen, "--text: %s", why);
        rc = 2;
    }
    if (rc == 0 && o->model_ablate && gpt2_run_ablate(&run, o->model_ablate, err, errlen) != 0)
        rc = 2;
    if (rc == 0 && md.h != c->h && o->model_ablate) {
        snprintf(err, errlen, "--ablate and -H: heads are removed at the model's own split only");
        rc = 2;
    }
    char *generated = NULL;
    if (rc == 0 && o->model_generate)
        rc = app_model_generate(&run, o, stdout, &generated, err, errlen);
    md.generated = generated;
    if (rc == 0 && o->dump_dir && dump_write_files(o->dump_dir, fill, &md, err, errlen) != 0)
        rc = 1;
    free(generated);
    gpt2_run_free(&run);
    gpt2_free(m);
    return rc;
}
