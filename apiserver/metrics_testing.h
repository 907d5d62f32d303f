/*
 * apiserver/metrics_testing.h - the test hooks of metrics.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef APISERVER_METRICS_TESTING_H
#define APISERVER_METRICS_TESTING_H

#include "metrics.h"

/* Total requests observed with this code (any verb/subresource); tests. */
unsigned long apis_metrics_requests_with_code(apis_metrics *m, int code);

unsigned long apis_metrics_authz_count(apis_metrics *m, kube_authz_result r);

#endif
