/* blas.h: the one place that calls cblas_sgemm and sets OpenBLAS's threads
 * (once, to one, before any product: see blas.c), and the small worker pool
 * (mm_parallel) that runs independent products side by side and splits a large
 * product into bands of rows. Every matrix product of the core goes through mm_sgemm; the naive
 * reference lives in the tests. */
#ifndef MHAVIZ_BLAS_H
#define MHAVIZ_BLAS_H

/* C (m, n) = alpha * A (m, k) * op(B) + beta * C, all row-major.
 * op(B) is B (k, n) when trans_b is 0, or B^T with B stored (n, k) when 1.
 * lda, ldb, ldc are the row strides in floats, so column slices of wider
 * matrices (one head's columns of Q) can be used in place. Runs on the threads
 * mm_threads_for(2 m n k) chooses (as bands of rows of C on mm_parallel's pool);
 * inside a task of mm_parallel, on one thread. */
void mm_sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int m, int n,
              int k, int trans_b, float alpha, float beta);

/* A product of fewer FLOPs (2 m n k) than this runs on one thread; a larger one
 * on all of mm_parallel's workers (measured when OpenBLAS's own threads did it). Measured on a
 * 2-core machine shared with other work (1 against 2 threads, interleaved in one process): 2
 * threads made the forward 2.7-3.3x slower at (n, d_model, h) = (128, 512, 8), whose products are
 * 6.7e7 FLOPs, and 1.2-1.4x slower at (256, 512, 16) (1.3e8); they won only at
 * (512, 1024, 16) (1.1e9), by 10-15 %. A second thread that must wait for a
 * busy core stalls the whole product, so the bar is set high. */
#define MM_THREADS_MIN_FLOPS 5.0e8

/* The threads a product of this many FLOPs runs on (1 or mm_workers_max(), or
 * what mm_threads_force set); when the environment fixes the number
 * (OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS), OpenBLAS's own
 * count. Sets nothing; safe from any thread. */
int mm_threads_for(double flops);

/* Sets the calling thread's bar for a product on every worker (in place of
 * MM_THREADS_MIN_FLOPS; 0 restores it). A loaded model's forward (src/learn/infer.c)
 * lowers it to MM_THREADS_MODEL_FLOPS: its products at n = 64 (7.5e7 to 3e8 FLOPs,
 * each ~2 ms) run 1.4x faster on two workers of an idle 2-core machine. At 1e7 rather
 * than 5e7, a small model's products go on both too: SmolLM2-135M at n = 64 has Q and
 * W^O at 4.2e7 and K, V at 1.4e7 FLOPs, a quarter of its layers' work, and its forward
 * took 136-144 ms against 172-262 ms with the bar at 5e7 (alternating, one shell). */
void mm_threads_min_flops(double flops);
#define MM_THREADS_MODEL_FLOPS 1.0e7
/* The most threads a product may use: the environment's count for OpenBLAS
 * when it fixes one, else mm_workers_max(). */
int mm_threads_max(void);

/* 1 when the environment fixes OpenBLAS's threads (see mm_threads_for). */
int mm_threads_fixed(void);

/* Uses t threads (1..mm_workers_max()) for every product and mm_parallel job
 * from now on (t > 0), or the choice by size again (t = 0), for --bench's
 * measurements and for tests. OpenBLAS's own count is never changed here. */
void mm_threads_force(int t);

/* C (m, n) = alpha * op(A) * op(B) + beta * C, all row-major, for the backward
 * passes of training: op(A) is A (m, k) when trans_a is 0, or A^T with A stored
 * (k, m) when 1 (so dW = X^T dY needs no copy); op(B) as in mm_sgemm. Threads
 * as mm_sgemm chooses them. */
void mm_sgemm_t(float *c, int ldc, const float *a, int lda, int trans_a, const float *b, int ldb,
                int trans_b, int m, int n, int k, float alpha, float beta);

/* The same as mm_threads_force(n). */
void mm_set_threads(int n);

/* ---- running independent tasks side by side ----
 * A task is fn(ctx, i) for i in [0, count); tasks write disjoint outputs. */
typedef void (*mm_task_fn)(void *ctx, int task);

/* Runs every task and returns when all have run, on up to `workers` threads
 * (see mm_workers_for): the calling thread and helper threads take tasks one at
 * a time from a shared counter, so a helper that a busy machine does not
 * schedule just takes fewer, and the caller never waits for a task that no one
 * has started. The products inside the tasks run on one OpenBLAS thread each.
 * A helper waits for the next job by spinning for MM_PARALLEL_SPIN_US, then
 * sleeps (no CPU used while idle). One job at a time: a call from inside a task,
 * or from a second thread while a job runs, runs its tasks on its own thread. */
void mm_parallel(int count, int workers, mm_task_fn fn, void *ctx);
#define MM_PARALLEL_SPIN_US 100

/* Work of fewer FLOPs than this (about 10 us on one core) runs on the calling
 * thread alone: below it, handing the data from one core's cache to the other's
 * costs more than the second core gains. Measured on the 2-core machine, the
 * forward by turns on 1 and 2 workers: (8, 64, 4) and (12, 64, 4), 2.8e5 and
 * 4.3e5 FLOPs, were 0.56-1.19x as fast on two; (16, 128, 8), 2.2e6, 1.05-1.69x;
 * from (64, 256, 8) on, 1.5-1.9x on an idle machine and 0.93-1.0x when another
 * process kept the second core busy. */
#define MM_PARALLEL_MIN_FLOPS 1.0e6

/* The workers to use for work of this many FLOPs: 1 below
 * MM_PARALLEL_MIN_FLOPS or when the environment fixes OpenBLAS's threads (then
 * OpenBLAS alone decides, as before), the forced count after mm_threads_force,
 * else mm_workers_max(). */
int mm_workers_for(double flops);

/* The processors online (at most 8): mm_parallel's largest number of workers.
 * (A count forced by mm_threads_force or MHAVIZ_THREADS may be higher than
 * this; mm_parallel then uses this many.) */
int mm_workers_max(void);

/* Name of the OpenBLAS kernel set in use (e.g. "Haswell"), for --bench. */
const char *mm_backend_name(void);

#endif
