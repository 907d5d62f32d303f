/*
 * tests/integration/apis_fixture.h - stickyvm-apiserver in-process behind
 * the emulator's aggregation layer, as the integration tests that need it
 * start it: the emulator's Service stickyvm-system/stickyvm-apiserver
 * resolved to a free port, a serving certificate for
 * stickyvm-apiserver.stickyvm-system.svc issued by the emulator CA, the app
 * served on its own thread, and the APIService v1.subresources.stickyvm.io
 * with that CA as caBundle.
 *
 *     char flag[AF_FLAG_LEN];
 *     int port = harness_free_port();
 *     const char *args[] = {af_endpoint_flag(port, flag, sizeof(flag)), NULL};
 *     ... harness_start() with o.extra_args = args ...
 *     apis_options o;
 *     af_server s;
 *     af_options(h, port, &o);
 *     o.workers = 8;                      (any option the test needs)
 *     af_start(&o, &s);
 *     af_register_apiservice(h);
 *     ...
 *     af_stop(&s);
 *
 * The helpers assert through cmocka: a failure fails the running test.
 */
#ifndef STICKYVM_TESTS_APIS_FIXTURE_H
#define STICKYVM_TESTS_APIS_FIXTURE_H

#include <pthread.h>
#include <stddef.h>

#include "apiserver/app.h"
#include "apiserver/options.h"
#include "harness.h"

#define AF_FLAG_LEN 128

typedef struct af_server {
    apis_app *app;
    pthread_t thread;
    int running; /* the serving thread is not joined yet */
} af_server;

/* The emulator flag that resolves the Service
 * stickyvm-system/stickyvm-apiserver to 127.0.0.1:port, written into the
 * caller's buf (AF_FLAG_LEN is enough); returns buf. */
const char *af_endpoint_flag(int port, char *buf, size_t n);

/* Fills *o with the defaults for a server on 127.0.0.1:port that reads the
 * emulator through its admin kubeconfig and serves a certificate of its CA
 * (issued here), with a 5 s shutdown timeout. The caller may change any
 * option, then passes *o to af_start(), which frees it. */
void af_options(harness *h, int port, apis_options *o);

/* Builds the app from *o (freed here, whatever happens) and serves it on a
 * new thread, into *s; fails the test when it cannot start. af_stop()
 * frees what *s holds. */
void af_start(apis_options *o, af_server *s);

/* Waits for the serving thread to return, after the caller's
 * apis_app_stop() (the shutdown delay, then the drain). *s keeps the app
 * for af_stop() to free. */
void af_join(af_server *s);

/* Stops the app if it still runs, joins it and frees it. */
void af_stop(af_server *s);

/* Creates the APIService v1.subresources.stickyvm.io for the Service
 * stickyvm-system/stickyvm-apiserver, port 443, with the emulator's CA as
 * caBundle. Nothing to free. */
void af_register_apiservice(harness *h);

#endif
