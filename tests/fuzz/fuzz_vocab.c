/* fuzz_vocab.c: BERT's vocab.txt + tokenizer_config.json (src/model/tokvocab.c) and the
 * Unigram model of tokenizer.json (src/model/tokjson_unigram.c) on any input. The first
 * byte picks how:
 *   mode 0: vocab.txt is raw input bytes (its length from the next two bytes), then
 *           tokenizer_config.json likewise (length 0: none), the rest is the text;
 *   mode 1: a Unigram file whose pieces are made of input bytes (letters, "▁", a few
 *           multi-byte characters) with scores from the input, an unk_id, ALBERT's
 *           Metaspace and, by the input, its normalizers, byte fallback or a Precompiled
 *           table of input bytes (base64: any trie, any offsets); the rest is the text.
 * Invariants: a refusal is 1 or 2 with one line in err and no tokenizer; an accepted
 * one encodes any text: the count with no room equals the count with room, ids in
 * range with bytes, offsets inside the text and in order. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "tokjson.h"
#include "tokvocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void put(sbuf *s, const char *d, size_t n) {
    if (s->n + n + 1 > s->cap) {
        s->cap = 2 * (s->n + n + 1) + 64;
        s->p = realloc(s->p, s->cap);
        FUZZ_EXPECT(s->p != NULL, "realloc");
    }
    memcpy(s->p + s->n, d, n);
    s->n += n;
    s->p[s->n] = '\0';
}

static void puts_(sbuf *s, const char *d) {
    put(s, d, strlen(d));
}

/* n input bytes as base64 */
static void put_base64(sbuf *j, const uint8_t **p, size_t *n, size_t len) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = fuzz_byte(p, n) << 16 | fuzz_byte(p, n) << 8 | fuzz_byte(p, n);
        char q[4] = {a[v >> 18], a[(v >> 12) & 63], a[(v >> 6) & 63], a[v & 63]};
        put(j, q, 4);
    }
}

/* a Unigram tokenizer.json of pieces the input spells */
static void build_unigram(sbuf *j, const uint8_t **p, size_t *n) {
    static const char *const chars[] = {
        "a", "b", "c", "\xe2\x96\x81", "\xc3\xa9", "\xe6\x97\xa5", "!", "A", "\xf0\x9f\x91\x8d",
        "e"};
    const unsigned flags = fuzz_byte(p, n), pieces = 1 + fuzz_byte(p, n) % 40;
    puts_(j, "{\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"byte_fallback\":");
    puts_(j, flags & 1 ? "true" : "false");
    puts_(j, ",\"vocab\":[[\"<unk>\",0.0]");
    char num[64];
    for (unsigned i = 0; i < pieces; i++) {
        puts_(j, ",[\"");
        const unsigned len = 1 + fuzz_byte(p, n) % 4;
        for (unsigned k = 0; k < len; k++) puts_(j, chars[fuzz_byte(p, n) % 10]);
        snprintf(num, sizeof num, "%u", i); /* distinct pieces: the index spelled too */
        puts_(j, num);
        snprintf(num, sizeof num, "\",%.3f]", -(double)fuzz_byte(p, n) / 16.0);
        puts_(j, num);
    }
    if (flags & 1)
        for (int b = 0; b < 256; b += 1 + (int)(flags >> 4)) {
            snprintf(num, sizeof num, ",[\"<0x%02X>\",-30.0]", b);
            puts_(j, num);
        }
    puts_(j, "]},\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\xe2\x96\x81\","
             "\"prepend_scheme\":\"always\",\"split\":");
    puts_(j, flags & 2 ? "true}" : "false}");
    if (flags & 8) {
        puts_(j, ",\"normalizer\":{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"");
        put_base64(j, p, n, 8 + 4 * (size_t)(fuzz_byte(p, n) % 64));
        puts_(j, "\"}");
    } else if (flags & 4) {
        puts_(j, ",\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFKD\"},"
                 "{\"type\":\"StripAccents\"},{\"type\":\"Lowercase\"}]}");
    }
    puts_(j, "}");
}

static void check(const tokjson *t, const uint8_t *text, size_t len) {
    const int nv = tokjson_vocab_size(t);
    FUZZ_EXPECT(nv >= 1, "vocab size %d", nv);
    int total = tokjson_encode(t, (const char *)text, len, 1, NULL, NULL, NULL, 0, NULL);
    FUZZ_EXPECT(total >= 0, "count %d for %zu bytes", total, len);
    int *ids = malloc(((size_t)total + 1) * 3 * sizeof *ids);
    FUZZ_EXPECT(ids != NULL, "malloc");
    int *st = ids + total + 1, *en = st + total + 1;
    int again = tokjson_encode(t, (const char *)text, len, 1, ids, st, en, total, NULL);
    FUZZ_EXPECT(again == total, "%d then %d", total, again);
    for (int i = 0; i < again; i++) {
        FUZZ_EXPECT(ids[i] >= 0 && ids[i] < nv, "id %d of %d", ids[i], nv);
        FUZZ_EXPECT(st[i] >= 0 && st[i] <= en[i] && (size_t)en[i] <= len, "offsets %d-%d of %zu",
                    st[i], en[i], len);
        FUZZ_EXPECT(i == 0 || st[i] >= st[i - 1], "offsets out of order at %d", i);
        size_t l;
        FUZZ_EXPECT(tokjson_token_bytes(t, ids[i], &l) != NULL, "token %d has no bytes", ids[i]);
    }
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p = data;
    size_t n = size;
    const unsigned mode = fuzz_byte(&p, &n) % 2;
    tokjson *t = NULL;
    char err[256];
    memset(err, 'x', sizeof err);
    int rc;
    if (mode == 0) {
        size_t vl = fuzz_u16(&p, &n);
        vl = vl > n ? n : vl;
        const uint8_t *v = p;
        p += vl, n -= vl;
        size_t cl = fuzz_u16(&p, &n);
        cl = cl > n ? n : cl;
        const uint8_t *c = p;
        p += cl, n -= cl;
        rc = tokvocab_parse(&t, (const char *)v, vl, cl ? (const char *)c : NULL, cl, "vocab.txt",
                            "tokenizer_config.json", err, sizeof err);
    } else {
        sbuf j = {0};
        put(&j, "", 0);
        build_unigram(&j, &p, &n);
        rc = tokjson_parse(&t, j.p, j.n, "fuzz.json", err, sizeof err);
        free(j.p);
    }
    if (rc) {
        FUZZ_EXPECT(rc == 1 || rc == 2, "rc %d", rc);
        FUZZ_EXPECT(t == NULL, "refused but a tokenizer made");
        FUZZ_EXPECT(memchr(err, '\0', sizeof err) && err[0] && !strchr(err, '\n'), "err: %.60s",
                    err);
        return 0;
    }
    check(t, p, n);
    tokjson_free(t);
    return 0;
}
