/* gpt_fill.h: an encoder's "fill the blank" panel (view.h's view_next with its own
 * title, a heading over each blank and a note) from a run of the model (gpt2.h):
 * each [MASK] of the text, the masked-LM head's most likely tokens for it, and with
 * heads removed the same tokens with every head on; and a token of the text made a
 * blank. */
#ifndef MHAVIZ_GPT_FILL_H
#define MHAVIZ_GPT_FILL_H

#include "gpt2.h"
#include "view.h"

typedef struct {
    char label[VIEW_NEXT_MAX][GPT2_LABEL];
    char group[VIEW_NEXT_MAX][3 * GPT2_LABEL + 32];
    char title[32];
    char note[GPT2_LABEL + 96];
} gpt_fill_text;

/* Fills x (its strings in t) from r, an encoder's run: at most `per` rows for one
 * blank (5 in the window, 10 alone), fewer each (3 at least) when there are more,
 * as many blanks as VIEW_NEXT_MAX rows hold. No head in the file, no mask in the
 * text: no rows, and the note says so (and how to add a mask). */
void gpt_fill_panel(view_next *x, gpt_fill_text *t, const gpt2_run *r, int per);

/* text with token `token` of its encoding (r's model's tokenizer) replaced by the mask
 * token ([MASK], <mask>), the white space the token starts with kept: M on a token in
 * the window. 0 with out (outlen bytes at most), or -1 with why: no mask token, a
 * token the tokenizer added ([CLS]), one already masked, out of range or too long. */
int gpt_fill_mask_token(const gpt2_run *r, const char *text, int token, char *out, size_t outlen,
                        char *why, size_t whylen);

#endif
