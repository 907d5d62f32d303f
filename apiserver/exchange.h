/*
 * apiserver/exchange.h - one request through the pipeline of a
 * k8s.io/apiserver server: authentication, authorization, then the handler.
 *
 *   health paths (/healthz /readyz /livez): answered at once, no identity
 *   Upgrade requested                     -> 400, connection closed
 *   too many requests in flight           -> 429 (caller's decision)
 *   authenticate, in k8s.io/apiserver's order:
 *     1. front proxy: the connection's client certificate verifies against
 *        requestheader-client-ca-file (clientAuth, allowed names) and a
 *        username header is present -> user from X-Remote-* headers;
 *     2. client certificate verified against client-ca-file -> CN / O;
 *     3. Authorization: Bearer -> TokenReview (cached);
 *     none                                -> 401 Unauthorized.
 *     The X-Remote-* and Authorization headers are then stripped, whatever
 *     the outcome: nothing after authentication can see them.
 *   malformed path                        -> 400 BadRequest
 *   authorize: always-allow path/group, else SubjectAccessReview (cached)
 *     for the verb of the method and, for pin and unpin (they change the
 *     VM whatever the method), update on the subresource too
 *     denied -> 403 Forbidden with the reason; review failed -> 500
 *   the body: only now is it read (APIS_EXCHANGE_NEED_BODY), so nothing
 *     unauthenticated or unauthorized costs more than its headers
 *   method not served                     -> 405 MethodNotAllowed
 *   body other than empty or {}           -> 400 BadRequest
 *   handler: discovery, OpenAPI, /metrics, pin/unpin (kube-apiserver calls),
 *     virtualmachinepins (vmpins.h, from its informer).
 *
 * An exchange is started on the service thread (apis_exchange_new, which
 * reads everything it needs from the request, so the request may be freed
 * right after) and advanced with apis_exchange_run(x, may_block): with
 * may_block 0 it stops at the first step that needs kube-apiserver and says
 * APIS_EXCHANGE_BLOCKED, and the caller runs it again on a worker with
 * may_block 1. Once authorized it stops with APIS_EXCHANGE_NEED_BODY: the
 * caller reads the request body (sending 100 Continue when asked), hands it
 * over with apis_exchange_set_body() and runs the exchange again.
 *
 * Threads: an exchange is used by one thread at a time. The context is
 * shared and read-only.
 * Memory: apis_exchange_new() allocates; apis_exchange_free() frees,
 * wiping any bearer token it held. apis_peer_cache belongs to a connection
 * (apis_peer_cache_clear() frees what it holds).
 */
#ifndef APIS_EXCHANGE_H
#define APIS_EXCHANGE_H

#include <openssl/x509.h>
#include <stdint.h>
#include <time.h>

#include "authn.h"
#include "authsource.h"
#include "delegate.h"
#include "kube/serving/httpreq.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "metrics.h"

typedef struct apis_context {
    apis_authn_source *authn;
    apis_delegate *delegate;
    kube_client *client;    /* pin/unpin; NULL answers 503 */
    apis_metrics *metrics;  /* may be NULL */
    const char *pin_key;    /* the pin annotation; NULL: the default */
    int (*ready)(void *ud); /* extra /readyz condition, may be NULL */
    void *ready_ud;
    /* virtualmachinepins and the pin audit Events (vmpins.h); NULL: the
     * virtualmachinepins requests answer 503, pins record no Event */
    struct apis_vmpins *vmpins;
} apis_context;

/* The client certificate of a connection and what it proved under one
 * authentication snapshot: re-verified when the snapshot changes and when
 * the clock leaves the validity window of the certificates the peer sent
 * (k8s.io/apiserver verifies per request, so a certificate that expires on
 * a kept-alive connection stops authenticating). */
typedef struct apis_peer_cache {
    X509 *leaf;             /* a reference, or NULL */
    STACK_OF(X509) * chain; /* borrowed from the TLS session */
    apis_authn_config *cfg; /* the snapshot of the results below */
    int front_proxy;        /* KUBE_OK when a trusted front proxy */
    int cert_rc;            /* client certificate result */
    apis_user *cert_user;
    time_t valid_from, valid_until; /* the peer's chain, as of the check */
} apis_peer_cache;

void apis_peer_cache_clear(apis_peer_cache *pc);

enum { APIS_EXCHANGE_DONE = 0, APIS_EXCHANGE_BLOCKED = 1, APIS_EXCHANGE_NEED_BODY = 2 };

typedef struct apis_exchange apis_exchange;

/* Starts an exchange for req, from its head alone (whose authentication
 * headers are stripped by this call; its body is not looked at). pc may be NULL (no client
 * certificate). Returns KUBE_OK or KUBE_ENOMEM. */
int apis_exchange_new(const apis_context *ctx, kube_httpreq_request *req, apis_peer_cache *pc,
                      apis_exchange **out);
/* Advances the exchange. Returns APIS_EXCHANGE_DONE (answered),
 * APIS_EXCHANGE_NEED_BODY (authorized: hand over the body), or, only when
 * may_block is 0, APIS_EXCHANGE_BLOCKED. */
int apis_exchange_run(apis_exchange *x, int may_block);
/* The request body (borrowed for the call; may be NULL when empty), after
 * APIS_EXCHANGE_NEED_BODY. */
void apis_exchange_set_body(apis_exchange *x, const char *body, size_t len);
/* Sets the answer to a Status (used for 429, 503 and transport errors). */
int apis_exchange_fail(apis_exchange *x, int code, const char *reason, const char *message);

int apis_exchange_code(const apis_exchange *x);
/* Non-zero when the connection must close after the answer. */
int apis_exchange_must_close(const apis_exchange *x);
/* Appends the whole HTTP/1.1 response (status line, headers, body). */
int apis_exchange_serialize(const apis_exchange *x, int keep_alive, kube_buf *out);
/* The answer body (for tests). */
const char *apis_exchange_body(const apis_exchange *x, size_t *len);
/* Records the finished request in the metrics (duration since new()). */
void apis_exchange_observe(const apis_exchange *x);
/* The authenticated user, or NULL (for tests and logs). */
const apis_user *apis_exchange_user(const apis_exchange *x);
void apis_exchange_free(apis_exchange *x);

#endif
