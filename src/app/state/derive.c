/* derive.c: the model shown as the attn_layer the view draws (its source, mha_source),
 * and the numbers the view draws that the core does not keep: each head's
 * entropy, how alike the heads are, the ablation's difference from the full
 * MultiHead, and the focused head's intermediate products for its step-through.
 * The layer follows every call; the numbers are recomputed only when the model
 * or the focused head changes: in the window (the jobs layer attached) the layer's
 * own numbers and the dark-field scan on the jobs layer, the focused head's here.
 * No SDL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_internal.h"
#include "stats.h"

/* Comparing every pair of heads costs h^2 n^2: above this, the panel says so. */
#define DIVERGENCE_MAX_H 16
#define DIVERGENCE_ROWS 32 /* query rows compared at most (evenly spaced) */

/* The layer's own numbers, whatever head is focused, in buffers of their own: a
   job's are swapped with the state's when they are shown (app_numbers_done). */
typedef struct {
    float *entropy;      /* (h) mean row entropy, bits */
    float *divergence;   /* (h, h) mean Jensen-Shannon divergence, bits; h <= 16 */
    int divergence_step; /* every how many rows the divergence was averaged */
    float base[2];       /* 1 - JS of unrelated heads, least and most; [1] 0: none */
    float *pass_cos;     /* (h, h) cosine of head_i W^O_i and head_j W^O_j; h <= 16 */
    float *change;       /* (h) ||head_i W^O_i|| / ||MultiHead||; h <= 16 */
    int contrib_step;    /* every how many rows the contributions were compared; 0 none */
    size_t cap_entropy, cap_divergence, cap_pass, cap_change; /* floats */
} layer_nums;

/* The layer's own numbers (and the dark-field scan) being computed off the window's
   thread: the jobs layer's from app_numbers_take until app_numbers_done. */
struct app_numbers {
    attn_layer L;    /* a loaded model's shown run's layer, which nothing writes
                        meanwhile, or the built-in model's copied (below) */
    app_gpt *g;      /* the loaded model it is of, read until app_numbers_done; NULL */
    unsigned long v; /* the data_version they are for */
    layer_nums nums; /* computed into */
    int scan;        /* 1: the dark-field scan asked for too */
    int dark;        /* its result: the fixed scale draws a dark field ... */
    double top;      /* ... a row's largest weight on average */
    /* the built-in model's layer, which the window recomputes in place (a short
       change on its own thread): what the numbers read of it, copied at the take */
    float *attn, *heads, *w_o, *out_full;
    size_t cap_attn, cap_heads, cap_w_o, cap_out; /* floats */
    int out, rc;
};

struct app_derived {
    attn_layer layer;       /* s->m with s->toks, as the view sees it */
    mha_layer_text text;    /* its positions' texts and heads' notes */
    const mha_model *of;    /* the model the layer describes */
    unsigned long version;  /* data_version these numbers are for; 0 none */
    unsigned long of_data;  /* data_version the layer's own numbers (all but the focused
                               head's) are for: a focus alone computes only its head's */
    unsigned long diff_v;   /* data_version diff is for */
    unsigned long tried_v;  /* data_version whose numbers a job could not compute */
    int head;               /* focused head they are for (1-based), 0 none */
    int has_raw, has_share; /* the layer held what raw and scaled, share are made from */
    layer_nums nums;        /* the layer's own, of of_data */
    app_numbers job;        /* the same, being computed off the window's thread */
    float *diff;            /* (n, d_model) MultiHead - unablated MultiHead */
    float *raw;             /* (n, n) Q_i K_i^T of the focused head */
    float *scaled;          /* (n, n) raw times the layer's scale, before the mask */
    float *share;           /* (n, d_model) head_i W^O_i */
    size_t cap_diff, cap_raw, cap_scaled, cap_share; /* floats */
};

static void nums_free(layer_nums *u) {
    free(u->entropy), free(u->divergence), free(u->pass_cos), free(u->change);
}

void app_derived_free(app_derived *d) {
    if (!d) return;
    nums_free(&d->nums);
    nums_free(&d->job.nums);
    free(d->job.attn), free(d->job.heads), free(d->job.w_o), free(d->job.out_full);
    free(d->diff), free(d->raw), free(d->scaled), free(d->share);
    free(d);
}

/* Grows *p to at least want floats. */
static int reserve(float **p, size_t *cap, size_t want) {
    if (want <= *cap) return 0;
    float *n = realloc(*p, want * sizeof *n);
    if (!n) return -1;
    *p = n;
    *cap = want;
    return 0;
}

/* A loaded model's layer is long (up to 1024 tokens: about 0.2 s of these numbers),
   the built-in model's up to 512: with the jobs layer attached the layer's own
   numbers and the dark-field scan are computed there (training mode's learner
   keeps them here). */
static int off_thread(const app_state *s) {
    return s->req.attached && (s->gpt || !s->train_mode);
}

/* 1 when the fixed 0..1 scale draws a dark field: a row's largest weight under a
 * quarter on average over every head's text rows (n = 512: about 0.05); *top gets
 * that average. */
static int dark_field(const attn_layer *L, double *top) {
    const int rows = L->n_real > 0 ? L->n_real : L->n;
    double sum = 0.0;
    for (int i = 0; i < L->h; i++)
        for (int r = 0; r < rows; r++) {
            const float *a = L->attn + ((size_t)i * L->n + r) * L->n;
            float m = 0.0f;
            for (int j = 0; j < L->n; j++) m = a[j] > m ? a[j] : m;
            sum += m;
        }
    *top = rows > 0 && L->h > 0 ? sum / ((double)rows * L->h) : 1.0;
    return *top < 0.25;
}

/* In the window, the layer's fixed scale turning dark (a text made long) switches
 * the contrast to each row's maximum, once, and says so; K moves on from there.
 * dark and top: dark_field's of the layer shown. */
static void follow_dark_field(app_state *s, int dark, double top) {
    if (s->auto_contrast && dark && !s->dark_field && s->look.contrast == 0) {
        s->look.contrast = 1;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "rows scaled to their max: a row's largest is %.2g on average (K: log, fixed)",
                 top);
        app_notify(s, msg, 1); /* on the status line, where the window's messages are */
    }
    s->dark_field = dark;
}

int app_derive_layer(app_state *s) {
    if (!s->derived) s->derived = calloc(1, sizeof *s->derived);
    app_derived *d = s->derived;
    if (!d) return -1;
    const attn_layer *L = &d->layer;
    if (s->gpt) { /* a loaded model: its layer shown */
        app_gpt_layer(s, &d->layer);
    } else {
        const mha_source_ctx ctx = {s->m, &s->toks, &d->text};
        const model_source src = mha_source(&ctx);
        model_source_layer(&src, 0, &d->layer); /* pointers: cheap */
    }
    d->of = s->m;
    /* (with the jobs layer attached the scan goes with the layer's numbers) */
    if (L->n >= 1 && L->attn && s->dark_version != s->data_version && !s->train_mode &&
        !off_thread(s)) {
        double top = 1.0;
        const int dark = dark_field(L, &top);
        follow_dark_field(s, dark, top);
        s->dark_version = s->data_version;
    }
    return 0;
}

/* The focused head the numbers are for: 0 for none (or one the layer lacks). */
static int focused(const app_state *s, const attn_layer *L) {
    return s->look.focus > 0 && s->look.focus <= L->h ? s->look.focus : 0;
}

int app_stage_count(const app_state *s) {
    return s->derived ? view_steps_count(&s->derived->layer) : 9;
}

int app_derive_stale(const app_state *s) {
    const app_derived *d = s->derived;
    return !d || d->of != s->m || d->version != s->data_version || d->head != focused(s, &d->layer);
}

void app_derive_after(app_state *s) {
    if (s->applying)
        app_derive_layer(s); /* the action derives at its end (app_apply) */
    else
        app_derive(s);
}

/* The layer's own numbers, whatever head is focused: each head's entropy, how alike
   the heads are (and the baseline), what they pass on. Reads L only: a worker may
   run it. 0, or -1 out of memory. */
static int layer_numbers(layer_nums *u, const attn_layer *L) {
    const int n = L->n, h = L->h;
    if (reserve(&u->entropy, &u->cap_entropy, (size_t)h) ||
        (h <= DIVERGENCE_MAX_H && reserve(&u->divergence, &u->cap_divergence, (size_t)h * h)))
        return -1;
    attn_head_entropy(u->entropy, L);
    /* every pair of heads costs n^2 a row: at most about 32 rows are compared */
    const int rows = L->n_real > 0 ? L->n_real : n;
    u->divergence_step = (rows + DIVERGENCE_ROWS - 1) / DIVERGENCE_ROWS;
    u->base[0] = u->base[1] = 0.0f;
    if (h <= DIVERGENCE_MAX_H) {
        attn_head_divergence(u->divergence, L, u->divergence_step);
        /* and what unrelated heads would read there: the scale's baseline */
        if (attn_alike_baseline(&u->base[0], &u->base[1], L, u->divergence_step) != 0)
            u->base[0] = u->base[1] = 0.0f;
    }
    /* what the heads pass on (head_i W^O_i) over about 32 of all n rows: 64 d^2 FLOPs */
    u->contrib_step = 0;
    if (h <= DIVERGENCE_MAX_H && L->heads && L->w_o && L->out_full &&
        reserve(&u->pass_cos, &u->cap_pass, (size_t)h * h) == 0 &&
        reserve(&u->change, &u->cap_change, (size_t)h) == 0) {
        const int step = (n + DIVERGENCE_ROWS - 1) / DIVERGENCE_ROWS;
        if (attn_head_contrib(u->pass_cos, u->change, L, step) == 0) u->contrib_step = step;
    }
    return 0;
}

int app_derive(app_state *s) {
    s->counts->derives++;
    if (app_derive_layer(s) != 0) return -1;
    app_derived *d = s->derived;
    const attn_layer *L = &d->layer;
    const int focus = focused(s, L);
    if (d->version == s->data_version && d->head == focus) return 0;
    if (L->n < 1 || !L->attn) return 0; /* nothing computed yet: nothing derived */
    const size_t nd = (size_t)L->n * L->d_model, nn = (size_t)L->n * L->n;
    d->version = 0;
    if (d->diff_v != s->data_version) { /* the ablation's difference: n d, cheap */
        if (reserve(&d->diff, &d->cap_diff, nd)) return -1;
        for (size_t k = 0; k < nd; k++) d->diff[k] = L->out[k] - L->out_full[k];
        d->diff_v = s->data_version;
    }
    if (d->of_data != s->data_version && !off_thread(s)) { /* (else app_numbers_take) */
        d->of_data = 0;
        s->counts->layer_numbers++;
        if (layer_numbers(&d->nums, L) != 0) return -1;
        d->of_data = s->data_version;
    }
    d->head = 0;
    if (focus) {
        if (reserve(&d->raw, &d->cap_raw, nn) || reserve(&d->scaled, &d->cap_scaled, nn) ||
            reserve(&d->share, &d->cap_share, nd))
            return -1;
        /* what the layer holds the tensors for (a loaded model's grouped K/V heads
           read RoPE's rotated Q and K; one whose Concat does not fit has no share) */
        d->has_raw = attn_head_scores_ok(L);
        d->has_share = L->heads && L->w_o;
        if (d->has_raw) attn_head_raw_scores(d->raw, L, focus - 1);
        /* the scale the scores were made with (attn_scale, the one place it is computed) */
        if (d->has_raw)
            for (size_t k = 0; k < nn; k++) d->scaled[k] = d->raw[k] * L->scale;
        if (d->has_share) attn_head_output(d->share, L, focus - 1);
        d->head = focus;
    }
    d->version = s->data_version;
    return 0;
}

void app_derived_view(const app_state *s, view_state *vs) {
    const app_derived *d = s->derived;
    if (!d || d->of != s->m) return; /* app_derive has not seen this model: nothing shown */
    vs->layer = &d->layer;
    vs->text_replaced = s->toks.replaced;
    if (d->version != s->data_version) return;
    const layer_nums *u = &d->nums;
    if (d->of_data == s->data_version) {
        vs->head_entropy = u->entropy;
        vs->head_divergence = d->layer.h <= DIVERGENCE_MAX_H ? u->divergence : NULL;
        vs->divergence_step = u->divergence_step;
        vs->alike_base_lo = u->base[0];
        vs->alike_base_hi = u->base[1];
        if (u->contrib_step > 0 && d->layer.h <= DIVERGENCE_MAX_H) {
            vs->head_pass_cos = u->pass_cos;
            vs->head_change = u->change;
            vs->contrib_step = u->contrib_step;
        }
    } else {
        vs->numbers_pending = app_numbers_wanted(s) || d->job.out; /* none claimed meanwhile */
    }
    vs->out_diff = d->diff;
    if (d->head && d->head == s->look.focus) {
        vs->step_raw = d->has_raw ? d->raw : NULL;
        vs->step_scaled = d->has_raw ? d->scaled : NULL;
        vs->step_share = d->has_share ? d->share : NULL;
    }
}

int app_numbers_wanted(const app_state *s) {
    const app_derived *d = s->derived;
    return d && off_thread(s) && d->version == s->data_version && d->of_data != s->data_version &&
           d->tried_v != s->data_version && d->layer.n >= 1 && d->layer.attn;
}

/* The built-in model's layer copied into the job's buffers, the job's L pointing at
   them: what the numbers and the scan read (the attention, head_i, W^O, the output
   with every head on); nothing else of the model. 0, or -1 out of memory. */
static int copy_layer(app_numbers *j, const attn_layer *L) {
    const size_t nn = (size_t)L->h * L->n * L->n, hd = (size_t)L->h * L->d_k;
    const size_t heads = hd * L->n, w_o = hd * L->d_model, nd = (size_t)L->n * L->d_model;
    const int pass = L->heads && L->w_o && L->out_full;
    if (reserve(&j->attn, &j->cap_attn, nn) ||
        (pass && (reserve(&j->heads, &j->cap_heads, heads) || reserve(&j->w_o, &j->cap_w_o, w_o) ||
                  reserve(&j->out_full, &j->cap_out, nd))))
        return -1;
    attn_layer c = *L;
    c.tokens = NULL, c.x_what = NULL, c.head_note = NULL;
    c.x = c.w_q = c.w_k = c.w_v = c.q = c.k = c.v = c.scores = c.concat = c.out = NULL;
    c.q_unrot = c.q_rot = c.k_unrot = c.k_rot = NULL;
    c.attn = memcpy(j->attn, L->attn, nn * sizeof(float));
    c.heads = pass ? memcpy(j->heads, L->heads, heads * sizeof(float)) : NULL;
    c.w_o = pass ? memcpy(j->w_o, L->w_o, w_o * sizeof(float)) : NULL;
    c.out_full = pass ? memcpy(j->out_full, L->out_full, nd * sizeof(float)) : NULL;
    j->L = c;
    return 0;
}

app_numbers *app_numbers_take(app_state *s) {
    app_derived *d = s->derived;
    if (!app_numbers_wanted(s) || d->job.out) return NULL;
    app_numbers *j = &d->job;
    j->L = d->layer;
    j->g = NULL;
    if (!s->gpt && copy_layer(j, &d->layer) != 0) { /* the panels say "not computed" */
        d->tried_v = s->data_version;
        s->dirty = 1;
        return NULL;
    }
    j->v = s->data_version;
    if (s->gpt) j->g = app_gpt_read_begin(s);
    j->scan = s->dark_version != s->data_version && !s->train_mode;
    j->rc = 0;
    j->out = 1;
    s->counts->layer_numbers++;
    return j;
}

void app_numbers_run(app_numbers *j) {
    if (j->scan) j->dark = dark_field(&j->L, &j->top);
    j->rc = layer_numbers(&j->nums, &j->L);
}

int app_numbers_done(app_state *s, app_numbers *j) {
    app_derived *d = s->derived;
    j->out = 0;
    app_gpt_read_end(j->g);
    if (j->v != s->data_version) return 0;    /* stale: dropped (the next take is the state's) */
    if (j->scan && s->dark_version != j->v) { /* the scan holds whatever the numbers do */
        follow_dark_field(s, j->dark, j->top);
        s->dark_version = j->v;
    }
    if (j->rc != 0) {
        d->tried_v = j->v; /* out of memory: the panels say "not computed" */
        s->dirty = 1;
        return 1;
    }
    const layer_nums t = d->nums; /* handed over by swapping: the job's buffers are the old ones */
    d->nums = j->nums;
    j->nums = t;
    d->of_data = j->v;
    s->dirty = 1;
    return 1;
}
