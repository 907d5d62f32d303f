/*
 * apiserver/metrics.h - Prometheus metrics of stickyvm-apiserver, rendered
 * in the text exposition format (version 0.0.4) at /metrics:
 *
 *   stickyvm_apiserver_request_total{verb,subresource,code}       counter
 *   stickyvm_apiserver_request_duration_seconds{verb,subresource} histogram
 *   stickyvm_apiserver_inflight_requests                          gauge
 *   stickyvm_apiserver_authentication_total{result}                counter
 *   stickyvm_apiserver_authorization_total{result}                 counter
 *   stickyvm_apiserver_pin_conflict_retries_total                  counter
 *   stickyvm_apiserver_pin_requests_total{subresource,user,code}   counter
 *
 * verb is the request method (GET, PUT, POST, ...; anything unusual is
 * "other"), subresource is "pin", "unpin" or "" for non-resource paths,
 * so the number of series stays bounded whatever clients send. user is the
 * authenticated user of a pin or unpin ("" for none, 401): the first
 * APIS_METRICS_MAX_USERS distinct users keep their name until the process
 * exits, later ones count as "(other)" (a bound on the series a flood of
 * identities can make; the request log names every user).
 *
 * Threads: every function is thread-safe.
 * Memory: apis_metrics_new() allocates, apis_metrics_free() frees;
 * apis_metrics_render() appends to a caller-owned kube_buf.
 */
#ifndef APIS_METRICS_H
#define APIS_METRICS_H

#include "kube/serving/observer.h"
#include "kube/util/buf.h"

typedef struct apis_metrics apis_metrics;

#define APIS_METRICS_MAX_USERS 100

int apis_metrics_new(apis_metrics **out);
void apis_metrics_free(apis_metrics *m);

/* Records one finished request. */
void apis_metrics_observe(apis_metrics *m, const char *method, const char *subresource, int code,
                          double seconds);
void apis_metrics_inflight(apis_metrics *m, int delta);
void apis_metrics_authn(apis_metrics *m, kube_authn_result r);
void apis_metrics_authz(apis_metrics *m, kube_authz_result r);
void apis_metrics_conflict_retry(apis_metrics *m);
/* Counts one answered pin or unpin (subresource "pin"/"unpin") by user
 * (NULL or "": none) and code. m may be NULL. */
void apis_metrics_pin_request(apis_metrics *m, const char *subresource, const char *user, int code);

int apis_metrics_render(apis_metrics *m, kube_buf *out);

/* An observer of the secure server (kube/serving/observer.h) recording
 * into m; borrowed by the server, so m must outlive it. */
void apis_metrics_observer(apis_metrics *m, kube_serving_observer *out);

#endif
