/* dump.h: --dump DIR, every tensor of a computed model as .npy plus tokens.txt and
 * meta.json. Knows the file names; the numbers come from the core. */
#ifndef MHAVIZ_DUMP_H
#define MHAVIZ_DUMP_H

#include <stddef.h>

#include "mha.h"

/* Creates dir (and missing parents) and writes the files listed in the README.
 * m must have been computed for toks. Each file is written under a temporary
 * name and renamed. Returns 0, or -1 with a one-line message in err. */
int dump_write(const char *dir, const mha_model *m, const tok_list *toks, char *err, size_t errlen);

/* mkdir -p; fails with a message when a component exists and is not a folder. */
int dump_mkdirs(const char *dir, char *err, size_t errlen);

#endif
