/* gpt2.h: a decoder checkpoint of any family the loader reads (GPT-2's, the Llama
 * family's), opened (checkpoint.h and model_tok.h), and a text
 * run through it: every layer's heads kept for the view (tf_infer), heads removed
 * with the layers after them recomputed, one layer re-split into another number of
 * heads, the next-token distribution. A model source (source.h) over the run. No
 * SDL, no files beyond the checkpoint's. */
#ifndef MHAVIZ_GPT2_H
#define MHAVIZ_GPT2_H

#include <stddef.h>

#include "checkpoint.h"
#include "fill.h"
#include "model_tok.h"
#include "source.h"
#include "transformer.h"

/* The most tokens a run holds: the longest context a model may have (TF_MAX_CTX,
 * GPT-2's n_positions), which the view lays out (VIEW_MAX_N). */
#define GPT2_MAX_N TF_MAX_CTX
/* The memory a run's trace may take (every layer's tensors; no layer keeps its
 * attention, the shown layer's is computed): a text is cut to the tokens that fit.
 * GPT-2 small, medium: 1024 tokens (small ~0.4 GB); large ~850, xl ~560. */
#define GPT2_TRACE_BYTES ((size_t)1 << 30)
/* The overview's maps: each head's attention max-pooled to at most this side, and
   all of them together at most GPT2_OV_FLOATS floats (a smaller side for many heads) */
#define GPT2_OV_SIDE 256
#define GPT2_OV_FLOATS ((size_t)8 << 20)
#define GPT2_TOP 10
#define GPT2_LABEL 48
/* The masks an encoder's run fills at most (the first ones of the text). */
#define GPT2_FILL_MAX 8

typedef struct {
    ckpt_paths paths;
    ckpt_config cfg;
    transformer *tf; /* parameters only */
    model_tok *tok;  /* tokenizer.json, or GPT-2's vocab.json and merges.txt */
} gpt2_model;

/* Opens PATH (checkpoint.h): 0, or 1 / 2 with "PATH: what is wrong" in err. */
int gpt2_load(gpt2_model **out, const char *path, ckpt_progress_fn progress, void *ud, char *err,
              size_t errlen);
void gpt2_free(gpt2_model *m); /* NULL is fine */

/* What gpt2_load does between config.json and the weights (model_open.c): its
 * tokenizer is read (m->tok) and must give no id past config.json's vocab_size
 * (GPT-2's vocab.json: exactly it).
 * 0, or 1 / 2 with "PATH: what is wrong" in err. */
int gpt2_open_tokenizer(gpt2_model *m, char *err, size_t errlen);

/* The most tokens a run of m holds: min(n_positions, GPT2_MAX_N, what fits in
 * GPT2_TRACE_BYTES). */
int gpt2_max_tokens(const gpt2_model *m);

typedef struct {
    const gpt2_model *m;
    int n;        /* tokens run */
    int n_text;   /* tokens the whole text has (> n: cut) */
    int replaced; /* invalid UTF-8 replaced by U+FFFD */
    int ids[GPT2_MAX_N];
    char labels[GPT2_MAX_N][GPT2_LABEL];
    const char *label[GPT2_MAX_N];
    tf_infer *inf;
    unsigned char *off; /* (layers, h): heads removed */
    float *probs_full;  /* (vocab) the next-token distribution with every head on */
    int any_off;
    double ms;         /* the last change's forward, in ms: layers [from, layers) ... */
    int ms_from;       /* ... twice when heads are removed and the text changed */
    int top[GPT2_TOP]; /* ids, most likely first, with the heads removed */
    /* the shown layer: its scores (and, re-split, its heads) */
    int shown, shown_h; /* layer, heads (the model's own or a re-split); -1: none */
    float *s_scores, *s_attn, *s_concat, *s_out;
    float *s_heads;         /* (h, n, d_k): head_i = A_i V_i, removed heads too */
    float *s_full;          /* (n, d_model): its output with every head on, where heads are
                               removed in it (no layer keeps its own: made from s_concat) */
    int s_full_n;           /* the rows of s_full made for the layer shown (0: none) */
    float *s_qpre, *s_kpre; /* RoPE: the shown layer's Q (n, h d_k), K (n, h_kv d_k) unrotated */
    /* K/V regrouped (gpt2_run_regroup): m is then &kvm, own's weights with its K/V
       heads pooled into kv; own is the model as opened */
    const gpt2_model *own;
    gpt2_model kvm;
    int kv;           /* K/V heads it computes with: own's h_kv, or fewer */
    float *probs_own; /* (vocab) own's distribution on the text, every head on (regrouped) */
    size_t s_cap;     /* floats in s_scores and s_attn */
    float *s_x;       /* (n, d_model): the layer's X (no layer keeps its own) */
    int s_n;          /* the tokens they were computed at (0: none) */
    /* the overview (gpt2_run_overview): every layer's heads, each max-pooled */
    float *ov; /* (layers, h, ov_n, ov_n); ov_n = 0: not computed for this run */
    int ov_n;
    /* an encoder's "fill the blank": the masked-LM head (fill.h) on the text's masks */
    tf_fill *fill;                         /* NULL: a decoder, or no masked-LM head in the file */
    int n_mask;                            /* the mask tokens in the run's text (all of them) */
    int mask_pos[GPT2_FILL_MAX];           /* the first min(n_mask, GPT2_FILL_MAX), in order */
    int fill_ids[GPT2_FILL_MAX][GPT2_TOP]; /* each mask's top ids, heads removed */
    float fill_p[GPT2_FILL_MAX][GPT2_TOP]; /* their probabilities */
    float fill_p_full[GPT2_FILL_MAX][GPT2_TOP]; /* the same ids with every head on */
    float *fill_lp_full; /* (GPT2_FILL_MAX, vocab): log-probabilities, every head on */
    /* what removing each head of layer e_layer alone does to the next token
       (gpt2_run_effects); e_layer -1: not measured for this text */
    int e_layer;
    float *e_kl;    /* (h) KL(every head on || head i removed), bits */
    int *e_top;     /* (h) the most likely next token with head i removed */
    int e_top_full; /* ... with every head on */
} gpt2_run;

/* A run for m (no text yet). 0, or -1 on out of memory. */
int gpt2_run_init(gpt2_run *r, const gpt2_model *m);
void gpt2_run_free(gpt2_run *r);

/* Tokenizes len bytes of text and runs it (cut to gpt2_max_tokens); the heads
 * removed stay removed. 0, or -1 with a message when the text has no token. */
int gpt2_run_text(gpt2_run *r, const char *text, size_t len, char *err, size_t errlen);
/* Runs token ids (n >= 1, cut to the run's cap) as gpt2_run_text does, computing
 * only what differs from the tokens run before (tf_infer_update). */
void gpt2_run_tokens(gpt2_run *r, const int *ids, int n);
/* When the last text was cut to the run's cap: 1 and one line in buf, "text cut to
 * its first N of T tokens (NAME holds N positions)"; else 0. */
int gpt2_run_cut(const gpt2_run *r, char *buf, size_t len);
/* Removes (1) or restores (0) head `head` of layer `layer` and recomputes from
 * that layer on. */
void gpt2_run_set_off(gpt2_run *r, int layer, int head, int off);
int gpt2_run_is_off(const gpt2_run *r, int layer, int head);
/* Removes the heads of spec, "LAYER:HEAD,..." (1-based, each once); 0, or -1
 * with a message (the heads before the bad item stay removed). */
int gpt2_run_ablate(gpt2_run *r, const char *spec, char *err, size_t errlen);
/* Every head back. */
void gpt2_run_clear_off(gpt2_run *r);

/* Makes layer `layer` the shown one at h heads (the model's own h, or a re-split:
 * a divisor of d_model): its scores and attention, computed from the kept Q, K and
 * V (no layer keeps them), and re-split its heads, Concat and output. A model that
 * cannot be re-split (tf_infer_can_split) shows its own h only. Only the shown
 * layer can be filled (gpt2_run_source). 0, or -1 (h does not divide d_model,
 * another h where no re-split is defined, or out of memory; nothing changes). */
int gpt2_run_show(gpt2_run *r, int layer, int h);

/* The run computes with kv K/V heads (regroup.h: each new K/V head's projections
 * the mean of the ones it replaces; kv must divide the model's own h_kv, which
 * restores it) and runs its text again; the heads removed stay removed, the layer
 * shown is shown again at the model's own heads. probs_own then holds the model's own
 * distribution (every head on) for the next-token panel. 0, or -1 with a message
 * (kv does not divide, out of memory; nothing changes). */
int gpt2_run_regroup(gpt2_run *r, int kv, char *err, size_t errlen);

/* The widest of d_model and the heads' q_dim: a row of s_concat, s_heads and s_out
 * holds either. */
size_t gpt2_run_row_width(const gpt2_run *r);

/* s_scores and s_attn grown to hold at least need floats each (realloc: what they hold
 * is kept); 0, or -1 on out of memory (s_cap then unchanged). */
int gpt2_run_scores_room(gpt2_run *r, size_t need);

/* The side of the overview's maps at n tokens: n, or less when n is larger than
 * GPT2_OV_SIDE or the maps would pass GPT2_OV_FLOATS. */
int gpt2_overview_side(const gpt2_model *m, int n);

/* The overview of the run: every layer's attention computed again from its Q and K
 * and each head max-pooled to ov_n x ov_n (gpt2_overview_side): cell (y, x) the
 * largest weight of query rows [y n / ov_n, (y + 1) n / ov_n) and keys [x n / ov_n,
 * (x + 1) n / ov_n), so a sharp head stays sharp. Kept until the run changes.
 * 0, or -1 on out of memory (ov_n stays 0). */
int gpt2_run_overview(gpt2_run *r);

/* Max-pools a (n, n) map into (p, p) (1 <= p <= n) as gpt2_run_overview does. */
void gpt2_max_pool(float *out, const float *a, int n, int p);

/* What a run is asked to show: a text and token ids after its own (the tokens
 * the model wrote: bytes that need not tokenize back into them), the heads removed
 * ((layers, h), 1 removed), the layer shown at h heads, and the K/V heads (0: the
 * model's own). */
typedef struct {
    const char *text;
    size_t len;
    const unsigned char *off;
    int layer, h;
    const int *more; /* (n_more) ids after the text's; NULL with n_more 0: none */
    int n_more;
    int effects; /* 1: and the layer's heads measured on the next token (gpt2_run_effects) */
    int kv;
    int overview; /* 1: the overview's maps too (gpt2_run_overview) */
} gpt2_goal;

/* Brings r to goal, computing only what differs from what r holds: a new text
 * runs every layer, heads removed or restored run from the first layer whose
 * heads changed, a new layer or h computes that layer's view, the overview is
 * computed when asked and not yet computed for this run. 0, or -1 with a
 * message (the text has no token, h does not split; r then holds what it did or
 * the new text with its layer unshown). */
int gpt2_run_reach(gpt2_run *r, const gpt2_goal *goal, char *err, size_t errlen);

/* Brings r to what src holds (a run of the same model, neither regrouped: gpt2_run_regroup)
 * by copying only what differs from what r holds: the trace's rows and layers
 * (tf_infer_sync), the text, the heads removed, the next-token numbers, the shown
 * layer's tensors (the rows r shares with src kept where it shows the same layer),
 * the overview's maps when overview is 1 (else none). The window computes a change
 * into its second run once it is brought to the run shown (gpt.c), so that the
 * change alone is computed: a head removed in layer l computes layers l ... L, a
 * layer switch that layer's view. 0, or -1 when it cannot (a regrouped run, no text
 * in src; r is as before) or out of memory (r then shows no layer: gpt2_run_reach
 * computes it). */
int gpt2_run_sync(gpt2_run *r, const gpt2_run *src, int overview);

/* What removing each of layer `layer`'s own heads alone (every other head of the
 * model on) does to the next-token distribution at the last position (an encoder:
 * the masked-LM head's distribution at the first blank): e_kl[i] = KL(P || P_-i) =
 * sum_t P(t) log2(P(t) / P_-i(t)) in bits, P with every head on (probs_full; the
 * blank's fill_lp_full), and e_top[i], P_-i's most likely token. h forwards from
 * `layer` on (tf_infer_update), then one more that brings the run back to its own
 * heads removed. Kept until the text changes (e_layer). 0, or -1 (no text, an
 * encoder with no blank filled, bad layer). */
int gpt2_run_effects(gpt2_run *r, int layer);
/* 1 when gpt2_run_effects can measure r: a decoder with a text, an encoder with a
 * blank filled (a masked-LM head and a mask in the text). */
int gpt2_run_measurable(const gpt2_run *r);

/* The next-token probabilities with the heads removed (vocab floats). */
const float *gpt2_run_probs(const gpt2_run *r);
/* 1: an encoder (attention in both directions, no next token: gpt2_run_probs is
 * meaningless; the masks are filled instead). */
int gpt2_run_is_encoder(const gpt2_run *r);
/* The masks filled: min(n_mask, GPT2_FILL_MAX) with a masked-LM head, else 0. */
int gpt2_run_fills(const gpt2_run *r);
/* The probability of token id in mask i's blank (i < gpt2_run_fills) with the heads
 * removed now: any id, not only the top ten. */
float gpt2_run_fill_p(const gpt2_run *r, int i, int id);

/* The run as a model source of its shown layer (the others cannot be filled: their
 * attention is not kept), at its own heads or re-split. describe says "gpt2 · 12 layers · h = 12".
 */
void gpt2_run_source(model_source *src, const gpt2_run *r);

#endif
