/* view_file.c: a view file (".view", the README's "View files") read and
 * written whole: read with the --text-file reader's bound and checks (1 MiB,
 * no NUL or binary, UTF-8, a regular file), parsed line by line into settings
 * (settings.c's rows); written atomically. The window's Ctrl+Shift+V saves the view
 * shown, and a view file dropped on the window (or named by --state) opens. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "settings_internal.h"
#include "state_internal.h"
#include "text_file.h"

#define VIEW_FILE_HEAD "# mhaviz view 1\n"

int app_view_file_read(const char *path, app_settings *st, char *err, size_t errlen) {
    char *text = NULL;
    /* "FILE: reason", 1 or 2; a regular file only (the window opens these), but
       standard input for --state - */
    int rc = strcmp(path, "-") == 0 ? text_file_read(path, &text, err, errlen)
                                    : text_file_read_regular(path, &text, err, errlen);
    if (rc == 1 && strcmp(path, "-") != 0) { /* no such file, or a folder: a usage error */
        struct stat sb;
        const int gone = stat(path, &sb) != 0 && (errno == ENOENT || errno == ENOTDIR);
        if (gone || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))) rc = 2;
    }
    if (rc != 0) return rc;
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", strcmp(path, "-") == 0 ? "." : path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    rc = app_view_file_parse(text, strlen(text), text_file_name(path), dir, st, err, errlen);
    free(text);
    return rc;
}

int app_view_file_write(const char *path, const app_settings *st, char *err, size_t errlen) {
    const size_t need = app_settings_write(st, NULL, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    app_settings_write(st, NULL, buf, need + 1);
    atomic_file af;
    if (atomic_open(&af, path, err, errlen) != 0) {
        free(buf);
        return -1;
    }
    atomic_write(&af, VIEW_FILE_HEAD, strlen(VIEW_FILE_HEAD));
    atomic_write(&af, buf, need);
    free(buf);
    return atomic_commit(&af, err, errlen);
}

/* The name of a saved view: FOLDER/mhaviz-h4-d64-YYYYmmdd-HHMMSS.view ("-2", "-3" ...
   for a second save within the second). 0, or -1 with err. */
static int save_name(char *out, size_t len, const char *dir, int h, int d, char *err,
                     size_t errlen) {
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const char *base = dir ? dir : ".";
    char cwd[2048];
    if (base[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(out, len, "%s/%s/mhaviz-h%d-d%d-%s.view", cwd, base, h, d, stamp);
    else
        snprintf(out, len, "%s/mhaviz-h%d-d%d-%s.view", base, h, d, stamp);
    char *p;
    while ((p = strstr(out, "/./")) != NULL) memmove(p, p + 2, strlen(p + 2) + 1);
    struct stat sb;
    if (stat(base, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot write %s: folder %s does not exist", out, base);
        return -1;
    }
    const size_t stem = strlen(out) - strlen(".view");
    for (int k = 2; stat(out, &sb) == 0 && k < 1000; k++) {
        char tail[32];
        snprintf(tail, sizeof tail, "-%d.view", k);
        if (stem + strlen(tail) + 1 > len) break;
        memcpy(out + stem, tail, strlen(tail) + 1);
    }
    return 0;
}

/* err on the status line: a long one loses the start of its path, never its reason. */
static void say_error(app_state *s, const char *err) {
    app_notify(s, "", 1);
    app_gpt_say(s, err);
}

int app_view_file_save(app_state *s, char *path, size_t pathlen) {
    char err[APP_MSG_LEN / 2];
    app_settings *st = app_settings_create();
    if (!st) {
        app_notify(s, "cannot save the view: out of memory", 1);
        return -1;
    }
    app_settings_capture(s, st);
    int rc = save_name(path, pathlen, s->export_dir, s->cfg.h, s->cfg.d_model, err, sizeof err);
    if (rc == 0) rc = app_view_file_write(path, st, err, sizeof err);
    app_settings_free(st);
    if (rc != 0) {
        say_error(s, err);
        return -1;
    }
    char msg[APP_MSG_LEN];
    snprintf(msg, sizeof msg, "saved the view as %.4300s (--state opens it)", path);
    app_notify(s, msg, 0);
    return 0;
}

int app_view_file_open(app_state *s, const char *path) {
    char err[APP_MSG_LEN / 2];
    app_settings *st = app_settings_create();
    if (!st) {
        app_notify(s, "cannot open the view: out of memory", 1);
        return -1;
    }
    int rc = app_view_file_read(path, st, err, sizeof err);
    if (rc == 0 && app_settings_apply(s, st, err, sizeof err) != 0) rc = 2;
    app_settings_free(st);
    if (rc != 0) {
        say_error(s, err);
        return -1;
    }
    char msg[APP_MSG_LEN];
    snprintf(msg, sizeof msg, "opened the view %.4300s", path);
    app_notify(s, msg, 0);
    return 0;
}

/* ---- a view file's text ------------------------------------------------------------------ */

static void trim(char **b, char **e) {
    while (*b < *e && (**b == ' ' || **b == '\t')) (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) (*e)--;
}

/* One "name = value" line (b, its end at e) into got; 0, or 2 with err. */
static int parse_line(char *b, char *e, int lineno, const char *file, const char *base_dir,
                      app_settings *got, char *err, size_t errlen) {
    *e = '\0';
    char *eq = strchr(b, '=');
    if (!eq) {
        snprintf(err, errlen, "%s:%d: '%.60s' is not 'name = value'", file, lineno, b);
        return 2;
    }
    char *ne = eq, *vb = eq + 1, *ve = e, *nb = b;
    trim(&nb, &ne);
    trim(&vb, &ve);
    *ne = '\0';
    *ve = '\0';
    const int id = stg_find(nb);
    if (id >= 0 && got->set[id]) {
        if (id == ST_PIN_TEXT)
            snprintf(err, errlen,
                     "%s:%d: %s: the pinned text is set already on line %d (one of "
                     "pinned-sample, pinned-text)",
                     file, lineno, nb, got->line[id]);
        else if (id == ST_TEXT)
            snprintf(err, errlen,
                     "%s:%d: %s: the text is set already on line %d (one of sample, text, "
                     "text-file)",
                     file, lineno, nb, got->line[id]);
        else
            snprintf(err, errlen, "%s:%d: %s is given twice (first on line %d)", file, lineno, nb,
                     got->line[id]);
        return 2;
    }
    char why[1400];
    if (app_settings_set(got, nb, vb, base_dir, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s:%d: %s", file, lineno, why);
        return 2;
    }
    got->line[id] = lineno;
    return 0;
}

/* The checks that need two settings: a head against h given in the same file. */
static int check_heads(const app_settings *got, const char *file, char *err, size_t errlen) {
    const int h = got->set[ST_H] ? (int)SV(got, ST_H) : 0;
    const int d = (int)SV(got, ST_D), focus = (int)SV(got, ST_FOCUS);
    if (!h) return 0;
    if (got->set[ST_D] && (h > d || d % h != 0)) {
        snprintf(err, errlen, "%s:%d: h = %d does not divide d_model = %d (line %d)", file,
                 got->line[ST_H], h, d, got->line[ST_D]);
        return 2;
    }
    if (got->set[ST_FOCUS] && focus > h) {
        snprintf(err, errlen, "%s:%d: focus = %d: there is no head %d (h = %d)", file,
                 got->line[ST_FOCUS], focus, focus, h);
        return 2;
    }
    for (int k = h; got->set[ST_ABLATE] && k < MHA_ABLATE_WORDS * 64; k++)
        if (got->ablate[k / 64] >> (k % 64) & 1) {
            snprintf(err, errlen, "%s:%d: ablate: there is no head %d (h = %d)", file,
                     got->line[ST_ABLATE], k + 1, h);
            return 2;
        }
    return 0;
}

int app_view_file_parse(const char *text, size_t len, const char *file, const char *base_dir,
                        app_settings *st, char *err, size_t errlen) {
    char *copy = malloc(len + 1);
    app_settings *got = copy ? app_settings_create() : NULL;
    if (!got) {
        free(copy);
        snprintf(err, errlen, "%s: out of memory", file);
        return 2;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    int lineno = 0, rc = 0;
    char *p = copy, *end = copy + len;
    while (p < end && !rc) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *b = p, *e = nl ? nl : end;
        lineno++;
        p = nl ? nl + 1 : end;
        trim(&b, &e);
        if (b == e || *b == '#') continue;
        rc = parse_line(b, e, lineno, file, base_dir, got, err, errlen);
    }
    if (!rc && !app_settings_count(got)) {
        snprintf(err, errlen, "%s: sets nothing (a view file holds lines such as 'h = 4')", file);
        rc = 2;
    }
    if (!rc) rc = check_heads(got, file, err, errlen);
    if (!rc) {
        snprintf(got->origin, sizeof got->origin, "%s", file);
        app_settings_merge(st, got);
    }
    app_settings_free(got);
    free(copy);
    return rc;
}
