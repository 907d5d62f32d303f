/*
 * kube/transport/client_testing.h - the test hooks of client.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TRANSPORT_CLIENT_TESTING_H
#define KUBE_TRANSPORT_CLIENT_TESTING_H

#include "kube/transport/client.h"

/* Overrides the backoff (default 100 ms doubling up to 5 s); for tests. */
void kube_client_set_backoff(kube_client *c, long base_ms, long cap_ms);

/* Counters, for benchmarks: requests sent (each retry counts), by method. */
typedef struct kube_client_stats {
    unsigned long get, post, put, patch, del, retries;
} kube_client_stats;
/* Copies the counters into out (caller's struct). Thread-safe. */
void kube_client_stats_get(kube_client *c, kube_client_stats *out);

#endif
