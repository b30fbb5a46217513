/* mha.c: configuration checks, buffer ownership, what is kept between calls
 * (weights, rows of X, rows of Q, K, V) and the multi-head attention forward pass,
 * exactly as "Attention Is All You Need" defines it, by sublayer.c's
 * attn_sublayer_forward: the layer step every forward takes (the trainer's and a
 * loaded model's too); weights and embeddings come from init.c. */
#include "mha.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "layer.h"
#include "softmax.h"
#include "sublayer.h"

void mha_config_resolve(mha_config *cfg) {
    if (cfg->h == 0) cfg->h = MHA_DEFAULT_H;
    if (cfg->d_model == 0) cfg->d_model = MHA_DEFAULT_D_MODEL;
    if (cfg->seed == 0) cfg->seed = MHA_DEFAULT_SEED;
    if (cfg->temperature == 0.0f) cfg->temperature = 1.0f;
}

void mha_config_set_ablated(mha_config *cfg, int head, int ablated) {
    MHA_EXPECT(head >= 0 && head < MHA_ABLATE_WORDS * 64);
    uint64_t bit = UINT64_C(1) << (head % 64);
    if (ablated)
        cfg->ablate[head / 64] |= bit;
    else
        cfg->ablate[head / 64] &= ~bit;
}

int mha_config_is_ablated(const mha_config *cfg, int head) {
    if (head < 0 || head >= MHA_ABLATE_WORDS * 64) return 0;
    return (int)((cfg->ablate[head / 64] >> (head % 64)) & 1u);
}

int mha_config_ablated_count(const mha_config *cfg) {
    int count = 0;
    for (int w = 0; w < MHA_ABLATE_WORDS; w++)
        for (uint64_t b = cfg->ablate[w]; b; b &= b - 1) count++;
    return count;
}

int mha_config_check(const mha_config *cfg, int n, char *err, size_t errlen) {
    if (n < 1 || n > MHA_MAX_N) {
        snprintf(err, errlen, "%d tokens: n must be between 1 and %d", n, MHA_MAX_N);
        return -1;
    }
    if (cfg->d_model < 1 || cfg->d_model > MHA_MAX_D_MODEL) {
        snprintf(err, errlen, "--d-model %d: must be between 1 and %d", cfg->d_model,
                 MHA_MAX_D_MODEL);
        return -1;
    }
    if (cfg->h < 1 || cfg->h > cfg->d_model) {
        snprintf(err, errlen, "--heads %d: must be between 1 and d_model (%d)", cfg->h,
                 cfg->d_model);
        return -1;
    }
    if (cfg->d_model % cfg->h != 0) {
        snprintf(err, errlen, "--heads %d: must divide d_model (%d)", cfg->h, cfg->d_model);
        return -1;
    }
    if (cfg->mask != MHA_MASK_NONE && cfg->mask != MHA_MASK_CAUSAL) {
        snprintf(err, errlen, "--mask: must be none or causal");
        return -1;
    }
    if (cfg->pad != 0 && (cfg->pad < n || cfg->pad > MHA_MAX_N)) {
        snprintf(err, errlen, "--pad %d: must be between the number of tokens (%d) and %d",
                 cfg->pad, n, MHA_MAX_N);
        return -1;
    }
    /* zero is the default 1; written so that NaN fails too */
    const float t = cfg->temperature == 0.0f ? 1.0f : cfg->temperature;
    if (!(t >= MHA_MIN_TEMPERATURE && t <= MHA_MAX_TEMPERATURE)) {
        snprintf(err, errlen, "--temperature %g: must be between %g and %g",
                 (double)cfg->temperature, (double)MHA_MIN_TEMPERATURE,
                 (double)MHA_MAX_TEMPERATURE);
        return -1;
    }
    if (cfg->weights != MHA_WEIGHTS_RANDOM && cfg->weights != MHA_WEIGHTS_PATTERNS) {
        snprintf(err, errlen, "--weights: must be random or patterns");
        return -1;
    }
    if (cfg->kv_heads < 0 || (cfg->kv_heads > 0 && cfg->h % cfg->kv_heads != 0)) {
        snprintf(err, errlen, "--kv-heads %d: must divide the heads (%d)", cfg->kv_heads, cfg->h);
        return -1;
    }
    for (int i = cfg->h; i < MHA_ABLATE_WORDS * 64; i++)
        if (mha_config_is_ablated(cfg, i)) {
            snprintf(err, errlen, "--ablate %d: must be between 1 and h (%d)", i + 1, cfg->h);
            return -1;
        }
    const int positions = cfg->pad ? cfg->pad : n;
    const uint64_t bytes = mha_model_bytes(cfg, positions);
    if (bytes > MHA_MAX_MODEL_BYTES) {
        const double gib = 1024.0 * 1024.0 * 1024.0;
        snprintf(err, errlen,
                 "n=%d, d_model=%d, h=%d: the model's tensors would take %.1f GiB, more than "
                 "the %.1f GiB limit (the h n^2 attention weights grow fastest)",
                 positions, cfg->d_model, cfg->h, (double)bytes / gib,
                 (double)MHA_MAX_MODEL_BYTES / gib);
        return -1;
    }
    return 0;
}

uint64_t mha_model_bytes(const mha_config *cfg, int n) {
    const uint64_t d = (uint64_t)cfg->d_model, h = (uint64_t)cfg->h, nn = (uint64_t)n;
    return sizeof(float) * (4 * d * d + 8 * nn * d + 2 * h * nn * nn);
}

mha_model *mha_model_create(void) {
    return calloc(1, sizeof(mha_model));
}

void mha_model_destroy(mha_model *m) {
    if (!m) return;
    free(m->w_mem_);
    free(m->nd_mem_);
    free(m->nn_mem_);
    free(m);
}

static int min_int(int a, int b) {
    return a < b ? a : b;
}

/* Makes the three blocks fit (n, d, h), allocating only those whose shape
 * changed; all or nothing. A new activation block with the same d_model keeps
 * the rows of X, Q, K and V the old one had (a token typed at the end keeps the
 * others'); a new weight block must be filled again. */
static int model_alloc(mha_model *m, int n, int d, int h) {
    const size_t nd = (size_t)n * d, dd = (size_t)d * d, hnn = (size_t)h * n * n;
    const int new_w = m->w_d_ != d, new_nd = m->nd_n_ != n || m->nd_d_ != d,
              new_nn = m->nn_n_ != n || m->nn_h_ != h;
    float *w = new_w ? malloc(4 * dd * sizeof(float)) : m->w_mem_;
    float *a = new_nd ? malloc(8 * nd * sizeof(float)) : m->nd_mem_;
    float *s = new_nn ? malloc(2 * hnn * sizeof(float)) : m->nn_mem_;
    if (!w || !a || !s) {
        if (new_w) free(w);
        if (new_nd) free(a);
        if (new_nn) free(s);
        return -1;
    }
    if (new_w) {
        free(m->w_mem_);
        m->w_mem_ = w;
        m->w_q = w, w += dd;
        m->w_k = w, w += dd;
        m->w_v = w, w += dd;
        m->w_o = w;
        m->w_d_ = d;
        m->weights_ok_ = 0; /* to be generated into the new block */
        m->qkv_rows_ = 0;
        m->allocations_++;
    }
    if (new_nd) {
        float *old_x = m->x, *old_q = m->q, *old_k = m->k, *old_v = m->v;
        const int keep = m->nd_d_ == d ? min_int(m->nd_n_, n) : 0;
        float *p = a;
        m->x = p, p += nd;
        m->q = p, p += nd;
        m->k = p, p += nd;
        m->v = p, p += nd;
        m->heads = p, p += nd;
        m->concat = p, p += nd;
        m->out = p, p += nd;
        m->out_full = p;
        const size_t bytes = (size_t)keep * d * sizeof(float);
        if (keep) {
            memcpy(m->x, old_x, bytes);
            memcpy(m->q, old_q, bytes);
            memcpy(m->k, old_k, bytes);
            memcpy(m->v, old_v, bytes);
        }
        m->x_rows_ = min_int(m->x_rows_, keep);
        m->qkv_rows_ = min_int(m->qkv_rows_, keep);
        free(m->nd_mem_);
        m->nd_mem_ = a;
        m->nd_n_ = n;
        m->nd_d_ = d;
        m->allocations_++;
    }
    if (new_nn) {
        free(m->nn_mem_);
        m->nn_mem_ = s;
        m->scores = s;
        m->attn = s + hnn;
        m->nn_n_ = n;
        m->nn_h_ = h;
        m->allocations_++;
    }
    return 0;
}

/* The weights for cfg, unless the block holds them already. Random weights
   depend on (seed, d_model) only; designed ones on h too. */
/* What W^K and W^V were pooled for: the groups (kv_heads of h), 0 for one K/V head
   per head. */
static int kv_key(const mha_config *cfg) {
    const int kv = cfg->kv_heads > 0 && cfg->kv_heads < cfg->h ? cfg->kv_heads : 0;
    return kv ? kv * (MHA_MAX_D_MODEL + 1) + cfg->h : 0;
}

/* W (d, d): each group of h / kv heads' column blocks (d_k wide) replaced by their
   mean, so that every head of a group has the same K (or V) head. */
static void pool_groups(float *w, int d, int h, int kv) {
    const int dk = d / h, r = h / kv;
    for (int row = 0; row < d; row++)
        for (int g = 0; g < kv; g++)
            for (int c = 0; c < dk; c++) {
                float *p = w + (size_t)row * d + (size_t)g * r * dk + c;
                double sum = 0.0;
                for (int j = 0; j < r; j++) sum += p[(size_t)j * dk];
                for (int j = 0; j < r; j++) p[(size_t)j * dk] = (float)(sum / r);
            }
}

static void model_weights(mha_model *m, const mha_config *cfg) {
    const int d = cfg->d_model;
    const int wh = cfg->weights == MHA_WEIGHTS_PATTERNS ? cfg->h : 0, kvk = kv_key(cfg);
    if (m->weights_ok_ && m->weights_seed_ == cfg->seed && m->weights_mode_ == cfg->weights &&
        m->weights_h_ == wh && m->weights_kv_ == kvk)
        return;
    mha_weights_init(m->w_q, cfg->seed, d, 0);
    mha_weights_init(m->w_k, cfg->seed, d, 1);
    /* designed heads change only W^Q and W^K: W^V and W^O stay when only h or
       the mode changed (W^V is drawn again when it was or is to be pooled) */
    if (!m->weights_ok_ || m->weights_seed_ != cfg->seed || m->weights_kv_ || kvk) {
        mha_weights_init(m->w_v, cfg->seed, d, 2);
        mha_weights_init(m->w_o, cfg->seed, d, 3);
    }
    if (cfg->weights == MHA_WEIGHTS_PATTERNS) mha_patterns_weights(m->w_q, m->w_k, cfg);
    if (kvk) { /* K/V regrouped: every head of a group reads the group's mean K and V */
        pool_groups(m->w_k, d, cfg->h, cfg->kv_heads);
        pool_groups(m->w_v, d, cfg->h, cfg->kv_heads);
    }
    m->weights_kv_ = kvk;
    m->weights_ok_ = 1;
    m->weights_seed_ = cfg->seed;
    m->weights_mode_ = cfg->weights;
    m->weights_h_ = wh;
    m->qkv_rows_ = 0;
    m->weights_built_++;
}

/* X for the tokens: only rows whose token changed (position t's row depends on
   the token, t, the seed and d_model) are built again; all of them when the seed
   or the weights mode changed. Designed heads write codes over X that depend on
   h and on the tokens up to each row, so their blocks are written again
   whenever a row changed. Rows of Q, K, V from the first changed row on are
   stale. */
static void model_x(mha_model *m, const mha_config *cfg, const tok_list *toks, int n_real, int n) {
    const int d = cfg->d_model;
    const int wh = cfg->weights == MHA_WEIGHTS_PATTERNS ? cfg->h : 0;
    if (m->x_seed_ != cfg->seed || m->x_mode_ != cfg->weights || m->x_h_ != wh) m->x_rows_ = 0;
    int first_changed = n;
    for (int t = 0; t < n; t++) {
        const char *token = t < n_real ? toks->tokens[t] : MHA_PAD_TOKEN;
        const uint64_t key = mha_token_key(token);
        if (t < m->x_rows_ && m->x_tokens_[t] == key) continue;
        float *row = m->x + (size_t)t * d;
        mha_embed_token(row, token, cfg->seed, d);
        mha_add_positional(row, t, d);
        m->x_tokens_[t] = key;
        m->x_rows_built_++;
        if (first_changed == n) first_changed = t;
    }
    if (cfg->weights == MHA_WEIGHTS_PATTERNS && first_changed < n)
        mha_patterns_embed(m->x, toks, n_real, n, cfg);
    m->x_rows_ = n;
    m->x_seed_ = cfg->seed;
    m->x_mode_ = cfg->weights;
    m->x_h_ = wh;
    m->qkv_rows_ = min_int(m->qkv_rows_, first_changed);
}

int mha_model_set(mha_model *m, const mha_config *cfg_in, const tok_list *toks, char *err,
                  size_t errlen) {
    mha_config cfg = *cfg_in;
    mha_config_resolve(&cfg);
    const int n_real = toks ? toks->count : 0;
    if (mha_config_check(&cfg, n_real, err, errlen) != 0) return -1;
    const int d = cfg.d_model;
    const int n = cfg.pad ? cfg.pad : n_real;

    if (model_alloc(m, n, d, cfg.h) != 0) {
        snprintf(err, errlen, "out of memory for n=%d d_model=%d h=%d", n, d, cfg.h);
        return -1;
    }
    model_weights(m, &cfg);
    model_x(m, &cfg, toks, n_real, n);
    m->cfg = cfg;
    m->n = n;
    m->n_real = n_real;
    m->d_k = d / cfg.h;
    return 0;
}

const char *mha_token(const mha_model *m, const tok_list *toks, int i) {
    MHA_EXPECT(i >= 0 && i < m->n);
    return i < m->n_real ? toks->tokens[i] : MHA_PAD_TOKEN;
}

void mha_softmax_rows(float *a, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        float *row = a + (size_t)r * cols;
        softmax_row(row, row, cols, cols, SOFTMAX_AUTO);
    }
}

/* FLOPs of a forward that projects `rows` of the n rows: 6 rows d^2 for Q, K,
   V, 2 n d^2 for W^O, 4 n^2 d for the heads (8 n d^2 + 4 n^2 d in all). */
static double forward_flops(int rows, int n, int d_model) {
    const double r = rows, nn = n, d = d_model;
    return 6.0 * r * d * d + 2.0 * nn * d * d + 4.0 * nn * nn * d;
}

static atomic_ulong forwards; /* mha_forwards */

unsigned long mha_forwards(void) {
    return atomic_load(&forwards);
}

void mha_forwards_add(void) {
    atomic_fetch_add(&forwards, 1);
}

/* The forward pass, the sublayer every forward takes (sublayer.c); rows [0, from_row)
   of Q, K, V are taken as they are. On several workers: one task per group of heads
   (its columns of Q, K and V, then each head's scores, mask, softmax, A_i V_i and band
   of Concat: nothing crosses to another core until Concat is complete), then the
   product by W^O by column chunks. With fewer heads than groups, the projections by
   column chunks, then the heads by row blocks. On one worker the same tasks run in
   order, one product per matrix and head, as the definition reads. */
static void forward(mha_model *m, int from_row) {
    mha_forwards_add();
    const int n = m->n, n_real = m->n_real, d = m->cfg.d_model, h = m->cfg.h, dk = m->d_k;
    MHA_EXPECT(m->nd_mem_ != NULL && m->nn_mem_ != NULL && m->weights_ok_);
    MHA_EXPECT(n >= 1 && n_real >= 1 && n_real <= n && h >= 1 && dk * h == d);
    MHA_EXPECT(from_row >= 0 && from_row <= n);

    const int workers = mm_workers_for(forward_flops(n - from_row, n, d));
    int chunks = 1, row_blocks = 1;
    if (workers > 1) {
        /* two tasks a worker: a helper that the machine delays leaves at most
           a small task to wait for, and each product stays large (measured:
           2 and 4 tasks on 2 workers were within noise of each other) */
        chunks = min_int(2 * workers, (d + 15) / 16);
        row_blocks = min_int(n, (chunks + h - 1) / h);
    }
    unsigned char off[MHA_ABLATE_WORDS * 64];
    for (int i = 0; i < h; i++) off[i] = (unsigned char)mha_config_is_ablated(&m->cfg, i);
    /* MultiHead = Concat W^O with every head on in out_full; an ablated head's band of
       Concat zeroed (its attention and head_i stay as computed) for out */
    const attn_sublayer s = {.w_q = m->w_q,
                             .w_k = m->w_k,
                             .w_v = m->w_v,
                             .w_o = m->w_o,
                             .d_in = d,
                             .d_out = d,
                             .h = h,
                             .hd = dk,
                             .B = 1,
                             .T = n,
                             .r0 = from_row,
                             .all_rows = 1,
                             .x = m->x,
                             .q = m->q,
                             .k = m->k,
                             .v = m->v,
                             .scores = m->scores,
                             .attn = m->attn,
                             .concat = m->concat,
                             .heads = m->heads,
                             .out = m->out,
                             .out_full = m->out_full,
                             .off = off,
                             .causal = m->cfg.mask == MHA_MASK_CAUSAL,
                             .n_real = n_real,
                             .scale = attn_scale(dk, !m->cfg.no_scale, m->cfg.temperature),
                             .workers = workers,
                             .chunks = chunks,
                             .row_blocks = row_blocks};
    attn_sublayer_forward(&s);
    m->qkv_rows_built_ += (unsigned long)(n - from_row);
    m->qkv_rows_ = n;
}

void mha_forward(mha_model *m) {
    forward(m, 0);
}

void mha_update(mha_model *m) {
    forward(m, m->qkv_rows_);
}

double mha_ablation_delta(const mha_model *m) {
    /* the arithmetic is the layer's: only the two tensors and their shape matter */
    const attn_layer L = {
        .n = m->n, .d_model = m->cfg.d_model, .out = m->out, .out_full = m->out_full};
    return attn_layer_off_delta(&L);
}

int mha_model_compute(mha_model *m, const mha_config *cfg, const tok_list *toks, char *err,
                      size_t errlen) {
    if (mha_model_set(m, cfg, toks, err, errlen) != 0) return -1;
    mha_update(m);
    return 0;
}
