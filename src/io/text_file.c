/* text_file.c: --text-file FILE: the whole file as the text, bounded and checked.
 * Opened without waiting (O_NONBLOCK: a FIFO with no writer does not hang the
 * open), then read blocking until its end or one byte past the bound. The
 * window's reader takes regular files only, refused by type before any read. */
#define _GNU_SOURCE
#include "text_file.h"

#include "tok.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *text_file_name(const char *path) {
    return strcmp(path, "-") == 0 ? "standard input" : path;
}

/* The length of the UTF-8 sequence at p (n bytes left), or 0 when it is not one:
 * a stray continuation byte, a sequence cut short, an overlong form, a surrogate
 * or a code point past U+10FFFF. */
static size_t utf8_len(const unsigned char *p, size_t n) {
    const unsigned c = p[0];
    size_t len;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Checks buf (len bytes, then a NUL) is text, not blank by the tokenizer's rule
   (tok_blank: the window and the view files use the same). Returns 0, or 2 with err. */
static int check_text(const char *name, const unsigned char *buf, size_t len, char *err,
                      size_t errlen) {
    for (size_t i = 0; i < len;) {
        const unsigned char c = buf[i];
        if (c == 0) {
            snprintf(err, errlen, "%s: a NUL byte at byte %zu: not a text file", name, i + 1);
            return 2;
        }
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') ||
            c == 0x7F) {
            snprintf(err, errlen, "%s: control character 0x%02X at byte %zu: not a text file", name,
                     c, i + 1);
            return 2;
        }
        const size_t l = utf8_len(buf + i, len - i);
        if (!l) {
            snprintf(err, errlen, "%s: not UTF-8 (byte %zu is 0x%02X); save it as UTF-8", name,
                     i + 1, c);
            return 2;
        }
        i += l;
    }
    if (len == 0) {
        snprintf(err, errlen, "%s: empty; the text needs at least one word", name);
        return 2;
    }
    if (tok_blank((const char *)buf)) { /* buf[len] is a NUL (the caller's) */
        snprintf(err, errlen, "%s: only white space; the text needs at least one word", name);
        return 2;
    }
    return 0;
}

static int read_text(const char *path, int regular_only, char **out, char *err, size_t errlen);
static const char *kind_of(mode_t mode);

int text_file_read(const char *path, char **out, char *err, size_t errlen) {
    return read_text(path, 0, out, err, errlen);
}

int text_file_read_regular(const char *path, char **out, char *err, size_t errlen) {
    return read_text(path, 1, out, err, errlen);
}

/* What a file that is not a regular one is, for messages. */
static const char *kind_of(mode_t mode) {
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a file";
}

static int read_text(const char *path, int regular_only, char **out, char *err, size_t errlen) {
    const char *name = text_file_name(path);
    const int is_stdin = strcmp(path, "-") == 0;
    const int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", name, strerror(errno));
        return 1;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", name, strerror(errno));
        rc = 1;
    } else if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a folder, not a text file", name);
        rc = 1;
    } else if (regular_only && !S_ISREG(st.st_mode)) { /* its read could wait for ever */
        snprintf(err, errlen, "%s: not a regular file (%s)", name, kind_of(st.st_mode));
        rc = 1;
    } else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a file to read (a socket or a block device)", name);
        rc = 1;
    } else if (S_ISREG(st.st_mode) && st.st_size > (off_t)TEXT_FILE_MAX) {
        snprintf(err, errlen, "%s: %lld bytes; a text file may hold at most 1 MiB (%u bytes)", name,
                 (long long)st.st_size, TEXT_FILE_MAX);
        rc = 2;
    }
    /* now reads wait for data: a FIFO with a writer is read to its end */
    if (rc == 0 && !is_stdin) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    char *buf = rc == 0 ? malloc(TEXT_FILE_MAX + 1) : NULL;
    if (rc == 0 && !buf) {
        snprintf(err, errlen, "%s: out of memory", name);
        rc = 1;
    }
    size_t len = 0;
    while (rc == 0) {
        const ssize_t r = read(fd, buf + len, TEXT_FILE_MAX + 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) { /* standard input left non-blocking by its giver */
            snprintf(err, errlen, "%s: cannot read: no data ready (non-blocking)", name);
            rc = 1;
        } else if (r < 0) {
            snprintf(err, errlen, "%s: cannot read: %s", name, strerror(errno));
            rc = 1;
        } else if (r == 0) {
            break;
        } else if ((len += (size_t)r) > TEXT_FILE_MAX) {
            snprintf(err, errlen,
                     "%s: more than 1 MiB (%u bytes); a text file may hold at most that", name,
                     TEXT_FILE_MAX);
            rc = 2;
        }
    }
    if (!is_stdin) close(fd);
    if (rc == 0) {
        buf[len] = '\0';
        size_t skip = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* a BOM */
        rc = check_text(name, (const unsigned char *)buf + skip, len - skip, err, errlen);
        if (rc == 0) {
            memmove(buf, buf + skip, len - skip);
            buf[len - skip] = '\0';
            *out = buf;
            return 0;
        }
    }
    free(buf);
    return rc;
}
