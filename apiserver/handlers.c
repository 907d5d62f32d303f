/*
 * apiserver/handlers.c - stickyvm-apiserver's handler table: routes,
 * health, authorization checks and the handlers (discovery, OpenAPI,
 * metrics, pin and unpin, virtualmachinepins) and the pin request log.
 * The contract is in handlers.h.
 */
#include "handlers.h"

#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "kube/serving/status.h"
#include "kube/util/errors.h"
#include "pin.h"
#include "request.h"
#include "vmpins.h"

/* One request's state: its route, its verb and whether its body passed. */
typedef struct req_state {
    apis_route route;
    char verb[40];
    int body_ok;
} req_state;

static int route(void *ud, const char *method, const char *target, void **state, char *msg,
                 size_t n)
{
    req_state *r = calloc(1, sizeof(*r));
    int rc;

    (void)ud;
    *state = NULL;
    if (!r)
        return KUBE_ENOMEM;
    rc = apis_route_parse(target, &r->route, msg, n);
    if (rc != KUBE_OK) {
        free(r);
        return rc;
    }
    apis_route_verb(&r->route, method, r->verb, sizeof(r->verb));
    *state = r;
    return KUBE_OK;
}

static const char not_ready[] =
    "[-]authentication-config not loaded, or shutting down\nreadyz check failed\n";

static int health(void *ud, void *state, const kube_health_state *hs, kube_exchange *x)
{
    req_state *r = state;

    (void)ud;
    switch (r->route.kind) {
    case APIS_ROUTE_HEALTHZ:
    case APIS_ROUTE_LIVEZ:
        kube_exchange_answer(x, 200, KUBE_CT_TEXT, "ok", 2);
        return 1;
    case APIS_ROUTE_READYZ:
        if (hs->authn_loaded && !hs->shutting_down)
            kube_exchange_answer(x, 200, KUBE_CT_TEXT, "ok", 2);
        else
            kube_exchange_answer(x, 500, KUBE_CT_TEXT, not_ready, sizeof(not_ready) - 1);
        return 1;
    default:
        return 0;
    }
}

/* The checks a request needs, in order: the verb its method maps to (list
 * and watch for virtualmachinepins collections) and, for pin and unpin
 * (which change the VM whatever the method, a GET included), update on the
 * subresource, so a read-only role cannot pin. */
static int authz(void *ud, void *state, const char *method, int i, kube_authz_attrs *a)
{
    req_state *r = state;
    int resource = apis_route_is_resource(r->route.kind);

    (void)ud;
    (void)method;
    if (i == 0)
        a->verb = r->verb;
    else if (i == 1 && apis_route_is_pin(r->route.kind) && strcmp(r->verb, "update") != 0)
        a->verb = "update";
    else
        return 0;
    a->resource_request = resource;
    a->path = r->route.path;
    if (!resource)
        return 1;
    a->namespace_ = r->route.namespace_;
    a->group = APIS_GROUP;
    a->version = APIS_VERSION;
    a->resource = apis_route_resource(r->route.kind);
    a->subresource = apis_route_subresource(r->route.kind);
    a->name = r->route.name;
    return 1;
}

static void body(void *ud, void *state, const char *data, size_t len)
{
    req_state *r = state;

    (void)ud;
    r->body_ok = apis_body_check(data, len) == KUBE_OK;
}

static int method_allowed(const req_state *r, const char *method)
{
    if (apis_route_is_pin(r->route.kind))
        return !strcmp(method, "GET") || !strcmp(method, "PUT") || !strcmp(method, "POST");
    return !strcmp(method, "GET");
}

static void serve_openapi(kube_exchange *x)
{
    size_t len;
    const char *doc = apis_openapi_v2(&len);
    const char *etag = apis_openapi_v2_etag();
    const char *inm = kube_exchange_if_none_match(x);

    kube_exchange_set_etag(x, etag);
    if (inm[0] && strstr(inm, etag)) {
        kube_exchange_answer(x, 304, KUBE_CT_JSON, "", 0);
        return;
    }
    kube_exchange_answer(x, 200, KUBE_CT_JSON, doc, len);
}

static void serve_metrics(const apis_handlers_ctx *c, kube_exchange *x)
{
    if (!c->metrics) {
        kube_exchange_answer(x, 200, KUBE_CT_METRICS, "", 0);
        return;
    }
    kube_exchange_answer_filled(x, apis_metrics_render(c->metrics, kube_exchange_answer_body(x)),
                                200, KUBE_CT_METRICS);
}

static void serve_local(const apis_handlers_ctx *c, const req_state *r, kube_exchange *x)
{
    const char *doc = NULL;
    size_t len = 0;

    switch (r->route.kind) {
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
        serve_metrics(c, x);
        return;
    default:
        kube_exchange_answer(x, 404, KUBE_CT_TEXT, "404 page not found\n", 19);
        return;
    }
    kube_exchange_answer(x, 200, KUBE_CT_JSON, doc, len);
}

static void serve_pin(const apis_handlers_ctx *c, const req_state *r, kube_exchange *x)
{
    const kube_user *user = kube_exchange_user(x);
    apis_pin_request p = {
        .namespace_ = r->route.namespace_,
        .name = r->route.name,
        .unpin = r->route.kind == APIS_ROUTE_UNPIN,
        .has_node = r->route.has_node,
        .node = r->route.node,
        .key = c->pin_key,
        .user = user ? user->name : NULL,
        .dry_run = r->route.dry_run,
        .force = r->route.force,
        .recorder = apis_vmpins_recorder(c->vmpins),
    };
    int code = 500, rc;

    if (!c->client) {
        kube_exchange_fail(x, 503, "ServiceUnavailable", "no connection to kube-apiserver");
        return;
    }
    rc = apis_pin_execute(c->client, c->metrics, &p, &code, kube_exchange_answer_body(x));
    kube_exchange_answer_filled(x, rc, code, KUBE_CT_JSON);
}

/* virtualmachinepins (vmpins.h): a list, a get or a watch; may wait for
 * the informer's sync. */
static void serve_vmpins(const apis_handlers_ctx *c, const req_state *r, kube_exchange *x)
{
    const char *ct = KUBE_CT_JSON;
    int code;

    if (apis_vmpins_is_watch(&r->route)) {
        apis_vmpins_watch(c->vmpins, &r->route, kube_exchange_accept(x), x);
        return;
    }
    code = apis_vmpins_serve(c->vmpins, &r->route, kube_exchange_accept(x), &ct,
                             kube_exchange_answer_body(x));
    kube_exchange_answer_filled(x, KUBE_OK, code, ct);
}

static int serve(void *ud, void *state, kube_exchange *x, int may_block)
{
    const apis_handlers_ctx *c = ud;
    req_state *r = state;

    if (!method_allowed(r, kube_exchange_method(x))) {
        kube_exchange_answer_filled(x, kube_status_method_not_allowed(kube_exchange_answer_body(x)),
                                    405, KUBE_CT_JSON);
        kube_exchange_set_allow(x, "GET, PUT, POST");
        return KUBE_EXCHANGE_DONE;
    }
    if (!apis_route_is_resource(r->route.kind)) {
        serve_local(c, r, x);
        return KUBE_EXCHANGE_DONE;
    }
    if (!apis_route_is_pin(r->route.kind)) {
        if (!may_block)
            return KUBE_EXCHANGE_BLOCKED;
        serve_vmpins(c, r, x);
        return KUBE_EXCHANGE_DONE;
    }
    if (!r->body_ok) {
        kube_exchange_fail(x, 400, "BadRequest",
                           "the request body must be empty or an empty JSON object {}");
        return KUBE_EXCHANGE_DONE;
    }
    if (!may_block)
        return KUBE_EXCHANGE_BLOCKED;
    serve_pin(c, r, x);
    return KUBE_EXCHANGE_DONE;
}

static const char *label(void *state)
{
    return apis_route_subresource(((req_state *)state)->route.kind);
}

/* Every pin and unpin is counted by user and code and logged at the
 * default verbosity, 401 and 403 included, with the whole request's
 * latency; other requests take the shared line. */
static int log_request(void *ud, void *state, const kube_exchange *x, double seconds)
{
    const apis_handlers_ctx *c = ud;
    const req_state *r = state;
    const kube_user *user = kube_exchange_user(x);

    if (!apis_route_is_pin(r->route.kind))
        return 0;
    apis_metrics_pin_request(c->metrics, apis_route_subresource(r->route.kind),
                             user ? user->name : NULL, kube_exchange_code(x));
    apis_pin_log(&r->route, user ? user->name : "", kube_exchange_code(x), seconds);
    return 1;
}

static void free_state(void *state)
{
    req_state *r = state;

    apis_route_free(&r->route);
    free(r);
}

void apis_handlers_init(kube_handlers *h, apis_handlers_ctx *ctx)
{
    memset(h, 0, sizeof(*h));
    h->route = route;
    h->health = health;
    h->authz = authz;
    h->body = body;
    h->serve = serve;
    h->label = label;
    h->log = log_request;
    h->free_state = free_state;
    h->ud = ctx;
}
