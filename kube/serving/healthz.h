/*
 * kube/serving/healthz.h - the health endpoints of both daemons,
 * k8s.io/apiserver's pkg/server/healthz: a registry of named checks, each
 * installed on some of /healthz, /livez and /readyz, and their answers.
 *
 *   /ROOT           every check of ROOT, in the order added (a root with
 *                   none runs "ping", as InstallHandler does): 200 "ok";
 *                   with ?verbose "[+]NAME ok" per check then "ROOT check
 *                   passed"; ?exclude=NAME (repeatable) skips NAME
 *                   ("[+]NAME excluded: ok"; a name matching no check adds
 *                   "warn: some health checks cannot be excluded: no
 *                   matches for ..."). A failure is 500 with every line
 *                   ("[-]NAME failed: reason withheld", the reason logged
 *                   at verbosity 1) then "ROOT check failed", verbose or
 *                   not.
 *   /ROOT/NAME      that one check: 200 "ok", or 500 "internal server
 *                   error: REASON"; a name ROOT does not have: 404.
 *
 * Both daemons keep one registry on their handler table; how a request
 * reaches it (without identity, or only on the always-allowed paths) is
 * the daemon's choice.
 *
 * Threads: a registry is filled before the server starts, then read-only;
 * the checks run on the service thread and must not block.
 * Memory: the registry is a caller-owned value; names are static strings
 * and uds borrowed (they must outlive the server).
 */
#ifndef KUBE_HEALTHZ_H
#define KUBE_HEALTHZ_H

#include <stddef.h>

#include "kube/serving/exchange.h"

/* The roots a check is installed on (a mask). */
enum { KUBE_HEALTHZ = 1, KUBE_LIVEZ = 2, KUBE_READYZ = 4, KUBE_HEALTHZ_ALL = 7 };

#define KUBE_HEALTHZ_MAX_CHECKS 8
#define KUBE_HEALTHZ_NAME_MAX 64 /* a check name's room, NUL included */
#define KUBE_HEALTHZ_MAX_EXCLUDES 8

/* A check: KUBE_OK when healthy, else a negative KUBE_E* with the reason
 * in why (size n). Must not block. */
typedef int (*kube_healthz_fn)(void *ud, const kube_health_state *hs, char *why, size_t n);

typedef struct kube_healthz_check {
    const char *name; /* static */
    unsigned roots;   /* KUBE_HEALTHZ | KUBE_LIVEZ | KUBE_READYZ */
    kube_healthz_fn fn;
    void *ud;
} kube_healthz_check;

/* A registry; zero it before the first kube_healthz_add(). */
typedef struct kube_healthz {
    kube_healthz_check checks[KUBE_HEALTHZ_MAX_CHECKS];
    size_t n;
} kube_healthz;

/* Adds a check on roots (name static, shorter than
 * KUBE_HEALTHZ_NAME_MAX; ud borrowed). KUBE_OK, or KUBE_ERANGE when the
 * registry is full or the name too long. */
int kube_healthz_add(kube_healthz *h, unsigned roots, const char *name, kube_healthz_fn fn,
                     void *ud);

/* k8s.io/apiserver's "ping": always healthy. */
int kube_healthz_ping(void *ud, const kube_health_state *hs, char *why, size_t n);
/* k8s.io/apiserver's "shutdown" readyz check: fails ("process is shutting
 * down") from the moment the server was asked to stop. */
int kube_healthz_shutdown(void *ud, const kube_health_state *hs, char *why, size_t n);

/* What a health request asks for. */
typedef struct kube_healthz_request {
    unsigned root;                     /* KUBE_HEALTHZ, KUBE_LIVEZ or KUBE_READYZ */
    char check[KUBE_HEALTHZ_NAME_MAX]; /* /ROOT/NAME; "" for /ROOT */
    int verbose;                       /* ?verbose */
    /* ?exclude names (the first KUBE_HEALTHZ_MAX_EXCLUDES; longer names
     * than a check's match none and are not kept) */
    char excludes[KUBE_HEALTHZ_MAX_EXCLUDES][KUBE_HEALTHZ_NAME_MAX];
    int n_excludes;
} kube_healthz_request;

/* Reads a request-target: 1 when its path is /healthz, /livez, /readyz or
 * one of their checks (/ROOT/NAME, NAME shorter than
 * KUBE_HEALTHZ_NAME_MAX), with r filled from the path and query; 0 (r
 * zeroed) for any other path. */
int kube_healthz_parse(const char *target, kube_healthz_request *r);

/* Runs the checks r asks for and answers x (text/plain). */
void kube_healthz_serve(const kube_healthz *h, const kube_healthz_request *r,
                        const kube_health_state *hs, kube_exchange *x);

#endif
