/*
 * kube/codec/intern.h - the process-wide pool of the strings and small immutable
 * arrays that many decoded objects repeat.
 *
 * Decoders keep each object in one block (kube/codec/object.h), but most of what
 * a pod or node holds is the same across thousands of objects: label keys
 * and values, images, toleration and taint lists, node names, resource
 * names. The pool keeps one canonical copy of such byte strings, so objects
 * point at it instead of copying it. kube_intern_static() covers the
 * well-known strings at no cost; the pool covers the rest.
 *
 * Entries are permanent: the pool never frees or moves one, so a pointer
 * it returns is valid until the process exits and may be stored in any
 * object. To stay bounded, the pool refuses (returns NULL) an entry longer
 * than KUBE_INTERN_MAX_ENTRY bytes and any new entry once it holds
 * KUBE_INTERN_MAX_ENTRIES entries or KUBE_INTERN_MAX_BYTES bytes; callers
 * then keep their own copy, so a full pool costs sharing, never
 * correctness. Decoders therefore only intern what repeats across objects
 * (never names, uids or resourceVersions).
 *
 * Thread-safe: any thread may intern and read at any time. Lookups of
 * existing entries share a read lock.
 *
 * Memory: the pool owns every entry (reachable until exit, never freed,
 * so valgrind lists its few chunks as "still reachable", never as lost);
 * callers never free what it returns.
 */
#ifndef KUBE_INTERN_H
#define KUBE_INTERN_H

#include <stddef.h>

/* The static copy of s when s is one of the strings most objects repeat
 * ("", "default", "cpu", "Exists", "kubevirt.io/v1", well-known label and
 * taint keys, phases, ...), else NULL. Thread-safe; allocates nothing. */
const char *kube_intern_static(const char *s);

#define KUBE_INTERN_MAX_ENTRY 1024u
#define KUBE_INTERN_MAX_ENTRIES 65536u
#define KUBE_INTERN_MAX_BYTES (4u * 1024u * 1024u)

/* The canonical copy of the n bytes at p (8-byte aligned, equal bytes give
 * the same pointer), or NULL when n is 0 or above KUBE_INTERN_MAX_ENTRY,
 * the pool is full, or memory runs out. Borrowed from the pool. */
const void *kube_intern_bytes(const void *p, size_t n);

/* kube_intern_static(s) when s is a well-known string, else the pooled
 * copy of s (NUL included), or NULL as kube_intern_bytes(). s NULL gives
 * NULL. Borrowed. */
const char *kube_intern_str(const char *s);

/* kube_intern_str for a name callers compare by pointer (resource
 * names): the count and byte limits never refuse it, so one name always
 * gives one pointer. NULL only when s is NULL or KUBE_INTERN_MAX_ENTRY
 * bytes or longer, or memory runs out. Borrowed. Callers keep the set of
 * such names small and closed. */
const char *kube_intern_name(const char *s);

typedef struct kube_intern_stats {
    size_t entries;        /* distinct entries held */
    size_t bytes;          /* bytes of entry data held (aligned sizes) */
    unsigned long hits;    /* lookups answered by an existing entry */
    unsigned long refused; /* new entries refused by the limits */
} kube_intern_stats;

#endif
