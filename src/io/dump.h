/* dump.h: --dump DIR, the one writer of every dump: a source lists its files
 * (dump_file_fn: the built-in layer's tensors as .npy plus tokens.txt and
 * meta.json, a loaded model's layers, a training run's), and dump_write writes
 * them as one folder, all or nothing. Knows the file names; the numbers come from
 * the source. */
#ifndef MHAVIZ_DUMP_H
#define MHAVIZ_DUMP_H

#include <stddef.h>

#include "layer.h"

/* One file of a dump, as its source names it: a folder, a float32 array as .npy,
 * or text. rel is inside the dump: "X.npy", "layer_3/attn.npy", "weights". */
typedef enum { DUMP_FOLDER, DUMP_NPY, DUMP_TEXT } dump_kind;
typedef struct {
    dump_kind kind;
    char rel[96];
    const float *data; /* DUMP_NPY: shape[0 .. ndim) */
    int shape[3], ndim;
    const char *text; /* DUMP_TEXT: len bytes */
    size_t len;
} dump_file;

/* A source's files, one at a time and in order: fills *f with file i (i = 0, 1,
 * 2 ...) and returns 1, or 0 after the last, or -1 with a message in err. What f
 * points to must hold until the next call, so a source may compute each file
 * just before it is asked for (a loaded model's layer re-split into other heads). */
typedef int (*dump_file_fn)(void *ud, int i, dump_file *f, char *err, size_t errlen);

/* The one --dump writer, for every source: writes next's files as the folder dir,
 * all or nothing: they go into a temporary folder beside dir, which takes dir's
 * place only when every file is complete. A missing dir (and its missing parents)
 * is created; an existing dir is replaced as a whole when it is empty or holds
 * only an earlier dump, and refused otherwise (also a mount point, ".", or a
 * folder holding the current one). A failure or a signal leaves the earlier dir
 * as it was and nothing new. The names a dump may write are the built-in layer's
 * (dump_layer_file), a loaded model's: tokens.json, meta.json, final.npy,
 * next.json, layer_L/attn.npy, layer_L/out.npy, and --train's: logits.npy,
 * targets.txt, train.json, sweep.json, layerN/ (its tensors, README) and
 * weights/NAME.npy (README); an earlier dump of any kind may be replaced. Returns
 * 0, or -1 with a one-line message in err. */
int dump_write(const char *dir, dump_file_fn next, void *ud, char *err, size_t errlen);

/* The built-in layer's files, the README's list: the 14 tensors of L as X.npy,
 * W_Q.npy ... out_full.npy, tokens.txt and meta.json. ud is a dump_layer; its
 * meta holds meta.json's text once asked for (the caller frees it). */
typedef struct {
    const attn_layer *L;
    char *meta;
    size_t meta_len;
} dump_layer;
int dump_layer_file(void *ud, int i, dump_file *f, char *err, size_t errlen);

/* dump_write of L's files (dump_layer_file). L must have every tensor: a layer
 * missing one is refused before anything is written. 0, or -1 with err. */
int dump_write_layer(const char *dir, const attn_layer *L, char *err, size_t errlen);

/* What dump_write would refuse before writing, found without
 * writing anything: a name of no folder of its own, too long a name, an existing
 * folder that is not empty nor an earlier dump, a file where a folder must be, or
 * a place it may not write. For a run that computes for long before it writes.
 * Returns 0, or -1 with the same message the writing would give. */
int dump_check(const char *dir, char *err, size_t errlen);

/* mkdir -p; fails with a message when a component exists and is not a folder. */
int dump_mkdirs(const char *dir, char *err, size_t errlen);

#endif
