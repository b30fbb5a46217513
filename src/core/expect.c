/* expect.c: what a broken invariant (MHA_EXPECT, expect.h) does: one line on
 * stderr, then abort. Runtime failures are returned as a status instead. */
#include "expect.h"

#include <stdio.h>
#include <stdlib.h>

void mha_fatal(const char *file, int line, const char *what) {
    fprintf(stderr, "mhaviz: internal error at %s:%d: %s\n", file, line, what);
    abort();
}
