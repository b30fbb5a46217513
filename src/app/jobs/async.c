/* async.c: the background recompute behind async.h, a job of the app's runner
 * (src/jobs). The UI thread owns the model shown (s->m) and its text; the job
 * owns a second model while it computes into it, from a configuration and
 * text that are its own copies. The job's context is handed to the runner at
 * submit and handed back when job_poll says done, and the finished model is
 * swapped in on the UI thread, so the picture (and the hover over it) never
 * reads a model being written. Which recompute is large enough to come here is
 * model.c's estimate; the coalesced request and the keys that wait are kept
 * here too. The runner is the app's one: the pinned view and the trainer run on
 * it as well (app_jobs). */
#define _POSIX_C_SOURCE 200809L
#include "async.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs.h"
#include "state_internal.h"

#define QUEUE_MAX 64 /* keys that wait for the model being computed */
#define WORKERS 4    /* the runner's threads: a recompute, a pin, the trainer, one spare */

typedef struct {
    mha_config cfg; /* resolved */
    tok_list toks;  /* the text, the job's own copy */
    int sample;     /* the state's sample for this text (0 custom), shown with it */
    mha_model *m;   /* computed into: the job's from submit until it is done */
    int failed;
    char err[MHA_ERR_LEN];
    double ms;
} async_job;

struct app_async {
    /* all of it the UI thread's; the job's context (job) is the worker's while
       handle is not done */
    jobs *runner;
    int enabled;
    double threshold_ms;
    void (*notify)(void *);
    void *ud;
    int running;      /* the job is handed over (until app_async_poll takes it back) */
    int held;         /* app_async_hold: a job handed over waits to be submitted */
    job *handle;      /* the runner's job while running and not held */
    int pending;      /* s->cfg, s->sample and want ask for more than the running job */
    tok_list want;    /* the text asked for, while busy */
    int shown_sample; /* the sample of the text shown, while busy */
    mha_model *spare; /* the second model while no job has it (its weights often still hold) */
    app_action queue[QUEUE_MAX];
    int queued, replaying;
    unsigned long recomputes;
    char line[512]; /* the progress sign, made by app_refresh */
    async_job job;
};

static double clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void recompute(job *handle, void *ctx) {
    (void)handle; /* a recompute cannot be cut short: it ignores job_cancelled */
    async_job *j = ctx;
    double t0 = clock_ms();
    j->failed = mha_model_compute(j->m, &j->cfg, &j->toks, j->err, sizeof j->err) != 0;
    j->ms = clock_ms() - t0;
}

app_async *app_async_create(void) {
    app_async *a = calloc(1, sizeof(app_async));
    if (a && !(a->runner = jobs_create(WORKERS))) {
        free(a);
        return NULL;
    }
    return a;
}

void app_async_free(app_async *a) {
    if (!a) return;
    job_free(a->handle);     /* a recompute under way is finished first */
    jobs_destroy(a->runner); /* and the pin's and the trainer's jobs are stopped */
    mha_model_destroy(a->job.m);
    tok_free(&a->job.toks);
    mha_model_destroy(a->spare);
    tok_free(&a->want);
    free(a);
}

jobs *app_jobs(const app_state *s) {
    return s->async ? s->async->runner : NULL;
}

int app_async_enable(app_state *s, void (*notify)(void *), void *ud, double threshold_ms) {
    app_async *a = s->async;
    if (!a) return -1;
    a->threshold_ms = threshold_ms < 0.0 ? APP_ASYNC_DEFAULT_MS : threshold_ms;
    if (a->enabled) return 0;
    a->notify = notify;
    a->ud = ud;
    jobs_set_wake(a->runner, notify, ud);
    a->enabled = 1;
    return 0;
}

int app_async_active(const app_state *s) {
    return s->async && s->async->enabled;
}

double app_async_threshold(const app_state *s) {
    return s->async ? s->async->threshold_ms : APP_ASYNC_DEFAULT_MS;
}

int app_async_busy(const app_state *s) {
    return s->async && (s->async->running || s->async->pending);
}

unsigned long app_async_recomputes(const app_state *s) {
    return s->async ? s->async->recomputes : 0;
}

void app_async_count(app_state *s) {
    if (s->async) s->async->recomputes++;
}

int app_async_shown_sample(const app_state *s) {
    return app_async_busy(s) ? s->async->shown_sample : s->sample;
}

tok_list *app_async_want(app_state *s) {
    return app_async_busy(s) ? &s->async->want : &s->toks;
}

int app_async_request(app_state *s, const mha_config *cfg, tok_list *toks) {
    app_async *a = s->async;
    if (!app_async_busy(s)) a->shown_sample = s->sample; /* the action may change it after */
    if (toks != &a->want) {
        tok_list copy;
        if (toks == &s->toks) {
            if (tok_copy(&copy, toks) != 0) {
                snprintf(s->status, sizeof s->status, "out of memory");
                return -1;
            }
        } else { /* a new text: the request takes it */
            copy = *toks;
            memset(toks, 0, sizeof *toks);
        }
        tok_free(&a->want);
        a->want = copy;
    }
    s->cfg = *cfg;
    if (s->focus > cfg->h) s->focus = 0; /* as a recompute in the foreground would (model.c) */
    a->pending = 1;
    return 0;
}

/* Gives the job to the runner; when it cannot take it, computes it here. */
static void hand_over(app_state *s) {
    app_async *a = s->async;
    a->handle = jobs_submit(a->runner, recompute, &a->job);
    if (!a->handle) recompute(NULL, &a->job); /* no thread: done at once, in the foreground */
}

void app_async_submit(app_state *s) {
    app_async *a = s->async;
    if (!a || !a->pending || a->running) return;
    async_job *j = &a->job;
    j->cfg = s->cfg;
    j->sample = s->sample;
    j->m = a->spare ? a->spare : mha_model_create();
    a->spare = NULL;
    if (!j->m || tok_copy(&j->toks, &a->want) != 0) {
        a->spare = j->m; /* nothing was computed: the state stays as it is shown */
        j->m = NULL;
        a->pending = 0;
        s->cfg = s->m->cfg;
        s->sample = a->shown_sample;
        tok_free(&a->want);
        app_notify(s, "out of memory: the picture is the one before", 1);
        return;
    }
    a->pending = 0;
    a->running = 1;
    if (!a->held) hand_over(s);
}

void app_async_after(app_state *s, const app_action *act) {
    if (act->kind == ACT_ABLATE && app_async_busy(s))
        s->status[0] = '\0'; /* its number would be the old model's: the sign says instead */
    app_async_submit(s);
    app_refresh(s);
}

/* Keys that need the model being computed: a head of it, its pages, its
   steps, the padding (its length follows the model's text), and pinning it. */
static int needs_model(app_action_kind k) {
    return k == ACT_FOCUS || k == ACT_ABLATE || k == ACT_STEP_NEXT || k == ACT_STEP_PREV ||
           k == ACT_PAGE_PREV || k == ACT_PAGE_NEXT || k == ACT_PAD || k == ACT_COMPARE;
}

/* Keys that change what is computed: while busy they update the request. */
static int changes_model(app_action_kind k) {
    switch (k) {
    case ACT_H_UP:
    case ACT_H_DOWN:
    case ACT_D_UP:
    case ACT_D_DOWN:
    case ACT_SAMPLE_NEXT:
    case ACT_SAMPLE_PREV:
    case ACT_SEED:
    case ACT_MASK:
    case ACT_SCALE:
    case ACT_TEMP_UP:
    case ACT_TEMP_DOWN:
    case ACT_WEIGHTS:
    case ACT_ABLATE_CLEAR: return 1;
    default: return 0;
    }
}

int app_async_defer(app_state *s, const app_action *act) {
    app_async *a = s->async;
    if (!a || a->replaying || s->train_mode || !app_async_busy(s)) return 0;
    /* once a key waits, the keys after it that change the model wait too: they
       are then applied in the order they came */
    if (!needs_model(act->kind) && !(a->queued && changes_model(act->kind))) return 0;
    if (a->queued == QUEUE_MAX) {
        snprintf(s->status, sizeof s->status, "still computing: key ignored");
        s->status_until = s->now_ms + APP_NOTICE_MS;
    } else {
        app_action keep = *act;
        keep.text = NULL; /* none of these carries text */
        a->queue[a->queued++] = keep;
    }
    s->dirty = 1; /* the progress sign counts the keys that wait */
    app_refresh(s);
    return 1;
}

/* Applies the keys that waited, in order, until one of them starts a
   recompute in the background again. */
static void replay(app_state *s) {
    app_async *a = s->async;
    a->replaying = 1;
    while (a->queued && !app_async_busy(s)) {
        app_action act = a->queue[0];
        memmove(a->queue, a->queue + 1, sizeof a->queue[0] * (size_t)(a->queued - 1));
        a->queued--;
        app_apply(s, &act);
    }
    a->replaying = 0;
}

/* 1 if what is asked for now is what the job just computed (and now shows). */
static int same_request(const app_state *s, const async_job *j) {
    if (memcmp(&s->cfg, &j->cfg, sizeof s->cfg) != 0 || s->sample != j->sample ||
        s->async->want.count != s->toks.count)
        return 0;
    for (int i = 0; i < s->toks.count; i++)
        if (strcmp(s->async->want.tokens[i], s->toks.tokens[i]) != 0) return 0;
    return 1;
}

int app_async_poll(app_state *s) {
    app_async *a = s->async;
    const int pinned = app_compare_poll(s); /* a pinned view computed in the background */
    if (!a || !a->running || a->held || (a->handle && !job_poll(a->handle, NULL))) {
        app_refresh(s);
        return pinned;
    }
    job_free(a->handle); /* done: the job's context is this thread's again */
    a->handle = NULL;
    a->running = 0;
    async_job *j = &a->job;
    if (!j->failed) { /* show it: the model, its text and its sample together */
        mha_model *old = s->m;
        s->m = j->m;
        a->spare = old;
        tok_free(&s->toks);
        s->toks = j->toks;
        a->shown_sample = j->sample;
        s->compute_ms = j->ms;
        s->data_version++;
        a->recomputes++;
        if (s->focus > s->m->cfg.h) s->focus = 0;
    } else { /* out of memory: the model shown stays */
        a->spare = j->m;
        tok_free(&j->toks);
        snprintf(s->status, sizeof s->status, "%s", j->err);
        s->status_until = s->now_ms + APP_NOTICE_MS;
        s->notice[0] = '\0';
    }
    j->m = NULL;
    memset(&j->toks, 0, sizeof j->toks);
    s->layout_valid = 0;
    s->dirty = 1;
    if (a->pending && !j->failed && same_request(s, j)) a->pending = 0; /* Up, Down: done */
    if (a->pending) {
        app_async_submit(s);
    } else { /* what was asked for is what is shown */
        s->cfg = s->m->cfg;
        s->sample = a->shown_sample;
        tok_free(&a->want);
        replay(s);
    }
    app_derive(s);
    app_refresh(s);
    return 1;
}

void app_async_wait(app_state *s) {
    app_async *a = s->async;
    if (!a || !a->enabled) return;
    app_async_hold(s, 0);
    while (app_async_busy(s)) {
        if (!a->running) app_async_submit(s); /* cannot stay pending with the worker free */
        if (a->handle) job_wait(a->handle);
        app_async_poll(s);
    }
    app_compare_wait(s); /* and a pinned view being computed */
}

void app_async_hold(app_state *s, int hold) {
    app_async *a = s->async;
    if (!a || !a->enabled) return;
    a->held = hold;
    if (!hold && a->running && !a->handle) hand_over(s); /* the job that waited */
}

/* Makes the progress sign, "computing h = 16, d_model = 4096, n = 7 …" with
   what is shown meanwhile, into a->line. */
static void make_line(const app_state *s, app_async *a) {
    const mha_config *c = a->running ? &a->job.cfg : &s->cfg;
    const int n = c->pad ? c->pad : (a->running ? a->job.toks.count : a->want.count);
    int len = snprintf(a->line, sizeof a->line,
                       "computing h = %d, d_model = %d, n = %d \xE2\x80\xA6 (shown: h = %d, "
                       "d_model = %d, n = %d)",
                       c->h, c->d_model, n, s->m->cfg.h, s->m->cfg.d_model, s->m->n);
    if (a->running && a->pending && len > 0 && (size_t)len < sizeof a->line)
        len += snprintf(a->line + len, sizeof a->line - (size_t)len, ", then h = %d, d_model = %d",
                        s->cfg.h, s->cfg.d_model);
    if (a->queued && len > 0 && (size_t)len < sizeof a->line)
        len += snprintf(a->line + len, sizeof a->line - (size_t)len, ", %d key%s wait%s for it",
                        a->queued, a->queued == 1 ? "" : "s", a->queued == 1 ? "s" : "");
    if (s->status[0] && len > 0 && (size_t)len < sizeof a->line)
        snprintf(a->line + len, sizeof a->line - (size_t)len, "   \xC2\xB7   %s", s->status);
}

void app_refresh(app_state *s) {
    if (s->async && app_async_busy(s)) make_line(s, s->async);
    app_training_refresh(s);
    app_compare_refresh(s);
}

const char *app_async_status(const app_state *s) {
    return app_async_busy(s) ? s->async->line : NULL; /* made by app_refresh */
}
