/*
 * scheduler/framework/parallelize.c - a fixed pool of helper threads that
 * work through chunks of pieces together with the calling thread.
 */
#include "framework/parallelize.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kube/util/errors.h"

struct fw_parallelizer {
    int parallelism;
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t call_mu; /* one fw_parallelize() at a time */
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    pthread_cond_t done_cv;
    int slots;   /* helpers still wanted for the current job */
    int running; /* helpers that took a slot and have not finished */
    int shutdown;
    /* the current job */
    void (*fn)(void *ud, size_t i);
    void (*done)(void *ud);
    void *ud;
    size_t n, chunk, n_chunks;
    atomic_size_t next_chunk;
    atomic_int *stop;
};

size_t fw_chunk_size_for(size_t n, int parallelism)
{
    size_t s = (size_t)sqrt((double)n);
    size_t r = n / (size_t)(parallelism > 0 ? parallelism : 1) + 1;
    if (s > r)
        s = r;
    return s < 1 ? 1 : s;
}

static void run_chunks(fw_parallelizer *p)
{
    for (;;) {
        if (p->stop && atomic_load(p->stop))
            break;
        size_t c = atomic_fetch_add(&p->next_chunk, 1);
        if (c >= p->n_chunks)
            break;
        size_t start = c * p->chunk;
        size_t end = start + p->chunk < p->n ? start + p->chunk : p->n;
        for (size_t i = start; i < end; i++)
            p->fn(p->ud, i);
    }
    if (p->done)
        p->done(p->ud);
}

static void *worker(void *arg)
{
    fw_parallelizer *p = arg;

    pthread_setname_np(pthread_self(), "sched-parallel");
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && p->slots == 0)
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->shutdown)
            break;
        p->slots--;
        pthread_mutex_unlock(&p->mu);
        run_chunks(p);
        pthread_mutex_lock(&p->mu);
        if (--p->running == 0)
            pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void stop_threads(fw_parallelizer *p, int started)
{
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < started; i++)
        pthread_join(p->threads[i], NULL);
}

int fw_parallelizer_new(int parallelism, fw_parallelizer **out)
{
    *out = NULL;
    if (parallelism < 1)
        return KUBE_EINVAL;
    fw_parallelizer *p = calloc(1, sizeof(*p));
    if (!p)
        return KUBE_ENOMEM;
    p->parallelism = parallelism;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int runners = cpus > 0 && cpus < parallelism ? (int)cpus : parallelism;
    p->n_threads = runners - 1;
    pthread_mutex_init(&p->call_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (p->n_threads > 0) {
        p->threads = calloc((size_t)p->n_threads, sizeof(pthread_t));
        if (!p->threads) {
            fw_parallelizer_free(p);
            return KUBE_ENOMEM;
        }
    }
    for (int i = 0; i < p->n_threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            stop_threads(p, i);
            p->n_threads = 0;
            fw_parallelizer_free(p);
            return KUBE_ENOMEM;
        }
    }
    *out = p;
    return KUBE_OK;
}

void fw_parallelizer_free(fw_parallelizer *p)
{
    if (!p)
        return;
    stop_threads(p, p->n_threads);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->call_mu);
    free(p->threads);
    free(p);
}

static void run_serial(size_t n, void (*fn)(void *ud, size_t i), void *ud, atomic_int *stop,
                       size_t chunk)
{
    for (size_t start = 0; start < n; start += chunk) {
        if (stop && atomic_load(stop))
            return;
        size_t end = start + chunk < n ? start + chunk : n;
        for (size_t i = start; i < end; i++)
            fn(ud, i);
    }
}

void fw_parallelize(fw_parallelizer *p, size_t n, void (*fn)(void *ud, size_t i), void *ud,
                    atomic_int *stop)
{
    fw_parallelize_done(p, n, fn, ud, stop, NULL);
}

void fw_parallelize_done(fw_parallelizer *p, size_t n, void (*fn)(void *ud, size_t i), void *ud,
                         atomic_int *stop, void (*done)(void *ud))
{
    if (n == 0) {
        if (done)
            done(ud);
        return;
    }
    int par = p ? p->parallelism : 1;
    size_t chunk = fw_chunk_size_for(n, par);
    size_t n_chunks = (n + chunk - 1) / chunk;
    int workers = n_chunks < (size_t)par ? (int)n_chunks : par;
    if (!p || workers <= 1 || p->n_threads == 0 || n < FW_PARALLEL_MIN_PIECES) {
        run_serial(n, fn, ud, stop, chunk);
        if (done)
            done(ud);
        return;
    }
    pthread_mutex_lock(&p->call_mu);
    p->fn = fn;
    p->done = done;
    p->ud = ud;
    p->n = n;
    p->chunk = chunk;
    p->n_chunks = n_chunks;
    p->stop = stop;
    atomic_store(&p->next_chunk, 0);
    int helpers = workers - 1 < p->n_threads ? workers - 1 : p->n_threads;
    pthread_mutex_lock(&p->mu);
    p->slots = helpers;
    p->running = helpers;
    for (int i = 0; i < helpers; i++)
        pthread_cond_signal(&p->work_cv);
    pthread_mutex_unlock(&p->mu);

    run_chunks(p);

    pthread_mutex_lock(&p->mu);
    /* Helpers that have not woken yet are no longer needed. */
    p->running -= p->slots;
    p->slots = 0;
    while (p->running > 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->call_mu);
}
