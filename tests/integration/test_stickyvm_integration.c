/*
 * tests/integration/test_stickyvm_integration.c - StickyVM against the API
 * emulator. The test plays KubeVirt's virt-controller: it creates the VM,
 * then the VMI owned by it, then the virt-launcher pod owned by the VMI.
 *
 * Plugin level (the plugin on a real client, informer factory and recorder, extension
 * points called directly): the first placement writes exactly one merge
 * patch and reads nothing; a pin set concurrently (as /pin does) is kept;
 * a conflict without a pin is retried; a VMI the cache has not seen costs
 * at most one GET; a completed live migration moves the pin, only while
 * the scheduler leads, also when it completed while no replica led; a
 * re-pin to the source node after a followed migration stays across a
 * leader change; a failed migration, or a VM pinned to a third node, is
 * left alone. The pin controller beside the plugin (as scheduler.c builds
 * it): a VM whose pod was bound while no replica led is pinned by the next
 * leader; an unpin after the bind is never undone; a PostBind write
 * answered 429 six times then reset still lands, through the controller.
 *
 * Scheduler level (stickyvm-scheduler in-process with the example
 * configuration): the first schedule pins the VM; the pod and VMI are
 * deleted and recreated 20 times and every pod lands on the pinned node
 * although it is the fullest, with one VM write in all; with the node
 * cordoned the pod waits and binds there once uncordoned; with the node
 * deleted the FailedScheduling event names the unpin command, and when it
 * comes back the pod binds there. Two StickyVM profiles run one pin
 * controller (one PATCH per migration); two pin keys are refused.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "framework/framework.h"
#include "harness.h"
#include "kubevirt_chain.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "unit/test_plugin_util.h"
#include "kube/machinery/factory.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/machinery/recorder.h"
#include "pins/controller.h"
#include "scheduler/pins/controller_testing.h"
#include "pins/controller_testing.h"
#include "kube/machinery/recorder_testing.h"
#include "plugins/plugins.h"
#include "plugins/stickyvm/stickyvm.h"
#include "scheduler/plugins/stickyvm/stickyvm_testing.h"
#include "scheduler.h"
#include "scheduler_testing.h"
#include "framework/types_testing.h"

#define NS "default"
#define VMS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"
#define VMIS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstances"
#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/" NS "/events"
#define CONVERGE_MS 20000
#define CONFIG_FILE STICKYVM_SOURCE_DIR "/manifests/scheduler/stickyvm-scheduler-config.yaml"

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
    kube_recorder *rec;
    /* per test */
    kube_factory *informers;
    fw_snapshot *snap;
    fw_handle handle;
    void *sv;
    sched_pins *pins; /* the pin controller beside the plugin */
    /* requests the test itself made on VMs since the last counter reset */
    int64_t own_vm_gets, own_vm_patches;
    /* the whole scheduler (the last tests, in order) */
    sched_config *scfg;
    sched_scheduler *sched;
    char sticky_vm_uid[64], sticky_node[256], sticky_pod[128];
} fixture;

static atomic_int g_leader = 1;
static atomic_int g_leader_checks;

static int fake_is_leader(void *ud)
{
    atomic_fetch_add(&g_leader_checks, 1);
    return atomic_load(&g_leader);
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

static int group_setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts o = HARNESS_OPTS_INIT;
    kube_client_options co;
    kube_recorder_options ro;
    char err[256];
    o.nodes = 3;
    o.bookmark_interval_ms = 500;
    sched_pins_status_refresh_ms_set(100);
    assert_int_equal(harness_start(&o, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->cfg, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    assert_int_equal(kube_client_new(fx->cfg, &co, &fx->client), KUBE_OK);
    kube_recorder_options_default(&ro);
    ro.reporting_instance = "stickyvm-scheduler-test";
    assert_int_equal(kube_recorder_new(fx->client, &ro, &fx->rec), KUBE_OK);
    *state = fx;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *fx = *state;
    sched_scheduler_free(fx->sched);
    sched_config_free(fx->scfg);
    kube_recorder_free(fx->rec);
    kube_client_free(fx->client);
    kube_config_free(fx->cfg);
    harness_stop(fx->h);
    free(fx);
    sched_pins_status_refresh_ms_set(0);
    return 0;
}

static kube_object *decode(const kube_codec *codec, const char *text)
{
    cJSON *j = cJSON_Parse(text);
    kube_object *o = NULL;
    assert_non_null(j);
    assert_int_equal(codec->decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return o;
}

static fw_snapshot *snapshot_of_seeded_nodes(void)
{
    fw_node_info *nis[3];
    fw_snapshot *snap = NULL;
    for (int i = 0; i < 3; i++) {
        char text[256];
        snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"node-%d\"}}", i);
        kube_object *node = decode(&kube_node_codec, text);
        nis[i] = fw_node_info_new();
        assert_int_equal(fw_node_info_set_node(nis[i], (kube_node *)node), KUBE_OK);
        kube_object_unref(node);
    }
    assert_int_equal(fw_snapshot_from_nodes(nis, 3, &snap), KUBE_OK);
    for (int i = 0; i < 3; i++)
        fw_node_info_free(nis[i]);
    return snap;
}

/* The pin controller on the fixture's factory (as scheduler.c builds it),
 * handed to the plugin as its factory's argument (plugin_up). */
static void pins_up(fixture *fx)
{
    static const char *const names[] = {"stickyvm"};
    kube_informer_options po = {.resource = &KUBE_RES_PODS, .codec = &kube_pod_codec};
    kube_lister *pods = NULL;
    assert_int_equal(kube_factory_lister(fx->informers, &po, &pods), KUBE_OK);
    sched_pins_options o = {.client = fx->client,
                            .informers = fx->informers,
                            .pods = pods,
                            .recorder = fx->rec,
                            .key = KUBE_PIN_DEFAULT_KEY,
                            .scheduler_names = names,
                            .n_scheduler_names = 1,
                            .leadership = fx->handle.svc.leadership};
    assert_int_equal(sched_pins_new(&o, &fx->pins), KUBE_OK);
}

/* Starts the plugin on a fresh informer factory once the objects exist, waits for the
 * informers, then resets the emulator's counters. */
static void plugin_up(fixture *fx)
{
    char err[256] = "";
    assert_int_equal(kube_factory_new(fx->client, &fx->informers), KUBE_OK);
    fx->snap = snapshot_of_seeded_nodes();
    memset(&fx->handle, 0, sizeof(fx->handle));
    fx->handle.profile_name = "stickyvm";
    fx->handle.svc.client = fx->client;
    fx->handle.svc.informers = fx->informers;
    fx->handle.svc.recorder = fx->rec;
    fx->handle.svc.snapshot = fx->snap;
    fx->handle.svc.leadership.is_leader = fake_is_leader;
    pins_up(fx);
    plugin_pin_handoff pins = sched_pins_handoff(fx->pins); /* the factory's argument */
    if (plugin_stickyvm.create(NULL, &fx->handle, &pins, &fx->sv, err, sizeof(err)) != KUBE_OK)
        fail_msg("create: %s", err);
    assert_int_equal(kube_factory_start(fx->informers), KUBE_OK);
    assert_int_equal(sched_pins_start(fx->pins), KUBE_OK);
    assert_int_equal(kube_factory_wait_synced(fx->informers, CONVERGE_MS), KUBE_OK);
    assert_int_equal(harness_reset_counters(fx->h), KUBE_OK);
    fx->own_vm_gets = fx->own_vm_patches = 0;
}

static int test_teardown(void **state)
{
    fixture *fx = *state;
    if (fx->informers)
        kube_factory_stop(fx->informers);
    if (fx->sv)
        plugin_stickyvm.destroy(fx->sv);
    sched_pins_free(fx->pins);
    kube_factory_free(fx->informers);
    fw_snapshot_free(fx->snap);
    fx->informers = NULL, fx->sv = NULL, fx->snap = NULL, fx->pins = NULL;
    atomic_store(&g_leader, 1);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Playing virt-controller                                             */
/* ------------------------------------------------------------------ */

/* Creates VM name (pin NULL: no annotation); returns its uid (static). */
static const char *create_vm(fixture *fx, const char *name, const char *pin)
{
    static char uid[64];
    char ann[256] = "";
    if (pin)
        snprintf(ann, sizeof(ann), "\"stickyvm.io/node\":\"%s\"", pin);
    kvc_create_vm(fx->h, NS, name, ann, NULL, uid, sizeof(uid));
    return uid;
}

/* Creates the VMI of VM name (same name, controller owner); returns its
 * uid (static). */
static const char *create_vmi(fixture *fx, const char *name, const char *vm_uid)
{
    static char uid[64];
    kvc_create_vmi(fx->h, NS, name, vm_uid, uid, sizeof(uid));
    return uid;
}

/* Creates VM and VMI name; returns the VMI uid (static). */
static const char *create_chain(fixture *fx, const char *name, const char *pin)
{
    char vm_uid[64];
    kube_strlcpy(vm_uid, create_vm(fx, name, pin), sizeof(vm_uid));
    return create_vmi(fx, name, vm_uid);
}

/* The virt-launcher pod of VMI name (decoded locally: the plugin is
 * called directly). */
static fw_pod_info *launcher_pod(const char *vmi, const char *vmi_uid, const char *suffix)
{
    char text[1536];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"virt-launcher-%s-%s\",\"namespace\":\"" NS "\","
             "\"uid\":\"pod-%s-%s\",\"labels\":{\"kubevirt.io\":\"virt-launcher\","
             "\"kubevirt.io/created-by\":\"%s\",\"vm.kubevirt.io/name\":\"%s\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
             "\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
             "\"blockOwnerDeletion\":true}]},\"spec\":{\"schedulerName\":\"stickyvm\","
             "\"containers\":[{\"name\":\"compute\"}]}}",
             vmi, suffix, vmi, suffix, vmi_uid, vmi, vmi, vmi_uid);
    kube_object *o = decode(&kube_pod_codec, text);
    fw_pod_info *pi = NULL;
    assert_int_equal(fw_pod_info_new((kube_pod *)o, &pi), KUBE_OK);
    kube_object_unref(o);
    return pi;
}

/* The VM's annotation key as the server holds it ("" when none). */
static void server_annotation(fixture *fx, const char *vm, const char *key, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), VMS_PATH "/%s", vm);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    assert_int_equal(status, 200);
    fx->own_vm_gets++;
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "metadata"), "annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, key);
    kube_strlcpy(out, cJSON_IsString(v) ? v->valuestring : "", n);
    cJSON_Delete(j);
}

/* The VM's pin as the server holds it ("" when none). */
static void server_pin(fixture *fx, const char *vm, char *out, size_t n)
{
    server_annotation(fx, vm, "stickyvm.io/node", out, n);
}

static void wait_pin(fixture *fx, const char *vm, const char *want)
{
    char pin[256] = "";
    WAIT_TRUE_MS_MSG((server_pin(fx, vm, pin, sizeof(pin)), strcmp(pin, want) == 0), CONVERGE_MS,
                     "VM %s pinned to \"%s\", want \"%s\"", vm, pin, want);
}

/* A merge patch as admin (what /pin or another client does). */
static void merge_patch(fixture *fx, const char *path, const char *body)
{
    harness_response r = {0};
    assert_int_equal(
        harness_request(fx->h, NULL, "PATCH", path, "application/merge-patch+json", body, &r),
        KUBE_OK);
    if (r.status != 200)
        fail_msg("PATCH %s: %ld %s", path, r.status, r.body);
    if (strncmp(path, VMS_PATH "/", strlen(VMS_PATH) + 1) == 0)
        fx->own_vm_patches++;
    harness_response_free(&r);
}

/* Requests the plugin made (the emulator's counters less the test's own). */
static int64_t count(fixture *fx, const char *verb, const char *resource)
{
    int64_t n = harness_count(fx->h, verb, resource);
    assert_true(n >= 0);
    if (strcmp(resource, "virtualmachines") == 0 && strcmp(verb, "get") == 0)
        n -= fx->own_vm_gets;
    if (strcmp(resource, "virtualmachines") == 0 && strcmp(verb, "patch") == 0)
        n -= fx->own_vm_patches;
    return n;
}

/* PreFilter in a fresh cycle state (returned; caller frees). */
static fw_cycle_state *pre_filter(fixture *fx, const fw_pod_info *pi, fw_code want, char *pin_out,
                                  size_t n)
{
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *res = NULL;
    fw_status *st = plugin_stickyvm.pre_filter(fx->sv, cs, pi, &res);
    char msg[512];
    fw_status_message(st, msg, sizeof(msg));
    if (fw_status_code(st) != want)
        fail_msg("PreFilter: %s (%s)", fw_code_string(fw_status_code(st)), msg);
    if (pin_out)
        kube_strlcpy(pin_out, res && res->n == 1 ? res->node_names[0] : "", n);
    fw_pre_filter_result_free(res);
    fw_status_free(st);
    return cs;
}

static sched_pins_stats pins_stats(fixture *fx)
{
    sched_pins_stats s;
    sched_pins_stats_get(fx->pins, &s);
    return s;
}

static stickyvm_stats stats(fixture *fx)
{
    stickyvm_stats s;
    stickyvm_stats_get(fx->sv, &s);
    return s;
}

/* An events.k8s.io event regarding VM vm with this reason whose note
 * contains text exists. */
static int has_vm_event(fixture *fx, const char *vm, const char *reason, const char *text)
{
    long status = 0;
    cJSON *list = NULL;
    int found = 0;
    assert_int_equal(kube_recorder_flush(fx->rec, CONVERGE_MS), KUBE_OK);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", EVENTS_PATH, NULL, &status, &list),
                     KUBE_OK);
    assert_int_equal(status, 200);
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *reg = cJSON_GetObjectItemCaseSensitive(item, "regarding");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(reg, "kind");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(reg, "name");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(item, "reason");
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(item, "note");
        if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "VirtualMachine") &&
            cJSON_IsString(name) && !strcmp(name->valuestring, vm) && cJSON_IsString(r) &&
            !strcmp(r->valuestring, reason) && cJSON_IsString(note) &&
            strstr(note->valuestring, text))
            found = 1;
    }
    cJSON_Delete(list);
    return found;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void test_first_placement_one_write(void **state)
{
    fixture *fx = *state;
    char vmi_uid[64], pin[256];
    kube_strlcpy(vmi_uid, create_chain(fx, "vm-first", NULL), sizeof(vmi_uid));
    plugin_up(fx);

    fw_pod_info *pi = launcher_pod("vm-first", vmi_uid, "aaaaa");
    fw_cycle_state *cs = pre_filter(fx, pi, FW_SKIP, NULL, 0);
    plugin_stickyvm.post_bind(fx->sv, cs, pi, "node-1");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pi);
    server_pin(fx, "vm-first", pin, sizeof(pin));
    assert_string_equal(pin, "node-1");
    assert_int_equal(count(fx, "patch", "virtualmachines"), 1);
    assert_int_equal(count(fx, "get", "virtualmachines"), 0);
    assert_int_equal(count(fx, "get", "virtualmachineinstances"), 0);
    assert_int_equal(stats(fx).pins_recorded, 1);

    /* The next pod, right away: pinned (before or after the informer shows
     * the write), filtered to node-1, and no second write. */
    pi = launcher_pod("vm-first", vmi_uid, "bbbbb");
    cs = pre_filter(fx, pi, FW_SUCCESS, pin, sizeof(pin));
    assert_string_equal(pin, "node-1");
    plugin_stickyvm.post_bind(fx->sv, cs, pi, "node-1");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pi);
    assert_int_equal(count(fx, "patch", "virtualmachines"), 1);
    assert_int_equal(count(fx, "get", "virtualmachines"), 0);
    assert_int_equal(stats(fx).pinned_pods_scheduled, 1);
    assert_true(has_vm_event(fx, "vm-first", "Pinned", "node-1"));
}

/* A pin set between PreFilter and PostBind (e.g. through /pin) wins. */
static void test_concurrent_pin_is_kept(void **state)
{
    fixture *fx = *state;
    char vmi_uid[64], pin[256];
    kube_strlcpy(vmi_uid, create_chain(fx, "vm-race", NULL), sizeof(vmi_uid));
    plugin_up(fx);

    fw_pod_info *pi = launcher_pod("vm-race", vmi_uid, "aaaaa");
    fw_cycle_state *cs = pre_filter(fx, pi, FW_SKIP, NULL, 0);
    merge_patch(fx, VMS_PATH "/vm-race",
                "{\"metadata\":{\"annotations\":{\"stickyvm.io/node\":"
                "\"node-2\"}}}");
    plugin_stickyvm.post_bind(fx->sv, cs, pi, "node-0");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pi);

    server_pin(fx, "vm-race", pin, sizeof(pin));
    assert_string_equal(pin, "node-2");
    stickyvm_stats s = stats(fx);
    assert_int_equal(s.pins_kept, 1);
    assert_int_equal(s.pins_recorded, 0);
    assert_int_equal(s.pin_record_errors, 0);
    assert_int_equal(count(fx, "patch", "virtualmachines"), 1); /* the stale one */
    assert_int_equal(count(fx, "get", "virtualmachines"), 1);   /* the re-read */

    pi = launcher_pod("vm-race", vmi_uid, "bbbbb");
    cs = pre_filter(fx, pi, FW_SUCCESS, pin, sizeof(pin));
    assert_string_equal(pin, "node-2");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pi);
}

/* An unpin between PreFilter and PostBind that saw this very pod bound
 * (stickyvm.io/seen-pods) wins: PostBind's conflict yields. One that saw
 * only an older pod does not: the pod is a newer placement, pinned. */
static void test_unpin_that_saw_the_pod_wins(void **state)
{
    fixture *fx = *state;
    char uid_saw[64], uid_old[64], pin[256];
    kube_strlcpy(uid_saw, create_chain(fx, "vm-saw", NULL), sizeof(uid_saw));
    kube_strlcpy(uid_old, create_chain(fx, "vm-saw-old", NULL), sizeof(uid_old));
    plugin_up(fx);

    fw_pod_info *pi = launcher_pod("vm-saw", uid_saw, "aaaaa");
    fw_pod_info *po = launcher_pod("vm-saw-old", uid_old, "bbbbb");
    fw_cycle_state *cs = pre_filter(fx, pi, FW_SKIP, NULL, 0);
    fw_cycle_state *co = pre_filter(fx, po, FW_SKIP, NULL, 0);
    merge_patch(fx, VMS_PATH "/vm-saw",
                "{\"metadata\":{\"annotations\":{\"stickyvm.io/pin-reason\":\"API\","
                "\"stickyvm.io/seen-pods\":\"pod-vm-saw-aaaaa\"}}}");
    merge_patch(fx, VMS_PATH "/vm-saw-old",
                "{\"metadata\":{\"annotations\":{\"stickyvm.io/pin-reason\":\"API\","
                "\"stickyvm.io/seen-pods\":\"pod-vm-saw-old-aaaaa\"}}}");
    plugin_stickyvm.post_bind(fx->sv, cs, pi, "node-0");
    plugin_stickyvm.post_bind(fx->sv, co, po, "node-1");
    fw_cycle_state_free(cs);
    fw_cycle_state_free(co);
    fw_pod_info_unref(pi);
    fw_pod_info_unref(po);

    server_pin(fx, "vm-saw", pin, sizeof(pin));
    assert_string_equal(pin, "");
    server_pin(fx, "vm-saw-old", pin, sizeof(pin));
    assert_string_equal(pin, "node-1");
    assert_int_equal(stats(fx).pins_recorded, 1);
}

/* A conflict caused by another change (no pin) is retried with the new
 * resourceVersion. */
static void test_conflict_without_pin_is_retried(void **state)
{
    fixture *fx = *state;
    char vmi_uid[64], pin[256];
    kube_strlcpy(vmi_uid, create_chain(fx, "vm-busy", NULL), sizeof(vmi_uid));
    plugin_up(fx);

    fw_pod_info *pi = launcher_pod("vm-busy", vmi_uid, "aaaaa");
    fw_cycle_state *cs = pre_filter(fx, pi, FW_SKIP, NULL, 0);
    merge_patch(fx, VMS_PATH "/vm-busy", "{\"metadata\":{\"labels\":{\"team\":\"a\"}}}");
    plugin_stickyvm.post_bind(fx->sv, cs, pi, "node-0");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pi);

    server_pin(fx, "vm-busy", pin, sizeof(pin));
    assert_string_equal(pin, "node-0");
    assert_int_equal(stats(fx).pins_recorded, 1);
    assert_int_equal(count(fx, "patch", "virtualmachines"), 2);
    assert_int_equal(count(fx, "get", "virtualmachines"), 1);
}

/* A VMI created just now (the pod arrives before the informer delivers
 * it) costs at most one GET. */
static void test_new_vmi_at_most_one_get(void **state)
{
    fixture *fx = *state;
    char vmi_uid[64];
    plugin_up(fx);
    kube_strlcpy(vmi_uid, create_chain(fx, "vm-new", NULL), sizeof(vmi_uid));
    int64_t before =
        count(fx, "get", "virtualmachineinstances") + count(fx, "get", "virtualmachines");
    fw_pod_info *pi = launcher_pod("vm-new", vmi_uid, "aaaaa");
    fw_cycle_state_free(pre_filter(fx, pi, FW_SKIP, NULL, 0));
    fw_pod_info_unref(pi);
    int64_t gets =
        count(fx, "get", "virtualmachineinstances") + count(fx, "get", "virtualmachines") - before;
    assert_true(gets <= 1);
    assert_true(stats(fx).api_reads <= 1);
}

/* A VMI that does not exist: unschedulable after exactly one GET. */
static void test_missing_vmi_one_get(void **state)
{
    fixture *fx = *state;
    plugin_up(fx);
    fw_pod_info *pi = launcher_pod("vm-ghost", "ghost-uid", "aaaaa");
    fw_cycle_state_free(pre_filter(fx, pi, FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL, 0));
    fw_pod_info_unref(pi);
    assert_int_equal(count(fx, "get", "virtualmachineinstances"), 1);
    assert_int_equal(count(fx, "get", "virtualmachines"), 0);
}

static void complete_migration(fixture *fx, const char *vmi, const char *from, const char *to)
{
    char path[256], body[512];
    snprintf(path, sizeof(path), VMIS_PATH "/%s/status", vmi);
    snprintf(body, sizeof(body),
             "{\"status\":{\"nodeName\":\"%s\",\"phase\":\"Running\",\"migrationState\":{"
             "\"sourceNode\":\"%s\",\"targetNode\":\"%s\",\"migrationUid\":\"mig-%s-%s\","
             "\"completed\":true}}}",
             to, from, to, vmi, to);
    merge_patch(fx, path, body);
}

/* Leadership ends, and the controller's worker has seen it (it asks at
 * least every SCHED_PINS_LEADER_POLL_MS). */
static void leadership_lost(fixture *fx)
{
    atomic_store(&g_leader, 0);
    WAIT_TRUE(!pins_stats(fx).leading);
}

/* Leadership comes back, the controller queued every VM again, and it has
 * reconciled them all (nothing queued, held back or in hand): whatever it
 * would write is written. resyncs: the count before the leadership came
 * back. */
static void quiet_after_resync(fixture *fx, unsigned long resyncs)
{
    WAIT_TRUE(pins_stats(fx).resyncs > resyncs && pins_stats(fx).busy == 0);
}

/* After a live migration completes the pin follows the VM, only while
 * this replica leads; a migration completed while it did not lead is
 * followed once it leads (level-triggered). */
static void test_migration_moves_pin(void **state)
{
    fixture *fx = *state;
    char pin[256], v[256];
    create_chain(fx, "vm-mig", "node-0");
    create_chain(fx, "vm-mig-follower", "node-0");
    plugin_up(fx);
    merge_patch(fx, VMIS_PATH "/vm-mig/status",
                "{\"status\":{\"nodeName\":\"node-0\",\"phase\":\"Running\"}}");
    merge_patch(fx, VMIS_PATH "/vm-mig-follower/status",
                "{\"status\":{\"nodeName\":\"node-0\",\"phase\":\"Running\"}}");

    /* Not the leader: the migration is seen (the leadership is asked)
     * but not followed... */
    leadership_lost(fx);
    int checks = atomic_load(&g_leader_checks);
    complete_migration(fx, "vm-mig-follower", "node-0", "node-1");
    WAIT_TRUE_MS(atomic_load(&g_leader_checks) != checks, CONVERGE_MS);
    server_pin(fx, "vm-mig-follower", pin, sizeof(pin));
    assert_string_equal(pin, "node-0");
    /* ...then leading: this one is, and the one completed meanwhile too. */
    atomic_store(&g_leader, 1);
    complete_migration(fx, "vm-mig", "node-0", "node-2");
    wait_pin(fx, "vm-mig", "node-2");
    wait_pin(fx, "vm-mig-follower", "node-1");
    WAIT_TRUE(pins_stats(fx).migration_pins_moved == 2);
    assert_true(has_vm_event(fx, "vm-mig", "Repinned", "node-2"));
    /* The same patch recorded the migration and the pin's history. */
    server_annotation(fx, "vm-mig", "stickyvm.io/followed-migration", v, sizeof(v));
    assert_string_equal(v, "mig-vm-mig-node-2");
    server_annotation(fx, "vm-mig", "stickyvm.io/pin-reason", v, sizeof(v));
    assert_string_equal(v, "Migration");
    server_annotation(fx, "vm-mig", "stickyvm.io/pinned-by", v, sizeof(v));
    assert_string_equal(v, "system:stickyvm-scheduler");
    server_annotation(fx, "vm-mig", "stickyvm.io/pinned-at", v, sizeof(v));
    assert_int_equal(strlen(v), strlen("2026-01-01T00:00:00Z"));
}

/* The follower's leadership goes away and comes back (a leader change as
 * the follower sees it): it compares every VMI with its VM again. Returns
 * the resync count before it came back. */
static unsigned long leader_change(fixture *fx)
{
    leadership_lost(fx);
    unsigned long resyncs = pins_stats(fx).resyncs;
    atomic_store(&g_leader, 1);
    return resyncs;
}

/* After the leader change, the sentinel VM's migration (completed while
 * no replica led) is followed, and once the follower went over every VMI
 * no other VM was written: one patch since there were patches. */
static void expect_only_sentinel_followed(fixture *fx, unsigned long resyncs, const char *sentinel,
                                          const char *node, int64_t patches)
{
    wait_pin(fx, sentinel, node);
    quiet_after_resync(fx, resyncs);
    assert_int_equal(count(fx, "patch", "virtualmachines"), patches + 1);
}

static void running_on(fixture *fx, const char *vmi, const char *node)
{
    char path[256], body[256];
    snprintf(path, sizeof(path), VMIS_PATH "/%s/status", vmi);
    snprintf(body, sizeof(body), "{\"status\":{\"nodeName\":\"%s\",\"phase\":\"Running\"}}", node);
    merge_patch(fx, path, body);
}

/* A re-pin to the source node after a followed migration is deliberate:
 * it stays across a leader change (the migration is never followed
 * again). */
static void test_repin_to_source_stays(void **state)
{
    fixture *fx = *state;
    char pin[256];
    create_chain(fx, "vm-back", "node-0");
    create_chain(fx, "vm-sentinel-1", "node-0");
    plugin_up(fx);
    running_on(fx, "vm-back", "node-0");
    running_on(fx, "vm-sentinel-1", "node-0");
    complete_migration(fx, "vm-back", "node-0", "node-1");
    wait_pin(fx, "vm-back", "node-1");
    /* someone pins it back to the source node, as /pin does */
    merge_patch(fx, VMS_PATH "/vm-back",
                "{\"metadata\":{\"annotations\":{\"stickyvm.io/node\":\"node-0\"}}}");
    atomic_store(&g_leader, 0);
    complete_migration(fx, "vm-sentinel-1", "node-0", "node-2");
    int64_t patches = count(fx, "patch", "virtualmachines");
    unsigned long resyncs = leader_change(fx);
    expect_only_sentinel_followed(fx, resyncs, "vm-sentinel-1", "node-2", patches);
    server_pin(fx, "vm-back", pin, sizeof(pin));
    assert_string_equal(pin, "node-0");
}

/* A failed migration, and a VM pinned to a third node, are left alone. */
static void test_failed_or_third_node_left_alone(void **state)
{
    fixture *fx = *state;
    char pin[256];
    create_chain(fx, "vm-failed", "node-0");
    create_chain(fx, "vm-third", "node-2");
    create_chain(fx, "vm-sentinel-2", "node-0");
    plugin_up(fx);
    atomic_store(&g_leader, 0);
    merge_patch(fx, VMIS_PATH "/vm-failed/status",
                "{\"status\":{\"nodeName\":\"node-0\",\"phase\":\"Running\","
                "\"migrationState\":{\"sourceNode\":\"node-0\",\"targetNode\":\"node-1\","
                "\"migrationUid\":\"mig-failed\",\"completed\":true,\"failed\":true}}}");
    merge_patch(fx, VMIS_PATH "/vm-failed/status",
                "{\"status\":{\"nodeName\":\"node-1\"}}"); /* even where it runs now */
    complete_migration(fx, "vm-third", "node-0", "node-1");
    complete_migration(fx, "vm-sentinel-2", "node-0", "node-1");
    int64_t patches = count(fx, "patch", "virtualmachines");
    unsigned long resyncs = leader_change(fx);
    expect_only_sentinel_followed(fx, resyncs, "vm-sentinel-2", "node-1", patches);
    server_pin(fx, "vm-failed", pin, sizeof(pin));
    assert_string_equal(pin, "node-0");
    server_pin(fx, "vm-third", pin, sizeof(pin));
    assert_string_equal(pin, "node-2");
}

/* ------------------------------------------------------------------ */
/* The whole scheduler                                                 */
/* ------------------------------------------------------------------ */

#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/%s/leases"
#define OTHER_HOLDER_LEASE_S 3600

/* A Lease held by another replica for an hour. */
static void lease_held_elsewhere(fixture *fx, const char *ns, const char *name)
{
    char path[256], body[512];
    snprintf(path, sizeof(path), LEASES_PATH, ns);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{\"holderIdentity\":\"other\","
             "\"leaseDurationSeconds\":%d,\"acquireTime\":\"2024-01-01T00:00:00.000000Z\","
             "\"renewTime\":\"2024-01-01T00:00:00.000000Z\",\"leaseTransitions\":0}}",
             name, ns, OTHER_HOLDER_LEASE_S);
    assert_int_equal(harness_create(fx->h, path, body, NULL), KUBE_OK);
}

static void delete_path(fixture *fx, const char *path);

/* The scheduler with leader election, started while another replica holds
 * the Lease. */
static sched_scheduler *follower_up(fixture *fx, sched_config **cfg)
{
    char err[512] = "";
    sched_scheduler *s = NULL;
    if (tp_config_load_file(CONFIG_FILE, NULL, cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("%s", err);
    sched_leader_election *le = &(*cfg)->leader_election;
    le->leader_elect = 1;
    le->lease_duration_ms = 2000, le->renew_deadline_ms = 1000, le->retry_period_ms = 100;
    lease_held_elsewhere(fx, le->resource_namespace, le->resource_name);
    sched_scheduler_options o = {
        .config = *cfg, .client = fx->client, .leader_client = fx->client, .identity = "follower"};
    if (sched_scheduler_new(&o, &s, err, sizeof(err)) != KUBE_OK)
        fail_msg("scheduler: %s", err);
    assert_int_equal(sched_scheduler_start(s), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(s, CONVERGE_MS), KUBE_OK);
    return s;
}

#define AFTER_MIGRATION "test.stickyvm.io/after-migration"

/* 1 if the VMI lister of pins holds VMI name with the annotation key. */
static int vmi_listed_with(sched_pins *pins, const char *name, const char *key)
{
    kube_object *vmi = kube_lister_get(sched_pins_vmi_lister(pins), NS, name);
    int found = vmi && kube_meta_annotation(&vmi->meta, key) != NULL;
    kube_object_unref(vmi);
    return found;
}

/* The scheduler hands StickyVM its leadership: a migration completed while
 * another replica leads is not followed; once this one leads it is (no
 * replica saw the VMI's transition while leading), and so is the next. */
static void test_sched_follower_does_not_move_pins(void **state)
{
    fixture *fx = *state;
    sched_config *cfg = NULL;
    sched_pins_stats st;
    char pin[256], path[256];
    create_chain(fx, "vm-lead", "node-1");
    merge_patch(fx, VMIS_PATH "/vm-lead/status",
                "{\"status\":{\"nodeName\":\"node-1\",\"phase\":\"Running\"}}");
    sched_scheduler *s = follower_up(fx, &cfg);
    assert_false(sched_scheduler_active(s));

    complete_migration(fx, "vm-lead", "node-1", "node-2");
    /* A later change to the VMI: once the scheduler's VMI lister holds it,
     * the controller's handler of the migration has returned (one hub
     * thread, one event at a time); once nothing is queued or in hand, a
     * pin that followed would have been written. */
    merge_patch(fx, VMIS_PATH "/vm-lead",
                "{\"metadata\":{\"annotations\":{\"" AFTER_MIGRATION "\":\"seen\"}}}");
    sched_pins *pins = sched_scheduler_pins(s);
    assert_non_null(pins);
    WAIT_TRUE_MS(vmi_listed_with(pins, "vm-lead", AFTER_MIGRATION), CONVERGE_MS);
    WAIT_TRUE_MS((sched_pins_stats_get(pins, &st), st.busy == 0), CONVERGE_MS);
    server_pin(fx, "vm-lead", pin, sizeof(pin));
    assert_string_equal(pin, "node-1");

    snprintf(path, sizeof(path), LEASES_PATH "/%s", cfg->leader_election.resource_namespace,
             cfg->leader_election.resource_name);
    delete_path(fx, path);
    WAIT_TRUE_MS(sched_scheduler_active(s), CONVERGE_MS);
    wait_pin(fx, "vm-lead", "node-2");
    complete_migration(fx, "vm-lead", "node-2", "node-0");
    wait_pin(fx, "vm-lead", "node-0");
    sched_scheduler_free(s);
    sched_config_free(cfg);
}

#define PODS_PATH "/api/v1/namespaces/" NS "/pods"
#define NODES_PATH "/api/v1/nodes"
#define STICKY_VM "vm-sticky"
#define RESTARTS 20

/* stickyvm-scheduler in-process with the example configuration (leader
 * election off: one replica). */
static void sched_up(fixture *fx)
{
    char err[512] = "";
    if (tp_config_load_file(CONFIG_FILE, NULL, &fx->scfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("%s", err);
    fx->scfg->leader_election.leader_elect = 0;
    sched_scheduler_options o = {.config = fx->scfg, .client = fx->client};
    if (sched_scheduler_new(&o, &fx->sched, err, sizeof(err)) != KUBE_OK)
        fail_msg("scheduler: %s", err);
    assert_int_equal(sched_scheduler_start(fx->sched), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(fx->sched, CONVERGE_MS), KUBE_OK);
    assert_int_equal(harness_reset_counters(fx->h), KUBE_OK);
    fx->own_vm_gets = fx->own_vm_patches = 0;
}

/* virt-controller's pod for the VMI: virt-launcher-<vm>-r<round>. */
static void create_launcher(fixture *fx, const char *vm, const char *vmi_uid, int round, char *name,
                            size_t n)
{
    snprintf(name, n, "virt-launcher-%s-r%04d", vm, round);
    kvc_create_launcher(fx->h, NS, vm, vmi_uid, name);
}

static void delete_path(fixture *fx, const char *path)
{
    harness_response r = {0};
    assert_int_equal(harness_request(fx->h, NULL, "DELETE", path, NULL, NULL, &r), KUBE_OK);
    if (r.status != 200 && r.status != 202)
        fail_msg("DELETE %s: %ld %s", path, r.status, r.body);
    harness_response_free(&r);
}

/* The pod's spec.nodeName ("" while pending). */
static void pod_node(fixture *fx, const char *pod, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), PODS_PATH "/%s", pod);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    assert_int_equal(status, 200);
    const cJSON *node =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "spec"), "nodeName");
    kube_strlcpy(out, cJSON_IsString(node) ? node->valuestring : "", n);
    cJSON_Delete(j);
}

static void wait_bound(fixture *fx, const char *pod, char *node, size_t n)
{
    WAIT_TRUE_MS_MSG((pod_node(fx, pod, node, n), *node), CONVERGE_MS, "pod %s not bound", pod);
}

/* 1 if an event regarding pod with this reason has a note containing
 * text. */
static int has_pod_event(fixture *fx, const char *pod, const char *reason, const char *text)
{
    long status = 0;
    cJSON *list = NULL;
    int found = 0;
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", EVENTS_PATH, NULL, &status, &list),
                     KUBE_OK);
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *reg = cJSON_GetObjectItemCaseSensitive(item, "regarding");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(reg, "name");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(item, "reason");
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(item, "note");
        found |= cJSON_IsString(name) && !strcmp(name->valuestring, pod) && cJSON_IsString(r) &&
                 !strcmp(r->valuestring, reason) && cJSON_IsString(note) &&
                 strstr(note->valuestring, text);
    }
    cJSON_Delete(list);
    return found;
}

/* Waits for an event regarding pod with this reason whose note contains
 * text. */
static void wait_pod_event(fixture *fx, const char *pod, const char *reason, const char *text)
{
    WAIT_TRUE_MS_MSG(has_pod_event(fx, pod, reason, text), CONVERGE_MS,
                     "no %s event for pod %s mentioning \"%s\"", reason, pod, text);
}

/* virt-controller restarting the VM: the pod and the VMI go, a new VMI
 * (new uid) and a new pod come. */
static void restart_vm(fixture *fx, const char *vm, int round, char *pod, size_t n)
{
    char path[256], vm_uid[64], vmi_uid[64];
    snprintf(path, sizeof(path), PODS_PATH "/%s", pod);
    delete_path(fx, path);
    snprintf(path, sizeof(path), VMIS_PATH "/%s", vm);
    delete_path(fx, path);
    kube_strlcpy(vm_uid, fx->sticky_vm_uid, sizeof(vm_uid));
    kube_strlcpy(vmi_uid, create_vmi(fx, vm, vm_uid), sizeof(vmi_uid));
    create_launcher(fx, vm, vmi_uid, round, pod, n);
}

/* 1 if the whole scheduler's metrics hold want (a sample line between
 * newlines). */
static int metrics_show(fixture *fx, const char *want)
{
    kube_buf out = KUBE_BUF_INIT;
    assert_int_equal(kube_metrics_write(sched_scheduler_metrics(fx->sched), &out), KUBE_OK);
    assert_int_equal(kube_buf_puts(&out, ""), KUBE_OK);
    int found = strstr(out.data, want) != NULL;
    kube_buf_free(&out);
    return found;
}

/* Waits for the whole scheduler's metrics to hold line (a sample line,
 * "name{labels} value"). */
static void wait_metric(fixture *fx, const char *line)
{
    char want[256];
    snprintf(want, sizeof(want), "\n%s\n", line);
    WAIT_TRUE_MS_MSG(metrics_show(fx, want), CONVERGE_MS, "the scheduler's metrics never showed %s",
                     line);
}

/* The gauges of the sticky VM: its node's status, and why its pod waits
 * (NULL: it does not). */
static void wait_pinned_gauges(fixture *fx, const char *node_status, const char *reason)
{
    static const char *const reasons[] = {"NodeNotReady", "NodeMissing", "NodeUnschedulable",
                                          "NodeTainted", "Insufficient"};
    char line[128];
    snprintf(line, sizeof(line), "stickyvm_pinned_vms{node_status=\"%s\"} 1", node_status);
    wait_metric(fx, line);
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        int on = reason && !strcmp(reasons[i], reason);
        snprintf(line, sizeof(line), "stickyvm_pinned_pods_waiting{reason=\"%s\"} %d", reasons[i],
                 on);
        wait_metric(fx, line);
    }
}

/* Deletes the VMs earlier tests left, so that the pinned VMs' gauges
 * count the sticky VM alone. */
static void delete_vms(fixture *fx)
{
    long status = 0;
    cJSON *list = NULL;
    const cJSON *item;
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", VMS_PATH, NULL, &status, &list),
                     KUBE_OK);
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        char path[320];
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(item, "metadata");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
        snprintf(path, sizeof(path), VMS_PATH "/%s", cJSON_GetStringValue(name));
        delete_path(fx, path);
    }
    cJSON_Delete(list);
}

/* A pod bound straight to node (as if another scheduler placed it), making
 * that node the fullest. */
static void fill_node(fixture *fx, const char *node)
{
    char body[768];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"filler-%s\"},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"x\","
             "\"resources\":{\"requests\":{\"cpu\":\"16\",\"memory\":\"128Gi\"}}}]}}",
             node, node);
    assert_int_equal(harness_create(fx->h, PODS_PATH, body, NULL), KUBE_OK);
}

/* The first pod pins the VM; twenty restarts all land on that node although
 * it is the fullest; the VM is written once. */
static void test_sched_twenty_restarts_same_node(void **state)
{
    fixture *fx = *state;
    char node[256];
    delete_vms(fx);
    kube_strlcpy(fx->sticky_vm_uid, create_vm(fx, STICKY_VM, NULL), sizeof(fx->sticky_vm_uid));
    char vmi_uid[64];
    kube_strlcpy(vmi_uid, create_vmi(fx, STICKY_VM, fx->sticky_vm_uid), sizeof(vmi_uid));
    sched_up(fx);

    create_launcher(fx, STICKY_VM, vmi_uid, 0, fx->sticky_pod, sizeof(fx->sticky_pod));
    wait_bound(fx, fx->sticky_pod, fx->sticky_node, sizeof(fx->sticky_node));
    wait_pin(fx, STICKY_VM, fx->sticky_node);
    fill_node(fx, fx->sticky_node);

    for (int round = 1; round <= RESTARTS; round++) {
        restart_vm(fx, STICKY_VM, round, fx->sticky_pod, sizeof(fx->sticky_pod));
        wait_bound(fx, fx->sticky_pod, node, sizeof(node));
        if (strcmp(node, fx->sticky_node) != 0)
            fail_msg("restart %d landed on %s, pinned to %s", round, node, fx->sticky_node);
    }
    assert_int_equal(count(fx, "patch", "virtualmachines"), 1);
    assert_int_equal(count(fx, "get", "virtualmachines"), 0);
    /* the restarts of the pinned VM, not its first placement */
    wait_metric(fx, "stickyvm_pinned_pod_wait_seconds_count 20");
    wait_pinned_gauges(fx, "Ready", NULL);
    print_message("21 placements: %lld VMI GETs, %lld pod bindings\n",
                  (long long)count(fx, "get", "virtualmachineinstances"),
                  (long long)count(fx, "create", "pods/binding"));
}

/* 1 if the pod's PodScheduled condition message contains text. */
static int pod_condition_has(fixture *fx, const char *pod, const char *text)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL, *c;
    int found = 0;
    snprintf(path, sizeof(path), PODS_PATH "/%s", pod);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(j, "status"), "conditions"))
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");
        found |= cJSON_IsString(type) && !strcmp(type->valuestring, "PodScheduled") &&
                 cJSON_IsString(msg) && strstr(msg->valuestring, text);
    }
    cJSON_Delete(j);
    return found;
}

/* Waits for the pod's PodScheduled condition message to contain text. */
static void wait_pod_condition(fixture *fx, const char *pod, const char *text)
{
    WAIT_TRUE_MS_MSG(pod_condition_has(fx, pod, text), CONVERGE_MS,
                     "pod %s: no PodScheduled condition mentioning \"%s\"", pod, text);
}

/* The sentence every Pending reason of the sticky VM's pod ends with. */
static void pin_sentence(const fixture *fx, char *out, size_t n)
{
    snprintf(
        out, n,
        "VM " NS "/" STICKY_VM " is pinned to node %s (annotation stickyvm.io/node), so "
        "the other nodes were excluded by the pin; to move it run \"kubectl stickyvm pin " STICKY_VM
        " -n " NS " --node NODE\", or release the pin with \"kubectl get --raw "
        "/apis/subresources.stickyvm.io/v1/namespaces/" NS "/virtualmachines/" STICKY_VM
        "/unpin\".",
        fx->sticky_node);
}

/* Restarts the sticky VM while its node refuses it (reason: the per-node
 * summary kube-scheduler gives the pinned node): the FailedScheduling event
 * and the PodScheduled condition read "0/3 nodes are available: <reason>,
 * 2 node(s) didn't match the pinned node. <the pin sentence>". Then undo
 * lets the pod bind on its node again. */
static void pending_names_pin(fixture *fx, int round, const char *reason, const char *gauges[2],
                              const char *undo_path, const char *undo_patch)
{
    char want[1024], sentence[768], node[256];
    pin_sentence(fx, sentence, sizeof(sentence));
    snprintf(want, sizeof(want),
             "0/3 nodes are available: %s, 2 node(s) didn't match the pinned node. %s", reason,
             sentence);
    restart_vm(fx, STICKY_VM, round, fx->sticky_pod, sizeof(fx->sticky_pod));
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling", want);
    wait_pod_condition(fx, fx->sticky_pod, want);
    wait_pinned_gauges(fx, gauges[0], gauges[1]);
    pod_node(fx, fx->sticky_pod, node, sizeof(node));
    assert_string_equal(node, "");
    if (undo_patch)
        merge_patch(fx, undo_path, undo_patch);
    else
        delete_path(fx, undo_path);
    wait_bound(fx, fx->sticky_pod, node, sizeof(node));
    assert_string_equal(node, fx->sticky_node);
}

/* The node's Ready condition becomes status (its status subresource, as
 * the kubelet or node-lifecycle writes it). */
static void node_ready(fixture *fx, const char *status_path, const char *status)
{
    char body[320];
    snprintf(body, sizeof(body),
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\",\"lastTransitionTime\":"
             "\"2026-01-01T00:00:00Z\",\"reason\":\"Test\"}]}}",
             status);
    merge_patch(fx, status_path, body);
}

/* Whatever keeps the pinned node from taking the pod (cordoned, tainted,
 * unreachable, full), the Pending reason names the pin, and the pinned
 * VMs' gauges count the VM by its node's status and the pod by why it
 * waits. */
static void test_sched_pending_reasons_name_pin(void **state)
{
    fixture *fx = *state;
    char path[320], status_path[336], body[768];
    assert_true(*fx->sticky_node);
    snprintf(path, sizeof(path), NODES_PATH "/%s", fx->sticky_node);

    merge_patch(fx, path, "{\"spec\":{\"unschedulable\":true}}");
    pending_names_pin(fx, 400, "1 node(s) were unschedulable",
                      (const char *[]){"SchedulingDisabled", "NodeUnschedulable"}, path,
                      "{\"spec\":{\"unschedulable\":null}}");

    merge_patch(fx, path,
                "{\"spec\":{\"taints\":[{\"key\":\"maintenance\",\"value\":\"disk\","
                "\"effect\":\"NoSchedule\"}]}}");
    pending_names_pin(fx, 401, "1 node(s) had untolerated taint {maintenance: disk}",
                      (const char *[]){"Ready", "NodeTainted"}, path,
                      "{\"spec\":{\"taints\":null}}");

    /* node-lifecycle's view of a lost node: Ready Unknown, tainted unreachable */
    snprintf(status_path, sizeof(status_path), "%s/status", path);
    node_ready(fx, status_path, "Unknown");
    merge_patch(fx, path,
                "{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\","
                "\"effect\":\"NoSchedule\"}]}}");
    pending_names_pin(fx, 403, "1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }",
                      (const char *[]){"Unknown", "NodeNotReady"}, path,
                      "{\"spec\":{\"taints\":null}}");
    node_ready(fx, status_path, "False");
    wait_pinned_gauges(fx, "NotReady", NULL);
    node_ready(fx, status_path, "True");
    wait_pinned_gauges(fx, "Ready", NULL);

    /* the emulator drops spec.nodeName on create: bound through pods/binding */
    assert_int_equal(harness_create(fx->h, PODS_PATH,
                                    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                                    "\"name\":\"hog\"},\"spec\":{\"schedulerName\":\"none\","
                                    "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":"
                                    "{\"requests\":{\"cpu\":\"32\"}}}]}}",
                                    NULL),
                     KUBE_OK);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"hog\"},"
             "\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}",
             fx->sticky_node);
    assert_int_equal(harness_create(fx->h, PODS_PATH "/hog/binding", body, NULL), KUBE_OK);
    pending_names_pin(fx, 402, "1 Insufficient cpu", (const char *[]){"Ready", "Insufficient"},
                      PODS_PATH "/hog", NULL);
}

/* With its node cordoned the pod waits; uncordoned, it binds there. */
static void test_sched_cordoned_node_waits(void **state)
{
    fixture *fx = *state;
    char path[320], node[256];
    assert_true(*fx->sticky_node);
    snprintf(path, sizeof(path), NODES_PATH "/%s", fx->sticky_node);
    merge_patch(fx, path, "{\"spec\":{\"unschedulable\":true}}");
    restart_vm(fx, STICKY_VM, 100, fx->sticky_pod, sizeof(fx->sticky_pod));
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling", "unschedulable");
    wait_pinned_gauges(fx, "SchedulingDisabled", "NodeUnschedulable");
    pod_node(fx, fx->sticky_pod, node, sizeof(node));
    assert_string_equal(node, "");

    /* Past the queue's initial backoff (1 s), the uncordon alone decides
     * when the pod is retried. */
    usleep(1100 * 1000);
    merge_patch(fx, path, "{\"spec\":{\"unschedulable\":null}}");
    int64_t t0 = kube_now_ms();
    wait_bound(fx, fx->sticky_pod, node, sizeof(node));
    assert_string_equal(node, fx->sticky_node);
    print_message("bound %lld ms after the uncordon\n", (long long)(kube_now_ms() - t0));
}

/* With its node deleted the pod waits and the event names the command that
 * releases the pin. */
static void test_sched_deleted_node_names_unpin(void **state)
{
    fixture *fx = *state;
    char path[320], node[256];
    assert_true(*fx->sticky_node);
    snprintf(path, sizeof(path), NODES_PATH "/%s", fx->sticky_node);
    delete_path(fx, path);
    restart_vm(fx, STICKY_VM, 200, fx->sticky_pod, sizeof(fx->sticky_pod));
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling",
                   "kubectl get --raw /apis/subresources.stickyvm.io/v1/namespaces/" NS
                   "/virtualmachines/" STICKY_VM "/unpin");
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling", fx->sticky_node);
    wait_pinned_gauges(fx, "Missing", "NodeMissing");
    pod_node(fx, fx->sticky_pod, node, sizeof(node));
    assert_string_equal(node, "");
}

/* The pinned node missing: the reason is the pin itself (StickyVM's
 * PreFilter), in the event and the condition. */
static void test_sched_missing_node_names_pin(void **state)
{
    fixture *fx = *state;
    char want[1280], sentence[1024];
    assert_true(*fx->sticky_node);
    snprintf(sentence, sizeof(sentence),
             "VM " NS "/" STICKY_VM " is pinned to node %s (annotation stickyvm.io/node), which "
             "does not exist, so the other nodes were excluded by the pin; the node no longer "
             "exists: move every VM pinned to it with \"kubectl stickyvm evacuate %s\", or this "
             "one with \"kubectl stickyvm pin " STICKY_VM " -n " NS " --node NODE --force\", or "
             "release the pin with \"kubectl get --raw /apis/subresources.stickyvm.io/v1/"
             "namespaces/" NS "/virtualmachines/" STICKY_VM "/unpin\".",
             fx->sticky_node, fx->sticky_node);
    snprintf(want, sizeof(want), "0/2 nodes are available: %s", sentence);
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling", want);
    wait_pod_condition(fx, fx->sticky_pod, want);
}

/* The pinned node comes back under its name: the pod binds there at once
 * (StickyVM's NodeAdd hint fires for that name). */
static void test_sched_returning_node_binds(void **state)
{
    fixture *fx = *state;
    char body[768], node[256];
    assert_true(*fx->sticky_node);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"kubernetes.io/hostname\":\"%s\"}},\"spec\":{},\"status\":{"
             "\"capacity\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
             "\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}",
             fx->sticky_node, fx->sticky_node);
    assert_int_equal(harness_create(fx->h, NODES_PATH, body, NULL), KUBE_OK);
    wait_bound(fx, fx->sticky_pod, node, sizeof(node));
    assert_string_equal(node, fx->sticky_node);
}

/* StickyVM's counters are in the scheduler's registry (/metrics). */
static void test_sched_metrics_show_pins(void **state)
{
    fixture *fx = *state;
    kube_buf out = KUBE_BUF_INIT;
    assert_non_null(fx->sched);
    assert_int_equal(kube_metrics_write(sched_scheduler_metrics(fx->sched), &out), KUBE_OK);
    assert_int_equal(kube_buf_puts(&out, ""), KUBE_OK); /* NUL-terminated */
    assert_non_null(strstr(out.data, "\nstickyvm_pins_recorded_total 1\n"));
    assert_non_null(strstr(out.data, "\nstickyvm_pinned_pods_scheduled_total "));
    kube_buf_free(&out);
}

/* The pinned node is gone again; releasing the pin (what /unpin does:
 * the annotation cleared) requeues the waiting pod through the
 * VirtualMachine update, and it binds elsewhere and is pinned there. */
static void test_sched_unpin_requeues(void **state)
{
    fixture *fx = *state;
    char path[320], node[256];
    assert_true(*fx->sticky_node);
    snprintf(path, sizeof(path), NODES_PATH "/%s", fx->sticky_node);
    delete_path(fx, path);
    restart_vm(fx, STICKY_VM, 300, fx->sticky_pod, sizeof(fx->sticky_pod));
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling", "/unpin");
    merge_patch(fx, VMS_PATH "/" STICKY_VM,
                "{\"metadata\":{\"annotations\":{"
                "\"stickyvm.io/node\":null}}}");
    int64_t t0 = kube_now_ms();
    wait_bound(fx, fx->sticky_pod, node, sizeof(node));
    print_message("bound %lld ms after the unpin\n", (long long)(kube_now_ms() - t0));
    assert_string_not_equal(node, fx->sticky_node);
    wait_pin(fx, STICKY_VM, node);
}

/* A node of the cluster other than not (into out). */
static void other_node(fixture *fx, const char * not, char *out, size_t n)
{
    cJSON *list = NULL, *it;
    long status = 0;
    out[0] = '\0';
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", NODES_PATH, NULL, &status, &list),
                     KUBE_OK);
    assert_int_equal(status, 200);
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items"))
    {
        const char *name =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "name"));
        if (name && strcmp(name, not ) && !out[0])
            snprintf(out, n, "%s", name);
    }
    cJSON_Delete(list);
    assert_true(out[0]);
}

/* The pinned node is cordoned, so the pod waits, rejected by
 * NodeUnschedulable among the nodes StickyVM's PreFilterResult left; moving
 * the pin (what /pin?node= does) requeues it through the VirtualMachine
 * update, because the plugin that narrowed the nodes counts among its
 * unschedulable plugins, and it binds on the new node. */
static void test_sched_repin_requeues(void **state)
{
    fixture *fx = *state;
    char pinned[256], target[256], path[320], patch[512], node[256];
    server_annotation(fx, STICKY_VM, "stickyvm.io/node", pinned, sizeof(pinned));
    assert_true(pinned[0]);
    other_node(fx, pinned, target, sizeof(target));
    snprintf(path, sizeof(path), NODES_PATH "/%s", pinned);
    merge_patch(fx, path, "{\"spec\":{\"unschedulable\":true}}");
    restart_vm(fx, STICKY_VM, 500, fx->sticky_pod, sizeof(fx->sticky_pod));
    wait_pod_event(fx, fx->sticky_pod, "FailedScheduling", "unschedulable");
    usleep(1100 * 1000); /* past the initial backoff: only the VM update can requeue it */
    snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"stickyvm.io/node\":\"%s\"}}}",
             target);
    merge_patch(fx, VMS_PATH "/" STICKY_VM, patch);
    int64_t t0 = kube_now_ms();
    wait_bound(fx, fx->sticky_pod, node, sizeof(node));
    print_message("bound %lld ms after the pin moved\n", (long long)(kube_now_ms() - t0));
    assert_string_equal(node, target);
    merge_patch(fx, path, "{\"spec\":{\"unschedulable\":null}}");
}

/* ------------------------------------------------------------------ */
/* The pin controller: durable first pins                              */
/* ------------------------------------------------------------------ */

/* The launcher pod of VMI name (controlled by it, schedulerName stickyvm)
 * created and bound to node as a scheduler does (the binding sets its
 * PodScheduled condition). */
static void bound_launcher(fixture *fx, const char *vmi, const char *vmi_uid, const char *node)
{
    char body[1536], path[256];
    harness_response r = {0};
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"virt-launcher-%s\","
             "\"namespace\":\"" NS "\",\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\","
             "\"kind\":\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":"
             "true}]},\"spec\":{\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":"
             "\"compute\",\"image\":\"virt-launcher\"}]}}",
             vmi, vmi, vmi_uid);
    assert_int_equal(harness_create(fx->h, PODS_PATH, body, NULL), KUBE_OK);
    snprintf(path, sizeof(path), PODS_PATH "/virt-launcher-%s/binding", vmi);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
             "\"virt-launcher-%s\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
             "\"name\":\"%s\"}}",
             vmi, node);
    assert_int_equal(harness_request(fx->h, NULL, "POST", path, "application/json", body, &r),
                     KUBE_OK);
    if (r.status != 201)
        fail_msg("binding %s: %ld %s", path, r.status, r.body);
    harness_response_free(&r);
}

/* What /unpin writes: the pin removed, the decision's time recorded. */
static void unpin_now(fixture *fx, const char *vm)
{
    char path[256], body[512], now[40];
    kube_time_rfc3339(now, sizeof(now));
    snprintf(path, sizeof(path), VMS_PATH "/%s", vm);
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"annotations\":{\"stickyvm.io/node\":null,\"stickyvm.io/pinned-at\":"
             "\"%s\",\"stickyvm.io/pinned-by\":\"admin\",\"stickyvm.io/pin-reason\":\"API\"}}}",
             now);
    merge_patch(fx, path, body);
}

/* Past the point where the controller would write the first pins
 * (SCHED_PINS_SETTLE_S after the bind) if it ignored that it does not
 * lead: the settle time has passed, and after it the worker asked for the
 * leadership twice, so it went round its loop at least once since. */
static void settle_without_leader(void)
{
    int64_t due = kube_now_ms() + SCHED_PINS_SETTLE_S * 1000;
    WAIT_TRUE(kube_now_ms() >= due);
    int checks = atomic_load(&g_leader_checks);
    WAIT_TRUE(atomic_load(&g_leader_checks) >= checks + 2);
}

/* A VM whose launcher pod was bound while no replica led (its scheduler
 * stopped before writing the pin) is pinned by the next leader, to the
 * node its pod runs on, and the event Pinned says so. */
static void test_next_leader_pins(void **state)
{
    fixture *fx = *state;
    char vmi_uid[64], pin[256];
    kube_strlcpy(vmi_uid, create_chain(fx, "vm-orphan", NULL), sizeof(vmi_uid));
    plugin_up(fx);
    leadership_lost(fx);
    bound_launcher(fx, "vm-orphan", vmi_uid, "node-2");
    settle_without_leader();
    server_pin(fx, "vm-orphan", pin, sizeof(pin));
    assert_string_equal(pin, ""); /* not leading: nothing written */
    assert_int_equal(count(fx, "patch", "virtualmachines"), 0);

    atomic_store(&g_leader, 1);
    wait_pin(fx, "vm-orphan", "node-2");
    WAIT_TRUE(pins_stats(fx).first_pins_written == 1);
    WAIT_TRUE(pins_stats(fx).pending == 0);
    assert_true(has_vm_event(fx, "vm-orphan", "Pinned", "node-2"));
    server_annotation(fx, "vm-orphan", "stickyvm.io/pin-reason", pin, sizeof(pin));
    assert_string_equal(pin, "FirstPlacement");
}

/* An unpin recorded after the pod's bind is a newer decision: the
 * controller never undoes it, while the VM beside it, bound alike and not
 * unpinned, is pinned. */
static void test_unpin_after_bind_respected(void **state)
{
    fixture *fx = *state;
    char uid_free[64], uid_unpinned[64], pin[256];
    kube_strlcpy(uid_free, create_chain(fx, "vm-keep", NULL), sizeof(uid_free));
    kube_strlcpy(uid_unpinned, create_chain(fx, "vm-released", NULL), sizeof(uid_unpinned));
    plugin_up(fx);
    leadership_lost(fx);
    bound_launcher(fx, "vm-keep", uid_free, "node-1");
    bound_launcher(fx, "vm-released", uid_unpinned, "node-1");
    unpin_now(fx, "vm-released");
    settle_without_leader();

    int64_t patches = count(fx, "patch", "virtualmachines");
    unsigned long resyncs = pins_stats(fx).resyncs;
    atomic_store(&g_leader, 1);
    wait_pin(fx, "vm-keep", "node-1");
    quiet_after_resync(fx, resyncs); /* vm-released reconciled too */
    server_pin(fx, "vm-released", pin, sizeof(pin));
    assert_string_equal(pin, "");
    assert_int_equal(count(fx, "patch", "virtualmachines"), patches + 1);
    WAIT_TRUE(pins_stats(fx).pending == 0);
}

/* Requests on VM name in the emulator's log answered code. */
static int answered(fixture *fx, const char *verb, const char *name, int code)
{
    cJSON *items = NULL, *it;
    int n = 0;
    assert_int_equal(harness_requests(fx->h, verb, "virtualmachines", NULL, &items), KUBE_OK);
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "code");
        n += cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0 && cJSON_IsNumber(c) &&
             c->valueint == code;
    }
    cJSON_Delete(items);
    return n;
}

/* PostBind's write is answered 429 six times (its client gives up after
 * five), then the connection is reset: PostBind hands the VM to the pin
 * controller, whose retries land the pin. Leadership is away while
 * PostBind fails (so the controller's own rule does not race it) and comes
 * back: the pin is written by the (next) leader. */
static void test_pin_lands_after_429s_and_reset(void **state)
{
    fixture *fx = *state;
    static const char *const patch[] = {"patch", NULL}, *const vms[] = {"virtualmachines", NULL},
                             *const storm[] = {"vm-storm", NULL};
    const harness_fault_rule rules[] = {
        {.action = HARNESS_FAULT_STATUS,
         .error_code = 429,
         .retry_after_seconds = 1,
         .count = 6,
         .verbs = patch,
         .resources = vms,
         .names = storm},
        {.action = HARNESS_FAULT_RESET,
         .count = 1,
         .verbs = patch,
         .resources = vms,
         .names = storm},
    };
    char vmi_uid[64];
    kube_strlcpy(vmi_uid, create_chain(fx, "vm-storm", NULL), sizeof(vmi_uid));
    bound_launcher(fx, "vm-storm", vmi_uid, "node-1");
    plugin_up(fx);
    leadership_lost(fx);
    assert_int_equal(harness_set_fault_rules(fx->h, rules, 2), KUBE_OK);

    fw_pod_info *pi = launcher_pod("vm-storm", vmi_uid, "aaaaa");
    fw_cycle_state *cs = pre_filter(fx, pi, FW_SKIP, NULL, 0);
    plugin_stickyvm.post_bind(fx->sv, cs, pi, "node-1");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pi);
    assert_int_equal(stats(fx).pins_recorded, 0);
    assert_int_equal(stats(fx).pins_handed_off, 1);

    atomic_store(&g_leader, 1);
    wait_pin(fx, "vm-storm", "node-1");
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    assert_int_equal(answered(fx, "patch", "vm-storm", 429), 6);
    assert_int_equal(answered(fx, "patch", "vm-storm", 200), 1);
    WAIT_TRUE(pins_stats(fx).first_pins_written == 1);
    WAIT_TRUE(pins_stats(fx).pending == 0);
}

/* ------------------------------------------------------------------ */
/* The pin controller: one per scheduler                               */
/* ------------------------------------------------------------------ */

#define STICKYVM_PROFILE(name)      \
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
    "          annotationKey: %s\n"

/* A configuration of two StickyVM profiles with these pin keys. */
static sched_config *two_profiles(const char *key_a, const char *key_b)
{
    char yaml[2048], err[512] = "";
    sched_config *cfg = NULL;
    snprintf(yaml, sizeof(yaml),
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "leaderElection:\n"
             "  leaderElect: false\n"
             "profiles:\n" STICKYVM_PROFILE("stickyvm") STICKYVM_PROFILE("stickyvm-b"),
             key_a, key_b);
    if (tp_config_load(yaml, "two-profiles.yaml", NULL, &cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("%s", err);
    return cfg;
}

/* Threads of this process named name. */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d))) {
        char path[300], comm[64] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof(comm), f))
            comm[strcspn(comm, "\n")] = '\0';
        if (f)
            fclose(f);
        n += strcmp(comm, name) == 0;
    }
    closedir(d);
    return n;
}

/* The counters of the scheduler's pin controller. */
static sched_pins_stats scheduler_pins_stats(sched_scheduler *s)
{
    sched_pins_stats ps;
    sched_pins_stats_get(sched_scheduler_pins(s), &ps);
    return ps;
}

/* Two profiles enabling StickyVM run ONE pin controller: one completed
 * migration is one PATCH of the VM; the controller's metrics are on the
 * scheduler's registry. */
static void test_sched_two_profiles_one_controller(void **state)
{
    fixture *fx = *state;
    char err[512] = "";
    kube_buf out = KUBE_BUF_INIT;
    sched_scheduler *s = NULL;
    sched_config *cfg = two_profiles("stickyvm.io/node", "stickyvm.io/node");
    create_chain(fx, "vm-twice", "node-0");
    running_on(fx, "vm-twice", "node-0");
    sched_scheduler_options o = {.config = cfg, .client = fx->client, .identity = "two"};
    if (sched_scheduler_new(&o, &s, err, sizeof(err)) != KUBE_OK)
        fail_msg("scheduler: %s", err);
    assert_int_equal(sched_scheduler_start(s), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(s, CONVERGE_MS), KUBE_OK);
    assert_int_equal(threads_named("stickyvm-pin"), 1);
    assert_int_equal(harness_reset_counters(fx->h), KUBE_OK);
    fx->own_vm_gets = fx->own_vm_patches = 0;

    complete_migration(fx, "vm-twice", "node-0", "node-1");
    wait_pin(fx, "vm-twice", "node-1");
    WAIT_TRUE(scheduler_pins_stats(s).busy == 0); /* nothing left in hand */
    assert_int_equal(scheduler_pins_stats(s).migration_pins_moved, 1);
    assert_int_equal(count(fx, "patch", "virtualmachines"), 1);
    assert_int_equal(kube_metrics_write(sched_scheduler_metrics(s), &out), KUBE_OK);
    assert_int_equal(kube_buf_puts(&out, ""), KUBE_OK);
    assert_non_null(strstr(out.data, "\nstickyvm_pin_reconcile_pending 0\n"));
    assert_non_null(strstr(out.data, "\nstickyvm_pin_write_retries_total 0\n"));
    assert_non_null(strstr(out.data, "\nstickyvm_migration_pins_moved_total 1\n"));
    kube_buf_free(&out);
    sched_scheduler_free(s);
    sched_config_free(cfg);
}

/* Two profiles with different pin keys: refused, naming both. */
static void test_sched_two_pin_keys_refused(void **state)
{
    fixture *fx = *state;
    char err[512] = "";
    sched_scheduler *s = NULL;
    sched_config *cfg = two_profiles("stickyvm.io/node", "example.com/node");
    sched_scheduler_options o = {.config = cfg, .client = fx->client, .identity = "keys"};
    assert_int_equal(sched_scheduler_new(&o, &s, err, sizeof(err)), KUBE_ECONFIG);
    assert_null(s);
    assert_non_null(strstr(err, "\"stickyvm\""));
    assert_non_null(strstr(err, "\"stickyvm-b\""));
    assert_non_null(strstr(err, "annotationKey"));
    sched_config_free(cfg);
}

/* Node lost-0 is deleted: each VM pinned to it (two) gets one
 * PinnedNodeDeleted Warning naming the node and both commands; a VM
 * pinned elsewhere none; a leadership flap (every VM queued again) adds
 * none. */
static void test_deleted_node_warns_once(void **state)
{
    fixture *fx = *state;
    assert_int_equal(harness_create(fx->h, NODES_PATH,
                                    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
                                    "\"name\":\"lost-0\"}}",
                                    NULL),
                     KUBE_OK);
    create_vm(fx, "vm-lost-a", "lost-0");
    create_vm(fx, "vm-lost-b", "lost-0");
    create_vm(fx, "vm-kept", "node-0");
    plugin_up(fx);
    delete_path(fx, NODES_PATH "/lost-0");
    WAIT_TRUE(pins_stats(fx).node_deleted_warnings >= 2);
    assert_true(has_vm_event(fx, "vm-lost-a", "PinnedNodeDeleted",
                             "Pinned node lost-0 was deleted: the VM cannot start until a node of "
                             "that name returns or the pin moves (\"kubectl stickyvm evacuate "
                             "lost-0\", or \"kubectl stickyvm pin vm-lost-a -n " NS
                             " --node NODE --force\")"));
    assert_true(has_vm_event(fx, "vm-lost-b", "PinnedNodeDeleted", "lost-0"));
    assert_false(has_vm_event(fx, "vm-kept", "PinnedNodeDeleted", ""));
    quiet_after_resync(fx, leader_change(fx)); /* every VM gone over again */
    assert_int_equal(pins_stats(fx).node_deleted_warnings, 2);
}

int test_group_stickyvm_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_first_placement_one_write, test_teardown),
        cmocka_unit_test_teardown(test_concurrent_pin_is_kept, test_teardown),
        cmocka_unit_test_teardown(test_conflict_without_pin_is_retried, test_teardown),
        cmocka_unit_test_teardown(test_unpin_that_saw_the_pod_wins, test_teardown),
        cmocka_unit_test_teardown(test_new_vmi_at_most_one_get, test_teardown),
        cmocka_unit_test_teardown(test_missing_vmi_one_get, test_teardown),
        cmocka_unit_test_teardown(test_migration_moves_pin, test_teardown),
        cmocka_unit_test_teardown(test_repin_to_source_stays, test_teardown),
        cmocka_unit_test_teardown(test_failed_or_third_node_left_alone, test_teardown),
        cmocka_unit_test_teardown(test_next_leader_pins, test_teardown),
        cmocka_unit_test_teardown(test_unpin_after_bind_respected, test_teardown),
        cmocka_unit_test_teardown(test_pin_lands_after_429s_and_reset, test_teardown),
        cmocka_unit_test_teardown(test_deleted_node_warns_once, test_teardown),
        cmocka_unit_test(test_sched_follower_does_not_move_pins),
        cmocka_unit_test(test_sched_two_profiles_one_controller),
        cmocka_unit_test(test_sched_two_pin_keys_refused),
        cmocka_unit_test(test_sched_twenty_restarts_same_node),
        cmocka_unit_test(test_sched_metrics_show_pins),
        cmocka_unit_test(test_sched_pending_reasons_name_pin),
        cmocka_unit_test(test_sched_cordoned_node_waits),
        cmocka_unit_test(test_sched_deleted_node_names_unpin),
        cmocka_unit_test(test_sched_missing_node_names_pin),
        cmocka_unit_test(test_sched_returning_node_binds),
        cmocka_unit_test(test_sched_unpin_requeues),
        cmocka_unit_test(test_sched_repin_requeues),
    };
    return cmocka_run_group_tests_name("stickyvm_integration", tests, group_setup, group_teardown);
}
