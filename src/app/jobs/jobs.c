/* jobs.c: the runner behind jobs.h. One lock guards the queue, the worker
 * count and the wake-up; each job has its own lock for its state, so a handle
 * outlives the runner once its job is done. A worker calls the wake-up with no
 * lock held. */
#define _POSIX_C_SOURCE 200809L
#include "jobs.h"

#include <stdatomic.h>
#include <stdlib.h>

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
    jobs *runner; /* NULL once done: a handle never reaches the runner after that */
    job_fn fn;
    void *ctx;
    job *next;    /* in the queue */
    job *running; /* in the runner's list of running jobs */
    pthread_mutex_t lock;
    pthread_cond_t done;
    int state, ran; /* under lock */
    float progress; /* under lock */
    atomic_int cancel;
};

struct jobs {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a job was queued, or quit */
    job *head, *tail;    /* queued, not started */
    job *running;        /* started, not returned: jobs_destroy cancels them */
    int queued;          /* jobs in the queue */
    int workers, idle, max_workers, quit;
    pthread_t threads[16];
    void (*wake)(void *);
    void *ud;
};

static void call_wake(jobs *r) {
    pthread_mutex_lock(&r->lock);
    void (*wake)(void *) = r->wake;
    void *ud = r->ud;
    pthread_mutex_unlock(&r->lock);
    if (wake) wake(ud);
}

static void finish(job *j, int ran) {
    pthread_mutex_lock(&j->lock);
    j->state = JOB_DONE;
    j->ran = ran;
    j->runner = NULL;
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->lock);
}

static void *worker(void *arg) {
    jobs *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->head && !r->quit) {
            r->idle++;
            pthread_cond_wait(&r->work, &r->lock);
            r->idle--;
        }
        if (r->quit) break; /* jobs_destroy drops what is still queued */
        job *j = r->head;
        r->head = j->next;
        r->queued--;
        if (!r->head) r->tail = NULL;
        j->running = r->running;
        r->running = j;
        pthread_mutex_unlock(&r->lock);
        pthread_mutex_lock(&j->lock);
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&j->lock);
        const int run = !atomic_load(&j->cancel);
        if (run) j->fn(j, j->ctx);
        pthread_mutex_lock(&r->lock);
        for (job **p = &r->running; *p; p = &(*p)->running)
            if (*p == j) {
                *p = j->running;
                break;
            }
        pthread_mutex_unlock(&r->lock);
        finish(j, run); /* from here the handle is its owner's alone */
        call_wake(r);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

jobs *jobs_create(int max_workers) {
    jobs *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    const int cap = (int)(sizeof r->threads / sizeof r->threads[0]);
    r->max_workers = max_workers < 1 ? 1 : max_workers > cap ? cap : max_workers;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->work, NULL);
    return r;
}

void jobs_set_wake(jobs *r, void (*wake)(void *ud), void *ud) {
    pthread_mutex_lock(&r->lock);
    r->wake = wake;
    r->ud = ud;
    pthread_mutex_unlock(&r->lock);
}

void jobs_destroy(jobs *r) {
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    r->quit = 1;
    job *queued = r->head;
    r->head = r->tail = NULL;
    r->queued = 0;
    pthread_cond_broadcast(&r->work);
    for (job *j = r->running; j; j = j->running) atomic_store(&j->cancel, 1);
    const int n = r->workers;
    pthread_mutex_unlock(&r->lock);
    for (job *j = queued; j; j = j->next) atomic_store(&j->cancel, 1);
    /* running jobs: asked to stop, then waited for by joining their threads */
    for (int i = 0; i < n; i++) pthread_join(r->threads[i], NULL);
    while (queued) {
        job *next = queued->next;
        finish(queued, 0);
        queued = next;
    }
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->work);
    free(r);
}

job *jobs_submit(jobs *r, job_fn fn, void *ctx) {
    job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->runner = r;
    j->fn = fn;
    j->ctx = ctx;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->done, NULL);
    pthread_mutex_lock(&r->lock);
    /* a thread more when the idle ones are fewer than the jobs that wait (an idle
       one already signalled may not have taken its job yet): a job never waits
       behind a long one while a worker could still be started */
    if (r->queued + 1 > r->idle && r->workers < r->max_workers &&
        pthread_create(&r->threads[r->workers], NULL, worker, r) == 0)
        r->workers++;
    if (r->workers == 0 || r->quit) { /* no thread at all: nothing can run it */
        pthread_mutex_unlock(&r->lock);
        pthread_mutex_destroy(&j->lock);
        pthread_cond_destroy(&j->done);
        free(j);
        return NULL;
    }
    if (r->tail)
        r->tail->next = j;
    else
        r->head = j;
    r->tail = j;
    r->queued++;
    pthread_cond_signal(&r->work);
    pthread_mutex_unlock(&r->lock);
    return j;
}

int job_poll(job *j, float *progress) {
    pthread_mutex_lock(&j->lock);
    const int done = j->state == JOB_DONE;
    if (progress) *progress = j->progress;
    pthread_mutex_unlock(&j->lock);
    return done;
}

void job_wait(job *j) {
    pthread_mutex_lock(&j->lock);
    while (j->state != JOB_DONE) pthread_cond_wait(&j->done, &j->lock);
    pthread_mutex_unlock(&j->lock);
}

void job_cancel(job *j) {
    atomic_store(&j->cancel, 1);
}

int job_ran(job *j) {
    pthread_mutex_lock(&j->lock);
    const int ran = j->ran;
    pthread_mutex_unlock(&j->lock);
    return ran;
}

void job_free(job *j) {
    if (!j) return;
    job_cancel(j);
    job_wait(j);
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->done);
    free(j);
}

int job_cancelled(const job *j) {
    return atomic_load(&((job *)j)->cancel);
}

void job_progress(job *j, float progress) {
    pthread_mutex_lock(&j->lock);
    j->progress = progress;
    jobs *r = j->runner; /* running: the runner lives until the job returns */
    pthread_mutex_unlock(&j->lock);
    if (r) call_wake(r);
}

void job_news(job *j) {
    pthread_mutex_lock(&j->lock);
    jobs *r = j->runner;
    pthread_mutex_unlock(&j->lock);
    if (r) call_wake(r);
}

/* --- jobs_swap ---------------------------------------------------------------------- */

void jobs_swap_init(jobs_swap *sw, void *front, void *ready, void *back) {
    pthread_mutex_init(&sw->lock, NULL);
    sw->front = front;
    sw->ready = ready;
    sw->back = back;
    sw->published = sw->taken = 0;
}

void jobs_swap_destroy(jobs_swap *sw) {
    pthread_mutex_destroy(&sw->lock);
}

void *jobs_swap_back(jobs_swap *sw) {
    pthread_mutex_lock(&sw->lock);
    void *b = sw->back;
    pthread_mutex_unlock(&sw->lock);
    return b;
}

void jobs_swap_publish(jobs_swap *sw) {
    pthread_mutex_lock(&sw->lock);
    void *b = sw->back;
    sw->back = sw->ready;
    sw->ready = b;
    sw->published++;
    pthread_mutex_unlock(&sw->lock);
}

int jobs_swap_take(jobs_swap *sw) {
    pthread_mutex_lock(&sw->lock);
    const int fresh = sw->published != sw->taken;
    if (fresh) {
        void *f = sw->front;
        sw->front = sw->ready;
        sw->ready = f;
        sw->taken = sw->published;
    }
    pthread_mutex_unlock(&sw->lock);
    return fresh;
}

void *jobs_swap_front(jobs_swap *sw) {
    pthread_mutex_lock(&sw->lock);
    void *f = sw->front;
    pthread_mutex_unlock(&sw->lock);
    return f;
}
