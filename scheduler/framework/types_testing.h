/*
 * scheduler/framework/types_testing.h - the test hooks of types.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_FRAMEWORK_TYPES_TESTING_H
#define SCHEDULER_FRAMEWORK_TYPES_TESTING_H

#include "framework/types.h"

/* Builds a snapshot holding clones of nodes, listed in the given order
 * (for tests and for callers that have a plain list). KUBE_OK/KUBE_ENOMEM. */
int fw_snapshot_from_nodes(fw_node_info *const *nodes, size_t n, fw_snapshot **out);

/* The image state for a normalized image name, or NULL. Binary search. */
const fw_image_state *fw_node_info_image(const fw_node_info *ni, const char *image);

#endif
