/* async.h: the model's recompute off the UI thread, for the window. A change
 * whose recompute would take longer than about 50 ms (model.c estimates it) is
 * handed to a worker thread that computes into a second model; the window keeps
 * drawing the model it has, with its own labels and a "computing ..." sign,
 * and keeps answering the pointer and the keys. Later changes coalesce into one
 * request of the last state, computed when the worker is free; keys that need
 * the new model (focus a head, switch one off, step through, page) wait and
 * are applied, in order, once it is shown. Nothing of this runs until
 * app_async_enable: --export, --bench and tests stay synchronous. No SDL:
 * POSIX threads. */
#ifndef MHAVIZ_ASYNC_H
#define MHAVIZ_ASYNC_H

#include "state.h"

#define APP_ASYNC_DEFAULT_MS 50.0 /* a recompute estimated above this goes to the worker */

/* Turns background recomputes on: a recompute estimated above threshold_ms
 * (< 0: APP_ASYNC_DEFAULT_MS; 0: every one) runs on a worker thread, which
 * calls notify(ud) from that thread when a result is ready (the window posts
 * an event; NULL is fine for callers that wait). Returns 0, or -1 when the
 * thread cannot be started (recomputes then stay synchronous). */
int app_async_enable(app_state *s, void (*notify)(void *), void *ud, double threshold_ms);

/* Takes a finished result, if there is one: the new model is shown (the state
 * takes it with its text and sample), the next coalesced request goes to the
 * worker, and once nothing is pending the keys that waited are applied.
 * Returns 1 if the picture changed. Cheap when nothing is ready. */
int app_async_poll(app_state *s);

/* Waits until every request is computed and shown and every waiting key is
 * applied: what --bench and tests call after a key to see its result. */
void app_async_wait(app_state *s);

/* 1 while a recompute is running or requested: the picture then shows the
 * model before it (s->m), and s->cfg is the configuration asked for. */
int app_async_busy(const app_state *s);

/* Model recomputes done since the state was made, in the foreground or the
 * background (the window's MHAVIZ_STATS prints them). */
unsigned long app_async_recomputes(const app_state *s);

/* For tests: while held, the worker starts no new recompute (one it has begun
 * is finished), so that coalescing can be seen deterministically. */
void app_async_hold(app_state *s, int hold);

#endif
