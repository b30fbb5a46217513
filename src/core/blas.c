/* blas.c: thin wrapper over cblas_sgemm (row-major), so the rest of the core
 * never spells out CBLAS enums, and the one place that picks OpenBLAS's threads
 * by the size of each product (see blas.h). */
#include "blas.h"

#include <stdlib.h>

#include <cblas.h> /* OpenBLAS: also declares openblas_get_corename and the thread calls */

/* max_threads_: what OpenBLAS started with (0: not looked up yet); current_: what
   it was last set to; fixed_: 1 when the environment decides, -1 not looked up. */
static int max_threads_ = 0, current_ = 0, fixed_ = -1, forced_ = 0;

static void threads_init(void) {
    if (fixed_ >= 0) return;
    fixed_ =
        getenv("OPENBLAS_NUM_THREADS") || getenv("GOTO_NUM_THREADS") || getenv("OMP_NUM_THREADS");
    max_threads_ = openblas_get_num_threads();
    if (max_threads_ < 1) max_threads_ = 1;
    current_ = max_threads_;
}

int mm_threads_max(void) {
    threads_init();
    return max_threads_;
}

int mm_threads_fixed(void) {
    threads_init();
    return fixed_;
}

static void set_threads(int t) {
    if (t != current_) {
        openblas_set_num_threads(t);
        current_ = t;
    }
}

void mm_threads_force(int t) {
    threads_init();
    forced_ = t > 0;
    if (t > 0) set_threads(t > max_threads_ ? max_threads_ : t);
}

int mm_threads_for(double flops) {
    threads_init();
    if (fixed_ || forced_) return current_;
    set_threads(flops < MM_THREADS_MIN_FLOPS ? 1 : max_threads_);
    return current_;
}

void mm_sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int m, int n,
              int k, int trans_b, float alpha, float beta) {
    mm_threads_for(2.0 * m * n * k);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
                lda, b, ldb, beta, c, ldc);
}

const char *mm_backend_name(void) {
    return openblas_get_corename();
}
