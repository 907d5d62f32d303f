/*
 * scheduler/feature_gates_testing.h - the test hooks of feature_gates.h:
 * entry points the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_FEATURE_GATES_TESTING_H
#define SCHEDULER_FEATURE_GATES_TESTING_H

#include "feature_gates.h"

/* Every gate to its default. */
void sched_features_reset(void);

#endif
