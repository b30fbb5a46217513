/* atomic_file.c: temporary-name-then-rename file writing (see atomic_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int atomic_tmpname(char *tmp, size_t tmplen, const char *path, char *err, size_t errlen) {
    if ((size_t)snprintf(tmp, tmplen, "%s.tmp-XXXXXX", path) >= tmplen) {
        snprintf(err, errlen, "cannot write %s: path too long", path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    /* mkstemp makes 0600; give the final file the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    return 0;
}

int atomic_rename(const char *tmp, const char *path, char *err, size_t errlen) {
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int atomic_open(atomic_file *af, const char *path, char *err, size_t errlen) {
    memset(af, 0, sizeof *af);
    if (strlen(path) >= sizeof af->path) {
        snprintf(err, errlen, "cannot write %s: path too long", path);
        return -1;
    }
    strcpy(af->path, path);
    if (atomic_tmpname(af->tmp, sizeof af->tmp, path, err, errlen) != 0) return -1;
    af->fp = fopen(af->tmp, "wb");
    if (!af->fp) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(af->tmp);
        return -1;
    }
    return 0;
}

int atomic_commit(atomic_file *af, char *err, size_t errlen) {
    int bad = ferror(af->fp);
    int saved = errno;
    if (fclose(af->fp) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    af->fp = NULL;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", af->path, strerror(saved ? saved : EIO));
        unlink(af->tmp);
        return -1;
    }
    return atomic_rename(af->tmp, af->path, err, errlen);
}

void atomic_abort(atomic_file *af) {
    if (af->fp) fclose(af->fp);
    af->fp = NULL;
    unlink(af->tmp);
}
