/*
 * kube/serving/options.c - the secure port's options in three named flag
 * sets, with k8s.io/apiserver's names, defaults and help. The contract is
 * in options.h.
 */
#include "kube/serving/options.h"

#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"

/* --name a,b,c: a comma-separated list (the field is a kube_strlist);
 * --requestheader-allowed-names also records that it was given. */
static int set_list(void *dst, const kube_flag *f, const char *value, char *why, size_t n);

#define OFF(field) offsetof(kube_serving_options, field)
#define STR KUBE_FLAG_STRING
#define BOOL KUBE_FLAG_BOOL
#define DUR KUBE_FLAG_DURATION
#define LIST KUBE_FLAG_CUSTOM

/* The "Secure serving" set; the help of --secure-port and --cert-dir is
 * the daemon's (filled in by kube_serving_options_defaults()). */
static const kube_flag serving_template[KUBE_SERVING_SERVING_FLAGS] = {
    {"bind-address", STR, OFF(bind_address), 0, 0, "ip",
     "The IP address on which to listen for the --secure-port port. The associated interface(s) "
     "must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an "
     "unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used. "
     "(default 0.0.0.0)",
     NULL},
    {"cert-dir", STR, OFF(cert_dir), 0, 0, NULL, NULL, NULL},
    {"permit-address-sharing", BOOL, OFF(permit_address_sharing), 0, 0, NULL,
     "If true, SO_REUSEADDR will be used when binding the port. This allows binding to wildcard "
     "IPs like 0.0.0.0 and specific IPs in parallel, and it avoids waiting for the kernel to "
     "release sockets in TIME_WAIT state. [default=false]",
     NULL},
    {"permit-port-sharing", BOOL, OFF(permit_port_sharing), 0, 0, NULL,
     "If true, SO_REUSEPORT will be used when binding the port, which allows more than one "
     "instance to bind on the same address and port. [default=false]",
     NULL},
    {"secure-port", KUBE_FLAG_INT, OFF(secure_port), 0, 65535, NULL, NULL, NULL},
    {"tls-cert-file", STR, OFF(tls_cert_file), 0, 0, NULL,
     "File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated "
     "after server cert). If HTTPS serving is enabled, and --tls-cert-file and "
     "--tls-private-key-file are not provided, a self-signed certificate and key are generated "
     "for the public address and saved to the directory specified by --cert-dir (kept in memory "
     "when --cert-dir is empty). Reloaded when it changes.",
     NULL},
    {"tls-cipher-suites", LIST, OFF(tls_cipher_suites), 0, 0, "strings",
     "Comma-separated list of cipher suites for the server, by their Go names "
     "(TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, ...; "
     "mapped to OpenSSL's). If omitted, OpenSSL's default TLS 1.2 suites are used. TLS 1.3 "
     "suites are not configurable.",
     set_list},
    {"tls-min-version", STR, OFF(tls_min_version), 0, 0, NULL,
     "Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, "
     "VersionTLS13 (default VersionTLS12)",
     NULL},
    {"tls-private-key-file", STR, OFF(tls_private_key_file), 0, 0, NULL,
     "File containing the default x509 private key matching --tls-cert-file.", NULL},
};

static const kube_flag authn_template[KUBE_SERVING_AUTHN_FLAGS] = {
    {"authentication-kubeconfig", STR, OFF(authentication_kubeconfig), 0, 0, NULL,
     "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create "
     "tokenreviews.authentication.k8s.io and read the extension-apiserver-authentication "
     "ConfigMap. If empty, the --kubeconfig connection (or the in-cluster configuration) is "
     "used.",
     NULL},
    {"authentication-skip-lookup", BOOL, OFF(authentication_skip_lookup), 0, 0, NULL,
     "If false, the authentication-kubeconfig will be used to lookup missing authentication "
     "configuration from the cluster.",
     NULL},
    {"authentication-token-webhook-cache-ttl", DUR, OFF(token_cache_ttl_ms), 0, 0, NULL,
     "The duration to cache responses from the webhook token authenticator. (default 10s)", NULL},
    {"authentication-tolerate-lookup-failure", BOOL, OFF(authentication_tolerate_lookup_failure), 0,
     0, NULL, NULL, NULL},
    {"client-ca-file", STR, OFF(client_ca_file), 0, 0, NULL,
     "If set, any request presenting a client certificate signed by one of the authorities in "
     "the client-ca-file is authenticated with an identity corresponding to the CommonName of "
     "the client certificate.",
     NULL},
    {"requestheader-allowed-names", LIST, OFF(requestheader_allowed_names), 0, 0, "strings",
     "List of client certificate common names to allow to provide usernames in headers specified "
     "by --requestheader-username-headers. If empty, any client certificate validated by the "
     "authorities in --requestheader-client-ca-file is allowed.",
     set_list},
    {"requestheader-client-ca-file", STR, OFF(requestheader_client_ca_file), 0, 0, NULL,
     "Root certificate bundle to use to verify client certificates on incoming requests before "
     "trusting usernames in headers specified by --requestheader-username-headers. WARNING: "
     "generally do not depend on authorization being already done for incoming requests.",
     NULL},
    {"requestheader-extra-headers-prefix", LIST, OFF(requestheader_extra_headers_prefix), 0, 0,
     "strings",
     "List of request header prefixes to inspect. X-Remote-Extra- is suggested. (default "
     "[x-remote-extra-])",
     set_list},
    {"requestheader-group-headers", LIST, OFF(requestheader_group_headers), 0, 0, "strings",
     "List of request headers to inspect for groups. X-Remote-Group is suggested. (default "
     "[x-remote-group])",
     set_list},
    {"requestheader-username-headers", LIST, OFF(requestheader_username_headers), 0, 0, "strings",
     "List of request headers to inspect for usernames. X-Remote-User is common. (default "
     "[x-remote-user])",
     set_list},
};

static const kube_flag authz_flags[] = {
    {"authorization-always-allow-paths", LIST, OFF(always_allow_paths), 0, 0, "strings",
     "A list of HTTP paths to skip during authorization, i.e. these are authorized without "
     "contacting the 'core' kubernetes server. (default [/healthz,/readyz,/livez])",
     set_list},
    {"authorization-kubeconfig", STR, OFF(authorization_kubeconfig), 0, 0, NULL,
     "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create "
     "subjectaccessreviews.authorization.k8s.io. If empty, the --kubeconfig connection (or the "
     "in-cluster configuration) is used.",
     NULL},
    {"authorization-webhook-cache-authorized-ttl", DUR, OFF(authorized_ttl_ms), 0, 0, NULL,
     "The duration to cache 'authorized' responses from the webhook authorizer. (default 10s)",
     NULL},
    {"authorization-webhook-cache-unauthorized-ttl", DUR, OFF(unauthorized_ttl_ms), 0, 0, NULL,
     "The duration to cache 'unauthorized' responses from the webhook authorizer. (default 10s)",
     NULL},
};

#define N_AUTHZ (sizeof(authz_flags) / sizeof(authz_flags[0]))

static int set_list(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    kube_serving_options *o = dst;
    kube_strlist *l = (kube_strlist *)((char *)dst + f->offset);

    (void)why;
    (void)n;
    kube_strlist_free(l);
    if (f->offset == OFF(requestheader_allowed_names))
        o->allowed_names_set = 1;
    return kube_strlist_split(l, value);
}

/* Points the help of the flag named name at help. */
static void set_help(kube_flag *flags, size_t n, const char *name, const char *help)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(flags[i].name, name))
            flags[i].help = help;
}

/* The daemon's help texts, and the tables pointing at them. */
static void fill_help(kube_serving_options *o, const kube_serving_defaults *d)
{
    snprintf(o->port_help, sizeof(o->port_help),
             "The port on which to serve HTTPS with authentication and authorization. %s "
             "(default %d)",
             d->port_zero, d->secure_port);
    if (d->cert_dir && *d->cert_dir)
        snprintf(o->cert_dir_help, sizeof(o->cert_dir_help),
                 "The directory where the TLS certs are located. If --tls-cert-file and "
                 "--tls-private-key-file are provided, this flag will be ignored. (default \"%s\")",
                 d->cert_dir);
    else
        snprintf(o->cert_dir_help, sizeof(o->cert_dir_help),
                 "The directory where the TLS certs are located. If --tls-cert-file and "
                 "--tls-private-key-file are provided, this flag will be ignored.");
    snprintf(o->tolerate_help, sizeof(o->tolerate_help),
             "If true, failures to look up missing authentication configuration from the cluster "
             "are not considered fatal. Note that this can result in authentication that treats "
             "all requests as anonymous.%s",
             d->tolerate_lookup ? " (default true)" : "");
    memcpy(o->serving_flags, serving_template, sizeof(serving_template));
    memcpy(o->authn_flags, authn_template, sizeof(authn_template));
    set_help(o->serving_flags, KUBE_SERVING_SERVING_FLAGS, "secure-port", o->port_help);
    set_help(o->serving_flags, KUBE_SERVING_SERVING_FLAGS, "cert-dir", o->cert_dir_help);
    set_help(o->authn_flags, KUBE_SERVING_AUTHN_FLAGS, "authentication-tolerate-lookup-failure",
             o->tolerate_help);
}

int kube_serving_options_defaults(kube_serving_options *o, const kube_serving_defaults *d)
{
    int rc = KUBE_OK;

    memset(o, 0, sizeof(*o));
    fill_help(o, d);
    o->secure_port = d->secure_port;
    o->authentication_tolerate_lookup_failure = d->tolerate_lookup;
    o->token_cache_ttl_ms = 10000;
    o->authorized_ttl_ms = 10000;
    o->unauthorized_ttl_ms = 10000;
    o->bind_address = kube_strdup("0.0.0.0");
    o->cert_dir = kube_strdup(d->cert_dir ? d->cert_dir : "");
    o->pair_name = kube_strdup(d->pair_name ? d->pair_name : "apiserver");
    if (!o->bind_address || !o->cert_dir || !o->pair_name)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = kube_strlist_split(&o->always_allow_paths, "/healthz,/readyz,/livez");
    if (rc == KUBE_OK)
        rc = kube_strlist_split(&o->always_allow_groups, "system:masters");
    return rc;
}

void kube_serving_options_free(kube_serving_options *o)
{
    char **strings[] = {&o->bind_address,
                        &o->cert_dir,
                        &o->pair_name,
                        &o->tls_cert_file,
                        &o->tls_private_key_file,
                        &o->tls_min_version,
                        &o->authentication_kubeconfig,
                        &o->authorization_kubeconfig,
                        &o->client_ca_file,
                        &o->requestheader_client_ca_file};
    kube_strlist *lists[] = {&o->tls_cipher_suites,
                             &o->requestheader_allowed_names,
                             &o->requestheader_username_headers,
                             &o->requestheader_group_headers,
                             &o->requestheader_extra_headers_prefix,
                             &o->always_allow_paths,
                             &o->always_allow_groups};

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        kube_strlist_free(lists[i]);
}

void kube_serving_flag_sets(kube_serving_options *o, kube_flag_set sets[KUBE_SERVING_FLAG_SETS])
{
    sets[0] = (kube_flag_set){"Secure serving", o->serving_flags, KUBE_SERVING_SERVING_FLAGS, o};
    sets[1] = (kube_flag_set){"Authentication", o->authn_flags, KUBE_SERVING_AUTHN_FLAGS, o};
    sets[2] = (kube_flag_set){"Authorization", authz_flags, N_AUTHZ, o};
}

/* Go's crypto/tls version names, as k8s.io/component-base's cliflag. */
static const struct {
    const char *name;
    int version;
} tls_versions[] = {
    {"VersionTLS10", TLS1_VERSION},
    {"VersionTLS11", TLS1_1_VERSION},
    {"VersionTLS12", TLS1_2_VERSION},
    {"VersionTLS13", TLS1_3_VERSION},
};

int kube_serving_tls_version(const char *name, int *out, char *err, size_t errlen)
{
    *out = TLS1_2_VERSION;
    if (!name || !*name)
        return KUBE_OK;
    for (size_t i = 0; i < sizeof(tls_versions) / sizeof(tls_versions[0]); i++)
        if (!strcmp(tls_versions[i].name, name)) {
            *out = tls_versions[i].version;
            return KUBE_OK;
        }
    snprintf(err, errlen, "unknown tls version \"%s\"", name);
    return KUBE_ECONFIG;
}

/* Go's cipher suite names (crypto/tls CipherSuites and
 * InsecureCipherSuites) and OpenSSL's names for them; NULL: a TLS 1.3
 * suite, which Go does not let a server configure. */
static const struct {
    const char *go;
    const char *openssl;
} ciphers[] = {
    {"TLS_AES_128_GCM_SHA256", NULL},
    {"TLS_AES_256_GCM_SHA384", NULL},
    {"TLS_CHACHA20_POLY1305_SHA256", NULL},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
};

/* Looks name up: 1 with *openssl (NULL for TLS 1.3), 0 when unknown. */
static int cipher_lookup(const char *name, const char **openssl)
{
    for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++)
        if (!strcmp(ciphers[i].go, name)) {
            *openssl = ciphers[i].openssl;
            return 1;
        }
    return 0;
}

int kube_serving_cipher_list(const kube_strlist *names, kube_buf *out, char *err, size_t errlen)
{
    const char *ossl;
    int rc = KUBE_OK;

    for (size_t i = 0; names && i < names->n && rc == KUBE_OK; i++) {
        if (!cipher_lookup(names->v[i], &ossl)) {
            snprintf(err, errlen, "Cipher suite %s not supported or doesn't exist", names->v[i]);
            return KUBE_ECONFIG;
        }
        if (ossl)
            rc = kube_buf_printf(out, "%s%s", out->len ? ":" : "", ossl);
    }
    return rc;
}

int kube_serving_options_validate(const kube_serving_options *o, char *err, size_t errlen)
{
    kube_buf ciphers_buf = KUBE_BUF_INIT;
    int version, rc;

    if (!o->tls_cert_file != !o->tls_private_key_file) {
        snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file must be given together");
        return KUBE_ECONFIG;
    }
    rc = kube_serving_tls_version(o->tls_min_version, &version, err, errlen);
    if (rc == KUBE_OK)
        rc = kube_serving_cipher_list(&o->tls_cipher_suites, &ciphers_buf, err, errlen);
    kube_buf_free(&ciphers_buf);
    return rc;
}
