/* bpe.h: GPT-2's tokenizer, exactly: byte-level BPE. The text (UTF-8) is split by
 * GPT-2's pre-tokenizer pattern
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * (PCRE2, UTF and Unicode-property mode; bpe.c spells \s out, and adds Unicode 15's
 * letters and digits to \p{L} and \p{N}, so PCRE2 10.42 splits exactly as Python's
 * `regex`, which encoder.py uses); each piece's bytes are mapped through
 * the byte-to-unicode table, merged by merges.txt's ranks (lowest first) and
 * looked up in vocab.json. No BOS is added. Invalid UTF-8 in the text: see
 * bpe_encode. No SDL, no globals. */
#ifndef MHAVIZ_BPE_H
#define MHAVIZ_BPE_H

#include <stddef.h>

typedef struct bpe bpe;

/* Reads vocab.json (token string -> id, ids 0..n-1 each once) and merges.txt
 * ("#version" line optional, then "a b" per line, each a pair whose merge is in
 * the vocabulary). 0, or 1 (cannot read) / 2 (not a tokenizer we can use) with
 * one line "PATH: what is wrong" in err. */
int bpe_load(bpe **out, const char *vocab_path, const char *merges_path, char *err, size_t errlen);
/* The same from bytes in memory (the fuzzer's way in); the paths only name them. */
int bpe_parse(bpe **out, const char *vocab, size_t vocab_len, const char *merges, size_t merges_len,
              const char *vocab_path, const char *merges_path, char *err, size_t errlen);
void bpe_free(bpe *b); /* NULL is fine */

int bpe_vocab_size(const bpe *b);

/* Encodes len bytes of text: writes up to max ids and returns how many the whole
 * text has (so a return > max means it was cut; ids may be NULL with max 0 to
 * count), or -1 (out of memory, or a text over INT_MAX / 3 bytes). Invalid UTF-8 is
 * replaced by U+FFFD before splitting, one U+FFFD per maximal ill-formed subpart
 * (Unicode's best practice, exactly as Python's bytes.decode('utf-8', 'replace'):
 * a truncated E2 82 gives one, a surrogate ED A0 80 three, F5..FF one each);
 * *replaced is set to 1 then, 0 otherwise (replaced may be NULL). */
int bpe_encode(const bpe *b, const char *text, size_t len, int *ids, int max, int *replaced);

/* Token id's bytes (the byte-to-unicode table undone): *len bytes, not
 * NUL-terminated, or NULL for an id out of range. */
const unsigned char *bpe_token_bytes(const bpe *b, int id, size_t *len);

/* Token id as a label, for the view (the README lists these rules):
 *  - the token's text (its bytes, UTF-8);
 *  - a space as its first character shown as "␣" (U+2423); a newline as "↵" (U+21B5),
 *    a tab as "→" (U+2192), any other white space (a space after the first character,
 *    \r \v \f, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
 *    U+3000: the pre-tokenizer's \s) as "·" (U+00B7);
 *  - each byte that is not part of a whole valid UTF-8 character (a token may hold
 *    part of one), and each other C0 control character and DEL (no font draws them),
 *    as "<e2>": two lowercase hex digits per byte;
 *  - always NUL-terminated (len >= 1), cut only between whole shown characters; an
 *    id out of range gives "". */
void bpe_token_label(const bpe *b, int id, char *buf, size_t len);
/* The same rules for any n bytes t (tokjson.c's labels use them too). */
/* Length of the valid UTF-8 character at s (n bytes left), or 0 when it is not one.
 * With *sub, also the length of the maximal subpart of an ill-formed sequence (1 at
 * least): Unicode's "best practice" that Python's decode('utf-8', 'replace') follows,
 * one U+FFFD per maximal subpart. With *cp, its code point. */
size_t bpe_utf8_char(const unsigned char *s, size_t n, size_t *sub, unsigned *cp);
void bpe_bytes_label(const unsigned char *t, size_t n, char *buf, size_t len);

#endif
