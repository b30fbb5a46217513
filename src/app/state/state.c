/* state.c: the app's state machine (see state.h). Applies actions, recomputes
 * the model through the core when the configuration or text changes, and keeps
 * the layout the pointer is tested against. Knows nothing of SDL: events,
 * clipboard, fullscreen and files are the window's business. */
#define _POSIX_C_SOURCE 200809L
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controls.h"
#include "samples.h"
#include "state_internal.h"

_Static_assert(MHA_MAX_N == VIEW_MAX_N, "the view lays out every position the core computes");

app_state *app_state_create(view_measure_fn measure, void *ud) {
    app_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->m = mha_model_create();
    s->L = calloc(1, sizeof *s->L);
    s->async = app_async_create();
    if (!s->m || !s->L || !s->async) {
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
    app_async_free(s->async); /* first: it waits for a recompute under way */
    mha_model_destroy(s->m);
    app_derived_free(s->derived);
    app_training_free(s->training);
    app_pin_free(s->pin);
    tok_free(&s->toks);
    free(s->L);
    free(s);
}

int app_state_init(app_state *s, const cli_options *o, tok_list *toks, const mha_config *cfg,
                   char *err, size_t errlen) {
    s->width = o->size_w ? o->size_w : APP_DEFAULT_W;
    s->height = o->size_h ? o->size_h : APP_DEFAULT_H;
    s->ui_scale = 1.0f;
    s->zoom = s->zoom_base = view_zoom_for_size(s->width, s->height); /* 4K figures: 200 % */
    s->page = o->page > 0 ? o->page - 1 : 0; /* --page K; app_layout clamps it */
    s->theme = o->theme > 0 ? 1 : 0;
    s->cmap = o->colormap >= 0 ? o->colormap : CMAP_VIRIDIS;
    s->png_scale = o->scale ? o->scale : APP_DEFAULT_PNG_SCALE;
    s->lesson = 1;
    s->export_dir = o->export_dir;
    s->export_panel = o->panel == CLI_PANEL_HEAD       ? VIEW_PANEL_HEAD
                      : o->panel == CLI_PANEL_EQUATION ? VIEW_PANEL_EQUATION
                      : o->panel == CLI_PANEL_STEPS    ? VIEW_PANEL_STEPS
                                                       : VIEW_PANEL_ALL;
    s->values = o->values;
    s->contrast = o->contrast;
    s->diff = o->diff;
    s->export_panel_head = o->panel_head;
    s->transparent = o->transparent;
    s->sample = o->text ? 0 : (o->sample ? o->sample : 1);
    if (o->text) snprintf(s->custom, sizeof s->custom, "%s", o->text);
    s->dirty = 1;
    if (app_recompute(s, cfg, toks) != 0) {
        snprintf(err, errlen, "%s", s->status);
        return 1;
    }
    if (o->compare && app_compare_start(s, o, err, errlen) != 0) return 2;
    if (o->panel == CLI_PANEL_STEPS && o->panel_head <= s->cfg.h) {
        s->focus = o->panel_head; /* its intermediate products are derived for the figure */
        app_derive(s);
    }
    if (o->page > 0 && o->mode == CLI_EXPORT) { /* --page K names a page the figure has */
        view_state vs;
        app_figure_view(s, APP_SAVE_EXPORT, &vs);
        vs.page = 0;
        view_layout_compute(s->L, &vs, s->measure, s->measure_ud);
        if (vs.panel != VIEW_PANEL_ALL || o->page > s->L->pages) {
            if (vs.panel != VIEW_PANEL_ALL)
                snprintf(err, errlen, "--page %d: only the whole view (--panel all) has pages",
                         o->page);
            else
                snprintf(err, errlen,
                         "--page %d: at %dx%d the figure has %d page%s of heads (h = %d)", o->page,
                         s->width, s->height, s->L->pages, s->L->pages == 1 ? "" : "s", s->cfg.h);
            return 2;
        }
    }
    return 0;
}

/* Tokenises text and recomputes; sample is 1-based, 0 for custom text. */
static int load_text(app_state *s, const char *text, int sample) {
    tok_list t = {0};
    int total = 0;
    char err[MHA_ERR_LEN];
    if (tok_split(&t, text, MHA_MAX_N, &total, err, sizeof err) != 0) {
        snprintf(s->status, sizeof s->status, "%s", err);
        return -1;
    }
    if (app_recompute(s, &s->cfg, &t) != 0) {
        tok_free(&t);
        return -1;
    }
    s->sample = sample;
    if (!sample) snprintf(s->custom, sizeof s->custom, "%s", text);
    s->page = 0;
    if (total > MHA_MAX_N)
        snprintf(s->status, sizeof s->status, "text cut to the first %d of its %d tokens",
                 MHA_MAX_N, total);
    return 0;
}

/* Steps h (which = 0) or d_model (which = 1); h always divides d_model after. */
static void step_dim(app_state *s, int which, int dir) {
    char why[160];
    int v = which ? controls_step_d(s->cfg.h, s->cfg.d_model, dir, why, sizeof why)
                  : controls_step_h(s->cfg.h, s->cfg.d_model, dir, why, sizeof why);
    if (!v) {
        snprintf(s->status, sizeof s->status, "%s", why);
        return;
    }
    mha_config c = s->cfg;
    if (which)
        c.d_model = v;
    else
        c.h = v;
    int ablated = mha_config_ablated_count(&c);
    memset(c.ablate, 0, sizeof c.ablate); /* the heads are split anew: none is ablated */
    app_change_cfg(s, c);
    if (ablated && s->cfg.h == c.h && s->cfg.d_model == c.d_model)
        snprintf(s->status, sizeof s->status, "every head on again: h = %d splits d_model anew",
                 s->cfg.h);
}

static void step_sample(app_state *s, int dir) {
    int count = samples_count();
    int next = s->sample ? s->sample + dir : (dir > 0 ? 1 : count);
    if (next < 1) next = count;
    if (next > count) next = 1;
    s->status[0] = '\0';
    load_text(s, samples_get(next - 1)->text, next);
}

static void zoom_by(app_state *s, int dir) {
    static const float steps[] = VIEW_ZOOM_STEPS;
    int n = (int)(sizeof steps / sizeof steps[0]), cur = 2;
    for (int i = 0; i < n; i++)
        if (steps[i] <= s->zoom + 1e-3f) cur = i;
    if (dir == 0)
        s->zoom = s->zoom_base > 0.0f ? s->zoom_base : 1.0f;
    else
        s->zoom = steps[cur + dir < 0 ? 0 : (cur + dir >= n ? n - 1 : cur + dir)];
    snprintf(s->status, sizeof s->status, "zoom %d%%", (int)(s->zoom * 100.0f + 0.5f));
    s->layout_valid = 0; /* say so when the window holds the data at a smaller zoom */
    const view_layout *L = app_layout(s);
    if (L->data_zoom > 0.0f && L->data_zoom < s->zoom - 1e-3f)
        snprintf(s->status, sizeof s->status, "zoom %d%%: this window shows the data at %d%%",
                 (int)(s->zoom * 100.0f + 0.5f), (int)(L->data_zoom * 100.0f + 0.5f));
}

static app_action_kind button_action(int b) {
    switch (b) {
    case BTN_H_DOWN: return ACT_H_DOWN;
    case BTN_H_UP: return ACT_H_UP;
    case BTN_D_DOWN: return ACT_D_DOWN;
    case BTN_D_UP: return ACT_D_UP;
    case BTN_SAMPLE_PREV: return ACT_SAMPLE_PREV;
    case BTN_SAMPLE_NEXT: return ACT_SAMPLE_NEXT;
    case BTN_TEXT: return ACT_EDIT_START;
    case BTN_SEED: return ACT_SEED;
    case BTN_MASK: return ACT_MASK;
    case BTN_SCALE: return ACT_SCALE;
    case BTN_CMAP: return ACT_CMAP;
    case BTN_THEME: return ACT_THEME;
    case BTN_ZOOM_OUT: return ACT_ZOOM_OUT;
    case BTN_ZOOM_IN: return ACT_ZOOM_IN;
    case BTN_SAVE: return ACT_SAVE;
    case BTN_PNG_SCALE: return ACT_PNG_SCALE;
    case BTN_HELP: return ACT_HELP;
    case BTN_PAGE_PREV: return ACT_PAGE_PREV;
    case BTN_PAGE_NEXT: return ACT_PAGE_NEXT;
    default: return ACT_NONE;
    }
}

static int same_hit(view_hit x, view_hit y) {
    return x.kind == y.kind && x.button == y.button && x.head == y.head && x.row == y.row &&
           x.col == y.col && x.which == y.which;
}

static view_hit hit_at(app_state *s, int x, int y) {
    const view_layout *L = app_layout(s);
    view_state vs;
    app_view(s, &vs);
    return view_hit_test(L, &vs, x, y);
}

static int click(app_state *s, int x, int y) {
    if (s->help) { /* a click anywhere closes the help overlay */
        s->help = 0;
        return 1;
    }
    if (s->editing) { /* a click in the text puts the cursor there */
        view_state vs;
        view_editor E;
        const view_layout *L = app_layout(s);
        app_view(s, &vs);
        view_editor_layout(&E, &vs, L, s->measure, s->measure_ud);
        int at = view_editor_offset(&E, &vs, x, y, s->measure, s->measure_ud);
        if (at < 0) return 0;
        app_action a = {.kind = ACT_EDIT_CURSOR, .arg = at};
        return app_apply(s, &a);
    }
    view_hit hit = hit_at(s, x, y);
    if (hit.kind == HIT_BUTTON) return app_do(s, button_action(hit.button));
    if (hit.kind == HIT_HEAD_OFF) {
        app_action a = {.kind = ACT_ABLATE, .arg = hit.head + 1};
        return app_apply(s, &a);
    }
    if ((hit.kind == HIT_HEAD_CELL || hit.kind == HIT_HEAD_TITLE) && !s->focus) {
        app_action a = {.kind = ACT_FOCUS, .arg = hit.head + 1};
        return app_apply(s, &a);
    }
    return 0;
}

static int hover(app_state *s, int x, int y) {
    s->hover_x = x;
    s->hover_y = y;
    view_hit hit = {HIT_NONE, -1, -1, -1, -1, -1};
    if (x >= 0 && y >= 0) hit = hit_at(s, x, y);
    int changed = !same_hit(hit, s->hover);
    s->hover = hit;
    if (changed) s->dirty = 1; /* the window redraws on dirty, not on the return value */
    return changed;
}

static int apply(app_state *s, const app_action *a);

/* Applies a; a new status message replaces any notice and goes after a while. */
int app_apply(app_state *s, const app_action *a) {
    if (app_async_defer(s, a)) return 1; /* it needs the model being computed: applied after */
    char before[sizeof s->status];
    memcpy(before, s->status, sizeof before);
    int changed = apply(s, a);
    app_async_after(s, a); /* what the action asked to compute in the background, if anything */
    if (changed) app_derive(s); /* e.g. a new focused head's intermediate products */
    if (s->status[0] && strcmp(before, s->status) != 0) {
        s->status_until = s->now_ms + APP_NOTICE_MS;
        s->notice[0] = '\0';
        s->dirty = 1;
        changed = 1;
    }
    return changed;
}

static int apply(app_state *s, const app_action *a) {
    if (a->kind == ACT_TRAIN || s->train_mode) {
        int r = app_training_apply(s, a);
        if (r >= 0) {
            s->layout_valid = 0;
            s->dirty = 1;
            return 1;
        }
    }
    if (a->kind == ACT_TRAIN_LAYER) return 0;
    mha_config c = s->cfg;
    switch (a->kind) {
    case ACT_NONE:
    case ACT_TRAIN: /* training.c took these above */
    case ACT_TRAIN_LAYER:
    case ACT_COUNT: return 0;
    case ACT_HOVER: return hover(s, a->x, a->y);
    case ACT_LEAVE: return hover(s, -1, -1);
    case ACT_CLICK: return click(s, a->x, a->y);
    case ACT_H_UP: step_dim(s, 0, +1); break;
    case ACT_H_DOWN: step_dim(s, 0, -1); break;
    case ACT_D_UP: step_dim(s, 1, +1); break;
    case ACT_D_DOWN: step_dim(s, 1, -1); break;
    case ACT_SAMPLE_NEXT: step_sample(s, +1); break;
    case ACT_SAMPLE_PREV: step_sample(s, -1); break;
    case ACT_SEED:
        c.seed = s->cfg.seed + 1;
        app_change_cfg(s, c);
        break;
    case ACT_MASK:
        c.mask = s->cfg.mask == MHA_MASK_CAUSAL ? MHA_MASK_NONE : MHA_MASK_CAUSAL;
        app_change_cfg(s, c);
        break;
    case ACT_SCALE:
        c.no_scale = !s->cfg.no_scale;
        app_change_cfg(s, c);
        break;
    case ACT_CMAP: s->cmap = (s->cmap + 1) % CMAP_COUNT; break;
    case ACT_THEME: s->theme = !s->theme; break;
    case ACT_ZOOM_IN: zoom_by(s, +1); break;
    case ACT_ZOOM_OUT: zoom_by(s, -1); break;
    case ACT_ZOOM_RESET: zoom_by(s, 0); break;
    case ACT_PAGE_PREV:
        if (s->page > 0) s->page--;
        break;
    case ACT_PAGE_NEXT: s->page++; break; /* app_layout clamps it to the pages there are */
    case ACT_FOCUS:
        if (a->arg >= 1 && a->arg <= s->cfg.h) {
            s->focus = a->arg;
            s->status[0] = '\0';
        } else {
            snprintf(s->status, sizeof s->status, "there is no head %d: h = %d", a->arg, s->cfg.h);
        }
        break;
    case ACT_HELP: s->help = !s->help; break;
    case ACT_FULLSCREEN: s->fullscreen = !s->fullscreen; break;
    case ACT_PRESENT:
        s->present = !s->present;
        if (s->present) snprintf(s->status, sizeof s->status, "presentation: P or Esc leaves");
        break;
    case ACT_ESCAPE:
        if (s->editing) {
            s->editing = 0;
            s->preedit[0] = '\0';
        } else if (s->help)
            s->help = 0;
        else if (s->focus)
            s->focus = 0;
        else if (s->present)
            s->present = 0;
        else if (s->pin)
            app_compare_toggle(s);
        else
            snprintf(s->status, sizeof s->status, "nothing to close (Ctrl+Q quits)");
        break;
    case ACT_QUIT: s->quit = 1; break;
    case ACT_SAVE: s->save_request = APP_SAVE_VIEW; return 0;
    case ACT_SAVE_PANEL: s->save_request = APP_SAVE_PANEL; return 0;
    case ACT_PNG_SCALE:
        s->png_scale = s->png_scale % 4 + 1; /* 1, 2, 3, 4, 1, ... */
        snprintf(s->status, sizeof s->status, "Ctrl+S saves PNGs at %d\xC3\x97 the window's pixels",
                 s->png_scale);
        break;
    case ACT_EDIT_START: app_edit_start(s); break;
    case ACT_EDIT_APPLY:
        if (!s->editing) return 0;
        s->editing = 0;
        s->preedit[0] = '\0';
        s->status[0] = '\0';
        load_text(s, s->edit, 0);
        break;
    case ACT_EDIT_CANCEL:
    case ACT_EDIT_INSERT:
    case ACT_EDIT_PREEDIT:
    case ACT_EDIT_BACKSPACE:
    case ACT_EDIT_DELETE:
    case ACT_EDIT_CLEAR:
    case ACT_EDIT_LEFT:
    case ACT_EDIT_RIGHT:
    case ACT_EDIT_HOME:
    case ACT_EDIT_END:
    case ACT_EDIT_CURSOR:
        if (!app_edit_apply(s, a)) return 0;
        break;
    case ACT_PAD:
    case ACT_TEMP_UP:
    case ACT_TEMP_DOWN:
    case ACT_WEIGHTS:
    case ACT_ABLATE:
    case ACT_ABLATE_CLEAR:
    case ACT_DIFF:
    case ACT_VALUES:
    case ACT_CONTRAST:
    case ACT_STEP_NEXT:
    case ACT_STEP_PREV:
    case ACT_LESSON:
        if (!app_lesson_apply(s, a)) return 0;
        if (a->kind == ACT_LESSON && s->pin)
            snprintf(s->status, sizeof s->status,
                     "the lesson's panels show when compare is off (B unpins)");
        break;
    case ACT_COMPARE:
        if (!app_compare_toggle(s)) return 0;
        break;
    case ACT_RESIZE:
        if (a->x < 1 || a->y < 1) return 0;
        s->width = a->x;
        s->height = a->y;
        s->ui_scale = a->f > 0.0f ? a->f : 1.0f;
        s->zoom_base = view_zoom_for_size((int)((float)s->width / s->ui_scale),
                                          (int)((float)s->height / s->ui_scale));
        break;
    }
    s->layout_valid = 0;
    s->dirty = 1;
    return 1;
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
    if (app_training_tick(s)) { /* a new snapshot from the trainer */
        s->layout_valid = 0;
        changed = 1;
    }
    app_refresh(s); /* what the const getters hand out, made now */
    if (changed) s->dirty = 1;
    return changed;
}

int app_next_timeout_ms(const app_state *s) {
    if (app_training_running(s)) return 100; /* new snapshots ten times a second */
    double next = -1.0;
    if (s->notice[0]) next = s->notice_until;
    if (s->status[0] && (next < 0.0 || s->status_until < next)) next = s->status_until;
    if (next < 0.0) return -1;
    double left = next - s->now_ms;
    return left > 0.0 ? (int)(left + 0.999) : 0;
}

void app_notify(app_state *s, const char *msg, int error) {
    if (error) {
        snprintf(s->status, sizeof s->status, "%.250s", msg);
        s->status_until = s->now_ms + APP_NOTICE_MS;
        s->notice[0] = '\0';
    } else {
        snprintf(s->notice, sizeof s->notice, "%s", msg);
        s->notice_until = s->now_ms + APP_NOTICE_MS;
        s->status[0] = '\0';
    }
    s->dirty = 1;
}

const view_layout *app_layout(app_state *s) {
    app_derive(s); /* the derived numbers follow the model (out of memory: shown less) */
    app_refresh(s);
    if (s->layout_valid) return s->L;
    view_state vs;
    app_view(s, &vs);
    view_layout_compute(s->L, &vs, s->measure, s->measure_ud);
    if (s->L->pages > 0 && s->page >= s->L->pages) {
        s->page = s->L->pages - 1;
        app_view(s, &vs);
        view_layout_compute(s->L, &vs, s->measure, s->measure_ud);
    }
    s->layout_valid = 1;
    return s->L;
}

app_save_kind app_take_save(app_state *s) {
    app_save_kind k = s->save_request;
    s->save_request = APP_SAVE_NONE;
    return k;
}
