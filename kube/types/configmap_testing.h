/*
 * kube/types/configmap_testing.h - the test hooks of configmap.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TYPES_CONFIGMAP_TESTING_H
#define KUBE_TYPES_CONFIGMAP_TESTING_H

#include "kube/types/configmap.h"

/* data[key], or NULL when absent. The string belongs to cm. */
const char *kube_configmap_get(const kube_configmap *cm, const char *key);

#endif
