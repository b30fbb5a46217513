/* weights_set.h: the safetensors files of one checkpoint, as one set of tensors:
 * model.safetensors alone, or the shards model.safetensors.index.json names
 * (shard_index.h), each opened (safetensors.h) and checked against the index both
 * ways: every tensor of a shard is in the index under that shard, and every tensor
 * the index names is in the shard it names. Never exits. */
#ifndef MHAVIZ_WEIGHTS_SET_H
#define MHAVIZ_WEIGHTS_SET_H

#include <stddef.h>

#include "safetensors.h"

typedef struct {
    int n;               /* files */
    st_file *f;          /* (n) */
    char **path;         /* (n) each file's path, for messages */
    int nt;              /* tensors of every file */
    const st_tensor **t; /* (nt) sorted by name */
    int *file;           /* (nt) the file each is in */
} weights_set;

/* Opens path: a .safetensors file, or (sharded) an index whose shards sit beside
 * it. 0, or 1 (a file cannot be read: a shard missing too) / 2 (not weights we can
 * use) with one line "PATH: what is wrong" naming the file at fault; *w is then
 * empty (ws_close is still fine). */
int ws_open(weights_set *w, const char *path, int sharded, char *err, size_t errlen);
/* The tensor called name and its file (file may be NULL), or NULL. */
const st_tensor *ws_find(const weights_set *w, const char *name, int *file);
/* st_verify on every file: 0, or 1 with "PATH: the file changed while it was read". */
int ws_verify(const weights_set *w, char *err, size_t errlen);
void ws_close(weights_set *w);

#endif
