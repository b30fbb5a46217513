/* tokjson_text.h: text as the tokenizer works on it (tokjson_encode.c and
 * tokjson_norm.c): UTF-8 bytes, each with the byte range [os, oe) of the caller's
 * text it came from, so that tokens keep their offsets through every change. */
#ifndef MHAVIZ_TOKJSON_TEXT_H
#define MHAVIZ_TOKJSON_TEXT_H

#include "tokjson_internal.h"

typedef struct {
    unsigned char *b;
    int32_t *os, *oe; /* n each */
    size_t n, cap;
    int oom;
} tj_text;

void tj_text_push(tj_text *x, const unsigned char *b, size_t n, int32_t os, int32_t oe);
void tj_text_free(tj_text *x);

/* in's bytes [s, e) through every normalizer of t into out (emptied first): 0, or -1
 * when out of memory */
int tj_normalize(const tokjson *t, const tj_text *in, size_t s, size_t e, tj_text *out);
/* Metaspace's own change: each space as the replacement, and the replacement put
 * first as prepend_scheme says (first: only when x starts the caller's text) */
int tj_metaspace(const tj_pre *st, tj_text *x, tj_text *tmp);

/* Unicode's White_Space (Rust's char::is_whitespace) and Rust's char::is_numeric (N*) */
int tj_is_ws(unsigned cp);
int tj_is_numeric(unsigned cp);
/* a letter, a digit or '_' (Rust's is_alphanumeric() || '_': added tokens' single_word) */
int tj_is_word(unsigned cp);

#endif
