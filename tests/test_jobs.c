/* test_jobs.c: the job runner (src/app/jobs/jobs.c): submit, poll and wait; cancel stops a
 * long job; the wake-up is called when a job ends and when it has news; the
 * swap hands over the newest publication; destroying the runner while a job
 * runs is safe; jobs queue in order on one worker. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "jobs.h"

#define CHECK_INT(what, want, got)                                                                 \
    do {                                                                                           \
        long w_ = (long)(want), g_ = (long)(got);                                                  \
        if (w_ != g_) fail_msg("%s: expected %ld, got %ld", what, w_, g_);                         \
    } while (0)

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct {
    atomic_int runs;
    atomic_int started;
    long sum;    /* the job's result: written by it, read after job_wait */
    int forever; /* 1: runs until cancelled */
    atomic_int saw_cancel;
    atomic_int order_next;
    int order; /* which place it ran in */
} work;

static void add_up(job *j, void *ctx) {
    work *w = ctx;
    atomic_store(&w->started, 1);
    long s = 0;
    for (long i = 1; i <= 1000; i++) s += i;
    w->sum = s;
    job_progress(j, 1.0f);
    atomic_fetch_add(&w->runs, 1);
}

static void spin_until_cancelled(job *j, void *ctx) {
    work *w = ctx;
    atomic_store(&w->started, 1);
    for (long i = 0; i < (w->forever ? 5000 : 200); i++) { /* "forever": 5 s */
        if (job_cancelled(j)) {
            atomic_store(&w->saw_cancel, 1);
            return;
        }
        sleep_ms(1);
    }
}

static void wait_started(work *w) {
    for (int i = 0; i < 5000 && !atomic_load(&w->started); i++) sleep_ms(1);
    CHECK_INT("the job started", 1, atomic_load(&w->started));
}

static void test_submit_poll_wait(void **st) {
    (void)st;
    jobs *r = jobs_create(2);
    assert_non_null(r);
    work w = {0};
    job *j = jobs_submit(r, add_up, &w);
    assert_non_null(j);
    job_wait(j);
    float p = -1.0f;
    CHECK_INT("done after the wait", 1, job_poll(j, &p));
    CHECK_INT("its result", 500500, w.sum);
    CHECK_INT("progress reported", 1, p == 1.0f);
    CHECK_INT("it ran", 1, job_ran(j));
    CHECK_INT("it ran once", 1, atomic_load(&w.runs));
    job_free(j);
    /* a job that takes a while: not done at once, done later */
    work l = {0};
    j = jobs_submit(r, spin_until_cancelled, &l);
    wait_started(&l);
    CHECK_INT("a running job is not done", 0, job_poll(j, NULL));
    job_wait(j);
    CHECK_INT("not cancelled: it ran to its end", 0, atomic_load(&l.saw_cancel));
    job_free(j);
    jobs_destroy(r);
}

static void test_cancel_stops_a_long_job(void **st) {
    (void)st;
    jobs *r = jobs_create(1);
    work w = {.forever = 1};
    job *j = jobs_submit(r, spin_until_cancelled, &w);
    wait_started(&w);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    job_cancel(j);
    job_wait(j);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    CHECK_INT("the job saw the cancel", 1, atomic_load(&w.saw_cancel));
    if (ms > 2000.0) fail_msg("cancel: expected the job to end within 2 s, took %.0f ms", ms);
    job_free(j);
    /* a job cancelled before it starts never runs: one worker, busy with another */
    work busy = {.forever = 1}, never = {0};
    job *a = jobs_submit(r, spin_until_cancelled, &busy);
    job *b = jobs_submit(r, add_up, &never);
    wait_started(&busy);
    job_cancel(b);
    job_cancel(a);
    job_wait(b);
    CHECK_INT("a job cancelled in the queue does not run", 0, atomic_load(&never.runs));
    CHECK_INT("job_ran says so", 0, job_ran(b));
    job_free(a);
    job_free(b);
    jobs_destroy(r);
}

static atomic_int wakes;
static void count_wake(void *ud) {
    CHECK_INT("the wake-up gets its user data", 42, *(int *)ud);
    atomic_fetch_add(&wakes, 1);
}

static void news_twice(job *j, void *ctx) {
    (void)ctx;
    job_news(j);
    job_news(j);
}

static void test_wake_up_is_called(void **st) {
    (void)st;
    static int ud = 42;
    jobs *r = jobs_create(1);
    jobs_set_wake(r, count_wake, &ud);
    atomic_store(&wakes, 0);
    work w = {0};
    job *j = jobs_submit(r, add_up, &w); /* one progress and the end */
    job_wait(j);
    for (int i = 0; i < 2000 && atomic_load(&wakes) < 2; i++) sleep_ms(1);
    CHECK_INT("wake-ups for progress and the end", 2, atomic_load(&wakes));
    job_free(j);
    atomic_store(&wakes, 0);
    j = jobs_submit(r, news_twice, NULL);
    job_wait(j);
    for (int i = 0; i < 2000 && atomic_load(&wakes) < 3; i++) sleep_ms(1);
    CHECK_INT("wake-ups for two pieces of news and the end", 3, atomic_load(&wakes));
    job_free(j);
    jobs_destroy(r);
}

/* --- the swap: a writer publishing 1, 2, 3 ... while the reader takes ---------------- */

typedef struct {
    long value;
    long filler[255]; /* a buffer worth not copying */
} pub;

typedef struct {
    jobs_swap *sw;
    long count;
} writer_ctx;

static void writer(job *j, void *ctx) {
    writer_ctx *w = ctx;
    for (long i = 1; i <= w->count && !job_cancelled(j); i++) {
        pub *b = jobs_swap_back(w->sw);
        for (int k = 0; k < 256; k++) b->filler[k % 255] = i; /* whole, or not at all */
        b->value = i;
        jobs_swap_publish(w->sw);
        job_news(j);
    }
}

static void test_swap_hands_over_the_newest(void **st) {
    (void)st;
    static pub bufs[3];
    jobs_swap sw;
    jobs_swap_init(&sw, &bufs[0], &bufs[1], &bufs[2]);
    CHECK_INT("nothing published: nothing to take", 0, jobs_swap_take(&sw));
    /* on one thread: two publications, one take gives the second */
    pub *b = jobs_swap_back(&sw);
    b->value = 1;
    jobs_swap_publish(&sw);
    b = jobs_swap_back(&sw);
    b->value = 2;
    jobs_swap_publish(&sw);
    CHECK_INT("a take after two publications", 1, jobs_swap_take(&sw));
    CHECK_INT("the newest", 2, ((pub *)jobs_swap_front(&sw))->value);
    CHECK_INT("taken once", 0, jobs_swap_take(&sw));
    CHECK_INT("the front stays", 2, ((pub *)jobs_swap_front(&sw))->value);
    b = jobs_swap_back(&sw);
    if (b == jobs_swap_front(&sw)) fail_msg("the writer's buffer is the reader's");
    /* across threads: every take is whole and never goes back */
    jobs *r = jobs_create(1);
    writer_ctx wc = {&sw, 20000};
    for (int k = 0; k < 3; k++) bufs[k].value = 0, bufs[k].filler[0] = 0;
    jobs_swap_destroy(&sw);
    jobs_swap_init(&sw, &bufs[0], &bufs[1], &bufs[2]);
    job *j = jobs_submit(r, writer, &wc);
    long last = 0;
    while (!job_poll(j, NULL) || jobs_swap_take(&sw)) {
        jobs_swap_take(&sw);
        const pub *f = jobs_swap_front(&sw);
        for (int k = 0; k < 255; k++)
            if (f->filler[k] != f->value && f->value != 0)
                fail_msg("a torn buffer: value %ld, filler[%d] %ld", f->value, k, f->filler[k]);
        if (f->value < last) fail_msg("went back: %ld after %ld", f->value, last);
        last = f->value;
    }
    jobs_swap_take(&sw);
    CHECK_INT("the last publication is taken", 20000, ((pub *)jobs_swap_front(&sw))->value);
    job_free(j);
    jobs_destroy(r);
    jobs_swap_destroy(&sw);
}

static void test_destroy_while_a_job_runs(void **st) {
    (void)st;
    jobs *r = jobs_create(1);
    work w = {.forever = 1}, queued = {0};
    job *a = jobs_submit(r, spin_until_cancelled, &w);
    job *b = jobs_submit(r, add_up, &queued);
    wait_started(&w);
    jobs_destroy(r); /* cancels the running job, drops the queued one */
    CHECK_INT("the running job was cancelled", 1, atomic_load(&w.saw_cancel));
    CHECK_INT("the running job is done", 1, job_poll(a, NULL));
    CHECK_INT("the queued job is done", 1, job_poll(b, NULL));
    CHECK_INT("without running", 0, atomic_load(&queued.runs));
    job_wait(a); /* handles outlive the runner */
    job_free(a);
    job_free(b);
    jobs_destroy(NULL);
    job_free(NULL);
}

static void in_order(job *j, void *ctx) {
    (void)j;
    work *w = ctx;
    static atomic_int next;
    w->order = atomic_fetch_add(&next, 1);
}

static void test_one_worker_runs_in_order(void **st) {
    (void)st;
    jobs *r = jobs_create(1);
    work w[8] = {0};
    job *j[8];
    for (int i = 0; i < 8; i++) j[i] = jobs_submit(r, in_order, &w[i]);
    for (int i = 0; i < 8; i++) job_wait(j[i]);
    for (int i = 1; i < 8; i++) CHECK_INT("in the order submitted", w[i - 1].order + 1, w[i].order);
    for (int i = 0; i < 8; i++) job_free(j[i]);
    /* several workers: jobs run side by side (a long one does not hold a short one) */
    jobs *r2 = jobs_create(2);
    work warm = {0}, lng = {.forever = 1}, shrt = {0};
    job *c = jobs_submit(r2, add_up, &warm); /* one worker, then idle */
    job_wait(c);
    job_free(c);
    sleep_ms(20);
    job *a = jobs_submit(r2, spin_until_cancelled, &lng);
    job *b = jobs_submit(r2, add_up, &shrt); /* at once: the first worker may not have woken */
    job_wait(b);
    CHECK_INT("the short job ran beside the long one", 1, atomic_load(&shrt.runs));
    CHECK_INT("the long one still runs", 0, job_poll(a, NULL));
    job_free(a);
    job_free(b);
    jobs_destroy(r2);
    jobs_destroy(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_poll_wait),
        cmocka_unit_test(test_cancel_stops_a_long_job),
        cmocka_unit_test(test_wake_up_is_called),
        cmocka_unit_test(test_swap_hands_over_the_newest),
        cmocka_unit_test(test_destroy_while_a_job_runs),
        cmocka_unit_test(test_one_worker_runs_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
