/* tokjson_json.c: the error line and the small JSON helpers that tokjson.c and
 * tokjson_steps.c share while reading tokenizer.json (tokjson_read.h), below both. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokjson_read.h"

int tj_fail(const tj_ctx *c, int rc, const char *fmt, ...) {
    if (c->err && c->errlen) {
        char msg[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
        for (char *p = c->err; *p; p++) /* one line, whatever a key held */
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    }
    return rc;
}

/* obj[key] as a bool: 0/1, def when absent or null, -1 when not a bool */
int tj_get_bool(json_t *obj, const char *key, int def) {
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return def;
    return json_is_boolean(v) ? json_is_true(v) : -1;
}
/* obj[key] as a string, NULL when absent, null or not a string */
const char *tj_get_str(json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}
char *tj_dup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n), d[n] = '\0';
    return d;
}
