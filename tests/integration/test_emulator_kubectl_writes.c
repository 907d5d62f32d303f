/*
 * tests/integration/test_emulator_kubectl_writes.c - group
 * emulator_kubectl_writes: the writes kubectl makes in kubectl's own wire
 * formats. Protobuf bodies (Content-Type application/vnd.kubernetes.protobuf):
 * a DeleteOptions, a SelfSubjectAccessReview and a Secret captured from
 * kubectl v1.32.4 (-v=9 against the emulator: drain --disable-eviction
 * --grace-period=7, auth can-i create pods -n default, create secret
 * generic s1 --from-literal=a=b), and a policy/v1
 * Eviction encoded as client-go's protobuf serializer encodes it (kubectl
 * 1.32 itself sends Evictions as JSON); pods/eviction honouring a
 * PodDisruptionBudget (429 with kube-apiserver's Status, then the decrement
 * and disruptedPods), server-side apply refused with a 415 that does not
 * list application/apply-patch+yaml, SelfSubjectAccessReview under the
 * default policy and under --authorization-mode=RBAC (and the
 * SelfSubjectRulesReview of can-i --list); then the real kubectl drain,
 * auth can-i (--list), create (namespace, configmap, rolebinding, pdb) and
 * apply --server-side when /usr/bin/kubectl exists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "test_emulator_kubectl.h"

#define NS "/api/v1/namespaces/default"
#define PDBS "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
#define SSAR "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

/* kubectl drain node --disable-eviction --grace-period=7: DELETE body. */
static const char captured_delete_options[] = "k8s\x00\x0a\x13\x0a\x02v1\x12\x0d"
                                              "DeleteOptions\x12\x02\x08\x07\x1a\x00\x22\x00";
/* kubectl auth can-i create pods -n default: POST selfsubjectaccessreviews. */
static const char captured_ssar[] =
    "k8s\x00\x0a\x32\x0a\x17"
    "authorization.k8s.io/v1\x12\x17"
    "SelfSubjectAccessReview\x12\x3f\x0a\x10\x0a\x00\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00\x38"
    "\x00\x42\x00\x12\x21\x0a\x1f\x0a\x07"
    "default\x12\x06"
    "create\x1a\x00\x22\x00\x2a\x04"
    "pods\x32\x00\x3a\x00\x1a\x08\x08\x00\x12\x00\x1a\x00\x20\x00\x1a\x00\x22\x00";
/* kubectl create secret generic s1 --from-literal=a=b: POST secrets. */
static const char captured_secret[] =
    "k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret\x12\x1e\x0a\x12\x0a\x02s1\x12\x00\x1a\x00"
    "\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x12\x06\x0a\x01"
    "a\x12\x01"
    "b\x1a\x00\x1a\x00\x22\x00";
/* policy/v1 Eviction of default/web-1 with empty DeleteOptions, as
 * client-go's protobuf serializer writes it (gogo: every non-pointer
 * field, empty strings included). */
static const char eviction_web1[] =
    "k8s\x00\x0a\x15\x0a\x09policy/v1\x12\x08"
    "Eviction\x12\x20\x0a\x1c\x0a\x05web-1\x12\x00\x1a\x07"
    "default\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x12\x00\x1a\x00\x22\x00";

static int start(void **state, const char *const *args)
{
    harness_opts o = HARNESS_OPTS_INIT;
    harness *h;

    o.nodes = 2;
    o.extra_args = args;
    assert_int_equal(harness_start(&o, &h), KUBE_OK);
    *state = h;
    return 0;
}

static int setup(void **state)
{
    return start(state, NULL);
}

static int setup_rbac(void **state)
{
    static const char *const args[] = {"--authorization-mode=RBAC", NULL};

    return start(state, args);
}

static int teardown(void **state)
{
    harness_stop(*state);
    return 0;
}

static const char *str(const cJSON *j, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(j, a);

    return cJSON_GetStringValue(b ? cJSON_GetObjectItem(v, b) : v);
}

/* A pod NAME labelled app=web, bound to node, in phase (NULL: Pending). */
static void make_pod(harness *h, const char *name, const char *node, const char *phase)
{
    char body[512], path[256];
    long status;
    cJSON *j;

    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"web\"}},\"spec\":{"
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
             name);
    ek_create(h, NS "/pods", body);
    snprintf(path, sizeof(path), NS "/pods/%s/binding", name);
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},\"target\":{\"name\":\"%s\"}}",
             name, node);
    j = ek_call(h, NULL, "POST", path, NULL, NULL, body, strlen(body), &status);
    assert_int_equal(status, 201);
    cJSON_Delete(j);
    if (phase) {
        snprintf(path, sizeof(path), NS "/pods/%s", name);
        snprintf(body, sizeof(body), "{\"phase\":\"%s\"}", phase);
        ek_set_status(h, path, body);
    }
}

static long get_status(harness *h, const char *path)
{
    long status;
    cJSON *j = ek_call(h, NULL, "GET", path, NULL, NULL, NULL, 0, &status);

    cJSON_Delete(j);
    return status;
}

/* ------------------------------------------------------------------ */
/* Protobuf DeleteOptions                                              */
/* ------------------------------------------------------------------ */

static void protobuf_delete_options(void **state)
{
    harness *h = *state;
    long status;
    cJSON *j;

    make_pod(h, "doomed", "node-0", "Running");
    j = ek_call(h, NULL, "DELETE", NS "/pods/doomed", EK_ACCEPT_PROTOBUF, EK_PROTOBUF,
                captured_delete_options, sizeof(captured_delete_options) - 1, &status);
    assert_int_equal(status, 200);
    assert_string_equal(str(j, "kind", NULL), "Pod");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"),
                                                              "deletionGracePeriodSeconds")),
                     7);
    cJSON_Delete(j);
    assert_int_equal(get_status(h, NS "/pods/doomed"), 404);
    /* not an envelope */
    make_pod(h, "kept", "node-0", NULL);
    j = ek_call(h, NULL, "DELETE", NS "/pods/kept", NULL, EK_PROTOBUF, "\x08\x07", 2, &status);
    assert_int_equal(status, 400);
    assert_non_null(strstr(str(j, "message", NULL), "expected prefix [107 56 115 0]"));
    cJSON_Delete(j);
    /* a protobuf kind the emulator does not decode */
    j = ek_call(h, NULL, "POST", NS "/pods", NULL, EK_PROTOBUF,
                "k8s\x00\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x00", 17, &status);
    assert_int_equal(status, 415);
    assert_string_equal(str(j, "reason", NULL), "UnsupportedMediaType");
    cJSON_Delete(j);
    assert_int_equal(get_status(h, NS "/pods/kept"), 200);
}

/* kubectl create's typed objects arrive as protobuf too. */
static void protobuf_created_object(void **state)
{
    harness *h = *state;
    long status;
    cJSON *j =
        ek_call(h, NULL, "POST", NS "/secrets?fieldManager=kubectl-create", EK_ACCEPT_PROTOBUF,
                EK_PROTOBUF, captured_secret, sizeof(captured_secret) - 1, &status);

    assert_int_equal(status, 201);
    assert_string_equal(str(j, "kind", NULL), "Secret");
    assert_string_equal(str(j, "metadata", "name"), "s1");
    assert_string_equal(str(j, "data", "a"), "Yg==");
    assert_string_equal(str(j, "type", NULL), "Opaque");
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "generateName"));
    cJSON_Delete(j);
}

/* ------------------------------------------------------------------ */
/* Eviction and PodDisruptionBudgets                                   */
/* ------------------------------------------------------------------ */

static cJSON *evict_pb(harness *h, const char *pod, long *status)
{
    char path[256];

    snprintf(path, sizeof(path), NS "/pods/%s/eviction", pod);
    return ek_call(h, NULL, "POST", path, EK_ACCEPT_PROTOBUF, EK_PROTOBUF, eviction_web1,
                   sizeof(eviction_web1) - 1, status);
}

static void protobuf_eviction_honours_pdb(void **state)
{
    harness *h = *state;
    long status;
    cJSON *j, *cause;

    make_pod(h, "web-1", "node-0", "Running");
    ek_create(h, PDBS,
              "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"minAvailable\":1,\"selector\":{"
              "\"matchLabels\":{\"app\":\"web\"}}}}");
    ek_set_status(h, PDBS "/web",
                  "{\"disruptionsAllowed\":0,\"currentHealthy\":1,\"desiredHealthy\":1,"
                  "\"expectedPods\":1}");
    j = evict_pb(h, "web-1", &status);
    assert_int_equal(status, 429);
    assert_string_equal(str(j, "kind", NULL), "Status");
    assert_string_equal(str(j, "status", NULL), "Failure");
    assert_string_equal(str(j, "reason", NULL), "TooManyRequests");
    assert_string_equal(str(j, "message", NULL),
                        "Cannot evict pod as it would violate the pod's disruption budget.");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "code")), 429);
    cause = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes"), 0);
    assert_string_equal(str(cause, "reason", NULL), "DisruptionBudget");
    assert_string_equal(str(cause, "message", NULL),
                        "The disruption budget web needs 1 healthy pods and has 1 currently");
    cJSON_Delete(j);
    assert_int_equal(get_status(h, NS "/pods/web-1"), 200);

    ek_set_status(h, PDBS "/web",
                  "{\"disruptionsAllowed\":1,\"currentHealthy\":2,\"desiredHealthy\":1,"
                  "\"expectedPods\":2}");
    j = evict_pb(h, "web-1", &status);
    assert_int_equal(status, 201);
    assert_string_equal(str(j, "status", NULL), "Success");
    cJSON_Delete(j);
    assert_int_equal(get_status(h, NS "/pods/web-1"), 404);
    j = ek_call(h, NULL, "GET", PDBS "/web", NULL, NULL, NULL, 0, &status);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"),
                                                              "disruptionsAllowed")),
                     0);
    assert_non_null(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "disruptedPods"), "web-1"));
    {
        const cJSON *c = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "conditions"), 0);
        assert_string_equal(str(c, "type", NULL), "DisruptionAllowed");
        assert_string_equal(str(c, "status", NULL), "False");
        assert_string_equal(str(c, "reason", NULL), "InsufficientPods");
    }
    cJSON_Delete(j);
}

static void eviction_rules(void **state)
{
    harness *h = *state;
    static const char v1_web2[] =
        "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"web-2\"}}";
    static const char v1beta1[] = "{\"apiVersion\":\"policy/v1beta1\",\"kind\":\"Eviction\","
                                  "\"metadata\":{\"name\":\"web-1\",\"namespace\":\"default\"}}";
    long status;
    cJSON *j;

    ek_create(h, PDBS,
              "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"maxUnavailable\":0,\"selector\":{"
              "\"matchLabels\":{\"app\":\"web\"}}}}");
    /* no such pod */
    j = evict_pb(h, "web-1", &status);
    assert_int_equal(status, 404);
    assert_string_equal(str(j, "message", NULL), "pods \"web-1\" not found");
    cJSON_Delete(j);
    /* the URL names another pod */
    make_pod(h, "web-2", "node-0", "Running");
    j = evict_pb(h, "web-2", &status);
    assert_int_equal(status, 400);
    assert_string_equal(str(j, "message", NULL),
                        "name in URL does not match name in Eviction object");
    cJSON_Delete(j);
    /* two budgets cover the pod */
    ek_create(h, PDBS,
              "{\"metadata\":{\"name\":\"all-web\"},\"spec\":{\"minAvailable\":0,\"selector\":{"
              "\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}}}");
    j = ek_call(h, NULL, "POST", NS "/pods/web-2/eviction", NULL, NULL, v1_web2, strlen(v1_web2),
                &status);
    assert_int_equal(status, 500);
    assert_string_equal(str(j, "message", NULL),
                        "This pod has more than one PodDisruptionBudget, which the eviction "
                        "subresource does not support.");
    cJSON_Delete(j);
    /* a Pending pod is evicted whatever the budget (JSON, policy/v1beta1) */
    make_pod(h, "web-1", "node-1", NULL);
    j = ek_call(h, NULL, "POST", NS "/pods/web-1/eviction", NULL, NULL, v1beta1, strlen(v1beta1),
                &status);
    assert_int_equal(status, 201);
    cJSON_Delete(j);
    assert_int_equal(get_status(h, NS "/pods/web-1"), 404);
    assert_int_equal(get_status(h, NS "/pods/web-2"), 200);
}

/* ------------------------------------------------------------------ */
/* Server-side apply, SelfSubjectAccessReview                          */
/* ------------------------------------------------------------------ */

static void server_side_apply_refused(void **state)
{
    harness *h = *state;
    static const char apply[] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n";
    long status;
    cJSON *j;

    j = ek_call(h, NULL, "PATCH", NS "/pods/x?fieldManager=kubectl", NULL,
                "application/apply-patch+yaml", apply, strlen(apply), &status);
    assert_int_equal(status, 415);
    assert_string_equal(str(j, "reason", NULL), "UnsupportedMediaType");
    assert_string_equal(str(j, "message", NULL),
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json-patch+json, application/merge-patch+json, "
                        "application/strategic-merge-patch+json");
    cJSON_Delete(j);
    j = ek_call(h, NULL, "PATCH", "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/x", NULL,
                "application/apply-patch+yaml", apply, strlen(apply), &status);
    assert_int_equal(status, 415);
    assert_null(strstr(str(j, "message", NULL), "apply-patch"));
    assert_null(strstr(str(j, "message", NULL), "strategic"));
    cJSON_Delete(j);
}

static cJSON *ssar_pb(harness *h, const harness_identity *as, long *status)
{
    return ek_call(h, as, "POST", SSAR, EK_ACCEPT_PROTOBUF, EK_PROTOBUF, captured_ssar,
                   sizeof(captured_ssar) - 1, status);
}

static int allowed(const cJSON *review)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(review, "status"), "allowed"));
}

static void self_subject_access_review(void **state)
{
    harness *h = *state;
    static const char healthz[] = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                                  "\"SelfSubjectAccessReview\",\"spec\":{"
                                  "\"nonResourceAttributes\":{\"path\":\"/healthz\",\"verb\":"
                                  "\"get\"}}}";
    const harness_identity *bob;
    long status;
    cJSON *j;

    assert_int_equal(harness_add_token_user(h, "bob", NULL, 0, &bob), KUBE_OK);
    j = ssar_pb(h, NULL, &status);
    assert_int_equal(status, 201);
    assert_string_equal(str(j, "kind", NULL), "SelfSubjectAccessReview");
    assert_string_equal(str(cJSON_GetObjectItem(j, "spec"), "resourceAttributes", "resource"),
                        "pods");
    assert_string_equal(str(cJSON_GetObjectItem(j, "spec"), "resourceAttributes", "namespace"),
                        "default");
    assert_true(allowed(j));
    cJSON_Delete(j);
    j = ssar_pb(h, bob, &status);
    assert_int_equal(status, 201);
    assert_false(allowed(j));
    cJSON_Delete(j);
    j = ek_call(h, bob, "POST", SSAR, NULL, NULL, healthz, strlen(healthz), &status);
    assert_int_equal(status, 201);
    assert_true(allowed(j));
    cJSON_Delete(j);
    j = ek_call(h, bob, "POST", SSAR, NULL, NULL, "{\"spec\":{}}", strlen("{\"spec\":{}}"),
                &status);
    assert_int_equal(status, 422);
    assert_string_equal(str(j, "message", NULL),
                        "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                        "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
                        "nonResourceAttributes or resourceAttributes must be specified");
    cJSON_Delete(j);
}

static void ssar_follows_rbac(void **state)
{
    static const char ssrr[] = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                               "\"SelfSubjectRulesReview\",\"spec\":{\"namespace\":\"default\"}}";
    harness *h = *state;
    const harness_identity *bob;
    long status;
    cJSON *j;

    assert_int_equal(harness_add_token_user(h, "bob", NULL, 0, &bob), KUBE_OK);
    j = ssar_pb(h, bob, &status);
    assert_false(allowed(j));
    cJSON_Delete(j);
    ek_create(h, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
              "{\"metadata\":{\"name\":\"pod-creator\"},\"rules\":[{\"apiGroups\":[\"\"],"
              "\"resources\":[\"pods\"],\"verbs\":[\"create\"]}]}");
    ek_create(h, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
              "{\"metadata\":{\"name\":\"bob\"},\"roleRef\":{\"apiGroup\":"
              "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"pod-creator\"},"
              "\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}");
    j = ssar_pb(h, bob, &status);
    assert_int_equal(status, 201);
    assert_true(allowed(j));
    cJSON_Delete(j);
    /* kubectl auth can-i --list: the rules, RBAC's included */
    j = ek_call(h, bob, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", NULL, NULL,
                ssrr, strlen(ssrr), &status);
    assert_int_equal(status, 201);
    assert_string_equal(str(j, "kind", NULL), "SelfSubjectRulesReview");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "incomplete")));
    {
        const cJSON *rules = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "resourceRules"),
                    *r;
        int found = 0;
        cJSON_ArrayForEach(r, rules)
        {
            const cJSON *res = cJSON_GetObjectItem(r, "resources");
            found |= cJSON_GetArraySize(res) == 1 &&
                     !strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(res, 0)), "pods") &&
                     !strcmp(cJSON_GetStringValue(
                                 cJSON_GetArrayItem(cJSON_GetObjectItem(r, "verbs"), 0)),
                             "create");
        }
        assert_true(found);
    }
    cJSON_Delete(j);
}

/* ------------------------------------------------------------------ */
/* The real kubectl                                                    */
/* ------------------------------------------------------------------ */

static void kubectl_drain_can_i_apply(void **state)
{
    harness *h = *state;
    const harness_identity *bob;
    char out[16384], args[1024], path[512];
    FILE *f;

    if (!ek_have_kubectl())
        skip();
    make_pod(h, "web-1", "node-1", "Running");
    make_pod(h, "other", "node-0", "Running");
    assert_int_equal(ek_kubectl(h, NULL,
                                "drain node-1 --ignore-daemonsets --delete-emptydir-data --force "
                                "--timeout=30s",
                                out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "pod/web-1 evicted"));
    assert_non_null(strstr(out, "node/node-1 drained"));
    assert_int_equal(get_status(h, NS "/pods/web-1"), 404);
    assert_int_equal(get_status(h, NS "/pods/other"), 200);

    assert_int_equal(ek_kubectl(h, NULL, "auth can-i create pods", out, sizeof(out)), 0);
    assert_string_equal(out, "yes\n");
    assert_int_equal(harness_add_token_user(h, "bob", NULL, 0, &bob), KUBE_OK);
    assert_int_equal(ek_kubectl(h, bob->kubeconfig, "auth can-i create pods", out, sizeof(out)), 1);
    assert_string_equal(out, "no\n");
    assert_int_equal(ek_kubectl(h, NULL, "auth can-i --list", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "*.*"));
    assert_non_null(strstr(out, "selfsubjectrulesreviews.authorization.k8s.io"));

    assert_int_equal(ek_kubectl(h, NULL, "create namespace team-a", out, sizeof(out)), 0);
    assert_string_equal(out, "namespace/team-a created\n");
    assert_int_equal(
        ek_kubectl(h, NULL, "-n team-a create configmap c1 --from-literal=k=v", out, sizeof(out)),
        0);
    assert_int_equal(
        ek_kubectl(h, NULL, "-n team-a get configmap c1 -o jsonpath={.data.k}", out, sizeof(out)),
        0);
    assert_string_equal(out, "v");
    assert_int_equal(ek_kubectl(h, NULL,
                                "-n team-a create rolebinding rb --clusterrole=view --user=bob",
                                out, sizeof(out)),
                     0);
    assert_int_equal(ek_kubectl(h, NULL,
                                "-n team-a create pdb web --selector=app=web --min-available=50%",
                                out, sizeof(out)),
                     0);
    assert_int_equal(ek_kubectl(h, NULL, "-n team-a get pdb web", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "50%"));
    snprintf(path, sizeof(path), "%s/ssa.yaml", harness_data_dir(h));
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: default\n", f);
    fclose(f);
    snprintf(args, sizeof(args), "apply --server-side -f %s", path);
    assert_int_not_equal(ek_kubectl(h, NULL, args, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "Server-side apply not available on the server"));
    assert_null(strstr(out, "apply-patch"));
}

int test_group_emulator_kubectl_writes(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(protobuf_delete_options, setup, teardown),
        cmocka_unit_test_setup_teardown(protobuf_created_object, setup, teardown),
        cmocka_unit_test_setup_teardown(protobuf_eviction_honours_pdb, setup, teardown),
        cmocka_unit_test_setup_teardown(eviction_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(server_side_apply_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(self_subject_access_review, setup, teardown),
        cmocka_unit_test_setup_teardown(ssar_follows_rbac, setup_rbac, teardown),
        cmocka_unit_test_setup_teardown(kubectl_drain_can_i_apply, setup, teardown),
    };

    return cmocka_run_group_tests_name("emulator_kubectl_writes", tests, NULL, NULL);
}
