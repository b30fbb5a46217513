/* atomic_file.h: write a file under a temporary name in the target folder and
 * rename it into place only when complete, so no half-written file is ever seen. */
#ifndef MHAVIZ_ATOMIC_FILE_H
#define MHAVIZ_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *fp;
    char path[4096];
    char tmp[4096];
} atomic_file;

/* Opens PATH.tmp-XXXXXX for writing. Returns 0, or -1 with
 * "cannot write PATH: reason" in err and nothing created. */
int atomic_open(atomic_file *af, const char *path, char *err, size_t errlen);

/* Flushes, closes and renames into place; on any error removes the temporary
 * file and returns -1 with "cannot write PATH: reason". */
int atomic_commit(atomic_file *af, char *err, size_t errlen);

/* Closes and removes the temporary file (after a failure elsewhere). */
void atomic_abort(atomic_file *af);

/* Creates the temporary name for path (for writers such as cairo or SDL that
 * open files themselves): fills tmp, creating an empty file with mkstemp.
 * Returns 0, or -1 with a message. */
int atomic_tmpname(char *tmp, size_t tmplen, const char *path, char *err, size_t errlen);

/* Renames tmp over path; on failure removes tmp. Returns 0 or -1 with a message. */
int atomic_rename(const char *tmp, const char *path, char *err, size_t errlen);

#endif
