/* test_tok.c: the UTF-8 word/punctuation tokenizer (tok.h) and the built-in
 * samples. Expected token lists are written by hand from the rule in tok.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "samples.h"
#include "tok.h"

#define FFFD "\xef\xbf\xbd"

/* Strict UTF-8 validation (RFC 3629), written independently of tok.c:
 * returns 1 if s is valid UTF-8 with no overlongs, surrogates or values
 * beyond U+10FFFF. */
static int valid_utf8(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        unsigned char b = *s;
        int len;
        unsigned long cp;
        if (b <= 0x7F) {
            s++;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            len = 2, cp = b & 0x1F;
        } else if ((b & 0xF0) == 0xE0) {
            len = 3, cp = b & 0x0F;
        } else if ((b & 0xF8) == 0xF0) {
            len = 4, cp = b & 0x07;
        } else {
            return 0;
        }
        for (int i = 1; i < len; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        static const unsigned long min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        s += len;
    }
    return 1;
}

static int count_substr(const char *s, const char *sub) {
    int c = 0;
    size_t l = strlen(sub);
    for (const char *p = strstr(s, sub); p; p = strstr(p + l, sub)) c++;
    return c;
}

/* splits text (copied into an exact-size heap buffer, so ASan sees any overread)
 * and compares with the expected tokens */
static void expect_split(const char *text, const char *const *want, int nwant, int want_replaced) {
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    assert_non_null(buf);
    memcpy(buf, text, len + 1);
    tok_list t = {0};
    char err[256] = "";
    int total = -1;
    int rc = tok_split(&t, buf, 0, &total, err, sizeof err);
    if (rc != 0) fail_msg("tok_split(\"%s\"): expected 0, got %d (%s)", text, rc, err);
    if (t.count != nwant) {
        char got[2048] = "";
        for (int i = 0; i < t.count && strlen(got) < 1900; i++) {
            strcat(got, "[");
            strncat(got, t.tokens[i], 64);
            strcat(got, "]");
        }
        fail_msg("tok_split(\"%s\"): expected %d tokens, got %d: %s", text, nwant, t.count, got);
    }
    CHECK_INT("*total", nwant, total);
    for (int i = 0; i < nwant; i++) {
        char what[160];
        snprintf(what, sizeof what, "token %d of \"%.60s\"", i, text);
        CHECK_STR(what, want[i], t.tokens[i]);
        if (!valid_utf8(t.tokens[i])) fail_msg("%s: expected valid UTF-8, got invalid bytes", what);
        CHECK_TRUE("token is not empty", t.tokens[i][0] != '\0');
    }
    if (want_replaced >= 0) {
        char what[160];
        snprintf(what, sizeof what, "replaced for \"%.60s\"", text);
        CHECK_INT(what, want_replaced, t.replaced);
    }
    tok_free(&t);
    CHECK_INT("count after tok_free", 0, t.count);
    CHECK_TRUE("tokens after tok_free", t.tokens == NULL);
    free(buf);
}

#define SPLIT(text, replaced, ...)                                                                 \
    do {                                                                                           \
        static const char *const w_[] = {__VA_ARGS__};                                             \
        expect_split((text), w_, (int)(sizeof w_ / sizeof w_[0]), (replaced));                     \
    } while (0)

static void test_ascii_sentence(void **state) {
    (void)state;
    SPLIT("The animal didn't cross the street because it was too tired.", 0, "The", "animal",
          "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired", ".");
    SPLIT("The cat sat on the mat.", 0, "The", "cat", "sat", "on", "the", "mat", ".");
    SPLIT("one", 0, "one");
    SPLIT("  leading and trailing  ", 0, "leading", "and", "trailing");
    SPLIT("a\tb\nc\r\nd\v\fe", 0, "a", "b", "c", "d", "e");
    SPLIT("snake_case x2 42 3.14", 0, "snake_case", "x2", "42", "3", ".", "14");
}

static void test_punctuation(void **state) {
    (void)state;
    SPLIT("Hello, world!", 0, "Hello", ",", "world", "!");
    SPLIT("(a+b)=c;", 0, "(", "a", "+", "b", ")", "=", "c", ";");
    SPLIT("wait...", 0, "wait", ".", ".", ".");
    SPLIT("for (int i = 0; i < n; i++) sum += x[i];", 0, "for", "(", "int", "i", "=", "0", ";", "i",
          "<", "n", ";", "i", "+", "+", ")", "sum", "+", "=", "x", "[", "i", "]", ";");
    SPLIT("\"quoted\" 'single'", 0, "\"", "quoted", "\"", "'", "single", "'");
    SPLIT("don't! it's", 0, "don't", "!", "it's");
    SPLIT("rock 'n' roll", 0, "rock", "'", "n", "'", "roll");
    SPLIT("ends'", 0, "ends", "'");
    SPLIT("a''b", 0, "a", "'", "'", "b");
    SPLIT("didn\xe2\x80\x99t", 0, "didn\xe2\x80\x99t"); /* U+2019 inside a word */
    SPLIT("$5 @me #tag", 0, "$", "5", "@", "me", "#", "tag");
    SPLIT("\xc2\xbfQu\xc3\xa9?", 0, "\xc2\xbf", "Qu\xc3\xa9", "?"); /* ¿Qué? */
    SPLIT("\xc2\xab"
          "Bonjour"
          "\xc2\xbb",
          0, "\xc2\xab", "Bonjour", "\xc2\xbb");                      /* «Bonjour» */
    SPLIT("wait\xe2\x80\x94what", 0, "wait", "\xe2\x80\x94", "what"); /* em dash */
    SPLIT("so\xe2\x80\xa6", 0, "so", "\xe2\x80\xa6");                 /* ellipsis */
    SPLIT("a\xc2\xa0"
          "b",
          0, "a", "b"); /* NBSP */
    SPLIT("a\xe3\x80\x80"
          "b",
          0, "a", "b"); /* U+3000 */
}

static void test_multibyte_words(void **state) {
    (void)state;
    SPLIT("Caf\xc3\xa9 cr\xc3\xa8me", 0, "Caf\xc3\xa9", "cr\xc3\xa8me");
    SPLIT("Caf\xc3\xa9 cr\xc3\xa8me \xc3\xa0 Z\xc3\xbcrich,", 0, "Caf\xc3\xa9", "cr\xc3\xa8me",
          "\xc3\xa0", "Z\xc3\xbcrich", ",");
    SPLIT("na\xc3\xafve fa\xc3\xa7"
          "ade",
          0, "na\xc3\xafve",
          "fa\xc3\xa7"
          "ade");
    SPLIT("e\xcc\x81t\xc3\xa9", 0, "e\xcc\x81t\xc3\xa9"); /* combining acute stays inside */
    SPLIT("\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xd0\xbc\xd0\xb8\xd1\x80", 0,
          "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82",
          "\xd0\xbc\xd0\xb8\xd1\x80"); /* Привет мир */
    SPLIT("\xce\xb1\xce\xb2\xce\xb3.", 0, "\xce\xb1\xce\xb2\xce\xb3", "."); /* αβγ. */
}

static void test_cjk(void **state) {
    (void)state;
    /* 東京で寿司を食べた。: every ideograph, kana and CJK punctuation on its own */
    SPLIT("\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xa7\xe5\xaf\xbf\xe5\x8f\xb8\xe3\x82\x92\xe9\xa3\x9f"
          "\xe3\x81\xb9\xe3\x81\x9f\xe3\x80\x82",
          0, "\xe6\x9d\xb1", "\xe4\xba\xac", "\xe3\x81\xa7", "\xe5\xaf\xbf", "\xe5\x8f\xb8",
          "\xe3\x82\x92", "\xe9\xa3\x9f", "\xe3\x81\xb9", "\xe3\x81\x9f", "\xe3\x80\x82");
    /* カタカナ */
    SPLIT("\xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a", 0, "\xe3\x82\xab", "\xe3\x82\xbf",
          "\xe3\x82\xab", "\xe3\x83\x8a");
    /* Tokyo東京! and a fullwidth exclamation mark */
    SPLIT("Tokyo\xe6\x9d\xb1\xe4\xba\xac\xef\xbc\x81", 0, "Tokyo", "\xe6\x9d\xb1", "\xe4\xba\xac",
          "\xef\xbc\x81");
    /* 中文，好 with a fullwidth comma */
    SPLIT("\xe4\xb8\xad\xe6\x96\x87\xef\xbc\x8c\xe5\xa5\xbd", 0, "\xe4\xb8\xad", "\xe6\x96\x87",
          "\xef\xbc\x8c", "\xe5\xa5\xbd");
    /* CJK extension B (4 bytes): U+20000 */
    SPLIT("a\xf0\xa0\x80\x80"
          "b",
          0, "a", "\xf0\xa0\x80\x80", "b");
}

static void test_invalid_utf8(void **state) {
    (void)state;
    /* tok.h: each invalid or truncated sequence start consumes one byte and becomes
     * one U+FFFD, so every offending byte is counted once. */
    SPLIT("\xff", 1, FFFD);
    SPLIT("a\xff"
          "b",
          1, "a" FFFD "b");
    SPLIT("ok \xff ok", 1, "ok", FFFD, "ok");
    SPLIT("\xe6\x9d", 2, FFFD FFFD);        /* truncated 3-byte sequence */
    SPLIT("x \xe6\x9d", 2, "x", FFFD FFFD); /* truncated at the very end */
    SPLIT("\xe6\x9d y", 2, FFFD FFFD, "y");
    SPLIT("\xc0\xaf", 2, FFFD FFFD);                   /* overlong '/' */
    SPLIT("\xe0\x80\xaf", 3, FFFD FFFD FFFD);          /* overlong, 3 bytes */
    SPLIT("\xed\xa0\x80", 3, FFFD FFFD FFFD);          /* surrogate U+D800 */
    SPLIT("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD); /* beyond U+10FFFF */
    SPLIT("\x80\x81", 2, FFFD FFFD);                   /* lone continuation bytes */
    SPLIT("\xe6\x41", 1, FFFD "A");                    /* bad continuation, 'A' kept */
    SPLIT("caf\xe9", 1, "caf" FFFD);                   /* Latin-1, not UTF-8 */
    SPLIT(FFFD, 0, FFFD);                              /* a real U+FFFD is not a replacement */
    SPLIT("\xff\xfe", 2, FFFD FFFD);
}

/* random bytes: never a crash, every token valid UTF-8, replaced matches the U+FFFDs */
static void test_random_bytes(void **state) {
    (void)state;
    uint64_t st = 0x1234567887654321ull;
    for (int iter = 0; iter < 3000; iter++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int len = (int)((st >> 33) % 48);
        char *buf = malloc((size_t)len + 1);
        assert_non_null(buf);
        int fffd_in = 0;
        for (int i = 0; i < len; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            unsigned b = (unsigned)(st >> 56);
            if (b == 0) b = ' ';
            buf[i] = (char)b;
        }
        buf[len] = '\0';
        fffd_in = count_substr(buf, FFFD);
        tok_list t = {0};
        char err[256] = "";
        int total = -1;
        int rc = tok_split(&t, buf, 0, &total, err, sizeof err);
        if (rc != 0) {
            CHECK_INT("tok_split of random bytes: rc", -1, rc);
            CHECK_MSG("tok_split of random bytes", err);
            CHECK_INT("count after failure", 0, t.count);
        } else {
            CHECK_INT("*total vs count", t.count, total);
            int fffd_out = 0;
            for (int i = 0; i < t.count; i++) {
                if (!valid_utf8(t.tokens[i]))
                    fail_msg("random input %d token %d: expected valid UTF-8, got invalid", iter,
                             i);
                fffd_out += count_substr(t.tokens[i], FFFD);
            }
            CHECK_INT("U+FFFD out minus U+FFFD in (random)", t.replaced, fffd_out - fffd_in);
        }
        tok_free(&t);
        free(buf);
    }
}

static void test_empty_and_blank(void **state) {
    (void)state;
    const char *blank[] = {"", " \t\n", "   ", "\r\n\v\f", "\xc2\xa0\xe3\x80\x80"};
    for (size_t i = 0; i < sizeof blank / sizeof blank[0]; i++) {
        tok_list t = {0};
        char err[256] = "";
        int total = 99;
        int rc = tok_split(&t, blank[i], 0, &total, err, sizeof err);
        char what[64];
        snprintf(what, sizeof what, "tok_split(blank #%zu)", i);
        CHECK_INT(what, -1, rc);
        CHECK_MSG(what, err);
        CHECK_INT("count after blank", 0, t.count);
        CHECK_TRUE("tokens after blank", t.tokens == NULL);
        CHECK_INT("*total after blank", 0, total);
        tok_free(&t);
    }
    tok_free(NULL); /* NULL is fine */
}

static void test_max_tokens(void **state) {
    (void)state;
    const char *s = "The animal didn't cross the street because it was too tired.";
    static const char *const all[] = {"The",     "animal", "didn't", "cross", "the",   "street",
                                      "because", "it",     "was",    "too",   "tired", "."};
    const int limits[] = {1, 5, 11, 12, 13, 512, 0, -1};
    const int want[] = {1, 5, 11, 12, 12, 12, 12, 12};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        tok_list t = {0};
        char err[256] = "";
        int total = -1;
        char what[64];
        snprintf(what, sizeof what, "tok_split max_tokens=%d", limits[i]);
        CHECK_INT(what, 0, tok_split(&t, s, limits[i], &total, err, sizeof err));
        CHECK_INT("count with max_tokens", want[i], t.count);
        CHECK_INT("*total with max_tokens", 12, total);
        for (int k = 0; k < t.count; k++) CHECK_STR("kept token", all[k], t.tokens[k]);
        tok_free(&t);
    }
    /* total may be NULL */
    tok_list t = {0};
    char err[256] = "";
    CHECK_INT("tok_split with total NULL", 0, tok_split(&t, s, 3, NULL, err, sizeof err));
    CHECK_INT("count with total NULL", 3, t.count);
    tok_free(&t);
    tok_free(&t); /* twice is fine */

    /* 600 words, limit 512 */
    size_t cap = 600 * 4 + 1;
    char *big = malloc(cap);
    assert_non_null(big);
    big[0] = '\0';
    for (int i = 0; i < 600; i++) strcat(big, i % 2 ? "ab " : "cd ");
    int total = 0;
    CHECK_INT("tok_split 600 words", 0, tok_split(&t, big, 512, &total, err, sizeof err));
    CHECK_INT("count of 600 words limited to 512", 512, t.count);
    CHECK_INT("*total of 600 words", 600, total);
    CHECK_STR("token 511", "ab", t.tokens[511]);
    tok_free(&t);
    free(big);
}

typedef struct {
    const char *bytes;
    size_t len;  /* bytes available */
    int used;    /* expected return */
    unsigned cp; /* expected code point */
} dcase;

static void test_decode_utf8(void **state) {
    (void)state;
    static const dcase D[] = {
        {"A", 1, 1, 0x41},
        {"\x7f", 1, 1, 0x7F},
        {"\xc2\x80", 2, 2, 0x80},
        {"\xc3\xa9", 2, 2, 0xE9},
        {"\xdf\xbf", 2, 2, 0x7FF},
        {"\xe0\xa0\x80", 3, 3, 0x800},
        {"\xe6\x9d\xb1", 3, 3, 0x6771},
        {"\xed\x9f\xbf", 3, 3, 0xD7FF},
        {"\xee\x80\x80", 3, 3, 0xE000},
        {"\xef\xbf\xbd", 3, 3, 0xFFFD},
        {"\xef\xbf\xbf", 3, 3, 0xFFFF},
        {"\xf0\x90\x80\x80", 4, 4, 0x10000},
        {"\xf0\x9f\x98\x80", 4, 4, 0x1F600},
        {"\xf4\x8f\xbf\xbf", 4, 4, 0x10FFFF},
        {"\xc3\xa9zz", 4, 2, 0xE9}, /* only one character consumed */
        /* invalid: one byte consumed, U+FFFD */
        {"\xff", 1, 1, 0xFFFD},
        {"\xfe", 1, 1, 0xFFFD},
        {"\x80", 1, 1, 0xFFFD},
        {"\xbf", 1, 1, 0xFFFD},
        {"\xc0\xaf", 2, 1, 0xFFFD},
        {"\xc1\xbf", 2, 1, 0xFFFD},
        {"\xe0\x80\xaf", 3, 1, 0xFFFD},
        {"\xe0\x9f\xbf", 3, 1, 0xFFFD},
        {"\xf0\x8f\xbf\xbf", 4, 1, 0xFFFD},
        {"\xed\xa0\x80", 3, 1, 0xFFFD},
        {"\xed\xbf\xbf", 3, 1, 0xFFFD},
        {"\xf4\x90\x80\x80", 4, 1, 0xFFFD},
        {"\xf5\x80\x80\x80", 4, 1, 0xFFFD},
        {"\xf8\x88\x80\x80\x80", 5, 1, 0xFFFD},
        {"\xe6\x41\x41", 3, 1, 0xFFFD},
        {"\xc3\x28", 2, 1, 0xFFFD},
        /* truncated: fewer bytes available than the sequence needs */
        {"\xe6\x9d", 2, 1, 0xFFFD},
        {"\xc3", 1, 1, 0xFFFD},
        {"\xf0\x9f\x98", 3, 1, 0xFFFD},
    };
    for (size_t i = 0; i < sizeof D / sizeof D[0]; i++) {
        unsigned char *buf = malloc(D[i].len); /* exact size: no NUL to lean on */
        assert_non_null(buf);
        memcpy(buf, D[i].bytes, D[i].len);
        unsigned cp = 0xDEADBEEF;
        int used = tok_decode_utf8(buf, D[i].len, &cp);
        char what[64];
        snprintf(what, sizeof what, "tok_decode_utf8 case %zu: bytes used", i);
        CHECK_INT(what, D[i].used, used);
        snprintf(what, sizeof what, "tok_decode_utf8 case %zu: code point", i);
        CHECK_INT(what, D[i].cp, cp);
        free(buf);
    }
    /* a valid sequence cut short by len */
    const unsigned char e9[2] = {0xC3, 0xA9};
    unsigned cp = 0;
    CHECK_INT("decode C3 A9 with len 1: used", 1, tok_decode_utf8(e9, 1, &cp));
    CHECK_INT("decode C3 A9 with len 1: cp", 0xFFFD, cp);
}

/* tok_fit at every bound: the kept beginning ends before a character, never in
   one (the reference: the byte offsets where characters start, found here), and
   tok_copy_fit keeps exactly that. tok_blank is tok_split finding no token. */
static void test_fit_and_blank(void **state) {
    (void)state;
    const char *text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 b"; /* a é € 😀 space b */
    const size_t starts[] = {0, 1, 3, 6, 10, 11, 12};             /* and the end */
    const size_t len = strlen(text);
    for (size_t max = 0; max <= len + 2; max++) {
        size_t want = 0;
        for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
            if (starts[i] <= max) want = starts[i];
        char what[64];
        snprintf(what, sizeof what, "tok_fit at %zu bytes", max);
        CHECK_INT(what, (long long)want, (long long)tok_fit(text, max));
        char buf[32];
        CHECK_INT("tok_copy_fit keeps it", (long long)want,
                  (long long)tok_copy_fit(buf, max + 1, text));
        CHECK_INT("NUL-terminated there", (long long)want, (long long)strlen(buf));
    }
    const char *blank[] = {"", " ", " \t\n\r\v\f", "\xC2\xA0\xE3\x80\x80 ", "\x01\x7F"};
    const char *not_blank[] = {"a", "  .", "\xC3\xA9", "\xFF", " \xE4\xB8\xAD "};
    for (size_t i = 0; i < sizeof blank / sizeof blank[0]; i++) {
        CHECK_TRUE("blank", tok_blank(blank[i]));
        tok_list t = {0};
        char err[128];
        CHECK_INT("and tok_split finds no token", -1, tok_split(&t, blank[i], 0, NULL, err, 128));
        CHECK_STR("and says so", TOK_BLANK_WHY, err);
    }
    for (size_t i = 0; i < sizeof not_blank / sizeof not_blank[0]; i++) {
        CHECK_TRUE("not blank", !tok_blank(not_blank[i]));
        tok_list t = {0};
        char err[128];
        CHECK_INT("tok_split finds a token", 0, tok_split(&t, not_blank[i], 0, NULL, err, 128));
        tok_free(&t);
    }
}

static void test_samples(void **state) {
    (void)state;
    int n = samples_count();
    CHECK_TRUE("samples_count() >= 6", n >= 6);
    CHECK_TRUE("samples_get(-1) is NULL", samples_get(-1) == NULL);
    CHECK_TRUE("samples_get(count) is NULL", samples_get(n) == NULL);
    /* the built-in list starts with these (assets/samples.tsv) */
    CHECK_STR("sample 1 name", "short", samples_get(0)->name);
    CHECK_STR("sample 2 text", "The animal didn't cross the street because it was too tired.",
              samples_get(1)->text);
    for (int i = 0; i < n; i++) {
        const sample *s = samples_get(i);
        CHECK_TRUE("sample not NULL", s != NULL);
        CHECK_TRUE("sample name non-empty", s->name && s->name[0]);
        CHECK_TRUE("sample text non-empty", s->text && s->text[0]);
        CHECK_TRUE("sample text valid UTF-8", valid_utf8(s->text));
        CHECK_TRUE("sample text without tab/CR/LF", strpbrk(s->text, "\t\r\n") == NULL);
        tok_list t = {0};
        char err[256] = "";
        int total = 0;
        CHECK_INT("tok_split(sample)", 0, tok_split(&t, s->text, 512, &total, err, sizeof err));
        CHECK_TRUE("sample has 2..512 tokens", t.count >= 2 && total <= 512);
        CHECK_INT("sample replaced", 0, t.replaced);
        tok_free(&t);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_sentence),  cmocka_unit_test(test_punctuation),
        cmocka_unit_test(test_multibyte_words), cmocka_unit_test(test_cjk),
        cmocka_unit_test(test_invalid_utf8),    cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_empty_and_blank), cmocka_unit_test(test_max_tokens),
        cmocka_unit_test(test_decode_utf8),     cmocka_unit_test(test_samples),
        cmocka_unit_test(test_fit_and_blank),
    };
    return cmocka_run_group_tests_name("tok", tests, NULL, NULL);
}
