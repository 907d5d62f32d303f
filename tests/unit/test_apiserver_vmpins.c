/*
 * tests/unit/test_apiserver_vmpins.c - the pure pieces of
 * virtualmachinepins (Accept, selectors, objects, Tables, durations); the
 * local-volume rule of /pin is kube/types/localvolumes.h's
 * (tests/unit/test_localvolumes.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/discovery.h"
#include "apiserver/vmpins.h"
#include "kube/util/duration.h"
#include "kube/types/node.h"
#include "kube/types/pin.h"
#include "kube/types/pod.h"
#include "kube/util/errors.h"
#include "unit/test_plugin_util.h"

#define NOW 1800000000 /* 2027-01-15T08:00:00Z */

static kube_object *vm_object(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *obj = NULL;

    assert_non_null(j);
    assert_int_equal(kube_vm_codec.decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

/* vm-1 in ns-a, labels app=db, pinned to node-3 by alice 90 s before NOW,
 * created a day and 2 hours before NOW. */
static kube_object *pinned_vm(void)
{
    return vm_object("{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\","
                     "\"metadata\":{\"name\":\"vm-1\",\"namespace\":\"ns-a\",\"uid\":\"u1\","
                     "\"resourceVersion\":\"42\",\"creationTimestamp\":\"2027-01-14T06:00:00Z\","
                     "\"labels\":{\"app\":\"db\"},\"annotations\":{"
                     "\"stickyvm.io/node\":\"node-3\","
                     "\"stickyvm.io/pinned-at\":\"2027-01-15T07:58:30Z\","
                     "\"stickyvm.io/pinned-by\":\"alice\",\"stickyvm.io/pin-reason\":\"API\"}},"
                     "\"spec\":{}}");
}

static kube_object *unpinned_vm(void)
{
    return vm_object("{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\","
                     "\"metadata\":{\"name\":\"vm-2\",\"namespace\":\"ns-b\","
                     "\"creationTimestamp\":\"2027-01-15T07:00:00Z\"},\"spec\":{}}");
}

/* node-3 with its Ready condition's status and cordoned or not. */
static kube_object *node_3(const char *ready, int cordoned)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-3\"},"
             "\"spec\":{\"unschedulable\":%s},\"status\":{\"conditions\":[{\"type\":\"Ready\","
             "\"status\":\"%s\"}]}}",
             cordoned ? "true" : "false", ready);
    return tp_object(&kube_node_codec, json);
}

/* vm-1's virt-launcher pod, Pending since 150 s before NOW. */
static kube_object *launcher_pod(const char *phase)
{
    char json[768];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"virt-launcher-vm-1-x7k2p\",\"namespace\":\"ns-a\",\"creationTimestamp\":"
             "\"2027-01-15T07:57:30Z\",\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\","
             "\"kind\":\"VirtualMachineInstance\",\"name\":\"vm-1\",\"uid\":\"i1\","
             "\"controller\":true}]},\"spec\":{\"containers\":[{\"name\":\"compute\"}]},"
             "\"status\":{\"phase\":\"%s\"}}",
             phase);
    return tp_object(&kube_pod_codec, json);
}

/* What the pins of the tests read: one Node (NULL: none) and vm-1's pod. */
typedef struct fake_world {
    kube_object *node, *pod;
} fake_world;

static kube_object *fake_node(void *ud, const char *name)
{
    fake_world *fw = ud;

    return fw->node && !strcmp(fw->node->meta.name, name) ? kube_object_ref(fw->node) : NULL;
}

static kube_object *fake_pod(void *ud, const kube_vm *vm)
{
    fake_world *fw = ud;

    return fw->pod && !strcmp(vm->base.meta.name, "vm-1") ? kube_object_ref(fw->pod) : NULL;
}

static fake_world fw;
static apis_vmpins_world world = {KUBE_PIN_DEFAULT_KEY, fake_node, fake_pod, &fw};

/* Sets the fake world's Node and pod (taken over; either may be NULL). */
static void set_world(kube_object *node, kube_object *pod)
{
    kube_object_unref(fw.node);
    kube_object_unref(fw.pod);
    fw.node = node;
    fw.pod = pod;
}

static void reads_accept_headers(void **state)
{
    apis_vmpins_format f;
    (void)state;

    assert_int_equal(apis_vmpins_accept_parse(NULL, &f), KUBE_OK);
    assert_null(f.table_version);
    assert_int_equal(apis_vmpins_accept_parse("application/json;as=Table;v=v1;g=meta.k8s.io,"
                                              "application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
                                              "application/json",
                                              &f),
                     KUBE_OK);
    assert_string_equal(f.table_version, "v1");
    assert_int_equal(
        apis_vmpins_accept_parse("application/json; as=Table; v=v1beta1; g=meta.k8s.io, */*", &f),
        KUBE_OK);
    assert_string_equal(f.table_version, "v1beta1");
    assert_int_equal(
        apis_vmpins_accept_parse("application/json;as=Table;v=v2;g=meta.k8s.io,*/*", &f), KUBE_OK);
    assert_null(f.table_version);
    assert_int_equal(apis_vmpins_accept_parse("application/json;as=Table;v=v2;g=meta.k8s.io", &f),
                     KUBE_EINVAL);
    assert_int_equal(apis_vmpins_accept_parse("application/yaml", &f), KUBE_EINVAL);
}

static void selects_by_fields_and_labels(void **state)
{
    kube_object *a = pinned_vm(), *b = unpinned_vm();
    const kube_vm *va = kube_vm_from(a), *vb = kube_vm_from(b);
    apis_vmpins_filter f;
    char msg[256];
    (void)state;

    assert_int_equal(apis_vmpins_filter_parse(NULL, "node=node-3", &f, msg, sizeof(msg)), KUBE_OK);
    assert_true(apis_vmpins_filter_matches(&f, va, &world));
    assert_false(apis_vmpins_filter_matches(&f, vb, &world));
    apis_vmpins_world other = world;
    other.key = "example.com/other";
    assert_false(apis_vmpins_filter_matches(&f, va, &other));
    apis_vmpins_filter_free(&f);

    assert_int_equal(
        apis_vmpins_filter_parse(NULL, "node==,metadata.namespace!=ns-a", &f, msg, sizeof(msg)),
        KUBE_OK);
    assert_false(apis_vmpins_filter_matches(&f, va, &world));
    assert_true(apis_vmpins_filter_matches(&f, vb, &world));
    apis_vmpins_filter_free(&f);

    assert_int_equal(
        apis_vmpins_filter_parse("app in (db,web)", "metadata.name=vm-1", &f, msg, sizeof(msg)),
        KUBE_OK);
    assert_true(apis_vmpins_filter_matches(&f, va, &world));
    assert_false(apis_vmpins_filter_matches(&f, vb, &world));
    apis_vmpins_filter_free(&f);

    assert_int_equal(apis_vmpins_filter_parse(NULL, "spec.nodeName=x", &f, msg, sizeof(msg)),
                     KUBE_EBADREQUEST);
    assert_string_equal(msg, "field label not supported: spec.nodeName");
    apis_vmpins_filter_free(&f);
    assert_int_equal(apis_vmpins_filter_parse(NULL, "node in (a,b)", &f, msg, sizeof(msg)),
                     KUBE_EBADREQUEST);
    apis_vmpins_filter_free(&f);
    assert_int_equal(apis_vmpins_filter_parse("a=(", NULL, &f, msg, sizeof(msg)), KUBE_EBADREQUEST);
    apis_vmpins_filter_free(&f);
    kube_object_unref(a);
    kube_object_unref(b);
}

static void renders_objects(void **state)
{
    kube_object *a = pinned_vm(), *b = unpinned_vm();
    cJSON *o = apis_vmpin_object(kube_vm_from(a), &world), *md;
    (void)state;

    assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, "VirtualMachinePin");
    assert_string_equal(cJSON_GetObjectItem(o, "node")->valuestring, "node-3");
    assert_string_equal(cJSON_GetObjectItem(o, "since")->valuestring, "2027-01-15T07:58:30Z");
    assert_string_equal(cJSON_GetObjectItem(o, "by")->valuestring, "alice");
    assert_string_equal(cJSON_GetObjectItem(o, "reason")->valuestring, "API");
    md = cJSON_GetObjectItem(o, "metadata");
    assert_string_equal(cJSON_GetObjectItem(md, "namespace")->valuestring, "ns-a");
    assert_string_equal(cJSON_GetObjectItem(md, "creationTimestamp")->valuestring,
                        "2027-01-14T06:00:00Z");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(md, "labels"), "app")->valuestring,
                        "db");
    cJSON_Delete(o);
    o = apis_vmpin_object(kube_vm_from(b), &world);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "node")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "by")));
    cJSON_Delete(o);
    kube_object_unref(a);
    kube_object_unref(b);
}

static cJSON *render(const kube_vm *const *vms, size_t n, int single, const apis_vmpins_format *f)
{
    kube_buf b = KUBE_BUF_INIT;
    cJSON *j;

    assert_int_equal(apis_vmpins_render(vms, n, single, &world, "77", f, NOW, &b), KUBE_OK);
    j = cJSON_Parse(b.data);
    kube_buf_free(&b);
    assert_non_null(j);
    return j;
}

static const char *cell(const cJSON *t, int row, int col)
{
    const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), row);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(r, "cells"), col)->valuestring;
}

static const cJSON *row_object(const cJSON *t, int row)
{
    return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), row), "object");
}

static void renders_lists_and_tables(void **state)
{
    kube_object *a = pinned_vm(), *b = unpinned_vm();
    const kube_vm *vms[] = {kube_vm_from(a), kube_vm_from(b)};
    apis_vmpins_format json = {0}, table = {.table_version = "v1"};
    cJSON *j;
    (void)state;

    j = render(vms, 2, 0, &json);
    assert_string_equal(cJSON_GetObjectItem(j, "kind")->valuestring, "VirtualMachinePinList");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "resourceVersion")->valuestring,
        "77");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 2);
    cJSON_Delete(j);

    j = render(vms, 2, 0, &table);
    assert_string_equal(cJSON_GetObjectItem(j, "kind")->valuestring, "Table");
    assert_string_equal(cJSON_GetObjectItem(j, "apiVersion")->valuestring, "meta.k8s.io/v1");
    assert_string_equal(cell(j, 0, 0), "vm-1");
    assert_string_equal(cell(j, 0, 1), "node-3");
    assert_string_equal(cell(j, 0, 2), "Missing");
    assert_string_equal(cell(j, 0, 3), "90s");
    assert_string_equal(cell(j, 0, 4), "alice");
    assert_string_equal(cell(j, 0, 5), "26h");
    assert_string_equal(cell(j, 1, 1), "<none>");
    assert_string_equal(cell(j, 1, 2), "<none>");
    assert_string_equal(cell(j, 1, 3), "<none>");
    assert_string_equal(cell(j, 1, 5), "60m");
    assert_string_equal(cJSON_GetObjectItem(row_object(j, 0), "kind")->valuestring,
                        "PartialObjectMetadata");
    cJSON_Delete(j);

    table.table_version = "v1beta1";
    table.include = APIS_VMPINS_INCLUDE_NONE;
    j = render(vms, 1, 1, &table);
    assert_string_equal(cJSON_GetObjectItem(j, "apiVersion")->valuestring, "meta.k8s.io/v1beta1");
    assert_null(row_object(j, 0));
    cJSON_Delete(j);
    table.include = APIS_VMPINS_INCLUDE_OBJECT;
    j = render(vms, 1, 1, &table);
    assert_string_equal(cJSON_GetObjectItem(row_object(j, 0), "kind")->valuestring,
                        "VirtualMachinePin");
    cJSON_Delete(j);
    j = render(vms, 1, 1, &json);
    assert_string_equal(cJSON_GetObjectItem(j, "kind")->valuestring, "VirtualMachinePin");
    cJSON_Delete(j);
    kube_object_unref(a);
    kube_object_unref(b);
}

/* status.nodeStatus in kubectl's words, null when unpinned. */
static void renders_the_node_status(void **state)
{
    static const struct {
        const char *ready;
        int cordoned;
        const char *want;
    } cases[] = {{"True", 0, "Ready"},
                 {"False", 0, "NotReady"},
                 {"Unknown", 0, "Unknown"},
                 {"True", 1, "Ready,SchedulingDisabled"},
                 {"False", 1, "NotReady,SchedulingDisabled"}};
    kube_object *a = pinned_vm(), *b = unpinned_vm();
    cJSON *o;
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        set_world(node_3(cases[i].ready, cases[i].cordoned), NULL);
        o = apis_vmpin_object(kube_vm_from(a), &world);
        assert_string_equal(
            cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "nodeStatus")->valuestring,
            cases[i].want);
        cJSON_Delete(o);
    }
    set_world(NULL, NULL);
    o = apis_vmpin_object(kube_vm_from(a), &world);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "nodeStatus")->valuestring,
        "Missing");
    cJSON_Delete(o);
    o = apis_vmpin_object(kube_vm_from(b), &world);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "nodeStatus")));
    cJSON_Delete(o);
    kube_object_unref(a);
    kube_object_unref(b);
}

/* fieldSelector status.nodeStatus: the whole value, =, == and !=. */
static void selects_by_node_status(void **state)
{
    kube_object *a = pinned_vm(), *b = unpinned_vm();
    const kube_vm *va = kube_vm_from(a), *vb = kube_vm_from(b);
    apis_vmpins_filter f;
    char msg[256];
    (void)state;

    set_world(node_3("False", 0), NULL);
    assert_int_equal(
        apis_vmpins_filter_parse(NULL, "status.nodeStatus=NotReady", &f, msg, sizeof(msg)),
        KUBE_OK);
    assert_true(apis_vmpins_filter_matches(&f, va, &world));
    assert_false(apis_vmpins_filter_matches(&f, vb, &world));
    set_world(node_3("False", 1), NULL);
    assert_false(apis_vmpins_filter_matches(&f, va, &world)); /* the whole value */
    apis_vmpins_filter_free(&f);

    assert_int_equal(apis_vmpins_filter_parse(NULL,
                                              "status.nodeStatus==NotReady,SchedulingDisabled", &f,
                                              msg, sizeof(msg)),
                     KUBE_EBADREQUEST); /* a comma separates requirements */
    apis_vmpins_filter_free(&f);
    assert_int_equal(apis_vmpins_filter_parse(NULL,
                                              "status.nodeStatus==NotReady\\,SchedulingDisabled,"
                                              "metadata.namespace=ns-a",
                                              &f, msg, sizeof(msg)),
                     KUBE_OK); /* escaped, as fields.EscapeValue writes it */
    assert_true(apis_vmpins_filter_matches(&f, va, &world));
    apis_vmpins_filter_free(&f);
    assert_int_equal(apis_vmpins_filter_parse(NULL, "node=a\\b", &f, msg, sizeof(msg)),
                     KUBE_EBADREQUEST); /* not an escape fields know */
    apis_vmpins_filter_free(&f);
    set_world(node_3("True", 0), NULL);
    assert_int_equal(
        apis_vmpins_filter_parse(NULL, "status.nodeStatus!=Ready", &f, msg, sizeof(msg)), KUBE_OK);
    assert_false(apis_vmpins_filter_matches(&f, va, &world));
    assert_true(apis_vmpins_filter_matches(&f, vb, &world)); /* unpinned: "" */
    set_world(NULL, NULL);
    assert_true(apis_vmpins_filter_matches(&f, va, &world)); /* Missing */
    apis_vmpins_filter_free(&f);
    kube_object_unref(a);
    kube_object_unref(b);
}

/* The Node-Status column, and the wide columns Pod and Waiting (priority
 * 1, as kube-apiserver's printers mark -o wide columns). */
static void renders_the_status_and_wide_columns(void **state)
{
    kube_object *a = pinned_vm(), *b = unpinned_vm();
    const kube_vm *vms[] = {kube_vm_from(a), kube_vm_from(b)};
    apis_vmpins_format table = {.table_version = "v1"};
    const cJSON *cols;
    cJSON *j;
    (void)state;

    set_world(node_3("True", 1), launcher_pod("Pending"));
    j = render(vms, 2, 0, &table);
    cols = cJSON_GetObjectItem(j, "columnDefinitions");
    assert_int_equal(cJSON_GetArraySize(cols), 8);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 2), "name")->valuestring,
                        "Node-Status");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 2), "priority")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 6), "name")->valuestring,
                        "Pod");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 6), "priority")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 7), "priority")->valueint, 1);
    assert_string_equal(cell(j, 0, 2), "Ready,SchedulingDisabled");
    assert_string_equal(cell(j, 0, 6), "virt-launcher-vm-1-x7k2p");
    assert_string_equal(cell(j, 0, 7), "2m30s");
    assert_string_equal(cell(j, 1, 6), "<none>");
    assert_string_equal(cell(j, 1, 7), "<none>");
    cJSON_Delete(j);
    set_world(node_3("True", 0), launcher_pod("Running"));
    j = render(vms, 1, 1, &table);
    assert_string_equal(cell(j, 0, 2), "Ready");
    assert_string_equal(cell(j, 0, 6), "virt-launcher-vm-1-x7k2p");
    assert_string_equal(cell(j, 0, 7), "<none>");
    cJSON_Delete(j);
    set_world(NULL, NULL);
    kube_object_unref(a);
    kube_object_unref(b);
}

static void formats_human_durations(void **state)
{
    static const struct {
        long long secs;
        const char *want;
    } cases[] = {{-5, "<invalid>"},
                 {-1, "0s"},
                 {0, "0s"},
                 {119, "119s"},
                 {150, "2m30s"},
                 {600, "10m"},
                 {10799, "179m"},
                 {3 * 3600 + 60, "3h1m"},
                 {8 * 3600, "8h"},
                 {47 * 3600, "47h"},
                 {50 * 3600, "2d2h"},
                 {8 * 86400, "8d"},
                 {800 * 86400LL, "2y70d"},
                 {9 * 365 * 86400LL, "9y"}};
    char out[32];
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_duration_human(cases[i].secs, out, sizeof(out));
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("%lld s: %s, want %s", cases[i].secs, out, cases[i].want);
    }
}

/* What kubectl needs to resolve "kubectl get vmpin", and kubectl explain. */
static void discovery_and_openapi_describe_vmpins(void **state)
{
    cJSON *d = cJSON_Parse(apis_discovery_resource_list(NULL)), *r, *found = NULL;
    cJSON *o = cJSON_Parse(apis_openapi_v2(NULL));
    (void)state;

    cJSON_ArrayForEach(r,
                       cJSON_GetObjectItem(
                           d, "resources")) if (!strcmp(cJSON_GetObjectItem(r, "name")->valuestring,
                                                        "virtualmachinepins")) found = r;
    assert_non_null(found);
    assert_string_equal(cJSON_GetObjectItem(found, "singularName")->valuestring,
                        "virtualmachinepin");
    assert_string_equal(cJSON_GetObjectItem(found, "kind")->valuestring, "VirtualMachinePin");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(found, "namespaced")));
    assert_string_equal(
        cJSON_GetArrayItem(cJSON_GetObjectItem(found, "shortNames"), 0)->valuestring, "vmpin");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(found, "verbs"), 1)->valuestring,
                        "list");
    assert_non_null(cJSON_GetObjectItem(
        cJSON_GetObjectItem(o, "paths"),
        "/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachinepins"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "definitions"),
                                        "io.stickyvm.subresources.v1.VirtualMachinePinList"));
    assert_non_null(cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(
                cJSON_GetObjectItem(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "definitions"),
                                        "io.stickyvm.subresources.v1.VirtualMachinePin"),
                    "properties"),
                "status"),
            "properties"),
        "nodeStatus"));
    cJSON_Delete(d);
    cJSON_Delete(o);
}

int test_group_apiserver_vmpins(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_accept_headers),
        cmocka_unit_test(selects_by_fields_and_labels),
        cmocka_unit_test(renders_objects),
        cmocka_unit_test(renders_lists_and_tables),
        cmocka_unit_test(renders_the_node_status),
        cmocka_unit_test(selects_by_node_status),
        cmocka_unit_test(renders_the_status_and_wide_columns),
        cmocka_unit_test(formats_human_durations),
        cmocka_unit_test(discovery_and_openapi_describe_vmpins),
    };
    return cmocka_run_group_tests_name("apiserver_vmpins", tests, NULL, NULL);
}
