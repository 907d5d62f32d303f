/*
 * kube/transport/client_int.h - what the parts of kube/transport/client share, internal to
 * kube/transport/client.c (setup, connections, headers, streams) and
 * kube/transport/client_do.c (requests, retries). Not for other modules.
 */
#ifndef KUBE_CLIENT_INT_H
#define KUBE_CLIENT_INT_H

#include "kube/transport/client_testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kube/transport/client.h"
#include "kube/transport/client_loop.h"
#include "kube/transport/ratelimit.h"
#include "kube/transport/tls.h"

/* Idle easy handles kept: about as many as the scheduler has requests in
 * flight (40 bindings, 8 event creates), so none is made per request. */
#define CLIENT_POOL_MAX 48
#define CLIENT_HOST_CONNS 16 /* connections per host (HTTP/1.1; HTTP/2 shares one) */

/* The header lines every request carries, for one bearer token: a list
 * built when the token changes and shared by the requests in flight. */
typedef struct client_headers {
    atomic_int refs;         /* the client's own, plus one per request using it */
    struct curl_slist *list; /* Authorization (when a token), Accept, User-Agent, Host, Expect: */
    int has_token;           /* list->data is the Authorization line */
} client_headers;

struct kube_client {
    kube_config *cfg;
    kube_client_options opts; /* opts.user_agent points at user_agent */
    char *user_agent;
    /* "User-Agent: <user_agent>", sent as a header line: CURLOPT_USERAGENT
     * would make libcurl format it twice per request, byte by byte */
    struct curl_slist *ua_line;
    kube_ratelimit *rl;

    char *base_url;                /* server URL, host replaced by tls-server-name if set */
    struct curl_slist *connect_to; /* CURLOPT_CONNECT_TO for tls-server-name, or NULL */
    char *host_header;             /* "Host: ..." keeping the real server host, or NULL */
    const kube_tls *tls;           /* the config's parsed TLS material (borrowed), or NULL */

    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    CURLSH *share;        /* DNS cache and TLS sessions shared with streams */
    kube_http_loop *loop; /* the I/O thread every request runs on */

    pthread_mutex_t pool_lock;
    CURL *idle[CLIENT_POOL_MAX];
    size_t n_idle;

    pthread_mutex_t headers_lock;
    client_headers *headers; /* for the token last seen, or NULL */

    pthread_mutex_t stats_lock;
    kube_client_stats stats;

    pthread_mutex_t stop_lock; /* with stop_cond, wakes waits on shutdown */
    pthread_cond_t stop_cond;
    atomic_int stopping;

    kube_client_fence_fn fence; /* set before the first request, or NULL */
    void *fence_ud;

    atomic_long backoff_base_ms;
    atomic_long backoff_cap_ms;
};

/* Sets the options every handle of c gets, requests and streams alike:
 * protocols, HTTP version (h2 over TLS when offered), User-Agent, connect
 * timeout, TCP keep-alive, TLS verification and material, the share, and
 * the tls-server-name connect-to list. */
void kube_client_setup_handle(kube_client *c, CURL *h);

/* A reference to the header lines for the current token (re-read as
 * kube_config_token has it). Returns KUBE_OK, KUBE_ENOMEM or KUBE_ERANGE
 * (token too long). Release with kube_client_headers_put. */
int kube_client_headers_get(kube_client *c, client_headers **out);
void kube_client_headers_put(client_headers *h);

/* Whether method, path, body and content type make a request we send. */
int kube_client_valid_request(const char *method, const char *path, const char *body,
                              const char *content_type);

#endif
