/*
 * kube/codec/intern_testing.h - the test hooks of intern.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_CODEC_INTERN_TESTING_H
#define KUBE_CODEC_INTERN_TESTING_H

#include "kube/codec/intern.h"

/* A snapshot of the pool's counters. Allocates nothing. */
void kube_intern_stats_get(kube_intern_stats *out);

#endif
