/*
 * tests/unit/test_binders.c - scheduler/binders.c, the binding pipeline on
 * its own, with made-up ops: jobs run on the pool and are freed; the
 * backlog bounds admissions; a fence refuses admissions, wakes a waiting
 * admitter and drops the queued jobs; a pod waiting on Permit runs on a
 * thread of its own; a stop past its timeout rejects the waiting pods.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "binders.h"
#include "harness.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

/* The ops' side: runs counted, a gate that holds runs while closed, the
 * drops and rejections counted, the threads' names seen. */
typedef struct fake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gate_closed;
    atomic_int runs, running, drops, rejects;
    char thread_name[32];
} fake;

static void fake_run(void *ud, bind_job *job)
{
    fake *f = ud;
    (void)job;
    atomic_fetch_add(&f->running, 1);
    pthread_mutex_lock(&f->mu);
    pthread_getname_np(pthread_self(), f->thread_name, sizeof(f->thread_name));
    while (f->gate_closed)
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
    atomic_fetch_add(&f->running, -1);
    atomic_fetch_add(&f->runs, 1);
}

static void fake_drop(void *ud, bind_job *job)
{
    (void)job;
    atomic_fetch_add(&((fake *)ud)->drops, 1);
}

/* Rejecting the waiting pods opens the gate, as rejecting a Permit wait
 * ends its binding cycle. */
static void fake_reject(void *ud)
{
    fake *f = ud;
    atomic_fetch_add(&f->rejects, 1);
    pthread_mutex_lock(&f->mu);
    f->gate_closed = 0;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void gate(fake *f, int closed)
{
    pthread_mutex_lock(&f->mu);
    f->gate_closed = closed;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static sched_binders *pipeline(fake *f, size_t threads)
{
    sched_binders_ops ops = {fake_run, fake_drop, fake_reject, f, NULL};
    sched_binders *b = NULL;
    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    assert_int_equal(sched_binders_new(threads, &ops, &b), KUBE_OK);
    assert_int_equal(sched_binders_start(b), KUBE_OK);
    return b;
}

static void done(fake *f, sched_binders *b)
{
    sched_binders_stop(b, 1000);
    sched_binders_free(b);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
}

static bind_job *job(void)
{
    bind_job *j = calloc(1, sizeof(*j));
    assert_non_null(j);
    return j;
}

static int idle_within(sched_binders *b, long ms)
{
    struct timespec ts;
    kube_deadline_after(&ts, CLOCK_REALTIME, ms);
    return sched_binders_wait_idle(b, &ts);
}

/* Admitted jobs run on the pool ("sched-bind") and are freed (ASan and
 * valgrind see a leak otherwise). */
static void jobs_run_on_the_pool(void **state)
{
    (void)state;
    fake f;
    sched_binders *b = pipeline(&f, 2);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(sched_binders_admit(b), 1);
        sched_binders_push(b, job());
    }
    assert_true(idle_within(b, 10000));
    assert_int_equal(atomic_load(&f.runs), 10);
    assert_int_equal(sched_binders_in_flight(b), 0);
    assert_string_equal(f.thread_name, "sched-bind");
    done(&f, b);
}

typedef struct admitter {
    sched_binders *b;
    atomic_int started, done, result;
} admitter;

static void *admit_main(void *arg)
{
    admitter *a = arg;
    atomic_store(&a->started, 1);
    atomic_store(&a->result, sched_binders_admit(a->b));
    atomic_store(&a->done, 1);
    return NULL;
}

/* With the gate closed, fills one thread's backlog (5 jobs, the first
 * holding the thread) and starts a sixth admission on thread *t (a). */
static void fill_backlog(fake *f, sched_binders *b, admitter *a, pthread_t *t)
{
    gate(f, 1);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sched_binders_admit(b), 1);
        sched_binders_push(b, job());
    }
    WAIT_TRUE(atomic_load(&f->running) == 1);
    assert_int_equal(pthread_create(t, NULL, admit_main, a), 0);
    WAIT_TRUE(atomic_load(&a->started));
}

/* One thread's backlog is 5 jobs (1 + 4 per thread): a sixth admission
 * waits until a job ends, and is then taken. */
static void backlog_bounds_admissions(void **state)
{
    (void)state;
    fake f;
    sched_binders *b = pipeline(&f, 1);
    admitter a = {.b = b};
    pthread_t t;
    fill_backlog(&f, b, &a, &t);
    assert_int_equal(sched_binders_in_flight(b), 5);
    gate(&f, 0); /* the jobs end, room is made */
    WAIT_TRUE(atomic_load(&a.done));
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&a.result), 1);
    sched_binders_push(b, job());
    assert_true(idle_within(b, 10000));
    assert_int_equal(atomic_load(&f.runs), 6);
    done(&f, b);
}

/* A fence refuses admissions (an admitter waiting for room gets 0) and
 * drops the queued jobs through ops.drop; the running one finishes. */
static void fence_refuses_and_drops_queued(void **state)
{
    (void)state;
    fake f;
    sched_binders *b = pipeline(&f, 1);
    admitter a = {.b = b};
    pthread_t t;
    fill_backlog(&f, b, &a, &t);
    sched_binders_fence(b);
    WAIT_TRUE(atomic_load(&a.done));
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&a.result), 0);
    assert_int_equal(sched_binders_admit(b), 0);
    assert_int_equal(sched_binders_submit_waiting(b, NULL), 0);
    sched_binders_drop_queued(b);
    assert_int_equal(atomic_load(&f.drops), 4);
    assert_int_equal(sched_binders_in_flight(b), 1);
    bind_job *never = job();
    sched_binders_drop(b, never); /* refused before admission: dropped and freed */
    assert_int_equal(atomic_load(&f.drops), 5);
    gate(&f, 0);
    assert_true(idle_within(b, 10000));
    assert_int_equal(atomic_load(&f.runs), 1);
    done(&f, b);
}

/* A pod waiting on Permit runs on a thread of its own ("sched-permit"),
 * even while every pool thread is held; a stop past its timeout rejects
 * the waiting pods (ops.reject_waiting) and then waits for them. */
static void waiting_pods_get_their_own_thread(void **state)
{
    (void)state;
    fake f;
    sched_binders *b = pipeline(&f, 1);
    gate(&f, 1);
    assert_int_equal(sched_binders_admit(b), 1);
    sched_binders_push(b, job());
    WAIT_TRUE(atomic_load(&f.running) == 1);
    assert_int_equal(sched_binders_submit_waiting(b, job()), 1);
    WAIT_TRUE(atomic_load(&f.running) == 2);
    assert_int_equal(sched_binders_in_flight(b), 2);
    assert_false(idle_within(b, 50));
    sched_binders_stop(b, 100); /* past 100 ms: rejects, then waits */
    assert_int_equal(atomic_load(&f.rejects), 1);
    assert_int_equal(atomic_load(&f.runs), 2);
    assert_int_equal(sched_binders_in_flight(b), 0);
    sched_binders_free(b);
    pthread_cond_destroy(&f.cv);
    pthread_mutex_destroy(&f.mu);
}

int test_group_binders(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobs_run_on_the_pool),
        cmocka_unit_test(backlog_bounds_admissions),
        cmocka_unit_test(fence_refuses_and_drops_queued),
        cmocka_unit_test(waiting_pods_get_their_own_thread),
    };
    return cmocka_run_group_tests_name("binders", tests, NULL, NULL);
}
