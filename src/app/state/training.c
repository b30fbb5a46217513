/* training.c: training mode in the state machine. L enters it and starts (or
 * pauses, or resumes) training, as a command the jobs layer carries out on its
 * trainer (src/app/jobs/trainer.c); in it, Tab picks the
 * task, Up/Down and Right/Left restart at a new h or d_model with the earlier
 * runs' curves kept, Y picks the layer, S the speed (full, slow motion, paused),
 * . one step, [ and ] go back and forth through the run's moments (the replay:
 * it pauses the run; End, ] past the last or L go back to live, L runs on; a
 * click or a drag on the plots or the strip picks a moment), Escape leaves it
 * (paused). A run stops by itself (the trainer's
 * stop rule, or the task's budget) and L takes it on. The jobs layer
 * hands the latest snapshot down (app_training_show), and the view draws the shown
 * layer as the trained model's source (train_source.c) fills it from the snapshot.
 * No SDL. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controls.h"
#include "state_internal.h"
#include "sweep_view.h"
#include "train_source.h"
#include "train_view.h"

#define TRAIN_MAX_D 256 /* d_model the window trains at, at most */

struct app_training {
    app_train_cmd cmd;    /* what the trainer is to do next (cmd.start or cmd.pause >= 0) */
    const train_view *tv; /* the latest snapshot: the trainer's front buffer, or none */
    learn_config cfg;     /* what the next start uses */
    int layer;            /* shown, 0-based */
    int rate;             /* the speed asked for: 0 full, TRAIN_SLOW_RATE slow motion,
                             TRAIN_CLASS_PACE (the first) */
    long stop_told;       /* the last stop the status line was cleared for: its step, */
    int stop_run;         /* and its run's number */
    model_source src;     /* the trained model, over tv (train_source.c) */
    train_source ts;
    attn_layer heads; /* the shown layer, for the view */
    int shown;        /* heads holds it (the source could fill it) */
    char run_label[TRAIN_MAX_RUNS][48];
    char status[160]; /* the status line in training mode */
    long steps_asked; /* the stop a view file asked for (0: trains on) */
    long want_run;    /* the run number (train_run.number) the last start will have */
    view_train vt;
    /* the replay: the moment shown (its step; -1 live), whether its tensors are
       still to be asked for, and the copy the jobs layer handed down */
    long replay_step;
    int replay_ask;
    const train_view *mv;
};

static const train_view no_snapshot; /* all zero: nothing trained yet */

/* The number of the snapshot's current run (0: none yet). */
static long run_number(const train_view *tv) {
    return tv->runs > 0 ? (long)tv->run[tv->runs - 1].number : 0;
}

void app_training_free(app_training *t) {
    free(t);
}

static app_training *get(app_state *s) {
    if (!s->training) {
        s->training = calloc(1, sizeof *s->training);
        if (!s->training) return NULL;
        s->training->cfg = (learn_config){.task = LEARN_PAIR, .h = 2, .d_model = 32};
        s->training->tv = &no_snapshot;
        s->training->cmd.pause = -1;
        s->training->cmd.rate = -1;
        s->training->rate = TRAIN_CLASS_PACE; /* a class sees the first runs learn */
        s->training->replay_step = -1;
    }
    return s->training;
}

/* --- the replay ----------------------------------------------------------------- */

static void go_live(app_training *t) {
    t->replay_step = -1;
    t->replay_ask = 0;
    t->mv = NULL;
}

/* The index of the moment at step among the snapshot's, or -1. */
static int moment_index(const train_view *tv, long step) {
    for (int i = 0; i < tv->moments; i++)
        if (tv->moment_step[i] == step) return i;
    return -1;
}

static void pause_training(app_training *t, int paused);
static int will_run(const app_training *t);

/* Shows moment i of the snapshot's; scrubbing pauses the run. */
static void show_moment(app_state *s, app_training *t, int i) {
    if (will_run(t)) pause_training(t, 1);
    t->replay_step = t->tv->moment_step[i];
    t->replay_ask = 1;
    s->status[0] = '\0'; /* the status line follows the replay */
}

/* The moment nearest to `step` on the log axis. */
static int nearest_moment(const train_view *tv, double step) {
    int best = 0;
    double bd = 1e300;
    for (int i = 0; i < tv->moments; i++) {
        const double d = fabs(log1p((double)tv->moment_step[i]) - log1p(step));
        if (d < bd) bd = d, best = i;
    }
    return best;
}

static int inside(view_rect r, int x, int y, int slack) {
    return x >= r.x - slack && x < r.x + r.w + slack && y >= r.y - slack && y < r.y + r.h + slack;
}

/* [ ] End, and a click or a drag on the plots or the strip: 1 when taken. */
static int replay_apply(app_state *s, app_training *t, const app_action *a) {
    const train_view *tv = t->tv;
    const int n = tv->active ? tv->moments : 0;
    const int cur = t->replay_step >= 0 ? moment_index(tv, t->replay_step) : -1;
    switch (a->kind) {
    case ACT_TEMP_DOWN: /* [ */
        if (n == 0) {
            snprintf(s->status, sizeof s->status, "replay: no moment of this run yet");
            return 1;
        }
        if (t->replay_step >= 0 && cur == 0) {
            snprintf(s->status, sizeof s->status,
                     "replay: this is the first moment (step %ld) \xC2\xB7 ] forward, End live",
                     tv->moment_step[0]);
            return 1;
        }
        if (t->replay_step >= 0 && cur > 0) {
            show_moment(s, t, cur - 1);
            return 1;
        }
        { /* from live (or a moment thinned away): the last one before */
            const long from = t->replay_step >= 0 ? t->replay_step : tv->step;
            int i = 0;
            while (i + 1 < n && tv->moment_step[i + 1] < from) i++;
            show_moment(s, t, i);
        }
        return 1;
    case ACT_TEMP_UP: /* ] */
        if (t->replay_step < 0) {
            snprintf(s->status, sizeof s->status,
                     "live already: [ goes back through the run's moments");
            return 1;
        }
        if (cur >= 0 && cur + 1 < n) {
            show_moment(s, t, cur + 1);
            return 1;
        }
        go_live(t); /* ] past the last moment: live */
        snprintf(s->status, sizeof s->status, "live: step %ld%s \xC2\xB7 L goes on", tv->step,
                 will_run(t) ? "" : ", paused");
        return 1;
    case ACT_REPLAY_LIVE: /* End */
        if (t->replay_step < 0) {
            snprintf(s->status, sizeof s->status, "live already: [ goes back through the run");
            return 1;
        }
        go_live(t);
        snprintf(s->status, sizeof s->status, "live: step %ld%s \xC2\xB7 L goes on", tv->step,
                 will_run(t) ? "" : ", paused");
        return 1;
    case ACT_CLICK:
    case ACT_HOVER: { /* a click, or a drag (a->arg: the button held) */
        const view_layout *L = s->L;
        if (!L || n == 0 || (a->kind == ACT_HOVER && !a->arg)) return 0;
        view_rect r = L->train_acc;
        if (!inside(r, a->x, a->y, 0) && !inside(L->train_loss, a->x, a->y, 0) &&
            !inside(L->train_strip, a->x, a->y, L->line / 2))
            return 0;
        const int i = nearest_moment(tv, view_train_step_at(r, a->x, view_train_xmax(&t->vt)));
        if (t->replay_step != tv->moment_step[i]) show_moment(s, t, i);
        return 1;
    }
    default: return 0;
    }
}

int app_training_replay_at(app_state *s, long step) {
    app_training *t = s->training;
    if (!t || moment_index(t->tv, step) < 0) return -1;
    t->replay_step = step;
    t->replay_ask = 1;
    s->layout_valid = 0;
    return 0;
}

int app_training_moment_wanted(app_state *s, long *step) {
    app_training *t = s->training;
    if (!t || !t->replay_ask) return 0;
    t->replay_ask = 0;
    *step = t->replay_step;
    return 1;
}

void app_training_show_moment(app_state *s, const train_view *moment) {
    app_training *t = s->training;
    if (!t) return;
    t->mv = moment;
    if (!moment && t->replay_step >= 0) {
        go_live(t);
        snprintf(s->status, sizeof s->status, "replay: that moment is no longer kept; live");
    }
    s->layout_valid = 0;
    s->dirty = 1;
}

static const app_train_cmd no_cmd = {.pause = -1, .rate = -1};

/* Asks the trainer to pause (1) or resume (0), after a start asked for. */
static void pause_training(app_training *t, int paused) {
    t->cmd.pause = paused || !t->cmd.start ? paused : -1; /* a start asked for runs anyway */
}

/* 1 if training runs once the commands asked for are carried out. */
static int will_run(const app_training *t) {
    return t->cmd.pause >= 0 ? !t->cmd.pause : (t->cmd.start || t->tv->running);
}

static void start(app_state *s, app_training *t) {
    learn_config c = t->cfg;
    c.layers = 0; /* the task's own: 2 for induction */
    /* it stops by itself once converged, or at the task's budget */
    t->cmd = (app_train_cmd){.start = 1,
                             .cfg = c,
                             .stop_at = learn_task(c.task)->default_steps,
                             .pause = -1,
                             .rate = t->rate};
    t->want_run = run_number(t->tv) + 1;
    t->layer = 0;
    go_live(t); /* the replay is the current run's */
    snprintf(s->status, sizeof s->status, "training %s at h = %d, d_model = %d",
             learn_task(c.task)->name, c.h, c.d_model);
}

/* Steps the training shape: h among the divisors of d_model up to 64, d_model on
   the ladder up to 256. Returns 1 if it changed. */
static int step_shape(app_state *s, app_training *t, int which, int dir) {
    char why[160];
    int h = t->cfg.h, d = t->cfg.d_model;
    int v = which ? controls_step_d(h, d, dir, why, sizeof why)
                  : controls_step_h(h, d, dir, why, sizeof why);
    if (v && which && v > TRAIN_MAX_D)
        v = 0, snprintf(why, sizeof why, "training goes up to d_model = %d here", TRAIN_MAX_D);
    if (v && !which && v > TRAIN_MAX_HEADS)
        v = 0, snprintf(why, sizeof why, "training goes up to h = %d", TRAIN_MAX_HEADS);
    if (!v) {
        snprintf(s->status, sizeof s->status, "%s", why);
        return 0;
    }
    if (which)
        t->cfg.d_model = v;
    else
        t->cfg.h = v;
    return 1;
}

int app_training_sweep(app_state *s, const app_action *a) {
    if (!s->train_mode || !s->training) return -1;
    app_training *t = s->training;
    /* the shown run's task and shape, at its budget */
    const int r = app_sweep_apply(s, a, t->tv->active ? &t->tv->cfg : &t->cfg, t->steps_asked);
    if (r >= 0 && a->kind == ACT_TRAIN_SWEEP && app_sweep_on(s))
        pause_training(t, 1); /* the cores are the sweep's */
    return r;
}

int app_training_apply(app_state *s, const app_action *a) {
    if (a->kind == ACT_TRAIN) {
        app_training *t = get(s);
        if (!t) {
            snprintf(s->status, sizeof s->status, "cannot start training: out of resources");
            return 1;
        }
        go_live(t); /* L in the replay: back to live, and on */
        if (!s->train_mode) {
            s->train_mode = 1;
            s->look.focus = 0;
            if (!t->tv->active && !t->cmd.start)
                start(s, t);
            else
                pause_training(t, 0);
        } else {
            const int running = will_run(t);
            pause_training(t, running);
            snprintf(s->status, sizeof s->status, "%s",
                     running ? "paused: the pruning bars are for these weights" : "training again");
        }
        return 1;
    }
    if (!s->train_mode || !s->training) return -1; /* not training's: the state applies it */
    app_training *t = s->training;
    if (replay_apply(s, t, a)) return 1;
    /* the keys that move the run go back to live first (a new run: start) */
    if (a->kind == ACT_ESCAPE || a->kind == ACT_TRAIN_SPEED || a->kind == ACT_STEP_NEXT) go_live(t);
    switch (a->kind) {
    case ACT_ESCAPE:
        app_sweep_end(s); /* a lesson's step leaving training mode: the sweep stops too */
        s->train_mode = 0;
        pause_training(t, 1);
        snprintf(s->status, sizeof s->status, "training paused; L returns to it");
        return 1;
    case ACT_TRAIN_SPEED: { /* full speed (or the class pace) -> slow motion -> paused ->
                               full speed */
        const int running = will_run(t);
        if (running && t->rate <= 0) {
            t->rate = t->cmd.rate = TRAIN_SLOW_RATE;
            snprintf(s->status, sizeof s->status,
                     "slow motion: %d steps a second, the heads redrawn at each; S pauses",
                     TRAIN_SLOW_RATE);
        } else if (running) {
            pause_training(t, 1);
            snprintf(s->status, sizeof s->status,
                     "paused: . takes one step, S goes on at full speed");
        } else {
            t->rate = t->cmd.rate = 0;
            pause_training(t, 0);
            snprintf(s->status, sizeof s->status, "full speed; S slows it down");
        }
        return 1;
    }
    case ACT_STEP_NEXT: /* one step by hand, then paused */
        pause_training(t, 1);
        t->cmd.single = 1;
        s->status[0] = '\0'; /* the status line follows the run: its step */
        return 1;
    case ACT_TRAIN_LAYER: { /* every layer of the source in turn */
        train_source_init(&t->src, &t->ts, t->tv);
        const int layers = model_source_layers(&t->src);
        t->layer = (t->layer + 1) % (layers > 0 ? layers : 1);
        return 1;
    }
    case ACT_SAMPLE_NEXT:
    case ACT_SAMPLE_PREV: {
        int n = LEARN_TASK_COUNT, k = (int)t->cfg.task + (a->kind == ACT_SAMPLE_NEXT ? 1 : n - 1);
        app_training_task_shape(&t->cfg, (learn_task_id)(k % n));
        start(s, t);
        return 1;
    }
    case ACT_H_UP:
    case ACT_H_DOWN:
    case ACT_D_UP:
    case ACT_D_DOWN:
        if (step_shape(s, t, a->kind == ACT_D_UP || a->kind == ACT_D_DOWN,
                       a->kind == ACT_H_UP || a->kind == ACT_D_UP ? 1 : -1))
            start(s, t);
        return 1;
    case ACT_SEED:
        t->cfg.seed = t->cfg.seed + 1 + (t->cfg.seed == 0);
        start(s, t);
        return 1;
    default: return -1;
    }
}

void app_training_task_shape(learn_config *cfg, learn_task_id task) {
    const int d = cfg->d_model ? cfg->d_model : learn_task_d_model(cfg->task);
    if (d == learn_task_d_model(cfg->task)) cfg->d_model = learn_task_d_model(task);
    cfg->task = task;
    if (cfg->d_model > 0)
        while (cfg->h > 1 && (cfg->h > cfg->d_model || cfg->d_model % cfg->h != 0)) cfg->h--;
}

int app_training_adopted(app_state *s, const learn_config *cfg, int layer) {
    app_training *t = get(s);
    if (!t) return -1;
    t->cfg = *cfg;
    t->cmd = no_cmd; /* the learner is the trainer's already */
    s->train_mode = 1;
    t->layer = layer >= 0 && layer < t->cfg.layers ? layer : 0;
    s->layout_valid = 0;
    return 0;
}

int app_training_command(app_state *s, app_train_cmd *cmd) {
    app_training *t = s->training;
    if (!t || (!t->cmd.start && t->cmd.pause < 0 && t->cmd.rate == -1 && !t->cmd.single)) return 0;
    *cmd = t->cmd;
    t->cmd = no_cmd;
    return 1;
}

/* 1 while the moment shown waits for its bars (the trainer measures them on its
   worker and publishes when done). */
static int bars_awaited(const app_training *t) {
    return t->replay_step >= 0 && t->mv && t->mv->step == t->replay_step && !t->mv->pruning_valid;
}

int app_training_show(app_state *s, const train_view *tv, int fresh) {
    app_training *t = s->training;
    if (!t) return 0;
    t->tv = tv ? tv : &no_snapshot;
    if (!tv) go_live(t); /* the trainer is gone, and its moments */
    if (!fresh) return 0;
    const int run = t->tv->runs > 0 ? t->tv->run[t->tv->runs - 1].number : 0;
    if (s->train_mode && !t->tv->running && t->tv->stop != TRAIN_GOING &&
        (t->tv->stop_step != t->stop_told || run != t->stop_run)) { /* stopped: say why now */
        t->stop_told = t->tv->stop_step;
        t->stop_run = run;
        s->status[0] = '\0';
    }
    if (bars_awaited(t)) t->replay_ask = 1; /* measured now, perhaps: copied again */
    s->layout_valid = 0;                    /* a new snapshot from the trainer */
    s->dirty = 1;
    return 1;
}

int app_training_running(const app_state *s) {
    if (!s->train_mode || !s->training) return 0;
    const train_view *tv = s->training->tv;
    /* poll while steps are taken, and after a pause until its bars have come; a
       start asked for and not yet in the snapshot is running too */
    return app_sweep_running(s) || s->training->cmd.start || bars_awaited(s->training) ||
           run_number(tv) < s->training->want_run || tv->running || !tv->active ||
           (!tv->error[0] && (!tv->pruning_valid || tv->pruning_step != tv->step));
}

static void say_status(app_training *t, const train_view *tv, const train_view *mv,
                       const learn_task_info *info);

/* Makes the shown layer and the curves from the latest snapshot, for
   app_training_view to point at. */
void app_training_refresh(app_state *s) {
    app_training *t = s->training;
    if (!s->train_mode || !t || !t->tv || !t->tv->active) return;
    const train_view *tv = app_sweep_heads(s) ? app_sweep_heads(s) : t->tv; /* a sweep's run */
    const learn_task_info *info = learn_task(tv->cfg.task);
    const int h = tv->cfg.h, layer = t->layer < tv->cfg.layers ? t->layer : 0;
    /* a moment of the replay, when one is shown (of this run's shape), else live */
    const train_view *mv = t->replay_step >= 0 && t->mv && t->mv->cfg.task == tv->cfg.task &&
                                   t->mv->cfg.h == h && t->mv->cfg.d_model == tv->cfg.d_model &&
                                   t->mv->cfg.layers == tv->cfg.layers
                               ? t->mv
                               : tv;
    /* the shown layer as the trained model's source fills it: the real tensors */
    train_source_init(&t->src, &t->ts, mv);
    t->shown = model_source_layer(&t->src, layer, &t->heads) == 0;
    /* the curves, each labelled by its shape */
    view_train *vt = &t->vt;
    memset(vt, 0, sizeof *vt);
    vt->task = info->name;
    vt->what = info->what;
    for (int k = 0; k < LEARN_TASK_COUNT; k++) /* the toolbar's caption as wide as the widest */
        if (!vt->task_widest ||
            strlen(learn_task((learn_task_id)k)->name) > strlen(vt->task_widest))
            vt->task_widest = learn_task((learn_task_id)k)->name;
    vt->error = tv->error;
    vt->running = tv->running;
    vt->step = mv->step;
    vt->steps_per_s = tv->steps_per_s;
    vt->loss = mv->loss;
    vt->acc = mv->acc;
    vt->moments = tv->moments;
    vt->moment_step = tv->moment_step;
    vt->live_step = tv->step;
    vt->moment = mv != tv ? moment_index(tv, mv->step) : -1;
    vt->replay = mv != tv;
    vt->layers = tv->cfg.layers;
    vt->layer = layer;
    vt->h = h;
    /* this task's runs, on its own loss axis; each labelled by its shape, and by
       its number when another kept run has the same */
    for (int i = 0; i < tv->runs; i++) {
        const train_run *r = &tv->run[i];
        if (r->task != tv->cfg.task) {
            vt->other_runs++;
            continue;
        }
        int repeats = 0;
        for (int j = 0; j < tv->runs; j++)
            repeats += tv->run[j].task == r->task && tv->run[j].h == r->h &&
                       tv->run[j].d_model == r->d_model && tv->run[j].layers == r->layers;
        char *label = t->run_label[vt->runs];
        const int n = snprintf(label, sizeof t->run_label[0], "%s h=%d d=%d",
                               learn_task(r->task)->name, r->h, r->d_model);
        if (repeats > 1 && n > 0 && (size_t)n < sizeof t->run_label[0])
            snprintf(label + n, sizeof t->run_label[0] - (size_t)n, " #%d", r->number);
        vt->run[vt->runs++] = (view_train_run){label,         r->curve.n,   r->curve.step,
                                               r->curve.loss, r->curve.acc, r->number};
    }
    vt->rate = tv->rate;
    vt->stop = (int)tv->stop;
    vt->stop_step = tv->stop_step;
    vt->stop_acc = tv->stop_acc;
    vt->stop_loss = tv->stop_loss;
    vt->budget = tv->budget;
    vt->patience = TRAIN_STOP_PATIENCE;
    vt->pruning_valid = mv->pruning_valid;
    vt->pruning_step = mv->pruning_step;
    vt->ablated_acc = mv->ablated_acc;
    vt->pruned = mv->pruned;
    vt->pruned_acc = mv->pruned_acc;
    say_status(t, tv, mv, info);
    app_sweep_refresh(s);
}

/* training's status line: the replay's moment, why the run stopped, or how it goes. */
static void say_status(app_training *t, const train_view *tv, const train_view *mv,
                       const learn_task_info *info) {
    char band[40]; /* "100.0 %", or "99.6-100.0 %" when it moved within its band */
    snprintf(band, sizeof band, "%.1f", 100.0 * tv->stop_lo);
    char hi[16];
    snprintf(hi, sizeof hi, "%.1f", 100.0 * tv->stop_hi);
    if (strcmp(band, hi) != 0)
        snprintf(band + strlen(band), sizeof band - strlen(band), "\xE2\x80\x93%s", hi);
    if (mv != tv) /* the status line follows the replay */
        snprintf(t->status, sizeof t->status,
                 "replay: step %ld of %ld (moment %d of %d), held-out %.1f %% \xC2\xB7 [ back "
                 "\xC2\xB7 ] forward \xC2\xB7 End live \xC2\xB7 L goes on",
                 mv->step, tv->step, moment_index(tv, mv->step) + 1, tv->moments, 100.0 * mv->acc);
    else if (!tv->running && tv->stop == TRAIN_DIVERGED) /* lr is not a key: what can be done */
        snprintf(t->status, sizeof t->status,
                 "training diverged at step %ld (loss %.4g): paused; the window trains at lr "
                 "%g, not a key: R tries another seed, --train %s --lr a smaller one",
                 tv->stop_step, (double)tv->stop_loss, (double)tv->cfg.lr, info->name);
    else if (!tv->running && tv->stop == TRAIN_CONVERGED) /* the status line follows the run */
        snprintf(t->status, sizeof t->status,
                 "stopped at step %ld: held-out accuracy %s %% for the last %d steps "
                 "\xC2\xB7 L for more",
                 tv->stop_step, band, TRAIN_STOP_PATIENCE);
    else if (!tv->running && tv->stop == TRAIN_BUDGET)
        snprintf(t->status, sizeof t->status,
                 "stopped at step %ld: the budget of %d steps for %s, held-out %.1f %% "
                 "\xC2\xB7 L for %d more",
                 tv->stop_step, info->default_steps, info->name, 100.0 * tv->stop_acc,
                 info->default_steps);
    else if (!tv->running)
        snprintf(t->status, sizeof t->status,
                 "training %s: step %ld, paused \xC2\xB7 held-out %.1f %% \xC2\xB7 "
                 ". one step \xC2\xB7 L or S goes on",
                 info->name, tv->step, 100.0 * tv->acc);
    else
        snprintf(t->status, sizeof t->status,
                 "training %s: step %ld \xC2\xB7 %.0f steps/s%s \xC2\xB7 held-out %.1f %%",
                 info->name, tv->step, (double)tv->steps_per_s,
                 tv->rate > 0   ? " (slow motion)"
                 : tv->rate < 0 ? " (class pace, faster as it learns)"
                                : "",
                 100.0 * tv->acc);
}

/* Points the view at the shown layer's heads and the curves. */
void app_training_view(const app_state *s, view_state *vs) {
    const app_training *t = s->training;
    if (!s->train_mode || !t || !t->tv || !t->tv->active) return;
    const train_view *tv = app_sweep_heads(s) ? app_sweep_heads(s) : t->tv; /* a sweep's run */
    const int layer = t->layer < tv->cfg.layers ? t->layer : 0;
    if (!t->shown) return; /* no tensors (out of memory): the MHA view stays */
    vs->layer = &t->heads;
    vs->text_replaced = 0;
    vs->train = &t->vt;
    if (!s->status[0]) vs->status = t->status;
    vs->sample_index = (int)tv->cfg.task + 1;
    vs->sample_count = LEARN_TASK_COUNT;
    vs->head_entropy = NULL;
    vs->head_divergence = NULL;
    vs->head_pass_cos = vs->head_change = NULL;
    vs->out_diff = NULL;
    vs->look.focus = 0;
    vs->look.step = 0;
    vs->look.diff = 0;
    vs->data_version = tv->seq * 7919 + (unsigned long)layer; /* new pixels per snapshot */
    if (t->vt.replay)                                         /* and per moment */
        vs->data_version ^= (unsigned long)(t->replay_step + 1) * 104729UL + 0x5bd1e995UL;
    app_sweep_view(s, vs);
}

int app_training_get(const app_state *s, learn_config *cfg, long *steps, int *layer) {
    const app_training *t = s->training;
    *cfg = t ? t->cfg : (learn_config){.task = LEARN_PAIR, .h = 2, .d_model = 32};
    *steps = t ? t->steps_asked : 0;
    *layer = t ? t->layer : 0;
    return s->train_mode && t;
}

int app_training_set(app_state *s, int on, const learn_config *cfg, long steps, int layer) {
    app_training *t = get(s);
    if (!t) {
        snprintf(s->status, sizeof s->status, "cannot start training: out of resources");
        return -1;
    }
    const int same = memcmp(&t->cfg, cfg, sizeof *cfg) == 0 && t->steps_asked == steps;
    t->cfg = *cfg;
    t->steps_asked = steps;
    if (!on) {
        if (s->train_mode) { /* as Escape: left, paused */
            app_sweep_end(s);
            s->train_mode = 0;
            pause_training(t, 1);
        }
        return 0;
    }
    if (!s->train_mode || !same || (!t->tv->active && !t->cmd.start)) {
        t->cmd = (app_train_cmd){
            .start = 1, .cfg = *cfg, .stop_at = steps, .pause = -1, .exact = steps > 0};
        t->want_run = run_number(t->tv) + 1; /* the snapshot that shows it */
        snprintf(s->status, sizeof s->status, "training %s at h = %d, d_model = %d",
                 learn_task(cfg->task)->name, cfg->h, cfg->d_model);
    }
    s->train_mode = 1;
    s->look.focus = 0;
    t->layer = layer;
    s->layout_valid = 0;
    return 0;
}
