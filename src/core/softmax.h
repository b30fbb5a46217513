/* softmax.h: the float row-softmax kernels behind mha_softmax_rows and the
 * forward pass, and their exp (also GELU's, src/learn). Private to the core and its tests; the
 * scalar double-sum reference they are checked against lives in tests/test_mha.c. */
#ifndef MHAVIZ_SOFTMAX_H
#define MHAVIZ_SOFTMAX_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for x <= 0 in float (Cephes' expf): x = n ln2 + r with |r| <= ln2 / 2,
 * exp(r) by a degree-7 polynomial (relative error about 1e-7 on that interval)
 * and 2^n put into the exponent bits. Below MHA_EXP_LO the true value is under the
 * smallest normal float (1.2e-38) and the result is 0, which also makes -inf
 * (a masked score) and NaN exactly 0. */
#define MHA_EXP_LO (-87.3365447f) /* ln(2^-126) */
#define MHA_LOG2E 1.44269504088896341f
#define MHA_LN2_HI 0.693359375f /* ln 2 = MHA_LN2_HI + MHA_LN2_LO, MHA_LN2_HI with few bits */
#define MHA_LN2_LO (-2.12194440e-4f)
#define MHA_EXP_P0 1.9875691500e-4f
#define MHA_EXP_P1 1.3981999507e-3f
#define MHA_EXP_P2 8.3334519073e-3f
#define MHA_EXP_P3 4.1665795894e-2f
#define MHA_EXP_P4 1.6666665459e-1f
#define MHA_EXP_P5 5.0000001201e-1f

static inline float mha_exp_nonpos(float x) {
    const float keep = isgreaterequal(x, MHA_EXP_LO) ? 1.0f : 0.0f; /* 0: -inf, NaN, underflow */
    x = isgreater(x, MHA_EXP_LO) ? x : MHA_EXP_LO; /* NaN too becomes MHA_EXP_LO: y stays finite */
    const int ni = (int)(x * MHA_LOG2E - 0.5f);    /* x <= 0: truncation rounds to nearest */
    const float n = (float)ni;
    const float r = x - n * MHA_LN2_HI - n * MHA_LN2_LO;
    float p = MHA_EXP_P0;
    p = p * r + MHA_EXP_P1;
    p = p * r + MHA_EXP_P2;
    p = p * r + MHA_EXP_P3;
    p = p * r + MHA_EXP_P4;
    p = p * r + MHA_EXP_P5;
    const float y = p * r * r + r + 1.0f;
    const uint32_t bits = (uint32_t)(ni + 127) << 23; /* 2^n, n in [-126, 0] */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return y * scale * keep; /* no branch, so that the loops vectorise */
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MHA_EXP8 1
/* mha_exp_nonpos on 8 lanes with AVX2 + FMA (callers check the processor has
   them): the same steps, with fused products. */
__attribute__((target("avx2,fma"))) static inline __m256 mha_exp_nonpos8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(MHA_EXP_LO);
    const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_GE_OQ); /* false for -inf and NaN */
    x = _mm256_max_ps(x, lo);                             /* NaN lanes become lo */
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(MHA_LOG2E)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(MHA_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(MHA_LN2_LO), r);
    __m256 p = _mm256_set1_ps(MHA_EXP_P0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MHA_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MHA_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MHA_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MHA_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MHA_EXP_P5));
    __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(e)), keep);
}
/* The same on 16 lanes with AVX-512F (callers check the processor has it). */
__attribute__((target("avx512f"))) static inline __m512 mha_exp_nonpos16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(MHA_EXP_LO);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ); /* false for -inf, NaN */
    x = _mm512_max_ps(x, lo);                                     /* NaN lanes become lo */
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(MHA_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(MHA_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(MHA_LN2_LO), r);
    __m512 p = _mm512_set1_ps(MHA_EXP_P0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MHA_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MHA_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MHA_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MHA_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MHA_EXP_P5));
    __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r);
    y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
    const __m512i e =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mul_ps(keep, y, _mm512_castsi512_ps(e));
}
#else
#define MHA_EXP8 0
#endif

typedef enum {
    SOFTMAX_AUTO = 0, /* the fastest the processor runs */
    SOFTMAX_PORTABLE, /* plain C the compiler may vectorise; runs everywhere */
    SOFTMAX_AVX2,     /* AVX2 + FMA intrinsics, x86-64 only */
    SOFTMAX_AVX512,   /* AVX-512F intrinsics, x86-64 only */
} softmax_kernel;

/* The widest vectors the hand-written kernels may use (the softmax's here, the GELU's
 * of src/learn): 16 lanes (AVX-512F), unless the environment's MHAVIZ_SIMD says "avx2"
 * (8) or "portable" (1), to run and check what a processor without them computes (its
 * sums round differently, so its training runs end a little differently). Read once. */
int mha_simd_lanes(void);

/* 1 if kernel k can run on this processor (SOFTMAX_AUTO and PORTABLE always), within
 * mha_simd_lanes. */
int softmax_kernel_available(softmax_kernel k);

/* "portable", "avx2" or "avx512"; SOFTMAX_AUTO names the kernel it picks. */
const char *softmax_kernel_name(softmax_kernel k);

/* dst (cols) = softmax of src[0, visible), max subtracted, and dst[visible, cols)
 * = 0: the masked keys of a row are its tail. -inf entries inside the visible
 * part become exactly 0 too; a row with nothing finite visible is all 0. dst may
 * be src. 0 <= visible <= cols. k must be available. */
void softmax_row(float *dst, const float *src, int visible, int cols, softmax_kernel k);

#endif
