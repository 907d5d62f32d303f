/*
 * apiserver/handlers.h - what stickyvm-apiserver serves behind the shared
 * secure server (kube/serving/server.h): its handler table. Routes
 * (apiserver/request.h) are:
 *   /healthz /livez: ok; /readyz: ok once the authentication settings
 *     were read and while the server is not shutting down (no identity);
 *   /, /apis, /apis/subresources.stickyvm.io[/v1]: discovery;
 *   /openapi/v2 (ETag, 304 on If-None-Match); /metrics;
 *   .../namespaces/NS/virtualmachines/NAME/pin and /unpin (GET, PUT,
 *     POST; body empty or {}).
 * Authorization: the verb of the method (k8s.io/apiserver's mapping) and,
 * for pin and unpin, which change the VM whatever the method, "update" on
 * the subresource too. Other methods: 405.
 *
 * Threads: the table is read-only; serve() blocks on kube-apiserver only
 * for pin and unpin (it says KUBE_EXCHANGE_BLOCKED on the service thread).
 * Memory: apis_handlers_init() fills a caller-owned table whose ud points
 * at the caller-owned apis_handlers_ctx (both must outlive the server).
 */
#ifndef APIS_HANDLERS_H
#define APIS_HANDLERS_H

#include "kube/serving/exchange.h"
#include "kube/transport/client.h"
#include "metrics.h"

typedef struct apis_handlers_ctx {
    kube_client *client;   /* pin/unpin; NULL answers 503 */
    apis_metrics *metrics; /* /metrics; may be NULL */
    const char *pin_key;   /* the pin annotation; NULL: the default */
} apis_handlers_ctx;

void apis_handlers_init(kube_handlers *h, apis_handlers_ctx *ctx);

#endif
