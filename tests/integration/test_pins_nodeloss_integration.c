/*
 * tests/integration/test_pins_nodeloss_integration.c - the pin controller's
 * stickyvm.io/on-node-loss policy (scheduler/pins/nodeloss.h) in the whole
 * stickyvm-scheduler, in-process against the API emulator, with a short
 * nodeLossGracePeriod set through the StickyVM args.
 *
 * An Unpin VM whose node goes NotReady is unpinned after the grace (pin-
 * reason NodeLost, a Warning event Unpinned naming the node and the
 * reason, the metric counts it), and its next launcher pod lands on another node and is
 * pinned there; Wait, absent and misspelled policies (the latter with one
 * InvalidOnNodeLoss event) keep their pins. Unknown and a deleted Node
 * (Missing) unpin too, as does a node this replica never saw. A PV local
 * to the lost node holds its VM; a zonal PV does not. The grace runs on
 * this replica's clock from when it saw the node lost: a kubelet's
 * lastTransitionTime of 2020 does not shorten it, and a node Ready again
 * within the grace unpins nothing. A follower writes nothing, and unpins
 * once it leads, a full grace after it started leading. Bad nodeLossGracePeriod values, and two
 * profiles with different ones, are refused naming the field. What the policy and the
 * PinnedNodeDeleted warnings remember returns to nothing once 10,000 VMs
 * and 1,000 nodes are created and deleted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kubevirt_chain.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/metrics.h"
#include "kube/machinery/factory_testing.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/types/pin.h"
#include "kube/codec/jsonstream.h"
#include "pins/controller_testing.h"
#include "pins/lost_testing.h"
#include "pins/nodeloss_testing.h"
#include "scheduler.h"
#include "scheduler_testing.h"
#include "unit/test_plugin_util.h"

#define NS "default"
#define VMS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"
#define VMIS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstances"
#define PODS_PATH "/api/v1/namespaces/" NS "/pods"
#define PVCS_PATH "/api/v1/namespaces/" NS "/persistentvolumeclaims"
#define PVS_PATH "/api/v1/persistentvolumes"
#define NODES_PATH "/api/v1/nodes"
#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/" NS "/events"
#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/%s/leases"
#define CONVERGE_MS 20000

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
    sched_config *scfg;
    sched_scheduler *sched;
} fixture;

static int group_setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts o = HARNESS_OPTS_INIT;
    kube_client_options co;
    char err[256];
    o.nodes = 4;
    o.bookmark_interval_ms = 500;
    assert_int_equal(harness_start(&o, &fx->h), KUBE_OK);
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

static int test_teardown(void **state)
{
    fixture *fx = *state;
    sched_scheduler_free(fx->sched);
    sched_config_free(fx->scfg);
    fx->sched = NULL, fx->scfg = NULL;
    sched_pins_status_refresh_ms_set(0);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The scheduler                                                       */
/* ------------------------------------------------------------------ */

#define PROFILE(name, grace)        \
    "  - schedulerName: " name "\n" \
    "    plugins:\n"                \
    "      preFilter:\n"            \
    "        enabled:\n"            \
    "          - name: StickyVM\n"  \
    "      filter:\n"               \
    "        enabled:\n"            \
    "          - name: StickyVM\n"  \
    "      postBind:\n"             \
    "        enabled:\n"            \
    "          - name: StickyVM\n"  \
    "    pluginConfig:\n"           \
    "      - name: StickyVM\n"      \
    "        args:\n"               \
    "          nodeLossGracePeriod: " grace "\n"

#define CONFIG_HEAD                                \
    "apiVersion: kubescheduler.config.k8s.io/v1\n" \
    "kind: KubeSchedulerConfiguration\n"           \
    "leaderElection:\n"                            \
    "  leaderElect: false\n"                       \
    "  resourceNamespace: kube-system\n"           \
    "  resourceName: stickyvm-scheduler\n"         \
    "profiles:\n"

/* The configuration yaml (file name "nodeloss.yaml"): KUBE_OK or the
 * loader's error in err. */
static int load(const char *yaml, sched_config **out, char *err, size_t n)
{
    return tp_config_load(yaml, "nodeloss.yaml", NULL, out, err, n);
}

/* A Lease held by another replica for an hour (replacing any). */
static void lease_held_elsewhere(fixture *fx, const char *ns, const char *name)
{
    char path[256], body[512];
    harness_response r = {0};
    snprintf(path, sizeof(path), LEASES_PATH "/%s", ns, name); /* a former test's, if any */
    assert_int_equal(harness_request(fx->h, NULL, "DELETE", path, NULL, NULL, &r), KUBE_OK);
    harness_response_free(&r);
    snprintf(path, sizeof(path), LEASES_PATH, ns);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{\"holderIdentity\":\"other\","
             "\"leaseDurationSeconds\":3600,\"acquireTime\":\"2024-01-01T00:00:00.000000Z\","
             "\"renewTime\":\"2024-01-01T00:00:00.000000Z\",\"leaseTransitions\":0}}",
             name, ns);
    assert_int_equal(harness_create(fx->h, path, body, NULL), KUBE_OK);
}

/* stickyvm-scheduler with one StickyVM profile of this grace; a follower
 * (leader election on, the Lease held elsewhere) when follower. */
static void sched_up(fixture *fx, const char *grace, int follower)
{
    char yaml[2048], err[512] = "";
    snprintf(yaml, sizeof(yaml), CONFIG_HEAD PROFILE("stickyvm", "%s"), grace);
    if (load(yaml, &fx->scfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("%s", err);
    sched_leader_election *le = &fx->scfg->leader_election;
    if (follower) {
        le->leader_elect = 1;
        le->lease_duration_ms = 2000, le->renew_deadline_ms = 1000, le->retry_period_ms = 100;
        lease_held_elsewhere(fx, le->resource_namespace, le->resource_name);
    }
    sched_scheduler_options o = {.config = fx->scfg,
                                 .client = fx->client,
                                 .leader_client = fx->client,
                                 .identity = "nodeloss"};
    if (sched_scheduler_new(&o, &fx->sched, err, sizeof(err)) != KUBE_OK)
        fail_msg("scheduler: %s", err);
    assert_int_equal(sched_scheduler_start(fx->sched), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(fx->sched, CONVERGE_MS), KUBE_OK);
}

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

static void request(fixture *fx, const char *method, const char *path, const char *body)
{
    harness_response r = {0};
    const char *type = strcmp(method, "PATCH") == 0 ? "application/merge-patch+json" : NULL;
    assert_int_equal(harness_request(fx->h, NULL, method, path, type, body, &r), KUBE_OK);
    if (r.status < 200 || r.status > 202)
        fail_msg("%s %s: %ld %s", method, path, r.status, r.body);
    harness_response_free(&r);
}

/* Creates VM name pinned to node with this policy (NULL: none) and a
 * volume of claim (NULL: none); returns its uid (static). */
static const char *create_vm(fixture *fx, const char *name, const char *node, const char *policy,
                             const char *claim)
{
    static char uid[64];
    char ann[256], vol[256] = "";
    snprintf(ann, sizeof(ann), "\"stickyvm.io/node\":\"%s\"", node);
    if (policy)
        snprintf(ann + strlen(ann), sizeof(ann) - strlen(ann),
                 ",\"stickyvm.io/on-node-loss\":\"%s\"", policy);
    if (claim)
        snprintf(vol, sizeof(vol),
                 ",\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
                 "\"%s\"}}]",
                 claim);
    kvc_create_vm(fx->h, NS, name, ann, vol, uid, sizeof(uid));
    return uid;
}

/* The VMI of VM name; returns its uid (static). */
static const char *create_vmi(fixture *fx, const char *name, const char *vm_uid)
{
    static char uid[64];
    kvc_create_vmi(fx->h, NS, name, vm_uid, uid, sizeof(uid));
    return uid;
}

/* virt-controller's launcher pod of VMI vm, left to the scheduler. */
static void create_launcher(fixture *fx, const char *vm, const char *vmi_uid, const char *pod)
{
    kvc_create_launcher(fx->h, NS, vm, vmi_uid, pod);
}

/* A Node name (labels hostname and zone), Ready. */
static void create_node(fixture *fx, const char *name, const char *zone)
{
    char body[768];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"kubernetes.io/hostname\":\"%s\",\"topology.kubernetes.io/zone\":\"%s\"}},"
             "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}",
             name, name, zone);
    assert_int_equal(harness_create(fx->h, NODES_PATH, body, NULL), KUBE_OK);
}

/* The node lifecycle controller's view of node: Ready status since
 * transition (a kubelet's clock; NULL: now) (a lost node also tainted
 * not-ready NoSchedule, as it does). */
static void node_status(fixture *fx, const char *node, const char *status, const char *transition)
{
    char path[256], body[512], now[40];
    int lost = strcmp(status, "True") != 0;
    kube_time_rfc3339(now, sizeof(now));
    snprintf(path, sizeof(path), NODES_PATH "/%s/status", node);
    snprintf(body, sizeof(body),
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"lastHeartbeatTime\":\"%s\",\"lastTransitionTime\":\"%s\",\"reason\":\"Test\"}]}}",
             status, now, transition ? transition : now);
    request(fx, "PATCH", path, body);
    snprintf(path, sizeof(path), NODES_PATH "/%s", node);
    request(fx, "PATCH", path,
            lost ? "{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":"
                   "\"NoSchedule\"}]}}"
                 : "{\"spec\":{\"taints\":null}}");
}

/* node_status() since now. */
static void node_ready(fixture *fx, const char *node, const char *status)
{
    node_status(fx, node, status, NULL);
}

/* PV name bound to claim, with node affinity key In [value]. */
static void create_volume(fixture *fx, const char *pv, const char *claim, const char *key,
                          const char *value)
{
    char body[1280];
    snprintf(
        body, sizeof(body),
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
        "\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
        "\"local\":{\"path\":\"/mnt/disks/%s\"},\"claimRef\":{\"namespace\":\"" NS "\","
        "\"name\":\"%s\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
        "\"matchExpressions\":[{\"key\":\"%s\",\"operator\":\"In\",\"values\":[\"%s\"]}]}]}}}}",
        pv, pv, claim, key, value);
    assert_int_equal(harness_create(fx->h, PVS_PATH, body, NULL), KUBE_OK);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"%s\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
             "{\"storage\":\"1Gi\"}},\"volumeName\":\"%s\"}}",
             claim, pv);
    assert_int_equal(harness_create(fx->h, PVCS_PATH, body, NULL), KUBE_OK);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/* VM vm's annotation key as the server holds it ("" when none). */
static void annotation(fixture *fx, const char *vm, const char *key, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), VMS_PATH "/%s", vm);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    assert_int_equal(status, 200);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "metadata"),
                                         "annotations"),
        key);
    kube_strlcpy(out, cJSON_IsString(v) ? v->valuestring : "", n);
    cJSON_Delete(j);
}

static int pinned_to(fixture *fx, const char *vm, const char *node)
{
    char pin[256];
    annotation(fx, vm, "stickyvm.io/node", pin, sizeof(pin));
    return strcmp(pin, node) == 0;
}

/* Events regarding name with this reason whose note contains text. */
static int events(fixture *fx, const char *name, const char *reason, const char *type,
                  const char *text)
{
    long status = 0;
    cJSON *list = NULL;
    const cJSON *it;
    int n = 0;
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", EVENTS_PATH, NULL, &status, &list),
                     KUBE_OK);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *reg =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "regarding"), "name"));
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(it, "reason"));
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(it, "type"));
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(it, "note"));
        n += reg && !strcmp(reg, name) && r && !strcmp(r, reason) && t && !strcmp(t, type) &&
             note && strstr(note, text);
    }
    cJSON_Delete(list);
    return n;
}

/* The pod's spec.nodeName now, into out ("" while unbound). */
static void pod_node(fixture *fx, const char *pod, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), PODS_PATH "/%s", pod);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    const char *node =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "spec"), "nodeName"));
    kube_strlcpy(out, node ? node : "", n);
    cJSON_Delete(j);
}

/* The pod's spec.nodeName once bound. */
static void wait_bound(fixture *fx, const char *pod, char *out, size_t n)
{
    WAIT_TRUE_MS_MSG((pod_node(fx, pod, out, n), out[0]), CONVERGE_MS, "pod %s not bound", pod);
}

/* The scheduler's metrics hold line. */
static int metric_is(fixture *fx, const char *line)
{
    kube_buf out = KUBE_BUF_INIT;
    assert_int_equal(kube_metrics_write(sched_scheduler_metrics(fx->sched), &out), KUBE_OK);
    assert_int_equal(kube_buf_puts(&out, ""), KUBE_OK);
    int found = strstr(out.data, line) != NULL;
    kube_buf_free(&out);
    return found;
}

/* The value of the scheduler's metrics series (name{labels}), -1 when
 * absent. */
static double metric_value(fixture *fx, const char *series)
{
    kube_buf out = KUBE_BUF_INIT;
    char want[256];
    double v = -1;
    snprintf(want, sizeof(want), "\n%s ", series);
    assert_int_equal(kube_metrics_write(sched_scheduler_metrics(fx->sched), &out), KUBE_OK);
    assert_int_equal(kube_buf_puts(&out, ""), KUBE_OK);
    const char *at = strstr(out.data, want);
    if (at)
        v = strtod(at + strlen(want), NULL);
    kube_buf_free(&out);
    return v;
}

/* The counters of the scheduler's pin controller. */
static sched_pins_stats pins_stats(fixture *fx)
{
    sched_pins_stats st;
    struct sched_pins *pins = sched_scheduler_pins(fx->sched);
    assert_non_null(pins);
    sched_pins_stats_get(pins, &st);
    return st;
}

/* Waits until the pin controller's worker, on this replica whether it
 * leads or not, refreshed the status gauges from its synced caches with
 * some VM pinned to a NotReady node: its loop has run past a leadership
 * check with every object created so far cached. Shortens the refresh
 * period (test_teardown restores it). */
static void wait_worker_saw_not_ready(fixture *fx)
{
    sched_pins_status_refresh_ms_set(100);
    WAIT_TRUE(metric_value(fx, "stickyvm_pinned_vms{node_status=\"NotReady\"}") >= 1);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* node-1 goes NotReady: after the 1s grace the Unpin VM is unpinned
 * (NodeLost recorded, the Warning event names the node and the grace, the
 * metric counts it) and its next pod lands elsewhere and is pinned there;
 * the Wait, unannotated and misspelled VMs keep their pins, the last with
 * one InvalidOnNodeLoss event. */
static void test_notready_unpins(void **state)
{
    fixture *fx = *state;
    char vm_uid[64], vmi_uid[64], v[128], node[256];
    kube_strlcpy(vm_uid, create_vm(fx, "nl-unpin", "node-1", "Unpin", NULL), sizeof(vm_uid));
    kube_strlcpy(vmi_uid, create_vmi(fx, "nl-unpin", vm_uid), sizeof(vmi_uid));
    create_vm(fx, "nl-wait", "node-1", "Wait", NULL);
    create_vm(fx, "nl-absent", "node-1", NULL, NULL);
    create_vm(fx, "nl-typo", "node-1", "unpin", NULL);
    sched_up(fx, "1s", 0);
    node_ready(fx, "node-1", "False");

    WAIT_TRUE(pinned_to(fx, "nl-unpin", ""));
    annotation(fx, "nl-unpin", "stickyvm.io/pin-reason", v, sizeof(v));
    assert_string_equal(v, "NodeLost");
    annotation(fx, "nl-unpin", "stickyvm.io/pinned-by", v, sizeof(v));
    assert_string_equal(v, "system:stickyvm-scheduler");
    WAIT_TRUE(events(fx, "nl-unpin", "Unpinned", "Warning",
                     "Unpinned from node node-1, NotReady for ") == 1);
    assert_int_equal(
        events(fx, "nl-unpin", "Unpinned", "Warning",
               "(reason NodeLost; stickyvm.io/on-node-loss: Unpin, nodeLossGracePeriod 1s)"),
        1);
    assert_true(metric_is(fx, "\nstickyvm_node_loss_unpins_total 1\n"));
    WAIT_TRUE(events(fx, "nl-typo", "InvalidOnNodeLoss", "Warning", "\"unpin\"") == 1);
    assert_true(pinned_to(fx, "nl-wait", "node-1"));
    assert_true(pinned_to(fx, "nl-absent", "node-1"));
    assert_true(pinned_to(fx, "nl-typo", "node-1"));

    create_launcher(fx, "nl-unpin", vmi_uid, "virt-launcher-nl-unpin-1");
    wait_bound(fx, "virt-launcher-nl-unpin-1", node, sizeof(node));
    assert_string_not_equal(node, "node-1");
    WAIT_TRUE(pinned_to(fx, "nl-unpin", node));
    node_ready(fx, "node-1", "True");
}

/* Ready Unknown (the kubelet stopped posting) unpins as NotReady does. */
static void test_unknown_unpins(void **state)
{
    fixture *fx = *state;
    create_vm(fx, "nl-unknown", "node-2", "Unpin", NULL);
    sched_up(fx, "1s", 0);
    node_ready(fx, "node-2", "Unknown");
    WAIT_TRUE(pinned_to(fx, "nl-unknown", ""));
    WAIT_TRUE(events(fx, "nl-unknown", "Unpinned", "Warning",
                     "Unpinned from node node-2, Unknown for ") == 1);
    node_ready(fx, "node-2", "True");
}

/* A deleted Node (Missing) unpins its VMs after the grace from when the
 * deletion was seen; a node this replica never saw, after the grace from
 * when it started leading. */
static void test_missing_unpins(void **state)
{
    fixture *fx = *state;
    create_node(fx, "nl-gone", "z9");
    create_vm(fx, "nl-missing", "nl-gone", "Unpin", NULL);
    create_vm(fx, "nl-missing-wait", "nl-gone", NULL, NULL);
    create_vm(fx, "nl-never", "nl-never-existed", "Unpin", NULL);
    sched_up(fx, "1s", 0);
    request(fx, "DELETE", NODES_PATH "/nl-gone", NULL);
    WAIT_TRUE(pinned_to(fx, "nl-missing", ""));
    WAIT_TRUE(events(fx, "nl-missing", "Unpinned", "Warning",
                     "Unpinned from node nl-gone, Missing for ") == 1);
    WAIT_TRUE(pinned_to(fx, "nl-never", ""));
    assert_true(pinned_to(fx, "nl-missing-wait", "nl-gone"));
}

/* node-3 is lost: the VM whose claim is bound to a PV local to node-3
 * keeps its pin (the /pin guard's rule: no other node allowed); the VM of
 * a PV of node-3's zone, which other nodes share, is unpinned. */
static void test_local_volume_holds(void **state)
{
    fixture *fx = *state;
    create_node(fx, "nl-zone-peer", "nl-zone");
    request(fx, "PATCH", NODES_PATH "/node-3",
            "{\"metadata\":{\"labels\":{\"topology.kubernetes.io/zone\":\"nl-zone\"}}}");
    create_volume(fx, "nl-pv-local", "nl-local-data", "kubernetes.io/hostname", "node-3");
    create_volume(fx, "nl-pv-zonal", "nl-zonal-data", "topology.kubernetes.io/zone", "nl-zone");
    create_vm(fx, "nl-local", "node-3", "Unpin", "nl-local-data");
    create_vm(fx, "nl-zonal", "node-3", "Unpin", "nl-zonal-data");
    sched_up(fx, "0s", 0);
    node_ready(fx, "node-3", "False");
    WAIT_TRUE(pinned_to(fx, "nl-zonal", ""));
    /* Both were queued by the same node event: once nothing is queued,
     * held back or in hand, nl-local's turn has come and gone. */
    WAIT_TRUE(pins_stats(fx).busy == 0);
    WAIT_TRUE(events(fx, "nl-zonal", "Unpinned", "Warning", "") == 1);
    assert_true(pinned_to(fx, "nl-local", "node-3"));
    assert_int_equal(events(fx, "nl-local", "Unpinned", "Warning", ""), 0);
    node_ready(fx, "node-3", "True");
}

/* A kubelet whose clock says 2020 (Ready=False with lastTransitionTime
 * 2020-01-01) does not shorten the grace: the VM is unpinned only once 3 s
 * have passed on this replica's clock since the node went NotReady, and
 * the event says so (not "NotReady for 24000h"). */
static void test_kubelet_2020_keeps_grace(void **state)
{
    fixture *fx = *state;
    create_node(fx, "nl-2020", "z9");
    create_vm(fx, "nl-old-clock", "nl-2020", "Unpin", NULL);
    sched_up(fx, "3s", 0);
    int64_t t0 = kube_now_ms();
    node_status(fx, "nl-2020", "False", "2020-01-01T00:00:00Z");
    WAIT_TRUE(pinned_to(fx, "nl-old-clock", ""));
    int64_t took = kube_now_ms() - t0;
    if (took < 3000)
        fail_msg("unpinned %lld ms after the node went NotReady, within the 3 s grace",
                 (long long)took);
    WAIT_TRUE(events(fx, "nl-old-clock", "Unpinned", "Warning",
                     "Unpinned from node nl-2020, NotReady for ") == 1);
    assert_int_equal(events(fx, "nl-old-clock", "Unpinned", "Warning", "NotReady for 3s") +
                         events(fx, "nl-old-clock", "Unpinned", "Warning", "NotReady for 4s"),
                     1);
}

/* A node Ready again within the grace keeps its pins, also when its
 * kubelet's clock says 2020: the count is this replica's and ends with the
 * node Ready. Proven by a later positive event: a second node lost after
 * the first came back, with the same grace, is unpinned; only then is the
 * first VM checked. */
static void test_node_back_within_grace(void **state)
{
    fixture *fx = *state;
    const char *not_ready = "stickyvm_pinned_vms{node_status=\"NotReady\"}";
    create_node(fx, "nl-back-node", "z9");
    create_node(fx, "nl-back-ctl", "z9");
    create_vm(fx, "nl-back", "nl-back-node", "Unpin", NULL);
    create_vm(fx, "nl-back-ctl", "nl-back-ctl", "Unpin", NULL);
    sched_pins_status_refresh_ms_set(100);
    sched_up(fx, "3s", 0);
    WAIT_TRUE(metric_value(fx, not_ready) >= 0);
    double before = metric_value(fx, not_ready);
    node_status(fx, "nl-back-node", "False", "2020-01-01T00:00:00Z");
    WAIT_TRUE(metric_value(fx, not_ready) >= before + 1); /* the scheduler saw it lost */
    node_ready(fx, "nl-back-node", "True");
    node_status(fx, "nl-back-ctl", "False", "2020-01-01T00:00:00Z");
    WAIT_TRUE(pinned_to(fx, "nl-back-ctl", ""));
    assert_true(pinned_to(fx, "nl-back", "nl-back-node"));
    assert_true(metric_is(fx, "\nstickyvm_node_loss_unpins_total 1\n"));
    sched_pins_status_refresh_ms_set(0);
}

/* A follower writes nothing; once it leads, the VM is unpinned. */
static void test_follower_writes_nothing(void **state)
{
    fixture *fx = *state;
    char path[256];
    create_node(fx, "nl-follow", "z9");
    node_ready(fx, "nl-follow", "False");
    create_vm(fx, "nl-follower", "nl-follow", "Unpin", NULL);
    sched_up(fx, "0s", 1);
    assert_false(sched_scheduler_active(fx->sched));
    /* the worker has looked, as a follower, with the lost node cached;
     * nothing of it is queued, held back or in hand */
    wait_worker_saw_not_ready(fx);
    WAIT_TRUE(pins_stats(fx).busy == 0);
    assert_true(pinned_to(fx, "nl-follower", "nl-follow"));
    assert_int_equal(pins_stats(fx).node_loss_unpins, 0);
    snprintf(path, sizeof(path), LEASES_PATH "/%s", fx->scfg->leader_election.resource_namespace,
             fx->scfg->leader_election.resource_name);
    request(fx, "DELETE", path, NULL);
    WAIT_TRUE(sched_scheduler_active(fx->sched));
    WAIT_TRUE(pinned_to(fx, "nl-follower", ""));
}

/* A new leader starts its own count: a node lost (since 2020 by its
 * kubelet, and for a while by this replica as a follower) is judged only
 * from when this replica started leading, a full grace later. */
static void test_new_leader_counts_again(void **state)
{
    fixture *fx = *state;
    char path[256];
    create_node(fx, "nl-lead", "z9");
    node_status(fx, "nl-lead", "False", "2020-01-01T00:00:00Z");
    create_vm(fx, "nl-leader-count", "nl-lead", "Unpin", NULL);
    sched_up(fx, "3s", 1);
    /* a follower's observation, a second long: it must not count */
    wait_worker_saw_not_ready(fx);
    usleep(1000 * 1000);
    snprintf(path, sizeof(path), LEASES_PATH "/%s", fx->scfg->leader_election.resource_namespace,
             fx->scfg->leader_election.resource_name);
    request(fx, "DELETE", path, NULL);
    WAIT_TRUE(sched_scheduler_active(fx->sched));
    int64_t led = kube_now_ms(); /* at or after the moment it started leading */
    WAIT_TRUE(pinned_to(fx, "nl-leader-count", ""));
    int64_t took = kube_now_ms() - led;
    if (took < 2900)
        fail_msg("unpinned %lld ms after leading, within the 3 s grace", (long long)took);
}

static void expect_config_error(const char *grace, const char *want)
{
    char yaml[2048], err[512] = "";
    sched_config *cfg = NULL;
    snprintf(yaml, sizeof(yaml), CONFIG_HEAD PROFILE("stickyvm", "%s"), grace);
    assert_int_equal(load(yaml, &cfg, err, sizeof(err)), KUBE_ECONFIG);
    assert_null(cfg);
    if (!strstr(err, "nodeloss.yaml") || !strstr(err, want))
        fail_msg("error \"%s\" lacks the file or \"%s\"", err, want);
}

/* Bad values name the file and the field; two profiles with different
 * values are refused, naming both. */
static void test_config_refused(void **state)
{
    fixture *fx = *state;
    char err[512] = "";
    sched_config *cfg = NULL;
    sched_scheduler *s = NULL;
    expect_config_error("abc", "nodeLossGracePeriod: Invalid value: \"abc\"");
    expect_config_error("\"-1s\"", "nodeLossGracePeriod: Invalid value: \"-1s\": must be greater "
                                   "than or equal to 0");
    assert_int_equal(load(CONFIG_HEAD PROFILE("stickyvm", "1m") PROFILE("stickyvm-b", "2m"), &cfg,
                          err, sizeof(err)),
                     KUBE_OK);
    sched_scheduler_options o = {.config = cfg, .client = fx->client, .identity = "graces"};
    assert_int_equal(sched_scheduler_new(&o, &s, err, sizeof(err)), KUBE_ECONFIG);
    assert_null(s);
    assert_non_null(strstr(err, "\"stickyvm\""));
    assert_non_null(strstr(err, "\"stickyvm-b\""));
    assert_non_null(strstr(err, "nodeLossGracePeriod"));
    sched_config_free(cfg);
}

/* ------------------------------------------------------------------ */
/* What is remembered                                                  */
/* ------------------------------------------------------------------ */

#define MEM_VMS 10000
#define MEM_NODES 1000

static void count_enqueue(void *ud, const char *ns, const char *name)
{
    (void)ns, (void)name;
    (*(size_t *)ud)++;
}

static kube_object *mem_node(int i, const char *ready)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'mem-node-%d','uid':'n-%d'},'status':{'conditions':[{'type':"
             "'Ready','status':'%s','lastTransitionTime':'2020-01-01T00:00:00Z'}]}}",
             i, i, ready);
    return tp_object(&kube_node_codec, json);
}

/* VM i pinned to node i % MEM_NODES; every other one with a misspelled
 * policy (told once), the others Unpin. */
static kube_object *mem_vm(int i)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'mem-vm-%d','namespace':'mem','uid':'v-%d','annotations':{"
             "'" KUBE_PIN_DEFAULT_KEY "':'mem-node-%d','stickyvm.io/on-node-loss':'%s'}},"
             "'spec':{'running':true}}",
             i, i, i % MEM_NODES, i % 2 ? "bogus" : "Unpin");
    return tp_object(&kube_vm_codec, json);
}

static void apply_unref(kube_lister *l, int type, kube_object *obj)
{
    assert_int_equal(kube_lister_apply(l, type, obj), KUBE_OK);
    kube_object_unref(obj);
}

static void assert_entries(sched_pins_nodeloss *nl, sched_pins_lost *pl, size_t told, size_t lost,
                           size_t warned)
{
    size_t t = 0, l = 0;
    sched_pins_nodeloss_entries(nl, &t, &l);
    assert_int_equal(t, told);
    assert_int_equal(l, lost);
    assert_int_equal(sched_pins_lost_entries(pl), warned);
}

/* 1,000 lost nodes and 10,000 VMs pinned to them: the policy's records
 * (lost nodes, VMs told of their misspelled policy) and the warned VMs of
 * deleted nodes fill up, and return to 0 once everything is deleted; a
 * node deleted with no VM pinned leaves nothing. The policy and warnings
 * run on a fake informer factory (the handlers a watch would call). */
static void test_entries_forget_deleted(void **state)
{
    fixture *fx = *state;
    kube_factory *f;
    kube_lister *vms, *nodes;
    sched_pins_nodeloss *nl;
    sched_pins_lost *pl;
    size_t queued = 0;
    kube_informer_options vo = {.resource = &KUBE_RES_VMS, .codec = &kube_vm_codec};
    kube_informer_options no = {.resource = &KUBE_RES_NODES, .codec = &kube_node_codec};
    sched_pins_nodeloss_options o = {.client = fx->client,
                                     .informers = NULL,
                                     .key = KUBE_PIN_DEFAULT_KEY,
                                     .grace_ms = 3600000,
                                     .enqueue = count_enqueue,
                                     .enqueue_ud = &queued};
    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    o.informers = f;
    assert_int_equal(sched_pins_nodeloss_new(&o, &nl), KUBE_OK);
    assert_int_equal(sched_pins_lost_new(f, KUBE_PIN_DEFAULT_KEY, NULL, (fw_leadership){0}, &pl),
                     KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &vo, &vms), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &no, &nodes), KUBE_OK);
    assert_int_equal(kube_factory_start(f), KUBE_OK);
    sched_pins_nodeloss_leading(nl, 1);

    for (int i = 0; i < MEM_NODES; i++)
        apply_unref(nodes, KUBE_WATCH_ADDED, mem_node(i, "False"));
    for (int i = 0; i < MEM_VMS; i++) {
        kube_object *vm = mem_vm(i);
        int64_t wait_ms = 0;
        assert_int_equal(kube_lister_apply(vms, KUBE_WATCH_ADDED, vm), KUBE_OK);
        assert_int_equal(sched_pins_nodeloss_reconcile(nl, vm, NULL, &wait_ms),
                         i % 2 ? SCHED_PINS_NODELOSS_NONE : SCHED_PINS_NODELOSS_LATER);
        kube_object_unref(vm);
    }
    assert_entries(nl, pl, MEM_VMS / 2, MEM_NODES, 0);
    for (int i = 0; i < MEM_NODES; i++) /* deleted: kept, VMs are pinned there */
        apply_unref(nodes, KUBE_WATCH_DELETED, mem_node(i, "False"));
    assert_entries(nl, pl, MEM_VMS / 2, MEM_NODES, MEM_VMS);
    assert_int_equal(queued, MEM_VMS); /* each VM once, by its node's deletion */
    for (int i = 0; i < MEM_VMS; i++)
        apply_unref(vms, KUBE_WATCH_DELETED, mem_vm(i));
    assert_entries(nl, pl, 0, 0, 0);
    /* nodes lost and deleted with no VM pinned, and lost then Ready */
    for (int i = 0; i < MEM_NODES; i++) {
        apply_unref(nodes, KUBE_WATCH_ADDED, mem_node(i, i % 2 ? "Unknown" : "False"));
        if (i % 2)
            apply_unref(nodes, KUBE_WATCH_MODIFIED, mem_node(i, "True"));
    }
    assert_entries(nl, pl, 0, MEM_NODES / 2, 0);
    for (int i = 0; i < MEM_NODES; i++)
        apply_unref(nodes, KUBE_WATCH_DELETED, mem_node(i, "True"));
    assert_entries(nl, pl, 0, 0, 0);
    kube_factory_stop(f);
    sched_pins_lost_free(pl);
    sched_pins_nodeloss_free(nl);
    kube_factory_free(f);
}

int test_group_pins_nodeloss_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_notready_unpins, test_teardown),
        cmocka_unit_test_teardown(test_unknown_unpins, test_teardown),
        cmocka_unit_test_teardown(test_missing_unpins, test_teardown),
        cmocka_unit_test_teardown(test_local_volume_holds, test_teardown),
        cmocka_unit_test_teardown(test_kubelet_2020_keeps_grace, test_teardown),
        cmocka_unit_test_teardown(test_node_back_within_grace, test_teardown),
        cmocka_unit_test_teardown(test_follower_writes_nothing, test_teardown),
        cmocka_unit_test_teardown(test_new_leader_counts_again, test_teardown),
        cmocka_unit_test(test_config_refused),
        cmocka_unit_test(test_entries_forget_deleted),
    };
    return cmocka_run_group_tests_name("pins_nodeloss_integration", tests, group_setup,
                                       group_teardown);
}
