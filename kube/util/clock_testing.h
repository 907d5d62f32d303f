/*
 * kube/util/clock_testing.h - the test hooks of clock.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_UTIL_CLOCK_TESTING_H
#define KUBE_UTIL_CLOCK_TESTING_H

#include "kube/util/clock.h"

/* The wall clock plus seconds, formatted as kube_time_rfc3339() (a
 * deletionTimestamp: now plus the grace period). */
void kube_time_rfc3339_after(char *out, size_t n, int64_t seconds);

#endif
