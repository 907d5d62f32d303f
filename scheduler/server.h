/*
 * scheduler/server.h - the scheduler's secure port (kube-scheduler's
 * --secure-port, default 10259): the shared secure server of
 * kube/serving/secure.h (HTTPS, delegated authentication and authorization
 * as kube-scheduler's: front proxy, client certificates, TokenReview;
 * a SubjectAccessReview with nonResourceAttributes {path, verb: the
 * lower-case method} for every path not in
 * --authorization-always-allow-paths; no identity: 401, denied: 403) with
 * the scheduler's handlers:
 *
 *   /healthz, /livez   checks [leaderElection] with leader election, else
 *                      [ping]
 *   /readyz            [leaderElection,] shutdown, sched-handler-sync
 *                      (k8s.io/apiserver's healthz: "ok"; ?verbose lists
 *                      "[+]name ok" then "<name> check passed"; a failure
 *                      is 500 with "[-]name failed: reason withheld" and
 *                      "<name> check failed"; ?exclude=name skips one)
 *   /<root>/<check>    one check: "ok", or 500 "internal server error: why"
 *   /metrics           the registry, Prometheus text
 *   /metrics/resources kube_pod_resource_* (metrics_resources.h)
 *   /configz           {"componentconfig": <KubeSchedulerConfiguration>}
 *   anything else      404 "404 page not found" (after authorization)
 *
 * A path in --authorization-always-allow-paths (exact, or a prefix ending
 * in "*", as k8s.io/apiserver's path authorizer; by default /healthz,
 * /readyz, /livez) is served to anyone, without credentials. Methods other
 * than GET and HEAD: 405.
 *
 * The leaderElection check is client-go's HealthzAdaptor with
 * kube-scheduler's 20 s tolerance (kube/machinery/leader.h
 * kube_leader_check).
 *
 * TLS: --tls-cert-file/--tls-private-key-file, or a self-signed ECDSA
 * P-256 certificate generated at start (kept in memory without --cert-dir,
 * <cert-dir>/kube-scheduler.{crt,key} with it).
 *
 * Threads: the server runs its own thread ("sched-https") and worker pool;
 * new/port/free from one thread. The callbacks (ready, the pod walk) are
 * called from the server's threads.
 * Memory: sched_server_new() allocates the server (options copied; the
 * serving options, client, registry, leader, config and callbacks
 * borrowed, to outlive the server); sched_server_free() stops and frees.
 */
#ifndef SCHED_SERVER_H
#define SCHED_SERVER_H

#include <stddef.h>

#include "config/config.h"
#include "kube/machinery/leader.h"
#include "kube/serving/options.h"
#include "kube/transport/client.h"
#include "metrics.h"
#include "metrics_resources.h"

typedef struct sched_server sched_server;

typedef struct sched_server_options {
    const kube_serving_options *serving; /* required (sched_server_defaults()) */
    kube_client *client; /* delegation default (no --authentication/authorization-kubeconfig) */
    /* the scheduler's one informer factory (not started yet): the
     * authentication ConfigMap is watched there. NULL: a factory of the
     * secure port's own. */
    struct kube_factory *informers;
    kube_metrics *metrics;  /* /metrics; NULL: empty */
    int (*ready)(void *ud); /* check "sched-handler-sync" (NULL: always ready) */
    void *ud;
    kube_leader *leader;        /* check "leaderElection"; NULL: not electing */
    const sched_config *config; /* /configz; NULL: 404 */
    sched_pod_walk pods;        /* /metrics/resources; NULL: no pods */
    void *pods_ud;
} sched_server_options;

/* kube-scheduler's serving defaults: port 10259, no --cert-dir (an
 * in-memory certificate), pair name kube-scheduler,
 * --authentication-tolerate-lookup-failure true. */
int sched_server_defaults(kube_serving_options *o);

/* Listens and starts the server thread. KUBE_OK, KUBE_EINVAL, KUBE_EIO
 * (cannot listen, unreadable certificate, failed lookup; message in err),
 * KUBE_ENOMEM. */
int sched_server_new(const sched_server_options *o, sched_server **out, char *err, size_t errlen);
/* Stops the thread and frees. NULL-safe. */
void sched_server_free(sched_server *s);

#endif
