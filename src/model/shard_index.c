/* shard_index.c: model.safetensors.index.json read (shard_index.h). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "shard_index.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "config_json.h"

/* A shard's name we will open beside the index: a plain name of a .safetensors file. */
static int plain_name(const char *s) {
    const size_t n = strlen(s), el = strlen(".safetensors");
    return n > el && n < 256 && s[0] != '.' && !strchr(s, '/') &&
           strcmp(s + n - el, ".safetensors") == 0;
}

/* The shard index of name, added when new: its index, or -1 (too many, or memory). */
static int shard_of(shard_index *x, const char *name) {
    for (int i = 0; i < x->n_shards; i++)
        if (strcmp(x->shard[i], name) == 0) return i;
    if (x->n_shards == SHARD_MAX) return -1;
    char *copy = strdup(name);
    if (!copy) return -1;
    x->shard[x->n_shards] = copy;
    return x->n_shards++;
}

static int fill(shard_index *x, json_t *map, const char *path, char *err, size_t errlen) {
    const size_t n = json_object_size(map);
    if (n == 0) return cj_fail(err, errlen, 2, path, "weight_map is empty");
    x->shard = calloc(SHARD_MAX, sizeof *x->shard);
    x->tensor = calloc(n, sizeof *x->tensor);
    x->of = calloc(n, sizeof *x->of);
    if (!x->shard || !x->tensor || !x->of) return cj_fail(err, errlen, 1, path, "out of memory");
    const char *key;
    json_t *v;
    json_object_foreach(map, key, v) {
        if (!json_is_string(v))
            return cj_fail(err, errlen, 2, path, "weight_map's %.80s is not a file name", key);
        const char *file = json_string_value(v);
        if (!plain_name(file))
            return cj_fail(err, errlen, 2, path,
                           "weight_map's %.80s names \"%.80s\": not a .safetensors file beside "
                           "the index",
                           key, file);
        const int s = shard_of(x, file);
        if (s < 0)
            return cj_fail(err, errlen, 2, path, "more than %d shards, or out of memory",
                           SHARD_MAX);
        if (!(x->tensor[x->n] = strdup(key))) return cj_fail(err, errlen, 1, path, "out of memory");
        x->of[x->n++] = s;
    }
    return 0;
}

int shard_index_parse(shard_index *x, const char *json, size_t len, const char *path, char *err,
                      size_t errlen) {
    memset(x, 0, sizeof *x);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        for (char *s = jerr.text; *s; s++)
            if ((unsigned char)*s >= 0x80) *s = '?';
        return cj_fail(err, errlen, 2, path, "not valid JSON: %s (line %d)", jerr.text, jerr.line);
    }
    json_t *map = json_object_get(root, "weight_map");
    int rc = map && json_is_object(map) ? fill(x, map, path, err, errlen)
                                        : cj_fail(err, errlen, 2, path, "no weight_map object");
    json_decref(root);
    if (rc) shard_index_free(x);
    return rc;
}

void shard_index_free(shard_index *x) {
    for (int i = 0; i < x->n_shards; i++) free(x->shard[i]);
    for (int i = 0; i < x->n; i++) free(x->tensor[i]);
    free(x->shard);
    free(x->tensor);
    free(x->of);
    memset(x, 0, sizeof *x);
}
