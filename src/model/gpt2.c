/* gpt2.c: a checkpoint opened and a text run through it (gpt2.h). */
#define _POSIX_C_SOURCE 200809L
#include "gpt2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layers.h"
#include "model_pages.h"
#include "regroup.h"
#include "sublayer.h"

int gpt2_load(gpt2_model **out, const char *path, ckpt_progress_fn progress, void *ud, char *err,
              size_t errlen) {
    *out = NULL;
    gpt2_model *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "%s: out of memory", path);
        return 1;
    }
    int rc = ckpt_resolve(path, &m->paths, err, errlen);
    if (rc != 0) model_fetch_say(err, errlen, path); /* a missing folder: what to download */
    if (rc == 0) rc = ckpt_config_read(&m->cfg, m->paths.config, err, errlen);
    /* the tokenizer before the weights: a broken vocab.json is found in a moment */
    if (rc == 0) rc = gpt2_open_tokenizer(m, err, errlen);
    if (rc == 0) rc = ckpt_load(&m->paths, &m->cfg, &m->tf, progress, ud, err, errlen);
    if (rc != 0) {
        gpt2_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void gpt2_free(gpt2_model *m) {
    if (!m) return;
    tf_destroy(m->tf);
    model_tok_free(m->tok);
    free(m);
}

int gpt2_max_tokens(const gpt2_model *m) {
    const tf_config *c = &m->tf->cfg;
    int n = c->ctx < GPT2_MAX_N ? c->ctx : GPT2_MAX_N;
    while (n > 1 && tf_infer_bytes(m->tf, n, c->h) > GPT2_TRACE_BYTES) n--;
    return n;
}

int gpt2_run_init(gpt2_run *r, const gpt2_model *m) {
    memset(r, 0, sizeof *r);
    r->m = r->own = m;
    r->kv = m->tf->spec.h_kv;
    r->shown = r->shown_h = -1;
    const tf_config *c = &m->tf->cfg;
    r->inf = tf_infer_create(m->tf, gpt2_max_tokens(m), c->h);
    r->off = calloc((size_t)c->layers * c->h, 1);
    r->probs_full = malloc((size_t)c->vocab * sizeof(float));
    r->e_layer = -1;
    r->e_kl = malloc((size_t)c->h * sizeof(float));
    r->e_top = malloc((size_t)c->h * sizeof(int));
    if (!r->inf || !r->off || !r->probs_full || !r->e_kl || !r->e_top) {
        gpt2_run_free(r);
        return -1;
    }
    const model_spec *s = &m->tf->spec;
    if (!s->causal && s->mlm) { /* an encoder with its masked-LM head */
        r->fill = tf_fill_create(m->tf, GPT2_FILL_MAX < c->ctx ? GPT2_FILL_MAX : c->ctx);
        r->fill_lp_full = malloc((size_t)GPT2_FILL_MAX * c->vocab * sizeof(float));
        if (!r->fill || !r->fill_lp_full) {
            gpt2_run_free(r);
            return -1;
        }
    }
    return 0;
}

void gpt2_run_free(gpt2_run *r) {
    tf_infer_destroy(r->inf);
    free(r->off);
    free(r->probs_full);
    free(r->s_scores);
    free(r->s_attn);
    free(r->s_concat);
    free(r->s_out);
    free(r->s_heads);
    free(r->s_full);
    tf_fill_destroy(r->fill);
    free(r->fill_lp_full);
    free(r->e_kl);
    free(r->e_top);
    free(r->s_qpre);
    free(r->s_kpre);
    free(r->probs_own);
    tf_regroup_free(r->kvm.tf);
    free(r->s_x);
    free(r->ov);
    memset(r, 0, sizeof *r);
    r->shown = r->shown_h = r->e_layer = -1;
}

/* The ten most likely ids of probs, most likely first (ties: the lower id). */
static void top_ids(int *top, const float *p, int vocab) {
    int k = 0;
    for (int id = 0; id < vocab; id++) {
        if (k == GPT2_TOP && !(p[id] > p[top[GPT2_TOP - 1]])) continue;
        int at = k < GPT2_TOP ? k : GPT2_TOP - 1; /* full: the last one drops out */
        while (at > 0 && p[id] > p[top[at - 1]]) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = id;
        if (k < GPT2_TOP) k++;
    }
}

static int first_off_layer(const gpt2_run *r) {
    const tf_config *c = &r->m->tf->cfg;
    for (size_t i = 0; i < (size_t)c->layers * c->h; i++)
        if (r->off[i]) return (int)(i / c->h);
    return -1;
}

static double clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

float gpt2_run_fill_p(const gpt2_run *r, int i, int id) {
    const int V = r->m->tf->cfg.vocab;
    if (i < 0 || i >= gpt2_run_fills(r) || id < 0 || id >= V) return 0.0f;
    const float *row = r->fill->logits + (size_t)i * V; /* the last fill_masks: heads as now */
    float mx = row[0];
    for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
    return (float)(exp((double)row[id] - mx) / sum);
}

/* The masked-LM head on the masks of the last forward: each mask's top ids and
   probabilities; with full, also every id's log-probability (the forward had every
   head on). */
static void fill_masks(gpt2_run *r, int full) {
    const int m = gpt2_run_fills(r), V = r->m->tf->cfg.vocab;
    if (m < 1) return;
    tf_fill_run(r->fill, r->inf, r->mask_pos, m, GPT2_TOP, &r->fill_ids[0][0], &r->fill_p[0][0]);
    if (!full) return;
    for (int i = 0; i < m; i++) { /* log-softmax, the sum in double as fill.c's */
        const float *row = r->fill->logits + (size_t)i * V;
        float *lp = r->fill_lp_full + (size_t)i * V;
        float mx = row[0];
        for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
        double sum = 0.0;
        for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
        const double lse = (double)mx + log(sum);
        for (int v = 0; v < V; v++) lp[v] = (float)((double)row[v] - lse);
    }
}

static void run_from(gpt2_run *r, int text_changed, int keep);

/* The model's own distribution on r's text, every head on, into probs_own (a
   regrouped run's reference): a forward of its own weights on a run of n tokens
   made for it. Left as it was when out of memory. */
static void own_probs(gpt2_run *r) {
    const transformer *tf = r->own->tf;
    tf_infer *t = r->probs_own ? tf_infer_create(tf, r->n, tf->cfg.h) : NULL;
    if (!t) return;
    tf_infer_run(t, r->ids, r->n, NULL, 0);
    memcpy(r->probs_own, t->probs, (size_t)tf->cfg.vocab * sizeof(float));
    tf_infer_destroy(t);
}

int gpt2_run_regroup(gpt2_run *r, int kv, char *err, size_t errlen) {
    const gpt2_model *own = r->own;
    if (kv == r->kv) return 0;
    transformer *t = NULL;
    if (kv != own->tf->spec.h_kv && !(t = tf_regroup_kv(own->tf, kv, err, errlen))) return -1;
    tf_infer *inf = tf_infer_create(t ? t : own->tf, r->inf->cap, own->tf->cfg.h);
    float *po = r->probs_own ? r->probs_own : malloc((size_t)own->tf->cfg.vocab * sizeof(float));
    if (!inf || !po) {
        tf_infer_destroy(inf);
        tf_regroup_free(t);
        if (po != r->probs_own) free(po);
        snprintf(err, errlen, "out of memory for %d K/V heads", kv);
        return -1;
    }
    tf_infer_destroy(r->inf);
    tf_regroup_free(r->kvm.tf);
    r->inf = inf;
    r->probs_own = po;
    r->kvm = *own;
    r->kvm.tf = t;
    r->kvm.cfg.spec.h_kv = kv;
    r->m = t ? &r->kvm : own;
    r->kv = kv;
    if (r->shown >= 0) r->shown_h = own->tf->cfg.h; /* no re-split of shared K/V heads */
    if (r->n >= 1) run_from(r, 1, 0);               /* the fresh run computes every layer */
    return 0;
}

static int show_rows(gpt2_run *r, int layer, int h, int keep);

/* Brings the forward to r's tokens and heads, computing what changed only
   (tf_infer_update); with heads removed, the distribution with every head on is
   kept first when the text changed (it stays while only heads change). An
   encoder's masks are filled the same way: every head on, then as removed. keep:
   the first tokens the text kept (all of them when it did not change): the shown
   layer's rows before it are kept too when no layer up to it was computed in full. */
static void run_from(gpt2_run *r, int text_changed, int keep) {
    const tf_config *c = &r->m->tf->cfg;
    const double t0 = clock_ms();
    const int was_off = r->any_off;
    r->any_off = first_off_layer(r) >= 0;
    int from = c->layers;
    if (text_changed || !r->any_off || !was_off) {
        /* every head on: the reference the panel compares against */
        from = tf_infer_update(r->inf, r->ids, r->n, NULL);
        memcpy(r->probs_full, r->inf->probs, (size_t)c->vocab * sizeof(float));
        fill_masks(r, 1);
    }
    if (r->any_off) {
        const int f = tf_infer_update(r->inf, r->ids, r->n, r->off);
        from = f < from ? f : from;
        fill_masks(r, 0);
    }
    for (int i = 0; i < gpt2_run_fills(r); i++)
        for (int k = 0; k < GPT2_TOP; k++)
            r->fill_p_full[i][k] = expf(r->fill_lp_full[(size_t)i * c->vocab + r->fill_ids[i][k]]);
    r->ms_from = from < c->layers ? from : 0;
    if (text_changed && r->m != r->own) own_probs(r);
    r->ov_n = 0; /* the overview is of the run before */
    top_ids(r->top, r->inf->probs, c->vocab);
    r->ms = clock_ms() - t0;
    if (r->shown >= 0) {
        const int layer = r->shown, h = r->shown_h;
        r->shown = -1;
        show_rows(r, layer, h, layer < from ? keep : 0);
    }
}

int gpt2_run_text(gpt2_run *r, const char *text, size_t len, char *err, size_t errlen) {
    int ids[GPT2_MAX_N];
    const int cap = r->inf->cap;
    int replaced = 0;
    const int total = model_tok_encode(r->m->tok, text, len, ids, cap, &replaced);
    if (total < 1) {
        snprintf(err, errlen, "the text has no token");
        return -1;
    }
    gpt2_run_tokens(r, ids, total < cap ? total : cap);
    r->n_text = total;
    r->replaced = replaced;
    return 0;
}

void gpt2_run_tokens(gpt2_run *r, const int *ids, int n) {
    if (n > r->inf->cap) n = r->inf->cap;
    if (n < 1) return;
    r->n_text = n;
    r->replaced = 0;
    int keep = 0; /* the tokens the new text begins with, as the last one did */
    while (keep < n && keep < r->n && r->ids[keep] == ids[keep]) keep++;
    r->n = n;
    memmove(r->ids, ids, (size_t)n * sizeof(int));
    const int mask = r->fill ? model_tok_mask_id(r->m->tok) : -1;
    r->n_mask = 0;
    r->e_layer = -1; /* measured on the text before */
    for (int i = 0; i < n; i++) {
        model_tok_label(r->m->tok, r->ids[i], r->labels[i], GPT2_LABEL);
        r->label[i] = r->labels[i];
        if (mask >= 0 && r->ids[i] == mask && r->n_mask++ < GPT2_FILL_MAX)
            r->mask_pos[r->n_mask - 1] = i;
    }
    run_from(r, 1, keep);
}

int gpt2_run_cut(const gpt2_run *r, char *buf, size_t len) {
    if (r->n >= r->n_text) return 0;
    snprintf(buf, len, "text cut to its first %d of %d tokens (%.40s holds %d positions)", r->n,
             r->n_text, r->m->paths.name, r->inf->cap);
    return 1;
}

void gpt2_run_set_off(gpt2_run *r, int layer, int head, int off) {
    const tf_config *c = &r->m->tf->cfg;
    if (layer < 0 || layer >= c->layers || head < 0 || head >= c->h || r->n < 1) return;
    unsigned char *o = &r->off[(size_t)layer * c->h + head];
    if (*o == (off != 0)) return;
    *o = off != 0;
    run_from(r, 0, r->n);
}

int gpt2_run_is_off(const gpt2_run *r, int layer, int head) {
    const tf_config *c = &r->m->tf->cfg;
    if (layer < 0 || layer >= c->layers || head < 0 || head >= c->h) return 0;
    return r->off[(size_t)layer * c->h + head];
}

int gpt2_run_ablate(gpt2_run *r, const char *spec, char *err, size_t errlen) {
    const tf_config *c = &r->m->tf->cfg;
    for (const char *p = spec; *p;) {
        int l = 0, hd = 0, used = 0;
        if (sscanf(p, "%d:%d%n", &l, &hd, &used) != 2 || l < 1 || l > c->layers || hd < 1 ||
            hd > c->h || (p[used] != ',' && p[used] != '\0')) {
            snprintf(err, errlen, "--ablate '%s': items are LAYER:HEAD, layers 1..%d, heads 1..%d",
                     spec, c->layers, c->h);
            return -1;
        }
        if (gpt2_run_is_off(r, l - 1, hd - 1)) {
            snprintf(err, errlen, "--ablate '%s': %d:%d is listed twice", spec, l, hd);
            return -1;
        }
        gpt2_run_set_off(r, l - 1, hd - 1, 1);
        p += used;
        if (*p == ',') p++;
    }
    return 0;
}

void gpt2_run_clear_off(gpt2_run *r) {
    const int first = first_off_layer(r);
    if (first < 0) return;
    memset(r->off, 0, (size_t)r->m->tf->cfg.layers * r->m->tf->cfg.h);
    if (r->n >= 1) run_from(r, 0, r->n);
}

size_t gpt2_run_row_width(const gpt2_run *r) {
    const int qd = spec_q_dim(&r->m->tf->spec), d = r->m->tf->cfg.d_model;
    return (size_t)(qd > d ? qd : d);
}

int gpt2_run_scores_room(gpt2_run *r, size_t need) {
    if (need <= r->s_cap) return 0;
    float *s = realloc(r->s_scores, need * sizeof(float));
    if (s) r->s_scores = s;
    float *a = s ? realloc(r->s_attn, need * sizeof(float)) : NULL;
    if (!a) return -1;
    r->s_attn = a;
    r->s_cap = need;
    return 0;
}

/* Concat of the shown layer at its own heads as the forward fed it to W^O: a
   removed head's band zeroed (its head_i stays in s_heads). width: the row's. */
static void zero_removed(gpt2_run *r, int layer, int width) {
    const model_spec *s = &r->m->tf->spec;
    attn_concat_remove(r->s_concat, width, s->head_dim, s->h, r->inf->off + (size_t)layer * s->h, 0,
                       r->n);
}

/* The shown layer's output with every head on (what the view's difference and the
   heads' contributions compare with) where heads are removed in it: s_concat, before
   their bands are zeroed, times W^O plus b_O, on the rows from keep (those before
   are the last show's when it made them for the same layer). 0, or -1 out of memory. */
static int show_full(gpt2_run *r, int layer, int width, int keep) {
    const model_spec *s = &r->m->tf->spec;
    const int h = s->h, d = s->d_model, qd = spec_q_dim(s);
    int any = 0;
    for (int j = 0; j < h; j++) any |= r->inf->off[(size_t)layer * h + j];
    if (!any) return 0;
    if (!r->s_full) r->s_full = malloc((size_t)r->inf->cap * d * sizeof(float));
    if (!r->s_full) return -1;
    const tf_layer_params *lp = &r->inf->tf->p.layer[layer];
    if (width == qd) /* one product over the rows */
        matmul_forward(r->s_full + (size_t)keep * d, r->s_concat + (size_t)keep * width, lp->w_o,
                       lp->b_o, r->n - keep, qd, d);
    else /* Concat's rows wider than W^O reads: a row at a time */
        for (int row = keep; row < r->n; row++)
            matmul_forward(r->s_full + (size_t)row * d, r->s_concat + (size_t)row * width, lp->w_o,
                           lp->b_o, 1, qd, d);
    r->s_full_n = r->n;
    return 0;
}

/* Rows [0, rows) of `blocks` matrices packed (blocks, n0, w0) moved to their places
   packed (blocks, n, w), each row's first min(w0, w) floats, the rest of a widened
   row set to fill. Both grow (or both shrink): moved from the last row back (or
   from the first on), no row overwrites one not yet moved. */
static void repack(float *a, int blocks, int n0, int w0, int n, int w, int rows, float fill) {
    const size_t keep = (size_t)(w < w0 ? w : w0);
    if (n >= n0 && w >= w0)
        for (int j = blocks - 1; j >= 0; j--)
            for (int row = rows - 1; row >= 0; row--) {
                float *to = a + ((size_t)j * n + row) * w;
                memmove(to, a + ((size_t)j * n0 + row) * w0, keep * sizeof(float));
                for (int k = w0; k < w; k++) to[k] = fill;
            }
    else
        for (int j = 0; j < blocks; j++)
            for (int row = 0; row < rows; row++)
                memmove(a + ((size_t)j * n + row) * w, a + ((size_t)j * n0 + row) * w0,
                        keep * sizeof(float));
}

/* A RoPE model's Q and K of layer i before the rotation, for the step-through (the
   rotated ones are the run's own). 0, or -1 on out of memory. */
static int show_unrotated(gpt2_run *r, int i) {
    const model_spec *s = &r->own->tf->spec; /* its own K/V heads: the most it computes with */
    if (s->pos != SPEC_POS_ROPE) return 0;
    const size_t cap = (size_t)r->inf->cap;
    if (!r->s_qpre) r->s_qpre = malloc(cap * spec_q_dim(s) * sizeof(float));
    if (!r->s_kpre) r->s_kpre = malloc(cap * spec_kv_dim(s) * sizeof(float));
    if (!r->s_qpre || !r->s_kpre) return -1;
    tf_infer_qk_unrotated(r->inf, i, r->s_qpre, r->s_kpre);
    return 0;
}

int gpt2_run_show(gpt2_run *r, int layer, int h) {
    return show_rows(r, layer, h, 0);
}

/* gpt2_run_show, keeping the shown layer's rows [0, keep) from its last show at
   r->s_n tokens where that is the same layer at its own heads in a causal model
   (typing at the end: the rows before see none of the new tokens), computing rows
   [keep, n) only; keep 0: every row. */
static int show_rows(gpt2_run *r, int layer, int h, int keep) {
    const tf_config *c = &r->m->tf->cfg;
    const int n0 = r->s_n;
    r->s_n = 0; /* until every row is back */
    if (layer < 0 || layer >= c->layers || h < 1 || r->n < 1) return -1;
    const int split = tf_infer_can_split(r->m->tf);
    if (!split && h != c->h) return -1; /* RoPE, K/V shared: its own heads only */
    if (c->d_model % h != 0 && split) return -1;
    if (!split && show_unrotated(r, layer) != 0) return -1; /* RoPE: Q, K before it */
    const size_t nn = (size_t)r->n * r->n, need = (size_t)h * nn;
    const size_t nd = (size_t)r->inf->cap * gpt2_run_row_width(r);
    if (!(h == c->h && r->m->tf->spec.causal && keep <= n0 && keep <= r->n)) keep = 0;
    if (gpt2_run_scores_room(r, need) != 0) return -1; /* the rows kept stay */
    if (!r->s_concat) r->s_concat = malloc(nd * sizeof(float));
    if (!r->s_out) r->s_out = malloc(nd * sizeof(float));
    if (!r->s_heads) r->s_heads = malloc(nd * sizeof(float));
    if (!r->s_x) r->s_x = malloc((size_t)r->inf->cap * c->d_model * sizeof(float));
    if (!r->s_concat || !r->s_out || !r->s_heads || !r->s_x) return -1;
    /* a head's width, and Concat's: d_model's share at a split, else the model's own
       head_dim and h head_dim (RoPE, K/V shared: Concat need not be d_model wide) */
    const int n = r->n, d = split ? c->d_model : spec_q_dim(&r->m->tf->spec);
    const int dk = split ? d / h : r->m->tf->spec.head_dim;
    tf_infer_x(r->inf, layer, r->s_x);
    if (keep > 0) { /* the kept rows to the new width; the new keys hidden from them */
        repack(r->s_scores, h, n0, n0, n, n, keep, -INFINITY);
        repack(r->s_attn, h, n0, n0, n, n, keep, 0.0f);
        repack(r->s_heads, h, n0, dk, n, dk, keep, 0.0f);
    }
    /* every head_i kept on its own too, (h, n, head width), as the view and the
       step-through read them (a removed head's too) */
    if (!split || keep > 0) /* its own heads as the forward computes them, rows from keep */
        tf_infer_attn_rows(r->inf, layer, keep, r->s_scores, r->s_attn, r->s_concat, r->s_heads);
    else
        tf_infer_split(r->inf, layer, h, r->s_scores, r->s_attn, r->s_concat, r->s_heads,
                       h == c->h ? NULL : r->s_out);
    const int full_kept = r->s_full_n; /* (the same layer's rows, where keep > 0) */
    r->s_full_n = 0;
    if (h == c->h && show_full(r, layer, d, keep <= full_kept ? keep : 0) != 0) return -1;
    if (h == c->h) zero_removed(r, layer, d);
    r->shown = layer;
    r->shown_h = h;
    r->s_n = n;
    return 0;
}

int gpt2_overview_side(const gpt2_model *m, int n) {
    const tf_config *c = &m->tf->cfg;
    int p = n < GPT2_OV_SIDE ? n : GPT2_OV_SIDE;
    while (p > 1 && (size_t)c->layers * c->h * p * p > GPT2_OV_FLOATS) p--;
    return p;
}

void gpt2_max_pool(float *out, const float *a, int n, int p) {
    for (int y = 0; y < p; y++) {
        const int r0 = (int)((long)y * n / p), r1 = (int)((long)(y + 1) * n / p);
        float *o = out + (size_t)y * p;
        for (int x = 0; x < p; x++) o[x] = 0.0f;
        for (int row = r0; row < r1; row++) {
            const float *ar = a + (size_t)row * n;
            for (int x = 0; x < p; x++) {
                const int c0 = (int)((long)x * n / p), c1 = (int)((long)(x + 1) * n / p);
                float m = o[x];
                for (int k = c0; k < c1; k++) m = ar[k] > m ? ar[k] : m;
                o[x] = m;
            }
        }
    }
}

int gpt2_run_overview(gpt2_run *r) {
    const tf_config *c = &r->m->tf->cfg;
    if (r->n < 1) return -1;
    if (r->ov_n) return 0;
    const int p = gpt2_overview_side(r->m, r->inf->cap);
    if (!r->ov) r->ov = malloc((size_t)c->layers * c->h * p * p * sizeof(float));
    if (!r->ov) return -1;
    const int n = r->n, side = gpt2_overview_side(r->m, n);
    tf_infer *t = r->inf;
    for (int i = 0; i < c->layers; i++) {
        /* the layer's (h, n, n) in the forward's scratch, then each head pooled */
        tf_infer_attn(t, i, t->scores, t->scores, t->concat);
        for (int j = 0; j < c->h; j++)
            gpt2_max_pool(r->ov + ((size_t)i * c->h + j) * side * side,
                          t->scores + (size_t)j * n * n, n, side);
    }
    r->ov_n = side;
    return 0;
}

static int overview_or_say(gpt2_run *r, char *err, size_t errlen) {
    if (gpt2_run_overview(r) == 0) return 0;
    snprintf(err, errlen, "out of memory for the overview's maps");
    return -1;
}

int gpt2_run_reach(gpt2_run *r, const gpt2_goal *goal, char *err, size_t errlen) {
    const tf_config *c = &r->m->tf->cfg;
    const size_t offs = (size_t)c->layers * c->h;
    int ids[GPT2_MAX_N], replaced = 0;
    const int total =
        model_tok_encode(r->m->tok, goal->text, goal->len, ids, r->inf->cap, &replaced);
    if (total < 1) {
        snprintf(err, errlen, "the text has no token");
        return -1;
    }
    int n = total < r->inf->cap ? total : r->inf->cap;
    for (int i = 0; i < goal->n_more && n < r->inf->cap; i++) ids[n++] = goal->more[i];
    const int same_text = n == r->n && memcmp(ids, r->ids, (size_t)n * sizeof(int)) == 0;
    const int same_off = memcmp(r->off, goal->off, offs) == 0;
    const int kv = goal->kv > 0 ? goal->kv : r->own->tf->spec.h_kv;
    if (kv != r->kv && gpt2_run_regroup(r, kv, err, errlen) != 0) return -1;
    const int shown = r->shown, shown_h = r->shown_h;
    const int measure =
        goal->effects && gpt2_run_measurable(r) && goal->h == c->h && r->e_layer != goal->layer;
    if (same_text && same_off && shown == goal->layer && shown_h == goal->h) {
        r->n_text = total + goal->n_more; /* the tokens past the cut may differ */
        r->replaced = replaced;
        if (measure) gpt2_run_effects(r, goal->layer); /* (failed: not measured, said so) */
        return goal->overview ? overview_or_say(r, err, errlen) : 0;
    }
    if (shown != goal->layer || shown_h != goal->h)
        r->shown = -1; /* shown once, below, at the goal's layer */
    memcpy(r->off, goal->off, offs);
    if (!same_text) { /* from the first token that differs on (tf_infer_update) */
        gpt2_run_tokens(r, ids, n);
        r->n_text = total + goal->n_more;
        r->replaced = replaced;
    } else {
        r->n_text = total + goal->n_more;
        r->replaced = replaced;
        if (!same_off) run_from(r, 0, r->n);
    }
    /* the same layer was brought along by the run (its new rows only) */
    const int ready = r->shown == goal->layer && r->shown_h == goal->h && r->s_n == r->n;
    if (!ready && gpt2_run_show(r, goal->layer, goal->h) != 0) {
        snprintf(err, errlen, "layer %d at h = %d cannot be shown (out of memory?)",
                 goal->layer + 1, goal->h);
        return -1;
    }
    if (goal->effects && goal->h == c->h && r->e_layer != goal->layer)
        gpt2_run_effects(r, goal->layer);
    return goal->overview ? overview_or_say(r, err, errlen) : 0;
}

const float *gpt2_run_probs(const gpt2_run *r) {
    return r->inf->probs;
}

int gpt2_run_is_encoder(const gpt2_run *r) {
    return !r->m->tf->spec.causal;
}

/* ---- the model source --------------------------------------------------------- */

static int layer_count(const void *self) {
    const gpt2_run *r = self;
    return r->n >= 1 ? r->m->tf->cfg.layers : 0;
}

static int fill_layer(const void *self, int i, attn_layer *L) {
    const gpt2_run *r = self;
    const tf_config *c = &r->m->tf->cfg;
    if (i < 0 || i >= layer_count(self) || i != r->shown) return -1;
    /* the shown layer's scores and attention, and its heads where it can be re-split:
       gpt2_run_show computed them */
    tf_infer_layer(L, r->inf, i, r->s_x, r->s_scores, r->s_attn, r->s_concat, r->label);
    if (!L->out_full && r->s_full_n == r->n) L->out_full = r->s_full; /* heads removed */
    if (r->s_qpre && L->q_rot) { /* RoPE: the shown layer's, unrotated */
        L->q_unrot = r->s_qpre;
        L->k_unrot = r->s_kpre;
    }
    L->heads = r->s_heads; /* (h, n, d_k): head_dim wide where the heads are not re-split */
    if (!tf_infer_can_split(r->m->tf)) return 0;
    if (r->shown_h == c->h) return 0;
    /* re-split: the same X, W^Q, W^K, W^V, Q, K, V and W^O, other heads */
    attn_layer split;
    attn_layer_init(&split, r->n, r->n, r->shown_h, c->d_model,
                    r->m->tf->spec.causal ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE, 1, 1.0f);
    split.layer = L->layer;
    split.layers = L->layers;
    split.tokens = L->tokens;
    split.x = L->x;
    split.w_q = L->w_q, split.w_k = L->w_k, split.w_v = L->w_v, split.w_o = L->w_o;
    split.q = L->q, split.k = L->k, split.v = L->v;
    split.scores = r->s_scores;
    split.attn = r->s_attn;
    split.concat = r->s_concat;
    split.heads = r->s_heads;
    split.out = split.out_full = r->s_out;
    *L = split;
    return 0;
}

static void describe(const void *self, char *buf, size_t len) {
    const gpt2_run *r = self;
    const tf_config *c = &r->m->tf->cfg;
    snprintf(buf, len, "%s · %d layers · h = %d · d_model = %d", r->m->paths.name, c->layers, c->h,
             c->d_model);
}

void gpt2_run_source(model_source *src, const gpt2_run *r) {
    *src = (model_source){layer_count, fill_layer, describe, r};
}
