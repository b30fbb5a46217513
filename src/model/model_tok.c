/* model_tok.c: one tokenizer over tokenizer.json or GPT-2's files (model_tok.h). */
#include "model_tok.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "tokjson.h"

struct model_tok {
    bpe *bpe;    /* GPT-2's files, or NULL */
    tokjson *tj; /* tokenizer.json, or NULL */
    char path[4096];
};

int model_tok_load(model_tok **out, const char *tok_json, const char *vocab, const char *merges,
                   char *err, size_t errlen) {
    *out = NULL;
    model_tok *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "%s: out of memory", tok_json[0] ? tok_json : vocab);
        return 1;
    }
    int rc;
    if (tok_json[0]) {
        rc = tokjson_load(&t->tj, tok_json, err, errlen);
        snprintf(t->path, sizeof t->path, "%s", tok_json);
    } else {
        rc = bpe_load(&t->bpe, vocab, merges, err, errlen);
        snprintf(t->path, sizeof t->path, "%s", vocab);
    }
    if (rc != 0) {
        model_tok_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void model_tok_free(model_tok *t) {
    if (!t) return;
    bpe_free(t->bpe);
    tokjson_free(t->tj);
    free(t);
}

const char *model_tok_path(const model_tok *t) {
    return t->path;
}

int model_tok_vocab_size(const model_tok *t) {
    return t->bpe ? bpe_vocab_size(t->bpe) : tokjson_vocab_size(t->tj);
}

int model_tok_is_bpe(const model_tok *t) {
    return t->bpe != NULL;
}

int model_tok_encode(const model_tok *t, const char *text, size_t len, int *ids, int max,
                     int *replaced) {
    if (t->bpe) return bpe_encode(t->bpe, text, len, ids, max, replaced);
    return tokjson_encode(t->tj, text, len, 1, ids, NULL, NULL, max, replaced);
}

const unsigned char *model_tok_bytes(const model_tok *t, int id, size_t *len) {
    if (t->bpe) return bpe_token_bytes(t->bpe, id, len);
    return tokjson_token_bytes(t->tj, id, len);
}

int model_tok_end_of_text(const model_tok *t) {
    static const char eot[] = "<|endoftext|>";
    const int id = model_tok_vocab_size(t) - 1;
    size_t len = 0;
    const unsigned char *b = model_tok_bytes(t, id, &len);
    return b && len == sizeof eot - 1 && memcmp(b, eot, len) == 0 ? id : -1;
}

void model_tok_label(const model_tok *t, int id, char *buf, size_t len) {
    if (t->bpe)
        bpe_token_label(t->bpe, id, buf, len);
    else
        tokjson_token_label(t->tj, id, buf, len);
}
