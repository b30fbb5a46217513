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

/* Makes an X error BadWindow on a SendEvent harmless, every other error going on to
 * the handler before it (Xlib's, which ends the process). SDL wakes a waiting loop by
 * a ClientMessage sent to its window over a second connection (SDL_PushEvent from the
 * app's workers); when the server takes that request after the window is gone, its
 * error is read as SDL_Quit closes that connection. Called before SDL_Init: SDL 2.26
 * keeps the handler it finds as the one its own passes errors to, and puts it back
 * before closing its connections. Installed after SDL's (as it was), SDL_Quit put
 * Xlib's default back first, which printed "X Error of failed request: BadWindow
 * (X_SendEvent)" and made the exit status of Ctrl+Q 1 (seen in window_zoom and
 * window_model_long, about one run in ten). Harmless off X11. */
void wm_quiet_stale_sends(void);

#endif
