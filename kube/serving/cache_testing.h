/*
 * kube/serving/cache_testing.h - the test hooks of cache.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_SERVING_CACHE_TESTING_H
#define KUBE_SERVING_CACHE_TESTING_H

#include "kube/serving/cache.h"

/* Replaces the monotonic millisecond clock (default kube_now_ms); tests. */
void kube_ttl_cache_set_clock(kube_ttl_cache *c, int64_t (*now_ms)(void));

size_t kube_ttl_cache_size(kube_ttl_cache *c);

#endif
