/*
 * kube/transport/config_testing.h - the test hooks of config.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TRANSPORT_CONFIG_TESTING_H
#define KUBE_TRANSPORT_CONFIG_TESTING_H

#include "kube/transport/config.h"

/* Overrides the token re-read period; for tests. */
void kube_config_set_token_refresh_ms(kube_config *cfg, long ms);

/* Loads one kubeconfig file (its current-context), not split on ':'. An
 * empty file is an error here. Same error contract. */
int kube_config_from_file(const char *path, kube_config **out, char *err, size_t errlen);

/* The kubeconfig's PEM texts (len set; owned by the config): the CA (NULL:
 * the system CAs), the client certificate and key (NULL when absent). */
const char *kube_config_ca_pem(const kube_config *cfg, size_t *len);
const char *kube_config_cert_pem(const kube_config *cfg, size_t *len);
const char *kube_config_key_pem(const kube_config *cfg, size_t *len);

#endif
