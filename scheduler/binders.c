/*
 * scheduler/binders.c - the binding pipeline (binders.h): a fixed pool
 * that runs the binding cycles of assumed pods, a thread of its own for
 * each pod a Permit plugin makes wait, the bounded backlog, and their
 * orderly stop.
 */
#include "binders.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

/* Pods assumed and waiting for a binding thread, per thread: the
 * scheduling thread waits beyond that (each holds its cycle state). */
#define BIND_BACKLOG_PER_WORKER 4

/* A pod a Permit plugin made wait gets a thread of its own. */
typedef struct waiter {
    struct waiter *next;
    sched_binders *b;
    bind_job *job;
    pthread_t thread;
    int done;
} waiter;

struct sched_binders {
    sched_binders_ops ops;
    pthread_mutex_t mu;      /* guards everything below */
    pthread_cond_t work_cv;  /* jobs queued, exit */
    pthread_cond_t space_cv; /* the backlog shrank, fenced, exit */
    pthread_cond_t idle_cv;  /* in_flight reached 0 */
    pthread_t *threads;
    size_t n_threads, n_started;
    bind_job *head, *tail; /* queued for the pool */
    size_t in_flight;      /* jobs queued or running, waiters included */
    size_t pool_jobs;      /* jobs queued or running in the pool, or binding without a thread */
    waiter *waiters;       /* Permit-waiting pods' threads */
    int exiting;
    int fenced; /* leadership lost: nothing more is admitted */
};

static void job_free(bind_job *job)
{
    fw_status_free(job->bind_failure);
    fw_cycle_state_free(job->cs);
    free(job);
}

/* Frees job and counts it out of in_flight. */
static void job_done(sched_binders *b, bind_job *job)
{
    job_free(job);
    pthread_mutex_lock(&b->mu);
    if (--b->in_flight == 0)
        pthread_cond_broadcast(&b->idle_cv);
    pthread_mutex_unlock(&b->mu);
}

/* The next queued job, waiting for one; NULL when the pool exits. */
static bind_job *take_job(sched_binders *b)
{
    bind_job *job;

    pthread_mutex_lock(&b->mu);
    while (!b->head && !b->exiting)
        pthread_cond_wait(&b->work_cv, &b->mu);
    job = b->head;
    if (job && !(b->head = job->next))
        b->tail = NULL;
    pthread_mutex_unlock(&b->mu);
    return job;
}

static void *pool_main(void *arg)
{
    static const char *const op[] = {"binding"};
    sched_binders *b = arg;
    bind_job *job;

    pthread_setname_np(pthread_self(), "sched-bind");
    while ((job = take_job(b))) {
        kube_metric_add(b->ops.goroutines, op, 1);
        b->ops.run(b->ops.ud, job);
        kube_metric_add(b->ops.goroutines, op, -1);
        sched_binders_release(b, job);
    }
    return NULL;
}

int sched_binders_new(size_t n_threads, const sched_binders_ops *ops, sched_binders **out)
{
    sched_binders *b = calloc(1, sizeof(*b));

    *out = NULL;
    if (!b || !(b->threads = calloc(n_threads ? n_threads : 1, sizeof(*b->threads)))) {
        free(b);
        return KUBE_ENOMEM;
    }
    b->ops = *ops;
    b->n_threads = n_threads;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->work_cv, NULL);
    pthread_cond_init(&b->space_cv, NULL);
    pthread_cond_init(&b->idle_cv, NULL);
    *out = b;
    return KUBE_OK;
}

int sched_binders_start(sched_binders *b)
{
    for (; b->n_started < b->n_threads; b->n_started++)
        if (pthread_create(&b->threads[b->n_started], NULL, pool_main, b) != 0)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

void sched_binders_free(sched_binders *b)
{
    if (!b)
        return;
    pthread_cond_destroy(&b->idle_cv);
    pthread_cond_destroy(&b->space_cv);
    pthread_cond_destroy(&b->work_cv);
    pthread_mutex_destroy(&b->mu);
    free(b->threads);
    free(b);
}

int sched_binders_admit(sched_binders *b)
{
    size_t cap = b->n_threads * (1 + BIND_BACKLOG_PER_WORKER);
    int admitted;

    pthread_mutex_lock(&b->mu);
    while (b->pool_jobs >= cap && !b->exiting && !b->fenced)
        pthread_cond_wait(&b->space_cv, &b->mu);
    admitted = !b->fenced;
    if (admitted) {
        b->in_flight++;
        b->pool_jobs++;
    }
    pthread_mutex_unlock(&b->mu);
    return admitted;
}

void sched_binders_push(sched_binders *b, bind_job *job)
{
    pthread_mutex_lock(&b->mu);
    job->next = NULL;
    if (b->tail)
        b->tail->next = job;
    else
        b->head = job;
    b->tail = job;
    pthread_cond_signal(&b->work_cv);
    pthread_mutex_unlock(&b->mu);
}

void sched_binders_release(sched_binders *b, bind_job *job)
{
    job_done(b, job);
    pthread_mutex_lock(&b->mu);
    b->pool_jobs--;
    pthread_cond_signal(&b->space_cv);
    pthread_mutex_unlock(&b->mu);
}

void sched_binders_drop(sched_binders *b, bind_job *job)
{
    b->ops.drop(b->ops.ud, job);
    job_free(job);
}

static void *waiter_main(void *arg)
{
    waiter *w = arg;
    sched_binders *b = w->b;

    pthread_setname_np(pthread_self(), "sched-permit");
    b->ops.run(b->ops.ud, w->job);
    job_done(b, w->job);
    pthread_mutex_lock(&b->mu);
    w->done = 1;
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

int sched_binders_submit_waiting(sched_binders *b, bind_job *job)
{
    waiter *w = calloc(1, sizeof(*w));

    if (!w)
        return 0;
    w->b = b;
    w->job = job;
    pthread_mutex_lock(&b->mu);
    b->in_flight++;
    if (b->fenced || pthread_create(&w->thread, NULL, waiter_main, w) != 0) {
        b->in_flight--;
        pthread_mutex_unlock(&b->mu);
        free(w);
        return 0;
    }
    w->next = b->waiters;
    b->waiters = w;
    pthread_mutex_unlock(&b->mu);
    return 1;
}

void sched_binders_reap(sched_binders *b, int all)
{
    waiter *done = NULL, **pp;

    pthread_mutex_lock(&b->mu);
    for (pp = &b->waiters; *pp;) {
        waiter *w = *pp;
        if (all || w->done) {
            *pp = w->next;
            w->next = done;
            done = w;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&b->mu);
    while (done) {
        waiter *w = done;
        done = w->next;
        pthread_join(w->thread, NULL);
        free(w);
    }
}

size_t sched_binders_in_flight(sched_binders *b)
{
    pthread_mutex_lock(&b->mu);
    size_t n = b->in_flight;
    pthread_mutex_unlock(&b->mu);
    return n;
}

int sched_binders_wait_idle(sched_binders *b, const struct timespec *deadline)
{
    int idle;

    pthread_mutex_lock(&b->mu);
    while (b->in_flight > 0 && pthread_cond_timedwait(&b->idle_cv, &b->mu, deadline) == 0)
        ;
    idle = b->in_flight == 0;
    pthread_mutex_unlock(&b->mu);
    return idle;
}

/* Waits as long as the jobs in flight take. */
static void wait_all(sched_binders *b)
{
    pthread_mutex_lock(&b->mu);
    while (b->in_flight > 0)
        pthread_cond_wait(&b->idle_cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

void sched_binders_fence(sched_binders *b)
{
    pthread_mutex_lock(&b->mu);
    b->fenced = 1;
    pthread_cond_broadcast(&b->space_cv);
    pthread_mutex_unlock(&b->mu);
}

void sched_binders_drop_queued(sched_binders *b)
{
    bind_job *job, *next;
    size_t n = 0;

    pthread_mutex_lock(&b->mu);
    job = b->head;
    b->head = b->tail = NULL;
    for (next = job; next; next = next->next)
        n++;
    b->pool_jobs -= n;
    pthread_cond_broadcast(&b->space_cv);
    pthread_mutex_unlock(&b->mu);
    if (n)
        KLOG_INFO("dropping %zu queued bindings: not the leader", n);
    for (; job; job = next) {
        next = job->next;
        b->ops.drop(b->ops.ud, job);
        job_done(b, job);
    }
}

void sched_binders_stop(sched_binders *b, long timeout_ms)
{
    struct timespec deadline;

    kube_deadline_after(&deadline, CLOCK_REALTIME, timeout_ms > 0 ? timeout_ms : 0);
    if (!sched_binders_wait_idle(b, &deadline)) {
        KLOG_WARN("binding still in flight after %ld ms; rejecting pods waiting on permit",
                  timeout_ms);
        b->ops.reject_waiting(b->ops.ud);
        /* Bindings without a thread end on the client's I/O thread, and
         * their failures on the pool: both before anything is freed. */
        wait_all(b);
    }
    pthread_mutex_lock(&b->mu);
    b->exiting = 1;
    pthread_cond_broadcast(&b->work_cv);
    pthread_cond_broadcast(&b->space_cv);
    pthread_mutex_unlock(&b->mu);
    for (size_t i = 0; i < b->n_started; i++)
        pthread_join(b->threads[i], NULL);
    b->n_started = 0;
    sched_binders_reap(b, 1);
}
