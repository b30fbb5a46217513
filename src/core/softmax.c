/* softmax.c: the row softmax of the forward pass in float: a portable version
 * written for the compiler's vectoriser, and AVX2 + FMA or AVX-512F intrinsics picked
 * at run time on x86-64 processors that have them. Both use the same exp (below). */
#include "softmax.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
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

/* The same three passes on 16 lanes with AVX-512F, the row's last partial vector by a
   masked load (lanes past `visible` read as -inf and are never stored): no scalar tail,
   which short rows spent most of their time in (a training step's rows are 24 or 64
   long; the AVX2 kernel took 42 % of cards at h = 16). The sums add in 16 partial sums. */
#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline __mmask16 first_lanes(int count) { /* 0 <= count <= 16 */
    return (__mmask16)((1u << count) - 1u);
}

/* A row of at most 16 visible keys in one vector, without a loop (a causal head's
   rows at T <= 16, and most of them at T 24: the loops' branches cost more than
   their arithmetic there). */
AVX512 static void row_short_avx512(float *dst, const float *src, int visible, int cols) {
    const __mmask16 t = first_lanes(visible);
    const __m512 x = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), t, src);
    const float max = _mm512_reduce_max_ps(x); /* masked lanes are -inf; NaN lanes too */
    if (!(max > -INFINITY && max < INFINITY)) {
        memset(dst, 0, (size_t)cols * sizeof(float));
        return;
    }
    const __m512 e = mha_exp_nonpos16(_mm512_sub_ps(x, _mm512_set1_ps(max)));
    const __m512 p = _mm512_mul_ps(e, _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(e)));
    if (cols <= 16) { /* lanes [visible, cols) are exactly 0 */
        _mm512_mask_storeu_ps(dst, first_lanes(cols), p);
        return;
    }
    _mm512_mask_storeu_ps(dst, t, p);
    memset(dst + visible, 0, (size_t)(cols - visible) * sizeof(float));
}

AVX512 static void row_avx512(float *dst, const float *src, int visible, int cols) {
    if (visible <= 16) {
        row_short_avx512(dst, src, visible, cols);
        return;
    }
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    /* pass 1: the row max; _mm512_max_ps(x, m) returns m when x is NaN */
    __m512 m0 = ninf, m1 = ninf;
    int j = 0;
    for (; j + 32 <= visible; j += 32) {
        m0 = _mm512_max_ps(_mm512_loadu_ps(src + j), m0);
        m1 = _mm512_max_ps(_mm512_loadu_ps(src + j + 16), m1);
    }
    for (; j + 16 <= visible; j += 16) m0 = _mm512_max_ps(_mm512_loadu_ps(src + j), m0);
    if (j < visible)
        m1 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, first_lanes(visible - j), src + j), m1);
    const float max = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
    if (!(max > -INFINITY && max < INFINITY)) {
        memset(dst, 0, (size_t)cols * sizeof(float));
        return;
    }

    /* pass 2: e = exp(x - max) and its sum (exp of a -inf lane is 0) */
    const __m512 vm = _mm512_set1_ps(max);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    for (j = 0; j + 32 <= visible; j += 32) {
        const __m512 e0 = mha_exp_nonpos16(_mm512_sub_ps(_mm512_loadu_ps(src + j), vm));
        const __m512 e1 = mha_exp_nonpos16(_mm512_sub_ps(_mm512_loadu_ps(src + j + 16), vm));
        _mm512_storeu_ps(dst + j, e0);
        _mm512_storeu_ps(dst + j + 16, e1);
        s0 = _mm512_add_ps(s0, e0);
        s1 = _mm512_add_ps(s1, e1);
    }
    for (; j + 16 <= visible; j += 16) {
        const __m512 e0 = mha_exp_nonpos16(_mm512_sub_ps(_mm512_loadu_ps(src + j), vm));
        _mm512_storeu_ps(dst + j, e0);
        s0 = _mm512_add_ps(s0, e0);
    }
    if (j < visible) {
        const __mmask16 t = first_lanes(visible - j);
        const __m512 e =
            mha_exp_nonpos16(_mm512_sub_ps(_mm512_mask_loadu_ps(ninf, t, src + j), vm));
        _mm512_mask_storeu_ps(dst + j, t, e);
        s1 = _mm512_add_ps(s1, e);
    }
    const float total = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));

    /* pass 3: divide by the sum (>= 1); the masked tail is 0 */
    const __m512 inv = _mm512_set1_ps(1.0f / total);
    for (j = 0; j + 16 <= visible; j += 16)
        _mm512_storeu_ps(dst + j, _mm512_mul_ps(_mm512_loadu_ps(dst + j), inv));
    if (j < visible) {
        const __mmask16 t = first_lanes(visible - j);
        _mm512_mask_storeu_ps(dst + j, t, _mm512_mul_ps(_mm512_maskz_loadu_ps(t, dst + j), inv));
    }
    if (cols > visible) memset(dst + visible, 0, (size_t)(cols - visible) * sizeof(float));
}

static int cpu_has_avx512(void) {
    return __builtin_cpu_supports("avx512f") && mha_simd_lanes() >= 16;
}

static int cpu_has_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && mha_simd_lanes() >= 8;
}
#endif

static pthread_once_t simd_once_ = PTHREAD_ONCE_INIT;
static int simd_lanes_ = 16;

static void simd_init(void) {
    const char *v = getenv("MHAVIZ_SIMD");
    if (!v) return;
    if (strcmp(v, "avx2") == 0)
        simd_lanes_ = 8;
    else if (strcmp(v, "portable") == 0)
        simd_lanes_ = 1;
}

int mha_simd_lanes(void) {
    pthread_once(&simd_once_, simd_init);
    return simd_lanes_;
}

int softmax_kernel_available(softmax_kernel k) {
    switch (k) {
    case SOFTMAX_AUTO:
    case SOFTMAX_PORTABLE: return 1;
#if SOFTMAX_X86
    case SOFTMAX_AVX2: return cpu_has_avx2();
    case SOFTMAX_AVX512: return cpu_has_avx512();
#endif
    default: return 0;
    }
}

static softmax_kernel resolve(softmax_kernel k) {
    if (k != SOFTMAX_AUTO) return k;
    return softmax_kernel_available(SOFTMAX_AVX512) ? SOFTMAX_AVX512
           : softmax_kernel_available(SOFTMAX_AVX2) ? SOFTMAX_AVX2
                                                    : SOFTMAX_PORTABLE;
}

const char *softmax_kernel_name(softmax_kernel k) {
    const softmax_kernel r = resolve(k);
    return r == SOFTMAX_AVX512 ? "avx512" : r == SOFTMAX_AVX2 ? "avx2" : "portable";
}

void softmax_row(float *dst, const float *src, int visible, int cols, softmax_kernel k) {
#if SOFTMAX_X86
    const softmax_kernel r = resolve(k);
    if (r == SOFTMAX_AVX512) {
        row_avx512(dst, src, visible, cols);
        return;
    }
    if (r == SOFTMAX_AVX2) {
        row_avx2(dst, src, visible, cols);
        return;
    }
#else
    (void)k;
#endif
    row_portable(dst, src, visible, cols);
}
