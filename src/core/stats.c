/* stats.c: entropy and divergence of the heads' attention rows, and one head's
 * intermediate products (see stats.h). Products go through blas.c; the rest
 * are plain loops in double. */
#include "stats.h"

#include <math.h>

#include "blas.h"

/* -sum p log2 p over one row (0 log 0 = 0). */
static double row_entropy(const float *p, int n) {
    double h = 0.0;
    for (int k = 0; k < n; k++)
        if (p[k] > 0.0f) h -= (double)p[k] * log2((double)p[k]);
    return h;
}

void mha_head_entropy(float *out, const mha_model *m) {
    const int n = m->n, rows = m->n_real > 0 ? m->n_real : n;
    for (int i = 0; i < m->cfg.h; i++) {
        double sum = 0.0;
        for (int r = 0; r < rows; r++) sum += row_entropy(m->attn + ((size_t)i * n + r) * n, n);
        out[i] = (float)(sum / rows);
    }
}

/* JS(p, q) = 1/2 KL(p || mid) + 1/2 KL(q || mid), mid = (p + q) / 2, in bits. */
static double row_js(const float *p, const float *q, int n) {
    double js = 0.0;
    for (int k = 0; k < n; k++) {
        double a = p[k], b = q[k], mid = 0.5 * (a + b);
        if (a > 0.0) js += 0.5 * a * log2(a / mid);
        if (b > 0.0) js += 0.5 * b * log2(b / mid);
    }
    return js < 0.0 ? 0.0 : js;
}

void mha_head_divergence(float *out, const mha_model *m) {
    const int n = m->n, h = m->cfg.h, rows = m->n_real > 0 ? m->n_real : n;
    for (int i = 0; i < h; i++) {
        out[(size_t)i * h + i] = 0.0f;
        for (int j = i + 1; j < h; j++) {
            double sum = 0.0;
            for (int r = 0; r < rows; r++)
                sum +=
                    row_js(m->attn + ((size_t)i * n + r) * n, m->attn + ((size_t)j * n + r) * n, n);
            out[(size_t)i * h + j] = out[(size_t)j * h + i] = (float)(sum / rows);
        }
    }
}

void mha_head_raw_scores(float *out, const mha_model *m, int head) {
    const int n = m->n, d = m->cfg.d_model, dk = m->d_k;
    MHA_EXPECT(head >= 0 && head < m->cfg.h);
    /* S (n, n) = Q_i (n, dk) K_i^T, both column slices of (n, d) matrices */
    mm_sgemm(out, n, m->q + (size_t)head * dk, d, m->k + (size_t)head * dk, d, n, n, dk, 1, 1.0f,
             0.0f);
}

void mha_head_output(float *out, const mha_model *m, int head) {
    const int n = m->n, d = m->cfg.d_model, dk = m->d_k;
    MHA_EXPECT(head >= 0 && head < m->cfg.h);
    /* (n, d) = head_i (n, dk) W^O rows [i dk, (i + 1) dk) (dk, d) */
    mm_sgemm(out, d, m->heads + (size_t)head * n * dk, dk, m->w_o + (size_t)head * dk * d, d, n, d,
             dk, 0, 1.0f, 0.0f);
}
