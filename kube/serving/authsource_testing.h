/*
 * kube/serving/authsource_testing.h - the test hooks of authsource.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_SERVING_AUTHSOURCE_TESTING_H
#define KUBE_SERVING_AUTHSOURCE_TESTING_H

#include "kube/serving/authsource.h"

/* Number of snapshots built so far (tests wait on it). */
uint64_t kube_authn_source_generation(kube_authn_source *s);

/* For tests: replaces the ConfigMap data (an object of strings, borrowed)
 * as if the watch had delivered it. */
void kube_authn_source_apply_configmap(kube_authn_source *s, const cJSON *data);

#endif
