/*
 * kube/serving/secure.c - a daemon's secure port assembled from its
 * serving options and handler table. The contract is in secure.h.
 */
#include "kube/serving/secure.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/certs.h"
#include "kube/serving/delegate.h"
#include "kube/serving/server.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"

#define DELEGATE_TIMEOUT_MS 10000 /* k8s.io/apiserver's webhook client timeout */

typedef struct endpoint {
    kube_config *cfg;
    kube_client *client;
} endpoint;

struct kube_secure {
    endpoint authn_ep, authz_ep;
    kube_client *client; /* the daemon's, borrowed */
    kube_delegate *delegate;
    kube_authn_source *authn;
    kube_factory *own_informers; /* the ConfigMap's, when not the daemon's */
    kube_certs *certs;
    kube_server *server;
    char *cipher_list;
    char thread_name[16];
    pthread_t thread;
    int started;
};

static int is_set(const char *s)
{
    return s && *s;
}

static int open_endpoint(const char *kubeconfig, const char *user_agent, endpoint *ep, char *err,
                         size_t errlen)
{
    kube_client_options co;
    int rc = kube_config_load(kubeconfig, &ep->cfg, err, errlen);

    if (rc != KUBE_OK)
        return rc;
    kube_client_options_default(&co);
    co.qps = 0; /* kube-apiserver's priority and fairness bounds us */
    co.timeout_ms = DELEGATE_TIMEOUT_MS;
    co.user_agent = user_agent;
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

static kube_client *authn_client(kube_secure *s)
{
    return s->authn_ep.client ? s->authn_ep.client : s->client;
}

static kube_client *authz_client(kube_secure *s)
{
    return s->authz_ep.client ? s->authz_ep.client : s->client;
}

static int open_clients(kube_secure *s, const kube_secure_options *o, char *err, size_t errlen)
{
    const kube_serving_options *so = o->serving;
    const char *ua = o->user_agent ? o->user_agent : "stickyvm";
    int rc = KUBE_OK;

    if (is_set(so->authentication_kubeconfig))
        rc = open_endpoint(so->authentication_kubeconfig, ua, &s->authn_ep, err, errlen);
    if (rc == KUBE_OK && is_set(so->authorization_kubeconfig))
        rc = open_endpoint(so->authorization_kubeconfig, ua, &s->authz_ep, err, errlen);
    return rc;
}

static int open_delegate(kube_secure *s, const kube_secure_options *o)
{
    const kube_serving_options *so = o->serving;
    kube_delegate_options d = {
        .authn_client = authn_client(s),
        .authz_client = authz_client(s),
        .token_ttl_ms = so->token_cache_ttl_ms,
        .allow_ttl_ms = so->authorized_ttl_ms,
        .deny_ttl_ms = so->unauthorized_ttl_ms,
        .always_allow_paths = &so->always_allow_paths,
        .always_allow_groups = &so->always_allow_groups,
        .observer = o->observer,
    };
    return kube_delegate_new(&d, &s->delegate);
}

/* Watches the authentication ConfigMap through the daemon's factory when
 * the lookup client is the daemon's, else through a factory of its own
 * (--authentication-kubeconfig, or a daemon without a factory). */
static int watch_authn_source(kube_secure *s, const kube_secure_options *o, kube_client *client)
{
    kube_factory *f = o->informers;
    int rc = KUBE_OK;

    if (!client)
        return KUBE_OK;
    if (!f || client != s->client) {
        rc = kube_factory_new(client, &s->own_informers);
        f = s->own_informers;
    }
    if (rc == KUBE_OK)
        rc = kube_authn_source_watch(s->authn, f);
    if (rc == KUBE_OK && s->own_informers)
        rc = kube_factory_start(s->own_informers);
    return rc;
}

static int open_authn_source(kube_secure *s, const kube_secure_options *o, char *err, size_t errlen)
{
    const kube_serving_options *so = o->serving;
    kube_authn_source_options ao = {
        .client = so->authentication_skip_lookup ? NULL : authn_client(s),
        .client_ca_file = is_set(so->client_ca_file) ? so->client_ca_file : NULL,
        .requestheader_ca_file =
            is_set(so->requestheader_client_ca_file) ? so->requestheader_client_ca_file : NULL,
        .allowed_names = &so->requestheader_allowed_names,
        .allowed_names_set = so->allowed_names_set,
        .username_headers = &so->requestheader_username_headers,
        .group_headers = &so->requestheader_group_headers,
        .extra_prefixes = &so->requestheader_extra_headers_prefix,
    };
    int rc = kube_authn_source_new(&ao, &s->authn, err, errlen);

    if (rc == KUBE_OK)
        rc = kube_authn_source_lookup(s->authn, so->authentication_tolerate_lookup_failure, err,
                                      errlen);
    if (rc == KUBE_OK && (rc = watch_authn_source(s, o, ao.client)) != KUBE_OK)
        snprintf(err, errlen, "cannot watch %s/%s: %s", KUBE_AUTHN_CONFIGMAP_NAMESPACE,
                 KUBE_AUTHN_CONFIGMAP_NAME, kube_strerror(rc));
    return rc;
}

/* The TLS settings of the options, checked. */
static int tls_settings(kube_secure *s, const kube_serving_options *so, int *version, char *err,
                        size_t errlen)
{
    kube_buf ciphers = KUBE_BUF_INIT;
    int rc = kube_serving_tls_version(so->tls_min_version, version, err, errlen);

    if (rc == KUBE_OK)
        rc = kube_serving_cipher_list(&so->tls_cipher_suites, &ciphers, err, errlen);
    if (rc == KUBE_OK && ciphers.len)
        s->cipher_list = kube_buf_take(&ciphers);
    kube_buf_free(&ciphers);
    return rc;
}

static int open_server(kube_secure *s, const kube_secure_options *o, char *err, size_t errlen)
{
    const kube_serving_options *so = o->serving;
    kube_server_options sv = {
        .bind_address = so->bind_address,
        .port = so->secure_port,
        .certs = s->certs,
        .ctx = {.authn = s->authn,
                .delegate = s->delegate,
                .handlers = o->handlers,
                .observer = o->observer},
        .workers = o->workers,
        .max_inflight = o->max_inflight,
        .request_timeout_ms = o->request_timeout_ms,
        .shutdown_timeout_ms = o->shutdown_timeout_ms,
        .shutdown_delay_ms = o->shutdown_delay_ms,
        .tls_handshake_timeout_ms = o->tls_handshake_timeout_ms,
        .read_header_timeout_ms = o->read_header_timeout_ms,
        .max_connections = o->max_connections,
        .permit_port_sharing = so->permit_port_sharing,
    };
    int rc = tls_settings(s, so, &sv.tls_min_version, err, errlen);

    sv.cipher_list = s->cipher_list;
    if (rc == KUBE_OK)
        rc = kube_server_new(&sv, &s->server, err, errlen);
    return rc;
}

int kube_secure_new(const kube_secure_options *o, kube_secure **out, char *err, size_t errlen)
{
    const kube_serving_options *so = o->serving;
    kube_secure *s = calloc(1, sizeof(*s));
    int rc;

    *out = NULL;
    if (!s)
        return KUBE_ENOMEM;
    s->client = o->client;
    kube_strlcpy(s->thread_name, o->thread_name ? o->thread_name : "", sizeof(s->thread_name));
    rc = open_clients(s, o, err, errlen);
    if (rc == KUBE_OK)
        rc = open_delegate(s, o);
    if (rc == KUBE_OK)
        rc = kube_certs_new_named(so->tls_cert_file, so->tls_private_key_file, so->cert_dir,
                                  so->pair_name, so->bind_address, &s->certs, err, errlen);
    if (rc == KUBE_OK)
        rc = open_authn_source(s, o, err, errlen);
    if (rc == KUBE_OK)
        rc = open_server(s, o, err, errlen);
    if (rc != KUBE_OK) {
        if (!*err)
            snprintf(err, errlen, "%s", kube_strerror(rc));
        kube_secure_free(s);
        return rc;
    }
    *out = s;
    return KUBE_OK;
}

int kube_secure_run(kube_secure *s)
{
    return kube_server_run(s->server);
}

static void *serve(void *arg)
{
    kube_secure *s = arg;

    if (s->thread_name[0])
        pthread_setname_np(pthread_self(), s->thread_name);
    kube_server_run(s->server);
    return NULL;
}

int kube_secure_start(kube_secure *s)
{
    if (pthread_create(&s->thread, NULL, serve, s) != 0)
        return KUBE_ENOMEM;
    s->started = 1;
    return KUBE_OK;
}

void kube_secure_stop(kube_secure *s)
{
    if (s && s->server)
        kube_server_stop(s->server);
}

void kube_secure_free(kube_secure *s)
{
    if (!s)
        return;
    if (s->started) {
        kube_secure_stop(s);
        pthread_join(s->thread, NULL);
    }
    kube_server_free(s->server);
    kube_factory_free(s->own_informers);
    kube_authn_source_free(s->authn);
    kube_certs_free(s->certs);
    kube_delegate_free(s->delegate);
    close_endpoint(&s->authz_ep);
    close_endpoint(&s->authn_ep);
    free(s->cipher_list);
    free(s);
}

int kube_secure_port(const kube_secure *s)
{
    return kube_server_port(s->server);
}

kube_authn_source *kube_secure_authn_source(kube_secure *s)
{
    return s->authn;
}
