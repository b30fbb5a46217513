/* window.c: the visualizer window. A boring frame loop on purpose: wait for an
 * event, update the state, recompute through the core only when the
 * configuration changed, lay out, draw, present. Never draws in an event handler;
 * never changes state while drawing. */
#define _POSIX_C_SOURCE 200809L
#include <SDL.h>
#include <SDL_ttf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "controls.h"
#include "export.h"
#include "font.h"
#include "samples.h"
#include "sdl_draw.h"
#include "view.h"

#define EDIT_MAX 8192

typedef struct {
    const cli_options *opts;
    mha_config cfg;
    tok_list toks;
    int sample; /* 1-based; 0 = custom text */
    char custom[EDIT_MAX];
    mha_model *m;
    unsigned long data_version;
    double compute_ms, frame_ms;

    float zoom;
    int theme, cmap, page, focus, help, fullscreen;
    int editing;
    char edit[EDIT_MAX];
    char preedit[256];
    int png_scale;

    char status[256];
    char title[256]; /* as last set on the window */
    char toast[4400];
    Uint32 toast_until;
    int hover_x, hover_y;
    view_hit last_hit;
    int quit;
    int dirty;
    int save_request; /* 1 whole view, 2 focused panel */
} app_state;

static double now_ms(void) {
    return (double)SDL_GetPerformanceCounter() * 1000.0 / (double)SDL_GetPerformanceFrequency();
}

/* Recomputes the model for the current cfg and tokens. On failure the old
 * state stays and the status line says why. */
static int recompute(app_state *a, const mha_config *cfg, tok_list *toks) {
    char err[MHA_ERR_LEN];
    double t0 = now_ms();
    if (mha_model_compute(a->m, cfg, toks, err, sizeof err) != 0) {
        snprintf(a->status, sizeof a->status, "%s", err); /* the model is left as it was */
        return -1;
    }
    a->compute_ms = now_ms() - t0;
    a->cfg = a->m->cfg;
    if (toks != &a->toks) {
        tok_free(&a->toks);
        a->toks = *toks;
        memset(toks, 0, sizeof *toks);
    }
    a->data_version++;
    if (a->focus > a->cfg.h) a->focus = 0;
    a->dirty = 1;
    return 0;
}

/* Sets the title when it differs from the one shown (tests read it). */
static void set_title(SDL_Window *w, app_state *a) {
    char title[sizeof a->title];
    const sample *s = a->sample ? samples_get(a->sample - 1) : NULL;
    snprintf(title, sizeof title, "mhaviz \xE2\x80\x94 h=%d d_model=%d n=%d \xE2\x80\x94 %s",
             a->cfg.h, a->cfg.d_model, a->m->n, s ? s->name : "custom");
    if (strcmp(title, a->title) == 0) return;
    memcpy(a->title, title, sizeof title);
    SDL_SetWindowTitle(w, title);
}

static int load_text(app_state *a, const char *text, int sample) {
    tok_list t = {0};
    int total = 0;
    char err[MHA_ERR_LEN];
    if (tok_split(&t, text, MHA_MAX_N, &total, err, sizeof err) != 0) {
        snprintf(a->status, sizeof a->status, "%s", err);
        return -1;
    }
    if (recompute(a, &a->cfg, &t) != 0) {
        tok_free(&t);
        return -1;
    }
    a->sample = sample;
    if (!sample) snprintf(a->custom, sizeof a->custom, "%s", text);
    a->page = 0;
    if (total > MHA_MAX_N)
        snprintf(a->status, sizeof a->status, "text cut to the first %d of its %d tokens",
                 MHA_MAX_N, total);
    return 0;
}

static void change_cfg(app_state *a, mha_config next) {
    a->status[0] = '\0';
    if (recompute(a, &next, &a->toks) == 0) a->page = 0;
}

/* Steps h (which = 0) or d_model (which = 1); h always divides d_model after. */
static void step_dim(app_state *a, int which, int dir) {
    char why[160];
    int v = which ? controls_step_d(a->cfg.h, a->cfg.d_model, dir, why, sizeof why)
                  : controls_step_h(a->cfg.h, a->cfg.d_model, dir, why, sizeof why);
    if (!v) {
        snprintf(a->status, sizeof a->status, "%s", why);
        a->dirty = 1;
        return;
    }
    mha_config c = a->cfg;
    if (which)
        c.d_model = v;
    else
        c.h = v;
    change_cfg(a, c);
}

static void step_sample(app_state *a, int dir) {
    int count = samples_count();
    int next = a->sample ? a->sample + dir : (dir > 0 ? 1 : count);
    if (next < 1) next = count;
    if (next > count) next = 1;
    a->status[0] = '\0';
    load_text(a, samples_get(next - 1)->text, next);
}

static void toast(app_state *a, const char *msg) {
    snprintf(a->toast, sizeof a->toast, "%s", msg);
    a->toast_until = SDL_GetTicks() + 6000;
    a->dirty = 1;
}

static void start_editing(app_state *a) {
    a->editing = 1;
    a->preedit[0] = '\0';
    const char *cur = a->sample ? samples_get(a->sample - 1)->text : a->custom;
    snprintf(a->edit, sizeof a->edit, "%s", cur);
    SDL_StartTextInput();
    a->dirty = 1;
}

static void stop_editing(app_state *a, int apply) {
    a->editing = 0;
    a->preedit[0] = '\0';
    SDL_StopTextInput();
    if (apply) {
        a->status[0] = '\0';
        load_text(a, a->edit, 0);
    }
    a->dirty = 1;
}

static void edit_backspace(app_state *a) {
    size_t len = strlen(a->edit);
    while (len > 0) {
        len--;
        if (((unsigned char)a->edit[len] & 0xC0) != 0x80) break;
    }
    a->edit[len] = '\0';
}

static void edit_append(app_state *a, const char *text) {
    size_t len = strlen(a->edit), add = strlen(text);
    if (len + add + 1 > sizeof a->edit) {
        snprintf(a->status, sizeof a->status, "text field is full (%zu bytes)", sizeof a->edit - 1);
        return;
    }
    memcpy(a->edit + len, text, add + 1);
}

static void zoom_by(app_state *a, int dir) {
    static const float steps[] = {0.8f, 0.9f, 1.0f, 1.1f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f};
    int n = (int)(sizeof steps / sizeof steps[0]), cur = 2;
    for (int i = 0; i < n; i++)
        if (steps[i] <= a->zoom + 1e-3f) cur = i;
    if (dir == 0)
        a->zoom = 1.0f;
    else
        a->zoom = steps[cur + dir < 0 ? 0 : (cur + dir >= n ? n - 1 : cur + dir)];
    snprintf(a->status, sizeof a->status, "zoom %d%%", (int)(a->zoom * 100.0f + 0.5f));
    a->dirty = 1;
}

static void press_button(app_state *a, SDL_Window *win, int b) {
    mha_config c = a->cfg;
    switch (b) {
    case BTN_H_DOWN: step_dim(a, 0, -1); break;
    case BTN_H_UP: step_dim(a, 0, +1); break;
    case BTN_D_DOWN: step_dim(a, 1, -1); break;
    case BTN_D_UP: step_dim(a, 1, +1); break;
    case BTN_SAMPLE_PREV: step_sample(a, -1); break;
    case BTN_SAMPLE_NEXT: step_sample(a, +1); break;
    case BTN_TEXT: start_editing(a); break;
    case BTN_SEED:
        c.seed = a->cfg.seed + 1;
        change_cfg(a, c);
        break;
    case BTN_MASK:
        c.mask = a->cfg.mask == MHA_MASK_CAUSAL ? MHA_MASK_NONE : MHA_MASK_CAUSAL;
        change_cfg(a, c);
        break;
    case BTN_SCALE:
        c.no_scale = !a->cfg.no_scale;
        change_cfg(a, c);
        break;
    case BTN_CMAP:
        a->cmap = (a->cmap + 1) % CMAP_COUNT;
        a->dirty = 1;
        break;
    case BTN_THEME:
        a->theme = !a->theme;
        a->dirty = 1;
        break;
    case BTN_ZOOM_OUT: zoom_by(a, -1); break;
    case BTN_ZOOM_IN: zoom_by(a, +1); break;
    case BTN_SAVE: a->save_request = 1; break;
    case BTN_PNG_SCALE:
        a->png_scale = a->png_scale % 4 + 1; /* 1, 2, 3, 4, 1, ... */
        snprintf(a->status, sizeof a->status, "Ctrl+S saves PNGs at %d\xC3\x97 the window's pixels",
                 a->png_scale);
        a->dirty = 1;
        break;
    case BTN_HELP:
        a->help = !a->help;
        a->dirty = 1;
        break;
    case BTN_PAGE_PREV:
        if (a->page > 0) a->page--;
        a->dirty = 1;
        break;
    case BTN_PAGE_NEXT:
        a->page++;
        a->dirty = 1;
        break;
    }
    (void)win;
}

static void handle_key(app_state *a, SDL_Window *win, const SDL_KeyboardEvent *k) {
    SDL_Keycode key = k->keysym.sym;
    int ctrl = (k->keysym.mod & KMOD_CTRL) != 0;
    int shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    if (a->editing) {
        if (key == SDLK_RETURN || key == SDLK_KP_ENTER)
            stop_editing(a, 1);
        else if (key == SDLK_ESCAPE)
            stop_editing(a, 0);
        else if (key == SDLK_BACKSPACE)
            edit_backspace(a), a->dirty = 1;
        else if (ctrl && key == SDLK_v && SDL_HasClipboardText()) {
            char *clip = SDL_GetClipboardText();
            if (clip) edit_append(a, clip);
            SDL_free(clip);
            a->dirty = 1;
        } else if (ctrl && key == SDLK_u) {
            a->edit[0] = '\0';
            a->dirty = 1;
        }
        return;
    }
    if (ctrl) {
        if (key == SDLK_q)
            a->quit = 1;
        else if (key == SDLK_EQUALS || key == SDLK_PLUS || key == SDLK_KP_PLUS)
            zoom_by(a, +1);
        else if (key == SDLK_MINUS || key == SDLK_KP_MINUS)
            zoom_by(a, -1);
        else if (key == SDLK_0 || key == SDLK_KP_0)
            zoom_by(a, 0);
        else if (key == SDLK_s)
            a->save_request = shift ? 2 : 1;
        return;
    }
    switch (key) {
    case SDLK_UP: step_dim(a, 0, +1); break;
    case SDLK_DOWN: step_dim(a, 0, -1); break;
    case SDLK_RIGHT: step_dim(a, 1, +1); break;
    case SDLK_LEFT: step_dim(a, 1, -1); break;
    case SDLK_TAB: step_sample(a, shift ? -1 : +1); break;
    case SDLK_RETURN:
    case SDLK_KP_ENTER: start_editing(a); break;
    case SDLK_r: press_button(a, win, BTN_SEED); break;
    case SDLK_m: press_button(a, win, BTN_MASK); break;
    case SDLK_t: press_button(a, win, BTN_THEME); break;
    case SDLK_c: press_button(a, win, BTN_CMAP); break;
    case SDLK_n: press_button(a, win, BTN_SCALE); break;
    case SDLK_PAGEUP: press_button(a, win, BTN_PAGE_PREV); break;
    case SDLK_PAGEDOWN: press_button(a, win, BTN_PAGE_NEXT); break;
    case SDLK_F1:
    case SDLK_QUESTION: press_button(a, win, BTN_HELP); break;
    case SDLK_SLASH:
        if (shift) press_button(a, win, BTN_HELP);
        break;
    case SDLK_F11:
        a->fullscreen = !a->fullscreen;
        SDL_SetWindowFullscreen(win, a->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        a->dirty = 1;
        break;
    case SDLK_ESCAPE:
        if (a->help)
            a->help = 0;
        else if (a->focus)
            a->focus = 0;
        else
            a->quit = 1;
        a->dirty = 1;
        break;
    default:
        if (key >= SDLK_1 && key <= SDLK_9) {
            int h = (int)(key - SDLK_0);
            if (h <= a->cfg.h) {
                a->focus = h;
                a->status[0] = '\0';
            } else {
                snprintf(a->status, sizeof a->status, "there is no head %d: h = %d", h, a->cfg.h);
            }
            a->dirty = 1;
        }
    }
}

static void fill_view_state(view_state *vs, const app_state *a, int w, int h, float ui) {
    memset(vs, 0, sizeof *vs);
    vs->width = w;
    vs->height = h;
    vs->ui_scale = ui;
    vs->zoom = a->zoom;
    vs->m = a->m;
    vs->toks = &a->toks;
    const sample *s = a->sample ? samples_get(a->sample - 1) : NULL;
    vs->sample_name = s ? s->name : "custom";
    vs->sample_index = a->sample;
    vs->sample_count = samples_count();
    vs->theme = a->theme;
    vs->cmap = a->cmap;
    vs->page = a->page;
    vs->focus = a->focus;
    vs->hover_x = a->hover_x;
    vs->hover_y = a->hover_y;
    vs->editing = a->editing;
    vs->edit_text = a->edit;
    vs->edit_preedit = a->preedit;
    vs->help = a->help;
    vs->status = a->status;
    vs->toast = a->toast[0] ? a->toast : NULL;
    vs->compute_ms = a->compute_ms;
    vs->frame_ms = a->frame_ms;
    vs->data_version = a->data_version;
    vs->png_scale = a->png_scale;
}

static int same_hit(view_hit x, view_hit y) {
    return x.kind == y.kind && x.button == y.button && x.head == y.head && x.row == y.row &&
           x.col == y.col && x.which == y.which;
}

/* Writes the current view as PNG (whole view, or the focused panel). */
static void save_png(app_state *a, font_set *fonts, int w, int h, float ui) {
    view_state vs;
    fill_view_state(&vs, a, w, h, ui);
    vs.hover_x = vs.hover_y = -1;
    vs.figure = 1;
    vs.toast = NULL;
    vs.help = 0;
    vs.editing = 0;
    if (a->save_request == 2) {
        vs.panel = a->focus ? VIEW_PANEL_HEAD : VIEW_PANEL_EQUATION;
        vs.panel_head = a->focus;
    }
    char path[4200], err[600];
    if (export_default_name(path, sizeof path, a->opts->export_dir, a->cfg.h, a->cfg.d_model, "png",
                            err, sizeof err) != 0 ||
        export_png(path, &vs, a->png_scale, fonts, err, sizeof err) != 0) {
        snprintf(a->status, sizeof a->status, "%.250s", err);
        a->dirty = 1;
        return;
    }
    char msg[4400];
    snprintf(msg, sizeof msg, "saved %.4300s (%d\xC3\x97%d px)", path, w * a->png_scale,
             h * a->png_scale);
    toast(a, msg);
}

int app_window(const cli_options *o, const tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen) {
    /* SDL falls back to its invisible "offscreen" driver when no display server
       answers; a window nobody can see is worse than a clear error */
    const char *forced = getenv("SDL_VIDEODRIVER");
    if (!forced && !getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        snprintf(err, errlen, "no display; use --export or --dump");
        return 1;
    }
    /* with only DISPLAY set, go straight to X11 (no Wayland probing and its noise) */
    if (!forced && !getenv("WAYLAND_DISPLAY")) SDL_SetHint(SDL_HINT_VIDEODRIVER, "x11");
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
    int rc = 1;
    app_state *a = calloc(1, sizeof *a);
    font_set *fonts = NULL;
    SDL_Window *win = NULL;
    SDL_Renderer *ren = NULL;
    sdl_draw *drawer = NULL;
    view_cache *cache = NULL;
    draw_list dl;
    draw_list_init(&dl);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    fonts = font_set_open(o->font, err, errlen);
    if (!fonts) goto done;
    a->opts = o;
    a->m = mha_model_create();
    cache = view_cache_create();
    if (!a->m || !cache) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    a->cfg = *cfg;
    a->zoom = 1.0f;
    a->theme = o->theme > 0 ? 1 : 0;
    a->cmap = o->colormap >= 0 ? o->colormap : CMAP_VIRIDIS;
    a->png_scale = o->scale ? o->scale : 2;
    a->hover_x = a->hover_y = -1;
    a->sample = o->text ? 0 : (o->sample ? o->sample : 1);
    if (o->text) snprintf(a->custom, sizeof a->custom, "%s", o->text);
    /* copy the tokens: the window owns its own */
    const char *text = o->text ? o->text : samples_get(a->sample - 1)->text;
    if (load_text(a, text, a->sample) != 0) {
        snprintf(err, errlen, "%s", a->status);
        goto done;
    }
    (void)toks;

    int ww = 1600, wh = 900;
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(0, &usable) == 0 && usable.w > 0 && usable.h > 0) {
        if (ww > usable.w) ww = usable.w;
        if (wh > usable.h) wh = usable.h;
    }
    win = SDL_CreateWindow("mhaviz", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, ww, wh,
                           SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!win) {
        snprintf(err, errlen, "no display; use --export or --dump (%s)", SDL_GetError());
        goto done;
    }
    SDL_SetWindowMinimumSize(win, 800, 600); /* the smallest size the layout tests cover */
    SDL_StopTextInput(); /* SDL starts with text input on; only the text field wants it */
    ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!ren) ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    if (!ren) {
        snprintf(err, errlen, "cannot create a renderer: %s", SDL_GetError());
        goto done;
    }
    drawer = sdl_draw_create(ren, fonts);
    if (!drawer) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    set_title(win, a);
    a->dirty = 1;
    view_layout *L = calloc(1, sizeof *L);
    if (!L) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    int out_w = ww, out_h = wh;
    float ui = 1.0f;

    while (!a->quit) {
        if (a->dirty) {
            double t0 = now_ms();
            int win_w = 1, win_h = 1;
            SDL_GetWindowSize(win, &win_w, &win_h);
            SDL_GetRendererOutputSize(ren, &out_w, &out_h);
            ui = win_w > 0 ? (float)out_w / (float)win_w : 1.0f;
            view_state vs;
            fill_view_state(&vs, a, out_w, out_h, ui);
            view_layout_compute(L, &vs, font_measure, fonts);
            if (L->pages > 0 && a->page >= L->pages) a->page = L->pages - 1, vs.page = a->page;
            view_render(&dl, cache, L, &vs, font_measure, fonts);
            sdl_draw_list(drawer, &dl);
            SDL_RenderPresent(ren);
            a->frame_ms = now_ms() - t0;
            a->dirty = 0;
            set_title(win, a);
        }
        if (a->save_request) {
            save_png(a, fonts, out_w, out_h, ui);
            a->save_request = 0;
            continue;
        }
        SDL_Event e;
        int timeout = -1;
        if (a->toast[0]) {
            Uint32 nowt = SDL_GetTicks();
            timeout = a->toast_until > nowt ? (int)(a->toast_until - nowt) : 0;
        }
        int got = timeout < 0 ? SDL_WaitEvent(&e) : SDL_WaitEventTimeout(&e, timeout);
        if (!got) {
            if (a->toast[0] && SDL_GetTicks() >= a->toast_until) {
                a->toast[0] = '\0';
                a->dirty = 1;
            }
            continue;
        }
        do {
            switch (e.type) {
            case SDL_QUIT: a->quit = 1; break;
            case SDL_WINDOWEVENT:
                if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
                    e.window.event == SDL_WINDOWEVENT_EXPOSED ||
                    e.window.event == SDL_WINDOWEVENT_RESTORED)
                    a->dirty = 1;
                if (e.window.event == SDL_WINDOWEVENT_LEAVE) {
                    a->hover_x = a->hover_y = -1;
                    a->dirty = 1;
                }
                break;
            case SDL_KEYDOWN: handle_key(a, win, &e.key); break;
            case SDL_TEXTINPUT:
                if (a->editing) {
                    edit_append(a, e.text.text);
                    a->preedit[0] = '\0';
                    a->dirty = 1;
                }
                break;
            case SDL_TEXTEDITING:
                snprintf(a->preedit, sizeof a->preedit, "%s", e.edit.text);
                a->dirty = 1;
                break;
            case SDL_MOUSEMOTION: {
                a->hover_x = (int)((float)e.motion.x * ui);
                a->hover_y = (int)((float)e.motion.y * ui);
                view_state vs;
                fill_view_state(&vs, a, out_w, out_h, ui);
                view_hit hit = view_hit_test(L, &vs, a->hover_x, a->hover_y);
                if (!same_hit(hit, a->last_hit)) a->dirty = 1;
                a->last_hit = hit;
                break;
            }
            case SDL_MOUSEBUTTONDOWN:
                if (e.button.button == SDL_BUTTON_LEFT && !a->editing && !a->help) {
                    view_state vs;
                    fill_view_state(&vs, a, out_w, out_h, ui);
                    view_hit hit = view_hit_test(L, &vs, (int)((float)e.button.x * ui),
                                                 (int)((float)e.button.y * ui));
                    if (hit.kind == HIT_BUTTON)
                        press_button(a, win, hit.button);
                    else if ((hit.kind == HIT_HEAD_CELL || hit.kind == HIT_HEAD_TITLE) &&
                             !a->focus) {
                        a->focus = hit.head + 1;
                        a->dirty = 1;
                    }
                } else if (a->help) {
                    a->help = 0;
                    a->dirty = 1;
                }
                break;
            }
        } while (!a->quit && SDL_PollEvent(&e));
    }
    free(L);
    rc = 0;
done:
    draw_list_free(&dl);
    view_cache_destroy(cache);
    sdl_draw_destroy(drawer);
    if (ren) SDL_DestroyRenderer(ren);
    if (win) SDL_DestroyWindow(win);
    font_set_close(fonts);
    if (a) {
        mha_model_destroy(a->m);
        tok_free(&a->toks);
        free(a);
    }
    TTF_Quit();
    SDL_Quit();
    return rc;
}
