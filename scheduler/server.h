/*
 * scheduler/server.h - the scheduler's secure port (kube-scheduler's
 * --secure-port, default 10259): HTTPS over HTTP/1.1 on libwebsockets,
 * serving GET /healthz, /livez, /readyz (ok once ready() answers 1, else
 * 500 naming the failed check as kube's healthz handlers do) and /metrics
 * (Prometheus text format from a kube_metrics registry). Any other path
 * is 404 "404 page not found"; other methods 405.
 *
 * TLS: the given certificate and key files (--tls-cert-file,
 * --tls-private-key-file), or a self-signed ECDSA P-256 certificate for
 * "localhost", 127.0.0.1 and the host name, generated in memory (as
 * kube-scheduler does without --cert-dir).
 *
 * Not implemented: kube-scheduler's delegated authentication and
 * authorization of /metrics (every path is served anonymously).
 *
 * Threads: the server runs its own thread; new/port/free from one thread.
 * Memory: sched_server_new() allocates the server (options copied, the
 * registry and callbacks borrowed); sched_server_free() stops and frees.
 */
#ifndef SCHED_SERVER_H
#define SCHED_SERVER_H

#include <stddef.h>

#include "metrics.h"

typedef struct sched_server sched_server;

typedef struct sched_server_options {
    const char *bind_address; /* NULL/"": all addresses ("0.0.0.0") */
    int port;                 /* 0: an ephemeral port (see sched_server_port) */
    const char *cert_file;    /* PEM; NULL: self-signed in memory */
    const char *key_file;     /* PEM; required with cert_file */
    kube_metrics *metrics;    /* /metrics; NULL: empty */
    /* readyz check "sched-handler-sync" (NULL: always ready). */
    int (*ready)(void *ud);
    void *ud;
} sched_server_options;

/* Listens and starts the server thread. KUBE_OK, KUBE_EINVAL, KUBE_EIO
 * (cannot listen, unreadable certificate; message in err), KUBE_ENOMEM. */
int sched_server_new(const sched_server_options *o, sched_server **out, char *err, size_t errlen);
/* The port listened on. */
int sched_server_port(const sched_server *s);
/* Stops the thread and frees. NULL-safe. */
void sched_server_free(sched_server *s);

#endif
