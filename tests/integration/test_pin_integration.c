/*
 * tests/integration/test_pin_integration.c - kube/types/pin's write against the
 * API emulator: one PATCH when the VM is current, nothing when it already
 * holds the value, a stale resourceVersion read again and judged by the
 * caller (a concurrent pin makes a first pin yield, an explicit pin
 * proceeds), at most KUBE_PIN_MAX_ATTEMPTS patches, a VM deleted or
 * replaced, an unpin keeping followed-migration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kube/transport/api.h"
#include "kube/transport/api_testing.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "kube/types/pin.h"

#define NS "default"
#define VMS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"

static kube_object *vm_from(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    kube_object *o = NULL;
    assert_non_null(j);
    assert_int_equal(kube_vm_codec.decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return o;
}

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
    int decisions;  /* decide() calls */
    int bump;       /* decide() changes the VM on the server first */
    const char *vm; /* the VM decide() changes */
} fixture;

static int group_setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    kube_client_options co;
    char err[256];
    assert_int_equal(harness_start(NULL, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->cfg, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    assert_int_equal(kube_client_new(fx->cfg, &co, &fx->client), KUBE_OK);
    *state = fx;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *fx = *state;
    kube_client_free(fx->client);
    kube_config_free(fx->cfg);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

/* Creates VM name with the annotations object ann (JSON text); returns the
 * created VM decoded (new reference). */
static kube_object *create_vm(fixture *fx, const char *name, const char *ann)
{
    char body[1024];
    cJSON *created = NULL;
    kube_object *o = NULL;
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"" NS "\",\"annotations\":%s},\"spec\":{"
             "\"running\":true,\"template\":{\"spec\":{}}}}",
             name, ann);
    assert_int_equal(harness_create(fx->h, VMS_PATH, body, &created), KUBE_OK);
    assert_int_equal(kube_vm_codec.decode(created, &o), KUBE_OK);
    cJSON_Delete(created);
    return o;
}

/* An annotation of VM name as the server holds it ("" when none). */
static void server_annotation(fixture *fx, const char *name, const char *key, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), VMS_PATH "/%s", name);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    assert_int_equal(status, 200);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "metadata"),
                                         "annotations"),
        key);
    kube_strlcpy(out, cJSON_IsString(v) ? v->valuestring : "", n);
    cJSON_Delete(j);
}

/* Sets an annotation on the server as another client would. */
static void set_annotation(fixture *fx, const char *name, const char *key, const char *value)
{
    kube_status st;
    assert_int_equal(
        kube_api_set_annotation(fx->client, &KUBE_RES_VMS, NS, name, key, value, NULL, NULL, &st),
        KUBE_OK);
}

static int decide_if_unpinned(void *ud, const kube_vm *cur)
{
    fixture *fx = ud;
    fx->decisions++;
    return kube_pin_get(cur, "stickyvm.io/node") == NULL;
}

static int decide_always(void *ud, const kube_vm *cur)
{
    fixture *fx = ud;
    char v[32];
    (void)cur;
    fx->decisions++;
    if (fx->bump) { /* someone else writes again before our next patch */
        snprintf(v, sizeof(v), "%d", fx->decisions);
        set_annotation(fx, fx->vm, "other/counter", v);
    }
    return 1;
}

static const kube_pin_write first_pin = {.key = "stickyvm.io/node",
                                         .node = "node-1",
                                         .reason = KUBE_PIN_FIRST_PLACEMENT,
                                         .by = KUBE_PIN_BY_SCHEDULER};

/* The VM as the caller saw it is current: one PATCH, no GET. */
static void test_write_first_try(void **state)
{
    fixture *fx = *state;
    char v[256];
    kube_object *vm = create_vm(fx, "vm-one", "{}");
    kube_pin_result res;
    assert_int_equal(
        kube_pin_set(fx->client, kube_vm_from(vm), &first_pin, decide_if_unpinned, fx, &res),
        KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_WRITTEN);
    assert_int_equal(res.writes, 1);
    assert_int_equal(res.reads, 0);
    assert_string_equal(res.previous, "");
    assert_string_equal(kube_pin_get(kube_vm_from(res.vm), "stickyvm.io/node"), "node-1");
    kube_pin_result_clear(&res);
    server_annotation(fx, "vm-one", "stickyvm.io/pin-reason", v, sizeof(v));
    assert_string_equal(v, "FirstPlacement");
    server_annotation(fx, "vm-one", "stickyvm.io/pinned-by", v, sizeof(v));
    assert_string_equal(v, "system:stickyvm-scheduler");

    /* Already the desired value: nothing is sent. */
    kube_object *now = vm_from("{\"metadata\":{\"name\":\"vm-one\",\"namespace\":\"default\","
                               "\"resourceVersion\":\"1\",\"annotations\":{"
                               "\"stickyvm.io/node\":\"node-1\"}}}");
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(now), &first_pin, NULL, NULL, &res),
                     KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_UNCHANGED);
    assert_int_equal(res.writes + res.reads, 0);
    assert_string_equal(res.previous, "node-1");
    kube_pin_result_clear(&res);
    kube_object_unref(now);
    kube_object_unref(vm);
}

/* A stale VM: the patch conflicts, the VM is read again and decide()
 * judges it; a pin that appeared meanwhile makes the first pin yield. */
static void test_conflict_rereads_and_decides(void **state)
{
    fixture *fx = *state;
    char v[256];
    kube_object *vm = create_vm(fx, "vm-race", "{}");
    kube_pin_result res;

    set_annotation(fx, "vm-race", "stickyvm.io/node", "node-9"); /* a concurrent /pin */
    fx->decisions = 0;
    assert_int_equal(
        kube_pin_set(fx->client, kube_vm_from(vm), &first_pin, decide_if_unpinned, fx, &res),
        KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_YIELDED);
    assert_int_equal(fx->decisions, 1);
    assert_int_equal(res.writes, 1);
    assert_int_equal(res.reads, 1);
    assert_string_equal(res.previous, "node-9");
    kube_pin_result_clear(&res);
    server_annotation(fx, "vm-race", "stickyvm.io/node", v, sizeof(v));
    assert_string_equal(v, "node-9");

    /* An explicit pin proceeds over it; another unrelated change meanwhile
     * costs one more round. */
    set_annotation(fx, "vm-race", "other/x", "1");
    kube_pin_write api = {
        .key = "stickyvm.io/node", .node = "node-2", .reason = KUBE_PIN_API, .by = "alice"};
    fx->decisions = 0;
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(vm), &api, decide_always, fx, &res),
                     KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_WRITTEN);
    assert_int_equal(res.writes, 2);
    assert_string_equal(res.previous, "node-9");
    kube_pin_result_clear(&res);
    server_annotation(fx, "vm-race", "stickyvm.io/node", v, sizeof(v));
    assert_string_equal(v, "node-2");
    server_annotation(fx, "vm-race", "stickyvm.io/pinned-by", v, sizeof(v));
    assert_string_equal(v, "alice");
    kube_object_unref(vm);
}

/* A VM that changes before every patch: KUBE_PIN_MAX_ATTEMPTS patches,
 * then KUBE_ECONFLICT. */
static void test_attempts_are_bounded(void **state)
{
    fixture *fx = *state;
    kube_object *vm = create_vm(fx, "vm-busy", "{}");
    kube_pin_write api = {
        .key = "stickyvm.io/node", .node = "node-2", .reason = KUBE_PIN_API, .by = "alice"};
    kube_pin_result res;
    set_annotation(fx, "vm-busy", "other/counter", "0");
    fx->decisions = 0, fx->bump = 1, fx->vm = "vm-busy";
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(vm), &api, decide_always, fx, &res),
                     KUBE_ECONFLICT);
    fx->bump = 0;
    assert_int_equal(res.writes, KUBE_PIN_MAX_ATTEMPTS);
    assert_int_equal(res.reads, KUBE_PIN_MAX_ATTEMPTS - 1);
    assert_int_equal(res.status.code, 409);
    assert_null(res.vm);
    kube_pin_result_clear(&res);
    kube_object_unref(vm);
}

/* Deleted (404 on the patch) or replaced (another uid on the re-read). */
static void test_gone(void **state)
{
    fixture *fx = *state;
    kube_pin_result res;
    kube_object *ghost = vm_from("{\"metadata\":{\"name\":\"vm-ghost\",\"namespace\":\"default\","
                                 "\"uid\":\"u-1\",\"resourceVersion\":\"1\"}}");
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(ghost), &first_pin, NULL, NULL, &res),
                     KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_GONE);
    assert_int_equal(res.status.code, 404);
    kube_pin_result_clear(&res);
    kube_object_unref(ghost);

    kube_object *vm = create_vm(fx, "vm-replaced", "{}");
    kube_object *old = vm_from("{\"metadata\":{\"name\":\"vm-replaced\",\"namespace\":"
                               "\"default\",\"uid\":\"old-uid\",\"resourceVersion\":\"1\"}}");
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(old), &first_pin, NULL, NULL, &res),
                     KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_GONE);
    assert_int_equal(res.reads, 1);
    kube_pin_result_clear(&res);
    kube_object_unref(old);
    kube_object_unref(vm);

    assert_int_equal(kube_pin_set(fx->client, NULL, &first_pin, NULL, NULL, &res), KUBE_EINVAL);
    kube_pin_result_clear(&res);
}

/* An unpin removes the key and keeps followed-migration. */
static void test_unpin_keeps_followed(void **state)
{
    fixture *fx = *state;
    char v[256];
    kube_object *vm = create_vm(fx, "vm-unpin",
                                "{\"stickyvm.io/node\":\"node-1\","
                                "\"stickyvm.io/followed-migration\":\"m-7\"}");
    kube_pin_write unpin = {.key = "stickyvm.io/node", .reason = KUBE_PIN_API, .by = "bob"};
    kube_pin_result res;
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(vm), &unpin, NULL, NULL, &res), KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_WRITTEN);
    assert_string_equal(res.previous, "node-1");
    assert_null(kube_pin_get(kube_vm_from(res.vm), "stickyvm.io/node"));
    kube_pin_result_clear(&res);
    server_annotation(fx, "vm-unpin", "stickyvm.io/followed-migration", v, sizeof(v));
    assert_string_equal(v, "m-7");
    server_annotation(fx, "vm-unpin", "stickyvm.io/pin-reason", v, sizeof(v));
    assert_string_equal(v, "API");
    kube_object_unref(vm);
}

/* A pod of VMI name (uid vmi_uid) named pod, bound to node (NULL:
 * Pending); returns nothing. */
static void create_pod(fixture *fx, const char *vmi, const char *vmi_uid, const char *pod,
                       const char *node)
{
    char body[1024], nn[128] = "";
    if (node)
        snprintf(nn, sizeof(nn), "\"nodeName\":\"%s\",", node);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
             "\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},"
             "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
             pod, vmi, vmi_uid, nn);
    assert_int_equal(harness_create(fx->h, "/api/v1/namespaces/" NS "/pods", body, NULL), KUBE_OK);
}

/* The uid of pod (static buffer). */
static const char *pod_uid(fixture *fx, const char *pod)
{
    static char uid[64];
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), "/api/v1/namespaces/" NS "/pods/%s", pod);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    kube_strlcpy(uid, cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "uid")->valuestring,
                 sizeof(uid));
    cJSON_Delete(j);
    return uid;
}

/* A decision observes the VMI's bound launcher pods (not a Pending one,
 * not another VMI's, not an older VMI's of the same name) and its
 * completed migration, and records them; a write whose precondition from
 * fails writes nothing. */
static void test_decision_records_what_it_saw(void **state)
{
    fixture *fx = *state;
    char body[1024], vmi_uid[64], want[200], v[512];
    cJSON *created = NULL;
    kube_object *vm = create_vm(fx, "vm-saw", "{\"stickyvm.io/node\":\"node-1\"}");
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
             "\"metadata\":{\"name\":\"vm-saw\",\"namespace\":\"" NS "\"},\"spec\":{}}");
    assert_int_equal(
        harness_create(fx->h, "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstances",
                       body, &created),
        KUBE_OK);
    kube_strlcpy(vmi_uid,
                 cJSON_GetObjectItem(cJSON_GetObjectItem(created, "metadata"), "uid")->valuestring,
                 sizeof(vmi_uid));
    cJSON_Delete(created);
    harness_response r = {0};
    assert_int_equal(harness_request(fx->h, NULL, "PATCH",
                                     "/apis/kubevirt.io/v1/namespaces/" NS
                                     "/virtualmachineinstances/vm-saw/status",
                                     "application/merge-patch+json",
                                     "{\"status\":{\"nodeName\":\"node-2\",\"migrationState\":{"
                                     "\"sourceNode\":\"node-1\",\"targetNode\":\"node-2\","
                                     "\"migrationUid\":\"m-9\",\"completed\":true}}}",
                                     &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
    create_pod(fx, "vm-saw", vmi_uid, "saw-source", "node-1");
    create_pod(fx, "vm-saw", vmi_uid, "saw-target", "node-2");
    create_pod(fx, "vm-saw", vmi_uid, "saw-pending", NULL);
    create_pod(fx, "vm-saw", "an-older-vmi-uid", "saw-older", "node-0");
    create_pod(fx, "vm-other", "other-uid", "saw-other", "node-0");

    kube_pin_write moved = {.key = "stickyvm.io/node",
                            .node = "node-0",
                            .reason = KUBE_PIN_API,
                            .by = "bob",
                            .from = "node-2"};
    kube_pin_result res;
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(vm), &moved, NULL, NULL, &res), KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_PRECONDITION);
    assert_string_equal(res.previous, "node-1");
    assert_int_equal(res.writes + res.observations, 0);
    kube_pin_result_clear(&res);

    kube_pin_write unpin = {
        .key = "stickyvm.io/node", .reason = KUBE_PIN_API, .by = "bob", .from = "node-1"};
    assert_int_equal(kube_pin_set(fx->client, kube_vm_from(vm), &unpin, NULL, NULL, &res), KUBE_OK);
    assert_int_equal(res.outcome, KUBE_PIN_WRITTEN);
    assert_int_equal(res.observations, 1);
    kube_pin_result_clear(&res);
    server_annotation(fx, "vm-saw", KUBE_PIN_ANN_SEEN_MIGRATION, v, sizeof(v));
    assert_string_equal(v, "m-9");
    server_annotation(fx, "vm-saw", KUBE_PIN_ANN_SEEN_PODS, v, sizeof(v));
    char a[64], b[64];
    kube_strlcpy(a, pod_uid(fx, "saw-source"), sizeof(a));
    kube_strlcpy(b, pod_uid(fx, "saw-target"), sizeof(b));
    snprintf(want, sizeof(want), "%s,%s", a, b);
    if (strcmp(v, want) != 0) /* the list's order */
        snprintf(want, sizeof(want), "%s,%s", b, a);
    assert_string_equal(v, want);
    kube_object_unref(vm);
}

int test_group_pin_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_first_try),
        cmocka_unit_test(test_conflict_rereads_and_decides),
        cmocka_unit_test(test_attempts_are_bounded),
        cmocka_unit_test(test_gone),
        cmocka_unit_test(test_unpin_keeps_followed),
        cmocka_unit_test(test_decision_records_what_it_saw),
    };
    return cmocka_run_group_tests_name("pin_integration", tests, group_setup, group_teardown);
}
