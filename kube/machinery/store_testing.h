/*
 * kube/machinery/store_testing.h - what only tests use of the store
 * (kube/machinery/store.h): the size of an index.
 */
#ifndef KUBE_STORE_TESTING_H
#define KUBE_STORE_TESTING_H

#include <stddef.h>

#include "kube/machinery/store.h"

/* The number of keys the index name holds (0 when there is no such index).
 * A key is dropped with its last object, so this returns to 0 when every
 * indexed object left. Thread-safe. */
size_t kube_store_index_len(kube_store *s, const char *name);

#endif
