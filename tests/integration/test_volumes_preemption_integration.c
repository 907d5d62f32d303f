/*
 * tests/integration/test_volumes_preemption_integration.c - the scheduler
 * in-process against the API emulator with the volume and preemption
 * plugins (the emulator serves the storage kinds and completes volume
 * binds as the PV controller would, tests/emulator/storage_kinds.c):
 *   - a pod whose WaitForFirstConsumer claim can only use a local PV lands
 *     on the PV's node; PreBind wrote the PV's claimRef and the claim ends
 *     Bound to it;
 *   - a pod whose claim is already bound to a local PV lands on that node;
 *   - a pod with an unbound Immediate claim is unschedulable with
 *     kube-scheduler's message;
 *   - a pod whose claim has no PV yet waits, and binds once the PV is
 *     created (PvAdd requeues it);
 *   - a high-priority pod with preemptionPolicy Never preempts nobody;
 *   - a high-priority pod preempts a low-priority pod (on the node where no
 *     PodDisruptionBudget is violated), which is deleted with a Preempted
 *     event; the pod gets status.nominatedNodeName and is then bound there.
 * Waits use deadlines; nothing asserts speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "kube/buf.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/errors.h"
#include "scheduler.h"

#define WAIT_MS 30000
#define PODS "/api/v1/namespaces/default/pods"
#define PVCS "/api/v1/namespaces/default/persistentvolumeclaims"
#define PVS "/api/v1/persistentvolumes"

typedef struct fixture {
    harness *h;
    kube_config *kc;
    kube_client *client;
    sched_config *cfg;
    sched_scheduler *sched;
} fixture;

static const char config_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "leaderElection:\n"
                                  "  leaderElect: false\n";

/* ------------------------------------------------------------------ */
/* API helpers                                                         */
/* ------------------------------------------------------------------ */

static void create(fixture *fx, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void create(fixture *fx, const char *path, const char *fmt, ...)
{
    char json[4096];
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(json, sizeof(json), fmt, ap);
    va_end(ap);
    if ((rc = harness_create(fx->h, path, json, NULL)) != KUBE_OK)
        fail_msg("create %s: %s (%s)", path, kube_strerror(rc), json);
}

static void create_node(fixture *fx, const char *name)
{
    create(fx, "/api/v1/nodes",
           "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
           "\"kubernetes.io/hostname\":\"%s\"}},\"status\":{\"capacity\":{\"cpu\":\"4\","
           "\"memory\":\"16Gi\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"4\",\"memory\":"
           "\"16Gi\",\"pods\":\"110\"}}}",
           name, name);
}

/* A pod requesting cpu with priority, labels (JSON members) and extra
 * spec members. */
static void create_pod(fixture *fx, const char *name, const char *cpu, int priority,
                       const char *labels, const char *extra_spec)
{
    create(fx, PODS,
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
           "\"default\",\"labels\":{%s}},\"spec\":{\"priority\":%d,\"containers\":[{\"name\":"
           "\"c\",\"image\":\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":"
           "\"%s\",\"memory\":\"64Mi\"}}}]%s}}",
           name, labels ? labels : "", priority, cpu, extra_spec ? extra_spec : "");
}

static const char *claim_volume(const char *claim, char *buf, size_t n)
{
    snprintf(buf, n, ",\"volumes\":[{\"name\":\"disk\",\"persistentVolumeClaim\":{"
             "\"claimName\":\"%s\"}}]", claim);
    return buf;
}

static void create_local_pv(fixture *fx, const char *name, const char *cls, const char *node,
                            const char *claim_ref)
{
    create(fx, PVS,
           "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
           "\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
           "\"storageClassName\":\"%s\",\"local\":{\"path\":\"/mnt/disks/%s\"},\"nodeAffinity\":"
           "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
           "\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"%s\"]}]}]}}%s}}",
           name, cls, name, node, claim_ref ? claim_ref : "");
}

static void create_pvc(fixture *fx, const char *name, const char *cls, const char *volume)
{
    char vol[128] = "";
    if (volume)
        snprintf(vol, sizeof(vol), ",\"volumeName\":\"%s\"", volume);
    create(fx, PVCS,
           "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
           "\"%s\",\"namespace\":\"default\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
           "\"storageClassName\":\"%s\",\"resources\":{\"requests\":{\"storage\":\"5Gi\"}}%s}}",
           name, cls, vol);
}

static void create_class(fixture *fx, const char *name, const char *mode)
{
    create(fx, "/apis/storage.k8s.io/v1/storageclasses",
           "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{"
           "\"name\":\"%s\"},\"provisioner\":\"kubernetes.io/no-provisioner\","
           "\"volumeBindingMode\":\"%s\"}",
           name, mode);
}

/* GET path: the parsed object, or NULL when 404. */
static cJSON *get(fixture *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static cJSON *get(fixture *fx, const char *fmt, ...)
{
    char path[512];
    long status = 0;
    cJSON *j = NULL;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    if (status == 404) {
        cJSON_Delete(j);
        return NULL;
    }
    assert_int_equal(status, 200);
    return j;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* Waits until the pod is bound; returns its node (caller frees). */
static char *wait_bound(fixture *fx, const char *pod)
{
    int64_t deadline = kube_now_ms() + WAIT_MS;

    while (kube_now_ms() < deadline) {
        cJSON *p = get(fx, PODS "/%s", pod);
        const char *node = p ? str_at(p, "spec", "nodeName") : NULL;
        char *copy = node && *node ? strdup(node) : NULL;
        cJSON_Delete(p);
        if (copy)
            return copy;
        usleep(50000);
    }
    fail_msg("pod %s not bound within %d ms", pod, WAIT_MS);
    return NULL;
}

/* The pod's PodScheduled=False condition message, once there (caller
 * frees). */
static char *wait_unschedulable(fixture *fx, const char *pod, const char *containing)
{
    int64_t deadline = kube_now_ms() + WAIT_MS;

    while (kube_now_ms() < deadline) {
        cJSON *p = get(fx, PODS "/%s", pod);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(p, "status"), "conditions"))
        {
            const char *msg = str_at(c, "message", NULL);
            if (!strcmp(str_at(c, "type", NULL), "PodScheduled") &&
                !strcmp(str_at(c, "status", NULL), "False") && msg && strstr(msg, containing)) {
                char *copy = strdup(msg);
                cJSON_Delete(p);
                return copy;
            }
        }
        cJSON_Delete(p);
        usleep(50000);
    }
    fail_msg("pod %s never reported PodScheduled=False with \"%s\"", pod, containing);
    return NULL;
}

/* The Preempted event of victim (caller deletes). */
static cJSON *wait_preempted_event(fixture *fx, const char *victim)
{
    int64_t deadline = kube_now_ms() + WAIT_MS;

    while (kube_now_ms() < deadline) {
        cJSON *list = get(fx, "/apis/events.k8s.io/v1/namespaces/default/events");
        const cJSON *ev;
        cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
        {
            const char *name = str_at(ev, "regarding", "name");
            const char *reason = str_at(ev, "reason", NULL);
            if (name && reason && !strcmp(name, victim) && !strcmp(reason, "Preempted")) {
                cJSON *copy = cJSON_Duplicate(ev, 1);
                cJSON_Delete(list);
                return copy;
            }
        }
        cJSON_Delete(list);
        usleep(100000);
    }
    fail_msg("no Preempted event for %s", victim);
    return NULL;
}

static void wait_gone(fixture *fx, const char *pod)
{
    int64_t deadline = kube_now_ms() + WAIT_MS;
    while (kube_now_ms() < deadline) {
        cJSON *p = get(fx, PODS "/%s", pod);
        if (!p)
            return;
        cJSON_Delete(p);
        usleep(50000);
    }
    fail_msg("pod %s still exists", pod);
}

static void delete_pod(fixture *fx, const char *pod)
{
    char path[256];
    harness_response r;

    snprintf(path, sizeof(path), PODS "/%s", pod);
    assert_int_equal(harness_request(fx->h, NULL, "DELETE", path, NULL, NULL, &r), KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
}

/* ------------------------------------------------------------------ */
/* Fixture                                                             */
/* ------------------------------------------------------------------ */

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    kube_client_options o;
    sched_scheduler_options so;
    char err[512] = "";

    assert_int_equal(harness_start(NULL, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->kc, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&o);
    o.qps = 0;
    assert_int_equal(kube_client_new(fx->kc, &o, &fx->client), KUBE_OK);
    for (const char *const *n = (const char *const[]){"node-a", "node-b", "node-c", NULL}; *n; n++)
        create_node(fx, *n);
    if (sched_config_load_string(config_yaml, strlen(config_yaml), "test.yaml", NULL, &fx->cfg,
                                 err, sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    memset(&so, 0, sizeof(so));
    so.config = fx->cfg;
    so.client = fx->client;
    so.binding_workers = 4;
    if (sched_scheduler_new(&so, &fx->sched, err, sizeof(err)) != KUBE_OK)
        fail_msg("sched_scheduler_new: %s", err);
    assert_int_equal(sched_scheduler_start(fx->sched), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(fx->sched, WAIT_MS), KUBE_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    sched_scheduler_free(fx->sched);
    sched_config_free(fx->cfg);
    kube_client_free(fx->client);
    kube_config_free(fx->kc);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Volumes                                                             */
/* ------------------------------------------------------------------ */

static void local_volume_pins_the_pod(void **state)
{
    fixture *fx = *state;
    char vol[256];

    create_class(fx, "local", "WaitForFirstConsumer");
    create_local_pv(fx, "local-pv-b", "local", "node-b", NULL);
    create_pvc(fx, "vm-disk", "local", NULL);
    create_pod(fx, "vm-pod", "100m", 0, NULL, claim_volume("vm-disk", vol, sizeof(vol)));

    char *node = wait_bound(fx, "vm-pod");
    assert_string_equal(node, "node-b");
    free(node);
    /* PreBind pre-bound the PV to the claim; the claim ended Bound to it */
    cJSON *pv = get(fx, PVS "/local-pv-b");
    cJSON *pvc = get(fx, PVCS "/vm-disk");
    assert_string_equal(str_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "name"),
                        "vm-disk");
    assert_string_equal(str_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "uid"),
                        str_at(pvc, "metadata", "uid"));
    assert_string_equal(str_at(pvc, "spec", "volumeName"), "local-pv-b");
    assert_string_equal(str_at(pvc, "status", "phase"), "Bound");
    cJSON_Delete(pv);
    cJSON_Delete(pvc);
}

static void bound_local_volume_pins_the_pod(void **state)
{
    fixture *fx = *state;
    char vol[256];
    int64_t deadline = kube_now_ms() + WAIT_MS;

    create_class(fx, "local", "WaitForFirstConsumer");
    create_local_pv(fx, "local-pv-c", "local", "node-c", NULL);
    create_pvc(fx, "data", "local", "local-pv-c"); /* pre-bound by the user */
    for (;;) { /* the PV controller completes the bind */
        cJSON *pvc = get(fx, PVCS "/data");
        int bound = !strcmp(str_at(pvc, "status", "phase"), "Bound");
        cJSON_Delete(pvc);
        if (bound)
            break;
        assert_true(kube_now_ms() < deadline);
        usleep(50000);
    }
    create_pod(fx, "db", "100m", 0, NULL, claim_volume("data", vol, sizeof(vol)));
    char *node = wait_bound(fx, "db");
    assert_string_equal(node, "node-c");
    free(node);
}

static void unbound_immediate_claim_is_unschedulable(void **state)
{
    fixture *fx = *state;
    char vol[256];

    create_class(fx, "fast", "Immediate");
    create_pvc(fx, "unbound", "fast", NULL);
    create_pod(fx, "waits", "100m", 0, NULL, claim_volume("unbound", vol, sizeof(vol)));
    char *msg = wait_unschedulable(fx, "waits", "pod has unbound immediate");
    assert_true(!strncmp(msg, "0/3 nodes are available: pod has unbound immediate "
                              "PersistentVolumeClaims.",
                         strlen("0/3 nodes are available: pod has unbound immediate "
                                "PersistentVolumeClaims.")));
    free(msg);
}

/* No PV for the WaitForFirstConsumer claim: the pod waits; the PV's
 * creation (PvAdd from the volume plugins' informer) requeues it, long
 * before the 5-minute flush of unschedulable pods. */
static void pod_binds_when_its_volume_appears(void **state)
{
    fixture *fx = *state;
    char vol[256];

    create_class(fx, "local", "WaitForFirstConsumer");
    create_pvc(fx, "late", "local", NULL);
    create_pod(fx, "waits-for-pv", "100m", 0, NULL, claim_volume("late", vol, sizeof(vol)));
    free(wait_unschedulable(fx, "waits-for-pv", "didn't find available persistent volumes"));
    int64_t t0 = kube_now_ms();
    create_local_pv(fx, "late-pv", "local", "node-a", NULL);
    char *node = wait_bound(fx, "waits-for-pv");
    assert_string_equal(node, "node-a");
    free(node);
    print_message("bound %lld ms after the PV appeared\n", (long long)(kube_now_ms() - t0));
}

/* ------------------------------------------------------------------ */
/* Preemption                                                          */
/* ------------------------------------------------------------------ */

/* Three nodes each full with one low-priority pod; the PDB protects the
 * pods labelled low-a and low-b. Returns the node of low-c (caller frees). */
static char *fill_nodes(fixture *fx)
{
    static const char *const apps[] = {"low-a", "low-b", "low-c"};
    char *nodes[3], *c_node;

    create(fx, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
           "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{"
           "\"name\":\"protect\",\"namespace\":\"default\"},\"spec\":{\"maxUnavailable\":0,"
           "\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":"
           "[\"low-a\",\"low-b\"]}]}},\"status\":{\"disruptionsAllowed\":0,\"currentHealthy\":2,"
           "\"desiredHealthy\":2,\"expectedPods\":2}}");
    for (int i = 0; i < 3; i++) {
        char labels[64];
        snprintf(labels, sizeof(labels), "\"app\":\"%s\"", apps[i]);
        create_pod(fx, apps[i], "3", 0, labels, NULL);
    }
    for (int i = 0; i < 3; i++)
        nodes[i] = wait_bound(fx, apps[i]);
    assert_string_not_equal(nodes[0], nodes[1]);
    assert_string_not_equal(nodes[1], nodes[2]);
    assert_string_not_equal(nodes[0], nodes[2]);
    c_node = nodes[2];
    free(nodes[0]);
    free(nodes[1]);
    return c_node;
}

static void preemption_policy_never(void **state)
{
    fixture *fx = *state;
    char *c_node = fill_nodes(fx);

    create_pod(fx, "polite", "3", 1000, NULL, ",\"preemptionPolicy\":\"Never\"");
    char *msg = wait_unschedulable(fx, "polite",
                                   "preemption: not eligible due to preemptionPolicy=Never.");
    assert_non_null(strstr(msg, "3 Insufficient cpu"));
    free(msg);
    for (const char *const *p = (const char *const[]){"low-a", "low-b", "low-c", NULL}; *p; p++) {
        cJSON *pod = get(fx, PODS "/%s", *p);
        assert_non_null(pod);
        cJSON_Delete(pod);
    }
    free(c_node);
}

static void high_priority_pod_preempts(void **state)
{
    fixture *fx = *state;
    char *c_node = fill_nodes(fx);

    create_pod(fx, "urgent", "3", 1000, NULL, NULL);
    /* the victim: low-c, the only one whose eviction violates no PDB */
    cJSON *ev = wait_preempted_event(fx, "low-c");
    cJSON *urgent = get(fx, PODS "/urgent");
    char note[512];
    snprintf(note, sizeof(note), "Preempted by pod %s on node %s",
             str_at(urgent, "metadata", "uid"), c_node);
    assert_string_equal(str_at(ev, "note", NULL), note);
    assert_string_equal(str_at(ev, "type", NULL), "Normal");
    assert_string_equal(str_at(ev, "action", NULL), "Preempting");
    assert_string_equal(str_at(ev, "related", "name"), "urgent");
    cJSON_Delete(ev);
    cJSON_Delete(urgent);
    wait_gone(fx, "low-c");

    /* nominated, then bound, to that node; the others are untouched */
    char *node = wait_bound(fx, "urgent");
    assert_string_equal(node, c_node);
    urgent = get(fx, PODS "/urgent");
    assert_string_equal(str_at(urgent, "status", "nominatedNodeName"), c_node);
    cJSON_Delete(urgent);
    for (const char *const *p = (const char *const[]){"low-a", "low-b", NULL}; *p; p++) {
        cJSON *pod = get(fx, PODS "/%s", *p);
        assert_non_null(pod);
        cJSON_Delete(pod);
    }
    free(node);
    free(c_node);
    delete_pod(fx, "urgent");
}

int test_group_volumes_preemption_integration(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(local_volume_pins_the_pod),
        T(bound_local_volume_pins_the_pod),
        T(unbound_immediate_claim_is_unschedulable),
        T(pod_binds_when_its_volume_appears),
        T(preemption_policy_never),
        T(high_priority_pod_preempts),
    };
#undef T
    return cmocka_run_group_tests_name("volumes_preemption_integration", tests, NULL, NULL);
}
