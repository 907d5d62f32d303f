/*
 * apiserver/options.h - command-line flags of stickyvm-apiserver, named and
 * defaulted as k8s.io/apiserver's SecureServing, DelegatingAuthentication
 * and DelegatingAuthorization options name them:
 *
 *   --secure-port (8443)  --bind-address (0.0.0.0)
 *   --cert-dir (apiserver.local.config/certificates)
 *   --tls-cert-file  --tls-private-key-file
 *   --kubeconfig  --authentication-kubeconfig  --authorization-kubeconfig
 *   --authentication-skip-lookup
 *   --client-ca-file  --requestheader-client-ca-file
 *   --requestheader-allowed-names  --requestheader-username-headers
 *   --requestheader-group-headers  --requestheader-extra-headers-prefix
 *   --authentication-token-webhook-cache-ttl (10s)
 *   --authorization-webhook-cache-authorized-ttl (10s)
 *   --authorization-webhook-cache-unauthorized-ttl (10s)
 *   --authorization-always-allow-paths (/healthz,/readyz,/livez)
 *   --authorization-always-allow-groups (system:masters)
 *   --max-requests-inflight (400)  --request-timeout (60s)
 *   --shutdown-timeout (30s)  --workers (16)  --v / -v (0)
 *   --tls-handshake-timeout (10s)  --read-header-timeout (32s)
 *   --max-connections (1024)
 *   --pin-annotation-key (stickyvm.io/node): the VM annotation /pin and
 *     /unpin write; must be the StickyVM plugin's annotationKey (checked
 *     as an annotation key by kube/types/pin.h)
 *
 * Values follow pflag: "--name=value" or "--name value"; lists are
 * comma-separated; durations use Go syntax ("10s", "1m30s", "500ms").
 *
 * Memory: apis_options_parse() fills a caller-owned apis_options whose
 * strings and lists apis_options_free() releases.
 */
#ifndef APIS_OPTIONS_H
#define APIS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "kube/serving/authn.h"

typedef struct apis_options {
    char *bind_address;
    int secure_port;
    char *cert_dir;
    char *tls_cert_file;
    char *tls_private_key_file;
    char *kubeconfig;
    char *authentication_kubeconfig;
    char *authorization_kubeconfig;
    int authentication_skip_lookup;
    char *client_ca_file;
    char *requestheader_client_ca_file;
    kube_strlist requestheader_allowed_names;
    kube_strlist requestheader_username_headers; /* empty: not set */
    kube_strlist requestheader_group_headers;
    kube_strlist requestheader_extra_headers_prefix;
    int allowed_names_set;
    int64_t token_cache_ttl_ms;
    int64_t authorized_ttl_ms;
    int64_t unauthorized_ttl_ms;
    kube_strlist always_allow_paths;
    kube_strlist always_allow_groups;
    int max_requests_inflight;
    int64_t request_timeout_ms;
    int64_t shutdown_timeout_ms;
    int64_t tls_handshake_timeout_ms;
    int64_t read_header_timeout_ms;
    int max_connections;
    int workers;
    char *pin_annotation_key;
    int verbosity;
    int help;
} apis_options;

/* Fills o with the defaults. Returns KUBE_OK or KUBE_ENOMEM. */
int apis_options_defaults(apis_options *o);
/* Defaults, then argv[1..argc). On a bad flag returns KUBE_ECONFIG with a
 * message naming it in err. "--help" sets o->help. */
int apis_options_parse(int argc, char *const *argv, apis_options *o, char *err, size_t errlen);
void apis_options_free(apis_options *o);
void apis_options_usage(FILE *f);

#endif
