/*
 * scheduler/cache/cache_testing.h - the test hooks of cache.h: entry points
 * the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_CACHE_CACHE_TESTING_H
#define SCHEDULER_CACHE_CACHE_TESTING_H

#include "cache/cache.h"

/* The node the UID is placed on, copied into out: 1 when the pod is in
 * the cache, 0 otherwise. */
int sched_cache_pod_node(sched_cache *c, const char *uid, char *out, size_t n);

/* The node names in nodeTree order (for tests): *out is a new array of new
 * strings; the caller frees each and the array. KUBE_OK or KUBE_ENOMEM. */
int sched_cache_node_order(sched_cache *c, char ***out, size_t *n);

#endif
