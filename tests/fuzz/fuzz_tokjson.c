/* fuzz_tokjson.c: Hugging Face's tokenizer.json (src/model/tokjson*.c) on any file and
 * text. The first byte picks how the file is made:
 *   mode 0: the file is raw bytes of the input (its length from the next two bytes), the
 *           rest is the text: the parser meets anything;
 *   mode 1: a valid byte-level BPE file whose parts the input picks: the normalizer
 *           (none, NFC, NFKC, Lowercase, Prepend + Replace), the pre-tokenizer (ByteLevel
 *           with or without its regex and prefix space, a Split with a regex made of
 *           input bytes, Metaspace, Digits), merges that join tokens already there, an
 *           added token made of input bytes; the rest is the text;
 *   mode 2: a WordPiece file (BERT's): pieces made of input bytes, with and without
 *           "##", BertNormalizer's flags from the input; the rest is the text.
 * Invariants: a refusal is 1 or 2 with one line in err; an accepted tokenizer encodes
 * any text: count >= 0, the same count with no room, ids in range with bytes, offsets
 * inside the text and in order; with no normalizer, a plain ByteLevel and no added
 * token, the tokens' bytes joined are the text (valid UTF-8; with ByteLevel's prefix
 * space, a space first unless the text starts with one); every label
 * NUL-terminated and valid UTF-8. */
#include <string.h>

#include "fuzz.h"
#include "tokjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void put(sbuf *s, const char *d, size_t n) {
    if (s->n + n + 1 > s->cap) {
        s->cap = (s->n + n + 1) * 2;
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

/* GPT-2's byte-to-unicode table, written again here */
static unsigned table_cp(unsigned b) {
    int printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    if (printable) return b;
    unsigned k = 256;
    for (unsigned i = 0; i < b; i++)
        if (!((i >= 0x21 && i <= 0x7e) || (i >= 0xa1 && i <= 0xac) || i >= 0xae)) k++;
    return k;
}

/* bytes as table characters in a JSON string */
static void put_table(sbuf *s, const unsigned char *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned cp = table_cp(t[i]);
        char u[3];
        if (cp < 0x80) {
            if (cp == '"' || cp == '\\') put(s, "\\", 1);
            u[0] = (char)cp;
            put(s, u, 1);
        } else {
            u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f));
            put(s, u, 2);
        }
    }
}

/* input bytes as a JSON string's content: printable ASCII only, escaped */
static void put_ascii(sbuf *s, const uint8_t **p, size_t *n, size_t len) {
    for (size_t i = 0; i < len; i++) {
        char c = (char)(0x20 + fuzz_byte(p, n) % 95);
        if (c == '"' || c == '\\') put(s, "\\", 1);
        put(s, &c, 1);
    }
}

static const char *const norms[] = {
    "null", "{\"type\":\"NFC\"}", "{\"type\":\"NFKC\"}", "{\"type\":\"Lowercase\"}",
    ("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"\xe2\x96\x81\"},"
     "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\xe2\x96\x81\"}]}")};

/* a valid byte-level file (mode 1); *plain when the bytes must join to the text */
static void build(sbuf *j, const uint8_t **p, size_t *n, int *plain) {
    unsigned pick = fuzz_byte(p, n), nm = fuzz_byte(p, n) % 64;
    unsigned norm = pick % 5, pre = (pick / 5) % 6;
    puts_(j, "{\"model\":{\"type\":\"BPE\",\"ignore_merges\":");
    puts_(j, pick & 0x80 ? "true" : "false");
    puts_(j, ",\"vocab\":{");
    unsigned char tok[64][8];
    size_t len[64 + 256];
    int count = 0;
    for (unsigned b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        char num[16];
        put(j, b ? ",\"" : "\"", b ? 2 : 1);
        put_table(j, &c, 1);
        put(j, num, (size_t)snprintf(num, sizeof num, "\":%u", b));
    }
    /* merges: each joins two tokens (a byte or an earlier merge) of at most 8 bytes */
    sbuf m = {0};
    put(&m, "", 0);
    for (unsigned i = 0; i < nm; i++) {
        unsigned a = fuzz_byte(p, n), b = fuzz_byte(p, n);
        unsigned char ta[8], tb[8];
        size_t la = 1, lb = 1;
        ta[0] = (unsigned char)a, tb[0] = (unsigned char)b;
        if (count && (a & 1)) la = len[a % count], memcpy(ta, tok[a % count], la);
        if (count && (b & 1)) lb = len[b % count], memcpy(tb, tok[b % count], lb);
        if (la + lb > 8) continue;
        memcpy(tok[count], ta, la), memcpy(tok[count] + la, tb, lb);
        len[count] = la + lb;
        int dup = 0;
        for (int k = 0; k < count; k++)
            dup |= len[k] == len[count] && memcmp(tok[k], tok[count], len[count]) == 0;
        put(&m, m.n ? ",[\"" : "[\"", m.n ? 3 : 2);
        put_table(&m, ta, la);
        put(&m, "\",\"", 3);
        put_table(&m, tb, lb);
        put(&m, "\"]", 2);
        if (dup) continue;
        char num[16];
        put(j, ",\"", 2);
        put_table(j, tok[count], len[count]);
        put(j, num, (size_t)snprintf(num, sizeof num, "\":%d", 256 + count));
        count++;
    }
    puts_(j, "},\"merges\":[");
    if (m.n) put(j, m.p, m.n);
    free(m.p);
    puts_(j, "]},\"normalizer\":");
    puts_(j, norms[norm]);
    puts_(j, ",\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[");
    if (pre == 2) { /* a Split whose regex is input bytes (it may not compile) */
        puts_(j, "{\"type\":\"Split\",\"behavior\":\"");
        static const char *const beh[] = {"Isolated", "Removed", "MergedWithPrevious",
                                          "MergedWithNext"};
        puts_(j, beh[fuzz_byte(p, n) % 4]);
        puts_(j, "\",\"invert\":false,\"pattern\":{\"Regex\":\"");
        put_ascii(j, p, n, fuzz_byte(p, n) % 12);
        puts_(j, "\"}},");
    } else if (pre == 3) {
        puts_(j, "{\"type\":\"Metaspace\",\"prepend_scheme\":\"first\",\"split\":true},");
    } else if (pre == 4) {
        puts_(j, "{\"type\":\"Digits\",\"individual_digits\":true},");
    }
    puts_(j, "{\"type\":\"ByteLevel\",\"add_prefix_space\":");
    puts_(j, pre == 0 ? "true" : "false");
    puts_(j, ",\"use_regex\":");
    puts_(j, pre == 1 ? "false" : "true");
    puts_(j, "}]},\"added_tokens\":[");
    int added = fuzz_byte(p, n) & 1;
    if (added) {
        puts_(j, "{\"id\":400,\"special\":true,\"lstrip\":true,\"content\":\"<");
        put_ascii(j, p, n, 1 + fuzz_byte(p, n) % 3);
        puts_(j, ">\"}");
    }
    puts_(j, "],\"post_processor\":{\"type\":\"RobertaProcessing\",\"cls\":[\"a\",97],"
             "\"sep\":[\"b\",98]}}");
    /* 1: the bytes join to the text; 2: to the text with ByteLevel's prefix space */
    *plain = norm == 0 && !added && (pre <= 1 || pre == 4) ? 1 + (pre == 0) : 0;
}

/* a WordPiece file (mode 2) */
static void build_wordpiece(sbuf *j, const uint8_t **p, size_t *n) {
    unsigned flags = fuzz_byte(p, n), np = fuzz_byte(p, n) % 48;
    puts_(j, "{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\","
             "\"max_input_chars_per_word\":");
    char num[32];
    put(j, num, (size_t)snprintf(num, sizeof num, "%u", 1 + (flags >> 4) * 3));
    puts_(j, ",\"vocab\":{\"[UNK]\":0,\"[CLS]\":1,\"[SEP]\":2");
    for (unsigned i = 0; i < np; i++) { /* "xy" and "##xy" get ids 3 + 2i, 4 + 2i */
        static const char *const chars[] = {"a",        "b", "c", "d", "e",
                                            "\xc3\xa9", ".", ",", "!", "\xe6\x97\xa5"}; /* é, 日 */
        char piece[16];
        size_t l = 0;
        for (unsigned k = 0, m = 1 + fuzz_byte(p, n) % 4; k < m; k++) {
            const char *c = chars[fuzz_byte(p, n) % 10];
            memcpy(piece + l, c, strlen(c)), l += strlen(c);
        }
        for (int hash = 0; hash < 2; hash++) {
            puts_(j, hash ? ",\"##" : ",\"");
            put(j, piece, l);
            put(j, num, (size_t)snprintf(num, sizeof num, "\":%u", 3 + 2 * i + (unsigned)hash));
        }
    }
    puts_(j, "}},\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":");
    puts_(j, flags & 1 ? "true" : "false");
    puts_(j, ",\"handle_chinese_chars\":");
    puts_(j, flags & 2 ? "true" : "false");
    puts_(j, ",\"strip_accents\":null,\"lowercase\":");
    puts_(j, flags & 4 ? "true" : "false");
    puts_(j, "},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},\"post_processor\":"
             "{\"type\":\"BertProcessing\",\"cls\":[\"[CLS]\",1],\"sep\":[\"[SEP]\",2]}}");
}

static void check(const tokjson *t, const uint8_t *text, size_t len, int plain) {
    int nv = tokjson_vocab_size(t), replaced = -1;
    FUZZ_EXPECT(nv >= 1, "vocab size %d", nv);
    int total = tokjson_encode(t, (const char *)text, len, 1, NULL, NULL, NULL, 0, &replaced);
    FUZZ_EXPECT(total >= 0, "count %d for %zu bytes", total, len);
    int *ids = malloc(((size_t)total + 1) * 3 * sizeof *ids);
    FUZZ_EXPECT(ids != NULL, "malloc");
    int *st = ids + total + 1, *en = st + total + 1;
    int again = tokjson_encode(t, (const char *)text, len, 0, ids, st, en, total, NULL);
    FUZZ_EXPECT(again >= 0 && again <= total, "%d then %d", total, again);
    sbuf joined = {0};
    put(&joined, "", 0);
    for (int i = 0; i < again; i++) {
        FUZZ_EXPECT(ids[i] >= 0 && ids[i] < nv, "id %d of %d", ids[i], nv);
        FUZZ_EXPECT(st[i] >= 0 && st[i] <= en[i] && (size_t)en[i] <= len, "offsets %d-%d of %zu",
                    st[i], en[i], len);
        FUZZ_EXPECT(i == 0 || st[i] >= st[i - 1], "offsets out of order at %d", i);
        size_t l;
        const unsigned char *b = tokjson_token_bytes(t, ids[i], &l);
        FUZZ_EXPECT(b != NULL, "token %d has no bytes", ids[i]);
        put(&joined, (const char *)b, l);
        char lab[40];
        size_t ls = (size_t)(i % 3 == 0 ? 1 : i % 3 == 1 ? 5 : 40);
        tokjson_token_label(t, ids[i], lab, ls);
        FUZZ_EXPECT(memchr(lab, '\0', ls) != NULL, "label not NUL-terminated");
        FUZZ_EXPECT(fuzz_valid_utf8((const unsigned char *)lab), "label not UTF-8");
    }
    if (plain && !replaced) {
        size_t sp = plain == 2 && len > 0 && text[0] != ' '; /* the prefix space */
        FUZZ_EXPECT(joined.n == len + sp && (!sp || joined.p[0] == ' ') &&
                        memcmp(joined.p + sp, text, len) == 0,
                    "round trip: %zu of %zu", joined.n, len);
    }
    free(joined.p);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p = data;
    size_t n = size;
    unsigned mode = fuzz_byte(&p, &n) % 3;
    sbuf j = {0};
    int plain = 0;
    put(&j, "", 0);
    if (mode == 0) {
        size_t jl = fuzz_u16(&p, &n);
        if (jl > n) jl = n;
        put(&j, (const char *)p, jl);
        p += jl, n -= jl;
    } else if (mode == 1) {
        build(&j, &p, &n, &plain);
    } else {
        build_wordpiece(&j, &p, &n);
    }
    tokjson *t = NULL;
    char err[256];
    memset(err, 'x', sizeof err);
    int rc = tokjson_parse(&t, j.p, j.n, "fuzz.json", err, sizeof err);
    if (rc) {
        FUZZ_EXPECT(rc == 1 || rc == 2, "rc %d", rc);
        FUZZ_EXPECT(t == NULL, "refused but a tokenizer made");
        FUZZ_EXPECT(memchr(err, '\0', sizeof err) && err[0] && !strchr(err, '\n'), "err: %.60s",
                    err);
    } else {
        check(t, p, n, plain);
        tokjson_free(t);
    }
    free(j.p);
    return 0;
}
