/*
 * kube/transport/client.h - HTTP access to kube-apiserver on libcurl.
 *
 * A kube_client holds the configuration, a client-side token-bucket rate
 * limiter (clientConnection.qps/burst), and one I/O thread ("kube-http",
 * kube/transport/client_loop) that runs every request on one libcurl multi handle:
 * a request is a chain of steps on that thread (the rate limiter's wait and
 * backoffs are its timers; each attempt runs on a pooled easy handle whose
 * constant options are set once). kube_client_do_async hands the outcome
 * to a function on that thread, so no thread waits; kube_client_do is the
 * same request and a wait for it. The
 * transfers share the multi handle's connections: one HTTP/2 connection
 * multiplexing every request when the server offers h2 over TLS (ALPN; as
 * client-go), else HTTP/1.1 keep-alive connections, at most 16. The TLS
 * material is parsed once from the kubeconfig (kube/transport/tls) and installed into
 * each new connection; DNS answers and TLS sessions are shared with stream
 * handles. TLS peer and host verification is always on unless the config
 * sets insecure-skip-tls-verify. Requests carry no Accept-Encoding: answers
 * come uncompressed (the hot path's answers are small, and inflating costs
 * more CPU than loopback or a LAN saves).
 *
 * Proxies: libcurl reads https_proxy/HTTPS_PROXY (http_proxy for an http://
 * server), all_proxy and no_proxy/NO_PROXY itself for every transfer,
 * requests and streams alike; nothing here overrides them.
 *
 * Watches and lists do not use the I/O thread: kube/machinery/informer's hub drives
 * its own curl multi handle on its own thread (kube_client_setup_stream),
 * because it decodes what arrives where it arrives: a re-list of 150,000
 * pods is about a second of decoding, which on a shared loop would delay
 * every bind and event behind it. Requests and streams therefore never wait
 * for each other; the cost is a second connection to the server. Over h2
 * the hub's lists and watches share that one connection (as client-go's
 * informers share theirs): stream handles wait for it (CURLOPT_PIPEWAIT).
 *
 * Retries: a 429, or a 5xx on an idempotent request (GET, PUT, DELETE), or a
 * 5xx that carries Retry-After on any request, is retried up to
 * max_retries times with exponential jittered backoff, honouring Retry-After.
 * A 401 forces one re-read of the token file and one retry (made only when
 * the re-read produced a different token). As client-go does, a GET whose
 * connection broke before an answer (reset, empty reply) is retried too;
 * other transport failures are not. Every attempt waits on the rate
 * limiter. kube_retry_decide() is the policy as a pure function. Each
 * request has a total timeout (timeout_ms) besides the connect timeout.
 * kube_client_shutdown() ends waits and transfers with KUBE_ECANCELED; a
 * fence (kube_client_set_fence) can refuse any attempt before it is sent.
 *
 * Errors: a non-2xx answer is decoded as a metav1.Status into resp->status
 * and the call returns kube_err_from_status(code, reason). A body that is not
 * a Status (e.g. "404 page not found") still yields the code's error with
 * the text as message. Transport failures return KUBE_EIO/KUBE_ETIMEDOUT.
 *
 * Threads: every function is thread-safe; any thread may issue requests,
 * and requests from many threads run concurrently on the I/O thread.
 *
 * Memory: kube_client_new() allocates the client (kube_client_free() frees
 * it; the config is borrowed and must outlive the client). A kube_response is
 * filled by the call and its body freed by kube_response_clear(), on success
 * and on error alike.
 */
#ifndef KUBE_CLIENT_H
#define KUBE_CLIENT_H

#include <curl/curl.h>
#include <stddef.h>

#include "kube/transport/config.h"
#include "kube/transport/ratelimit.h"

typedef struct kube_client kube_client;

typedef struct kube_client_options {
    double qps;              /* 0: no limit. kube-scheduler default 50 */
    int burst;               /* kube-scheduler default 100 */
    long connect_timeout_ms; /* default 10000 (<= 0: the default) */
    long timeout_ms;         /* per request, default 30000 (not for watches; <= 0: default) */
    int max_retries;         /* default 5; 0: no retries */
    const char *user_agent;  /* copied; default "stickyvm" (NULL: the default) */
} kube_client_options;

/* Fills o with the defaults above. */
void kube_client_options_default(kube_client_options *o);

typedef struct kube_status {
    int code;          /* HTTP code from the Status, or the response code */
    char reason[64];   /* "NotFound", "Conflict", ... ("" if none) */
    char message[512]; /* human message, truncated */
} kube_status;

typedef struct kube_response {
    long code;  /* HTTP status code, 0 when no response */
    char *body; /* NUL-terminated body, may be NULL */
    size_t len;
    kube_status status; /* filled when code is not 2xx */
    /* After a transport failure (code 0): libcurl's code and, for a failed
     * connect, the system's errno (CURLINFO_OS_ERRNO); else 0. For callers
     * that word the failure themselves (a scheduler extender's errors read
     * as Go's net/http errors). */
    int curl_code;
    long os_errno;
} kube_response;

/* opts may be NULL for the defaults. Returns KUBE_OK, KUBE_EINVAL (negative
 * qps or max_retries, qps without burst), KUBE_ECONFIG (server URL curl cannot
 * parse), KUBE_ENOMEM or KUBE_EIO (no I/O thread). Calls curl_global_init()
 * once for the process and starts the client's I/O thread. */
int kube_client_new(kube_config *cfg, const kube_client_options *opts, kube_client **out);
/* Stops the I/O thread and frees the client and its connections. No request
 * may be running. */
void kube_client_free(kube_client *c);

/* Issues one request (after waiting on the rate limiter). method is GET,
 * POST, PUT, PATCH or DELETE; path starts with "/" and may carry a query
 * (no spaces or control characters). content_type may be NULL when body is
 * NULL. Returns KUBE_OK for 2xx, else a KUBE_E* code (see above); a
 * transport failure leaves resp->code 0 and explains itself in
 * resp->status.message. Bad arguments give KUBE_EINVAL. resp must be zeroed
 * by the caller before the first use and is always cleared first; after any
 * answer resp->body is non-NULL ("" when empty). */
int kube_client_do(kube_client *c, const char *method, const char *path, const char *content_type,
                   const char *body, size_t len, kube_response *resp);

/* Called once when an asynchronous request ends, on the client's I/O
 * thread, with rc and resp as kube_client_do would have returned them.
 * resp is the client's: done may take resp->body (setting it to NULL) but
 * must not keep resp. done must not block, nor call kube_client_do. */
typedef void (*kube_client_done_fn)(void *ud, int rc, kube_response *resp);

/* kube_client_do without waiting: the attempts (the rate limiter's wait,
 * the fence, retries with their backoff and Retry-After, the one 401
 * re-read of the token) run as steps on the client's I/O thread, and
 * done(ud, ...) runs exactly once when the request ends (possibly before
 * this returns), or with KUBE_ECANCELED when the client shuts down first.
 * body and the strings are copied. Returns KUBE_OK (done will run), or
 * KUBE_EINVAL, KUBE_ENOMEM, KUBE_ECANCELED (shut down) and done never
 * runs. kube_client_do is this call and a wait. */
int kube_client_do_async(kube_client *c, const char *method, const char *path,
                         const char *content_type, const char *body, size_t len,
                         kube_client_done_fn done, void *ud);

/* A token bucket of its own with this client's qps and burst (no limit
 * when the client has none), for requests that must not take the client's
 * tokens: client-go gives each clientset made from one config its own
 * bucket, and kube-scheduler writes Events through a clientset of their
 * own. Freed by kube_ratelimit_free() after the last request that waits on
 * it. KUBE_OK or KUBE_ENOMEM. */
int kube_client_ratelimit_new(kube_client *c, kube_ratelimit **out);

/* kube_client_do_async and kube_client_do whose attempts wait on rl
 * (borrowed: it must outlive the request; NULL: no wait) instead of the
 * client's limiter. Everything else is shared: the I/O thread, the
 * connections (one HTTP/2 connection), the fence, retries. */
int kube_client_do_async_limited(kube_client *c, kube_ratelimit *rl, const char *method,
                                 const char *path, const char *content_type, const char *body,
                                 size_t len, kube_client_done_fn done, void *ud);
int kube_client_do_limited(kube_client *c, kube_ratelimit *rl, const char *method, const char *path,
                           const char *content_type, const char *body, size_t len,
                           kube_response *resp);

/* Frees resp->body and zeroes resp (ready for the next call). */
void kube_response_clear(kube_response *resp);

/* Decodes a metav1.Status JSON text into st. Returns KUBE_OK or KUBE_EPARSE
 * (st then holds only the code). A JSON object counts as a Status when its
 * kind is "Status", or when it has no kind but a reason, message or code.
 * The message is truncated at a UTF-8 character boundary. */
int kube_status_decode(const char *json, size_t len, long http_code, kube_status *st);

/* Turns any answer into the client's error convention: KUBE_OK for 2xx;
 * otherwise fills st from the metav1.Status in body, or, when body is not a
 * Status (e.g. "404 page not found\n"), from the code (reason as client-go
 * gives a bare code: "NotFound", ...) with the trimmed text as message, and
 * returns kube_err_from_status(http_code, reason). For callers that run
 * their own transfers (watches). body may be NULL. */
int kube_response_error(long http_code, const char *body, size_t len, kube_status *st);

/* Follows Retry-After through the header lines of an answer, one line of
 * len bytes at a time (as libcurl's header callback gets them, CRLF
 * included; line need not be NUL-terminated): returns -1 for a status line
 * (a new answer begins, e.g. after 100 Continue), the delay in seconds for
 * a Retry-After line with delay-seconds (0 to INT32_MAX; an HTTP-date is
 * ignored, as client-go does), else current. */
long kube_retry_after_header(long current, const char *line, size_t len);

/* Prepares a caller-owned easy handle for a long-running request (a watch)
 * driven by the caller's curl multi handle: URL from path, TLS material,
 * bearer token header, connect timeout, keep-alive, no total timeout,
 * and PIPEWAIT (multiplexed on the multi handle's h2 connection).
 * *headers receives a list the caller frees with curl_slist_free_all() after
 * the transfer. Does not consult the rate limiter; callers that start watches
 * in a loop should call kube_client_wait_rate() first. Only the options
 * named here (and HTTP version, User-Agent, signals off) are set: the caller
 * sets its write callback and resets a reused handle itself. The handle is
 * attached to the client's share (TLS sessions are resumed across watches)
 * and, with a tls-server-name, borrows its connect-to list: clean the
 * handle up before kube_client_free(). Returns KUBE_OK, KUBE_EINVAL or
 * KUBE_ENOMEM; on error *headers is NULL. */
int kube_client_setup_stream(kube_client *c, CURL *easy, const char *path,
                             struct curl_slist **headers);

/* Blocks until the rate limiter grants one request (or the client shuts
 * down). */
void kube_client_wait_rate(kube_client *c);

/* Makes every pending and future request of this client fail with
 * KUBE_ECANCELED at once: rate-limit and retry waits end, and every
 * transfer in flight is taken off the wire (out of the I/O thread's multi
 * handle) before this returns, so no byte of a request of this client is
 * written after it (bytes the kernel already holds still go). Irreversible;
 * for process shutdown and for a deposed leader's fence. Thread-safe.
 * kube_client_free() may be called only after every request has returned.
 * Stream handles are not affected. */
void kube_client_shutdown(kube_client *c);

/* A fence: asked for every attempt of a request (retries included), right
 * before the attempt is handed to the I/O thread (after the rate limiter).
 * Returns NULL to let the attempt go, else a static text saying why it may
 * not (e.g. "not the leader"): the request then fails with KUBE_ECANCELED,
 * no byte sent, and resp->status.message names the reason. Must be quick
 * and thread-safe (it runs on the requesting threads). */
typedef const char *(*kube_client_fence_fn)(void *ud, const char *method, const char *path);

/* Installs fence (NULL: none) with its ud (borrowed; must outlive the
 * client's requests or the fence's removal). Not synchronised with
 * requests: call while none of this client is running (before the first,
 * or after the last). */
void kube_client_set_fence(kube_client *c, kube_client_fence_fn fence, void *ud);

/* The retry policy, without side effects. method is the HTTP method; code
 * the HTTP status, or 0 for a connection that broke before any answer;
 * retry_after_s the Retry-After header in seconds, or -1 when absent;
 * attempt the number of retries already made. Returns 1 and sets *delay_ms
 * when the request should be retried, else 0. The delay is Retry-After
 * (capped at 60 s), else base_ms * 2^attempt capped at cap_ms, jittered into
 * its upper half by rnd (any random 32-bit value; 0 the whole delay),
 * through kube/util/backoff.h. */
int kube_retry_decide(const char *method, long code, long retry_after_s, int attempt,
                      int max_retries, long base_ms, long cap_ms, unsigned rnd, long *delay_ms);

#endif
