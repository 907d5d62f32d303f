/*
 * scheduler/framework/status_testing.h - the test hooks of status.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_FRAMEWORK_STATUS_TESTING_H
#define SCHEDULER_FRAMEWORK_STATUS_TESTING_H

#include "framework/status.h"

/* PluginToStatus.Merge(): one status holding every reason of sts[0..n)
 * (NULLs are successes), with the code of highest precedence (Error >
 * UnschedulableAndUnresolvable > Unschedulable > others) and that status's
 * plugin; an Error's err is kept. NULL when n == 0. Caller owns the result;
 * sts are not consumed. */
fw_status *fw_status_merge(fw_status *const *sts, size_t n);

#endif
