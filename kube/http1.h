/*
 * kube/http1.h - a lean HTTP/1.1 keep-alive client over OpenSSL, for the
 * request/response exchanges of kube/client (writes such as bindings,
 * events and patches, and plain GETs). Watches stay on libcurl.
 *
 * Why: libcurl spends ~140K instructions on each small request (option
 * handling, URL parsing, printf-built headers); a scheduler makes two such
 * requests per pod (binding, Scheduled event). This client writes the
 * request with one TLS write and parses the answer in place, on connections
 * kept in a pool (most recently used first).
 *
 * TLS: one SSL_CTX per target, built once: TLS 1.2 or newer, the peer
 * certificate verified against the CA PEM (or the system store when none is
 * given) and the verify name (DNS name, or IP address literal) unless
 * insecure; SNI carries the verify name when it is a DNS name; ALPN offers
 * http/1.1 only; the client certificate and key, when given, are presented.
 * Socket writes use MSG_NOSIGNAL, so a peer that closed never raises SIGPIPE.
 *
 * Connections: a pooled connection that became readable while idle (the
 * server closed it) is dropped before use. If a reused connection fails
 * before any byte of the answer arrived, the request is sent once more on a
 * new connection (as libcurl does). A connection is pooled again only after
 * a complete answer that allows keep-alive.
 *
 * Answers: status line and headers up to 64 KiB; body by Content-Length,
 * chunked transfer coding, or until the server closes; 1xx interim answers
 * are skipped; no content coding is requested (no Accept-Encoding).
 *
 * Errors: negative KUBE_E* codes (kube/errors.h): KUBE_EIO (connect, TLS,
 * protocol or connection failure; err says which), KUBE_ETIMEDOUT,
 * KUBE_ECANCELED (*cancel became non-zero), KUBE_ENOMEM, KUBE_ECONFIG (bad
 * TLS material at kube_h1_new).
 *
 * Threads: kube_h1_exchange may be called from any number of threads at once.
 * Memory: kube_h1_new allocates the client, kube_h1_free frees it and closes
 * its idle connections (no exchange may be running). The target's strings
 * and PEM blobs are copied or parsed at kube_h1_new. A response body is a
 * kube_buf the caller frees (kube_buf_free), also on error.
 */
#ifndef KUBE_HTTP1_H
#define KUBE_HTTP1_H

#include <stdatomic.h>
#include <stddef.h>

#include "kube/buf.h"
#include "kube/tls.h"

typedef struct kube_h1 kube_h1;

typedef struct kube_h1_target {
    int tls;                 /* https (1) or http (0) */
    const char *host;        /* where to connect: DNS name or IP literal (no brackets) */
    int port;
    const char *verify_name; /* certificate check and SNI; NULL: host */
    const kube_tls *material;/* CA, client certificate and key (borrowed for
                                kube_h1_new); NULL or no CA: the system's store */
    int insecure;            /* skip peer verification (kubeconfig insecure-skip-tls-verify) */
    long connect_timeout_ms;
} kube_h1_target;

typedef struct kube_h1_request {
    const char *method;      /* GET, POST, PUT, PATCH, DELETE */
    const char *target;      /* path and query, starting with "/" */
    const char *headers;     /* extra header lines, each ending in "\r\n" (Host,
                                and Content-Length are added) */
    const char *body;        /* may be NULL */
    size_t len;
    long timeout_ms;         /* whole exchange */
    atomic_int *cancel;      /* may be NULL; checked at least every 200 ms */
} kube_h1_request;

typedef struct kube_h1_response {
    long code;
    long retry_after_s;      /* Retry-After in seconds, -1 when absent */
    int connected;           /* a connection was up when the exchange failed */
    kube_buf body;
} kube_h1_response;

/* Builds the TLS context for t. Returns KUBE_OK, KUBE_ECONFIG (the system's
 * trust store cannot be loaded; err says so), KUBE_EINVAL or KUBE_ENOMEM. */
int kube_h1_new(const kube_h1_target *t, kube_h1 **out, char *err, size_t errlen);
void kube_h1_free(kube_h1 *h);

/* Sends q and reads the whole answer into r (r->body must be KUBE_BUF_INIT
 * or empty). Returns KUBE_OK when an answer of any code arrived; else an
 * error above with a reason in err. */
int kube_h1_exchange(kube_h1 *h, const kube_h1_request *q, kube_h1_response *r, char *err,
                     size_t errlen);

#endif
