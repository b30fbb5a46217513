/* fuzz_bpe.c: GPT-2's tokenizer (src/model/bpe.c) on any vocab.json, merges.txt and
 * text. The first byte picks how the tokenizer is made:
 *   mode 0: vocab.json and merges.txt are raw bytes of the input (lengths from the
 *           next four bytes), the rest is the text: the parser meets anything;
 *   mode 1: a valid vocabulary (the 256 byte tokens) plus raw merges.txt bytes;
 *   mode 2, 3: a valid tokenizer built from the input: each step joins two tokens
 *           already there into a new one and writes that merge, so the merges run
 *           deep; the rest is the text.
 * Invariants: a refusal is 2 with one line in err; an accepted tokenizer encodes any
 * text: count >= 0, no more ids than bytes (U+FFFDs included), the same count with
 * no room, ids in range, the tokens' bytes joined equal to the text when it is valid
 * UTF-8 (else "replaced" and valid UTF-8); every label NUL-terminated, valid UTF-8
 * and within its buffer. */
#include <string.h>

#include "bpe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* GPT-2's byte-to-unicode table, written again here, independent of bpe.c */
static unsigned table_cp(unsigned b) {
    static unsigned cp[256];
    static int ready;
    if (!ready) {
        unsigned k = 256;
        for (unsigned i = 0; i < 256; i++) {
            int printable = (i >= 0x21 && i <= 0x7e) || (i >= 0xa1 && i <= 0xac) || i >= 0xae;
            cp[i] = printable ? i : k++;
        }
        ready = 1;
    }
    return cp[b];
}

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void put(sbuf *s, const void *d, size_t n) {
    if (s->n + n + 1 > s->cap) {
        s->cap = (s->n + n + 1) * 2;
        s->p = realloc(s->p, s->cap);
        FUZZ_EXPECT(s->p != NULL, "realloc");
    }
    memcpy(s->p + s->n, d, n);
    s->n += n;
    s->p[s->n] = '\0';
}

/* bytes as table characters (UTF-8); in JSON with '"' and '\' escaped */
static void put_table(sbuf *s, const unsigned char *t, size_t n, int json) {
    for (size_t i = 0; i < n; i++) {
        unsigned cp = table_cp(t[i]);
        char u[3];
        if (cp < 0x80) {
            if (json && (cp == '"' || cp == '\\')) put(s, "\\", 1);
            u[0] = (char)cp;
            put(s, u, 1);
        } else {
            u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f));
            put(s, u, 2);
        }
    }
}

typedef struct {
    unsigned char t[64];
    size_t n;
} token;

static void add_token(sbuf *v, const token *t, int id) {
    char num[32];
    put(v, id ? ",\"" : "{\"", 2);
    put_table(v, t->t, t->n, 1);
    int k = snprintf(num, sizeof num, "\":%d", id);
    put(v, num, (size_t)k);
}

#define MAX_TOKENS 1024

static void check(const bpe *b, const uint8_t *text, size_t n) {
    int nv = bpe_vocab_size(b);
    FUZZ_EXPECT(nv >= 256, "vocab size %d", nv);
    int replaced = -1;
    int total = bpe_encode(b, (const char *)text, n, NULL, 0, &replaced);
    FUZZ_EXPECT(total >= 0 && (size_t)total <= 3 * n, "count %d for %zu bytes", total, n);
    FUZZ_EXPECT(n > 0 || total == 0, "count %d of nothing", total);
    int *ids = malloc(((size_t)total + 1) * sizeof *ids);
    FUZZ_EXPECT(ids != NULL, "malloc");
    int again = bpe_encode(b, (const char *)text, n, ids, total, NULL);
    FUZZ_EXPECT(again == total, "%d then %d", total, again);
    sbuf joined = {0};
    put(&joined, "", 0);
    for (int i = 0; i < total; i++) {
        FUZZ_EXPECT(ids[i] >= 0 && ids[i] < nv, "id %d of %d", ids[i], nv);
        size_t l;
        const unsigned char *t = bpe_token_bytes(b, ids[i], &l);
        FUZZ_EXPECT(t && l > 0, "token %d has no bytes", ids[i]);
        put(&joined, t, l);
        static const size_t sizes[4] = {1, 3, 7, 200};
        char lab[200];
        size_t ls = sizes[i & 3];
        memset(lab, 'x', sizeof lab);
        bpe_token_label(b, ids[i], lab, ls);
        FUZZ_EXPECT(memchr(lab, '\0', ls) != NULL, "label not NUL-terminated");
        FUZZ_EXPECT(fuzz_valid_utf8((const unsigned char *)lab), "label not UTF-8");
        FUZZ_EXPECT(ls < 200 || lab[0] != '\0', "empty label of token %d", ids[i]);
    }
    /* the text has no NUL-free guarantee: compare bytes, and check UTF-8 when there are
     * no NULs (fuzz_valid_utf8 reads a C string) */
    int valid = !replaced;
    if (valid) {
        FUZZ_EXPECT(joined.n == n && memcmp(joined.p, text, n) == 0, "round trip: %zu of %zu",
                    joined.n, n);
    } else {
        FUZZ_EXPECT(replaced == 1, "replaced %d", replaced);
        if (!memchr(joined.p, '\0', joined.n))
            FUZZ_EXPECT(fuzz_valid_utf8((const unsigned char *)joined.p), "replaced: not UTF-8");
    }
    free(joined.p);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 16) return 0;
    const uint8_t *p = data;
    size_t n = size;
    unsigned mode = fuzz_byte(&p, &n) & 3;
    sbuf v = {0}, m = {0};
    put(&v, "", 0);
    put(&m, "", 0);
    if (mode == 0) {
        size_t vl = fuzz_u16(&p, &n) % (n + 1);
        v.n = 0;
        put(&v, p, vl), p += vl, n -= vl;
        size_t ml = fuzz_u16(&p, &n) % (n + 1);
        put(&m, p, ml), p += ml, n -= ml;
    } else {
        static token toks[MAX_TOKENS];
        int count = 0;
        for (int c = 0; c < 256; c++, count++) {
            toks[count].t[0] = (unsigned char)c, toks[count].n = 1;
            add_token(&v, &toks[count], count);
        }
        if (mode == 1) {
            size_t ml = fuzz_u16(&p, &n) % (n + 1);
            put(&m, p, ml), p += ml, n -= ml;
        } else {
            put(&m, "#version: 0.2\n", 14);
            unsigned steps = fuzz_byte(&p, &n) * 4u;
            for (unsigned s = 0; s < steps && count < MAX_TOKENS && n >= 4; s++) {
                const token *a = &toks[fuzz_u16(&p, &n) % (unsigned)count];
                const token *b = &toks[fuzz_u16(&p, &n) % (unsigned)count];
                if (a->n + b->n > sizeof toks[0].t) continue;
                put_table(&m, a->t, a->n, 0);
                put(&m, " ", 1);
                put_table(&m, b->t, b->n, 0);
                put(&m, "\n", 1);
                token *t = &toks[count];
                memcpy(t->t, a->t, a->n);
                memcpy(t->t + a->n, b->t, b->n);
                t->n = a->n + b->n;
                int seen = 0; /* the same string made twice keeps its first id */
                for (int i = 0; i < count && !seen; i++)
                    seen = toks[i].n == t->n && !memcmp(toks[i].t, t->t, t->n);
                if (!seen) add_token(&v, t, count++);
            }
        }
        put(&v, "}", 1);
    }
    bpe *b = NULL;
    char err[256] = "";
    int rc = bpe_parse(&b, v.p, v.n, m.p, m.n, "vocab.json", "merges.txt", err, sizeof err);
    if (rc == 0) {
        FUZZ_EXPECT(b != NULL, "no tokenizer");
        check(b, p, n);
        bpe_free(b);
    } else {
        FUZZ_EXPECT(rc == 2 && b == NULL, "rc %d", rc);
        FUZZ_EXPECT(err[0] && !strchr(err, '\n'), "refusal: err '%s'", err);
        FUZZ_EXPECT(mode != 2 && mode != 3, "a built tokenizer refused: %s", err);
    }
    free(v.p);
    free(m.p);
    return 0;
}
