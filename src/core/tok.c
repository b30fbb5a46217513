/* tok.c: the UTF-8 word/punctuation tokenizer described in tok.h.
 * Decoding is strict (no overlongs, no surrogates); anything invalid becomes U+FFFD. */
#include "tok.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tok_decode_utf8(const unsigned char *s, size_t len, unsigned *cp) {
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int need = 0;
    unsigned min = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        min = 0x80;
        c &= 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        min = 0x800;
        c &= 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        min = 0x10000;
        c &= 0x07;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if ((size_t)need >= len) {
        *cp = 0xFFFD;
        return 1;
    }
    for (int i = 1; i <= need; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = c;
    return need + 1;
}

static int encode_utf8(unsigned cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

enum { C_SPACE, C_WORD, C_PUNCT, C_SOLO };

static int is_cjk_solo(unsigned cp) {
    return (cp >= 0x3001 && cp <= 0x303F) || /* CJK punctuation */
           (cp >= 0x3040 && cp <= 0x30FF) || /* hiragana, katakana */
           (cp >= 0x3400 && cp <= 0x4DBF) || /* CJK extension A */
           (cp >= 0x4E00 && cp <= 0x9FFF) || /* CJK unified ideographs */
           (cp >= 0xF900 && cp <= 0xFAFF) || /* CJK compatibility ideographs */
           (cp >= 0xFF01 && cp <= 0xFF65) || /* fullwidth forms, halfwidth punctuation */
           (cp >= 0x20000 && cp <= 0x2FFFF); /* CJK extensions B.. */
}

static int is_unicode_punct(unsigned cp) {
    return (cp >= 0x2010 && cp <= 0x2027 && cp != 0x2019) || /* dashes, quotes, ellipsis */
           (cp >= 0x2030 && cp <= 0x205E) ||                 /* per mille, primes, ... */
           cp == 0x00A1 || cp == 0x00AB || cp == 0x00BB || cp == 0x00BF || cp == 0x00B7 ||
           cp == 0x00A7 || cp == 0x00B6 || cp == 0x00D7 || cp == 0x00F7;
}

static int classify(unsigned cp) {
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f' ||
        cp == 0x00A0 || cp == 0x3000)
        return C_SPACE;
    if (cp < 0x80) {
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') ||
            cp == '_')
            return C_WORD;
        if (cp < 0x20 || cp == 0x7F) return C_SPACE; /* other control characters separate */
        return C_PUNCT;
    }
    if (cp >= 0x80 && cp < 0xA0) return C_SPACE; /* C1 controls */
    if (is_cjk_solo(cp)) return C_SOLO;
    if (is_unicode_punct(cp)) return C_PUNCT;
    return C_WORD;
}

static int is_apostrophe(unsigned cp) {
    return cp == '\'' || cp == 0x2019;
}

static int push_token(tok_list *t, int *cap, const unsigned *cps, int len) {
    if (t->count == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        char **nt = realloc(t->tokens, (size_t)ncap * sizeof *nt);
        if (!nt) return -1;
        t->tokens = nt;
        *cap = ncap;
    }
    char *s = malloc((size_t)len * 4 + 1);
    if (!s) return -1;
    int o = 0;
    for (int i = 0; i < len; i++) o += encode_utf8(cps[i], s + o);
    s[o] = '\0';
    t->tokens[t->count++] = s;
    return 0;
}

int tok_split(tok_list *toks, const char *text, int max_tokens, int *total, char *err,
              size_t errlen) {
    memset(toks, 0, sizeof *toks);
    if (total) *total = 0;
    if (!text) text = "";
    if (max_tokens <= 0) max_tokens = INT_MAX;
    size_t len = strlen(text);

    /* pass 1: decode to code points, counting replacements */
    unsigned *cps = malloc((len + 1) * sizeof *cps);
    if (!cps) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int ncp = 0, replaced = 0;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned cp = 0;
        int used = tok_decode_utf8(s + i, len - i, &cp);
        if (cp == 0xFFFD && !(used == 3 && s[i] == 0xEF && s[i + 1] == 0xBF && s[i + 2] == 0xBD))
            replaced++;
        cps[ncp++] = cp;
        i += (size_t)used;
    }

    /* pass 2: group code points into tokens */
    int cap = 0, count = 0;
    for (int i = 0; i < ncp;) {
        int cls = classify(cps[i]);
        if (cls == C_SPACE) {
            i++;
            continue;
        }
        int j = i + 1;
        if (cls == C_WORD) {
            while (j < ncp) {
                int c = classify(cps[j]);
                if (c == C_WORD) {
                    j++;
                } else if (is_apostrophe(cps[j]) && j + 1 < ncp && classify(cps[j + 1]) == C_WORD) {
                    j += 2;
                } else {
                    break;
                }
            }
        }
        count++;
        if (count <= max_tokens && push_token(toks, &cap, cps + i, j - i) != 0) {
            free(cps);
            tok_free(toks);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        i = j;
    }
    free(cps);
    toks->replaced = replaced;
    if (total) *total = count;
    if (count == 0) {
        tok_free(toks);
        snprintf(err, errlen, "%s", TOK_BLANK_WHY);
        return -1;
    }
    return 0;
}

int tok_blank(const char *text) {
    const unsigned char *s = (const unsigned char *)text;
    const size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        unsigned cp = 0;
        i += (size_t)tok_decode_utf8(s + i, len - i, &cp);
        if (classify(cp) != C_SPACE) return 0;
    }
    return 1;
}

size_t tok_fit(const char *text, size_t max) {
    size_t n = 0;
    while (n <= max && text[n]) n++;
    if (n <= max) return n;
    n = max; /* text[n] is the first byte left out: back to the start of its character */
    for (int k = 0; k < 3 && n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80; k++) n--;
    return n;
}

size_t tok_copy_fit(char *dst, size_t size, const char *text) {
    const size_t n = tok_fit(text, size - 1);
    memmove(dst, text, n);
    dst[n] = '\0';
    return n;
}

void tok_free(tok_list *toks) {
    if (!toks) return;
    for (int i = 0; i < toks->count; i++) free(toks->tokens[i]);
    free(toks->tokens);
    toks->tokens = NULL;
    toks->count = 0;
}

int tok_copy(tok_list *dst, const tok_list *src) {
    memset(dst, 0, sizeof *dst);
    if (src->count <= 0) return 0;
    dst->tokens = calloc((size_t)src->count, sizeof *dst->tokens);
    if (!dst->tokens) return -1;
    dst->count = src->count;
    dst->replaced = src->replaced;
    for (int i = 0; i < src->count; i++) {
        size_t len = strlen(src->tokens[i]) + 1;
        dst->tokens[i] = malloc(len);
        if (!dst->tokens[i]) {
            tok_free(dst);
            return -1;
        }
        memcpy(dst->tokens[i], src->tokens[i], len);
    }
    return 0;
}
