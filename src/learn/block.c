/* block.c: the one layer forward of a loaded model (block.h), as its model_spec
 * says. GPT-2's spec (LayerNorm, learned positions, h_kv = h, GELU-tanh) takes the
 * trainer's layers (layers.c) in the order it always had, so its numbers are the
 * same bit for bit; the other options are written from Hugging Face's modeling
 * code (modeling_llama.py, modeling_qwen3.py, modeling_gemma.py, modeling_bert.py)
 * in float32, in the same order of operations where it matters. */
#include "block.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attention.h"
#include "blas.h"
#include "layer.h"
#include "layers.h"
#include "sublayer.h"

/* ------------------------------------------------------------------------------ */
/* embeddings and norms                                                            */

/* Row r's position: r, or RoBERTa's (create_position_ids_from_input_ids): pad_id + 1
   + the count of non-pad tokens before r, a pad token's own at pad_id. */
static int position(const model_spec *s, const int *tokens, int r, int *seen) {
    if (!s->pos_after_pad) return r;
    if (tokens[r] == s->pad_id) return s->pad_id;
    return s->pad_id + ++*seen;
}

void block_embed(float *x0, float *emb, float *mean, float *rstd, const transformer *tf,
                 const int *tokens, int r0, int n) {
    const model_spec *s = &tf->spec;
    const tf_params *p = &tf->p;
    const int d = s->d_model, e = spec_emb_dim(s), m = n - r0;
    const float scale = s->emb_scale > 0.0f ? s->emb_scale : 1.0f;
    if (m < 1) return;
    float *x = s->d_embed > 0 ? emb : x0; /* (n, e) */
    if (p->wpe && scale == 1.0f && !p->wtt && !s->pos_after_pad && s->d_embed == 0) {
        /* GPT-2's, as it was: row r at position r */
        encoder_forward(x0 + (size_t)r0 * d, tokens + r0, p->wte, p->wpe + (size_t)r0 * d, 1, m, d);
    } else {
        /* Hugging Face's order: word (times the scale), + token type 0, + position */
        int seen = 0;
        for (int r = 0; r < r0; r++) position(s, tokens, r, &seen); /* the rows kept */
        for (int r = r0; r < n; r++) {
            float *o = x + (size_t)r * e;
            const float *w = p->wte + (size_t)tokens[r] * e;
            for (int c = 0; c < e; c++) o[c] = w[c] * scale;
            if (p->wtt)
                for (int c = 0; c < e; c++) o[c] += p->wtt[c];
            if (p->wpe) {
                const float *pe = p->wpe + (size_t)position(s, tokens, r, &seen) * e;
                for (int c = 0; c < e; c++) o[c] += pe[c];
            }
        }
    }
    x += (size_t)r0 * e;
    if (s->post_ln) block_norm(x, mean, rstd, x, p->emb_ln_g, p->emb_ln_b, m, e, s);
    /* ALBERT: the embeddings mapped to d_model */
    if (s->d_embed > 0) matmul_forward(x0 + (size_t)r0 * d, x, p->emb_map, p->emb_map_b, m, e, d);
}

/* RMSNorm of rows of d with weight w (plus_one: 1 + w, Gemma's), as Hugging Face's
   LlamaRMSNorm / GemmaRMSNorm in float32: x * rsqrt(mean(x^2) + eps) * w. The mean
   of squares summed in double. out may be x. */
static void rmsnorm_rows(float *out, const float *x, const float *w, int rows, int d, int ld,
                         float eps, int plus_one) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * ld;
        float *o = out + (size_t)r * ld;
        double ss = 0.0;
        for (int c = 0; c < d; c++) ss += (double)xr[c] * xr[c];
        const float rs = 1.0f / sqrtf((float)(ss / d) + eps);
        for (int c = 0; c < d; c++) o[c] = xr[c] * rs * (plus_one ? 1.0f + w[c] : w[c]);
    }
}

void block_norm(float *out, float *mean, float *rstd, const float *x, const float *g,
                const float *b, int n, int d, const model_spec *s) {
    if (s->norm == SPEC_LAYERNORM)
        layernorm_forward(out, mean, rstd, x, g, b, n, d, s->norm_eps);
    else
        rmsnorm_rows(out, x, g, n, d, d, s->norm_eps, s->norm == SPEC_RMSNORM_P1);
}

/* ------------------------------------------------------------------------------ */
/* RoPE                                                                            */

/* inv_freq_j for pair j of head_dim, as Hugging Face's _compute_default_rope_parameters
   and _compute_llama3_parameters (rope_utils.py) make it in float32. */
static float rope_inv_freq(const model_spec *s, int j) {
    const float e = (float)(2 * j) / (float)s->head_dim;
    float inv = 1.0f / powf(s->rope_theta, e);
    if (s->rope_scaling == SPEC_ROPE_LINEAR) return inv / s->rope_factor;
    if (s->rope_scaling != SPEC_ROPE_LLAMA3) return inv;
    /* wavelengths longer than orig / low_freq are slowed by factor, shorter than
       orig / high_freq kept, and the band between blended smoothly */
    const float orig = (float)s->rope_orig_ctx;
    const float low_wl = orig / s->rope_low_freq, high_wl = orig / s->rope_high_freq;
    const float wl = 2.0f * 3.14159265358979f / inv;
    if (wl > low_wl) return inv / s->rope_factor;
    if (wl < high_wl) return inv;
    const float smooth = (orig / wl - s->rope_low_freq) / (s->rope_high_freq - s->rope_low_freq);
    return (1.0f - smooth) * (inv / s->rope_factor) + smooth * inv;
}

void block_rope_table(float *cs, const model_spec *s, int n) {
    const int hd = s->head_dim, half = hd / 2;
    for (int j = 0; j < half; j++) {
        const float inv = rope_inv_freq(s, j);
        for (int p = 0; p < n; p++) {
            const float a = (float)p * inv;
            cs[(size_t)p * hd + j] = cosf(a);
            cs[(size_t)p * hd + half + j] = sinf(a);
        }
    }
}

/* Rotates each of `heads` heads of rows x (n, heads hd) by its row's position:
   x' = x cos + rotate_half(x) sin, rotate_half(x) = (-x2, x1) over the two halves. */
static void rope_apply(float *x, const float *cs, int n, int heads, int hd) {
    const int half = hd / 2;
    for (int r = 0; r < n; r++) {
        const float *c = cs + (size_t)r * hd, *sn = c + half;
        for (int j = 0; j < heads; j++) {
            float *x1 = x + ((size_t)r * heads + j) * hd, *x2 = x1 + half;
            for (int i = 0; i < half; i++) {
                const float a = x1[i], b = x2[i];
                x1[i] = a * c[i] + -b * sn[i];
                x2[i] = b * c[i] + a * sn[i];
            }
        }
    }
}

/* ------------------------------------------------------------------------------ */
/* the MLP                                                                         */

/* silu(gate) * up, in place into up (n elements), as Hugging Face's LlamaMLP */
static void swiglu(float *up, const float *gate, size_t n) {
    for (size_t i = 0; i < n; i++) up[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

/* out (n, d) = the spec's MLP of x (n, d); fc, fc_act, gate (n, d_ff) scratch */
static void mlp(float *out, const float *x, const tf_layer_params *lp, const model_spec *s, int n,
                float *fc, float *fc_act, float *gate) {
    const int d = s->d_model, ff = s->d_ff;
    const size_t nf = (size_t)n * ff;
    matmul_forward(fc, x, lp->w_fc, lp->b_fc, n, d, ff);
    if (s->mlp == SPEC_MLP_SWIGLU || s->mlp == SPEC_MLP_GEGLU) {
        matmul_forward(gate, x, lp->w_gate, NULL, n, d, ff);
        if (s->mlp == SPEC_MLP_SWIGLU) {
            swiglu(fc, gate, nf);
        } else {
            act_forward(fc_act, gate, nf, TF_ACT_GELU_TANH);
            for (size_t i = 0; i < nf; i++) fc[i] = fc_act[i] * fc[i];
        }
        matmul_forward(out, fc, lp->w_proj, lp->b_proj, n, ff, d);
        return;
    }
    const tf_act act = s->mlp == SPEC_MLP_GELU_ERF ? TF_ACT_GELU
                       : s->mlp == SPEC_MLP_RELU   ? TF_ACT_RELU
                                                   : TF_ACT_GELU_TANH;
    act_forward(fc_act, fc, nf, act);
    matmul_forward(out, fc_act, lp->w_proj, lp->b_proj, n, ff, d);
}

/* ------------------------------------------------------------------------------ */
/* the layer                                                                       */

/* Layer i's slice of a (layers, cap, width) block. */
static float *slab(const tf_infer *t, float *block, int i, int width) {
    return block + (size_t)i * t->cap * width;
}

/* Layer i's attention sublayer (sublayer.h) on t's kept tensors, the rows from r0:
   its weights and shape, Q, K, V into the kept slabs, the heads over whole rows. */
static attn_sublayer sublayer(const transformer *tf, int i, int n, int r0) {
    const model_spec *s = &tf->spec;
    attn_sublayer a = {.d_in = s->d_model,
                       .d_out = s->d_model,
                       .h = s->h,
                       .h_kv = s->h_kv,
                       .hd = s->head_dim,
                       .B = 1,
                       .T = n,
                       .r0 = r0,
                       .causal = s->causal,
                       .whole_rows = 1};
    tf_sublayer_weights(&a, &tf->p.layer[i]);
    return a;
}

/* Qwen3's QK-norm per head, on n rows of q (n, h hd) and k (n, h_kv hd) */
static void qk_norm(float *q, float *k, const tf_layer_params *lp, const model_spec *s, int n) {
    if (!s->qk_norm) return;
    const int p1 = s->norm == SPEC_RMSNORM_P1;
    rmsnorm_rows(q, q, lp->q_norm, n * s->h, s->head_dim, s->head_dim, s->norm_eps, p1);
    rmsnorm_rows(k, k, lp->k_norm, n * s->h_kv, s->head_dim, s->head_dim, s->norm_eps, p1);
}

void block_qk_unrotated(float *q, float *k, const transformer *tf, int i, const float *x, int n) {
    attn_sublayer a = sublayer(tf, i, n, 0);
    a.x = x, a.q = q, a.k = k; /* no V */
    attn_sublayer_qkv(&a);
    qk_norm(q, k, &tf->p.layer[i], &tf->spec, n);
}

/* The loaded model's own step between the products and the heads, on the rows just
   made (q, k at row r0): QK-norm per head, then RoPE by position. */
typedef struct {
    const tf_infer *t;
    int i;
} qk_ctx;

static void qk_step(void *ctx, float *q, float *k, int r0, int n) {
    const qk_ctx *c = ctx;
    const model_spec *s = &c->t->tf->spec;
    qk_norm(q, k, &c->t->tf->p.layer[c->i], s, n);
    if (s->pos == SPEC_POS_ROPE) {
        const float *cs = c->t->rope + (size_t)r0 * s->head_dim;
        rope_apply(q, cs, n, s->h, s->head_dim);
        rope_apply(k, cs, n, s->h_kv, s->head_dim);
    }
}

void block_forward(tf_infer *t, int i, const unsigned char *off_i, int r0) {
    const model_spec *s = &t->tf->spec;
    const tf_layer_params *lp = &t->tf->p.layer[i];
    const int d = s->d_model, qd = spec_q_dim(s), kvd = spec_kv_dim(s);
    const int n = t->n - r0; /* the rows computed: positions r0 .. t->n - 1 */
    if (n < 1) return;
    t->rows_run += (unsigned long)n;
    const size_t nd = (size_t)n * d;
    /* every tensor kept at its row r0; the scratch (res1, ln2, fc, proj) from row 0 */
    const float *x = slab(t, t->resid, i, d) + (size_t)r0 * d;
    float *ln1 = t->ln1 + (size_t)r0 * d; /* scratch, at its rows as the kept tensors */
    float *q = slab(t, t->q, i, qd), *k = slab(t, t->k, i, kvd), *v = slab(t, t->v, i, kvd);
    float *out = slab(t, t->out, i, d) + (size_t)r0 * d;
    float *next = slab(t, t->resid, i + 1, d) + (size_t)r0 * d;
    /* X the heads see: norm(x) before the sublayer (pre-LN), x itself (post-LN) */
    if (s->post_ln)
        memcpy(ln1, x, nd * sizeof(float));
    else
        block_norm(ln1, t->mean, t->rstd, x, lp->ln1_g, lp->ln1_b, n, d, s);
    /* Q, K, V, QK-norm and RoPE at the new rows; the attention at n tokens in the
       scratch (h, n, n), rows packed at n, the softmax in place (no layer keeps its
       attention nor its heads): the new queries read the kept keys and values (the KV
       cache) and their own; out = Concat W^O + b_O, with heads of off_i removed (the
       output with every head on is not kept: the view makes its layer's from its own
       Concat) */
    for (int j = 0; j < s->h; j++) t->off[(size_t)i * s->h + j] = off_i && off_i[j];
    const qk_ctx qc = {t, i};
    attn_sublayer a = sublayer(t->tf, i, t->n, r0);
    a.x = t->ln1;
    a.q = q, a.k = k, a.v = v, a.kx = t->kx, a.vx = t->vx;
    a.scores = a.attn = t->scores;
    a.concat = t->concat; /* scratch, as the attention */
    a.out = slab(t, t->out, i, d);
    a.off = off_i;
    a.qk_step = qk_step, a.qk_ctx = (void *)&qc;
    attn_sublayer_forward(&a);
    /* res1 = x + attn (normed, post-LN); the MLP; the stream into layer i + 1 */
    float *res1 = s->d_ff ? t->res1 : next;
    residual_forward(res1, x, out, nd);
    if (s->post_ln) block_norm(res1, t->mean, t->rstd, res1, lp->ln1_g, lp->ln1_b, n, d, s);
    if (!s->d_ff) return;
    const float *mlp_in = t->res1;
    if (!s->post_ln) {
        block_norm(t->ln2, t->mean, t->rstd, t->res1, lp->ln2_g, lp->ln2_b, n, d, s);
        mlp_in = t->ln2;
    }
    mlp(t->proj, mlp_in, lp, s, n, t->fc, t->fc_act, t->gate);
    residual_forward(next, t->res1, t->proj, nd);
    if (s->post_ln) block_norm(next, t->mean, t->rstd, next, lp->ln2_g, lp->ln2_b, n, d, s);
}

void block_x(tf_infer *t, int i, float *x) {
    const model_spec *s = &t->tf->spec;
    const tf_layer_params *lp = &t->tf->p.layer[i];
    const int d = s->d_model;
    const float *in = slab(t, t->resid, i, d);
    if (s->post_ln)
        memcpy(x, in, (size_t)t->n * d * sizeof(float));
    else
        block_norm(x, t->mean, t->rstd, in, lp->ln1_g, lp->ln1_b, t->n, d, s);
}

void block_attention(tf_infer *t, int i, float *scores, float *attn, float *concat, float *heads,
                     int r0) {
    const model_spec *s = &t->tf->spec;
    const int qd = spec_q_dim(s), kvd = spec_kv_dim(s);
    attn_sublayer a = sublayer(t->tf, i, t->n, r0);
    a.q = slab(t, t->q, i, qd), a.k = slab(t, t->k, i, kvd), a.v = slab(t, t->v, i, kvd);
    a.kx = t->kx, a.vx = t->vx;
    a.scores = scores, a.attn = attn, a.concat = concat, a.heads = heads;
    attn_sublayer_heads(&a);
}

void block_final(tf_infer *t, int r0) {
    const transformer *tf = t->tf;
    const model_spec *s = &tf->spec;
    const int n = t->n - r0, d = s->d_model;
    const float *x = slab(t, t->resid, s->layers, d) + (size_t)r0 * d;
    float *lnf = t->lnf + (size_t)r0 * d;
    if (n < 1)
        ;
    else if (s->post_ln)
        memcpy(lnf, x, (size_t)n * d * sizeof(float));
    else
        block_norm(lnf, t->mean, t->rstd, x, tf->p.lnf_g, tf->p.lnf_b, n, d, s);
    const float *last = t->lnf + (size_t)(t->n - 1) * d;
    if (s->head == SPEC_HEAD_NONE)
        memset(t->logits, 0, (size_t)s->vocab * sizeof(float)); /* uniform next-token probs */
    else if (s->head == SPEC_HEAD_TIED)
        unembed_tied_forward(t->logits, last, tf->p.wte, 1, d, s->vocab);
    else if (s->head == SPEC_HEAD_LINEAR)
        unembed_tied_forward(t->logits, last, tf->p.lm_head, 1, d, s->vocab);
    else
        matmul_forward(t->logits, last, tf->p.w_u, tf->p.b_u, 1, d, tf->cfg.classes);
}
