/* softmax.h: the float row-softmax kernels behind mha_softmax_rows and the
 * forward pass. Private to the core and its tests; the scalar double-sum
 * reference they are checked against lives in tests/test_mha.c. */
#ifndef MHAVIZ_SOFTMAX_H
#define MHAVIZ_SOFTMAX_H

typedef enum {
    SOFTMAX_AUTO = 0, /* the fastest the processor runs */
    SOFTMAX_PORTABLE, /* plain C the compiler may vectorise; runs everywhere */
    SOFTMAX_AVX2,     /* AVX2 + FMA intrinsics, x86-64 only */
} softmax_kernel;

/* 1 if kernel k can run on this processor (SOFTMAX_AUTO and PORTABLE always). */
int softmax_kernel_available(softmax_kernel k);

/* "portable" or "avx2"; SOFTMAX_AUTO names the kernel it picks. */
const char *softmax_kernel_name(softmax_kernel k);

/* dst (cols) = softmax of src[0, visible), max subtracted, and dst[visible, cols)
 * = 0: the masked keys of a row are its tail. -inf entries inside the visible
 * part become exactly 0 too; a row with nothing finite visible is all 0. dst may
 * be src. 0 <= visible <= cols. k must be available. */
void softmax_row(float *dst, const float *src, int visible, int cols, softmax_kernel k);

#endif
