/* blas.c: thin wrapper over cblas_sgemm (row-major), so the rest of the core
 * never spells out CBLAS enums and the product count stays in one place. */
#include "blas.h"

#include <cblas.h> /* OpenBLAS: also declares openblas_get_corename */

void mm_sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int m, int n,
              int k, int trans_b, float alpha, float beta) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
                lda, b, ldb, beta, c, ldc);
}

void mm_sgemm_t(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                int trans_b, int m, int n, int k, float alpha, float beta) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void mm_set_threads(int n) {
    openblas_set_num_threads(n);
}

const char *mm_backend_name(void) {
    return openblas_get_corename();
}
