/*
 * apiserver/metrics.c - Prometheus metrics of stickyvm-apiserver, rendered in
 * the text exposition format (version 0.0.4) at /metrics, on the shared
 * registry (kube/util/metrics.h):
 *
 * stickyvm_apiserver_request_total{verb,subresource,code}       counter
 * stickyvm_apiserver_request_duration_seconds{verb,subresource} histogram
 * stickyvm_apiserver_inflight_requests                          gauge
 * stickyvm_apiserver_authentication_total{result}                counter
 * stickyvm_apiserver_authorization_total{result}                 counter
 * stickyvm_apiserver_pin_conflict_retries_total                  counter
 * stickyvm_apiserver_pin_requests_total{subresource,user,code}   counter
 *
 * verb is the request method (GET, PUT, POST, ...; anything unusual is
 * "other"), subresource is "pin", "unpin" or "" for non-resource paths, so
 * the number of series stays bounded whatever clients send; user is one of
 * the first APIS_METRICS_MAX_USERS users seen, else "(other)". The contract
 * is in metrics.h.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/metrics.h"
#include "kube/util/metrics_testing.h"
#include "kube/util/strmap.h"

static const char *const verbs[] = {"GET",    "PUT",  "POST",    "PATCH",
                                    "DELETE", "HEAD", "OPTIONS", "other"};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))
static const char *const subresources[] = {"pin", "unpin", ""};
#define N_SUBS (sizeof(subresources) / sizeof(subresources[0]))
static const double bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

static const char *const authn_names[KUBE_AUTHN_RESULT_COUNT] = {"front-proxy", "client-cert",
                                                                 "token", "failed"};
static const char *const authz_names[KUBE_AUTHZ_RESULT_COUNT] = {"always-allowed", "cache-hit",
                                                                 "allowed", "denied", "error"};

static const char *const L_REQUEST[] = {"verb", "subresource", "code"};
static const char *const L_LATENCY[] = {"verb", "subresource"};
static const char *const L_RESULT[] = {"result"};
static const char *const L_PIN[] = {"subresource", "user", "code"};

struct apis_metrics {
    kube_metrics *reg;
    kube_metric *requests, *latency, *authn_total, *authz_total, *pin_requests;
    pthread_mutex_t users_lock;
    kube_strmap users; /* the users with their own label (values: m) */
    kube_metric_child *inflight, *conflict_retries;
    kube_metric_child *authn[KUBE_AUTHN_RESULT_COUNT];
    kube_metric_child *authz[KUBE_AUTHZ_RESULT_COUNT];
};

/* Registers one family into m's registry. */
static int add(apis_metrics *m, const char *name, const char *help, kube_metric_type type,
               const char *const *labels, size_t n_labels, kube_metric **out)
{
    kube_metric_opts o = {.name = name,
                          .help = help,
                          .type = type,
                          .stability = KUBE_STABILITY_ALPHA,
                          .labels = labels,
                          .n_labels = n_labels};
    if (type == KUBE_METRIC_HISTOGRAM) {
        o.buckets = bounds;
        o.n_buckets = sizeof(bounds) / sizeof(bounds[0]);
    }
    return kube_metrics_register(m->reg, &o, out);
}

/* The families, and the children always shown (zero until used). */
static int register_all(apis_metrics *m)
{
    kube_metric *inflight = NULL, *retries = NULL;
    int rc = add(m, "stickyvm_apiserver_request_total",
                 "Requests answered, by verb, subresource and HTTP code.", KUBE_METRIC_COUNTER,
                 L_REQUEST, 3, &m->requests);
    if (rc == KUBE_OK)
        rc = add(m, "stickyvm_apiserver_request_duration_seconds",
                 "Time from a complete request to its answer being queued, by verb and "
                 "subresource.",
                 KUBE_METRIC_HISTOGRAM, L_LATENCY, 2, &m->latency);
    if (rc == KUBE_OK)
        rc = add(m, "stickyvm_apiserver_inflight_requests", "Requests being served.",
                 KUBE_METRIC_GAUGE, NULL, 0, &inflight);
    if (rc == KUBE_OK)
        rc = add(m, "stickyvm_apiserver_authentication_total", "Authentication outcomes by method.",
                 KUBE_METRIC_COUNTER, L_RESULT, 1, &m->authn_total);
    if (rc == KUBE_OK)
        rc = add(m, "stickyvm_apiserver_authorization_total", "Authorization outcomes.",
                 KUBE_METRIC_COUNTER, L_RESULT, 1, &m->authz_total);
    if (rc == KUBE_OK)
        rc = add(m, "stickyvm_apiserver_pin_conflict_retries_total",
                 "Writes of the pin annotation retried after a resourceVersion conflict.",
                 KUBE_METRIC_COUNTER, NULL, 0, &retries);
    if (rc == KUBE_OK)
        rc = add(m, "stickyvm_apiserver_pin_requests_total",
                 "Pin and unpin requests answered, by subresource, user and HTTP code.",
                 KUBE_METRIC_COUNTER, L_PIN, 3, &m->pin_requests);
    if (rc != KUBE_OK)
        return rc;
    m->inflight = kube_metric_with(inflight, NULL);
    m->conflict_retries = kube_metric_with(retries, NULL);
    for (size_t i = 0; i < KUBE_AUTHN_RESULT_COUNT; i++)
        m->authn[i] = kube_metric_with_static(m->authn_total, &authn_names[i]);
    for (size_t i = 0; i < KUBE_AUTHZ_RESULT_COUNT; i++)
        m->authz[i] = kube_metric_with_static(m->authz_total, &authz_names[i]);
    return m->inflight && m->conflict_retries ? KUBE_OK : KUBE_ENOMEM;
}

int apis_metrics_new(apis_metrics **out)
{
    apis_metrics *m = calloc(1, sizeof(*m));
    int rc = m ? kube_metrics_new(&m->reg) : KUBE_ENOMEM;

    if (m)
        pthread_mutex_init(&m->users_lock, NULL);
    if (rc == KUBE_OK)
        rc = register_all(m);
    if (rc != KUBE_OK) {
        apis_metrics_free(m);
        m = NULL;
    }
    *out = m;
    return rc;
}

void apis_metrics_free(apis_metrics *m)
{
    if (!m)
        return;
    kube_metrics_free(m->reg);
    kube_strmap_free(&m->users);
    pthread_mutex_destroy(&m->users_lock);
    free(m);
}

/* The label a request method counts under (bounded: "other" for the rest). */
static const char *verb_label(const char *method)
{
    for (size_t i = 0; i + 1 < N_VERBS; i++)
        if (method && strcmp(verbs[i], method) == 0)
            return verbs[i];
    return "other";
}

/* The label of a subresource ("" for non-resource paths and the rest). */
static const char *sub_label(const char *sub)
{
    for (size_t i = 0; i + 1 < N_SUBS; i++)
        if (sub && strcmp(subresources[i], sub) == 0)
            return subresources[i];
    return "";
}

void apis_metrics_observe(apis_metrics *m, const char *method, const char *subresource, int code,
                          double seconds)
{
    char code_s[16];
    const char *req[3] = {verb_label(method), sub_label(subresource), code_s};

    snprintf(code_s, sizeof(code_s), "%d", code);
    kube_metric_add(m->requests, req, 1);
    kube_metric_observe(m->latency, req, seconds);
}

/* The label of a user: "" for none, the name for the first
 * APIS_METRICS_MAX_USERS names seen, "(other)" once they are taken. */
static const char *user_label(apis_metrics *m, const char *user)
{
    const char *label = "(other)";

    if (!user || !*user)
        return "";
    pthread_mutex_lock(&m->users_lock);
    if (kube_strmap_get(&m->users, user) || (kube_strmap_len(&m->users) < APIS_METRICS_MAX_USERS &&
                                             kube_strmap_put(&m->users, user, m, NULL) == KUBE_OK))
        label = user;
    pthread_mutex_unlock(&m->users_lock);
    return label;
}

void apis_metrics_pin_request(apis_metrics *m, const char *subresource, const char *user, int code)
{
    char code_s[16];
    const char *v[3] = {sub_label(subresource), NULL, code_s};

    if (!m)
        return;
    v[1] = user_label(m, user);
    snprintf(code_s, sizeof(code_s), "%d", code);
    kube_metric_add(m->pin_requests, v, 1);
}

void apis_metrics_inflight(apis_metrics *m, int delta)
{
    kube_metric_child_add(m->inflight, delta);
}

void apis_metrics_authn(apis_metrics *m, kube_authn_result r)
{
    if ((unsigned)r < KUBE_AUTHN_RESULT_COUNT)
        kube_metric_child_add(m->authn[r], 1);
}

void apis_metrics_authz(apis_metrics *m, kube_authz_result r)
{
    if ((unsigned)r < KUBE_AUTHZ_RESULT_COUNT)
        kube_metric_child_add(m->authz[r], 1);
}

void apis_metrics_conflict_retry(apis_metrics *m)
{
    kube_metric_child_add(m->conflict_retries, 1);
}

unsigned long apis_metrics_requests_with_code(apis_metrics *m, int code)
{
    char code_s[16];
    double n = 0;

    snprintf(code_s, sizeof(code_s), "%d", code);
    for (size_t v = 0; v < N_VERBS; v++)
        for (size_t s = 0; s < N_SUBS; s++) {
            const char *req[3] = {verbs[v], subresources[s], code_s};
            n += kube_metric_value(m->requests, req);
        }
    return (unsigned long)n;
}

unsigned long apis_metrics_authz_count(apis_metrics *m, kube_authz_result r)
{
    return (unsigned)r < KUBE_AUTHZ_RESULT_COUNT
               ? (unsigned long)kube_metric_child_value(m->authz[r])
               : 0;
}

int apis_metrics_render(apis_metrics *m, kube_buf *out)
{
    return kube_metrics_write(m->reg, out);
}

static void observe_request(void *ud, const char *method, const char *label, int code,
                            double seconds)
{
    apis_metrics_observe(ud, method, label, code, seconds);
}

static void observe_inflight(void *ud, int delta)
{
    apis_metrics_inflight(ud, delta);
}

static void observe_authn(void *ud, kube_authn_result r)
{
    apis_metrics_authn(ud, r);
}

static void observe_authz(void *ud, kube_authz_result r)
{
    apis_metrics_authz(ud, r);
}

void apis_metrics_observer(apis_metrics *m, kube_serving_observer *out)
{
    out->request = observe_request;
    out->inflight = observe_inflight;
    out->authn = observe_authn;
    out->authz = observe_authz;
    out->ud = m;
}
