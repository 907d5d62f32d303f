/*
 * kube/util/array.h - the one growable array: capacity for a caller's typed
 * array, doubled as it grows (as curl's dynbuf is for bytes). The caller
 * keeps its own `T *items; size_t n, cap;` and reserves before appending:
 *
 *     if (KUBE_ARRAY_RESERVE(l->items, l->cap, l->n + 1) != KUBE_OK)
 *         return KUBE_ENOMEM;
 *     l->items[l->n++] = x;
 *
 * A list of owned strings on it is kube/util/strlist.h. A copy that must
 * be exactly the source's size (a snapshot's NodeInfo) reallocs to that
 * size itself, and says so.
 *
 * Memory: the array is the caller's, allocated with malloc/realloc and
 * freed with free(). Threads: none; callers lock.
 */
#ifndef KUBE_ARRAY_H
#define KUBE_ARRAY_H

#include <stddef.h>

/* Makes room for at least need elements of size bytes in the array whose
 * address is items (a `T **`), of capacity *cap: the capacity doubles from
 * 4 until it fits. KUBE_OK (also when it already fits), or KUBE_ENOMEM
 * (out of memory or overflow) leaving the array and *cap unchanged. */
int kube_array_reserve(void *items, size_t *cap, size_t need, size_t size);

/* kube_array_reserve for an array variable arr (any `T *`) and its size_t
 * capacity cap. */
#define KUBE_ARRAY_RESERVE(arr, cap, need) \
    kube_array_reserve(&(arr), &(cap), (need), sizeof(*(arr)))

/* Appends the string s (borrowed: the array keeps the pointer) to the
 * string array *items (*n used, *cap capacity) unless an equal string is
 * already there. KUBE_OK or KUBE_ENOMEM. */
int kube_array_add_distinct(const char ***items, size_t *n, size_t *cap, const char *s);

#endif
