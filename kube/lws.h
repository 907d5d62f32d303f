/*
 * kube/lws.h - what both daemons' libwebsockets servers share: routing
 * libwebsockets' own log lines into klog, and the bind-address rule of
 * kube-scheduler's and k8s.io/apiserver's --bind-address flag.
 *
 * Memory: nothing is allocated.
 */
#ifndef KUBE_LWS_H
#define KUBE_LWS_H

/* Sends libwebsockets' errors and warnings to klog (errors as E lines,
 * the rest at -v 1). Call once before creating a context. */
void kube_lws_route_logs(void);

/* 1 when a --bind-address means "every interface" (NULL, "", 0.0.0.0, ::),
 * so the listener should not be bound to one interface. */
int kube_lws_is_any_address(const char *address);

#endif
