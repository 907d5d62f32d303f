/*
 * kube/transport/client.c - the kube_client object: server URL and TLS setup, the
 * shared DNS/TLS-session cache, the pool of request handles (every constant
 * option set once), the header lines shared by requests, the I/O thread's
 * lifecycle, and watch handles (kube_client_setup_stream). Requests and
 * retries are kube/transport/client_do.c; answers kube/transport/client_answer.c.
 */
#include "kube/transport/client_int.h"

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLIENT_TOKEN_MAX 16384  /* longest bearer token accepted */
#define CLIENT_TOKEN_SMALL 4096 /* tokens up to this size need no heap copy */

void kube_client_options_default(kube_client_options *o)
{
    o->qps = 50;
    o->burst = 100;
    o->connect_timeout_ms = 10000;
    o->timeout_ms = 30000;
    o->max_retries = 5;
    o->user_agent = "stickyvm";
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
        KLOG_ERROR("%s: server URL \"%s\" cannot be parsed", kube_config_source(c->cfg), server);
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

void kube_client_setup_handle(kube_client *c, CURL *h)
{
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(h, CURLOPT_PROXYHEADER, c->ua_line); /* a proxy's CONNECT */
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, kube_config_insecure(c->cfg) ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, kube_config_insecure(c->cfg) ? 0L : 2L);
    curl_easy_setopt(h, CURLOPT_SHARE, c->share); /* TLS sessions resumed, DNS cached */
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
    if (!c->tls)
        return;
    if (kube_tls_has_ca(c->tls)) { /* no CA bundle file to load per connection */
        curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, client_ssl_ctx);
    curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, c);
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

/* Frees a header list after wiping it (it may hold the token). */
static void client_free_headers(struct curl_slist *l)
{
    for (struct curl_slist *p = l; p; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

/* Appends a copy of line to *l. Returns KUBE_OK or KUBE_ENOMEM (*l kept). */
static int client_append(struct curl_slist **l, const char *line)
{
    struct curl_slist *n = curl_slist_append(*l, line);

    if (!n)
        return KUBE_ENOMEM;
    *l = n;
    return KUBE_OK;
}

/* The header lines every request carries: auth (the Authorization line, or
 * NULL when anonymous), Accept, User-Agent and the Host override, in a new
 * list for client_free_headers(). Returns KUBE_OK or KUBE_ENOMEM (*out NULL). */
static int client_header_list(kube_client *c, const char *auth, struct curl_slist **out)
{
    struct curl_slist *l = NULL;
    int rc = auth ? client_append(&l, auth) : KUBE_OK;

    if (rc == KUBE_OK)
        rc = client_append(&l, "Accept: application/json");
    if (rc == KUBE_OK)
        rc = client_append(&l, c->ua_line->data);
    if (rc == KUBE_OK && c->host_header)
        rc = client_append(&l, c->host_header);
    if (rc != KUBE_OK) {
        client_free_headers(l);
        l = NULL;
    }
    *out = l;
    return rc;
}

/* client_header_list for the token kube_config_token has now. The token is
 * wiped from every temporary buffer. */
static int client_current_headers(kube_client *c, struct curl_slist **out)
{
    char small[CLIENT_TOKEN_SMALL + 32], *line;
    int rc = client_bearer(c, small, &line);

    *out = NULL;
    if (rc == KUBE_ENOTFOUND) /* anonymous (client certificate, or none) */
        return client_header_list(c, NULL, out);
    if (rc != KUBE_OK)
        return rc;
    rc = client_header_list(c, line, out);
    client_bearer_wipe(line, small);
    return rc;
}

/* ---- header sets shared by requests ----------------------------------- */

/* A header set for the Authorization line auth (NULL: anonymous), holding
 * one reference; with "Expect:" (no 100-continue round trip). NULL when out
 * of memory. */
static client_headers *client_headers_new(kube_client *c, const char *auth)
{
    client_headers *h = calloc(1, sizeof(*h));

    if (!h)
        return NULL;
    if (client_header_list(c, auth, &h->list) != KUBE_OK ||
        client_append(&h->list, "Expect:") != KUBE_OK) {
        client_free_headers(h->list);
        free(h);
        return NULL;
    }
    h->has_token = auth != NULL;
    atomic_init(&h->refs, 1);
    return h;
}

static int client_headers_match(const client_headers *h, const char *auth)
{
    return auth ? h->has_token && strcmp(h->list->data, auth) == 0 : !h->has_token;
}

void kube_client_headers_put(client_headers *h)
{
    if (h && atomic_fetch_sub(&h->refs, 1) == 1) {
        client_free_headers(h->list);
        free(h);
    }
}

int kube_client_headers_get(kube_client *c, client_headers **out)
{
    char small[CLIENT_TOKEN_SMALL + 32], *line;
    client_headers *h, *old = NULL;
    int rc = client_bearer(c, small, &line);
    const char *auth = rc == KUBE_OK ? line : NULL;

    *out = NULL;
    if (rc != KUBE_OK && rc != KUBE_ENOTFOUND)
        return rc;
    pthread_mutex_lock(&c->headers_lock);
    h = c->headers;
    if (!h || !client_headers_match(h, auth)) { /* the token changed */
        old = h;
        h = client_headers_new(c, auth);
        if (h)
            c->headers = h;
        else
            old = NULL;
    }
    if (h)
        atomic_fetch_add(&h->refs, 1);
    pthread_mutex_unlock(&c->headers_lock);
    kube_client_headers_put(old); /* requests in flight keep theirs */
    if (auth)
        client_bearer_wipe(line, small);
    *out = h;
    return h ? KUBE_OK : KUBE_ENOMEM;
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
    pthread_mutex_init(&c->headers_lock, NULL);
    pthread_mutex_init(&c->stats_lock, NULL);
    pthread_mutex_init(&c->stop_lock, NULL);
    client_init_cond(&c->stop_cond);
    atomic_init(&c->backoff_base_ms, 100);
    atomic_init(&c->backoff_cap_ms, 5000);
    return c;
}

/* Builds c->ua_line from c->user_agent. Returns KUBE_OK or KUBE_ENOMEM. */
static int client_ua_line(kube_client *c)
{
    kube_buf line = {0};
    int rc = kube_buf_printf(&line, "User-Agent: %s", c->user_agent);

    if (rc == KUBE_OK)
        rc = client_append(&c->ua_line, line.data);
    kube_buf_free(&line);
    return rc;
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
    rc = c->user_agent ? client_ua_line(c) : KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = kube_ratelimit_new(opts->qps, opts->burst, NULL, &c->rl);
    if (rc == KUBE_OK)
        rc = client_setup_server(c);
    if (rc == KUBE_OK)
        rc = client_setup_share(c);
    if (rc == KUBE_OK)
        rc = kube_http_loop_new("kube-http", CLIENT_HOST_CONNS, &c->loop);
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
    kube_http_loop_free(c->loop); /* closes the connections */
    for (size_t i = 0; i < c->n_idle; i++)
        curl_easy_cleanup(c->idle[i]);
    kube_client_headers_put(c->headers);
    if (c->share)
        curl_share_cleanup(c->share);
    kube_ratelimit_free(c->rl);
    free(c->base_url);
    curl_slist_free_all(c->connect_to);
    free(c->host_header);
    free(c->user_agent);
    curl_slist_free_all(c->ua_line);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
    pthread_mutex_destroy(&c->pool_lock);
    pthread_mutex_destroy(&c->headers_lock);
    pthread_mutex_destroy(&c->stats_lock);
    pthread_mutex_destroy(&c->stop_lock);
    pthread_cond_destroy(&c->stop_cond);
    free(c);
}

/* ---- streams ---------------------------------------------------------- */

int kube_client_valid_request(const char *method, const char *path, const char *body,
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

int kube_client_setup_stream(kube_client *c, CURL *easy, const char *path,
                             struct curl_slist **headers)
{
    kube_buf url = KUBE_BUF_INIT;
    struct curl_slist *l = NULL;
    int rc;

    *headers = NULL;
    if (!c || !easy || !kube_client_valid_request("GET", path, NULL, NULL))
        return KUBE_EINVAL;
    rc = client_current_headers(c, &l);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&url, "%s%s", c->base_url, path);
    if (rc != KUBE_OK) {
        client_free_headers(l);
        kube_buf_free(&url);
        return rc;
    }
    kube_client_setup_handle(c, easy);
    curl_easy_setopt(easy, CURLOPT_URL, url.data); /* copied by curl */
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, l);
    /* streams started together wait for the first connection's ALPN and
     * then share it, instead of each opening one while it is pending */
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    kube_buf_free(&url);
    *headers = l;
    return KUBE_OK;
}
