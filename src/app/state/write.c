/* write.c: a loaded model writes (W). The next token is drawn from the next-token
 * distribution shown, as --generate draws it (sampler.h: the same temperature on
 * the logits, top-k, top-p and seed give the same tokens), marked in the
 * next-token panel, then appended, one token every write-pace ms: each step a
 * change of the text that the jobs layer computes (only the new row of each
 * layer, gpt.c). `.` writes one token, as training's single step. It stops after
 * write-length tokens, at an end-of-text token, when the model's context is
 * full, or at any key. The random numbers start at the seed when the text has no
 * written token yet, so a text's continuation is the same every time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"
#include "state_internal.h"
#include "write_internal.h"

/* The paces S steps through, in ms a token. */
static const int paces[] = {2000, 1000, 500, 250, 100};
#define PACES ((int)(sizeof paces / sizeof paces[0]))

app_write_opts app_write_opts_of(const cli_options *o) {
    app_write_opts w = {1.0f, 0, 1.0f, MHA_DEFAULT_SEED, APP_WRITE_LENGTH, APP_WRITE_PACE_MS};
    if (!o) return w;
    if (o->sample_argmax)
        w.temperature = 0.0f;
    else if (o->sample_temperature > 0.0f)
        w.temperature = o->sample_temperature;
    if (o->sample_top_k) w.top_k = o->sample_top_k;
    if (o->sample_top_p > 0.0f) w.top_p = o->sample_top_p;
    if (o->cfg.seed) w.seed = o->cfg.seed;
    return w;
}

void app_write_free(app_writer *w) {
    if (!w) return;
    sampler_free(&w->smp);
    free(w);
}

int app_write_on(const app_state *s) {
    return s->writer && s->writer->on && s->gpt;
}

/* The tokens per second of a pace, for the button and the status ("2", "0.5"). */
static void rate_text(char *buf, size_t len, int pace_ms) {
    snprintf(buf, len, "%.2g", 1000.0 / (double)(pace_ms > 0 ? pace_ms : APP_WRITE_PACE_MS));
}

static void unmark(app_state *s, app_writer *w) {
    if (w->picked) app_gpt_mark(s, -1);
    w->picked = 0;
}

void app_write_stop(app_state *s, const char *why) {
    app_writer *w = s->writer;
    if (!w) return;
    if (w->on && why) snprintf(s->status, sizeof s->status, "%s", why);
    if (s->gpt) unmark(s, w);
    app_write_halt(s);
}

static app_writer *writer(app_state *s) {
    if (!s->writer) s->writer = calloc(1, sizeof *s->writer);
    return s->writer;
}

/* Draws the next token from the distribution shown and marks it. 0, or -1 when
   there is none to draw from (out of memory: the status says so). */
static int draw(app_state *s, app_writer *w) {
    int vocab = 0;
    const float *logits = app_gpt_logits(s, &vocab);
    if (!logits) return -1;
    if (w->smp.vocab != vocab) {
        sampler_free(&w->smp);
        if (sampler_init(&w->smp, vocab) != 0) {
            w->smp.vocab = 0;
            snprintf(s->status, sizeof s->status, "the model cannot write: out of memory");
            return -1;
        }
    }
    if (app_gpt_written(s) == 0 || w->seed != s->write.seed) /* the text's first draw */
        w->rng = w->seed = s->write.seed;
    const app_write_opts *o = &s->write;
    const sampler_opts so = {o->temperature, o->top_k, o->top_p};
    double p_sample = 0.0, u = 0.0;
    w->after = w->rng;
    w->pick = sampler_pick(&w->smp, logits, &so, &w->after, &p_sample, &u);
    w->picked = 1;
    app_gpt_mark(s, w->pick);
    return 0;
}

/* Why writing cannot go on from the text shown (NULL: it can). */
static const char *stop_reason(const app_state *s, const app_writer *w, char *buf, size_t len) {
    if (w->on && w->written >= w->length) {
        snprintf(buf, len, "wrote %d token%s (write-length)", w->written,
                 w->written == 1 ? "" : "s");
        return buf;
    }
    if (app_gpt_room(s) < 1) {
        snprintf(buf, len, "the model holds no more tokens here (%d)", app_gpt_limit(s));
        return buf;
    }
    return NULL;
}

/* The token drawn goes into the text (the run with it computed incrementally). */
static void append(app_state *s, app_writer *w) {
    char label[64];
    app_gpt_token_label(s, w->pick, label, sizeof label);
    const float p = app_gpt_prob(s, w->pick);
    w->rng = w->after;
    w->picked = 0;
    if (app_gpt_append(s, w->pick) != 0) {
        app_write_stop(s, "the model holds no more tokens here");
        return;
    }
    if (!app_gpt_busy(s)) app_derive_after(s); /* computed at once (no jobs layer): shown */
    w->written++;
    if (w->on)
        snprintf(s->status, sizeof s->status, "wrote %s (%.1f %%): %d of %d, any key stops", label,
                 100.0 * (double)p, w->written, w->length);
    else
        snprintf(s->status, sizeof s->status, "wrote %s (%.1f %%)", label, 100.0 * (double)p);
}

/* One step now: a token drawn (when none is) and appended, unless it ends the text
   or writing cannot go on. Returns 1. */
static int step_now(app_state *s, app_writer *w) {
    char buf[128];
    const char *why = stop_reason(s, w, buf, sizeof buf);
    if (why) {
        if (w->on)
            app_write_stop(s, why);
        else
            snprintf(s->status, sizeof s->status, "%s", why);
        return 1;
    }
    if (!w->picked && draw(s, w) != 0) return 1;
    if (app_gpt_ends(s, w->pick)) { /* marked, not written: the model ended */
        w->on = 0;
        w->queued = 0;
        snprintf(s->status, sizeof s->status, "the model wrote its end of text");
        return 1;
    }
    append(s, w);
    return 1;
}

/* Writing starts: n tokens, the first drawn and marked now when the run shown is
   the text's, appended after one pace. */
static void begin(app_state *s, app_writer *w, int n) {
    w->on = 1;
    w->start = 0;
    w->written = 0;
    w->length = n;
    w->queued = 0;
    w->next_ms = s->now_ms + s->write.pace_ms;
    char rate[16], k[16];
    rate_text(rate, sizeof rate, s->write.pace_ms);
    const app_write_opts *o = &s->write;
    if (o->top_k)
        snprintf(k, sizeof k, "%d", o->top_k);
    else
        snprintf(k, sizeof k, "off");
    snprintf(s->status, sizeof s->status,
             "writing %d token%s, %s a second (sample-temperature %g, top-k %s, top-p %g, seed "
             "%llu): any key stops, S the pace",
             n, n == 1 ? "" : "s", rate, (double)o->temperature, k,
             (double)(o->top_p > 0.0f ? o->top_p : 1.0f), (unsigned long long)o->seed);
    if (app_gpt_busy(s)) return; /* drawn once the run is shown (app_write_tick) */
    unmark(s, w);
    char buf[128];
    const char *why = stop_reason(s, w, buf, sizeof buf);
    if (why)
        app_write_stop(s, why);
    else
        draw(s, w);
}

void app_write_start(app_state *s, int n) {
    app_writer *w = writer(s);
    if (!w) {
        snprintf(s->status, sizeof s->status, "the model cannot write: out of memory");
        return;
    }
    app_write_stop(s, NULL);
    w->start = n; /* 0: none (a lesson's step without it) */
    if (n && s->gpt && !app_gpt_busy(s) && !s->gpt_wanted && !s->gpt_loading) begin(s, w, n);
}

void app_write_finish(app_state *s) {
    for (int guard = 0; guard < 4 * APP_WRITE_LENGTH_MAX && s->writer &&
                        (s->writer->on || s->writer->queued || s->writer->start);
         guard++)
        if (!app_write_tick(s, 1e300) && !s->gpt) break;
}

int app_write_apply(app_state *s, const app_action *a) {
    if (!s->gpt) return -1;
    if (a->kind == ACT_STEP_NEXT && s->look.focus) return -1; /* the focus view's stages */
    if (a->kind != ACT_WRITE && a->kind != ACT_WRITE_STOP && a->kind != ACT_WRITE_PACE &&
        a->kind != ACT_STEP_NEXT)
        return -1;
    app_writer *w = writer(s);
    if (!w) {
        snprintf(s->status, sizeof s->status, "the model cannot write: out of memory");
        return 1;
    }
    char rate[16];
    switch (a->kind) {
    case ACT_WRITE_STOP:
        w->start = 0;
        app_write_stop(s, "writing stopped");
        return 1;
    case ACT_WRITE_PACE: {
        int k = 0;
        while (k < PACES && paces[k] >= s->write.pace_ms) k++;
        s->write.pace_ms = paces[k < PACES ? k : 0];
        rate_text(rate, sizeof rate, s->write.pace_ms);
        snprintf(s->status, sizeof s->status, "the model writes %s token%s a second (S)", rate,
                 s->write.pace_ms == 1000 ? "" : "s");
        return 1;
    }
    case ACT_WRITE:
        if (w->on)
            app_write_stop(s, "writing stopped");
        else
            begin(s, w, s->write.length);
        return 1;
    default: /* `.`: one token, now or once the run being computed is shown */
        if (app_gpt_busy(s)) {
            w->queued++;
            return 1;
        }
        if (w->picked && app_gpt_marked(s) != w->pick) w->picked = 0;
        return step_now(s, w);
    }
}

int app_write_tick(app_state *s, double now_ms) {
    app_writer *w = s->writer;
    if (!w || !s->gpt || app_gpt_busy(s) || s->gpt_wanted || s->gpt_loading) return 0;
    if (w->start) { /* a lesson's, once its model is shown */
        begin(s, w, w->start);
        return 1;
    }
    if (w->picked && app_gpt_marked(s) != w->pick) w->picked = 0; /* the run changed: anew */
    if (w->queued) {
        w->queued--;
        return step_now(s, w);
    }
    if (!w->on) return 0;
    if (!w->picked) { /* the run with the last token is shown: the next is drawn, marked */
        char buf[128];
        const char *why = stop_reason(s, w, buf, sizeof buf);
        if (why) {
            app_write_stop(s, why);
            return 1;
        }
        if (draw(s, w) != 0) app_write_stop(s, NULL);
        /* the mark stays at least half a pace, however long the token took to compute */
        if (w->next_ms < now_ms + 0.5 * s->write.pace_ms)
            w->next_ms = now_ms + 0.5 * s->write.pace_ms;
        return 1;
    }
    if (now_ms < w->next_ms) return 0;
    w->next_ms = now_ms + s->write.pace_ms;
    return step_now(s, w);
}

int app_write_timeout_ms(const app_state *s) {
    const app_writer *w = s->writer;
    if (!w || !s->gpt || app_gpt_busy(s) || s->gpt_wanted || s->gpt_loading ||
        (!w->on && !w->queued && !w->start))
        return -1;
    if (w->queued || w->start || !w->picked) return 0;
    const double left = w->next_ms - s->now_ms;
    return left > 0.0 ? (int)(left + 0.999) : 0;
}

void app_write_view(const app_state *s, view_state *vs) {
    vs->write = s->gpt ? (app_write_on(s) ? 2 : 1) : 0;
    vs->write_pace_ms = s->write.pace_ms;
}
