/* model_tok.h: a loaded model's tokenizer, whichever file it came from: Hugging
 * Face's tokenizer.json (tokjson.h), preferred where the folder has one, or GPT-2's
 * vocab.json and merges.txt (bpe.h). The run asks it for ids and labels and never
 * which file it is. A tokenizer.json's post-processor specials (a BOS such as <s> or
 * <|begin_of_text|>) are added as the file says; GPT-2's files add none. No SDL, no
 * globals, never exits. */
#ifndef MHAVIZ_MODEL_TOK_H
#define MHAVIZ_MODEL_TOK_H

#include <stddef.h>

typedef struct model_tok model_tok;

/* Reads tok_json when it is not "" (the folder's tokenizer.json), else vocab and
 * merges, or with merges "" BERT's vocab.txt at vocab and the tokenizer_config.json
 * beside it (tokvocab.h). 0, or 1 (cannot read) / 2 (not a tokenizer we can use) with one line
 * "PATH: what is wrong" in err. */
int model_tok_load(model_tok **out, const char *tok_json, const char *vocab, const char *merges,
                   char *err, size_t errlen);
void model_tok_free(model_tok *t); /* NULL is fine */

/* The file it was read from (tokenizer.json or vocab.json), for messages. */
const char *model_tok_path(const model_tok *t);
/* What it is and the file it came from, for the window's help: "WordPiece
   (vocab.txt)", "Unigram (tokenizer.json)", "GPT-2's byte-level BPE (vocab.json,
   merges.txt)" ... into buf. */
void model_tok_describe(const model_tok *t, char *buf, size_t len);
/* One more than the largest id it can give. */
int model_tok_vocab_size(const model_tok *t);
/* 1: GPT-2's vocab.json and merges.txt (its vocabulary must be the model's exactly). */
int model_tok_is_bpe(const model_tok *t);

/* Encodes len bytes of text, the specials included: writes up to max ids and returns
 * how many the whole text has (> max: cut; ids NULL with max 0 to count), or -1.
 * *replaced: 1 when invalid UTF-8 was replaced by U+FFFD (may be NULL). */
int model_tok_encode(const model_tok *t, const char *text, size_t len, int *ids, int max,
                     int *replaced);
/* The byte range [starts[i], ends[i]) of text each of the first max tokens comes from
 * (tokjson.h's ranges: a special the tokenizer adds has an empty one); how many tokens
 * the whole text has, or -1 (also for GPT-2's vocab.json and merges.txt: no ranges). */
int model_tok_spans(const model_tok *t, const char *text, size_t len, int *starts, int *ends,
                    int max);
/* Token id's bytes: *len bytes, not NUL-terminated, or NULL for an id no token has. */
const unsigned char *model_tok_bytes(const model_tok *t, int id, size_t *len);
/* Token id as a label for the view (bpe.h's rules); "" for an id no token has. */
void model_tok_label(const model_tok *t, int id, char *buf, size_t len);
/* The special token an encoder's masked-LM head fills ([MASK], RoBERTa's <mask>),
 * typed in the text as it is; -1 when the tokenizer has none. */
int model_tok_mask_id(const model_tok *t);
/* 1 when id is a special token the tokenizer adds or reads as a whole ([CLS], <s>). */
int model_tok_is_special(const model_tok *t, int id);

#endif
