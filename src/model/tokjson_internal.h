/* tokjson_internal.h: what tokjson.c (reading tokenizer.json) builds and
 * tokjson_encode.c (encoding, labels) reads. Not for other modules. */
#ifndef MHAVIZ_TOKJSON_INTERNAL_H
#define MHAVIZ_TOKJSON_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "tokjson.h"

#define TJ_MAX_ID (1 << 22)      /* ids past this are refused: 4M tokens */
#define TJ_MAX_STEPS 16          /* normalizers or pre-tokenizers in one Sequence */
#define TJ_MAX_POST 16           /* tokens a post-processor adds */
#define TJ_MAX_FILE (256u << 20) /* Gemma 3's tokenizer.json is 33 MiB */

enum tj_norm_kind {
    TJ_NFC,
    TJ_NFD,
    TJ_NFKC,
    TJ_NFKD,
    TJ_PREPEND,
    TJ_REPLACE,
    TJ_LOWERCASE,
    TJ_BERT_NORM,
    TJ_STRIP_ACCENTS,
    TJ_PRECOMPILED
};
typedef struct {
    enum tj_norm_kind kind;
    char *text;                                        /* Prepend's string, Replace's content */
    char *pattern;                                     /* Replace's literal string (NULL when re) */
    pcre2_code *re;                                    /* Replace's regex */
    int clean_text, chinese, strip_accents, lowercase; /* BertNormalizer's */
    uint32_t *trie; /* Precompiled's double-array trie (n_trie units) */
    size_t n_trie;
    char *chars; /* and its replacements, each NUL-ended (n_chars bytes) */
    size_t n_chars;
} tj_norm;

/* TJ_WS_SPLIT: white space removed (WhitespaceSplit, BertPreTokenizer's first half);
 * TJ_PUNCT: each punctuation character alone (Punctuation, BertPreTokenizer's second) */
enum tj_pre_kind { TJ_SPLIT, TJ_BYTELEVEL, TJ_METASPACE, TJ_DIGITS, TJ_WS_SPLIT, TJ_PUNCT };
enum tj_behavior { TJ_ISOLATED, TJ_REMOVED, TJ_MERGED_PREV, TJ_MERGED_NEXT };
typedef struct {
    enum tj_pre_kind kind;
    pcre2_code *re;            /* Split's pattern, ByteLevel's GPT-2 pattern (use_regex) */
    enum tj_behavior behavior; /* Split */
    int invert;                /* Split */
    int add_prefix_space;      /* ByteLevel; Metaspace: 1 always, 2 first section only */
    int split;                 /* Metaspace: split on the replacement */
    char rep[8];               /* Metaspace's replacement character, UTF-8 */
    int individual;            /* Digits: each digit alone */
} tj_pre;

typedef struct {
    char *content;
    size_t len;
    char *match; /* what the text must hold: content, normalized when normalized is set */
    size_t mlen;
    int id, special, lstrip, rstrip, single_word, normalized;
} tj_added;

struct tokjson {
    int n_ids;      /* one more than the largest id */
    char **str;     /* n_ids: token id's string as the file has it (NULL: none) */
    uint32_t *slen; /* its length */
    int32_t *vslot; /* model vocab hash: ids, -1 empty */
    size_t vmask;
    uint64_t *mkey; /* merge hash: (left << 32 | right) + 1, 0 empty */
    int32_t *mrank, *mresult;
    size_t mmask;
    int unk, fuse_unk, byte_fallback, ignore_merges;
    int max_len; /* the longest token in the model's vocabulary, in bytes */
    int wordpiece,
        max_chars;         /* a WordPiece model: greedy longest match, max_input_chars_per_word */
    char *prefix, *suffix; /* continuing_subword_prefix, end_of_word_suffix (NULL: none) */
    int unigram;           /* a Unigram model: Viterbi over score (n_ids), unk always fused */
    double *score, min_score;
    int byte_tok[256]; /* byte fallback's <0xNN> ids, -1 none */

    tj_norm norm[TJ_MAX_STEPS];
    int n_norm;
    tj_pre pre[TJ_MAX_STEPS];
    int n_pre;
    int byte_level; /* a ByteLevel pre-tokenizer maps bytes to characters */
    int sp_decode;  /* labels: "▁" is a space, <0xNN> a byte (SentencePiece style) */

    tj_added *added;
    int n_added;
    int32_t *added_of;         /* n_ids: index into added, -1 none */
    int *first_added[256];     /* per first byte: indices into added, longest first, -1 ends */
    unsigned char *is_special; /* n_ids */

    int post_before[TJ_MAX_POST], n_before; /* ids the post-processor adds before A */
    int post_after[TJ_MAX_POST], n_after;   /* and after */

    unsigned char **bytes; /* n_ids: tokjson_token_bytes, made at load */
    uint32_t *blen;
};

/* the model vocabulary's id of s (n bytes), or -1 */
int tj_vocab_find(const tokjson *t, const char *s, size_t n);
/* the merge of (left, right): 1 with its rank and result, or 0 */
int tj_merge_find(const tokjson *t, int left, int right, int32_t *rank, int32_t *result);

/* UTF-8: the length of the valid character at s (n bytes left) and its code point, or
 * 0 (with *sub the maximal ill-formed subpart's length) */
size_t tj_utf8_char(const unsigned char *s, size_t n, size_t *sub, unsigned *cp);
int tj_put_utf8(unsigned char *o, unsigned cp);
/* GPT-2's byte-to-unicode table and its inverse (-1: not a table character) */
unsigned tj_byte_to_cp(unsigned b);
int tj_cp_to_byte(unsigned cp);

/* Precompiled (tokjson_precompiled.c): the replacement of the shortest key of the
 * charsmap that begins key (n bytes), as SentencePiece's darts trie finds it: its bytes
 * and *len, or NULL when no key begins it. */
const char *tj_precompiled_find(const tj_norm *st, const unsigned char *key, size_t n, size_t *len);

/* Unigram (tokjson_unigram.c): one piece of n bytes encoded by Hugging Face's Viterbi:
 * ids and byte ranges [s, e) into the caller's arrays (room for n each); the count, or
 * -1 (out of memory). lat is scratch, grown as needed (freed by the caller). */
typedef struct {
    double *best;
    int32_t *from, *id;
    size_t cap;
} tj_lattice;
int tj_unigram_encode(const tokjson *t, tj_lattice *lat, const unsigned char *p, size_t n, int *ids,
                      int32_t *s, int32_t *e);

/* the labels' bytes of every id, made once the file is read (tokjson_encode.c) */
int tj_make_bytes(tokjson *t);

#endif
