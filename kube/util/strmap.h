/*
 * kube/util/strmap.h - the string-keyed hash map (open addressing, linear
 * probing) the project uses for string keys: a map from a copied string to
 * a pointer. Use it unless one of these needs holds, where a table of its
 * own is kept, each for its reason:
 *   - kube/machinery/store.c: the informers' objects by namespace/name,
 *     the key read from the object itself, one word a slot (no key copy,
 *     no stored hash: 8 bytes an object at 150,000 pods), deletion by
 *     shifting back so no tombstones pile up, plus index buckets;
 *   - scheduler/cache/cache.c: pods by UID, the key inside the pod's state
 *     (no copy), one word a slot, on the scheduling path;
 *   - kube/codec/intern.c: the process-wide pool, read under a read lock
 *     by every thread, entries bump-allocated with stable addresses and
 *     never deleted, keys of arbitrary bytes (arrays too);
 *   - kube/serving/cache.c: thread-safe, with expiry and a size bound, for
 *     delegated authentication and authorization answers;
 *   - kube/machinery/recorder_cache.c: the event correlator, a table with
 *     LRU eviction and a list of entries with unsent counts;
 *   - scheduler/plugins/podtopologyspread/pairs.c: (key, value) pairs of
 *     interned strings, compared by address first, rebuilt per cycle.
 *
 * Memory: keys are copied into the map (freed with it); values are opaque
 * pointers the map does not own. kube_strmap_free() frees the table and the
 * keys only. A zeroed kube_strmap (KUBE_STRMAP_INIT) is a valid empty map.
 *
 * Threads: none; callers lock. Concurrent kube_strmap_get() calls are safe
 * while nobody mutates the map.
 */
#ifndef KUBE_STRMAP_H
#define KUBE_STRMAP_H

#include <stddef.h>

typedef struct kube_strmap_slot {
    char *key; /* NULL: empty; KUBE_STRMAP_TOMB marks a deleted slot */
    void *value;
    size_t hash;
} kube_strmap_slot;

typedef struct kube_strmap {
    kube_strmap_slot *slots;
    size_t cap;  /* power of two or 0 */
    size_t len;  /* live keys */
    size_t used; /* live + tombstones */
} kube_strmap;

#define KUBE_STRMAP_INIT \
    {                    \
        NULL, 0, 0, 0    \
    }

/* Sets key -> value, replacing any value (the old value is returned in
 * *old when old is non-NULL, NULL if the key was new). Returns KUBE_OK or
 * KUBE_ENOMEM (map unchanged). */
int kube_strmap_put(kube_strmap *m, const char *key, void *value, void **old);
/* The value for key, or NULL. */
void *kube_strmap_get(const kube_strmap *m, const char *key);
/* Removes key; returns its value, or NULL when absent. */
void *kube_strmap_del(kube_strmap *m, const char *key);
/* Number of keys. */
static inline size_t kube_strmap_len(const kube_strmap *m)
{
    return m->len;
}
/* Calls fn for each entry (unspecified order). fn must not mutate m. */
void kube_strmap_foreach(const kube_strmap *m, void (*fn)(void *ud, const char *key, void *value),
                         void *ud);
/* Frees the table and keys (not the values) and zeroes m. */
void kube_strmap_free(kube_strmap *m);

#endif
