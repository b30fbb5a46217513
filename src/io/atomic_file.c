/* atomic_file.c: temporary-name-then-rename file writing (see atomic_file.h). The
 * temporary file is made in the target's folder (so the rename never crosses a
 * filesystem) under a new name, like mkstemp, but with open(O_CREAT | O_EXCL, 0666):
 * the kernel then gives it 0666 & ~umask as for any other new file, so the umask
 * is never read by flipping it (process-wide, and racy with other threads). It is
 * registered with cleanup.h while it exists. atomic_mkdtemp makes a temporary
 * folder the same way (mkdir 0777), for --dump. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

/* Replaces the trailing XXXXXX of tmpl with a name nothing has and creates it:
   a folder (mkdir, 0777 & ~umask) when folder, else a file (0666 & ~umask) opened
   for writing. Returns the descriptor (0 for a folder), or -1 with errno. */
static int make_unique(char *tmpl, int folder) {
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static _Atomic uint64_t counter = 0;
    char *x = tmpl + strlen(tmpl) - 6;
    for (int attempt = 0; attempt < 1000; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t v = ((uint64_t)ts.tv_nsec << 16) ^ ((uint64_t)getpid() << 40) ^
                     (atomic_fetch_add(&counter, 1) * UINT64_C(0x9E3779B97F4A7C15));
        for (int i = 0; i < 6; i++, v /= 62) x[i] = chars[v % 62];
        int fd =
            folder ? mkdir(tmpl, 0777) : open(tmpl, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

int atomic_mkdtemp(char *tmpl) {
    return make_unique(tmpl, 1) == 0 ? 0 : -1;
}

int atomic_open(atomic_file *af, const char *path, char *err, size_t errlen) {
    memset(af, 0, sizeof *af);
    af->handle = CLEANUP_NONE;
    if (strlen(path) >= sizeof af->path ||
        (size_t)snprintf(af->tmp, sizeof af->tmp, "%s.tmp-XXXXXX", path) >= sizeof af->tmp) {
        snprintf(err, errlen, "cannot write %s: path too long", path);
        return -1;
    }
    strcpy(af->path, path);
    /* create and register as one step: a signal between them would leave the file */
    cleanup_hold();
    int fd = make_unique(af->tmp, 0);
    int saved = errno;
    if (fd >= 0) {
        af->created = 1;
        af->handle = cleanup_add(af->tmp, 0);
    }
    cleanup_release();
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved));
        return -1;
    }
    if (!(af->fp = fdopen(fd, "wb"))) {
        saved = errno;
        close(fd);
        atomic_abort(af);
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved));
        return -1;
    }
    return 0;
}

void atomic_fail(atomic_file *af, int errnum) {
    if (!af->err) af->err = errnum ? errnum : EIO;
}

int atomic_write(atomic_file *af, const void *buf, size_t len) {
    if (af->err) return -1;
    if (len && fwrite(buf, 1, len, af->fp) != len) {
        atomic_fail(af, errno);
        return -1;
    }
    return 0;
}

int atomic_printf(atomic_file *af, const char *fmt, ...) {
    if (af->err) return -1;
    va_list ap;
    va_start(ap, fmt);
    int rc = vfprintf(af->fp, fmt, ap);
    va_end(ap);
    if (rc < 0) {
        atomic_fail(af, errno);
        return -1;
    }
    return 0;
}

int atomic_commit(atomic_file *af, char *err, size_t errlen) {
    /* the data must be on disk before the name points at it: a full disk or a
       quota often shows only at the flush, the fsync or the close */
    if (!af->err && fflush(af->fp) != 0) atomic_fail(af, errno);
    if (!af->err && ferror(af->fp)) atomic_fail(af, EIO);
    if (!af->err && fsync(fileno(af->fp)) != 0 && errno != EINVAL && errno != EROFS)
        atomic_fail(af, errno); /* EINVAL, EROFS: a file that cannot be synced (a pipe) */
    if (fclose(af->fp) != 0) atomic_fail(af, errno);
    af->fp = NULL;
    if (af->err) {
        snprintf(err, errlen, "cannot write %s: %s", af->path, strerror(af->err));
        atomic_abort(af);
        return -1;
    }
    cleanup_hold(); /* rename and forget as one step */
    int rc = rename(af->tmp, af->path);
    int saved = errno;
    if (rc == 0) {
        cleanup_forget(af->handle);
        af->handle = CLEANUP_NONE;
        af->created = 0;
    }
    cleanup_release();
    if (rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", af->path, strerror(saved));
        atomic_abort(af);
        return -1;
    }
    return 0;
}

void atomic_abort(atomic_file *af) {
    if (af->fp) fclose(af->fp);
    af->fp = NULL;
    cleanup_hold();
    if (af->created) unlink(af->tmp);
    af->created = 0;
    cleanup_forget(af->handle);
    af->handle = CLEANUP_NONE;
    cleanup_release();
}
