/* async.h: the model's recompute off the UI thread, for the window. A change
 * whose recompute would take longer than about 50 ms (model.c estimates it) is
 * handed to a worker thread that computes into a second model; the window keeps
 * drawing the model it has, with its own labels and a "computing ..." sign,
 * and keeps answering the pointer and the keys. Later changes coalesce into one
 * request of the last state, computed when the worker is free; keys that need
 * the new model (focus a head, switch one off, step through, page) wait and
 * are applied, in order, once it is shown. The state machine only records
 * these requests (state/request.h); this layer carries them out on its job
 * runner when app_async_poll or app_async_wait is called. Nothing of this runs
 * until app_async_enable: --export, --bench and tests stay synchronous. No SDL:
 * POSIX threads. */
#ifndef MHAVIZ_ASYNC_H
#define MHAVIZ_ASYNC_H

#include "learn.h"
#include "state.h"
#include "train_loop.h"

#define APP_ASYNC_DEFAULT_MS 50.0 /* a recompute estimated above this goes to the worker */

/* Attaches the jobs layer to s (the caller's until app_async_disable): a
 * recompute estimated above threshold_ms (< 0: APP_ASYNC_DEFAULT_MS; 0: every
 * one) runs on a worker thread, which calls notify(ud) from that thread when a
 * result is ready (the window posts an event; NULL is fine for callers that
 * wait); the pinned view and training mode run on the same runner. Returns 0,
 * or -1 when the runner cannot be made (recomputes then stay synchronous and
 * training does not start). */
int app_async_enable(app_state *s, void (*notify)(void *), void *ud, double threshold_ms);

/* Detaches it: waits for a recompute or pin under way, stops the trainer, ends
 * the threads and frees it; the state then shows the last model it took. Call
 * before app_state_destroy; fine when none is attached. */
void app_async_disable(app_state *s);

/* The driver's step, once per turn of the frame loop and after each key: takes
 * a finished result, if there is one (the new model is shown: the state takes
 * it with its text and sample, and once nothing is pending the keys that waited
 * are applied), hands the state's next request to the worker, carries out a
 * training command and takes the trainer's newest snapshot, and does the same
 * for the pinned view. Returns 1 if the picture changed. Cheap when nothing is
 * ready; nothing when no jobs layer is attached. */
int app_async_poll(app_state *s);

/* Waits until every request is computed and shown and every waiting key is
 * applied: what --bench and tests call after a key to see its result. */
void app_async_wait(app_state *s);

/* 1 while a recompute is running or requested: the picture then shows the
 * model before it (s->m), and s->cfg is the configuration asked for. */
int app_async_busy(const app_state *s);

/* The jobs under way for what is shown: a recompute (running or asked for), the
 * forward being timed for the cost panel, a model being loaded, the pinned view's
 * compute, a training run, the layer's own numbers and dark-field scan (the window's
 * MHAVIZ_STATS prints it: a frame may still come of each). 0 when nothing is
 * attached. */
int app_async_jobs(const app_state *s);

/* Model recomputes done since the state was made, in the foreground or the
 * background (the window's MHAVIZ_STATS prints them). */
unsigned long app_async_recomputes(const app_state *s);

/* For tests: while held, the worker starts no new recompute (one it has begun
 * is finished), so that coalescing can be seen deterministically. */
void app_async_hold(app_state *s, int hold);

/* Shows the learner l, trained by --train's loop (its curve of `points`
 * points), in training mode, paused, with its pruning bars measured on this
 * thread unless `measured` holds --train's own pass, at its layer `layer` (0-based; one out of
 * range shows the first): the figure of --train --export. Takes l. Needs app_async_enable. Returns
 * 0, or 1 / 2 with a message. */
int app_async_training_adopt(app_state *s, learn_model *l, const train_point *curve, int points,
                             float steps_per_s, const train_pruning *measured, int layer, char *err,
                             size_t errlen);

/* Takes r (the moments --train's loop kept of the learner app_async_training_adopt
 * showed: replay.h) as its replay. 0, or 1 with a message (r is freed either way). */
struct train_replay;
int app_async_training_moments(app_state *s, struct train_replay *r, char *err, size_t errlen);

#endif
