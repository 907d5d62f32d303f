/*
 * apiserver/metrics.c - Prometheus metrics of stickyvm-apiserver, rendered in
 * the text exposition format (version 0.0.4) at /metrics: *
 * stickyvm_apiserver_request_total{verb,subresource,code}       counter
 * stickyvm_apiserver_request_duration_seconds{verb,subresource} histogram
 * stickyvm_apiserver_inflight_requests                          gauge
 * stickyvm_apiserver_authentication_total{result}                counter
 * stickyvm_apiserver_authorization_total{result}                 counter
 * stickyvm_apiserver_pin_conflict_retries_total                  counter *
 * verb is the request method (GET, PUT, POST, ...; anything unusual is
 * "other"), subresource is "pin", "unpin" or "" for non-resource paths, so
 * the number of series stays bounded whatever clients send. The contract is
 * in metrics.h.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube/errors.h"

static const char *const verbs[] = {"GET", "PUT", "POST", "PATCH", "DELETE", "HEAD", "OPTIONS",
                                    "other"};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))
static const char *const subresources[] = {"pin", "unpin", ""};
#define N_SUBS (sizeof(subresources) / sizeof(subresources[0]))
static const double bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
#define N_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))
#define MAX_CODES 32

static const char *const authn_names[APIS_AUTHN_RESULT_COUNT] = {"front-proxy", "client-cert",
                                                                  "token", "failed"};
static const char *const authz_names[APIS_AUTHZ_RESULT_COUNT] = {
    "always-allowed", "cache-hit", "allowed", "denied", "error"};

typedef struct histogram {
    unsigned long buckets[N_BOUNDS];
    unsigned long count;
    double sum;
} histogram;

struct apis_metrics {
    pthread_mutex_t mu;
    int codes[MAX_CODES];
    size_t n_codes;
    unsigned long requests[N_VERBS][N_SUBS][MAX_CODES];
    histogram latency[N_VERBS][N_SUBS];
    long inflight;
    unsigned long authn[APIS_AUTHN_RESULT_COUNT];
    unsigned long authz[APIS_AUTHZ_RESULT_COUNT];
    unsigned long conflict_retries;
};

int apis_metrics_new(apis_metrics **out)
{
    apis_metrics *m = calloc(1, sizeof(*m));

    *out = m;
    if (!m)
        return KUBE_ENOMEM;
    pthread_mutex_init(&m->mu, NULL);
    return KUBE_OK;
}

void apis_metrics_free(apis_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static size_t verb_index(const char *method)
{
    for (size_t i = 0; i + 1 < N_VERBS; i++)
        if (strcmp(method, verbs[i]) == 0)
            return i;
    return N_VERBS - 1;
}

static size_t sub_index(const char *sub)
{
    for (size_t i = 0; i + 1 < N_SUBS; i++)
        if (strcmp(sub, subresources[i]) == 0)
            return i;
    return N_SUBS - 1;
}

/* Index of a status code, adding it when new; codes beyond MAX_CODES share
 * the last slot (never reached: the server answers with a fixed set). */
static size_t code_index(apis_metrics *m, int code)
{
    for (size_t i = 0; i < m->n_codes; i++)
        if (m->codes[i] == code)
            return i;
    if (m->n_codes == MAX_CODES)
        return MAX_CODES - 1;
    m->codes[m->n_codes] = code;
    return m->n_codes++;
}

void apis_metrics_observe(apis_metrics *m, const char *method, const char *subresource, int code,
                          double seconds)
{
    size_t v = verb_index(method), s = sub_index(subresource);
    histogram *h;

    pthread_mutex_lock(&m->mu);
    m->requests[v][s][code_index(m, code)]++;
    h = &m->latency[v][s];
    for (size_t i = 0; i < N_BOUNDS; i++)
        if (seconds <= bounds[i])
            h->buckets[i]++;
    h->count++;
    h->sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

void apis_metrics_inflight(apis_metrics *m, int delta)
{
    pthread_mutex_lock(&m->mu);
    m->inflight += delta;
    pthread_mutex_unlock(&m->mu);
}

void apis_metrics_authn(apis_metrics *m, apis_authn_result r)
{
    pthread_mutex_lock(&m->mu);
    m->authn[r]++;
    pthread_mutex_unlock(&m->mu);
}

void apis_metrics_authz(apis_metrics *m, apis_authz_result r)
{
    pthread_mutex_lock(&m->mu);
    m->authz[r]++;
    pthread_mutex_unlock(&m->mu);
}

void apis_metrics_conflict_retry(apis_metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->conflict_retries++;
    pthread_mutex_unlock(&m->mu);
}

unsigned long apis_metrics_requests_with_code(apis_metrics *m, int code)
{
    unsigned long n = 0;

    pthread_mutex_lock(&m->mu);
    for (size_t c = 0; c < m->n_codes; c++) {
        if (m->codes[c] != code)
            continue;
        for (size_t v = 0; v < N_VERBS; v++)
            for (size_t s = 0; s < N_SUBS; s++)
                n += m->requests[v][s][c];
    }
    pthread_mutex_unlock(&m->mu);
    return n;
}

unsigned long apis_metrics_authz_count(apis_metrics *m, apis_authz_result r)
{
    unsigned long n;

    pthread_mutex_lock(&m->mu);
    n = m->authz[r];
    pthread_mutex_unlock(&m->mu);
    return n;
}

static int render_requests(apis_metrics *m, kube_buf *out)
{
    int rc = kube_buf_puts(out,
                           "# HELP stickyvm_apiserver_request_total Requests answered, by verb, "
                           "subresource and HTTP code.\n"
                           "# TYPE stickyvm_apiserver_request_total counter\n");

    for (size_t v = 0; rc == KUBE_OK && v < N_VERBS; v++)
        for (size_t s = 0; rc == KUBE_OK && s < N_SUBS; s++)
            for (size_t c = 0; rc == KUBE_OK && c < m->n_codes; c++)
                if (m->requests[v][s][c])
                    rc = kube_buf_printf(out,
                                         "stickyvm_apiserver_request_total{verb=\"%s\","
                                         "subresource=\"%s\",code=\"%d\"} %lu\n",
                                         verbs[v], subresources[s], m->codes[c],
                                         m->requests[v][s][c]);
    return rc;
}

static int render_histogram(const histogram *h, const char *verb, const char *sub, kube_buf *out)
{
    const char *name = "stickyvm_apiserver_request_duration_seconds";
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < N_BOUNDS; i++)
        rc = kube_buf_printf(out, "%s_bucket{verb=\"%s\",subresource=\"%s\",le=\"%g\"} %lu\n", name,
                             verb, sub, bounds[i], h->buckets[i]);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(out,
                             "%s_bucket{verb=\"%s\",subresource=\"%s\",le=\"+Inf\"} %lu\n"
                             "%s_sum{verb=\"%s\",subresource=\"%s\"} %.9f\n"
                             "%s_count{verb=\"%s\",subresource=\"%s\"} %lu\n",
                             name, verb, sub, h->count, name, verb, sub, h->sum, name, verb, sub,
                             h->count);
    return rc;
}

static int render_latency(apis_metrics *m, kube_buf *out)
{
    int rc = kube_buf_puts(out,
                           "# HELP stickyvm_apiserver_request_duration_seconds Time from a "
                           "complete request to its answer being queued, by verb and subresource.\n"
                           "# TYPE stickyvm_apiserver_request_duration_seconds histogram\n");

    for (size_t v = 0; rc == KUBE_OK && v < N_VERBS; v++)
        for (size_t s = 0; rc == KUBE_OK && s < N_SUBS; s++)
            if (m->latency[v][s].count)
                rc = render_histogram(&m->latency[v][s], verbs[v], subresources[s], out);
    return rc;
}

static int render_results(const char *name, const char *help, const char *const *labels,
                          const unsigned long *values, size_t n, kube_buf *out)
{
    int rc = kube_buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);

    for (size_t i = 0; rc == KUBE_OK && i < n; i++)
        rc = kube_buf_printf(out, "%s{result=\"%s\"} %lu\n", name, labels[i], values[i]);
    return rc;
}

int apis_metrics_render(apis_metrics *m, kube_buf *out)
{
    int rc;

    pthread_mutex_lock(&m->mu);
    rc = render_requests(m, out);
    if (rc == KUBE_OK)
        rc = render_latency(m, out);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(out,
                             "# HELP stickyvm_apiserver_inflight_requests Requests being served.\n"
                             "# TYPE stickyvm_apiserver_inflight_requests gauge\n"
                             "stickyvm_apiserver_inflight_requests %ld\n",
                             m->inflight);
    if (rc == KUBE_OK)
        rc = render_results("stickyvm_apiserver_authentication_total",
                            "Authentication outcomes by method.", authn_names, m->authn,
                            APIS_AUTHN_RESULT_COUNT, out);
    if (rc == KUBE_OK)
        rc = render_results("stickyvm_apiserver_authorization_total",
                            "Authorization outcomes.", authz_names, m->authz,
                            APIS_AUTHZ_RESULT_COUNT, out);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(out,
                             "# HELP stickyvm_apiserver_pin_conflict_retries_total Writes of the "
                             "pin annotation retried after a resourceVersion conflict.\n"
                             "# TYPE stickyvm_apiserver_pin_conflict_retries_total counter\n"
                             "stickyvm_apiserver_pin_conflict_retries_total %lu\n",
                             m->conflict_retries);
    pthread_mutex_unlock(&m->mu);
    return rc;
}
