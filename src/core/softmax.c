/* softmax.c: the row softmax of the forward pass in float: a portable version
 * written for the compiler's vectoriser, and AVX2 + FMA intrinsics picked at run
 * time on x86-64 processors that have them. Both use the same exp (below). */
#include "softmax.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define SOFTMAX_X86 1
#include <immintrin.h>
#else
#define SOFTMAX_X86 0
#endif

/* the softmax's exp: mha_exp_nonpos (softmax.h) */
#define exp_nonpos mha_exp_nonpos

/* Eight lanes side by side, so that the compiler can keep each in a vector
   register (and so that the sums add in eight partial sums, as AVX2 does). */
enum { LANES = 8 };

static void row_portable(float *dst, const float *src, int visible, int cols) {
    /* pass 1: the row max; NaN is never taken (the comparison is false) */
    float mx[LANES];
    for (int l = 0; l < LANES; l++) mx[l] = -INFINITY;
    int j = 0;
    for (; j + LANES <= visible; j += LANES)
        for (int l = 0; l < LANES; l++) mx[l] = src[j + l] > mx[l] ? src[j + l] : mx[l];
    float max = -INFINITY;
    for (int l = 0; l < LANES; l++) max = mx[l] > max ? mx[l] : max;
    for (; j < visible; j++) max = src[j] > max ? src[j] : max;
    if (!(max > -INFINITY && max < INFINITY)) { /* nothing visible, or an infinite score */
        memset(dst, 0, (size_t)cols * sizeof(float));
        return;
    }

    /* pass 2: e = exp(x - max) and its sum; the max itself gives exp(0) = 1 */
    float sum[LANES] = {0};
    for (j = 0; j + LANES <= visible; j += LANES)
        for (int l = 0; l < LANES; l++) {
            const float e = exp_nonpos(src[j + l] - max);
            dst[j + l] = e;
            sum[l] += e;
        }
    float total = ((sum[0] + sum[4]) + (sum[1] + sum[5])) + ((sum[2] + sum[6]) + (sum[3] + sum[7]));
    for (; j < visible; j++) {
        dst[j] = exp_nonpos(src[j] - max);
        total += dst[j];
    }

    /* pass 3: divide by the sum (>= 1); the masked tail is 0 */
    const float inv = 1.0f / total;
    for (j = 0; j < visible; j++) dst[j] *= inv;
    for (j = visible; j < cols; j++) dst[j] = 0.0f;
}

#if SOFTMAX_X86
#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2 static inline float hmax8(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2 static void row_avx2(float *dst, const float *src, int visible, int cols) {
    /* pass 1: the row max; _mm256_max_ps(x, m) returns m when x is NaN */
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    int j = 0;
    for (; j + 32 <= visible; j += 32) { /* four chains, so the latency of max overlaps */
        m0 = _mm256_max_ps(_mm256_loadu_ps(src + j), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(src + j + 8), m1);
        m2 = _mm256_max_ps(_mm256_loadu_ps(src + j + 16), m2);
        m3 = _mm256_max_ps(_mm256_loadu_ps(src + j + 24), m3);
    }
    for (; j + 8 <= visible; j += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(src + j), m0);
    float max = hmax8(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    for (; j < visible; j++) max = src[j] > max ? src[j] : max;
    if (!(max > -INFINITY && max < INFINITY)) {
        memset(dst, 0, (size_t)cols * sizeof(float));
        return;
    }

    /* pass 2: e = exp(x - max) and its sum, in two accumulators */
    const __m256 vm = _mm256_set1_ps(max);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    for (j = 0; j + 16 <= visible; j += 16) {
        const __m256 e0 = mha_exp_nonpos8(_mm256_sub_ps(_mm256_loadu_ps(src + j), vm));
        const __m256 e1 = mha_exp_nonpos8(_mm256_sub_ps(_mm256_loadu_ps(src + j + 8), vm));
        _mm256_storeu_ps(dst + j, e0);
        _mm256_storeu_ps(dst + j + 8, e1);
        s0 = _mm256_add_ps(s0, e0);
        s1 = _mm256_add_ps(s1, e1);
    }
    for (; j + 8 <= visible; j += 8) {
        const __m256 e0 = mha_exp_nonpos8(_mm256_sub_ps(_mm256_loadu_ps(src + j), vm));
        _mm256_storeu_ps(dst + j, e0);
        s0 = _mm256_add_ps(s0, e0);
    }
    float total = hsum8(_mm256_add_ps(s0, s1));
    for (; j < visible; j++) {
        dst[j] = exp_nonpos(src[j] - max);
        total += dst[j];
    }

    /* pass 3: divide by the sum (>= 1); the masked tail is 0 */
    const __m256 inv = _mm256_set1_ps(1.0f / total);
    for (j = 0; j + 8 <= visible; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_mul_ps(_mm256_loadu_ps(dst + j), inv));
    for (; j < visible; j++) dst[j] *= 1.0f / total;
    for (j = visible; j < cols; j++) dst[j] = 0.0f;
}

static int cpu_has_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

int softmax_kernel_available(softmax_kernel k) {
    switch (k) {
    case SOFTMAX_AUTO:
    case SOFTMAX_PORTABLE: return 1;
#if SOFTMAX_X86
    case SOFTMAX_AVX2: return cpu_has_avx2();
#endif
    default: return 0;
    }
}

static softmax_kernel resolve(softmax_kernel k) {
    if (k != SOFTMAX_AUTO) return k;
    return softmax_kernel_available(SOFTMAX_AVX2) ? SOFTMAX_AVX2 : SOFTMAX_PORTABLE;
}

const char *softmax_kernel_name(softmax_kernel k) {
    return resolve(k) == SOFTMAX_AVX2 ? "avx2" : "portable";
}

void softmax_row(float *dst, const float *src, int visible, int cols, softmax_kernel k) {
#if SOFTMAX_X86
    if (resolve(k) == SOFTMAX_AVX2) {
        row_avx2(dst, src, visible, cols);
        return;
    }
#else
    (void)k;
#endif
    row_portable(dst, src, visible, cols);
}
