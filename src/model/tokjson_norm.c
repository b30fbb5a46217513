/* tokjson_norm.c: tokenizer.json's normalizers over a tj_text (tokjson_text.h), each
 * output byte keeping the input range it came from: NFC, NFD, NFKC and NFKD through
 * libutf8proc, one extended grapheme cluster at a time (composition never crosses one,
 * and it gives each cluster's offsets); Lowercase as Rust's char::to_lowercase;
 * Prepend; Replace (a string or a regex); and Metaspace's own change. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "tokjson_text.h"

void tj_text_push(tj_text *x, const unsigned char *b, size_t n, int32_t os, int32_t oe) {
    if (x->oom || n == 0) return;
    if (x->n + n > x->cap) {
        size_t cap = 2 * (x->n + n) + 64;
        unsigned char *nb = realloc(x->b, cap);
        if (nb) x->b = nb;
        int32_t *ns = nb ? realloc(x->os, cap * sizeof *ns) : NULL;
        if (ns) x->os = ns;
        int32_t *ne = ns ? realloc(x->oe, cap * sizeof *ne) : NULL;
        if (!ne) {
            x->oom = 1;
            return;
        }
        x->oe = ne, x->cap = cap;
    }
    memcpy(x->b + x->n, b, n);
    for (size_t i = 0; i < n; i++) x->os[x->n + i] = os, x->oe[x->n + i] = oe;
    x->n += n;
}

void tj_text_free(tj_text *x) {
    free(x->b), free(x->os), free(x->oe);
    memset(x, 0, sizeof *x);
}

int tj_is_ws(unsigned cp) {
    return (cp >= 0x09 && cp <= 0x0d) || cp == ' ' || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
           cp == 0x205f || cp == 0x3000;
}

int tj_is_numeric(unsigned cp) {
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

int tj_is_word(unsigned cp) {
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return cp == '_' || (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
           tj_is_numeric(cp);
}

/* the range of in's bytes [a, b): from the first byte's start to the last one's end */
static void push_range(tj_text *out, const unsigned char *s, size_t n, const tj_text *in, size_t a,
                       size_t b) {
    tj_text_push(out, s, n, in->os[a], in->oe[b - 1]);
}

static int unicode_form(const tj_text *in, tj_text *out, enum tj_norm_kind k) {
    int opt =
        UTF8PROC_STABLE | (k == TJ_NFC || k == TJ_NFKC ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE);
    if (k == TJ_NFKC || k == TJ_NFKD) opt |= UTF8PROC_COMPAT;
    utf8proc_int32_t state = 0, prev = -1;
    size_t start = 0;
    for (size_t i = 0; i <= in->n;) {
        utf8proc_int32_t cp = -1;
        utf8proc_ssize_t l = 0;
        if (i < in->n) l = utf8proc_iterate(in->b + i, (utf8proc_ssize_t)(in->n - i), &cp);
        if (i < in->n && l <= 0) return -1; /* cannot happen: valid UTF-8 */
        int brk = i == in->n || (prev >= 0 && utf8proc_grapheme_break_stateful(prev, cp, &state));
        if (brk && i > start) { /* the cluster [start, i) */
            if (i - start == 1 && in->b[start] < 0x80) {
                push_range(out, in->b + start, 1, in, start, i);
            } else {
                utf8proc_uint8_t *m = NULL;
                utf8proc_ssize_t ml = utf8proc_map(in->b + start, (utf8proc_ssize_t)(i - start), &m,
                                                   (utf8proc_option_t)opt);
                if (ml < 0) return -1;
                if ((size_t)ml == i - start && memcmp(m, in->b + start, i - start) == 0)
                    for (size_t k = start; k < i; k++) /* unchanged: each byte keeps its range */
                        tj_text_push(out, in->b + k, 1, in->os[k], in->oe[k]);
                else
                    push_range(out, m, (size_t)ml, in, start, i);
                free(m);
            }
            start = i;
        }
        if (i == in->n) break;
        prev = cp, i += (size_t)l;
    }
    return out->oom ? -1 : 0;
}

/* Precompiled, as Hugging Face's normalizer applies SentencePiece's table: each
 * extended grapheme cluster under 6 bytes replaced whole by the replacement of the
 * shortest key that begins it, if any; otherwise each character by its own, or kept */
static int precompiled(const tj_norm *st, const tj_text *in, tj_text *out) {
    utf8proc_int32_t state = 0, prev = -1;
    size_t start = 0, rl;
    for (size_t i = 0; i <= in->n;) {
        utf8proc_int32_t cp = -1;
        utf8proc_ssize_t l = 0;
        if (i < in->n) l = utf8proc_iterate(in->b + i, (utf8proc_ssize_t)(in->n - i), &cp);
        if (i < in->n && l <= 0) return -1; /* cannot happen: valid UTF-8 */
        int brk = i == in->n || (prev >= 0 && utf8proc_grapheme_break_stateful(prev, cp, &state));
        if (brk && i > start) { /* the cluster [start, i) */
            const char *r =
                i - start < 6 ? tj_precompiled_find(st, in->b + start, i - start, &rl) : NULL;
            if (r) {
                push_range(out, (const unsigned char *)r, rl, in, start, i);
            } else {
                for (size_t a = start; a < i;) {
                    utf8proc_int32_t c2;
                    utf8proc_ssize_t cl =
                        utf8proc_iterate(in->b + a, (utf8proc_ssize_t)(i - a), &c2);
                    if (cl <= 0) return -1;
                    r = tj_precompiled_find(st, in->b + a, (size_t)cl, &rl);
                    if (r)
                        push_range(out, (const unsigned char *)r, rl, in, a, a + (size_t)cl);
                    else
                        for (size_t k = a; k < a + (size_t)cl; k++)
                            tj_text_push(out, in->b + k, 1, in->os[k], in->oe[k]);
                    a += (size_t)cl;
                }
            }
            start = i;
        }
        if (i == in->n) break;
        prev = cp, i += (size_t)l;
    }
    return out->oom ? -1 : 0;
}

static int lowercase(const tj_text *in, tj_text *out) {
    for (size_t i = 0; i < in->n;) {
        unsigned cp;
        size_t sub, l = tj_utf8_char(in->b + i, in->n - i, &sub, &cp);
        if (!l) return -1;
        unsigned char u[8];
        int k;
        if (cp == 0x130) /* İ: Rust's to_lowercase gives "i̇", the one two-character case */
            k = 3, memcpy(u, "i\xcc\x87", 3);
        else
            k = tj_put_utf8(u, (unsigned)utf8proc_tolower((utf8proc_int32_t)cp));
        push_range(out, u, (size_t)k, in, i, i + l);
        i += l;
    }
    return out->oom ? -1 : 0;
}

/* Replace: every non-overlapping match, left to right, by the content; the content's
 * bytes take the range of what they replace */
static int replace(const tj_norm *st, const tj_text *in, tj_text *out) {
    pcre2_match_data *md = st->re ? pcre2_match_data_create(4, NULL) : NULL;
    size_t pl = st->pattern ? strlen(st->pattern) : 0, cl = strlen(st->text), i = 0;
    if (st->re && !md) return -1;
    while (i < in->n) {
        size_t ms = in->n, me = in->n;
        if (st->re) {
            int r = pcre2_match(st->re, in->b, in->n, i, PCRE2_NO_UTF_CHECK, md, NULL);
            if (r >= 0)
                ms = pcre2_get_ovector_pointer(md)[0], me = pcre2_get_ovector_pointer(md)[1];
        } else {
            for (size_t k = i; k + pl <= in->n; k++)
                if (in->b[k] == (unsigned char)st->pattern[0] &&
                    memcmp(in->b + k, st->pattern, pl) == 0) {
                    ms = k, me = k + pl;
                    break;
                }
        }
        for (size_t k = i; k < ms; k++) tj_text_push(out, in->b + k, 1, in->os[k], in->oe[k]);
        if (ms == in->n) break;
        if (me == ms) { /* an empty match replaces nothing: keep one character */
            size_t sub, l = tj_utf8_char(in->b + ms, in->n - ms, &sub, NULL);
            l = l ? l : 1;
            for (size_t k = ms; k < ms + l; k++)
                tj_text_push(out, in->b + k, 1, in->os[k], in->oe[k]);
            i = ms + l;
            continue;
        }
        if (cl) push_range(out, (const unsigned char *)st->text, cl, in, ms, me);
        i = me;
    }
    pcre2_match_data_free(md);
    return out->oom ? -1 : 0;
}

/* Rust's char::is_other (Cc, Cf, Cs, Co, Cn) less tab, newline and carriage return */
static int bert_control(unsigned cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return 0;
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CS ||
           c == UTF8PROC_CATEGORY_CO || c == UTF8PROC_CATEGORY_CN;
}

/* BERT's "Chinese character" blocks (CJK Unified Ideographs and their extensions) */
static int bert_chinese(unsigned cp) {
    return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
           (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
           (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf) ||
           (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

/* one pass of BertNormalizer: clean_text (what = 0: NUL, U+FFFD and control characters
 * dropped, white space as a space), handle_chinese_chars (1: a space each side of an
 * ideograph) or strip_accents' filter (2: nonspacing marks dropped) */
static int bert_pass(const tj_text *in, tj_text *out, int what) {
    out->n = 0;
    for (size_t i = 0; i < in->n;) {
        unsigned cp;
        size_t sub, l = tj_utf8_char(in->b + i, in->n - i, &sub, &cp);
        if (!l) return -1;
        int32_t os = in->os[i], oe = in->oe[i + l - 1];
        if (what == 0 && (cp == 0 || cp == 0xfffd || bert_control(cp))) {
        } else if (what == 0 && tj_is_ws(cp)) {
            tj_text_push(out, (const unsigned char *)" ", 1, os, oe);
        } else if (what == 1 && bert_chinese(cp)) {
            tj_text_push(out, (const unsigned char *)" ", 1, os, os);
            for (size_t k = i; k < i + l; k++)
                tj_text_push(out, in->b + k, 1, in->os[k], in->oe[k]);
            tj_text_push(out, (const unsigned char *)" ", 1, oe, oe);
        } else if (what == 2 && utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_MN) {
        } else {
            for (size_t k = i; k < i + l; k++)
                tj_text_push(out, in->b + k, 1, in->os[k], in->oe[k]);
        }
        i += l;
    }
    return out->oom ? -1 : 0;
}

/* BertNormalizer, in Hugging Face's order: clean, Chinese, strip accents (NFD, then
 * the marks dropped), lowercase */
static int bert_norm(const tj_norm *st, const tj_text *in, tj_text *out) {
    tj_text a = {0}, b = {0};
    int rc = 0;
    for (size_t i = 0; i < in->n; i++) tj_text_push(&a, in->b + i, 1, in->os[i], in->oe[i]);
    if (a.oom) rc = -1;
    for (int step = 0; step < 5 && !rc; step++) {
        int on[5] = {st->clean_text, st->chinese, st->strip_accents, st->strip_accents,
                     st->lowercase};
        if (!on[step]) continue;
        b.n = 0;
        rc = step == 0   ? bert_pass(&a, &b, 0)
             : step == 1 ? bert_pass(&a, &b, 1)
             : step == 2 ? unicode_form(&a, &b, TJ_NFD)
             : step == 3 ? bert_pass(&a, &b, 2)
                         : lowercase(&a, &b);
        tj_text sw = a;
        a = b, b = sw;
    }
    out->n = 0;
    for (size_t i = 0; !rc && i < a.n; i++) tj_text_push(out, a.b + i, 1, a.os[i], a.oe[i]);
    tj_text_free(&a), tj_text_free(&b);
    return rc || out->oom ? -1 : 0;
}

static int norm_step(const tj_norm *st, const tj_text *in, tj_text *out) {
    out->n = 0;
    switch (st->kind) {
    case TJ_PREPEND:
        if (in->n)
            tj_text_push(out, (const unsigned char *)st->text, strlen(st->text), in->os[0],
                         in->os[0]);
        for (size_t i = 0; i < in->n; i++) tj_text_push(out, in->b + i, 1, in->os[i], in->oe[i]);
        return out->oom ? -1 : 0;
    case TJ_REPLACE: return replace(st, in, out);
    case TJ_LOWERCASE: return lowercase(in, out);
    case TJ_BERT_NORM: return bert_norm(st, in, out);
    case TJ_STRIP_ACCENTS: return bert_pass(in, out, 2);
    case TJ_PRECOMPILED: return precompiled(st, in, out);
    default: return unicode_form(in, out, st->kind);
    }
}

int tj_normalize(const tokjson *t, const tj_text *in, size_t s, size_t e, tj_text *out) {
    out->n = 0;
    for (size_t i = s; i < e; i++) tj_text_push(out, in->b + i, 1, in->os[i], in->oe[i]);
    tj_text tmp = {0};
    int rc = out->oom ? -1 : 0;
    for (int k = 0; k < t->n_norm && !rc; k++) {
        rc = norm_step(&t->norm[k], out, &tmp);
        tj_text sw = *out; /* the result becomes out */
        *out = tmp, tmp = sw;
    }
    tj_text_free(&tmp);
    return rc;
}

int tj_metaspace(const tj_pre *st, tj_text *x, tj_text *tmp) {
    size_t rl = strlen(st->rep);
    tmp->n = 0;
    int first = x->n > 0 && x->os[0] == 0;
    int starts = x->n && (x->b[0] == ' ' || (x->n >= rl && memcmp(x->b, st->rep, rl) == 0));
    if (x->n && !starts && (st->add_prefix_space == 1 || (st->add_prefix_space == 2 && first)))
        tj_text_push(tmp, (const unsigned char *)st->rep, rl, x->os[0], x->os[0]);
    for (size_t i = 0; i < x->n; i++) {
        if (x->b[i] == ' ')
            tj_text_push(tmp, (const unsigned char *)st->rep, rl, x->os[i], x->oe[i]);
        else
            tj_text_push(tmp, x->b + i, 1, x->os[i], x->oe[i]);
    }
    if (tmp->oom) return -1;
    tj_text sw = *x;
    *x = *tmp, *tmp = sw;
    return 0;
}
