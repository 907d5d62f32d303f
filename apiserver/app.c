/*
 * apiserver/app.c - stickyvm-apiserver assembled from its options: the
 * kube-apiserver client (--kubeconfig), the metrics, the one informer
 * factory (the VMs, Nodes and Pods of virtualmachinepins, the
 * authentication ConfigMap),
 * the audit Event recorder of the pin writes, its handler table and the
 * secure port of kube/serving/secure.h (delegated authentication and
 * authorization, the serving certificate, the TLS server). The contract is
 * in app.h.
 */
#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "kube/machinery/factory.h"
#include "kube/machinery/recorder.h"
#include "kube/serving/secure.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/types/pin.h"
#include "kube/util/errors.h"
#include "vmpins.h"

#define CLIENT_TIMEOUT_MS 30000
#define RECORDER_FLUSH_MS 2000 /* the audit Events still queued at exit */

struct apis_app {
    kube_config *cfg;
    kube_client *client;
    apis_metrics *metrics;
    kube_secure *secure;
    kube_factory *informers; /* the one factory: every lister comes from it */
    kube_recorder *recorder; /* the pin audit Events */
    apis_vmpins *vmpins;     /* virtualmachinepins */
    kube_lister *nodes;      /* /unpin's guard (the factory's) */
    char *pin_key;           /* --pin-annotation-key */
    kube_serving_observer observer;
    apis_handlers_ctx hctx;
    kube_handlers handlers;
};

static int open_client(apis_app *a, const apis_options *o, char *err, size_t errlen)
{
    kube_client_options co;
    int rc = kube_config_load(o->kubeconfig, &a->cfg, err, errlen);

    if (rc != KUBE_OK)
        return rc;
    kube_client_options_default(&co);
    co.qps = 0; /* kube-apiserver's priority and fairness bounds us */
    co.timeout_ms = CLIENT_TIMEOUT_MS;
    co.user_agent = "stickyvm-apiserver";
    rc = kube_client_new(a->cfg, &co, &a->client);
    if (rc != KUBE_OK)
        snprintf(err, errlen, "cannot create a client for %s: %s", kube_config_server(a->cfg),
                 kube_strerror(rc));
    return rc;
}

/* The factory, its VM, Node and Pod listers (virtualmachinepins; the
 * Node lister also guards /unpin) and the recorder. A piece of the daemon that reads a resource
 * takes its lister from a->informers here (or in open_secure), before apis_app_new() starts the
 * factory: handlers can only be added until then. */
static int open_informers(apis_app *a, char *err, size_t errlen)
{
    kube_informer_options no = {.resource = &KUBE_RES_NODES, .codec = &kube_node_codec};
    kube_recorder_options ro;
    int rc = kube_factory_new(a->client, &a->informers);

    if (rc == KUBE_OK && (rc = apis_vmpins_new(a->informers, a->pin_key, &a->vmpins)) != KUBE_OK)
        snprintf(err, errlen, "cannot start the VirtualMachine informer: %s", kube_strerror(rc));
    if (rc == KUBE_OK)
        rc = kube_factory_lister(a->informers, &no, &a->nodes);
    kube_recorder_options_default(&ro);
    ro.reporting_controller = "stickyvm-apiserver";
    if (rc == KUBE_OK)
        rc = kube_recorder_new(a->client, &ro, &a->recorder);
    return rc;
}

static int open_secure(apis_app *a, const apis_options *o, char *err, size_t errlen)
{
    kube_secure_options so = {
        .serving = &o->serving,
        .client = a->client,
        .informers = a->informers,
        .handlers = &a->handlers,
        .observer = &a->observer,
        .user_agent = "stickyvm-apiserver",
        .workers = o->workers,
        .max_inflight = o->max_requests_inflight,
        .max_connections = o->max_connections,
        .request_timeout_ms = o->request_timeout_ms,
        .shutdown_timeout_ms = o->shutdown_timeout_ms,
        .shutdown_delay_ms = o->shutdown_delay_ms,
        .tls_handshake_timeout_ms = o->tls_handshake_timeout_ms,
        .read_header_timeout_ms = o->read_header_timeout_ms,
    };

    apis_metrics_observer(a->metrics, &a->observer);
    a->hctx.client = a->client;
    a->hctx.metrics = a->metrics;
    a->hctx.pin_key = a->pin_key;
    a->hctx.vmpins = a->vmpins;
    a->hctx.recorder = a->recorder;
    a->hctx.informers = a->informers;
    a->hctx.nodes = a->nodes;
    if (apis_handlers_init(&a->handlers, &a->hctx) != KUBE_OK)
        return KUBE_ERANGE;
    return kube_secure_new(&so, &a->secure, err, errlen);
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
    rc = open_client(a, o, err, errlen);
    if (rc == KUBE_OK)
        rc = apis_metrics_new(&a->metrics);
    if (rc == KUBE_OK)
        rc = open_informers(a, err, errlen);
    if (rc == KUBE_OK)
        rc = open_secure(a, o, err, errlen);
    if (rc == KUBE_OK && (rc = kube_factory_start(a->informers)) != KUBE_OK)
        snprintf(err, errlen, "cannot start the informers: %s", kube_strerror(rc));
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
    return kube_secure_run(a->secure);
}

void apis_app_stop(apis_app *a)
{
    kube_secure_stop(a->secure);
}

void apis_app_free(apis_app *a)
{
    if (!a)
        return;
    kube_factory_stop(a->informers); /* no handler runs past here */
    kube_secure_free(a->secure);
    apis_vmpins_free(a->vmpins);
    kube_factory_free(a->informers);
    if (a->recorder)
        kube_recorder_stop(a->recorder, RECORDER_FLUSH_MS);
    kube_recorder_free(a->recorder);
    apis_metrics_free(a->metrics);
    kube_client_free(a->client);
    kube_config_free(a->cfg);
    free(a->pin_key);
    free(a);
}

apis_metrics *apis_app_metrics(apis_app *a)
{
    return a->metrics;
}

kube_authn_source *apis_app_authn_source(apis_app *a)
{
    return kube_secure_authn_source(a->secure);
}
