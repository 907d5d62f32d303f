/*
 * kube/serving/cache.c - a small thread-safe string cache whose entries expire,
 * for delegated authentication and authorization answers (k8s.io/apiserver
 * caches TokenReview results and SubjectAccessReview decisions for 10 s). The
 * contract is in cache.h.
 */
#include "kube/serving/cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/hash.h"

#define BUCKETS 1024

typedef struct entry {
    struct entry *next;
    char *key;
    char *value;
    int64_t expires_ms;
} entry;

struct kube_ttl_cache {
    pthread_mutex_t mu;
    entry *buckets[BUCKETS];
    size_t size, max;
    int64_t (*now)(void);
};

static uint32_t hash(const char *s)
{
    return (uint32_t)(kube_fnv1a_str(KUBE_FNV1A_INIT, s) % BUCKETS);
}

int kube_ttl_cache_new(size_t max_entries, kube_ttl_cache **out)
{
    kube_ttl_cache *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c)
        return KUBE_ENOMEM;
    pthread_mutex_init(&c->mu, NULL);
    c->max = max_entries ? max_entries : 1;
    c->now = kube_now_ms;
    *out = c;
    return KUBE_OK;
}

static void entry_free(entry *e)
{
    free(e->key);
    free(e->value);
    free(e);
}

void kube_ttl_cache_free(kube_ttl_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < BUCKETS; i++) {
        entry *e = c->buckets[i];
        while (e) {
            entry *next = e->next;
            entry_free(e);
            e = next;
        }
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void kube_ttl_cache_set_clock(kube_ttl_cache *c, int64_t (*now_ms)(void))
{
    c->now = now_ms;
}

/* Unlinks and frees every expired entry and victim (may be NULL); returns
 * how many. */
static size_t sweep(kube_ttl_cache *c, int64_t now, const entry *victim)
{
    size_t removed = 0;

    for (size_t i = 0; i < BUCKETS; i++) {
        entry **pp = &c->buckets[i];
        while (*pp) {
            entry *e = *pp;
            if (e->expires_ms <= now || e == victim) {
                *pp = e->next;
                entry_free(e);
                removed++;
            } else {
                pp = &e->next;
            }
        }
    }
    c->size -= removed;
    return removed;
}

static const entry *soonest(kube_ttl_cache *c)
{
    const entry *best = NULL;

    for (size_t i = 0; i < BUCKETS; i++)
        for (const entry *e = c->buckets[i]; e; e = e->next)
            if (!best || e->expires_ms < best->expires_ms)
                best = e;
    return best;
}

static entry **find(kube_ttl_cache *c, const char *key)
{
    entry **pp = &c->buckets[hash(key)];

    while (*pp && strcmp((*pp)->key, key) != 0)
        pp = &(*pp)->next;
    return pp;
}

int kube_ttl_cache_get(kube_ttl_cache *c, const char *key, char **value)
{
    int rc = KUBE_ENOTFOUND;
    entry **pp;

    *value = NULL;
    pthread_mutex_lock(&c->mu);
    pp = find(c, key);
    if (*pp && (*pp)->expires_ms > c->now()) {
        *value = kube_strdup((*pp)->value);
        rc = *value ? KUBE_OK : KUBE_ENOMEM;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static int replace_value(entry *e, const char *value, int64_t expires)
{
    char *v = kube_strdup(value);

    if (!v)
        return KUBE_ENOMEM;
    free(e->value);
    e->value = v;
    e->expires_ms = expires;
    return KUBE_OK;
}

static int insert(kube_ttl_cache *c, const char *key, const char *value, int64_t now,
                  int64_t expires)
{
    entry *e = calloc(1, sizeof(*e));
    uint32_t b = hash(key);

    if (!e)
        return KUBE_ENOMEM;
    e->key = kube_strdup(key);
    e->value = kube_strdup(value);
    if (!e->key || !e->value) {
        entry_free(e);
        return KUBE_ENOMEM;
    }
    if (c->size >= c->max && sweep(c, now, NULL) == 0)
        sweep(c, now, soonest(c));
    e->expires_ms = expires;
    e->next = c->buckets[b];
    c->buckets[b] = e;
    c->size++;
    return KUBE_OK;
}

int kube_ttl_cache_put(kube_ttl_cache *c, const char *key, const char *value, int64_t ttl_ms)
{
    int64_t now;
    entry **pp;
    int rc;

    if (ttl_ms <= 0)
        return KUBE_OK;
    pthread_mutex_lock(&c->mu);
    now = c->now();
    pp = find(c, key);
    rc = *pp ? replace_value(*pp, value, now + ttl_ms) : insert(c, key, value, now, now + ttl_ms);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

size_t kube_ttl_cache_size(kube_ttl_cache *c)
{
    size_t n;

    pthread_mutex_lock(&c->mu);
    n = c->size;
    pthread_mutex_unlock(&c->mu);
    return n;
}
