/* bpe.c: GPT-2's byte-level BPE (see bpe.h). vocab.json through jansson, the
 * pre-tokenizer through PCRE2 (JIT when it is available), two open-addressing hash
 * tables: token bytes -> id, and (left id, right id) -> (rank, merged id). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "bpe.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BPE_MAX_FILE (64u << 20) /* either file; GPT-2's are 1.0 and 0.5 MiB */
#define BPE_MAX_VOCAB 65536      /* ids stay well inside int, the view's limits */

/* GPT-2's pattern, with three changes so that PCRE2 10.42 splits exactly as Python's
 * `regex` module (which OpenAI's encoder.py and Hugging Face's GPT2Tokenizer use):
 *  - \s spelt out as the regex module's set (Unicode White_Space: \t \n \v \f \r,
 *    space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
 *    U+3000). PCRE2's \s also matches U+180E (Mongolian vowel separator, a format
 *    character since Unicode 6.3), which regex puts in [^\s\p{L}\p{N}].
 *  - \p{L} and \p{N} widened by the letters and digits Unicode 15.0 added (Kawi, Nag
 *    Mundari, CJK extension H, ...): regex 2022+ knows them, PCRE2 10.42 (Unicode 14)
 *    does not; with a newer PCRE2 the extra ranges are simply redundant.
 * The alternatives, their order and the lookahead are GPT-2's. */
#define WS                                                                                         \
    "\\t\\n\\x0b\\x0c\\r "                                                                         \
    "\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"
#define L15                                                                                        \
    "\\x{1123f}-\\x{11240}\\x{11f02}\\x{11f04}-\\x{11f10}\\x{11f12}-\\x{11f33}\\x{1342f}"          \
    "\\x{13441}-\\x{13446}\\x{1b132}\\x{1b155}\\x{1df25}-\\x{1df2a}\\x{1e030}-\\x{1e06d}"          \
    "\\x{1e4d0}-\\x{1e4eb}\\x{2b739}\\x{31350}-\\x{323af}"
#define N15 "\\x{11f50}-\\x{11f59}\\x{1d2c0}-\\x{1d2d3}\\x{1e4f0}-\\x{1e4f9}"
static const char bpe_pattern[] = "'s|'t|'re|'ve|'m|'ll|'d"
                                  "| ?[\\p{L}" L15 "]+"
                                  "| ?[\\p{N}" N15 "]+"
                                  "| ?[^" WS "\\p{L}" L15 "\\p{N}" N15 "]+"
                                  "|[" WS "]+(?![^" WS "])"
                                  "|[" WS "]+";

struct bpe {
    int n;               /* vocabulary size */
    uint32_t *off;       /* n + 1 offsets into pool: token id's bytes */
    unsigned char *pool; /* every token's bytes, one after another */
    int32_t *vslot;      /* vocab hash: ids, -1 empty; vmask + 1 slots */
    size_t vmask;
    uint64_t *mkey;   /* merge hash: (left << 32 | right) + 1, 0 empty */
    int32_t *mrank;   /* its rank (line order; a repeated pair keeps the last) */
    int32_t *mresult; /* the merged token's id */
    size_t mmask;     /* mmask + 1 slots */
    int byte_id[256]; /* the single-byte tokens */
    pcre2_code *re;
};

/* ---- the byte-to-unicode table ---------------------------------------------------- */

/* GPT-2's table: bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand for the code point
 * of the same value; the other 68 get U+0100, U+0101, ... in byte order. */
static int printable(unsigned b) {
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
}
/* The 68 others in closed form (no table to fill, so nothing shared between
 * threads): 0x00..0x20 -> U+0100..U+0120, 0x7F..0xA0 -> U+0121..U+0142, 0xAD -> U+0143. */
static unsigned byte_to_cp(unsigned b) {
    if (printable(b)) return b;
    if (b <= 0x20) return 256 + b;
    if (b <= 0xa0) return b + 162;
    return 323; /* 0xAD */
}
/* The byte a table code point stands for, or -1. */
static int cp_to_byte(unsigned cp) {
    if (cp < 256) return printable(cp) ? (int)cp : -1;
    if (cp <= 288) return (int)cp - 256;
    if (cp <= 322) return (int)cp - 162;
    return cp == 323 ? 0xad : -1;
}

/* ---- UTF-8 ------------------------------------------------------------------------- */

size_t bpe_utf8_char(const unsigned char *s, size_t n, size_t *sub, unsigned *cp_out) {
    unsigned c = s[0], need, lo = 0x80, hi = 0xbf, cp;
    if (sub) *sub = 1;
    if (c < 0x80) {
        if (cp_out) *cp_out = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        need = 1, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 2, cp = c & 0x0f;
        if (c == 0xe0) lo = 0xa0; /* no overlongs */
        if (c == 0xed) hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3, cp = c & 0x07;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f; /* nothing past U+10FFFF */
    } else
        return 0;
    for (unsigned i = 1; i <= need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) {
            if (sub) *sub = i;
            return 0;
        }
        cp = cp << 6 | (s[i] & 0x3f);
        lo = 0x80, hi = 0xbf;
    }
    if (cp_out) *cp_out = cp;
    return need + 1;
}

static int put_utf8(unsigned char *o, unsigned cp) {
    if (cp < 0x80) return o[0] = (unsigned char)cp, 1;
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    o[0] = (unsigned char)(0xe0 | cp >> 12), o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp & 0x3f));
    return 3;
}

/* A table-encoded string (vocab key, half of a merge line) as bytes into out (room
 * for len bytes: each character is at least one); its byte count, or -1 when a
 * character is not in the table (or not UTF-8). */
static long table_decode(const char *s, size_t len, unsigned char *out) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k = 0;
    while (i < len) {
        unsigned cp;
        size_t l = bpe_utf8_char(u + i, len - i, NULL, &cp);
        int b = l ? cp_to_byte(cp) : -1;
        if (b < 0) return -1;
        out[k++] = (unsigned char)b;
        i += l;
    }
    return (long)k;
}

/* ---- hashing ----------------------------------------------------------------------- */

static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}
static uint64_t hash_pair(uint64_t k) {
    k ^= k >> 33, k *= 0xff51afd7ed558ccdull, k ^= k >> 33; /* murmur3's finalizer */
    return k;
}

static int vocab_find(const bpe *b, const unsigned char *s, size_t n) {
    size_t i = hash_bytes(s, n) & b->vmask;
    for (;; i = (i + 1) & b->vmask) {
        int32_t id = b->vslot[i];
        if (id < 0) return -1;
        if (b->off[id + 1] - b->off[id] == n && memcmp(b->pool + b->off[id], s, n) == 0) return id;
    }
}

static size_t merge_slot(const bpe *b, int left, int right, uint64_t *key) {
    *key = ((uint64_t)(uint32_t)left << 32 | (uint32_t)right) + 1;
    size_t i = hash_pair(*key) & b->mmask;
    while (b->mkey[i] && b->mkey[i] != *key) i = (i + 1) & b->mmask;
    return i;
}

/* ---- loading ----------------------------------------------------------------------- */

/* How many of the first n bytes of s end on a character boundary: n, less a last
 * character that was cut short (the bytes of the text, as they are). */
static size_t utf8_whole(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = n;
    while (i > 0 && (u[i - 1] & 0xc0) == 0x80 && n - i < 3) i--; /* continuation bytes */
    if (i == 0 || u[i - 1] < 0xc0) return n;                     /* none cut: ASCII or stray */
    unsigned c = u[i - 1];
    size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    return n - (i - 1) >= want ? n : i - 1;
}

/* A vocab key for a message: at most 40 bytes, cut between characters. */
static const char *key_shown(const char *key, size_t klen, char out[48]) {
    size_t n = klen < 40 ? klen : 40;
    memcpy(out, key, n);
    n = utf8_whole(out, n);
    out[n] = '\0'; /* a NUL inside the key ends it here, which is fine for a message */
    return out;
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        /* one line, whatever a key or a line of the file held */
        size_t n = 0;
        for (char *c = err; *c; c++, n++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        /* and no character cut in two where vsnprintf ran out of room */
        if (n == errlen - 1) err[utf8_whole(err, n)] = '\0';
    }
    return rc;
}

void bpe_free(bpe *b) {
    if (!b) return;
    free(b->off);
    free(b->pool);
    free(b->vslot);
    free(b->mkey);
    free(b->mrank);
    free(b->mresult);
    if (b->re) pcre2_code_free(b->re);
    free(b);
}

static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

static int parse_vocab(bpe *b, const char *vocab, size_t vocab_len, const char *path, char *err,
                       size_t errlen) {
    if (vocab_len > BPE_MAX_FILE)
        return fail(err, errlen, 2, "%s: larger than %u MiB", path, BPE_MAX_FILE >> 20);
    json_error_t je;
    json_t *root = json_loadb(vocab ? vocab : "", vocab_len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return fail(err, errlen, 2, "%s: %s (line %d)", path, je.text, je.line);
    int rc = 0;
    if (!json_is_object(root)) {
        rc = fail(err, errlen, 2, "%s: not a JSON object of token -> id", path);
        goto out;
    }
    size_t n = json_object_size(root);
    if (n < 256 || n > BPE_MAX_VOCAB) {
        rc = fail(err, errlen, 2, "%s: %zu tokens, a byte-level vocabulary has 256 to %d", path, n,
                  BPE_MAX_VOCAB);
        goto out;
    }
    b->n = (int)n;
    /* keys first: their byte lengths give the pool's size (a key's bytes never
     * outnumber its UTF-8 bytes) */
    size_t total = 0;
    const char *key;
    size_t klen;
    json_t *val;
    json_object_keylen_foreach(root, key, klen, val) total += klen;
    b->off = calloc(n + 1, sizeof *b->off);
    b->pool = malloc(total ? total : 1);
    int32_t *len_of = calloc(n, sizeof *len_of); /* -1 + length + 1: 0 means unseen */
    unsigned char *tmp = malloc(total ? total : 1);
    long *pos = calloc(n, sizeof *pos);
    if (!b->off || !b->pool || !len_of || !tmp || !pos || total > UINT32_MAX) {
        rc = fail(err, errlen, 2, "%s: out of memory", path);
        goto done;
    }
    size_t at = 0;
    char shown[48];
    json_object_keylen_foreach(root, key, klen, val) {
        long nb = klen ? table_decode(key, klen, tmp + at) : -1;
        if (nb < 0) {
            rc = fail(err, errlen, 2, "%s: token \"%s\" is not made of byte-to-unicode characters",
                      path, key_shown(key, klen, shown));
            goto done;
        }
        if (!json_is_integer(val) || json_integer_value(val) < 0 ||
            json_integer_value(val) >= (json_int_t)n) {
            rc = fail(err, errlen, 2, "%s: token \"%s\": id must be an integer 0..%zu", path,
                      key_shown(key, klen, shown), n - 1);
            goto done;
        }
        int id = (int)json_integer_value(val);
        if (len_of[id]) {
            rc = fail(err, errlen, 2, "%s: id %d given to two tokens (\"%s\")", path, id,
                      key_shown(key, klen, shown));
            goto done;
        }
        len_of[id] = (int32_t)nb + 1;
        pos[id] = (long)at;
        at += (size_t)nb;
    }
    /* every id was seen once: n keys, n distinct ids in 0..n-1 */
    uint32_t o = 0;
    for (size_t id = 0; id < n; id++) {
        b->off[id] = o;
        memcpy(b->pool + o, tmp + pos[id], (size_t)(len_of[id] - 1));
        o += (uint32_t)(len_of[id] - 1);
    }
    b->off[n] = o;
    b->vmask = pow2_at_least(2 * n) - 1;
    b->vslot = malloc((b->vmask + 1) * sizeof *b->vslot);
    if (!b->vslot) {
        rc = fail(err, errlen, 2, "%s: out of memory", path);
        goto done;
    }
    memset(b->vslot, 0xff, (b->vmask + 1) * sizeof *b->vslot);
    for (int id = 0; id < (int)n; id++) {
        size_t l = b->off[id + 1] - b->off[id];
        size_t i = hash_bytes(b->pool + b->off[id], l) & b->vmask;
        while (b->vslot[i] >= 0) i = (i + 1) & b->vmask;
        b->vslot[i] = id; /* keys are distinct strings, so distinct byte strings */
    }
    for (unsigned c = 0; c < 256; c++) {
        unsigned char by = (unsigned char)c;
        b->byte_id[c] = vocab_find(b, &by, 1);
        if (b->byte_id[c] < 0) {
            unsigned char u[4];
            int k = put_utf8(u, byte_to_cp(c));
            rc = fail(err, errlen, 2, "%s: no token for byte 0x%02x (\"%.*s\")", path, c, k, u);
            goto done;
        }
    }
done:
    free(len_of);
    free(tmp);
    free(pos);
out:
    json_decref(root);
    return rc;
}

static int parse_merges(bpe *b, const char *m, size_t len, const char *path, char *err,
                        size_t errlen) {
    if (len > BPE_MAX_FILE)
        return fail(err, errlen, 2, "%s: larger than %u MiB", path, BPE_MAX_FILE >> 20);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += m[i] == '\n';
    b->mmask = pow2_at_least(2 * lines) - 1;
    b->mkey = calloc(b->mmask + 1, sizeof *b->mkey);
    b->mrank = malloc((b->mmask + 1) * sizeof *b->mrank);
    b->mresult = malloc((b->mmask + 1) * sizeof *b->mresult);
    unsigned char *buf = malloc(len + 1);
    if (!b->mkey || !b->mrank || !b->mresult || !buf) {
        free(buf);
        return fail(err, errlen, 2, "%s: out of memory", path);
    }
    int rc = 0;
    int32_t rank = 0;
    size_t at = 0;
    for (size_t line = 1; at < len; line++) {
        const char *s = m + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t l = nl ? (size_t)(nl - s) : len - at;
        at += l + (nl != NULL);
        if (line == 1 && l >= 8 && memcmp(s, "#version", 8) == 0) continue;
        if (l == 0) {
            /* blank lines are fine at the end only */
            size_t j = at;
            while (j < len && m[j] == '\n') j++;
            if (j == len) break;
            rc = fail(err, errlen, 2, "%s: blank line (line %zu)", path, line);
            break;
        }
        const char *sp = memchr(s, ' ', l);
        if (!sp || sp == s || sp == s + l - 1 || memchr(sp + 1, ' ', (size_t)(s + l - sp - 1))) {
            rc = fail(err, errlen, 2, "%s: not \"left right\" with one space (line %zu)", path,
                      line);
            break;
        }
        size_t la = (size_t)(sp - s), lb = l - la - 1;
        long na = table_decode(s, la, buf), nb = table_decode(sp + 1, lb, buf + (na < 0 ? 0 : na));
        if (na < 0 || nb < 0) {
            rc = fail(err, errlen, 2, "%s: not byte-to-unicode characters (line %zu)", path, line);
            break;
        }
        int ia = vocab_find(b, buf, (size_t)na), ib = vocab_find(b, buf + na, (size_t)nb);
        int iab = vocab_find(b, buf, (size_t)(na + nb));
        if (ia < 0 || ib < 0) {
            rc = fail(err, errlen, 2, "%s: \"%.*s\" is not in the vocabulary (line %zu)", path,
                      (int)(ia < 0 ? la : lb), ia < 0 ? s : sp + 1, line);
            break;
        }
        if (iab < 0) {
            rc = fail(err, errlen, 2,
                      "%s: the merge of \"%.*s\" is not in the vocabulary (line %zu)", path, (int)l,
                      s, line);
            break;
        }
        if (rank == INT32_MAX) {
            rc = fail(err, errlen, 2, "%s: too many merges (line %zu)", path, line);
            break;
        }
        uint64_t key;
        size_t slot = merge_slot(b, ia, ib, &key);
        b->mkey[slot] = key;
        b->mrank[slot] = rank++; /* as encoder.py's dict: a repeated pair keeps its last rank */
        b->mresult[slot] = iab;
    }
    free(buf);
    return rc;
}

int bpe_parse(bpe **out, const char *vocab, size_t vocab_len, const char *merges, size_t merges_len,
              const char *vocab_path, const char *merges_path, char *err, size_t errlen) {
    *out = NULL;
    if (err && errlen) err[0] = '\0';
    bpe *b = calloc(1, sizeof *b);
    if (!b) return fail(err, errlen, 2, "%s: out of memory", vocab_path);
    int rc = parse_vocab(b, vocab, vocab_len, vocab_path, err, errlen);
    if (!rc) rc = parse_merges(b, merges, merges_len, merges_path, err, errlen);
    if (!rc) {
        int e;
        PCRE2_SIZE eo;
        b->re = pcre2_compile((PCRE2_SPTR)bpe_pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                              &e, &eo, NULL);
        if (!b->re)
            rc = fail(err, errlen, 2, "%s: PCRE2 cannot compile the pattern (error %d)", vocab_path,
                      e);
        else
            (void)pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE); /* the interpreter otherwise */
    }
    if (rc) {
        bpe_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* Reads a whole file of at most BPE_MAX_FILE bytes: 0, 1 (cannot read), 2 (too big). */
static int read_file(const char *path, char **data, size_t *len, char *err, size_t errlen) {
    *data = NULL, *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, 1, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : fail(err, errlen, 1, "%s: out of memory", path);
    while (!rc) {
        if (n == cap) {
            if (cap > BPE_MAX_FILE) {
                rc = fail(err, errlen, 2, "%s: larger than %u MiB", path, BPE_MAX_FILE >> 20);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = fail(err, errlen, 1, "%s: out of memory", path);
                break;
            }
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = fail(err, errlen, 1, "%s: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!rc && n > BPE_MAX_FILE)
        rc = fail(err, errlen, 2, "%s: larger than %u MiB", path, BPE_MAX_FILE >> 20);
    if (rc) {
        free(buf);
        return rc;
    }
    *data = buf, *len = n;
    return 0;
}

int bpe_load(bpe **out, const char *vocab_path, const char *merges_path, char *err, size_t errlen) {
    *out = NULL;
    char *v, *m;
    size_t vl, ml;
    int rc = read_file(vocab_path, &v, &vl, err, errlen);
    if (rc) return rc;
    rc = read_file(merges_path, &m, &ml, err, errlen);
    if (rc) {
        free(v);
        return rc;
    }
    rc = bpe_parse(out, v, vl, m, ml, vocab_path, merges_path, err, errlen);
    free(v);
    free(m);
    return rc;
}

int bpe_vocab_size(const bpe *b) {
    return b ? b->n : 0;
}

/* ---- encoding ---------------------------------------------------------------------- */

/* The BPE of one piece: its bytes' tokens merged by rank, lowest first, every
 * occurrence of that pair left to right (encoder.py's loop), into sym (n ints). Returns
 * how many symbols are left. */
static int merge_piece(const bpe *b, const unsigned char *p, int n, int *sym) {
    for (int i = 0; i < n; i++) sym[i] = b->byte_id[p[i]];
    while (n > 1) {
        int32_t best = INT32_MAX, result = -1;
        int left = -1, right = -1;
        for (int i = 0; i + 1 < n; i++) {
            uint64_t key;
            size_t s = merge_slot(b, sym[i], sym[i + 1], &key);
            if (b->mkey[s] && b->mrank[s] < best)
                best = b->mrank[s], result = b->mresult[s], left = sym[i], right = sym[i + 1];
        }
        if (result < 0) break;
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (i + 1 < n && sym[i] == left && sym[i + 1] == right)
                sym[k++] = result, i++;
            else
                sym[k++] = sym[i];
        }
        n = k;
    }
    return n;
}

#ifndef BPE_HEAP_MIN
#define BPE_HEAP_MIN 64 /* pieces this long or longer go to merge_piece_heap */
#endif

/* The merge table's entry for the pair (left, right): its rank and result, or 0. */
static int merge_find(const bpe *b, int left, int right, int32_t *rank, int32_t *result) {
    uint64_t key;
    size_t s = merge_slot(b, left, right, &key);
    if (!b->mkey[s]) return 0;
    *rank = b->mrank[s], *result = b->mresult[s];
    return 1;
}

typedef struct {
    int32_t rank, pos; /* a pair's rank and its left symbol's node */
} hent;

static int hent_less(hent a, hent b) {
    return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos);
}
/* A 4-ary heap: a node's children share a cache line, and a long piece's heap is
 * many megabytes, so the misses are most of the cost. */
static void heap_push(hent *h, size_t *n, hent e) {
    size_t i = (*n)++;
    while (i > 0 && hent_less(e, h[(i - 1) / 4])) h[i] = h[(i - 1) / 4], i = (i - 1) / 4;
    h[i] = e;
}
static hent heap_pop(hent *h, size_t *n) {
    hent top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1, best = c;
        if (c >= *n) break;
        for (size_t k = c + 1; k < c + 4 && k < *n; k++)
            if (hent_less(h[k], h[best])) best = k;
        if (!hent_less(h[best], last)) break;
        h[i] = h[best], i = best;
    }
    if (*n) h[i] = last;
    return top;
}

/* merge_piece for long pieces (a pasted blob without spaces, a long number): the same
 * result in O(n log n) instead of O(n^2). Symbols form a linked list of nodes (a node
 * keeps its first byte's index, so node order is text order); a heap holds every
 * adjacent pair that has a rank, by (rank, node), plus stale entries, which are
 * checked on the way out. One round is encoder.py's: take every entry of the lowest
 * rank, left to right, merge where the pair is still there, and only then push the
 * pairs the merges made (their rank may be lower, but encoder.py finishes the round
 * first too). -1 when out of memory. */
static int merge_piece_heap(const bpe *b, const unsigned char *p, int n, int *sym) {
    int *nx = malloc((size_t)n * sizeof *nx), *pv = malloc((size_t)n * sizeof *pv);
    int *merged = malloc((size_t)n * sizeof *merged);
    hent *h = malloc(3 * (size_t)n * sizeof *h); /* n - 1 pairs, then 2 per merge */
    int k = -1;
    if (!nx || !pv || !merged || !h) goto out;
    size_t hn = 0;
    for (int i = 0; i < n; i++) sym[i] = b->byte_id[p[i]], nx[i] = i + 1, pv[i] = i - 1;
    int32_t rank, result;
    for (int i = 0; i + 1 < n; i++)
        if (merge_find(b, sym[i], sym[i + 1], &rank, &result)) heap_push(h, &hn, (hent){rank, i});
    while (hn > 0) {
        int32_t r = h[0].rank;
        int nm = 0;
        while (hn > 0 && h[0].rank == r) {
            int pos = heap_pop(h, &hn).pos, q = nx[pos];
            /* a rank names one pair, so the rank found is the check */
            if (sym[pos] < 0 || q >= n || !merge_find(b, sym[pos], sym[q], &rank, &result) ||
                rank != r)
                continue;
            sym[pos] = result, sym[q] = -1; /* q's node is gone */
            nx[pos] = nx[q];
            if (nx[q] < n) pv[nx[q]] = pos;
            merged[nm++] = pos;
        }
        for (int i = 0; i < nm; i++) {
            int m = merged[i];
            if (pv[m] >= 0 && merge_find(b, sym[pv[m]], sym[m], &rank, &result))
                heap_push(h, &hn, (hent){rank, pv[m]});
            if (nx[m] < n && merge_find(b, sym[m], sym[nx[m]], &rank, &result))
                heap_push(h, &hn, (hent){rank, m});
        }
    }
    k = 0;
    for (int i = 0; i < n; i = nx[i]) sym[k++] = sym[i]; /* node 0 is never merged away */
out:
    free(nx);
    free(pv);
    free(merged);
    free(h);
    return k;
}

/* text with every ill-formed subsequence replaced by U+FFFD (EF BF BD), into a new
 * buffer; NULL when the text is valid UTF-8 already (or out of memory: *oom). */
static unsigned char *sanitize(const unsigned char *t, size_t len, size_t *out_len, int *oom) {
    size_t i = 0;
    *oom = 0;
    while (i < len) {
        size_t l = bpe_utf8_char(t + i, len - i, NULL, NULL);
        if (!l) break;
        i += l;
    }
    if (i == len) return NULL;
    if (len > (SIZE_MAX - 3) / 3) return *oom = 1, NULL;
    unsigned char *o = malloc(3 * len);
    if (!o) return *oom = 1, NULL;
    memcpy(o, t, i);
    size_t k = i;
    while (i < len) {
        size_t sub, l = bpe_utf8_char(t + i, len - i, &sub, NULL);
        if (l) {
            memcpy(o + k, t + i, l), k += l, i += l;
        } else {
            o[k++] = 0xef, o[k++] = 0xbf, o[k++] = 0xbd;
            i += sub;
        }
    }
    *out_len = k;
    return o;
}

int bpe_encode(const bpe *b, const char *text, size_t len, int *ids, int max, int *replaced) {
    if (replaced) *replaced = 0;
    if (!b || (!text && len)) return -1;
    if (len == 0) return 0;
    if (len > INT_MAX / 3) return -1; /* the count must fit an int, U+FFFDs included */
    int oom;
    size_t n = len;
    unsigned char *fixed = sanitize((const unsigned char *)text, len, &n, &oom);
    if (oom) return -1;
    if (fixed && replaced) *replaced = 1;
    const unsigned char *s = fixed ? fixed : (const unsigned char *)text;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(b->re, NULL);
    int stack_sym[256], *sym = stack_sym, cap = 256;
    long count = 0;
    int rc = 0;
    size_t at = 0;
    while (md && at < n) {
        int r = pcre2_match(b->re, s, n, at, PCRE2_NO_UTF_CHECK, md, NULL);
        if (r < 0) { /* every character matches one alternative: only limits get here */
            rc = -1;
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t start = ov[0], end = ov[1];
        if (start != at || end <= start || end - start > INT_MAX) { /* cannot happen */
            rc = -1;
            break;
        }
        int pl = (int)(end - start);
        if (pl > cap) {
            int *ns = malloc((size_t)pl * sizeof *ns);
            if (!ns) {
                rc = -1;
                break;
            }
            if (sym != stack_sym) free(sym);
            sym = ns, cap = pl;
        }
        int k = pl >= BPE_HEAP_MIN ? merge_piece_heap(b, s + start, pl, sym)
                                   : merge_piece(b, s + start, pl, sym);
        if (k < 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < k; i++, count++)
            if (count < max && ids) ids[count] = sym[i];
        at = end;
    }
    if (!md) rc = -1;
    if (sym != stack_sym) free(sym);
    pcre2_match_data_free(md);
    free(fixed);
    return rc ? rc : (int)count;
}

const unsigned char *bpe_token_bytes(const bpe *b, int id, size_t *len) {
    if (!b || id < 0 || id >= b->n) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = b->off[id + 1] - b->off[id];
    return b->pool + b->off[id];
}

/* One character of a label: what to show for the code point cp at position i. */
static const char *label_sub(unsigned cp, size_t i) {
    if (cp == ' ') return i == 0 ? "\xe2\x90\xa3" : "\xc2\xb7"; /* ␣ or · */
    if (cp == '\n') return "\xe2\x86\xb5";                      /* ↵ */
    if (cp == '\t') return "\xe2\x86\x92";                      /* → */
    if (cp == 0x0b || cp == 0x0c || cp == '\r' || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
        (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
        cp == 0x205f || cp == 0x3000)
        return "\xc2\xb7"; /* · */
    return NULL;
}

void bpe_token_label(const bpe *b, int id, char *buf, size_t len) {
    if (!buf || len == 0) return;
    buf[0] = '\0';
    size_t n;
    const unsigned char *t = bpe_token_bytes(b, id, &n);
    if (t) bpe_bytes_label(t, n, buf, len);
}

void bpe_bytes_label(const unsigned char *t, size_t n, char *buf, size_t len) {
    if (!buf || len == 0) return;
    buf[0] = '\0';
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        char unit[16];
        unsigned cp;
        size_t l = bpe_utf8_char(t + i, n - i, NULL, &cp), ul;
        const char *sub = l ? label_sub(cp, i) : NULL;
        if (!l || (cp < 0x20 && !sub) || cp == 0x7f) {
            /* not a whole character, or a control character no font draws: hex */
            l = 1;
            ul = (size_t)snprintf(unit, sizeof unit, "<%02x>", t[i]);
        } else if (sub) {
            ul = strlen(sub);
            memcpy(unit, sub, ul);
        } else {
            ul = l;
            memcpy(unit, t + i, l);
        }
        if (k + ul >= len) break; /* whole units only, room for the NUL */
        memcpy(buf + k, unit, ul);
        k += ul;
        i += l;
    }
    buf[k] = '\0';
}
