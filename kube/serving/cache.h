/*
 * kube/serving/cache.h - a small thread-safe string cache whose entries expire,
 * for delegated authentication and authorization answers (k8s.io/apiserver
 * caches TokenReview results and SubjectAccessReview decisions for 10 s).
 *
 * Bounded: when max_entries is reached, expired entries are swept and, if
 * that frees nothing, the entry closest to expiry is evicted.
 *
 * Memory: kube_ttl_cache_new() allocates the cache, kube_ttl_cache_free()
 * frees it and every entry. Keys and values are copied in;
 * kube_ttl_cache_get() hands out a copy the caller frees with free().
 */
#ifndef KUBE_SERVING_CACHE_H
#define KUBE_SERVING_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct kube_ttl_cache kube_ttl_cache;

int kube_ttl_cache_new(size_t max_entries, kube_ttl_cache **out);
void kube_ttl_cache_free(kube_ttl_cache *c);

/* Returns KUBE_OK with *value (caller frees), KUBE_ENOTFOUND when absent or
 * expired, KUBE_ENOMEM. */
int kube_ttl_cache_get(kube_ttl_cache *c, const char *key, char **value);
/* Inserts or replaces. ttl_ms <= 0 stores nothing. */
int kube_ttl_cache_put(kube_ttl_cache *c, const char *key, const char *value, int64_t ttl_ms);

#endif
