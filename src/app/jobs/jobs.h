/* jobs.h: the one place where mhaviz's threads meet. A runner keeps a few
 * worker threads; a job is a function and its context, submitted to the runner
 * and then polled, waited for or cancelled through its handle. Cancelling is
 * cooperative: the job reads job_cancelled() and returns early. A wake-up
 * callback, called from the worker when a job ends or has news, lets an event
 * loop sleep until then. Results cross threads by hand-over (the job's context
 * is the worker's from submit until the job is done) or, for a job that
 * publishes while it runs, through a jobs_swap of three buffers whose pointers
 * are swapped under a lock: nothing large is copied under it. No SDL: POSIX
 * threads. */
#ifndef MHAVIZ_JOBS_H
#define MHAVIZ_JOBS_H

#include <pthread.h>

typedef struct jobs jobs; /* the runner */
typedef struct job job;   /* one submitted job: its handle */

/* A job's body: runs once on a worker thread with the context given to
 * jobs_submit. It should look at job_cancelled(j) now and then. */
typedef void (*job_fn)(job *j, void *ctx);

/* A runner that starts worker threads as jobs need them, at most max_workers
 * (>= 1); a worker that finishes a job waits for the next. NULL when out of
 * resources. */
jobs *jobs_create(int max_workers);

/* The wake-up: wake(ud) is called from a worker thread whenever a job of this
 * runner ends, reports progress or has news (NULL: none). May be called at any
 * time; a wake-up under way may still use the previous pair. */
void jobs_set_wake(jobs *r, void (*wake)(void *ud), void *ud);

/* Cancels every job, waits for the running ones to return, ends the threads
 * and frees the runner; NULL is fine. Jobs that never started end without
 * running (job_ran says so). Handles stay valid (each is done) until job_free. */
void jobs_destroy(jobs *r);

/* Queues fn(ctx) and returns its handle (the caller's, until job_free), or
 * NULL when out of resources (nothing was queued). Jobs start in the order
 * submitted as workers are free. */
job *jobs_submit(jobs *r, job_fn fn, void *ctx);

/* 1 once the job has returned (or was dropped by jobs_destroy), else 0; with
 * progress != NULL, the job's last job_progress (0 before any). */
int job_poll(job *j, float *progress);

/* Waits until the job has returned. */
void job_wait(job *j);

/* Asks the job to stop: job_cancelled turns 1 for it; a job not yet started
 * ends without running. Returns at once (job_wait waits). */
void job_cancel(job *j);

/* 1 if the job's function ran (0 when cancelled before it started). Only once
 * job_poll said done. */
int job_ran(job *j);

/* Cancels, waits and frees the handle; NULL is fine. */
void job_free(job *j);

/* --- inside a job -------------------------------------------------------------- */

/* 1 once job_cancel (or jobs_destroy) asked the job to stop. */
int job_cancelled(const job *j);

/* Reports progress (0..1) and wakes the loop. */
void job_progress(job *j, float progress);

/* Wakes the loop: the job has something new (a jobs_swap publication). */
void job_news(job *j);

/* --- handing over results by swapping --------------------------------------------
 * Three buffers of the same kind: the writer (a job) fills its back buffer and
 * publishes it, which swaps it with the waiting one under the lock; the reader
 * (the UI) takes the newest by swapping the waiting one with its front buffer,
 * again only pointers under the lock. Each side reads and writes its own buffer
 * without the lock; a publication the reader has not taken yet is replaced by
 * a newer one. */
typedef struct {
    pthread_mutex_t lock;
    void *front; /* the reader's */
    void *ready; /* the newest publication, or a spare */
    void *back;  /* the writer's */
    unsigned long published, taken;
} jobs_swap;

void jobs_swap_init(jobs_swap *sw, void *front, void *ready, void *back);
void jobs_swap_destroy(jobs_swap *sw); /* the lock only: the buffers are the caller's */
/* The writer's buffer to fill (valid until its next jobs_swap_publish). */
void *jobs_swap_back(jobs_swap *sw);
/* The writer hands its filled back buffer over and gets another to fill. */
void jobs_swap_publish(jobs_swap *sw);
/* The reader takes the newest publication if there is one it has not taken:
 * 1 if the front buffer changed. */
int jobs_swap_take(jobs_swap *sw);
/* The reader's buffer (valid until its next jobs_swap_take). */
void *jobs_swap_front(jobs_swap *sw);

#endif
