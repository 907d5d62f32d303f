/*
 * kube/config.h - where the cluster is and who we are: kubeconfig files and
 * in-cluster service-account configuration.
 *
 * Precedence (as client-go's clientcmd): the --kubeconfig flag, then the
 * KUBECONFIG environment variable (first file of a ':'-separated list that
 * exists), then in-cluster (KUBERNETES_SERVICE_HOST/_PORT with the service
 * account CA and token under /var/run/secrets/kubernetes.io/serviceaccount,
 * overridable with KUBE_SA_DIR for tests).
 *
 * Memory: kube_config_load() allocates a kube_config that the caller frees
 * with kube_config_free(). All strings inside are owned by the config. PEM
 * material is held in memory (files are read at load time); a token file is
 * re-read by kube_config_token() about once a minute because bound
 * service-account tokens expire. The config is safe to share between threads.
 */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stddef.h>

typedef struct kube_config kube_config;

/* Loads configuration with the precedence above. kubeconfig_flag may be
 * NULL or "". On error returns KUBE_ECONFIG/KUBE_EIO/KUBE_EPARSE and writes a
 * message naming the file and field into err (may be NULL). */
int kube_config_load(const char *kubeconfig_flag, kube_config **out, char *err, size_t errlen);

/* Loads one kubeconfig file (its current-context). Same error contract. */
int kube_config_from_file(const char *path, kube_config **out, char *err, size_t errlen);

/* Builds the in-cluster configuration. Same error contract. */
int kube_config_in_cluster(kube_config **out, char *err, size_t errlen);

void kube_config_free(kube_config *cfg);

/* Accessors. Returned pointers live as long as the config. */
const char *kube_config_server(const kube_config *cfg);          /* "https://h:p" */
const char *kube_config_ca_pem(const kube_config *cfg, size_t *len); /* NULL: system CAs */
const char *kube_config_cert_pem(const kube_config *cfg, size_t *len);
const char *kube_config_key_pem(const kube_config *cfg, size_t *len);
int kube_config_insecure(const kube_config *cfg);
/* TLS server name override (kubeconfig cluster.tls-server-name), or NULL. */
const char *kube_config_tls_server_name(const kube_config *cfg);

/* Copies the current bearer token into out (size n) and returns KUBE_OK, or
 * KUBE_ENOTFOUND when the config has no token. A tokenFile is re-read when
 * the cached copy is older than 60 s (or whenever force is non-zero, which a
 * client does after a 401). Thread-safe. The token must never be logged. */
int kube_config_token(kube_config *cfg, char *out, size_t n, int force);

/* Overrides the token re-read period; for tests. */
void kube_config_set_token_refresh_ms(kube_config *cfg, long ms);

#endif
