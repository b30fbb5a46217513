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

#endif
