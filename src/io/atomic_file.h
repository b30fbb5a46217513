/* atomic_file.h: write a file under a temporary name in the target folder and
 * rename it into place only when every byte is on disk, so no half-written file
 * is ever seen. Every write, the flush, the fsync, the close and the rename are
 * checked; the temporary name is registered for removal on SIGINT/SIGTERM. */
#ifndef MHAVIZ_ATOMIC_FILE_H
#define MHAVIZ_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *fp;
    int err;     /* errno of the first failed write; 0 while all went well */
    int handle;  /* cleanup.h handle of tmp */
    int created; /* tmp exists and is ours */
    char path[4096];
    char tmp[4096 + 16];
} atomic_file;

/* Creates PATH.tmp-XXXXXX (mode 0666 & ~umask) for writing. Returns 0, or -1
 * with "cannot write PATH: reason" in err and nothing created. */
int atomic_open(atomic_file *af, const char *path, char *err, size_t errlen);

/* Writes len bytes. After a failure later writes do nothing and atomic_commit
 * fails with the first reason. Returns 0, or -1. */
int atomic_write(atomic_file *af, const void *buf, size_t len);

/* printf into the file, checked as atomic_write. */
int atomic_printf(atomic_file *af, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records a failure found by a writer that uses af->fp itself (errno value). */
void atomic_fail(atomic_file *af, int errnum);

/* Flushes, fsyncs, closes and renames into place; on any error removes the
 * temporary file and returns -1 with "cannot write PATH: reason". */
int atomic_commit(atomic_file *af, char *err, size_t errlen);

/* Closes and removes the temporary file (after a failure elsewhere). */
void atomic_abort(atomic_file *af);

/* mkdtemp with the usual mode: replaces the trailing XXXXXX of tmpl with a name
 * nothing has and makes that folder with mkdir(0777), so the kernel gives it
 * 0777 & ~umask like any new folder (mkdtemp's is 0700, and reading the umask
 * means flipping it for the whole process). Returns 0, or -1 with errno. Not
 * registered with cleanup.h: the caller does that. */
int atomic_mkdtemp(char *tmpl);

#endif
