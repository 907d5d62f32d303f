/*
 * scheduler/plugins/stickyvm/stickyvm_testing.h - the test hooks of stickyvm.h: entry points only
 * the tests and benchmarks call, never the daemons.
 */
#ifndef SCHEDULER_PLUGINS_STICKYVM_STICKYVM_TESTING_H
#define SCHEDULER_PLUGINS_STICKYVM_STICKYVM_TESTING_H

#include "scheduler/plugins/stickyvm/stickyvm.h"

/* Copies the counters of a plugin instance (the self create() returned). */
void stickyvm_stats_get(const void *self, stickyvm_stats *out);

#endif
