/*
 * kube/serving/exchange.h - one request through the pipeline of a
 * k8s.io/apiserver server: authentication, authorization, then the
 * daemon's handler. Both daemons share it; each gives a handler table
 * (kube_handlers) that routes paths, names the authorization checks and
 * serves.
 *
 *   Upgrade requested                     -> 400, connection closed
 *   route (the handler parses the target; an error is answered 400 only
 *   once the request is authenticated)
 *   health paths: the handler's health() answers at once, no identity
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
 *   authorize: every check the handler's authz() names, in order:
 *     always-allow path/group, else SubjectAccessReview (cached);
 *     denied -> 403 Forbidden with the reason; review failed -> 500
 *   the body: only now is it read (KUBE_EXCHANGE_NEED_BODY), so nothing
 *     unauthenticated or unauthorized costs more than its headers
 *   handler: serve(): a whole answer, or a streamed one
 *     (kube_exchange_stream(), stream.h: a watch).
 *
 * An exchange is started on the service thread (kube_exchange_new, which
 * reads everything it needs from the request, so the request may be freed
 * right after) and advanced with kube_exchange_run(x, may_block): with
 * may_block 0 it stops at the first step that needs kube-apiserver (or a
 * handler that blocks) and says KUBE_EXCHANGE_BLOCKED, and the caller runs
 * it again on a worker with may_block 1. Once authorized it stops with
 * KUBE_EXCHANGE_NEED_BODY: the caller reads the request body (sending 100
 * Continue when asked), hands it over with kube_exchange_set_body() and
 * runs the exchange again.
 *
 * Threads: an exchange is used by one thread at a time. The context and
 * the handler table are shared and read-only.
 * Memory: kube_exchange_new() allocates; kube_exchange_free() frees,
 * wiping any bearer token it held, and frees the handler's state.
 * kube_peer_cache belongs to a connection (kube_peer_cache_clear() frees
 * what it holds).
 */
#ifndef KUBE_SERVING_EXCHANGE_H
#define KUBE_SERVING_EXCHANGE_H

#include <openssl/x509.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube/serving/authn.h"
#include "kube/serving/authsource.h"
#include "kube/serving/delegate.h"
#include "kube/serving/httpreq.h"
#include "kube/serving/observer.h"
#include "kube/serving/stream.h"
#include "kube/util/buf.h"

#define KUBE_CT_JSON "application/json"
#define KUBE_CT_TEXT "text/plain; charset=utf-8"
#define KUBE_CT_METRICS "text/plain; version=0.0.4; charset=utf-8"

typedef struct kube_exchange kube_exchange;

/* What the health handler may consult. */
typedef struct kube_health_state {
    int authn_loaded;  /* the authentication settings were read */
    int shutting_down; /* the server is draining */
} kube_health_state;

/*
 * A daemon's handlers. state is the handler's per-request data, made by
 * route() and freed by free_state(). Each callback but route() may be
 * NULL when the daemon has nothing to do there.
 */
typedef struct kube_handlers {
    /* Parses a request target. KUBE_OK with *state (may stay NULL),
     * KUBE_EBADREQUEST (the reason in msg, answered 400 after
     * authentication) or KUBE_ENOMEM. */
    int (*route)(void *ud, const char *method, const char *target, void **state, char *msg,
                 size_t n);
    /* Answers a health path without identity (kube_exchange_answer...) and
     * returns 1, or returns 0 for any other path. */
    int (*health)(void *ud, void *state, const kube_health_state *hs, kube_exchange *x);
    /* The i-th authorization check (0, 1, ...) of an authenticated request:
     * fills a (its user is set by the caller) and returns 1, or returns 0
     * when there is none left. */
    int (*authz)(void *ud, void *state, const char *method, int i, kube_authz_attrs *a);
    /* The request body (borrowed for the call; NULL when empty). */
    void (*body)(void *ud, void *state, const char *body, size_t len);
    /* Serves an authorized request: answers x and returns
     * KUBE_EXCHANGE_DONE, or, only when may_block is 0, returns
     * KUBE_EXCHANGE_BLOCKED to be called again on a worker. */
    int (*serve)(void *ud, void *state, kube_exchange *x, int may_block);
    /* The request's label for the observer ("" or NULL: none). */
    const char *(*label)(void *state);
    /* Logs the finished request (x answered, seconds since it started) the
     * daemon's way and returns 1, or returns 0 for the shared line at
     * verbosity 3. Called once per request whose target was routed. */
    int (*log)(void *ud, void *state, const kube_exchange *x, double seconds);
    void (*free_state)(void *state);
    void *ud;
} kube_handlers;

typedef struct kube_serving_context {
    kube_authn_source *authn;
    kube_delegate *delegate;
    const kube_handlers *handlers;
    const kube_serving_observer *observer; /* may be NULL */
    int (*ready)(void *ud);                /* 0 while shutting down; set by the server */
    void *ready_ud;
} kube_serving_context;

/* The client certificate of a connection and what it proved under one
 * authentication snapshot: re-verified when the snapshot changes and when
 * the clock leaves the validity window of the certificates the peer sent
 * (k8s.io/apiserver verifies per request, so a certificate that expires on
 * a kept-alive connection stops authenticating). */
typedef struct kube_peer_cache {
    X509 *leaf;             /* a reference, or NULL */
    STACK_OF(X509) * chain; /* borrowed from the TLS session */
    kube_authn_config *cfg; /* the snapshot of the results below */
    int front_proxy;        /* KUBE_OK when a trusted front proxy */
    int cert_rc;            /* client certificate result */
    kube_user *cert_user;
    time_t valid_from, valid_until; /* the peer's chain, as of the check */
} kube_peer_cache;

void kube_peer_cache_clear(kube_peer_cache *pc);

enum { KUBE_EXCHANGE_DONE = 0, KUBE_EXCHANGE_BLOCKED = 1, KUBE_EXCHANGE_NEED_BODY = 2 };

/* Starts an exchange for req, from its head alone (whose authentication
 * headers are stripped by this call; its body is not looked at). pc may be
 * NULL (no client certificate). Returns KUBE_OK or KUBE_ENOMEM. */
int kube_exchange_new(const kube_serving_context *ctx, kube_httpreq_request *req,
                      kube_peer_cache *pc, kube_exchange **out);
/* Advances the exchange. Returns KUBE_EXCHANGE_DONE (answered),
 * KUBE_EXCHANGE_NEED_BODY (authorized: hand over the body), or, only when
 * may_block is 0, KUBE_EXCHANGE_BLOCKED. */
int kube_exchange_run(kube_exchange *x, int may_block);
/* The request body (borrowed for the call; may be NULL when empty), after
 * KUBE_EXCHANGE_NEED_BODY. */
void kube_exchange_set_body(kube_exchange *x, const char *body, size_t len);

/* ---- answering (the handlers and the server) ---- */

/* Sets the answer to a Status (429 also gets Retry-After: 1). */
int kube_exchange_fail(kube_exchange *x, int code, const char *reason, const char *message);
/* Sets the answer to code with a copy of text (len bytes) as body. */
void kube_exchange_answer(kube_exchange *x, int code, const char *content_type, const char *text,
                          size_t len);
/* The answer body, emptied, for the handler to fill; then
 * kube_exchange_answer_filled() with what filling it returned (an error
 * turns the answer into an empty 500). */
kube_buf *kube_exchange_answer_body(kube_exchange *x);
void kube_exchange_answer_filled(kube_exchange *x, int rc, int code, const char *content_type);
/* Answers code with a body streamed as it is produced (stream.h:
 * chunked; content_type static). *out receives the producer's reference;
 * the server ends the stream at deadline_ms (kube_now_ms(); 0: never) and
 * calls cancel (may be NULL) once when the stream is cancelled. KUBE_OK or
 * KUBE_ENOMEM (nothing answered then). */
int kube_exchange_stream(kube_exchange *x, int code, const char *content_type, int64_t deadline_ms,
                         kube_stream_cancel_fn cancel, void *cancel_ud, kube_stream **out);
/* The streamed answer's stream for the server (its reference), or NULL;
 * after kube_exchange_serialize(). */
kube_stream *kube_exchange_take_stream(kube_exchange *x);
/* Extra answer headers: an ETag (static string), an Allow list (static
 * string, e.g. "GET"). */
void kube_exchange_set_etag(kube_exchange *x, const char *etag);
void kube_exchange_set_allow(kube_exchange *x, const char *methods);
/* What the health handler is given, for a handler serving a health path
 * to an authenticated request. */
void kube_exchange_health_state(const kube_exchange *x, kube_health_state *out);
/* The request's method and its If-None-Match header ("" when absent). */
const char *kube_exchange_method(const kube_exchange *x);
const char *kube_exchange_if_none_match(const kube_exchange *x);
/* The request's Accept header as sent, or NULL when absent. */
const char *kube_exchange_accept(const kube_exchange *x);

int kube_exchange_code(const kube_exchange *x);
/* Non-zero when the connection must close after the answer. */
int kube_exchange_must_close(const kube_exchange *x);
/* Appends the whole HTTP/1.1 response (status line, headers, body; a
 * streamed answer's head only). */
int kube_exchange_serialize(const kube_exchange *x, int keep_alive, kube_buf *out);
/* Reports the finished request to the observer (duration since new()) and
 * logs it (the handlers' log(), else a line at verbosity 3). */
void kube_exchange_observe(const kube_exchange *x);
/* The authenticated user, or NULL (for handlers, tests and logs). */
const kube_user *kube_exchange_user(const kube_exchange *x);
void kube_exchange_free(kube_exchange *x);

#endif
