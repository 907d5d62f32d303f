/*
 * scheduler/config/config_testing.h - the test hooks of config.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_CONFIG_CONFIG_TESTING_H
#define SCHEDULER_CONFIG_CONFIG_TESTING_H

#include "config/config.h"

/* The profile with this schedulerName, or NULL. */
const sched_profile *sched_config_profile(const sched_config *cfg, const char *scheduler_name);

#endif
