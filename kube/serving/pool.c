/*
 * kube/serving/pool.c - a fixed pool of worker threads running queued jobs (the
 * blocking calls to kube-apiserver, so the libwebsockets service thread never
 * waits on the network). The contract is in pool.h.
 */
#include "kube/serving/pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "kube/util/errors.h"

typedef struct job {
    struct job *next;
    kube_job_fn fn;
    void *arg;
} job;

struct kube_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    size_t queued;
    int stopping;
    pthread_t *threads;
    int n_threads;
};

static void *worker(void *arg)
{
    kube_pool *p = arg;

    pthread_setname_np(pthread_self(), "apis-worker");

    for (;;) {
        job *j;
        pthread_mutex_lock(&p->mu);
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->cv, &p->mu);
        j = p->head;
        if (!j) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        pthread_mutex_unlock(&p->mu);
        j->fn(j->arg);
        free(j);
    }
}

int kube_pool_new(int threads, kube_pool **out)
{
    kube_pool *p;

    *out = NULL;
    if (threads < 1)
        return KUBE_EINVAL;
    p = calloc(1, sizeof(*p));
    if (!p)
        return KUBE_ENOMEM;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threads = calloc((size_t)threads, sizeof(*p->threads));
    if (!p->threads)
        goto fail;
    for (; p->n_threads < threads; p->n_threads++)
        if (pthread_create(&p->threads[p->n_threads], NULL, worker, p) != 0)
            goto fail;
    *out = p;
    return KUBE_OK;
fail:
    kube_pool_free(p);
    return KUBE_ENOMEM;
}

int kube_pool_submit(kube_pool *p, kube_job_fn fn, void *arg)
{
    job *j = calloc(1, sizeof(*j));

    if (!j)
        return KUBE_ENOMEM;
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        pthread_mutex_unlock(&p->mu);
        free(j);
        return KUBE_ECANCELED;
    }
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    p->queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return KUBE_OK;
}

void kube_pool_free(kube_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
