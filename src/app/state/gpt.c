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

/* why a model is not re-split (tf_infer_can_split is 0) */
#define NO_SPLIT(m)                                                                                \
    ((m)->tf->spec.pos == SPEC_POS_ROPE ? "RoPE pairs dimensions inside each head"                 \
                                        : "K/V heads are shared by groups of heads")
#include "samples.h"
#include "state_internal.h"

_Static_assert(GPT2_MAX_N <= VIEW_MAX_N, "the view lays out every position a model computes");

/* A change asked of the model, computed into the run not shown: the jobs
   layer's from app_gpt_job_take until app_gpt_job_done. */
struct app_gpt_job {
    app_gpt *g;
    gpt2_run *r;
    char text[APP_EDIT_MAX];
    unsigned char *off;
    int layer, h;
    int overview;    /* the overview's maps too */
    unsigned long v; /* the g->want_v it computes */
    int rc, out;
    char err[256];
};

/* What a key removed or restored, said once the run shows it. */
typedef struct {
    int on; /* 1: a head's change waits to be said */
    int layer, head, off, top;
    double before;
} gpt_say;

struct app_gpt {
    gpt2_model *m;
    gpt2_run runs[2]; /* runs[cur] is shown; the other is the job's while one is out */
    int cur;
    /* what the keys ask for: a run reaches it (app_gpt_job_run), then it is shown */
    char text[APP_EDIT_MAX];
    unsigned char *off;   /* (layers, h): heads removed */
    int layer;            /* 0-based */
    int h;                /* the model's own, or a re-split */
    unsigned long want_v; /* counts the changes asked for */
    int pending;          /* want_v is not computed nor being computed */
    int orphan;           /* dropped by the state while its job was out: the jobs layer frees it */
    gpt_say say;
    app_gpt_job job;
    int overview_open;
    int next_k;      /* tokens the panel shows: 5 in the window, 10 in --panel next */
    char path[4096]; /* as it was opened (a view file's model = PATH) */
    view_overview ov;
    const float *attn[TF_MAX_LAYERS];
    view_next next;
    char next_label[VIEW_NEXT_MAX][GPT2_LABEL];
    char after[GPT2_LABEL];
    model_source src;
};

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
static gpt2_run *shown(const app_gpt *g) {
    return (gpt2_run *)&g->runs[g->cur];
}

/* The state lets g go: freed now, or by the jobs layer once its job is back. */
static void let_go(app_gpt *g) {
    if (g && g->job.out)
        g->orphan = 1;
    else
        app_gpt_free(g);
}

int app_gpt_active(const app_state *s) {
    return s->gpt != NULL;
}

/* The overview's and the next-token panel's data from the run. */
static void rebuild(app_state *s) {
    app_gpt *g = s->gpt;
    const tf_config *c = &g->m->tf->cfg;
    const gpt2_run *r = shown(g);
    const size_t pp = (size_t)r->ov_n * r->ov_n; /* the maps of this run, or none yet */
    for (int i = 0; i < c->layers; i++) g->attn[i] = pp ? r->ov + (size_t)i * c->h * pp : NULL;
    g->ov = (view_overview){.name = g->m->paths.name,
                            .layers = c->layers,
                            .h = c->h,
                            .n = r->n,
                            .map_n = r->ov_n,
                            .attn = g->attn,
                            .tokens = r->label,
                            .layer = r->shown,
                            .off = r->off};
    const float *p = gpt2_run_probs(r);
    g->next.k = g->next_k ? g->next_k : 5;
    for (int k = 0; k < GPT2_TOP && k < VIEW_NEXT_MAX; k++) {
        model_tok_label(g->m->tok, r->top[k], g->next_label[k], GPT2_LABEL);
        g->next.token[k] = g->next_label[k];
        g->next.p[k] = p[r->top[k]];
        g->next.p_full[k] = r->any_off ? r->probs_full[r->top[k]] : -1.0f;
    }
    snprintf(g->after, sizeof g->after, "%s", r->n ? r->labels[r->n - 1] : "");
    g->next.after = g->after;
    g->next.cut = r->n < r->n_text;
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
    return s->gpt && gpt2_run_cut(shown(s->gpt), buf, len);
}

/* The run shown has just reached what was asked: the status says what a removed
   or restored head cost, or that the text was cut. */
static void say_reached(app_state *s) {
    app_gpt *g = s->gpt;
    gpt_say *w = &g->say;
    if (say_cut(s) || !w->on) return;
    w->on = 0;
    char label[GPT2_LABEL];
    model_tok_label(g->m->tok, w->top, label, sizeof label);
    snprintf(s->status, sizeof s->status, "head %d of layer %d %s: p(%s) %.1f %% → %.1f %%",
             w->head, w->layer + 1, w->off ? "removed" : "back", label, 100.0 * w->before,
             100.0 * gpt2_run_probs(shown(g))[w->top]);
    s->status_until = s->now_ms + APP_NOTICE_MS;
    s->notice[0] = '\0';
}

/* The job for what is asked, filled from g (the run not shown computes it). */
static void job_fill(app_gpt *g) {
    app_gpt_job *j = &g->job;
    j->g = g;
    j->r = &g->runs[!g->cur];
    memcpy(j->text, g->text, sizeof j->text);
    memcpy(j->off, g->off, (size_t)g->m->tf->cfg.layers * g->m->tf->cfg.h);
    j->layer = g->layer;
    j->h = g->h;
    j->overview = g->overview_open;
    j->v = g->want_v;
    j->rc = 0;
    j->err[0] = '\0';
}

/* What the keys ask for changed: computed here and now without a jobs layer,
   else asked of it (a change not yet taken is replaced by this one). */
static void want(app_state *s) {
    app_gpt *g = s->gpt;
    g->want_v++;
    s->dirty = 1;
    if (s->req.attached) {
        g->pending = 1;
        return;
    }
    job_fill(g);
    g->job.r = shown(g);
    app_gpt_job_run(&g->job);
    if (g->job.rc != 0) {
        snprintf(s->status, sizeof s->status, "%s", g->job.err);
        return;
    }
    rebuild(s);
    say_reached(s);
}

app_gpt_job *app_gpt_job_take(app_state *s) {
    app_gpt *g = s->gpt;
    if (!g || !g->pending || g->job.out) return NULL;
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
    const gpt2_goal goal = {j->text, strlen(j->text), j->off, j->layer, j->h, j->overview};
    j->rc = gpt2_run_reach(j->r, &goal, j->err, sizeof j->err);
}

int app_gpt_job_done(app_state *s, app_gpt_job *j) {
    app_gpt *g = j->g;
    j->out = 0;
    if (g->orphan) {
        app_gpt_free(g);
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
    return 2; /* the caller derives the picture from it */
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
    else if (gpt2_run_show(r, q->layer, q->h ? q->h : c->h) != 0)
        snprintf(err, errlen, "%s: out of memory for layer %d", q->path, q->layer + 1);
    else
        *rc = 0;
    if (*rc != 0) {
        app_gpt_free(g);
        return NULL;
    }
    g->layer = q->layer;
    g->h = q->h ? q->h : c->h;
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
    let_go(s->gpt);
    s->gpt = g;
    g->overview_open = overview;
    s->look.focus = 0;
    s->look.page = 0;
    rebuild(s);
    if (!say_cut(s))
        snprintf(s->status, sizeof s->status, "%.60s: %d layers × %d heads, d_model %d",
                 g->m->paths.name, g->m->tf->cfg.layers, g->m->tf->cfg.h, g->m->tf->cfg.d_model);
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
    const int d = g->m->tf->cfg.d_model, n = shown(g)->n > 0 ? shown(g)->n : 1;
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
    want(s);
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
        want(s);
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
    const gpt2_run *r = shown(g);
    g->say = (gpt_say){1, g->layer, head, *o, r->top[0], gpt2_run_probs(r)[r->top[0]]};
    want(s);
    if (g->say.on) /* still computing: said when it is shown */
        snprintf(s->status, sizeof s->status, "head %d of layer %d %s: computing\xE2\x80\xA6", head,
                 g->layer + 1, *o ? "removed" : "back");
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
        want(s);
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
        if (g->overview_open) want(s);
        return 1;
    case ACT_ABLATE:
    case ACT_ABLATE_CLEAR: return remove_head(s, a, name);
    default: return -1;
    }
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
    snprintf(s->gpt->text, sizeof s->gpt->text, "%s", text);
    want(s);
    s->sample = sample;
    if (!sample) tok_copy_fit(s->custom, sizeof s->custom, text); /* whole characters */
    s->look.page = 0;
    return 0;
}

int app_gpt_heads(const app_state *s) {
    return s->gpt ? shown(s->gpt)->shown_h : 0;
}

int app_gpt_own_heads(const app_state *s) {
    return s->gpt ? s->gpt->m->tf->cfg.h : 0;
}

int app_gpt_limit(const app_state *s) {
    return s->gpt ? shown(s->gpt)->inf->cap : 0;
}

int app_gpt_count(const app_state *s, const char *text) {
    const app_gpt *g = s->gpt;
    if (!g) return 0;
    const int n = model_tok_encode(g->m->tok, text, strlen(text), NULL, 0, NULL);
    return n > 0 ? n : 0;
}

int app_gpt_layer(const app_state *s, attn_layer *L) {
    const app_gpt *g = s->gpt;
    if (!g || shown(g)->n < 1) return -1;
    model_source src;
    gpt2_run_source(&src, shown(g));
    return model_source_layer(&src, shown(g)->shown, L);
}

void app_gpt_view(const app_state *s, view_state *vs) {
    const app_gpt *g = s->gpt;
    if (!g) return;
    vs->overview = &g->ov;
    vs->overview_open = g->overview_open;
    vs->next = &g->next;
    vs->resplit = shown(g)->shown_h != g->m->tf->cfg.h;
}

void app_gpt_export_panel(app_state *s, view_panel panel) {
    if (!s->gpt) return;
    s->gpt->overview_open = panel == VIEW_PANEL_MODEL;
    s->gpt->next_k = panel == VIEW_PANEL_NEXT ? VIEW_NEXT_MAX : 5;
    if (panel == VIEW_PANEL_MODEL && gpt2_run_overview(shown(s->gpt)) != 0)
        app_gpt_say(s, "out of memory for the overview's maps");
    rebuild(s);
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

void app_gpt_set_view(app_state *s, int layer, int h, int overview) {
    app_gpt *g = s->gpt;
    const int k = h ? h : g->m->tf->cfg.h;
    if (k != g->h) {
        g->h = k;
        s->look.page = 0;
    }
    g->overview_open = overview;
    set_layer(s, layer);
    rebuild(s);
}

void app_gpt_close(app_state *s) {
    let_go(s->gpt);
    s->gpt = NULL;
    s->gpt_wanted = 0;
    s->look.focus = 0;
    s->data_version++;
    s->layout_valid = 0;
}

int app_gpt_off_list(const app_state *s, char *buf, size_t len) {
    const app_gpt *g = s->gpt;
    if (len) buf[0] = '\0';
    if (s->gpt_wanted || s->gpt_loading || !g) { /* asked for: what it will remove */
        if (!s->gpt_wanted && !s->gpt_loading) return 0;
        snprintf(buf, len, "%s", s->gpt_want.ablate);
        return 1;
    }
    const tf_config *c = &g->m->tf->cfg;
    size_t at = 0;
    for (int l = 0; l < c->layers; l++)
        for (int h = 0; h < c->h; h++)
            if (g->off[(size_t)l * c->h + h] && at < len) { /* asked: shown once computed */
                const int w = snprintf(buf + at, len - at, "%s%d:%d", at ? "," : "", l + 1, h + 1);
                at += w > 0 ? (size_t)w : 0;
            }
    return 1;
}

int app_gpt_check_off(const app_gpt *g, const char *spec, char *err, size_t errlen) {
    const tf_config *c = &g->m->tf->cfg;
    for (const char *p = spec; *p;) {
        int l = 0, h = 0, used = 0;
        if (sscanf(p, "%d:%d%n", &l, &h, &used) != 2) break; /* the reader checked the form */
        if (l > c->layers || h > c->h) {
            snprintf(err, errlen,
                     "model-ablate = %.200s: %s has no head %d:%d (%d layers of %d heads)", spec,
                     g->m->paths.name, l, h, c->layers, c->h);
            return -1;
        }
        p += used;
        if (*p == ',') p++;
    }
    return 0;
}

void app_gpt_set_off(app_state *s, const char *spec) {
    app_gpt *g = s->gpt;
    if (!g) return;
    char now[APP_ABLATE_MAX];
    app_gpt_off_list(s, now, sizeof now);
    if (strcmp(now, spec) == 0) return; /* no recompute when the same heads are off */
    const tf_config *c = &g->m->tf->cfg;
    memset(g->off, 0, (size_t)c->layers * c->h);
    for (const char *p = spec; *p;) { /* checked: app_gpt_check_off */
        int l = 0, h = 0, used = 0;
        if (sscanf(p, "%d:%d%n", &l, &h, &used) != 2) break;
        if (l >= 1 && l <= c->layers && h >= 1 && h <= c->h)
            g->off[(size_t)(l - 1) * c->h + h - 1] = 1;
        p += used;
        if (*p == ',') p++;
    }
    g->say.on = 0;
    want(s);
}
