/* settings_write.c: the small grammar every setting's value shares: writing a
 * value in its canonical form (numbers, the shortest float, escaped text, heads),
 * reading escaped text and head lists back, and apply's "FILE:LINE: why". The
 * rows and what each setting means are settings.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings_internal.h"
#include "values.h"

void stg_put(out_buf *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = o->used < o->len ? o->len - o->used : 0;
    int n = vsnprintf(room ? o->buf + o->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->used += (size_t)n;
}

void stg_put_char(out_buf *o, char c) {
    if (o->used + 1 < o->len) {
        o->buf[o->used] = c;
        o->buf[o->used + 1] = '\0';
    }
    o->used++;
}

void stg_put_float(out_buf *o, float v) {
    char b[32];
    for (int p = 0; p <= 9; p++) { /* fixed point: the reader takes no exponent */
        snprintf(b, sizeof b, "%.*f", p, (double)v);
        if ((float)strtod(b, NULL) == v) break;
    }
    stg_put(o, "%s", b);
}

void stg_put_text(out_buf *o, const char *t) {
    const size_t n = strlen(t);
    const int quote = n && (t[0] == ' ' || t[0] == '\t' || t[0] == '"' || t[n - 1] == ' ' ||
                            t[n - 1] == '\t' || t[n - 1] == '"');
    if (quote) stg_put_char(o, '"');
    for (const char *p = t; *p; p++) {
        switch (*p) {
        case '\n': stg_put(o, "\\n"); break;
        case '\t': stg_put(o, "\\t"); break;
        case '\r': stg_put(o, "\\r"); break;
        case '\\': stg_put(o, "\\\\"); break;
        default: stg_put_char(o, *p);
        }
    }
    if (quote) stg_put_char(o, '"');
}

void stg_put_heads(out_buf *o, const uint64_t *bits) {
    int any = 0;
    for (int k = 0; k < MHA_ABLATE_WORDS * 64; k++)
        if (bits[k / 64] >> (k % 64) & 1) stg_put(o, "%s%d", any++ ? "," : "", k + 1);
    if (!any) stg_put(o, "none");
}

/* \n \t \r \\ (and \" ); a value wrapped in double quotes keeps its spaces. */
char *stg_unescape_text(const char *v, const char **why) {
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') v++, n -= 2;
    char *out = malloc(n + 1);
    if (!out) {
        *why = "out of memory";
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == '\\') {
            if (i + 1 >= n) {
                free(out);
                *why = "ends with a lone \\ (write \\\\ for a backslash)";
                return NULL;
            }
            char e = v[++i];
            c = e == 'n'    ? '\n'
                : e == 't'  ? '\t'
                : e == 'r'  ? '\r'
                : e == '\\' ? '\\'
                : e == '"'  ? '"'
                            : 0;
            if (!c) {
                free(out);
                *why = "has an unknown escape (\\n, \\t, \\r, \\\\ and \\\" are known)";
                return NULL;
            }
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

/* 1-based heads, each once, into got. */
static int heads_into(const char *v, uint64_t *got, char *err, size_t errlen) {
    if (strcmp(v, "none") == 0) return 0;
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        char item[16];
        long k = 0;
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "ablate = %s: must be none or heads such as 2,5", v);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (cli_parse_int(item, 1, MHA_MAX_D_MODEL, &k) != 0) {
            snprintf(err, errlen, "ablate = %s: '%s' is not a head from 1", v, item);
            return -1;
        }
        if (got[(k - 1) / 64] >> ((k - 1) % 64) & 1) {
            snprintf(err, errlen, "ablate = %s: head %ld is listed twice", v, k);
            return -1;
        }
        got[(k - 1) / 64] |= UINT64_C(1) << ((k - 1) % 64);
        if (!p[len]) return 0;
        p += len + 1;
    }
}

int stg_parse_heads(const char *v, uint64_t *bits, char *err, size_t errlen) {
    uint64_t got[MHA_ABLATE_WORDS] = {0};
    if (heads_into(v, got, err, errlen) != 0) return -1;
    memcpy(bits, got, sizeof got);
    return 0;
}

int stg_fail(const app_settings *st, int id, char *err, size_t errlen, const char *fmt, ...) {
    size_t at = 0;
    if (id >= 0 && st->origin[0] && st->line[id] > 0)
        at = (size_t)snprintf(err, errlen, "%s:%d: ", st->origin, st->line[id]);
    else if (st->origin[0])
        at = (size_t)snprintf(err, errlen, "%s: ", st->origin);
    if (at >= errlen) at = errlen ? errlen - 1 : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + at, errlen - at, fmt, ap);
    va_end(ap);
    return -1;
}
