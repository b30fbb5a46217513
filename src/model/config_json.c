/* config_json.c: config.json's fields, read and checked (config_json.h). */
#include "config_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

int cj_fail(char *err, size_t errlen, int code, const char *path, const char *fmt, ...) {
    if (!errlen) return code;
    int n = snprintf(err, errlen, "%s: ", path);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    one_line(err);
    return code;
}

int cj_int(json_t *root, const char *key, int min, int max, int def, int *out, const char *path,
           char *err, size_t errlen) {
    json_t *v = json_object_get(root, key);
    if (!v && def >= 0) {
        *out = def;
        return 0;
    }
    if (!v) return cj_fail(err, errlen, 2, path, "%s is missing", key);
    if (!json_is_integer(v)) return cj_fail(err, errlen, 2, path, "%s is not an integer", key);
    json_int_t i = json_integer_value(v);
    if (i < min)
        return cj_fail(err, errlen, 2, path, "%s is %lld, must be at least %d", key, (long long)i,
                       min);
    if (i > max)
        return cj_fail(err, errlen, 2, path, "%s is %lld, this program supports at most %d", key,
                       (long long)i, max);
    *out = (int)i;
    return 0;
}

int cj_float(json_t *root, const char *key, double lo, double hi, double def, float *out,
             const char *path, char *err, size_t errlen) {
    json_t *v = json_object_get(root, key);
    if (!v && isfinite(def)) {
        *out = (float)def;
        return 0;
    }
    if (!v) return cj_fail(err, errlen, 2, path, "%s is missing", key);
    if (!json_is_number(v)) return cj_fail(err, errlen, 2, path, "%s is not a number", key);
    const double x = json_number_value(v);
    if (!(x > lo && x < hi) || !((float)x > (float)lo) || !isfinite((float)x))
        return cj_fail(err, errlen, 2, path, "%s %g must be in (%g, %g)", key, x, lo, hi);
    *out = (float)x;
    return 0;
}

int cj_bool(json_t *root, const char *key, int def, int *out, const char *path, char *err,
            size_t errlen) {
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v)) return cj_fail(err, errlen, 2, path, "%s is not true or false", key);
    *out = json_is_true(v);
    return 0;
}

int cj_string(json_t *root, const char *key, const char **out, const char *path, char *err,
              size_t errlen) {
    json_t *v = json_object_get(root, key);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) return cj_fail(err, errlen, 2, path, "%s is not a string", key);
    *out = json_string_value(v);
    return 0;
}
