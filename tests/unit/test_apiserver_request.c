/*
 * tests/unit/test_apiserver_request.c - routes, path rules, query, verbs and
 * the body rule of stickyvm-apiserver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/request.h"
#include "kube/serving/query.h"
#include "kube/util/errors.h"

#define GV "/apis/subresources.stickyvm.io/v1"

typedef struct route_case {
    const char *target;
    apis_route_kind kind;
} route_case;

static const route_case routes[] = {
    {"/", APIS_ROUTE_ROOT},
    {"/healthz", APIS_ROUTE_HEALTH},
    {"/readyz?verbose", APIS_ROUTE_HEALTH},
    {"/livez", APIS_ROUTE_HEALTH},
    {"/readyz/shutdown", APIS_ROUTE_HEALTH},
    {"/metrics", APIS_ROUTE_METRICS},
    {"/openapi/v2", APIS_ROUTE_OPENAPI_V2},
    {"/apis", APIS_ROUTE_APIS},
    {"/apis/subresources.stickyvm.io", APIS_ROUTE_GROUP},
    {GV, APIS_ROUTE_VERSION},
    {GV "?timeout=32s", APIS_ROUTE_VERSION},
    {GV "/namespaces/default/virtualmachines/vm1/pin", APIS_ROUTE_PIN},
    {GV "/namespaces/default/virtualmachines/vm1/pin?timeout=32s", APIS_ROUTE_PIN},
    {GV "/namespaces/ns-1/virtualmachines/a.b-c/unpin", APIS_ROUTE_UNPIN},
    {GV "/namespaces/default/virtualmachines/vm1", APIS_ROUTE_NOT_FOUND},
    {GV "/namespaces/default/virtualmachines/vm1/start", APIS_ROUTE_NOT_FOUND},
    {GV "/namespaces/default/virtualmachines/vm1/pin/x", APIS_ROUTE_NOT_FOUND},
    {GV "/namespaces/default/pods/vm1/pin", APIS_ROUTE_NOT_FOUND},
    {"/apis/subresources.stickyvm.io/v2", APIS_ROUTE_NOT_FOUND},
    {"/apis/kubevirt.io/v1", APIS_ROUTE_NOT_FOUND},
    {"/openapi/v3", APIS_ROUTE_NOT_FOUND},
    {"/a/b/c/d/e/f/g/h/i/j/k", APIS_ROUTE_NOT_FOUND},
    {GV "/virtualmachinepins", APIS_ROUTE_VMPINS},
    {GV "/virtualmachinepins?fieldSelector=node%3Dnode-3&nodee=x", APIS_ROUTE_VMPINS},
    {GV "/namespaces/default/virtualmachinepins", APIS_ROUTE_VMPINS},
    {GV "/namespaces/default/virtualmachinepins/vm1", APIS_ROUTE_VMPIN},
    {GV "/namespaces/default/virtualmachinepins/vm1/x", APIS_ROUTE_NOT_FOUND},
    {GV "/virtualmachinepins/vm1", APIS_ROUTE_NOT_FOUND},
    {GV "/namespaces/default/virtualmachines", APIS_ROUTE_NOT_FOUND},
};

static void routes_paths(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        apis_route r;
        char msg[256] = "";
        int rc = apis_route_parse(routes[i].target, &r, msg, sizeof(msg));
        if (rc != KUBE_OK || r.kind != routes[i].kind)
            fail_msg("%s: rc %d kind %d (%s), want kind %d", routes[i].target, rc, r.kind, msg,
                     routes[i].kind);
        apis_route_free(&r);
    }
}

static void extracts_namespace_and_name(void **state)
{
    apis_route r;
    char msg[256];
    (void)state;

    assert_int_equal(apis_route_parse(GV "/namespaces/team-a/virtualmachines/db.prod-1/pin", &r,
                                      msg, sizeof(msg)),
                     KUBE_OK);
    assert_string_equal(r.namespace_, "team-a");
    assert_string_equal(r.name, "db.prod-1");
    assert_string_equal(r.path, GV "/namespaces/team-a/virtualmachines/db.prod-1/pin");
    assert_int_equal(r.has_node, 0);
    assert_string_equal(apis_route_subresource(r.kind), "pin");
    assert_true(apis_route_is_resource(r.kind));
    apis_route_free(&r);
}

typedef struct bad_path {
    const char *target;
    const char *why; /* a fragment of the message */
} bad_path;

#define VM GV "/namespaces/default/virtualmachines"
static const bad_path bad_paths[] = {
    {"*", "beginning with '/'"},
    {"http://host/apis", "beginning with '/'"},
    {"/healthz#frag", "fragment"},
    {GV "//namespaces/default/virtualmachines/vm1/pin", "double slash"},
    {"//apis", "double slash"},
    {GV "/", "trailing slash"},
    {"/apis/", "trailing slash"},
    {VM "/vm1/pin/", "trailing slash"},
    {VM "/../vm1/pin", "\"..\""},
    {"/apis/../healthz", "\"..\""},
    {VM "/./pin", "\"..\""},
    {VM "/vm1%2Fx/pin", "percent-encoded"},
    {VM "/vm1%2fx/pin", "percent-encoded"},
    {VM "/%2e%2e/pin", "percent-encoded"},
    {"/apis/subresources.stickyvm.io%2Fv1", "percent-encoded"},
    {VM "/Bad_Name/pin", "invalid name"},
    {VM "/UPPER/pin", "invalid name"},
    {VM "/-vm/pin", "invalid name"},
    {VM "/vm-/pin", "invalid name"},
    {VM "/vm..a/pin", "invalid name"},
    {VM "/vm_1/pin", "invalid name"},
    {GV "/namespaces/Default/virtualmachines/vm1/pin", "invalid namespace"},
    {GV "/namespaces/a.b/virtualmachines/vm1/pin", "invalid namespace"},
    {GV "/namespaces/kube_system/virtualmachines/vm1/pin", "invalid namespace"},
    {VM "/vm1/pin?node=a&node=b", "only once"},
    {VM "/vm1/pin?node=%zz", "invalid escape"},
    {VM "/vm1/pin?x=%4", "invalid escape"},
    /* a decoded NUL must not cut the value short before validation */
    {VM "/vm1/pin?node=node-2%00evil", "control characters"},
    {VM "/vm1/pin?node=node-2%0a", "control characters"},
    {VM "/vm1/pin?node=%7Fnode", "control characters"},
};

static void rejects_malformed_paths(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_paths) / sizeof(bad_paths[0]); i++) {
        apis_route r;
        char msg[512] = "";
        int rc = apis_route_parse(bad_paths[i].target, &r, msg, sizeof(msg));
        if (rc != KUBE_EBADREQUEST || !strstr(msg, bad_paths[i].why))
            fail_msg("%s: rc %d msg \"%s\", want 400 with \"%s\"", bad_paths[i].target, rc, msg,
                     bad_paths[i].why);
        assert_null(r.path);
    }
}

static void rejects_overlong_names(void **state)
{
    char target[1024], name[300], msg[512];
    apis_route r;
    (void)state;

    memset(name, 'a', 254);
    name[254] = '\0';
    snprintf(target, sizeof(target), VM "/%s/pin", name);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_EBADREQUEST);
    /* 253 characters: a subdomain, as apimachinery's IsDNS1123Subdomain
     * has it (no limit per label), whether dotted or not */
    name[253] = '\0';
    snprintf(target, sizeof(target), VM "/%s/pin", name);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_OK);
    apis_route_free(&r);
    memset(name, 'a', 253);
    for (size_t i = 60; i < 253; i += 61)
        name[i] = '.';
    snprintf(target, sizeof(target), VM "/%s/pin", name);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_OK);
    apis_route_free(&r);
    memset(name, 'a', 64);
    name[64] = '\0';
    snprintf(target, sizeof(target), GV "/namespaces/%s/virtualmachines/vm1/pin", name);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_EBADREQUEST);
}

static void reads_the_node_parameter(void **state)
{
    apis_route r;
    char msg[256];
    (void)state;

    assert_int_equal(apis_route_parse(VM "/vm1/pin?timeout=32s&node=node-1", &r, msg, sizeof(msg)),
                     KUBE_OK);
    assert_int_equal(r.has_node, 1);
    assert_string_equal(r.node, "node-1");
    assert_int_equal(r.node_valid, 1);
    apis_route_free(&r);

    assert_int_equal(apis_route_parse(VM "/vm1/pin?node=Node_1", &r, msg, sizeof(msg)), KUBE_OK);
    assert_int_equal(r.has_node, 1);
    assert_int_equal(r.node_valid, 0);
    apis_route_free(&r);

    assert_int_equal(apis_route_parse(VM "/vm1/pin?node=", &r, msg, sizeof(msg)), KUBE_OK);
    assert_int_equal(r.has_node, 1);
    assert_int_equal(r.node_valid, 0);
    apis_route_free(&r);

    assert_int_equal(apis_route_parse(VM "/vm1/pin?no%64e=n%2D1", &r, msg, sizeof(msg)), KUBE_OK);
    assert_string_equal(r.node, "n-1");
    apis_route_free(&r);

    /* unpin refuses it */
    assert_int_equal(apis_route_parse(VM "/vm1/unpin?node=n1", &r, msg, sizeof(msg)),
                     KUBE_EBADREQUEST);
    assert_non_null(strstr(msg, "\"node\""));
}

/* "node%00" is not the parameter node, and the decoded length is what is
 * validated. */
static void validates_decoded_lengths(void **state)
{
    apis_route r;
    char msg[512];
    (void)state;

    assert_int_equal(apis_route_parse(VM "/vm1/pin?node%00=node-1", &r, msg, sizeof(msg)),
                     KUBE_EBADREQUEST);
    assert_int_equal(r.has_node, 0);
    assert_int_equal(apis_route_parse(VM "/vm1/pin?node=node%2D1", &r, msg, sizeof(msg)), KUBE_OK);
    assert_string_equal(r.node, "node-1");
    assert_int_equal(r.node_len, 6);
    assert_int_equal(r.node_valid, 1);
    apis_route_free(&r);
    assert_false(kube_is_dns1123_subdomain_n("node-2\0evil", 11));
    assert_true(kube_is_dns1123_subdomain_n("node-2\0evil", 6));
}

static void maps_verbs(void **state)
{
    static const struct {
        const char *method;
        int resource;
        const char *verb;
    } cases[] = {
        {"GET", 1, "get"},         {"HEAD", 1, "get"},    {"PUT", 1, "update"},
        {"POST", 1, "create"},     {"PATCH", 1, "patch"}, {"DELETE", 1, "delete"},
        {"OPTIONS", 1, "options"}, {"GET", 0, "get"},     {"POST", 0, "post"},
        {"PUT", 0, "put"},         {"BREW", 0, "brew"},
    };
    char verb[16];
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        apis_request_verb(cases[i].method, cases[i].resource, verb, sizeof(verb));
        assert_string_equal(verb, cases[i].verb);
    }
    apis_request_verb("VERYLONGMETHOD", 0, verb, 5);
    assert_string_equal(verb, "very");
}

static void applies_the_body_rule(void **state)
{
    static const char *const ok[] = {"", "{}", " { } ", "{}\n", "\r\n{\t}"};
    static const char *const bad[] = {"null", "{\"a\":1}", "{}{}", "[]", "x", "{", "}", "\"\""};
    (void)state;

    assert_int_equal(apis_body_check(NULL, 0), KUBE_OK);
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        assert_int_equal(apis_body_check(ok[i], strlen(ok[i])), KUBE_OK);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(apis_body_check(bad[i], strlen(bad[i])), KUBE_EBADREQUEST);
    assert_int_equal(apis_body_check("{}\0x", 4), KUBE_EBADREQUEST);
}

static void validates_dns_names(void **state)
{
    (void)state;
    assert_true(kube_is_dns1123_label("a"));
    assert_true(kube_is_dns1123_label("a-1"));
    assert_false(kube_is_dns1123_label(""));
    assert_false(kube_is_dns1123_label("a.b"));
    assert_true(kube_is_dns1123_subdomain_n("node-1.example.com", strlen("node-1.example.com")));
    assert_false(kube_is_dns1123_subdomain_n("node-1..x", strlen("node-1..x")));
    assert_false(kube_is_dns1123_subdomain_n(".x", strlen(".x")));
    assert_false(kube_is_dns1123_subdomain_n("x.", strlen("x.")));
    assert_false(kube_is_dns1123_subdomain_n("Bad_Name", strlen("Bad_Name")));
}

typedef struct param_case {
    const char *target;
    int rc;
    const char *msg; /* a fragment of the 400's message, or NULL */
} param_case;

/* /pin takes node, force, dryRun, timeout; /unpin dryRun and timeout. */
static const param_case params[] = {
    {VM "/vm1/pin?node=n1&dryRun=All&force=true&timeout=32s", KUBE_OK, NULL},
    {VM "/vm1/unpin?dryRun=All&timeout=1m", KUBE_OK, NULL},
    {VM "/vm1/pin?nodee=node-1", KUBE_EBADREQUEST, "\"nodee\""},
    {VM "/vm1/pin?node=n1&x", KUBE_EBADREQUEST, "\"x\""},
    {VM "/vm1/unpin?node=n1", KUBE_EBADREQUEST, "\"node\""},
    {VM "/vm1/unpin?force=yes", KUBE_EBADREQUEST, "force"},
    {VM "/vm1/pin?dryRun=all", KUBE_EBADREQUEST, "supported values: \"All\""},
    {VM "/vm1/pin?dryRun=", KUBE_EBADREQUEST, "dryRun"},
    {VM "/vm1/pin?force=yes", KUBE_EBADREQUEST, "force"},
    {VM "/vm1/pin?timeout=soon", KUBE_EBADREQUEST, "invalid timeout"},
    {VM "/vm1/pin?pretty=true", KUBE_EBADREQUEST, "\"pretty\""},
    {VM "/vm1/pin?dryRun=All%00", KUBE_EBADREQUEST, "invalid value"},
    /* dryRun is a list in kube-apiserver (ValidateDryRun): every value All */
    {VM "/vm1/pin?dryRun=All&dryRun=All", KUBE_OK, NULL},
    {VM "/vm1/pin?dryRun=All&dryRun=x", KUBE_EBADREQUEST, "Unsupported value: \"x\""},
    /* the single-valued ones are refused twice, as node is */
    {VM "/vm1/pin?force=false&force=true", KUBE_EBADREQUEST, "force may be given only once"},
    {VM "/vm1/unpin?timeout=1s&timeout=2s", KUBE_EBADREQUEST, "timeout may be given only once"},
    {VM "/vm1/pin?node=n1&from=n0", KUBE_OK, NULL},
    {VM "/vm1/unpin?from=", KUBE_OK, NULL},
    {VM "/vm1/pin?from=Bad_Node", KUBE_EBADREQUEST, "query parameter from"},
    {VM "/vm1/unpin?from=n0&from=n1", KUBE_EBADREQUEST, "only once"},
};

static void pin_parameters_are_strict(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        apis_route r;
        char msg[256] = "";
        int rc = apis_route_parse(params[i].target, &r, msg, sizeof(msg));
        if (rc != params[i].rc || (params[i].msg && !strstr(msg, params[i].msg)))
            fail_msg("%s: rc %d (%s)", params[i].target, rc, msg);
        apis_route_free(&r);
    }
}

static void reads_dry_run_and_force(void **state)
{
    apis_route r;
    char msg[256];
    (void)state;

    assert_int_equal(apis_route_parse(VM "/vm1/pin?dryRun=All&force=1", &r, msg, sizeof(msg)),
                     KUBE_OK);
    assert_int_equal(r.dry_run, 1);
    assert_int_equal(r.force, 1);
    apis_route_free(&r);
    assert_int_equal(apis_route_parse(VM "/vm1/pin?force=false", &r, msg, sizeof(msg)), KUBE_OK);
    assert_int_equal(r.dry_run, 0);
    assert_int_equal(r.force, 0);
    apis_route_free(&r);
    assert_int_equal(apis_route_parse(VM "/vm1/unpin?force=true", &r, msg, sizeof(msg)), KUBE_OK);
    assert_int_equal(r.force, 1);
    apis_route_free(&r);

    /* a value too long for any parameter but node */
    char target[2048];
    snprintf(target, sizeof(target), VM "/vm1/pin?timeout=%01100d", 1);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_EBADREQUEST);
    assert_non_null(strstr(msg, "invalid value for the query parameter timeout"));
}

static void vmpins_routes_and_verbs(void **state)
{
    apis_route r;
    char msg[256], verb[16], val[64];
    (void)state;

    assert_int_equal(apis_route_parse(GV "/virtualmachinepins?watch=true&fieldSelector=node%3Dn-3",
                                      &r, msg, sizeof(msg)),
                     KUBE_OK);
    assert_string_equal(r.namespace_, "");
    assert_string_equal(apis_route_resource(r.kind), "virtualmachinepins");
    assert_true(apis_route_is_resource(r.kind));
    assert_false(apis_route_is_pin(r.kind));
    apis_route_verb(&r, "GET", verb, sizeof(verb));
    assert_string_equal(verb, "watch");
    assert_int_equal(kube_query_get(r.query, "fieldSelector", val, sizeof(val)), KUBE_OK);
    assert_string_equal(val, "node=n-3");
    assert_int_equal(kube_query_get(r.query, "labelSelector", val, sizeof(val)), KUBE_ENOTFOUND);
    apis_route_free(&r);

    assert_int_equal(
        apis_route_parse(GV "/namespaces/ns1/virtualmachinepins?watch=false", &r, msg, sizeof(msg)),
        KUBE_OK);
    apis_route_verb(&r, "GET", verb, sizeof(verb));
    assert_string_equal(verb, "list");
    apis_route_free(&r);

    assert_int_equal(
        apis_route_parse(GV "/namespaces/ns1/virtualmachinepins/vm1", &r, msg, sizeof(msg)),
        KUBE_OK);
    assert_string_equal(r.name, "vm1");
    apis_route_verb(&r, "GET", verb, sizeof(verb));
    assert_string_equal(verb, "get");
    apis_route_free(&r);

    /* a list for one name is authorized for that name, as kube-apiserver does */
    assert_int_equal(apis_route_parse(GV "/namespaces/ns1/virtualmachinepins?fieldSelector="
                                         "node%3Dn-1,metadata.name%3D%3Dvm-7",
                                      &r, msg, sizeof(msg)),
                     KUBE_OK);
    assert_string_equal(r.name, "vm-7");
    apis_route_free(&r);
    assert_int_equal(apis_route_parse(GV "/virtualmachinepins?fieldSelector=metadata.name!%3Dvm-7",
                                      &r, msg, sizeof(msg)),
                     KUBE_OK);
    assert_string_equal(r.name, "");
    apis_route_free(&r);

    assert_int_equal(
        apis_route_parse(GV "/namespaces/Bad/virtualmachinepins", &r, msg, sizeof(msg)),
        KUBE_EBADREQUEST);
}

int test_group_apiserver_request(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(routes_paths),
        cmocka_unit_test(extracts_namespace_and_name),
        cmocka_unit_test(rejects_malformed_paths),
        cmocka_unit_test(rejects_overlong_names),
        cmocka_unit_test(reads_the_node_parameter),
        cmocka_unit_test(validates_decoded_lengths),
        cmocka_unit_test(maps_verbs),
        cmocka_unit_test(applies_the_body_rule),
        cmocka_unit_test(validates_dns_names),
        cmocka_unit_test(pin_parameters_are_strict),
        cmocka_unit_test(reads_dry_run_and_force),
        cmocka_unit_test(vmpins_routes_and_verbs),
    };
    return cmocka_run_group_tests_name("apiserver_request", tests, NULL, NULL);
}
