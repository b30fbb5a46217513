/* wm.c: what SDL 2.26 leaves undone on X11: a title bar that follows the state
 * (_NET_WM_NAME and WM_NAME as UTF-8; SDL sets _NET_WM_NAME only once), and
 * fullscreen when no window manager runs (nobody then honours SDL's request, so
 * the window covers the display itself). Elsewhere it defers to SDL. */
#include "wm.h"

#include <SDL_syswm.h>
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xproto.h>
#include <string.h>

static int x11(SDL_Window *w, Display **d, Window *xw) {
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(w, &info) || info.subsystem != SDL_SYSWM_X11) return 0;
    *d = info.info.x11.display;
    *xw = info.info.x11.window;
    return 1;
}

void wm_set_title(SDL_Window *w, const char *title) {
    SDL_SetWindowTitle(w, title);
    Display *d;
    Window xw;
    if (!x11(w, &d, &xw)) return;
    Atom utf8 = XInternAtom(d, "UTF8_STRING", False);
    const unsigned char *t = (const unsigned char *)title;
    int len = (int)strlen(title);
    XChangeProperty(d, xw, XInternAtom(d, "_NET_WM_NAME", False), utf8, 8, PropModeReplace, t, len);
    XChangeProperty(d, xw, XA_WM_NAME, utf8, 8, PropModeReplace, t, len);
    XFlush(d);
}

int wm_present(SDL_Window *w) {
    Display *d;
    Window xw;
    if (!x11(w, &d, &xw)) return 1; /* not X11: trust SDL */
    Atom check = XInternAtom(d, "_NET_SUPPORTING_WM_CHECK", True);
    if (check == None) return 0;
    Atom type;
    int format;
    unsigned long count = 0, after;
    unsigned char *data = NULL;
    int ok = XGetWindowProperty(d, DefaultRootWindow(d), check, 0, 1, False, XA_WINDOW, &type,
                                &format, &count, &after, &data) == Success &&
             count == 1;
    if (data) XFree(data);
    return ok;
}

void wm_set_fullscreen(SDL_Window *w, int on, SDL_Rect *saved) {
    if (wm_present(w)) {
        SDL_SetWindowFullscreen(w, on ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        return;
    }
    if (on) {
        SDL_GetWindowPosition(w, &saved->x, &saved->y);
        SDL_GetWindowSize(w, &saved->w, &saved->h);
        SDL_Rect b;
        int display = SDL_GetWindowDisplayIndex(w);
        if (SDL_GetDisplayBounds(display < 0 ? 0 : display, &b) != 0) return;
        SDL_SetWindowBordered(w, SDL_FALSE);
        SDL_SetWindowPosition(w, b.x, b.y);
        SDL_SetWindowSize(w, b.w, b.h);
    } else if (saved->w > 0 && saved->h > 0) {
        SDL_SetWindowBordered(w, SDL_TRUE);
        SDL_SetWindowSize(w, saved->w, saved->h);
        SDL_SetWindowPosition(w, saved->x, saved->y);
    }
}

static int (*next_handler)(Display *, XErrorEvent *);

static int quiet_stale_sends(Display *d, XErrorEvent *e) {
    if (e->error_code == BadWindow && e->request_code == X_SendEvent) return 0;
    return next_handler ? next_handler(d, e) : 0;
}

void wm_quiet_stale_sends(void) {
    if (next_handler) return;
    next_handler = XSetErrorHandler(quiet_stale_sends);
    if (next_handler == quiet_stale_sends) next_handler = NULL;
}
