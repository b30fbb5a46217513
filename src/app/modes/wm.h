/* wm.h: the window's title and fullscreen, with or without a window manager. */
#ifndef MHAVIZ_WM_H
#define MHAVIZ_WM_H

#include <SDL.h>

/* Sets the title everywhere a title bar or tool reads it (UTF-8 throughout). */
void wm_set_title(SDL_Window *w, const char *title);

/* 1 when a window manager runs (or the platform is not X11), else 0. */
int wm_present(SDL_Window *w);

/* Fullscreen on or off; without a window manager the window covers the display
 * itself and *saved keeps the windowed place to return to. */
void wm_set_fullscreen(SDL_Window *w, int on, SDL_Rect *saved);

#endif
