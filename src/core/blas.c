/* blas.c: thin wrapper over cblas_sgemm (row-major), so the rest of the core
 * never spells out CBLAS enums; mm_parallel's pool of helper threads (see
 * blas.h); and the one place that decides how many threads a product uses.
 *
 * OpenBLAS's thread count is process-wide, and openblas_set_num_threads while
 * another thread is inside cblas_sgemm is a race. So it is set once: the first
 * call into this file (pthread_once, before any product can run, since every
 * product goes through here) sets OpenBLAS to one thread, and from then on all
 * parallel work is mhaviz's own: mm_parallel's tasks, and a large product split
 * into bands of rows run as tasks. When the environment fixes the count
 * (OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, OMP_NUM_THREADS) it is never set at
 * all, and OpenBLAS alone parallelises products: concurrent cblas_sgemm calls
 * from several threads are safe in OpenBLAS, only a concurrent setter is not.
 * MHAVIZ_THREADS=N starts as mm_threads_force(N) would (the tests run with 2). */
#define _POSIX_C_SOURCE 200809L
#include "blas.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h> /* OpenBLAS: also declares openblas_get_corename and the thread calls */

/* Written once in threads_init (pthread_once orders it before every read):
   max_threads_ what OpenBLAS started with, fixed_ 1 when the environment decides.
   forced_: mm_threads_force's count, 0 for the choice by size. */
static pthread_once_t threads_once_ = PTHREAD_ONCE_INIT;
static int max_threads_ = 1, fixed_ = 0;
static _Atomic int forced_ = 0;

static void threads_init_once(void) {
    fixed_ =
        getenv("OPENBLAS_NUM_THREADS") || getenv("GOTO_NUM_THREADS") || getenv("OMP_NUM_THREADS");
    const char *t = getenv("MHAVIZ_THREADS"); /* the tests' second run: this many workers */
    if (t && atoi(t) > 0) atomic_store(&forced_, atoi(t));
    max_threads_ = openblas_get_num_threads();
    if (max_threads_ < 1) max_threads_ = 1;
    if (!fixed_) openblas_set_num_threads(1); /* the only call: no product runs yet */
}

static void threads_init(void) {
    pthread_once(&threads_once_, threads_init_once);
}

int mm_threads_max(void) {
    threads_init();
    return fixed_ ? max_threads_ : mm_workers_max();
}

int mm_threads_fixed(void) {
    threads_init();
    return fixed_;
}

void mm_threads_force(int t) {
    threads_init();
    atomic_store(&forced_, t > 0 ? t : 0);
}

/* this thread's bar for a product on every worker (0: MM_THREADS_MIN_FLOPS) */
static _Thread_local double min_flops_ = 0.0;

void mm_threads_min_flops(double flops) {
    min_flops_ = flops > 0.0 ? flops : 0.0;
}

int mm_threads_for(double flops) {
    threads_init();
    if (fixed_) return max_threads_; /* OpenBLAS's own threads, as the environment says */
    const int forced = atomic_load(&forced_), max = mm_workers_max();
    if (forced) return forced < max ? forced : max;
    return flops < (min_flops_ > 0.0 ? min_flops_ : MM_THREADS_MIN_FLOPS) ? 1 : max;
}

/* 1 on a thread while it runs a task of mm_parallel: its products stay on one
   thread and it cannot start a job itself. */
static _Thread_local int in_task_ = 0;

typedef struct {
    float *c;
    const float *a, *b;
    int ldc, lda, ldb, m, n, k, trans_a, trans_b, bands;
    int cols; /* 1: bands of columns (a wide C: each thread packs only its part of B) */
    float alpha, beta;
} band_job;

/* C (m, n) = alpha op(A) op(B) + beta C; one row (a loaded model's token typed at
   the end) as a matrix-vector product, which reads B once without packing it. */
static void gemm(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                 int trans_b, int m, int n, int k, float alpha, float beta) {
    if (m == 1) {
        /* c = op(B)^T a: B (k, n) read transposed, or B (n, k) as it is */
        cblas_sgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, trans_b ? n : k,
                    trans_b ? k : n, alpha, b, ldb, a, trans_a ? lda : 1, beta, c, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* Band `task` of the columns of C, [c0, c1) in multiples of 16 (the kernels' width):
   the same product on those columns of op(B). */
static void col_task(const band_job *j, int task) {
    const int blocks = (j->n + 15) / 16;
    const int c0 = 16 * (int)((long)blocks * task / j->bands),
              c1x = 16 * (int)((long)blocks * (task + 1) / j->bands), c1 = c1x < j->n ? c1x : j->n;
    if (c1 <= c0) return;
    const float *b = j->trans_b ? j->b + (size_t)c0 * j->ldb : j->b + c0;
    gemm(j->c + c0, j->ldc, j->a, j->lda, j->trans_a, b, j->ldb, j->trans_b, j->m, c1 - c0, j->k,
         j->alpha, j->beta);
}

/* Band `task` of the rows of C: the same product on rows [r0, r1) of op(A). */
static void band_task(void *ctx, int task) {
    const band_job *j = ctx;
    if (j->cols) {
        col_task(j, task);
        return;
    }
    const int r0 = (int)((long)j->m * task / j->bands),
              r1 = (int)((long)j->m * (task + 1) / j->bands);
    if (r1 <= r0) return;
    const float *a = j->trans_a ? j->a + r0 : j->a + (size_t)r0 * j->lda;
    cblas_sgemm(CblasRowMajor, j->trans_a ? CblasTrans : CblasNoTrans,
                j->trans_b ? CblasTrans : CblasNoTrans, r1 - r0, j->n, j->k, j->alpha, a, j->lda,
                j->b, j->ldb, j->beta, j->c + (size_t)r0 * j->ldc, j->ldc);
}

static void sgemm(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                  int trans_b, int m, int n, int k, float alpha, float beta) {
    const int threads = in_task_ ? 1 : mm_threads_for(2.0 * m * n * k);
    /* a C much wider than tall (a loaded model's few rows by 3072 or 50257 columns):
       bands of columns, so that each thread packs its own part of B only */
    const int cols = n >= 4 * m && n >= 64 * threads;
    if (!fixed_ && threads > 1 && (m >= 8 * threads || cols)) { /* bands on mhaviz's pool */
        band_job j = {c, a,       b,       ldc,     lda,  ldb,   m,   n,
                      k, trans_a, trans_b, threads, cols, alpha, beta};
        mm_parallel(threads, threads, band_task, &j);
        return;
    }
    gemm(c, ldc, a, lda, trans_a, b, ldb, trans_b, m, n, k, alpha, beta);
}

void mm_sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int m, int n,
              int k, int trans_b, float alpha, float beta) {
    sgemm(c, ldc, a, lda, 0, b, ldb, trans_b, m, n, k, alpha, beta);
}

void mm_sgemm_t(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                int trans_b, int m, int n, int k, float alpha, float beta) {
    sgemm(c, ldc, a, lda, trans_a, b, ldb, trans_b, m, n, k, alpha, beta);
}

void mm_set_threads(int n) {
    mm_threads_force(n);
}

const char *mm_backend_name(void) {
    return openblas_get_corename();
}

/* ---- mm_parallel's pool ---------------------------------------------------------
 * The job is published in claim_: generation (24 bits), task count (20 bits) and
 * next unclaimed task (20 bits). A worker claims a task by a compare-and-swap
 * that also proves the job it read fn_ and ctx_ for is still the current one,
 * so a helper that wakes late can never run a task of a later job. done_ counts
 * the finished tasks of the current job; the caller returns when it reaches the
 * count. */
enum { WORKERS_MAX = 8 };
#define GEN_SHIFT 40
#define COUNT_SHIFT 20
#define FIELD_MASK ((UINT64_C(1) << 20) - 1)
#define TASKS_MAX ((int)FIELD_MASK)

static pthread_mutex_t pool_busy_ = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t pool_lock_ = PTHREAD_MUTEX_INITIALIZER; /* for the two conditions */
static pthread_cond_t job_posted_ = PTHREAD_COND_INITIALIZER;  /* a sleeping helper waits */
static pthread_cond_t job_done_ = PTHREAD_COND_INITIALIZER;    /* a sleeping caller waits */
static int helpers_ = 0;                                       /* started, under pool_busy_ */
static int workers_max_ = 0;                                   /* 0: not looked up yet */
static _Atomic uint64_t claim_ = 0;
static _Atomic int done_ = 0;
static _Atomic int sleepers_ = 0;      /* helpers blocked on job_posted_ */
static _Atomic int job_helpers_ = 0;   /* helpers 0 .. job_helpers_ - 1 may join this job */
static _Atomic int caller_asleep_ = 0; /* the caller blocked on job_done_ */
static _Atomic(mm_task_fn) fn_;        /* zero: none (static storage) */
static void *_Atomic ctx_ = NULL;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* One step of a spin-wait. Every 16th step yields the processor: when the
   machine is busy the caller and a helper can end up on the same core, and a
   spinning thread there would hold off the one it waits for until the
   scheduler's next tick (measured: the forward at (16, 128, 8) took 40 us
   instead of 20-28 in such rounds). */
static inline void spin_step(int step) {
    if (step % 16 == 0) {
        sched_yield();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Claims and runs tasks of the job in claim_ until none is left; returns how
   many it ran. */
static int run_tasks(void) {
    int ran = 0;
    for (;;) {
        uint64_t c = atomic_load_explicit(&claim_, memory_order_acquire);
        const int count = (int)((c >> COUNT_SHIFT) & FIELD_MASK), next = (int)(c & FIELD_MASK);
        if (next >= count) return ran;
        mm_task_fn fn = atomic_load_explicit(&fn_, memory_order_relaxed);
        void *ctx = atomic_load_explicit(&ctx_, memory_order_relaxed);
        if (!atomic_compare_exchange_weak_explicit(&claim_, &c, c + 1, memory_order_acq_rel,
                                                   memory_order_relaxed))
            continue;
        fn(ctx, next);
        ran++;
        if (atomic_fetch_add(&done_, 1) + 1 == count && atomic_load(&caller_asleep_)) {
            pthread_mutex_lock(&pool_lock_);
            pthread_cond_broadcast(&job_done_);
            pthread_mutex_unlock(&pool_lock_);
        }
    }
}

/* 1 when the job in claim c has unclaimed tasks that helper `me` may take (a
   stale job_helpers_ only makes a helper join or skip a job: never wrong) */
static int has_work(uint64_t c, int me) {
    return (int)(c & FIELD_MASK) < (int)((c >> COUNT_SHIFT) & FIELD_MASK) &&
           me < atomic_load_explicit(&job_helpers_, memory_order_relaxed);
}

/* Helper number `arg` (0-based): runs tasks while there are any, spins
   MM_PARALLEL_SPIN_US for the next job, then sleeps until one is posted. */
static void *helper_main(void *arg) {
    const int me = (int)(intptr_t)arg;
    in_task_ = 1;
    for (;;) {
        if (me < atomic_load(&job_helpers_)) run_tasks();
        const double t0 = now_us();
        int spins = 0;
        uint64_t c = atomic_load_explicit(&claim_, memory_order_acquire);
        while (!has_work(c, me)) {
            spin_step(++spins);
            if (spins % 64 == 0 && now_us() - t0 > MM_PARALLEL_SPIN_US) {
                pthread_mutex_lock(&pool_lock_);
                atomic_fetch_add(&sleepers_, 1);
                while (!has_work(atomic_load(&claim_), me))
                    pthread_cond_wait(&job_posted_, &pool_lock_);
                atomic_fetch_sub(&sleepers_, 1);
                pthread_mutex_unlock(&pool_lock_);
            }
            c = atomic_load_explicit(&claim_, memory_order_acquire);
        }
    }
    return NULL;
}

/* In a child after fork only the forking thread exists: no helper to wait for. */
static void pool_after_fork(void) {
    helpers_ = 0;
    atomic_store(&sleepers_, 0);
    atomic_store(&caller_asleep_, 0);
    pthread_mutex_init(&pool_busy_, NULL);
    pthread_mutex_init(&pool_lock_, NULL);
    pthread_cond_init(&job_posted_, NULL);
    pthread_cond_init(&job_done_, NULL);
}

static pthread_once_t pool_once_ = PTHREAD_ONCE_INIT;
static void pool_init(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    workers_max_ = cpus < 1 ? 1 : (cpus > WORKERS_MAX ? WORKERS_MAX : (int)cpus);
    pthread_atfork(NULL, NULL, pool_after_fork);
}

int mm_workers_max(void) {
    pthread_once(&pool_once_, pool_init);
    return workers_max_;
}

int mm_workers_for(double flops) {
    const int max = mm_workers_max();
    threads_init();
    const int forced = atomic_load(&forced_);
    return forced                                    ? (forced < max ? forced : max)
           : fixed_ || flops < MM_PARALLEL_MIN_FLOPS ? 1
                                                     : max;
}

/* The tasks on this thread, their products on one thread each as on a helper (so a
   task computes the same whether it ran inline or side by side). */
static void run_inline(int count, mm_task_fn fn, void *ctx) {
    const int was = in_task_;
    in_task_ = 1;
    for (int i = 0; i < count; i++) fn(ctx, i);
    in_task_ = was;
}

void mm_parallel(int count, int workers, mm_task_fn fn, void *ctx) {
    if (count <= 0) return;
    if (workers > mm_workers_max()) workers = mm_workers_max();
    if (workers <= 1 || count == 1 || in_task_ || count > TASKS_MAX ||
        pthread_mutex_trylock(&pool_busy_) != 0) {
        run_inline(count, fn, ctx);
        return;
    }
    while (helpers_ < workers - 1) { /* started once, kept for the process */
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        const int rc = pthread_create(&t, &attr, helper_main, (void *)(intptr_t)helpers_);
        pthread_attr_destroy(&attr);
        if (rc != 0) break;
        helpers_++;
    }
    if (helpers_ == 0) {
        pthread_mutex_unlock(&pool_busy_);
        run_inline(count, fn, ctx);
        return;
    }
    threads_init(); /* OpenBLAS on one thread (unless the environment decides) */

    /* post the job: fn_ and ctx_ first, then the claim word that makes it live */
    atomic_store_explicit(&fn_, fn, memory_order_relaxed);
    atomic_store_explicit(&ctx_, ctx, memory_order_relaxed);
    atomic_store_explicit(&done_, 0, memory_order_relaxed);
    atomic_store_explicit(&job_helpers_, workers - 1, memory_order_relaxed);
    const uint64_t gen = ((atomic_load(&claim_) >> GEN_SHIFT) + 1) & ((UINT64_C(1) << 24) - 1);
    atomic_store(&claim_, gen << GEN_SHIFT | (uint64_t)count << COUNT_SHIFT);
    if (atomic_load(&sleepers_) > 0) {
        pthread_mutex_lock(&pool_lock_);
        pthread_cond_broadcast(&job_posted_);
        pthread_mutex_unlock(&pool_lock_);
    }

    in_task_ = 1;
    run_tasks();
    in_task_ = 0;

    /* the tasks a helper started: spin a while, then sleep (a preempted helper
       then gets this core) */
    const double t0 = now_us();
    int spins = 0;
    while (atomic_load_explicit(&done_, memory_order_acquire) < count) {
        spin_step(++spins);
        if (spins % 64 == 0 && now_us() - t0 > MM_PARALLEL_SPIN_US) {
            pthread_mutex_lock(&pool_lock_);
            atomic_store(&caller_asleep_, 1);
            while (atomic_load(&done_) < count) pthread_cond_wait(&job_done_, &pool_lock_);
            atomic_store(&caller_asleep_, 0);
            pthread_mutex_unlock(&pool_lock_);
        }
    }
    pthread_mutex_unlock(&pool_busy_);
}
