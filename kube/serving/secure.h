/*
 * kube/serving/secure.h - a daemon's secure port assembled from its
 * serving options (kube/serving/options.h) and its handler table: the
 * kube-apiserver clients of delegated authentication and authorization
 * (--authentication-kubeconfig / --authorization-kubeconfig, else the
 * daemon's own client), the lookup and watch of
 * kube-system/extension-apiserver-authentication (unless
 * --authentication-skip-lookup; a failed lookup is fatal unless
 * --authentication-tolerate-lookup-failure), the TokenReview /
 * SubjectAccessReview delegate with its caches and always-allow rules,
 * the serving certificate, and the TLS server (kube/serving/server.h).
 * stickyvm-apiserver runs it on its main thread; stickyvm-scheduler on a
 * thread of its own ("sched-https").
 *
 * Threads: kube_secure_run() blocks on the calling thread;
 * kube_secure_start() runs it on a new thread; kube_secure_stop() may be
 * called from any thread.
 * Memory: kube_secure_new() copies what it needs from the options; the
 * client, handlers and observer are borrowed and must outlive it.
 * kube_secure_free() stops and frees everything.
 */
#ifndef KUBE_SERVING_SECURE_H
#define KUBE_SERVING_SECURE_H

#include <stddef.h>
#include <stdint.h>

#include "kube/machinery/factory.h"
#include "kube/serving/authsource.h"
#include "kube/serving/exchange.h"
#include "kube/serving/options.h"
#include "kube/transport/client.h"

typedef struct kube_secure kube_secure;

typedef struct kube_secure_options {
    const kube_serving_options *serving; /* required */
    kube_client *client;                 /* the daemon's; NULL: no delegation */
    /* the daemon's one informer factory (listing through client, started
     * by the daemon after kube_secure_new(), stopped before
     * kube_secure_free()): the authentication ConfigMap is watched there.
     * NULL, or a lookup through --authentication-kubeconfig: the secure
     * port runs a factory of its own for it. */
    kube_factory *informers;
    const kube_handlers *handlers;         /* required */
    const kube_serving_observer *observer; /* may be NULL */
    const char *user_agent;                /* of the delegation clients */
    const char *thread_name;               /* kube_secure_start()'s; NULL: unnamed */
    /* the listener's bounds (kube/serving/server.h); 0: its defaults */
    int workers;
    int max_inflight;
    int max_connections;
    int64_t request_timeout_ms;
    int64_t shutdown_timeout_ms;
    int64_t shutdown_delay_ms; /* /readyz fails, serving goes on (server.h) */
    int64_t tls_handshake_timeout_ms;
    int64_t read_header_timeout_ms;
} kube_secure_options;

/* Builds everything and starts listening and watching. Errors (bad
 * kubeconfig, failed lookup, unreadable certificate, port in use, ...) are
 * described in err. */
int kube_secure_new(const kube_secure_options *o, kube_secure **out, char *err, size_t errlen);
/* Serves until kube_secure_stop() and the drain end (calling thread). */
int kube_secure_run(kube_secure *s);
/* Serves on a new thread. KUBE_OK or KUBE_ENOMEM. */
int kube_secure_start(kube_secure *s);
void kube_secure_stop(kube_secure *s);
/* Stops (joining a started thread) and frees. NULL-safe. */
void kube_secure_free(kube_secure *s);

int kube_secure_port(const kube_secure *s);
kube_authn_source *kube_secure_authn_source(kube_secure *s);

#endif
