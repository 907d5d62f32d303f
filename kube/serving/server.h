/*
 * kube/serving/server.h - the TLS listener of both daemons (stickyvm-apiserver, stickyvm-scheduler)
 * on libwebsockets.
 *
 * libwebsockets runs one service thread (kube_server_run). Its vhost accepts
 * TLS connections in raw mode (ALPN http/1.1 only) and asks every client for
 * a certificate without requiring one (bearer-token clients have none); the
 * certificate is verified per request by the exchange (exchange.h) against
 * the current authentication settings. Bytes are parsed with kube/serving/httpreq.h,
 * incrementally (each received byte is looked at once, whatever the size
 * of the TLS records), and a request is authenticated and authorized on its
 * head: its body is read only for an authorized exchange (after a
 * "100 Continue" when the client sent Expect: 100-continue), and a request
 * answered before its body was read (401, 403, 400, ...) closes its
 * connection, so the body is never parsed.
 *
 * Nothing on the service thread waits on the network: an exchange that
 * needs kube-apiserver (TokenReview, SubjectAccessReview, a handler that blocks, such as the
 * apiserver's pin calls) moves to the worker pool and its answer comes back through a completion
 * queue and lws_cancel_service(), then goes out from the writeable
 * callback. A slow upstream therefore only holds a worker, never other
 * clients. Requests are bounded (kube/serving/httpreq.h limits), at most
 * max_inflight exchanges wait on workers (more are answered 429), the TLS
 * handshake must end within tls_handshake_timeout (10 s), a request's head
 * within read_header_timeout (32 s) of the handshake or of its first byte,
 * an idle keep-alive connection is closed after 90 s, and a request taking
 * longer than request_timeout has its connection closed.
 *
 * Connections: at most max_connections at once (1024), and never more than
 * RLIMIT_NOFILE leaves after a reserve of descriptors for upstream calls
 * (64 + 2 per worker + 16). At the cap a new connection closes the oldest
 * one that has not sent a byte of a request yet (a half-open handshake,
 * say), or is refused when there is none; 16 past the cap libwebsockets
 * stops polling the listener (new clients wait in the kernel's backlog)
 * instead of failing accept() with EMFILE in a loop. OpenSSL frees idle
 * connections' buffers, and after a burst (64+ connections) the heap is
 * trimmed when 8 or fewer remain.
 *
 * Shutdown (kube_server_stop, e.g. on SIGTERM): /readyz turns 500 at once
 * (k8s.io/apiserver's shutdown check), and for shutdown_delay the server
 * keeps serving as before (--shutdown-delay-duration: load balancers see
 * the failing /readyz and stop sending); then new connections are
 * closed, idle ones too, requests in flight finish (each connection then
 * closes) until the last is done or shutdown_timeout passes;
 * kube_server_run() then returns.
 *
 * A housekeeping timer (every second) reloads the serving certificate and
 * the CA flag files when they change.
 *
 * Memory: kube_server_new() allocates; the options' certs and context
 * members are borrowed and must outlive the server. kube_server_free()
 * frees it (after kube_server_run() returned, or instead of it).
 */
#ifndef KUBE_SERVING_SERVER_H
#define KUBE_SERVING_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "kube/serving/certs.h"
#include "kube/serving/exchange.h"

typedef struct kube_server kube_server;

typedef struct kube_server_options {
    const char *bind_address; /* NULL, "", "0.0.0.0" or "::": every address */
    int port;                 /* 0: a free port (see kube_server_port) */
    kube_certs *certs;
    kube_serving_context ctx; /* ready/ready_ud are set by the server */
    int workers;
    int max_inflight;
    int64_t request_timeout_ms;
    int64_t shutdown_timeout_ms;
    int64_t shutdown_delay_ms;        /* serving on after stop, /readyz failing; 0: none */
    int64_t tls_handshake_timeout_ms; /* 0: 10 s */
    int64_t read_header_timeout_ms;   /* 0: 32 s */
    int max_connections;              /* 0: 1024 */
    int tls_min_version;              /* OpenSSL's TLS1_x_VERSION; 0: TLS 1.2 */
    const char *cipher_list;          /* OpenSSL's TLS <= 1.2 list; NULL: its default */
    int permit_port_sharing;          /* SO_REUSEPORT on the listener */
} kube_server_options;

/* Creates the context and starts listening. Errors name the cause in err. */
int kube_server_new(const kube_server_options *o, kube_server **out, char *err, size_t errlen);
/* The port listened on. */
int kube_server_port(const kube_server *s);
/* Serves until kube_server_stop() and the drain end. Returns KUBE_OK. */
int kube_server_run(kube_server *s);
/* Asks the service loop to drain and return. Any thread; idempotent. */
void kube_server_stop(kube_server *s);
void kube_server_free(kube_server *s);

#endif
