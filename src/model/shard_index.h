/* shard_index.h: model.safetensors.index.json, the map of a sharded checkpoint:
 * {"metadata": {...}, "weight_map": {"TENSOR": "model-0000K-of-0000N.safetensors", ...}}.
 * Each shard named must be a plain file name in the same folder (no '/', not
 * starting with '.'), at most SHARD_MAX of them; every value a string; the map not
 * empty. No file is opened here (weights_set.c opens the shards). Never exits. */
#ifndef MHAVIZ_SHARD_INDEX_H
#define MHAVIZ_SHARD_INDEX_H

#include <stddef.h>

#define SHARD_MAX 1024
#define SHARD_INDEX_MAX_BYTES (64u << 20) /* Llama 3 405B's index: ~100 kB */

typedef struct {
    int n_shards;
    char **shard; /* (n_shards) file names, each once, as first named */
    int n;
    char **tensor; /* (n) tensor names, as the map gives them */
    int *of;       /* (n) the shard each tensor is in */
} shard_index;

/* Parses len bytes of the index; path names it in err. 0, or 2 (not an index we
 * can use) / 1 (out of memory) with one line "PATH: what is wrong"; *x is then
 * empty (shard_index_free is still fine). */
int shard_index_parse(shard_index *x, const char *json, size_t len, const char *path, char *err,
                      size_t errlen);
void shard_index_free(shard_index *x);

#endif
