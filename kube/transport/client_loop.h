/*
 * kube/transport/client_loop.h - one I/O thread that drives libcurl's multi interface
 * for kube/transport/client: every request/response exchange of a client runs on it,
 * so the transfers share the multi handle's connections (HTTP/2 streams on
 * one connection when the server offers h2, HTTP/1.1 keep-alive otherwise).
 *
 * Work reaches the loop as tasks (kube_http_task), each with a function the
 * loop thread calls: posted from any thread (kube_http_loop_post queues it
 * under a lock and wakes the loop only when it sleeps in poll(2): an
 * eventfd in its poll set, beside the sockets libcurl drives through
 * curl_multi_socket_action), or, from the loop thread itself, a transfer
 * to run (kube_http_loop_start) or a time to wake at (kube_http_loop_at).
 * The function runs once per post, start or at, on the loop thread; there
 * it may start the task's next step. Nothing ever waits for the loop: a
 * caller that needs the answer waits on its own (kube_client_do).
 * The callbacks of a transfer's handle (body, headers) run on the loop
 * thread too.
 *
 * Cancellation: kube_http_loop_cancel() ends every task queued, waiting
 * for its time or in flight at once: its function runs with
 * CURLE_ABORTED_BY_CALLBACK (a transfer is out of the multi handle by
 * then). Every later post runs its function the same way, and start and
 * at refuse. kube_http_loop_cancel returns once the loop has done so.
 * Irreversible.
 *
 * Threads: kube_http_loop_post and kube_http_loop_cancel from any thread
 * (cancel not from the loop's); kube_http_loop_start and kube_http_loop_at
 * only from the loop thread, i.e. from a task's function. The loop thread
 * is named (pthread_setname_np) as given to kube_http_loop_new.
 * Memory: kube_http_loop_new allocates the loop and starts its thread;
 * kube_http_loop_free stops the thread, closes the connections and frees
 * it (no task may be pending). Tasks and easy handles are the caller's and
 * must live until their function has run.
 */
#ifndef KUBE_CLIENT_LOOP_H
#define KUBE_CLIENT_LOOP_H

#include <curl/curl.h>
#include <stdint.h>

typedef struct kube_http_loop kube_http_loop;
typedef struct kube_http_task kube_http_task;

/* What the loop calls back: cc is CURLE_OK for a post or a time reached,
 * the transfer's result for a start, CURLE_ABORTED_BY_CALLBACK once the
 * loop is canceled. */
typedef void (*kube_http_task_fn)(kube_http_task *t, CURLcode cc);

/* One step of work for the loop; set fn (and easy for a start) before
 * handing it over. The other fields are the loop's. */
struct kube_http_task {
    kube_http_task_fn fn;
    CURL *easy;     /* the transfer kube_http_loop_start runs */
    int64_t due_ms; /* kube_http_loop_at's time (kube_now_ms clock) */
    struct kube_http_task *next, *prev;
};

/* Starts a loop thread named name (at most 15 characters) that multiplexes
 * HTTP/2 and keeps at most max_host_conns connections per host. Returns
 * KUBE_OK, KUBE_ENOMEM or KUBE_EIO (no thread). */
int kube_http_loop_new(const char *name, long max_host_conns, kube_http_loop **out);

/* Stops the thread and frees the loop and its connections. NULL is a no-op. */
void kube_http_loop_free(kube_http_loop *l);

/* Queues t: t->fn(t, CURLE_OK) runs on the loop thread soon
 * (CURLE_ABORTED_BY_CALLBACK after a cancel). Any thread. */
void kube_http_loop_post(kube_http_loop *l, kube_http_task *t);

/* Loop thread only: adds t->easy (not in any multi; its CURLOPT_PRIVATE
 * becomes the loop's) to the multi handle; t->fn(t, result) runs when the
 * transfer ended and the handle is out of the multi. Returns KUBE_OK, or
 * KUBE_ECANCELED (canceled loop) / KUBE_ENOMEM without calling fn. */
int kube_http_loop_start(kube_http_loop *l, kube_http_task *t);

/* Loop thread only: t->fn(t, CURLE_OK) runs once kube_now_ms() reaches
 * due_ms. Returns KUBE_OK, or KUBE_ECANCELED without calling fn. */
int kube_http_loop_at(kube_http_loop *l, kube_http_task *t, int64_t due_ms);

/* Ends every task queued, waiting or in flight (see above) and every later
 * one. Returns once the loop has run their functions. Not from the loop
 * thread. */
void kube_http_loop_cancel(kube_http_loop *l);

#endif
