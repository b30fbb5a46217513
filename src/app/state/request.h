/* request.h: what the state machine asks the jobs layer above it to compute, and
 * how results come back down. The state records requests as plain data (the
 * recompute in s->req, a pin waiting for its model, a training command); the
 * jobs layer (src/app/jobs/async.c) takes them, runs them on its runner and
 * hands the results back through these calls. Nothing here calls upward. */
#ifndef MHAVIZ_REQUEST_H
#define MHAVIZ_REQUEST_H

#include "learn.h"
#include "state.h"
#include "train_loop.h"
#include "train_view.h"

/* 1 while a recompute is running or requested (request.c). */
int app_request_busy(const app_state *s);
/* Takes the pending recompute for the jobs layer: its configuration, a copy of
 * its text (the caller's) and its sample; s->req.running is set. 0, or -1 when
 * nothing is pending or the text cannot be copied (nothing changes). */
int app_request_take(app_state *s, mha_config *cfg, tok_list *toks, int *sample);
/* A request the jobs layer cannot compute (out of memory): the state goes back
 * to the model shown and status says so. */
void app_request_drop(app_state *s);
/* A jobs layer is attached: a recompute estimated above threshold_ms becomes a
 * request (and so does any while one is under way). */
void app_request_attach(app_state *s, double threshold_ms);
/* The jobs layer goes away: every request is forgotten, the state is the model
 * shown. */
void app_request_cancel(app_state *s);

/* adopt.c: a recompute the jobs layer finished (taken with app_request_take):
 * with err NULL the state shows m with toks (taken, left empty) and sample and
 * returns the model shown before, for the next one; with err the model shown
 * stays, status says why and m is returned. Then the next request waits, or the
 * keys that waited are applied in order. */
mha_model *app_model_adopt(app_state *s, mha_model *m, tok_list *toks, int sample, double ms,
                           const char *err);

/* compare.c: the pin whose model the state wants computed in the background,
 * marked as handed over (its model is the caller's until app_compare_adopt), or
 * NULL. */
app_pin *app_compare_request(app_state *s);
/* Computes a handed-over pin's model and derived numbers: the worker's side,
 * touching only the pin. */
void app_pin_compute(app_pin *p);
/* The pin's compute has finished: it is shown (or, when it failed, dropped with
 * a message), or freed when it was unpinned meanwhile. 1 if the picture changed. */
int app_compare_adopt(app_state *s, app_pin *p);

/* training.c: the command the state wants the trainer to carry out, taken (and
 * cleared): start (with cfg, stopping after stop_at steps, 0 never, or once
 * converged), then the speed (rate steps a second, 0 full speed, TRAIN_CLASS_PACE the
 * class pace, -1 unchanged),
 * then pause (1), resume (0) or neither (-1), then one step by hand (single).
 * 0 when there is none. */
typedef struct {
    int start;
    learn_config cfg;
    long stop_at;
    int pause;
    int rate;
    int single;
    int exact; /* with start: exactly stop_at steps, no stop once converged (a lesson's
                  `do = train N`, a view file's train-steps: the same picture each time) */
} app_train_cmd;
int app_training_command(app_state *s, app_train_cmd *cmd);
/* The trainer's newest snapshot (NULL: none, the trainer is gone); fresh when it
 * is newer than the last. 1 if the picture changed. */
int app_training_show(app_state *s, const train_view *tv, int fresh);
/* Training mode for a learner trained elsewhere with this configuration, paused
 * (the jobs layer hands the learner itself to the trainer). 0, or -1 out of memory. */
int app_training_adopted(app_state *s, const learn_config *cfg, int layer);
/* The replay (training.c): 1 with the step of the moment the state wants shown
 * (taken: asked once); app_training_show_moment hands it down (NULL: there is
 * none at that step, and the view goes back to live). */
int app_training_moment_wanted(app_state *s, long *step);
void app_training_show_moment(app_state *s, const train_view *moment);

/* picture.c: makes the progress sign, the training view and the pinned view's
 * state from the state as it is now; after every action, poll and tick. */
void app_refresh(app_state *s);
/* The same less the pinned view (which the frame's layout makes from its own view):
   the progress sign and the training view. */
void app_refresh_signs(app_state *s);

#endif
