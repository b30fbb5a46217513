/* tokjson_read.h: what tokjson.c and tokjson_steps.c share while reading tokenizer.json:
 * the error line and small JSON helpers (tokjson_json.c). Not for other modules. */
#ifndef MHAVIZ_TOKJSON_READ_H
#define MHAVIZ_TOKJSON_READ_H

#include <jansson.h>

#include "tokjson_internal.h"

typedef struct {
    const char *path;
    char *err;
    size_t errlen;
} tj_ctx;

/* writes "PATH: message" (one line) into c's err; returns rc */
int tj_fail(const tj_ctx *c, int rc, const char *fmt, ...);
/* obj[key] as a bool: 0/1, def when absent or null, -1 when not a bool */
int tj_get_bool(json_t *obj, const char *key, int def);
/* obj[key] as a string, NULL when absent, null or not a string */
const char *tj_get_str(json_t *obj, const char *key);
char *tj_dup(const char *s, size_t n); /* n bytes and a NUL */

int tj_read_norm(tokjson *t, json_t *n, int depth, const tj_ctx *c);
/* Precompiled's precompiled_charsmap (base64) into st's trie and replacements */
int tj_read_precompiled(tj_norm *st, json_t *n, const tj_ctx *c);
int tj_read_pre(tokjson *t, json_t *p, int depth, const tj_ctx *c);
int tj_read_post(tokjson *t, json_t *p, int depth, const tj_ctx *c);
void tj_read_decoder(tokjson *t, json_t *d); /* labels: "▁" a space, <0xNN> a byte */

#endif
