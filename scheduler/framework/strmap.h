/*
 * scheduler/framework/strmap.h - a string-keyed hash map (open addressing,
 * linear probing), used for node-name lookups in the snapshot and
 * available to the cache and queue.
 *
 * Memory: keys are copied into the map (freed with it); values are opaque
 * pointers the map does not own. fw_strmap_free() frees the table and the
 * keys only. A zeroed fw_strmap (FW_STRMAP_INIT) is a valid empty map.
 *
 * Threads: none; callers lock. Concurrent fw_strmap_get() calls are safe
 * while nobody mutates the map.
 */
#ifndef FW_STRMAP_H
#define FW_STRMAP_H

#include <stddef.h>

typedef struct fw_strmap_slot {
    char *key;    /* NULL: empty; FW_STRMAP_TOMB marks a deleted slot */
    void *value;
    size_t hash;
} fw_strmap_slot;

typedef struct fw_strmap {
    fw_strmap_slot *slots;
    size_t cap;   /* power of two or 0 */
    size_t len;   /* live keys */
    size_t used;  /* live + tombstones */
} fw_strmap;

#define FW_STRMAP_INIT {NULL, 0, 0, 0}

/* Sets key -> value, replacing any value (the old value is returned in
 * *old when old is non-NULL, NULL if the key was new). Returns KUBE_OK or
 * KUBE_ENOMEM (map unchanged). */
int fw_strmap_put(fw_strmap *m, const char *key, void *value, void **old);
/* The value for key, or NULL. */
void *fw_strmap_get(const fw_strmap *m, const char *key);
/* Removes key; returns its value, or NULL when absent. */
void *fw_strmap_del(fw_strmap *m, const char *key);
/* Number of keys. */
static inline size_t fw_strmap_len(const fw_strmap *m) { return m->len; }
/* Calls fn for each entry (unspecified order). fn must not mutate m. */
void fw_strmap_foreach(const fw_strmap *m, void (*fn)(void *ud, const char *key, void *value),
                       void *ud);
/* Frees the table and keys (not the values) and zeroes m. */
void fw_strmap_free(fw_strmap *m);

#endif
