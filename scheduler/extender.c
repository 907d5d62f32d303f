/*
 * scheduler/extender.c - the scheduler extenders (extender.h): the set
 * built from the configuration (one HTTP client each), the HTTP exchange
 * with kube-scheduler's error messages, IsInterested, the pod sent, and
 * binding through an extender. The filter, prioritize and preemption calls
 * are extender_calls.c.
 */
#include "extender_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pod.h"

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

/* url (urlPrefix without trailing '/') and dial ("host:port") of e; the
 * scheme must be http or https. */
static int parse_url(http_extender *e, const char *prefix, const char *field, char *err,
                     size_t errlen)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    size_t len = strlen(prefix);
    int rc = u ? KUBE_OK : KUBE_ENOMEM;

    while (len > 0 && prefix[len - 1] == '/')
        len--;
    if (rc == KUBE_OK && !(e->url = strndup(prefix, len)))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && (curl_url_set(u, CURLUPART_URL, e->url, 0) != CURLUE_OK ||
                          curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
                          curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
                          curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
                          (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))) {
        snprintf(err, errlen, "%s.urlPrefix: invalid URL \"%s\": want http(s)://host[:port][/path]",
                 field, prefix);
        rc = KUBE_ECONFIG;
    }
    if (rc == KUBE_OK) {
        kube_buf b = KUBE_BUF_INIT;
        rc = kube_buf_printf(&b, "%s:%s", host, port);
        e->dial = kube_buf_take(&b);
        kube_buf_free(&b);
        if (rc == KUBE_OK && !e->dial)
            rc = KUBE_ENOMEM;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

/* makeTransport: tlsConfig as given; enableHTTPS without a CA means
 * insecure. */
static kube_tls_options tls_options(const sched_extender_config *c)
{
    kube_tls_options o;
    const sched_extender_tls *t = c->tls;

    memset(&o, 0, sizeof(o));
    if (t) {
        o = (kube_tls_options){t->insecure, t->server_name, t->cert_file, t->key_file,
                               t->ca_file,  t->cert_data,   t->cert_len,  t->key_data,
                               t->key_len,  t->ca_data,     t->ca_len};
    }
    if (c->enable_https && !(o.ca_data && o.ca_len) && !(o.ca_file && *o.ca_file))
        o.insecure = 1;
    return o;
}

/* NewHTTPExtender: e's URL, TLS configuration and client. field is
 * "<file>: extenders[i]". */
static int extender_init(http_extender *e, const sched_extender_config *c, const char *field,
                         char *err, size_t errlen)
{
    kube_tls_options tls = tls_options(c);
    kube_client_options o;
    char src[256];
    int rc;

    e->cfg = c;
    rc = parse_url(e, c->url_prefix, field, err, errlen);
    snprintf(src, sizeof(src), "%s.tlsConfig", field);
    if (rc == KUBE_OK)
        rc = kube_config_for_server(e->url, &tls, src, &e->kc, err, errlen);
    kube_client_options_default(&o);
    o.qps = 0;
    o.max_retries = 0;
    o.timeout_ms = c->http_timeout_ms > 0 ? c->http_timeout_ms : EXT_DEFAULT_TIMEOUT_MS;
    if (o.connect_timeout_ms > o.timeout_ms)
        o.connect_timeout_ms = o.timeout_ms;
    o.user_agent = "stickyvm-scheduler";
    if (rc == KUBE_OK && (rc = kube_client_new(e->kc, &o, &e->client)) != KUBE_OK)
        snprintf(err, errlen, "%s.urlPrefix: %s", field, kube_strerror(rc));
    return rc;
}

static void extender_clear(http_extender *e)
{
    kube_client_free(e->client);
    kube_config_free(e->kc);
    free(e->url);
    free(e->dial);
}

void sched_extenders_set_fence(sched_extenders *x, kube_client_fence_fn fence, void *ud)
{
    for (size_t i = 0; x && i < x->n; i++)
        kube_client_set_fence(x->v[i].client, fence, ud);
}

void sched_extenders_shutdown(sched_extenders *x)
{
    for (size_t i = 0; x && i < x->n; i++)
        kube_client_shutdown(x->v[i].client);
}

void sched_extenders_free(sched_extenders *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++)
        extender_clear(&x->v[i]);
    free(x->v);
    cJSON_Delete(x->pod);
    free(x->pod_uid);
    free(x->pod_rv);
    free(x);
}

/* buildExtenders: the non-ignorable extenders in order, then the
 * ignorable ones. */
static int build_all(sched_extenders *x, const sched_config *cfg, char *err, size_t errlen)
{
    const char *source = cfg->source && *cfg->source ? cfg->source : "config";
    char field[200];
    int rc = KUBE_OK;

    for (int pass = 0; pass < 2 && rc == KUBE_OK; pass++)
        for (size_t i = 0; i < cfg->n_extenders && rc == KUBE_OK; i++) {
            if (cfg->extenders[i].ignorable != pass)
                continue;
            snprintf(field, sizeof(field), "%s: extenders[%zu]", source, i);
            KLOG_V(2, "Creating extender extender=\"%s\"", cfg->extenders[i].url_prefix);
            rc = extender_init(&x->v[x->n++], &cfg->extenders[i], field, err, errlen);
        }
    return rc;
}

int sched_extenders_new(const sched_config *cfg, kube_client *api, const fw_snapshot *snap,
                        sched_extenders **out, char *err, size_t errlen)
{
    sched_extenders *x;
    int rc;

    *out = NULL;
    if (cfg->n_extenders == 0)
        return KUBE_OK;
    x = calloc(1, sizeof(*x));
    if (!x || !(x->v = calloc(cfg->n_extenders, sizeof(*x->v)))) {
        free(x);
        return KUBE_ENOMEM;
    }
    x->api = api;
    x->snap = snap;
    rc = build_all(x, cfg, err, errlen);
    if (rc != KUBE_OK) {
        sched_extenders_free(x);
        return rc;
    }
    *out = x;
    return KUBE_OK;
}

fw_extenders sched_extenders_view(sched_extenders *x)
{
    fw_extenders v = {ext_filter, ext_prioritize, ext_preempt, x};

    if (!x)
        memset(&v, 0, sizeof(v));
    return v;
}

/* ------------------------------------------------------------------ */
/* The exchange                                                        */
/* ------------------------------------------------------------------ */

/* What Go's net/http says after "Post \"<url>\": " for a transport
 * failure. */
static void transport_cause(const http_extender *e, const kube_response *r, char *out, size_t n)
{
    if (r->curl_code == CURLE_COULDNT_CONNECT && r->os_errno) {
        const char *why = strerror((int)r->os_errno);
        snprintf(out, n, "dial tcp %s: connect: %c%s", e->dial, tolower((unsigned char)why[0]),
                 why + 1);
    } else if (r->curl_code == CURLE_COULDNT_RESOLVE_HOST) {
        char host[256];
        kube_strlcpy(host, e->dial, sizeof(host));
        if (strrchr(host, ':'))
            *strrchr(host, ':') = '\0';
        snprintf(out, n, "dial tcp: lookup %s: no such host", host);
    } else if (r->curl_code == CURLE_OPERATION_TIMEDOUT) {
        snprintf(out, n,
                 "context deadline exceeded (Client.Timeout exceeded while awaiting "
                 "headers)");
    } else {
        snprintf(out, n, "%s", curl_easy_strerror((CURLcode)r->curl_code));
    }
}

int ext_send(const http_extender *e, const char *verb, const cJSON *args, cJSON **result, char *err)
{
    char *body = cJSON_PrintUnformatted(args), path[512], cause[512];
    kube_response r;
    int rc;

    *result = NULL;
    if (!body)
        return KUBE_ENOMEM;
    memset(&r, 0, sizeof(r));
    snprintf(path, sizeof(path), "/%s", verb);
    rc = kube_client_do(e->client, "POST", path, "application/json", body, strlen(body), &r);
    free(body);
    if (r.code == 0 && rc != KUBE_OK && rc != KUBE_ENOMEM) {
        transport_cause(e, &r, cause, sizeof(cause));
        snprintf(err, EXT_ERR_MAX, "Post \"%s/%s\": %s", e->url, verb, cause);
    } else if (r.code != 200 && rc != KUBE_ENOMEM) {
        snprintf(err, EXT_ERR_MAX, "failed %s with extender at URL %s/%s, code %ld", verb, e->url,
                 verb, r.code);
        rc = KUBE_ESERVER;
    } else if (rc == KUBE_OK && !(*result = cJSON_ParseWithLength(r.body, r.len))) {
        snprintf(err, EXT_ERR_MAX, "decoding the answer of extender at URL %s/%s: invalid JSON",
                 e->url, verb);
        rc = KUBE_EPARSE;
    }
    if (rc == KUBE_ENOMEM)
        snprintf(err, EXT_ERR_MAX, "%s", kube_strerror(rc));
    kube_response_clear(&r);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The pod                                                             */
/* ------------------------------------------------------------------ */

int ext_interested(const http_extender *e, const fw_pod_info *pod)
{
    const sched_extender_config *c = e->cfg;

    if (c->n_managed_resources == 0)
        return 1;
    for (size_t i = 0; i < c->n_managed_resources; i++)
        for (uint32_t k = 0; k < pod->request.n_scalars; k++)
            if (strcmp(pod->request.scalars[k].name, c->managed_resources[i].name) == 0)
                return 1;
    return 0;
}

const cJSON *ext_pod_json(sched_extenders *x, const fw_pod_info *pod, char *err)
{
    const char *rv = pod->pod->base.meta.resource_version;
    kube_status st;
    cJSON *fresh = NULL, *meta;
    int rc;

    if (x->pod && strcmp(x->pod_uid, pod->uid) == 0 && strcmp(x->pod_rv, rv) == 0)
        return x->pod;
    memset(&st, 0, sizeof(st));
    rc = kube_api_get(x->api, &KUBE_RES_PODS, pod->namespace_, pod->name, &fresh, &st);
    if (rc != KUBE_OK) {
        snprintf(err, EXT_ERR_MAX, "reading pod %s/%s: %s", pod->namespace_, pod->name,
                 st.message[0] ? st.message : kube_strerror(rc));
        return NULL;
    }
    if ((meta = cJSON_GetObjectItemCaseSensitive(fresh, "metadata")))
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    cJSON_Delete(x->pod);
    free(x->pod_uid);
    free(x->pod_rv);
    x->pod = fresh;
    x->pod_uid = kube_strdup(pod->uid);
    x->pod_rv = kube_strdup(rv);
    if (!x->pod_uid || !x->pod_rv) {
        cJSON_Delete(x->pod);
        x->pod = NULL;
        snprintf(err, EXT_ERR_MAX, "%s", kube_strerror(KUBE_ENOMEM));
    }
    return x->pod;
}

/* ------------------------------------------------------------------ */
/* Binding                                                             */
/* ------------------------------------------------------------------ */

/* HTTPExtender.Bind: KUBE_OK, or an error with the reason in err. */
static int bind_one(const http_extender *e, const fw_pod_info *pod, const char *node, char *err)
{
    cJSON *args = cJSON_CreateObject(), *res = NULL;
    const cJSON *msg;
    int rc = args && cJSON_AddStringToObject(args, "PodName", pod->name) &&
                     cJSON_AddStringToObject(args, "PodNamespace", pod->namespace_) &&
                     cJSON_AddStringToObject(args, "PodUID", pod->uid) &&
                     cJSON_AddStringToObject(args, "Node", node)
                 ? ext_send(e, e->cfg->bind_verb, args, &res, err)
                 : KUBE_ENOMEM;

    msg = cJSON_GetObjectItem(res, "Error");
    if (rc == KUBE_OK && cJSON_IsString(msg) && *msg->valuestring) {
        snprintf(err, EXT_ERR_MAX, "%s", msg->valuestring);
        rc = KUBE_ESERVER;
    }
    if (rc == KUBE_ENOMEM)
        snprintf(err, EXT_ERR_MAX, "%s", kube_strerror(rc));
    cJSON_Delete(args);
    cJSON_Delete(res);
    return rc;
}

int sched_extenders_bind(sched_extenders *x, const fw_pod_info *pod, const char *node,
                         fw_status **st)
{
    char err[EXT_ERR_MAX];

    *st = NULL;
    for (size_t i = 0; x && i < x->n; i++) {
        const http_extender *e = &x->v[i];
        int rc;
        if (!*e->cfg->bind_verb || !ext_interested(e, pod))
            continue;
        rc = bind_one(e, pod, node, err);
        if (rc != KUBE_OK && e->cfg->ignorable) {
            KLOG_INFO("Skipping extender in bind as it returned error and has ignorable flag set "
                      "extender=\"%s\" err=\"%s\"",
                      e->url, err);
            continue;
        }
        if (rc != KUBE_OK)
            *st = fw_status_error(rc, "%s", err);
        return 1;
    }
    return 0;
}

int sched_extenders_may_bind(const sched_extenders *x, const fw_pod_info *pod)
{
    for (size_t i = 0; x && i < x->n; i++)
        if (*x->v[i].cfg->bind_verb && ext_interested(&x->v[i], pod))
            return 1;
    return 0;
}
