/* lesson_file.c: the lesson format (lesson_file.h): reading with every error
 * as FILE:LINE: what, the view of each step (the defaults with steps 1..k
 * applied), and the diff-friendly writer recordings use. */
#define _POSIX_C_SOURCE 200809L
#include "lesson_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static void step_free(lesson_step *st) {
    free(st->heading);
    free(st->text);
    app_settings_free(st->set);
    app_settings_free(st->view);
    memset(st, 0, sizeof *st);
}

void lesson_free(lesson *L) {
    if (!L) return;
    for (int i = 0; i < L->count; i++) step_free(&L->steps[i]);
    free(L->steps);
    free(L->title);
    memset(L, 0, sizeof *L);
}

static lesson_step *new_step(lesson *L) {
    if (L->count == L->cap) {
        int cap = L->cap ? L->cap * 2 : 16;
        lesson_step *p = realloc(L->steps, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        L->steps = p;
        L->cap = cap;
    }
    lesson_step *st = &L->steps[L->count];
    memset(st, 0, sizeof *st);
    st->set = app_settings_create();
    st->view = app_settings_create();
    st->heading = dup_str("");
    st->text = dup_str("");
    if (!st->set || !st->view || !st->heading || !st->text) {
        step_free(st);
        return NULL;
    }
    L->count++;
    return st;
}

/* A step's caption while it is read: its length and the bytes allocated, so
   a line is appended in time proportional to the line (the block doubles when
   full), and the lesson's copied_ counts every byte written or moved. */
typedef struct {
    size_t len, cap;
} caption_buf;

/* Appends "\n" (when the text is not empty) and line to *text. 0, or -1 out of
   memory. */
static int add_line(lesson *L, char **text, caption_buf *cb, const char *line) {
    const size_t b = strlen(line), need = cb->len + b + 2;
    if (need > cb->cap) {
        size_t cap = cb->cap ? cb->cap : 64;
        while (cap < need) cap *= 2;
        char *p = realloc(*text, cap);
        if (!p) return -1;
        *text = p;
        cb->cap = cap;
        L->copied_ += cb->len; /* realloc may have moved what was there */
    }
    char *t = *text;
    if (cb->len) t[cb->len++] = '\n';
    memcpy(t + cb->len, line, b + 1);
    cb->len += b;
    L->copied_ += b + 1;
    return 0;
}

int lesson_markup_check(const char *markup, char *err, size_t errlen) {
    return view_markup_check(markup, err, errlen);
}

/* The integer value of "name = N" among the "name = value" lines of dump, or
   fallback when it is not there or not a number. */
static long dump_int(const char *dump, const char *name, long fallback) {
    size_t n = strlen(name);
    for (const char *p = dump; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, n) == 0 && strncmp(p + n, " = ", 3) == 0) {
            char *end;
            long v = strtol(p + n + 3, &end, 10);
            return end != p + n + 3 ? v : fallback;
        }
    }
    return fallback;
}

/* The value text of "name = ..." in dump (up to the line's end) into out; 0 if
   there, -1 if not. */
static int dump_str(const char *dump, const char *name, char *out, size_t len) {
    size_t n = strlen(name);
    for (const char *p = dump; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, n) == 0 && strncmp(p + n, " = ", 3) == 0) {
            const char *v = p + n + 3;
            size_t l = strcspn(v, "\n");
            snprintf(out, len, "%.*s", (int)l, v);
            return 0;
        }
    }
    return -1;
}

/* Every setting of view as text (malloc'd), or NULL out of memory. */
static char *view_text(const app_settings *view) {
    size_t need = app_settings_write(view, NULL, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf) return NULL;
    app_settings_write(view, NULL, buf, need + 1);
    buf[need] = '\0';
    return buf;
}

/* The heads a step's view names must be among its h: focus, ablate. Returns 0,
   or -1 with what is wrong. */
static int check_heads(const lesson_step *st, char *why, size_t len) {
    char *dump = view_text(st->view);
    if (!dump) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    int rc = 0;
    const long h = dump_int(dump, "h", 4);
    const long focus = dump_int(dump, "focus", 0);
    char abl[256];
    if (focus > h) {
        snprintf(why, len, "focus = %ld: there is no head %ld in this step's view (h = %ld)", focus,
                 focus, h);
        rc = -1;
    } else if (dump_str(dump, "ablate", abl, sizeof abl) == 0 && strcmp(abl, "none") != 0) {
        for (char *p = abl; *p && !rc;) {
            char *end;
            long k = strtol(p, &end, 10);
            if (end == p) break;
            if (k > h) {
                snprintf(why, len,
                         "ablate = %s: there is no head %ld in this step's view (h = %ld)", abl, k,
                         h);
                rc = -1;
            }
            p = *end == ',' ? end + 1 : end;
        }
    }
    char model[16] = "off";
    dump_str(dump, "model", model, sizeof model);
    for (int i = 0; i < st->nacts && !rc; i++)
        if (st->acts[i].kind == LESSON_DO_STAGES && focus <= 0) {
            snprintf(why, len,
                     "do = stages: no head is focused in this step's view (set focus = K)");
            rc = -1;
        } else if (st->acts[i].kind == LESSON_DO_WRITE && strcmp(model, "off") == 0) {
            snprintf(why, len, "do = write: no model in this step's view (set model = PATH)");
            rc = -1;
        }
    free(dump);
    return rc;
}

/* Parses the value of a `do =` line into *d. 0, or -1 with why. */
static int parse_do(const char *v, lesson_do *d, char *why, size_t len) {
    memset(d, 0, sizeof *d);
    char *end;
    if (strncmp(v, "train ", 6) == 0) {
        errno = 0;
        long n = strtol(v + 6, &end, 10);
        if (end == v + 6 || *end || errno || n < 1 || n > LESSON_TRAIN_MAX) {
            snprintf(why, len, "do = train N: N must be a whole number 1..%d, not '%s'",
                     LESSON_TRAIN_MAX, v + 6);
            return -1;
        }
        d->kind = LESSON_DO_TRAIN;
        d->n = n;
        return 0;
    }
    if (strncmp(v, "stages ", 7) == 0) {
        double s = strtod(v + 7, &end);
        if (end == v + 7 || *end || !(s >= LESSON_STAGE_MIN_S && s <= LESSON_STAGE_MAX_S)) {
            snprintf(why, len, "do = stages S: S must be seconds, %g..%g, not '%s'",
                     LESSON_STAGE_MIN_S, LESSON_STAGE_MAX_S, v + 7);
            return -1;
        }
        d->kind = LESSON_DO_STAGES;
        d->seconds = s;
        return 0;
    }
    if (strncmp(v, "compare ", 8) == 0) {
        app_settings *tmp = app_settings_create();
        char e[256] = "";
        int rc = tmp ? app_settings_set(tmp, "compare", v + 8, ".", e, sizeof e) : -1;
        app_settings_free(tmp);
        if (rc != 0 || strlen(v + 8) >= sizeof d->spec) {
            snprintf(why, len, "do = compare SPEC: %s", e[0] ? e : "bad SPEC");
            return -1;
        }
        d->kind = LESSON_DO_COMPARE;
        snprintf(d->spec, sizeof d->spec, "%s", v + 8);
        return 0;
    }
    if (strcmp(v, "sweep h") == 0) {
        d->kind = LESSON_DO_SWEEP_H;
        return 0;
    }
    if (strncmp(v, "write ", 6) == 0) {
        errno = 0;
        long n = strtol(v + 6, &end, 10);
        if (end == v + 6 || *end || errno || n < 1 || n > APP_WRITE_LENGTH_MAX) {
            snprintf(why, len, "do = write N: N must be a whole number 1..%d, not '%s'",
                     APP_WRITE_LENGTH_MAX, v + 6);
            return -1;
        }
        d->kind = LESSON_DO_WRITE;
        d->n = n;
        return 0;
    }
    snprintf(why, len,
             "do = '%s': unknown action (train N, stages S, compare SPEC, sweep h or write N)", v);
    return -1;
}

/* Trims spaces and tabs at both ends, in place. */
static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
    return s;
}

/* Ends step st (line: its `step =` line): it must hold something, and its
   view is the one before with its settings applied. */
static int finish_step(lesson *L, const char *file, char *err, size_t errlen) {
    lesson_step *st = &L->steps[L->count - 1];
    if (!app_settings_count(st->set) && !st->text[0] && !st->nacts) {
        snprintf(err, errlen,
                 "%s:%d: an empty step: it changes no setting, has no caption line (| ...) and "
                 "no do =",
                 file, st->line);
        return 2;
    }
    char why[400];
    if (check_heads(st, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s:%d: %s", file, st->line, why);
        return 2;
    }
    return 0;
}

/* The reader's place in a lesson file: what the line handlers below share. */
typedef struct {
    lesson *L;
    const char *file, *base_dir;
    int line, title_line;
    caption_buf cb;         /* the last step's caption; cb.cap 0: as new_step made it */
    app_settings *defaults; /* the view before the first step */
    char *err;
    size_t errlen;
} lesson_reader;

static int read_line(lesson_reader *r, char *l);

int lesson_parse(const char *text, size_t len, const char *file, const char *base_dir, lesson *L,
                 char *err, size_t errlen) {
    memset(L, 0, sizeof *L);
    lesson_reader r = {.L = L, .file = file, .base_dir = base_dir, .err = err, .errlen = errlen};
    r.defaults = app_settings_create();
    char *buf = malloc(len + 1);
    if (!r.defaults || !buf) {
        snprintf(err, errlen, "%s:1: out of memory", file);
        goto fail;
    }
    app_settings_defaults(r.defaults);
    memcpy(buf, text, len);
    buf[len] = '\0';
    for (char *p = buf; p && (size_t)(p - buf) < len;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        r.line++;
        char *raw = p;
        p = nl ? nl + 1 : NULL;
        size_t rl = strlen(raw);
        if (rl && raw[rl - 1] == '\r') raw[--rl] = '\0';
        char *l = raw;
        while (*l == ' ' || *l == '\t') l++;
        if (*l && *l != '#' && read_line(&r, l) != 0) goto fail;
    }
    if (!L->count) {
        snprintf(err, errlen, "%s:%d: no step: a lesson needs at least one (step = HEADING)", file,
                 r.line > 0 ? r.line : 1);
        goto fail;
    }
    if (finish_step(L, file, err, errlen) != 0) goto fail;
    if (!L->title) {
        const char *base = strrchr(file, '/');
        L->title = dup_str(base ? base + 1 : file);
    }
    if (!L->title) {
        snprintf(err, errlen, "%s:1: out of memory", file);
        goto fail;
    }
    free(buf);
    app_settings_free(r.defaults);
    return 0;
fail:
    free(buf);
    app_settings_free(r.defaults);
    lesson_free(L);
    return 2;
}

static int read_caption(lesson_reader *r, lesson_step *cur, const char *l);
static int read_title(lesson_reader *r, const lesson_step *cur, const char *value);
static int read_step(lesson_reader *r, lesson_step *cur, const char *value);
static int read_do(lesson_reader *r, lesson_step *cur, const char *value);
static int read_setting(lesson_reader *r, lesson_step *cur, const char *name, const char *value);

/* One line that is not blank or a comment, its leading blanks skipped: a caption
   line, the title, a step's start, a do = line or a setting. 0, or -1 with err. */
static int read_line(lesson_reader *r, char *l) {
    lesson *L = r->L;
    lesson_step *cur = L->count ? &L->steps[L->count - 1] : NULL;
    if (*l == '|') return read_caption(r, cur, l);
    char *eq = strchr(l, '=');
    if (!eq) {
        snprintf(r->err, r->errlen,
                 "%s:%d: '%.60s': not a setting (name = value), a caption line "
                 "(| ...) or a comment (# ...)",
                 r->file, r->line, l);
        return -1;
    }
    *eq = '\0';
    char *name = trim(l), *value = trim(eq + 1);
    if (strcmp(name, "title") == 0) return read_title(r, cur, value);
    if (strcmp(name, "step") == 0) return read_step(r, cur, value);
    if (!cur) {
        snprintf(r->err, r->errlen,
                 "%s:%d: '%s' before the first step: start one with step = HEADING", r->file,
                 r->line, name);
        return -1;
    }
    if (strcmp(name, "do") == 0) return read_do(r, cur, value);
    return read_setting(r, cur, name, value);
}

/* A caption line: one space after the bar is not kept. */
static int read_caption(lesson_reader *r, lesson_step *cur, const char *l) {
    if (!cur) {
        snprintf(r->err, r->errlen, "%s:%d: a caption line before the first step (step = ...)",
                 r->file, r->line);
        return -1;
    }
    const char *c = l + 1;
    if (*c == ' ') c++;
    char why[256];
    if (lesson_markup_check(c, why, sizeof why) != 0) {
        snprintf(r->err, r->errlen, "%s:%d: caption: %s", r->file, r->line, why);
        return -1;
    }
    if (add_line(r->L, &cur->text, &r->cb, c) != 0) {
        snprintf(r->err, r->errlen, "%s:%d: out of memory", r->file, r->line);
        return -1;
    }
    return 0;
}

static int read_title(lesson_reader *r, const lesson_step *cur, const char *value) {
    if (r->L->title) {
        snprintf(r->err, r->errlen, "%s:%d: title given twice (first on line %d)", r->file, r->line,
                 r->title_line);
        return -1;
    }
    if (cur) {
        snprintf(r->err, r->errlen, "%s:%d: the title goes before the first step", r->file,
                 r->line);
        return -1;
    }
    r->L->title = dup_str(value);
    r->title_line = r->line;
    return 0;
}

/* step = HEADING: the step before ends; the new one's view starts as its. */
static int read_step(lesson_reader *r, lesson_step *cur, const char *value) {
    lesson *L = r->L;
    if (cur && finish_step(L, r->file, r->err, r->errlen) != 0) return -1;
    if (L->count >= LESSON_MAX_STEPS) {
        snprintf(r->err, r->errlen, "%s:%d: more than %d steps", r->file, r->line,
                 LESSON_MAX_STEPS);
        return -1;
    }
    char why[256];
    if (lesson_markup_check(value, why, sizeof why) != 0) {
        snprintf(r->err, r->errlen, "%s:%d: heading: %s", r->file, r->line, why);
        return -1;
    }
    lesson_step *st = new_step(L);
    r->cb = (caption_buf){0};
    if (!st) {
        snprintf(r->err, r->errlen, "%s:%d: out of memory", r->file, r->line);
        return -1;
    }
    free(st->heading);
    st->heading = dup_str(value);
    st->line = r->line;
    app_settings_merge(st->view, L->count > 1 ? L->steps[L->count - 2].view : r->defaults);
    return 0;
}

static int read_do(lesson_reader *r, lesson_step *cur, const char *value) {
    char why[400];
    if (cur->nacts >= LESSON_MAX_DO) {
        snprintf(r->err, r->errlen, "%s:%d: more than %d do = lines in one step", r->file, r->line,
                 LESSON_MAX_DO);
        return -1;
    }
    if (parse_do(value, &cur->acts[cur->nacts], why, sizeof why) != 0) {
        snprintf(r->err, r->errlen, "%s:%d: %s", r->file, r->line, why);
        return -1;
    }
    cur->nacts++;
    return 0;
}

/* name = value: into the step's settings and its cumulative view, each naming
   this line for apply's errors. */
static int read_setting(lesson_reader *r, lesson_step *cur, const char *name, const char *value) {
    const char *file = r->file;
    const int line = r->line;
    if (app_settings_has(cur->set, name)) {
        snprintf(r->err, r->errlen, "%s:%d: %s given twice in this step", file, line, name);
        return -1;
    }
    char why[512] = "";
    if (app_settings_set(cur->set, name, value, r->base_dir, why, sizeof why) != 0) {
        snprintf(r->err, r->errlen, "%s:%d: %s", file, line, why[0] ? why : "bad setting");
        return -1;
    }
    app_settings *one = app_settings_create();
    if (!one || app_settings_set(one, name, value, r->base_dir, why, sizeof why) != 0) {
        app_settings_free(one);
        snprintf(r->err, r->errlen, "%s:%d: out of memory", file, line);
        return -1;
    }
    app_settings_merge(cur->view, one);
    app_settings_free(one);
    app_settings_origin(cur->set, file); /* apply's errors then name this line */
    app_settings_line(cur->set, name, line);
    app_settings_origin(cur->view, file);
    app_settings_line(cur->view, name, line);
    char hw[400];
    if (check_heads(cur, hw, sizeof hw) != 0 &&
        (strcmp(name, "focus") == 0 || strcmp(name, "ablate") == 0)) {
        snprintf(r->err, r->errlen, "%s:%d: %s", file, line, hw);
        return -1;
    }
    return 0;
}

/* The length of the UTF-8 sequence at p (n bytes left), 0 if it is not one. */
static int utf8_len(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    int k;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        k = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        k = 4, min = 0x10000;
    else
        return 0;
    if ((size_t)k > n) return 0;
    unsigned v = c & (0xFFu >> (k + 1));
    for (int i = 1; i < k; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    return k;
}

int lesson_read(const char *path, lesson *L, char *err, size_t errlen) {
    memset(L, 0, sizeof *L);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int e = errno; /* a path that names no file is a usage error, as a bad value */
        snprintf(err, errlen, "%s:1: cannot open: %s", path, strerror(e));
        return e == ENOENT || e == ENOTDIR ? 2 : 1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode) || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s:1: %s", path,
                 S_ISDIR(sb.st_mode) ? "is a folder, not a lesson file" : "not a regular file");
        close(fd);
        return 2;
    }
    if (sb.st_size > (off_t)LESSON_FILE_MAX) {
        snprintf(err, errlen, "%s:1: %lld bytes; a lesson file may hold at most 1 MiB (%u bytes)",
                 path, (long long)sb.st_size, LESSON_FILE_MAX);
        close(fd);
        return 2;
    }
    char *buf = malloc(LESSON_FILE_MAX + 1);
    size_t n = 0;
    if (!buf) {
        snprintf(err, errlen, "%s:1: out of memory", path);
        close(fd);
        return 1;
    }
    for (;;) {
        ssize_t r = read(fd, buf + n, LESSON_FILE_MAX + 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(err, errlen, "%s:1: cannot read: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return 1;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n > LESSON_FILE_MAX) {
            snprintf(err, errlen, "%s:1: more than 1 MiB; a lesson file may hold at most that",
                     path);
            free(buf);
            close(fd);
            return 2;
        }
    }
    close(fd);
    int line = 1;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n') line++;
        if (c == 0) {
            snprintf(err, errlen, "%s:%d: a NUL byte (byte %zu): not a text file", path, line,
                     i + 1);
            free(buf);
            return 2;
        }
        int k = utf8_len((const unsigned char *)buf + i, n - i);
        if (!k) {
            snprintf(err, errlen, "%s:%d: not UTF-8 (byte %zu is 0x%02X); save it as UTF-8", path,
                     line, i + 1, c);
            free(buf);
            return 2;
        }
        i += (size_t)k;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (slash && !dir[0]) snprintf(dir, sizeof dir, "/");
    size_t skip = n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* a byte order mark */
    int rc = lesson_parse(buf + skip, n - skip, path, dir, L, err, errlen);
    free(buf);
    return rc;
}

int lesson_changes(const lesson *L, const app_settings *view) {
    if (L->count) return app_settings_write(view, L->steps[L->count - 1].view, NULL, 0) > 0;
    app_settings *defaults = app_settings_create();
    if (!defaults) return 1; /* out of memory: the step is added, and its write says so */
    app_settings_defaults(defaults);
    const int changes = app_settings_write(view, defaults, NULL, 0) > 0;
    app_settings_free(defaults);
    return changes;
}

int lesson_append(lesson *L, const app_settings *view, const char *heading, const char *text) {
    app_settings *defaults = NULL;
    const app_settings *prev = NULL;
    if (L->count)
        prev = L->steps[L->count - 1].view;
    else {
        defaults = app_settings_create();
        if (!defaults) return -1;
        app_settings_defaults(defaults);
        prev = defaults;
    }
    lesson_step *st = new_step(L);
    if (!st) {
        app_settings_free(defaults);
        return -1;
    }
    app_settings_merge(st->view, view);
    /* its own settings: the lines that differ from the step before, set again */
    const int bare = app_settings_write(view, prev, NULL, 0) == 0 && !(text && text[0]);
    size_t need = app_settings_write(view, bare ? NULL : prev, NULL, 0);
    char *diff = malloc(need + 1);
    int rc = diff ? 0 : -1;
    if (diff) {
        app_settings_write(view, bare ? NULL : prev, diff, need + 1);
        diff[need] = '\0';
        if (bare) { /* only the heading: the first setting (the text) says it again */
            char *nl = strchr(diff, '\n');
            if (nl) nl[1] = '\0';
        }
        for (char *p = diff; p && *p && !rc;) {
            char *nl = strchr(p, '\n');
            if (nl) *nl = '\0';
            char *eq = strstr(p, " = ");
            if (eq) {
                *eq = '\0';
                char e[256];
                app_settings_set(st->set, p, eq + 3, ".", e, sizeof e); /* canonical: accepted */
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    free(diff);
    app_settings_free(defaults);
    if (rc == 0) rc = lesson_set_caption(L, L->count - 1, heading, text);
    return rc;
}

int lesson_set_caption(lesson *L, int k, const char *heading, const char *text) {
    if (k < 0 || k >= L->count) return -1;
    char *h = dup_str(heading ? heading : ""), *t = dup_str(text ? text : "");
    if (!h || !t) {
        free(h);
        free(t);
        return -1;
    }
    free(L->steps[k].heading);
    free(L->steps[k].text);
    L->steps[k].heading = h;
    L->steps[k].text = t;
    return 0;
}

/* snprintf into buf at *o, counting what would be needed past len. */
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int w_ =                                                                                   \
            snprintf(buf && o < len ? buf + o : NULL, buf && o < len ? len - o : 0, __VA_ARGS__);  \
        if (w_ > 0) o += (size_t)w_;                                                               \
    } while (0)

size_t lesson_format(const lesson *L, char *buf, size_t len) {
    size_t o = 0;
    if (buf && len) buf[0] = '\0';
    app_settings *defaults = app_settings_create();
    if (!defaults) return 0;
    app_settings_defaults(defaults);
    PUT("# mhaviz lesson 1\ntitle = %s\n", L->title ? L->title : "");
    for (int k = 0; k < L->count; k++) {
        const lesson_step *st = &L->steps[k];
        const app_settings *prev = k ? L->steps[k - 1].view : defaults;
        PUT("\nstep = %s\n", st->heading);
        /* a step that changes nothing and says nothing keeps the settings it was
           written with, so it reads back as a step (not as an empty one) */
        const int bare =
            !*st->text && st->nacts == 0 && app_settings_write(st->view, prev, NULL, 0) == 0;
        const app_settings *from = bare ? st->set : st->view, *base = bare ? NULL : prev;
        size_t need = app_settings_write(from, base, NULL, 0);
        char *d = malloc(need + 1);
        if (d) {
            app_settings_write(from, base, d, need + 1);
            d[need] = '\0';
            PUT("%s", d);
            free(d);
        }
        for (const char *t = st->text; *st->text;) { /* every line, an empty last one too */
            size_t l = strcspn(t, "\n");
            PUT("| %.*s\n", (int)l, t);
            t += l;
            if (*t != '\n') break;
            t++;
        }
        for (int i = 0; i < st->nacts; i++) {
            const lesson_do *a = &st->acts[i];
            switch (a->kind) {
            case LESSON_DO_TRAIN: PUT("do = train %ld\n", a->n); break;
            case LESSON_DO_STAGES: PUT("do = stages %g\n", a->seconds); break;
            case LESSON_DO_COMPARE: PUT("do = compare %s\n", a->spec); break;
            case LESSON_DO_SWEEP_H: PUT("do = sweep h\n"); break;
            case LESSON_DO_WRITE: PUT("do = write %ld\n", a->n); break;
            }
        }
    }
    app_settings_free(defaults);
    return o;
}

int lesson_write(const char *path, const lesson *L, char *err, size_t errlen) {
    size_t need = lesson_format(L, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    lesson_format(L, buf, need + 1);
    atomic_file af;
    if (atomic_open(&af, path, err, errlen) != 0) {
        free(buf);
        return -1;
    }
    atomic_write(&af, buf, need);
    free(buf);
    return atomic_commit(&af, err, errlen);
}
