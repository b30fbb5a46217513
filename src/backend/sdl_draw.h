/* sdl_draw.h: the SDL backend. Replays a drawing list on an SDL_Renderer, which is
 * either the window's or a software renderer on a surface (PNG export). Keeps
 * textures for heatmaps (re-uploaded only when an image key changes) and for text. */
#ifndef MHAVIZ_SDL_DRAW_H
#define MHAVIZ_SDL_DRAW_H

#include <SDL.h>

#include "draw.h"
#include "font.h"

typedef struct sdl_draw sdl_draw;

sdl_draw *sdl_draw_create(SDL_Renderer *r, font_set *fonts);
void sdl_draw_destroy(sdl_draw *d);

/* Draws the whole list (clearing first). Does not present. */
void sdl_draw_list(sdl_draw *d, const draw_list *dl);

/* Texture uploads since creation, for tests and --bench. */
unsigned long sdl_draw_uploads(const sdl_draw *d);

/* Renders dl headless into an ARGB surface (caller frees with SDL_FreeSurface). */
SDL_Surface *sdl_draw_to_surface(const draw_list *dl, font_set *fonts, char *err, size_t errlen);

/* Banded rendering for big PNGs: a software renderer on one surface of w x rows
 * pixels that draws a taller list a band of rows at a time, so memory stays
 * w * rows * 4 bytes whatever the picture's height (SDL's software renderer
 * breaks on surfaces past 2 GiB). Heatmap images are scaled here, with exact
 * nearest-neighbour sampling, so cells line up across bands. */
typedef struct sdl_band sdl_band;

/* NULL with a message when the surface or renderer cannot be made. */
sdl_band *sdl_band_create(int w, int rows, font_set *fonts, char *err, size_t errlen);
void sdl_band_destroy(sdl_band *b);

/* Draws rows [y0, y0 + rows) of dl (cleared first) and returns the band's
 * ARGB8888 surface, owned by b and valid until the next call. */
SDL_Surface *sdl_band_draw(sdl_band *b, const draw_list *dl, int y0);

#endif
