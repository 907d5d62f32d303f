/*
 * apiserver/pool.h - a fixed pool of worker threads running queued jobs
 * (the blocking calls to kube-apiserver, so the libwebsockets service thread
 * never waits on the network).
 *
 * Threads: apis_pool_submit() is thread-safe. Jobs run concurrently on the
 * workers, each job once.
 * Memory: apis_pool_new() allocates; apis_pool_free() runs every job still
 * queued, joins the workers and frees the pool. The job's arg belongs to
 * the job function.
 */
#ifndef APIS_POOL_H
#define APIS_POOL_H

#include <stddef.h>

typedef struct apis_pool apis_pool;
typedef void (*apis_job_fn)(void *arg);

int apis_pool_new(int threads, apis_pool **out);
/* Queues fn(arg). Returns KUBE_OK, KUBE_ENOMEM or KUBE_ECANCELED once the
 * pool is being freed. */
int apis_pool_submit(apis_pool *p, apis_job_fn fn, void *arg);
void apis_pool_free(apis_pool *p);

#endif
