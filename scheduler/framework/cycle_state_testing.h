/*
 * scheduler/framework/cycle_state_testing.h - the test hooks of
 * cycle_state.h: entry points the tests and benchmarks use and the daemons
 * never call.
 */
#ifndef SCHEDULER_FRAMEWORK_CYCLE_STATE_TESTING_H
#define SCHEDULER_FRAMEWORK_CYCLE_STATE_TESTING_H

#include "framework/cycle_state.h"

/* Removes (and frees) the value under key; no-op when absent. */
void fw_cycle_state_delete(fw_cycle_state *cs, const char *key);

void fw_cycle_state_skip_clear(fw_cycle_state *cs);

#endif
