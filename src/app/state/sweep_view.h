/* sweep_view.h: the sweep of h in the window's training mode (H): one run per
 * divisor h of d_model, each at the same budget and on the same seeds (the run's
 * seed and the next two), every run the same as `--train TASK -H h -s SEED
 * --steps N` alone. The plain data the sweeper (src/app/jobs/sweeper.c) publishes,
 * and the state's side (sweep_view.c): the key, the command the jobs layer takes,
 * the plot and the status line. No SDL. */
#ifndef MHAVIZ_SWEEP_VIEW_H
#define MHAVIZ_SWEEP_VIEW_H

#include "learn.h"
#include "state.h"
#include "train_view.h"

#define SWEEP_WIN_SEEDS 3  /* the seeds of a window sweep: s, s + 1, s + 2 (--sweep h's default) */
#define SWEEP_WIN_MAX_H 16 /* divisors of d_model (<= 256) up to 64 heads: at most 16 */
#define SWEEP_WIN_MAX_RUNS (SWEEP_WIN_MAX_H * SWEEP_WIN_SEEDS)

/* One run of the sweep. */
typedef struct {
    int h;
    unsigned long long seed;
    int done;     /* trained to the budget, or stopped by the divergence rule */
    int diverged; /* diverge.h fired at diverged_step with diverged_loss */
    long diverged_step;
    float diverged_loss;
    float acc, loss; /* final held-out accuracy (0..1) and loss, as --train's */
    /* the run's trained heads on the held-out example, with its pruning bars: the
       sweeper's, valid until its next start; NULL until done (or out of memory) */
    const train_view *heads;
} sweep_result;

/* A sweep: what to run, then how far it is. Run a * seeds + s is h = hs[a], seed
   base.seed + s; they run in that order. */
typedef struct {
    learn_config base; /* resolved; h and seed are each run's */
    long steps;
    int nh, seeds, count;
    int hs[SWEEP_WIN_MAX_H];
    int running;       /* the sweeper is at work */
    int done;          /* runs finished */
    int current;       /* the run under way, -1 none */
    long current_step; /* its step */
    char error[160];   /* why a run could not be made, or "" */
    sweep_result run[SWEEP_WIN_MAX_RUNS];
} sweep_board;

/* --- sweep_view.c: the state's side ------------------------------------------------ */

typedef struct app_sweep app_sweep;
void app_sweep_free(app_sweep *w);

/* Training mode's keys while the sweep view shows, and H (ACT_TRAIN_SWEEP), which
 * starts a sweep of cfg's task and d_model at steps a run (0: the task's budget) or
 * leaves the sweep view. Returns 1 when taken, -1 when not the sweep's. */
int app_sweep_apply(app_state *s, const app_action *a, const learn_config *cfg, long steps);
/* Leaves the sweep view, stopping a sweep under way (training mode is left). */
void app_sweep_end(app_state *s);
/* 1 while the sweep view shows. */
int app_sweep_on(const app_state *s);
/* 1 while the sweep runs or is asked to start (the window polls). */
int app_sweep_running(const app_state *s);
/* The heads the sweep view shows (the selected run's), or NULL: none yet. */
const train_view *app_sweep_heads(const app_state *s);
/* Makes the plot and the status line from the latest board, for app_sweep_view. */
void app_sweep_refresh(app_state *s);
/* Points the view at the plot and the status line (over training's). */
void app_sweep_view(const app_state *s, view_state *vs);

/* The jobs layer: the command, taken (and cleared): 1 start *plan, 2 stop (the
   sweep view left), 0 none. */
int app_sweep_command(app_state *s, sweep_board *plan);
/* The sweeper's newest board (NULL: the sweeper is gone). 1 if the picture changed. */
int app_sweep_show(app_state *s, const sweep_board *b);

#endif
