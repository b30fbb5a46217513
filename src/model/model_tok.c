/* model_tok.c: one tokenizer over tokenizer.json or GPT-2's files (model_tok.h). */
#include "model_tok.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "tokjson.h"
#include "tokvocab.h"

struct model_tok {
    bpe *bpe;    /* GPT-2's files, or NULL */
    tokjson *tj; /* tokenizer.json or BERT's vocab.txt, or NULL */
    int mask;    /* the special token [MASK] or <mask>, or -1 */
    char path[4096];
};

/* vocab.txt's tokenizer_config.json: the file beside it (it need not exist) */
static int config_beside(char *out, size_t len, const char *vocab) {
    const char *slash = strrchr(vocab, '/');
    const int dir = slash ? (int)(slash - vocab) + 1 : 0;
    return snprintf(out, len, "%.*stokenizer_config.json", dir, vocab) < (int)len ? 0 : -1;
}

/* The special token an encoder's masked-LM head fills, by its text; -1: none. */
static int find_mask(const tokjson *tj) {
    static const char *const names[] = {"[MASK]", "<mask>"};
    const int n = tokjson_vocab_size(tj);
    for (int id = 0; id < n; id++) {
        if (!tokjson_is_special(tj, id)) continue;
        size_t len = 0;
        const unsigned char *b = tokjson_token_bytes(tj, id, &len);
        for (int k = 0; k < 2 && b; k++)
            if (len == strlen(names[k]) && memcmp(b, names[k], len) == 0) return id;
    }
    return -1;
}

int model_tok_load(model_tok **out, const char *tok_json, const char *vocab, const char *merges,
                   char *err, size_t errlen) {
    *out = NULL;
    model_tok *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "%s: out of memory", tok_json[0] ? tok_json : vocab);
        return 1;
    }
    int rc;
    char cfg[4096];
    t->mask = -1;
    if (tok_json[0]) {
        rc = tokjson_load(&t->tj, tok_json, err, errlen);
        snprintf(t->path, sizeof t->path, "%s", tok_json);
    } else if (!merges[0]) { /* BERT's vocab.txt (checkpoint.h) */
        rc = config_beside(cfg, sizeof cfg, vocab);
        if (rc != 0) snprintf(err, errlen, "%s: path too long", vocab);
        rc = rc != 0 ? 1 : tokvocab_load(&t->tj, vocab, cfg, err, errlen);
        snprintf(t->path, sizeof t->path, "%s", vocab);
    } else {
        rc = bpe_load(&t->bpe, vocab, merges, err, errlen);
        snprintf(t->path, sizeof t->path, "%s", vocab);
    }
    if (rc != 0) {
        model_tok_free(t);
        return rc;
    }
    if (t->tj) t->mask = find_mask(t->tj);
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

void model_tok_describe(const model_tok *t, char *buf, size_t len) {
    if (t->bpe) {
        snprintf(buf, len, "GPT-2's byte-level BPE (vocab.json, merges.txt)");
        return;
    }
    const char *slash = strrchr(t->path, '/');
    snprintf(buf, len, "%s (%s)", tokjson_kind(t->tj), slash ? slash + 1 : t->path);
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

int model_tok_spans(const model_tok *t, const char *text, size_t len, int *starts, int *ends,
                    int max) {
    if (!t->tj) return -1;
    return tokjson_encode(t->tj, text, len, 1, NULL, starts, ends, max, NULL);
}

const unsigned char *model_tok_bytes(const model_tok *t, int id, size_t *len) {
    if (t->bpe) return bpe_token_bytes(t->bpe, id, len);
    return tokjson_token_bytes(t->tj, id, len);
}

void model_tok_label(const model_tok *t, int id, char *buf, size_t len) {
    if (t->bpe)
        bpe_token_label(t->bpe, id, buf, len);
    else
        tokjson_token_label(t->tj, id, buf, len);
}

int model_tok_mask_id(const model_tok *t) {
    return t->mask;
}

int model_tok_is_special(const model_tok *t, int id) {
    return t->tj && tokjson_is_special(t->tj, id);
}
