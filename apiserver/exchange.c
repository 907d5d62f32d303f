/*
 * apiserver/exchange.c - one request through the pipeline of a
 * k8s.io/apiserver server: authentication, authorization, then the handler.
 * The contract is in exchange.h.
 */
#include "exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "discovery.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "pin.h"
#include "request.h"
#include "status.h"
#include "vmpins.h"

#define TOKEN_MAX 16384
#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"

enum stage { ST_TOKEN, ST_ROUTE, ST_AUTHZ, ST_BODY, ST_SERVE, ST_DONE };

struct apis_exchange {
    const apis_context *ctx;
    enum stage stage;
    int64_t start_ns;
    char method[40];
    char verb[40];
    int authz_passed; /* verbs of authz_verb() allowed so far */
    apis_route route;
    int route_rc;
    char route_msg[512];
    int body_ok;
    char audit_id[80];
    char if_none_match[160];
    char *accept; /* the Accept header, for virtualmachinepins tables */
    char *token;
    apis_user *user;
    /* the answer */
    int code;
    const char *content_type;
    kube_buf body;
    int close;
    const char *etag;
    int allow_header;
    int retry_after;
};

void apis_peer_cache_clear(apis_peer_cache *pc)
{
    X509_free(pc->leaf);
    apis_authn_config_unref(pc->cfg);
    apis_user_free(pc->cert_user);
    memset(pc, 0, sizeof(*pc));
}

/* ---- answers ---- */

static void answer_text(apis_exchange *x, int code, const char *ct, const char *text, size_t len)
{
    x->code = code;
    x->content_type = ct;
    kube_buf_reset(&x->body);
    if (kube_buf_append(&x->body, text, len) != KUBE_OK)
        x->code = 500;
    x->stage = ST_DONE;
}

int apis_exchange_fail(apis_exchange *x, int code, const char *reason, const char *message)
{
    int rc;

    kube_buf_reset(&x->body);
    rc = apis_status_json(&x->body, code, reason, message, NULL);
    x->code = code;
    x->content_type = CT_JSON;
    x->stage = ST_DONE;
    if (code == 429)
        x->retry_after = 1;
    return rc;
}

static void answer_status(apis_exchange *x, int rc, int code)
{
    x->code = code;
    x->content_type = CT_JSON;
    x->stage = ST_DONE;
    if (rc != KUBE_OK) {
        kube_buf_reset(&x->body);
        x->code = 500;
    }
}

static void unauthorized(apis_exchange *x)
{
    kube_buf_reset(&x->body);
    answer_status(x, apis_status_unauthorized(&x->body), 401);
    if (x->ctx->metrics)
        apis_metrics_authn(x->ctx->metrics, APIS_AUTHN_FAILED);
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

static const char not_ready[] =
    "[-]authentication-config not loaded, or shutting down\nreadyz check failed\n";

static int answer_health(apis_exchange *x)
{
    const apis_context *c = x->ctx;
    int ready;

    switch (x->route.kind) {
    case APIS_ROUTE_HEALTHZ:
    case APIS_ROUTE_LIVEZ:
        answer_text(x, 200, CT_TEXT, "ok", 2);
        return 1;
    case APIS_ROUTE_READYZ:
        ready = apis_authn_source_ready(c->authn) && (!c->ready || c->ready(c->ready_ud));
        if (ready)
            answer_text(x, 200, CT_TEXT, "ok", 2);
        else
            answer_text(x, 500, CT_TEXT, not_ready, sizeof(not_ready) - 1);
        return 1;
    default:
        return 0;
    }
}

/* Verifies the connection's certificate under cfg, again when the
 * snapshot changed or the clock left the certificates' validity window. */
static void refresh_peer(apis_peer_cache *pc, apis_authn_config *cfg)
{
    char msg[512] = "";
    time_t now = time(NULL);

    if (pc->cfg == cfg && now >= pc->valid_from && now < pc->valid_until)
        return;
    apis_authn_chain_validity(pc->leaf, pc->chain, &pc->valid_from, &pc->valid_until);
    apis_authn_config_unref(pc->cfg);
    apis_user_free(pc->cert_user);
    pc->cert_user = NULL;
    pc->cfg = apis_authn_config_ref(cfg);
    pc->front_proxy = apis_authn_verify_front_proxy(cfg, pc->leaf, pc->chain, msg, sizeof(msg));
    if (pc->front_proxy == KUBE_EUNAUTHORIZED)
        KLOG_V(1, "front-proxy certificate rejected: %s", msg);
    msg[0] = '\0';
    pc->cert_rc =
        apis_authn_verify_client_cert(cfg, pc->leaf, pc->chain, &pc->cert_user, msg, sizeof(msg));
    if (pc->cert_rc == KUBE_EUNAUTHORIZED && pc->front_proxy != KUBE_OK)
        KLOG_V(1, "client certificate rejected: %s", msg);
}

static void authn_metric(apis_exchange *x, apis_authn_result r)
{
    if (x->ctx->metrics)
        apis_metrics_authn(x->ctx->metrics, r);
}

/* Authentication that needs no network. Leaves x->user set, x->token set
 * (TokenReview pending) or the 401 answered. */
static int authenticate_local(apis_exchange *x, apis_authn_config *cfg, kube_httpreq_request *req,
                              apis_peer_cache *pc)
{
    char *token;
    int rc;

    if (pc && pc->leaf) {
        refresh_peer(pc, cfg);
        if (pc->front_proxy == KUBE_OK &&
            (rc = apis_authn_from_headers(cfg, req, &x->user)) != KUBE_ENOTFOUND) {
            authn_metric(x, APIS_AUTHN_FRONT_PROXY);
            return rc;
        }
        if (pc->cert_rc == KUBE_OK) {
            x->user = apis_user_dup(pc->cert_user);
            authn_metric(x, APIS_AUTHN_CLIENT_CERT);
            return x->user ? KUBE_OK : KUBE_ENOMEM;
        }
    }
    token = malloc(TOKEN_MAX);
    if (!token)
        return KUBE_ENOMEM;
    rc = apis_authn_bearer_token(req, token, TOKEN_MAX);
    if (rc == KUBE_OK) {
        x->token = token;
        return KUBE_OK;
    }
    free(token);
    unauthorized(x);
    return KUBE_OK;
}

static void strip_credentials(apis_authn_config *cfg, kube_httpreq_request *req)
{
    size_t kept = 0;

    apis_authn_strip_headers(cfg, req);
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, "Authorization") != 0)
            req->headers[kept++] = req->headers[i];
    req->n_headers = kept;
}

static int start(apis_exchange *x, kube_httpreq_request *req, apis_peer_cache *pc)
{
    apis_authn_config *cfg;
    int rc;

    if (req->upgrade) {
        x->close = 1;
        return apis_exchange_fail(x, 400, "BadRequest", "upgrade requests are not supported");
    }
    if (x->route_rc == KUBE_OK && answer_health(x))
        return KUBE_OK;
    cfg = apis_authn_source_get(x->ctx->authn);
    rc = authenticate_local(x, cfg, req, pc);
    strip_credentials(cfg, req);
    apis_authn_config_unref(cfg);
    if (rc == KUBE_OK && x->stage != ST_DONE)
        x->stage = x->token ? ST_TOKEN : ST_ROUTE;
    return rc;
}

int apis_exchange_new(const apis_context *ctx, kube_httpreq_request *req, apis_peer_cache *pc,
                      apis_exchange **out)
{
    apis_exchange *x = calloc(1, sizeof(*x));
    int rc;

    *out = NULL;
    if (!x)
        return KUBE_ENOMEM;
    x->ctx = ctx;
    x->start_ns = kube_now_ns();
    kube_strlcpy(x->method, req->method, sizeof(x->method));
    x->route_rc = apis_route_parse(req->target, &x->route, x->route_msg, sizeof(x->route_msg));
    if (x->route_rc == KUBE_ENOMEM) {
        free(x);
        return KUBE_ENOMEM;
    }
    copy_header(req, "Audit-Id", x->audit_id, sizeof(x->audit_id));
    copy_header(req, "If-None-Match", x->if_none_match, sizeof(x->if_none_match));
    rc = apis_vmpins_copy_accept(req, &x->accept);
    if (rc == KUBE_OK)
        rc = start(x, req, pc);
    if (rc != KUBE_OK) {
        apis_exchange_free(x);
        return rc;
    }
    *out = x;
    return KUBE_OK;
}

/* ---- TokenReview, route check, authorization ---- */

static void wipe_token(apis_exchange *x)
{
    if (!x->token)
        return;
    explicit_bzero(x->token, TOKEN_MAX);
    free(x->token);
    x->token = NULL;
}

static int step_token(apis_exchange *x, int may_block)
{
    apis_delegate *d = x->ctx->delegate;
    int rc = apis_delegate_token_cached(d, x->token, &x->user);

    if (rc == KUBE_ENOTFOUND) {
        if (!may_block)
            return APIS_EXCHANGE_BLOCKED;
        rc = apis_delegate_authenticate_token(d, x->token, &x->user);
    }
    wipe_token(x);
    if (rc == KUBE_OK) {
        authn_metric(x, APIS_AUTHN_TOKEN);
        x->stage = ST_ROUTE;
    } else {
        unauthorized(x);
    }
    return APIS_EXCHANGE_DONE;
}

static void step_route(apis_exchange *x)
{
    int rc;

    if (apis_user_add_authenticated(x->user) != KUBE_OK) {
        apis_exchange_fail(x, 500, "InternalError", "out of memory");
        return;
    }
    if (x->route_rc != KUBE_OK) {
        kube_buf_reset(&x->body);
        rc = apis_status_json(&x->body, 400, "BadRequest", x->route_msg, NULL);
        answer_status(x, rc, 400);
        return;
    }
    apis_route_verb(&x->route, x->method, x->verb, sizeof(x->verb));
    x->stage = ST_AUTHZ;
}

static void authz_attrs(const apis_exchange *x, apis_authz_attrs *a)
{
    memset(a, 0, sizeof(*a));
    a->user = x->user;
    a->verb = x->verb;
    a->resource_request = apis_route_is_resource(x->route.kind);
    a->path = x->route.path;
    if (!a->resource_request)
        return;
    a->namespace_ = x->route.namespace_;
    a->group = APIS_GROUP;
    a->version = APIS_VERSION;
    a->resource = apis_route_resource(x->route.kind);
    a->subresource = apis_route_subresource(x->route.kind);
    a->name = x->route.name;
}

static void forbidden(apis_exchange *x, const apis_authz_attrs *a, const char *reason)
{
    apis_forbidden f = {.user = x->user->name, .verb = a->verb, .path = a->path, .reason = reason};
    int rc;

    if (a->resource_request) {
        f.group = a->group;
        f.resource = a->resource;
        f.subresource = a->subresource;
        f.namespace_ = a->namespace_;
        f.name = a->name;
    }
    KLOG_V(2, "forbidden: user %s %s %s", x->user->name, a->verb, a->path);
    kube_buf_reset(&x->body);
    rc = apis_status_forbidden(&x->body, &f);
    answer_status(x, rc, 403);
}

/* The verbs a request needs, in order: the one its method maps to and,
 * for pin and unpin (which change the VM whatever the method, a GET
 * included), update on the subresource, so a read-only role cannot pin. */
static const char *authz_verb(const apis_exchange *x, int i)
{
    if (i == 0)
        return x->verb;
    if (i == 1 && apis_route_is_pin(x->route.kind) && strcmp(x->verb, "update") != 0)
        return "update";
    return NULL;
}

/* One verb's decision, from the cache or (may_block) a review. Returns
 * KUBE_OK with *d, APIS_EXCHANGE_BLOCKED, or the review's error. */
static int decide(apis_exchange *x, apis_authz_attrs *a, int may_block, apis_authz_decision *d)
{
    int rc = apis_delegate_authorize_cached(x->ctx->delegate, a, d);

    if (rc != KUBE_ENOTFOUND)
        return rc;
    if (!may_block)
        return APIS_EXCHANGE_BLOCKED;
    return apis_delegate_authorize(x->ctx->delegate, a, d);
}

static int step_authz(apis_exchange *x, int may_block)
{
    apis_authz_attrs a;
    apis_authz_decision d;
    const char *verb;
    char msg[600];
    int rc;

    while ((verb = authz_verb(x, x->authz_passed)) != NULL) {
        authz_attrs(x, &a);
        a.verb = verb;
        rc = decide(x, &a, may_block, &d);
        if (rc == APIS_EXCHANGE_BLOCKED)
            return rc;
        if (rc != KUBE_OK) {
            snprintf(msg, sizeof(msg), "Internal error occurred: authorization failed: %s",
                     kube_strerror(rc));
            apis_exchange_fail(x, 500, "InternalError", msg);
            return APIS_EXCHANGE_DONE;
        }
        if (!d.allowed) {
            forbidden(x, &a, d.reason);
            return APIS_EXCHANGE_DONE;
        }
        x->authz_passed++;
    }
    x->stage = ST_BODY;
    return APIS_EXCHANGE_DONE;
}

/* ---- handlers ---- */

static int method_allowed(const apis_exchange *x)
{
    if (apis_route_is_pin(x->route.kind))
        return !strcmp(x->method, "GET") || !strcmp(x->method, "PUT") || !strcmp(x->method, "POST");
    return !strcmp(x->method, "GET");
}

static void serve_openapi(apis_exchange *x)
{
    size_t len;
    const char *doc = apis_openapi_v2(&len);

    x->etag = apis_openapi_v2_etag();
    if (x->if_none_match[0] && strstr(x->if_none_match, x->etag)) {
        answer_text(x, 304, CT_JSON, "", 0);
        return;
    }
    answer_text(x, 200, CT_JSON, doc, len);
}

static void serve_metrics(apis_exchange *x)
{
    int rc;

    if (!x->ctx->metrics) {
        answer_text(x, 200, CT_METRICS, "", 0);
        return;
    }
    kube_buf_reset(&x->body);
    rc = apis_metrics_render(x->ctx->metrics, &x->body);
    answer_status(x, rc, 200);
    x->content_type = CT_METRICS;
}

static void serve_local(apis_exchange *x)
{
    const char *doc = NULL;
    size_t len = 0;

    switch (x->route.kind) {
    case APIS_ROUTE_ROOT:
        doc = apis_discovery_root(&len);
        break;
    case APIS_ROUTE_APIS:
        doc = apis_discovery_group_list(&len);
        break;
    case APIS_ROUTE_GROUP:
        doc = apis_discovery_group(&len);
        break;
    case APIS_ROUTE_VERSION:
        doc = apis_discovery_resource_list(&len);
        break;
    case APIS_ROUTE_OPENAPI_V2:
        serve_openapi(x);
        return;
    case APIS_ROUTE_METRICS:
        serve_metrics(x);
        return;
    default:
        answer_text(x, 404, CT_TEXT, "404 page not found\n", 19);
        return;
    }
    answer_text(x, 200, CT_JSON, doc, len);
}

static void serve_pin(apis_exchange *x)
{
    apis_pin_request r = {
        .namespace_ = x->route.namespace_,
        .name = x->route.name,
        .unpin = x->route.kind == APIS_ROUTE_UNPIN,
        .has_node = x->route.has_node,
        .node = x->route.node,
        .key = x->ctx->pin_key,
        .user = x->user ? x->user->name : NULL,
        .dry_run = x->route.dry_run,
        .force = x->route.force,
        .recorder = apis_vmpins_recorder(x->ctx->vmpins),
    };
    int code = 500, rc;

    if (!x->ctx->client) {
        apis_exchange_fail(x, 503, "ServiceUnavailable", "no connection to kube-apiserver");
        return;
    }
    kube_buf_reset(&x->body);
    rc = apis_pin_execute(x->ctx->client, x->ctx->metrics, &r, &code, &x->body);
    answer_status(x, rc, code);
}

static int step_serve(apis_exchange *x, int may_block)
{
    if (!method_allowed(x)) {
        kube_buf_reset(&x->body);
        answer_status(x, apis_status_method_not_allowed(&x->body), 405);
        x->allow_header = 1;
        return APIS_EXCHANGE_DONE;
    }
    if (!apis_route_is_resource(x->route.kind)) {
        serve_local(x);
        return APIS_EXCHANGE_DONE;
    }
    if (!apis_route_is_pin(x->route.kind)) { /* virtualmachinepins: vmpins.h */
        if (!may_block)
            return APIS_EXCHANGE_BLOCKED;
        x->code =
            apis_vmpins_serve(x->ctx->vmpins, &x->route, x->accept, &x->content_type, &x->body);
        x->stage = ST_DONE;
        return APIS_EXCHANGE_DONE;
    }
    if (!x->body_ok) {
        apis_exchange_fail(x, 400, "BadRequest",
                           "the request body must be empty or an empty JSON object {}");
        return APIS_EXCHANGE_DONE;
    }
    if (!may_block)
        return APIS_EXCHANGE_BLOCKED;
    serve_pin(x);
    return APIS_EXCHANGE_DONE;
}

int apis_exchange_run(apis_exchange *x, int may_block)
{
    while (x->stage != ST_DONE) {
        int rc = APIS_EXCHANGE_DONE;
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
            return APIS_EXCHANGE_NEED_BODY;
        case ST_SERVE:
            rc = step_serve(x, may_block);
            break;
        case ST_DONE:
            break;
        }
        if (rc == APIS_EXCHANGE_BLOCKED)
            return rc;
    }
    return APIS_EXCHANGE_DONE;
}

void apis_exchange_set_body(apis_exchange *x, const char *body, size_t len)
{
    x->body_ok = apis_body_check(body, len) == KUBE_OK;
    if (x->stage == ST_BODY)
        x->stage = ST_SERVE;
}

/* ---- the response ---- */

int apis_exchange_code(const apis_exchange *x)
{
    return x->code;
}

int apis_exchange_must_close(const apis_exchange *x)
{
    return x->close;
}

const char *apis_exchange_body(const apis_exchange *x, size_t *len)
{
    *len = x->body.len;
    return x->body.data ? x->body.data : "";
}

const apis_user *apis_exchange_user(const apis_exchange *x)
{
    return x->user;
}

static int put_headers(const apis_exchange *x, int keep_alive, kube_buf *out)
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
    if (rc == KUBE_OK && x->allow_header)
        rc = kube_buf_puts(out, "Allow: GET, PUT, POST\r\n");
    if (rc == KUBE_OK && x->retry_after)
        rc = kube_buf_printf(out, "Retry-After: %d\r\n", x->retry_after);
    if (rc == KUBE_OK && x->code != 304)
        rc = kube_buf_printf(out, "Content-Length: %zu\r\n", x->body.len);
    if (rc == KUBE_OK && (!keep_alive || x->close))
        rc = kube_buf_puts(out, "Connection: close\r\n");
    return rc == KUBE_OK ? kube_buf_puts(out, "\r\n") : rc;
}

int apis_exchange_serialize(const apis_exchange *x, int keep_alive, kube_buf *out)
{
    int rc = put_headers(x, keep_alive, out);

    if (rc == KUBE_OK && x->code != 304 && strcmp(x->method, "HEAD") != 0 && x->body.len)
        rc = kube_buf_append(out, x->body.data, x->body.len);
    return rc;
}

void apis_exchange_observe(const apis_exchange *x)
{
    double secs = (double)(kube_now_ns() - x->start_ns) / 1e9;

    if (x->ctx->metrics)
        apis_metrics_observe(x->ctx->metrics, x->method, apis_route_subresource(x->route.kind),
                             x->code, secs);
    if (apis_route_is_pin(x->route.kind)) /* every pin and unpin, at the default verbosity */
        apis_pin_log(&x->route, x->user ? x->user->name : "", x->code, secs);
    else
        KLOG_V(3, "%s %s %d %.3fms user=%s", x->method, x->route.path ? x->route.path : "(invalid)",
               x->code, secs * 1e3, x->user ? x->user->name : "");
}

void apis_exchange_free(apis_exchange *x)
{
    if (!x)
        return;
    wipe_token(x);
    apis_user_free(x->user);
    apis_route_free(&x->route);
    free(x->accept);
    kube_buf_free(&x->body);
    free(x);
}
