/* state.c: the app's state machine (see state.h): makes the state from the
 * options, applies actions (one table names the group of actions.c that owns
 * each; a lesson and training mode take their keys first; keys that must wait for
 * a model being computed are kept by request.c) and moves the clock. Knows
 * nothing of SDL or threads: events, clipboard, fullscreen and files are the
 * window's business, computing in the background the jobs layer's. */
#define _POSIX_C_SOURCE 200809L
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "settings.h"
#include "state_internal.h"
#include "sweep_view.h"
#include "teach.h"

_Static_assert(MHA_MAX_N == VIEW_BUILTIN_MAX_N && MHA_MAX_N <= VIEW_MAX_N,
               "the view lays out every position the core computes");

app_state *app_state_create(view_measure_fn measure, void *ud) {
    app_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->m = mha_model_create();
    s->write = app_write_opts_of(NULL);
    s->L = calloc(1, sizeof *s->L);
    s->counts = calloc(1, sizeof *s->counts);
    s->frame = calloc(1, sizeof *s->frame);
    if (!s->m || !s->L || !s->counts || !s->frame) {
        app_state_destroy(s);
        return NULL;
    }
    s->measure = measure;
    s->measure_ud = ud;
    s->hover_x = s->hover_y = -1;
    s->hover.kind = HIT_NONE;
    return s;
}

void app_state_destroy(app_state *s) {
    if (!s) return;
    /* the jobs layer, if one was attached, is gone (app_async_disable): every
       model and pin is this thread's */
    mha_model_destroy(s->m);
    tok_free(&s->req.want);
    app_derived_free(s->derived);
    app_training_free(s->training);
    app_sweep_free(s->sweep);
    app_pin_free(s->pin);
    app_pins_dropped_free(s);
    app_gpt_free(s->gpt);
    app_write_free(s->writer);
    app_teach_free(s->teach);
    tok_free(&s->toks);
    free(s->L);
    free(s->counts);
    free(s->frame);
    free(s);
}

static int want_model(app_state *s, const cli_options *o, char *err, size_t errlen);
static int check_pages(app_state *s, const cli_options *o, int page_asked, int pinned_asked,
                       char *err, size_t errlen);
static int check_panel_head(const app_state *s, const cli_options *o, char *err, size_t errlen);

int app_state_init(app_state *s, const cli_options *o, tok_list *toks, const mha_config *cfg,
                   char *err, size_t errlen) {
    s->width = o->size_w ? o->size_w : APP_DEFAULT_W;
    s->height = o->size_h ? o->size_h : APP_DEFAULT_H;
    s->ui_scale = 1.0f;
    s->look.zoom = s->zoom_base = view_zoom_for_size(s->width, s->height); /* 4K figures: 200 % */
    s->look.page = o->page > 0 ? o->page - 1 : 0; /* --page K; app_layout clamps it */
    s->look.theme = o->theme > 0 ? 1 : 0;
    s->look.cmap = o->colormap >= 0 ? o->colormap : CMAP_VIRIDIS;
    s->png_scale = o->scale ? o->scale : APP_DEFAULT_PNG_SCALE;
    s->lesson = 1;
    s->export_dir = o->export_dir;
    s->export_panel = o->panel == CLI_PANEL_HEAD       ? VIEW_PANEL_HEAD
                      : o->panel == CLI_PANEL_EQUATION ? VIEW_PANEL_EQUATION
                      : o->panel == CLI_PANEL_STEPS    ? VIEW_PANEL_STEPS
                      : o->panel == CLI_PANEL_MODEL    ? VIEW_PANEL_MODEL
                      : o->panel == CLI_PANEL_NEXT     ? VIEW_PANEL_NEXT
                      : o->panel == CLI_PANEL_LINES    ? VIEW_PANEL_LINES
                                                       : VIEW_PANEL_ALL;
    s->look.values = o->values;
    s->look.contrast = o->contrast;
    /* a figure follows the window: where the fixed scale would draw a dark field (a
       long text) its rows are scaled to their maximum, unless --contrast chose */
    s->auto_contrast = !o->contrast_given && !(o->state && app_settings_has(o->state, "contrast"));
    s->look.diff = o->diff;
    s->look.present = o->present;
    s->export_panel_head = o->panel_head;
    s->transparent = o->transparent;
    s->write = app_write_opts_of(o);
    s->sample = o->text ? 0 : (o->sample ? o->sample : 1);
    if (o->text) tok_copy_fit(s->custom, sizeof s->custom, o->text);
    s->dirty = 1;
    if (o->model_path && o->mode != CLI_WINDOW) { /* a checkpoint's figure: the random */
        s->cfg = *cfg; /* model under it is never drawn, so it is not computed */
        tok_free(&s->toks), s->toks = *toks, memset(toks, 0, sizeof *toks);
    } else if (app_recompute(s, cfg, toks) != 0) {
        snprintf(err, errlen, "%s", s->status);
        return 1;
    }
    int total = 0;
    tok_list all = {0};
    char terr[MHA_ERR_LEN];
    if (o->text && !o->model_path && s->toks.count == MHA_MAX_N &&
        tok_split(&all, o->text, 1, &total, terr, sizeof terr) == 0 && total > MHA_MAX_N)
        snprintf(s->status, sizeof s->status, "text cut to the first %d of its %d tokens",
                 MHA_MAX_N, total); /* --text-file's: a typed --text that long is refused */
    tok_free(&all);
    if (o->model_path) {
        const int rc = want_model(s, o, err, errlen);
        if (rc != 0) return rc;
    }
    if (o->compare && app_compare_start(s, o, err, errlen) != 0) return 2;
    s->pinned_page = o->pinned_page > 0 ? o->pinned_page - 1 : 0; /* app_layout clamps it */
    int page_asked = o->page, pinned_asked = o->pinned_page;      /* the export checks them below */
    if (o->state) { /* --state FILE: its settings, less those the options gave (settings.c) */
        if (app_settings_apply(s, o->state, err, errlen) != 0) return 2;
        if (!page_asked && app_settings_has(o->state, "page")) page_asked = s->look.page + 1;
        if (!pinned_asked && app_settings_has(o->state, "pinned-page") && s->pin)
            pinned_asked = s->pinned_page + 1;
    }
    if (o->lesson_path) { /* --lesson FILE [--step K]: that step's view */
        int lrc = app_teach_open(s, o->lesson_path, err, errlen);
        if (lrc != 0) return lrc;
        if (o->lesson_step > 1 && app_teach_goto(s, o->lesson_step) != 0) {
            snprintf(err, errlen, "%s", app_teach_why(s));
            return 2;
        }
        if (o->mode != CLI_WINDOW) app_teach_finish(s); /* where its timed actions end */
        s->status[0] = '\0';
    }
    if (check_panel_head(s, o, err, errlen) != 0) return 2;
    app_refresh(s);
    if (o->panel == CLI_PANEL_STEPS) {
        s->look.focus = o->panel_head; /* its intermediate products are derived for the figure */
        s->look.step = o->panel_step;  /* steps:K:S: stage S large; 0 all nine */
        app_derive(s);
    }
    if (o->mode != CLI_EXPORT) return 0;
    if (s->gpt && s->lesson && s->export_panel == VIEW_PANEL_ALL) {
        /* the figure's "How alike" panel judges a model's own heads by its next token,
           however the model came (--model, a view file's model = PATH) */
        app_gpt_measure(s, 1);
        app_derive(s);
    }
    return check_pages(s, o, page_asked, pinned_asked, err, errlen);
    return 0;
}

/* --model DIR: the window asks the jobs layer for it; a figure opens it here and
   derives its layer. 0, or the exit status with err. */
static int want_model(app_state *s, const cli_options *o, char *err, size_t errlen) {
    const sample *smp = samples_get((o->sample ? o->sample : 1) - 1);
    app_gpt_request *q = &s->gpt_want;
    snprintf(q->path, sizeof q->path, "%s", o->model_path);
    tok_copy_fit(q->text, sizeof q->text, o->text ? o->text : smp ? smp->text : "");
    q->layer = o->train.layer > 0 ? o->train.layer - 1 : 0;
    q->h = o->cfg.h;
    q->kv = o->model_kv;
    snprintf(q->ablate, sizeof q->ablate, "%s", o->model_ablate ? o->model_ablate : "");
    if (o->mode == CLI_WINDOW) { /* the window loads it on the jobs layer */
        s->gpt_wanted = 1;
    } else {
        int rc = app_gpt_open(s, q, err, errlen);
        if (rc != 0) return rc;
        app_gpt_export_panel(s, s->export_panel);
        app_derive(s); /* the figure's layer and numbers: the model's */
    }
    return 0;
}

/* --panel head:K, steps:K and lines:K name a head the figure has, once a model, a view
   file and a lesson have said how many heads it shows (cli.c checks the random model's
   -H alone, before any of them): 0, or -1 with err. */
static int check_panel_head(const app_state *s, const cli_options *o, char *err, size_t errlen) {
    const int h = s->gpt ? app_gpt_heads(s) : s->cfg.h;
    if ((o->panel != CLI_PANEL_HEAD && o->panel != CLI_PANEL_STEPS &&
         o->panel != CLI_PANEL_LINES) ||
        o->panel_head <= h)
        return 0;
    snprintf(err, errlen, "--panel %s:%d: there are only %d heads%s",
             o->panel == CLI_PANEL_HEAD    ? "head"
             : o->panel == CLI_PANEL_LINES ? "lines"
                                           : "steps",
             o->panel_head, h, s->gpt ? " in the model's layer shown" : "");
    return -1;
}

/* An export's --page K and --pinned-page K (or its view file's) name pages its
   figure has: 0, or 2 with err. */
static int check_pages(app_state *s, const cli_options *o, int page_asked, int pinned_asked,
                       char *err, size_t errlen) {
    if (pinned_asked > 0) { /* a page the pinned view has */
        view_state vs;
        app_figure_view(s, APP_SAVE_EXPORT, &vs);
        vs.look.page = 0;
        view_layout_compute(s->L, &vs, s->measure, s->measure_ud);
        int ph = 0;
        const int pages = app_compare_pages(s, &ph);
        if (pinned_asked > pages) {
            char where[1200] = "--pinned-page ";
            if (!o->pinned_page) app_settings_where(o->state, "pinned-page", where, sizeof where);
            snprintf(err, errlen, "%s%d: at %dx%d the pinned view has %d page%s of heads (h = %d)",
                     where, pinned_asked, s->width, s->height, pages, pages == 1 ? "" : "s", ph);
            return 2;
        }
    }
    if (page_asked > 0) { /* --page K names a page the figure has */
        view_state vs;
        app_figure_view(s, APP_SAVE_EXPORT, &vs);
        vs.look.page = 0;
        view_layout_compute(s->L, &vs, s->measure, s->measure_ud);
        char name[1200] = "--page ";
        if (!o->page) app_settings_where(o->state, "page", name, sizeof name);
        const int all = vs.panel == VIEW_PANEL_ALL; /* a file's page = 1 fits any panel */
        /* a figure without pages of heads (a head focused, a model's overview) does not
           draw a file's page, which the window keeps for later: only --page K is checked */
        const int pages = s->L->pages, unpaged = pages == 0 && !o->page;
        if ((!all && (o->page || page_asked > 1)) ||
            (all && !unpaged && page_asked > (pages > 0 ? pages : 1))) {
            if (vs.panel != VIEW_PANEL_ALL)
                snprintf(err, errlen, "%s%d: only the whole view (--panel all) has pages", name,
                         page_asked);
            else if (pages == 0)
                snprintf(err, errlen,
                         "%s%d: the figure has no pages of heads (a head focused, or a model's "
                         "overview)",
                         name, page_asked);
            else if (s->L->panels_page > 0) /* presenting: the side panels' page last */
                snprintf(err, errlen,
                         "%s%d: at %dx%d the figure has %d pages (h = %d; the side panels on "
                         "page %d)",
                         name, page_asked, s->width, s->height, s->L->pages, s->cfg.h,
                         s->L->panels_page);
            else
                snprintf(err, errlen, "%s%d: at %dx%d the figure has %d page%s of heads (h = %d)",
                         name, page_asked, s->width, s->height, s->L->pages,
                         s->L->pages == 1 ? "" : "s", s->cfg.h);
            return 2;
        }
    }
    return 0;
}

/* The part that owns each action: the group of actions.c that applies it. One
   look-up, as kilo's editorProcessKeypress is one switch; the modes before it
   (apply_mode) and a loaded model's own keys (gpt.c) are the only ones asked
   first. NULL: the action is the pointer's (apply_pointer) or a mode's alone. */
typedef int (*apply_fn)(app_state *s, const app_action *a);
static const apply_fn owner[ACT_COUNT] = {
    /* the model: what is computed */
    [ACT_H_UP] = app_apply_model,
    [ACT_H_DOWN] = app_apply_model,
    [ACT_D_UP] = app_apply_model,
    [ACT_D_DOWN] = app_apply_model,
    [ACT_SAMPLE_NEXT] = app_apply_model,
    [ACT_SAMPLE_PREV] = app_apply_model,
    [ACT_SEED] = app_apply_model,
    [ACT_MASK] = app_apply_model,
    [ACT_SCALE] = app_apply_model,
    [ACT_KV_FEWER] = app_apply_model,
    [ACT_KV_MORE] = app_apply_model,
    /* the look: how it is shown, the window's size and the saves */
    [ACT_CMAP] = app_apply_look,
    [ACT_THEME] = app_apply_look,
    [ACT_ZOOM_IN] = app_apply_look,
    [ACT_ZOOM_OUT] = app_apply_look,
    [ACT_ZOOM_RESET] = app_apply_look,
    [ACT_PAGE_PREV] = app_apply_look,
    [ACT_PAGE_NEXT] = app_apply_look,
    [ACT_PINNED_PAGE_PREV] = app_apply_look,
    [ACT_PINNED_PAGE_NEXT] = app_apply_look,
    [ACT_FOCUS] = app_apply_look,
    [ACT_HEAD_VIEW] = app_apply_look,
    [ACT_HELP] = app_apply_look,
    [ACT_MENU] = app_apply_look,
    [ACT_FULLSCREEN] = app_apply_look,
    [ACT_PRESENT] = app_apply_look,
    [ACT_ESCAPE] = app_apply_look,
    [ACT_QUIT] = app_apply_look,
    [ACT_SAVE] = app_apply_look,
    [ACT_SAVE_PANEL] = app_apply_look,
    [ACT_SAVE_VIEW_FILE] = app_apply_look,
    [ACT_PNG_SCALE] = app_apply_look,
    [ACT_RESIZE] = app_apply_look,
    /* the text field */
    [ACT_EDIT_START] = app_apply_text,
    [ACT_EDIT_APPLY] = app_apply_text,
    [ACT_EDIT_CANCEL] = app_apply_text,
    [ACT_EDIT_INSERT] = app_apply_text,
    [ACT_EDIT_PREEDIT] = app_apply_text,
    [ACT_EDIT_BACKSPACE] = app_apply_text,
    [ACT_EDIT_DELETE] = app_apply_text,
    [ACT_EDIT_CLEAR] = app_apply_text,
    [ACT_EDIT_LEFT] = app_apply_text,
    [ACT_EDIT_RIGHT] = app_apply_text,
    [ACT_EDIT_HOME] = app_apply_text,
    [ACT_EDIT_END] = app_apply_text,
    [ACT_EDIT_CURSOR] = app_apply_text,
    [ACT_EDIT_OPEN] = app_apply_text,
    /* the lesson's keys and compare */
    [ACT_PAD] = app_apply_lesson,
    [ACT_TEMP_UP] = app_apply_lesson,
    [ACT_TEMP_DOWN] = app_apply_lesson,
    [ACT_WEIGHTS] = app_apply_lesson,
    [ACT_ABLATE] = app_apply_lesson,
    [ACT_ABLATE_CLEAR] = app_apply_lesson,
    [ACT_DIFF] = app_apply_lesson,
    [ACT_VALUES] = app_apply_lesson,
    [ACT_CONTRAST] = app_apply_lesson,
    [ACT_STEP_NEXT] = app_apply_lesson,
    [ACT_STEP_PREV] = app_apply_lesson,
    [ACT_LESSON] = app_apply_lesson,
    [ACT_COMPARE] = app_apply_lesson,
};

/* A mode's keys: a lesson's (and its caption field), then training mode's (its
   sweep view first). -1 when no mode takes a: the owner applies it. */
static int apply_mode(app_state *s, const app_action *a) {
    if (app_teach_apply(s, a) >= 0) return 1;
    if (s->train_mode && app_training_sweep(s, a) >= 0) return 1; /* H, the sweep's keys */
    if (a->kind == ACT_TRAIN || s->train_mode) {
        if (app_training_apply(s, a) >= 0) return 1;
        if (s->train_mode && app_training_refuse(s, a)) return 0; /* says why; changes nothing */
    }
    return -1;
}

/* Applies a: a mode's key, the pointer's, else its owner's (a loaded model's own
   keys first). */
static int apply(app_state *s, const app_action *a) {
    const int mode = apply_mode(s, a);
    if (mode >= 0) {
        if (mode) s->layout_valid = 0, s->dirty = 1;
        return mode;
    }
    switch (a->kind) {
    case ACT_NONE:
    case ACT_TRAIN: /* training mode's (apply_mode) */
    case ACT_TRAIN_SPEED:
    case ACT_REPLAY_LIVE:
    case ACT_COUNT: return 0;
    case ACT_HOVER: return app_hover(s, a->x, a->y);
    case ACT_LEAVE: return app_hover(s, -1, -1);
    case ACT_CLICK: {
        app_action then;
        const int r = app_click(s, a->x, a->y, &then);
        return then.kind != ACT_NONE ? app_apply(s, &then) : r;
    }
    case ACT_TRAIN_LAYER: /* a loaded model's alone */
    case ACT_LAYER:
    case ACT_OVERVIEW:
        if (!s->gpt) return 0;
        break;
    case ACT_COMPARE:
        if (s->gpt_wanted || s->gpt_loading) {
            snprintf(s->status, sizeof s->status, "a model is loading: compare waits for it");
            return 1;
        }
        break;
    default: break;
    }
    int r = app_write_apply(s, a); /* W, S, and `.` outside the focus view: a model writes */
    if (r < 0 && s->gpt) r = app_gpt_apply(s, a);
    if (r < 0 && a->kind < ACT_COUNT && owner[a->kind]) r = owner[a->kind](s, a);
    if (r <= 0) return 0;
    s->layout_valid = 0;
    s->dirty = 1;
    return 1;
}

/* Applies a; a new status message replaces any notice and goes after a while. */
int app_apply(app_state *s, const app_action *a) {
    s->counts->actions++;
    if (app_request_defer(s, a)) { /* it needs the model being computed: applied after */
        app_refresh(s);
        return 1;
    }
    char before[sizeof s->status];
    memcpy(before, s->status, sizeof before);
    s->applying++;
    int changed = apply(s, a);
    s->applying--;
    app_request_after(s, a);
    if (!s->applying) { /* the outermost action (not a click's): */
        app_refresh(s);
        if (app_derive_stale(s)) /* one derivation for all it changed */
            app_derive(s);       /* e.g. a new focused head's intermediate products */
        else if (changed)
            app_derive_layer(s);
    }
    if (s->status[0] && strcmp(before, s->status) != 0) {
        s->status_until = s->now_ms + APP_NOTICE_MS;
        s->notice[0] = '\0';
        s->dirty = 1;
        changed = 1;
    }
    return changed;
}

void app_open_model(app_state *s, const char *path) {
    app_gpt_request *q = &s->gpt_want;
    snprintf(q->path, sizeof q->path, "%s", path);
    const sample *smp = s->sample ? samples_get(s->sample - 1) : NULL;
    tok_copy_fit(q->text, sizeof q->text, smp ? smp->text : s->custom);
    q->layer = 0;
    q->h = 0;
    q->kv = 0;
    q->ablate[0] = '\0';
    s->dirty = 1;
    if (s->req.attached) { /* the jobs layer reads it; the picture stays meanwhile */
        s->gpt_wanted = 1;
        return;
    }
    char err[512];
    int rc = 0;
    app_gpt *g = app_gpt_load(q, NULL, NULL, &rc, err, sizeof err);
    if (g && s->pin) app_compare_toggle(s); /* a random model's pin does not compare with it */
    app_gpt_adopt(s, g, err);
    app_derive(s); /* the layer drawn: the new model's from now on */
}

int app_do(app_state *s, app_action_kind kind) {
    app_action a = {.kind = kind};
    return app_apply(s, &a);
}

int app_tick(app_state *s, double now_ms) {
    int changed = 0;
    s->now_ms = now_ms;
    if (s->notice[0] && now_ms >= s->notice_until) {
        s->notice[0] = '\0';
        changed = 1;
    }
    if (s->status[0] && now_ms >= s->status_until) {
        s->status[0] = '\0';
        changed = 1;
    }
    if (app_teach_tick(s, now_ms)) { /* a lesson's timed actions (derived as they change) */
        changed = 1;
        app_refresh(s);
    } else {
        app_refresh_signs(s); /* what the const getters hand out; the frame's layout the rest */
    }
    char before[sizeof s->status];
    memcpy(before, s->status, sizeof before);
    if (app_write_tick(s, now_ms)) { /* a model writing: a token drawn or appended */
        changed = 1;
        app_refresh(s);
        if (s->status[0] && strcmp(before, s->status) != 0) {
            s->status_until = now_ms + APP_NOTICE_MS;
            s->notice[0] = '\0';
        }
    }
    if (changed) s->dirty = 1;
    return changed;
}

app_counts app_state_counts(const app_state *s) {
    return *s->counts;
}

app_save_kind app_take_save(app_state *s) {
    app_save_kind k = s->save_request;
    s->save_request = APP_SAVE_NONE;
    return k;
}

int app_next_timeout_ms(const app_state *s) {
    if (app_training_running(s)) return 100; /* new snapshots ten times a second */
    double next = -1.0;
    if (s->notice[0]) next = s->notice_until;
    if (s->status[0] && (next < 0.0 || s->status_until < next)) next = s->status_until;
    int lesson = app_teach_timeout_ms(s);      /* a lesson's stages or sweep */
    const int write = app_write_timeout_ms(s); /* a model writing: its next token */
    if (write >= 0 && (lesson < 0 || write < lesson)) lesson = write;
    if (next < 0.0) return lesson;
    double left = next - s->now_ms;
    const int ms = left > 0.0 ? (int)(left + 0.999) : 0;
    return lesson >= 0 && lesson < ms ? lesson : ms;
}
