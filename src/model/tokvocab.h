/* tokvocab.h: BERT's WordPiece tokenizer from a plain vocab.txt (one token a line, its
 * id the line's index) and the tokenizer_config.json beside it, as Hugging Face's
 * BertTokenizerFast makes it of them (convert_slow_tokenizer.py's BertConverter): the
 * same tokenizer.json model tokjson.h reads, so both ways give the same ids. */
#ifndef MHAVIZ_TOKVOCAB_H
#define MHAVIZ_TOKVOCAB_H

#include <stddef.h>

#include "tokjson.h"

/* Reads vocab.txt at vocab_path and, when config_path is not NULL and names a file
 * that exists, tokenizer_config.json (do_lower_case, strip_accents,
 * tokenize_chinese_chars, the special tokens; absent fields take BertTokenizer's
 * defaults). 0, or 1 (cannot read) / 2 (not a vocabulary we can use) with one line
 * "PATH: what is wrong" in err. */
int tokvocab_load(tokjson **out, const char *vocab_path, const char *config_path, char *err,
                  size_t errlen);

/* The same from bytes in memory (config NULL: none); the paths only name them. */
int tokvocab_parse(tokjson **out, const char *vocab, size_t vlen, const char *config, size_t clen,
                   const char *vocab_path, const char *config_path, char *err, size_t errlen);

#endif
