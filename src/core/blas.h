/* blas.h: the one place that calls cblas_sgemm. Every matrix product of the
 * core goes through mm_sgemm; the naive reference lives in the tests. */
#ifndef MHAVIZ_BLAS_H
#define MHAVIZ_BLAS_H

/* C (m, n) = alpha * A (m, k) * op(B) + beta * C, all row-major.
 * op(B) is B (k, n) when trans_b is 0, or B^T with B stored (n, k) when 1.
 * lda, ldb, ldc are the row strides in floats, so column slices of wider
 * matrices (one head's columns of Q) can be used in place. */
void mm_sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int m, int n,
              int k, int trans_b, float alpha, float beta);

/* C (m, n) = alpha * op(A) * op(B) + beta * C, all row-major, for the backward
 * passes of training: op(A) is A (m, k) when trans_a is 0, or A^T with A stored
 * (k, m) when 1 (so dW = X^T dY needs no copy); op(B) as in mm_sgemm. */
void mm_sgemm_t(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                int trans_b, int m, int n, int k, float alpha, float beta);

/* Sets the number of threads OpenBLAS uses from now on, process-wide. */
void mm_set_threads(int n);

/* Name of the OpenBLAS kernel set in use (e.g. "Prescott"), for --bench. */
const char *mm_backend_name(void);

#endif
