#include "kube/client.h"

#include "kube/buf.h"
#include "kube/errors.h"
#include "kube/http1.h"
#include "kube/tls.h"
#include "kube/log.h"
#include "kube/ratelimit.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define CLIENT_POOL_MAX 16          /* idle easy handles kept */
#define CLIENT_TOKEN_MAX 16384      /* longest bearer token accepted */
#define CLIENT_TOKEN_SMALL 4096     /* tokens up to this size need no heap copy */
#define CLIENT_RETRY_AFTER_CAP_S 60 /* longest Retry-After honoured */

struct kube_client {
    kube_config *cfg;
    kube_client_options opts; /* opts.user_agent points at user_agent */
    char *user_agent;
    kube_ratelimit *rl;

    char *base_url;    /* server URL, host replaced by tls-server-name if set */
    struct curl_slist *connect_to; /* CURLOPT_CONNECT_TO for tls-server-name, or NULL */
    char *host_header; /* "Host: ..." keeping the real server host, or NULL */
    const kube_tls *tls; /* the config's parsed TLS material (borrowed), or NULL */
    kube_h1 *h1;       /* lean HTTP/1.1 transport, or NULL: libcurl */
    char *h1_prefix;   /* the server URL's path ("" or "/prefix"), for h1 */

    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    CURLSH *share; /* DNS cache and TLS sessions shared by pooled handles */

    pthread_mutex_t pool_lock;
    CURL *idle[CLIENT_POOL_MAX];
    size_t n_idle;

    pthread_mutex_t stats_lock;
    kube_client_stats stats;

    pthread_mutex_t stop_lock; /* with stop_cond, wakes waits on shutdown */
    pthread_cond_t stop_cond;
    atomic_int stopping;

    atomic_long backoff_base_ms;
    atomic_long backoff_cap_ms;
    atomic_uint_fast64_t rng;
};

/* ---- options and policy ---------------------------------------------- */

void kube_client_options_default(kube_client_options *o)
{
    o->qps = 50;
    o->burst = 100;
    o->connect_timeout_ms = 10000;
    o->timeout_ms = 30000;
    o->max_retries = 5;
    o->user_agent = "stickyvm";
    o->transport = KUBE_CLIENT_TRANSPORT_AUTO;
}

static int client_idempotent(const char *method)
{
    return strcmp(method, "GET") == 0 || strcmp(method, "PUT") == 0 ||
           strcmp(method, "DELETE") == 0;
}

int kube_retry_decide(const char *method, long code, long retry_after_s, int attempt,
                      int max_retries, long base_ms, long cap_ms, unsigned rnd,
                      long *delay_ms)
{
    int retry;
    long d;

    *delay_ms = 0;
    if (attempt >= max_retries)
        return 0;
    if (code == 0)
        retry = strcmp(method, "GET") == 0;
    else if (code == 429)
        retry = 1;
    else if (code >= 500 && code <= 599)
        retry = client_idempotent(method) || retry_after_s >= 0;
    else
        retry = 0;
    if (!retry)
        return 0;
    if (retry_after_s >= 0 && code != 0) {
        *delay_ms = (retry_after_s > CLIENT_RETRY_AFTER_CAP_S ? CLIENT_RETRY_AFTER_CAP_S
                                                              : retry_after_s) * 1000;
        return 1;
    }
    d = base_ms > 0 ? base_ms : 1;
    for (int i = 0; i < attempt && d < cap_ms; i++)
        d *= 2;
    if (d > cap_ms)
        d = cap_ms;
    *delay_ms = d - d / 2 + (long)(rnd % (unsigned long)(d / 2 + 1));
    return 1;
}

void kube_client_set_backoff(kube_client *c, long base_ms, long cap_ms)
{
    atomic_store(&c->backoff_base_ms, base_ms);
    atomic_store(&c->backoff_cap_ms, cap_ms);
}

/* splitmix64 over an atomic counter: a lock-free source of jitter. */
static unsigned client_random(kube_client *c)
{
    uint64_t z = atomic_fetch_add(&c->rng, 0x9E3779B97F4A7C15ULL) + 0x9E3779B97F4A7C15ULL;

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (unsigned)((z ^ (z >> 31)) >> 32);
}

/* Waits ns nanoseconds, or less when the client shuts down. Returns KUBE_OK
 * or KUBE_ECANCELED. */
static int client_pause(kube_client *c, int64_t ns)
{
    struct timespec deadline;

    if (ns <= 0) /* the common case: no lock, no system call */
        return atomic_load(&c->stopping) ? KUBE_ECANCELED : KUBE_OK;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)(ns / 1000000000LL);
    deadline.tv_nsec += (long)(ns % 1000000000LL);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->stop_lock);
    while (!atomic_load(&c->stopping) &&
           pthread_cond_timedwait(&c->stop_cond, &c->stop_lock, &deadline) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&c->stop_lock);
    return atomic_load(&c->stopping) ? KUBE_ECANCELED : KUBE_OK;
}

void kube_client_shutdown(kube_client *c)
{
    pthread_mutex_lock(&c->stop_lock);
    atomic_store(&c->stopping, 1);
    pthread_cond_broadcast(&c->stop_cond);
    pthread_mutex_unlock(&c->stop_lock);
}

/* Aborts a transfer in flight once the client shuts down. */
static int client_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                              curl_off_t ulnow)
{
    kube_client *c = ud;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return atomic_load(&c->stopping) ? 1 : 0;
}

/* ---- Status decoding -------------------------------------------------- */

/* Copies src into dst (size n), cutting at a UTF-8 character boundary. */
static void client_copy_utf8(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);

    if (len >= n) {
        len = n - 1;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
}

int kube_status_decode(const char *json, size_t len, long http_code, kube_status *st)
{
    const cJSON *kind, *reason, *message, *code;
    cJSON *root;
    int rc = KUBE_EPARSE;

    memset(st, 0, sizeof(*st));
    st->code = (int)http_code;
    if (!json || len == 0)
        return KUBE_EPARSE;
    root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root))
        goto out;
    kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    reason = cJSON_GetObjectItemCaseSensitive(root, "reason");
    message = cJSON_GetObjectItemCaseSensitive(root, "message");
    code = cJSON_GetObjectItemCaseSensitive(root, "code");
    if (kind ? !(cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0)
             : !(reason || message || code))
        goto out;
    if (cJSON_IsString(reason))
        client_copy_utf8(st->reason, reason->valuestring, sizeof(st->reason));
    if (cJSON_IsString(message))
        client_copy_utf8(st->message, message->valuestring, sizeof(st->message));
    if (cJSON_IsNumber(code) && code->valuedouble >= 100 && code->valuedouble <= 599)
        st->code = code->valueint;
    rc = KUBE_OK;
out:
    cJSON_Delete(root);
    return rc;
}

/* The reason client-go gives a response that carries no Status. */
static const char *client_generic_reason(long code)
{
    switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return code >= 500 ? "InternalError" : "Unknown";
    }
}

int kube_response_error(long http_code, const char *body, size_t len, kube_status *st)
{
    char text[sizeof(st->message)];
    size_t n;

    if (http_code >= 200 && http_code < 300) {
        memset(st, 0, sizeof(*st));
        st->code = (int)http_code;
        return KUBE_OK;
    }
    if (kube_status_decode(body, len, http_code, st) == KUBE_OK) {
        if (!st->reason[0])
            kube_strlcpy(st->reason, client_generic_reason(http_code), sizeof(st->reason));
        return kube_err_from_status(http_code, st->reason);
    }
    /* Not a Status (e.g. "404 page not found\n"): keep the text. */
    kube_strlcpy(st->reason, client_generic_reason(http_code), sizeof(st->reason));
    n = body && len < sizeof(text) - 1 ? len : body ? sizeof(text) - 1 : 0;
    memcpy(text, body ? body : "", n);
    text[n] = '\0';
    n = strlen(text); /* a NUL inside ends the text */
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
        text[--n] = '\0';
    if (n > 0)
        client_copy_utf8(st->message, text, sizeof(st->message));
    else
        snprintf(st->message, sizeof(st->message), "the server answered HTTP %ld", http_code);
    return kube_err_from_status(http_code, NULL);
}

void kube_response_clear(kube_response *resp)
{
    free(resp->body);
    memset(resp, 0, sizeof(*resp));
}

/* ---- URL and TLS setup ------------------------------------------------ */

/* Reads one part of a parsed URL; *out is NULL when the part is absent. */
static int client_url_part(CURLU *u, CURLUPart part, unsigned flags, char **out)
{
    CURLUcode uc = curl_url_get(u, part, out, flags);

    if (uc == CURLUE_OK)
        return KUBE_OK;
    *out = NULL;
    return uc == CURLUE_OUT_OF_MEMORY ? KUBE_ENOMEM : KUBE_OK;
}

/* Builds base_url, connect_to and host_header for a tls-server-name: the
 * request goes to https://NAME:PORT (so SNI and certificate checks use NAME)
 * while curl connects to the real host, and Host keeps the real one. */
static int client_setup_server_name(kube_client *c, CURLU *u, const char *name)
{
    char *scheme = NULL, *host = NULL, *port = NULL, *given_port = NULL, *path = NULL;
    kube_buf url = KUBE_BUF_INIT, to = KUBE_BUF_INIT, hdr = KUBE_BUF_INIT;
    int rc;

    rc = client_url_part(u, CURLUPART_SCHEME, 0, &scheme);
    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_HOST, 0, &host);
    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT, &port);
    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_PORT, 0, &given_port);
    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_PATH, 0, &path);
    if (rc == KUBE_OK && (!scheme || !host || !port))
        rc = KUBE_ECONFIG;
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&url, "%s://%s:%s%s", scheme, name, port,
                             path && strcmp(path, "/") != 0 ? path : "");
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&to, "%s:%s:%s:%s", name, port, host, port);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&hdr, "Host: %s%s%s", host, given_port ? ":" : "",
                             given_port ? given_port : "");
    if (rc == KUBE_OK) {
        c->base_url = kube_buf_take(&url);
        c->connect_to = curl_slist_append(NULL, to.data);
        c->host_header = kube_buf_take(&hdr);
        if (!c->base_url || !c->connect_to || !c->host_header)
            rc = KUBE_ENOMEM;
    }
    kube_buf_free(&url);
    kube_buf_free(&to);
    kube_buf_free(&hdr);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(given_port);
    curl_free(path);
    return rc;
}

static int client_setup_server(kube_client *c)
{
    const char *server = kube_config_server(c->cfg);
    const char *name = kube_config_tls_server_name(c->cfg);
    CURLU *u;
    int rc = KUBE_OK;

    if (!server)
        return KUBE_ECONFIG;
    u = curl_url();
    if (!u)
        return KUBE_ENOMEM;
    if (curl_url_set(u, CURLUPART_URL, server, 0) != CURLUE_OK) {
        KLOG_ERROR("%s: server URL \"%s\" cannot be parsed", kube_config_source(c->cfg),
                   server);
        rc = KUBE_ECONFIG;
    } else if (name) {
        rc = client_setup_server_name(c, u, name);
    } else {
        c->base_url = strdup(server);
        rc = c->base_url ? KUBE_OK : KUBE_ENOMEM;
    }
    curl_url_cleanup(u);
    return rc;
}

/* CURLOPT_SSL_CTX_FUNCTION: installs the client's parsed TLS material into
 * a new connection's context (libcurl would parse PEM blobs each time). */
static CURLcode client_ssl_ctx(CURL *h, void *ssl_ctx, void *ud)
{
    const kube_client *c = ud;

    (void)h;
    return kube_tls_apply(c->tls, ssl_ctx) ? CURLE_OK : CURLE_OUT_OF_MEMORY;
}

/* Options every handle gets: TLS material, timeouts, protocol. */
static int client_setup_common(kube_client *c, CURL *h)
{
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, kube_config_insecure(c->cfg) ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, kube_config_insecure(c->cfg) ? 0L : 2L);
    if (!c->tls)
        return KUBE_OK;
    if (kube_tls_has_ca(c->tls)) { /* no CA bundle file to load per connection */
        curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, client_ssl_ctx);
    curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, c);
    return KUBE_OK;
}

/* Writes "Authorization: Bearer <token>" into line (size n). Returns KUBE_OK,
 * KUBE_ENOTFOUND (no token) or KUBE_ERANGE (line too small); line holds no
 * part of the token unless KUBE_OK. */
static int client_auth_line(kube_client *c, char *line, size_t n)
{
    memcpy(line, "Authorization: Bearer ", 22);
    return kube_config_token(c->cfg, line + 22, n - 22, 0);
}

/* The Authorization header line in *line: small (CLIENT_TOKEN_SMALL + 32
 * bytes, the caller's) or, for a longer token, a heap copy. Returns KUBE_OK,
 * KUBE_ENOTFOUND (anonymous) or KUBE_ENOMEM. After KUBE_OK the caller hands
 * *line to client_bearer_wipe(). */
static int client_bearer(kube_client *c, char *small, char **line)
{
    int rc = client_auth_line(c, small, CLIENT_TOKEN_SMALL + 32);

    *line = small;
    if (rc != KUBE_ERANGE)
        return rc;
    *line = malloc(CLIENT_TOKEN_MAX + 32);
    rc = *line ? client_auth_line(c, *line, CLIENT_TOKEN_MAX + 32) : KUBE_ENOMEM;
    if (rc != KUBE_OK) {
        free(*line);
        *line = NULL;
    }
    return rc;
}

/* Wipes the token from a client_bearer() line and frees a heap copy. */
static void client_bearer_wipe(char *line, char *small)
{
    explicit_bzero(line, strlen(line));
    if (line != small)
        free(line);
}

/* Appends the headers every request carries: Accept, Host override and the
 * bearer token (as kube_config_token has it now). The token is wiped from
 * every temporary buffer. */
static int client_auth_headers(kube_client *c, struct curl_slist **list)
{
    char small[CLIENT_TOKEN_SMALL + 32], *line;
    struct curl_slist *l = *list, *n;
    int rc = client_bearer(c, small, &line);

    if (rc == KUBE_OK) {
        n = curl_slist_append(l, line);
        rc = n ? KUBE_OK : KUBE_ENOMEM;
        l = n ? n : l;
        client_bearer_wipe(line, small);
    } else if (rc == KUBE_ENOTFOUND) {
        rc = KUBE_OK; /* anonymous (client certificate, or none) */
    }
    if (rc == KUBE_OK && (n = curl_slist_append(l, "Accept: application/json")))
        l = n;
    else if (rc == KUBE_OK)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && c->host_header) {
        n = curl_slist_append(l, c->host_header);
        rc = n ? KUBE_OK : KUBE_ENOMEM;
        l = n ? n : l;
    }
    *list = l;
    return rc;
}

/* Frees a header list after wiping it (it may hold the token). */
static void client_free_headers(struct curl_slist *l)
{
    for (struct curl_slist *p = l; p; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

/* ---- lifecycle -------------------------------------------------------- */

static pthread_once_t client_curl_once = PTHREAD_ONCE_INIT;
static CURLcode client_curl_init_rc;

static void client_curl_init(void)
{
    client_curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void client_share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
    kube_client *c = ud;
    (void)h;
    (void)access;
    pthread_mutex_lock(&c->share_locks[data]);
}

static void client_share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    kube_client *c = ud;
    (void)h;
    pthread_mutex_unlock(&c->share_locks[data]);
}

static int client_setup_share(kube_client *c)
{
    c->share = curl_share_init();
    if (!c->share)
        return KUBE_ENOMEM;
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, client_share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, client_share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return KUBE_OK;
}

/* Whether the environment names a proxy for this scheme (libcurl honours
 * it; kube/http1 does not, so such a client stays on libcurl). */
static int client_proxy_configured(int tls)
{
    static const char *const https_vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy",
                                             "ALL_PROXY", NULL};
    static const char *const http_vars[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};

    for (const char *const *v = tls ? https_vars : http_vars; *v; v++) {
        const char *e = getenv(*v);
        if (e && *e)
            return 1;
    }
    return 0;
}

/* Fills the parts of an h1 target that come from the server URL u. */
static int client_h1_endpoint(kube_client *c, CURLU *u, kube_h1_target *t, char **host,
                              char **path)
{
    char *scheme = NULL, *port = NULL;
    int64_t port_n = 0;
    int rc = client_url_part(u, CURLUPART_SCHEME, 0, &scheme);

    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_HOST, 0, host);
    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT, &port);
    if (rc == KUBE_OK)
        rc = client_url_part(u, CURLUPART_PATH, 0, path);
    if (rc == KUBE_OK && (!scheme || !*host || !port ||
                          kube_parse_int64(port, 1, 65535, &port_n) != KUBE_OK))
        rc = KUBE_ECONFIG;
    if (rc == KUBE_OK) {
        size_t n = strlen(*host);
        if (n > 2 && (*host)[0] == '[' && (*host)[n - 1] == ']') { /* IPv6 literal */
            memmove(*host, *host + 1, n - 2);
            (*host)[n - 2] = '\0';
        }
        t->tls = strcasecmp(scheme, "https") == 0;
        t->host = *host;
        t->port = (int)port_n;
        t->verify_name = kube_config_tls_server_name(c->cfg);
        t->insecure = kube_config_insecure(c->cfg);
        t->connect_timeout_ms = c->opts.connect_timeout_ms;
        t->material = c->tls;
    }
    curl_free(scheme);
    curl_free(port);
    return rc;
}

/* Sets up the h1 transport unless options or the environment rule it out. */
static int client_setup_h1(kube_client *c)
{
    kube_h1_target t;
    char *host = NULL, *path = NULL, err[256] = "";
    CURLU *u;
    int rc;

    if (c->opts.transport == KUBE_CLIENT_TRANSPORT_CURL)
        return KUBE_OK;
    memset(&t, 0, sizeof(t));
    u = curl_url();
    if (!u)
        return KUBE_ENOMEM;
    rc = curl_url_set(u, CURLUPART_URL, kube_config_server(c->cfg), 0) == CURLUE_OK
             ? client_h1_endpoint(c, u, &t, &host, &path)
             : KUBE_ECONFIG;
    if (rc == KUBE_OK && !client_proxy_configured(t.tls)) {
        c->h1_prefix = strdup(path && strcmp(path, "/") ? path : "");
        rc = c->h1_prefix ? kube_h1_new(&t, &c->h1, err, sizeof(err)) : KUBE_ENOMEM;
        if (rc == KUBE_ECONFIG)
            KLOG_ERROR("%s: %s", kube_config_source(c->cfg), err);
    }
    curl_free(host);
    curl_free(path);
    curl_url_cleanup(u);
    return rc;
}

static int client_check_options(const kube_client_options *o)
{
    if (o->qps < 0 || o->max_retries < 0)
        return KUBE_EINVAL;
    if (o->qps > 0 && o->burst < 1)
        return KUBE_EINVAL;
    return KUBE_OK;
}

/* A condition variable timed on the monotonic clock. */
static void client_init_cond(pthread_cond_t *cond)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

static kube_client *client_alloc(kube_config *cfg, const kube_client_options *o)
{
    kube_client *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->cfg = cfg;
    c->tls = kube_config_tls(cfg);
    c->opts = *o;
    if (c->opts.connect_timeout_ms <= 0)
        c->opts.connect_timeout_ms = 10000;
    if (c->opts.timeout_ms <= 0)
        c->opts.timeout_ms = 30000;
    c->user_agent = strdup(o->user_agent ? o->user_agent : "stickyvm");
    c->opts.user_agent = c->user_agent;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    pthread_mutex_init(&c->pool_lock, NULL);
    pthread_mutex_init(&c->stats_lock, NULL);
    pthread_mutex_init(&c->stop_lock, NULL);
    client_init_cond(&c->stop_cond);
    atomic_init(&c->backoff_base_ms, 100);
    atomic_init(&c->backoff_cap_ms, 5000);
    atomic_init(&c->rng, (uint64_t)kube_now_ns() ^ (uint64_t)(uintptr_t)c);
    return c;
}

int kube_client_new(kube_config *cfg, const kube_client_options *opts, kube_client **out)
{
    kube_client_options defaults;
    kube_client *c;
    int rc;

    *out = NULL;
    kube_client_options_default(&defaults);
    if (!opts)
        opts = &defaults;
    if (!cfg || (rc = client_check_options(opts)) != KUBE_OK)
        return KUBE_EINVAL;
    pthread_once(&client_curl_once, client_curl_init);
    if (client_curl_init_rc != CURLE_OK)
        return KUBE_EIO;
    c = client_alloc(cfg, opts);
    if (!c)
        return KUBE_ENOMEM;
    rc = c->user_agent ? KUBE_OK : KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = kube_ratelimit_new(opts->qps, opts->burst, NULL, &c->rl);
    if (rc == KUBE_OK)
        rc = client_setup_server(c);
    if (rc == KUBE_OK)
        rc = client_setup_share(c);
    if (rc == KUBE_OK)
        rc = client_setup_h1(c);
    if (rc != KUBE_OK) {
        kube_client_free(c);
        return rc;
    }
    *out = c;
    return KUBE_OK;
}

void kube_client_free(kube_client *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_idle; i++)
        curl_easy_cleanup(c->idle[i]);
    if (c->share)
        curl_share_cleanup(c->share);
    kube_ratelimit_free(c->rl);
    free(c->base_url);
    curl_slist_free_all(c->connect_to);
    free(c->host_header);
    kube_h1_free(c->h1);
    free(c->h1_prefix);
    free(c->user_agent);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
    pthread_mutex_destroy(&c->pool_lock);
    pthread_mutex_destroy(&c->stats_lock);
    pthread_mutex_destroy(&c->stop_lock);
    pthread_cond_destroy(&c->stop_cond);
    free(c);
}

/* ---- one attempt ------------------------------------------------------ */

typedef struct client_req {
    const char *method;
    const char *url;  /* base URL + path (libcurl) */
    const char *path; /* path and query as given (h1) */
    const char *content_type;
    const char *body;
    size_t len;
} client_req;

typedef struct client_result {
    kube_buf body;
    long retry_after_s; /* -1: absent */
    CURLcode cc;
    int broken;         /* the connection broke under the request */
    char errbuf[CURL_ERROR_SIZE];
} client_result;

static size_t client_on_body(char *data, size_t size, size_t n, void *ud)
{
    client_result *r = ud;
    return kube_buf_append(&r->body, data, size * n) == KUBE_OK ? size * n : 0;
}

static size_t client_on_header(char *data, size_t size, size_t n, void *ud)
{
    client_result *r = ud;
    size_t len = size * n;
    char value[32];
    int64_t secs;

    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        r->retry_after_s = -1; /* a new response (after 100 Continue) */
    } else if (len > 12 && strncasecmp(data, "Retry-After:", 12) == 0) {
        size_t vlen = len - 12;
        const char *v = data + 12;
        while (vlen > 0 && (*v == ' ' || *v == '\t'))
            v++, vlen--;
        while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
            vlen--;
        /* Only delay-seconds, as client-go; an HTTP-date is ignored. */
        if (vlen < sizeof(value)) {
            memcpy(value, v, vlen);
            value[vlen] = '\0';
            if (kube_parse_int64(value, 0, INT32_MAX, &secs) == KUBE_OK)
                r->retry_after_s = (long)secs;
        }
    }
    return len;
}

/* ---- handle pool ------------------------------------------------------ */

/* A new pooled handle: attached to the share, with every option that is the
 * same for all requests set once (the TLS material, timeouts, callbacks), so
 * a request only sets its URL, method, headers and result pointers. NULL
 * when out of memory. */
static CURL *client_new_handle(kube_client *c)
{
    CURL *h = curl_easy_init();

    if (!h)
        return NULL;
    if (client_setup_common(c, h) != KUBE_OK) {
        curl_easy_cleanup(h);
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->opts.timeout_ms);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, client_on_body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, client_on_header);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, client_on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    return h;
}

/* An idle handle (keeping its connection and TLS session), or a new one. */
static CURL *client_pool_get(kube_client *c)
{
    CURL *h = NULL;

    pthread_mutex_lock(&c->pool_lock);
    if (c->n_idle > 0)
        h = c->idle[--c->n_idle];
    pthread_mutex_unlock(&c->pool_lock);
    return h ? h : client_new_handle(c);
}

static void client_pool_put(kube_client *c, CURL *h)
{
    pthread_mutex_lock(&c->pool_lock);
    if (c->n_idle < CLIENT_POOL_MAX) {
        c->idle[c->n_idle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

/* Sets the method and body on a reused handle, replacing the previous
 * request's: a GET, or a DELETE without body, is a body-less GET-based
 * request (CURLOPT_HTTPGET clears a previous POST); everything else posts
 * its body ("" when none), under its own name unless it is POST. */
static void client_setup_method(CURL *h, const client_req *q)
{
    int post = strcmp(q->method, "POST") == 0;
    int bodiless = strcmp(q->method, "GET") == 0 || (!q->body && !strcmp(q->method, "DELETE"));

    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, post || !strcmp(q->method, "GET") ? NULL : q->method);
    if (bodiless) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        return;
    }
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body ? q->body : "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(q->body ? q->len : 0));
}

/* Request headers: auth and Accept, Content-Type, no Expect: 100-continue. */
static int client_request_headers(kube_client *c, const client_req *q,
                                  struct curl_slist **out)
{
    struct curl_slist *l = NULL, *n;
    kube_buf ct = KUBE_BUF_INIT;
    int rc = client_auth_headers(c, &l);

    if (rc == KUBE_OK && q->content_type)
        rc = kube_buf_printf(&ct, "Content-Type: %s", q->content_type);
    if (rc == KUBE_OK && q->content_type) {
        n = curl_slist_append(l, ct.data);
        rc = n ? KUBE_OK : KUBE_ENOMEM;
        l = n ? n : l;
    }
    if (rc == KUBE_OK) {
        n = curl_slist_append(l, "Expect:");
        rc = n ? KUBE_OK : KUBE_ENOMEM;
        l = n ? n : l;
    }
    kube_buf_free(&ct);
    if (rc != KUBE_OK) {
        client_free_headers(l);
        return rc;
    }
    *out = l;
    return KUBE_OK;
}

/* Whether a transport failure means the connection broke under a request
 * the server may never have seen answered (client-go retries those for GET). */
static int client_broken_connection(CURLcode cc)
{
    return cc == CURLE_GOT_NOTHING || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
           cc == CURLE_PARTIAL_FILE || cc == CURLE_HTTP2 || cc == CURLE_HTTP2_STREAM;
}

/* Runs one HTTP exchange on a pooled handle. Returns KUBE_OK when an answer
 * (any code) arrived, with the code in *code; otherwise the transport error,
 * with r->cc and r->errbuf describing it. */
static int client_perform(kube_client *c, const client_req *q, client_result *r, long *code)
{
    struct curl_slist *headers = NULL;
    CURL *h = client_pool_get(c);
    int rc;

    *code = 0;
    if (!h)
        return KUBE_ENOMEM;
    rc = client_request_headers(c, q, &headers);
    if (rc == KUBE_OK) {
        curl_easy_setopt(h, CURLOPT_URL, q->url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->errbuf);
        client_setup_method(h, q);
        r->cc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
        /* Detach what points into this call's memory. */
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, NULL);
    }
    client_free_headers(headers);
    client_pool_put(c, h);
    if (rc != KUBE_OK)
        return rc;
    if (r->cc == CURLE_OK)
        return KUBE_OK;
    r->broken = client_broken_connection(r->cc);
    if (r->cc == CURLE_ABORTED_BY_CALLBACK)
        return KUBE_ECANCELED;
    if (r->cc == CURLE_OPERATION_TIMEDOUT)
        return KUBE_ETIMEDOUT;
    if (r->cc == CURLE_OUT_OF_MEMORY || (r->cc == CURLE_WRITE_ERROR && r->body.data))
        return KUBE_ENOMEM;
    return KUBE_EIO;
}

/* The header lines of a request on the h1 transport (the token among
 * them): Authorization, Accept, User-Agent, Content-Type. */
static int client_h1_headers(kube_client *c, const client_req *q, kube_buf *out)
{
    char small[CLIENT_TOKEN_SMALL + 32], *line;
    int rc = client_bearer(c, small, &line);

    if (rc == KUBE_OK) {
        rc = kube_buf_printf(out, "%s\r\n", line);
        client_bearer_wipe(line, small);
    } else if (rc == KUBE_ENOTFOUND) {
        rc = KUBE_OK; /* anonymous (client certificate, or none) */
    }
    if (rc == KUBE_OK)
        rc = kube_buf_printf(out, "Accept: application/json\r\nUser-Agent: %s\r\n", c->user_agent);
    if (rc == KUBE_OK && q->content_type)
        rc = kube_buf_printf(out, "Content-Type: %s\r\n", q->content_type);
    return rc;
}

/* client_perform on the h1 transport: same contract. */
static int client_perform_h1(kube_client *c, const client_req *q, client_result *r, long *code)
{
    kube_buf headers = KUBE_BUF_INIT, target = KUBE_BUF_INIT;
    kube_h1_response resp = {0, -1, 0, KUBE_BUF_INIT};
    kube_h1_request req = {q->method, NULL, NULL, q->body, q->body ? q->len : 0,
                           c->opts.timeout_ms, &c->stopping};
    int rc = client_h1_headers(c, q, &headers);

    *code = 0;
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&target, "%s%s", c->h1_prefix, q->path);
    if (rc == KUBE_OK) {
        req.target = target.data;
        req.headers = headers.data;
        rc = kube_h1_exchange(c->h1, &req, &resp, r->errbuf, sizeof(r->errbuf));
        r->broken = rc == KUBE_EIO && resp.connected;
    }
    if (headers.data)
        explicit_bzero(headers.data, headers.len);
    kube_buf_free(&headers);
    kube_buf_free(&target);
    if (rc != KUBE_OK) {
        kube_buf_free(&resp.body);
        return rc;
    }
    *code = resp.code;
    r->retry_after_s = resp.retry_after_s;
    r->body = resp.body;
    return KUBE_OK;
}

static void client_count(kube_client *c, const char *method, int retry)
{
    pthread_mutex_lock(&c->stats_lock);
    switch (method[0] == 'P' ? method[1] : method[0]) {
    case 'G': c->stats.get++; break;
    case 'O': c->stats.post++; break;
    case 'U': c->stats.put++; break;
    case 'A': c->stats.patch++; break;
    case 'D': c->stats.del++; break;
    default: break;
    }
    if (retry)
        c->stats.retries++;
    pthread_mutex_unlock(&c->stats_lock);
}

void kube_client_stats_get(kube_client *c, kube_client_stats *out)
{
    pthread_mutex_lock(&c->stats_lock);
    *out = c->stats;
    pthread_mutex_unlock(&c->stats_lock);
}

void kube_client_wait_rate(kube_client *c)
{
    client_pause(c, kube_ratelimit_reserve(c->rl));
}

/* ---- the request loop ------------------------------------------------- */

static int client_valid_request(const char *method, const char *path, const char *body,
                                const char *content_type)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    int known = 0;

    if (!method || !path || path[0] != '/')
        return 0;
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        known |= strcmp(method, methods[i]) == 0;
    if (!known || (body && strcmp(method, "GET") == 0) || (body && !content_type))
        return 0;
    for (const char *p = path; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f)
            return 0;
    if (content_type)
        for (const char *p = content_type; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
                return 0;
    return 1;
}

/* Records a transport failure (or cancellation) in resp->status. r may be
 * NULL when no transfer was made. */
static void client_transport_failure(kube_response *resp, const client_req *q,
                                     const client_result *r, int rc)
{
    const char *why = rc == KUBE_ECANCELED  ? "canceled: the client is shutting down"
                      : r && r->errbuf[0]   ? r->errbuf
                      : r && r->cc != CURLE_OK ? curl_easy_strerror(r->cc)
                                               : kube_strerror(rc);

    resp->code = 0;
    resp->status.code = 0;
    resp->status.reason[0] = '\0';
    snprintf(resp->status.message, sizeof(resp->status.message), "%s %s: %s", q->method,
             q->url, why);
}

/* After a 401: re-reads the token and says whether it changed. */
static int client_token_changed(kube_client *c)
{
    char *before = malloc(CLIENT_TOKEN_MAX), *after = malloc(CLIENT_TOKEN_MAX);
    int changed = 0;

    if (before && after && kube_config_token(c->cfg, before, CLIENT_TOKEN_MAX, 0) == KUBE_OK &&
        kube_config_token(c->cfg, after, CLIENT_TOKEN_MAX, 1) == KUBE_OK)
        changed = strcmp(before, after) != 0;
    if (before)
        explicit_bzero(before, CLIENT_TOKEN_MAX);
    if (after)
        explicit_bzero(after, CLIENT_TOKEN_MAX);
    free(before);
    free(after);
    return changed;
}

/* One attempt: rate limit, exchange, and the decision about the next one.
 * Returns 1 to try again (after *delay_ms), 0 when *rc is final. */
static int client_attempt(kube_client *c, const client_req *q, int attempt, int *reauth,
                          kube_response *resp, int *rc, long *delay_ms)
{
    client_result r = {KUBE_BUF_INIT, -1, CURLE_OK, 0, {0}};
    int64_t start = kube_now_ms();
    long code;

    if (client_pause(c, kube_ratelimit_reserve(c->rl)) != KUBE_OK) {
        *rc = KUBE_ECANCELED;
        client_transport_failure(resp, q, &r, *rc);
        return 0;
    }
    client_count(c, q->method, attempt > 0);
    *rc = c->h1 ? client_perform_h1(c, q, &r, &code) : client_perform(c, q, &r, &code);
    *delay_ms = 0;
    KLOG_V(6, "%s %s %ld in %lld ms", q->method, q->url, code,
           (long long)(kube_now_ms() - start));
    if (*rc != KUBE_OK) {
        kube_buf_free(&r.body);
        client_transport_failure(resp, q, &r, *rc);
        return (*rc == KUBE_EIO || *rc == KUBE_ETIMEDOUT) && r.broken &&
               kube_retry_decide(q->method, 0, -1, attempt, c->opts.max_retries,
                                 atomic_load(&c->backoff_base_ms),
                                 atomic_load(&c->backoff_cap_ms), client_random(c), delay_ms);
    }
    resp->code = code;
    resp->len = r.body.len;
    resp->body = kube_buf_take(&r.body);
    if (!resp->body) {
        *rc = KUBE_ENOMEM;
        return 0;
    }
    if (code >= 200 && code < 300)
        return 0;
    *rc = kube_response_error(code, resp->body, resp->len, &resp->status);
    if (code == 401 && !*reauth && client_token_changed(c)) {
        *reauth = 1;
        return 1;
    }
    return kube_retry_decide(q->method, code, r.retry_after_s, attempt, c->opts.max_retries,
                             atomic_load(&c->backoff_base_ms), atomic_load(&c->backoff_cap_ms),
                             client_random(c), delay_ms);
}

int kube_client_do(kube_client *c, const char *method, const char *path,
                   const char *content_type, const char *body, size_t len,
                   kube_response *resp)
{
    kube_buf url = KUBE_BUF_INIT;
    client_req q = {method, NULL, path, content_type, body, len};
    int reauth = 0, rc = KUBE_OK;
    long delay_ms;

    kube_response_clear(resp);
    if (!c || !client_valid_request(method, path, body, content_type))
        return KUBE_EINVAL;
    if (kube_buf_printf(&url, "%s%s", c->base_url, path) != KUBE_OK)
        return KUBE_ENOMEM;
    q.url = url.data;
    for (int attempt = 0;; attempt++) {
        if (!client_attempt(c, &q, attempt, &reauth, resp, &rc, &delay_ms))
            break;
        KLOG_V(4, "%s %s: %s (HTTP %ld); retrying in %ld ms", method, path,
               kube_strerror(rc), resp->code, delay_ms);
        kube_response_clear(resp);
        if (client_pause(c, (int64_t)delay_ms * 1000000LL) != KUBE_OK) {
            rc = KUBE_ECANCELED;
            client_transport_failure(resp, &q, NULL, rc);
            break;
        }
    }
    kube_buf_free(&url);
    return rc;
}

/* ---- streams ---------------------------------------------------------- */

int kube_client_setup_stream(kube_client *c, CURL *easy, const char *path,
                             struct curl_slist **headers)
{
    kube_buf url = KUBE_BUF_INIT;
    struct curl_slist *l = NULL;
    int rc;

    *headers = NULL;
    if (!c || !easy || !client_valid_request("GET", path, NULL, NULL))
        return KUBE_EINVAL;
    rc = client_setup_common(c, easy);
    if (rc == KUBE_OK)
        rc = client_auth_headers(c, &l);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&url, "%s%s", c->base_url, path);
    if (rc != KUBE_OK) {
        client_free_headers(l);
        kube_buf_free(&url);
        return rc;
    }
    curl_easy_setopt(easy, CURLOPT_URL, url.data); /* copied by curl */
    curl_easy_setopt(easy, CURLOPT_SHARE, c->share); /* TLS sessions resumed across watches */
    if (c->connect_to)
        curl_easy_setopt(easy, CURLOPT_CONNECT_TO, c->connect_to);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, l);
    kube_buf_free(&url);
    *headers = l;
    return KUBE_OK;
}
