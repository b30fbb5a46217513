/* lesson_mode.h: a lesson headless (lesson_mode.c): the file checked before any
 * mode starts, one step's --dump or --export, and every step as a deck (--export). */
#ifndef MHAVIZ_LESSON_MODE_H
#define MHAVIZ_LESSON_MODE_H

#include <stddef.h>

#include "options.h"
#include "tok.h"

/* Reads and checks o->lesson_path (and --step K among its steps): 0, or 1 / 2
   with "FILE:LINE: what" in err. */
int app_lesson_check(const cli_options *o, char *err, size_t errlen);

/* --lesson FILE --export deck.pdf|.svg|.png: one 16:9 page per step (the deck
   writer, deck.h), a progress line per page on stderr. 0, or 1 / 2 with err. */
int app_lesson_deck(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                    size_t errlen);

/* --lesson FILE --step K --export x.png|.svg|.pdf: that step's figure; a step in
   training mode trains its run to its N steps first, as the deck's page does. 0, or
   1 / 2 with err. */
int app_lesson_step_export(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                           size_t errlen);

/* --lesson FILE --step K --dump DIR: that step's tensors. 0, or 1 / 2 with err. */
int app_lesson_dump(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                    size_t errlen);

#endif
