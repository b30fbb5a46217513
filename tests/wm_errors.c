/* wm_errors.c MODE: a window of SDL's under the X display in DISPLAY, then a request
 * that the X server refuses, as a worker's wake-up reaching a window already gone:
 *   quiet: wm_quiet_stale_sends, then a SendEvent to a destroyed window: exit 0;
 *   bare:  the same SendEvent without it: Xlib's default handler ends the process
 *          with "BadWindow" and status 1 (what Ctrl+Q met);
 *   other: wm_quiet_stale_sends, then a ChangeProperty on a destroyed window: still
 *          fatal (status 1), since only stale sends are harmless;
 *   quit:  wm_quiet_stale_sends before SDL_Init, as the app calls it; after SDL_Quit a
 *          stale send (on a connection of its own) is still harmless: exit 0;
 *   late:  the same with wm_quiet_stale_sends called after SDL_Init, as the app once
 *          did: SDL_Quit puts back the handler it found (Xlib's), so a wake-up answered
 *          while SDL closes its connections ended Ctrl+Q with status 1 (one run in ten
 *          in the window tests); here the stale send after SDL_Quit does so each time.
 * Exit 77 when there is no display. Run by wm_errors_check.py under Xvfb. */
#include <SDL.h>
#include <SDL_syswm.h>
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <stdio.h>
#include <string.h>

#include "wm.h"

/* A ClientMessage sent to a window just destroyed, and the server's answer read: the
 * X error BadWindow (X_SendEvent) goes to the error handler in place. */
static void stale_send(Display *d) {
    Window gone = XCreateSimpleWindow(d, DefaultRootWindow(d), 0, 0, 8, 8, 0, 0, 0);
    XDestroyWindow(d, gone);
    XClientMessageEvent e;
    memset(&e, 0, sizeof e);
    e.type = ClientMessage;
    e.display = d;
    e.window = gone;
    e.format = 8;
    e.message_type = XInternAtom(d, "_SDL_WAKEUP", False);
    XSendEvent(d, gone, False, NoEventMask, (XEvent *)&e);
    XSync(d, False);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: wm_errors quiet|bare|other|quit|late\n");
        return 2;
    }
    const char *mode = argv[1];
    const int at_quit = strcmp(mode, "quit") == 0 || strcmp(mode, "late") == 0;
    if (strcmp(mode, "bare") != 0 && strcmp(mode, "late") != 0) wm_quiet_stale_sends();
    if (SDL_Init(SDL_INIT_VIDEO) != 0) return 77;
    SDL_Window *w = SDL_CreateWindow("wm_errors", 0, 0, 64, 64, SDL_WINDOW_HIDDEN);
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!w || !SDL_GetWindowWMInfo(w, &info) || info.subsystem != SDL_SYSWM_X11) return 77;
    Display *d = info.info.x11.display;
    if (strcmp(mode, "late") == 0) wm_quiet_stale_sends();
    if (at_quit) { /* the handler SDL_Quit leaves: a stale send over a connection of its own */
        SDL_DestroyWindow(w);
        SDL_Quit();
        Display *after = XOpenDisplay(NULL);
        if (!after) return 77;
        stale_send(after);
        XCloseDisplay(after);
        printf("alive after SDL_Quit\n");
        return 0;
    }
    if (strcmp(mode, "other") == 0) {
        Window gone = XCreateSimpleWindow(d, DefaultRootWindow(d), 0, 0, 8, 8, 0, 0, 0);
        XDestroyWindow(d, gone);
        const unsigned char v = 1;
        XChangeProperty(d, gone, XA_WM_NAME, XA_STRING, 8, PropModeReplace, &v, 1);
    } else {
        stale_send(d);
    }
    XSync(d, False); /* the server's answer, and the handler, now */
    printf("alive after the refused request\n");
    fflush(stdout);
    SDL_DestroyWindow(w);
    SDL_Quit();
    return 0;
}
