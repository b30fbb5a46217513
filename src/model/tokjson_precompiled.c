/* tokjson_precompiled.c: the Precompiled normalizer's table (tokjson_internal.h),
 * SentencePiece's compiled normalization rules as ALBERT's and T5's tokenizer.json carry
 * them: base64 of a u32 (little-endian) byte size of a darts-clone double-array trie,
 * the trie's u32 units, then the replacement strings, each NUL-ended, a key's value
 * being its replacement's byte offset. Read and checked here, looked up by
 * tj_precompiled_find; applying it over grapheme clusters is tokjson_norm.c's. */
#include <stdlib.h>
#include <string.h>

#include "tokjson_internal.h"
#include "tokjson_read.h"

static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* standard base64 with its '=' padding into out (room for 3 n / 4): the length, or -1 */
static long b64_decode(const char *s, size_t n, unsigned char *out) {
    while (n > 0 && s[n - 1] == '=') n--;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (unsigned)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return (long)o;
}

int tj_read_precompiled(tj_norm *st, json_t *n, const tj_ctx *c) {
    const char *s = tj_get_str(n, "precompiled_charsmap");
    if (!s) return tj_fail(c, 2, "normalizer Precompiled: precompiled_charsmap is not a string");
    const size_t sl = strlen(s);
    unsigned char *raw = malloc(sl / 4 * 3 + 4);
    if (!raw) return tj_fail(c, 1, "out of memory");
    long len = b64_decode(s, sl, raw);
    uint32_t size = 0;
    if (len >= 4)
        size = (uint32_t)raw[0] | (uint32_t)raw[1] << 8 | (uint32_t)raw[2] << 16 |
               (uint32_t)raw[3] << 24;
    if (len < 8 || size % 4 || size == 0 || size > (uint64_t)len - 4) {
        free(raw);
        return tj_fail(c, 2,
                       "normalizer Precompiled: precompiled_charsmap is not a table "
                       "(base64 of a trie's size, the trie, its replacements)");
    }
    st->n_trie = size / 4;
    st->n_chars = (size_t)len - 4 - size;
    st->trie = malloc(st->n_trie * sizeof *st->trie);
    st->chars = malloc(st->n_chars + 1);
    if (!st->trie || !st->chars) {
        free(raw);
        return tj_fail(c, 1, "out of memory");
    }
    for (size_t i = 0; i < st->n_trie; i++) {
        const unsigned char *u = raw + 4 + 4 * i;
        st->trie[i] =
            (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    memcpy(st->chars, raw + 4 + size, st->n_chars);
    st->chars[st->n_chars] = '\0'; /* a last replacement without its NUL ends here */
    free(raw);
    return 0;
}

/* darts-clone's unit fields */
static uint32_t unit_offset(uint32_t u) {
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}
static uint32_t unit_label(uint32_t u) {
    return u & ((1u << 31) | 0xffu);
}
static int unit_has_leaf(uint32_t u) {
    return (u >> 8) & 1;
}

const char *tj_precompiled_find(const tj_norm *st, const unsigned char *key, size_t n,
                                size_t *len) {
    *len = 0;
    if (!st->n_trie) return NULL;
    size_t pos = unit_offset(st->trie[0]);
    for (size_t i = 0; i < n && key[i]; i++) {
        pos ^= key[i];
        if (pos >= st->n_trie) return NULL;
        const uint32_t u = st->trie[pos];
        if (unit_label(u) != key[i]) return NULL;
        pos ^= unit_offset(u);
        if (pos >= st->n_trie) return NULL;
        if (unit_has_leaf(u)) { /* the first (shortest) key found is the one used */
            const size_t v = st->trie[pos] & 0x7fffffffu;
            if (v >= st->n_chars) return NULL;
            *len = strlen(st->chars + v);
            return st->chars + v;
        }
    }
    return NULL;
}
