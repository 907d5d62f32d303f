/*
 * kube/types/storage_testing.h - the test hooks of storage.h: entry points
 * the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TYPES_STORAGE_TESTING_H
#define KUBE_TYPES_STORAGE_TESTING_H

#include "kube/types/storage.h"

/* The CSINode driver entry named name, or NULL. Borrowed. */
const kube_csi_driver_info *kube_csi_node_driver(const kube_csi_node *cn, const char *name);

#endif
