/*
 * kube/serving/server_int.h - what the listener's files share: the
 * connection, the job a worker runs, the server. server.c holds the
 * connections, the libwebsockets callbacks and the lifecycle;
 * server_request.c reads requests and hands their exchanges to the
 * workers. Not a public header.
 */
#ifndef KUBE_SERVING_SERVER_INT_H
#define KUBE_SERVING_SERVER_INT_H

#include "kube/serving/server.h"

#include <libwebsockets.h>
#include <malloc.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/lws.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/serving/pool.h"
#include "kube/serving/status.h"

#define WRITE_CHUNK 16384
#define MAX_BUFFERED (160 * 1024) /* pause reading a pipelining client past this */
#define IDLE_TIMEOUT_S 90
#define WRITE_TIMEOUT_S 30
#define HOUSEKEEPING_US (1 * LWS_US_PER_SEC)
#define FD_RESERVE_MIN 64 /* descriptors kept for upstream calls and files */
#define EVICT_SLACK                                                           \
    16                     /* connections lws may hold past the cap while the \
                            * oldest silent ones are being closed */
#define LWS_OWN_FDS 8      /* lws's listening sockets, its cancel pipe and spares */
#define TRIM_HIGH_WATER 64 /* after this many connections at once ... */
#define TRIM_LOW_WATER 8   /* ... give memory back when this few remain */
#define CONTINUE_LINE "HTTP/1.1 100 Continue\r\n\r\n"

typedef struct conn conn;
typedef struct job job;

/* Where a connection is: reading a request's head, running its exchange
 * (authentication, authorization, the handler), reading its body for an
 * authorized exchange, or writing the answer. */
enum phase { PH_HEAD, PH_EXCHANGE, PH_BODY, PH_ANSWER };

struct conn {
    conn *prev, *next;
    kube_server *srv;
    struct lws *wsi; /* NULL once closed */
    int refs;        /* service thread only */
    kube_buf in;     /* received bytes, from the current request's first */
    kube_buf out;
    size_t out_off;
    enum phase phase;
    kube_httpreq_parser parser;
    kube_httpreq_request req; /* the head of the request being served */
    size_t req_len;           /* its bytes in `in` once read whole */
    kube_exchange *x;         /* waiting for its body (PH_BODY) */
    int keep_alive;
    int started;        /* a request was received on it */
    int flushing;       /* the answer was handed to lws */
    int evicted;        /* unlinked by make_room(), closing */
    int handshake_done; /* 1: TLS handshake just done, 2: header timeout armed */
    int close_after;
    int rx_paused;
    int peer_loaded;
    kube_peer_cache pc;
    kube_stream *stream; /* a streamed answer being written (PH_ANSWER) */
};

struct job {
    job *next;
    kube_server *srv;
    conn *c;
    kube_exchange *x;
    int rc; /* what kube_exchange_run() said on the worker */
};

struct kube_server {
    struct lws_context *lws;
    struct lws_vhost *vhost;
    kube_certs *certs;
    kube_serving_context ctx;
    kube_pool *pool;
    kube_httpreq_limits limits;
    int port;
    int max_inflight;
    int max_conns;
    int tls_min_version;
    char *cipher_list;
    int handshake_timeout_s, header_timeout_s, request_timeout_s;
    int64_t shutdown_timeout_ms;
    /* service thread state */
    conn *conns;
    size_t n_conns, peak_conns;
    int inflight;
    int draining;
    int64_t drain_deadline_ms;
    int64_t shutdown_delay_ms;
    lws_sorted_usec_list_t housekeeping;
    unsigned char scratch[LWS_PRE + WRITE_CHUNK];
    /* shared */
    atomic_int stop_requested;
    atomic_int_fast64_t stop_at_ms; /* kube_now_ms() of the first stop */
    atomic_int accepting;
    pthread_mutex_t done_mu;
    job *done_head, *done_tail;
};

/* Drops a reference; the last frees the connection. */
void kube_srv_conn_unref(conn *c);

/* Arms the connection's libwebsockets timeout (secs 0: none). */
void kube_srv_set_timeout(conn *c, int secs);

/* Has libwebsockets close the connection (on its own thread, soon). */
void kube_srv_kill_conn(conn *c);

/* Appends to what is still to be written (a 100 Continue may be). */
void kube_srv_out_prepare(conn *c);

/* An answer given before an exchange exists (unparseable request). */
void kube_srv_answer_parse_error(conn *c, int code);

/* Answers the exchange. A request whose body was not read (answered before
 * it, as a 401 or 403 is) closes its connection: its bytes are never
 * parsed. */
void kube_srv_respond(conn *c, kube_exchange *x);

/* Takes the jobs the workers finished and moves their exchanges on
 * (libwebsockets thread). */
void kube_srv_drain_completions(kube_server *s);

/* Moves an exchange on after kube_exchange_run() said rc. */
void kube_srv_step(conn *c, kube_exchange *x, int rc);

/* Parses what arrived, as far as the connection's phase allows. */
void kube_srv_advance_input(conn *c);

#endif
