/*
 * kube/transport/client_loop.h - one I/O thread that drives libcurl's multi interface
 * for kube/client: every request/response exchange of a client runs on it,
 * so the transfers share the multi handle's connections (HTTP/2 streams on
 * one connection when the server offers h2, HTTP/1.1 keep-alive otherwise).
 *
 * Callers prepare an easy handle (options, callbacks) on their own thread
 * and hand it to kube_http_loop_perform(), which queues it under a lock,
 * wakes the loop when it sleeps in poll(2) (an eventfd in its poll set,
 * beside the sockets libcurl drives through curl_multi_socket_action;
 * a busy loop takes the queue on its next turn unwoken) and waits on a
 * semaphore of its own until the loop has finished the transfer and
 * removed the handle from the multi (a semaphore rather than a condition
 * variable, so that the waiter does not wake into a lock the loop holds).
 * The callbacks of the handle (body, headers) run on the loop thread.
 *
 * Cancellation: kube_http_loop_cancel() aborts every transfer in flight or
 * queued at once (they end with CURLE_ABORTED_BY_CALLBACK), returning once
 * none is left in the multi handle, and makes every later perform fail the
 * same way without a transfer. Irreversible.
 *
 * Threads: kube_http_loop_perform and kube_http_loop_cancel may be called
 * from any number of threads; the loop thread is named (pthread_setname_np)
 * as given to kube_http_loop_new.
 * Memory: kube_http_loop_new allocates the loop and starts its thread;
 * kube_http_loop_free stops the thread, closes the connections and frees
 * it (no perform may be running). Easy handles stay the caller's.
 */
#ifndef KUBE_CLIENT_LOOP_H
#define KUBE_CLIENT_LOOP_H

#include <curl/curl.h>

typedef struct kube_http_loop kube_http_loop;

/* Starts a loop thread named name (at most 15 characters) that multiplexes
 * HTTP/2 and keeps at most max_host_conns connections per host. Returns
 * KUBE_OK, KUBE_ENOMEM or KUBE_EIO (no thread). */
int kube_http_loop_new(const char *name, long max_host_conns, kube_http_loop **out);

/* Stops the thread and frees the loop and its connections. NULL is a no-op. */
void kube_http_loop_free(kube_http_loop *l);

/* Runs the transfer of easy (not in any multi handle; its CURLOPT_PRIVATE
 * is the loop's) on the loop thread and returns its result once the handle
 * is back in the caller's hands. CURLE_ABORTED_BY_CALLBACK after
 * kube_http_loop_cancel. */
CURLcode kube_http_loop_perform(kube_http_loop *l, CURL *easy);

/* Aborts every transfer queued or in flight and fails every later one.
 * Returns once the loop has taken every transfer out of its multi handle
 * (none writes another byte). Not from the loop thread. */
void kube_http_loop_cancel(kube_http_loop *l);

#endif
