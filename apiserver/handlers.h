/*
 * apiserver/handlers.h - what stickyvm-apiserver serves behind the shared
 * secure server (kube/serving/server.h): its handler table. Routes
 * (apiserver/request.h) are:
 *   /healthz /livez: ok; /readyz: ok once the authentication settings
 *     were read and while the server is not shutting down (no identity);
 *   /, /apis, /apis/subresources.stickyvm.io[/v1]: discovery;
 *   /openapi/v2 (ETag, 304 on If-None-Match); /metrics;
 *   .../namespaces/NS/virtualmachines/NAME/pin and /unpin (GET, PUT,
 *     POST; body empty or {});
 *   .../[namespaces/NS/]virtualmachinepins[/NAME] (GET; vmpins.h).
 * Authorization: the verb of the method (k8s.io/apiserver's mapping: list
 * and watch for collections) on the route's resource and subresource and,
 * for pin and unpin, which change the VM whatever the method, "update" on
 * the subresource too. Other methods: 405 with Allow listing the route's
 * methods (GET, PUT, POST for pin and unpin; GET elsewhere).
 * Every pin and unpin is logged at the end of the request (apis_pin_log:
 * user, VM, code, latency), whatever its outcome.
 *
 * Threads: the table is read-only; serve() blocks on kube-apiserver only
 * for pin and unpin and virtualmachinepins (it says KUBE_EXCHANGE_BLOCKED
 * on the service thread).
 * Memory: apis_handlers_init() fills a caller-owned table whose ud points
 * at the caller-owned apis_handlers_ctx (both must outlive the server).
 */
#ifndef APIS_HANDLERS_H
#define APIS_HANDLERS_H

#include "kube/machinery/factory.h"
#include "kube/machinery/recorder.h"
#include "kube/serving/exchange.h"
#include "kube/serving/healthz.h"
#include "kube/transport/client.h"
#include "metrics.h"

struct apis_vmpins;

typedef struct apis_handlers_ctx {
    kube_client *client;   /* pin/unpin; NULL answers 503 */
    apis_metrics *metrics; /* /metrics; may be NULL */
    const char *pin_key;   /* the pin annotation; NULL: the default */
    /* virtualmachinepins (vmpins.h); NULL: its requests answer 503 */
    struct apis_vmpins *vmpins;
    kube_recorder *recorder; /* the pin audit Events; NULL: none */
    kube_factory *informers; /* the daemon's one factory (readyz's
                                informer-sync); NULL: no such check */
    kube_lister *nodes;      /* /unpin's local-volume guard; NULL: none */
    kube_healthz health;     /* filled by apis_handlers_init() */
} apis_handlers_ctx;

/* Fills h for ctx and ctx->health with the checks above. KUBE_OK, or
 * KUBE_ERANGE when the registry cannot hold them. */
int apis_handlers_init(kube_handlers *h, apis_handlers_ctx *ctx);

#endif
