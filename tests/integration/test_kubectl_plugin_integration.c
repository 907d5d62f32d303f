/*
 * tests/integration/test_kubectl_plugin_integration.c - kubectl-stickyvm's
 * commands (apiserver/kubectl/cmd.h) against the emulator, in process:
 * list on a server without the virtualmachinepins resource (the emulator
 * alone: 404) falls back to the VMs' pin annotations, with the table, -A,
 * --node, -o json and the empty answer; why explains a cordoned, tainted
 * pinned node from the node, the pod and its FailedScheduling event, and a
 * missing one; errors are the server's Status (evacuate's included: it
 * finds the VMs through their annotations, and each /pin fails; a node
 * with nothing pinned).
 *
 * Group kubectl_evacuate_integration: evacuate against stickyvm-apiserver
 * in-process behind the emulator's aggregation layer (APIService
 * registered, requests proxied as admin): a dry run changes nothing, --to
 * re-pins and the VM with a local volume on the node is refused until
 * --force (an unpin too, when the volume allows no other node), unpin
 * mode with -l, and -A's NAMESPACE column; a VM re-pinned by someone
 * else while evacuate runs (its first request slowed) is Skipped, not
 * moved (from=NODE). (A node with
 * nothing pinned is the other group's: an empty virtualmachinepins list
 * trips UBSan in apiserver/vmpins.c, qsort of an empty selection.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <time.h>

#include "apis_fixture.h"
#include "cmd.h"
#include "harness.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"

#define NS "default"
#define VMS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
    af_server server; /* the evacuate group's stickyvm-apiserver */
} fixture;

static int group_setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts o = HARNESS_OPTS_INIT;
    char err[256];
    o.nodes = 3;
    assert_int_equal(harness_start(&o, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->cfg, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(kube_client_new(fx->cfg, NULL, &fx->client), KUBE_OK);
    static const char *const vms[][2] = {{"vm-a", "node-1"}, {"vm-b", "node-2"}, {"vm-c", NULL}};
    for (size_t i = 0; i < 3; i++) {
        char body[1024];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
                 "\"name\":\"%s\",\"annotations\":{%s%s%s}},\"spec\":{\"runStrategy\":\"Always\","
                 "\"template\":{\"spec\":{\"domain\":{\"devices\":{}}}}}}",
                 vms[i][0], vms[i][1] ? "\"stickyvm.io/node\":\"" : "", vms[i][1] ? vms[i][1] : "",
                 vms[i][1] ? "\",\"stickyvm.io/pinned-by\":\"alice\",\"stickyvm.io/pinned-at\":"
                             "\"2026-01-01T00:00:00Z\""
                           : "");
        assert_int_equal(harness_create(fx->h, VMS_PATH, body, NULL), KUBE_OK);
    }
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

/* Runs one command (options parsed from line) and captures its output. */
typedef struct run_out {
    int code;
    char *out, *err;
} run_out;

static run_out run(fixture *fx, const char *line)
{
    char copy[512], *argv[32], *save = NULL, perr[256];
    int argc = 0;
    kctl_options o;
    run_out r = {0};
    size_t lo = 0, le = 0;
    snprintf(copy, sizeof(copy), "%s", line);
    argv[argc++] = "kubectl-stickyvm";
    for (char *w = strtok_r(copy, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    assert_int_equal(kctl_parse(argc, argv, &o, perr, sizeof(perr)), KUBE_OK);
    FILE *out = open_memstream(&r.out, &lo), *err = open_memstream(&r.err, &le);
    kctl_ctx c = {fx->client, &o, o.namespace_ ? o.namespace_ : NS, out, err, time(NULL)};
    if (kctl_check_names(&o, c.ns, perr, sizeof(perr)) != KUBE_OK) { /* as main does */
        fprintf(err, "error: %s\n", perr);
        r.code = KCTL_EXIT_ERROR;
    } else {
        r.code = o.cmd == KCTL_LIST       ? kctl_list(&c)
                 : o.cmd == KCTL_WHY      ? kctl_why(&c)
                 : o.cmd == KCTL_EVACUATE ? kctl_evacuate(&c)
                 : o.cmd == KCTL_VERSION  ? kctl_server_version(&c)
                                          : kctl_pin(&c);
    }
    fclose(out);
    fclose(err);
    kctl_options_free(&o);
    return r;
}

static void run_free(run_out *r)
{
    free(r->out);
    free(r->err);
}

static void list_falls_back_to_annotations(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "list");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_non_null(strstr(r.out, "NAME   NODE     NODE-STATUS   SINCE    BY       AGE\n"));
    assert_non_null(strstr(r.out, "\nvm-a   node-1   <none>        "));
    assert_non_null(strstr(r.out, "\nvm-c   <none>   <none>        <none>   <none>   "));
    run_free(&r);

    r = run(fx, "list -A --node node-2");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_non_null(strstr(r.out, "NAMESPACE   NAME   NODE     NODE-STATUS   SINCE"));
    assert_non_null(strstr(r.out, "\ndefault     vm-b   node-2   "));
    assert_null(strstr(r.out, "vm-a"));
    run_free(&r);

    r = run(fx, "list --node node-1 -o json");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    cJSON *list = cJSON_Parse(r.out);
    assert_non_null(list);
    assert_string_equal(kctl_str(list, "kind"), "VirtualMachinePinList");
    cJSON *items = cJSON_GetObjectItem(list, "items");
    assert_int_equal(cJSON_GetArraySize(items), 1);
    assert_string_equal(kctl_str(cJSON_GetArrayItem(items, 0), "by"), "alice");
    cJSON_Delete(list);
    run_free(&r);

    r = run(fx, "list -n kube-system");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "No resources found in kube-system namespace.\n");
    run_free(&r);
}

static void errors_are_the_server_status(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "why vm-nope");
    assert_int_equal(r.code, KCTL_EXIT_ERROR);
    assert_non_null(strstr(r.err, "Error from server (NotFound): no VirtualMachine or Pod named "
                                  "\"vm-nope\" in namespace \"default\""));
    run_free(&r);
    /* the emulator alone has no subresources.stickyvm.io: its 404 */
    r = run(fx, "pin vm-a --node node-2");
    assert_int_equal(r.code, KCTL_EXIT_ERROR);
    assert_non_null(strstr(r.err, "Error from server (NotFound): "));
    run_free(&r);
    /* evacuate finds vm-a through its annotation; its /pin fails */
    r = run(fx, "evacuate node-1 --to node-2");
    assert_int_equal(r.code, KCTL_EXIT_ERROR);
    assert_non_null(strstr(r.out, "VM     FROM     TO       RESULT\n"
                                  "vm-a   node-1   node-2   Failed (NotFound): "));
    assert_null(strstr(r.out, "vm-b"));
    assert_string_equal(r.err, "error: 1 VM(s) could not be moved (RESULT says why)\n");
    run_free(&r);
    r = run(fx, "evacuate node-0 --to node-2");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "No VMs pinned to node node-0 found in default namespace.\n");
    run_free(&r);
}

static void why_names_node_state_and_remedy(void **state)
{
    fixture *fx = *state;
    harness_response hr = {0};
    assert_int_equal(harness_request(fx->h, NULL, "PATCH", "/api/v1/nodes/node-1",
                                     "application/merge-patch+json",
                                     "{\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
                                     "\"maint\",\"value\":\"disk\",\"effect\":\"NoSchedule\"}]}}",
                                     &hr),
                     KUBE_OK);
    harness_response_free(&hr);
    assert_int_equal(
        harness_create(
            fx->h, "/api/v1/namespaces/" NS "/pods",
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
            "\"virt-launcher-vm-a-abcde\",\"labels\":{\"vm.kubevirt.io/name\":\"vm-a\"},"
            "\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
            "\"VirtualMachineInstance\",\"name\":\"vm-a\",\"uid\":\"u1\",\"controller\":"
            "true}]},\"spec\":{\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":"
            "\"compute\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
            NULL),
        KUBE_OK);
    assert_int_equal(
        harness_create(fx->h, "/apis/events.k8s.io/v1/namespaces/" NS "/events",
                       "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{"
                       "\"name\":\"ev1\"},\"eventTime\":\"2026-01-01T00:00:00.000000Z\","
                       "\"reportingController\":\"stickyvm\",\"reportingInstance\":\"s\","
                       "\"action\":\"Scheduling\",\"reason\":\"FailedScheduling\",\"type\":"
                       "\"Warning\",\"note\":\"0/3 nodes are available: 1 node(s) were "
                       "unschedulable.\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"" NS
                       "\",\"name\":\"virt-launcher-vm-a-abcde\"}}",
                       NULL),
        KUBE_OK);
    static const char *const targets[] = {"why vm-a", "why virt-launcher-vm-a-abcde"};
    for (size_t i = 0; i < 2; i++) {
        run_out r = run(fx, targets[i]);
        assert_int_equal(r.code, KCTL_EXIT_OK);
        assert_non_null(strstr(r.out, "VM:      default/vm-a\n"));
        assert_non_null(strstr(r.out, "Pod:     virt-launcher-vm-a-abcde (Pending)\n"));
        assert_non_null(strstr(r.out, "Node:    node-1 (Ready,SchedulingDisabled)\n"));
        assert_non_null(strstr(r.out, "0/3 nodes are available: 1 node(s) were unschedulable."));
        assert_non_null(strstr(r.out, "  - node node-1 is cordoned (spec.unschedulable)\n"));
        assert_non_null(strstr(r.out, "has the taint maint=disk:NoSchedule"));
        assert_non_null(strstr(r.out, "  kubectl uncordon node-1\n"));
        assert_non_null(strstr(r.out, "  kubectl taint nodes node-1 maint=disk:NoSchedule-\n"));
        assert_non_null(strstr(r.out, "  kubectl stickyvm pin vm-a -n default --node NODE"));
        run_free(&r);
    }
    run_out r = run(fx, "why vm-b -o json");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    cJSON *rep = cJSON_Parse(r.out);
    assert_non_null(rep);
    assert_true(
        cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "node"), "unschedulable")));
    cJSON_Delete(rep);
    run_free(&r);
    /* a pin to a node that is gone */
    assert_int_equal(
        harness_request(fx->h, NULL, "DELETE", "/api/v1/nodes/node-2", NULL, NULL, &hr), KUBE_OK);
    harness_response_free(&hr);
    r = run(fx, "why vm-b");
    assert_non_null(strstr(r.out, "Node:    node-2 (Missing): no such Node\n"));
    assert_non_null(strstr(r.out, "  kubectl stickyvm evacuate node-2 --to OTHER"));
    assert_non_null(strstr(r.out, "  kubectl stickyvm unpin vm-b -n default"));
    run_free(&r);
}

/* version: the Kubernetes server's, read from /version. */
static void version_reads_the_server(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "--version");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    if (strncmp(r.out, "Server Version: v", 17) != 0)
        fail_msg("version printed: %s / %s", r.out, r.err);
    run_free(&r);
}

/* A merge patch of path that must succeed. */
static void patch_ok(fixture *fx, const char *path, const char *body)
{
    harness_response hr = {0};
    assert_int_equal(
        harness_request(fx->h, NULL, "PATCH", path, "application/merge-patch+json", body, &hr),
        KUBE_OK);
    assert_true(hr.status == 200);
    harness_response_free(&hr);
}

/* VM name pinned to node, with a virt-launcher pod pod_name bound to
 * on_node ("": Pending). */
static void vm_with_pod(fixture *fx, const char *name, const char *node, const char *pod_name,
                        const char *on_node)
{
    char body[1536];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"%s\",\"annotations\":{\"stickyvm.io/node\":\"%s\"}},\"spec\":{"
             "\"runStrategy\":\"Always\",\"template\":{\"spec\":{\"domain\":{\"devices\":{}}}}}}",
             name, node);
    assert_int_equal(harness_create(fx->h, VMS_PATH, body, NULL), KUBE_OK);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"vm.kubevirt.io/name\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
             "\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":"
             "\"u-%s\",\"controller\":true}]},\"spec\":{\"schedulerName\":\"stickyvm\","
             "\"nodeName\":\"%s\",\"containers\":[{\"name\":\"compute\",\"image\":\"x\"}]}}",
             pod_name, name, name, name, on_node);
    assert_int_equal(harness_create(fx->h, "/api/v1/namespaces/" NS "/pods", body, NULL), KUBE_OK);
}

/* A FailedScheduling Event regarding pod with note. */
static void failed_scheduling(fixture *fx, const char *ev, const char *pod, const char *note)
{
    char body[1536];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{"
             "\"name\":\"%s\"},\"eventTime\":\"2026-01-01T00:00:00.000000Z\","
             "\"reportingController\":\"stickyvm\",\"reportingInstance\":\"s\","
             "\"action\":\"Scheduling\",\"reason\":\"FailedScheduling\",\"type\":"
             "\"Warning\",\"note\":\"%s\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":"
             "\"" NS "\",\"name\":\"%s\"}}",
             ev, note, pod);
    assert_int_equal(
        harness_create(fx->h, "/apis/events.k8s.io/v1/namespaces/" NS "/events", body, NULL),
        KUBE_OK);
}

/* A lost pinned node (Unknown, the unreachable taint) is said so, with
 * evacuate, pin --force and the on-node-loss policy as the ways out, and
 * never the removal of the control plane's taint nor "nothing". */
static void why_on_a_lost_node(void **state)
{
    fixture *fx = *state;
    vm_with_pod(fx, "vm-lost", "node-0", "virt-launcher-vm-lost-aaaaa", "node-0");
    patch_ok(fx, "/api/v1/nodes/node-0/status",
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\","
             "\"reason\":\"NodeStatusUnknown\"}]}}");
    patch_ok(fx, "/api/v1/nodes/node-0",
             "{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\","
             "\"effect\":\"NoSchedule\"},{\"key\":\"node.kubernetes.io/unreachable\","
             "\"effect\":\"NoExecute\"}]}}");
    run_out r = run(fx, "why vm-lost");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    if (!strstr(r.out, "Node:    node-0 (Unknown)\n") || !strstr(r.out, "is Unknown") ||
        !strstr(r.out, "  kubectl stickyvm evacuate node-0 --to OTHER") ||
        !strstr(r.out, "  kubectl stickyvm pin vm-lost -n default --node OTHER --force") ||
        !strstr(r.out, "stickyvm.io/on-node-loss=Unpin") || !strstr(r.out, "(policy now: Wait)") ||
        !strstr(r.out, "never remove the node.kubernetes.io/* taints") ||
        strstr(r.out, "kubectl taint nodes") || strstr(r.out, "nothing"))
        fail_msg("why on a lost node:\n%s", r.out);
    run_free(&r);
    patch_ok(fx, "/api/v1/nodes/node-0/status",
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    patch_ok(fx, "/api/v1/nodes/node-0", "{\"spec\":{\"taints\":null}}");
    r = run(fx, "why vm-lost");
    assert_non_null(strstr(r.out, "Node:    node-0 (Ready)\n"));
    assert_non_null(strstr(r.out, "What keeps it from running:\n  - nothing: the VM runs on its "
                                  "pinned node\n"));
    run_free(&r);
}

/* The pod runs on one node and the pin names another: said, never an
 * empty section. */
static void why_pin_and_pod_on_different_nodes(void **state)
{
    fixture *fx = *state;
    vm_with_pod(fx, "vm-moved", "node-0", "virt-launcher-vm-moved-bbbbb", "node-1");
    run_out r = run(fx, "why vm-moved");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    if (!strstr(r.out, "What keeps it from running:\n  - nothing now: the VM runs on node-1, but "
                       "it is pinned to node-0") ||
        !strstr(r.out, "virtctl restart vm-moved -n default"))
        fail_msg("why with the pod elsewhere:\n%s", r.out);
    run_free(&r);
}

/* A FailedScheduling that names a previous pin is not the reason; one
 * naming the current pin is. */
static void why_ignores_stale_events(void **state)
{
    fixture *fx = *state;
    vm_with_pod(fx, "vm-stale", "node-0", "virt-launcher-vm-stale-ccccc", "");
    failed_scheduling(fx, "ev-stale", "virt-launcher-vm-stale-ccccc",
                      "0/3 nodes are available: 1 node(s) were unschedulable. VM default/vm-stale "
                      "is pinned to node node-9 (annotation stickyvm.io/node), so the other nodes "
                      "were excluded by the pin");
    run_out r = run(fx, "why vm-stale");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    if (strstr(r.out, "node-9") || strstr(r.out, "\nFailedScheduling") ||
        !strstr(r.out, "What keeps it from running:\n  - nothing stickyvm can see: its pod is "
                       "Pending"))
        fail_msg("why with a stale event:\n%s", r.out);
    run_free(&r);
    failed_scheduling(fx, "ev-fresh", "virt-launcher-vm-stale-ccccc",
                      "0/3 nodes are available: 1 Insufficient cpu. VM default/vm-stale is pinned "
                      "to node node-0 (annotation stickyvm.io/node)");
    r = run(fx, "why vm-stale");
    if (!strstr(r.out, "\nFailedScheduling") || !strstr(r.out, "1 Insufficient cpu"))
        fail_msg("why with a current event:\n%s", r.out);
    run_free(&r);
}

/* ---- evacuate, against stickyvm-apiserver ---- */

#define WAIT_MS 30000

/* The node VM NS/name is pinned to, read from the VM ("" when unpinned). */
static void pinned_node(fixture *fx, const char *name, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *vm = NULL;
    snprintf(path, sizeof(path), VMS_PATH "/%s", name);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &vm), KUBE_OK);
    assert_int_equal(status, 200);
    const char *node =
        kctl_str(cJSON_GetObjectItem(cJSON_GetObjectItem(vm, "metadata"), "annotations"),
                 "stickyvm.io/node");
    snprintf(out, n, "%s", node ? node : "");
    cJSON_Delete(vm);
}

static void assert_pinned(fixture *fx, const char *name, const char *want)
{
    char node[64];
    pinned_node(fx, name, node, sizeof(node));
    assert_string_equal(node, want);
}

/* How many VMs of the namespace virtualmachinepins lists pinned to node
 * now, -1 when the request fails. */
static int listed_pins(fixture *fx, const char *node)
{
    char path[256];
    long status = 0;
    cJSON *list = NULL;
    int got = -1;
    snprintf(path, sizeof(path),
             "/apis/" KCTL_GROUP_VERSION "/namespaces/" NS
             "/virtualmachinepins?fieldSelector=node%%3D%s",
             node);
    if (harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &list) == KUBE_OK &&
        status == 200)
        got = cJSON_GetArraySize(cJSON_GetObjectItem(list, "items"));
    cJSON_Delete(list);
    return got;
}

/* Until virtualmachinepins (served by stickyvm-apiserver through the
 * aggregation layer, from its informer) lists n VMs of the namespace
 * pinned to node. */
static void wait_pins(fixture *fx, const char *node, int n)
{
    int got = -1;
    WAIT_TRUE_MS_MSG((got = listed_pins(fx, node)) == n, WAIT_MS,
                     "virtualmachinepins never listed %d VMs on %s (last %d)", n, node, got);
}

/* VM name pinned to node, labelled app=app, with a claim when given. */
static void create_pinned_vm(fixture *fx, const char *name, const char *node, const char *app,
                             const char *claim)
{
    char body[1024], volumes[256] = "";
    if (claim)
        snprintf(volumes, sizeof(volumes),
                 ",\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
                 "\"%s\"}}]",
                 claim);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"%s\",\"labels\":{\"app\":\"%s\"},\"annotations\":{\"stickyvm.io/node\":"
             "\"%s\"}},\"spec\":{\"runStrategy\":\"Always\",\"template\":{\"spec\":{\"domain\":"
             "{\"devices\":{}}%s}}}}",
             name, app, node, volumes);
    assert_int_equal(harness_create(fx->h, VMS_PATH, body, NULL), KUBE_OK);
}

/* A local PV on node-1 (hostname affinity) bound to claim. */
static void create_local_claim(fixture *fx, const char *claim)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":"
             "\"pv-%s\"},\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"accessModes\":["
             "\"ReadWriteOnce\"],\"local\":{\"path\":\"/mnt/disks/a\"},\"claimRef\":{"
             "\"namespace\":\"" NS "\",\"name\":\"%s\"},\"nodeAffinity\":{\"required\":{"
             "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
             "\"operator\":\"In\",\"values\":[\"node-1\"]}]}]}}}}",
             claim, claim);
    assert_int_equal(harness_create(fx->h, "/api/v1/persistentvolumes", body, NULL), KUBE_OK);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"%s\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
             "{\"storage\":\"1Gi\"}},\"volumeName\":\"pv-%s\"}}",
             claim, claim);
    assert_int_equal(
        harness_create(fx->h, "/api/v1/namespaces/" NS "/persistentvolumeclaims", body, NULL),
        KUBE_OK);
}

static int evac_setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts o = HARNESS_OPTS_INIT;
    char err[256], endpoint[AF_FLAG_LEN];
    int port = harness_free_port();
    const char *args[] = {af_endpoint_flag(port, endpoint, sizeof(endpoint)),
                          "--aggregator-probe-interval-ms=200", NULL};
    apis_options ao;
    o.nodes = 3;
    o.extra_args = args;
    assert_int_equal(harness_start(&o, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->cfg, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(kube_client_new(fx->cfg, NULL, &fx->client), KUBE_OK);
    af_options(fx->h, port, &ao);
    af_start(&ao, &fx->server);
    af_register_apiservice(fx->h);
    create_local_claim(fx, "vm-db-data");
    create_pinned_vm(fx, "vm-web", "node-1", "web", NULL);
    create_pinned_vm(fx, "vm-db", "node-1", "db", "vm-db-data");
    create_pinned_vm(fx, "vm-cache", "node-2", "db", NULL);
    *state = fx;
    wait_pins(fx, "node-1", 2);
    return 0;
}

static int evac_teardown(void **state)
{
    fixture *fx = *state;
    af_stop(&fx->server);
    return group_teardown(state);
}

/* Unpin mode: the VM whose local volume allows node-1 alone is refused,
 * also in a dry run, until --force (which the dry run here previews). */
static void evacuate_unpin_refuses_local_volumes_until_force(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "evacuate node-1 -l app=db");
    assert_int_equal(r.code, KCTL_EXIT_ERROR);
    assert_string_equal(r.out, "VM      FROM     TO       RESULT\n"
                               "vm-db   node-1   <none>   Refused: volume \"data\" "
                               "(PersistentVolumeClaim \"vm-db-data\", PersistentVolume "
                               "\"pv-vm-db-data\") lives on node node-1, and its node affinity "
                               "allows no other node\n");
    assert_non_null(strstr(r.err, "error: 1 VM(s) refused: their local volumes live on node-1"));
    run_free(&r);
    assert_pinned(fx, "vm-db", "node-1");

    r = run(fx, "evacuate node-1 -l app=db --force --dry-run");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_string_equal(r.out, "VM      FROM     TO       RESULT\n"
                               "vm-db   node-1   <none>   Unpinned (server dry run)\n");
    run_free(&r);
    assert_pinned(fx, "vm-db", "node-1");
}

/* The command that once moved vm-db's pin from a dry run of vm-web's:
 * refused before any request; and with the check bypassed, the escaped
 * path still cannot reach another VM. vm-cache stays where it is. */
static void hostile_namespace_moves_nothing(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "pin vm-web -n default/virtualmachines/vm-cache/pin?node=node-0# "
                        "--node node-1 --dry-run");
    assert_int_equal(r.code, KCTL_EXIT_ERROR);
    assert_string_equal(r.out, "");
    assert_true(strncmp(r.err,
                        "error: invalid namespace "
                        "\"default/virtualmachines/vm-cache/pin?node=node-0#\": a lowercase "
                        "RFC 1123 label must consist of",
                        60) == 0);
    run_free(&r);
    assert_pinned(fx, "vm-cache", "node-2");

    kctl_options o = {.cmd = KCTL_PIN, .target = "vm-web", .node = "node-1", .dry_run = 1};
    char *out = NULL, *err = NULL;
    size_t lo = 0, le = 0;
    FILE *fo = open_memstream(&out, &lo), *fe = open_memstream(&err, &le);
    kctl_ctx c = {fx->client, &o, "default/virtualmachines/vm-cache/pin?node=node-0#",
                  fo,         fe, time(NULL)};
    assert_int_equal(kctl_pin(&c), KCTL_EXIT_ERROR);
    fclose(fo);
    fclose(fe);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "Error from server"));
    free(out);
    free(err);
    assert_pinned(fx, "vm-cache", "node-2");
}

static void evacuate_dry_run_changes_nothing(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "evacuate node-1 --to node-2 --dry-run");
    assert_int_equal(r.code, KCTL_EXIT_ERROR); /* vm-db is refused */
    assert_non_null(strstr(r.out, "VM       FROM     TO       RESULT\n"));
    assert_non_null(strstr(r.out, "\nvm-web   node-1   node-2   Repinned (server dry run)\n"));
    assert_non_null(strstr(r.out, "\nvm-db    node-1   node-2   Refused: volume \"data\" "
                                  "(PersistentVolumeClaim \"vm-db-data\", PersistentVolume "
                                  "\"pv-vm-db-data\") lives on node node-1"));
    assert_non_null(strstr(r.err, "error: 1 VM(s) refused: their local volumes live on node-1"));
    run_free(&r);
    assert_pinned(fx, "vm-web", "node-1");
    assert_pinned(fx, "vm-db", "node-1");
}

static void evacuate_to_refuses_local_volumes_until_force(void **state)
{
    fixture *fx = *state;
    run_out r = run(fx, "evacuate node-1 --to node-2");
    assert_int_equal(r.code, KCTL_EXIT_ERROR);
    assert_non_null(strstr(r.out, "\nvm-web   node-1   node-2   Repinned\n"));
    assert_non_null(strstr(r.out, "\nvm-db    node-1   node-2   Refused: "));
    run_free(&r);
    assert_pinned(fx, "vm-web", "node-2");
    assert_pinned(fx, "vm-db", "node-1");

    wait_pins(fx, "node-1", 1);
    r = run(fx, "evacuate node-1 --to node-2 --force");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_string_equal(r.out, "VM      FROM     TO       RESULT\n"
                               "vm-db   node-1   node-2   Repinned\n");
    assert_string_equal(r.err, "");
    run_free(&r);
    assert_pinned(fx, "vm-db", "node-2");
}

static void evacuate_unpins_the_selected_vms(void **state)
{
    fixture *fx = *state;
    wait_pins(fx, "node-2", 3);
    run_out r = run(fx, "evacuate node-2 -A -l app=db --dry-run");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_non_null(strstr(r.out, "NAMESPACE   VM         FROM     TO       RESULT\n"));
    assert_non_null(strstr(r.out, "\ndefault     vm-cache   node-2   <none>   Unpinned (server dry "
                                  "run)\n"));
    assert_null(strstr(r.out, "vm-web"));
    run_free(&r);
    assert_pinned(fx, "vm-cache", "node-2");

    r = run(fx, "evacuate node-2 -l app=db");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_non_null(strstr(r.out, "\nvm-cache   node-2   <none>   Unpinned\n"));
    assert_non_null(strstr(r.out, "\nvm-db      node-2   <none>   Unpinned\n"));
    run_free(&r);
    assert_pinned(fx, "vm-cache", "");
    assert_pinned(fx, "vm-db", "");
    assert_pinned(fx, "vm-web", "node-2");
}

/* evacuate on its own thread (run() blocks). */
typedef struct evac_thread {
    fixture *fx;
    const char *line;
    run_out r;
} evac_thread;

static void *evac_main(void *arg)
{
    evac_thread *t = arg;
    t->r = run(t->fx, t->line);
    return NULL;
}

/* Whether the emulator's log holds a request of verb on resource for
 * name (in flight or answered). */
static int requested(fixture *fx, const char *verb, const char *resource, const char *name)
{
    cJSON *items = NULL, *it;
    int n = 0;
    assert_int_equal(harness_requests(fx->h, verb, resource, NULL, &items), KUBE_OK);
    cJSON_ArrayForEach(it, items)
    {
        const char *nm = kctl_str(it, "name");
        n += nm && strcmp(nm, name) == 0;
    }
    cJSON_Delete(items);
    return n;
}

/* The race of #30 (4): evacuate lists evac-a and evac-b on node-0; its
 * first request (evac-a's) is slowed 2.5 s by the emulator; meanwhile
 * another operator re-pins evac-b to node-1. evac-b's request carries
 * from=node-0 and is refused: evac-b stays on node-1, listed Skipped with
 * node-1 in FROM; evac-a moves, FROM its previousNode. (Without from=,
 * evac-b was moved to node-2 and the table said node-0 -> node-2.) */
static void evacuate_skips_a_vm_moved_meanwhile(void **state)
{
    fixture *fx = *state;
    static const char *const pin_res[] = {"virtualmachines/pin", NULL}, *const first[] = {"evac-a",
                                                                                          NULL};
    const harness_fault_rule slow = {.action = HARNESS_FAULT_STATUS,
                                     .delay_ms = 2500,
                                     .count = 1,
                                     .resources = pin_res,
                                     .names = first};
    create_pinned_vm(fx, "evac-a", "node-0", "evac", NULL);
    create_pinned_vm(fx, "evac-b", "node-0", "evac", NULL);
    wait_pins(fx, "node-0", 2);
    assert_int_equal(harness_clear_requests(fx->h), KUBE_OK);
    assert_int_equal(harness_set_fault_rules(fx->h, &slow, 1), KUBE_OK);

    evac_thread t = {fx, "evacuate node-0 --to node-2 -l app=evac", {0}};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, evac_main, &t), 0);
    WAIT_TRUE_MS(requested(fx, "get", "virtualmachines/pin", "evac-a") > 0, WAIT_MS);
    assert_int_equal(requested(fx, "get", "virtualmachines/pin", "evac-b"), 0);
    /* another operator, while evac-a's request is held */
    cJSON *j = NULL;
    long status = 0;
    assert_int_equal(harness_request_json(fx->h, NULL, "GET",
                                          "/apis/" KCTL_GROUP_VERSION "/namespaces/" NS
                                          "/virtualmachines/evac-b/pin?node=node-1",
                                          NULL, &status, &j),
                     KUBE_OK);
    assert_int_equal(status, 200);
    cJSON_Delete(j);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);

    assert_int_equal(t.r.code, KCTL_EXIT_OK);
    assert_non_null(strstr(t.r.out, "\nevac-a   node-0   node-2   Repinned\n"));
    assert_non_null(strstr(t.r.out, "\nevac-b   node-1   node-2   Skipped: re-pinned to node-1 "
                                    "meanwhile, not moved\n"));
    assert_non_null(strstr(t.r.err, "1 VM(s) skipped: no longer pinned to node-0"));
    run_free(&t.r);
    assert_pinned(fx, "evac-a", "node-2");
    assert_pinned(fx, "evac-b", "node-1");
}

int test_group_kubectl_evacuate_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_namespace_moves_nothing),
        cmocka_unit_test(evacuate_dry_run_changes_nothing),
        cmocka_unit_test(evacuate_unpin_refuses_local_volumes_until_force),
        cmocka_unit_test(evacuate_to_refuses_local_volumes_until_force),
        cmocka_unit_test(evacuate_unpins_the_selected_vms),
        cmocka_unit_test(evacuate_skips_a_vm_moved_meanwhile),
    };
    return cmocka_run_group_tests_name("kubectl_evacuate_integration", tests, evac_setup,
                                       evac_teardown);
}

int test_group_kubectl_plugin_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_falls_back_to_annotations),
        cmocka_unit_test(errors_are_the_server_status),
        cmocka_unit_test(why_names_node_state_and_remedy),
        cmocka_unit_test(why_on_a_lost_node),
        cmocka_unit_test(why_pin_and_pod_on_different_nodes),
        cmocka_unit_test(why_ignores_stale_events),
        cmocka_unit_test(version_reads_the_server),
    };
    return cmocka_run_group_tests_name("kubectl_plugin_integration", tests, group_setup,
                                       group_teardown);
}
