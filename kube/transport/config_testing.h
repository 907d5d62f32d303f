/*
 * kube/transport/config_testing.h - the test hooks of config.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TRANSPORT_CONFIG_TESTING_H
#define KUBE_TRANSPORT_CONFIG_TESTING_H

#include "kube/transport/config.h"

/* Overrides the token re-read period; for tests. */
void kube_config_set_token_refresh_ms(kube_config *cfg, long ms);

#endif
