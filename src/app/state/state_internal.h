/* state_internal.h: what the state machine's files share, not part of its API. */
#ifndef MHAVIZ_STATE_INTERNAL_H
#define MHAVIZ_STATE_INTERNAL_H

#include "async.h"
#include "learn.h"
#include "state.h"
#include "train_loop.h"

/* Opens the text field with the current text, all of it selected. */
void app_edit_start(app_state *s);

/* Applies one ACT_EDIT_* action other than start and apply to the open field.
 * Returns 1 if the field changed, 0 if it is closed or the action is not one. */
int app_edit_apply(app_state *s, const app_action *a);

/* model.c: recomputes the model for cfg and toks; on success the state takes
 * toks (when they are not its own already). On failure nothing changes and
 * status says why; returns -1. */
int app_recompute(app_state *s, const mha_config *cfg, tok_list *toks);
/* Recomputes with cfg and the state's tokens (clearing the status first). */
void app_change_cfg(app_state *s, mha_config cfg);

/* model.c's estimate of a recompute, in ms: cfg (resolved) at n positions, the
 * rows of Q, K, V from `first` on computed again, new weights drawn or not. */
double app_cost_ms(const mha_config *cfg, int n, int first, int new_weights);

/* The padded length for a text of n tokens: n plus a quarter (at least 2), at most 512. */
int app_pad_length(int n);

/* Applies one of the lesson's actions (ACT_PAD ... ACT_LESSON). Returns 1 if the
 * picture changed, 0 if the action was refused (status says why) or is not one. */
int app_lesson_apply(app_state *s, const app_action *a);

/* Brings the derived numbers up to date with the model and the focused head
 * and points the view at them; 0, or -1 when out of memory (then the view
 * simply shows less). */
int app_derive(app_state *s);
void app_derived_free(app_derived *d);
/* Fills the view's pointers to the derived numbers. */
void app_derived_view(const app_state *s, view_state *vs);

/* Training mode (training.c). app_training_apply returns -1 for an action that
 * is not training's in the current mode, else whether the picture changed. */
int app_training_apply(app_state *s, const app_action *a);
/* Takes the latest training snapshot; 1 if there was a new one. */
int app_training_tick(app_state *s);
/* 1 while training mode is shown and steps are taken (the window then redraws
 * ten times a second). */
int app_training_running(const app_state *s);
/* Points the view at the trained heads and the curves (training mode only),
 * as app_training_refresh last made them. */
void app_training_view(const app_state *s, view_state *vs);
/* Makes what app_training_view points at from the latest snapshot. */
void app_training_refresh(app_state *s);
void app_training_free(app_training *t);
/* Shows the learner l, trained by --train's loop (its curve of `points`
 * points), in training mode, paused, with its pruning bars measured, at its
 * layer `layer` (0-based; one out of range shows the first): the figure of
 * --train --export. Takes l. Returns 0, or 1 / 2 with a message. */
int app_training_adopt(app_state *s, learn_model *l, const train_point *curve, int points,
                       float steps_per_s, int layer, char *err, size_t errlen);

/* compare.c: B pins the view (or unpins it); 1 if the picture changed. */
int app_compare_toggle(app_state *s);
/* Points the view at the pinned view and the settings that differ (if pinned). */
void app_compare_view(const app_state *s, view_state *vs);
void app_pin_free(app_pin *p);
/* Pins the view --compare describes: this one with the settings it names.
 * Returns 0, or -1 with "--compare: why" in err. */
int app_compare_start(app_state *s, const cli_options *o, char *err, size_t errlen);
/* Takes the pinned view's model when its background compute has finished: 1 if
 * the picture changed. app_async_poll calls it. */
int app_compare_poll(app_state *s);
/* Waits for the pinned view's model, if it is being computed, and takes it. */
void app_compare_wait(app_state *s);
/* Brings the pinned view's own view state and the settings that differ up to
 * date with the state (app_refresh calls it); app_compare_view only points at them. */
void app_compare_refresh(app_state *s);

/* async.c: the background recompute (async.h), as the state machine sees it.
 * app_async_create/free make and end it (free waits for a recompute under way).
 * While busy, s->cfg and s->sample are what was asked for and s->m, s->toks
 * the model shown with its text; app_async_want is the text asked for (s->toks
 * when not busy) and app_async_shown_sample the sample shown. */
app_async *app_async_create(void);
void app_async_free(app_async *a);
int app_async_active(const app_state *s);
double app_async_threshold(const app_state *s);
void app_async_count(app_state *s); /* a recompute done in the foreground */
int app_async_shown_sample(const app_state *s);
tok_list *app_async_want(app_state *s);
/* Asks for cfg (resolved and checked) with toks: s->toks or the text asked for
 * is copied, another list is taken (left empty). Sets s->cfg; 0, or -1 out of
 * memory (status says so). */
int app_async_request(app_state *s, const mha_config *cfg, tok_list *toks);
/* Hands the request to the worker when it is free. */
void app_async_submit(app_state *s);
/* After each action: app_async_submit, and a message that measured the model
 * shown (X's "MultiHead changes by ...") is dropped when the model it is about
 * is still being computed. */
void app_async_after(app_state *s, const app_action *a);
/* 1 if the action must wait for the model being computed (it is kept and
 * applied once that model is shown). */
int app_async_defer(app_state *s, const app_action *a);
/* The progress sign while busy ("computing h = 16, ..."), as app_refresh last
 * made it, else NULL. */
const char *app_async_status(const app_state *s);
/* The app's one job runner (src/jobs): the recompute, the pinned view and the
 * trainer run on it. NULL only when the state has no async part. */
struct jobs *app_jobs(const app_state *s);
/* The update step behind the const getters: makes the progress sign, the
 * training view and the pinned view's state from the state as it is now. Called
 * after every action, poll, tick and before a layout: app_view, app_async_status,
 * app_training_view and app_compare_view then only read. */
void app_refresh(app_state *s);

#endif
