/* font.h: fonts for the backends (fontconfig + SDL2_ttf), with per-character
 * fallback for scripts DejaVu Sans lacks. font_measure is the view's text measurer. */
#ifndef MHAVIZ_FONT_H
#define MHAVIZ_FONT_H

#include <SDL.h>
#include <SDL_ttf.h>
#include <stddef.h>

#include "colormap.h"

typedef struct font_set font_set;

/* Finds the fonts (override: a TTF/OTF path from --font). TTF_Init must have
 * been called. Returns NULL with a message when no usable font exists. */
font_set *font_set_open(const char *override, char *err, size_t errlen);
void font_set_close(font_set *fs);

/* Path of the primary regular (bold = 0) or bold face. */
const char *font_set_path(const font_set *fs, int bold);

/* view_measure_fn: width and line height of text at pixel size `size`. ud is the font_set. */
void font_measure(void *ud, const char *text, int size, int bold, int *w, int *h);

/* Renders text to a new ARGB surface (caller frees), or NULL for empty text. */
SDL_Surface *font_render(font_set *fs, const char *text, int size, int bold, rgba color);

/* Splits text into runs drawn by one face each (primary or a fallback), for the
 * vector backend: fn gets the face's file, whether bold is synthetic, the run and
 * its width in pixels as SDL_ttf measures it. */
typedef void (*font_run_fn)(void *ud, const char *face_path, int synthetic_bold, const char *run,
                            int width);
void font_runs(font_set *fs, const char *text, int size, int bold, font_run_fn fn, void *ud);

/* Ascent (top of line box to baseline) in pixels. */
int font_ascent(font_set *fs, int size, int bold);

#endif
