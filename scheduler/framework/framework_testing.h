/*
 * scheduler/framework/framework_testing.h - the test hooks of framework.h:
 * entry points the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_FRAMEWORK_FRAMEWORK_TESTING_H
#define SCHEDULER_FRAMEWORK_FRAMEWORK_TESTING_H

#include "framework/framework.h"

/* The handle given to plugins (owned by the framework). */
fw_handle *fw_framework_handle(fw_framework *fw);

/* Introspection: the plugin names at a point, in run order (static names).
 * Returns the count; writes up to cap names. */
size_t fw_framework_plugins_at(const fw_framework *fw, fw_point p, const char **names, size_t cap);

/* The weight of a score plugin (0 when not a score plugin). */
int fw_framework_score_weight(const fw_framework *fw, const char *plugin);

/* Filter on one node: plugins in order (skipped ones excluded); the first
 * non-success stops and is returned with its plugin set (a non-
 * unschedulable status becomes FW_ERROR "running %q filter plugin: ...").
 * Thread-safe for concurrent calls on different nodes. */
fw_status *fw_framework_run_filter(fw_framework *fw, const fw_cycle_state *cs,
                                   const fw_pod_info *pod, const fw_node_info *ni);

/* Waiting pods (the handle's GetWaitingPod/Allow/Reject). Return 1 when a
 * waiting pod with that UID existed, 0 otherwise. Thread-safe. */
int fw_framework_allow_waiting_pod(fw_framework *fw, const char *uid, const char *plugin);

#endif
