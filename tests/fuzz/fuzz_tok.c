/* fuzz_tok.c: the tokenizer on any bytes. Every token must be non-empty, valid
 * UTF-8 and free of whitespace; the count within the limit and the total; a
 * refusal must say why on one line and leave the list empty. */
#include <string.h>

#include "fuzz.h"
#include "tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 16) return 0;
    /* the first byte picks the limit: none, 1, 7 or 512 tokens */
    static const int limits[4] = {0, 1, 7, 512};
    const int max = limits[data[0] & 3];
    char *text = malloc(size);
    FUZZ_EXPECT(text != NULL, "malloc");
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0'; /* text stops at the first NUL, as a C string does */
    tok_list t = {0};
    int total = -1;
    char err[256] = "";
    int rc = tok_split(&t, text, max, &total, err, sizeof err);
    if (rc == 0) {
        FUZZ_EXPECT(t.count >= 1 && (max <= 0 || t.count <= max), "count %d, limit %d", t.count,
                    max);
        FUZZ_EXPECT(total >= t.count, "total %d < count %d", total, t.count);
        for (int i = 0; i < t.count; i++) {
            const char *k = t.tokens[i];
            FUZZ_EXPECT(k && k[0], "token %d empty", i);
            FUZZ_EXPECT(fuzz_valid_utf8((const unsigned char *)k), "token %d not UTF-8", i);
            FUZZ_EXPECT(!strpbrk(k, " \t\n\r\v\f"), "token %d holds white space", i);
        }
    } else {
        FUZZ_EXPECT(rc == -1, "rc %d", rc);
        FUZZ_EXPECT(t.count == 0 && err[0] && !strchr(err, '\n'), "refusal: count %d, err '%s'",
                    t.count, err);
    }
    tok_free(&t);
    free(text);
    return 0;
}
