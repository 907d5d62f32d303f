/*
 * tests/integration/test_kubectl_plugin_integration.c - kubectl-stickyvm's
 * commands (apiserver/kubectl/cmd.h) against the emulator, in process:
 * list on a server without the virtualmachinepins resource (the emulator
 * alone: 404) falls back to the VMs' pin annotations, with the table, -A,
 * --node, -o json and the empty answer; why explains a cordoned, tainted
 * pinned node from the node, the pod and its FailedScheduling event, and a
 * missing one; errors are the server's Status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "harness.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"

#define NS "default"
#define VMS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
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
    r.code = o.cmd == KCTL_LIST ? kctl_list(&c) : o.cmd == KCTL_WHY ? kctl_why(&c) : kctl_pin(&c);
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
    assert_non_null(strstr(r.out, "NAME   NODE     SINCE    BY       AGE\n"));
    assert_non_null(strstr(r.out, "\nvm-a   node-1   "));
    assert_non_null(strstr(r.out, "\nvm-c   <none>   <none>   <none>   "));
    run_free(&r);

    r = run(fx, "list -A --node node-2");
    assert_int_equal(r.code, KCTL_EXIT_OK);
    assert_non_null(strstr(r.out, "NAMESPACE   NAME   NODE     SINCE"));
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
        assert_non_null(strstr(r.out, "Node:    node-1 (cordoned)\n"));
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
    assert_non_null(strstr(r.out, "Node:    node-2 (does not exist)\n"));
    assert_non_null(strstr(r.out, "  kubectl stickyvm unpin vm-b -n default"));
    run_free(&r);
}

int test_group_kubectl_plugin_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_falls_back_to_annotations),
        cmocka_unit_test(errors_are_the_server_status),
        cmocka_unit_test(why_names_node_state_and_remedy),
    };
    return cmocka_run_group_tests_name("kubectl_plugin_integration", tests, group_setup,
                                       group_teardown);
}
