/*
 * apiserver/app.h - stickyvm-apiserver assembled from its options: the
 * kube-apiserver clients (--kubeconfig, and --authentication-kubeconfig /
 * --authorization-kubeconfig when given), the one informer factory (one
 * hub thread: the VMs of virtualmachinepins and the authentication
 * ConfigMap; every lister of the daemon comes from it), the audit Event
 * recorder, the delegated authenticator and authorizer, the watched
 * authentication settings, the serving certificate, the metrics and the
 * TLS server. main.c runs one; integration tests run
 * one in-process.
 *
 * Threads: apis_app_run() blocks on the calling thread (the libwebsockets
 * service thread); apis_app_stop() may be called from any thread.
 * Memory: apis_app_new() copies what it needs from the options;
 * apis_app_free() frees everything (after apis_app_run() returned, or
 * instead of it).
 */
#ifndef APIS_APP_H
#define APIS_APP_H

#include <stddef.h>

#include "kube/serving/authsource.h"
#include "metrics.h"
#include "options.h"

typedef struct apis_app apis_app;

/* Builds everything and starts listening and watching. Errors (bad
 * kubeconfig, unreadable certificate, port in use, ...) are described in
 * err. */
int apis_app_new(const apis_options *o, apis_app **out, char *err, size_t errlen);
int apis_app_run(apis_app *a);
void apis_app_stop(apis_app *a);
void apis_app_free(apis_app *a);

#endif
