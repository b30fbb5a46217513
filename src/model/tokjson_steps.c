/* tokjson_steps.c: tokenizer.json's normalizer, pre-tokenizer, post-processor and decoder
 * read into a tokjson (tokjson.c reads the model and the added tokens): each step checked,
 * each regex translated from Oniguruma's dialect and compiled by PCRE2. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdlib.h>
#include <string.h>

#include "tokjson_read.h"

/* ---- regexes ------------------------------------------------------------------------- */

/* Unicode's White_Space (Oniguruma's and Python regex's \s; PCRE2's also takes U+180E)
 * and the letters and digits Unicode 15.0 added, which PCRE2 10.42 (Unicode 14) lacks */
#define WS                                                                                         \
    "\\t\\n\\x0b\\x0c\\r "                                                                         \
    "\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"
#define L15                                                                                        \
    "\\x{1123f}-\\x{11240}\\x{11f02}\\x{11f04}-\\x{11f10}\\x{11f12}-\\x{11f33}\\x{1342f}"          \
    "\\x{13441}-\\x{13446}\\x{1b132}\\x{1b155}\\x{1df25}-\\x{1df2a}\\x{1e030}-\\x{1e06d}"          \
    "\\x{1e4d0}-\\x{1e4eb}\\x{2b739}\\x{31350}-\\x{323af}"
#define N15 "\\x{11f50}-\\x{11f59}\\x{1d2c0}-\\x{1d2d3}\\x{1e4f0}-\\x{1e4f9}"

/* GPT-2's pattern, ByteLevel's use_regex (as bpe.c's) */
static const char gpt2_pattern[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+"
                                   "| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;
static void put(sbuf *s, const char *d, size_t n) {
    if (s->oom) return;
    if (s->n + n + 1 > s->cap) {
        size_t cap = (s->n + n + 1) * 2;
        char *np = realloc(s->p, cap);
        if (!np) {
            s->oom = 1;
            return;
        }
        s->p = np, s->cap = cap;
    }
    memcpy(s->p + s->n, d, n);
    s->n += n;
    s->p[s->n] = '\0';
}
static void puts_(sbuf *s, const char *d) {
    put(s, d, strlen(d));
}

/* An Oniguruma pattern (as the file has it) for PCRE2: \s, \S, \p{L} and \p{N} spelt
 * out as above, inside and outside brackets; the rest as it is. */
static char *onig_to_pcre2(const char *src, size_t len) {
    sbuf o = {0};
    int depth = 0; /* inside [...] */
    for (size_t i = 0; i < len; i++) {
        char ch = src[i];
        if (ch == '\\' && i + 1 < len) {
            char e = src[i + 1];
            if (e == 's') {
                puts_(&o, depth ? WS : "[" WS "]");
            } else if (e == 'S' && !depth) {
                puts_(&o, "[^" WS "]");
            } else if (e == 'p' && i + 4 < len && src[i + 2] == '{' && src[i + 4] == '}' &&
                       (src[i + 3] == 'L' || src[i + 3] == 'N')) {
                const char *extra = src[i + 3] == 'L' ? "\\p{L}" L15 : "\\p{N}" N15;
                if (!depth) put(&o, "[", 1);
                puts_(&o, extra);
                if (!depth) put(&o, "]", 1);
                i += 3;
            } else {
                put(&o, src + i, 2);
            }
            i++;
            continue;
        }
        if (ch == '[') {
            depth++;
            put(&o, src + i, 1);
            /* a ']' first in the class (or after '^') is a literal */
            if (i + 1 < len && src[i + 1] == '^') put(&o, src + ++i, 1);
            if (i + 1 < len && src[i + 1] == ']') put(&o, src + ++i, 1);
            continue;
        }
        if (ch == ']' && depth) depth--;
        put(&o, src + i, 1);
    }
    if (o.oom || !o.p) {
        free(o.p);
        return NULL;
    }
    return o.p;
}

/* compiles a {"Regex": ...} or {"String": ...} pattern */
static int compile_pattern(json_t *pat, pcre2_code **re, char **literal, const char *what,
                           const tj_ctx *c) {
    const char *rx = tj_get_str(pat, "Regex"), *lit = tj_get_str(pat, "String");
    if (!json_is_object(pat) || (!rx && !lit))
        return tj_fail(c, 2, "%s: pattern is neither {\"Regex\": ...} nor {\"String\": ...}", what);
    if (lit) {
        size_t l = json_string_length(json_object_get(pat, "String"));
        if (l == 0) return tj_fail(c, 2, "%s: an empty pattern", what);
        if (literal) return (*literal = tj_dup(lit, l)) ? 0 : tj_fail(c, 1, "out of memory");
        *re = pcre2_compile((PCRE2_SPTR)lit, l, PCRE2_LITERAL | PCRE2_UTF, &(int){0},
                            &(PCRE2_SIZE){0}, NULL);
        return *re ? 0 : tj_fail(c, 2, "%s: PCRE2 cannot take the string", what);
    }
    char *p = onig_to_pcre2(rx, json_string_length(json_object_get(pat, "Regex")));
    if (!p) return tj_fail(c, 1, "out of memory");
    int e;
    PCRE2_SIZE eo;
    *re = pcre2_compile((PCRE2_SPTR)p, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &e, &eo, NULL);
    free(p);
    if (!*re) {
        PCRE2_UCHAR msg[120];
        pcre2_get_error_message(e, msg, sizeof msg);
        return tj_fail(c, 2, "%s: the regex does not compile: %s", what, (char *)msg);
    }
    (void)pcre2_jit_compile(*re, PCRE2_JIT_COMPLETE); /* the interpreter otherwise */
    return 0;
}

/* ---- normalizers --------------------------------------------------------------------- */

int tj_read_norm(tokjson *t, json_t *n, int depth, const tj_ctx *c) {
    if (!n || json_is_null(n)) return 0;
    const char *type = tj_get_str(n, "type");
    if (!json_is_object(n) || !type) return tj_fail(c, 2, "a normalizer has no type");
    if (strcmp(type, "Sequence") == 0) {
        json_t *l = json_object_get(n, "normalizers");
        if (!json_is_array(l) || depth > 4) return tj_fail(c, 2, "normalizer Sequence: no list");
        for (size_t i = 0; i < json_array_size(l); i++) {
            int rc = tj_read_norm(t, json_array_get(l, i), depth + 1, c);
            if (rc) return rc;
        }
        return 0;
    }
    if (t->n_norm == TJ_MAX_STEPS) return tj_fail(c, 2, "more than %d normalizers", TJ_MAX_STEPS);
    tj_norm *s = &t->norm[t->n_norm];
    static const char *const names[] = {"NFC",          "NFD",        "NFKC",      "NFKD",
                                        "Prepend",      "Replace",    "Lowercase", "BertNormalizer",
                                        "StripAccents", "Precompiled"};
    int k = 0;
    while (k < 10 && strcmp(type, names[k]) != 0) k++;
    if (k == 10) return tj_fail(c, 2, "normalizer \"%s\" is not supported", type);
    s->kind = (enum tj_norm_kind)k;
    t->n_norm++;
    if (s->kind == TJ_BERT_NORM) {
        s->clean_text = tj_get_bool(n, "clean_text", 1);
        s->chinese = tj_get_bool(n, "handle_chinese_chars", 1);
        s->lowercase = tj_get_bool(n, "lowercase", 1);
        s->strip_accents = tj_get_bool(n, "strip_accents", -2); /* null: as lowercase */
        if (s->strip_accents == -2) s->strip_accents = s->lowercase;
        if (s->clean_text < 0 || s->chinese < 0 || s->lowercase < 0 || s->strip_accents < 0)
            return tj_fail(c, 2, "normalizer BertNormalizer: a flag is not true or false");
    }
    if (s->kind == TJ_PREPEND || s->kind == TJ_REPLACE) {
        const char *txt = tj_get_str(n, s->kind == TJ_PREPEND ? "prepend" : "content");
        if (!txt) return tj_fail(c, 2, "normalizer %s: no string", type);
        if (!(s->text = strdup(txt))) return tj_fail(c, 1, "out of memory");
    }
    if (s->kind == TJ_PRECOMPILED) return tj_read_precompiled(s, n, c);
    if (s->kind == TJ_REPLACE)
        return compile_pattern(json_object_get(n, "pattern"), &s->re, &s->pattern,
                               "normalizer Replace", c);
    return 0;
}

/* ---- pre-tokenizers ------------------------------------------------------------------ */

static int read_behavior(tj_pre *s, json_t *p, const char *what, const tj_ctx *c) {
    const char *b = tj_get_str(p, "behavior");
    static const char *const names[] = {"Isolated", "Removed", "MergedWithPrevious",
                                        "MergedWithNext"};
    int k = 0;
    while (b && k < 4 && strcmp(b, names[k]) != 0) k++;
    if (!b || k == 4)
        return tj_fail(c, 2, "pre-tokenizer %s: behavior \"%s\" is not supported", what,
                       b ? b : "");
    s->behavior = (enum tj_behavior)k;
    return 0;
}

static int read_split(tj_pre *s, json_t *p, const tj_ctx *c) {
    int rc = read_behavior(s, p, "Split", c);
    if (rc) return rc;
    if ((s->invert = tj_get_bool(p, "invert", 0)) < 0)
        return tj_fail(c, 2, "pre-tokenizer Split: invert is not true or false");
    return compile_pattern(json_object_get(p, "pattern"), &s->re, NULL, "pre-tokenizer Split", c);
}

static int read_metaspace(tj_pre *s, json_t *p, const tj_ctx *c) {
    const char *rep = tj_get_str(p, "replacement");
    if (!rep) rep = "\xe2\x96\x81"; /* ▁ */
    size_t sub;
    if (strlen(rep) >= sizeof s->rep ||
        tj_utf8_char((const unsigned char *)rep, strlen(rep), &sub, NULL) != strlen(rep))
        return tj_fail(c, 2, "pre-tokenizer Metaspace: replacement is not one character");
    strcpy(s->rep, rep);
    const char *scheme = tj_get_str(p, "prepend_scheme");
    if (scheme) {
        if (strcmp(scheme, "always") == 0)
            s->add_prefix_space = 1;
        else if (strcmp(scheme, "first") == 0)
            s->add_prefix_space = 2;
        else if (strcmp(scheme, "never") == 0)
            s->add_prefix_space = 0;
        else
            return tj_fail(c, 2, "pre-tokenizer Metaspace: prepend_scheme \"%s\"", scheme);
    } else if ((s->add_prefix_space = tj_get_bool(p, "add_prefix_space", 1)) < 0) {
        return tj_fail(c, 2, "pre-tokenizer Metaspace: add_prefix_space is not true or false");
    }
    if ((s->split = tj_get_bool(p, "split", 1)) < 0)
        return tj_fail(c, 2, "pre-tokenizer Metaspace: split is not true or false");
    return 0;
}

int tj_read_pre(tokjson *t, json_t *p, int depth, const tj_ctx *c) {
    if (!p || json_is_null(p)) return 0;
    const char *type = tj_get_str(p, "type");
    if (!json_is_object(p) || !type) return tj_fail(c, 2, "a pre-tokenizer has no type");
    if (strcmp(type, "Sequence") == 0) {
        json_t *l = json_object_get(p, "pretokenizers");
        if (!json_is_array(l) || depth > 4) return tj_fail(c, 2, "pre-tokenizer Sequence: no list");
        for (size_t i = 0; i < json_array_size(l); i++) {
            int rc = tj_read_pre(t, json_array_get(l, i), depth + 1, c);
            if (rc) return rc;
        }
        return 0;
    }
    if (t->n_pre == TJ_MAX_STEPS) return tj_fail(c, 2, "more than %d pre-tokenizers", TJ_MAX_STEPS);
    tj_pre *s = &t->pre[t->n_pre++];
    if (strcmp(type, "Split") == 0) {
        s->kind = TJ_SPLIT;
        return read_split(s, p, c);
    }
    if (strcmp(type, "ByteLevel") == 0) {
        s->kind = TJ_BYTELEVEL;
        t->byte_level = 1;
        int use_regex = tj_get_bool(p, "use_regex", 1);
        if ((s->add_prefix_space = tj_get_bool(p, "add_prefix_space", 1)) < 0 || use_regex < 0)
            return tj_fail(c, 2, "pre-tokenizer ByteLevel: a flag is not true or false");
        if (!use_regex) return 0;
        json_t *pat = json_pack("{ss}", "Regex", gpt2_pattern);
        int rc = pat ? compile_pattern(pat, &s->re, NULL, "ByteLevel", c) : tj_fail(c, 1, "oom");
        json_decref(pat);
        return rc;
    }
    if (strcmp(type, "Metaspace") == 0) {
        if (t->n_pre != 1) return tj_fail(c, 2, "pre-tokenizer Metaspace after another one");
        s->kind = TJ_METASPACE;
        t->sp_decode = 1;
        return read_metaspace(s, p, c);
    }
    if (strcmp(type, "BertPreTokenizer") == 0 || strcmp(type, "WhitespaceSplit") == 0) {
        s->kind = TJ_WS_SPLIT;
        if (type[0] == 'W') return 0;
        if (t->n_pre == TJ_MAX_STEPS)
            return tj_fail(c, 2, "more than %d pre-tokenizers", TJ_MAX_STEPS);
        t->pre[t->n_pre++].kind = TJ_PUNCT; /* then each punctuation character alone */
        return 0;
    }
    if (strcmp(type, "Punctuation") == 0) {
        s->kind = TJ_PUNCT;
        return tj_get_str(p, "behavior") ? read_behavior(s, p, "Punctuation", c) : 0;
    }
    if (strcmp(type, "Digits") == 0) {
        s->kind = TJ_DIGITS;
        if ((s->individual = tj_get_bool(p, "individual_digits", 0)) < 0)
            return tj_fail(c, 2, "pre-tokenizer Digits: individual_digits is not true or false");
        return 0;
    }
    return tj_fail(c, 2, "pre-tokenizer \"%s\" is not supported", type);
}

/* ---- post-processor, decoder ----------------------------------------------------------- */

static int post_add(tokjson *t, int before, json_int_t id, const tj_ctx *c) {
    if (id < 0 || id >= t->n_ids)
        return tj_fail(c, 2, "post_processor: id %lld is out of range 0..%d", (long long)id,
                       t->n_ids - 1);
    int *n = before ? &t->n_before : &t->n_after;
    if (*n == TJ_MAX_POST) return tj_fail(c, 2, "post_processor: too many tokens");
    (before ? t->post_before : t->post_after)[(*n)++] = (int)id;
    return 0;
}

static int read_template(tokjson *t, json_t *p, const tj_ctx *c) {
    json_t *single = json_object_get(p, "single"), *specials = json_object_get(p, "special_tokens");
    if (!json_is_array(single))
        return tj_fail(c, 2, "post_processor TemplateProcessing: no single");
    int seen_a = 0;
    for (size_t i = 0; i < json_array_size(single); i++) {
        json_t *e = json_array_get(single, i), *sp = json_object_get(e, "SpecialToken");
        if (json_object_get(e, "Sequence")) {
            seen_a = 1;
            continue;
        }
        const char *name = tj_get_str(sp, "id");
        json_t *ids = json_object_get(json_object_get(specials, name ? name : ""), "ids");
        if (!name || !json_is_array(ids))
            return tj_fail(c, 2, "post_processor: template piece %zu is not a known token", i);
        for (size_t k = 0; k < json_array_size(ids); k++) {
            json_t *id = json_array_get(ids, k);
            if (!json_is_integer(id))
                return tj_fail(c, 2, "post_processor: an id is not an integer");
            int rc = post_add(t, !seen_a, json_integer_value(id), c);
            if (rc) return rc;
        }
    }
    return 0;
}

int tj_read_post(tokjson *t, json_t *p, int depth, const tj_ctx *c) {
    if (!p || json_is_null(p)) return 0;
    const char *type = tj_get_str(p, "type");
    if (!json_is_object(p) || !type) return tj_fail(c, 2, "the post_processor has no type");
    if (strcmp(type, "Sequence") == 0) {
        json_t *l = json_object_get(p, "processors");
        if (!json_is_array(l) || depth > 4)
            return tj_fail(c, 2, "post_processor Sequence: no list");
        for (size_t i = 0; i < json_array_size(l); i++) {
            int rc = tj_read_post(t, json_array_get(l, i), depth + 1, c);
            if (rc) return rc;
        }
        return 0;
    }
    if (strcmp(type, "ByteLevel") == 0) return 0; /* offsets only */
    if (strcmp(type, "TemplateProcessing") == 0) return read_template(t, p, c);
    if (strcmp(type, "RobertaProcessing") == 0 || strcmp(type, "BertProcessing") == 0) {
        json_t *cls = json_object_get(p, "cls"), *sep = json_object_get(p, "sep");
        if (!json_is_integer(json_array_get(cls, 1)) || !json_is_integer(json_array_get(sep, 1)))
            return tj_fail(c, 2, "post_processor %s: cls or sep is not [token, id]", type);
        int rc = post_add(t, 1, json_integer_value(json_array_get(cls, 1)), c);
        return rc ? rc : post_add(t, 0, json_integer_value(json_array_get(sep, 1)), c);
    }
    return tj_fail(c, 2, "post_processor \"%s\" is not supported", type);
}

/* labels: a decoder that turns "▁" into a space or <0xNN> into bytes */
void tj_read_decoder(tokjson *t, json_t *d) {
    const char *type = tj_get_str(d, "type");
    if (!type) return;
    if (strcmp(type, "ByteFallback") == 0 || strcmp(type, "Metaspace") == 0) t->sp_decode = 1;
    if (strcmp(type, "Replace") == 0 && tj_get_str(d, "content") &&
        strcmp(tj_get_str(d, "content"), " ") == 0)
        t->sp_decode = 1;
    json_t *l = json_object_get(d, "decoders");
    for (size_t i = 0; json_is_array(l) && i < json_array_size(l); i++)
        tj_read_decoder(t, json_array_get(l, i));
}
