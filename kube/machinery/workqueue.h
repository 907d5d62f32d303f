/*
 * kube/machinery/workqueue.h - a controller's work queue, as client-go's
 * rate-limited workqueue (k8s.io/client-go/util/workqueue): string keys,
 * deduplicated while waiting; a key handed out by kube_workqueue_get() is
 * processing until kube_workqueue_done(), and a key added meanwhile waits
 * for that (so no key is ever processed by two workers at once) and is
 * queued again at done; kube_workqueue_add_after() holds a key back for a
 * delay (the earlier of two delays wins); kube_workqueue_add_rate_limited()
 * delays it by the key's failures, as ItemExponentialFailureRateLimiter:
 * base * 2^(failures), capped at max, plus up to 10% jitter, until
 * kube_workqueue_forget().
 *
 * Memory: kube_workqueue_new() allocates the queue, freed by
 * kube_workqueue_free() (no worker may be in kube_workqueue_get() then).
 * Keys passed in are copied; the key kube_workqueue_get() returns is the
 * caller's to free() after kube_workqueue_done().
 * Threads: every function is thread-safe (one mutex).
 */
#ifndef KUBE_WORKQUEUE_H
#define KUBE_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

/* client-go's DefaultItemBasedRateLimiter: 5 ms doubling to 1000 s. */
#define KUBE_WORKQUEUE_BASE_DELAY_MS 5
#define KUBE_WORKQUEUE_MAX_DELAY_MS (1000LL * 1000)

typedef struct kube_workqueue kube_workqueue;

/* A queue whose rate-limited adds wait base_ms * 2^failures, at most
 * max_ms (plus jitter). KUBE_OK, KUBE_EINVAL (base_ms < 1 or max_ms <
 * base_ms) or KUBE_ENOMEM. */
int kube_workqueue_new(int64_t base_ms, int64_t max_ms, kube_workqueue **out);
/* Frees the queue and every key it holds. NULL-safe. */
void kube_workqueue_free(kube_workqueue *q);

/* Queues key now unless it is queued already (a key processing is queued
 * again at its done). KUBE_OK, KUBE_ENOMEM, KUBE_ECANCELED after
 * shutdown. */
int kube_workqueue_add(kube_workqueue *q, const char *key);
/* Queues key once ms have passed (ms <= 0: now); a key already waiting
 * keeps the earlier time. Returns as kube_workqueue_add(). */
int kube_workqueue_add_after(kube_workqueue *q, const char *key, int64_t ms);
/* Counts a failure of key and queues it after its backoff (in *delay_ms
 * when non-NULL). Returns as kube_workqueue_add(). */
int kube_workqueue_add_rate_limited(kube_workqueue *q, const char *key, int64_t *delay_ms);
/* Forgets key's failures (its next backoff starts at base again). */
void kube_workqueue_forget(kube_workqueue *q, const char *key);
/* key's failures since its last forget. */
unsigned kube_workqueue_num_requeues(kube_workqueue *q, const char *key);

/* The next queued key (*key allocated, the caller frees it after
 * kube_workqueue_done()), waiting up to timeout_ms. KUBE_OK,
 * KUBE_ETIMEDOUT, KUBE_ECANCELED after shutdown, KUBE_ENOMEM. */
int kube_workqueue_get(kube_workqueue *q, int64_t timeout_ms, char **key);
/* Ends the processing of key (from kube_workqueue_get()). */
void kube_workqueue_done(kube_workqueue *q, const char *key);

/* Drops every waiting key and every failure count (a key processing stays
 * processing, and is not queued again at its done). */
void kube_workqueue_clear(kube_workqueue *q);
/* Wakes every kube_workqueue_get() with KUBE_ECANCELED, now and after. */
void kube_workqueue_shutdown(kube_workqueue *q);

#endif
