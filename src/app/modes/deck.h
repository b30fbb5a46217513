/* deck.h: a slide deck, one page per lesson step, written all or nothing. A .pdf
 * target is one multi-page vector PDF (one page per deck_page); a .svg or .png
 * target is one file per page beside it, PATH-01.svg, PATH-02.svg ... (the
 * target's name without its extension, then "-NN"). Every page is written under a
 * temporary name beside the target and renamed into place only at deck_close
 * when every page went well; a failure, or SIGINT/SIGTERM/SIGHUP (cleanup.h),
 * leaves nothing of the deck behind and an earlier deck as it was. */
#ifndef MHAVIZ_DECK_H
#define MHAVIZ_DECK_H

#include <stddef.h>

#include "font.h"
#include "view.h"

#define DECK_MAX_PAGES                                                                             \
    60 /* PATH-01 ... PATH-60: each page is registered with cleanup.h, which holds 64 */

typedef struct deck deck;

/* Starts a deck at path (.pdf, .svg or .png, by the extension) of pages w x h
 * layout pixels, times scale device pixels (PNG: scale x the pixels; PDF and
 * SVG: the page size is w x h, drawn at ui_scale = scale). Returns the deck, or
 * NULL with "cannot write PATH: reason" (or what is wrong with the path) in err. */
deck *deck_open(const char *path, int w, int h, int scale, font_set *fonts, char *err,
                size_t errlen);

/* Adds one page: vs laid out and drawn at the deck's size, as a figure in
 * presentation mode (vs->present and vs->figure are set for the page; the
 * caption's "explored" hint is never drawn). Returns 0, or -1 with the reason;
 * after a failure deck_close(deck, 0, ...) removes everything. */
int deck_page(deck *d, const view_state *vs, char *err, size_t errlen);

/* Pages written so far. */
int deck_pages(const deck *d);

/* The final path of page k (1-based) into out (the target itself for a PDF). */
void deck_page_path(const deck *d, int k, char *out, size_t len);

/* Ends the deck. ok: every page is renamed into place (or the PDF finished and
 * renamed), replacing an earlier deck at that path whole: its pages past the new
 * last one are removed once the new ones are all in place; a deck of no page is
 * refused. !ok: every temporary file is removed. Frees d. Returns 0, or -1 with
 * "cannot write PAGE: reason" (the page's own path, never a temporary one), nothing
 * new left and an earlier deck as it was, byte for byte. Signals wait while pages
 * move (cleanup.h); one that came meanwhile then says the deck is written. */
int deck_close(deck *d, int ok, char *err, size_t errlen);

#endif
