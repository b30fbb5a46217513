/* tokjson_unigram.c: the Unigram model of a tokenizer.json (tokjson_internal.h) encoded
 * as Hugging Face's tokenizers (models/unigram) does: each piece of the pre-tokenized
 * text split by Viterbi over the vocabulary's log-probabilities, a character no piece
 * covers alone scored as the lowest score minus 10 and encoded as unk, runs of unk
 * fused into one, then each string to its id (byte fallback's <0xNN> tokens where the
 * file asks). Reading the model is tokjson.c's. */
#include <stdlib.h>
#include <string.h>

#include "tokjson_internal.h"

#define UNK_PENALTY 10.0 /* Hugging Face's K_UNK_PENALTY */

static int lattice_fit(tj_lattice *l, size_t n) {
    if (n + 1 <= l->cap) return 0;
    size_t cap = 2 * n + 16;
    double *b = realloc(l->best, cap * sizeof *b);
    if (b) l->best = b;
    int32_t *f = b ? realloc(l->from, cap * sizeof *f) : NULL;
    if (f) l->from = f;
    int32_t *d = f ? realloc(l->id, cap * sizeof *d) : NULL;
    if (!d) return -1;
    l->id = d, l->cap = cap;
    return 0;
}

/* node [start, end) with id scoring cand: kept when first or strictly better */
static void offer(tj_lattice *l, size_t start, size_t end, int id, double cand) {
    if (l->from[end] < 0 || cand > l->best[end]) {
        l->best[end] = cand;
        l->from[end] = (int32_t)start;
        l->id[end] = id;
    }
}

/* the string p[a, b) as ids into ids/s/e from k on (the list is built last first):
 * its id, else its bytes' <0xNN> tokens (byte fallback, every one there), else unk.
 * Returns the new count. */
static int emit(const tokjson *t, const unsigned char *p, size_t a, size_t b, int *ids, int32_t *s,
                int32_t *e, int k) {
    int id = tj_vocab_find(t, (const char *)p + a, b - a);
    int bytes = id < 0 && t->byte_fallback;
    for (size_t q = a; bytes && q < b; q++) bytes = t->byte_tok[p[q]] >= 0;
    if (bytes) { /* last byte first: the caller turns the whole list around */
        for (size_t q = b; q > a; q--, k++)
            ids[k] = t->byte_tok[p[q - 1]], s[k] = (int32_t)q - 1, e[k] = (int32_t)q;
        return k;
    }
    ids[k] = id >= 0 ? id : t->unk, s[k] = (int32_t)a, e[k] = (int32_t)b;
    return k + 1;
}

int tj_unigram_encode(const tokjson *t, tj_lattice *l, const unsigned char *p, size_t n, int *ids,
                      int32_t *s, int32_t *e) {
    if (lattice_fit(l, n)) return -1;
    for (size_t i = 0; i <= n; i++) l->from[i] = -1;
    l->best[0] = 0.0;
    const double unk_score = t->min_score - UNK_PENALTY;
    /* pass 1: forward, every piece starting at each character (shorter first) */
    for (size_t start = 0; start < n;) {
        size_t sub, mb = tj_utf8_char(p + start, n - start, &sub, NULL);
        if (!mb) mb = sub; /* cannot happen: the text is valid UTF-8 */
        const double base = l->best[start];
        int single = 0;
        size_t most = n - start < (size_t)t->max_len ? n - start : (size_t)t->max_len;
        for (size_t len = 1; len <= most; len++) {
            if (start + len < n && (p[start + len] & 0xc0) == 0x80) continue;
            int id = tj_vocab_find(t, (const char *)p + start, len);
            if (id < 0) continue;
            offer(l, start, start + len, id, t->score[id] + base);
            single |= len == mb;
        }
        if (!single) offer(l, start, start + mb, t->unk, unk_score + base);
        start += mb;
    }
    /* pass 2: back from the end, unk runs fused, then turned around */
    int k = 0;
    size_t run_end = 0;
    int in_run = 0;
    for (size_t end = n; end > 0;) {
        size_t start = (size_t)l->from[end];
        if (l->id[end] == t->unk) {
            if (!in_run) run_end = end, in_run = 1;
        } else {
            if (in_run) k = emit(t, p, end, run_end, ids, s, e, k), in_run = 0;
            k = emit(t, p, start, end, ids, s, e, k);
        }
        end = start;
    }
    if (in_run) k = emit(t, p, 0, run_end, ids, s, e, k);
    /* the pieces came last first */
    for (int i = 0, j = k - 1; i < j; i++, j--) {
        int ti = ids[i];
        int32_t si = s[i], ei = e[i];
        ids[i] = ids[j], s[i] = s[j], e[i] = e[j];
        ids[j] = ti, s[j] = si, e[j] = ei;
    }
    return k;
}
