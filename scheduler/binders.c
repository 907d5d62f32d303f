/*
 * scheduler/binders.c - the binding threads: a fixed pool that runs the
 * binding cycles of assumed pods (kube-scheduler runs each in a goroutine),
 * a thread of its own for each pod a Permit plugin makes wait (so waiting
 * pods never hold the pool), and their orderly stop.
 */
#include "scheduler_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/util/clock.h"
#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

static void job_free(bind_job *job)
{
    fw_status_free(job->bind_failure);
    fw_cycle_state_free(job->cs);
    free(job);
}

static void bind_done(sched_scheduler *s, bind_job *job)
{
    job_free(job);
    pthread_mutex_lock(&s->mu);
    if (--s->in_flight == 0)
        pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_unlock(&s->mu);
}

static void *binder_main(void *arg)
{
    sched_scheduler *s = arg;

    pthread_setname_np(pthread_self(), "sched-bind");
    static const char *const op[] = {"binding"};

    pthread_mutex_lock(&s->mu);
    for (;;) {
        bind_job *job;
        while (!s->jobs_head && !s->binders_exit)
            pthread_cond_wait(&s->bind_cv, &s->mu);
        if (!s->jobs_head)
            break;
        job = s->jobs_head;
        s->jobs_head = job->next;
        if (!s->jobs_head)
            s->jobs_tail = NULL;
        pthread_mutex_unlock(&s->mu);
        kube_metric_add(s->cm.goroutines, op, 1);
        sched_binding_cycle(s, job);
        kube_metric_add(s->cm.goroutines, op, -1);
        sched_binders_release(s, job);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int sched_binders_admit(sched_scheduler *s)
{
    size_t cap = s->n_binders * (1 + BIND_BACKLOG_PER_WORKER);
    int admitted;

    pthread_mutex_lock(&s->mu);
    while (s->pool_jobs >= cap && !s->binders_exit && !s->fenced)
        pthread_cond_wait(&s->space_cv, &s->mu);
    admitted = !s->fenced;
    if (admitted) {
        s->in_flight++;
        s->pool_jobs++;
    }
    pthread_mutex_unlock(&s->mu);
    return admitted;
}

void sched_binders_push(sched_scheduler *s, bind_job *job)
{
    pthread_mutex_lock(&s->mu);
    job->next = NULL;
    if (s->jobs_tail)
        s->jobs_tail->next = job;
    else
        s->jobs_head = job;
    s->jobs_tail = job;
    pthread_cond_signal(&s->bind_cv);
    pthread_mutex_unlock(&s->mu);
}

void sched_binders_release(sched_scheduler *s, bind_job *job)
{
    bind_done(s, job);
    pthread_mutex_lock(&s->mu);
    s->pool_jobs--;
    pthread_cond_signal(&s->space_cv);
    pthread_mutex_unlock(&s->mu);
}

void sched_binders_drop(sched_scheduler *s, bind_job *job)
{
    sched_binding_drop(s, job);
    job_free(job);
}

static void *waiter_main(void *arg)
{
    waiter *w = arg;

    pthread_setname_np(pthread_self(), "sched-permit");
    sched_scheduler *s = w->s;

    sched_binding_cycle(s, w->job);
    bind_done(s, w->job);
    pthread_mutex_lock(&s->mu);
    w->done = 1;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int sched_binders_submit_waiting(sched_scheduler *s, bind_job *job)
{
    waiter *w = calloc(1, sizeof(*w));

    if (!w)
        return 0;
    w->s = s;
    w->job = job;
    pthread_mutex_lock(&s->mu);
    s->in_flight++;
    if (s->fenced || pthread_create(&w->thread, NULL, waiter_main, w) != 0) {
        s->in_flight--;
        pthread_mutex_unlock(&s->mu);
        free(w);
        return 0;
    }
    w->next = s->waiters;
    s->waiters = w;
    pthread_mutex_unlock(&s->mu);
    return 1;
}

void sched_binders_reap(sched_scheduler *s, int all)
{
    waiter *done = NULL, **pp;

    pthread_mutex_lock(&s->mu);
    for (pp = &s->waiters; *pp;) {
        waiter *w = *pp;
        if (all || w->done) {
            *pp = w->next;
            w->next = done;
            done = w;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&s->mu);
    while (done) {
        waiter *w = done;
        done = w->next;
        pthread_join(w->thread, NULL);
        free(w);
    }
}

int sched_binders_start(sched_scheduler *s)
{
    s->binders = calloc(s->n_binders, sizeof(*s->binders));
    if (!s->binders)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < s->n_binders; i++) {
        if (pthread_create(&s->binders[i], NULL, binder_main, s) != 0) {
            s->n_binders = i;
            return KUBE_ENOMEM;
        }
    }
    return KUBE_OK;
}

typedef struct uid_list {
    char **uids;
    size_t n, cap;
} uid_list;

static void collect_waiting(void *ud, const fw_pod_info *pod, const char *const *pending,
                            size_t n_pending)
{
    uid_list *l = ud;

    (void)pending;
    (void)n_pending;
    if (KUBE_ARRAY_RESERVE(l->uids, l->cap, l->n + 1) != KUBE_OK)
        return;
    l->uids[l->n] = strdup(pod->uid);
    if (l->uids[l->n])
        l->n++;
}

void sched_binders_reject_waiting(sched_scheduler *s)
{
    for (size_t i = 0; i < s->n_fws; i++) {
        uid_list l = {NULL, 0, 0};
        fw_framework_foreach_waiting_pod(s->fws[i], collect_waiting, &l);
        for (size_t k = 0; k < l.n; k++) {
            fw_framework_reject_waiting_pod(s->fws[i], l.uids[k], "", "scheduler stopping");
            free(l.uids[k]);
        }
        free(l.uids);
    }
}

/* Waits for the bind jobs, at most timeout_ms (< 0: as long as they
 * take); 1 when none is left. */
static int wait_binds(sched_scheduler *s, long timeout_ms)
{
    struct timespec ts;
    int idle;

    kube_deadline_after(&ts, CLOCK_REALTIME, timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&s->mu);
    while (s->in_flight > 0 &&
           (timeout_ms < 0 ? pthread_cond_wait(&s->idle_cv, &s->mu)
                           : pthread_cond_timedwait(&s->idle_cv, &s->mu, &ts)) != ETIMEDOUT)
        ;
    idle = s->in_flight == 0;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

void sched_binders_stop(sched_scheduler *s, long timeout_ms)
{
    if (!wait_binds(s, timeout_ms > 0 ? timeout_ms : 0)) {
        KLOG_WARN("binding still in flight after %ld ms; rejecting pods waiting on permit",
                  timeout_ms);
        sched_binders_reject_waiting(s);
        /* Bindings without a thread end on the client's I/O thread, and
         * their failures on the pool: both before anything is freed. */
        wait_binds(s, -1);
    }
    pthread_mutex_lock(&s->mu);
    s->binders_exit = 1;
    pthread_cond_broadcast(&s->bind_cv);
    pthread_cond_broadcast(&s->space_cv);
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < s->n_binders; i++)
        pthread_join(s->binders[i], NULL);
    s->n_binders = 0;
    sched_binders_reap(s, 1);
}

void sched_binders_drop_queued(sched_scheduler *s)
{
    bind_job *job, *next;
    size_t n = 0;

    pthread_mutex_lock(&s->mu);
    job = s->jobs_head;
    s->jobs_head = s->jobs_tail = NULL;
    for (next = job; next; next = next->next)
        n++;
    s->pool_jobs -= n;
    pthread_cond_broadcast(&s->space_cv);
    pthread_mutex_unlock(&s->mu);
    if (n)
        KLOG_INFO("dropping %zu queued bindings: not the leader", n);
    for (; job; job = next) {
        next = job->next;
        sched_binding_drop(s, job);
        bind_done(s, job);
    }
}
