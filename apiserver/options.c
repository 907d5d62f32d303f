/*
 * apiserver/options.c - command-line flags of stickyvm-apiserver, named and
 * defaulted as k8s.io/apiserver's SecureServing, DelegatingAuthentication and
 * DelegatingAuthorization options name them: *   --secure-port (8443)
 * --bind-address (0.0.0.0) --cert-dir (apiserver.local.config/certificates)
 * --tls-cert-file  --tls-private-key-file --kubeconfig  --authentication-
 * kubeconfig  --authorization-kubeconfig --authentication-skip-lookup
 * --client-ca-file  --requestheader-client-ca-file --requestheader-allowed-
 * names  --requestheader-username-headers --requestheader-group-headers
 * --requestheader-extra-headers-prefix --authentication-token-webhook-cache-
 * ttl (10s) --authorization-webhook-cache-authorized-ttl (10s)
 * --authorization-webhook-cache-unauthorized-ttl (10s) --authorization-
 * always-allow-paths (/healthz,/readyz,/livez) --authorization-always-allow-
 * groups (system:masters) --max-requests-inflight (400)  --request-timeout
 * (60s) --shutdown-timeout (30s)  --workers (16)  --v / -v (0) --tls-
 * handshake-timeout (10s)  --read-header-timeout (32s) --max-connections
 * (1024) --pin-annotation-key (stickyvm.io/node): the VM annotation /pin and
 * /unpin write; must be the StickyVM plugin's annotationKey (checked as an
 * annotation key by kube/types/pin.h) * Values follow pflag: "--name=value" or "--
 * name value"; lists are comma-separated; durations use Go syntax ("10s",
 * "1m30s", "500ms"). The contract is in options.h.
 */
#include "options.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/duration.h"
#include "kube/util/errors.h"
#include "kube/util/flags.h"
#include "kube/types/pin.h"

/* --name a,b,c: a comma-separated list (the field is an kube_strlist);
 * --requestheader-allowed-names also records that it was given. */
static int set_list(void *dst, const kube_flag *f, const char *value, char *why, size_t n);

#define OFF(field) offsetof(apis_options, field)

static const kube_flag flags[] = {
    {"secure-port", KUBE_FLAG_INT, OFF(secure_port), 0, 65535, NULL,
     "HTTPS port (0 picks a free port)", NULL},
    {"bind-address", KUBE_FLAG_STRING, OFF(bind_address), 0, 0, NULL, "address to listen on", NULL},
    {"cert-dir", KUBE_FLAG_STRING, OFF(cert_dir), 0, 0, NULL,
     "where the self-signed serving certificate is kept when --tls-cert-file is not given", NULL},
    {"tls-cert-file", KUBE_FLAG_STRING, OFF(tls_cert_file), 0, 0, NULL,
     "serving certificate (PEM, chain allowed); reloaded when it changes", NULL},
    {"tls-private-key-file", KUBE_FLAG_STRING, OFF(tls_private_key_file), 0, 0, NULL,
     "private key of --tls-cert-file", NULL},
    {"kubeconfig", KUBE_FLAG_STRING, OFF(kubeconfig), 0, 0, NULL,
     "kubeconfig of kube-apiserver (default: KUBECONFIG, then in-cluster)", NULL},
    {"authentication-kubeconfig", KUBE_FLAG_STRING, OFF(authentication_kubeconfig), 0, 0, NULL,
     "kubeconfig for TokenReview and the authentication ConfigMap (default: --kubeconfig)", NULL},
    {"authorization-kubeconfig", KUBE_FLAG_STRING, OFF(authorization_kubeconfig), 0, 0, NULL,
     "kubeconfig for SubjectAccessReview (default: --kubeconfig)", NULL},
    {"authentication-skip-lookup", KUBE_FLAG_BOOL, OFF(authentication_skip_lookup), 0, 0, NULL,
     "do not read kube-system/extension-apiserver-authentication", NULL},
    {"client-ca-file", KUBE_FLAG_STRING, OFF(client_ca_file), 0, 0, NULL,
     "CA bundle for client certificates (overrides the ConfigMap's client-ca-file)", NULL},
    {"requestheader-client-ca-file", KUBE_FLAG_STRING, OFF(requestheader_client_ca_file), 0, 0,
     NULL, "front-proxy CA bundle (overrides the ConfigMap's requestheader settings)", NULL},
    {"requestheader-allowed-names", KUBE_FLAG_CUSTOM, OFF(requestheader_allowed_names), 0, 0,
     "strings", "front-proxy certificate common names allowed (empty: any)", set_list},
    {"requestheader-username-headers", KUBE_FLAG_CUSTOM, OFF(requestheader_username_headers), 0, 0,
     "strings", "headers holding the user name", set_list},
    {"requestheader-group-headers", KUBE_FLAG_CUSTOM, OFF(requestheader_group_headers), 0, 0,
     "strings", "headers holding the groups", set_list},
    {"requestheader-extra-headers-prefix", KUBE_FLAG_CUSTOM,
     OFF(requestheader_extra_headers_prefix), 0, 0, "strings",
     "header prefixes holding extra user attributes", set_list},
    {"authentication-token-webhook-cache-ttl", KUBE_FLAG_DURATION, OFF(token_cache_ttl_ms), 0, 0,
     NULL, "how long TokenReview answers are cached", NULL},
    {"authorization-webhook-cache-authorized-ttl", KUBE_FLAG_DURATION, OFF(authorized_ttl_ms), 0, 0,
     NULL, "how long allowed SubjectAccessReview answers are cached", NULL},
    {"authorization-webhook-cache-unauthorized-ttl", KUBE_FLAG_DURATION, OFF(unauthorized_ttl_ms),
     0, 0, NULL, "how long denied SubjectAccessReview answers are cached", NULL},
    {"authorization-always-allow-paths", KUBE_FLAG_CUSTOM, OFF(always_allow_paths), 0, 0, "strings",
     "paths served without authorization", set_list},
    {"authorization-always-allow-groups", KUBE_FLAG_CUSTOM, OFF(always_allow_groups), 0, 0,
     "strings", "groups allowed without a SubjectAccessReview", set_list},
    {"max-requests-inflight", KUBE_FLAG_INT, OFF(max_requests_inflight), 1, 100000, NULL,
     "requests served at once; more are answered 429", NULL},
    {"request-timeout", KUBE_FLAG_DURATION, OFF(request_timeout_ms), 0, 0, NULL,
     "longest time a request may take (reading it included)", NULL},
    {"shutdown-timeout", KUBE_FLAG_DURATION, OFF(shutdown_timeout_ms), 0, 0, NULL,
     "on SIGTERM, how long to let requests in flight finish", NULL},
    {"tls-handshake-timeout", KUBE_FLAG_DURATION, OFF(tls_handshake_timeout_ms), 0, 0, NULL,
     "longest time a client may take to finish its TLS handshake", NULL},
    {"read-header-timeout", KUBE_FLAG_DURATION, OFF(read_header_timeout_ms), 0, 0, NULL,
     "longest time a request's headers may take to arrive", NULL},
    {"max-connections", KUBE_FLAG_INT, OFF(max_connections), 1, 1000000, NULL,
     "client connections held at once (also bounded by the descriptor limit)", NULL},
    {"workers", KUBE_FLAG_INT, OFF(workers), 1, 1024, NULL, "threads calling kube-apiserver", NULL},
    {"pin-annotation-key", KUBE_FLAG_STRING, OFF(pin_annotation_key), 0, 0, NULL,
     "VM annotation /pin and /unpin write (the StickyVM plugin's annotationKey)", NULL},
    {"v", KUBE_FLAG_INT, OFF(verbosity), 0, 10, NULL, "log verbosity", NULL},
    {"help", KUBE_FLAG_BOOL, OFF(help), 0, 0, NULL, "print this help", NULL},
};

#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

static int set_list(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    apis_options *o = dst;
    kube_strlist *l = (kube_strlist *)((char *)dst + f->offset);

    (void)why;
    (void)n;
    kube_strlist_free(l);
    if (f->offset == OFF(requestheader_allowed_names))
        o->allowed_names_set = 1;
    return kube_strlist_split(l, value);
}

int apis_options_defaults(apis_options *o)
{
    int rc;

    memset(o, 0, sizeof(*o));
    o->secure_port = 8443;
    o->bind_address = kube_strdup("0.0.0.0");
    o->cert_dir = kube_strdup("apiserver.local.config/certificates");
    o->token_cache_ttl_ms = 10000;
    o->authorized_ttl_ms = 10000;
    o->unauthorized_ttl_ms = 10000;
    o->max_requests_inflight = 400;
    o->request_timeout_ms = 60000;
    o->shutdown_timeout_ms = 30000;
    o->tls_handshake_timeout_ms = 10000;
    o->read_header_timeout_ms = 32000;
    o->max_connections = 1024;
    o->workers = 16;
    o->pin_annotation_key = kube_strdup(KUBE_PIN_DEFAULT_KEY);
    if (!o->bind_address || !o->cert_dir || !o->pin_annotation_key)
        return KUBE_ENOMEM;
    rc = kube_strlist_split(&o->always_allow_paths, "/healthz,/readyz,/livez");
    if (rc == KUBE_OK)
        rc = kube_strlist_split(&o->always_allow_groups, "system:masters");
    return rc;
}

void apis_options_free(apis_options *o)
{
    char **strings[] = {&o->bind_address,
                        &o->cert_dir,
                        &o->tls_cert_file,
                        &o->tls_private_key_file,
                        &o->kubeconfig,
                        &o->authentication_kubeconfig,
                        &o->authorization_kubeconfig,
                        &o->client_ca_file,
                        &o->requestheader_client_ca_file,
                        &o->pin_annotation_key};
    kube_strlist *lists[] = {
        &o->requestheader_allowed_names, &o->requestheader_username_headers,
        &o->requestheader_group_headers, &o->requestheader_extra_headers_prefix,
        &o->always_allow_paths,          &o->always_allow_groups};

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        kube_strlist_free(lists[i]);
}

/* --pin-annotation-key must be an annotation key, as the plugin's
 * annotationKey must. */
static int check_pin_key(const apis_options *o, char *err, size_t errlen)
{
    char msg[1280];
    if (kube_pin_key_check(o->pin_annotation_key, msg, sizeof(msg)) == KUBE_OK)
        return KUBE_OK;
    snprintf(err, errlen, "invalid argument \"%s\" for \"--pin-annotation-key\" flag: %s",
             o->pin_annotation_key, msg);
    return KUBE_ECONFIG;
}

int apis_options_parse(int argc, char *const *argv, apis_options *o, char *err, size_t errlen)
{
    int rc = apis_options_defaults(o);

    if (rc == KUBE_OK)
        rc = kube_flags_parse(flags, N_FLAGS, argc, argv, o, err, errlen);
    if (rc == KUBE_OK)
        rc = check_pin_key(o, err, errlen);
    if (rc == KUBE_OK && !o->tls_cert_file != !o->tls_private_key_file) {
        snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file must be given together");
        rc = KUBE_ECONFIG;
    }
    return rc;
}

void apis_options_usage(FILE *f)
{
    fprintf(f, "Usage: stickyvm-apiserver [flags]\n\n"
               "Serves /apis/subresources.stickyvm.io/v1/namespaces/NS/virtualmachines/NAME/pin\n"
               "and .../unpin behind kube-apiserver's aggregation layer.\n\nFlags:\n");
    kube_flags_usage(f, flags, N_FLAGS);
}
