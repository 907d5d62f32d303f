/*
 * kube/serving/authn_testing.h - the test hooks of authn.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_SERVING_AUTHN_TESTING_H
#define KUBE_SERVING_AUTHN_TESTING_H

#include "kube/serving/authn.h"

int kube_authn_config_has_requestheader(const kube_authn_config *cfg);

int kube_authn_config_has_client_ca(const kube_authn_config *cfg);

#endif
