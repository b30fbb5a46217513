/* gpt.c: a loaded GPT-2-family model in the state (src/model/gpt2.h): the layer
 * shown is one of its layers, at its own heads or re-split; the overview of every
 * layer x head; the next-token panel. The keys that change a random model's
 * construction (d_model, seed, mask, scaling, temperature, weights, padding) say
 * why they do not apply; h re-splits the shown layer; X removes a head and the
 * layers after it are recomputed, so the next-token panel shows what it costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt2.h"
#include "gpt_fill.h"
#include "gpt_internal.h"

/* why a model is not re-split (tf_infer_can_split is 0) */
#define NO_SPLIT(m)                                                                                \
    ((m)->tf->spec.pos == SPEC_POS_ROPE ? "RoPE pairs dimensions inside each head"                 \
                                        : "K/V heads are shared by groups of heads")
#include "samples.h"
#include "state_internal.h"

_Static_assert(GPT2_MAX_N <= VIEW_MAX_N, "the view lays out every position a model computes");

void app_gpt_free(app_gpt *g) {
    if (!g) return;
    gpt2_run_free(&g->runs[0]);
    gpt2_run_free(&g->runs[1]);
    free(g->off);
    free(g->job.off);
    gpt2_free(g->m);
    free(g);
}

/* The run shown. */
gpt2_run *gpt_shown(const app_gpt *g) {
    return (gpt2_run *)&g->runs[g->cur];
}

/* The state lets g go: freed now, or by the jobs layer once its job is back. */
static void let_go(app_gpt *g) {
    if (g && (g->job.out || g->read))
        g->orphan = 1;
    else
        app_gpt_free(g);
}

int app_gpt_active(const app_state *s) {
    return s->gpt != NULL;
}

/* The next-token panel's mark: the token drawn to be written next (its row, or a
   note under the rows when it is not among them). */
void gpt_mark_next(app_gpt *g) {
    const gpt2_run *r = gpt_shown(g);
    g->next.mark = -1;
    g->next.marked = g->mark >= 0;
    if (g->mark < 0) return;
    for (int k = 0; k < g->next.k && k < GPT2_TOP; k++)
        if (r->top[k] == g->mark) g->next.mark = k;
    model_tok_label(g->m->tok, g->mark, g->mark_label, GPT2_LABEL);
    g->next.mark_label = g->mark_label;
    g->next.mark_p = gpt2_run_probs(r)[g->mark];
}

/* The overview's and the next-token panel's data from the run. */
static void rebuild(app_state *s) {
    app_gpt *g = s->gpt;
    const tf_config *c = &g->m->tf->cfg;
    const gpt2_run *r = gpt_shown(g);
    const size_t pp = (size_t)r->ov_n * r->ov_n; /* the maps of this run, or none yet */
    for (int i = 0; i < c->layers; i++) g->attn[i] = pp ? r->ov + (size_t)i * c->h * pp : NULL;
    model_tok_describe(g->m->tok, g->tok_desc, sizeof g->tok_desc);
    g->ov = (view_overview){.name = g->m->paths.name,
                            .layers = c->layers,
                            .h = c->h,
                            .n = r->n,
                            .map_n = r->ov_n,
                            .attn = g->attn,
                            .tokens = r->label,
                            .layer = r->shown,
                            .off = r->off,
                            .encoder = gpt2_run_is_encoder(r),
                            .tokenizer = g->tok_desc};
    if (gpt2_run_is_encoder(r)) {
        gpt_fill_panel(&g->next, &g->fill, r, g->next_k ? g->next_k : 5);
    } else {
        const float *p = gpt2_run_probs(r);
        g->next.k = g->next_k ? g->next_k : 5;
        for (int k = 0; k < GPT2_TOP && k < VIEW_NEXT_MAX; k++) {
            model_tok_label(g->m->tok, r->top[k], g->next_label[k], GPT2_LABEL);
            g->next.token[k] = g->next_label[k];
            g->next.p[k] = p[r->top[k]];
            g->next.p_full[k] = r->m != r->own ? r->probs_own[r->top[k]] /* as trained */
                                : r->any_off   ? r->probs_full[r->top[k]]
                                               : -1.0f;
        }
        snprintf(g->after, sizeof g->after, "%s", r->n ? r->labels[r->n - 1] : "");
        g->next.after = g->after;
        g->next.cut = r->n < r->n_text;
        gpt_mark_next(g);
    }
    g->next.full_kv = r->m != r->own ? r->own->tf->spec.h_kv : 0;
    g->ov.h_kv = r->own->tf->spec.h_kv;
    g->ov.h_kv_shown = r->kv;
    g->ov.computed_from = r->ms_from;
    s->compute_ms = r->ms;
    s->data_version++;
    s->layout_valid = 0;
    s->dirty = 1;
}

/* The status says so when the run's text was cut; 1 then. */
static int say_cut(app_state *s) {
    return app_model_cut(s, s->status, sizeof s->status);
}

int app_model_cut(const app_state *s, char *buf, size_t len) {
    return s->gpt && gpt2_run_cut(gpt_shown(s->gpt), buf, len);
}

/* The run shown has just reached what was asked: the status says what a removed
   or restored head cost, or that the text was cut. */
static void say_reached(app_state *s) {
    app_gpt *g = s->gpt;
    gpt_say *w = &g->say;
    if (say_cut(s) || !w->on) return;
    w->on = 0;
    const gpt2_run *r = gpt_shown(g);
    const int mask = model_tok_mask_id(g->m->tok);
    char label[GPT2_LABEL], hint[GPT2_LABEL + 48] = "";
    if (r->fill && mask >= 0) { /* an encoder with its head: what shows the cost */
        model_tok_label(g->m->tok, mask, label, sizeof label);
        snprintf(hint, sizeof hint, " (a %s in the text shows what it costs)", label);
    }
    model_tok_label(g->m->tok, w->top, label, sizeof label);
    if (w->blank < 0 || (w->blank && gpt2_run_fills(r) < 1)) /* an encoder, nothing filled */
        snprintf(s->status, sizeof s->status, "head %d of layer %d %s%s", w->head, w->layer + 1,
                 w->off ? "removed" : "back", hint);
    else
        snprintf(s->status, sizeof s->status, "head %d of layer %d %s: p(%s%s) %.1f %% → %.1f %%",
                 w->head, w->layer + 1, w->off ? "removed" : "back", label,
                 w->blank ? " in the blank" : "", 100.0 * w->before,
                 100.0 * (w->blank ? gpt2_run_fill_p(r, 0, w->top) : gpt2_run_probs(r)[w->top]));
    s->status_until = s->now_ms + APP_NOTICE_MS;
    s->notice[0] = '\0';
}

/* The job for what is asked, filled from g (the run not shown computes it). */
static void job_fill(app_gpt *g) {
    app_gpt_job *j = &g->job;
    j->g = g;
    j->r = &g->runs[!g->cur];
    j->from = gpt_shown(g);
    memcpy(j->text, g->text, sizeof j->text);
    memcpy(j->more, g->more, (size_t)g->n_more * sizeof(int));
    j->n_more = g->n_more;
    memcpy(j->off, g->off, (size_t)g->m->tf->cfg.layers * g->m->tf->cfg.h);
    j->layer = g->layer;
    j->h = g->h;
    j->effects = g->measuring;
    j->kv = g->kv;
    j->overview = g->overview_open;
    j->v = g->want_v;
    j->rc = 0;
    j->err[0] = '\0';
}

/* What the keys ask for changed: computed here and now without a jobs layer,
   else asked of it (a change not yet taken is replaced by this one). */
void gpt_want(app_state *s) {
    app_gpt *g = s->gpt;
    g->measuring = 0;
    g->want_v++;
    g->mark = -1; /* a token drawn from the distribution shown is drawn again after */
    s->dirty = 1;
    if (s->req.attached) {
        g->pending = 1;
        return;
    }
    job_fill(g);
    g->job.r = gpt_shown(g);
    g->job.from = NULL;
    app_gpt_job_run(&g->job);
    if (g->job.rc != 0) {
        snprintf(s->status, sizeof s->status, "%s", g->job.err);
        return;
    }
    rebuild(s);
    say_reached(s);
}

/* The token x head x layer forwards the measure may take: GPT-2 small's 12 heads
   over its 12 layers at 128 tokens (h forwards of the layers from the shown one). */
#define GPT_MEASURE_BUDGET (12L * 12L * 128L)

/* The most tokens the shown layer's heads are measured at (GPT_MEASURE_BUDGET). */
static int measure_cap(const app_gpt *g) {
    const tf_config *c = &g->m->tf->cfg;
    return (int)(GPT_MEASURE_BUDGET / ((long)c->h * (c->layers - g->layer)));
}

/* Whether the shown run, at what was asked, still lacks its layer's measure. */
static int measure_due(const app_gpt *g) {
    const gpt2_run *r = gpt_shown(g);
    return g->effects && gpt2_run_measurable(r) && g->h == g->m->tf->cfg.h &&
           r->n <= measure_cap(g) && r->e_layer != g->layer;
}

/* The measure asked for, once the view is shown: its own job (or now, without a
   jobs layer), so that a text or a layer shows first. */
static void want_measure(app_state *s) {
    gpt_want(s);
    s->gpt->measuring = 1;
    if (!s->req.attached) { /* want computed the view already: the measure now */
        gpt2_run *r = gpt_shown(s->gpt);
        gpt2_run_effects(r, s->gpt->layer);
        rebuild(s);
    }
}

app_gpt_job *app_gpt_job_take(app_state *s) {
    app_gpt *g = s->gpt;
    /* (the run a change is computed into is the one not shown: not while a job reads
       it, the shown one before the last change) */
    if (!g || !g->pending || g->job.out || g->read == &g->runs[!g->cur]) return NULL;
    g->pending = 0;
    job_fill(g);
    g->job.out = 1;
    return &g->job;
}

void app_gpt_job_run(app_gpt_job *j) {
    const gpt2_model *m = j->g->m;
    if (!j->r->m && gpt2_run_init(j->r, m) != 0) {
        j->rc = -1;
        snprintf(j->err, sizeof j->err, "%.200s: out of memory for a second trace", m->paths.name);
        return;
    }
    /* the run shown copied where r differs (the change before this one), so that
       this change alone is computed; a regrouped run catches up by computing */
    if (j->from) gpt2_run_sync(j->r, j->from, j->overview);
    const gpt2_goal goal = {.text = j->text,
                            .len = strlen(j->text),
                            .off = j->off,
                            .layer = j->layer,
                            .h = j->h,
                            .more = j->more,
                            .n_more = j->n_more,
                            .effects = j->effects,
                            .kv = j->kv,
                            .overview = j->overview};
    j->rc = gpt2_run_reach(j->r, &goal, j->err, sizeof j->err);
}

int app_gpt_job_done(app_state *s, app_gpt_job *j) {
    app_gpt *g = j->g;
    j->out = 0;
    if (g->orphan) {
        if (!g->read) app_gpt_free(g); /* (else app_gpt_read_end frees it) */
        return 0;
    }
    if (g != s->gpt || j->v != g->want_v) return 0; /* stale: the next job starts from it */
    if (j->rc != 0) {
        app_gpt_say(s, j->err);
        return 1;
    }
    g->cur = !g->cur;
    rebuild(s);
    say_reached(s);
    if (!j->effects && measure_due(g)) want_measure(s); /* (a measure that failed: not again) */
    return 2;                                           /* the caller derives the picture from it */
}

app_gpt *app_gpt_read_begin(app_state *s) {
    app_gpt *g = s->gpt;
    if (g) g->read = gpt_shown(g);
    return g;
}

void app_gpt_read_end(app_gpt *g) {
    if (!g) return;
    g->read = NULL;
    if (g->orphan && !g->job.out) app_gpt_free(g);
}

int app_gpt_busy(const app_state *s) {
    const app_gpt *g = s->gpt;
    return g && (g->pending || g->job.out);
}

app_gpt *app_gpt_load(const app_gpt_request *q, ckpt_progress_fn progress, void *ud, int *rc,
                      char *err, size_t errlen) {
    app_gpt *g = calloc(1, sizeof *g);
    *rc = 1;
    if (!g) {
        snprintf(err, errlen, "%s: out of memory", q->path);
        return NULL;
    }
    *rc = gpt2_load(&g->m, q->path, progress, ud, err, errlen);
    gpt2_run *r = &g->runs[0];
    if (*rc == 0 && (gpt2_run_init(r, g->m) != 0 ||
                     !(g->off = calloc((size_t)g->m->tf->cfg.layers * g->m->tf->cfg.h, 1)) ||
                     !(g->job.off = calloc((size_t)g->m->tf->cfg.layers * g->m->tf->cfg.h, 1)))) {
        snprintf(err, errlen, "%s: out of memory for its trace", q->path);
        *rc = 1;
    }
    if (*rc != 0) {
        app_gpt_free(g);
        return NULL;
    }
    const tf_config *c = &g->m->tf->cfg;
    *rc = 2;
    char why[256];
    if (q->layer < 0 || q->layer >= c->layers)
        snprintf(err, errlen, "--layer %d: %s has %d layers", q->layer + 1, g->m->paths.name,
                 c->layers);
    else if (q->h && (c->d_model % q->h != 0 || q->h > ATTN_LAYER_MAX_HEADS))
        snprintf(err, errlen, "-H %d: must divide %s's d_model (%d)", q->h, g->m->paths.name,
                 c->d_model);
    else if (q->h && q->h != c->h && !tf_infer_can_split(g->m->tf))
        snprintf(err, errlen, "-H %d: %s's heads cannot be re-split (%s)", q->h, g->m->paths.name,
                 NO_SPLIT(g->m));
    else if (gpt2_run_text(r, q->text, strlen(q->text), why, sizeof why) != 0)
        snprintf(err, errlen, "--text: %s", why);
    else if (q->ablate[0] && gpt2_run_ablate(r, q->ablate, err, errlen) != 0)
        ;
    else if (q->kv && q->h && q->h != c->h)
        snprintf(err, errlen, "--kv-heads and -H: heads sharing K/V heads are not re-split");
    else if (q->kv && gpt2_run_regroup(r, q->kv, why, sizeof why) != 0)
        snprintf(err, errlen, "--kv-heads %d: %s (%s)", q->kv, why, g->m->paths.name);
    else if (gpt2_run_show(r, q->layer, q->h ? q->h : c->h) != 0)
        snprintf(err, errlen, "%s: out of memory for layer %d", q->path, q->layer + 1);
    else
        *rc = 0;
    if (*rc != 0) {
        app_gpt_free(g);
        return NULL;
    }
    /* where W stops, as --generate does; a file that does not say (or says wrongly,
       which --generate refuses): no end token, W stops at its length */
    if (model_eos_read(&g->eos, g->m->paths.dir, g->m->paths.config, g->m->cfg.family->type,
                       c->vocab, why, sizeof why) != 0)
        g->eos.count = 0;
    g->layer = q->layer;
    g->h = q->h ? q->h : c->h;
    g->mark = -1;
    g->kv = q->kv && q->kv != g->m->tf->spec.h_kv ? q->kv : 0;
    snprintf(g->text, sizeof g->text, "%s", q->text);
    memcpy(g->off, r->off, (size_t)c->layers * c->h);
    snprintf(g->path, sizeof g->path, "%s", q->path);
    return g;
}

/* err as the status, for APP_NOTICE_MS as every error (a load that failed on the
   worker is said outside app_apply, which would otherwise start the clock): a
   message longer than the line loses the start of its path, never its reason
   (which comes last) */
void app_gpt_say(app_state *s, const char *err) {
    const size_t len = strlen(err), room = sizeof s->status - 1;
    s->status_until = s->now_ms + APP_NOTICE_MS;
    s->notice[0] = '\0';
    s->dirty = 1;
    if (len <= room) {
        memcpy(s->status, err, len + 1);
        return;
    }
    size_t from = len - (room - 3); /* "…" is three bytes */
    while (from < len && ((unsigned char)err[from] & 0xC0) == 0x80) from++; /* a whole character */
    snprintf(s->status, sizeof s->status, "\xE2\x80\xA6%s", err + from);
}

/* g shown in place of the model before it (g is never NULL here) */
static void adopt_model(app_state *s, app_gpt *g) {
    const int overview = s->gpt ? s->gpt->overview_open : 0;
    app_write_halt(s);
    let_go(s->gpt);
    s->gpt = g;
    g->overview_open = overview;
    s->look.focus = 0;
    s->look.page = 0;
    rebuild(s);
    if (s->req.attached) /* the window; an export asks for its panel's (app_gpt_export_panel) */
        app_gpt_measure(s, s->lesson);
    if (!say_cut(s))
        snprintf(s->status, sizeof s->status, "%.60s: %d layers × %d heads, d_model %d%s",
                 g->m->paths.name, g->m->tf->cfg.layers, g->m->tf->cfg.h, g->m->tf->cfg.d_model,
                 gpt2_run_is_encoder(gpt_shown(g)) ? "; an encoder: attention in both directions"
                                                   : "");
}

void app_gpt_adopt(app_state *s, app_gpt *g, const char *err) {
    if (g)
        adopt_model(s, g);
    else /* the model shown stays; the status says why */
        app_gpt_say(s, err ? err : "the model could not be opened");
}

int app_gpt_open(app_state *s, const app_gpt_request *q, char *err, size_t errlen) {
    int rc = 0;
    app_gpt *g = app_gpt_load(q, NULL, NULL, &rc, err, errlen);
    if (!g) return rc;
    adopt_model(s, g);
    s->status[0] = '\0';
    return 0;
}

/* The next divisor of d_model above (dir 1) or below (-1) h whose re-split fits:
   0 when there is none. */
static int next_split(const app_gpt *g, int h, int dir) {
    const int d = g->m->tf->cfg.d_model, n = gpt_shown(g)->n > 0 ? gpt_shown(g)->n : 1;
    for (int k = h + dir; k >= 1 && k <= d && k <= ATTN_LAYER_MAX_HEADS; k += dir)
        if (d % k == 0) {
            /* scores and weights of one layer: at most 512 MB */
            if ((double)k * n * n * 8.0 > 512.0 * (1 << 20)) return 0;
            return k;
        }
    return 0;
}

static void say_split(app_state *s) {
    const app_gpt *g = s->gpt;
    const int own = g->m->tf->cfg.h;
    if (g->h == own)
        snprintf(s->status, sizeof s->status, "layer %d at its own %d heads", g->layer + 1, own);
    else
        snprintf(s->status, sizeof s->status,
                 "re-split: trained with %d heads, shown as %d (d_k = %d, scale 1/√%d)", own, g->h,
                 g->m->tf->cfg.d_model / g->h, g->m->tf->cfg.d_model / g->h);
}

static int set_layer(app_state *s, int layer) {
    app_gpt *g = s->gpt;
    const int layers = g->m->tf->cfg.layers;
    layer = ((layer % layers) + layers) % layers;
    g->layer = layer;
    g->ov.layer = layer;
    if (s->look.focus > g->h) s->look.focus = 0;
    gpt_want(s);
    snprintf(s->status, sizeof s->status, "layer %d of %d", layer + 1, layers);
    return 1;
}

/* X and Shift+X on a loaded model: one of its own heads removed or back, or every
   head back; the status says what the next token's probability does. */
static int remove_head(app_state *s, const app_action *a, const char *name) {
    app_gpt *g = s->gpt;
    const tf_config *c = &g->m->tf->cfg;
    if (g->h != c->h) {
        snprintf(s->status, sizeof s->status,
                 "X removes %s's own heads: back to h = %d (Up/Down) first", name, c->h);
        return 1;
    }
    if (a->kind == ACT_ABLATE_CLEAR) {
        memset(g->off, 0, (size_t)c->layers * c->h);
        g->say.on = 0;
        gpt_want(s);
        snprintf(s->status, sizeof s->status, "every head on again");
        return 1;
    }
    const int head = a->arg ? a->arg : s->look.focus;
    if (head < 1 || head > c->h) {
        snprintf(s->status, sizeof s->status, "X: focus a head first (1-9, or click it)");
        return 1;
    }
    unsigned char *o = &g->off[(size_t)g->layer * c->h + head - 1];
    *o = !*o;
    const gpt2_run *r = gpt_shown(g);
    if (!gpt2_run_is_encoder(r))
        g->say = (gpt_say){1, g->layer, head, *o, r->top[0], gpt2_run_probs(r)[r->top[0]], 0};
    else if (gpt2_run_fills(r) > 0) /* the first blank's most likely token */
        g->say = (gpt_say){1, g->layer, head, *o, r->fill_ids[0][0], r->fill_p[0][0], 1};
    else
        g->say = (gpt_say){1, g->layer, head, *o, 0, 0.0, -1};
    gpt_want(s);
    if (g->say.on) /* still computing: said when it is shown */
        snprintf(s->status, sizeof s->status, "head %d of layer %d %s: computing\xE2\x80\xA6", head,
                 g->layer + 1, *o ? "removed" : "back");
    return 1;
}

static int mask_hovered(app_state *s, const char *name);
/* J and Shift+J: the query heads share fewer K/V heads (the next divisor of the
   model's own below, down to one: multi-query) or more (up to its own); each new K/V
   head's projections the mean of the ones it replaces (regroup.h). */
static int regroup_key(app_state *s, int fewer) {
    app_gpt *g = s->gpt;
    const int own = g->m->tf->spec.h_kv, h = g->m->tf->cfg.h, cur = g->kv ? g->kv : own;
    if (g->h != h) {
        snprintf(s->status, sizeof s->status,
                 "J regroups the model's own %d heads' K/V: back to h = %d (Up/Down) first", h, h);
        return 1;
    }
    int k = cur;
    do k += fewer ? -1 : 1;
    while (k >= 1 && k <= own && own % k != 0);
    if (k < 1 || k > own) {
        snprintf(s->status, sizeof s->status,
                 fewer ? "K/V: one head shared by all %d query heads already (multi-query)"
                       : "K/V: the model's own %d K/V heads already",
                 fewer ? h : own);
        return 1;
    }
    g->kv = k == own ? 0 : k;
    s->look.page = 0;
    gpt_want(s);
    if (k == own)
        snprintf(s->status, sizeof s->status, "K/V as trained: %d K/V heads for %d query heads",
                 own, h);
    else
        snprintf(s->status, sizeof s->status,
                 "K/V regrouped: trained with %d, shown with %d (each the mean of %d; thin "
                 "bars: as trained)",
                 own, k, own / k);
    return 1;
}

int app_gpt_apply(app_state *s, const app_action *a) {
    app_gpt *g = s->gpt;
    if (!g) return -1;
    const tf_config *c = &g->m->tf->cfg;
    char name[41]; /* the status line is one line */
    snprintf(name, sizeof name, "%.40s", g->m->paths.name);
    switch (a->kind) {
    case ACT_H_UP:
    case ACT_H_DOWN: {
        if (g->kv) {
            snprintf(s->status, sizeof s->status,
                     "heads sharing regrouped K/V heads are not re-split: Shift+J back to %s's "
                     "own K/V first",
                     name);
            return 1;
        }
        if (!tf_infer_can_split(g->m->tf)) {
            snprintf(s->status, sizeof s->status, "%s's heads are not re-split: %s", name,
                     NO_SPLIT(g->m));
            return 1;
        }
        const int k = next_split(g, g->h, a->kind == ACT_H_UP ? 1 : -1);
        if (!k) {
            snprintf(s->status, sizeof s->status,
                     a->kind == ACT_H_UP
                         ? "no more heads: %d is the most d_model = %d splits into here"
                         : "no fewer heads: %d is the fewest that divides d_model = %d",
                     g->h, c->d_model);
            return 1;
        }
        g->h = k;
        if (s->look.focus > k) s->look.focus = 0;
        s->look.page = 0;
        gpt_want(s);
        say_split(s);
        return 1;
    }
    case ACT_D_UP:
    case ACT_D_DOWN:
        snprintf(s->status, sizeof s->status,
                 "d_model is %s's own (%d): its weights fix it; Up/Down re-split the heads", name,
                 c->d_model);
        return 1;
    case ACT_SEED:
    case ACT_WEIGHTS:
        snprintf(s->status, sizeof s->status,
                 "%s's weights are its own, trained: R and W change the random model only", name);
        return 1;
    case ACT_MASK:
        if (gpt2_run_is_encoder(gpt_shown(g))) return mask_hovered(s, name);
        snprintf(s->status, sizeof s->status,
                 "the causal mask is %s's own: it was trained never to see later tokens", name);
        return 1;
    case ACT_SCALE:
    case ACT_TEMP_UP:
    case ACT_TEMP_DOWN:
        snprintf(s->status, sizeof s->status,
                 "%s was trained with its scores scaled by 1/\xE2\x88\x9A%d (d_model / its %d "
                 "heads), at temperature 1: N and [ ] change the random model only",
                 name, c->d_model / g->m->tf->cfg.h, g->m->tf->cfg.h);
        return 1;
    case ACT_PAD:
        snprintf(s->status, sizeof s->status,
                 "padding is for batches of texts; %s reads one text here", name);
        return 1;
    case ACT_COMPARE:
        snprintf(s->status, sizeof s->status,
                 "compare pins a random model's view: not yet with a loaded model (re-split with "
                 "Up/Down to compare splits)");
        return 1;
    case ACT_TRAIN_LAYER: return set_layer(s, g->layer + (a->arg < 0 ? -1 : 1));
    case ACT_LAYER: /* from the overview: the layer, and the head clicked focused */
        g->overview_open = 0;
        set_layer(s, a->arg);
        if (a->x >= 1 && a->x <= g->h) s->look.focus = a->x;
        return 1;
    case ACT_OVERVIEW: /* its maps are computed when it opens (not kept by the run) */
        g->overview_open = !g->overview_open;
        if (g->overview_open) gpt_want(s);
        return 1;
    case ACT_KV_FEWER:
    case ACT_KV_MORE: return regroup_key(s, a->kind == ACT_KV_FEWER);
    case ACT_ABLATE:
    case ACT_ABLATE_CLEAR: return remove_head(s, a, name);
    default: return -1;
    }
}

/* M on an encoder: the token under the pointer (its label on either axis) becomes a
   blank, [MASK] in its place in the text. */
static int mask_hovered(app_state *s, const char *name) {
    app_gpt *g = s->gpt;
    const view_hit *h = &s->hover;
    const int token = h->kind == HIT_ROW_LABEL ? h->row : h->kind == HIT_COL_LABEL ? h->col : -1;
    char text[APP_EDIT_MAX], why[128];
    if (token < 0) {
        snprintf(s->status, sizeof s->status,
                 "%s sees both directions, no mask to switch: M makes the token under the "
                 "pointer (its label) a blank",
                 name);
        return 1;
    }
    if (gpt_fill_mask_token(gpt_shown(g), g->text, token, text, sizeof text, why, sizeof why) !=
        0) {
        snprintf(s->status, sizeof s->status, "M: %s", why);
        return 1;
    }
    if (app_gpt_text(s, text, 0) == 0)
        snprintf(s->status, sizeof s->status, "token %d is a blank: the panel fills it", token + 1);
    return 1;
}

int app_gpt_text(app_state *s, const char *text, int sample) {
    if (tok_blank(text)) { /* the model's tokenizer would take white space: the rule is tok's */
        snprintf(s->status, sizeof s->status, "%s", TOK_BLANK_WHY);
        return -1;
    }
    if (app_gpt_count(s, text) < 1) {
        snprintf(s->status, sizeof s->status, "the text has no token");
        return -1;
    }
    app_write_halt(s); /* a text of one's own: the written tokens go, and the mark */
    s->gpt->mark = -1;
    gpt_mark_next(s->gpt);
    snprintf(s->gpt->text, sizeof s->gpt->text, "%s", text);
    s->gpt->n_more = 0;
    gpt_want(s);
    s->sample = sample;
    if (!sample) tok_copy_fit(s->custom, sizeof s->custom, text); /* whole characters */
    s->look.page = 0;
    return 0;
}

int app_gpt_heads(const app_state *s) {
    return s->gpt ? gpt_shown(s->gpt)->shown_h : 0;
}

int app_gpt_own_heads(const app_state *s) {
    return s->gpt ? s->gpt->m->tf->cfg.h : 0;
}

int app_gpt_limit(const app_state *s) {
    return s->gpt ? gpt_shown(s->gpt)->inf->cap : 0;
}

int app_gpt_count(const app_state *s, const char *text) {
    const app_gpt *g = s->gpt;
    if (!g) return 0;
    const int n = model_tok_encode(g->m->tok, text, strlen(text), NULL, 0, NULL);
    return n > 0 ? n : 0;
}

int app_gpt_layer(const app_state *s, attn_layer *L) {
    const app_gpt *g = s->gpt;
    if (!g || gpt_shown(g)->n < 1) return -1;
    model_source src;
    gpt2_run_source(&src, gpt_shown(g));
    return model_source_layer(&src, gpt_shown(g)->shown, L);
}

void app_gpt_view(const app_state *s, view_state *vs) {
    const app_gpt *g = s->gpt;
    if (!g) return;
    vs->overview = &g->ov;
    vs->overview_open = g->overview_open;
    vs->next = &g->next;
    const gpt2_run *r = gpt_shown(g);
    vs->resplit = r->shown_h != g->m->tf->cfg.h;
    /* a re-split layer's heads are not the model's, an encoder without a blank has
       nothing of its own to judge by: MultiHead's measure, as the built-in model's
       (the encoder's said so) */
    if (vs->resplit || r->shown < 0 || !g->effects) return;
    if (!gpt2_run_measurable(r)) {
        if (gpt2_run_is_encoder(r)) vs->next_measure = VIEW_MEASURE_NO_BLANK;
        return;
    }
    vs->next_is_blank = gpt2_run_is_encoder(r);
    if (r->e_layer == r->shown) {
        vs->head_next_kl = r->e_kl;
        vs->head_next_top = r->e_top;
        vs->next_top_full = r->e_top_full;
    } else if (r->n > measure_cap(g)) {
        vs->next_measure = VIEW_MEASURE_TOO_LONG;
        vs->next_measure_cap = measure_cap(g);
    } else {
        vs->next_measure = VIEW_MEASURE_PENDING;
    }
}

void app_gpt_export_panel(app_state *s, view_panel panel) {
    if (!s->gpt) return;
    s->gpt->overview_open = panel == VIEW_PANEL_MODEL;
    s->gpt->next_k = panel == VIEW_PANEL_NEXT ? VIEW_NEXT_MAX : 5;
    if (panel == VIEW_PANEL_MODEL && gpt2_run_overview(gpt_shown(s->gpt)) != 0)
        app_gpt_say(s, "out of memory for the overview's maps");
    rebuild(s);
    app_gpt_measure(s, s->lesson && panel == VIEW_PANEL_ALL);
}

void app_gpt_measure(app_state *s, int on) {
    app_gpt *g = s->gpt;
    if (!g) return;
    g->effects = on != 0;
    if (measure_due(g)) want_measure(s);
}

int app_gpt_settings(const app_state *s, const char **path, int *layer, int *h, int *overview) {
    const app_gpt *g = s->gpt;
    if (s->gpt_wanted || s->gpt_loading || !g) { /* asked for: what it will show */
        if (!s->gpt_wanted && !s->gpt_loading) return 0;
        *path = s->gpt_want.path;
        *layer = s->gpt_want.layer;
        *h = s->gpt_want.h;
        *overview = 0;
        return 1;
    }
    *path = g->path;
    *layer = g->layer;
    *h = g->h == g->m->tf->cfg.h ? 0 : g->h;
    *overview = g->overview_open;
    return 1;
}

int app_gpt_check_view(const app_state *s, int layer, int h, char *err, size_t errlen) {
    return app_gpt_check(s->gpt, layer, h, err, errlen);
}

int app_gpt_check(const app_gpt *g, int layer, int h, char *err, size_t errlen) {
    const tf_config *c = &g->m->tf->cfg;
    if (layer < 0 || layer >= c->layers) {
        snprintf(err, errlen, "layer = %d: %s has %d layers", layer + 1, g->m->paths.name,
                 c->layers);
        return -1;
    }
    if (h && (c->d_model % h != 0 || h > ATTN_LAYER_MAX_HEADS)) {
        snprintf(err, errlen, "model-h = %d: must divide %s's d_model (%d)", h, g->m->paths.name,
                 c->d_model);
        return -1;
    }
    return 0;
}

void app_gpt_set_view(app_state *s, int layer, int h, int kv, int overview) {
    app_gpt *g = s->gpt;
    const int k = h ? h : g->m->tf->cfg.h;
    if (kv == g->m->tf->spec.h_kv) kv = 0; /* its own, as J writes it */
    if (k != g->h || kv != g->kv) {
        g->h = k;
        g->kv = kv;
        s->look.page = 0;
    }
    g->overview_open = overview;
    set_layer(s, layer);
    rebuild(s);
}

void app_gpt_close(app_state *s) {
    app_write_halt(s);
    let_go(s->gpt);
    s->gpt = NULL;
    s->gpt_wanted = 0;
    s->look.focus = 0;
    s->data_version++;
    s->layout_valid = 0;
}
