/*
 * tests/emulator/aggregator.c - plays kube-apiserver's aggregation layer
 * (kube-aggregator) in the emulator.
 *
 * APIServices: apiregistration.k8s.io/v1 apiservices are served (create
 * them with kubectl or the API; the name must be <version>.<group>, and a
 * non-local one needs groupPriorityMinimum, versionPriority and either a
 * caBundle or insecureSkipTLSVerify, never both: else 422). A Service
 * reference {namespace, name, port} is resolved with
 *     --service-endpoint=NS/NAME=HOST:PORT      (repeatable)
 * and reached as https://NAME.NS.svc:PORT (so the serving certificate is
 * checked against that name, as kube-aggregator does) connected to
 * HOST:PORT. A shortcut registers one at start-up, reached directly and
 * trusted through the emulator CA:
 *     --aggregate=v1.subresources.stickyvm.io=https://127.0.0.1:PORT
 *
 * Availability: every --aggregator-probe-interval-ms (default 1000) each
 * APIService is probed with GET /apis/<group>/<version> as
 * system:kube-aggregator (X-Remote-Group: system:masters) and its status
 * Available condition written through the emulator's own API (PATCH
 * .../apiservices/NAME/status as admin): True/Passed, or False with
 * ServiceNotFound / FailedDiscoveryCheck and kube-aggregator's message.
 *
 * Proxy: requests under /apis/<group>/<version> of a registered, non-local
 * APIService are proxied after the emulator authenticated and authorized
 * them (as kube-apiserver does): 503 "service unavailable" while the
 * APIService is not Available; otherwise over TLS (HTTP/1.1) to the
 * backend, verified against caBundle, presenting the front-proxy client
 * certificate (CN=front-proxy-client, signed by the front-proxy CA that
 * kube-system/extension-apiserver-authentication advertises), with the
 * request's headers minus hop-by-hop, Host, Authorization, X-Remote-* and
 * X-Forwarded-*, plus X-Forwarded-For/-Host/-Proto/-Uri, X-Remote-User,
 * one X-Remote-Group per group and X-Remote-Extra-<key> per extra value;
 * a chunked request body is forwarded chunked. The answer is relayed;
 * a chunked (streamed) answer, a watch, is relayed as it arrives, chunk by
 * chunk, and a watch request has no proxy timeout (the backend ends it);
 * an unreachable backend is 503. GET /apis/<group> is answered here
 * (APIGroup), and /apis lists the aggregated groups.
 *
 * Threads: routes run on connection threads; the availability prober runs
 * on its own thread, started in init() and joined in fini().
 * Memory: flag tables are owned by the plug-in and freed in fini().
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "emu.h"
#include "kube/codec/base64.h"
#include "kube/util/clock.h"
#include "kube/util/buf.h"
#include "kube/util/log.h"

#define GROUP "apiregistration.k8s.io"
#define MAX_BODY (16 * 1024 * 1024)
#define PROBE_TIMEOUT_MS 5000
#define PROXY_TIMEOUT_MS 60000
#define APISERVICES_PATH "/apis/" GROUP "/v1/apiservices"

typedef struct kv {
    char *key;
    char *value;
} kv;

typedef struct kvs {
    kv *v;
    size_t n;
} kvs;

typedef struct aggregator {
    kvs direct;    /* APIService name -> https://host:port (--aggregate) */
    kvs endpoints; /* "ns/name" -> host:port (--service-endpoint) */
    long interval_ms;
    emu_server *s;
    emu_resource *res;
    pthread_t prober;
    int prober_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
} aggregator;

static aggregator g = {
    .interval_ms = 1000, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Where and how to reach one APIService's backend. */
typedef struct backend {
    char base[512];       /* https://host:port */
    char connect_to[512]; /* CURLOPT_CONNECT_TO entry or "" */
    char *ca_pem;         /* NULL: the emulator CA */
    int insecure;
    int local;       /* no service: served by the emulator itself */
    char reason[64]; /* resolution failure */
    char message[512];
} backend;

/* snprintf for messages that may be cut short on purpose. */
static void set_msg(char *out, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_msg(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

static int kvs_add(kvs *l, const char *key, const char *value)
{
    kv *v = realloc(l->v, (l->n + 1) * sizeof(*v));

    if (!v)
        return KUBE_ENOMEM;
    l->v = v;
    v[l->n].key = kube_strdup(key);
    v[l->n].value = kube_strdup(value);
    if (!v[l->n].key || !v[l->n].value) {
        free(v[l->n].key);
        free(v[l->n].value);
        return KUBE_ENOMEM;
    }
    l->n++;
    return KUBE_OK;
}

static const char *kvs_get(const kvs *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].key, key))
            return l->v[i].value;
    return NULL;
}

static void kvs_free(kvs *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *spec_of(const cJSON *svc)
{
    return cJSON_GetObjectItemCaseSensitive(svc, "spec");
}

/* ---- resolution ---- */

static void resolve_service(const cJSON *service, backend *b)
{
    const char *ns = jstr(service, "namespace"), *name = jstr(service, "name");
    const cJSON *port = cJSON_GetObjectItemCaseSensitive(service, "port");
    int p = cJSON_IsNumber(port) ? port->valueint : 443;
    char key[300];
    const char *ep;

    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name ? name : "");
    ep = kvs_get(&g.endpoints, key);
    if (!ep) {
        snprintf(b->reason, sizeof(b->reason), "ServiceNotFound");
        snprintf(b->message, sizeof(b->message), "service/%s in \"%s\" is not present",
                 name ? name : "", ns ? ns : "");
        return;
    }
    snprintf(b->base, sizeof(b->base), "https://%s.%s.svc:%d", name, ns, p);
    snprintf(b->connect_to, sizeof(b->connect_to), "%s.%s.svc:%d:%s", name, ns, p, ep);
}

static void resolve_ca(const cJSON *spec, backend *b)
{
    const char *ca = jstr(spec, "caBundle");
    unsigned char *pem = NULL;

    b->insecure = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "insecureSkipTLSVerify"));
    if (ca && *ca && kube_base64_decode(ca, strlen(ca), &pem, NULL) == KUBE_OK)
        b->ca_pem = (char *)pem;
}

/* Fills b for an APIService object. */
static void resolve(const cJSON *svc, backend *b)
{
    const char *name = jstr(cJSON_GetObjectItemCaseSensitive(svc, "metadata"), "name");
    const cJSON *spec = spec_of(svc);
    const cJSON *service = cJSON_GetObjectItemCaseSensitive(spec, "service");
    const char *direct = name ? kvs_get(&g.direct, name) : NULL;

    memset(b, 0, sizeof(*b));
    resolve_ca(spec, b);
    if (direct) {
        snprintf(b->base, sizeof(b->base), "%s", direct);
        return;
    }
    if (!cJSON_IsObject(service)) {
        b->local = 1;
        return;
    }
    resolve_service(service, b);
}

static void backend_free(backend *b)
{
    free(b->ca_pem);
    b->ca_pem = NULL;
}

/* ---- HTTP to a backend ---- */

typedef struct exchange {
    long status;
    kube_buf body;
    kube_buf headers; /* raw response header lines */
    const char *upload;
    size_t upload_len, upload_off;
    emu_request *req;   /* the proxied request: a streamed answer is relayed; NULL: buffer */
    emu_response *resp; /* its answer */
    int streaming;      /* the answer's head was relayed, chunks follow */
} exchange;

static void relay_headers(const kube_buf *raw, emu_response *resp);

/* 1 when the answer's head says Transfer-Encoding: chunked. */
static int chunked_answer(const kube_buf *headers)
{
    const char *h = headers->data ? headers->data : "";

    for (const char *line = h; line; line = strchr(line, '\n')) {
        line += *line == '\n';
        if (!strncasecmp(line, "Transfer-Encoding: chunked", 26))
            return 1;
    }
    return 0;
}

/* Relays the head of a streamed answer. KUBE_OK or an error. */
static int start_stream(exchange *x)
{
    long status = 0;

    if (sscanf(x->headers.data, "HTTP/%*s %ld", &status) != 1)
        return KUBE_EIO;
    x->resp->status = (int)status;
    x->resp->content_type[0] = '\0';
    relay_headers(&x->headers, x->resp);
    if (!x->resp->content_type[0])
        snprintf(x->resp->content_type, sizeof(x->resp->content_type), "application/json");
    x->streaming = 1;
    return emu_stream_begin(x->req, x->resp);
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    exchange *x = ud;

    if (x->req && !x->streaming && chunked_answer(&x->headers) && start_stream(x) != KUBE_OK)
        return 0;
    if (x->streaming)
        return emu_stream_write(x->req, p, size * n) == KUBE_OK && !emu_stream_should_stop(x->req)
                   ? size * n
                   : 0;
    if (x->body.len + size * n > MAX_BODY || kube_buf_append(&x->body, p, size * n) != KUBE_OK)
        return 0;
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    exchange *x = ud;

    if (n * size >= 5 && !strncmp(p, "HTTP/", 5))
        kube_buf_reset(&x->headers); /* a new response (after 100 Continue) */
    return kube_buf_append(&x->headers, p, size * n) == KUBE_OK ? size * n : 0;
}

static size_t on_upload(char *p, size_t size, size_t n, void *ud)
{
    exchange *x = ud;
    size_t left = x->upload_len - x->upload_off, want = size * n;

    if (want > left)
        want = left;
    memcpy(p, x->upload + x->upload_off, want);
    x->upload_off += want;
    return want;
}

static void set_tls(CURL *c, const backend *b, struct curl_slist **connect_to)
{
    struct curl_blob blob;
    emu_server *s = g.s;

    curl_easy_setopt(c, CURLOPT_SSLCERT, s->certs.fp_client_cert_file);
    curl_easy_setopt(c, CURLOPT_SSLKEY, s->certs.fp_client_key_file);
    if (b->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (b->ca_pem) {
        blob.data = b->ca_pem;
        blob.len = strlen(b->ca_pem);
        blob.flags = CURL_BLOB_COPY;
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    } else {
        curl_easy_setopt(c, CURLOPT_CAINFO, s->certs.ca_file);
    }
    if (b->connect_to[0]) {
        *connect_to = curl_slist_append(NULL, b->connect_to);
        curl_easy_setopt(c, CURLOPT_CONNECT_TO, *connect_to);
    }
}

static void set_body(CURL *c, const char *method, exchange *x, int chunked,
                     struct curl_slist **headers)
{
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) {
        if (!strcmp(method, "HEAD"))
            curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        return;
    }
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_upload);
    curl_easy_setopt(c, CURLOPT_READDATA, x);
    if (chunked)
        *headers = curl_slist_append(*headers, "Transfer-Encoding: chunked");
    else
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->upload_len);
}

/* One request to a backend. Returns KUBE_OK (x->status set) or KUBE_EIO
 * with the transport error in err. */
static int backend_do(const backend *b, const char *method, const char *target,
                      struct curl_slist *headers, exchange *x, int chunked, long timeout_ms,
                      char *err, size_t errlen)
{
    CURL *c = curl_easy_init();
    struct curl_slist *connect_to = NULL;
    char url[4096], cerr[CURL_ERROR_SIZE] = "";
    CURLcode cc;

    if (!c)
        return KUBE_ENOMEM;
    snprintf(url, sizeof(url), "%s%s", b->base, target);
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    set_tls(c, b, &connect_to);
    set_body(c, method, x, chunked, &headers);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    cc = curl_easy_perform(c);
    if (cc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
    else
        set_msg(err, errlen, "Get \"%s\": %s", url, cerr[0] ? cerr : curl_easy_strerror(cc));
    curl_easy_cleanup(c);
    curl_slist_free_all(connect_to);
    curl_slist_free_all(headers);
    return cc == CURLE_OK ? KUBE_OK : KUBE_EIO;
}

/* ---- the proxy ---- */

static int hop_by_hop(const char *name)
{
    static const char *const names[] = {"Connection",
                                        "Keep-Alive",
                                        "Proxy-Connection",
                                        "Proxy-Authenticate",
                                        "Proxy-Authorization",
                                        "TE",
                                        "Trailer",
                                        "Transfer-Encoding",
                                        "Upgrade",
                                        "Host",
                                        "Content-Length",
                                        "Authorization",
                                        "Expect",
                                        NULL};

    for (size_t i = 0; names[i]; i++)
        if (!strcasecmp(name, names[i]))
            return 1;
    return !strncasecmp(name, "X-Remote-", 9) || !strncasecmp(name, "X-Forwarded-", 12);
}

static struct curl_slist *add_header(struct curl_slist *l, const char *name, const char *value)
{
    kube_buf b = KUBE_BUF_INIT;
    struct curl_slist *out = l;

    /* "Name;" sends an empty value with libcurl */
    if (kube_buf_printf(&b, *value ? "%s: %s" : "%s;", name, value) == KUBE_OK)
        out = curl_slist_append(l, b.data);
    kube_buf_free(&b);
    return out ? out : l;
}

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$&'*+-.^_`|~", c));
}

/* X-Remote-Extra-<key>, the key percent-escaped where not a header token. */
static struct curl_slist *add_extras(struct curl_slist *l, const cJSON *extra)
{
    const cJSON *entry, *v;

    cJSON_ArrayForEach(entry, extra)
    {
        kube_buf name = KUBE_BUF_INIT;
        kube_buf_puts(&name, "X-Remote-Extra-");
        for (const char *p = entry->string; *p; p++)
            kube_buf_printf(&name, is_tchar((unsigned char)*p) ? "%c" : "%%%02X",
                            (unsigned char)*p);
        cJSON_ArrayForEach(v, entry) if (cJSON_IsString(v)) l =
            add_header(l, name.data, v->valuestring);
        kube_buf_free(&name);
    }
    return l;
}

static struct curl_slist *proxy_headers(const emu_request *req)
{
    struct curl_slist *l = NULL;
    const char *host = emu_header_get(req, "Host");
    char ip[128];

    for (size_t i = 0; i < req->n_headers; i++)
        if (!hop_by_hop(req->headers[i].name))
            l = add_header(l, req->headers[i].name, req->headers[i].value);
    if (!emu_header_get(req, "Accept"))
        l = curl_slist_append(l, "Accept:");
    snprintf(ip, sizeof(ip), "%s", req->remote_addr ? req->remote_addr : "");
    if (strrchr(ip, ':'))
        *strrchr(ip, ':') = '\0';
    l = add_header(l, "X-Forwarded-For", ip);
    l = add_header(l, "X-Forwarded-Host", host ? host : "");
    l = add_header(l, "X-Forwarded-Proto", "https");
    l = add_header(l, "X-Forwarded-Uri", req->path);
    for (size_t i = 0; i < req->user.n_groups; i++)
        l = add_header(l, "X-Remote-Group", req->user.groups[i]);
    l = add_header(l, "X-Remote-User", req->user.name ? req->user.name : "");
    return add_extras(l, req->user.extra);
}

static void relay_headers(const kube_buf *raw, emu_response *resp)
{
    static const char *const keep[] = {
        "Audit-Id", "Cache-Control", "X-Content-Type-Options", "Etag",
        "Allow",    "Retry-After",   "Content-Encoding",       "Warning",
        NULL};
    char *copy = kube_strdup(raw->data ? raw->data : ""), *line, *save = NULL;

    for (line = copy ? strtok_r(copy, "\r\n", &save) : NULL; line;
         line = strtok_r(NULL, "\r\n", &save)) {
        char *colon = strchr(line, ':');
        const char *v;
        if (!colon)
            continue;
        *colon = '\0';
        for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
            ;
        if (!strcasecmp(line, "Content-Type"))
            snprintf(resp->content_type, sizeof(resp->content_type), "%s", v);
        for (size_t i = 0; keep[i]; i++)
            if (!strcasecmp(line, keep[i]))
                emu_response_header(resp, keep[i], v);
    }
    free(copy);
}

static int is_available(const cJSON *svc)
{
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(svc, "status"), "conditions");
    const cJSON *c;

    cJSON_ArrayForEach(c, conds)
    {
        const char *type = jstr(c, "type"), *status = jstr(c, "status");
        if (type && !strcmp(type, "Available"))
            return status && !strcmp(status, "True");
    }
    return 0;
}

/* ?watch=true (or 1): bounded by the backend, not by the proxy timeout. */
static int is_watch(const emu_request *req)
{
    char *w = emu_query_get(req, "watch");
    int yes = w && (!strcmp(w, "true") || !strcmp(w, "1"));

    free(w);
    return yes;
}

static int proxy(emu_request *req, const cJSON *svc, emu_response *resp)
{
    backend b;
    exchange x = {0};
    const char *te = emu_header_get(req, "Transfer-Encoding");
    char err[1024] = "";
    int rc;

    if (!is_available(svc))
        return emu_response_text(resp, 503, "service unavailable\n"), 1;
    resolve(svc, &b);
    if (b.local || !b.base[0]) {
        backend_free(&b);
        return emu_response_text(resp, 503, "service unavailable\n"), 1;
    }
    x.upload = req->body;
    x.upload_len = req->body_len;
    x.req = req;
    x.resp = resp;
    rc = backend_do(&b, req->method, req->target, proxy_headers(req), &x,
                    te && !strcasecmp(te, "chunked"), is_watch(req) ? 0 : PROXY_TIMEOUT_MS, err,
                    sizeof(err));
    backend_free(&b);
    if (x.streaming) {
        emu_stream_end(req); /* the backend ended it, or went away */
    } else if (rc != KUBE_OK) {
        KLOG_WARN("aggregator: proxying %s %s: %s", req->method, req->target, err);
        emu_response_text(resp, 503, "Error trying to reach service: 'service unavailable'\n");
    } else {
        emu_response_raw(resp, (int)x.status, "application/json", x.body.data ? x.body.data : "",
                         x.body.len);
        resp->content_type[0] = '\0';
        relay_headers(&x.headers, resp);
    }
    kube_buf_free(&x.body);
    kube_buf_free(&x.headers);
    return 1;
}

/* ---- routes ---- */

typedef struct group_walk {
    const char *group;
    cJSON *versions; /* [{groupVersion, version, priority}] */
} group_walk;

static int collect_versions(void *ctx, const cJSON *svc)
{
    group_walk *w = ctx;
    const cJSON *spec = spec_of(svc);
    const char *grp = jstr(spec, "group"), *ver = jstr(spec, "version");
    const cJSON *prio = cJSON_GetObjectItemCaseSensitive(spec, "versionPriority");
    cJSON *v;
    char gv[512];

    if (!grp || !ver || strcmp(grp, w->group) != 0 ||
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "service")))
        return 0;
    snprintf(gv, sizeof(gv), "%s/%s", grp, ver);
    v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "groupVersion", gv);
    cJSON_AddStringToObject(v, "version", ver);
    cJSON_AddNumberToObject(v, "priority", cJSON_IsNumber(prio) ? prio->valuedouble : 0);
    cJSON_AddItemToArray(w->versions, v);
    return 0;
}

/* Versions of an aggregated group, highest versionPriority first. */
static cJSON *group_versions(const char *group)
{
    group_walk w = {group, cJSON_CreateArray()};
    int n;

    emu_store_each(g.s, g.res, NULL, collect_versions, &w);
    n = cJSON_GetArraySize(w.versions);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            cJSON *a = cJSON_GetArrayItem(w.versions, j - 1),
                  *b = cJSON_GetArrayItem(w.versions, j);
            if (cJSON_GetObjectItem(a, "priority")->valuedouble >=
                cJSON_GetObjectItem(b, "priority")->valuedouble)
                break;
            cJSON_DetachItemViaPointer(w.versions, b);
            cJSON_InsertItemInArray(w.versions, j - 1, b);
        }
    for (int i = 0; i < n; i++)
        cJSON_DeleteItemFromObject(cJSON_GetArrayItem(w.versions, i), "priority");
    return w.versions;
}

static cJSON *group_entry(const char *group)
{
    cJSON *versions = group_versions(group), *e;

    if (cJSON_GetArraySize(versions) == 0) {
        cJSON_Delete(versions);
        return NULL;
    }
    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", group);
    cJSON_AddItemToObject(e, "versions", versions);
    cJSON_AddItemToObject(e, "preferredVersion",
                          cJSON_Duplicate(cJSON_GetArrayItem(versions, 0), 1));
    return e;
}

static int answer_group(const char *group, emu_response *resp)
{
    cJSON *e = group_entry(group), *doc;
    int rc;

    if (!e)
        return 0;
    doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "kind", "APIGroup");
    cJSON_AddStringToObject(doc, "apiVersion", "v1");
    cJSON_AddItemToObject(doc, "name", cJSON_DetachItemFromObject(e, "name"));
    cJSON_AddItemToObject(doc, "versions", cJSON_DetachItemFromObject(e, "versions"));
    cJSON_AddItemToObject(doc, "preferredVersion",
                          cJSON_DetachItemFromObject(e, "preferredVersion"));
    cJSON_Delete(e);
    rc = emu_response_json(resp, 200, doc);
    cJSON_Delete(doc);
    return rc == KUBE_OK ? 1 : rc;
}

static int invalid(emu_response *resp, const char *name, const char *field, const char *detail)
{
    char msg[768];
    cJSON *details = cJSON_CreateObject();

    snprintf(msg, sizeof(msg), "APIService.apiregistration.k8s.io \"%s\" is invalid: %s: %s", name,
             field, detail);
    cJSON_AddStringToObject(details, "name", name);
    cJSON_AddStringToObject(details, "group", GROUP);
    cJSON_AddStringToObject(details, "kind", "APIService");
    return emu_response_status(resp, 422, "Invalid", msg, details) == KUBE_OK ? 1 : KUBE_ENOMEM;
}

/* kube-aggregator's APIService validation, before the store sees it. */
static int validate_apiservice(emu_request *req, emu_response *resp)
{
    cJSON *o = cJSON_Parse(req->body);
    const cJSON *spec = spec_of(o);
    const char *name = jstr(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "name");
    const char *grp = jstr(spec, "group"), *ver = jstr(spec, "version");
    const cJSON *gpm = cJSON_GetObjectItemCaseSensitive(spec, "groupPriorityMinimum");
    const cJSON *vp = cJSON_GetObjectItemCaseSensitive(spec, "versionPriority");
    int local = !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "service"));
    char want[512], detail[600];
    int rc = 0;

    if (!o || !name || !ver) {
        cJSON_Delete(o);
        return 0; /* the store answers malformed objects */
    }
    snprintf(want, sizeof(want), "%s%s%s", ver, grp && *grp ? "." : "", grp ? grp : "");
    if (strcmp(name, want) != 0) {
        snprintf(detail, sizeof(detail), "Invalid value: \"%s\": must be %s", name, want);
        rc = invalid(resp, name, "metadata.name", detail);
    } else if (!cJSON_IsNumber(gpm) || gpm->valueint <= 0 || gpm->valueint > 20000) {
        rc = invalid(resp, name, "spec.groupPriorityMinimum",
                     "Invalid value: 0: must be positive and less than 20000");
    } else if (!cJSON_IsNumber(vp) || vp->valueint <= 0 || vp->valueint > 1000) {
        rc = invalid(resp, name, "spec.versionPriority",
                     "Invalid value: 0: must be positive and less than 1000");
    } else if (!local &&
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "insecureSkipTLSVerify")) &&
               jstr(spec, "caBundle") && *jstr(spec, "caBundle")) {
        rc = invalid(resp, name, "spec.insecureSkipTLSVerify",
                     "Invalid value: true: may not be true if caBundle is present");
    }
    cJSON_Delete(o);
    return rc;
}

/* Splits /apis/<group>[/<version>[/...]]; returns the number of parts. */
static int split_apis_path(const char *path, char *grp, size_t gn, char *ver, size_t vn)
{
    const char *p, *slash;

    if (strncmp(path, "/apis/", 6) != 0)
        return 0;
    p = path + 6;
    slash = strchr(p, '/');
    snprintf(grp, gn, "%.*s", (int)(slash ? (size_t)(slash - p) : strlen(p)), p);
    if (!slash)
        return *grp ? 1 : 0;
    p = slash + 1;
    slash = strchr(p, '/');
    snprintf(ver, vn, "%.*s", (int)(slash ? (size_t)(slash - p) : strlen(p)), p);
    return *ver ? 2 : 1;
}

static int route(void *ctx, emu_request *req, emu_response *resp)
{
    char grp[256] = "", ver[128] = "", name[400];
    cJSON *svc = NULL;
    int parts, rc;

    (void)ctx;
    if (!strncmp(req->path, APISERVICES_PATH, strlen(APISERVICES_PATH)) &&
        (!strcmp(req->method, "POST") || !strcmp(req->method, "PUT")))
        return validate_apiservice(req, resp);
    parts = split_apis_path(req->path, grp, sizeof(grp), ver, sizeof(ver));
    if (parts == 1 && !strcmp(req->method, "GET") && strcmp(req->path + 6, grp) == 0)
        return answer_group(grp, resp);
    if (parts != 2)
        return 0;
    snprintf(name, sizeof(name), "%s.%s", ver, grp);
    if (emu_store_get(g.s, g.res, NULL, name, &svc) != KUBE_OK)
        return 0;
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec_of(svc), "service"))) {
        cJSON_Delete(svc);
        return 0; /* local: the emulator serves it */
    }
    rc = proxy(req, svc, resp);
    cJSON_Delete(svc);
    return rc;
}

typedef struct discovery_walk {
    cJSON *groups;
} discovery_walk;

static int has_group(const cJSON *groups, const char *name)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, groups)
    {
        const char *n = jstr(e, "name");
        if (n && !strcmp(n, name))
            return 1;
    }
    return 0;
}

static int discover_one(void *ctx, const cJSON *svc)
{
    discovery_walk *w = ctx;
    const char *grp = jstr(spec_of(svc), "group");
    cJSON *e;

    if (!grp || !*grp || has_group(w->groups, grp))
        return 0;
    e = group_entry(grp);
    if (e)
        cJSON_AddItemToArray(w->groups, e);
    return 0;
}

static int discovery(void *ctx, cJSON *groups)
{
    discovery_walk w = {groups};

    (void)ctx;
    return emu_store_each(g.s, g.res, NULL, discover_one, &w) < 0 ? KUBE_ENOMEM : KUBE_OK;
}

/* ---- availability ---- */

static int probe(const cJSON *svc, char *reason, size_t rn, char *message, size_t mn)
{
    const cJSON *spec = spec_of(svc);
    backend b;
    exchange x = {0};
    struct curl_slist *h = NULL;
    char target[512], err[1024] = "";
    int ok = 0;

    resolve(svc, &b);
    if (b.local) {
        snprintf(reason, rn, "Local");
        snprintf(message, mn, "Local APIServices are always available");
        backend_free(&b);
        return 1;
    }
    if (b.reason[0]) {
        snprintf(reason, rn, "%s", b.reason);
        snprintf(message, mn, "%s", b.message);
        backend_free(&b);
        return 0;
    }
    snprintf(target, sizeof(target), "/apis/%s/%s", jstr(spec, "group"), jstr(spec, "version"));
    h = curl_slist_append(h, "User-Agent: Go-http-client/1.1");
    h = curl_slist_append(h, "Accept:");
    h = curl_slist_append(h, "X-Remote-Group: system:masters");
    h = curl_slist_append(h, "X-Remote-User: system:kube-aggregator");
    h = curl_slist_append(h, "Accept-Encoding: gzip");
    if (backend_do(&b, "GET", target, h, &x, 0, PROBE_TIMEOUT_MS, err, sizeof(err)) != KUBE_OK)
        set_msg(message, mn, "failing or missing response from %s%s: %s", b.base, target, err);
    else if (x.status < 200 || x.status >= 300)
        set_msg(message, mn, "failing or missing response from %s%s: bad status from %s%s: %ld",
                b.base, target, b.base, target, x.status);
    else
        ok = 1;
    snprintf(reason, rn, "%s", ok ? "Passed" : "FailedDiscoveryCheck");
    if (ok)
        snprintf(message, mn, "all checks passed");
    backend_free(&b);
    kube_buf_free(&x.body);
    kube_buf_free(&x.headers);
    return ok;
}

static const cJSON *available_condition(const cJSON *svc)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(svc, "status"), "conditions"))
    {
        const char *type = jstr(c, "type");
        if (type && !strcmp(type, "Available"))
            return c;
    }
    return NULL;
}

static int same_condition(const cJSON *old, const char *status, const char *reason,
                          const char *message)
{
    const char *s = jstr(old, "status"), *r = jstr(old, "reason"), *m = jstr(old, "message");

    return s && r && m && !strcmp(s, status) && !strcmp(r, reason) && !strcmp(m, message);
}

/* PATCH .../apiservices/NAME/status through the emulator's own API, as
 * kube-aggregator's availability controller writes it. */
static void write_status(const char *name, cJSON *cond)
{
    emu_server *s = g.s;
    CURL *c = curl_easy_init();
    cJSON *patch = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "status"), "conditions");
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
    exchange answer = {0};
    char url[512], *body;
    long code = 0;

    cJSON_AddItemToArray(conds, cond);
    body = cJSON_PrintUnformatted(patch);
    snprintf(url, sizeof(url), "%s/apis/" GROUP "/v1/apiservices/%s/status", s->url, name);
    if (c && body) {
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PATCH");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_CAINFO, s->certs.ca_file);
        curl_easy_setopt(c, CURLOPT_SSLCERT, s->certs.admin_cert_file);
        curl_easy_setopt(c, CURLOPT_SSLKEY, s->certs.admin_key_file);
        curl_easy_setopt(c, CURLOPT_USERAGENT, "kube-apiserver/v1.23.17 (aggregator)");
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
        if (curl_easy_perform(c) == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    }
    if (code != 200)
        KLOG_WARN("aggregator: updating apiservices/%s/status answered %ld", name, code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    kube_buf_free(&answer.body);
    free(body);
    cJSON_Delete(patch);
}

static void check_one(const cJSON *svc)
{
    const char *name = jstr(cJSON_GetObjectItemCaseSensitive(svc, "metadata"), "name");
    const cJSON *old = available_condition(svc);
    char reason[64], message[1536], now[40];
    int ok = probe(svc, reason, sizeof(reason), message, sizeof(message));
    const char *status = ok ? "True" : "False";
    cJSON *cond;

    if (!name || (old && same_condition(old, status, reason, message)))
        return;
    kube_time_rfc3339(now, sizeof(now));
    cond = cJSON_CreateObject();
    cJSON_AddStringToObject(cond, "type", "Available");
    cJSON_AddStringToObject(cond, "status", status);
    cJSON_AddStringToObject(cond, "lastTransitionTime",
                            old && jstr(old, "status") && !strcmp(jstr(old, "status"), status) &&
                                    jstr(old, "lastTransitionTime")
                                ? jstr(old, "lastTransitionTime")
                                : now);
    cJSON_AddStringToObject(cond, "reason", reason);
    cJSON_AddStringToObject(cond, "message", message);
    KLOG_V(1, "aggregator: apiservice %s Available=%s (%s)", name, status, reason);
    write_status(name, cond);
}

static int snapshot_one(void *ctx, const cJSON *svc)
{
    cJSON_AddItemToArray(ctx, cJSON_Duplicate(svc, 1));
    return 0;
}

static int wait_interval(void)
{
    struct timespec until;
    int stop;

    kube_deadline_after(&until, CLOCK_REALTIME, g.interval_ms);
    pthread_mutex_lock(&g.mu);
    while (!g.stop && pthread_cond_timedwait(&g.cv, &g.mu, &until) == 0)
        ;
    stop = g.stop;
    pthread_mutex_unlock(&g.mu);
    return stop;
}

static void *prober(void *arg)
{
    (void)arg;
    do {
        cJSON *all = cJSON_CreateArray();
        const cJSON *svc;
        emu_store_each(g.s, g.res, NULL, snapshot_one, all);
        cJSON_ArrayForEach(svc, all) check_one(svc);
        cJSON_Delete(all);
    } while (!wait_interval());
    return NULL;
}

/* ---- plug-in ---- */

static const emu_resource_def apiservices = {GROUP,
                                             "v1",
                                             "apiservices",
                                             "apiservice",
                                             "APIService",
                                             "APIServiceList",
                                             NULL,
                                             "api-extensions",
                                             0,
                                             1,
                                             0,
                                             NULL};

static int split_flag(const char *value, const char *flag, char *left, size_t ln,
                      const char **right)
{
    const char *eq = value ? strchr(value, '=') : NULL;

    if (!eq || eq == value || !eq[1] || (size_t)(eq - value) >= ln) {
        fprintf(stderr, "stickyvm-emulator: %s: want %s\n", flag,
                !strcmp(flag, "--aggregate") ? "--aggregate=VERSION.GROUP=https://HOST:PORT"
                                             : "--service-endpoint=NS/NAME=HOST:PORT");
        return KUBE_ECONFIG;
    }
    snprintf(left, ln, "%.*s", (int)(eq - value), value);
    *right = eq + 1;
    return KUBE_OK;
}

static int flag(const char *name, const char *value)
{
    char left[256];
    const char *right;
    int64_t ms;

    if (!strcmp(name, "--aggregator-probe-interval-ms")) {
        if (!value || kube_parse_int64(value, 10, 3600000, &ms) != KUBE_OK)
            return KUBE_ECONFIG;
        g.interval_ms = (long)ms;
        return 1;
    }
    if (strcmp(name, "--aggregate") != 0 && strcmp(name, "--service-endpoint") != 0)
        return 0;
    if (split_flag(value, name, left, sizeof(left), &right) != KUBE_OK)
        return KUBE_ECONFIG;
    if (!strcmp(name, "--aggregate") &&
        (strncmp(right, "https://", 8) != 0 || !strchr(left, '.'))) {
        fprintf(stderr, "stickyvm-emulator: --aggregate: want VERSION.GROUP=https://HOST:PORT\n");
        return KUBE_ECONFIG;
    }
    if (kvs_add(!strcmp(name, "--aggregate") ? &g.direct : &g.endpoints, left, right) != KUBE_OK)
        return KUBE_ENOMEM;
    return 1;
}

/* The APIService object of an --aggregate flag, trusted via the emulator CA. */
static int register_direct(emu_server *s, const char *name)
{
    const char *dot = strchr(name, '.');
    cJSON *o = cJSON_CreateObject(), *spec, *svc, *st = NULL;
    char version[64], *ca = NULL;
    int rc;

    snprintf(version, sizeof(version), "%.*s", (int)(dot - name), name);
    cJSON_AddStringToObject(o, "apiVersion", GROUP "/v1");
    cJSON_AddStringToObject(o, "kind", "APIService");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "metadata"), "name", name);
    spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddStringToObject(spec, "group", dot + 1);
    cJSON_AddStringToObject(spec, "version", version);
    cJSON_AddNumberToObject(spec, "groupPriorityMinimum", 1000);
    cJSON_AddNumberToObject(spec, "versionPriority", 15);
    rc = kube_base64_encode(s->certs.ca_pem, strlen(s->certs.ca_pem), &ca, NULL);
    if (rc == KUBE_OK)
        cJSON_AddStringToObject(spec, "caBundle", ca);
    svc = cJSON_AddObjectToObject(spec, "service");
    cJSON_AddStringToObject(svc, "namespace", "default");
    cJSON_AddStringToObject(svc, "name", "emulator-aggregated");
    cJSON_AddNumberToObject(svc, "port", 443);
    if (rc == KUBE_OK)
        rc = emu_store_create(s, g.res, NULL, o, NULL, &st);
    if (rc != KUBE_OK) {
        char *msg = st ? cJSON_PrintUnformatted(st) : NULL;
        KLOG_ERROR("aggregator: registering %s: %s", name, msg ? msg : kube_strerror(rc));
        free(msg);
    }
    free(ca);
    cJSON_Delete(st);
    cJSON_Delete(o);
    return rc;
}

static int init(emu_server *s)
{
    int rc;

    g.s = s;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    g.res = emu_resource_find(s, GROUP, "v1", "apiservices");
    if (!g.res) {
        rc = emu_resource_register(s, &apiservices);
        if (rc != KUBE_OK)
            return rc;
        g.res = emu_resource_find(s, GROUP, "v1", "apiservices");
    }
    for (size_t i = 0; i < g.direct.n; i++)
        if ((rc = register_direct(s, g.direct.v[i].key)) != KUBE_OK)
            return rc;
    if ((rc = emu_add_route(s, route, NULL)) != KUBE_OK ||
        (rc = emu_add_discovery(s, discovery, NULL)) != KUBE_OK)
        return rc;
    if (pthread_create(&g.prober, NULL, prober, NULL) != 0)
        return KUBE_ENOMEM;
    g.prober_started = 1;
    return KUBE_OK;
}

static void fini(emu_server *s)
{
    (void)s;
    if (g.prober_started) {
        pthread_mutex_lock(&g.mu);
        g.stop = 1;
        pthread_cond_broadcast(&g.cv);
        pthread_mutex_unlock(&g.mu);
        pthread_join(g.prober, NULL);
        g.prober_started = 0;
    }
    kvs_free(&g.direct);
    kvs_free(&g.endpoints);
    curl_global_cleanup();
}

static const emu_plugin plugin = {.name = "aggregator", .flag = flag, .init = init, .fini = fini};

__attribute__((constructor)) static void register_plugin(void)
{
    emu_plugin_register(&plugin);
}
