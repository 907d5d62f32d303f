/*
 * kube/serving/lws.h - what both daemons' libwebsockets servers share: routing
 * libwebsockets' own log lines into klog (with repeated accept() failures
 * rate-limited), the bind-address rule of kube-scheduler's and
 * k8s.io/apiserver's --bind-address flag, and the connection cap that keeps
 * a listener from running out of descriptors.
 *
 * Memory: nothing is allocated. Threads: the log hook is thread-safe.
 */
#ifndef KUBE_LWS_H
#define KUBE_LWS_H

/* Sends libwebsockets' errors and warnings to klog (errors as E lines,
 * the rest at -v 1). An "accept:" failure (EMFILE, ENFILE, ...) is logged
 * at most once every 5 s, with the number of failures held back. Call
 * once before creating a context. */
void kube_lws_route_logs(void);

/* 1 when a --bind-address means "every interface" (NULL, "", 0.0.0.0, ::),
 * so the listener should not be bound to one interface. */
int kube_lws_is_any_address(const char *address);

/* The most connections a server may hold at once: wanted, lowered so that
 * reserve descriptors stay free below the soft RLIMIT_NOFILE (at least 1).
 * Given to lws as simultaneous_ssl_restriction, it makes lws stop polling
 * the listener at the cap instead of spinning on a failing accept(). */
int kube_lws_connection_limit(int wanted, int reserve);

#endif
