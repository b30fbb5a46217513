/* compare.c: the compare view. B pins what is on screen: the configuration and
 * the text are copied and their model computed once more, on its own (asked of
 * the jobs layer, which computes it on its runner, when that takes longer than a
 * recompute may keep the window waiting); the live view goes on changing beside it. The banner
 * names the settings in which the two differ. The pinned view follows the live one's look (theme,
 * colormap, contrast, zoom), so that only the model differs. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "state_internal.h"
#include "stats.h"

struct app_pin {
    mha_config cfg;
    tok_list toks;
    mha_model *m;
    int sample; /* 1-based, 0 custom */
    float *entropy;
    attn_layer layer;      /* m with toks, as the pinned pane draws it */
    mha_layer_text text;   /* the layer's texts and notes */
    unsigned long version; /* the pinned model's data version: never a live one's */
    view_state vs;         /* the pinned pane's state, made by app_compare_refresh */
    view_layout *L;
    char what[VIEW_COMPARE_MAX][2][48];
    int count; /* of what */
    /* computed in the background: once handed over (app_compare_request) m, layer,
       text, entropy, failed and err are the jobs layer's until app_compare_adopt */
    int wanted, handed;
    app_pin *next_dropped; /* in s->pins_dropped */
    int shown;             /* the UI thread has taken the model */
    int failed;
    char err[MHA_ERR_LEN];
};

/* The pinned model as a layer, and its heads' entropy. */
static void pin_derive(app_pin *p) {
    mha_layer_fill(&p->layer, &p->text, p->m, &p->toks);
    if (p->entropy) attn_head_entropy(p->entropy, &p->layer);
}

void app_pin_compute(app_pin *p) {
    p->failed = mha_model_compute(p->m, &p->cfg, &p->toks, p->err, sizeof p->err) != 0;
    if (!p->failed) pin_derive(p);
}

void app_pin_free(app_pin *p) {
    if (!p) return;
    mha_model_destroy(p->m);
    tok_free(&p->toks);
    free(p->entropy);
    free(p->L);
    free(p);
}

static int same_tokens(const tok_list *a, const tok_list *b) {
    if (a->count != b->count) return 0;
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->tokens[i], b->tokens[i]) != 0) return 0;
    return 1;
}

/* Pins the state's text with configuration cfg, in a model of their own. */
static app_pin *pin_create(const app_state *s, const mha_config *cfg, char *err, size_t errlen) {
    app_pin *p = calloc(1, sizeof *p);
    if (!p || !(p->L = calloc(1, sizeof *p->L)) || !(p->m = mha_model_create()) ||
        tok_copy(&p->toks, &s->toks) != 0) {
        snprintf(err, errlen, "cannot pin the view: out of memory");
        app_pin_free(p);
        return NULL;
    }
    static unsigned long pins;
    p->version = (1ul << 63) | ++pins; /* live versions count up from 0 */
    p->cfg = *cfg;
    p->sample = s->sample;
    mha_config_resolve(&p->cfg);
    if (mha_config_check(&p->cfg, p->toks.count, err, errlen) != 0) {
        app_pin_free(p);
        return NULL;
    }
    p->entropy = malloc((size_t)p->cfg.h * sizeof *p->entropy);
    /* as long as a recompute that goes to the background: asked of the jobs layer */
    if (s->req.attached &&
        app_cost_ms(&p->cfg, p->cfg.pad ? p->cfg.pad : p->toks.count, 0, 1) > s->req.threshold_ms) {
        p->wanted = 1;
        return p;
    }
    if (mha_model_compute(p->m, &p->cfg, &p->toks, err, errlen) != 0) {
        app_pin_free(p);
        return NULL;
    }
    pin_derive(p);
    p->shown = 1;
    return p;
}

/* Unpins p: freed now, or once the jobs layer that computes it hands it back. */
static void unpin(app_state *s, app_pin *p) {
    if (p && p->handed) {
        p->next_dropped = s->pins_dropped;
        s->pins_dropped = p;
    } else {
        app_pin_free(p);
    }
}

void app_pins_dropped_free(app_state *s) {
    while (s->pins_dropped) {
        app_pin *p = s->pins_dropped;
        s->pins_dropped = p->next_dropped;
        app_pin_free(p);
    }
}

app_pin *app_compare_request(app_state *s) {
    app_pin *p = s->pin;
    if (!p || !p->wanted || p->handed) return NULL;
    p->handed = 1;
    return p;
}

int app_compare_adopt(app_state *s, app_pin *p) {
    if (p != s->pin) { /* unpinned meanwhile */
        for (app_pin **q = &s->pins_dropped; *q; q = &(*q)->next_dropped)
            if (*q == p) {
                *q = p->next_dropped;
                break;
            }
        app_pin_free(p);
        return 0;
    }
    p->handed = p->wanted = 0; /* done: the model is this thread's */
    if (p->failed) {           /* out of memory: nothing to compare with */
        char why[MHA_ERR_LEN + 32];
        snprintf(why, sizeof why, "cannot pin the view: %s", p->err);
        app_pin_free(p);
        s->pin = NULL;
        app_notify(s, why, 1);
    } else {
        p->shown = 1;
    }
    s->layout_valid = 0;
    s->dirty = 1;
    return 1;
}

int app_compare_toggle(app_state *s) {
    if (s->pin) {
        unpin(s, s->pin);
        s->pin = NULL;
        snprintf(s->status, sizeof s->status, "compare off: the pinned view is gone");
    } else {
        char err[MHA_ERR_LEN];
        s->pin = pin_create(s, &s->cfg, err, sizeof err);
        if (!s->pin) {
            snprintf(s->status, sizeof s->status, "%s", err);
            return 0;
        }
        s->pinned_page = 0;
        snprintf(s->status, sizeof s->status,
                 "pinned: change a setting to compare it with the pinned view (B unpins)");
    }
    s->layout_valid = 0;
    return 1;
}

int app_compare_start(app_state *s, const cli_options *o, char *err, size_t errlen) {
    mha_config c = s->cfg;
    const mha_config *w = &o->compare_cfg;
    const unsigned set = o->compare_set;
    if (set & CLI_CMP_H) c.h = w->h;
    if (set & CLI_CMP_D) c.d_model = w->d_model;
    if (set & (CLI_CMP_H | CLI_CMP_D)) memset(c.ablate, 0, sizeof c.ablate); /* new heads */
    if (set & CLI_CMP_SEED) c.seed = w->seed;
    if (set & CLI_CMP_MASK) c.mask = w->mask;
    if (set & CLI_CMP_SCALE) c.no_scale = w->no_scale;
    if (set & CLI_CMP_TEMPERATURE) c.temperature = w->temperature;
    if (set & CLI_CMP_WEIGHTS) c.weights = w->weights;
    if (set & CLI_CMP_PAD) c.pad = w->pad;
    char why[MHA_ERR_LEN];
    unpin(s, s->pin);
    s->pin = pin_create(s, &c, why, sizeof why);
    if (!s->pin) {
        snprintf(err, errlen, "--compare: %s", why);
        return -1;
    }
    s->layout_valid = 0;
    return 0;
}

/* --- what differs ---------------------------------------------------------------- */

static const char *sample_label(char *buf, size_t len, int index) {
    const sample *smp = index ? samples_get(index - 1) : NULL;
    if (smp)
        snprintf(buf, len, "text: %s", smp->name);
    else
        snprintf(buf, len, "text: your own");
    return buf;
}

static void temperature_label(char *buf, size_t len, float t) {
    snprintf(buf, len, "T = %g", (double)(t > 0.0f ? t : 1.0f));
}

/* One differing setting as each side has it; returns the next index. */
static int put(app_pin *p, int i, const char *pinned, const char *live) {
    if (i >= VIEW_COMPARE_MAX) return i;
    snprintf(p->what[i][0], sizeof p->what[i][0], "%s", pinned);
    snprintf(p->what[i][1], sizeof p->what[i][1], "%s", live);
    return i + 1;
}

/* Fills p->what with the settings in which a (pinned) and b (live) differ, most
 * telling first; returns how many. */
static int differences(app_pin *p, const app_state *s) {
    /* the live side as drawn: while a recompute runs, the model shown */
    const mha_config *a = &p->cfg, *b = &s->m->cfg;
    const int live_sample = app_request_shown_sample(s);
    char x[48], y[48];
    int i = 0;
#define DIFF_INT(field, fmt)                                                                       \
    if (a->field != b->field) {                                                                    \
        snprintf(x, sizeof x, fmt, a->field);                                                      \
        snprintf(y, sizeof y, fmt, b->field);                                                      \
        i = put(p, i, x, y);                                                                       \
    }
    DIFF_INT(h, "h = %d")
    DIFF_INT(d_model, "d_model = %d")
#undef DIFF_INT
    if (a->d_model / a->h != b->d_model / b->h) {
        snprintf(x, sizeof x, "d\xE2\x82\x96 = %d", a->d_model / a->h);
        snprintf(y, sizeof y, "d\xE2\x82\x96 = %d", b->d_model / b->h);
        i = put(p, i, x, y);
    }
    if (a->mask != b->mask)
        i = put(p, i, a->mask == MHA_MASK_CAUSAL ? "causal mask" : "no mask",
                b->mask == MHA_MASK_CAUSAL ? "causal mask" : "no mask");
    if (a->no_scale != b->no_scale)
        i = put(p, i,
                a->no_scale ? "not scaled"
                            : "\xC3\xB7 \xE2\x88\x9A"
                              "d_k",
                b->no_scale ? "not scaled"
                            : "\xC3\xB7 \xE2\x88\x9A"
                              "d_k");
    const float ta = a->temperature > 0 ? a->temperature : 1.0f;
    const float tb = b->temperature > 0 ? b->temperature : 1.0f;
    if (ta != tb) {
        temperature_label(x, sizeof x, ta);
        temperature_label(y, sizeof y, tb);
        i = put(p, i, x, y);
    }
    if ((a->pad != 0) != (b->pad != 0))
        i = put(p, i, a->pad ? "padded" : "no padding", b->pad ? "padded" : "no padding");
    if (a->weights != b->weights)
        i = put(p, i, a->weights == MHA_WEIGHTS_PATTERNS ? "designed heads" : "random weights",
                b->weights == MHA_WEIGHTS_PATTERNS ? "designed heads" : "random weights");
    if (a->seed != b->seed) {
        snprintf(x, sizeof x, "seed %llu", (unsigned long long)a->seed);
        snprintf(y, sizeof y, "seed %llu", (unsigned long long)b->seed);
        i = put(p, i, x, y);
    }
    if (!same_tokens(&p->toks, &s->toks) || p->sample != live_sample) {
        sample_label(x, sizeof x, p->sample);
        sample_label(y, sizeof y, live_sample);
        if (strcmp(x, y) == 0) snprintf(x, sizeof x, "earlier text");
        i = put(p, i, x, y);
    }
    const int oa = mha_config_ablated_count(a), ob = mha_config_ablated_count(b);
    if (memcmp(a->ablate, b->ablate, sizeof a->ablate) != 0) {
        snprintf(x, sizeof x, oa ? "%d head%s off" : "every head on", oa, oa == 1 ? "" : "s");
        snprintf(y, sizeof y, ob ? "%d head%s off" : "every head on", ob, ob == 1 ? "" : "s");
        i = put(p, i, x, y);
    }
    return i;
}

void app_compare_refresh(app_state *s, const view_state *live) {
    app_pin *p = s->pin;
    if (!p || s->train_mode) return;
    view_state *pv = &p->vs;
    *pv = *live; /* the live view's look; the model, text and numbers are the pin's */
    pv->pinned = NULL;
    pv->pinned_layout = NULL;
    pv->layer = p->shown ? &p->layer : NULL; /* none yet: the pane says it is being computed */
    pv->text_replaced = p->toks.replaced;
    const sample *smp = p->sample ? samples_get(p->sample - 1) : NULL;
    pv->sample_name = smp ? smp->name : "custom";
    pv->sample_index = p->sample;
    pv->head_entropy = p->entropy;
    pv->head_divergence = NULL;
    pv->head_pass_cos = pv->head_change = NULL;
    pv->out_diff = NULL;
    pv->look.diff = 0;
    pv->step_raw = pv->step_scaled = pv->step_share = NULL;
    pv->train = NULL;
    pv->lesson = 0;
    pv->data_version = p->version;  /* the colour cache keeps the two models apart */
    pv->look.page = s->pinned_page; /* its own page: its heads are not the live ones */
    p->count = differences(p, s);
}

int app_compare_pages(const app_state *s, int *h) {
    if (h) *h = s->pin ? s->pin->cfg.h : 0;
    return s->pin && s->pin->L && s->pin->shown ? s->pin->L->pages : 0;
}

void app_compare_view(const app_state *s, view_state *vs) {
    const app_pin *p = s->pin;
    if (!p) return;
    vs->lesson = 0; /* two panes have no room for the lesson's panels */
    vs->pinned = &p->vs;
    vs->pinned_layout = p->L;
    vs->compare_count = p->count;
    for (int i = 0; i < vs->compare_count; i++) {
        vs->compare_what[i][0] = p->what[i][0];
        vs->compare_what[i][1] = p->what[i][1];
    }
}

int app_compare_pinned(const app_state *s, mha_config *cfg, const tok_list **toks, int *sample) {
    if (!s->pin) return 0;
    *cfg = s->pin->cfg;
    if (toks) *toks = &s->pin->toks;
    if (sample) *sample = s->pin->sample;
    return 1;
}

int app_compare_pin(app_state *s, const mha_config *cfg, const tok_list *toks, int sample,
                    char *err, size_t errlen) {
    app_state view = *s; /* pin_create reads the text and the jobs layer's threshold */
    if (toks) {
        view.toks = *toks;
        view.sample = sample;
    }
    app_pin *p = pin_create(&view, cfg, err, errlen);
    if (!p) return -1;
    unpin(s, s->pin);
    s->pin = p;
    s->layout_valid = 0;
    return 0;
}
