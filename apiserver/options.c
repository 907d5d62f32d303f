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
 * annotation key by kube/pin.h) * Values follow pflag: "--name=value" or "--
 * name value"; lists are comma-separated; durations use Go syntax ("10s",
 * "1m30s", "500ms"). The contract is in options.h.
 */
#include "options.h"

#include <stdlib.h>
#include <string.h>

#include "kube/buf.h"
#include "kube/duration.h"
#include "kube/errors.h"
#include "kube/pin.h"

typedef enum kind { K_STRING, K_INT, K_DURATION, K_LIST, K_BOOL } kind;

typedef struct flag {
    const char *name;
    kind kind;
    size_t offset;
    int64_t min, max;
    const char *help;
} flag;

#define OFF(field) offsetof(apis_options, field)

static const flag flags[] = {
    {"secure-port", K_INT, OFF(secure_port), 0, 65535, "HTTPS port (0 picks a free port)"},
    {"bind-address", K_STRING, OFF(bind_address), 0, 0, "address to listen on"},
    {"cert-dir", K_STRING, OFF(cert_dir), 0, 0,
     "where the self-signed serving certificate is kept when --tls-cert-file is not given"},
    {"tls-cert-file", K_STRING, OFF(tls_cert_file), 0, 0,
     "serving certificate (PEM, chain allowed); reloaded when it changes"},
    {"tls-private-key-file", K_STRING, OFF(tls_private_key_file), 0, 0,
     "private key of --tls-cert-file"},
    {"kubeconfig", K_STRING, OFF(kubeconfig), 0, 0,
     "kubeconfig of kube-apiserver (default: KUBECONFIG, then in-cluster)"},
    {"authentication-kubeconfig", K_STRING, OFF(authentication_kubeconfig), 0, 0,
     "kubeconfig for TokenReview and the authentication ConfigMap (default: --kubeconfig)"},
    {"authorization-kubeconfig", K_STRING, OFF(authorization_kubeconfig), 0, 0,
     "kubeconfig for SubjectAccessReview (default: --kubeconfig)"},
    {"authentication-skip-lookup", K_BOOL, OFF(authentication_skip_lookup), 0, 0,
     "do not read kube-system/extension-apiserver-authentication"},
    {"client-ca-file", K_STRING, OFF(client_ca_file), 0, 0,
     "CA bundle for client certificates (overrides the ConfigMap's client-ca-file)"},
    {"requestheader-client-ca-file", K_STRING, OFF(requestheader_client_ca_file), 0, 0,
     "front-proxy CA bundle (overrides the ConfigMap's requestheader settings)"},
    {"requestheader-allowed-names", K_LIST, OFF(requestheader_allowed_names), 0, 0,
     "front-proxy certificate common names allowed (empty: any)"},
    {"requestheader-username-headers", K_LIST, OFF(requestheader_username_headers), 0, 0,
     "headers holding the user name"},
    {"requestheader-group-headers", K_LIST, OFF(requestheader_group_headers), 0, 0,
     "headers holding the groups"},
    {"requestheader-extra-headers-prefix", K_LIST, OFF(requestheader_extra_headers_prefix), 0, 0,
     "header prefixes holding extra user attributes"},
    {"authentication-token-webhook-cache-ttl", K_DURATION, OFF(token_cache_ttl_ms), 0, 0,
     "how long TokenReview answers are cached"},
    {"authorization-webhook-cache-authorized-ttl", K_DURATION, OFF(authorized_ttl_ms), 0, 0,
     "how long allowed SubjectAccessReview answers are cached"},
    {"authorization-webhook-cache-unauthorized-ttl", K_DURATION, OFF(unauthorized_ttl_ms), 0, 0,
     "how long denied SubjectAccessReview answers are cached"},
    {"authorization-always-allow-paths", K_LIST, OFF(always_allow_paths), 0, 0,
     "paths served without authorization"},
    {"authorization-always-allow-groups", K_LIST, OFF(always_allow_groups), 0, 0,
     "groups allowed without a SubjectAccessReview"},
    {"max-requests-inflight", K_INT, OFF(max_requests_inflight), 1, 100000,
     "requests served at once; more are answered 429"},
    {"request-timeout", K_DURATION, OFF(request_timeout_ms), 0, 0,
     "longest time a request may take (reading it included)"},
    {"shutdown-timeout", K_DURATION, OFF(shutdown_timeout_ms), 0, 0,
     "on SIGTERM, how long to let requests in flight finish"},
    {"tls-handshake-timeout", K_DURATION, OFF(tls_handshake_timeout_ms), 0, 0,
     "longest time a client may take to finish its TLS handshake"},
    {"read-header-timeout", K_DURATION, OFF(read_header_timeout_ms), 0, 0,
     "longest time a request's headers may take to arrive"},
    {"max-connections", K_INT, OFF(max_connections), 1, 1000000,
     "client connections held at once (also bounded by the descriptor limit)"},
    {"workers", K_INT, OFF(workers), 1, 1024, "threads calling kube-apiserver"},
    {"pin-annotation-key", K_STRING, OFF(pin_annotation_key), 0, 0,
     "VM annotation /pin and /unpin write (the StickyVM plugin's annotationKey)"},
    {"v", K_INT, OFF(verbosity), 0, 10, "log verbosity"},
    {"help", K_BOOL, OFF(help), 0, 0, "print this help"},
};

#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

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
    rc = apis_strlist_split(&o->always_allow_paths, "/healthz,/readyz,/livez");
    if (rc == KUBE_OK)
        rc = apis_strlist_split(&o->always_allow_groups, "system:masters");
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
    apis_strlist *lists[] = {
        &o->requestheader_allowed_names, &o->requestheader_username_headers,
        &o->requestheader_group_headers, &o->requestheader_extra_headers_prefix,
        &o->always_allow_paths,          &o->always_allow_groups};

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        apis_strlist_free(lists[i]);
}

static int set_bool(const char *value, int *dst)
{
    if (!value || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
        *dst = 1;
    else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
        *dst = 0;
    else
        return KUBE_ECONFIG;
    return KUBE_OK;
}

static int set_value(apis_options *o, const flag *f, const char *value)
{
    void *dst = (char *)o + f->offset;
    int64_t v;

    switch (f->kind) {
    case K_STRING:
        free(*(char **)dst);
        *(char **)dst = kube_strdup(value);
        return *(char **)dst ? KUBE_OK : KUBE_ENOMEM;
    case K_INT:
        if (kube_parse_int64(value, f->min, f->max, &v) != KUBE_OK)
            return KUBE_ECONFIG;
        *(int *)dst = (int)v;
        return KUBE_OK;
    case K_DURATION: /* Go syntax; a timeout is never negative */
        if (kube_duration_parse(value, &v) != KUBE_OK || v < 0)
            return KUBE_ECONFIG;
        *(int64_t *)dst = v;
        return KUBE_OK;
    case K_LIST:
        apis_strlist_free((apis_strlist *)dst);
        if (f->offset == OFF(requestheader_allowed_names))
            o->allowed_names_set = 1;
        return apis_strlist_split((apis_strlist *)dst, value);
    case K_BOOL:
        return set_bool(value, (int *)dst);
    }
    return KUBE_ECONFIG;
}

static const flag *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    return NULL;
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

    for (int i = 1; rc == KUBE_OK && i < argc; i++) {
        const char *arg = argv[i], *name, *eq, *value;
        const flag *f;

        if (strncmp(arg, "--", 2) == 0)
            name = arg + 2;
        else if (arg[0] == '-' && arg[1] && arg[1] != '-')
            name = arg + 1;
        else {
            snprintf(err, errlen, "unexpected argument %s", arg);
            return KUBE_ECONFIG;
        }
        eq = strchr(name, '=');
        f = find_flag(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!f) {
            snprintf(err, errlen, "unknown flag: %s", arg);
            return KUBE_ECONFIG;
        }
        value = eq ? eq + 1 : NULL;
        if (!value && f->kind != K_BOOL) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "flag needs an argument: --%s", f->name);
                return KUBE_ECONFIG;
            }
            value = argv[++i];
        }
        rc = set_value(o, f, value);
        if (rc == KUBE_ECONFIG)
            snprintf(err, errlen, "invalid argument \"%s\" for \"--%s\" flag", value ? value : "",
                     f->name);
    }
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
    for (size_t i = 0; i < N_FLAGS; i++)
        fprintf(f, "  --%-46s %s\n", flags[i].name, flags[i].help);
}
