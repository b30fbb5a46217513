/* tok.h: splits UTF-8 text into word and punctuation tokens.
 * The rule (documented in the README):
 *   - whitespace (ASCII space, tab, newline, CR, VT, FF, U+00A0, U+3000) separates tokens;
 *   - a word is a run of letters, digits, '_' and non-ASCII characters that are
 *     not punctuation; an apostrophe (' or U+2019) between two word characters
 *     stays inside the word ("didn't");
 *   - every other ASCII character (punctuation, symbols) is a token of its own;
 *   - CJK ideographs, kana and CJK punctuation (no spaces in those scripts) are
 *     each a token of their own;
 *   - a byte sequence that is not valid UTF-8 is replaced by U+FFFD, so a token
 *     is always valid UTF-8 and never cut inside a sequence.
 * Owns its strings; knows nothing of embeddings. */
#ifndef MHAVIZ_TOK_H
#define MHAVIZ_TOK_H

#include <stddef.h>

typedef struct {
    int count;     /* number of tokens */
    char **tokens; /* count NUL-terminated UTF-8 strings */
    int replaced;  /* invalid UTF-8 sequences replaced by U+FFFD */
} tok_list;

/* Splits text into toks (which must be zeroed or freed). At most max_tokens are (<= 0: no limit)
 * kept; *total  (if not NULL) receives how many the text holds in all.
 * Returns 0, or -1 with a message in err: empty or blank text, or out of memory. */
int tok_split(tok_list *toks, const char *text, int max_tokens, int *total, char *err,
              size_t errlen);

/* What tok_split says of a blank text, and the window of one it refuses. */
#define TOK_BLANK_WHY "text is empty or blank: nothing to attend to"

/* 1 when text has no token (empty, or only the white space above, control
 * characters included): the one test of a blank text, for the window's text
 * field, a text file and a view file alike. */
int tok_blank(const char *text);

/* The length of text's beginning of at most max bytes that ends at a character
 * boundary: cut there, a text keeps whole UTF-8 characters. */
size_t tok_fit(const char *text, size_t max);

/* Copies text into dst (size bytes, > 0; they may overlap) whole, or cut by
 * tok_fit to size - 1 bytes, NUL-terminated. Returns the bytes kept. */
size_t tok_copy_fit(char *dst, size_t size, const char *text);

/* Frees the strings; the list is left empty. NULL is fine. */
void tok_free(tok_list *toks);

/* Copies src into dst (which is overwritten): its own strings. 0, or -1 out of
 * memory (dst left empty). */
int tok_copy(tok_list *dst, const tok_list *src);

/* Decodes one UTF-8 character at s (len bytes available). Returns the number of
 * bytes consumed (>= 1) and the code point in *cp, or U+FFFD for an invalid or
 * truncated sequence (consuming one byte). Overlongs and surrogates are invalid. */
int tok_decode_utf8(const unsigned char *s, size_t len, unsigned *cp);

#endif
