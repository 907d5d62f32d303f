/*
 * kube/machinery/informer_testing.h - the test hooks of informer.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_MACHINERY_INFORMER_TESTING_H
#define KUBE_MACHINERY_INFORMER_TESTING_H

#include "kube/machinery/informer.h"

/* Number of stored objects. */
size_t kube_informer_count(kube_informer *inf);

void kube_informer_stats_get(kube_informer *inf, kube_informer_stats *out);

#endif
