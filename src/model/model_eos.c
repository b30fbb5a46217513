/* model_eos.c: the end tokens of a loaded model (model_eos.h): generation_config.json,
 * then config.json, then the family's default, each id checked against the
 * vocabulary. */
#include "model_eos.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config_json.h"

#define EOS_FILE_MAX (1u << 20) /* a config of a few KiB; bounds what is read */

/* The eos_token_id Hugging Face's config class gives where config.json is silent,
   or -1 for none. */
static int family_default(const char *type) {
    static const struct {
        const char *type;
        int id;
    } table[] = {{"gpt2", 50256}, {"llama", 2}, {"mistral", 2}, {"gemma", 1}, {"phi3", 32000}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (type && strcmp(type, table[i].type) == 0) return table[i].id;
    return -1;
}

/* Reads path's JSON object into *root (NULL and 0 when the file does not exist). */
static int load(json_t **root, const char *path, char *err, size_t errlen) {
    *root = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return cj_fail(err, errlen, 1, path, "%s", strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return cj_fail(err, errlen, 1, path, "not a regular file");
    if (st.st_size > (off_t)EOS_FILE_MAX)
        return cj_fail(err, errlen, 2, path, "%lld bytes: too large for a config (at most %u)",
                       (long long)st.st_size, EOS_FILE_MAX);
    json_error_t jerr;
    *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!*root) {
        for (char *s = jerr.text; *s; s++)
            if ((unsigned char)*s >= 0x80) *s = '?';
        return cj_fail(err, errlen, 2, path, "not valid JSON: %s (line %d)", jerr.text, jerr.line);
    }
    if (!json_is_object(*root)) {
        json_decref(*root);
        *root = NULL;
        return cj_fail(err, errlen, 2, path, "not a JSON object");
    }
    return 0;
}

/* One id of the file's eos_token_id into e. */
static int add_id(model_eos *e, json_t *v, int vocab, const char *path, char *err, size_t errlen) {
    if (!json_is_integer(v))
        return cj_fail(err, errlen, 2, path,
                       "eos_token_id must be a token id or a list of token ids");
    const json_int_t id = json_integer_value(v);
    if (id < 0 || id >= vocab)
        return cj_fail(err, errlen, 2, path,
                       "eos_token_id %lld is not a token of the vocabulary (0 ... %d)",
                       (long long)id, vocab - 1);
    if (e->count >= MODEL_EOS_MAX)
        return cj_fail(err, errlen, 2, path, "eos_token_id names more than %d tokens",
                       MODEL_EOS_MAX);
    if (!model_eos_is(e, (int)id)) e->ids[e->count++] = (int)id;
    return 0;
}

/* The file's eos_token_id into e. *exists: 1 when the file does; *named: 1 when it
   has the key (null included: no end token). */
static int from_file(model_eos *e, const char *path, int vocab, int *exists, int *named, char *err,
                     size_t errlen) {
    *exists = *named = 0;
    json_t *root = NULL;
    int rc = load(&root, path, err, errlen);
    if (rc || !root) return rc;
    *exists = 1;
    json_t *v = json_object_get(root, "eos_token_id");
    *named = v != NULL;
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if ((rc = add_id(e, x, vocab, path, err, errlen)) != 0) break;
    } else if (v && !json_is_null(v)) {
        rc = add_id(e, v, vocab, path, err, errlen);
    }
    json_decref(root);
    return rc;
}

int model_eos_read(model_eos *e, const char *dir, const char *config, const char *model_type,
                   int vocab, char *err, size_t errlen) {
    memset(e, 0, sizeof *e);
    char gen[4200];
    snprintf(gen, sizeof gen, "%s/generation_config.json", dir);
    /* generate() takes generation_config.json where the folder has one, whole: its
       eos_token_id or none; only without it the model's config (from_model_config) */
    int exists = 0, named = 0, rc = from_file(e, gen, vocab, &exists, &named, err, errlen);
    e->from = "generation_config.json";
    if (rc || exists) goto done;
    rc = from_file(e, config, vocab, &exists, &named, err, errlen);
    e->from = "config.json";
    if (rc || named) goto done;
    const int id = family_default(model_type); /* config.json is silent: the class's */
    e->from = "the default";
    if (id >= 0 && id < vocab) e->ids[e->count++] = id;
done:
    if (rc) e->count = 0;
    return rc;
}

int model_eos_is(const model_eos *e, int id) {
    for (int i = 0; i < e->count; i++)
        if (e->ids[i] == id) return 1;
    return 0;
}
