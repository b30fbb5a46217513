/* model_generate.c: --generate N: the model writes, token after token, each
 * sampled as sampler.h says from the next-token logits of the text so far and
 * appended (gpt2_run_tokens: only the new row of each layer is computed). */
#include "model_generate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_eos.h"
#include "sampler.h"
#include "state.h"

/* A token's text for JSON: its bytes when they are valid UTF-8, else its label
   (the "<e2>" form for the bytes that are not whole characters). */
json_t *model_token_json(const gpt2_model *m, int id) {
    size_t len = 0;
    const unsigned char *b = model_tok_bytes(m->tok, id, &len);
    json_t *s = b ? json_stringn((const char *)b, len) : NULL; /* NULL: not valid UTF-8 */
    if (s) return s;
    char label[GPT2_LABEL * 2];
    model_tok_label(m->tok, id, label, sizeof label);
    return json_string(label);
}

/* One step's record: the token drawn and the distribution it came from. */
static json_t *step_json(const gpt2_run *run, int id, double p_sample, double u) {
    const gpt2_model *m = run->m;
    const float *p = gpt2_run_probs(run);
    json_t *top = json_array();
    for (int k = 0; k < GPT2_TOP; k++) {
        json_t *e = json_object();
        json_object_set_new(e, "id", json_integer(run->top[k]));
        json_object_set_new(e, "token", model_token_json(m, run->top[k]));
        json_object_set_new(e, "p", json_real(p[run->top[k]]));
        json_array_append_new(top, e);
    }
    json_t *s = json_object();
    json_object_set_new(s, "id", json_integer(id));
    json_object_set_new(s, "token", model_token_json(m, id));
    json_object_set_new(s, "p", json_real(p[id]));
    json_object_set_new(s, "p_sample", json_real(p_sample));
    json_object_set_new(s, "u", u >= 0.0 ? json_real(u) : json_null());
    json_object_set_new(s, "top", top);
    return s;
}

static json_t *header_json(uint64_t seed, const sampler_opts *so, int prompt,
                           const model_eos *eos) {
    json_t *j = json_object(), *ends = json_array();
    for (int i = 0; i < eos->count; i++) json_array_append_new(ends, json_integer(eos->ids[i]));
    json_object_set_new(j, "eos_token_ids", ends);
    json_object_set_new(j, "eos_from", json_string(eos->from));
    json_object_set_new(j, "seed", json_integer((json_int_t)seed));
    json_object_set_new(j, "sample_temperature", json_real(so->temperature));
    json_object_set_new(j, "top_k", json_integer(so->top_k));
    json_object_set_new(j, "top_p", json_real(so->top_p > 0.0f ? so->top_p : 1.0));
    json_object_set_new(j, "prompt_tokens", json_integer(prompt));
    return j;
}

int app_model_generate(gpt2_run *run, const cli_options *o, FILE *out, char **json, char *err,
                       size_t errlen) {
    const gpt2_model *m = run->m;
    const app_write_opts w = app_write_opts_of(o); /* the window's write key's too */
    const sampler_opts so = {w.temperature, w.top_k, w.top_p};
    model_eos eos; /* the tokens that end the text, as Hugging Face's generate() takes them */
    const int rc = model_eos_read(&eos, m->paths.dir, m->paths.config, m->cfg.family->type,
                                  m->tf->cfg.vocab, err, errlen);
    if (rc) return rc;
    sampler smp;
    int *ids = malloc((size_t)run->inf->cap * sizeof(int));
    json_t *root = header_json(w.seed, &so, run->n, &eos), *steps = json_array();
    if (!ids || sampler_init(&smp, m->tf->cfg.vocab) != 0 || !root || !steps) {
        free(ids);
        json_decref(root);
        json_decref(steps);
        snprintf(err, errlen, "--generate: out of memory");
        return 1;
    }
    uint64_t rng = w.seed;
    memcpy(ids, run->ids, (size_t)run->n * sizeof(int));
    const char *stopped = "length";
    for (int k = 0; k < o->model_generate; k++) {
        if (run->n >= run->inf->cap) {
            stopped = "context";
            break;
        }
        double p_sample = 0.0, u = -1.0;
        const int id = sampler_pick(&smp, run->inf->logits, &so, &rng, &p_sample, &u);
        json_array_append_new(steps, step_json(run, id, p_sample, u));
        if (model_eos_is(&eos, id)) {
            stopped = "end of text";
            break;
        }
        size_t len = 0;
        const unsigned char *b = model_tok_bytes(m->tok, id, &len);
        if (b) fwrite(b, 1, len, out);
        ids[run->n] = id;
        gpt2_run_tokens(run, ids, run->n + 1);
    }
    fputc('\n', out);
    fflush(out);
    json_object_set_new(root, "stopped", json_string(stopped));
    json_object_set_new(root, "steps", steps);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_ENSURE_ASCII);
    json_decref(root);
    *json = text ? malloc(strlen(text) + 2) : NULL; /* a text file ends with a newline */
    if (*json) snprintf(*json, strlen(text) + 2, "%s\n", text);
    free(text);
    sampler_free(&smp);
    free(ids);
    if (!*json) {
        snprintf(err, errlen, "--generate: out of memory");
        return 1;
    }
    return 0;
}
