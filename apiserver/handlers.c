/*
 * apiserver/handlers.c - stickyvm-apiserver's handler table: routes,
 * health, authorization checks and the handlers (discovery, OpenAPI,
 * metrics, pin and unpin, virtualmachinepins) and the pin request log.
 * The contract is in handlers.h.
 */
#include "handlers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "kube/machinery/factory.h"
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

/* The health paths answer without identity (kube/serving/healthz.h). */
static int health(void *ud, void *state, const kube_health_state *hs, kube_exchange *x)
{
    apis_handlers_ctx *c = ud;
    req_state *r = state;

    if (r->route.kind != APIS_ROUTE_HEALTH)
        return 0;
    kube_healthz_serve(&c->health, &r->route.health, hs, x);
    return 1;
}

/* readyz's informer-sync: every informer of the factory listed once. */
static int check_informers(void *ud, const kube_health_state *hs, char *why, size_t n)
{
    int rc = kube_factory_wait_synced(ud, 0);

    (void)hs;
    if (rc != KUBE_OK)
        snprintf(why, n, "the informers have not synced yet");
    return rc;
}

/* readyz's extension-apiserver-authentication: the delegated
 * authentication settings were read (or their lookup failure tolerated). */
static int check_authn(void *ud, const kube_health_state *hs, char *why, size_t n)
{
    (void)ud;
    if (hs->authn_loaded)
        return KUBE_OK;
    snprintf(why, n, "the authentication settings are not loaded yet");
    return KUBE_ETIMEDOUT;
}

/* k8s.io/apiserver's generic server's: ping everywhere; on /readyz
 * informer-sync, the authentication settings and shutdown. */
static int add_checks(apis_handlers_ctx *c)
{
    int rc = kube_healthz_add(&c->health, KUBE_HEALTHZ_ALL, "ping", kube_healthz_ping, NULL);

    if (rc == KUBE_OK && c->informers)
        rc = kube_healthz_add(&c->health, KUBE_READYZ, "informer-sync", check_informers,
                              c->informers);
    if (rc == KUBE_OK)
        rc = kube_healthz_add(&c->health, KUBE_READYZ, "extension-apiserver-authentication",
                              check_authn, NULL);
    if (rc == KUBE_OK)
        rc = kube_healthz_add(&c->health, KUBE_READYZ, "shutdown", kube_healthz_shutdown, NULL);
    return rc;
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

/* The methods a route answers, as a 405's Allow lists them: pin and
 * unpin change the VM whatever the method; everything else is read. */
static const char *route_methods(const req_state *r)
{
    return apis_route_is_pin(r->route.kind) ? "GET, PUT, POST" : "GET";
}

static int method_allowed(const char *methods, const char *method)
{
    size_t n = strlen(method);

    for (const char *p = methods; *p; p += strspn(p, ", ")) {
        size_t len = strcspn(p, ", ");
        if (len == n && !strncmp(p, method, n))
            return 1;
        p += len;
    }
    return 0;
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
        .from = r->route.has_from ? r->route.from : NULL,
        .key = c->pin_key,
        .user = user ? user->name : NULL,
        .dry_run = r->route.dry_run,
        .force = r->route.force,
        .nodes = c->nodes,
        .recorder = c->recorder,
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

    if (!method_allowed(route_methods(r), kube_exchange_method(x))) {
        kube_exchange_answer_filled(x, kube_status_method_not_allowed(kube_exchange_answer_body(x)),
                                    405, KUBE_CT_JSON);
        kube_exchange_set_allow(x, route_methods(r));
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

int apis_handlers_init(kube_handlers *h, apis_handlers_ctx *ctx)
{
    memset(h, 0, sizeof(*h));
    memset(&ctx->health, 0, sizeof(ctx->health));
    h->route = route;
    h->health = health;
    h->authz = authz;
    h->body = body;
    h->serve = serve;
    h->label = label;
    h->log = log_request;
    h->free_state = free_state;
    h->ud = ctx;
    return add_checks(ctx);
}
