/* blas.c: thin wrapper over cblas_sgemm (row-major), so the rest of the core
 * never spells out CBLAS enums, and the one place that picks OpenBLAS's threads
 * by the size of each product (see blas.h). */
#include "blas.h"

#include <pthread.h>
#include <stdlib.h>

#include <cblas.h> /* OpenBLAS: also declares openblas_get_corename and the thread calls */

/* max_threads_: what OpenBLAS started with; current_: what it was last set to;
   fixed_: 1 when the environment decides, -1 not looked up yet; forced_: the
   count mm_threads_force set, 0 for the choice by size. All under lock_: the
   window's trainer multiplies on its own thread while the forward runs. */
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static int max_threads_ = 0, current_ = 0, fixed_ = -1, forced_ = 0;

/* with lock_ held */
static void threads_init(void) {
    if (fixed_ >= 0) return;
    fixed_ =
        getenv("OPENBLAS_NUM_THREADS") || getenv("GOTO_NUM_THREADS") || getenv("OMP_NUM_THREADS");
    max_threads_ = openblas_get_num_threads();
    if (max_threads_ < 1) max_threads_ = 1;
    current_ = max_threads_;
}

/* with lock_ held */
static void set_threads(int t) {
    if (t != current_) {
        openblas_set_num_threads(t);
        current_ = t;
    }
}

int mm_threads_max(void) {
    pthread_mutex_lock(&lock_);
    threads_init();
    const int t = max_threads_;
    pthread_mutex_unlock(&lock_);
    return t;
}

int mm_threads_fixed(void) {
    pthread_mutex_lock(&lock_);
    threads_init();
    const int f = fixed_;
    pthread_mutex_unlock(&lock_);
    return f;
}

void mm_threads_force(int t) {
    pthread_mutex_lock(&lock_);
    threads_init();
    forced_ = t > 0 ? t : 0;
    if (forced_) set_threads(forced_ > max_threads_ ? max_threads_ : forced_);
    pthread_mutex_unlock(&lock_);
}

int mm_threads_for(double flops) {
    pthread_mutex_lock(&lock_);
    threads_init();
    if (!fixed_ && !forced_) set_threads(flops < MM_THREADS_MIN_FLOPS ? 1 : max_threads_);
    const int t = current_;
    pthread_mutex_unlock(&lock_);
    return t;
}

void mm_sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int m, int n,
              int k, int trans_b, float alpha, float beta) {
    mm_threads_for(2.0 * m * n * k);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
                lda, b, ldb, beta, c, ldc);
}

void mm_sgemm_t(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                int trans_b, int m, int n, int k, float alpha, float beta) {
    mm_threads_for(2.0 * m * n * k);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void mm_set_threads(int n) {
    mm_threads_force(n);
}

const char *mm_backend_name(void) {
    return openblas_get_corename();
}
