/*
 * kube/util/strlist.h - a list of owned strings on the one growable array
 * (kube/util/array.h): flag values such as --requestheader-group-headers,
 * a user's groups and extra values.
 *
 * Memory: the list owns copies of what is added; kube_strlist_free()
 * frees them and the array. A zeroed kube_strlist is an empty list.
 * Threads: none; callers lock.
 */
#ifndef KUBE_STRLIST_H
#define KUBE_STRLIST_H

#include <stddef.h>

typedef struct kube_strlist {
    char **v;
    size_t n, cap;
} kube_strlist;

/* Appends a copy of s. Returns KUBE_OK or KUBE_ENOMEM (list unchanged). */
int kube_strlist_add(kube_strlist *l, const char *s);
/* 1 when an item equals s, else 0. */
int kube_strlist_contains(const kube_strlist *l, const char *s);
/* Appends the items of a comma-separated flag value (items trimmed, empty
 * items skipped). KUBE_OK or KUBE_ENOMEM (the items before it kept). */
int kube_strlist_split(kube_strlist *l, const char *csv);
/* Frees the items and the array, and empties l. */
void kube_strlist_free(kube_strlist *l);

#endif
