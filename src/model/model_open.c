/* model_open.c: the checks gpt2_load makes before it reads the weights (gpt2.h):
 * a tokenizer that fits the model. */
#include <stdio.h>

#include "gpt2.h"

int gpt2_open_tokenizer(gpt2_model *m, char *err, size_t errlen) {
    const ckpt_paths *p = &m->paths;
    const model_spec *s = &m->cfg.spec;
    int rc = model_tok_load(&m->tok, p->tokenizer, p->vocab, p->merges, err, errlen);
    if (rc != 0) return rc;
    const int n = model_tok_vocab_size(m->tok);
    if (model_tok_is_bpe(m->tok) && n != s->vocab) {
        snprintf(err, errlen, "%s: %d tokens, but config.json's vocab_size is %d", p->vocab, n,
                 s->vocab);
        return 2;
    }
    if (n > s->vocab) {
        snprintf(err, errlen, "%s: ids reach %d, past config.json's vocab_size (%d)",
                 model_tok_path(m->tok), n - 1, s->vocab);
        return 2;
    }
    return 0;
}
