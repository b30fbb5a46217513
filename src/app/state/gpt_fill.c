/* gpt_fill.c: an encoder's "fill the blank" panel from its run (gpt_fill.h). */
#include "gpt_fill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "token 7: the ___ ." (the blank between its neighbours' labels) */
static void heading(char *buf, size_t len, const gpt2_run *r, int pos, int blank, int blanks) {
    const char *before = pos > 0 ? r->label[pos - 1] : "";
    const char *after = pos + 1 < r->n ? r->label[pos + 1] : "";
    char which[24] = "";
    if (blanks > 1) snprintf(which, sizeof which, "blank %d, ", blank + 1);
    snprintf(buf, len, "%stoken %d: %s ___ %s", which, pos + 1, before, after);
}

void gpt_fill_panel(view_next *x, gpt_fill_text *t, const gpt2_run *r, int per) {
    memset(x, 0, sizeof *x);
    x->cut = r->n < r->n_text;
    x->title = t->title;
    x->note = NULL;
    const int fills = gpt2_run_fills(r);
    snprintf(t->title, sizeof t->title, fills > 1 ? "Fill the blanks" : "Fill the blank");
    char mask[GPT2_LABEL] = "";
    const int mask_id = model_tok_mask_id(r->m->tok);
    if (mask_id >= 0) model_tok_label(r->m->tok, mask_id, mask, sizeof mask);
    if (!r->fill) {
        snprintf(t->note, sizeof t->note, "no masked-LM head in this file: nothing to fill");
        x->note = t->note;
        return;
    }
    if (fills < 1) {
        if (mask_id >= 0)
            snprintf(t->note, sizeof t->note, "type %s in the text: the model fills it in", mask);
        else
            snprintf(t->note, sizeof t->note, "its tokenizer has no mask token to fill");
        x->note = t->note;
        return;
    }
    if (per > VIEW_NEXT_MAX) per = VIEW_NEXT_MAX;
    int rows = fills == 1 ? per : per / fills;
    rows = rows < 3 ? 3 : rows > per ? per : rows;
    const int blanks = fills < VIEW_NEXT_MAX / rows ? fills : VIEW_NEXT_MAX / rows;
    for (int b = 0; b < blanks; b++)
        for (int k = 0; k < rows && k < GPT2_TOP; k++) {
            const int i = x->k++, id = r->fill_ids[b][k];
            model_tok_label(r->m->tok, id, t->label[i], GPT2_LABEL);
            x->token[i] = t->label[i];
            x->p[i] = r->fill_p[b][k];
            x->p_full[i] = r->any_off ? r->fill_p_full[b][k] : -1.0f;
            if (k == 0) {
                heading(t->group[i], sizeof t->group[i], r, r->mask_pos[b], b, fills);
                x->group[i] = t->group[i];
            }
        }
    if (blanks < r->n_mask) {
        snprintf(t->note, sizeof t->note, "the first %d of %d blanks shown", blanks, r->n_mask);
        x->note = t->note;
    }
}

int gpt_fill_mask_token(const gpt2_run *r, const char *text, int token, char *out, size_t outlen,
                        char *why, size_t whylen) {
    const model_tok *tok = r->m->tok;
    const int mask = model_tok_mask_id(tok);
    char name[GPT2_LABEL];
    if (mask < 0) {
        snprintf(why, whylen, "its tokenizer has no mask token");
        return -1;
    }
    model_tok_label(tok, mask, name, sizeof name);
    const size_t len = strlen(text);
    const int n = model_tok_spans(tok, text, len, NULL, NULL, 0);
    if (n < 1 || token < 0 || token >= n) {
        snprintf(why, whylen, "no token %d in the text", token + 1);
        return -1;
    }
    int *at = malloc(2 * (size_t)n * sizeof(int));
    if (!at || model_tok_spans(tok, text, len, at, at + n, n) != n) {
        free(at);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int start = at[token];
    const int end = at[n + token];
    free(at);
    if (end <= start) {
        snprintf(why, whylen, "token %d is the tokenizer's own, not the text's", token + 1);
        return -1;
    }
    while (start < end && (text[start] == ' ' || text[start] == '\t' || text[start] == '\n'))
        start++; /* RoBERTa's "Ġcat": the space stays before the mask */
    if (end - start == (int)strlen(name) && memcmp(text + start, name, strlen(name)) == 0) {
        snprintf(why, whylen, "token %d is a blank already", token + 1);
        return -1;
    }
    const int w = snprintf(out, outlen, "%.*s%s%s", start, text, name, text + end);
    if (w < 0 || (size_t)w >= outlen) {
        snprintf(why, whylen, "the text would be too long");
        return -1;
    }
    return 0;
}
