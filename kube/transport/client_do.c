/*
 * kube/transport/client_do.c - a request and its attempts, as a chain of
 * steps on the client's I/O thread (kube/transport/client_loop.h): the
 * rate limiter's wait and the backoff between attempts are the loop's
 * timers, the fence is asked before every attempt, the exchange runs on a
 * pooled handle, and the retry decision follows the answer.
 * kube_client_do_async hands the outcome to a function; kube_client_do
 * waits for it. Also the counters and the waits that shutdown ends. See
 * kube/transport/client.h.
 */
#include "kube/transport/client_int.h"

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/rand.h"
#include "kube/util/log.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLIENT_TOKEN_MAX 16384 /* longest bearer token accepted */
#define CLIENT_CT_SMALL 128    /* Content-Type lines up to this size need no heap copy */
#define CLIENT_CANCELED "canceled: the client is shutting down"

void kube_client_set_backoff(kube_client *c, long base_ms, long cap_ms)
{
    atomic_store(&c->backoff_base_ms, base_ms);
    atomic_store(&c->backoff_cap_ms, cap_ms);
}

/* A random 32-bit value for the retry's jitter, from the calling
 * thread's state (kube/util/rand.h): lock-free. */
static unsigned client_random(void)
{
    return (unsigned)(kube_rand_next(kube_rand_local()) >> 32);
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
    /* libcurl's smallest upload buffer (16 KB, not 64 KB) for each handle
     * in flight or in the pool: bindings and events are under 2 KB, and a
     * larger body goes out in 16 KB pieces */
    curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
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

/* The KUBE_E* code of a transfer that got no answer. */
static int client_transfer_error(const client_result *r)
{
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
    const char *why = rc == KUBE_ECANCELED     ? CLIENT_CANCELED
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

/* ---- a request: its steps on the I/O thread ------------------------- */

/* One request: its copy of the arguments (the strings follow the struct in
 * the same allocation), the attempt under way and the answer so far. */
typedef struct client_call {
    kube_http_task task; /* the step the loop runs next; first member */
    kube_client *c;
    client_req q;
    int attempt, reauth;
    int64_t start_ms;          /* the attempt's start */
    client_result r;           /* the attempt's transfer */
    client_headers *shared;    /* the attempt's header lines */
    struct curl_slist ct_node; /* its Content-Type line, before them */
    char ct_small[CLIENT_CT_SMALL];
    kube_buf ct_big;
    kube_response resp;
    kube_client_done_fn done;
    void *ud;
    kube_ratelimit *rl; /* the attempts' limiter: the client's, or the caller's */
} client_call;

static void call_begin(kube_http_task *t, CURLcode cc);

/* Ends the call with rc: done gets the answer, then the call is freed. */
static void call_finish(client_call *k, int rc)
{
    k->done(k->ud, rc, &k->resp);
    kube_response_clear(&k->resp);
    free(k);
}

/* Ends a call the client's shutdown stopped. */
static void call_canceled(client_call *k)
{
    kube_response_clear(&k->resp);
    client_transport_failure(&k->resp, &k->q, NULL, KUBE_ECANCELED);
    call_finish(k, KUBE_ECANCELED);
}

/* Runs the call's step fn in ms (at once when ms <= 0). */
static void call_after(client_call *k, kube_http_task_fn fn, int64_t ms)
{
    k->task.fn = fn;
    if (ms <= 0)
        fn(&k->task, CURLE_OK);
    else if (kube_http_loop_at(k->c->loop, &k->task, kube_now_ms() + ms) != KUBE_OK)
        call_canceled(k);
}

/* Gives back the handle and header lines an attempt took. */
static void call_release(client_call *k)
{
    kube_client_headers_put(k->shared);
    k->shared = NULL;
    kube_buf_free(&k->ct_big);
    if (k->task.easy)
        client_pool_put(k->c, k->task.easy);
    k->task.easy = NULL;
}

/* Sets a pooled handle (k->task.easy) up for the attempt. KUBE_OK or
 * KUBE_ENOMEM / KUBE_ERANGE (call_release gives back what it took). */
static int call_setup(client_call *k)
{
    struct curl_slist *headers;
    int rc;

    k->task.easy = client_pool_get(k->c);
    if (!k->task.easy)
        return KUBE_ENOMEM;
    if ((rc = kube_client_headers_get(k->c, &k->shared)) != KUBE_OK)
        return rc;
    headers = client_content_type(&k->q, k->shared->list, &k->ct_node, k->ct_small, &k->ct_big);
    if (!headers)
        return KUBE_ENOMEM;
    k->r = (client_result){KUBE_BUF_INIT, -1, CURLE_OK, 0, {0}};
    client_setup_request(k->task.easy, &k->q, headers, &k->r);
    return KUBE_OK;
}

/* After a transfer that got no answer: the failure in resp; 1 to try
 * again after *delay_ms (a broken connection), else 0 with *rc final. */
static int call_decide_failure(client_call *k, int *rc, long *delay_ms)
{
    kube_client *c = k->c;

    *rc = client_transfer_error(&k->r);
    kube_buf_free(&k->r.body);
    client_transport_failure(&k->resp, &k->q, &k->r, *rc);
    return (*rc == KUBE_EIO || *rc == KUBE_ETIMEDOUT) && client_broken_connection(k->r.cc) &&
           kube_retry_decide(k->q.method, 0, -1, k->attempt, c->opts.max_retries,
                             atomic_load(&c->backoff_base_ms), atomic_load(&c->backoff_cap_ms),
                             client_random(), delay_ms);
}

/* After an answer with code: the answer in resp; 1 to try again after
 * *delay_ms (a 401 with a new token, or what kube_retry_decide says),
 * else 0 with *rc final. */
static int call_decide_answer(client_call *k, long code, int *rc, long *delay_ms)
{
    kube_client *c = k->c;
    kube_response *resp = &k->resp;

    resp->code = code;
    resp->len = k->r.body.len;
    resp->body = kube_buf_take(&k->r.body);
    if (!resp->body) {
        *rc = KUBE_ENOMEM;
        return 0;
    }
    *rc = KUBE_OK;
    if (code >= 200 && code < 300)
        return 0;
    *rc = kube_response_error(code, resp->body, resp->len, &resp->status);
    if (code == 401 && !k->reauth && client_token_changed(c)) {
        k->reauth = 1;
        return 1;
    }
    return kube_retry_decide(k->q.method, code, k->r.retry_after_s, k->attempt, c->opts.max_retries,
                             atomic_load(&c->backoff_base_ms), atomic_load(&c->backoff_cap_ms),
                             client_random(), delay_ms);
}

/* The attempt's transfer ended with cc: the answer or the failure, then
 * the next attempt or the end. */
static void call_answered(kube_http_task *t, CURLcode cc)
{
    client_call *k = (client_call *)t;
    long code = 0, delay_ms = 0;
    int rc, again;

    k->r.cc = cc;
    curl_easy_getinfo(k->task.easy, CURLINFO_RESPONSE_CODE, &code);
    if (cc != CURLE_OK)
        curl_easy_getinfo(k->task.easy, CURLINFO_OS_ERRNO, &k->r.os_errno);
    call_release(k);
    KLOG_V(6, "%s %s %ld in %lld ms", k->q.method, k->q.url, code,
           (long long)(kube_now_ms() - k->start_ms));
    again = cc == CURLE_OK ? call_decide_answer(k, code, &rc, &delay_ms)
                           : call_decide_failure(k, &rc, &delay_ms);
    if (!again) {
        call_finish(k, rc);
        return;
    }
    KLOG_V(4, "%s %s: %s (HTTP %ld); retrying in %ld ms", k->q.method, k->q.path, kube_strerror(rc),
           k->resp.code, delay_ms);
    kube_response_clear(&k->resp);
    k->attempt++;
    call_after(k, call_begin, delay_ms);
}

/* An attempt's turn came: the fence, then the exchange. */
static void call_send(kube_http_task *t, CURLcode cc)
{
    client_call *k = (client_call *)t;
    int rc;

    if (cc != CURLE_OK || atomic_load(&k->c->stopping)) {
        call_canceled(k);
        return;
    }
    if (client_fenced(k->c, &k->q, &k->resp)) {
        call_finish(k, KUBE_ECANCELED);
        return;
    }
    client_count(k->c, k->q.method, k->attempt > 0);
    k->start_ms = kube_now_ms();
    rc = call_setup(k);
    k->task.fn = call_answered;
    if (rc == KUBE_OK && (rc = kube_http_loop_start(k->c->loop, &k->task)) == KUBE_OK)
        return;
    call_release(k);
    if (rc == KUBE_ECANCELED) {
        call_canceled(k);
        return;
    }
    client_transport_failure(&k->resp, &k->q, NULL, rc);
    call_finish(k, rc);
}

/* An attempt begins: its wait for the rate limiter. */
static void call_begin(kube_http_task *t, CURLcode cc)
{
    client_call *k = (client_call *)t;

    if (cc != CURLE_OK || atomic_load(&k->c->stopping)) {
        call_canceled(k);
        return;
    }
    call_after(k, call_send, k->rl ? (kube_ratelimit_reserve(k->rl) + 999999) / 1000000 : 0);
}

/* A call with copies of the request's strings and body, or NULL. */
static client_call *call_new(kube_client *c, const char *method, const char *path,
                             const char *content_type, const char *body, size_t len)
{
    size_t nu = strlen(c->base_url), np = strlen(path) + 1, nm = strlen(method) + 1;
    size_t nc = content_type ? strlen(content_type) + 1 : 0, nb = body ? len + 1 : 0;
    client_call *k = malloc(sizeof(*k) + nu + 2 * np + nm + nc + nb);
    char *p;

    if (!k)
        return NULL;
    memset(k, 0, sizeof(*k));
    k->c = c;
    p = (char *)(k + 1);
    memcpy(p, c->base_url, nu);
    memcpy(p + nu, path, np);
    k->q.url = p;
    p += nu + np;
    k->q.path = memcpy(p, path, np);
    p += np;
    k->q.method = memcpy(p, method, nm);
    p += nm;
    k->q.content_type = content_type ? memcpy(p, content_type, nc) : NULL;
    p += nc;
    if (body) {
        memcpy(p, body, len);
        p[len] = '\0';
        k->q.body = p;
        k->q.len = len;
    }
    return k;
}

int kube_client_do_async(kube_client *c, const char *method, const char *path,
                         const char *content_type, const char *body, size_t len,
                         kube_client_done_fn done, void *ud)
{
    return kube_client_do_async_limited(c, c ? c->rl : NULL, method, path, content_type, body, len,
                                        done, ud);
}

int kube_client_ratelimit_new(kube_client *c, kube_ratelimit **out)
{
    return kube_ratelimit_new(c->opts.qps, c->opts.burst, NULL, out);
}

int kube_client_do_async_limited(kube_client *c, kube_ratelimit *rl, const char *method,
                                 const char *path, const char *content_type, const char *body,
                                 size_t len, kube_client_done_fn done, void *ud)
{
    client_call *k;

    if (!c || !done || !kube_client_valid_request(method, path, body, content_type))
        return KUBE_EINVAL;
    if (atomic_load(&c->stopping))
        return KUBE_ECANCELED;
    if (!(k = call_new(c, method, path, content_type, body, len)))
        return KUBE_ENOMEM;
    k->done = done;
    k->ud = ud;
    k->rl = rl;
    k->task.fn = call_begin;
    kube_http_loop_post(c->loop, &k->task);
    return KUBE_OK;
}

/* ---- waiting for a request -------------------------------------------- */

typedef struct client_wait {
    sem_t done; /* a semaphore: the waiter does not wake into a lock */
    int rc;
    kube_response *resp;
} client_wait;

/* kube_client_do's done: the answer moves to the waiter. */
static void client_wait_done(void *ud, int rc, kube_response *resp)
{
    client_wait *w = ud;

    w->rc = rc;
    *w->resp = *resp;
    memset(resp, 0, sizeof(*resp));
    sem_post(&w->done); /* w may be gone from here on */
}

int kube_client_do(kube_client *c, const char *method, const char *path, const char *content_type,
                   const char *body, size_t len, kube_response *resp)
{
    return kube_client_do_limited(c, c ? c->rl : NULL, method, path, content_type, body, len, resp);
}

int kube_client_do_limited(kube_client *c, kube_ratelimit *rl, const char *method, const char *path,
                           const char *content_type, const char *body, size_t len,
                           kube_response *resp)
{
    client_wait w = {.rc = KUBE_OK, .resp = resp};
    int rc;

    kube_response_clear(resp);
    sem_init(&w.done, 0, 0);
    rc = kube_client_do_async_limited(c, rl, method, path, content_type, body, len,
                                      client_wait_done, &w);
    if (rc == KUBE_OK) {
        while (sem_wait(&w.done) != 0) /* EINTR */
            ;
        rc = w.rc;
    } else if (rc == KUBE_ECANCELED) {
        snprintf(resp->status.message, sizeof(resp->status.message), "%s %s%s: " CLIENT_CANCELED,
                 method, c->base_url, path);
    }
    sem_destroy(&w.done);
    return rc;
}
