/* window.c: the visualizer window. A boring frame loop on purpose: wait for an
 * event, turn it into an action for the state machine (state.c), and when the
 * state says the picture changed, lay out, draw and present. SDL-specific work
 * stays here: keys and mouse to actions, the clipboard, fullscreen, the title,
 * and writing PNGs. Never changes state while drawing. A large recompute runs
 * on async.c's worker, which wakes the loop with an event when it is done;
 * with no event the loop sleeps (no frame, no recompute). */
#define _POSIX_C_SOURCE 200809L
#include <SDL.h>
#include <SDL_ttf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "app.h"
#include "async.h"
#include "export.h"
#include "font.h"
#include "sdl_draw.h"
#include "settings.h"
#include "state.h"
#include "teach.h"
#include "text_file.h"
#include "view.h"
#include "wm.h"

static double now_ms(void) {
    return (double)SDL_GetPerformanceCounter() * 1000.0 / (double)SDL_GetPerformanceFrequency();
}

/* The CPU time this thread has used, in ms (0 where the clock is missing). */
static double thread_cpu_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* An SDL key as the state machine sees it (see state.h), or 0. */
static int app_key(SDL_Keycode k) {
    switch (k) {
    case SDLK_UP: return APP_KEY_UP;
    case SDLK_DOWN: return APP_KEY_DOWN;
    case SDLK_LEFT: return APP_KEY_LEFT;
    case SDLK_RIGHT: return APP_KEY_RIGHT;
    case SDLK_TAB: return APP_KEY_TAB;
    case SDLK_RETURN:
    case SDLK_KP_ENTER: return APP_KEY_RETURN;
    case SDLK_ESCAPE: return APP_KEY_ESCAPE;
    case SDLK_BACKSPACE: return APP_KEY_BACKSPACE;
    case SDLK_PAGEUP: return APP_KEY_PAGEUP;
    case SDLK_PAGEDOWN: return APP_KEY_PAGEDOWN;
    case SDLK_F1: return APP_KEY_F1;
    case SDLK_F11: return APP_KEY_F11;
    case SDLK_HOME: return APP_KEY_HOME;
    case SDLK_END: return APP_KEY_END;
    case SDLK_DELETE: return APP_KEY_DELETE;
    case SDLK_F5: return APP_KEY_F5;
    case SDLK_SPACE: return ' ';
    case SDLK_KP_PLUS: return '+';
    case SDLK_KP_MINUS: return '-';
    case SDLK_KP_0: return '0';
    default: return k > 32 && k < 127 ? (int)k : 0; /* SDL's printable keycodes are ASCII */
    }
}

static int app_mods(Uint16 mod) {
    return ((mod & KMOD_CTRL) ? APP_MOD_CTRL : 0) | ((mod & KMOD_SHIFT) ? APP_MOD_SHIFT : 0);
}

/* Sets the title when it differs from the one shown (tests read it): the
 * model shown, and "(computing…)" while a new one is computed. */
static void set_title(SDL_Window *w, const app_state *s, char *shown, size_t len) {
    char title[256];
    const view_state *vs = app_layout_view(s); /* the frame's: made once */
    char replay[96] = "";                      /* training's replay: the moment shown */
    if (vs->train && vs->train->replay)
        snprintf(replay, sizeof replay, "replay: step %ld of %ld (] forward, End live)",
                 vs->train->step, vs->train->live_step);
    if (vs->sweep) { /* the sweep of h: how far, and the run whose heads show */
        const view_sweep *w = vs->sweep;
        char shown[96] = "heads of the training run";
        if (w->sel_a >= 0 && w->sel_s >= 0)
            snprintf(shown, sizeof shown, "heads h=%d seed %llu held-out %.1f %%", w->h[w->sel_a],
                     w->seed0 + (unsigned long long)w->sel_s, 100.0 * w->acc[w->sel_a][w->sel_s]);
        snprintf(title, sizeof title,
                 "mhaviz \xE2\x80\x94 sweep h %s d_model=%d steps=%ld \xE2\x80\x94 %d of %d runs "
                 "done \xE2\x80\x94 %s \xE2\x80\x94 %s",
                 w->task, w->d_model, w->steps, w->runs_done, w->runs, shown,
                 w->running                ? "sweeping"
                 : w->runs_done == w->runs ? "done"
                                           : "stopped");
    } else if (vs->train) /* training mode: what is being trained, how far, at what pace */
        snprintf(title, sizeof title,
                 "mhaviz \xE2\x80\x94 training %s h=%d d_model=%d \xE2\x80\x94 step %ld "
                 "\xE2\x80\x94 held-out %.1f %% \xE2\x80\x94 %s",
                 vs->train->task, vs->layer->h, vs->layer->d_model, vs->train->step,
                 100.0 * vs->train->acc,
                 replay[0]              ? replay
                 : vs->train->running   ? (vs->train->rate > 0   ? "slow motion"
                                           : vs->train->rate < 0 ? "class pace"
                                                                 : "full speed")
                 : vs->train->stop == 3 ? "diverged"
                 : vs->train->stop      ? "stopped"
                                        : "paused");
    else if (vs->overview && vs->layer) /* a loaded model: its name, the layer and heads shown */
        snprintf(title, sizeof title,
                 "mhaviz \xE2\x80\x94 %.60s layer %d of %d h=%d d_model=%d n=%d%s",
                 vs->overview->name, vs->layer->layer + 1, vs->overview->layers, vs->layer->h,
                 vs->layer->d_model, vs->layer->n,
                 s->gpt_loading      ? " (loading\xE2\x80\xA6)"
                 : app_async_busy(s) ? " (computing\xE2\x80\xA6)"
                                     : "");
    else
        snprintf(title, sizeof title, "mhaviz \xE2\x80\x94 h=%d d_model=%d n=%d \xE2\x80\x94 %s%s",
                 s->m->cfg.h, s->m->cfg.d_model, s->m->n, vs->sample_name,
                 app_async_busy(s) ? " (computing\xE2\x80\xA6)" : "");
    if (strcmp(title, shown) == 0) return;
    snprintf(shown, len, "%s", title);
    wm_set_title(w, title);
}

/* Puts tag into the file name at path right after its d_model ("mhaviz-h4-d64" +
 * tag + "-<time>.png"), then, when that name is taken (two saves in one second),
 * "-2", "-3", ... before the extension, as export_default_name does. Returns 0
 * (-1 when the name would not fit). */
static int name_tag(char *path, size_t len, const char *tag) {
    char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *d = strstr(base, "-d"); /* "mhaviz-h4-d64-..." : after the d_model */
    if (!d) return 0;
    d += 2;
    while (*d >= '0' && *d <= '9') d++;
    size_t tl = strlen(tag), rest = strlen(d);
    if ((size_t)(d - path) + tl + rest + 1 > len) return -1;
    memmove(d + tl, d, rest + 1);
    memcpy(d, tag, tl);
    char *dot = strrchr(path, '.');
    size_t stem = dot ? (size_t)(dot - path) : strlen(path);
    char ext[16];
    snprintf(ext, sizeof ext, "%s", dot ? dot : "");
    struct stat st;
    for (int k = 2; stat(path, &st) == 0 && k < 1000; k++) {
        if (stem + 8 + strlen(ext) > len) return -1;
        snprintf(path + stem, len - stem, "-%d%s", k, ext);
    }
    return 0;
}

/* A training figure's file is named by what it shows: the task and the step, live or
 * a replay's moment ("mhaviz-h2-d32-pair-step310-<time>.png"), so the pictures of one
 * run saved along the replay sort by task and read as a flip-book; a single panel's
 * by the panel: "mhaviz-h4-d64-head2-<time>.png" or "...-equation-...". */
static int name_figure(char *path, size_t len, const view_state *vs) {
    char tag[96] = "";
    size_t at = 0;
    if (vs->train && vs->train->task)
        at += (size_t)snprintf(tag, sizeof tag, "-%.40s-step%ld", vs->train->task, vs->train->step);
    if (vs->panel == VIEW_PANEL_HEAD)
        snprintf(tag + at, sizeof tag - at, "-head%d", vs->panel_head);
    else if (vs->panel == VIEW_PANEL_LINES)
        snprintf(tag + at, sizeof tag - at, "-lines-head%d", vs->panel_head);
    else if (vs->panel == VIEW_PANEL_STEPS && vs->look.step > 0)
        snprintf(tag + at, sizeof tag - at, "-steps-head%d-stage%d", vs->panel_head, vs->look.step);
    else if (vs->panel == VIEW_PANEL_STEPS)
        snprintf(tag + at, sizeof tag - at, "-steps-head%d", vs->panel_head);
    else if (vs->panel != VIEW_PANEL_ALL)
        snprintf(tag + at, sizeof tag - at, "-equation");
    return tag[0] ? name_tag(path, len, tag) : 0;
}

/* Writes the current view as PNG (whole view, or the focused panel) and tells
 * the state how it went. */
static void save_png(app_state *s, app_save_kind kind, font_set *fonts) {
    view_state vs;
    app_figure_view(s, kind, &vs);
    char path[4200], err[600];
    int h = s->cfg.h, d = s->cfg.d_model;
    if (vs.train && vs.layer) h = vs.layer->h, d = vs.layer->d_model; /* the trained model shown */
    if (export_default_name(path, sizeof path, s->export_dir, h, d, "png", err, sizeof err) != 0 ||
        name_figure(path, sizeof path, &vs) != 0 ||
        export_png(path, &vs, s->png_scale, fonts, err, sizeof err) != 0) {
        app_notify(s, err, 1);
        return;
    }
    char msg[APP_MSG_LEN];
    snprintf(msg, sizeof msg, "saved %.4300s (%d\xC3\x97%d px)", path, s->width * s->png_scale,
             s->height * s->png_scale);
    app_notify(s, msg, 0);
}

/* The window with its title bar and frame inside the usable screen: on a 1024 x 768
 * screen a window of the full height would put its bottom (the status line) off the
 * screen by the title bar's height. The frame is known once the window manager has
 * framed the window, which a loaded machine may take a while to do: waits up to
 * wait_ms for it and returns 1 when done (fitted, or no fit needed), 0 while the
 * frame is not known yet (the window's loop asks again for a few seconds). */
static int fit_decorations(SDL_Window *win, const SDL_Rect *usable, int ww, int wh, int wait_ms) {
    if (ww + 64 <= usable->w && wh + 96 <= usable->h) return 1; /* room for any frame */
    int top = 0, left = 0, bottom = 0, right = 0;
    for (int waited = 0;; waited += 10) {
        SDL_PumpEvents();
        if (SDL_GetWindowBordersSize(win, &top, &left, &bottom, &right) == 0 && top + bottom > 0)
            break;
        if (waited >= wait_ms) return 0;
        SDL_Delay(10);
    }
    int w = ww, h = wh;
    if (w + left + right > usable->w) w = usable->w - left - right;
    if (h + top + bottom > usable->h) h = usable->h - top - bottom;
    if (w == ww && h == wh) return 1;
    SDL_SetWindowSize(win, w, h);
    /* where the client lands for a position differs between window managers (the
       frame's corner or the client's): ask for the client's, look, and correct */
    const int want_x = usable->x + left + (usable->w - left - right - w) / 2,
              want_y = usable->y + top + (usable->h - top - bottom - h) / 2;
    SDL_SetWindowPosition(win, want_x, want_y);
    for (int i = 0; i < 20; i++) {
        SDL_PumpEvents();
        SDL_Delay(10);
    }
    int x = want_x, y = want_y;
    SDL_GetWindowPosition(win, &x, &y);
    if (x != want_x || y != want_y)
        SDL_SetWindowPosition(win, want_x - (x - want_x), want_y - (y - want_y));
    return 1;
}

/* A file dropped on the window: a folder or a .safetensors is a model to load, a
 * .view file a view to show, any other file a text to show (text_file_read_regular's rules). */
static void open_dropped(app_state *s, const char *path) {
    struct stat st;
    size_t n = strlen(path);
    const char *ext = ".safetensors";
    const size_t el = strlen(ext);
    if ((stat(path, &st) == 0 && S_ISDIR(st.st_mode)) ||
        (n >= el && strcmp(path + n - el, ext) == 0))
        app_open_model(s, path);
    else if (n > 5 && strcmp(path + n - 5, ".view") == 0)
        app_view_file_open(s, path);
    else
        app_open_text_file(s, path);
}

/* Turns one SDL event into actions. */
static void handle_event(app_state *s, const SDL_Event *e) {
    app_action a = {.kind = ACT_NONE};
    switch (e->type) {
    case SDL_QUIT: a.kind = ACT_QUIT; break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_EXPOSED ||
            e->window.event == SDL_WINDOWEVENT_RESTORED)
            s->dirty = 1; /* the picture is the same; the screen lost it */
        else if (e->window.event == SDL_WINDOWEVENT_LEAVE)
            a.kind = ACT_LEAVE;
        /* size changes are read from the renderer each frame (they carry no ui scale) */
        break;
    case SDL_KEYDOWN:
        a = app_key_action(s, app_key(e->key.keysym.sym), app_mods(e->key.keysym.mod));
        if (a.kind == ACT_EDIT_INSERT) { /* Ctrl+V: paste the clipboard */
            char *clip = SDL_HasClipboardText() ? SDL_GetClipboardText() : NULL;
            a.text = clip;
            app_apply(s, &a);
            SDL_free(clip);
            return;
        }
        break;
    case SDL_TEXTINPUT:
        a.kind = ACT_EDIT_INSERT;
        a.text = e->text.text;
        break;
    case SDL_TEXTEDITING:
        a.kind = ACT_EDIT_PREEDIT;
        a.text = e->edit.text;
        break;
    case SDL_DROPFILE: /* a model's folder or .safetensors, a view file, or a text file */
        open_dropped(s, e->drop.file);
        SDL_free(e->drop.file);
        return;
    case SDL_MOUSEMOTION:
        a.kind = ACT_HOVER;
        a.arg = (e->motion.state & SDL_BUTTON_LMASK) != 0; /* a drag (training's replay) */
        a.x = (int)((float)e->motion.x * s->ui_scale);
        a.y = (int)((float)e->motion.y * s->ui_scale);
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.button != SDL_BUTTON_LEFT) break;
        a.kind = ACT_CLICK;
        a.x = (int)((float)e->button.x * s->ui_scale);
        a.y = (int)((float)e->button.y * s->ui_scale);
        break;
    }
    app_apply(s, &a);
}

/* The worker's "done": wakes the loop (SDL_PushEvent may be called from any thread). */
static void wake_loop(void *ud) {
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = *(const Uint32 *)ud;
    SDL_PushEvent(&e);
}

/* MHAVIZ_STATS: frames drawn, model recomputes and wake-ups of the loop, on
 * stderr whenever a frame is drawn, a recompute is shown or the count of jobs
 * under way changes, and at exit, with what woke the loop since the line before
 * (tests count them: with no event and no job under way, nothing happens; a late
 * event from the X server is told from the loop's own timeouts and the workers'
 * wake-ups). */
enum {
    WOKE_TIMEOUT = 1, /* SDL_WaitEventTimeout ran out: a notice, a lesson, training */
    WOKE_WORKER = 2,  /* a worker's "done" */
    WOKE_KEY = 4,     /* keys and text */
    WOKE_POINTER = 8, /* motion, buttons, wheel */
    WOKE_WINDOW = 16, /* the window manager: shown, exposed, moved, focus */
    WOKE_OTHER = 32   /* any other SDL event */
};
static const char *const woke_names[] = {"timeout", "worker", "key", "pointer", "window", "other"};

typedef struct {
    int on;
    unsigned woke; /* WOKE_* since the last line */
    int jobs_said; /* app_async_jobs on the last line */
    unsigned long frames, wakeups, recomputes_said, frames_said;
    /* input to frame: an input (a key, text, the pointer) arrived no earlier than
       when the loop last found the queue empty, or than the return of a wait that
       blocked for it; the frame that follows answers every input before it */
    double empty_at; /* the last time the queue was seen empty */
    double asked;    /* the earliest an input not yet answered may have come; < 0 none */
    double input_ms; /* the longest input to its frame since the last line; < 0 none */
    /* the same on the window thread's CPU clock: the work the loop itself did for
       it, which other processes on a busy machine do not lengthen */
    double empty_cpu, asked_cpu, input_cpu_ms;
} loop_stats;

static unsigned woke_by(const SDL_Event *e, Uint32 wake_event) {
    if (e->type == wake_event) return WOKE_WORKER;
    switch (e->type) {
    case SDL_KEYDOWN:
    case SDL_KEYUP:
    case SDL_TEXTINPUT:
    case SDL_TEXTEDITING: return WOKE_KEY;
    case SDL_MOUSEMOTION:
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
    case SDL_MOUSEWHEEL: return WOKE_POINTER;
    case SDL_WINDOWEVENT: return WOKE_WINDOW;
    default: return WOKE_OTHER;
    }
}

static void stats_say(loop_stats *st, const app_state *s, const char *when) {
    if (!st->on) return;
    const unsigned long r = app_async_recomputes(s);
    const int jobs = app_async_jobs(s);
    if (!when && r == st->recomputes_said && st->frames == st->frames_said && jobs == st->jobs_said)
        return;
    const app_counts c = app_state_counts(s);
    char woke[64] = "none";
    for (size_t i = 0, o = 0; i < sizeof woke_names / sizeof woke_names[0]; i++)
        if (st->woke & (1u << i))
            o += (size_t)snprintf(woke + o, sizeof woke - o, "%s%s", o ? "," : "", woke_names[i]);
    char input[64] = "input_ms=- input_cpu_ms=-";
    if (st->input_ms >= 0.0)
        snprintf(input, sizeof input, "input_ms=%.0f input_cpu_ms=%.0f", st->input_ms,
                 st->input_cpu_ms);
    fprintf(stderr,
            "stats%s%s frames=%lu recomputes=%lu wakeups=%lu busy=%d jobs=%d woke=%s "
            "forwards=%lu derives=%lu views=%lu actions=%lu %s\n",
            when ? " " : "", when ? when : "", st->frames, r, st->wakeups, app_async_busy(s), jobs,
            woke, mha_forwards(), c.derives, c.views, c.actions, input);
    st->input_ms = st->input_cpu_ms = -1.0;
    st->recomputes_said = r;
    st->jobs_said = jobs;
    st->frames_said = st->frames;
    st->woke = 0;
}

/* MHAVIZ_VIEW_LOG: after each frame, when it changed, the view as its settings
 * on one line of stderr ("view step=K/N recorded=R recording=0|1 field=0|1 |
 * h = 4; ..."), so tests can check that a lesson's step shows what its file says,
 * and wait for a recording to start or the text field to open rather than for a time. */
static void view_log(const app_state *s, char *last, size_t len) {
    app_settings *st = app_settings_create();
    if (!st) return;
    app_settings_capture(s, st);
    char line[8192];
    int k = 0, n = 0, rec = 0;
    app_teach_lesson(s, &k, &n);
    const int recording = app_teach_recording(s, &rec) != NULL;
    int o = snprintf(line, sizeof line, "view step=%d/%d recorded=%d recording=%d field=%d |", k, n,
                     rec, recording, s->editing != 0);
    if (o > 0 && (size_t)o < sizeof line)
        app_settings_write(st, NULL, line + o, sizeof line - (size_t)o);
    app_settings_free(st);
    for (char *c = line; *c; c++)
        if (*c == '\n') *c = ';';
    if (strcmp(line, last) == 0) return;
    snprintf(last, len, "%s", line);
    fprintf(stderr, "%s\n", line);
}

/* Follows the window's output size; a change is an action like any other. */
static void sync_size(app_state *s, SDL_Window *win, SDL_Renderer *ren) {
    int win_w = 1, win_h = 1, out_w = 1, out_h = 1;
    SDL_GetWindowSize(win, &win_w, &win_h);
    SDL_GetRendererOutputSize(ren, &out_w, &out_h);
    float ui = win_w > 0 ? (float)out_w / (float)win_w : 1.0f;
    if (out_w != s->width || out_h != s->height || ui != s->ui_scale) {
        app_action a = {.kind = ACT_RESIZE, .x = out_w, .y = out_h, .f = ui};
        app_apply(s, &a);
    }
}

/* Opens SDL's video and SDL_ttf; returns 0 or 1 with a message. */
static int open_display(char *err, size_t errlen) {
    /* SDL falls back to its invisible "offscreen" driver when no display server
       answers; a window nobody can see is worse than a clear error */
    const char *forced = getenv("SDL_VIDEODRIVER");
    if (!forced && !getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        snprintf(err, errlen, "no display; use --export or --dump");
        return 1;
    }
    /* with only DISPLAY set, go straight to X11 (no Wayland probing and its noise) */
    if (!forced && !getenv("WAYLAND_DISPLAY")) SDL_SetHint(SDL_HINT_VIDEODRIVER, "x11");
    wm_quiet_stale_sends(); /* before SDL's handler: a worker's wake-up after Ctrl+Q */
    /* an X server that has just started may refuse the first connections */
    int init = -1;
    for (int tries = 0; tries < 5 && init != 0; tries++) {
        if (tries) SDL_Delay(200);
        init = SDL_Init(SDL_INIT_VIDEO);
    }
    if (init != 0) {
        snprintf(err, errlen, "no display; use --export or --dump (%s)", SDL_GetError());
        return 1;
    }
    const char *driver = SDL_GetCurrentVideoDriver();
    if (driver && !forced && (strcmp(driver, "offscreen") == 0 || strcmp(driver, "dummy") == 0)) {
        snprintf(err, errlen, "no display; use --export or --dump");
        SDL_Quit();
        return 1;
    }
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "cannot start SDL_ttf: %s", TTF_GetError());
        SDL_Quit();
        return 1;
    }
    return 0;
}

/* The window and what draws into it, made by open_window. */
typedef struct {
    SDL_Window *win;
    SDL_Renderer *ren;
    sdl_draw *drawer;
    SDL_Rect usable; /* the display's usable bounds, when have_usable */
    int have_usable;
    int ww, wh;        /* the size the window was asked for */
    double fit_until;  /* until then the loop asks for the frame again (0: no more) */
    Uint32 wake_event; /* the workers' "done" event; they hold its address until
                          app_async_disable, after the loop */
} window_ui;

static void start_size(app_state *s, const cli_options *o);
static int open_window(window_ui *w, app_state *s, font_set *fonts, char *err, size_t errlen);
static void run_loop(app_state *s, window_ui *w, view_cache *cache, font_set *fonts);
static void present_frame(app_state *s, window_ui *w, draw_list *dl, view_cache *cache,
                          font_set *fonts, int layout_log);
static int take_save(app_state *s, font_set *fonts);
static void follow_state(app_state *s, window_ui *w, int *fullscreen, SDL_Rect *windowed);
static int wait_event(app_state *s, window_ui *w, SDL_Event *e);

int app_window(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen) {
    if (open_display(err, errlen) != 0) return 1;
    int rc = 1;
    font_set *fonts = NULL;
    app_state *s = NULL;
    view_cache *cache = NULL;
    window_ui w = {0};

    fonts = font_set_open(o->font, err, errlen);
    if (!fonts) goto done;
    s = app_state_create(font_measure, fonts);
    cache = view_cache_create();
    if (!s || !cache) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if ((rc = app_state_init(s, o, toks, cfg, err, errlen)) != 0) goto done; /* 2: a bad view */
    rc = 1;
    s->read_text = text_file_read_regular; /* Ctrl+O, a dropped file: never a read that waits */
    s->auto_contrast = 1, s->dark_field = 0, s->dark_version = 0; /* derive.c: a dark field */
    start_size(s, o);
    if (open_window(&w, s, fonts, err, errlen) != 0) goto done;
    run_loop(s, &w, cache, fonts);
    rc = 0;
done:
    /* off the screen at once; then the workers end (a recompute under way is waited
       for), so that none wakes the loop through a window already destroyed */
    if (w.win) SDL_HideWindow(w.win);
    if (s) app_async_disable(s);
    view_cache_destroy(cache);
    sdl_draw_destroy(w.drawer);
    if (w.ren) SDL_DestroyRenderer(w.ren);
    if (w.win) SDL_DestroyWindow(w.win);
    app_state_destroy(s);
    font_set_close(fonts);
    TTF_Quit();
    SDL_Quit();
    return rc;
}

/* The starting size follows the display: on a screen larger than 1920x1080 the
 * window starts at 5/6 of it (3200x1800 on a 4K screen), and the zoom at the step
 * for that size (150 %; view_zoom_for_size), unless --size or --state's zoom says. */
static void start_size(app_state *s, const cli_options *o) {
    SDL_Rect screen;
    if (!o->size_w && SDL_GetDisplayBounds(0, &screen) == 0 && screen.w > 1920 && screen.h > 1080) {
        s->width = screen.w * 5 / 6;
        s->height = screen.h * 5 / 6;
        s->zoom_base = view_zoom_for_size(s->width, s->height);
        if (!o->state || !app_settings_has(o->state, "zoom"))
            s->look.zoom = s->zoom_base; /* --state's */
    }
}

/* The window at the state's size (within the display's usable bounds), its
 * renderer and the drawer; returns 0, or 1 with a message in err. */
static int open_window(window_ui *w, app_state *s, font_set *fonts, char *err, size_t errlen) {
    w->ww = s->width, w->wh = s->height;
    w->have_usable =
        SDL_GetDisplayUsableBounds(0, &w->usable) == 0 && w->usable.w > 0 && w->usable.h > 0;
    if (w->have_usable) {
        if (w->ww > w->usable.w) w->ww = w->usable.w;
        if (w->wh > w->usable.h) w->wh = w->usable.h;
    }
    w->win = SDL_CreateWindow("mhaviz", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w->ww,
                              w->wh, SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!w->win) {
        snprintf(err, errlen, "no display; use --export or --dump (%s)", SDL_GetError());
        return 1;
    }
    /* the smallest size the layout tests cover, or less on a screen too small for it
       with a frame (a portrait 768 x 1024 screen: a window 800 wide would not fit) */
    const SDL_Rect usable = w->usable;
    const int min_w = w->have_usable && usable.w - 64 < 800 ? usable.w - 64 : 800;
    const int min_h = w->have_usable && usable.h - 96 < 600 ? usable.h - 96 : 600;
    SDL_SetWindowMinimumSize(w->win, min_w > 320 ? min_w : 320, min_h > 240 ? min_h : 240);
    SDL_StopTextInput(); /* SDL starts with text input on; only the text field wants it */
    w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!w->ren) w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_SOFTWARE);
    if (!w->ren) {
        snprintf(err, errlen, "cannot create a renderer: %s", SDL_GetError());
        return 1;
    }
    /* after the renderer, which may make the window anew (an OpenGL visual) */
    /* the frame not known yet: asked again from the loop for 5 s */
    w->fit_until = w->have_usable && !fit_decorations(w->win, &w->usable, w->ww, w->wh, 200)
                       ? now_ms() + 5000.0
                       : 0.0;
    w->drawer = sdl_draw_create(w->ren, fonts);
    if (!w->drawer) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    return 0;
}

/* A frame has answered the inputs since stats->asked: their time, if the longest. */
static void answered(loop_stats *st) {
    const double ms = now_ms() - st->asked, cpu = thread_cpu_ms() - st->asked_cpu;
    if (ms > st->input_ms) st->input_ms = ms;
    if (cpu > st->input_cpu_ms) st->input_cpu_ms = cpu;
}

/* The frame loop, until the state says quit: take a finished recompute, follow the
 * window, draw the state if it changed, do what the state asked for (a save,
 * fullscreen, the text field), then wait for an event and hand it to the state. */
static void run_loop(app_state *s, window_ui *w, view_cache *cache, font_set *fonts) {
    draw_list dl;
    draw_list_init(&dl);
    char title[256] = "";
    int fullscreen = 0;
    SDL_Rect windowed = {0, 0, 0, 0};
    app_layout(s); /* the view the first title is made from */
    set_title(w->win, s, title, sizeof title);
    app_tick(s, now_ms());
    const int layout_log = getenv("MHAVIZ_LAYOUT_LOG") != NULL;
    static char view_logged[8192];
    const int view_logging = getenv("MHAVIZ_VIEW_LOG") != NULL;
    const char *stats_env = getenv("MHAVIZ_STATS");
    loop_stats stats = {.on = stats_env != NULL,
                        .empty_at = now_ms(),
                        .asked = -1.0,
                        .input_ms = -1.0,
                        .empty_cpu = thread_cpu_ms(),
                        .input_cpu_ms = -1.0};
    /* a class sees no frame times; a developer asks for them (MHAVIZ_STATS=lines: the
       lines alone, for tests that compare pictures and wait for the window's state) */
    s->timings = stats.on && strcmp(stats_env, "lines") != 0;
    w->wake_event = SDL_RegisterEvents(1);
    if (w->wake_event == (Uint32)-1 || app_async_enable(s, wake_loop, &w->wake_event, -1.0) != 0)
        fprintf(stderr, "mhaviz: large recomputes stay on the window's thread (%s)\n",
                w->wake_event == (Uint32)-1 ? "no SDL event left" : "no thread");

    while (!s->quit) {
        /* update: take a finished recompute, follow the window, then draw the state if
           it changed */
        app_async_poll(s);
        sync_size(s, w->win, w->ren);
        if (s->dirty) {
            present_frame(s, w, &dl, cache, fonts, layout_log);
            set_title(w->win, s, title, sizeof title);
            stats.frames++;
            if (view_logging) view_log(s, view_logged, sizeof view_logged);
            if (stats.asked >= 0.0) answered(&stats);
        }
        stats.asked = -1.0; /* answered: by this frame, or with nothing to draw */
        stats_say(&stats, s, NULL);
        if (take_save(s, fonts)) continue;
        follow_state(s, w, &fullscreen, &windowed);
        SDL_Event e;
        const double t0 = now_ms();
        int got = wait_event(s, w, &e);
        const double t1 = now_ms(), t1_cpu = thread_cpu_ms();
        stats.wakeups++;
        app_tick(s, now_ms());
        if (!got) {
            stats.woke |= WOKE_TIMEOUT;
            stats.empty_at = t1, stats.empty_cpu = t1_cpu;
            continue;
        }
        /* a wait that blocked returned as its event came; one that did not found it
           queued since the queue was last seen empty */
        const int blocked = t1 - t0 >= 1.0;
        const double came = blocked ? t1 : stats.empty_at,
                     came_cpu = blocked ? t1_cpu : stats.empty_cpu;
        do { /* each key's request goes to the jobs layer at once, as it comes */
            const unsigned woke = woke_by(&e, w->wake_event);
            stats.woke |= woke;
            if ((woke & (WOKE_KEY | WOKE_POINTER)) && stats.asked < 0.0)
                stats.asked = came, stats.asked_cpu = came_cpu;
            handle_event(s, &e);
            app_async_poll(s);
            /* (the queue seen empty then, if the poll below finds nothing) */
            stats.empty_at = now_ms(), stats.empty_cpu = thread_cpu_ms();
        } while (!s->quit && SDL_PollEvent(&e));
    }
    stats_say(&stats, s, "exit");
    draw_list_free(&dl);
}

/* Lays out, draws and presents the state (and logs the layout for tests under
 * MHAVIZ_LAYOUT_LOG); the state is clean after it. */
static void present_frame(app_state *s, window_ui *w, draw_list *dl, view_cache *cache,
                          font_set *fonts, int layout_log) {
    double t0 = now_ms();
    const view_layout *L = app_layout(s);
    const view_state *vs = app_layout_view(s); /* the one view of this frame */
    view_render(dl, cache, L, vs, font_measure, fonts);
    if (layout_log) { /* for tests that check the layout from outside */
        static char json[1 << 17];
        if (view_layout_json(json, sizeof json, L, vs) > 0) fprintf(stderr, "layout %s\n", json);
    }
    sdl_draw_list(w->drawer, dl);
    SDL_RenderPresent(w->ren);
    s->frame_ms = now_ms() - t0;
    s->dirty = 0;
}

/* A save the state asked for (none while the model is being computed): a view file,
 * or a PNG. Returns 1 when it did one. */
static int take_save(app_state *s, font_set *fonts) {
    app_save_kind save = app_async_busy(s) ? APP_SAVE_NONE : app_take_save(s);
    if (save == APP_SAVE_VIEW_FILE) { /* settings.h: written from the state alone */
        char path[4200];
        app_view_file_save(s, path, sizeof path);
        return 1;
    }
    if (save != APP_SAVE_NONE) {
        save_png(s, save, fonts);
        return 1;
    }
    return 0;
}

/* The window follows the state: fullscreen, and text input on while the text field
 * is open. */
static void follow_state(app_state *s, window_ui *w, int *fullscreen, SDL_Rect *windowed) {
    if (s->fullscreen != *fullscreen) {
        *fullscreen = s->fullscreen;
        wm_set_fullscreen(w->win, *fullscreen, windowed);
    }
    if (s->editing != (SDL_IsTextInputActive() ? 1 : 0)) {
        if (s->editing)
            SDL_StartTextInput();
        else
            SDL_StopTextInput();
    }
}

/* Waits for an event into e, or for the next notice to expire (then 0), asking for
 * the window's frame meanwhile while it is not known. */
static int wait_event(app_state *s, window_ui *w, SDL_Event *e) {
    if (w->fit_until > 0.0 &&
        (fit_decorations(w->win, &w->usable, w->ww, w->wh, 0) || now_ms() > w->fit_until))
        w->fit_until = 0.0;
    int timeout = app_next_timeout_ms(s);
    if (w->fit_until > 0.0 && (timeout < 0 || timeout > 50)) timeout = 50;
    return timeout < 0 ? SDL_WaitEvent(e) : SDL_WaitEventTimeout(e, timeout);
}
