/* fuzz.h: what the libFuzzer targets share: an invariant check that prints what
 * broke and stops the run (libFuzzer then saves the input as a crash). */
#ifndef MHAVIZ_FUZZ_H
#define MHAVIZ_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_EXPECT(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Reads the next byte of the input (0 once it is used up). */
static inline unsigned fuzz_byte(const uint8_t **p, size_t *n) {
    if (*n == 0) return 0;
    (*n)--;
    return *(*p)++;
}

/* The next two bytes as a little-endian 16-bit value. */
static inline unsigned fuzz_u16(const uint8_t **p, size_t *n) {
    unsigned lo = fuzz_byte(p, n);
    return lo | fuzz_byte(p, n) << 8;
}

/* A strict UTF-8 check (no overlongs, surrogates or code points past U+10FFFF),
 * written here, independent of the code under test. */
static inline int fuzz_valid_utf8(const unsigned char *s) {
    while (*s) {
        unsigned c = *s, cp, n;
        if (c < 0x80)
            cp = c, n = 1;
        else if (c >= 0xC2 && c <= 0xDF)
            cp = c & 0x1F, n = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            cp = c & 0x0F, n = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            cp = c & 0x07, n = 4;
        else
            return 0;
        for (unsigned k = 1; k < n; k++) {
            if ((s[k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[k] & 0x3F);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        s += n;
    }
    return 1;
}

#endif
