/*
 * apiserver/app.c - stickyvm-apiserver assembled from its options: the kube-
 * apiserver clients (--kubeconfig, and --authentication-kubeconfig /
 * --authorization-kubeconfig when given), the delegated authenticator and
 * authorizer, the watched authentication settings, the serving certificate,
 * the metrics and the TLS server. The contract is in app.h.
 */
#include "app.h"

#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "kube/serving/certs.h"
#include "kube/serving/delegate.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pin.h"
#include "kube/serving/server.h"

#define DELEGATE_TIMEOUT_MS 10000 /* k8s.io/apiserver's webhook client timeout */

typedef struct endpoint {
    kube_config *cfg;
    kube_client *client;
} endpoint;

struct apis_app {
    endpoint main_ep, authn_ep, authz_ep;
    apis_metrics *metrics;
    kube_delegate *delegate;
    kube_authn_source *authn;
    kube_certs *certs;
    kube_server *server;
    char *pin_key; /* --pin-annotation-key */
    kube_serving_observer observer;
    apis_handlers_ctx hctx;
    kube_handlers handlers;
};

static int open_endpoint(const char *kubeconfig, long timeout_ms, endpoint *ep, char *err,
                         size_t errlen)
{
    kube_client_options co;
    int rc = kube_config_load(kubeconfig, &ep->cfg, err, errlen);

    if (rc != KUBE_OK)
        return rc;
    kube_client_options_default(&co);
    co.qps = 0; /* kube-apiserver's priority and fairness bounds us */
    co.timeout_ms = timeout_ms;
    co.user_agent = "stickyvm-apiserver";
    rc = kube_client_new(ep->cfg, &co, &ep->client);
    if (rc != KUBE_OK)
        snprintf(err, errlen, "cannot create a client for %s: %s", kube_config_server(ep->cfg),
                 kube_strerror(rc));
    return rc;
}

static void close_endpoint(endpoint *ep)
{
    kube_client_free(ep->client);
    kube_config_free(ep->cfg);
    memset(ep, 0, sizeof(*ep));
}

static int is_set(const char *s)
{
    return s && *s;
}

static int open_clients(apis_app *a, const apis_options *o, char *err, size_t errlen)
{
    int rc = open_endpoint(o->kubeconfig, 30000, &a->main_ep, err, errlen);

    if (rc == KUBE_OK && is_set(o->authentication_kubeconfig))
        rc = open_endpoint(o->authentication_kubeconfig, DELEGATE_TIMEOUT_MS, &a->authn_ep, err,
                           errlen);
    if (rc == KUBE_OK && is_set(o->authorization_kubeconfig))
        rc = open_endpoint(o->authorization_kubeconfig, DELEGATE_TIMEOUT_MS, &a->authz_ep, err,
                           errlen);
    return rc;
}

static kube_client *authn_client(apis_app *a)
{
    return a->authn_ep.client ? a->authn_ep.client : a->main_ep.client;
}

static kube_client *authz_client(apis_app *a)
{
    return a->authz_ep.client ? a->authz_ep.client : a->main_ep.client;
}

static int open_delegate(apis_app *a, const apis_options *o)
{
    kube_delegate_options d = {
        .authn_client = authn_client(a),
        .authz_client = authz_client(a),
        .token_ttl_ms = o->token_cache_ttl_ms,
        .allow_ttl_ms = o->authorized_ttl_ms,
        .deny_ttl_ms = o->unauthorized_ttl_ms,
        .always_allow_paths = &o->always_allow_paths,
        .always_allow_groups = &o->always_allow_groups,
        .observer = &a->observer,
    };
    apis_metrics_observer(a->metrics, &a->observer);
    return kube_delegate_new(&d, &a->delegate);
}

static int open_authn_source(apis_app *a, const apis_options *o, char *err, size_t errlen)
{
    kube_authn_source_options so = {
        .client = o->authentication_skip_lookup ? NULL : authn_client(a),
        .client_ca_file = is_set(o->client_ca_file) ? o->client_ca_file : NULL,
        .requestheader_ca_file =
            is_set(o->requestheader_client_ca_file) ? o->requestheader_client_ca_file : NULL,
        .allowed_names = &o->requestheader_allowed_names,
        .allowed_names_set = o->allowed_names_set,
        .username_headers = &o->requestheader_username_headers,
        .group_headers = &o->requestheader_group_headers,
        .extra_prefixes = &o->requestheader_extra_headers_prefix,
    };
    int rc = kube_authn_source_new(&so, &a->authn, err, errlen);

    if (rc == KUBE_OK && (rc = kube_authn_source_start(a->authn)) != KUBE_OK)
        snprintf(err, errlen, "cannot watch %s/%s: %s", KUBE_AUTHN_CONFIGMAP_NAMESPACE,
                 KUBE_AUTHN_CONFIGMAP_NAME, kube_strerror(rc));
    return rc;
}

static int open_server(apis_app *a, const apis_options *o, char *err, size_t errlen)
{
    kube_server_options so = {
        .bind_address = o->bind_address,
        .port = o->secure_port,
        .certs = a->certs,
        .ctx = {.authn = a->authn,
                .delegate = a->delegate,
                .handlers = &a->handlers,
                .observer = &a->observer},
        .workers = o->workers,
        .max_inflight = o->max_requests_inflight,
        .request_timeout_ms = o->request_timeout_ms,
        .shutdown_timeout_ms = o->shutdown_timeout_ms,
        .tls_handshake_timeout_ms = o->tls_handshake_timeout_ms,
        .read_header_timeout_ms = o->read_header_timeout_ms,
        .max_connections = o->max_connections,
    };
    a->hctx.client = a->main_ep.client;
    a->hctx.metrics = a->metrics;
    a->hctx.pin_key = a->pin_key;
    apis_handlers_init(&a->handlers, &a->hctx);
    return kube_server_new(&so, &a->server, err, errlen);
}

int apis_app_new(const apis_options *o, apis_app **out, char *err, size_t errlen)
{
    apis_app *a = calloc(1, sizeof(*a));
    int rc;

    *out = NULL;
    if (!a || !(a->pin_key = kube_strdup(o->pin_annotation_key ? o->pin_annotation_key
                                                               : KUBE_PIN_DEFAULT_KEY))) {
        free(a);
        return KUBE_ENOMEM;
    }
    rc = open_clients(a, o, err, errlen);
    if (rc == KUBE_OK && (rc = apis_metrics_new(&a->metrics)) == KUBE_OK)
        rc = open_delegate(a, o);
    if (rc == KUBE_OK)
        rc = kube_certs_new(o->tls_cert_file, o->tls_private_key_file, o->cert_dir, o->bind_address,
                            &a->certs, err, errlen);
    if (rc == KUBE_OK)
        rc = open_authn_source(a, o, err, errlen);
    if (rc == KUBE_OK)
        rc = open_server(a, o, err, errlen);
    if (rc != KUBE_OK) {
        if (!*err)
            snprintf(err, errlen, "%s", kube_strerror(rc));
        apis_app_free(a);
        return rc;
    }
    *out = a;
    return KUBE_OK;
}

int apis_app_run(apis_app *a)
{
    return kube_server_run(a->server);
}

void apis_app_stop(apis_app *a)
{
    kube_server_stop(a->server);
}

void apis_app_free(apis_app *a)
{
    if (!a)
        return;
    kube_server_free(a->server);
    kube_authn_source_free(a->authn);
    kube_certs_free(a->certs);
    kube_delegate_free(a->delegate);
    apis_metrics_free(a->metrics);
    close_endpoint(&a->authz_ep);
    close_endpoint(&a->authn_ep);
    close_endpoint(&a->main_ep);
    free(a->pin_key);
    free(a);
}

apis_metrics *apis_app_metrics(apis_app *a)
{
    return a->metrics;
}

kube_authn_source *apis_app_authn_source(apis_app *a)
{
    return a->authn;
}
