/* mha.c: configuration checks, buffer ownership and the multi-head attention
 * forward pass, exactly as "Attention Is All You Need" defines it. Matrix products
 * go through blas.c; weights and embeddings come from init.c. */
#include "mha.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"

void mha_fatal(const char *file, int line, const char *what) {
    fprintf(stderr, "mhaviz: internal error at %s:%d: %s\n", file, line, what);
    abort();
}

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
    for (int i = cfg->h; i < MHA_ABLATE_WORDS * 64; i++)
        if (mha_config_is_ablated(cfg, i)) {
            snprintf(err, errlen, "--ablate %d: must be between 1 and h (%d)", i + 1, cfg->h);
            return -1;
        }
    return 0;
}

mha_model *mha_model_create(void) {
    return calloc(1, sizeof(mha_model));
}

void mha_model_destroy(mha_model *m) {
    if (!m) return;
    free(m->mem_);
    free(m);
}

/* Carves every tensor out of one block sized for (n, d, h). */
static int model_alloc(mha_model *m, int n, int d, int h) {
    size_t nd = (size_t)n * d, dd = (size_t)d * d, hnn = (size_t)h * n * n;
    /* weights; x q k v heads concat out out_full; scores attn */
    size_t total = 4 * dd + 8 * nd + 2 * hnn;
    float *mem = malloc(total * sizeof(float));
    if (!mem) return -1;
    free(m->mem_);
    m->mem_ = mem;
    m->mem_floats_ = total;
    float *p = mem;
    m->w_q = p, p += dd;
    m->w_k = p, p += dd;
    m->w_v = p, p += dd;
    m->w_o = p, p += dd;
    m->x = p, p += nd;
    m->q = p, p += nd;
    m->k = p, p += nd;
    m->v = p, p += nd;
    m->scores = p, p += hnn;
    m->attn = p, p += hnn;
    m->heads = p, p += nd;
    m->concat = p, p += nd;
    m->out = p, p += nd;
    m->out_full = p, p += nd;
    MHA_EXPECT((size_t)(p - mem) <= total);
    m->alloc_n_ = n;
    m->alloc_d_ = d;
    m->alloc_h_ = h;
    m->weights_d_ = 0; /* weights must be regenerated into the new block */
    m->allocations_++;
    return 0;
}

int mha_model_set(mha_model *m, const mha_config *cfg_in, const tok_list *toks, char *err,
                  size_t errlen) {
    mha_config cfg = *cfg_in;
    mha_config_resolve(&cfg);
    const int n_real = toks ? toks->count : 0;
    if (mha_config_check(&cfg, n_real, err, errlen) != 0) return -1;
    const int d = cfg.d_model;
    const int n = cfg.pad ? cfg.pad : n_real;

    if (m->alloc_n_ != n || m->alloc_d_ != d || m->alloc_h_ != cfg.h) {
        if (model_alloc(m, n, d, cfg.h) != 0) {
            snprintf(err, errlen, "out of memory for n=%d d_model=%d h=%d", n, d, cfg.h);
            return -1;
        }
    }
    /* random weights depend on (seed, d_model) only; designed ones on h too */
    const int wh = cfg.weights == MHA_WEIGHTS_PATTERNS ? cfg.h : 0;
    if (m->weights_d_ != d || m->weights_seed_ != cfg.seed || m->weights_mode_ != cfg.weights ||
        m->weights_h_ != wh) {
        mha_weights_init(m->w_q, cfg.seed, d, 0);
        mha_weights_init(m->w_k, cfg.seed, d, 1);
        mha_weights_init(m->w_v, cfg.seed, d, 2);
        mha_weights_init(m->w_o, cfg.seed, d, 3);
        if (cfg.weights == MHA_WEIGHTS_PATTERNS) mha_patterns_weights(m->w_q, m->w_k, &cfg);
        m->weights_d_ = d;
        m->weights_seed_ = cfg.seed;
        m->weights_mode_ = cfg.weights;
        m->weights_h_ = wh;
    }
    for (int t = 0; t < n; t++) {
        float *row = m->x + (size_t)t * d;
        mha_embed_token(row, t < n_real ? toks->tokens[t] : MHA_PAD_TOKEN, cfg.seed, d);
        mha_add_positional(row, t, d);
    }
    if (cfg.weights == MHA_WEIGHTS_PATTERNS) mha_patterns_embed(m->x, toks, n_real, n, &cfg);
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
        float max = -INFINITY;
        for (int c = 0; c < cols; c++)
            if (row[c] > max) max = row[c];
        if (max == -INFINITY || isnan(max)) { /* fully masked row: no probability mass */
            for (int c = 0; c < cols; c++) row[c] = 0.0f;
            continue;
        }
        double sum = 0.0;
        for (int c = 0; c < cols; c++) {
            float e = row[c] == -INFINITY ? 0.0f : expf(row[c] - max);
            row[c] = e;
            sum += e;
        }
        float inv = (float)(1.0 / sum); /* sum >= 1: the max entry contributes exp(0) */
        for (int c = 0; c < cols; c++) row[c] *= inv;
    }
}

void mha_forward(mha_model *m) {
    const int n = m->n, n_real = m->n_real, d = m->cfg.d_model, h = m->cfg.h, dk = m->d_k;
    MHA_EXPECT(m->mem_ != NULL && n >= 1 && n_real >= 1 && n_real <= n && h >= 1 && dk * h == d);
    const size_t nn = (size_t)n * n;

    /* step 1: projections, Q = X W^Q, K = X W^K, V = X W^V, each (n, d) */
    mm_sgemm(m->q, d, m->x, d, m->w_q, d, n, d, d, 0, 1.0f, 0.0f);
    mm_sgemm(m->k, d, m->x, d, m->w_k, d, n, d, d, 0, 1.0f, 0.0f);
    mm_sgemm(m->v, d, m->x, d, m->w_v, d, n, d, d, 0, 1.0f, 0.0f);

    /* 1 / (sqrt(d_k) T), or 1 / T without scaling */
    const double root = m->cfg.no_scale ? 1.0 : sqrt((double)dk);
    const float scale = (float)(1.0 / (root * (double)m->cfg.temperature));
    for (int i = 0; i < h; i++) {
        const size_t col = (size_t)i * dk; /* head i's columns of Q, K, V */
        float *scores = m->scores + i * nn;
        float *attn = m->attn + i * nn;
        float *head = m->heads + (size_t)i * n * dk;

        /* step 2: scores_i = Q_i K_i^T / (sqrt(d_k) T), (n, n) */
        mm_sgemm(scores, n, m->q + col, d, m->k + col, d, n, n, dk, 1, scale, 0.0f);

        /* step 3: masks. Padding: keys [n_real, n) are not visible to any row.
           Causal: key j > query r is not visible. Every row keeps key 0. */
        for (int r = 0; r < n; r++) {
            int first_hidden = m->cfg.mask == MHA_MASK_CAUSAL && r + 1 < n_real ? r + 1 : n_real;
            for (int c = first_hidden; c < n; c++) scores[(size_t)r * n + c] = -INFINITY;
        }

        /* step 4: A_i = softmax of each row, max subtracted */
        memcpy(attn, scores, nn * sizeof(float));
        mha_softmax_rows(attn, n, n);

        /* step 5: head_i = A_i V_i, (n, d_k), and its place in Concat */
        mm_sgemm(head, dk, attn, n, m->v + col, d, n, dk, n, 0, 1.0f, 0.0f);
        for (int r = 0; r < n; r++)
            memcpy(m->concat + (size_t)r * d + col, head + (size_t)r * dk, dk * sizeof(float));
    }

    /* step 6: MultiHead = Concat W^O, (n, d), before any ablation */
    mm_sgemm(m->out_full, d, m->concat, d, m->w_o, d, n, d, d, 0, 1.0f, 0.0f);

    /* step 7: ablation. An ablated head's band of Concat is zeroed (its attention
       and head_i stay as computed) and MultiHead is recomputed from that Concat. */
    if (mha_config_ablated_count(&m->cfg) == 0) {
        memcpy(m->out, m->out_full, (size_t)n * d * sizeof(float));
        return;
    }
    for (int i = 0; i < h; i++)
        if (mha_config_is_ablated(&m->cfg, i))
            for (int r = 0; r < n; r++)
                memset(m->concat + (size_t)r * d + (size_t)i * dk, 0, dk * sizeof(float));
    mm_sgemm(m->out, d, m->concat, d, m->w_o, d, n, d, d, 0, 1.0f, 0.0f);
}

double mha_ablation_delta(const mha_model *m) {
    const size_t count = (size_t)m->n * m->cfg.d_model;
    double diff = 0.0, full = 0.0;
    for (size_t i = 0; i < count; i++) {
        double o = m->out[i], f = m->out_full[i];
        diff += (o - f) * (o - f);
        full += f * f;
    }
    return full > 0.0 ? sqrt(diff / full) : 0.0;
}

int mha_model_compute(mha_model *m, const mha_config *cfg, const tok_list *toks, char *err,
                      size_t errlen) {
    if (mha_model_set(m, cfg, toks, err, errlen) != 0) return -1;
    mha_forward(m);
    return 0;
}
