/* tokjson.c: reads a Hugging Face tokenizer.json (see tokjson.h) into a tokjson: the
 * model's vocabulary and merges (BPE) in two hash tables, WordPiece's fields, the added
 * tokens; the normalizer, pre-tokenizer and post-processor are tokjson_steps.c's to read.
 * Everything the file says is checked; encoding is tokjson_encode.c's, labels
 * tokjson_label.c's. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokjson_read.h"
#include "tokjson_text.h"

/* a token for a message: at most 40 bytes, cut between characters */
static const char *shown(const char *s, char out[48]) {
    size_t n = strlen(s), k = 0;
    while (k < n && k < 40) {
        size_t sub, l = tj_utf8_char((const unsigned char *)s + k, n - k, &sub, NULL);
        if (!l || k + l > 40) break;
        k += l;
    }
    memcpy(out, s, k);
    out[k] = '\0';
    return out;
}

/* ---- hashing ------------------------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}
static uint64_t hash_pair(uint64_t k) {
    k ^= k >> 33, k *= 0xff51afd7ed558ccdull, k ^= k >> 33; /* murmur3's finalizer */
    return k;
}
static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

int tj_vocab_find(const tokjson *t, const char *s, size_t n) {
    size_t i = hash_bytes(s, n) & t->vmask;
    for (;; i = (i + 1) & t->vmask) {
        int32_t id = t->vslot[i];
        if (id < 0) return -1;
        if (t->slen[id] == n && memcmp(t->str[id], s, n) == 0) return id;
    }
}

static size_t merge_slot(const tokjson *t, int left, int right, uint64_t *key) {
    *key = ((uint64_t)(uint32_t)left << 32 | (uint32_t)right) + 1;
    size_t i = hash_pair(*key) & t->mmask;
    while (t->mkey[i] && t->mkey[i] != *key) i = (i + 1) & t->mmask;
    return i;
}

int tj_merge_find(const tokjson *t, int left, int right, int32_t *rank, int32_t *result) {
    uint64_t key;
    size_t s = merge_slot(t, left, right, &key);
    if (!t->mkey[s]) return 0;
    *rank = t->mrank[s], *result = t->mresult[s];
    return 1;
}

/* ---- the model: vocabulary, merges ----------------------------------------------------- */

static int read_vocab(tokjson *t, json_t *vocab, const tj_ctx *c) {
    if (!json_is_object(vocab)) return tj_fail(c, 2, "model.vocab is not an object");
    const char *key;
    size_t klen;
    json_t *val;
    char sh[48];
    json_object_keylen_foreach(vocab, key, klen, val) {
        (void)klen;
        if (!json_is_integer(val) || json_integer_value(val) < 0 ||
            json_integer_value(val) >= TJ_MAX_ID)
            return tj_fail(c, 2, "token \"%s\": id is not an integer 0..%d", shown(key, sh),
                           TJ_MAX_ID - 1);
        if (json_integer_value(val) >= t->n_ids) t->n_ids = (int)json_integer_value(val) + 1;
    }
    return 0;
}

static int fill_vocab(tokjson *t, json_t *vocab, const tj_ctx *c) {
    size_t n = json_object_size(vocab);
    t->vmask = pow2_at_least(2 * n + 2) - 1;
    t->vslot = malloc((t->vmask + 1) * sizeof *t->vslot);
    if (!t->vslot) return tj_fail(c, 1, "out of memory");
    memset(t->vslot, 0xff, (t->vmask + 1) * sizeof *t->vslot);
    const char *key;
    size_t klen;
    json_t *val;
    char sh[48];
    json_object_keylen_foreach(vocab, key, klen, val) {
        int id = (int)json_integer_value(val);
        if (t->str[id])
            return tj_fail(c, 2, "id %d given to two tokens (\"%s\")", id, shown(key, sh));
        if (!(t->str[id] = tj_dup(key, klen))) return tj_fail(c, 1, "out of memory");
        t->slen[id] = (uint32_t)klen;
        if (klen > (size_t)t->max_len) t->max_len = klen > INT32_MAX ? INT32_MAX : (int)klen;
        size_t i = hash_bytes(key, klen) & t->vmask;
        while (t->vslot[i] >= 0) i = (i + 1) & t->vmask;
        t->vslot[i] = id; /* keys are distinct (jansson refuses duplicates) */
    }
    return 0;
}

/* one merge's two halves: "a b" (exactly one space) or ["a", "b"] */
static int merge_halves(json_t *m, const char **a, size_t *la, const char **b, size_t *lb) {
    if (json_is_string(m)) {
        const char *s = json_string_value(m);
        size_t l = json_string_length(m);
        const char *sp = memchr(s, ' ', l);
        if (!sp || memchr(sp + 1, ' ', l - (size_t)(sp - s) - 1)) return -1;
        *a = s, *la = (size_t)(sp - s), *b = sp + 1, *lb = l - *la - 1;
        return 0;
    }
    if (!json_is_array(m) || json_array_size(m) != 2 || !json_is_string(json_array_get(m, 0)) ||
        !json_is_string(json_array_get(m, 1)))
        return -1;
    *a = json_string_value(json_array_get(m, 0)), *la = json_string_length(json_array_get(m, 0));
    *b = json_string_value(json_array_get(m, 1)), *lb = json_string_length(json_array_get(m, 1));
    return 0;
}

static int read_merges(tokjson *t, json_t *merges, const tj_ctx *c) {
    if (!merges || json_is_null(merges))
        merges = NULL;
    else if (!json_is_array(merges))
        return tj_fail(c, 2, "model.merges is not a list");
    size_t n = merges ? json_array_size(merges) : 0;
    if (n >= INT32_MAX) return tj_fail(c, 2, "too many merges");
    t->mmask = pow2_at_least(2 * n + 2) - 1;
    t->mkey = calloc(t->mmask + 1, sizeof *t->mkey);
    t->mrank = malloc((t->mmask + 1) * sizeof *t->mrank);
    t->mresult = malloc((t->mmask + 1) * sizeof *t->mresult);
    size_t cap = 256;
    char *buf = malloc(cap), sh[48];
    if (!t->mkey || !t->mrank || !t->mresult || !buf) {
        free(buf);
        return tj_fail(c, 1, "out of memory");
    }
    size_t plen = t->prefix ? strlen(t->prefix) : 0;
    int rc = 0;
    for (size_t r = 0; r < n && !rc; r++) {
        const char *a, *b;
        size_t la, lb;
        if (merge_halves(json_array_get(merges, r), &a, &la, &b, &lb) != 0) {
            rc = tj_fail(c, 2, "merge %zu is neither \"a b\" nor [\"a\", \"b\"]", r);
            break;
        }
        int ia = tj_vocab_find(t, a, la), ib = tj_vocab_find(t, b, lb);
        if (ia < 0 || ib < 0) {
            char *bad = tj_dup(ia < 0 ? a : b, ia < 0 ? la : lb);
            rc = tj_fail(c, 2, "merge %zu names \"%s\", which is not in the vocabulary", r,
                         bad ? shown(bad, sh) : "?");
            free(bad);
            break;
        }
        /* the merged token: a then b, less b's continuing_subword_prefix */
        size_t skip = plen && lb >= plen && memcmp(b, t->prefix, plen) == 0 ? plen : 0;
        if (la + lb + 1 > cap) {
            char *nb = realloc(buf, cap = la + lb + 1);
            if (!nb) {
                rc = tj_fail(c, 1, "out of memory");
                break;
            }
            buf = nb;
        }
        memcpy(buf, a, la), memcpy(buf + la, b + skip, lb - skip);
        buf[la + lb - skip] = '\0';
        int iab = tj_vocab_find(t, buf, la + lb - skip);
        if (iab < 0) {
            rc = tj_fail(c, 2, "merge %zu makes \"%s\", which is not in the vocabulary", r,
                         shown(buf, sh));
            break;
        }
        uint64_t key;
        size_t slot = merge_slot(t, ia, ib, &key);
        t->mkey[slot] = key;
        t->mrank[slot] = (int32_t)r; /* a repeated pair keeps its last rank, as HF's map */
        t->mresult[slot] = iab;
    }
    free(buf);
    return rc;
}

/* WordPiece's own fields: its "##" and the longest word it splits */
static int read_wordpiece(tokjson *t, json_t *model, const tj_ctx *c) {
    json_t *m = json_object_get(model, "max_input_chars_per_word");
    t->max_chars = 100;
    if (m && !json_is_null(m)) {
        if (!json_is_integer(m) || json_integer_value(m) < 0 || json_integer_value(m) > INT32_MAX)
            return tj_fail(c, 2, "model.max_input_chars_per_word is not a count");
        t->max_chars = (int)json_integer_value(m);
    }
    json_t *p = json_object_get(model, "continuing_subword_prefix");
    const char *prefix =
        p && !json_is_null(p) ? tj_get_str(model, "continuing_subword_prefix") : "##";
    if (!prefix) return tj_fail(c, 2, "model.continuing_subword_prefix is not a string");
    if (!json_is_string(json_object_get(model, "unk_token")))
        return tj_fail(c, 2, "a WordPiece model needs an unk_token");
    return *prefix && !(t->prefix = strdup(prefix)) ? tj_fail(c, 1, "out of memory") : 0;
}

/* Unigram's [piece, score] list, rewritten in model as {piece: id} for the tables the
 * other models share; its scores, unk_id (required: Hugging Face fails on a character
 * no piece covers without one) and byte_fallback */
static int read_unigram(tokjson *t, json_t *model, const tj_ctx *c) {
    json_t *vocab = json_object_get(model, "vocab");
    if (!json_is_array(vocab)) return tj_fail(c, 2, "a Unigram model.vocab is not a list");
    const size_t n = json_array_size(vocab);
    if (n >= TJ_MAX_ID) return tj_fail(c, 2, "more than %d pieces", TJ_MAX_ID - 1);
    json_t *ids = json_object();
    t->score = malloc((n ? n : 1) * sizeof *t->score);
    if (!ids || !t->score) {
        json_decref(ids);
        return tj_fail(c, 1, "out of memory");
    }
    t->min_score = 0.0;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(vocab, i), *s = json_array_get(e, 0), *v = json_array_get(e, 1);
        int bad = !json_is_array(e) || json_array_size(e) != 2 || !json_is_string(s) ||
                  !json_is_number(v);
        if (!bad && json_object_getn(ids, json_string_value(s), json_string_length(s))) {
            json_decref(ids);
            return tj_fail(c, 2, "model.vocab: piece %zu appears twice", i);
        }
        if (bad || json_object_setn_new(ids, json_string_value(s), json_string_length(s),
                                        json_integer((json_int_t)i)) != 0) {
            json_decref(ids);
            return bad ? tj_fail(c, 2, "model.vocab[%zu] is not [piece, score]", i)
                       : tj_fail(c, 1, "out of memory");
        }
        t->score[i] = json_number_value(v);
        if (i == 0 || t->score[i] < t->min_score) t->min_score = t->score[i];
    }
    /* the shared tables read {piece: id} */
    if (json_object_set_new(model, "vocab", ids) != 0) return tj_fail(c, 1, "out of memory");
    t->n_ids = (int)n;
    t->unigram = t->fuse_unk = 1;
    json_t *u = json_object_get(model, "unk_id");
    /* without one, a character no piece covers has no encoding (Hugging Face fails) */
    if (!json_is_integer(u) || json_integer_value(u) < 0 || json_integer_value(u) >= (json_int_t)n)
        return tj_fail(c, 2, "a Unigram model needs an unk_id among its pieces");
    t->unk = (int)json_integer_value(u);
    if ((t->byte_fallback = tj_get_bool(model, "byte_fallback", 0)) < 0)
        return tj_fail(c, 2, "model.byte_fallback is not true or false");
    return 0;
}

static int read_model(tokjson *t, json_t *model, const tj_ctx *c) {
    if (!json_is_object(model)) return tj_fail(c, 2, "no \"model\" object");
    const char *type = tj_get_str(model, "type");
    if (json_object_get(model, "type") && !type) return tj_fail(c, 2, "model.type is not a string");
    if (type && strcmp(type, "Unigram") == 0) return read_unigram(t, model, c);
    if (type && strcmp(type, "BPE") != 0 && strcmp(type, "WordPiece") != 0)
        return tj_fail(c, 2, "model type \"%s\" is not supported (BPE, WordPiece, Unigram)", type);
    t->wordpiece = type && strcmp(type, "WordPiece") == 0;
    json_t *vocab = json_object_get(model, "vocab");
    if (!vocab) return tj_fail(c, 2, "model.vocab is missing");
    int rc = read_vocab(t, vocab, c);
    if (rc) return rc;
    if (json_object_get(model, "dropout") && !json_is_null(json_object_get(model, "dropout")) &&
        json_number_value(json_object_get(model, "dropout")) != 0.0)
        return tj_fail(c, 2, "model.dropout is set: BPE with dropout is not deterministic");
    t->fuse_unk = tj_get_bool(model, "fuse_unk", 0);
    t->byte_fallback = tj_get_bool(model, "byte_fallback", 0);
    t->ignore_merges = tj_get_bool(model, "ignore_merges", 0);
    if (t->fuse_unk < 0 || t->byte_fallback < 0 || t->ignore_merges < 0)
        return tj_fail(c, 2, "model.fuse_unk, byte_fallback or ignore_merges is not true or false");
    if (t->wordpiece) return read_wordpiece(t, model, c);
    const char *p = tj_get_str(model, "continuing_subword_prefix");
    const char *s = tj_get_str(model, "end_of_word_suffix");
    if ((p && *p && !(t->prefix = strdup(p))) || (s && *s && !(t->suffix = strdup(s))))
        return tj_fail(c, 1, "out of memory");
    return 0;
}

static int model_tables(tokjson *t, json_t *model, const tj_ctx *c) {
    int rc = fill_vocab(t, json_object_get(model, "vocab"), c);
    if (!rc && !t->unigram) rc = read_merges(t, json_object_get(model, "merges"), c);
    if (rc) return rc;
    json_t *u = t->unigram ? NULL : json_object_get(model, "unk_token");
    if (!t->unigram) t->unk = -1; /* Unigram's is its unk_id, read with the vocabulary */
    if (u && !json_is_null(u)) {
        if (!json_is_string(u)) return tj_fail(c, 2, "model.unk_token is not a string");
        t->unk = tj_vocab_find(t, json_string_value(u), json_string_length(u));
        char sh[48];
        if (t->unk < 0)
            return tj_fail(c, 2, "unk_token \"%s\" is not in the vocabulary",
                           shown(json_string_value(u), sh));
    }
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_tok[b] = t->byte_fallback ? tj_vocab_find(t, name, 6) : -1;
    }
    return 0;
}

/* ---- added tokens -------------------------------------------------------------------- */

static int read_added(tokjson *t, json_t *arr, const tj_ctx *c) {
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr)) return tj_fail(c, 2, "added_tokens is not a list");
    size_t n = json_array_size(arr);
    if (n > TJ_MAX_ID) return tj_fail(c, 2, "too many added tokens");
    t->added = calloc(n ? n : 1, sizeof *t->added);
    if (!t->added) return tj_fail(c, 1, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i), *id = json_object_get(o, "id");
        json_t *content = json_object_get(o, "content");
        if (!json_is_object(o) || !json_is_integer(id) || !json_is_string(content))
            return tj_fail(c, 2, "added token %zu has no integer id or no content", i);
        if (json_integer_value(id) < 0 || json_integer_value(id) >= TJ_MAX_ID)
            return tj_fail(c, 2, "added token %zu: id %lld is out of range 0..%d", i,
                           (long long)json_integer_value(id), TJ_MAX_ID - 1);
        if (json_string_length(content) == 0) return tj_fail(c, 2, "added token %zu is empty", i);
        tj_added *a = &t->added[t->n_added++];
        a->id = (int)json_integer_value(id);
        a->len = json_string_length(content);
        if (!(a->content = tj_dup(json_string_value(content), a->len)))
            return tj_fail(c, 1, "out of memory");
        a->special = tj_get_bool(o, "special", 0);
        a->lstrip = tj_get_bool(o, "lstrip", 0);
        a->rstrip = tj_get_bool(o, "rstrip", 0);
        a->single_word = tj_get_bool(o, "single_word", 0);
        a->normalized = tj_get_bool(o, "normalized", !a->special);
        if (a->special < 0 || a->lstrip < 0 || a->rstrip < 0 || a->single_word < 0 ||
            a->normalized < 0)
            return tj_fail(c, 2, "added token %zu: a flag is not true or false", i);
        if (a->id >= t->n_ids) t->n_ids = a->id + 1;
    }
    return 0;
}

/* what an added token matches: its content, through the normalizers when it is marked
 * normalized (Hugging Face matches those in the normalized text) */
static int added_match(const tokjson *t, tj_added *a) {
    if (!a->normalized || t->n_norm == 0) {
        a->mlen = a->len;
        return (a->match = tj_dup(a->content, a->len)) ? 0 : -1;
    }
    tj_text in = {0}, out = {0};
    for (size_t i = 0; i < a->len; i++)
        tj_text_push(&in, (const unsigned char *)a->content + i, 1, (int32_t)i, (int32_t)i + 1);
    int rc = in.oom || tj_normalize(t, &in, 0, in.n, &out) ? -1 : 0;
    if (!rc) {
        a->mlen = out.n;
        rc = (a->match = tj_dup(out.n ? (const char *)out.b : "", out.n)) ? 0 : -1;
    }
    tj_text_free(&in), tj_text_free(&out);
    return rc;
}

/* the added tokens' index: by first byte, longest first (leftmost-longest matching) */
static int index_added(tokjson *t, const tj_ctx *c) {
    t->added_of = malloc((size_t)t->n_ids * sizeof *t->added_of);
    t->is_special = calloc((size_t)t->n_ids, 1);
    if (!t->added_of || !t->is_special) return tj_fail(c, 1, "out of memory");
    memset(t->added_of, 0xff, (size_t)t->n_ids * sizeof *t->added_of);
    int count[256] = {0};
    for (int i = 0; i < t->n_added; i++) {
        tj_added *a = &t->added[i];
        t->added_of[a->id] = i; /* a repeated id: the last one names it */
        t->is_special[a->id] = (unsigned char)a->special;
        if (added_match(t, a)) return tj_fail(c, 1, "out of memory");
        if (a->mlen) count[(unsigned char)a->match[0]]++; /* normalized to nothing: never */
    }
    for (int b = 0; b < 256; b++) {
        if (!count[b]) continue;
        int *l = malloc((size_t)(count[b] + 1) * sizeof *l), k = 0;
        if (!l) return tj_fail(c, 1, "out of memory");
        for (int i = 0; i < t->n_added; i++)
            if (t->added[i].mlen && (unsigned char)t->added[i].match[0] == b) l[k++] = i;
        for (int i = 1; i < k; i++) /* insertion sort by length, longest first, stable */
            for (int j = i; j > 0 && t->added[l[j]].mlen > t->added[l[j - 1]].mlen; j--) {
                int x = l[j];
                l[j] = l[j - 1], l[j - 1] = x;
            }
        l[k] = -1;
        t->first_added[b] = l;
    }
    return 0;
}

/* ---- the whole file ------------------------------------------------------------------- */

static int read_root(tokjson *t, json_t *root, const tj_ctx *c) {
    json_t *model = json_object_get(root, "model");
    int rc = read_model(t, model, c);
    if (!rc) rc = read_added(t, json_object_get(root, "added_tokens"), c);
    if (rc) return rc;
    if (t->n_ids == 0) return tj_fail(c, 2, "no tokens");
    t->str = calloc((size_t)t->n_ids, sizeof *t->str);
    t->slen = calloc((size_t)t->n_ids, sizeof *t->slen);
    if (!t->str || !t->slen) return tj_fail(c, 1, "out of memory");
    rc = model_tables(t, model, c);
    if (!rc) rc = tj_read_norm(t, json_object_get(root, "normalizer"), 0, c);
    if (!rc) rc = index_added(t, c); /* after the normalizers: it uses them */
    if (!rc) rc = tj_read_pre(t, json_object_get(root, "pre_tokenizer"), 0, c);
    if (!rc) rc = tj_read_post(t, json_object_get(root, "post_processor"), 0, c);
    if (rc) return rc;
    tj_read_decoder(t, json_object_get(root, "decoder"));
    if (t->byte_fallback) t->sp_decode = 1;
    return tj_make_bytes(t) ? tj_fail(c, 1, "out of memory") : 0;
}

int tokjson_parse(tokjson **out, const char *json, size_t len, const char *path, char *err,
                  size_t errlen) {
    tj_ctx c = {path ? path : "tokenizer.json", err, errlen};
    *out = NULL;
    if (err && errlen) err[0] = '\0';
    if (len > TJ_MAX_FILE) return tj_fail(&c, 2, "larger than %u MiB", TJ_MAX_FILE >> 20);
    json_error_t je;
    json_t *root = json_loadb(json ? json : "", len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return tj_fail(&c, 2, "%s (line %d)", je.text, je.line);
    tokjson *t = calloc(1, sizeof *t);
    int rc = !t                      ? tj_fail(&c, 1, "out of memory")
             : !json_is_object(root) ? tj_fail(&c, 2, "not a JSON object")
                                     : read_root(t, root, &c);
    json_decref(root);
    if (rc) {
        tokjson_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tokjson_load(tokjson **out, const char *path, char *err, size_t errlen) {
    tj_ctx c = {path, err, errlen};
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return tj_fail(&c, 1, "%s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : tj_fail(&c, 1, "out of memory");
    while (!rc) {
        if (n == cap) {
            char *nb = cap > TJ_MAX_FILE ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                rc = cap > TJ_MAX_FILE ? tj_fail(&c, 2, "larger than %u MiB", TJ_MAX_FILE >> 20)
                                       : tj_fail(&c, 1, "out of memory");
                break;
            }
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = tj_fail(&c, 1, "%s", strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!rc) rc = tokjson_parse(out, buf, n, path, err, errlen);
    free(buf);
    return rc;
}

int tokjson_vocab_size(const tokjson *t) {
    return t ? t->n_ids : 0;
}

int tokjson_is_special(const tokjson *t, int id) {
    return t && id >= 0 && id < t->n_ids && t->is_special[id];
}

const char *tokjson_kind(const tokjson *t) {
    return t->wordpiece       ? "WordPiece"
           : t->unigram       ? "Unigram"
           : t->byte_level    ? "byte-level BPE"
           : t->byte_fallback ? "BPE with byte fallback"
                              : "BPE";
}

void tokjson_free(tokjson *t) {
    if (!t) return;
    for (int i = 0; t->str && i < t->n_ids; i++) free(t->str[i]);
    for (int i = 0; t->bytes && i < t->n_ids; i++) free(t->bytes[i]);
    free(t->str), free(t->slen), free(t->bytes), free(t->blen);
    free(t->vslot), free(t->mkey), free(t->mrank), free(t->mresult);
    free(t->prefix), free(t->suffix), free(t->score);
    for (int i = 0; i < t->n_norm; i++) {
        free(t->norm[i].text), free(t->norm[i].pattern);
        free(t->norm[i].trie), free(t->norm[i].chars);
        if (t->norm[i].re) pcre2_code_free(t->norm[i].re);
    }
    for (int i = 0; i < t->n_pre; i++)
        if (t->pre[i].re) pcre2_code_free(t->pre[i].re);
    for (int i = 0; i < t->n_added; i++) free(t->added[i].content), free(t->added[i].match);
    free(t->added), free(t->added_of), free(t->is_special);
    for (int b = 0; b < 256; b++) free(t->first_added[b]);
    free(t);
}
