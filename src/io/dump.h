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

/* mkdir -p; fails with a message when a component exists and is not a folder. */
int dump_mkdirs(const char *dir, char *err, size_t errlen);

#endif
