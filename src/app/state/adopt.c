/* adopt.c: a model computed in the background comes back into the state. The
 * jobs layer (src/app/jobs/async.c) hands over the model it computed for the
 * request it took; the state shows it with its text and sample, and once what
 * was asked for is what is shown, the keys that waited are applied in order.
 * The top of the state machine: it applies actions, nothing here calls it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "state_internal.h"

/* Applies the keys that waited, in order, until one of them asks for a
   recompute in the background again. */
static void replay(app_state *s) {
    app_request *r = &s->req;
    r->replaying = 1;
    while (r->queued && !app_request_busy(s)) {
        app_action act = r->queue[0];
        memmove(r->queue, r->queue + 1, sizeof r->queue[0] * (size_t)(r->queued - 1));
        r->queued--;
        app_apply(s, &act);
    }
    r->replaying = 0;
}

/* 1 if what is asked for now is what was just computed (and now shows). */
static int same_request(const app_state *s, const mha_config *cfg, int sample) {
    if (memcmp(&s->cfg, cfg, sizeof s->cfg) != 0 || s->sample != sample ||
        s->req.want.count != s->toks.count)
        return 0;
    for (int i = 0; i < s->toks.count; i++)
        if (strcmp(s->req.want.tokens[i], s->toks.tokens[i]) != 0) return 0;
    return 1;
}

mha_model *app_model_adopt(app_state *s, mha_model *m, tok_list *toks, int sample, double ms,
                           const char *err) {
    app_request *r = &s->req;
    const mha_config asked = r->running_cfg;
    mha_model *back = m;
    r->running = 0;
    if (!err) { /* show it: the model, its text and its sample together */
        back = s->m;
        s->m = m;
        tok_free(&s->toks);
        s->toks = *toks;
        memset(toks, 0, sizeof *toks);
        r->shown_sample = sample;
        s->compute_ms = ms;
        s->data_version++;
        r->recomputes++;
        if (s->look.focus > s->m->cfg.h) s->look.focus = 0;
    } else { /* out of memory: the model shown stays */
        tok_free(toks);
        snprintf(s->status, sizeof s->status, "%s", err);
        s->status_until = s->now_ms + APP_NOTICE_MS;
        s->notice[0] = '\0';
    }
    s->layout_valid = 0;
    s->dirty = 1;
    if (r->pending && !err && same_request(s, &asked, sample)) r->pending = 0; /* Up, Down */
    if (!r->pending) { /* what was asked for is what is shown */
        s->cfg = s->m->cfg;
        s->sample = r->shown_sample;
        tok_free(&r->want);
        replay(s);
    }
    app_derive(s);
    app_refresh(s);
    return back;
}
