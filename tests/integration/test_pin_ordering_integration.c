/*
 * tests/integration/test_pin_ordering_integration.c - pin decisions and
 * placements ordered by identity, never by clocks (#30), against the
 * emulator: the pin controller (scheduler/pins/controller.h) runs as
 * system:stickyvm-scheduler, and the owner's /pin and /unpin are
 * stickyvm-apiserver's own request (apis_pin_execute(), as alice, over the
 * admin client). A down validating webhook refuses the scheduler's writes
 * where a case needs it (the emulator's fault action "webhook").
 *
 *  - An unpin and the restarted VM's bind in the same second, both clocks
 *    equal, the scheduler's writes refused meanwhile: the new pod is
 *    pinned once the webhook is back.
 *  - The unpin writer's clock 3 s ahead: the bind right after is pinned.
 *  - A VM that live-migrates before its first pin lands is pinned to the
 *    migration's target.
 *  - The owner's /pin back to the source after a migration completed is
 *    never undone by that old migration.
 *  - A new leader's lagging VMI cache showing an older migration cannot
 *    move the pin back.
 *  - The controller's map of its writes forgets deleted VMs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/pin.h"
#include "harness.h"
#include "kube/machinery/factory.h"
#include "kube/transport/api.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/types/pin.h"
#include "kube/types/pin_testing.h"
#include "kube/types/pod.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kubevirt_chain.h"
#include "pins/controller.h"
#include "pins/controller_testing.h"

#define NS "default"
#define VMS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"
#define VMIS_PATH "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstances"
#define PODS_PATH "/api/v1/namespaces/" NS "/pods"
#define SCHED_USER "system:stickyvm-scheduler"

typedef struct fixture {
    harness *h;
    kube_config *admin_cfg, *sched_cfg;
    kube_client *admin, *sched;
    const harness_identity *sched_id;
    kube_factory *informers;
    kube_lister *pods, *vms, *vmis;
    sched_pins *pins;
} fixture;

static int group_setup(void **state)
{
    static const char *const masters[] = {"system:masters"};
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts o = HARNESS_OPTS_INIT;
    kube_client_options co;
    const harness_identity *id = NULL;
    char err[256];
    o.nodes = 3;
    assert_int_equal(harness_start(&o, &fx->h), KUBE_OK);
    assert_int_equal(harness_add_cert_user(fx->h, SCHED_USER, masters, 1, &id), KUBE_OK);
    fx->sched_id = id;
    assert_int_equal(
        kube_config_from_file(harness_kubeconfig(fx->h), &fx->admin_cfg, err, sizeof(err)),
        KUBE_OK);
    assert_int_equal(kube_config_from_file(id->kubeconfig, &fx->sched_cfg, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    co.max_retries = 0; /* a refused write is the controller's to retry */
    assert_int_equal(kube_client_new(fx->admin_cfg, &co, &fx->admin), KUBE_OK);
    assert_int_equal(kube_client_new(fx->sched_cfg, &co, &fx->sched), KUBE_OK);

    static const char *const names[] = {"stickyvm"};
    kube_informer_options po = {.resource = &KUBE_RES_PODS, .codec = &kube_pod_codec};
    kube_informer_options vo = {.resource = &KUBE_RES_VMS, .codec = &kube_vm_codec};
    kube_informer_options io = {.resource = &KUBE_RES_VMIS, .codec = &kube_vmi_codec};
    assert_int_equal(kube_factory_new(fx->sched, &fx->informers), KUBE_OK);
    assert_int_equal(kube_factory_lister(fx->informers, &po, &fx->pods), KUBE_OK);
    assert_int_equal(kube_factory_lister(fx->informers, &vo, &fx->vms), KUBE_OK);
    assert_int_equal(kube_factory_lister(fx->informers, &io, &fx->vmis), KUBE_OK);
    sched_pins_options so = {.client = fx->sched,
                             .informers = fx->informers,
                             .pods = fx->pods,
                             .key = KUBE_PIN_DEFAULT_KEY,
                             .scheduler_names = names,
                             .n_scheduler_names = 1};
    assert_int_equal(sched_pins_new(&so, &fx->pins), KUBE_OK);
    assert_int_equal(kube_factory_start(fx->informers), KUBE_OK);
    assert_int_equal(sched_pins_start(fx->pins), KUBE_OK);
    assert_int_equal(kube_factory_wait_synced(fx->informers, HARNESS_WAIT_MS), KUBE_OK);
    *state = fx;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *fx = *state;
    kube_factory_stop(fx->informers);
    sched_pins_free(fx->pins);
    kube_factory_free(fx->informers);
    kube_client_free(fx->admin);
    kube_client_free(fx->sched);
    kube_config_free(fx->admin_cfg);
    kube_config_free(fx->sched_cfg);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

/* Every test ends with the real clock and no fault rule. */
static int test_teardown(void **state)
{
    fixture *fx = *state;
    kube_pin_clock_offset_set(0);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Playing virt-controller, the owner and a down webhook                */
/* ------------------------------------------------------------------ */

static void request_ok(fixture *fx, const char *method, const char *path, const char *ct,
                       const char *body)
{
    harness_response r = {0};
    assert_int_equal(harness_request(fx->h, NULL, method, path, ct, body, &r), KUBE_OK);
    if (r.status < 200 || r.status > 299)
        fail_msg("%s %s: %ld %s", method, path, r.status, r.body);
    harness_response_free(&r);
}

static void merge_patch(fixture *fx, const char *path, const char *body)
{
    request_ok(fx, "PATCH", path, "application/merge-patch+json", body);
}

/* VMI name's status: running on node, with the migration (NULL: none;
 * completed 0/1). */
static void vmi_status(fixture *fx, const char *name, const char *node, const char *mig_uid,
                       const char *source, const char *target, int completed)
{
    char path[256], body[768], mig[512] = "";
    if (mig_uid)
        snprintf(mig, sizeof(mig),
                 ",\"migrationState\":{\"sourceNode\":\"%s\",\"targetNode\":\"%s\","
                 "\"migrationUid\":\"%s\",\"completed\":%s}",
                 source, target, mig_uid, completed ? "true" : "false");
    snprintf(path, sizeof(path), VMIS_PATH "/%s/status", name);
    snprintf(body, sizeof(body), "{\"status\":{\"nodeName\":\"%s\",\"phase\":\"Running\"%s}}", node,
             mig);
    merge_patch(fx, path, body);
}

/* Launcher pod `pod` of VMI vmi (uid vmi_uid), schedulerName stickyvm,
 * bound to node through pods/binding (PodScheduled set by the server); a
 * migration target when mig_uid is given. */
static void bound_pod(fixture *fx, const char *vmi, const char *vmi_uid, const char *pod,
                      const char *node, const char *mig_uid)
{
    char body[2048], path[256], labels[256] = "";
    if (mig_uid)
        snprintf(labels, sizeof(labels), ",\"" KUBE_LABEL_MIGRATION_JOB_UID "\":\"%s\"", mig_uid);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"kubevirt.io\":\"virt-launcher\",\"kubevirt.io/created-by\":\"%s\"%s},"
             "\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
             "\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},"
             "\"spec\":{\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":\"compute\","
             "\"image\":\"virt-launcher\"}]}}",
             pod, vmi_uid, labels, vmi, vmi_uid);
    assert_int_equal(harness_create(fx->h, PODS_PATH, body, NULL), KUBE_OK);
    snprintf(path, sizeof(path), PODS_PATH "/%s/binding", pod);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
             "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"%s\"}}",
             pod, node);
    request_ok(fx, "POST", path, "application/json", body);
}

/* A VM (pin: its pin or NULL), its VMI running on node and launcher pod
 * `pod` bound there; the VMI's uid into vmi_uid. */
static void running_vm(fixture *fx, const char *name, const char *pin, const char *node,
                       const char *pod, char *vmi_uid, size_t n)
{
    char vm_uid[64], ann[128] = "";
    if (pin)
        snprintf(ann, sizeof(ann), "\"" KUBE_PIN_DEFAULT_KEY "\":\"%s\"", pin);
    kvc_create_vm(fx->h, NS, name, ann, NULL, vm_uid, sizeof(vm_uid));
    kvc_create_vmi(fx->h, NS, name, vm_uid, vmi_uid, n);
    bound_pod(fx, name, vmi_uid, pod, node, NULL);
    vmi_status(fx, name, node, NULL, NULL, NULL, 0);
}

/* The VM restarts: its pod and VMI deleted, a new VMI whose pod `pod` is
 * bound to node. */
static void restart_on(fixture *fx, const char *name, const char *old_pod, const char *pod,
                       const char *node)
{
    char path[256], vm_uid[64], vmi_uid[64];
    cJSON *vm = NULL;
    long status = 0;
    snprintf(path, sizeof(path), PODS_PATH "/%s", old_pod);
    request_ok(fx, "DELETE", path, NULL, NULL);
    snprintf(path, sizeof(path), VMIS_PATH "/%s", name);
    request_ok(fx, "DELETE", path, NULL, NULL);
    snprintf(path, sizeof(path), VMS_PATH "/%s", name);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &vm), KUBE_OK);
    kube_strlcpy(vm_uid,
                 cJSON_GetObjectItem(cJSON_GetObjectItem(vm, "metadata"), "uid")->valuestring,
                 sizeof(vm_uid));
    cJSON_Delete(vm);
    kvc_create_vmi(fx->h, NS, name, vm_uid, vmi_uid, sizeof(vmi_uid));
    bound_pod(fx, name, vmi_uid, pod, node, NULL);
}

/* The owner's request through stickyvm-apiserver's code (user alice):
 * pin to node, or unpin (node NULL); asserts the answer is 200. */
static void owner(fixture *fx, const char *name, const char *node)
{
    apis_pin_request r = {.namespace_ = NS,
                          .name = name,
                          .unpin = node == NULL,
                          .has_node = node != NULL,
                          .node = node,
                          .user = "alice"};
    kube_buf body = KUBE_BUF_INIT;
    int code = 0;
    assert_int_equal(apis_pin_execute(fx->admin, NULL, &r, &code, &body), KUBE_OK);
    if (code != 200)
        fail_msg("%s of %s: %d %s", node ? "pin" : "unpin", name, code, body.data);
    kube_buf_free(&body);
}

/* An annotation of VM name as the server holds it ("" when none). */
static void annotation(fixture *fx, const char *name, const char *key, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL;
    snprintf(path, sizeof(path), VMS_PATH "/%s", name);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    assert_int_equal(status, 200);
    const cJSON *v = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "annotations"), key);
    kube_strlcpy(out, cJSON_IsString(v) ? v->valuestring : "", n);
    cJSON_Delete(j);
}

static int pinned_to(fixture *fx, const char *name, const char *node)
{
    char pin[256];
    annotation(fx, name, KUBE_PIN_DEFAULT_KEY, pin, sizeof(pin));
    return strcmp(pin, node) == 0;
}

/* The PodScheduled lastTransitionTime of pod (whole seconds, RFC 3339). */
static void bind_time(fixture *fx, const char *pod, char *out, size_t n)
{
    char path[256];
    long status = 0;
    cJSON *j = NULL, *c;
    snprintf(path, sizeof(path), PODS_PATH "/%s", pod);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    out[0] = '\0';
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "conditions"))
    {
        const cJSON *t = cJSON_GetObjectItem(c, "type"),
                    *at = cJSON_GetObjectItem(c, "lastTransitionTime");
        if (cJSON_IsString(t) && strcmp(t->valuestring, "PodScheduled") == 0 && cJSON_IsString(at))
            kube_strlcpy(out, at->valuestring, n);
    }
    cJSON_Delete(j);
    assert_true(out[0]);
}

/* The scheduler's writes of virtualmachines refused as by a down
 * validating webhook (everyone else's go through). */
static void webhook_down(fixture *fx)
{
    static const char *const users[] = {SCHED_USER, NULL}, *const vms[] = {"virtualmachines", NULL};
    const harness_fault_rule rule = {.action = HARNESS_FAULT_WEBHOOK,
                                     .message = "vm-policy.example.com",
                                     .users = users,
                                     .resources = vms};
    assert_int_equal(harness_set_fault_rules(fx->h, &rule, 1), KUBE_OK);
}

/* Patches of VM name by the scheduler the webhook refused (500). */
static int refused(fixture *fx, const char *name)
{
    cJSON *items = NULL, *it;
    int n = 0;
    assert_int_equal(harness_requests(fx->h, "patch", "virtualmachines", SCHED_USER, &items),
                     KUBE_OK);
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *nm = cJSON_GetObjectItem(it, "name"), *c = cJSON_GetObjectItem(it, "code");
        n += cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0 && cJSON_IsNumber(c) &&
             c->valueint == 500;
    }
    cJSON_Delete(items);
    return n;
}

static sched_pins_stats stats(fixture *fx)
{
    sched_pins_stats s;
    sched_pins_stats_get(fx->pins, &s);
    return s;
}

/* Sleeps until 20 ms past the wall clock's next whole second. */
static void next_second(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    usleep((useconds_t)((1000000000L - now.tv_nsec) / 1000 + 20000));
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* The emulator's down webhook answers the chosen user's writes as
 * kube-apiserver does (500 InternalError, "failed calling webhook", one
 * cause), and nothing else: that user's reads, another user's writes. */
static void webhook_refuses_only_the_users_writes(void **state)
{
    fixture *fx = *state;
    char vm_uid[64];
    harness_response r = {0};
    const char *patch = "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}";
    kvc_create_vm(fx->h, NS, "vm-hook", NULL, NULL, vm_uid, sizeof(vm_uid));
    webhook_down(fx);
    assert_int_equal(harness_request(fx->h, fx->sched_id, "PATCH", VMS_PATH "/vm-hook",
                                     "application/merge-patch+json", patch, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 500);
    cJSON *st = cJSON_Parse(r.body);
    harness_response_free(&r);
    assert_string_equal(cJSON_GetObjectItem(st, "reason")->valuestring, "InternalError");
    const char *msg = cJSON_GetObjectItem(st, "message")->valuestring;
    assert_true(strncmp(msg,
                        "Internal error occurred: failed calling webhook "
                        "\"vm-policy.example.com\": failed to call webhook: Post ",
                        60) == 0);
    const cJSON *cause =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "details"), "causes"), 0);
    assert_string_equal(cJSON_GetObjectItem(cause, "message")->valuestring,
                        msg + strlen("Internal error occurred: "));
    cJSON_Delete(st);
    assert_int_equal(
        harness_request(fx->h, fx->sched_id, "GET", VMS_PATH "/vm-hook", NULL, NULL, &r), KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
    merge_patch(fx, VMS_PATH "/vm-hook", patch); /* admin */
}

/* #30 (1): /unpin, then the restarted VM's pod bound in the same second
 * (both clocks the same machine's), while a down webhook refuses the
 * scheduler's writes. The unpin saw the old pod only: the new one is a
 * newer placement, pinned once the webhook is back; the pending gauge
 * held it meanwhile. (The old rule judged the unpin's pinned-at, equal to
 * the bind's second, newer: never pinned, pending 0.) */
static void same_second_unpin_then_bind_is_pinned(void **state)
{
    fixture *fx = *state;
    char uid[64], at[64], bound[64], name[32], old_pod[48], pod[48];
    for (int attempt = 0;; attempt++) {
        snprintf(name, sizeof(name), "vm-same-%d", attempt);
        snprintf(old_pod, sizeof(old_pod), "virt-launcher-%s-a", name);
        snprintf(pod, sizeof(pod), "virt-launcher-%s-b", name);
        running_vm(fx, name, "node-0", "node-0", old_pod, uid, sizeof(uid));
        webhook_down(fx);
        next_second();
        owner(fx, name, NULL);
        restart_on(fx, name, old_pod, pod, "node-1");
        annotation(fx, name, KUBE_PIN_ANN_AT, at, sizeof(at));
        bind_time(fx, pod, bound, sizeof(bound));
        if (strcmp(at, bound) == 0)
            break; /* the case: the same second */
        assert_true(attempt < 4);
        assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    }
    WAIT_TRUE(refused(fx, name) > 0);
    assert_true(stats(fx).pending > 0);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    WAIT_TRUE(pinned_to(fx, name, "node-1"));
    char v[64];
    annotation(fx, name, KUBE_PIN_ANN_REASON, v, sizeof(v));
    assert_string_equal(v, "FirstPlacement");
    WAIT_TRUE(stats(fx).pending == 0);
}

/* #30 (1), skew: the unpin writer's clock 3 s ahead (its pinned-at after
 * the next bind's time): the restarted VM's pod is pinned all the same. */
static void unpin_writer_clock_ahead_is_pinned(void **state)
{
    fixture *fx = *state;
    char uid[64], at[64], bound[64];
    running_vm(fx, "vm-skew", "node-0", "node-0", "virt-launcher-vm-skew-a", uid, sizeof(uid));
    kube_pin_clock_offset_set(3);
    owner(fx, "vm-skew", NULL);
    restart_on(fx, "vm-skew", "virt-launcher-vm-skew-a", "virt-launcher-vm-skew-b", "node-2");
    annotation(fx, "vm-skew", KUBE_PIN_ANN_AT, at, sizeof(at));
    bind_time(fx, "virt-launcher-vm-skew-b", bound, sizeof(bound));
    assert_true(strcmp(at, bound) > 0); /* the unpin "after" the bind */
    WAIT_TRUE(pinned_to(fx, "vm-skew", "node-2"));
}

/* A pod created with spec.nodeName (no binding, so no PodScheduled
 * condition) after an unpin is judged the same way: not seen, so pinned.
 * (The old rule, with no bind time, let any recorded decision win.) */
static void spec_node_name_pod_after_unpin_is_pinned(void **state)
{
    fixture *fx = *state;
    char uid[64], vm_uid[64], body[1536];
    running_vm(fx, "vm-direct", "node-0", "node-0", "virt-launcher-vm-direct-a", uid, sizeof(uid));
    owner(fx, "vm-direct", NULL);
    request_ok(fx, "DELETE", PODS_PATH "/virt-launcher-vm-direct-a", NULL, NULL);
    request_ok(fx, "DELETE", VMIS_PATH "/vm-direct", NULL, NULL);
    kube_object *vm = NULL;
    WAIT_TRUE((vm = kube_lister_get(fx->vms, NS, "vm-direct")) != NULL);
    kube_strlcpy(vm_uid, vm->meta.uid, sizeof(vm_uid));
    kube_object_unref(vm);
    kvc_create_vmi(fx->h, NS, "vm-direct", vm_uid, uid, sizeof(uid));
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"virt-launcher-vm-direct-b\",\"ownerReferences\":[{\"apiVersion\":"
             "\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"name\":\"vm-direct\","
             "\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"schedulerName\":\"stickyvm\","
             "\"nodeName\":\"node-2\",\"containers\":[{\"name\":\"compute\",\"image\":\"i\"}]}}",
             uid);
    assert_int_equal(harness_create(fx->h, PODS_PATH, body, NULL), KUBE_OK);
    WAIT_TRUE(pinned_to(fx, "vm-direct", "node-2"));
}

/* The control: the pod the unpin saw bound is never pinned again. A
 * newer VM's pin (queued after it) shows the controller judged it. */
static void unpin_of_a_running_vm_stays(void **state)
{
    fixture *fx = *state;
    char uid[64];
    running_vm(fx, "vm-kept", "node-0", "node-0", "virt-launcher-vm-kept", uid, sizeof(uid));
    owner(fx, "vm-kept", NULL);
    char seen[256];
    annotation(fx, "vm-kept", KUBE_PIN_ANN_SEEN_PODS, seen, sizeof(seen));
    assert_true(seen[0]); /* the launcher pod's uid */
    running_vm(fx, "vm-kept-marker", NULL, "node-1", "virt-launcher-vm-kept-marker", uid,
               sizeof(uid));
    WAIT_TRUE(pinned_to(fx, "vm-kept-marker", "node-1"));
    assert_true(pinned_to(fx, "vm-kept", ""));
}

/* #30 (2): the first pin cannot be written (a down webhook); the VM
 * live-migrates from node-0 to node-2 (its source pod exits): once the
 * webhook is back it is pinned to node-2, where it runs. (The old scan
 * skipped the target pod, found none and gave up.) */
static void migration_before_first_pin_is_pinned(void **state)
{
    fixture *fx = *state;
    char uid[64];
    webhook_down(fx);
    running_vm(fx, "vm-early", NULL, "node-0", "virt-launcher-vm-early-a", uid, sizeof(uid));
    WAIT_TRUE(refused(fx, "vm-early") > 0);
    bound_pod(fx, "vm-early", uid, "virt-launcher-vm-early-b", "node-2", "mig-early");
    merge_patch(fx, PODS_PATH "/virt-launcher-vm-early-a/status",
                "{\"status\":{\"phase\":\"Succeeded\"}}");
    vmi_status(fx, "vm-early", "node-2", "mig-early", "node-0", "node-2", 1);
    int before = refused(fx, "vm-early");
    WAIT_TRUE(refused(fx, "vm-early") > before); /* judged again since, still refused */
    assert_true(stats(fx).pending > 0);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    WAIT_TRUE(pinned_to(fx, "vm-early", "node-2"));
    WAIT_TRUE(stats(fx).pending == 0);
}

/* Until the controller's VM cache shows name pinned to node. */
static int cached_pin(fixture *fx, const char *name, const char *node)
{
    kube_object *vm = kube_lister_get(fx->vms, NS, name);
    const char *pin = vm ? kube_pin_get(kube_vm_from(vm), KUBE_PIN_DEFAULT_KEY) : NULL;
    int ok = pin && strcmp(pin, node) == 0;
    kube_object_unref(vm);
    return ok;
}

/* #30 (5): vm-01 pinned to node-0 live-migrates to node-1; meanwhile its
 * owner pins it to node-2 (the migration is rightly not followed); then
 * pins it back to node-0. That /pin saw the migration completed: the
 * controller never follows it. A later VM's migration, followed, shows
 * vm-01 was judged. (The old rule followed it: the pin moved to node-1.) */
static void owner_pin_back_after_old_migration_stays(void **state)
{
    fixture *fx = *state;
    char uid[64];
    running_vm(fx, "vm-01", "node-0", "node-0", "virt-launcher-vm-01", uid, sizeof(uid));
    running_vm(fx, "vm-01-marker", "node-0", "node-0", "virt-launcher-vm-01-marker", uid,
               sizeof(uid));
    vmi_status(fx, "vm-01", "node-0", "mig-01", "node-0", "node-1", 0);
    owner(fx, "vm-01", "node-2");
    vmi_status(fx, "vm-01", "node-1", "mig-01", "node-0", "node-1", 1);
    owner(fx, "vm-01", "node-0");
    char v[64];
    annotation(fx, "vm-01", KUBE_PIN_ANN_SEEN_MIGRATION, v, sizeof(v));
    assert_string_equal(v, "mig-01");
    WAIT_TRUE(cached_pin(fx, "vm-01", "node-0")); /* its reconcile is queued */
    vmi_status(fx, "vm-01-marker", "node-1", "mig-marker", "node-0", "node-1", 1);
    WAIT_TRUE(pinned_to(fx, "vm-01-marker", "node-1"));
    assert_true(pinned_to(fx, "vm-01", "node-0"));
    assert_true(cached_pin(fx, "vm-01", "node-0"));
}

/* How many requests of verb on resource by the scheduler the emulator's
 * log holds answered code (0: in flight, or never answered). */
static int sched_requests(fixture *fx, const char *verb, const char *resource, int code)
{
    cJSON *items = NULL, *it;
    int n = 0;
    assert_int_equal(harness_requests(fx->h, verb, resource, SCHED_USER, &items), KUBE_OK);
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *c = cJSON_GetObjectItem(it, "code");
        n += cJSON_IsNumber(c) && c->valueint == code;
    }
    cJSON_Delete(items);
    return n;
}

/* #30 (5), a lagging cache: the controller's VMI cache still shows an older
 * completed migration (node-0 -> node-1) while kube-apiserver holds a newer
 * one (node-1 -> node-2) and the owner, having seen that one, pins the VM
 * back to node-0. On the cache the old migration looks due (pinned to its
 * source, neither followed nor seen); the controller reads the VMI again
 * before writing (its GET, while the cache still lags) and leaves the
 * owner's pin; a VM pinned after it shows nothing more came. (Following
 * the cached state moved the pin to node-1.) */
static void lagging_vmi_cache_cannot_move_the_pin_back(void **state)
{
    fixture *fx = *state;
    static const char *const users[] = {SCHED_USER, NULL}, *const watch[] = {"watch", NULL},
                             *const vmis[] = {"virtualmachineinstances", NULL};
    const harness_fault_rule hold = {
        .action = HARNESS_FAULT_STALL, .verbs = watch, .resources = vmis, .users = users};
    char uid[64];
    running_vm(fx, "vm-lag", "node-0", "node-0", "virt-launcher-vm-lag", uid, sizeof(uid));
    vmi_status(fx, "vm-lag", "node-0", "mig-lag-1", "node-0", "node-1", 0);
    owner(fx, "vm-lag", "node-2");
    vmi_status(fx, "vm-lag", "node-1", "mig-lag-1", "node-0", "node-1", 1);
    kube_object *vmi = NULL;
    WAIT_TRUE(
        (vmi = kube_lister_get(fx->vmis, NS, "vm-lag")) != NULL &&
        (strcmp(kube_vmi_from(vmi)->node_name, "node-1") == 0 || (kube_object_unref(vmi), 0)));
    kube_object_unref(vmi);
    /* the VMI cache freezes at mig-lag-1 */
    assert_int_equal(harness_clear_requests(fx->h), KUBE_OK);
    assert_int_equal(harness_set_fault_rules(fx->h, &hold, 1), KUBE_OK);
    assert_int_equal(harness_drop_watches(fx->h), KUBE_OK);
    WAIT_TRUE(sched_requests(fx, "watch", "virtualmachineinstances", 0) > 0);
    vmi_status(fx, "vm-lag", "node-2", "mig-lag-2", "node-1", "node-2", 1);
    assert_int_equal(harness_clear_requests(fx->h), KUBE_OK);
    owner(fx, "vm-lag", "node-0");
    WAIT_TRUE(cached_pin(fx, "vm-lag", "node-0"));
    WAIT_TRUE(sched_requests(fx, "get", "virtualmachineinstances", 200) > 0); /* judged */
    vmi = kube_lister_get(fx->vmis, NS, "vm-lag");
    assert_string_equal(kube_vmi_from(vmi)->node_name, "node-1"); /* on the old state */
    kube_object_unref(vmi);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    running_vm(fx, "vm-lag-marker", NULL, "node-1", "virt-launcher-vm-lag-marker", uid,
               sizeof(uid));
    WAIT_TRUE(pinned_to(fx, "vm-lag-marker", "node-1"));
    assert_true(pinned_to(fx, "vm-lag", "node-0"));
}

/* The owner's /pin to the node the VM is pinned to already, after a
 * migration away from it completed (its follow held back by a down
 * webhook): the pin does not change, but the decision records the
 * migration it saw, so the migration is never followed once the webhook
 * is back. A migration nobody saw, completed after, is followed. (An
 * unchanged pin wrote nothing: the old migration was followed then.) */
static void owner_pin_to_the_same_node_records_the_migration(void **state)
{
    fixture *fx = *state;
    char uid[64], v[64];
    running_vm(fx, "vm-same", "node-0", "node-0", "virt-launcher-vm-same", uid, sizeof(uid));
    running_vm(fx, "vm-same-marker", "node-0", "node-0", "virt-launcher-vm-same-marker", uid,
               sizeof(uid));
    webhook_down(fx);
    vmi_status(fx, "vm-same", "node-1", "mig-same", "node-0", "node-1", 1);
    WAIT_TRUE(refused(fx, "vm-same") > 0); /* the follow, held back */
    owner(fx, "vm-same", "node-0");
    annotation(fx, "vm-same", KUBE_PIN_ANN_SEEN_MIGRATION, v, sizeof(v));
    assert_string_equal(v, "mig-same");
    /* the controller judged the VM again after the decision and holds
     * nothing: had it kept following the migration, its refused follow
     * would stay queued for a retry */
    WAIT_TRUE(cached_pin(fx, "vm-same", "node-0") && stats(fx).busy == 0);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    vmi_status(fx, "vm-same-marker", "node-2", "mig-same-marker", "node-0", "node-2", 1);
    WAIT_TRUE(pinned_to(fx, "vm-same-marker", "node-2"));
    assert_true(pinned_to(fx, "vm-same", "node-0"));
}

/* Whether the emulator's log holds a watch of virtualmachines by the
 * scheduler still in flight (code 0). */
static int vm_watch_held(fixture *fx)
{
    cJSON *items = NULL, *it;
    int n = 0;
    assert_int_equal(harness_requests(fx->h, "watch", "virtualmachines", SCHED_USER, &items),
                     KUBE_OK);
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *c = cJSON_GetObjectItem(it, "code");
        n += cJSON_IsNumber(c) && c->valueint == 0;
    }
    cJSON_Delete(items);
    return n;
}

#define N_GONE 20

/* Whether the controller's VM cache holds VM name. */
static int vm_cached(fixture *fx, const char *name)
{
    kube_object *vm = kube_lister_get(fx->vms, NS, name);
    kube_object_unref(vm);
    return vm != NULL;
}

/* The controller's map of its writes (kept until its VM cache shows each)
 * forgets VMs deleted before their cache showed it: the VM watch is held
 * while the first pins land, the VMs are deleted and the server's history
 * forgotten; once the informer lists again the entries return to 0. (The
 * old controller had no delete handler: they stayed forever.) */
static void written_forgets_deleted_vms(void **state)
{
    fixture *fx = *state;
    static const char *const users[] = {SCHED_USER, NULL}, *const watch[] = {"watch", NULL},
                             *const vms[] = {"virtualmachines", NULL};
    const harness_fault_rule hold = {
        .action = HARNESS_FAULT_STALL, .verbs = watch, .resources = vms, .users = users};
    char name[32], pod[48], uid[64], vm_uid[64], path[256];
    for (int i = 0; i < N_GONE; i++) {
        snprintf(name, sizeof(name), "vm-gone-%d", i);
        kvc_create_vm(fx->h, NS, name, NULL, NULL, vm_uid, sizeof(vm_uid));
        WAIT_TRUE(vm_cached(fx, name));
    }
    assert_int_equal(harness_clear_requests(fx->h), KUBE_OK);
    assert_int_equal(harness_set_fault_rules(fx->h, &hold, 1), KUBE_OK);
    assert_int_equal(harness_drop_watches(fx->h), KUBE_OK);
    WAIT_TRUE(vm_watch_held(fx) > 0);
    for (int i = 0; i < N_GONE; i++) {
        snprintf(name, sizeof(name), "vm-gone-%d", i);
        snprintf(pod, sizeof(pod), "virt-launcher-%s", name);
        kube_object *vm = kube_lister_get(fx->vms, NS, name);
        assert_non_null(vm);
        kvc_create_vmi(fx->h, NS, name, vm->meta.uid, uid, sizeof(uid));
        kube_object_unref(vm);
        bound_pod(fx, name, uid, pod, "node-1", NULL);
    }
    for (int i = 0; i < N_GONE; i++) {
        snprintf(name, sizeof(name), "vm-gone-%d", i);
        WAIT_TRUE(pinned_to(fx, name, "node-1"));
    }
    WAIT_TRUE(stats(fx).written >= N_GONE); /* none of them shown by the held cache */
    for (int i = 0; i < N_GONE; i++) {
        snprintf(path, sizeof(path), VMS_PATH "/vm-gone-%d", i);
        request_ok(fx, "DELETE", path, NULL, NULL);
    }
    /* the history forgotten: the informer lists again and sees them gone
     * (deletions only, no update showing the writes) */
    assert_int_equal(harness_restart(fx->h), KUBE_OK);
    assert_int_equal(harness_set_fault_rules(fx->h, NULL, 0), KUBE_OK);
    WAIT_TRUE(stats(fx).written == 0);
}

int test_group_pin_ordering_integration(void)
{
#define T(fn) cmocka_unit_test_teardown(fn, test_teardown)
    /* clang-format off */
    const struct CMUnitTest tests[] = {
        T(webhook_refuses_only_the_users_writes),
        T(same_second_unpin_then_bind_is_pinned),
        T(unpin_writer_clock_ahead_is_pinned),
        T(spec_node_name_pod_after_unpin_is_pinned),
        T(unpin_of_a_running_vm_stays),
        T(migration_before_first_pin_is_pinned),
        T(owner_pin_back_after_old_migration_stays),
        T(lagging_vmi_cache_cannot_move_the_pin_back),
        T(owner_pin_to_the_same_node_records_the_migration),
        T(written_forgets_deleted_vms),
    };
    /* clang-format on */
#undef T
    return cmocka_run_group_tests_name("pin_ordering_integration", tests, group_setup,
                                       group_teardown);
}
