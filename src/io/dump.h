/* dump.h: --dump DIR, every tensor of an attn_layer as .npy plus tokens.txt and
 * meta.json. Knows the file names; the numbers come from the layer's source. */
#ifndef MHAVIZ_DUMP_H
#define MHAVIZ_DUMP_H

#include <stddef.h>

#include "layer.h"

/* Writes the files listed in the README as the folder dir, all or nothing: they
 * go into a temporary folder beside dir, which takes dir's place only when every
 * file is complete. A missing dir (and its missing parents) is created; an
 * existing dir is replaced as a whole when it is empty or holds only an earlier
 * dump, and refused otherwise (also a mount point, ".", or a folder holding the
 * current one). A failure or a signal leaves the earlier dir as it was and
 * nothing new. L must have every tensor (a layer missing one is refused before
 * anything is written). Returns 0, or -1 with a one-line message in err. */
int dump_write(const char *dir, const attn_layer *L, char *err, size_t errlen);

/* The same all-or-nothing writing for files the caller names: fill writes them
 * with dump_put_* into the temporary folder (the top, or a layer_L folder made
 * with dump_put_folder). The names a dump may write are the layer's above and a
 * loaded model's: tokens.json, meta.json, final.npy, next.json, layer_L/attn.npy,
 * layer_L/out.npy, and --train's: logits.npy, targets.txt, train.json, layerN/ (its
 * tensors, README) and weights/NAME.npy (README); an earlier dump of any kind may be
 * replaced. fill
 * returns 0, or -1 with the message in err. */
typedef struct dump_run dump_run;
typedef int (*dump_fill_fn)(dump_run *r, void *ud, char *err, size_t errlen);
int dump_write_files(const char *dir, dump_fill_fn fill, void *ud, char *err, size_t errlen);
int dump_put_folder(dump_run *r, const char *rel, char *err, size_t errlen);
int dump_put_npy(dump_run *r, const char *rel, const float *data, const int *shape, int ndim,
                 char *err, size_t errlen);
int dump_put_text(dump_run *r, const char *rel, const char *text, size_t len, char *err,
                  size_t errlen);

/* What dump_write / dump_write_files would refuse before writing, found without
 * writing anything: a name of no folder of its own, too long a name, an existing
 * folder that is not empty nor an earlier dump, a file where a folder must be, or
 * a place it may not write. For a run that computes for long before it writes.
 * Returns 0, or -1 with the same message the writing would give. */
int dump_check(const char *dir, char *err, size_t errlen);

/* mkdir -p; fails with a message when a component exists and is not a folder. */
int dump_mkdirs(const char *dir, char *err, size_t errlen);

#endif
