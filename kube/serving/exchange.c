/*
 * kube/serving/exchange.c - one request through the pipeline of a
 * k8s.io/apiserver server: authentication, authorization, then the
 * daemon's handler. The contract is in exchange.h.
 */
#include "kube/serving/exchange.h"
#include "kube/serving/exchange_testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kube/serving/status.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define TOKEN_MAX 16384
#define CT_JSON KUBE_CT_JSON

enum stage { ST_TOKEN, ST_ROUTE, ST_AUTHZ, ST_BODY, ST_SERVE, ST_DONE };

struct kube_exchange {
    const kube_serving_context *ctx;
    const kube_handlers *h;
    enum stage stage;
    int64_t start_ns;
    char method[40];
    char *path;       /* the target without its query, for logs */
    int authz_passed; /* checks of the handler's authz() allowed so far */
    void *state;      /* the handler's */
    int route_rc;
    char route_msg[512];
    char audit_id[80];
    char if_none_match[160];
    char *accept; /* the Accept header, NULL when absent */
    char *token;
    kube_user *user;
    /* the answer */
    int code;
    const char *content_type;
    kube_buf body;
    int close;
    const char *etag;
    const char *allow;
    int retry_after;
    kube_stream *stream; /* a streamed answer (stream.h), or NULL */
};

void kube_peer_cache_clear(kube_peer_cache *pc)
{
    X509_free(pc->leaf);
    kube_authn_config_unref(pc->cfg);
    kube_user_free(pc->cert_user);
    memset(pc, 0, sizeof(*pc));
}

/* ---- answers ---- */

void kube_exchange_answer(kube_exchange *x, int code, const char *content_type, const char *text,
                          size_t len)
{
    x->code = code;
    x->content_type = content_type;
    kube_buf_reset(&x->body);
    if (kube_buf_append(&x->body, text, len) != KUBE_OK)
        x->code = 500;
    x->stage = ST_DONE;
}

int kube_exchange_fail(kube_exchange *x, int code, const char *reason, const char *message)
{
    int rc;

    kube_buf_reset(&x->body);
    rc = kube_status_json(&x->body, code, reason, message, NULL);
    x->code = code;
    x->content_type = CT_JSON;
    x->stage = ST_DONE;
    if (code == 429)
        x->retry_after = 1;
    return rc;
}

kube_buf *kube_exchange_answer_body(kube_exchange *x)
{
    kube_buf_reset(&x->body);
    return &x->body;
}

void kube_exchange_answer_filled(kube_exchange *x, int rc, int code, const char *content_type)
{
    x->code = code;
    x->content_type = content_type;
    x->stage = ST_DONE;
    if (rc != KUBE_OK) {
        kube_buf_reset(&x->body);
        x->code = 500;
    }
}

int kube_exchange_stream(kube_exchange *x, int code, const char *content_type, int64_t deadline_ms,
                         kube_stream_cancel_fn cancel, void *cancel_ud, kube_stream **out)
{
    int rc = kube_stream_new(deadline_ms, cancel, cancel_ud, &x->stream);

    *out = x->stream;
    if (rc != KUBE_OK)
        return rc;
    kube_buf_reset(&x->body);
    x->code = code;
    x->content_type = content_type;
    x->stage = ST_DONE;
    return KUBE_OK;
}

kube_stream *kube_exchange_take_stream(kube_exchange *x)
{
    kube_stream *s = x->stream;

    x->stream = NULL;
    return s;
}

void kube_exchange_set_etag(kube_exchange *x, const char *etag)
{
    x->etag = etag;
}

void kube_exchange_set_allow(kube_exchange *x, const char *methods)
{
    x->allow = methods;
}

const char *kube_exchange_method(const kube_exchange *x)
{
    return x->method;
}

const char *kube_exchange_if_none_match(const kube_exchange *x)
{
    return x->if_none_match;
}

const char *kube_exchange_accept(const kube_exchange *x)
{
    return x->accept;
}

static void unauthorized(kube_exchange *x)
{
    kube_exchange_answer_filled(x, kube_status_unauthorized(kube_exchange_answer_body(x)), 401,
                                CT_JSON);
    kube_observe_authn(x->ctx->observer, KUBE_AUTHN_FAILED);
}

/* ---- start: health, upgrade, authentication from the connection ---- */

static void copy_header(const kube_httpreq_request *req, const char *name, char *out, size_t n)
{
    const char *v = kube_httpreq_header_get(req, name);

    out[0] = '\0';
    if (v && strlen(v) < n &&
        strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789-_.:\"/=+, W") == strlen(v))
        memcpy(out, v, strlen(v) + 1);
}

void kube_exchange_health_state(const kube_exchange *x, kube_health_state *out)
{
    const kube_serving_context *c = x->ctx;

    out->authn_loaded = kube_authn_source_ready(c->authn);
    out->shutting_down = c->ready && !c->ready(c->ready_ud);
}

static int answer_health(kube_exchange *x)
{
    kube_health_state hs;

    kube_exchange_health_state(x, &hs);
    return x->h->health && x->h->health(x->h->ud, x->state, &hs, x);
}

/* Verifies the connection's certificate under cfg, again when the
 * snapshot changed or the clock left the certificates' validity window. */
static void refresh_peer(kube_peer_cache *pc, kube_authn_config *cfg)
{
    char msg[512] = "";
    time_t now = time(NULL);

    if (pc->cfg == cfg && now >= pc->valid_from && now < pc->valid_until)
        return;
    kube_authn_chain_validity(pc->leaf, pc->chain, &pc->valid_from, &pc->valid_until);
    kube_authn_config_unref(pc->cfg);
    kube_user_free(pc->cert_user);
    pc->cert_user = NULL;
    pc->cfg = kube_authn_config_ref(cfg);
    pc->front_proxy = kube_authn_verify_front_proxy(cfg, pc->leaf, pc->chain, msg, sizeof(msg));
    if (pc->front_proxy == KUBE_EUNAUTHORIZED)
        KLOG_V(1, "front-proxy certificate rejected: %s", msg);
    msg[0] = '\0';
    pc->cert_rc =
        kube_authn_verify_client_cert(cfg, pc->leaf, pc->chain, &pc->cert_user, msg, sizeof(msg));
    if (pc->cert_rc == KUBE_EUNAUTHORIZED && pc->front_proxy != KUBE_OK)
        KLOG_V(1, "client certificate rejected: %s", msg);
}

/* Authentication that needs no network. Leaves x->user set, x->token set
 * (TokenReview pending) or the 401 answered. */
static int authenticate_local(kube_exchange *x, kube_authn_config *cfg, kube_httpreq_request *req,
                              kube_peer_cache *pc)
{
    char *token;
    int rc;

    if (pc && pc->leaf) {
        refresh_peer(pc, cfg);
        if (pc->front_proxy == KUBE_OK &&
            (rc = kube_authn_from_headers(cfg, req, &x->user)) != KUBE_ENOTFOUND) {
            kube_observe_authn(x->ctx->observer, KUBE_AUTHN_FRONT_PROXY);
            return rc;
        }
        if (pc->cert_rc == KUBE_OK) {
            x->user = kube_user_dup(pc->cert_user);
            kube_observe_authn(x->ctx->observer, KUBE_AUTHN_CLIENT_CERT);
            return x->user ? KUBE_OK : KUBE_ENOMEM;
        }
    }
    token = malloc(TOKEN_MAX);
    if (!token)
        return KUBE_ENOMEM;
    rc = kube_authn_bearer_token(req, token, TOKEN_MAX);
    if (rc == KUBE_OK) {
        x->token = token;
        return KUBE_OK;
    }
    free(token);
    unauthorized(x);
    return KUBE_OK;
}

static void strip_credentials(kube_authn_config *cfg, kube_httpreq_request *req)
{
    size_t kept = 0;

    kube_authn_strip_headers(cfg, req);
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, "Authorization") != 0)
            req->headers[kept++] = req->headers[i];
    req->n_headers = kept;
}

static int start(kube_exchange *x, kube_httpreq_request *req, kube_peer_cache *pc)
{
    kube_authn_config *cfg;
    int rc;

    if (req->upgrade) {
        x->close = 1;
        return kube_exchange_fail(x, 400, "BadRequest", "upgrade requests are not supported");
    }
    if (x->route_rc == KUBE_OK && answer_health(x))
        return KUBE_OK;
    cfg = kube_authn_source_get(x->ctx->authn);
    rc = authenticate_local(x, cfg, req, pc);
    strip_credentials(cfg, req);
    kube_authn_config_unref(cfg);
    if (rc == KUBE_OK && x->stage != ST_DONE)
        x->stage = x->token ? ST_TOKEN : ST_ROUTE;
    return rc;
}

/* A copy of req's Accept header into *out (NULL when absent). KUBE_OK or
 * KUBE_ENOMEM. */
static int copy_accept(const kube_httpreq_request *req, char **out)
{
    const char *a = kube_httpreq_header_get(req, "Accept");

    *out = a ? kube_strdup(a) : NULL;
    return a && !*out ? KUBE_ENOMEM : KUBE_OK;
}

/* The target without its query, copied for logs. */
static char *target_path(const char *target)
{
    size_t n = strcspn(target, "?");
    char *p = malloc(n + 1);

    if (p) {
        memcpy(p, target, n);
        p[n] = '\0';
    }
    return p;
}

int kube_exchange_new(const kube_serving_context *ctx, kube_httpreq_request *req,
                      kube_peer_cache *pc, kube_exchange **out)
{
    kube_exchange *x = calloc(1, sizeof(*x));
    int rc;

    *out = NULL;
    if (!x)
        return KUBE_ENOMEM;
    x->ctx = ctx;
    x->h = ctx->handlers;
    x->start_ns = kube_now_ns();
    kube_strlcpy(x->method, req->method, sizeof(x->method));
    x->path = target_path(req->target);
    x->route_rc = x->path ? x->h->route(x->h->ud, x->method, req->target, &x->state, x->route_msg,
                                        sizeof(x->route_msg))
                          : KUBE_ENOMEM;
    if (x->route_rc == KUBE_ENOMEM) {
        kube_exchange_free(x);
        return KUBE_ENOMEM;
    }
    copy_header(req, "Audit-Id", x->audit_id, sizeof(x->audit_id));
    copy_header(req, "If-None-Match", x->if_none_match, sizeof(x->if_none_match));
    rc = copy_accept(req, &x->accept);
    if (rc == KUBE_OK)
        rc = start(x, req, pc);
    if (rc != KUBE_OK) {
        kube_exchange_free(x);
        return rc;
    }
    *out = x;
    return KUBE_OK;
}

/* ---- TokenReview, route check, authorization ---- */

static void wipe_token(kube_exchange *x)
{
    if (!x->token)
        return;
    explicit_bzero(x->token, TOKEN_MAX);
    free(x->token);
    x->token = NULL;
}

static int step_token(kube_exchange *x, int may_block)
{
    kube_delegate *d = x->ctx->delegate;
    int rc = kube_delegate_token_cached(d, x->token, &x->user);

    if (rc == KUBE_ENOTFOUND) {
        if (!may_block)
            return KUBE_EXCHANGE_BLOCKED;
        rc = kube_delegate_authenticate_token(d, x->token, &x->user);
    }
    wipe_token(x);
    if (rc == KUBE_OK) {
        kube_observe_authn(x->ctx->observer, KUBE_AUTHN_TOKEN);
        x->stage = ST_ROUTE;
    } else {
        unauthorized(x);
    }
    return KUBE_EXCHANGE_DONE;
}

static void step_route(kube_exchange *x)
{
    if (kube_user_add_authenticated(x->user) != KUBE_OK) {
        kube_exchange_fail(x, 500, "InternalError", "out of memory");
        return;
    }
    if (x->route_rc != KUBE_OK) {
        kube_exchange_fail(x, 400, "BadRequest", x->route_msg);
        return;
    }
    x->stage = ST_AUTHZ;
}

static void forbidden(kube_exchange *x, const kube_authz_attrs *a, const char *reason)
{
    kube_forbidden f = {.user = x->user->name, .verb = a->verb, .path = a->path, .reason = reason};

    if (a->resource_request) {
        f.group = a->group;
        f.resource = a->resource;
        f.subresource = a->subresource;
        f.namespace_ = a->namespace_;
        f.name = a->name;
    }
    KLOG_V(2, "forbidden: user %s %s %s", x->user->name, a->verb, a->path ? a->path : x->path);
    kube_exchange_answer_filled(x, kube_status_forbidden(kube_exchange_answer_body(x), &f), 403,
                                CT_JSON);
}

/* One check's decision, from the cache or (may_block) a review. Returns
 * KUBE_OK with *d, KUBE_EXCHANGE_BLOCKED, or the review's error. */
static int decide(kube_exchange *x, kube_authz_attrs *a, int may_block, kube_authz_decision *d)
{
    int rc = kube_delegate_authorize_cached(x->ctx->delegate, a, d);

    if (rc != KUBE_ENOTFOUND)
        return rc;
    if (!may_block)
        return KUBE_EXCHANGE_BLOCKED;
    return kube_delegate_authorize(x->ctx->delegate, a, d);
}

/* The handler's next check into a; 0 when none is left. */
static int next_check(kube_exchange *x, kube_authz_attrs *a)
{
    memset(a, 0, sizeof(*a));
    if (!x->h->authz || !x->h->authz(x->h->ud, x->state, x->method, x->authz_passed, a))
        return 0;
    a->user = x->user;
    return 1;
}

static int step_authz(kube_exchange *x, int may_block)
{
    kube_authz_attrs a;
    kube_authz_decision d;
    char msg[600];
    int rc;

    while (next_check(x, &a)) {
        rc = decide(x, &a, may_block, &d);
        if (rc == KUBE_EXCHANGE_BLOCKED)
            return rc;
        if (rc != KUBE_OK) {
            snprintf(msg, sizeof(msg), "Internal error occurred: authorization failed: %s",
                     kube_strerror(rc));
            kube_exchange_fail(x, 500, "InternalError", msg);
            return KUBE_EXCHANGE_DONE;
        }
        if (!d.allowed) {
            forbidden(x, &a, d.reason);
            return KUBE_EXCHANGE_DONE;
        }
        x->authz_passed++;
    }
    x->stage = ST_BODY;
    return KUBE_EXCHANGE_DONE;
}

static int step_serve(kube_exchange *x, int may_block)
{
    int rc = x->h->serve ? x->h->serve(x->h->ud, x->state, x, may_block) : KUBE_EXCHANGE_DONE;

    if (rc == KUBE_EXCHANGE_BLOCKED && may_block)
        rc = KUBE_EXCHANGE_DONE;
    if (rc == KUBE_EXCHANGE_DONE && x->stage != ST_DONE)
        kube_exchange_answer(x, 404, KUBE_CT_TEXT, "404 page not found\n", 19);
    return rc;
}

int kube_exchange_run(kube_exchange *x, int may_block)
{
    while (x->stage != ST_DONE) {
        int rc = KUBE_EXCHANGE_DONE;
        switch (x->stage) {
        case ST_TOKEN:
            rc = step_token(x, may_block);
            break;
        case ST_ROUTE:
            step_route(x);
            break;
        case ST_AUTHZ:
            rc = step_authz(x, may_block);
            break;
        case ST_BODY:
            return KUBE_EXCHANGE_NEED_BODY;
        case ST_SERVE:
            rc = step_serve(x, may_block);
            break;
        case ST_DONE:
            break;
        }
        if (rc == KUBE_EXCHANGE_BLOCKED)
            return rc;
    }
    return KUBE_EXCHANGE_DONE;
}

void kube_exchange_set_body(kube_exchange *x, const char *body, size_t len)
{
    if (x->h->body)
        x->h->body(x->h->ud, x->state, body, len);
    if (x->stage == ST_BODY)
        x->stage = ST_SERVE;
}

/* ---- the response ---- */

int kube_exchange_code(const kube_exchange *x)
{
    return x->code;
}

int kube_exchange_must_close(const kube_exchange *x)
{
    return x->close;
}

const char *kube_exchange_body(const kube_exchange *x, size_t *len)
{
    *len = x->body.len;
    return x->body.data ? x->body.data : "";
}

const kube_user *kube_exchange_user(const kube_exchange *x)
{
    return x->user;
}

static int put_headers(const kube_exchange *x, int keep_alive, kube_buf *out)
{
    char date[64];
    struct tm tm;
    time_t now = time(NULL);
    int rc;

    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    rc = kube_buf_printf(out, "HTTP/1.1 %d %s\r\n", x->code, kube_httpreq_reason_phrase(x->code));
    if (rc == KUBE_OK && x->audit_id[0])
        rc = kube_buf_printf(out, "Audit-Id: %s\r\n", x->audit_id);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(out,
                             "Cache-Control: no-cache, private\r\nContent-Type: %s\r\n"
                             "X-Content-Type-Options: nosniff\r\nDate: %s\r\n",
                             x->content_type ? x->content_type : CT_JSON, date);
    if (rc == KUBE_OK && x->etag)
        rc = kube_buf_printf(out, "Etag: %s\r\n", x->etag);
    if (rc == KUBE_OK && x->allow)
        rc = kube_buf_printf(out, "Allow: %s\r\n", x->allow);
    if (rc == KUBE_OK && x->retry_after)
        rc = kube_buf_printf(out, "Retry-After: %d\r\n", x->retry_after);
    if (rc == KUBE_OK && x->stream)
        rc = kube_buf_puts(out, "Transfer-Encoding: chunked\r\n");
    else if (rc == KUBE_OK && x->code != 304)
        rc = kube_buf_printf(out, "Content-Length: %zu\r\n", x->body.len);
    if (rc == KUBE_OK && (!keep_alive || x->close))
        rc = kube_buf_puts(out, "Connection: close\r\n");
    return rc == KUBE_OK ? kube_buf_puts(out, "\r\n") : rc;
}

int kube_exchange_serialize(const kube_exchange *x, int keep_alive, kube_buf *out)
{
    int rc = put_headers(x, keep_alive, out);

    if (rc == KUBE_OK && x->code != 304 && strcmp(x->method, "HEAD") != 0 && x->body.len)
        rc = kube_buf_append(out, x->body.data, x->body.len);
    return rc;
}

void kube_exchange_observe(const kube_exchange *x)
{
    double secs = (double)(kube_now_ns() - x->start_ns) / 1e9;
    const char *label = x->h->label && x->state ? x->h->label(x->state) : "";

    kube_observe_request(x->ctx->observer, x->method, label, x->code, secs);
    if (x->h->log && x->state && x->h->log(x->h->ud, x->state, x, secs))
        return;
    KLOG_V(3, "%s %s %d %.3fms user=%s", x->method,
           x->route_rc == KUBE_OK && x->path ? x->path : "(invalid)", x->code, secs * 1e3,
           x->user ? x->user->name : "");
}

void kube_exchange_free(kube_exchange *x)
{
    if (!x)
        return;
    wipe_token(x);
    kube_user_free(x->user);
    if (x->state && x->h->free_state)
        x->h->free_state(x->state);
    free(x->path);
    free(x->accept);
    if (x->stream) { /* never handed to the server */
        kube_stream_cancel(x->stream, 0);
        kube_stream_unref(x->stream);
    }
    kube_buf_free(&x->body);
    free(x);
}
