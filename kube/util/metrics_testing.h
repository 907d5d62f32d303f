/*
 * kube/util/metrics_testing.h - the test hooks of metrics.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_UTIL_METRICS_TESTING_H
#define KUBE_UTIL_METRICS_TESTING_H

#include "kube/util/metrics.h"

/* The value of a child, 0 when it does not exist (for tests). */
double kube_metric_value(kube_metric *m, const char *const *values);

/* Histogram: the sum of observations. */
double kube_metric_child_sum(const kube_metric_child *c);

#endif
