/* layers.c: forward and backward of each layer of the learner, side by side, and
 * AdamW. Matrix products go through mm_sgemm / mm_sgemm_t (src/core/blas.h); the
 * attention softmax is the core's mha_softmax_rows, so the forward is the app's.
 * Nothing here allocates or keeps state. */
#include "layers.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "attention.h"
#include "blas.h"
#include "layer.h"
#include "mha.h"
#include "softmax.h"

/* ------------------------------------------------------------------------------ */
/* token + position embedding                                                      */

void encoder_forward(float *out, const int *tok, const float *wte, const float *wpe, int B, int T,
                     int d) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *o = out + ((size_t)b * T + t) * d;
            const float *e = wte + (size_t)tok[b * T + t] * d, *p = wpe + (size_t)t * d;
            for (int i = 0; i < d; i++) o[i] = e[i] + p[i];
        }
}

void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tok, int B, int T,
                      int d) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *g = dout + ((size_t)b * T + t) * d;
            float *de = dwte + (size_t)tok[b * T + t] * d, *dp = dwpe + (size_t)t * d;
            for (int i = 0; i < d; i++) {
                de[i] += g[i];
                dp[i] += g[i];
            }
        }
}

/* ------------------------------------------------------------------------------ */
/* the elementwise layers on the workers                                           */

/* Spans of [0, n) (rows, or elements in multiples of 16) as tasks of mm_parallel,
   one a worker: every element is computed by the same code whatever the number of
   workers (a span ends at a multiple of 16, so the vector loops and their scalar tails
   take the same elements), so the results do not depend on the thread count. */
typedef struct {
    void (*fn)(const void *args, size_t lo, size_t hi);
    const void *args;
    size_t n, align;
    int spans;
} span_job;

static void span_task(void *ctx, int t) {
    const span_job *j = ctx;
    const size_t units = (j->n + j->align - 1) / j->align;
    const size_t lo = units * (size_t)t / (size_t)j->spans * j->align;
    size_t hi = units * (size_t)(t + 1) / (size_t)j->spans * j->align;
    if (hi > j->n) hi = j->n;
    if (lo < hi) j->fn(j->args, lo, hi);
}

/* fn(args, lo, hi) over [0, n), on the workers `flops` of work is worth */
static void spans(size_t n, size_t align, double flops, void (*fn)(const void *, size_t, size_t),
                  const void *args) {
    const int w = mm_workers_for(flops);
    if (w <= 1 || n < 2 * align) {
        fn(args, 0, n);
        return;
    }
    span_job j = {fn, args, n, align, w};
    mm_parallel(w, w, span_task, &j);
}

/* ------------------------------------------------------------------------------ */
/* sums in eight partial sums, side by side (as the core's softmax adds), so that the
   compiler keeps them in one vector register: a single running float sum is a chain
   of dependent adds that no -O2 build vectorises (LayerNorm's were 5 % of a step) */

enum { LANES = 8 };

static float lanes_total(const float *p) {
    return ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
}

static float lane_sum(const float *x, int n) {
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) acc[l] += x[i + l];
    float t = lanes_total(acc);
    for (; i < n; i++) t += x[i];
    return t;
}

/* the dot product of a and b over [0, n) */
static float lane_dot(const float *a, const float *b, int n) {
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) acc[l] += a[i + l] * b[i + l];
    float t = lanes_total(acc);
    for (; i < n; i++) t += a[i] * b[i];
    return t;
}

/* ------------------------------------------------------------------------------ */
/* LayerNorm                                                                       */

typedef struct {
    float *out, *mean, *rstd, *dinp, *dgain, *dbias;
    const float *inp, *gain, *bias, *dout;
    const float *mean_in, *rstd_in; /* the backward's */
    int N, d;
    float eps;
} ln_args;

static void ln_forward_rows(const void *args, size_t r0, size_t r1) {
    const ln_args *a = args;
    const int d = a->d;
    for (size_t r = r0; r < r1; r++) {
        const float *x = a->inp + r * d;
        float *o = a->out + r * d;
        const float m = lane_sum(x, d) / (float)d;
        float dev[LANES] = {0}; /* the biased variance, as torch.nn.LayerNorm */
        int i = 0;
        for (; i + LANES <= d; i += LANES)
            for (int l = 0; l < LANES; l++) dev[l] += (x[i + l] - m) * (x[i + l] - m);
        float var = lanes_total(dev);
        for (; i < d; i++) var += (x[i] - m) * (x[i] - m);
        var /= (float)d;
        float s = 1.0f / sqrtf(var + a->eps);
        for (int i = 0; i < d; i++) o[i] = (x[i] - m) * s * a->gain[i] + a->bias[i];
        a->mean[r] = m;
        a->rstd[r] = s;
    }
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *gain,
                       const float *bias, int N, int d, float eps) {
    const ln_args a = {.out = out,
                       .mean = mean,
                       .rstd = rstd,
                       .inp = inp,
                       .gain = gain,
                       .bias = bias,
                       .N = N,
                       .d = d,
                       .eps = eps};
    spans((size_t)N, 1, 8.0 * N * d, ln_forward_rows, &a);
}

/* the input gradient, rows [r0, r1) */
static void ln_backward_rows(const void *args, size_t r0, size_t r1) {
    const ln_args *a = args;
    const int d = a->d;
    for (size_t r = r0; r < r1; r++) {
        const float *g = a->dout + r * d, *x = a->inp + r * d;
        float *dx = a->dinp + r * d;
        const float m = a->mean_in[r], s = a->rstd_in[r];
        /* pass 1: the two means the input gradient needs */
        float sd[LANES] = {0}, sdn[LANES] = {0};
        int i = 0;
        for (; i + LANES <= d; i += LANES)
            for (int l = 0; l < LANES; l++) {
                const float norm = (x[i + l] - m) * s, dnorm = a->gain[i + l] * g[i + l];
                sd[l] += dnorm;
                sdn[l] += dnorm * norm;
            }
        float dnorm_mean = lanes_total(sd), dnorm_norm_mean = lanes_total(sdn);
        for (; i < d; i++) {
            const float norm = (x[i] - m) * s, dnorm = a->gain[i] * g[i];
            dnorm_mean += dnorm;
            dnorm_norm_mean += dnorm * norm;
        }
        dnorm_mean /= (float)d;
        dnorm_norm_mean /= (float)d;
        /* pass 2: the input gradient */
        for (int i = 0; i < d; i++) {
            float norm = (x[i] - m) * s, dnorm = a->gain[i] * g[i];
            dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
}

/* the gain and bias gradients, columns [c0, c1), summed over the rows in order */
static void ln_backward_cols(const void *args, size_t c0, size_t c1) {
    const ln_args *a = args;
    const int d = a->d;
    for (int r = 0; r < a->N; r++) {
        const float *g = a->dout + (size_t)r * d, *x = a->inp + (size_t)r * d;
        const float m = a->mean_in[r], s = a->rstd_in[r];
        for (size_t i = c0; i < c1; i++) {
            float norm = (x[i] - m) * s;
            a->dbias[i] += g[i];
            a->dgain[i] += norm * g[i];
        }
    }
}

void layernorm_backward(float *dinp, float *dgain, float *dbias, const float *dout,
                        const float *inp, const float *gain, const float *mean, const float *rstd,
                        int N, int d) {
    const ln_args a = {.dinp = dinp,
                       .dgain = dgain,
                       .dbias = dbias,
                       .dout = dout,
                       .inp = inp,
                       .gain = gain,
                       .mean_in = mean,
                       .rstd_in = rstd,
                       .N = N,
                       .d = d};
    spans((size_t)N, 1, 10.0 * N * d, ln_backward_rows, &a);
    spans((size_t)d, 16, 4.0 * N * d, ln_backward_cols, &a);
}

/* ------------------------------------------------------------------------------ */
/* matrix product (the forward's is the core's sublayer.c)                         */

void tf_sublayer_weights(attn_sublayer *s, const tf_layer_params *lp) {
    s->w_q = lp->w_q, s->b_q = lp->b_q;
    s->w_k = lp->w_k, s->b_k = lp->b_k;
    s->w_v = lp->w_v, s->b_v = lp->b_v;
    s->w_o = lp->w_o, s->b_o = lp->b_o;
}

void matmul_backward(float *dinp, float dinp_beta, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, int N, int c, int oc) {
    if (dinp) mm_sgemm(dinp, c, dout, oc, w, oc, N, c, oc, 1, 1.0f, dinp_beta); /* dout w^T */
    mm_sgemm_t(dw, oc, inp, c, 1, dout, oc, 0, c, oc, N, 1.0f, 1.0f);           /* inp^T dout */
    if (dbias)
        for (int r = 0; r < N; r++) {
            const float *g = dout + (size_t)r * oc;
            for (int j = 0; j < oc; j++) dbias[j] += g[j];
        }
}

void unembed_tied_forward(float *logits, const float *inp, const float *wte, int N, int d, int V) {
    mm_sgemm(logits, V, inp, d, wte, d, N, V, d, 1, 1.0f, 0.0f); /* inp wte^T */
}

void unembed_tied_backward(float *dinp, float *dwte, const float *dlogits, const float *inp,
                           const float *wte, int N, int d, int V) {
    mm_sgemm(dinp, d, dlogits, V, wte, d, N, d, V, 0, 1.0f, 0.0f);      /* dlogits wte */
    mm_sgemm_t(dwte, d, dlogits, V, 1, inp, d, 0, V, d, N, 1.0f, 1.0f); /* dlogits^T inp */
}

/* ------------------------------------------------------------------------------ */
/* causal multi-head attention's backward (its forward: the core's sublayer.c)      */

/* One example's work is one task of mm_parallel (blas.h): on one worker or several,
   every example's numbers come from the same products in the same order, so the
   results do not depend on the thread count. */
typedef struct {
    float *dq, *dk, *dv, *scratch;
    const float *q, *k, *v, *dconcat, *attn_in;
    const unsigned char *ablate;
    int T, d, h;
} attn_job;

/* the FLOPs of the attention's products over B examples: the workers they are worth */
static int attn_workers(int B, int T, int d, int products) {
    return mm_workers_for((double)products * 2.0 * B * T * T * d);
}

static void attn_backward_example(void *ctx, int b) {
    const attn_job *j = ctx;
    const int T = j->T, d = j->d, h = j->h, dkk = d / h;
    const size_t tt = (size_t)T * T;
    const float scale = attn_scale(dkk, 1, 1.0f);
    const size_t row0 = (size_t)b * T * d;
    for (int i = 0; i < h; i++) {
        const size_t off = row0 + (size_t)i * dkk;
        if (j->ablate && j->ablate[i]) { /* the head's output was zeroed: no gradient */
            for (int r = 0; r < T; r++) {
                memset(j->dq + off + (size_t)r * d, 0, dkk * sizeof(float));
                memset(j->dk + off + (size_t)r * d, 0, dkk * sizeof(float));
                memset(j->dv + off + (size_t)r * d, 0, dkk * sizeof(float));
            }
            continue;
        }
        const float *a = j->attn_in + ((size_t)b * h + i) * tt, *dhead = j->dconcat + off;
        const float *vi = j->v + off, *ki = j->k + off, *qi = j->q + off;
        /* dA, then dS in its place, in example b's one (T, T) slot for all its heads:
           16 KiB at T 64 stays in the cache, where a slot each for dA and dS a head
           (B h T^2 floats twice, 8 MiB a layer at batch 16) went out to memory: a
           training step at d_model 128, h 8, T 64 took 73 ms instead of 65 */
        float *da = j->scratch + (size_t)b * tt, *ds = da;
        /* In blocks of ATTN_BLOCK rows (attention.h), as the forward: query rows
           [r0, r1) see keys [0, r1), and key rows [r0, r1) are seen by queries
           [r0, T), so no product multiplies the hidden upper triangle's blocks. */
        /* step 3 back: dA = dhead V_i^T (the keys each row block sees), dV_i = A^T dhead;
           a small head's dA as dhead (V_i^T), V_i^T copied once, as the forward's scores
           (attention.c: OpenBLAS's small kernels take no transposed B of d_k < 32) */
        float vt[ATTN_KT_MAX];
        const int small = T * dkk <= ATTN_KT_MAX;
        if (small) attn_copy_transposed(vt, vi, T, dkk, d);
        for (int r0 = 0; r0 < T; r0 += ATTN_BLOCK) {
            const int r1 = T - r0 > ATTN_BLOCK ? r0 + ATTN_BLOCK : T;
            if (small)
                mm_sgemm(da + (size_t)r0 * T, T, dhead + (size_t)r0 * d, d, vt, T, r1 - r0, r1, dkk,
                         0, 1.0f, 0.0f);
            else
                mm_sgemm(da + (size_t)r0 * T, T, dhead + (size_t)r0 * d, d, vi, d, r1 - r0, r1, dkk,
                         1, 1.0f, 0.0f);
            mm_sgemm_t(j->dv + off + (size_t)r0 * d, d, a + (size_t)r0 * T + r0, T, 1,
                       dhead + (size_t)r0 * d, d, 0, r1 - r0, dkk, T - r0, 1.0f, 0.0f);
        }
        /* step 2 back: softmax, ds = a * (da - sum(a * da)) per row over the keys it
           sees; 0 above the diagonal, where the products below read it */
        for (int r = 0; r < T; r++) {
            const float *ar = a + (size_t)r * T, *dar = da + (size_t)r * T;
            float *dsr = ds + (size_t)r * T;
            const float dot = lane_dot(ar, dar, r + 1);
            for (int c = 0; c <= r; c++) dsr[c] = ar[c] * (dar[c] - dot);
            for (int c = r + 1; c < T; c++) dsr[c] = 0.0f;
        }
        /* step 1 back: dQ_i = ds K_i / sqrt(d_k), dK_i = ds^T Q_i / sqrt(d_k) */
        for (int r0 = 0; r0 < T; r0 += ATTN_BLOCK) {
            const int r1 = T - r0 > ATTN_BLOCK ? r0 + ATTN_BLOCK : T;
            mm_sgemm(j->dq + off + (size_t)r0 * d, d, ds + (size_t)r0 * T, T, ki, d, r1 - r0, dkk,
                     r1, 0, scale, 0.0f);
            mm_sgemm_t(j->dk + off + (size_t)r0 * d, d, ds + (size_t)r0 * T + r0, T, 1,
                       qi + (size_t)r0 * d, d, 0, r1 - r0, dkk, T - r0, scale, 0.0f);
        }
    }
}

void attention_backward(float *dq, float *dk, float *dv, float *scratch, const float *dconcat,
                        const float *q, const float *k, const float *v, const float *attn,
                        const unsigned char *ablate, int B, int T, int d, int h) {
    attn_job j = {.dq = dq,
                  .dk = dk,
                  .dv = dv,
                  .scratch = scratch,
                  .q = q,
                  .k = k,
                  .v = v,
                  .dconcat = dconcat,
                  .attn_in = attn,
                  .ablate = ablate,
                  .T = T,
                  .d = d,
                  .h = h};
    mm_parallel(B, attn_workers(B, T, d, 4), attn_backward_example, &j);
}

/* ------------------------------------------------------------------------------ */
/* MLP non-linearity and residual                                                  */

#define GELU_TANH_C 0.7978845608f /* sqrt(2 / pi) */
#define GELU_TANH_A 0.044715f

/* Phi(x), the standard normal CDF, as 0.5 erfc(-x / sqrt 2) with erfc by Numerical
   Recipes' Chebyshev fit (erfcc: fractional error below 1.2e-7 for every x) and the
   softmax's exp: no libm call and no branch, so the GELU loops vectorise (erff kept
   them scalar: a quarter of a training step with the MLP at d_model 128). Within
   3e-7 of the double-precision Phi everywhere (tests/test_learn.c). */
static inline float normal_cdf(float x) {
    const float z = fabsf(x) * 0.70710678f;
    const float t = 1.0f / (1.0f + 0.5f * z);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    const float e = p - z * z; /* <= 3e-8 (at z = 0); clamped for the exp of x <= 0 */
    const float half_erfc = 0.5f * t * mha_exp_nonpos(e < 0.0f ? e : 0.0f); /* erfc(z) / 2 */
    return x >= 0.0f ? 1.0f - half_erfc : half_erfc;
}

/* The backward's Phi(x) is the forward's output over x (one division, not the erfc fit
   again: GELU's backward was 5 % of a training step), and 1/2 within GELU_TINY of 0,
   where the division would lose it; the same rounding as the forward's Phi within an
   ulp or two. */
#define GELU_TINY 1e-20f

static inline float cdf_of(float x, float out) {
    return fabsf(x) < GELU_TINY ? 0.5f : out / x;
}

/* The exact GELU's two loops in AVX2 with FMA where the processor has them (8 at a
   time; the same formulas, fused products: they differ from the portable loops in
   rounding only, and a machine always runs the same ones). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define GELU_AVX2 1
#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 normal_cdf8(__m256 x) { /* normal_cdf, 8 at a time */
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(0.70710678f));
    const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(half, z, one));
    __m256 p = _mm256_set1_ps(0.17087277f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
    const __m256 e = _mm256_min_ps(_mm256_fnmadd_ps(z, z, p), _mm256_setzero_ps());
    const __m256 h = _mm256_mul_ps(_mm256_mul_ps(half, t), mha_exp_nonpos8(e)); /* erfc(z) / 2 */
    const __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    return _mm256_blendv_ps(h, _mm256_sub_ps(one, h), pos);
}

/* out = x Phi(x) for [0, n - n % 8); returns where the scalar tail starts */
AVX2 static size_t gelu_forward8(float *out, const float *inp, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(inp + i);
        _mm256_storeu_ps(out + i, _mm256_mul_ps(x, normal_cdf8(x)));
    }
    return i;
}

/* dinp = (Phi(x) + x phi(x)) dout for [0, n - n % 8), Phi(x) = out / x (cdf_of) */
AVX2 static size_t gelu_backward8(float *dinp, const float *inp, const float *out,
                                  const float *dout, size_t n) {
    size_t i = 0;
    const __m256 mhalf = _mm256_set1_ps(-0.5f), c = _mm256_set1_ps(0.39894228f);
    const __m256 sign = _mm256_set1_ps(-0.0f), tiny = _mm256_set1_ps(GELU_TINY);
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(inp + i);
        const __m256 pdf =
            _mm256_mul_ps(c, mha_exp_nonpos8(_mm256_mul_ps(_mm256_mul_ps(mhalf, x), x)));
        const __m256 near0 = _mm256_cmp_ps(_mm256_andnot_ps(sign, x), tiny, _CMP_LT_OQ);
        const __m256 cdf = _mm256_blendv_ps(_mm256_div_ps(_mm256_loadu_ps(out + i), x),
                                            _mm256_set1_ps(0.5f), near0);
        const __m256 dy = _mm256_fmadd_ps(x, pdf, cdf);
        _mm256_storeu_ps(dinp + i, _mm256_mul_ps(dy, _mm256_loadu_ps(dout + i)));
    }
    return i;
}

/* The same two loops on 16 lanes with AVX-512F, where the processor has it (half the
   instructions of the 8-lane loops: GELU's forward was the largest step of a training
   step after the products); the same formulas, so they differ in rounding only. */
#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline __m512 normal_cdf16(__m512 x) { /* normal_cdf, 16 at a time */
    const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678f));
    const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
    const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(half, z, one));
    __m512 p = _mm512_set1_ps(0.17087277f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
    const __m512 e = _mm512_min_ps(_mm512_fnmadd_ps(z, z, p), _mm512_setzero_ps());
    const __m512 h = _mm512_mul_ps(_mm512_mul_ps(half, t), mha_exp_nonpos16(e)); /* erfc(z)/2 */
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mask_sub_ps(h, pos, one, h);
}

AVX512 static size_t gelu_forward16(float *out, const float *inp, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(inp + i);
        _mm512_storeu_ps(out + i, _mm512_mul_ps(x, normal_cdf16(x)));
    }
    return i;
}

AVX512 static size_t gelu_backward16(float *dinp, const float *inp, const float *out,
                                     const float *dout, size_t n) {
    size_t i = 0;
    const __m512 mhalf = _mm512_set1_ps(-0.5f), c = _mm512_set1_ps(0.39894228f);
    const __m512 tiny = _mm512_set1_ps(GELU_TINY);
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(inp + i);
        const __m512 pdf =
            _mm512_mul_ps(c, mha_exp_nonpos16(_mm512_mul_ps(_mm512_mul_ps(mhalf, x), x)));
        const __mmask16 near0 = _mm512_cmp_ps_mask(_mm512_abs_ps(x), tiny, _CMP_LT_OQ);
        const __m512 cdf = _mm512_mask_blend_ps(near0, _mm512_div_ps(_mm512_loadu_ps(out + i), x),
                                                _mm512_set1_ps(0.5f));
        const __m512 dy = _mm512_fmadd_ps(x, pdf, cdf);
        _mm512_storeu_ps(dinp + i, _mm512_mul_ps(dy, _mm512_loadu_ps(dout + i)));
    }
    return i;
}

static int have_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static int have_avx512(void) {
    return __builtin_cpu_supports("avx512f");
}

static _Atomic int gelu_cap_ = 0; /* act_gelu_lanes' cap; 0: none */

/* the widest loop the processor runs, within the cap */
static int gelu_lanes(void) {
    const int simd = mha_simd_lanes(), set = gelu_cap_; /* one read of the cap */
    const int cap = set == 0 || set > simd ? simd : set;
    if (cap >= 16 && have_avx512()) return 16;
    if (cap >= 8 && have_avx2()) return 8;
    return 1;
}
#else
#define GELU_AVX2 0
static int gelu_lanes(void) {
    return 1;
}
#endif

int act_gelu_lanes(int cap) {
#if GELU_AVX2
    gelu_cap_ = cap > 0 ? cap : 0;
#else
    (void)cap;
#endif
    return gelu_lanes();
}

static void act_forward_span(float *out, const float *inp, size_t n, tf_act act) {
    if (act == TF_ACT_RELU) {
        for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
    } else if (act == TF_ACT_GELU_TANH) {
        /* 0.5 x (1 + tanh u) = x sigmoid(2u), the sigmoid from the softmax's exp of
           -|2u| (no tanhf: a loop the compiler vectorises, 5x faster; within 2e-7
           relative of tanhf's) */
        for (size_t i = 0; i < n; i++) {
            const float x = inp[i];
            const float z = 2.0f * GELU_TANH_C * (x + GELU_TANH_A * x * x * x);
            const float e = mha_exp_nonpos(-fabsf(z));
            const float sig = z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
            out[i] = x * sig;
        }
    } else {
        size_t i = 0;
#if GELU_AVX2
        const int lanes = gelu_lanes();
        if (lanes == 16)
            i = gelu_forward16(out, inp, n);
        else if (lanes == 8)
            i = gelu_forward8(out, inp, n);
#endif
        for (; i < n; i++) out[i] = inp[i] * normal_cdf(inp[i]);
    }
}

static void act_backward_span(float *dinp, const float *inp, const float *out, const float *dout,
                              size_t n, tf_act act) {
    if (act == TF_ACT_RELU) {
        for (size_t i = 0; i < n; i++) dinp[i] = inp[i] > 0.0f ? dout[i] : 0.0f;
    } else if (act == TF_ACT_GELU_TANH) {
        /* y = x (1 + tanh u) / 2, u = c (x + a x^3):
           y' = (1 + tanh u) / 2 + x (1 - tanh^2 u) c (1 + 3 a x^2) / 2 */
        for (size_t i = 0; i < n; i++) {
            const float x = inp[i];
            const float t = tanhf(GELU_TANH_C * (x + GELU_TANH_A * x * x * x));
            const float du = GELU_TANH_C * (1.0f + 3.0f * GELU_TANH_A * x * x);
            dinp[i] = (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du) * dout[i];
        }
    } else {
        /* d/dx x Phi(x) = Phi(x) + x phi(x) */
        size_t i = 0;
#if GELU_AVX2
        const int lanes = gelu_lanes();
        if (lanes == 16)
            i = gelu_backward16(dinp, inp, out, dout, n);
        else if (lanes == 8)
            i = gelu_backward8(dinp, inp, out, dout, n);
#endif
        for (; i < n; i++) {
            const float x = inp[i];
            const float pdf = 0.39894228f * mha_exp_nonpos(-0.5f * x * x);
            dinp[i] = (cdf_of(x, out[i]) + x * pdf) * dout[i];
        }
    }
}

typedef struct {
    float *out;
    const float *inp, *dout, *fwd_out; /* fwd_out: the forward's output, for the backward */
    tf_act act;
} act_args;

static void act_forward_task(const void *args, size_t lo, size_t hi) {
    const act_args *a = args;
    act_forward_span(a->out + lo, a->inp + lo, hi - lo, a->act);
}

static void act_backward_task(const void *args, size_t lo, size_t hi) {
    const act_args *a = args;
    act_backward_span(a->out + lo, a->inp + lo, a->fwd_out + lo, a->dout + lo, hi - lo, a->act);
}

void act_forward(float *out, const float *inp, size_t n, tf_act act) {
    const act_args a = {.out = out, .inp = inp, .act = act};
    spans(n, 16, 20.0 * (double)n, act_forward_task, &a);
}

void act_backward(float *dinp, const float *inp, const float *out, const float *dout, size_t n,
                  tf_act act) {
    const act_args a = {.out = dinp, .inp = inp, .dout = dout, .fwd_out = out, .act = act};
    spans(n, 16, 30.0 * (double)n, act_backward_task, &a);
}

typedef struct {
    float *out;
    const float *a, *b;
} add_args;

static void add_span(const void *args, size_t lo, size_t hi) {
    const add_args *x = args;
    for (size_t i = lo; i < hi; i++) x->out[i] = x->a[i] + x->b[i];
}

/* on the workers its memory traffic is worth (the two halves' gradients, summed
   after a split step while the other worker would wait: 400 k floats at d_model 128) */
void residual_forward(float *out, const float *a, const float *b, size_t n) {
    const add_args x = {.out = out, .a = a, .b = b};
    spans(n, 16, 4.0 * (double)n, add_span, &x);
}

/* ------------------------------------------------------------------------------ */
/* softmax cross-entropy on target rows                                            */

double crossentropy_forward(float *probs, const float *logits, const int *targets, int N, int C,
                            int *count) {
    memcpy(probs, logits, (size_t)N * C * sizeof(float));
    mha_softmax_rows(probs, N, C);
    double sum = 0.0;
    int n = 0;
    for (int r = 0; r < N; r++) {
        if (targets[r] < 0) continue;
        /* -log p_target from the softmax where p_target is a normal float (its
           relative error, a few ulps, an absolute error of 1e-6 at most in the loss);
           a smaller one, a confident wrong guess, by the log-sum-exp in double, so that
           it costs a finite loss (C exps a row were 1 % of a training step) */
        const float p = probs[(size_t)r * C + targets[r]];
        if (p >= FLT_MIN) {
            sum -= log((double)p);
            n++;
            continue;
        }
        const float *z = logits + (size_t)r * C;
        float max = z[0];
        for (int c = 1; c < C; c++)
            if (z[c] > max) max = z[c];
        double se = 0.0; /* log-sum-exp, so a confident wrong guess costs a finite loss */
        for (int c = 0; c < C; c++) se += exp((double)(z[c] - max));
        sum += log(se) - (double)(z[targets[r]] - max);
        n++;
    }
    *count = n;
    return sum;
}

void crossentropy_backward(float *dlogits, const float *probs, const int *targets, int N, int C,
                           float scale) {
    for (int r = 0; r < N; r++) {
        float *g = dlogits + (size_t)r * C;
        const float *p = probs + (size_t)r * C;
        if (targets[r] < 0) {
            memset(g, 0, (size_t)C * sizeof(float));
            continue;
        }
        for (int c = 0; c < C; c++) g[c] = (p[c] - (c == targets[r] ? 1.0f : 0.0f)) * scale;
    }
}

/* ------------------------------------------------------------------------------ */
/* AdamW                                                                           */

typedef struct {
    float *p, *m, *v;
    const float *g;
    float lr, beta1, beta2, eps, wd, c1, c2;
} adamw_args;

static void adamw_span(const void *args, size_t lo, size_t hi) {
    const adamw_args *a = args;
    float *p = a->p, *m = a->m, *v = a->v;
    const float *g = a->g;
    const float beta1 = a->beta1, beta2 = a->beta2, c1 = a->c1, c2 = a->c2;
    const float lr = a->lr, eps = a->eps, wd = a->wd;
    for (size_t i = lo; i < hi; i++) {
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        float m_hat = m[i] / c1, v_hat = v[i] / c2;
        p[i] -= lr * (m_hat / (sqrtf(v_hat) + eps) + wd * p[i]);
    }
}

void adamw_update(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                  float beta2, float eps, float wd, long t) {
    const adamw_args a = {.p = p,
                          .m = m,
                          .v = v,
                          .g = g,
                          .lr = lr,
                          .beta1 = beta1,
                          .beta2 = beta2,
                          .eps = eps,
                          .wd = wd,
                          .c1 = 1.0f - powf(beta1, (float)t),
                          .c2 = 1.0f - powf(beta2, (float)t)};
    spans(n, 16, 12.0 * (double)n, adamw_span, &a);
}
