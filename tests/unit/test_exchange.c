/*
 * tests/unit/test_exchange.c - the request pipeline without a
 * network: who is authenticated from what, the order of 401 / 400 / 403 /
 * 405, header stripping, what stops at a network step, and the response
 * bytes. The context has no kube-apiserver: no TokenReview or
 * SubjectAccessReview client (only the always-allow rules decide) and no
 * client for pin (503).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/serving/authsource.h"
#include "kube/serving/delegate.h"
#include "apiserver/discovery.h"
#include "apiserver/handlers.h"
#include "apiserver/metrics.h"
#include "kube/serving/exchange.h"
#include "kube/serving/exchange_testing.h"
#include "kube/util/certkit.h"
#include "kube/serving/httpreq.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#define GV "/apis/subresources.stickyvm.io/v1"
#define PIN GV "/namespaces/default/virtualmachines/vm1/pin"

typedef struct env {
    char dir[64];
    X509 *ca;
    EVP_PKEY *ca_key;
    X509 *proxy; /* CN=front-proxy-client */
    X509 *alice; /* client certificate CN=alice O=team-a */
    kube_authn_source *src;
    kube_delegate *del;
    apis_metrics *metrics;
    kube_serving_observer observer;
    apis_handlers_ctx hctx;
    kube_handlers handlers;
    kube_serving_context ctx;
} env;

static env E;

static X509 *issue(const kube_cert_spec *spec)
{
    X509 *x = NULL;
    EVP_PKEY *k = NULL;

    assert_int_equal(kube_certkit_issue(E.ca, E.ca_key, spec, &x, &k), KUBE_OK);
    EVP_PKEY_free(k);
    return x;
}

static int setup(void **state)
{
    static const char *const team[] = {"team-a", NULL};
    kube_cert_spec ca = {.cn = "test-ca", .ca = 1, .not_before_s = -60, .not_after_s = 86400};
    kube_cert_spec proxy = {
        .cn = "front-proxy-client", .eku = "clientAuth", .not_before_s = -60, .not_after_s = 86400};
    kube_cert_spec alice = {.cn = "alice",
                            .orgs = team,
                            .eku = "clientAuth",
                            .not_before_s = -60,
                            .not_after_s = 86400};
    kube_strlist allowed = {0}, paths = {0}, groups = {0};
    char ca_path[128], err[256];
    kube_authn_source_options so = {0};
    kube_delegate_options d = {0};
    (void)state;

    memset(&E, 0, sizeof(E));
    snprintf(E.dir, sizeof(E.dir), "/tmp/apis-exchange-XXXXXX");
    assert_non_null(mkdtemp(E.dir));
    assert_int_equal(kube_certkit_issue(NULL, NULL, &ca, &E.ca, &E.ca_key), KUBE_OK);
    E.proxy = issue(&proxy);
    E.alice = issue(&alice);
    snprintf(ca_path, sizeof(ca_path), "%s/ca.crt", E.dir);
    assert_int_equal(kube_certkit_write(ca_path, NULL, E.ca, NULL, NULL), KUBE_OK);
    kube_strlist_add(&allowed, "front-proxy-client");
    so.client_ca_file = ca_path;
    so.requestheader_ca_file = ca_path;
    so.allowed_names = &allowed;
    so.allowed_names_set = 1;
    assert_int_equal(kube_authn_source_new(&so, &E.src, err, sizeof(err)), KUBE_OK);
    kube_strlist_split(&paths, "/healthz,/readyz,/livez");
    kube_strlist_add(&groups, "system:masters");
    assert_int_equal(apis_metrics_new(&E.metrics), KUBE_OK);
    d.always_allow_paths = &paths;
    d.always_allow_groups = &groups;
    d.token_ttl_ms = d.allow_ttl_ms = d.deny_ttl_ms = 10000;
    apis_metrics_observer(E.metrics, &E.observer);
    d.observer = &E.observer;
    assert_int_equal(kube_delegate_new(&d, &E.del), KUBE_OK);
    E.ctx.authn = E.src;
    E.ctx.delegate = E.del;
    E.hctx.metrics = E.metrics;
    assert_int_equal(apis_handlers_init(&E.handlers, &E.hctx), KUBE_OK);
    E.ctx.handlers = &E.handlers;
    E.ctx.observer = &E.observer;
    kube_strlist_free(&allowed);
    kube_strlist_free(&paths);
    kube_strlist_free(&groups);
    return 0;
}

static int teardown(void **state)
{
    char path[128];
    (void)state;

    kube_delegate_free(E.del);
    kube_authn_source_free(E.src);
    apis_metrics_free(E.metrics);
    X509_free(E.ca);
    X509_free(E.proxy);
    X509_free(E.alice);
    EVP_PKEY_free(E.ca_key);
    snprintf(path, sizeof(path), "%s/ca.crt", E.dir);
    unlink(path);
    rmdir(E.dir);
    return 0;
}

/* One exchange for the given request text and client certificate; runs it
 * as far as it goes without blocking (handing it the body once authorized,
 * as the server does). */
typedef struct result {
    kube_exchange *x;
    int blocked;
    int needed_body; /* the exchange asked for the body (it was authorized) */
    kube_httpreq_request req;
    kube_buf raw;
    kube_peer_cache pc;
} result;

/* kube_exchange_run(), giving the body when the exchange asks for it. */
static int advance(result *r, int may_block)
{
    int rc = kube_exchange_run(r->x, may_block);

    if (rc != KUBE_EXCHANGE_NEED_BODY)
        return rc;
    r->needed_body = 1;
    kube_exchange_set_body(r->x, r->req.body, r->req.body_len);
    return kube_exchange_run(r->x, may_block);
}

static void run(result *r, const char *method, const char *target, const char *headers,
                const char *body, X509 *cert)
{
    kube_httpreq_limits lim;
    int status;

    memset(r, 0, sizeof(*r));
    kube_httpreq_limits_default(&lim);
    kube_buf_printf(&r->raw, "%s %s HTTP/1.1\r\nHost: h\r\n%sContent-Length: %zu\r\n\r\n%s", method,
                    target, headers ? headers : "", body ? strlen(body) : 0, body ? body : "");
    assert_true(kube_httpreq_parse(r->raw.data, r->raw.len, &lim, &r->req, &status) > 0);
    if (cert) {
        X509_up_ref(cert);
        r->pc.leaf = cert;
    }
    assert_int_equal(kube_exchange_new(&E.ctx, &r->req, cert ? &r->pc : NULL, &r->x), KUBE_OK);
    r->blocked = advance(r, 0) == KUBE_EXCHANGE_BLOCKED;
}

static void done(result *r)
{
    kube_exchange_free(r->x);
    kube_httpreq_request_free(&r->req);
    kube_buf_free(&r->raw);
    kube_peer_cache_clear(&r->pc);
}

static const char *body_of(const result *r)
{
    size_t len;
    return kube_exchange_body(r->x, &len);
}

#define MASTERS "X-Remote-User: admin\r\nX-Remote-Group: system:masters\r\n"

static void health_needs_no_identity(void **state)
{
    result r;
    (void)state;

    run(&r, "GET", "/healthz", NULL, NULL, NULL);
    assert_false(r.blocked);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_string_equal(body_of(&r), "ok");
    done(&r);
    run(&r, "GET", "/readyz", NULL, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 200);
    done(&r);
}

/* k8s.io/apiserver's healthz: the checks by name, ?verbose, ?exclude, one
 * check at /readyz/NAME, an unknown one 404. */
static void health_checks_are_named(void **state)
{
    result r;
    (void)state;

    run(&r, "GET", "/readyz?verbose", NULL, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_string_equal(body_of(&r), "[+]ping ok\n[+]extension-apiserver-authentication ok\n"
                                     "[+]shutdown ok\nreadyz check passed\n");
    done(&r);
    run(&r, "GET", "/livez?verbose=1", NULL, NULL, NULL);
    assert_string_equal(body_of(&r), "[+]ping ok\nlivez check passed\n");
    done(&r);
    run(&r, "GET", "/readyz?verbose&exclude=shutdown&exclude=n%6Fpe", NULL, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_string_equal(body_of(&r),
                        "[+]ping ok\n[+]extension-apiserver-authentication ok\n"
                        "[+]shutdown excluded: ok\nwarn: some health checks cannot be excluded: "
                        "no matches for \"nope\"\nreadyz check passed\n");
    done(&r);
    run(&r, "GET", "/readyz/shutdown", NULL, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_string_equal(body_of(&r), "ok");
    done(&r);
    run(&r, "GET", "/livez/shutdown", NULL, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 404);
    done(&r);
}

static void forged_headers_without_certificate_are_401(void **state)
{
    result r;
    (void)state;

    run(&r, "GET", GV, MASTERS, NULL, NULL);
    assert_false(r.blocked);
    assert_int_equal(kube_exchange_code(r.x), 401);
    assert_null(kube_exchange_user(r.x));
    /* authentication comes before the path check */
    done(&r);
    run(&r, "GET", GV "//x", MASTERS, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 401);
    done(&r);
}

static void front_proxy_identity_and_stripping(void **state)
{
    result r;
    const kube_user *u;
    (void)state;

    run(&r, "GET", GV,
        MASTERS "X-Remote-Group: system:authenticated\r\nX-Remote-Extra-Scopes: a\r\n"
                "Authorization: Bearer secret\r\n",
        NULL, E.proxy);
    assert_false(r.blocked);
    assert_int_equal(kube_exchange_code(r.x), 200);
    u = kube_exchange_user(r.x);
    assert_string_equal(u->name, "admin");
    assert_int_equal(u->groups.n, 2);
    assert_string_equal(u->extra[0].key, "scopes");
    /* nothing after authentication sees these headers */
    assert_int_equal(kube_httpreq_header_count(&r.req, "X-Remote-User"), 0);
    assert_int_equal(kube_httpreq_header_count(&r.req, "X-Remote-Group"), 0);
    assert_int_equal(kube_httpreq_header_count(&r.req, "X-Remote-Extra-Scopes"), 0);
    assert_int_equal(kube_httpreq_header_count(&r.req, "Authorization"), 0);
    assert_int_equal(kube_httpreq_header_count(&r.req, "Host"), 1);
    assert_int_equal(r.pc.front_proxy, KUBE_OK);
    done(&r);
}

static void client_certificate_ignores_front_proxy_headers(void **state)
{
    result r;
    const kube_user *u;
    (void)state;

    run(&r, "GET", GV, MASTERS, NULL, E.alice);
    u = kube_exchange_user(r.x);
    assert_non_null(u);
    assert_string_equal(u->name, "alice");
    assert_string_equal(u->groups.v[0], "team-a");
    assert_string_equal(u->groups.v[1], "system:authenticated");
    /* alice is not in an always-allowed group and there is no reviewer */
    assert_true(r.blocked);
    assert_int_equal(kube_exchange_run(r.x, 1), KUBE_EXCHANGE_DONE);
    assert_int_equal(kube_exchange_code(r.x), 403);
    assert_non_null(strstr(body_of(&r), "forbidden: User \\\"alice\\\" cannot get path"));
    done(&r);
}

static void proxy_without_username_falls_through(void **state)
{
    result r;
    (void)state;

    /* the front-proxy certificate is not itself a user (no client CA match
     * for its CN would make it one here: it is signed by the same CA) */
    run(&r, "GET", GV, "X-Remote-Group: system:masters\r\n", NULL, E.proxy);
    assert_non_null(kube_exchange_user(r.x));
    assert_string_equal(kube_exchange_user(r.x)->name, "front-proxy-client");
    done(&r);
}

static void bad_paths_after_authentication_are_400(void **state)
{
    static const char *const targets[] = {GV "/", GV "//namespaces", PIN "/",
                                          GV "/namespaces/default/virtualmachines/..%2Fx/pin",
                                          GV "/namespaces/default/virtualmachines/Bad/pin"};
    (void)state;

    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        result r;
        run(&r, "GET", targets[i], MASTERS, NULL, E.proxy);
        assert_false(r.blocked);
        assert_int_equal(kube_exchange_code(r.x), 400);
        assert_non_null(strstr(body_of(&r), "\"reason\":\"BadRequest\""));
        done(&r);
    }
}

static void methods_and_bodies(void **state)
{
    result r;
    kube_buf out = KUBE_BUF_INIT;
    (void)state;

    run(&r, "DELETE", PIN, MASTERS, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 405);
    assert_int_equal(kube_exchange_serialize(r.x, 1, &out), KUBE_OK);
    assert_non_null(strstr(out.data, "\r\nAllow: GET, PUT, POST\r\n"));
    done(&r);
    run(&r, "POST", GV, MASTERS, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 405);
    done(&r);
    run(&r, "PUT", PIN, MASTERS, "{\"node\":\"x\"}", E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 400);
    done(&r);
    /* a good pin stops where kube-apiserver is needed */
    run(&r, "PUT", PIN "?node=node-1&timeout=32s", MASTERS, "{}", E.proxy);
    assert_true(r.blocked);
    assert_int_equal(kube_exchange_run(r.x, 1), KUBE_EXCHANGE_DONE);
    assert_int_equal(kube_exchange_code(r.x), 503);
    /* reported: counted by user and code */
    kube_exchange_observe(r.x);
    done(&r);
    kube_buf_reset(&out);
    assert_int_equal(apis_metrics_render(E.metrics, &out), KUBE_OK);
    assert_non_null(strstr(out.data, "stickyvm_apiserver_pin_requests_total{subresource=\"pin\","
                                     "user=\"admin\",code=\"503\"} 1\n"));
    kube_buf_free(&out);
}

/* A 405's Allow lists the methods of the route asked, not of pin's. */
static void get_only_routes_allow_only_get(void **state)
{
    static const char *const targets[] = {GV, "/apis", "/openapi/v2", "/metrics",
                                          GV "/virtualmachinepins"};
    kube_buf out = KUBE_BUF_INIT;
    result r;
    (void)state;

    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        run(&r, "POST", targets[i], MASTERS, NULL, E.proxy);
        assert_int_equal(kube_exchange_code(r.x), 405);
        kube_buf_reset(&out);
        assert_int_equal(kube_exchange_serialize(r.x, 1, &out), KUBE_OK);
        assert_non_null(strstr(out.data, "\r\nAllow: GET\r\n"));
        done(&r);
    }
    kube_buf_free(&out);
}

static void upgrades_are_refused(void **state)
{
    result r;
    (void)state;

    run(&r, "GET", PIN, MASTERS "Connection: Upgrade\r\nUpgrade: websocket\r\n", NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 400);
    assert_true(kube_exchange_must_close(r.x));
    done(&r);
}

static void bearer_tokens_need_a_review(void **state)
{
    result r;
    (void)state;

    run(&r, "GET", GV, "Authorization: Bearer some-token\r\n", NULL, NULL);
    assert_true(r.blocked);
    assert_int_equal(kube_exchange_run(r.x, 1), KUBE_EXCHANGE_DONE);
    assert_int_equal(kube_exchange_code(r.x), 401); /* no TokenReview client */
    done(&r);
}

static void serves_local_documents(void **state)
{
    char hdr[256];
    result r;
    kube_buf out = KUBE_BUF_INIT;
    (void)state;

    run(&r, "GET", "/apis", MASTERS, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_non_null(strstr(body_of(&r), "APIGroupList"));
    done(&r);
    run(&r, "GET", "/metrics", MASTERS, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 200);
    /* as client_golang, a family shows once it has a series: the gauge
     * always has one; request_total only after a request was answered */
    assert_non_null(strstr(body_of(&r), "stickyvm_apiserver_inflight_requests"));
    done(&r);
    run(&r, "GET", GV "/namespaces/default/virtualmachines/vm1", MASTERS, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 404);
    assert_string_equal(body_of(&r), "404 page not found\n");
    done(&r);
    snprintf(hdr, sizeof(hdr), MASTERS "If-None-Match: %s\r\n", apis_openapi_v2_etag());
    run(&r, "GET", "/openapi/v2", hdr, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 304);
    assert_int_equal(kube_exchange_serialize(r.x, 0, &out), KUBE_OK);
    assert_non_null(strstr(out.data, "HTTP/1.1 304 Not Modified\r\n"));
    assert_null(strstr(out.data, "Content-Length"));
    assert_non_null(strstr(out.data, "Connection: close\r\n"));
    assert_string_equal(out.data + out.len - 4, "\r\n\r\n");
    done(&r);
    kube_buf_free(&out);
}

static void serializes_responses(void **state)
{
    result r;
    kube_buf out = KUBE_BUF_INIT;
    size_t blen;
    const char *b;
    char want[64];
    (void)state;

    run(&r, "GET", GV, MASTERS "Audit-Id: 474eeb55-b991-4d37-b895-ac18f5ff49d0\r\n", NULL, E.proxy);
    assert_int_equal(kube_exchange_serialize(r.x, 1, &out), KUBE_OK);
    b = kube_exchange_body(r.x, &blen);
    assert_true(strncmp(out.data, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_non_null(strstr(out.data, "Content-Type: application/json\r\n"));
    assert_non_null(strstr(out.data, "Audit-Id: 474eeb55-b991-4d37-b895-ac18f5ff49d0\r\n"));
    snprintf(want, sizeof(want), "Content-Length: %zu\r\n", blen);
    assert_non_null(strstr(out.data, want));
    assert_null(strstr(out.data, "Connection: close"));
    assert_string_equal(out.data + out.len - blen, b);
    done(&r);
    kube_buf_free(&out);
}

static void the_429_answer(void **state)
{
    result r;
    kube_buf out = KUBE_BUF_INIT;
    (void)state;

    run(&r, "PUT", PIN, MASTERS, NULL, E.proxy);
    assert_true(r.blocked);
    kube_exchange_fail(r.x, 429, "TooManyRequests", "Too many requests, please try again later.");
    assert_int_equal(kube_exchange_serialize(r.x, 1, &out), KUBE_OK);
    assert_non_null(strstr(out.data, "HTTP/1.1 429 Too Many Requests\r\n"));
    assert_non_null(strstr(out.data, "Retry-After: 1\r\n"));
    done(&r);
    kube_buf_free(&out);
}

/* Nothing unauthenticated or unauthorized gets its body read: the exchange
 * asks for the body only once authorized. */
static void bodies_are_read_only_when_authorized(void **state)
{
    result r;
    (void)state;

    run(&r, "PUT", PIN, MASTERS, "{}", NULL); /* forged, no certificate */
    assert_int_equal(kube_exchange_code(r.x), 401);
    assert_false(r.needed_body);
    done(&r);
    run(&r, "PUT", PIN, NULL, "{}", E.alice);
    assert_true(r.blocked); /* the review */
    assert_int_equal(kube_exchange_run(r.x, 1), KUBE_EXCHANGE_DONE);
    assert_int_equal(kube_exchange_code(r.x), 403);
    assert_false(r.needed_body);
    done(&r);
    run(&r, "PUT", PIN, MASTERS, "{}", E.proxy);
    assert_true(r.needed_body);
    done(&r);
}

/* A certificate that expires while its connection stays open stops
 * authenticating, as k8s.io/apiserver checks validity per request. Its
 * NotAfter is EXPIRY_S after it was signed, so the first request is well
 * inside it even under valgrind; the second waits until the clock has
 * passed it for certain. */
static void expired_certificates_stop_authenticating(void **state)
{
    enum { EXPIRY_S = 3 };
    kube_cert_spec spec = {
        .cn = "alice", .eku = "clientAuth", .not_before_s = -60, .not_after_s = EXPIRY_S};
    kube_peer_cache pc = {0};
    kube_httpreq_limits lim;
    kube_httpreq_request req;
    const char *text = "GET " GV " HTTP/1.1\r\nHost: h\r\n\r\n";
    kube_exchange *x;
    time_t expired;
    int status;
    (void)state;

    kube_httpreq_limits_default(&lim);
    pc.leaf = issue(&spec);
    expired = time(NULL) + EXPIRY_S; /* at or after its NotAfter */
    for (int round = 0; round < 2; round++) {
        assert_true(kube_httpreq_parse(text, strlen(text), &lim, &req, &status) > 0);
        assert_int_equal(kube_exchange_new(&E.ctx, &req, &pc, &x), KUBE_OK);
        if (round == 0) {
            assert_non_null(kube_exchange_user(x));
            assert_string_equal(kube_exchange_user(x)->name, "alice");
        } else {
            assert_null(kube_exchange_user(x));
            assert_int_equal(kube_exchange_code(x), 401);
        }
        kube_exchange_free(x);
        kube_httpreq_request_free(&req);
        while (round == 0 && time(NULL) <= expired)
            sleep(1); /* the certificate's NotAfter passes; same connection */
    }
    kube_peer_cache_clear(&pc);
}

/* A handler table of a test daemon: serve() echoes the Accept header and
 * log() records each finished request, or declines it. */
typedef struct probe {
    int logged, code, decline;
    char user[64];
    double seconds;
} probe;

static probe P;

static int probe_route(void *ud, const char *method, const char *target, void **state, char *msg,
                       size_t n)
{
    (void)ud;
    (void)method;
    (void)target;
    (void)msg;
    (void)n;
    *state = &P;
    return KUBE_OK;
}

static int probe_serve(void *ud, void *state, kube_exchange *x, int may_block)
{
    const char *accept = kube_exchange_accept(x);

    (void)ud;
    (void)state;
    (void)may_block;
    accept = accept ? accept : "(none)";
    kube_exchange_answer(x, 200, KUBE_CT_TEXT, accept, strlen(accept));
    return KUBE_EXCHANGE_DONE;
}

static int probe_log(void *ud, void *state, const kube_exchange *x, double seconds)
{
    probe *p = state;
    const kube_user *u = kube_exchange_user(x);

    (void)ud;
    p->logged++;
    p->code = kube_exchange_code(x);
    p->seconds = seconds;
    snprintf(p->user, sizeof(p->user), "%s", u ? u->name : "");
    return !p->decline;
}

static void handlers_see_accept_and_log_each_request(void **state)
{
    kube_handlers h = {.route = probe_route, .serve = probe_serve, .log = probe_log};
    const kube_handlers *saved = E.ctx.handlers;
    result r;
    (void)state;

    memset(&P, 0, sizeof(P));
    E.ctx.handlers = &h;
    run(&r, "GET", "/x", MASTERS "Accept: application/json;as=Table;g=meta.k8s.io;v=v1\r\n", NULL,
        E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_string_equal(body_of(&r), "application/json;as=Table;g=meta.k8s.io;v=v1");
    assert_int_equal(P.logged, 0); /* only once reported */
    kube_exchange_observe(r.x);
    assert_int_equal(P.logged, 1);
    assert_int_equal(P.code, 200);
    assert_string_equal(P.user, "admin");
    assert_true(P.seconds >= 0);
    done(&r);
    /* no Accept: NULL; a 401 is logged too, with no user */
    run(&r, "GET", "/x", NULL, NULL, NULL);
    assert_int_equal(kube_exchange_code(r.x), 401);
    P.decline = 1;
    kube_exchange_observe(r.x);
    assert_int_equal(P.logged, 2);
    assert_int_equal(P.code, 401);
    assert_string_equal(P.user, "");
    done(&r);
    run(&r, "GET", "/x", MASTERS, NULL, E.proxy);
    assert_string_equal(body_of(&r), "(none)");
    done(&r);
    E.ctx.handlers = saved;
}

/* A streamed answer: chunked head, one chunk per write, the last chunk at
 * the end; a cancel reaches the producer once and refuses later writes. */
static kube_stream *streamed;
static int cancels;

static void on_cancel(void *ud)
{
    (void)ud;
    cancels++;
}

static int stream_serve(void *ud, void *state, kube_exchange *x, int may_block)
{
    (void)ud;
    (void)state;
    (void)may_block;
    assert_int_equal(kube_exchange_stream(x, 200, KUBE_CT_JSON, 0, on_cancel, NULL, &streamed),
                     KUBE_OK);
    return KUBE_EXCHANGE_DONE;
}

static void streamed_answers_are_chunked(void **state)
{
    kube_handlers h = {.route = probe_route, .serve = stream_serve};
    const kube_handlers *saved = E.ctx.handlers;
    kube_buf out = KUBE_BUF_INIT;
    kube_stream *server_ref;
    result r;
    (void)state;

    E.ctx.handlers = &h;
    cancels = 0;
    run(&r, "GET", "/x", MASTERS, NULL, E.proxy);
    assert_int_equal(kube_exchange_code(r.x), 200);
    assert_int_equal(kube_exchange_serialize(r.x, 1, &out), KUBE_OK);
    assert_non_null(strstr(out.data, "\r\nTransfer-Encoding: chunked\r\n"));
    assert_null(strstr(out.data, "Content-Length"));
    server_ref = kube_exchange_take_stream(r.x);
    assert_ptr_equal(server_ref, streamed);
    assert_int_equal(kube_stream_write(streamed, "{\"a\":1}\n", 8), KUBE_OK);
    kube_buf_reset(&out);
    assert_int_equal(kube_stream_take(server_ref, &out), 0);
    assert_string_equal(out.data, "8\r\n{\"a\":1}\n\r\n");
    kube_stream_end(streamed);
    kube_buf_reset(&out);
    assert_int_equal(kube_stream_take(server_ref, &out), 1);
    assert_string_equal(out.data, "0\r\n\r\n");
    assert_int_equal(kube_stream_write(streamed, "x", 1), KUBE_ECANCELED);
    kube_stream_cancel(server_ref, 0);
    kube_stream_cancel(server_ref, 0);
    assert_int_equal(cancels, 1);
    kube_stream_unref(server_ref);
    kube_stream_unref(streamed);
    done(&r);
    /* an exchange freed before the server took its stream cancels it */
    run(&r, "GET", "/x", MASTERS, NULL, E.proxy);
    done(&r);
    assert_int_equal(cancels, 2);
    assert_int_equal(kube_stream_write(streamed, "x", 1), KUBE_ECANCELED);
    kube_stream_unref(streamed);
    kube_buf_free(&out);
    E.ctx.handlers = saved;
}

int test_group_exchange(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(health_needs_no_identity),
        cmocka_unit_test(health_checks_are_named),
        cmocka_unit_test(forged_headers_without_certificate_are_401),
        cmocka_unit_test(front_proxy_identity_and_stripping),
        cmocka_unit_test(client_certificate_ignores_front_proxy_headers),
        cmocka_unit_test(proxy_without_username_falls_through),
        cmocka_unit_test(bad_paths_after_authentication_are_400),
        cmocka_unit_test(methods_and_bodies),
        cmocka_unit_test(get_only_routes_allow_only_get),
        cmocka_unit_test(upgrades_are_refused),
        cmocka_unit_test(bearer_tokens_need_a_review),
        cmocka_unit_test(serves_local_documents),
        cmocka_unit_test(serializes_responses),
        cmocka_unit_test(the_429_answer),
        cmocka_unit_test(bodies_are_read_only_when_authorized),
        cmocka_unit_test(expired_certificates_stop_authenticating),
        cmocka_unit_test(handlers_see_accept_and_log_each_request),
        cmocka_unit_test(streamed_answers_are_chunked),
    };
    return cmocka_run_group_tests_name("exchange", tests, setup, teardown);
}
