/*
 * kube/serving/exchange_testing.h - the test hooks of exchange.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_SERVING_EXCHANGE_TESTING_H
#define KUBE_SERVING_EXCHANGE_TESTING_H

#include "kube/serving/exchange.h"

/* The answer body (for tests). */
const char *kube_exchange_body(const kube_exchange *x, size_t *len);

#endif
