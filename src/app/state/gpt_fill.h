/* gpt_fill.h: an encoder's "fill the blank" panel (view.h's view_next with its own
 * title, a heading over each blank and a note) from a run of the model (gpt2.h):
 * each [MASK] of the text, the masked-LM head's most likely tokens for it, and with
 * heads removed the same tokens with every head on. */
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

#endif
