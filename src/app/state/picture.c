/* picture.c: the state as the view sees it: app_view fills a view_state from the
 * app's state (the layer drawn and its derived numbers from derive.c, training's
 * and the pinned view's from training.c and compare.c), app_figure_view the same
 * for a saved figure; both only read. app_refresh makes what they point at
 * (the progress sign, the training view, the pinned pane), app_layout lays the
 * state out from one view a frame, which the frame draws (app_layout_view). */
#include <string.h>

#include "samples.h"
#include "state_internal.h"
#include "teach.h"

void app_view(const app_state *s, view_state *vs) {
    memset(vs, 0, sizeof *vs);
    s->counts->views++;
    vs->width = s->width;
    vs->height = s->height;
    vs->ui_scale = s->ui_scale;
    vs->look = s->look; /* the look whole; the stages only with a head focused */
    if (!s->look.focus) vs->look.step = 0;
    vs->zoom_base = s->zoom_base;
    const int shown = app_request_shown_sample(s); /* the text's, as s->m and s->toks */
    const sample *smp = shown ? samples_get(shown - 1) : NULL;
    vs->sample_name = smp ? smp->name : "custom";
    vs->sample_index = shown;
    vs->sample_count = samples_count();
    vs->lesson = s->lesson;
    vs->hover_x = s->hover_x;
    vs->hover_y = s->hover_y;
    vs->editing = s->editing;
    vs->edit_text = s->edit;
    vs->edit_preedit = s->preedit;
    vs->edit_cursor = s->edit_cursor;
    vs->edit_selected = s->edit_selected;
    vs->edit_tokens = s->edit_tokens;
    vs->edit_limit = app_gpt_limit(s); /* a loaded model keeps its positions' worth */
    vs->help = s->help;
    vs->status = s->status;
    vs->toast = s->notice[0] ? s->notice : NULL;
    vs->compute_ms = s->compute_ms;
    vs->forward_ms = s->m && s->forward_key == app_forward_key(&s->m->cfg, s->m->n) && !s->gpt
                         ? s->forward_ms
                         : -1.0;
    vs->frame_ms = s->frame_ms;
    vs->timings = s->timings;
    vs->data_version = s->data_version;
    vs->png_scale = s->png_scale;
    const char *computing = app_request_status(s); /* the old picture, and the sign of the new */
    if (computing && s->look.present)
        vs->toast = computing; /* no status line in presentation mode */
    else if (computing)
        vs->status = computing;
    app_derived_view(s, vs); /* the layer drawn, and the numbers derived from it */
    app_gpt_view(s, vs);
    app_write_view(s, vs);
    app_training_view(s, vs);
    if (!s->train_mode) app_compare_view(s, vs);
    app_teach_view(s, vs); /* a lesson's caption band */
    app_menu_view(s, vs);  /* the "More" panel's buttons, for the mode shown */
}

void app_figure_view(const app_state *s, app_save_kind kind, view_state *vs) {
    app_view(s, vs);
    vs->hover_x = vs->hover_y = -1;
    vs->figure = 1;
    /* presenting, a figure keeps the presentation's text floor: it is what the window
       shows (look.present stays the state's) */
    vs->toast = NULL;
    vs->status = NULL; /* a figure carries no messages of the app's */
    vs->help = 0;
    vs->menu = 0;
    vs->editing = 0;
    if (vs->caption && !vs->caption->steps) /* a recording's band: the window's hint */
        vs->caption = NULL;
    if (kind == APP_SAVE_PANEL) {
        vs->panel = s->look.focus ? (s->look.step ? VIEW_PANEL_STEPS : VIEW_PANEL_HEAD)
                                  : VIEW_PANEL_EQUATION;
        if (vs->panel == VIEW_PANEL_HEAD && s->look.head_view == VIEW_HEAD_LINES)
            vs->panel = VIEW_PANEL_LINES; /* the head view's head, as the window shows it */
        vs->panel_head = s->look.focus;
    } else if (kind == APP_SAVE_EXPORT) {
        vs->panel = s->export_panel;
        vs->panel_head = s->export_panel_head;
        vs->transparent = s->transparent;
    }
}

void app_refresh_signs(app_state *s) {
    app_request_line(s);
    app_training_refresh(s);
}

void app_refresh(app_state *s) {
    app_refresh_signs(s);
    if (s->pin && !s->train_mode) {
        view_state live;
        app_view(s, &live);
        app_compare_refresh(s, &live);
    }
}

/* The frame's one view: the state's, and the pinned pane's made from it. */
static void frame_view(app_state *s, view_state *vs) {
    app_view(s, vs);
    if (s->pin && !s->train_mode) {
        app_compare_refresh(s, vs);
        app_compare_view(s, vs); /* the count of differences just made */
    }
}

const view_layout *app_layout(app_state *s) {
    if (app_derive_stale(s))
        app_derive(s); /* a change no action made: a lesson's timed step (out of memory: less) */
    else
        app_derive_layer(s);
    app_refresh_signs(s);
    view_state *vs = s->frame;
    frame_view(s, vs);
    if (s->layout_valid) return s->L;
    view_layout_compute(s->L, vs, s->measure, s->measure_ud);
    const int pinned = app_compare_pages(s, NULL);
    if ((s->L->pages > 0 && s->look.page >= s->L->pages) ||
        (pinned > 0 && s->pinned_page >= pinned)) {
        if (s->L->pages > 0 && s->look.page >= s->L->pages) s->look.page = s->L->pages - 1;
        if (pinned > 0 && s->pinned_page >= pinned) s->pinned_page = pinned - 1;
        vs->look.page = s->look.page; /* the pages there are: the rest of the view as it was */
        if (s->pin && !s->train_mode) app_compare_refresh(s, vs);
        view_layout_compute(s->L, vs, s->measure, s->measure_ud);
    }
    s->layout_valid = 1;
    return s->L;
}

const view_state *app_layout_view(const app_state *s) {
    return s->frame;
}
