/*
 * kube/transport/client_do.c - kube_client_do: one request, its attempts (rate
 * limit, exchange on the client's I/O thread, retry decision), waits that
 * shutdown ends, and the counters. See kube/transport/client.h.
 */
#include "kube/transport/client_int.h"

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLIENT_TOKEN_MAX 16384 /* longest bearer token accepted */
#define CLIENT_CT_SMALL 128    /* Content-Type lines up to this size need no heap copy */

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

void kube_client_set_fence(kube_client *c, kube_client_fence_fn fence, void *ud)
{
    c->fence = fence;
    c->fence_ud = ud;
}

void kube_client_shutdown(kube_client *c)
{
    pthread_mutex_lock(&c->stop_lock);
    atomic_store(&c->stopping, 1);
    pthread_cond_broadcast(&c->stop_cond);
    pthread_mutex_unlock(&c->stop_lock);
    kube_http_loop_cancel(c->loop); /* transfers in flight are off the wire */
}

/* ---- one attempt ------------------------------------------------------ */

typedef struct client_req {
    const char *method;
    const char *url; /* base URL + path */
    const char *content_type;
    const char *body;
    size_t len;
    const char *path; /* as the caller gave it (for the fence) */
} client_req;

typedef struct client_result {
    kube_buf body;
    long retry_after_s; /* -1: absent */
    CURLcode cc;
    long os_errno; /* CURLINFO_OS_ERRNO after a failure */
    int broken;    /* the connection broke under the request */
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

    r->retry_after_s = kube_retry_after_header(r->retry_after_s, data, size * n);
    return size * n;
}

/* ---- handle pool ------------------------------------------------------ */

/* A new pooled handle, with every option that is the same for all requests
 * set once (the TLS material, timeouts, callbacks), so a request only sets
 * its URL, method, headers and result pointers. NULL when out of memory. */
static CURL *client_new_handle(kube_client *c)
{
    CURL *h = curl_easy_init();

    if (!h)
        return NULL;
    kube_client_setup_handle(c, h);
    /* Wait for the one HTTP/2 connection rather than open more. */
    curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->opts.timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, client_on_body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, client_on_header);
    return h;
}

/* An idle handle, or a new one (connections live in the I/O loop's multi
 * handle, not in easy handles). */
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

    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                     post || !strcmp(q->method, "GET") ? NULL : q->method);
    if (bodiless) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        return;
    }
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body ? q->body : "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(q->body ? q->len : 0));
}

/* Whether a transport failure means the connection broke under a request
 * the server may never have seen answered (client-go retries those for GET). */
static int client_broken_connection(CURLcode cc)
{
    return cc == CURLE_GOT_NOTHING || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
           cc == CURLE_PARTIAL_FILE || cc == CURLE_HTTP2 || cc == CURLE_HTTP2_STREAM;
}

/* The request's header list: a "Content-Type: ..." line (in small, of
 * CLIENT_CT_SMALL bytes, or in big) in front of the shared lines, or the
 * shared lines alone. NULL when out of memory. */
static struct curl_slist *client_content_type(const client_req *q, struct curl_slist *shared,
                                              struct curl_slist *node, char *small, kube_buf *big)
{
    size_t n;

    if (!q->content_type)
        return shared;
    n = strlen(q->content_type);
    if (n + 15 <= CLIENT_CT_SMALL) {
        memcpy(small, "Content-Type: ", 14);
        memcpy(small + 14, q->content_type, n + 1);
        node->data = small;
    } else if (kube_buf_printf(big, "Content-Type: %s", q->content_type) == KUBE_OK) {
        node->data = big->data;
    } else {
        return NULL;
    }
    node->next = shared;
    return node;
}

/* Sets a pooled handle up for q, the answer going to r. */
static void client_setup_request(CURL *h, const client_req *q, struct curl_slist *headers,
                                 client_result *r)
{
    curl_easy_setopt(h, CURLOPT_URL, q->url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->errbuf);
    client_setup_method(h, q);
}

/* Runs one HTTP exchange on a pooled handle, on the I/O thread. Returns
 * KUBE_OK when an answer (any code) arrived, with the code in *code;
 * otherwise the transport error, with r->cc and r->errbuf describing it.
 * The handle keeps pointers into this call's memory, which the next
 * request replaces before any use. */
static int client_perform(kube_client *c, const client_req *q, client_result *r, long *code)
{
    char small[CLIENT_CT_SMALL];
    kube_buf big = KUBE_BUF_INIT;
    struct curl_slist node, *headers = NULL;
    client_headers *shared = NULL;
    CURL *h = client_pool_get(c);
    int rc = h ? kube_client_headers_get(c, &shared) : KUBE_ENOMEM;

    *code = 0;
    if (rc == KUBE_OK) {
        headers = client_content_type(q, shared->list, &node, small, &big);
        rc = headers ? KUBE_OK : KUBE_ENOMEM;
    }
    if (rc == KUBE_OK) {
        client_setup_request(h, q, headers, r);
        r->cc = kube_http_loop_perform(c->loop, h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
        if (r->cc != CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &r->os_errno);
    }
    kube_client_headers_put(shared);
    kube_buf_free(&big);
    if (h)
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

static void client_count(kube_client *c, const char *method, int retry)
{
    pthread_mutex_lock(&c->stats_lock);
    switch (method[0] == 'P' ? method[1] : method[0]) {
    case 'G':
        c->stats.get++;
        break;
    case 'O':
        c->stats.post++;
        break;
    case 'U':
        c->stats.put++;
        break;
    case 'A':
        c->stats.patch++;
        break;
    case 'D':
        c->stats.del++;
        break;
    default:
        break;
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

/* Records a transport failure (or cancellation) in resp->status. r may be
 * NULL when no transfer was made. */
static void client_transport_failure(kube_response *resp, const client_req *q,
                                     const client_result *r, int rc)
{
    const char *why = rc == KUBE_ECANCELED     ? "canceled: the client is shutting down"
                      : r && r->errbuf[0]      ? r->errbuf
                      : r && r->cc != CURLE_OK ? curl_easy_strerror(r->cc)
                                               : kube_strerror(rc);

    resp->code = 0;
    resp->curl_code = r ? (int)r->cc : 0;
    resp->os_errno = r ? r->os_errno : 0;
    resp->status.code = 0;
    resp->status.reason[0] = '\0';
    snprintf(resp->status.message, sizeof(resp->status.message), "%s %s: %s", q->method, q->url,
             why);
}

/* Asks the fence about the next attempt of q: 1 (resp explaining why)
 * when it may not go. */
static int client_fenced(kube_client *c, const client_req *q, kube_response *resp)
{
    const char *why = c->fence ? c->fence(c->fence_ud, q->method, q->path) : NULL;

    if (!why)
        return 0;
    client_transport_failure(resp, q, NULL, KUBE_ECANCELED);
    snprintf(resp->status.message, sizeof(resp->status.message), "%s %s: refused: %s", q->method,
             q->url, why);
    return 1;
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
    client_result r = {KUBE_BUF_INIT, -1, CURLE_OK, 0, 0, {0}};
    int64_t start = kube_now_ms();
    long code;

    if (client_pause(c, kube_ratelimit_reserve(c->rl)) != KUBE_OK) {
        *rc = KUBE_ECANCELED;
        client_transport_failure(resp, q, &r, *rc);
        return 0;
    }
    if (client_fenced(c, q, resp)) {
        *rc = KUBE_ECANCELED;
        return 0;
    }
    client_count(c, q->method, attempt > 0);
    *rc = client_perform(c, q, &r, &code);
    *delay_ms = 0;
    KLOG_V(6, "%s %s %ld in %lld ms", q->method, q->url, code, (long long)(kube_now_ms() - start));
    if (*rc != KUBE_OK) {
        kube_buf_free(&r.body);
        client_transport_failure(resp, q, &r, *rc);
        return (*rc == KUBE_EIO || *rc == KUBE_ETIMEDOUT) && r.broken &&
               kube_retry_decide(q->method, 0, -1, attempt, c->opts.max_retries,
                                 atomic_load(&c->backoff_base_ms), atomic_load(&c->backoff_cap_ms),
                                 client_random(c), delay_ms);
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

int kube_client_do(kube_client *c, const char *method, const char *path, const char *content_type,
                   const char *body, size_t len, kube_response *resp)
{
    kube_buf url = KUBE_BUF_INIT;
    client_req q = {method, NULL, content_type, body, len, path};
    int reauth = 0, rc = KUBE_OK;
    long delay_ms;

    kube_response_clear(resp);
    if (!c || !kube_client_valid_request(method, path, body, content_type))
        return KUBE_EINVAL;
    if (kube_buf_printf(&url, "%s%s", c->base_url, path) != KUBE_OK)
        return KUBE_ENOMEM;
    q.url = url.data;
    for (int attempt = 0;; attempt++) {
        if (!client_attempt(c, &q, attempt, &reauth, resp, &rc, &delay_ms))
            break;
        KLOG_V(4, "%s %s: %s (HTTP %ld); retrying in %ld ms", method, path, kube_strerror(rc),
               resp->code, delay_ms);
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
