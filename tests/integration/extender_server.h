/*
 * tests/integration/extender_server.h - a scheduler extender for the
 * tests: a plain HTTP/1.1 server on 127.0.0.1, or HTTPS (one thread, one
 * request per connection, requests read with kube/serving/httpreq.h) that hands every
 * POST /<verb> body, parsed, to the test's handler and answers what it
 * returns. Every request is recorded (verb and body) for assertions.
 *
 *     es_server *es;
 *     assert_int_equal(es_start(handler, ud, &es), KUBE_OK);
 *     ... urlPrefix: http://127.0.0.1:<es_port(es)> ...
 *     cJSON *args = es_last(es, "filter");   // a copy, or NULL
 *     es_stop(es);
 *
 * Threads: the handler runs on the server's thread; es_count / es_last
 * from any thread. Memory: es_start allocates the server, es_stop frees
 * it; the handler returns a malloc'd body the server frees.
 */
#ifndef STICKYVM_TESTS_EXTENDER_SERVER_H
#define STICKYVM_TESTS_EXTENDER_SERVER_H

#include <cjson/cJSON.h>

typedef struct es_server es_server;

/* The answer to POST /<verb> with body args (NULL when not JSON): a
 * malloc'd JSON text, *code the HTTP status (200 unless set). */
typedef char *(*es_handler)(void *ud, const char *verb, const cJSON *args, int *code);

/* Listens on a free port of 127.0.0.1. KUBE_OK or KUBE_EIO / KUBE_ENOMEM. */
int es_start(es_handler fn, void *ud, es_server **out);
/* The same over TLS with that serving certificate and key (PEM files). */
int es_start_tls(es_handler fn, void *ud, const char *cert_file, const char *key_file,
                 es_server **out);
int es_port(const es_server *s);
/* Stops the thread, closes the socket and frees s. NULL-safe. */
void es_stop(es_server *s);

/* Requests received for verb so far. */
int es_count(es_server *s, const char *verb);
/* A copy of the last body received for verb (caller frees), or NULL. */
cJSON *es_last(es_server *s, const char *verb);

#endif
