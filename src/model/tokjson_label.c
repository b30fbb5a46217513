/* tokjson_label.c: the bytes each id stands for and its label (tokjson.h), and the
 * UTF-8 and byte-to-unicode helpers tokjson's other files share. */
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "tokjson_internal.h"

size_t tj_utf8_char(const unsigned char *s, size_t n, size_t *sub, unsigned *cp_out) {
    return bpe_utf8_char(s, n, sub, cp_out); /* one UTF-8 rule for both tokenizers */
}

int tj_put_utf8(unsigned char *o, unsigned cp) {
    if (cp < 0x80) return o[0] = (unsigned char)cp, 1;
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18), o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)), o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* GPT-2's table: bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand for themselves; the
 * other 68 get U+0100.. in byte order */
static int printable(unsigned b) {
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
}
unsigned tj_byte_to_cp(unsigned b) {
    if (printable(b)) return b;
    if (b <= 0x20) return 256 + b;
    if (b <= 0xa0) return b + 162;
    return 323; /* 0xAD */
}
int tj_cp_to_byte(unsigned cp) {
    if (cp < 256) return printable(cp) ? (int)cp : -1;
    if (cp <= 288) return (int)cp - 256;
    if (cp <= 322) return (int)cp - 162;
    return cp == 323 ? 0xad : -1;
}

/* A token's string as the bytes it stands for, into out (room for n bytes): byte-level
 * characters mapped back (a character outside the table kept as it is); else "▁" as a
 * space and "<0xNN>" (the whole string) as the byte. */
static size_t token_to_bytes(const tokjson *t, const char *s, size_t n, unsigned char *out) {
    const unsigned char *u = (const unsigned char *)s;
    if (!t->byte_level && t->sp_decode && n == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>') {
        char hex[3] = {s[3], s[4], 0}, *end;
        long v = strtol(hex, &end, 16);
        if (*end == '\0' && end == hex + 2) return out[0] = (unsigned char)v, 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t sub, l = tj_utf8_char(u + i, n - i, &sub, &cp);
        if (!l) {
            out[k++] = u[i++];
            continue;
        }
        int b = t->byte_level ? tj_cp_to_byte(cp) : -1;
        if (b >= 0) {
            out[k++] = (unsigned char)b;
        } else if (!t->byte_level && t->sp_decode && cp == 0x2581) {
            out[k++] = ' ';
        } else {
            memcpy(out + k, u + i, l), k += l;
        }
        i += l;
    }
    return k;
}

int tj_make_bytes(tokjson *t) {
    t->bytes = calloc((size_t)t->n_ids, sizeof *t->bytes);
    t->blen = calloc((size_t)t->n_ids, sizeof *t->blen);
    if (!t->bytes || !t->blen) return -1;
    for (int id = 0; id < t->n_ids; id++) {
        int a = t->added_of[id];
        const char *s = a >= 0 ? t->added[a].content : t->str[id];
        size_t n = a >= 0 ? t->added[a].len : t->slen[id];
        if (!s) continue;
        if (!(t->bytes[id] = malloc(n ? n : 1))) return -1;
        if (a >= 0) /* an added token reads as it is */
            memcpy(t->bytes[id], s, n);
        else
            n = token_to_bytes(t, s, n, t->bytes[id]);
        t->blen[id] = (uint32_t)n;
    }
    return 0;
}

const unsigned char *tokjson_token_bytes(const tokjson *t, int id, size_t *len) {
    if (!t || id < 0 || id >= t->n_ids || !t->bytes[id]) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = t->blen[id];
    return t->bytes[id];
}

void tokjson_token_label(const tokjson *t, int id, char *buf, size_t len) {
    if (!buf || len == 0) return;
    buf[0] = '\0';
    size_t n;
    const unsigned char *b = tokjson_token_bytes(t, id, &n);
    if (b) bpe_bytes_label(b, n, buf, len);
}
