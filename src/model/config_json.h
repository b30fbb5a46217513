/* config_json.h: reading config.json's fields, for the families' spec functions
 * (family.h) and the loader: each field checked as it is read, one line in err,
 * "PATH: what is wrong", when it is not what the model needs (code 2). */
#ifndef MHAVIZ_CONFIG_JSON_H
#define MHAVIZ_CONFIG_JSON_H

#include <jansson.h>
#include <stddef.h>

/* "PATH: message" in err, one line (control characters replaced); returns code. */
int cj_fail(char *err, size_t errlen, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Integer field key in [min, max] into *out; absent: def, or an error when def < 0. */
int cj_int(json_t *root, const char *key, int min, int max, int def, int *out, const char *path,
           char *err, size_t errlen);
/* Number field key in the open interval (lo, hi) into *out; absent: def, or an
 * error when def is not finite (NAN). */
int cj_float(json_t *root, const char *key, double lo, double hi, double def, float *out,
             const char *path, char *err, size_t errlen);
/* Boolean field key into *out; absent or null: def. */
int cj_bool(json_t *root, const char *key, int def, int *out, const char *path, char *err,
            size_t errlen);
/* String field key (absent or null: NULL in *out). */
int cj_string(json_t *root, const char *key, const char **out, const char *path, char *err,
              size_t errlen);

#endif
