/* stats.c: entropy and divergence of the heads' attention rows, and one head's
 * intermediate products (see stats.h). Products go through blas.c; the rest
 * are plain loops in double. */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "expect.h"

/* -sum p log2 p over one row (0 log 0 = 0). */
static double row_entropy(const float *p, int n) {
    double h = 0.0;
    for (int k = 0; k < n; k++)
        if (p[k] > 0.0f) h -= (double)p[k] * log2((double)p[k]);
    return h;
}

void attn_head_entropy(float *out, const attn_layer *L) {
    MHA_EXPECT(L->attn != NULL);
    const int n = L->n, rows = L->n_real > 0 ? L->n_real : n;
    for (int i = 0; i < L->h; i++) {
        double sum = 0.0;
        for (int r = 0; r < rows; r++) sum += row_entropy(L->attn + ((size_t)i * n + r) * n, n);
        out[i] = (float)(sum / rows);
    }
}

double attn_entropy_max(const attn_layer *L) {
    const int rows = L->n_real > 0 ? L->n_real : L->n;
    if (rows <= 0) return 0.0;
    if (L->mask != ATTN_MASK_CAUSAL) return log2((double)rows);
    double sum = 0.0; /* row r sees keys 0 .. r, all of the text's (r < rows) */
    for (int r = 0; r < rows; r++) sum += log2((double)(r + 1));
    return sum / rows;
}

/* sum p log2 p over one row (0 log 0 = 0): minus the row's entropy */
static double row_plogp(const float *p, int n) {
    double s = 0.0;
    for (int k = 0; k < n; k++)
        if (p[k] > 0.0f) s += (double)p[k] * (double)log2f(p[k]);
    return s;
}

void attn_head_divergence(float *out, const attn_layer *L, int row_step) {
    MHA_EXPECT(L->attn != NULL);
    const int n = L->n, h = L->h, rows = L->n_real > 0 ? L->n_real : n;
    const int step = row_step > 0 ? row_step : 1;
    const int used = (rows + step - 1) / step;
    /* JS(p, q) = H(mid) - (H(p) + H(q)) / 2 with mid = (p + q) / 2: the two
       entropies are per head and row, so only H(mid) is per pair, one log an
       element (float log2: the sums stay in double) */
    double *plogp = malloc(sizeof(double) * (size_t)h * (size_t)used);
    if (!plogp) { /* out of memory: say "not alike" rather than guess */
        for (size_t k = 0; k < (size_t)h * h; k++) out[k] = 1.0f;
        for (int i = 0; i < h; i++) out[(size_t)i * h + i] = 0.0f;
        return;
    }
    for (int i = 0; i < h; i++)
        for (int r = 0, u = 0; r < rows; r += step, u++)
            plogp[(size_t)i * used + u] = row_plogp(L->attn + ((size_t)i * n + r) * n, n);
    for (int i = 0; i < h; i++) {
        out[(size_t)i * h + i] = 0.0f;
        for (int j = i + 1; j < h; j++) {
            double sum = 0.0;
            for (int r = 0, u = 0; r < rows; r += step, u++) {
                const float *p = L->attn + ((size_t)i * n + r) * n;
                const float *q = L->attn + ((size_t)j * n + r) * n;
                double mid = 0.0;
                for (int k = 0; k < n; k++) {
                    float v = 0.5f * (p[k] + q[k]);
                    if (v > 0.0f) mid += (double)v * (double)log2f(v);
                }
                double js = 0.5 * (plogp[(size_t)i * used + u] + plogp[(size_t)j * used + u]) - mid;
                sum += js > 0.0 ? js : 0.0;
            }
            out[(size_t)i * h + j] = out[(size_t)j * h + i] = (float)(sum / used);
        }
    }
    free(plogp);
}

/* JS(p, q) in bits between two rows of n weights. */
static double row_js(const float *p, const float *q, int n) {
    double mid = 0.0;
    for (int k = 0; k < n; k++) {
        const double v = 0.5 * ((double)p[k] + (double)q[k]);
        if (v > 0.0) mid += v * log2(v);
    }
    const double js = 0.5 * (row_plogp(p, n) + row_plogp(q, n)) - mid;
    return js > 0.0 ? js : 0.0;
}

/* splitmix64: the permutations' numbers */
static uint64_t mix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Shuffles a row: the baseline is their mean. One alone leaves the least and most
   pair about 0.05 wider than their expectations at a dozen rows; a short text gets
   16, a long one (more rows, each costing n) 4. */
static int baseline_draws(int n) {
    return n <= 64 ? 16 : 4;
}

int attn_alike_baseline(float *lo, float *hi, const attn_layer *L, int row_step) {
    MHA_EXPECT(L->attn != NULL);
    const int n = L->n, h = L->h, rows = L->n_real > 0 ? L->n_real : n;
    const int step = row_step > 0 ? row_step : 1;
    const int draws = baseline_draws(n);
    if (h < 2) return -1;
    float *shuffled = malloc(sizeof(float) * (size_t)n);
    if (!shuffled) return -1;
    double least = 1.0, most = 0.0;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < h; j++) {
            if (i == j) continue;
            double sum = 0.0;
            int used = 0;
            for (int r = 0; r < rows; r += step, used++) {
                const float *p = L->attn + ((size_t)i * n + r) * n;
                const float *q = L->attn + ((size_t)j * n + r) * n;
                /* the keys row r may see (0 .. r under the causal mask, the text's);
                   the others are 0 in both rows */
                const int seen = L->mask == ATTN_MASK_CAUSAL && r + 1 < rows ? r + 1 : rows;
                uint64_t x = ((uint64_t)i * 65536u + (uint64_t)j) * 1048576u + (uint64_t)r;
                for (int draw = 0; draw < draws; draw++) {
                    memcpy(shuffled, q, sizeof(float) * (size_t)seen);
                    for (int k = seen - 1; k > 0; k--) { /* Fisher-Yates over the keys seen */
                        const int o = (int)(mix(&x) % (uint64_t)(k + 1));
                        const float t = shuffled[k];
                        shuffled[k] = shuffled[o];
                        shuffled[o] = t;
                    }
                    sum += row_js(p, shuffled, seen) / draws;
                }
            }
            const double alike = 1.0 - sum / used;
            least = alike < least ? alike : least;
            most = alike > most ? alike : most;
        }
    free(shuffled);
    *lo = (float)least;
    *hi = (float)most;
    return 0;
}

int attn_head_scores_ok(const attn_layer *L) {
    return (L->q && L->k) || (L->q_rot && L->k_rot);
}

void attn_head_raw_scores(float *out, const attn_layer *L, int head) {
    const int n = L->n, d = L->d_model, dk = L->d_k;
    MHA_EXPECT(head >= 0 && head < L->h && attn_head_scores_ok(L));
    if (!L->q || !L->k) { /* (n, h dk) and (n, h_kv dk): head i reads K/V head g */
        const int hkv = L->h_kv > 0 ? L->h_kv : L->h, g = head / (L->h / hkv);
        mm_sgemm(out, n, L->q_rot + (size_t)head * dk, L->h * dk, L->k_rot + (size_t)g * dk,
                 hkv * dk, n, n, dk, 1, 1.0f, 0.0f);
        return;
    }
    /* S (n, n) = Q_i (n, dk) K_i^T, both column slices of (n, d) matrices */
    mm_sgemm(out, n, L->q + (size_t)head * dk, d, L->k + (size_t)head * dk, d, n, n, dk, 1, 1.0f,
             0.0f);
}

void attn_head_output(float *out, const attn_layer *L, int head) {
    const int n = L->n, d = L->d_model, dk = L->d_k;
    MHA_EXPECT(head >= 0 && head < L->h && L->heads && L->w_o);
    /* (n, d) = head_i (n, dk) W^O rows [i dk, (i + 1) dk) (dk, d) */
    mm_sgemm(out, d, L->heads + (size_t)head * n * dk, dk, L->w_o + (size_t)head * dk * d, d, n, d,
             dk, 0, 1.0f, 0.0f);
}

int attn_head_contrib(float *cos, float *change, const attn_layer *L, int row_step) {
    MHA_EXPECT(L->heads && L->w_o && L->out_full);
    const int n = L->n, h = L->h, d = L->d_model, dk = L->d_k;
    const int step = row_step > 0 ? row_step : 1;
    const int used = (n + step - 1) / step;
    const size_t band = (size_t)used * d; /* one head's contribution over the rows used */
    float *c = malloc(sizeof(float) * band * (size_t)h);
    float *rows = malloc(sizeof(float) * (size_t)used * dk);
    double *gram = malloc(sizeof(double) * (size_t)h * h);
    if (!c || !rows || !gram) {
        free(c), free(rows), free(gram);
        return -1;
    }
    for (int i = 0; i < h; i++) {
        const float *hi = L->heads + (size_t)i * n * dk; /* head_i, (n, dk) */
        for (int r = 0, u = 0; r < n; r += step, u++)
            for (int k = 0; k < dk; k++) rows[(size_t)u * dk + k] = hi[(size_t)r * dk + k];
        /* (used, d) = head_i's rows (used, dk) W^O rows [i dk, (i + 1) dk) (dk, d) */
        mm_sgemm(c + (size_t)i * band, d, rows, dk, L->w_o + (size_t)i * dk * d, d, used, d, dk, 0,
                 1.0f, 0.0f);
    }
    /* the Gram matrix of the contributions, in double (h <= 16 is the view's bound,
       but any h works: h^2 band products) */
    for (int i = 0; i < h; i++)
        for (int j = i; j < h; j++) {
            const float *a = c + (size_t)i * band, *b = c + (size_t)j * band;
            double s = 0.0;
            for (size_t k = 0; k < band; k++) s += (double)a[k] * (double)b[k];
            gram[(size_t)i * h + j] = gram[(size_t)j * h + i] = s;
        }
    double full = 0.0;
    for (int r = 0; r < n; r += step)
        for (int k = 0; k < d; k++) {
            const double f = L->out_full[(size_t)r * d + k];
            full += f * f;
        }
    for (int i = 0; i < h; i++) {
        const double ni = gram[(size_t)i * h + i];
        change[i] = full > 0.0 ? (float)sqrt(ni / full) : 0.0f;
        for (int j = 0; j < h; j++) {
            const double nj = gram[(size_t)j * h + j];
            cos[(size_t)i * h + j] =
                ni > 0.0 && nj > 0.0 ? (float)(gram[(size_t)i * h + j] / sqrt(ni * nj)) : 0.0f;
        }
    }
    free(c), free(rows), free(gram);
    return 0;
}
