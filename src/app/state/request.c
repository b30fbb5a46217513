/* request.c: the recompute the state asks for, as plain data in s->req. A change
 * whose recompute model.c estimates above the threshold, or any change while one
 * is under way, becomes a request (the last one asked for: later changes
 * coalesce into it); keys that need the model being computed wait in s->req's
 * queue (adopt.c applies them once it is shown). Taking the request, computing
 * it and handing the model back is the jobs layer's (src/app/jobs/async.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "state_internal.h"

int app_request_busy(const app_state *s) {
    return s->req.running || s->req.pending;
}

int app_request_shown_sample(const app_state *s) {
    return app_request_busy(s) ? s->req.shown_sample : s->sample;
}

tok_list *app_request_want(app_state *s) {
    return app_request_busy(s) ? &s->req.want : &s->toks;
}

int app_request_ask(app_state *s, const mha_config *cfg, tok_list *toks) {
    app_request *r = &s->req;
    if (!app_request_busy(s)) r->shown_sample = s->sample; /* the action may change it after */
    if (toks != &r->want) {
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
        tok_free(&r->want);
        r->want = copy;
    }
    s->cfg = *cfg;
    if (s->look.focus > cfg->h)
        s->look.focus = 0; /* as a recompute in the foreground would (model.c) */
    r->pending = 1;
    return 0;
}

int app_request_take(app_state *s, mha_config *cfg, tok_list *toks, int *sample) {
    app_request *r = &s->req;
    if (!r->pending || r->running || tok_copy(toks, &r->want) != 0) return -1;
    *cfg = s->cfg;
    *sample = s->sample;
    r->pending = 0;
    r->running = 1;
    r->running_cfg = s->cfg;
    r->running_n = toks->count;
    return 0;
}

/* Back to the model shown: what was asked for is forgotten. */
static void forget(app_state *s) {
    app_request *r = &s->req;
    r->pending = r->running = 0;
    s->cfg = s->m->cfg;
    s->sample = r->shown_sample;
    tok_free(&r->want);
}

void app_request_drop(app_state *s) {
    forget(s); /* nothing was computed: the state stays as it is shown */
    app_notify(s, "out of memory: the picture is the one before", 1);
}

void app_request_attach(app_state *s, double threshold_ms) {
    s->req.attached = 1;
    s->req.threshold_ms = threshold_ms;
}

void app_request_cancel(app_state *s) {
    if (app_request_busy(s)) forget(s);
    s->req.queued = 0;
    s->req.attached = 0;
}

void app_request_after(app_state *s, const app_action *act) {
    if (act->kind == ACT_ABLATE && app_request_busy(s))
        s->status[0] = '\0'; /* its number would be the old model's: the sign says instead */
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

int app_request_defer(app_state *s, const app_action *act) {
    app_request *r = &s->req;
    if (r->replaying || s->train_mode || !app_request_busy(s)) return 0;
    /* once a key waits, the keys after it that change the model wait too: they
       are then applied in the order they came */
    if (!needs_model(act->kind) && !(r->queued && changes_model(act->kind))) return 0;
    if (r->queued == APP_QUEUE_MAX) {
        snprintf(s->status, sizeof s->status, "still computing: key ignored");
        s->status_until = s->now_ms + APP_NOTICE_MS;
    } else {
        app_action keep = *act;
        keep.text = NULL; /* none of these carries text */
        r->queue[r->queued++] = keep;
    }
    s->dirty = 1; /* the progress sign counts the keys that wait */
    return 1;
}

/* "computing h = 16, d_model = 4096, n = 7 …" with what is shown meanwhile. */
void app_request_line(app_state *s) {
    app_request *r = &s->req;
    if (s->gpt_loading || s->gpt_wanted) { /* a model being read: how much of it */
        const char *slash = strrchr(s->gpt_want.path, '/');
        const char *name = slash && slash[1] ? slash + 1 : s->gpt_want.path;
        snprintf(r->line, sizeof r->line, "loading %.200s \xE2\x80\xA6 %d %% read%s%.200s", name,
                 s->gpt_permille / 10, s->status[0] ? "   \xC2\xB7   " : "", s->status);
        return;
    }
    if (app_gpt_busy(s)) { /* a loaded model's change */
        snprintf(r->line, sizeof r->line,
                 "computing\xE2\x80\xA6 (shown meanwhile: the text and heads before)%s%.300s",
                 s->status[0] ? "   \xC2\xB7   " : "", s->status);
        return;
    }
    if (!app_request_busy(s)) return;
    const mha_config *c = r->running ? &r->running_cfg : &s->cfg;
    const int n = c->pad ? c->pad : (r->running ? r->running_n : r->want.count);
    int len = snprintf(r->line, sizeof r->line,
                       "computing h = %d, d_model = %d, n = %d \xE2\x80\xA6 (shown: h = %d, "
                       "d_model = %d, n = %d)",
                       c->h, c->d_model, n, s->m->cfg.h, s->m->cfg.d_model, s->m->n);
    if (r->running && r->pending && len > 0 && (size_t)len < sizeof r->line)
        len += snprintf(r->line + len, sizeof r->line - (size_t)len, ", then h = %d, d_model = %d",
                        s->cfg.h, s->cfg.d_model);
    if (r->queued && len > 0 && (size_t)len < sizeof r->line)
        len += snprintf(r->line + len, sizeof r->line - (size_t)len, ", %d key%s wait%s for it",
                        r->queued, r->queued == 1 ? "" : "s", r->queued == 1 ? "s" : "");
    if (s->status[0] && len > 0 && (size_t)len < sizeof r->line)
        snprintf(r->line + len, sizeof r->line - (size_t)len, "   \xC2\xB7   %s", s->status);
}

const char *app_request_status(const app_state *s) {
    if (s->gpt_loading || s->gpt_wanted || app_gpt_busy(s)) return s->req.line;
    return app_request_busy(s) ? s->req.line : NULL; /* made by app_refresh */
}
