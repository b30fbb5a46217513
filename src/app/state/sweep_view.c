/* sweep_view.c: the sweep of h in training mode, the state's side of sweep_view.h.
 * H asks the jobs layer for a sweep of the shown task and d_model (the run's
 * seed and the next two, at the run's budget), pauses the training run and shows
 * the sweep view: the plot in the curves' place, drawn as the runs finish, and
 * beside it the heads of one finished run (the newest until Left/Right or a click
 * picks one). H again or Escape leaves it (a sweep under way is stopped); the
 * training run stays paused. The mean and range per h are made here, over the
 * seeds done, from the board the sweeper publishes. No SDL. */
#include "sweep_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_internal.h"

_Static_assert(SWEEP_WIN_SEEDS <= VIEW_SWEEP_MAX_SEEDS && SWEEP_WIN_MAX_H <= VIEW_SWEEP_MAX_H,
               "the view holds every point and seed of a window sweep");

struct app_sweep {
    int on;            /* the sweep view shows */
    int cmd;           /* for the jobs layer: 1 start plan, 2 stop, 0 none */
    sweep_board plan;  /* what the start asks for */
    sweep_board board; /* the sweeper's latest */
    int asked;         /* a start asked for and not yet on the board */
    int selected;      /* the run whose heads show; -1: the newest done */
    char status[200];
    view_sweep vw;
};

void app_sweep_free(app_sweep *w) {
    free(w);
}

static app_sweep *get(app_state *s) {
    if (!s->sweep) {
        s->sweep = calloc(1, sizeof *s->sweep);
        if (s->sweep) s->sweep->selected = -1;
    }
    return s->sweep;
}

int app_sweep_on(const app_state *s) {
    return s->sweep && s->sweep->on && s->train_mode;
}

int app_sweep_running(const app_state *s) {
    return app_sweep_on(s) && (s->sweep->cmd == 1 || s->sweep->asked || s->sweep->board.running);
}

/* The plan: one run per divisor h of d_model (up to the window's 64 heads), seeds
   cfg.seed .. + SWEEP_WIN_SEEDS - 1, each steps long. 0, or -1 with why. */
static int plan_of(sweep_board *p, const learn_config *cfg, long steps, char *why, size_t len) {
    memset(p, 0, sizeof *p);
    learn_config base = *cfg;
    base.layers = 0; /* the task's own, as a training run's start */
    learn_config_resolve(&base);
    if (learn_config_check(&base, why, len) != 0) return -1;
    p->base = base;
    p->steps = steps > 0 ? steps : learn_task(base.task)->default_steps;
    p->seeds = SWEEP_WIN_SEEDS;
    for (int h = 1; h <= base.d_model && h <= TRAIN_MAX_HEADS && p->nh < SWEEP_WIN_MAX_H; h++)
        if (base.d_model % h == 0) p->hs[p->nh++] = h;
    p->count = p->nh * p->seeds;
    for (int a = 0; a < p->nh; a++)
        for (int s = 0; s < p->seeds; s++) {
            sweep_result *r = &p->run[a * p->seeds + s];
            r->h = p->hs[a];
            r->seed = (unsigned long long)base.seed + (unsigned long long)s;
        }
    p->current = -1;
    return 0;
}

/* The run shown: the one picked, else the newest done; -1 when none is done. */
static int shown_run(const app_sweep *w) {
    const sweep_board *b = &w->board;
    if (w->selected >= 0 && w->selected < b->count && b->run[w->selected].done) return w->selected;
    int newest = -1;
    for (int k = 0; k < b->count; k++)
        if (b->run[k].done) newest = k; /* in order: the last done is the newest */
    return newest;
}

/* Left/Right: the previous / next finished run, in the sweep's order. */
static void pick(app_sweep *w, int dir) {
    const sweep_board *b = &w->board;
    const int from = shown_run(w);
    if (from < 0) return;
    for (int k = from + dir; k >= 0 && k < b->count; k += dir)
        if (b->run[k].done) {
            w->selected = k;
            return;
        }
}

static void leave(app_state *s, app_sweep *w, const char *why) {
    w->on = 0;
    w->cmd = 2; /* a sweep under way stops */
    w->asked = 0;
    snprintf(s->status, sizeof s->status, "%s", why);
}

void app_sweep_end(app_state *s) {
    if (s->sweep && s->sweep->on) {
        s->sweep->on = 0;
        s->sweep->cmd = 2;
        s->sweep->asked = 0;
    }
}

int app_sweep_apply(app_state *s, const app_action *a, const learn_config *cfg, long steps) {
    if (a->kind == ACT_TRAIN_SWEEP) {
        app_sweep *w = get(s);
        if (!w) {
            snprintf(s->status, sizeof s->status, "cannot sweep: out of resources");
            return 1;
        }
        if (w->on) {
            leave(s, w, "sweep view left: the training run is paused, L goes on");
            return 1;
        }
        char why[200];
        if (plan_of(&w->plan, cfg, steps, why, sizeof why) != 0) {
            snprintf(s->status, sizeof s->status, "cannot sweep: %s", why);
            return 1;
        }
        w->on = 1;
        w->cmd = 1;
        w->asked = 1;
        w->selected = -1;
        w->board = w->plan;  /* shown at once: nothing done yet */
        s->status[0] = '\0'; /* the sweep's own line follows it */
        return 1;
    }
    if (!app_sweep_on(s)) return -1;
    app_sweep *w = s->sweep;
    switch (a->kind) {
    case ACT_ESCAPE:
        leave(s, w, "sweep view left: the training run is paused, L goes on");
        return 1;
    case ACT_D_UP: /* Right */
    case ACT_D_DOWN:
        pick(w, a->kind == ACT_D_UP ? 1 : -1);
        s->status[0] = '\0';
        return 1;
    case ACT_CLICK: {
        int ha, sd;
        /* the layout the frame on screen was drawn with (picture.c's; its panels
           stay where they are while runs finish) */
        if (!s->L || !view_sweep_hit(s->L, &w->vw, a->x, a->y, &ha, &sd)) return -1;
        w->selected = ha * w->board.seeds + sd;
        s->status[0] = '\0';
        return 1;
    }
    case ACT_TRAIN: /* training's keys that would start or step a run: not here */
    case ACT_TRAIN_SPEED:
    case ACT_STEP_NEXT:
    case ACT_SAMPLE_NEXT:
    case ACT_SAMPLE_PREV:
    case ACT_H_UP:
    case ACT_H_DOWN:
    case ACT_SEED:
        snprintf(s->status, sizeof s->status,
                 "the sweep view shows: Left/Right another run, H or Escape back to training");
        return 1;
    default: return -1; /* the window's and the view's own (Y, T, C, Ctrl+S, F1 ...) */
    }
}

int app_sweep_command(app_state *s, sweep_board *plan) {
    app_sweep *w = s->sweep;
    if (!w || !w->cmd) return 0;
    const int cmd = w->cmd;
    if (cmd == 1) *plan = w->plan;
    w->cmd = 0;
    return cmd;
}

int app_sweep_show(app_state *s, const sweep_board *b) {
    app_sweep *w = s->sweep;
    if (!w) return 0;
    if (!b) { /* the sweeper is gone, and its runs' heads with it */
        w->on = 0;
        w->asked = 0;
        w->cmd = 0;
        memset(&w->board, 0, sizeof w->board);
        w->board.current = -1;
        return 1;
    }
    if (w->cmd == 1) return 0; /* an older sweep's board: the new one is not started yet */
    w->board = *b;
    w->asked = 0;
    s->layout_valid = 0;
    s->dirty = 1;
    return 1;
}

const train_view *app_sweep_heads(const app_state *s) {
    if (!app_sweep_on(s)) return NULL;
    const int k = shown_run(s->sweep);
    return k >= 0 ? s->sweep->board.run[k].heads : NULL;
}

void app_sweep_refresh(app_state *s) {
    if (!app_sweep_on(s)) return;
    app_sweep *w = s->sweep;
    const sweep_board *b = &w->board;
    view_sweep *v = &w->vw;
    const learn_task_info *info = learn_task(b->base.task);
    memset(v, 0, sizeof *v);
    v->task = info->name;
    v->d_model = b->base.d_model;
    v->layers = b->base.layers;
    v->mlp = b->base.mlp;
    v->classes = info->classes;
    v->steps = b->steps;
    v->nh = b->nh < VIEW_SWEEP_MAX_H ? b->nh : VIEW_SWEEP_MAX_H;
    v->seeds = b->seeds < VIEW_SWEEP_MAX_SEEDS ? b->seeds : VIEW_SWEEP_MAX_SEEDS;
    v->seed0 = (unsigned long long)b->base.seed;
    v->runs = b->count;
    v->running = b->running || w->asked;
    v->cur_a = v->cur_s = v->sel_a = v->sel_s = -1;
    v->error = b->error;
    for (int a = 0; a < v->nh; a++) {
        v->h[a] = b->hs[a];
        double sum = 0.0;
        int n = 0;
        float lo = 0.0f, hi = 0.0f;
        for (int sd = 0; sd < v->seeds; sd++) {
            const sweep_result *r = &b->run[a * b->seeds + sd];
            v->done[a][sd] = r->done;
            v->diverged[a][sd] = r->diverged;
            v->acc[a][sd] = r->acc;
            v->runs_done += r->done;
            if (!r->done || r->diverged) continue; /* a diverged run claims no accuracy */
            lo = n ? fminf(lo, r->acc) : r->acc;
            hi = n ? fmaxf(hi, r->acc) : r->acc;
            sum += r->acc;
            n++;
        }
        v->seeds_done[a] = n;
        v->mean[a] = n ? (float)(sum / n) : 0.0f;
        v->lo[a] = lo;
        v->hi[a] = hi;
    }
    if (b->running && b->current >= 0) {
        v->cur_a = b->current / b->seeds;
        v->cur_s = b->current % b->seeds;
        v->cur_step = b->current_step;
    }
    const int k = shown_run(w);
    if (k >= 0) v->sel_a = k / b->seeds, v->sel_s = k % b->seeds;
    /* the status line: the run under way, or what is done and the keys */
    if (b->running && b->current >= 0) {
        const sweep_result *r = &b->run[b->current];
        snprintf(w->status, sizeof w->status,
                 "sweep h: run %d of %d, h=%d seed %llu \xC2\xB7 step %ld of %ld \xC2\xB7 H or "
                 "Escape stops it",
                 b->current + 1, b->count, r->h, r->seed, b->current_step, b->steps);
    } else if (b->running || w->asked) {
        snprintf(w->status, sizeof w->status, "sweep h: starting %d runs of %ld steps", b->count,
                 b->steps);
    } else {
        int diverged = 0;
        for (int i = 0; i < b->count; i++) diverged += b->run[i].diverged;
        char div[64] = "";
        if (diverged) snprintf(div, sizeof div, " (%d diverged: no accuracy claimed)", diverged);
        snprintf(w->status, sizeof w->status,
                 "sweep h: %d of %d runs of %ld steps done%s \xC2\xB7 Left/Right or a click: a "
                 "run's heads \xC2\xB7 H or Escape: back to training",
                 v->runs_done, b->count, b->steps, div);
    }
}

void app_sweep_view(const app_state *s, view_state *vs) {
    if (!app_sweep_on(s) || !vs->train) return;
    vs->sweep = &s->sweep->vw;
    if (!s->status[0]) vs->status = s->sweep->status;
}
