/*
 * kube/transport/poller.h - drives a curl multi handle through
 * curl_multi_socket_action from one poll(2) over the sockets libcurl asks
 * for (CURLMOPT_SOCKETFUNCTION), its timer (CURLMOPT_TIMERFUNCTION) and an
 * eventfd other threads write to wake the driving thread.
 *
 * Why socket_action rather than curl_multi_poll/curl_multi_perform: told
 * which socket is ready, libcurl 7.88 runs only the transfers on it and
 * skips the zero-timeout poll it makes for every transfer of the multi
 * otherwise (several system calls per received frame when many transfers,
 * such as informers' watches, share the handle).
 *
 * Used by the client's I/O thread (kube/transport/client_loop.c) and the
 * informers' hub thread (kube/machinery/informer.c).
 *
 * Threads: kube_poller_wake from any thread; everything else from the one
 * thread that drives the multi handle.
 * Memory: kube_poller_new allocates the poller and installs its callbacks
 * on multi, which stays the caller's; kube_poller_free frees the poller
 * (call it after curl_multi_cleanup, or before with no transfer left).
 */
#ifndef KUBE_POLLER_H
#define KUBE_POLLER_H

#include <curl/curl.h>

typedef struct kube_poller kube_poller;

/* A poller for multi. Returns KUBE_OK or KUBE_ENOMEM (*out NULL). */
int kube_poller_new(CURLM *multi, kube_poller **out);

/* Frees the poller and closes its eventfd. NULL is a no-op. */
void kube_poller_free(kube_poller *p);

/* Makes the current or next kube_poller_run return at once. Any thread. */
void kube_poller_wake(kube_poller *p);

/* Makes sure the driving thread comes round (its next kube_poller_run
 * returns without waiting) while writing the eventfd only when it is in,
 * or about to enter, poll(2): a busy thread is not woken again. Any
 * thread; for work the driving thread picks up between runs. */
void kube_poller_notify(kube_poller *p);

/* Waits at most max_ms (less when libcurl's timer is due sooner) for a
 * socket, the timer or a wakeup, and lets libcurl act on what happened.
 * With the timer already due (a transfer just added) it acts without
 * polling, though never twice in a row. The finished transfers are then
 * in curl_multi_info_read. */
void kube_poller_run(kube_poller *p, int max_ms);

#endif
