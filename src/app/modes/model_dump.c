/* model_dump.c: `mhaviz --model PATH --dump OUT`: every layer of a loaded model on
 * the text, as the README lists: tokens.json, meta.json, layer_L/attn.npy,
 * layer_L/out.npy and the K/V heads as run (Q.npy, K.npy, V.npy) for L = 1 .. n_layer, final.npy,
 * next.json (an encoder's: fill.json, its masks filled by the masked-LM head). With -H K every
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
    char *text;            /* the JSON file last asked for */
    const char *generated; /* generated.json's text (--generate), or NULL */
} model_dump;

/* j (taken) as the text of file rel, ending with a newline. 1, or -1 on out of memory. */
static int json_file(model_dump *md, const char *rel, json_t *j, dump_file *f, char *err,
                     size_t errlen) {
    free(md->text);
    md->text = j ? json_dumps(j, JSON_INDENT(1) | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    if (!md->text) {
        snprintf(err, errlen, "out of memory for %s", rel);
        return -1;
    }
    size_t len = strlen(md->text);
    md->text[len] = '\n'; /* a text file ends with a newline: json_dumps leaves room for its NUL */
    f->kind = DUMP_TEXT;
    snprintf(f->rel, sizeof f->rel, "%s", rel);
    f->text = md->text;
    f->len = len + 1;
    return 1;
}

static json_t *tokens_json(const model_dump *md) {
    const gpt2_run *run = md->run;
    json_t *ids = json_array(), *toks = json_array();
    for (int i = 0; i < run->n; i++) {
        json_array_append_new(ids, json_integer(run->ids[i]));
        json_array_append_new(toks, model_token_json(md->m, run->ids[i]));
    }
    json_t *tokens = json_object();
    json_object_set_new(tokens, "ids", ids);
    json_object_set_new(tokens, "tokens", toks);
    return tokens;
}

static json_t *meta_json(const model_dump *md) {
    const gpt2_model *m = md->m;
    const gpt2_run *run = md->run;
    const tf_config *c = &m->tf->cfg;
    const int d = c->d_model;
    json_t *model = json_object();
    json_object_set_new(model, "name", json_string(m->paths.name));
    json_object_set_new(model, "type", json_string(m->cfg.family->type));
    json_object_set_new(model, "n_layer", json_integer(c->layers));
    json_object_set_new(model, "n_head", json_integer(c->h));
    json_object_set_new(model, "n_kv_head", json_integer(run->kv)); /* as run (--kv-heads) */
    json_object_set_new(model, "n_kv_head_trained", json_integer(m->tf->spec.h_kv));
    json_object_set_new(model, "d_head", json_integer(m->tf->spec.head_dim));
    json_object_set_new(model, "d_model", json_integer(d));
    json_object_set_new(model, "n_vocab", json_integer(c->vocab));
    json_object_set_new(model, "n_positions", json_integer(c->ctx));
    json_object_set_new(model, "layer_norm_epsilon", json_real(c->ln_eps));
    json_t *meta = json_object();
    json_object_set_new(meta, "model", model);
    json_object_set_new(meta, "h", json_integer(md->h));
    json_object_set_new(meta, "d_k",
                        json_integer(md->h == c->h ? m->tf->spec.head_dim : d / md->h));
    json_object_set_new(meta, "resplit", json_boolean(md->h != c->h));
    json_object_set_new(meta, "kv_regrouped", json_boolean(run->kv != m->tf->spec.h_kv));
    json_object_set_new(meta, "n", json_integer(run->n));
    json_object_set_new(meta, "n_text", json_integer(run->n_text));
    json_object_set_new(meta, "mask", json_string(gpt2_run_is_encoder(run) ? "none" : "causal"));
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
    return meta;
}

static json_t *next_json(const model_dump *md) {
    const gpt2_run *run = md->run;
    const float *p = gpt2_run_probs(run);
    json_t *top = json_array();
    for (int k = 0; k < GPT2_TOP; k++) {
        json_t *e = json_object();
        json_object_set_new(e, "id", json_integer(run->top[k]));
        json_object_set_new(e, "token", model_token_json(md->m, run->top[k]));
        json_object_set_new(e, "p", json_real(p[run->top[k]]));
        if (run->m != run->own) /* K/V regrouped: the model as trained, every head on */
            json_object_set_new(e, "p_trained", json_real(run->probs_own[run->top[k]]));
        json_array_append_new(top, e);
    }
    json_t *next = json_object();
    json_object_set_new(next, "top", top);
    return next;
}

/* An encoder's fill.json: each mask of the text (the first GPT2_FILL_MAX) with the
   masked-LM head's top ten, heads removed as asked; "head": false and no "top"
   when the file has no head. */
static json_t *fill_json(const model_dump *md) {
    const gpt2_run *run = md->run;
    const int fills = gpt2_run_fills(run), mask = model_tok_mask_id(md->m->tok);
    json_t *masks = json_array();
    for (int i = 0, seen = 0; i < run->n && seen < GPT2_FILL_MAX; i++) {
        if (mask < 0 || run->ids[i] != mask) continue;
        json_t *e = json_object();
        json_object_set_new(e, "pos", json_integer(i));
        if (seen < fills) {
            json_t *top = json_array();
            for (int k = 0; k < GPT2_TOP; k++) {
                json_t *t = json_object();
                json_object_set_new(t, "id", json_integer(run->fill_ids[seen][k]));
                json_object_set_new(t, "token", model_token_json(md->m, run->fill_ids[seen][k]));
                json_object_set_new(t, "p", json_real(run->fill_p[seen][k]));
                json_array_append_new(top, t);
            }
            json_object_set_new(e, "top", top);
        }
        json_array_append_new(masks, e);
        seen++;
    }
    json_t *fill = json_object();
    json_object_set_new(fill, "head", json_boolean(run->fill != NULL));
    json_object_set_new(fill, "mask_token",
                        mask >= 0 ? model_token_json(md->m, mask) : json_null());
    json_object_set_new(fill, "n_masks", json_integer(run->n_mask));
    json_object_set_new(fill, "masks", masks);
    return fill;
}

static int qkv_file(model_dump *md, int l, int which, dump_file *f);

#define LAYER_PARTS 6 /* a layer's folder, attn.npy, out.npy, Q.npy, K.npy, V.npy */

/* Layer l's folder (part 0), attn.npy (1), out.npy (2), or Q.npy, K.npy, V.npy (3-5); the
   layer is made the shown one, at md->h heads, before its attention is asked for. */
static int layer_file(model_dump *md, int l, int part, dump_file *f, char *err, size_t errlen) {
    if (part == 0) {
        f->kind = DUMP_FOLDER;
        snprintf(f->rel, sizeof f->rel, "layer_%d", l + 1);
        return 1;
    }
    if (part >= 3) return qkv_file(md, l, part - 3, f);
    /* the layer's attention is computed when shown (the run keeps none); a model
       whose heads cannot be re-split (RoPE, K/V groups) at its own heads, as it ran */
    const int h = tf_infer_can_split(md->m->tf) ? md->h : md->m->tf->cfg.h;
    if (part == 1 && gpt2_run_show(md->run, l, h) != 0) {
        snprintf(err, errlen, "out of memory for layer %d at %d heads", l + 1, h);
        return -1;
    }
    attn_layer L;
    model_source src;
    gpt2_run_source(&src, md->run);
    if (model_source_layer(&src, l, &L) != 0) {
        snprintf(err, errlen, "layer %d cannot be shown", l + 1);
        return -1;
    }
    const int n = md->run->n;
    f->kind = DUMP_NPY;
    snprintf(f->rel, sizeof f->rel, "layer_%d/%s", l + 1, part == 1 ? "attn.npy" : "out.npy");
    f->data = part == 1 ? L.attn : L.out;
    const int ashape[3] = {L.h, n, n}, oshape[3] = {n, L.d_model, 0};
    memcpy(f->shape, part == 1 ? ashape : oshape, sizeof f->shape);
    f->ndim = part == 1 ? 3 : 2;
    return 1;
}

/* Layer l's Q (which 0), K (1) or V (2) as the forward made them, the model's own query
   heads and the K/V heads it ran with (--kv-heads: the regrouped ones), after RoPE and
   QK-norm where the model has them: (n, h head_dim) for Q, (n, h_kv head_dim) for K and V,
   query head i in columns [i head_dim, (i + 1) head_dim), K/V head g likewise. */
static int qkv_file(model_dump *md, int l, int which, dump_file *f) {
    const tf_infer *inf = md->run->inf;
    const model_spec *s = &inf->tf->spec;
    const int n = md->run->n, cols = which == 0 ? spec_q_dim(s) : spec_kv_dim(s);
    const float *base = which == 0 ? inf->q : which == 1 ? inf->k : inf->v;
    f->kind = DUMP_NPY;
    snprintf(f->rel, sizeof f->rel, "layer_%d/%s", l + 1,
             (const char *[]){"Q.npy", "K.npy", "V.npy"}[which]);
    f->data = base + (size_t)l * inf->cap * cols;
    f->shape[0] = n, f->shape[1] = cols, f->ndim = 2;
    return 1;
}

/* overview.npy: every head's attention max-pooled as the overview draws it,
   (layers h, p, p), row l h + j layer l + 1's head j + 1 (gpt2_run_overview). */
static int overview_file(model_dump *md, dump_file *f, char *err, size_t errlen) {
    if (gpt2_run_overview(md->run) != 0) {
        snprintf(err, errlen, "out of memory for the overview's maps");
        return -1;
    }
    const tf_config *c = &md->m->tf->cfg;
    f->kind = DUMP_NPY;
    snprintf(f->rel, sizeof f->rel, "overview.npy");
    f->data = md->run->ov;
    f->shape[0] = c->layers * c->h, f->shape[1] = f->shape[2] = md->run->ov_n, f->ndim = 3;
    return 1;
}

/* The files in order: tokens.json, meta.json, layer_L/ with attn.npy, out.npy, Q.npy, K.npy
   and V.npy for every layer, final.npy, next.json (an encoder: fill.json), generated.json
   (--generate), overview.npy. */
static int model_file(void *ud, int i, dump_file *f, char *err, size_t errlen) {
    model_dump *md = ud;
    const int layers = md->m->tf->cfg.layers, n = md->run->n, d = md->m->tf->cfg.d_model;
    memset(f, 0, sizeof *f);
    if (i == 0) return json_file(md, "tokens.json", tokens_json(md), f, err, errlen);
    if (i == 1) return json_file(md, "meta.json", meta_json(md), f, err, errlen);
    if (i < 2 + LAYER_PARTS * layers)
        return layer_file(md, (i - 2) / LAYER_PARTS, (i - 2) % LAYER_PARTS, f, err, errlen);
    i -= (LAYER_PARTS - 3) * layers; /* the files after the layers, counted as before */
    if (i == 2 + 3 * layers) {
        f->kind = DUMP_NPY;
        snprintf(f->rel, sizeof f->rel, "final.npy");
        f->data = md->run->inf->lnf;
        f->shape[0] = n, f->shape[1] = d, f->ndim = 2;
        return 1;
    }
    if (i == 3 + 3 * layers && gpt2_run_is_encoder(md->run))
        return json_file(md, "fill.json", fill_json(md), f, err, errlen);
    if (i == 3 + 3 * layers) return json_file(md, "next.json", next_json(md), f, err, errlen);
    if (i == 4 + 3 * layers && md->generated) {
        f->kind = DUMP_TEXT;
        snprintf(f->rel, sizeof f->rel, "generated.json");
        f->text = md->generated;
        f->len = strlen(md->generated);
        return 1;
    }
    if (i == 4 + 3 * layers + (md->generated != NULL)) return overview_file(md, f, err, errlen);
    return 0;
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
    model_dump md = {m, &run, o->cfg.h ? o->cfg.h : c->h, NULL, NULL};
    if (c->d_model % md.h != 0 || md.h > ATTN_LAYER_MAX_HEADS) {
        snprintf(err, errlen, "-H %d: must divide %s's d_model (%d)", md.h, m->paths.name,
                 c->d_model);
        rc = 2;
    }
    if (rc == 0 && md.h != c->h && !tf_infer_can_split(m->tf)) {
        snprintf(err, errlen, "-H %d: %s's heads cannot be re-split (%s)", md.h, m->paths.name,
                 m->tf->spec.pos == SPEC_POS_ROPE ? "RoPE pairs dimensions inside each head"
                                                  : "K/V heads are shared by groups of heads");
        rc = 2;
    }
    const sample *smp = samples_get((o->sample ? o->sample : 1) - 1);
    const char *text = o->text ? o->text : smp ? smp->text : "";
    char why[256];
    if (rc == 0 && o->model_kv && gpt2_run_regroup(&run, o->model_kv, why, sizeof why) != 0) {
        snprintf(err, errlen, "--kv-heads %d: %s (%s)", o->model_kv, why, m->paths.name);
        rc = 2;
    }
    if (rc == 0 && gpt2_run_text(&run, text, strlen(text), why, sizeof why) != 0) {
        snprintf(err, errlen, "--text: %s", why);
        rc = 2;
    }
    if (rc == 0 && gpt2_run_cut(&run, why, sizeof why)) /* a note: the dump goes on */
        fprintf(stderr, "mhaviz: %s\n", why);
    if (rc == 0 && o->model_ablate && gpt2_run_ablate(&run, o->model_ablate, err, errlen) != 0)
        rc = 2;
    if (rc == 0 && md.h != c->h && o->model_ablate) {
        snprintf(err, errlen, "--ablate and -H: heads are removed at the model's own split only");
        rc = 2;
    }
    if (rc == 0 && o->model_generate && gpt2_run_is_encoder(&run)) {
        snprintf(err, errlen,
                 "--generate: %s is an encoder (model_type %s): it fills masks, it "
                 "does not write",
                 m->paths.name, m->cfg.family->type);
        rc = 2;
    }
    char *generated = NULL;
    if (rc == 0 && o->model_generate)
        rc = app_model_generate(&run, o, stdout, &generated, err, errlen);
    md.generated = generated;
    if (rc == 0 && o->dump_dir && dump_write(o->dump_dir, model_file, &md, err, errlen) != 0)
        rc = 1;
    free(generated);
    free(md.text);
    gpt2_run_free(&run);
    gpt2_free(m);
    return rc;
}

int app_model_dump_run(const char *dir, const gpt2_model *m, gpt2_run *run, int h, char *err,
                       size_t errlen) {
    model_dump md = {m, run, h ? h : m->tf->cfg.h, NULL, NULL};
    const int rc = dump_write(dir, model_file, &md, err, errlen) != 0 ? 1 : 0;
    free(md.text);
    return rc;
}
