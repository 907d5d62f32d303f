/*
 * apiserver/cache_testing.h - the test hooks of cache.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef APISERVER_CACHE_TESTING_H
#define APISERVER_CACHE_TESTING_H

#include "cache.h"

/* Replaces the monotonic millisecond clock (default kube_now_ms); tests. */
void apis_ttl_cache_set_clock(apis_ttl_cache *c, int64_t (*now_ms)(void));

size_t apis_ttl_cache_size(apis_ttl_cache *c);

#endif
