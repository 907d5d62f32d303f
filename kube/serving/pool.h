/*
 * kube/serving/pool.h - a fixed pool of worker threads running queued jobs
 * (the blocking calls to kube-apiserver, so the libwebsockets service thread
 * never waits on the network).
 *
 * Threads: kube_pool_submit() is thread-safe. Jobs run concurrently on the
 * workers, each job once.
 * Memory: kube_pool_new() allocates; kube_pool_free() runs every job still
 * queued, joins the workers and frees the pool. The job's arg belongs to
 * the job function.
 */
#ifndef KUBE_SERVING_POOL_H
#define KUBE_SERVING_POOL_H

#include <stddef.h>

typedef struct kube_pool kube_pool;
typedef void (*kube_job_fn)(void *arg);

int kube_pool_new(int threads, kube_pool **out);
/* Queues fn(arg). Returns KUBE_OK, KUBE_ENOMEM or KUBE_ECANCELED once the
 * pool is being freed. */
int kube_pool_submit(kube_pool *p, kube_job_fn fn, void *arg);
void kube_pool_free(kube_pool *p);

#endif
