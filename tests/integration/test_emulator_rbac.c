/*
 * tests/integration/test_emulator_rbac.c - the API emulator's RBAC mode
 * (--authorization-mode=RBAC) and impersonation, against what
 * kube-apiserver v1.23 does: ClusterRoles and Roles granted through
 * ClusterRoleBindings and RoleBindings (ServiceAccount, User and Group
 * subjects), resourceNames, subresources, non-resource URLs, the
 * "impersonate" verb, and system:masters. Every denial is checked as the
 * whole 403 Status kube-apiserver answers (message, reason, details, code).
 *
 * One emulator serves the group; each test uses its own users, roles and
 * objects, so the tests do not depend on each other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kube/util/errors.h"

#define RBAC "/apis/rbac.authorization.k8s.io/v1"
#define PODS "/api/v1/namespaces/default/pods"

static harness *H;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* A request as `as` (NULL: admin) with extra headers (NULL-terminated or
 * NULL). Returns the HTTP code; *json (may be NULL) gets the parsed body,
 * which the caller frees. */
static long call(const harness_identity *as, const char *const *headers, const char *method,
                 const char *path, const char *body, cJSON **json)
{
    harness_response r;
    long code;

    assert_int_equal(harness_request_headers(H, as, method, path, headers, NULL, body, &r),
                     KUBE_OK);
    code = r.status;
    if (json)
        *json = cJSON_Parse(r.body);
    harness_response_free(&r);
    return code;
}

static void expect_code(const harness_identity *as, const char *const *headers, const char *method,
                        const char *path, const char *body, long want)
{
    long got = call(as, headers, method, path, body, NULL);

    if (got != want)
        fail_msg("%s %s as %s: HTTP %ld, want %ld", method, path, as ? as->user : "admin", got,
                 want);
}

static const char *str(const cJSON *o, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return v ? v : "";
}

/* Asserts the 403 kube-apiserver answers (responsewriters.Forbidden):
 * Status Failure, reason Forbidden, code 403, the message, and details
 * {name, group, kind} with empty members omitted. */
static void expect_forbidden(const harness_identity *as, const char *const *headers,
                             const char *method, const char *path, const char *message,
                             const char *name, const char *group, const char *kind)
{
    cJSON *st = NULL, *details;
    long code = call(as, headers, method, path, NULL, &st);

    if (code != 403)
        fail_msg("%s %s as %s: HTTP %ld, want 403", method, path, as ? as->user : "admin", code);
    assert_non_null(st);
    assert_string_equal(str(st, "kind"), "Status");
    assert_string_equal(str(st, "apiVersion"), "v1");
    assert_string_equal(str(st, "status"), "Failure");
    assert_string_equal(str(st, "message"), message);
    assert_string_equal(str(st, "reason"), "Forbidden");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(st, "code")->valueint, 403);
    details = cJSON_GetObjectItemCaseSensitive(st, "details");
    assert_true(cJSON_IsObject(details));
    assert_string_equal(str(details, "name"), name);
    assert_string_equal(str(details, "group"), group);
    assert_string_equal(str(details, "kind"), kind);
    assert_int_equal(cJSON_GetArraySize(details), !!*name + !!*group + !!*kind);
    cJSON_Delete(st);
}

static void create(const char *collection, const char *json)
{
    cJSON *out = NULL;
    int rc = harness_create(H, collection, json, &out);

    if (rc != KUBE_OK)
        fail_msg("create in %s failed (%s): %s", collection, kube_strerror(rc), json);
    cJSON_Delete(out);
}

static void cluster_role(const char *name, const char *rules)
{
    char json[2048];

    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},\"rules\":%s}", name, rules);
    create(RBAC "/clusterroles", json);
}

static void role(const char *ns, const char *name, const char *rules)
{
    char json[2048], path[256];

    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},\"rules\":%s}", name, rules);
    snprintf(path, sizeof(path), RBAC "/namespaces/%s/roles", ns);
    create(path, json);
}

/* A ClusterRoleBinding (ns NULL) or RoleBinding in ns of role_kind/role to
 * one subject, e.g. {"kind":"User","name":"alice"}. */
static void bind(const char *ns, const char *name, const char *role_kind, const char *role_name,
                 const char *subject)
{
    char json[2048], path[256];

    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\"},\"subjects\":[%s],\"roleRef\":{\"apiGroup\":"
             "\"rbac.authorization.k8s.io\",\"kind\":\"%s\",\"name\":\"%s\"}}",
             name, subject, role_kind, role_name);
    if (ns)
        snprintf(path, sizeof(path), RBAC "/namespaces/%s/rolebindings", ns);
    else
        snprintf(path, sizeof(path), RBAC "/clusterrolebindings");
    create(path, json);
}

static void pod(const char *name)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
             name);
    create(PODS, json);
}

static void configmap(const char *ns, const char *name)
{
    char json[512], path[256];

    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},\"data\":{\"k\":\"v\"}}", name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    create(path, json);
}

static void make_namespace(const char *name)
{
    char json[256];

    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"}}", name);
    create("/api/v1/namespaces", json);
}

static const harness_identity *cert_user(const char *user, const char *const *groups, size_t n)
{
    const harness_identity *id = NULL;

    assert_int_equal(harness_add_cert_user(H, user, groups, n, &id), KUBE_OK);
    return id;
}

static const harness_identity *service_account(const char *ns, const char *name)
{
    const harness_identity *id = NULL;
    char user[256], ns_group[256];
    const char *groups[] = {"system:serviceaccounts", ns_group};

    snprintf(user, sizeof(user), "system:serviceaccount:%s:%s", ns, name);
    snprintf(ns_group, sizeof(ns_group), "system:serviceaccounts:%s", ns);
    assert_int_equal(harness_add_token_user(H, user, groups, 2, &id), KUBE_OK);
    return id;
}

/* allowed of a SubjectAccessReview posted as admin. */
static int sar_allowed(const char *spec)
{
    char body[2048];
    cJSON *out = NULL;
    int allowed;

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\","
             "\"spec\":%s}",
             spec);
    assert_int_equal(
        call(NULL, NULL, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body, &out),
        201);
    allowed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(out, "status"), "allowed"));
    cJSON_Delete(out);
    return allowed;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void cluster_role_binding_grants_exactly_the_role(void **state)
{
    const harness_identity *sa = service_account("default", "reader");

    (void)state;
    pod("crb-pod");
    cluster_role("crb-pod-reader", "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
                                   "\"verbs\":[\"get\",\"list\",\"watch\"]}]");
    /* nothing before the binding */
    expect_forbidden(sa, NULL, "GET", PODS "/crb-pod",
                     "pods \"crb-pod\" is forbidden: User \"system:serviceaccount:default:reader\" "
                     "cannot get resource \"pods\" in API group \"\" in the namespace \"default\"",
                     "crb-pod", "", "pods");
    bind(NULL, "crb-pod-reader", "ClusterRole", "crb-pod-reader",
         "{\"kind\":\"ServiceAccount\",\"name\":\"reader\",\"namespace\":\"default\"}");

    expect_code(sa, NULL, "GET", PODS "/crb-pod", NULL, 200);
    expect_code(sa, NULL, "GET", PODS, NULL, 200);
    expect_code(sa, NULL, "GET", "/api/v1/pods", NULL, 200);
    expect_code(sa, NULL, "GET", PODS "?watch=1&timeoutSeconds=1", NULL, 200);
    /* another verb, another resource */
    expect_forbidden(
        sa, NULL, "DELETE", PODS "/crb-pod",
        "pods \"crb-pod\" is forbidden: User \"system:serviceaccount:default:reader\" "
        "cannot delete resource \"pods\" in API group \"\" in the namespace \"default\"",
        "crb-pod", "", "pods");
    expect_forbidden(sa, NULL, "GET", "/api/v1/nodes",
                     "nodes is forbidden: User \"system:serviceaccount:default:reader\" cannot "
                     "list resource \"nodes\" in API group \"\" at the cluster scope",
                     "", "", "nodes");
    expect_forbidden(sa, NULL, "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                     "leases.coordination.k8s.io is forbidden: User "
                     "\"system:serviceaccount:default:reader\" cannot list resource \"leases\" in "
                     "API group \"coordination.k8s.io\" in the namespace \"default\"",
                     "", "coordination.k8s.io", "leases");
    /* the same ServiceAccount name in another namespace is someone else */
    expect_code(service_account("kube-system", "reader"), NULL, "GET", PODS, NULL, 403);
}

static void group_subjects_and_watch_denials(void **state)
{
    static const char *const team[] = {"team-watchers"};
    const harness_identity *member = cert_user("wanda", team, 1);
    const harness_identity *outsider = cert_user("oscar", NULL, 0);

    (void)state;
    cluster_role("group-watcher", "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
                                  "\"verbs\":[\"watch\"]}]");
    bind(NULL, "group-watcher", "ClusterRole", "group-watcher",
         "{\"kind\":\"Group\",\"name\":\"team-watchers\"}");
    expect_code(member, NULL, "GET", "/api/v1/configmaps?watch=1&timeoutSeconds=1", NULL, 200);
    expect_forbidden(member, NULL, "GET", "/api/v1/namespaces/default/configmaps",
                     "configmaps is forbidden: User \"wanda\" cannot list resource \"configmaps\" "
                     "in API group \"\" in the namespace \"default\"",
                     "", "", "configmaps");
    expect_forbidden(outsider, NULL, "GET", "/api/v1/configmaps?watch=1&timeoutSeconds=1",
                     "configmaps is forbidden: User \"oscar\" cannot watch resource \"configmaps\" "
                     "in API group \"\" at the cluster scope",
                     "", "", "configmaps");
}

static void role_binding_grants_only_in_its_namespace(void **state)
{
    const harness_identity *bob = cert_user("bob", NULL, 0);

    (void)state;
    make_namespace("team-rb");
    configmap("team-rb", "settings");
    configmap("default", "settings-rb");
    role("team-rb", "cm-reader",
         "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"get\",\"list\"]}]");
    bind("team-rb", "bob-cm-reader", "Role", "cm-reader", "{\"kind\":\"User\",\"name\":\"bob\"}");
    /* a RoleBinding to a ClusterRole grants it in the binding's namespace only */
    cluster_role("rb-secret-lister", "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],"
                                     "\"verbs\":[\"list\"]}]");
    bind("team-rb", "bob-secrets", "ClusterRole", "rb-secret-lister",
         "{\"kind\":\"User\",\"name\":\"bob\"}");

    expect_code(bob, NULL, "GET", "/api/v1/namespaces/team-rb/configmaps/settings", NULL, 200);
    expect_code(bob, NULL, "GET", "/api/v1/namespaces/team-rb/configmaps", NULL, 200);
    expect_code(bob, NULL, "GET", "/api/v1/namespaces/team-rb/secrets", NULL, 200);
    expect_forbidden(bob, NULL, "GET", "/api/v1/namespaces/default/configmaps/settings-rb",
                     "configmaps \"settings-rb\" is forbidden: User \"bob\" cannot get resource "
                     "\"configmaps\" in API group \"\" in the namespace \"default\"",
                     "settings-rb", "", "configmaps");
    expect_forbidden(bob, NULL, "GET", "/api/v1/configmaps",
                     "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in "
                     "API group \"\" at the cluster scope",
                     "", "", "configmaps");
    expect_forbidden(bob, NULL, "GET", "/api/v1/namespaces/default/secrets",
                     "secrets is forbidden: User \"bob\" cannot list resource \"secrets\" in API "
                     "group \"\" in the namespace \"default\"",
                     "", "", "secrets");
    /* a ClusterRoleBinding cannot refer to a Role */
    bind(NULL, "bob-role-from-crb", "Role", "cm-reader", "{\"kind\":\"User\",\"name\":\"bob\"}");
    expect_code(bob, NULL, "GET", "/api/v1/configmaps", NULL, 403);
    /* a ServiceAccount subject without namespace is the binding's */
    bind("team-rb", "sa-cm-reader", "Role", "cm-reader",
         "{\"kind\":\"ServiceAccount\",\"name\":\"builder\"}");
    expect_code(service_account("team-rb", "builder"), NULL, "GET",
                "/api/v1/namespaces/team-rb/configmaps", NULL, 200);
}

static void resource_names_limit_to_those_names(void **state)
{
    const harness_identity *carol = cert_user("carol", NULL, 0);

    (void)state;
    configmap("default", "rn-allowed");
    configmap("default", "rn-other");
    create("/api/v1/namespaces/default/secrets", "{\"metadata\":{\"name\":\"rn-secret\"}}");
    cluster_role("rn-reader",
                 "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
                 "\"resourceNames\":[\"rn-allowed\"],\"verbs\":[\"get\",\"list\",\"watch\"]},"
                 "{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"resourceNames\":[\"*\"],"
                 "\"verbs\":[\"get\"]}]");
    bind(NULL, "rn-reader", "ClusterRole", "rn-reader", "{\"kind\":\"User\",\"name\":\"carol\"}");

    expect_code(carol, NULL, "GET", "/api/v1/namespaces/default/configmaps/rn-allowed", NULL, 200);
    expect_forbidden(carol, NULL, "GET", "/api/v1/namespaces/default/configmaps/rn-other",
                     "configmaps \"rn-other\" is forbidden: User \"carol\" cannot get resource "
                     "\"configmaps\" in API group \"\" in the namespace \"default\"",
                     "rn-other", "", "configmaps");
    expect_code(carol, NULL, "GET", "/api/v1/namespaces/default/configmaps", NULL, 403);
    /* a list or watch of one name is checked with that name (RequestInfo) */
    expect_code(carol, NULL, "GET",
                "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Drn-allowed",
                NULL, 200);
    expect_code(carol, NULL, "GET",
                "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Drn-other",
                NULL, 403);
    /* resourceNames has no wildcard: "*" is only the name "*" */
    expect_forbidden(carol, NULL, "GET", "/api/v1/namespaces/default/secrets/rn-secret",
                     "secrets \"rn-secret\" is forbidden: User \"carol\" cannot get resource "
                     "\"secrets\" in API group \"\" in the namespace \"default\"",
                     "rn-secret", "", "secrets");
}

static void subresources_are_distinct_from_their_resource(void **state)
{
    const harness_identity *binder = cert_user("dave", NULL, 0);
    const harness_identity *pod_admin = cert_user("erin", NULL, 0);
    static const char binding[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
        "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-0\"}}";
    char body[512];

    (void)state;
    pod("sub-a");
    pod("sub-b");
    cluster_role("sub-binder", "[{\"apiGroups\":[\"\"],\"resources\":[\"pods/binding\"],"
                               "\"verbs\":[\"create\"]}]");
    bind(NULL, "sub-binder", "ClusterRole", "sub-binder", "{\"kind\":\"User\",\"name\":\"dave\"}");
    cluster_role("sub-pod-admin",
                 "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"*\"]},"
                 "{\"apiGroups\":[\"\"],\"resources\":[\"*/status\"],\"verbs\":[\"get\"]}]");
    bind(NULL, "sub-pod-admin", "ClusterRole", "sub-pod-admin",
         "{\"kind\":\"User\",\"name\":\"erin\"}");

    snprintf(body, sizeof(body), binding, "sub-a");
    expect_code(binder, NULL, "POST", PODS "/sub-a/binding", body, 201);
    expect_forbidden(binder, NULL, "GET", PODS "/sub-a",
                     "pods \"sub-a\" is forbidden: User \"dave\" cannot get resource \"pods\" in "
                     "API group \"\" in the namespace \"default\"",
                     "sub-a", "", "pods");
    snprintf(body, sizeof(body), binding, "sub-b");
    {
        cJSON *st = NULL;
        assert_int_equal(call(pod_admin, NULL, "POST", PODS "/sub-b/binding", body, &st), 403);
        assert_string_equal(str(st, "message"),
                            "pods \"sub-b\" is forbidden: User \"erin\" cannot create resource "
                            "\"pods/binding\" in API group \"\" in the namespace \"default\"");
        cJSON_Delete(st);
    }
    expect_code(pod_admin, NULL, "GET", PODS "/sub-b", NULL, 200);
    /* "*" + "/status" matches the status subresource of any resource */
    expect_code(pod_admin, NULL, "GET", PODS "/sub-b/status", NULL, 200);
    expect_code(pod_admin, NULL, "GET", "/api/v1/nodes/node-0/status", NULL, 200);
    expect_forbidden(
        pod_admin, NULL, "GET", "/api/v1/nodes/node-0",
        "nodes \"node-0\" is forbidden: User \"erin\" cannot get resource \"nodes\" in "
        "API group \"\" at the cluster scope",
        "node-0", "", "nodes");
}

static void non_resource_urls(void **state)
{
    const harness_identity *frank = cert_user("frank", NULL, 0);
    const harness_identity *gina = cert_user("gina", NULL, 0);

    (void)state;
    cluster_role("nr-metrics", "[{\"nonResourceURLs\":[\"/metrics\",\"/logs/*\"],"
                               "\"verbs\":[\"get\"]}]");
    bind(NULL, "nr-metrics", "ClusterRole", "nr-metrics", "{\"kind\":\"User\",\"name\":\"frank\"}");
    /* a RoleBinding never grants non-resource URLs */
    bind("default", "nr-metrics-gina", "ClusterRole", "nr-metrics",
         "{\"kind\":\"User\",\"name\":\"gina\"}");

    /* allowed: the emulator has no such page, so 404 instead of 403 */
    expect_code(frank, NULL, "GET", "/metrics", NULL, 404);
    expect_code(frank, NULL, "GET", "/logs/kube-apiserver.log", NULL, 404);
    expect_forbidden(frank, NULL, "GET", "/logs",
                     "forbidden: User \"frank\" cannot get path \"/logs\"", "", "", "");
    expect_forbidden(frank, NULL, "POST", "/metrics",
                     "forbidden: User \"frank\" cannot post path \"/metrics\"", "", "", "");
    expect_forbidden(gina, NULL, "GET", "/metrics",
                     "forbidden: User \"gina\" cannot get path \"/metrics\"", "", "", "");
    /* discovery and health stay open to every authenticated user */
    expect_code(gina, NULL, "GET", "/apis", NULL, 200);
    expect_code(gina, NULL, "GET", "/version", NULL, 200);
    /* SubjectAccessReviews see the same RBAC */
    assert_true(sar_allowed("{\"user\":\"frank\",\"groups\":[\"system:authenticated\"],"
                            "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"}}"));
    assert_false(
        sar_allowed("{\"user\":\"gina\",\"groups\":[\"system:authenticated\"],"
                    "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"}}"));
}

static void allowed_impersonation_acts_as_the_user(void **state)
{
    const harness_identity *grace = cert_user("grace", NULL, 0);
    static const char *const as_alice[] = {"Impersonate-User: alice", NULL};
    static const char *const as_sa[] = {"Impersonate-User: system:serviceaccount:imp-ns:robot",
                                        NULL};
    static const char *const as_sa_in_group[] = {
        "Impersonate-User: system:serviceaccount:imp-ns:robot", "Impersonate-Group: imp-group",
        NULL};
    static const char *const as_alice_extra[] = {"Impersonate-User: alice",
                                                 "Impersonate-Extra-SCOPES: read", NULL};

    (void)state;
    pod("imp-pod");
    make_namespace("imp-ns");
    cluster_role("imp-pod-getter",
                 "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]");
    bind(NULL, "imp-alice", "ClusterRole", "imp-pod-getter",
         "{\"kind\":\"User\",\"name\":\"alice\"}");
    /* a ServiceAccount's groups come with it */
    bind(NULL, "imp-sa-group", "ClusterRole", "imp-pod-getter",
         "{\"kind\":\"Group\",\"name\":\"system:serviceaccounts:imp-ns\"}");
    cluster_role("imp-impersonator",
                 "[{\"apiGroups\":[\"\"],\"resources\":[\"users\"],\"verbs\":[\"impersonate\"],"
                 "\"resourceNames\":[\"alice\"]},"
                 "{\"apiGroups\":[\"\"],\"resources\":[\"serviceaccounts\"],"
                 "\"verbs\":[\"impersonate\"]},"
                 "{\"apiGroups\":[\"\"],\"resources\":[\"groups\"],\"verbs\":[\"impersonate\"],"
                 "\"resourceNames\":[\"imp-group\"]},"
                 "{\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"userextras/scopes\"],"
                 "\"verbs\":[\"impersonate\"]}]");
    bind(NULL, "imp-grace", "ClusterRole", "imp-impersonator",
         "{\"kind\":\"User\",\"name\":\"grace\"}");

    expect_code(grace, NULL, "GET", PODS "/imp-pod", NULL, 403);
    expect_code(grace, as_alice, "GET", PODS "/imp-pod", NULL, 200);
    /* the denial names alice: the request runs as her */
    expect_forbidden(grace, as_alice, "GET", "/api/v1/nodes",
                     "nodes is forbidden: User \"alice\" cannot list resource \"nodes\" in API "
                     "group \"\" at the cluster scope",
                     "", "", "nodes");
    expect_code(grace, as_sa, "GET", PODS "/imp-pod", NULL, 200);
    expect_forbidden(grace, as_sa, "DELETE", PODS "/imp-pod",
                     "pods \"imp-pod\" is forbidden: User \"system:serviceaccount:imp-ns:robot\" "
                     "cannot delete resource \"pods\" in API group \"\" in the namespace "
                     "\"default\"",
                     "imp-pod", "", "pods");
    /* with Impersonate-Group the groups are those asked for, not the
     * ServiceAccount's */
    expect_code(grace, as_sa_in_group, "GET", PODS "/imp-pod", NULL, 403);
    /* extra keys are lower-cased: this is userextras/scopes */
    expect_code(grace, as_alice_extra, "GET", PODS "/imp-pod", NULL, 200);
}

static void refused_impersonation_is_403(void **state)
{
    const harness_identity *henry = cert_user("henry", NULL, 0);
    harness_identity anonymous = {"nobody", NULL, NULL, "not-a-token", NULL};
    static const char *const as_bob[] = {"Impersonate-User: bob", NULL};
    static const char *const as_alice_masters[] = {"Impersonate-User: alice",
                                                   "Impersonate-Group: system:masters", NULL};
    static const char *const as_sa[] = {"Impersonate-User: system:serviceaccount:kube-system:x",
                                        NULL};
    static const char *const as_alice_extra[] = {"Impersonate-User: alice",
                                                 "Impersonate-Extra-Scopes: read", NULL};
    static const char *const as_alice_uid[] = {"Impersonate-User: alice", "Impersonate-Uid: 1234",
                                               NULL};
    static const char *const group_only[] = {"Impersonate-Group: system:masters", NULL};

    (void)state;
    cluster_role("ref-impersonator", "[{\"apiGroups\":[\"\"],\"resources\":[\"users\"],"
                                     "\"verbs\":[\"impersonate\"],\"resourceNames\":[\"alice\"]}]");
    bind(NULL, "ref-henry", "ClusterRole", "ref-impersonator",
         "{\"kind\":\"User\",\"name\":\"henry\"}");

    expect_forbidden(henry, as_bob, "GET", PODS,
                     "users \"bob\" is forbidden: User \"henry\" cannot impersonate resource "
                     "\"users\" in API group \"\" at the cluster scope",
                     "bob", "", "users");
    expect_forbidden(henry, as_alice_masters, "GET", PODS,
                     "groups \"system:masters\" is forbidden: User \"henry\" cannot impersonate "
                     "resource \"groups\" in API group \"\" at the cluster scope",
                     "system:masters", "", "groups");
    expect_forbidden(henry, as_sa, "GET", PODS,
                     "serviceaccounts \"x\" is forbidden: User \"henry\" cannot impersonate "
                     "resource \"serviceaccounts\" in API group \"\" in the namespace "
                     "\"kube-system\"",
                     "x", "", "serviceaccounts");
    expect_forbidden(henry, as_alice_extra, "GET", PODS,
                     "userextras.authentication.k8s.io \"read\" is forbidden: User \"henry\" "
                     "cannot impersonate resource \"userextras/scopes\" in API group "
                     "\"authentication.k8s.io\" at the cluster scope",
                     "read", "authentication.k8s.io", "userextras");
    expect_forbidden(henry, as_alice_uid, "GET", PODS,
                     "uids.authentication.k8s.io \"1234\" is forbidden: User \"henry\" cannot "
                     "impersonate resource \"uids\" in API group \"authentication.k8s.io\" at the "
                     "cluster scope",
                     "1234", "authentication.k8s.io", "uids");
    /* the refusal does not stick to the connection's next request */
    expect_code(henry, NULL, "GET", "/apis", NULL, 200);
    /* an unauthenticated requester stays 401 */
    expect_code(&anonymous, as_bob, "GET", PODS, NULL, 401);
    /* groups without a user are malformed */
    expect_code(henry, group_only, "GET", PODS, NULL, 401);
}

static void system_masters_may_do_everything(void **state)
{
    static const char *const masters[] = {"system:masters"};
    const harness_identity *root = cert_user("root-of-all", masters, 1);
    static const char *const as_nobody[] = {"Impersonate-User: nobody-at-all", NULL};

    (void)state;
    expect_code(root, NULL, "GET", "/api/v1/nodes", NULL, 200);
    expect_code(root, NULL, "GET", RBAC "/clusterroles", NULL, 200);
    expect_code(root, NULL, "POST", "/api/v1/namespaces/default/configmaps",
                "{\"metadata\":{\"name\":\"masters-cm\"}}", 201);
    expect_code(root, NULL, "DELETE", "/api/v1/namespaces/default/configmaps/masters-cm", NULL,
                200);
    expect_code(root, NULL, "GET", "/no-such-page", NULL, 404);
    /* impersonating anyone is allowed, and then the request is theirs */
    expect_forbidden(root, as_nobody, "GET", "/api/v1/nodes",
                     "nodes is forbidden: User \"nobody-at-all\" cannot list resource \"nodes\" in "
                     "API group \"\" at the cluster scope",
                     "", "", "nodes");
    assert_true(
        sar_allowed("{\"user\":\"someone\",\"groups\":[\"system:masters\"],"
                    "\"resourceAttributes\":{\"verb\":\"delete\",\"resource\":\"nodes\"}}"));
    assert_false(
        sar_allowed("{\"user\":\"someone\",\"groups\":[\"system:authenticated\"],"
                    "\"resourceAttributes\":{\"verb\":\"delete\",\"resource\":\"nodes\"}}"));
}

/* ------------------------------------------------------------------ */
/* Group                                                               */
/* ------------------------------------------------------------------ */

static int setup(void **state)
{
    static const char *const args[] = {"--authorization-mode=RBAC", NULL};
    harness_opts o = HARNESS_OPTS_INIT;

    (void)state;
    o.nodes = 1;
    o.extra_args = args;
    return harness_start(&o, &H) == KUBE_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    harness_stop(H);
    H = NULL;
    return 0;
}

int test_group_emulator_rbac(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cluster_role_binding_grants_exactly_the_role),
        cmocka_unit_test(group_subjects_and_watch_denials),
        cmocka_unit_test(role_binding_grants_only_in_its_namespace),
        cmocka_unit_test(resource_names_limit_to_those_names),
        cmocka_unit_test(subresources_are_distinct_from_their_resource),
        cmocka_unit_test(non_resource_urls),
        cmocka_unit_test(allowed_impersonation_acts_as_the_user),
        cmocka_unit_test(refused_impersonation_is_403),
        cmocka_unit_test(system_masters_may_do_everything),
    };
    return cmocka_run_group_tests_name("emulator_rbac", tests, setup, teardown);
}
