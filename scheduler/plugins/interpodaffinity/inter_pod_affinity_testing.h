/*
 * scheduler/plugins/interpodaffinity/inter_pod_affinity_testing.h - the test
 * hooks of inter_pod_affinity.h: entry points the tests and benchmarks use
 * and the daemons never call.
 */
#ifndef SCHEDULER_PLUGINS_INTERPODAFFINITY_INTER_POD_AFFINITY_TESTING_H
#define SCHEDULER_PLUGINS_INTERPODAFFINITY_INTER_POD_AFFINITY_TESTING_H

#include "plugins/interpodaffinity/inter_pod_affinity.h"

/* A lister over a store the caller fills with plugin_namespace_codec
 * objects (borrowed, must outlive the lister). KUBE_OK or KUBE_ENOMEM. */
int plugin_ns_lister_from_store(struct kube_store *store, plugin_ns_lister **out);

#endif
