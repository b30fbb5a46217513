/* sweeper.h: the window's sweep of h in the background: one job of the app's
 * runner trains the runs of a sweep_board (sweep_view.h) one after another, each
 * exactly as --train trains it (the same learner, steps and held-out set; the
 * divergence rule of diverge.h), and keeps each finished run's trained heads on
 * the held-out example with its pruning bars. The UI copies the small board under
 * a lock; a finished run's heads are never written again until the next start.
 * No SDL. */
#ifndef MHAVIZ_SWEEPER_H
#define MHAVIZ_SWEEPER_H

#include "jobs.h"
#include "sweep_view.h"

typedef struct app_sweeper app_sweeper;

/* A sweeper whose job runs on runner; NULL when out of resources. */
app_sweeper *sweeper_create(jobs *runner);
/* Stops its job (after the step under way) and frees everything; NULL is fine. */
void sweeper_destroy(app_sweeper *w);
/* Starts the sweep plan describes (base, steps, nh, hs, seeds, count and each
   run's h and seed); a sweep under way is stopped first and its runs dropped. */
void sweeper_start(app_sweeper *w, const sweep_board *plan);
/* Stops the sweep under way (its finished runs are kept until the next start). */
void sweeper_stop(app_sweeper *w);
/* Copies the newest board into *out; 1 if it changed since the last call. */
int sweeper_snapshot(app_sweeper *w, sweep_board *out);

#endif
