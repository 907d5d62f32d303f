/*
 * tests/integration/test_emulator_kubectl_tables.c - group
 * emulator_kubectl_tables: the emulator's server-side printing with
 * kubectl get's exact Accept header (EK_ACCEPT_TABLE, captured from
 * kubectl v1.32 -v=8): for pods, nodes, core and events.k8s.io events,
 * leases, deployments, services, APIServices, namespaces and KubeVirt's
 * VirtualMachines and VirtualMachineInstances, the Table's columns (name,
 * type, format, priority 1 for -o wide) and cells as kube-apiserver's
 * printers give them; the v1beta1 Table; includeObject=Object|Metadata|None
 * and a bad value; PartialObjectMetadata(List) and the 406 of the wrong
 * shape; Table watch events (kubectl get -w); then the real kubectl's own output (get -o wide, get
 * vm, get events --sort-by=.lastTimestamp) when /usr/bin/kubectl exists.
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
#define KV "/apis/kubevirt.io/v1/namespaces/default"

typedef struct col {
    const char *name, *type, *format;
    int priority;
} col;

static int setup(void **state)
{
    harness_opts o = HARNESS_OPTS_INIT;
    harness *h;

    o.nodes = 2;
    assert_int_equal(harness_start(&o, &h), KUBE_OK);
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    harness_stop(*state);
    return 0;
}

static cJSON *table(harness *h, const char *path)
{
    long status;
    cJSON *t = ek_call(h, NULL, "GET", path, EK_ACCEPT_TABLE, NULL, NULL, 0, &status);

    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "kind")), "Table");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "apiVersion")),
                        "meta.k8s.io/v1");
    return t;
}

static void check_columns(const cJSON *t, const col *want, size_t n)
{
    const cJSON *cols = cJSON_GetObjectItem(t, "columnDefinitions");

    assert_int_equal(cJSON_GetArraySize(cols), (int)n);
    for (size_t i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cols, (int)i);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), want[i].name);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), want[i].type);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "format")), want[i].format);
        assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(c, "priority")),
                         want[i].priority);
        assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(c, "description")));
    }
}

/* Row r's cells equal want (NULL entries: not checked; "#N": the number N). */
static void check_cells(const cJSON *t, int r, const char *const *want, size_t n)
{
    const cJSON *cells =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), r), "cells");

    assert_int_equal(cJSON_GetArraySize(cells), (int)n);
    for (size_t i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cells, (int)i);
        if (!want[i])
            continue;
        if (want[i][0] == '#')
            assert_int_equal(cJSON_GetNumberValue(c), strtol(want[i] + 1, NULL, 10));
        else
            assert_string_equal(cJSON_GetStringValue(c), want[i]);
    }
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Built-in kinds                                                      */
/* ------------------------------------------------------------------ */

static const col pod_cols[] = {
    {"Name", "string", "name", 0},
    {"Ready", "string", "", 0},
    {"Status", "string", "", 0},
    {"Restarts", "string", "", 0},
    {"Age", "string", "", 0},
    {"IP", "string", "", 1},
    {"Node", "string", "", 1},
    {"Nominated Node", "string", "", 1},
    {"Readiness Gates", "string", "", 1},
};

static void pod_table(void **state)
{
    static const char bind[] = "{\"metadata\":{\"name\":\"web\"},\"target\":{\"name\":\"node-1\"}}";
    harness *h = *state;
    long status;
    cJSON *t, *b;

    ek_create(h, NS "/pods",
              "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"readinessGates\":[{\"conditionType\":"
              "\"example.com/lb\"}],\"containers\":[{\"name\":\"a\",\"image\":\"x\"},{\"name\":"
              "\"b\",\"image\":\"x\"}]}}");
    b = ek_call(h, NULL, "POST", NS "/pods/web/binding", NULL, NULL, bind, strlen(bind), &status);
    assert_int_equal(status, 201);
    cJSON_Delete(b);
    ek_set_status(h, NS "/pods/web",
                  "{\"phase\":\"Running\",\"podIP\":\"10.244.1.7\",\"podIPs\":[{\"ip\":"
                  "\"10.244.1.7\"}],\"conditions\":[{\"type\":\"example.com/lb\",\"status\":"
                  "\"True\"},{\"type\":\"Ready\",\"status\":\"False\"}],\"containerStatuses\":[{"
                  "\"name\":\"a\",\"ready\":true,\"restartCount\":2,\"state\":{\"running\":{}},"
                  "\"lastState\":{\"terminated\":{\"exitCode\":1,\"finishedAt\":"
                  "\"2020-01-01T00:00:00Z\"}}},{\"name\":\"b\",\"ready\":false,\"restartCount\":0,"
                  "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}}]}");
    ek_create(h, NS "/pods",
              "{\"metadata\":{\"name\":\"idle\"},\"spec\":{\"containers\":[{\"name\":\"a\","
              "\"image\":\"x\"}]}}");
    t = table(h, NS "/pods");
    check_columns(t, pod_cols, N_OF(pod_cols));
    {
        /* sorted by name: idle, web; web's reason is its first container's
         * waiting reason (containers are read last to first) */
        static const char *const idle[] = {"idle",   "0/1",    "Pending", "0",     NULL,
                                           "<none>", "<none>", "<none>",  "<none>"};
        static const char *const web[] = {"web",        "1/2",    "CrashLoopBackOff", NULL, NULL,
                                          "10.244.1.7", "node-1", "<none>",           "1/1"};
        check_cells(t, 0, idle, N_OF(idle));
        check_cells(t, 1, web, N_OF(web));
        assert_non_null(strstr(ek_cell(t, 1, 3), "2 ("));
        assert_non_null(strstr(ek_cell(t, 1, 3), " ago)"));
    }
    cJSON_Delete(t);
    ek_set_status(h, NS "/pods/idle", "{\"phase\":\"Succeeded\"}");
    t = table(h, NS "/pods/idle");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(
                cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0),
                                    "conditions"),
                0),
            "reason")),
        "Succeeded");
    cJSON_Delete(t);
}

static const col node_cols[] = {
    {"Name", "string", "name", 0},       {"Status", "string", "", 0},
    {"Roles", "string", "", 0},          {"Age", "string", "", 0},
    {"Version", "string", "", 0},        {"Internal-IP", "string", "", 1},
    {"External-IP", "string", "", 1},    {"OS-Image", "string", "", 1},
    {"Kernel-Version", "string", "", 1}, {"Container-Runtime", "string", "", 1},
};

static void node_table(void **state)
{
    harness *h = *state;
    static const char *const n0[] = {"node-0",
                                     "Ready,SchedulingDisabled",
                                     "control-plane,worker",
                                     NULL,
                                     "v1.23.17",
                                     "10.0.0.1",
                                     "<none>",
                                     "Debian GNU/Linux 12 (bookworm)",
                                     "6.1.0",
                                     "containerd://1.6.20"};
    const char *patch = "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/worker\":\"\","
                        "\"node-role.kubernetes.io/control-plane\":\"\"}},\"spec\":{"
                        "\"unschedulable\":true}}";
    long status;
    cJSON *t = ek_call(h, NULL, "PATCH", "/api/v1/nodes/node-0", NULL,
                       "application/merge-patch+json", patch, strlen(patch), &status);

    assert_int_equal(status, 200);
    cJSON_Delete(t);
    t = table(h, "/api/v1/nodes");
    check_columns(t, node_cols, N_OF(node_cols));
    check_cells(t, 0, n0, N_OF(n0));
    assert_string_equal(ek_cell(t, 1, 2), "<none>");
    cJSON_Delete(t);
}

static const col event_cols[] = {
    {"Last Seen", "string", "", 0}, {"Type", "string", "", 0},       {"Reason", "string", "", 0},
    {"Object", "string", "", 0},    {"Subobject", "string", "", 1},  {"Source", "string", "", 1},
    {"Message", "string", "", 0},   {"First Seen", "string", "", 1}, {"Count", "string", "", 1},
    {"Name", "string", "name", 1},
};

static void event_tables(void **state)
{
    harness *h = *state;
    static const char *const core[] = {NULL,
                                       "Warning",
                                       "FailedScheduling",
                                       "pod/web",
                                       "spec.containers{a}",
                                       "stickyvm-scheduler, node-0",
                                       "0/2 nodes are available",
                                       NULL,
                                       "#3",
                                       "web.1"};
    static const char *const k8s[] = {NULL,
                                      "Normal",
                                      "Pinned",
                                      "virtualmachine/vm1",
                                      "",
                                      "stickyvm-scheduler, stickyvm-scheduler-0",
                                      "pinned to node-1",
                                      NULL,
                                      "#4",
                                      "vm1.2"};
    cJSON *t;

    ek_create(h, NS "/events",
              "{\"metadata\":{\"name\":\"web.1\"},\"involvedObject\":{\"kind\":\"Pod\","
              "\"name\":\"web\",\"namespace\":\"default\",\"fieldPath\":\"spec.containers{a}\"},"
              "\"reason\":\"FailedScheduling\",\"message\":\"  0/2 nodes are available\\n\","
              "\"source\":{\"component\":\"stickyvm-scheduler\",\"host\":\"node-0\"},"
              "\"firstTimestamp\":\"2020-01-01T00:00:00Z\",\"lastTimestamp\":"
              "\"2020-01-02T00:00:00Z\",\"count\":3,\"type\":\"Warning\"}");
    ek_create(h, "/apis/events.k8s.io/v1/namespaces/default/events",
              "{\"metadata\":{\"name\":\"vm1.2\"},\"eventTime\":\"2020-01-01T00:00:00.000000Z\","
              "\"series\":{\"count\":4,\"lastObservedTime\":\"2020-01-03T00:00:00.000000Z\"},"
              "\"reportingController\":\"stickyvm-scheduler\",\"reportingInstance\":"
              "\"stickyvm-scheduler-0\",\"action\":\"Pin\",\"reason\":\"Pinned\",\"regarding\":{"
              "\"kind\":\"VirtualMachine\",\"namespace\":\"default\",\"name\":\"vm1\"},\"note\":"
              "\"pinned to node-1\",\"type\":\"Normal\"}");
    t = table(h, NS "/events");
    check_columns(t, event_cols, N_OF(event_cols));
    check_cells(t, 1, core, N_OF(core));
    assert_non_null(strchr(ek_cell(t, 1, 0), 'y')); /* years ago: lastTimestamp */
    cJSON_Delete(t);
    t = table(h, "/apis/events.k8s.io/v1/namespaces/default/events");
    check_columns(t, event_cols, N_OF(event_cols));
    check_cells(t, 0, k8s, N_OF(k8s));
    cJSON_Delete(t);
}

static const col lease_cols[] = {
    {"Name", "string", "name", 0}, {"Holder", "string", "", 0}, {"Age", "string", "", 0}};
static const col ns_cols[] = {
    {"Name", "string", "name", 0}, {"Status", "string", "", 0}, {"Age", "string", "", 0}};
static const col deploy_cols[] = {
    {"Name", "string", "name", 0},  {"Ready", "string", "", 0},    {"Up-to-date", "string", "", 0},
    {"Available", "string", "", 0}, {"Age", "string", "", 0},      {"Containers", "string", "", 1},
    {"Images", "string", "", 1},    {"Selector", "string", "", 1},
};
static const col svc_cols[] = {
    {"Name", "string", "name", 0},    {"Type", "string", "", 0},    {"Cluster-IP", "string", "", 0},
    {"External-IP", "string", "", 0}, {"Port(s)", "string", "", 0}, {"Age", "string", "", 0},
    {"Selector", "string", "", 1},
};
static const col apiservice_cols[] = {{"Name", "string", "name", 0},
                                      {"Service", "string", "", 0},
                                      {"Available", "string", "", 0},
                                      {"Age", "string", "", 0}};

static void small_kinds_tables(void **state)
{
    harness *h = *state;
    static const char *const lease[] = {"stickyvm-scheduler", "node-0_1234", NULL};
    static const char *const deploy[] = {"web", "1/3", "#2",          "#1",
                                         NULL,  "a,b", "img-a,img-b", "app=web,tier in (fe)"};
    static const char *const svc[] = {
        "web", "ClusterIP", "10.96.0.10", "<none>", "443/TCP,80:30080/UDP", NULL, "app=web"};
    static const char *const ns[] = {"default", "Active", NULL};
    static const char *const apis[] = {"v1.example.com", "ns1/svc1", NULL, NULL};
    cJSON *t;

    ek_create(h, "/apis/coordination.k8s.io/v1/namespaces/default/leases",
              "{\"metadata\":{\"name\":\"stickyvm-scheduler\"},\"spec\":{\"holderIdentity\":"
              "\"node-0_1234\"}}");
    t = table(h, "/apis/coordination.k8s.io/v1/namespaces/default/leases");
    check_columns(t, lease_cols, N_OF(lease_cols));
    check_cells(t, 0, lease, N_OF(lease));
    cJSON_Delete(t);
    ek_create(h, "/apis/apps/v1/namespaces/default/deployments",
              "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"replicas\":3,\"selector\":{"
              "\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\","
              "\"operator\":\"In\",\"values\":[\"fe\"]}]},\"template\":{\"metadata\":{\"labels\":"
              "{\"app\":\"web\",\"tier\":\"fe\"}},\"spec\":{\"containers\":[{\"name\":\"a\","
              "\"image\":\"img-a\"},{\"name\":\"b\",\"image\":\"img-b\"}]}}}}");
    ek_set_status(h, "/apis/apps/v1/namespaces/default/deployments/web",
                  "{\"readyReplicas\":1,\"updatedReplicas\":2,\"availableReplicas\":1}");
    t = table(h, "/apis/apps/v1/namespaces/default/deployments");
    check_columns(t, deploy_cols, N_OF(deploy_cols));
    check_cells(t, 0, deploy, N_OF(deploy));
    cJSON_Delete(t);
    ek_create(h, NS "/services",
              "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"clusterIP\":\"10.96.0.10\","
              "\"clusterIPs\":[\"10.96.0.10\"],\"selector\":{\"app\":\"web\"},\"ports\":[{"
              "\"port\":443,\"protocol\":\"TCP\"},{\"port\":80,\"nodePort\":30080,\"protocol\":"
              "\"UDP\"}]}}");
    t = table(h, NS "/services");
    check_columns(t, svc_cols, N_OF(svc_cols));
    check_cells(t, 0, svc, N_OF(svc));
    cJSON_Delete(t);
    t = table(h, "/api/v1/namespaces/default");
    check_columns(t, ns_cols, N_OF(ns_cols));
    check_cells(t, 0, ns, N_OF(ns));
    cJSON_Delete(t);
    ek_create(h, "/apis/apiregistration.k8s.io/v1/apiservices",
              "{\"metadata\":{\"name\":\"v1.example.com\"},\"spec\":{\"group\":\"example.com\","
              "\"version\":\"v1\",\"service\":{\"namespace\":\"ns1\",\"name\":\"svc1\"},"
              "\"groupPriorityMinimum\":100,\"versionPriority\":10,"
              "\"insecureSkipTLSVerify\":true}}");
    t = table(h, "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com");
    check_columns(t, apiservice_cols, N_OF(apiservice_cols));
    check_cells(t, 0, apis, N_OF(apis));
    assert_true(strlen(ek_cell(t, 0, 2)) > 0);
    cJSON_Delete(t);
}

/* ------------------------------------------------------------------ */
/* Custom resources: KubeVirt's printer columns                        */
/* ------------------------------------------------------------------ */

static const col vm_cols[] = {{"Name", "string", "name", 0},
                              {"Age", "date", "", 0},
                              {"Status", "string", "", 0},
                              {"Ready", "string", "", 0}};
static const col vmi_cols[] = {
    {"Name", "string", "name", 0},        {"Age", "date", "", 0},
    {"Phase", "string", "", 0},           {"IP", "string", "", 0},
    {"NodeName", "string", "", 0},        {"Ready", "string", "", 0},
    {"Live-Migratable", "string", "", 1}, {"Paused", "string", "", 1},
};

static void kubevirt_tables(void **state)
{
    harness *h = *state;
    static const char *const vm[] = {"vm1", NULL, "Running", "True"};
    static const char *const vmi[] = {"vm1",    NULL,   "Running", "10.244.1.9",
                                      "node-1", "True", "False",   NULL};
    const cJSON *cells;
    cJSON *t;

    ek_create(h, KV "/virtualmachines",
              "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
              "\"name\":\"vm1\"},\"spec\":{\"running\":true}}");
    ek_set_status(h, KV "/virtualmachines/vm1",
                  "{\"printableStatus\":\"Running\",\"conditions\":[{\"type\":\"Paused\","
                  "\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\"}]}");
    ek_create(h, KV "/virtualmachineinstances",
              "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
              "\"metadata\":{\"name\":\"vm1\"},\"spec\":{}}");
    ek_set_status(h, KV "/virtualmachineinstances/vm1",
                  "{\"phase\":\"Running\",\"nodeName\":\"node-1\",\"interfaces\":[{"
                  "\"ipAddress\":\"10.244.1.9\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":"
                  "\"True\"},{\"type\":\"LiveMigratable\",\"status\":\"False\"}]}");
    t = table(h, KV "/virtualmachines");
    check_columns(t, vm_cols, N_OF(vm_cols));
    check_cells(t, 0, vm, N_OF(vm));
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(t, "columnDefinitions"), 2), "description")),
        "Human Readable Status");
    cJSON_Delete(t);
    t = table(h, KV "/virtualmachineinstances");
    check_columns(t, vmi_cols, N_OF(vmi_cols));
    check_cells(t, 0, vmi, N_OF(vmi));
    cells = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "cells");
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(cells, 7))); /* no Paused condition */
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(t, "columnDefinitions"), 5), "description")),
        "Custom resource definition column (in JSONPath format): "
        ".status.conditions[?(@.type=='Ready')].status");
    cJSON_Delete(t);
}

/* ------------------------------------------------------------------ */
/* Row objects, versions, partial metadata                             */
/* ------------------------------------------------------------------ */

static const cJSON *row_object(const cJSON *t, int r)
{
    return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), r), "object");
}

static void include_object(void **state)
{
    harness *h = *state;
    long status;
    cJSON *t;

    t = table(h, "/api/v1/nodes");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(row_object(t, 0), "kind")),
                        "PartialObjectMetadata");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(row_object(t, 0), "apiVersion")),
                        "meta.k8s.io/v1");
    assert_null(cJSON_GetObjectItem(row_object(t, 0), "status"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(row_object(t, 0), "metadata"), "uid"));
    cJSON_Delete(t);
    t = table(h, "/api/v1/nodes?includeObject=Object");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(row_object(t, 0), "kind")),
                        "Node");
    assert_non_null(cJSON_GetObjectItem(row_object(t, 0), "status"));
    cJSON_Delete(t);
    t = table(h, "/api/v1/nodes?includeObject=None");
    assert_null(row_object(t, 0));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")), 2);
    cJSON_Delete(t);
    t = ek_call(h, NULL, "GET", "/api/v1/nodes?includeObject=All", EK_ACCEPT_TABLE, NULL, NULL, 0,
                &status);
    assert_int_equal(status, 400);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "message")),
                        "Unable to convert to Table as requested: includeObject: Unsupported "
                        "value: \"All\": supported values: \"Metadata\", \"None\", \"Object\"");
    cJSON_Delete(t);
    /* plain JSON when the Table is not asked for */
    t = ek_call(h, NULL, "GET", "/api/v1/nodes", "application/json", NULL, NULL, 0, &status);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "kind")), "NodeList");
    cJSON_Delete(t);
}

static void versions_and_partial(void **state)
{
    harness *h = *state;
    long status;
    cJSON *t;

    t = ek_call(h, NULL, "GET", "/api/v1/nodes/node-0",
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io", NULL, NULL, 0, &status);
    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "apiVersion")),
                        "meta.k8s.io/v1beta1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(row_object(t, 0), "apiVersion")),
                        "meta.k8s.io/v1beta1");
    assert_non_null(cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(t, "metadata"), "resourceVersion")));
    cJSON_Delete(t);
    t = ek_call(h, NULL, "GET", "/api/v1/nodes",
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json",
                NULL, NULL, 0, &status);
    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "kind")),
                        "PartialObjectMetadataList");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "items")), 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                            cJSON_GetArrayItem(cJSON_GetObjectItem(t, "items"), 1), "kind")),
                        "PartialObjectMetadata");
    assert_null(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "items"), 1), "status"));
    cJSON_Delete(t);
    t = ek_call(h, NULL, "GET", "/api/v1/nodes/node-1",
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", NULL, NULL, 0,
                &status);
    assert_int_equal(status, 200);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "metadata"), "name")),
        "node-1");
    cJSON_Delete(t);
    t = ek_call(h, NULL, "GET", "/api/v1/nodes",
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", NULL, NULL, 0,
                &status);
    assert_int_equal(status, 406);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "reason")), "NotAcceptable");
    cJSON_Delete(t);
    /* nothing servable asked for; YAML or protobuf beside it: JSON */
    t = ek_call(h, NULL, "GET", "/api/v1/nodes", "application/json;as=Table;v=v2;g=meta.k8s.io",
                NULL, NULL, 0, &status);
    assert_int_equal(status, 406);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "message")),
                        "only the following media types are accepted: application/json, "
                        "application/yaml, application/vnd.kubernetes.protobuf");
    cJSON_Delete(t);
    t = ek_call(h, NULL, "GET", "/api/v1/nodes/node-0", EK_ACCEPT_PROTOBUF, NULL, NULL, 0, &status);
    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "kind")), "Node");
    cJSON_Delete(t);
}

/* kubectl get -w: every event's object is a one-row Table, the column
 * definitions only in the first. */
static void watch_tables(void **state)
{
    harness *h = *state;
    static const char *const headers[] = {"Accept: " EK_ACCEPT_TABLE, NULL};
    harness_response r;
    cJSON *first, *second;
    char *nl;

    assert_int_equal(harness_request_headers(h, NULL, "GET",
                                             "/api/v1/nodes?watch=1&timeoutSeconds=1", headers,
                                             NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    nl = strchr(r.body, '\n');
    assert_non_null(nl);
    *nl = '\0';
    first = cJSON_Parse(r.body);
    second = cJSON_Parse(nl + 1);
    harness_response_free(&r);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(first, "type")), "ADDED");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(first, "object"), "kind")),
        "Table");
    check_columns(cJSON_GetObjectItem(first, "object"), node_cols, N_OF(node_cols));
    assert_string_equal(ek_cell(cJSON_GetObjectItem(first, "object"), 0, 0), "node-0");
    assert_true(cJSON_IsNull(
        cJSON_GetObjectItem(cJSON_GetObjectItem(second, "object"), "columnDefinitions")));
    assert_string_equal(ek_cell(cJSON_GetObjectItem(second, "object"), 0, 0), "node-1");
    cJSON_Delete(first);
    cJSON_Delete(second);
    /* client-go's metadata informers watch PartialObjectMetadata */
    {
        static const char *const meta[] = {
            "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", NULL};
        assert_int_equal(harness_request_headers(h, NULL, "GET",
                                                 "/api/v1/nodes?watch=1&timeoutSeconds=1", meta,
                                                 NULL, NULL, &r),
                         KUBE_OK);
        nl = strchr(r.body, '\n');
        assert_non_null(nl);
        *nl = '\0';
        first = cJSON_Parse(r.body);
        harness_response_free(&r);
        assert_string_equal(
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(first, "object"), "kind")),
            "PartialObjectMetadata");
        assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(first, "object"), "status"));
        cJSON_Delete(first);
    }
}

/* ------------------------------------------------------------------ */
/* The real kubectl                                                    */
/* ------------------------------------------------------------------ */

static void kubectl_output(void **state)
{
    harness *h = *state;
    char out[16384];

    if (!ek_have_kubectl())
        skip();
    kubevirt_tables(state);
    event_tables(state);
    assert_int_equal(ek_kubectl(h, NULL, "get nodes -o wide", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "INTERNAL-IP"));
    assert_non_null(strstr(out, "CONTAINER-RUNTIME"));
    assert_non_null(strstr(out, "10.0.0.2"));
    assert_int_equal(ek_kubectl(h, NULL, "get vm", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "NAME   AGE"));
    assert_non_null(strstr(out, "STATUS    READY"));
    assert_non_null(strstr(out, "Running   True"));
    assert_int_equal(ek_kubectl(h, NULL, "get vmi -o wide", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "LIVE-MIGRATABLE"));
    assert_non_null(strstr(out, "10.244.1.9"));
    assert_int_equal(ek_kubectl(h, NULL, "get events --sort-by=.lastTimestamp", out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "LAST SEEN"));
    assert_non_null(strstr(out, "FailedScheduling"));
    assert_null(strstr(out, "No resources found"));
    assert_int_equal(ek_kubectl(h, NULL, "get events.events.k8s.io", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "virtualmachine/vm1"));
}

int test_group_emulator_kubectl_tables(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pod_table, setup, teardown),
        cmocka_unit_test_setup_teardown(node_table, setup, teardown),
        cmocka_unit_test_setup_teardown(event_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(small_kinds_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(kubevirt_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(include_object, setup, teardown),
        cmocka_unit_test_setup_teardown(versions_and_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(watch_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(kubectl_output, setup, teardown),
    };

    return cmocka_run_group_tests_name("emulator_kubectl_tables", tests, NULL, NULL);
}
