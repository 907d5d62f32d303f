/*
 * kube/serving/options.h - the options of a secure port, as
 * k8s.io/apiserver's SecureServingOptions, DelegatingAuthenticationOptions
 * and DelegatingAuthorizationOptions name, default and check them, in three
 * named flag sets (kube/util/flags.h) both daemons put on their command
 * line:
 *
 *   "Secure serving": --bind-address (0.0.0.0), --secure-port (per daemon),
 *     --cert-dir (per daemon), --tls-cert-file, --tls-private-key-file,
 *     --tls-min-version (VersionTLS10..13), --tls-cipher-suites (Go's
 *     names, mapped to OpenSSL's; an unknown name is an error),
 *     --permit-port-sharing (SO_REUSEPORT), --permit-address-sharing;
 *   "Authentication": --authentication-kubeconfig,
 *     --authentication-skip-lookup, --authentication-tolerate-lookup-failure
 *     (per daemon), --authentication-token-webhook-cache-ttl (10s),
 *     --client-ca-file, --requestheader-client-ca-file,
 *     --requestheader-allowed-names, --requestheader-username-headers,
 *     --requestheader-group-headers, --requestheader-extra-headers-prefix;
 *   "Authorization": --authorization-kubeconfig,
 *     --authorization-always-allow-paths (/healthz,/readyz,/livez),
 *     --authorization-webhook-cache-authorized-ttl (10s),
 *     --authorization-webhook-cache-unauthorized-ttl (10s).
 *
 * Memory: kube_serving_options_defaults() fills a caller-owned struct whose
 * strings and lists kube_serving_options_free() releases. The flag sets
 * point into the struct (its help texts included): they live as long as it.
 */
#ifndef KUBE_SERVING_OPTIONS_H
#define KUBE_SERVING_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "kube/serving/authn.h"
#include "kube/util/buf.h"
#include "kube/util/flags.h"

#define KUBE_SERVING_FLAG_SETS 3
#define KUBE_SERVING_SERVING_FLAGS 9
#define KUBE_SERVING_AUTHN_FLAGS 10

/* What differs between the daemons. */
typedef struct kube_serving_defaults {
    int secure_port;       /* 10259 (kube-scheduler), 8443 (aggregated API server) */
    const char *cert_dir;  /* "" (in memory) or a directory */
    const char *pair_name; /* <cert-dir>/<pair_name>.crt and .key */
    int tolerate_lookup;   /* --authentication-tolerate-lookup-failure */
    const char *port_zero; /* what --secure-port 0 means, for --help */
} kube_serving_defaults;

typedef struct kube_serving_options {
    /* Secure serving */
    char *bind_address;
    int secure_port;
    char *cert_dir;
    char *pair_name;
    char *tls_cert_file;
    char *tls_private_key_file;
    char *tls_min_version;          /* "" / NULL: VersionTLS12 */
    kube_strlist tls_cipher_suites; /* Go names as given */
    int permit_port_sharing;
    int permit_address_sharing;
    /* Authentication */
    char *authentication_kubeconfig;
    int authentication_skip_lookup;
    int authentication_tolerate_lookup_failure;
    int64_t token_cache_ttl_ms;
    char *client_ca_file;
    char *requestheader_client_ca_file;
    kube_strlist requestheader_allowed_names;
    kube_strlist requestheader_username_headers; /* empty: not set */
    kube_strlist requestheader_group_headers;
    kube_strlist requestheader_extra_headers_prefix;
    int allowed_names_set;
    /* Authorization */
    char *authorization_kubeconfig;
    kube_strlist always_allow_paths;
    kube_strlist always_allow_groups; /* system:masters; no flag here */
    int64_t authorized_ttl_ms;
    int64_t unauthorized_ttl_ms;
    /* the "Secure serving" and "Authentication" tables, with this
     * daemon's help texts */
    kube_flag serving_flags[KUBE_SERVING_SERVING_FLAGS];
    kube_flag authn_flags[KUBE_SERVING_AUTHN_FLAGS];
    char port_help[256];
    char cert_dir_help[320];
    char tolerate_help[256];
} kube_serving_options;

/* Fills o with k8s.io/apiserver's defaults and d's. KUBE_OK or
 * KUBE_ENOMEM (o is then still safe to free). */
int kube_serving_options_defaults(kube_serving_options *o, const kube_serving_defaults *d);
void kube_serving_options_free(kube_serving_options *o);

/* The three named sets ("Secure serving", "Authentication",
 * "Authorization"), writing into o, into sets[0..2]. */
void kube_serving_flag_sets(kube_serving_options *o, kube_flag_set sets[KUBE_SERVING_FLAG_SETS]);

/* Checks what parsing cannot: the certificate and key files go together,
 * the TLS version and cipher names are known. KUBE_OK or KUBE_ECONFIG with
 * the message in err. */
int kube_serving_options_validate(const kube_serving_options *o, char *err, size_t errlen);

/* The OpenSSL protocol version of --tls-min-version (VersionTLS10..13;
 * NULL or "": TLS 1.2). KUBE_OK or KUBE_ECONFIG ("unknown tls version"). */
int kube_serving_tls_version(const char *name, int *out, char *err, size_t errlen);

/* The OpenSSL cipher list (TLS 1.2 and below, colon-separated) of Go
 * cipher suite names, appended to out. TLS 1.3 suites are accepted and,
 * as Go does, not configurable (left out). KUBE_OK, KUBE_ECONFIG (an
 * unknown name, named in err) or KUBE_ENOMEM. */
int kube_serving_cipher_list(const kube_strlist *names, kube_buf *out, char *err, size_t errlen);

#endif
