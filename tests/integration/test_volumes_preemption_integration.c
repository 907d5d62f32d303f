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

#include "config/config.h"
#include "harness.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "scheduler.h"
#include "sched_fixture.h"

#define PODS "/api/v1/namespaces/default/pods"
#define PVCS "/api/v1/namespaces/default/persistentvolumeclaims"
#define PVS "/api/v1/persistentvolumes"

/* ------------------------------------------------------------------ */
/* API helpers                                                         */
/* ------------------------------------------------------------------ */

static void create_node(sf_fixture *fx, const char *name)
{
    sf_create(fx->h, "/api/v1/nodes",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
              "\"kubernetes.io/hostname\":\"%s\"}},\"status\":{\"capacity\":{\"cpu\":\"4\","
              "\"memory\":\"16Gi\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"4\",\"memory\":"
              "\"16Gi\",\"pods\":\"110\"}}}",
              name, name);
}

/* A pod requesting cpu with priority, labels (JSON members) and extra
 * spec members. */
static void create_pod(sf_fixture *fx, const char *name, const char *cpu, int priority,
                       const char *labels, const char *extra_spec)
{
    sf_create(fx->h, PODS,
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
              "\"default\",\"labels\":{%s}},\"spec\":{\"priority\":%d,\"containers\":[{\"name\":"
              "\"c\",\"image\":\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":"
              "\"%s\",\"memory\":\"64Mi\"}}}]%s}}",
              name, labels ? labels : "", priority, cpu, extra_spec ? extra_spec : "");
}

static const char *claim_volume(const char *claim, char *buf, size_t n)
{
    snprintf(buf, n,
             ",\"volumes\":[{\"name\":\"disk\",\"persistentVolumeClaim\":{"
             "\"claimName\":\"%s\"}}]",
             claim);
    return buf;
}

static void create_local_pv(sf_fixture *fx, const char *name, const char *cls, const char *node,
                            const char *claim_ref)
{
    sf_create(fx->h, PVS,
              "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
              "\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
              "\"storageClassName\":\"%s\",\"local\":{\"path\":\"/mnt/disks/%s\"},\"nodeAffinity\":"
              "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
              "\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"%s\"]}]}]}}%s}}",
              name, cls, name, node, claim_ref ? claim_ref : "");
}

static void create_pvc(sf_fixture *fx, const char *name, const char *cls, const char *volume)
{
    char vol[128] = "";
    if (volume)
        snprintf(vol, sizeof(vol), ",\"volumeName\":\"%s\"", volume);
    sf_create(fx->h, PVCS,
              "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
              "\"%s\",\"namespace\":\"default\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
              "\"storageClassName\":\"%s\",\"resources\":{\"requests\":{\"storage\":\"5Gi\"}}%s}}",
              name, cls, vol);
}

static void create_class(sf_fixture *fx, const char *name, const char *mode)
{
    sf_create(fx->h, "/apis/storage.k8s.io/v1/storageclasses",
              "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{"
              "\"name\":\"%s\"},\"provisioner\":\"kubernetes.io/no-provisioner\","
              "\"volumeBindingMode\":\"%s\"}",
              name, mode);
}

/* 1 if pod no longer exists. */
static int pod_gone(sf_fixture *fx, const char *pod)
{
    cJSON *p = sf_find(fx->h, PODS "/%s", pod);
    cJSON_Delete(p);
    return p == NULL;
}

static void wait_gone(sf_fixture *fx, const char *pod)
{
    WAIT_TRUE_MS_MSG(pod_gone(fx, pod), SF_WAIT_MS, "pod %s still exists", pod);
}

/* 1 if the claim's status.phase is Bound. */
static int claim_bound(sf_fixture *fx, const char *claim)
{
    cJSON *pvc = sf_find(fx->h, PVCS "/%s", claim);
    const char *phase = sf_str_at(pvc, "status", "phase");
    int bound = phase && !strcmp(phase, "Bound");
    cJSON_Delete(pvc);
    return bound;
}

static void delete_pod(sf_fixture *fx, const char *pod)
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

/* sf_setup() with nodes node-a, node-b and node-c and the scheduler
 * started. */
static int setup(void **state)
{
    sf_setup(state);
    sf_fixture *fx = *state;
    for (const char *const *n = (const char *const[]){"node-a", "node-b", "node-c", NULL}; *n; n++)
        create_node(fx, *n);
    sf_start_scheduler(fx);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Volumes                                                             */
/* ------------------------------------------------------------------ */

static void local_volume_pins_the_pod(void **state)
{
    sf_fixture *fx = *state;
    char vol[256];

    create_class(fx, "local", "WaitForFirstConsumer");
    create_local_pv(fx, "local-pv-b", "local", "node-b", NULL);
    create_pvc(fx, "vm-disk", "local", NULL);
    create_pod(fx, "vm-pod", "100m", 0, NULL, claim_volume("vm-disk", vol, sizeof(vol)));

    char *node = sf_wait_bound(fx->h, "vm-pod");
    assert_string_equal(node, "node-b");
    free(node);
    /* PreBind pre-bound the PV to the claim; the claim ended Bound to it */
    cJSON *pv = sf_find(fx->h, PVS "/local-pv-b");
    cJSON *pvc = sf_find(fx->h, PVCS "/vm-disk");
    assert_string_equal(sf_str_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "name"),
                        "vm-disk");
    assert_string_equal(sf_str_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "uid"),
                        sf_str_at(pvc, "metadata", "uid"));
    assert_string_equal(sf_str_at(pvc, "spec", "volumeName"), "local-pv-b");
    assert_string_equal(sf_str_at(pvc, "status", "phase"), "Bound");
    cJSON_Delete(pv);
    cJSON_Delete(pvc);
}

static void bound_local_volume_pins_the_pod(void **state)
{
    sf_fixture *fx = *state;
    char vol[256];

    create_class(fx, "local", "WaitForFirstConsumer");
    create_local_pv(fx, "local-pv-c", "local", "node-c", NULL);
    create_pvc(fx, "data", "local", "local-pv-c"); /* pre-bound by the user */
    /* the PV controller completes the bind */
    WAIT_TRUE_MS(claim_bound(fx, "data"), SF_WAIT_MS);
    create_pod(fx, "db", "100m", 0, NULL, claim_volume("data", vol, sizeof(vol)));
    char *node = sf_wait_bound(fx->h, "db");
    assert_string_equal(node, "node-c");
    free(node);
}

static void unbound_immediate_claim_is_unschedulable(void **state)
{
    sf_fixture *fx = *state;
    char vol[256];

    create_class(fx, "fast", "Immediate");
    create_pvc(fx, "unbound", "fast", NULL);
    create_pod(fx, "waits", "100m", 0, NULL, claim_volume("unbound", vol, sizeof(vol)));
    char *msg = sf_wait_unschedulable(fx->h, "waits", "pod has unbound immediate");
    assert_true(!strncmp(msg,
                         "0/3 nodes are available: pod has unbound immediate "
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
    sf_fixture *fx = *state;
    char vol[256];

    create_class(fx, "local", "WaitForFirstConsumer");
    create_pvc(fx, "late", "local", NULL);
    create_pod(fx, "waits-for-pv", "100m", 0, NULL, claim_volume("late", vol, sizeof(vol)));
    free(sf_wait_unschedulable(fx->h, "waits-for-pv", "didn't find available persistent volumes"));
    int64_t t0 = kube_now_ms();
    create_local_pv(fx, "late-pv", "local", "node-a", NULL);
    char *node = sf_wait_bound(fx->h, "waits-for-pv");
    assert_string_equal(node, "node-a");
    free(node);
    print_message("bound %lld ms after the PV appeared\n", (long long)(kube_now_ms() - t0));
}

/* ------------------------------------------------------------------ */
/* Preemption                                                          */
/* ------------------------------------------------------------------ */

/* Three nodes each full with one low-priority pod; the PDB protects the
 * pods labelled low-a and low-b. Returns the node of low-c (caller frees). */
static char *fill_nodes(sf_fixture *fx)
{
    static const char *const apps[] = {"low-a", "low-b", "low-c"};
    char *nodes[3], *c_node;

    sf_create(fx->h, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
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
        nodes[i] = sf_wait_bound(fx->h, apps[i]);
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
    sf_fixture *fx = *state;
    char *c_node = fill_nodes(fx);

    create_pod(fx, "polite", "3", 1000, NULL, ",\"preemptionPolicy\":\"Never\"");
    char *msg = sf_wait_unschedulable(fx->h, "polite",
                                      "preemption: not eligible due to preemptionPolicy=Never.");
    assert_non_null(strstr(msg, "3 Insufficient cpu"));
    free(msg);
    for (const char *const *p = (const char *const[]){"low-a", "low-b", "low-c", NULL}; *p; p++) {
        cJSON *pod = sf_find(fx->h, PODS "/%s", *p);
        assert_non_null(pod);
        cJSON_Delete(pod);
    }
    free(c_node);
}

static void high_priority_pod_preempts(void **state)
{
    sf_fixture *fx = *state;
    char *c_node = fill_nodes(fx);

    create_pod(fx, "urgent", "3", 1000, NULL, NULL);
    /* the victim: low-c, the only one whose eviction violates no PDB */
    cJSON *ev = sf_wait_event(fx->h, "low-c", "Preempted");
    cJSON *urgent = sf_find(fx->h, PODS "/urgent");
    char note[512];
    snprintf(note, sizeof(note), "Preempted by pod %s on node %s",
             sf_str_at(urgent, "metadata", "uid"), c_node);
    assert_string_equal(sf_str_at(ev, "note", NULL), note);
    assert_string_equal(sf_str_at(ev, "type", NULL), "Normal");
    assert_string_equal(sf_str_at(ev, "action", NULL), "Preempting");
    assert_string_equal(sf_str_at(ev, "related", "name"), "urgent");
    cJSON_Delete(ev);
    cJSON_Delete(urgent);
    wait_gone(fx, "low-c");

    /* nominated, then bound, to that node; the others are untouched */
    char *node = sf_wait_bound(fx->h, "urgent");
    assert_string_equal(node, c_node);
    urgent = sf_find(fx->h, PODS "/urgent");
    assert_string_equal(sf_str_at(urgent, "status", "nominatedNodeName"), c_node);
    cJSON_Delete(urgent);
    for (const char *const *p = (const char *const[]){"low-a", "low-b", NULL}; *p; p++) {
        cJSON *pod = sf_find(fx->h, PODS "/%s", *p);
        assert_non_null(pod);
        cJSON_Delete(pod);
    }
    free(node);
    free(c_node);
    delete_pod(fx, "urgent");
}

int test_group_volumes_preemption_integration(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, sf_teardown)
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
