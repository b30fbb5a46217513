/* tokjson.h: a Hugging Face tokenizer.json, BPE, WordPiece or Unigram model, giving the ids Hugging
 * Face's `tokenizers` library gives: added tokens split off first, the normalizers (NFC,
 * NFD, NFKC, NFKD through libutf8proc; Prepend, Replace, Lowercase, BertNormalizer,
 * Sequence, StripAccents, Precompiled: SentencePiece's compiled table), the pre-tokenizers
 * (ByteLevel, the file's own Split regex through PCRE2, Metaspace, Digits, BertPreTokenizer,
 * WhitespaceSplit, Punctuation, Sequence), BPE with ignore_merges, byte_fallback, unk_token,
 * fuse_unk and continuing_subword_prefix / end_of_word_suffix, or WordPiece (greedy longest match,
 * "##"), or Unigram (Viterbi over the pieces' scores, unk fused), then the post-processor's special
 * tokens (TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel, Sequence). No SDL, no
 * globals, never exits. */
#ifndef MHAVIZ_TOKJSON_H
#define MHAVIZ_TOKJSON_H

#include <stddef.h>

typedef struct tokjson tokjson;

/* Reads tokenizer.json. 0, or 1 (cannot read) / 2 (not a tokenizer we can use: broken
 * JSON, a model other than BPE, WordPiece or Unigram, a merge naming a symbol not in the
 * vocabulary, an id out of range, a pre-tokenizer or normalizer we do not know ...) with one line
 * "PATH: what is wrong" in err. */
int tokjson_load(tokjson **out, const char *path, char *err, size_t errlen);
/* The same from bytes in memory (the fuzzer's way in); path only names them. */
int tokjson_parse(tokjson **out, const char *json, size_t len, const char *path, char *err,
                  size_t errlen);
void tokjson_free(tokjson *t); /* NULL is fine */

/* One more than the largest id (the model's vocabulary and the added tokens). */
int tokjson_vocab_size(const tokjson *t);

/* Encodes len bytes of text (UTF-8; each maximal ill-formed subpart is read as one
 * U+FFFD, as Python's decode('utf-8', 'replace') and node's TextDecoder do; *replaced is
 * then 1, else 0; replaced may be NULL). With add_special, the post-processor's tokens
 * (a BOS such as <|begin_of_text|> or <s>) are added as the file says. Writes up to max
 * ids and, when starts/ends are not NULL, each token's byte range [start, end) in the
 * text: byte-exact where no normalizer changed the text (a byte-level token that holds
 * part of a character has part of its bytes), a normalizer's change mapping to the whole
 * character cluster it came from, a U+FFFD to the bytes it replaced, a token the
 * post-processor added to an empty range at 0 (before) or len (after). Returns how
 * many tokens the whole text has (a return > max means cut; ids may be NULL with max
 * 0 to count), or -1 (out of memory, a text over INT_MAX / 4 bytes, or a file's regex
 * past PCRE2's match limit on this text). */
int tokjson_encode(const tokjson *t, const char *text, size_t len, int add_special, int *ids,
                   int *starts, int *ends, int max, int *replaced);

/* Token id as the bytes it stands for in the text: a byte-level token's characters
 * mapped back to bytes, a SentencePiece "▁" as a space, "<0xNN>" as the byte NN, an
 * added token's content as it is. *len bytes, not NUL-terminated; NULL (and *len 0)
 * for an id no token has. */
const unsigned char *tokjson_token_bytes(const tokjson *t, int id, size_t *len);

/* Token id as a label for the view, by the rules of GPT-2's labels (bpe.h,
 * bpe_bytes_label) over tokjson_token_bytes; an added token's content shown as it is.
 * Always NUL-terminated; "" for an id no token has. */
void tokjson_token_label(const tokjson *t, int id, char *buf, size_t len);

/* 1 when id is an added token marked special (<s>, <|begin_of_text|>, ...). */
int tokjson_is_special(const tokjson *t, int id);

/* Its model, in words: "WordPiece", "Unigram", "byte-level BPE" (GPT-2's and
   RoBERTa's kind), "BPE with byte fallback" (SentencePiece's, Llama 2's) or "BPE". */
const char *tokjson_kind(const tokjson *t);

#endif
