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
 * the handler before it (SDL's, then Xlib's, which ends the process). SDL wakes a
 * waiting loop by a ClientMessage sent to its window over a second connection
 * (SDL_PushEvent from the app's workers); when the server takes that request after
 * the window is gone, Xlib's default handler turned it into "X Error of failed
 * request: BadWindow (X_SendEvent)" and exit status 1 at Ctrl+Q. Once, after SDL's
 * video is up; no effect off X11. */
void wm_quiet_stale_sends(SDL_Window *w);

#endif
