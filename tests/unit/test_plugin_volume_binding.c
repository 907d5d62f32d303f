/*
 * tests/unit/test_plugin_volume_binding.c - VolumeBinding, with the cases of
 * kube-scheduler v1.28's volume_binding_test.go TestVolumeBinding (no
 * claims, all bound, local volumes narrowing the nodes, missing claims,
 * unbound immediate claims, no matching PVs, node affinity conflicts,
 * missing PVs, lost claims, closest-capacity matches) and binder_test.go
 * (FindPodVolumes: pre-bound PVs, access modes, volume modes, selectors,
 * provisioning with allowedTopologies and selected nodes; AssumePodVolumes
 * and RevertAssumedPodVolumes), generic ephemeral volumes, args defaulting
 * and validation, and PreBind's failure without an API client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "kube/util/errors.h"
#include "kube/types/pod.h"
#include "metrics.h"
#include "plugins/plugins.h"
#include "plugins/volumebinding/volume_binding.h"
#include "kube/machinery/factory.h"
#include "unit/test_plugin_volume_util.h"
#include "kube/util/metrics_testing.h"
#include "framework/types_testing.h"

#define VB_NOT_FOUND(name) "persistentvolumeclaim \"" name "\" not found"

/* ------------------------------------------------------------------ */
/* Fixtures (test_utils.go's makePV / makePVC / makePod / makeNode)    */
/* ------------------------------------------------------------------ */

static void put_classes(vt_world *w)
{
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'immediate-sc'},'provisioner':'x',"
           "'volumeBindingMode':'Immediate'}");
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'wait-sc'},'provisioner':"
           "'kubernetes.io/no-provisioner','volumeBindingMode':"
           "'WaitForFirstConsumer'}");
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'wait-hdd-sc'},'provisioner':"
           "'kubernetes.io/no-provisioner','volumeBindingMode':"
           "'WaitForFirstConsumer'}");
}

/* A PV of class cls in phase, with hostname node affinity (host NULL:
 * none), capacity cap (NULL: none) and extra spec members. */
static void put_pv(vt_world *w, const char *name, const char *cls, const char *phase,
                   const char *host, const char *cap, const char *extra)
{
    char aff[512] = "", capa[128] = "";

    if (host)
        snprintf(aff, sizeof(aff),
                 ",'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':"
                 "[{'key':'kubernetes.io/hostname','operator':'In','values':['%s']}]}]}}",
                 host);
    if (cap)
        snprintf(capa, sizeof(capa), ",'capacity':{'storage':'%s'}", cap);
    vt_putf(w, PLUGIN_VOL_PV,
            "{'metadata':{'name':'%s'},'spec':{'storageClassName':'%s'%s%s%s},"
            "'status':{'phase':'%s'}}",
            name, cls, aff, capa, extra ? extra : "", phase);
}

/* A claim of class cls; bound_pv non-NULL binds it (volumeName and the
 * bind-completed annotation); req is the storage request or NULL. */
static void put_pvc(vt_world *w, const char *name, const char *cls, const char *bound_pv,
                    const char *req, const char *extra)
{
    char bound[256] = "", ann[128] = "", reqs[128] = "";

    if (bound_pv) {
        snprintf(bound, sizeof(bound), ",'volumeName':'%s'", bound_pv);
        snprintf(ann, sizeof(ann), ",'annotations':{'pv.kubernetes.io/bind-completed':'true'}");
    }
    if (req)
        snprintf(reqs, sizeof(reqs), ",'resources':{'requests':{'storage':'%s'}}", req);
    vt_putf(w, PLUGIN_VOL_PVC,
            "{'metadata':{'name':'%s','uid':'uid-%s'%s},'spec':{'storageClassName':'%s'%s%s%s}}",
            name, name, ann, cls, bound, reqs, extra ? extra : "");
}

/* A pod using claims (NULL-terminated). */
static fw_pod_info *pod_with(const char *const *claims)
{
    char vols[2048] = "";
    size_t off = 0;

    for (int i = 0; claims[i]; i++)
        off += (size_t)snprintf(vols + off, sizeof(vols) - off,
                                "%s{'name':'v%d','persistentVolumeClaim':{'claimName':'%s'}}",
                                i ? "," : "", i, claims[i]);
    return tp_podf("{'metadata':{'name':'pod-a'},'spec':{'volumes':[%s]}}", vols);
}

static fw_node_info *node(const char *name, const char *extra_labels)
{
    char labels[512];
    snprintf(labels, sizeof(labels), "{'kubernetes.io/hostname':'%s'%s%s}", name,
             extra_labels ? "," : "", extra_labels ? extra_labels : "");
    return tp_node_simple(name, NULL, labels, NULL);
}

/* ------------------------------------------------------------------ */
/* Running PreFilter then Filter on nodes with one cycle state         */
/* ------------------------------------------------------------------ */

typedef struct run {
    tp_plugin *p;
    fw_cycle_state *cs;
    fw_status *pre;               /* PreFilter status */
    fw_pre_filter_result *result; /* PreFilter result */
} run;

static void run_pre_filter(run *r, vt_world *w, const fw_pod_info *pod)
{
    memset(r, 0, sizeof(*r));
    r->p = vt_plugin(&plugin_volume_binding, w, NULL, NULL);
    r->cs = fw_cycle_state_new();
    assert_non_null(r->cs);
    r->pre = r->p->desc->pre_filter(r->p->self, r->cs, pod, &r->result);
}

static fw_status *run_filter(run *r, const fw_pod_info *pod, const fw_node_info *ni)
{
    return r->p->desc->filter(r->p->self, r->cs, pod, ni);
}

static void run_free(run *r)
{
    fw_status_free(r->pre);
    fw_pre_filter_result_free(r->result);
    fw_cycle_state_free(r->cs);
    tp_plugin_free(r->p);
}

/* One table row: PreFilter's code/message, then Filter on each node. */
typedef struct row {
    fw_code pre_code;
    const char *pre_msg;
    const char *result; /* "node-a,node-b" PreFilterResult, "" empty, NULL none */
    fw_code filter_code[3];
    const char *filter_msg[3];
} row;

static void expect_result(const fw_pre_filter_result *r, const char *want)
{
    char got[512] = "";
    size_t off = 0;

    if (!want) {
        assert_null(r);
        return;
    }
    assert_non_null(r);
    for (size_t i = 0; i < r->n; i++)
        off +=
            (size_t)snprintf(got + off, sizeof(got) - off, "%s%s", i ? "," : "", r->node_names[i]);
    assert_string_equal(got, want);
}

static void check_row(vt_world *w, const fw_pod_info *pod, fw_node_info **nodes, size_t n,
                      const row *want)
{
    run r;

    run_pre_filter(&r, w, pod);
    tp_assert_status(r.pre, want->pre_code, want->pre_msg);
    r.pre = NULL;
    expect_result(r.result, want->result);
    for (size_t i = 0; want->pre_code == FW_SUCCESS && i < n; i++)
        tp_assert_status(run_filter(&r, pod, nodes[i]), want->filter_code[i], want->filter_msg[i]);
    run_free(&r);
}

/* ------------------------------------------------------------------ */
/* TestVolumeBinding                                                   */
/* ------------------------------------------------------------------ */

static void test_no_pvcs(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'pod-a'},'spec':{}}");
    fw_node_info *n = node("node-a", NULL);
    row want = {FW_SKIP, NULL, NULL, {0}, {0}};
    run r;

    put_classes(w);
    check_row(w, pod, &n, 1, &want);
    /* skipped: Reserve finds nothing to bind and PreBind does nothing */
    run_pre_filter(&r, w, pod);
    tp_assert_status(r.p->desc->reserve(r.p->self, r.cs, pod, "node-a"), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->pre_bind(r.p->self, r.cs, pod, "node-a"), FW_SUCCESS, NULL);
    run_free(&r);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_all_bound(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    row want = {FW_SUCCESS, NULL, NULL, {FW_SUCCESS}, {NULL}};

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    put_pv(w, "pv-a", "wait-sc", "Available", NULL, NULL, NULL);
    check_row(w, pod, &n, 1, &want);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_all_bound_local_volumes(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", "pvc-b", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    row want = {FW_SUCCESS, NULL, "node-a", {FW_SUCCESS}, {NULL}};

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    put_pvc(w, "pvc-b", "wait-sc", "pv-b", NULL, NULL);
    put_pv(w, "pv-a", "wait-sc", "Bound", "node-a", NULL, NULL);
    put_pv(w, "pv-b", "wait-sc", "Bound", "node-a", NULL, NULL);
    check_row(w, pod, &n, 1, &want);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* Local PVs on different nodes leave no eligible node. */
static void test_local_volumes_disjoint(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", "pvc-b", NULL};
    fw_pod_info *pod = pod_with(claims);
    row want = {FW_SUCCESS, NULL, "", {0}, {0}};

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    put_pvc(w, "pvc-b", "wait-sc", "pv-b", NULL, NULL);
    put_pv(w, "pv-a", "wait-sc", "Bound", "node-a", NULL, NULL);
    put_pv(w, "pv-b", "wait-sc", "Bound", "node-b", NULL, NULL);
    check_row(w, pod, NULL, 0, &want);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_pvc_missing(void **state)
{
    vt_world *w = vt_world_new();
    const char *one[] = {"pvc-a", NULL}, *two[] = {"pvc-a", "pvc-b", NULL};
    fw_pod_info *pod1 = pod_with(one), *pod2 = pod_with(two);
    row want1 = {FW_UNSCHEDULABLE_AND_UNRESOLVABLE, VB_NOT_FOUND("pvc-a"), NULL, {0}, {0}};
    row want2 = {FW_UNSCHEDULABLE_AND_UNRESOLVABLE, VB_NOT_FOUND("pvc-b"), NULL, {0}, {0}};

    put_classes(w);
    check_row(w, pod1, NULL, 0, &want1);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    check_row(w, pod2, NULL, 0, &want2);
    fw_pod_info_unref(pod1);
    fw_pod_info_unref(pod2);
    vt_world_free(w);
}

static void test_immediate_unbound(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    row want = {FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                "pod has unbound immediate PersistentVolumeClaims",
                NULL,
                {0},
                {0}};

    put_classes(w);
    put_pvc(w, "pvc-a", "immediate-sc", NULL, NULL, NULL);
    check_row(w, pod, NULL, 0, &want);
    /* a claim pre-bound by volumeName is unbound immediate too */
    put_pvc(w, "pvc-a", "wait-sc", NULL, NULL, ",'volumeName':'pv-a'");
    check_row(w, pod, NULL, 0, &want);
    /* so is a claim without class (or of an unknown class) */
    put_pvc(w, "pvc-a", "", NULL, NULL, NULL);
    check_row(w, pod, NULL, 0, &want);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_unbound_no_matches(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    row want = {
        FW_SUCCESS, NULL, NULL, {FW_UNSCHEDULABLE_AND_UNRESOLVABLE}, {VB_REASON_BIND_CONFLICT}};

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", NULL, NULL, NULL);
    check_row(w, pod, &n, 1, &want);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_bound_and_unbound_unsatisfied(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", "pvc-b", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", "'foo':'barbar'");
    row want = {FW_SUCCESS,
                NULL,
                NULL,
                {FW_UNSCHEDULABLE_AND_UNRESOLVABLE},
                {VB_REASON_NODE_CONFLICT ", " VB_REASON_BIND_CONFLICT}};

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    put_pvc(w, "pvc-b", "wait-sc", NULL, NULL, NULL);
    vt_put(w, PLUGIN_VOL_PV,
           "{'metadata':{'name':'pv-a'},'spec':{'storageClassName':'wait-sc','nodeAffinity':"
           "{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'foo','operator':"
           "'In','values':['bar']}]}]}}},'status':{'phase':'Available'}}");
    check_row(w, pod, &n, 1, &want);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_pv_missing(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    row want = {
        FW_SUCCESS, NULL, NULL, {FW_UNSCHEDULABLE_AND_UNRESOLVABLE}, {VB_REASON_PV_NOT_EXIST}};
    row lost = {FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume "
                "\"pv-a\"",
                NULL,
                {0},
                {0}};

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    check_row(w, pod, &n, 1, &want);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, ",'x':1},'status':{'phase':'Lost'");
    check_row(w, pod, &n, 1, &lost);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* "local volumes with close capacity are preferred": node-c has none. */
static void test_close_capacity(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n[3] = {node("node-a", NULL), node("node-b", NULL), node("node-c", NULL)};
    row want = {FW_SUCCESS,
                NULL,
                NULL,
                {FW_SUCCESS, FW_SUCCESS, FW_UNSCHEDULABLE_AND_UNRESOLVABLE},
                {NULL, NULL, VB_REASON_BIND_CONFLICT}};
    int64_t scores[3];

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", NULL, "50Gi", NULL);
    put_pv(w, "pv-a-0", "wait-sc", "Available", "node-a", "200Gi", NULL);
    put_pv(w, "pv-a-1", "wait-sc", "Available", "node-a", "200Gi", NULL);
    put_pv(w, "pv-b-0", "wait-sc", "Available", "node-b", "100Gi", NULL);
    put_pv(w, "pv-b-1", "wait-sc", "Available", "node-b", "100Gi", NULL);
    check_row(w, pod, n, 3, &want);
    /* scoring needs VolumeCapacityPriority (off in v1.28): PreScore skips */
    tp_plugin *p = vt_plugin(&plugin_volume_binding, w, NULL, NULL);
    assert_int_equal(tp_score(p, pod, n, 3, 1, scores), FW_SKIP);
    tp_plugin_free(p);
    for (int i = 0; i < 3; i++)
        fw_node_info_free(n[i]);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* ------------------------------------------------------------------ */
/* binder_test.go: FindPodVolumes                                      */
/* ------------------------------------------------------------------ */

/* The PV Filter chose for node (after Reserve, read back through the
 * assume cache by a second pod's PreFilter/Filter). */
static void test_matching_rules(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    row ok = {FW_SUCCESS, NULL, NULL, {FW_SUCCESS}, {NULL}};
    row no = {
        FW_SUCCESS, NULL, NULL, {FW_UNSCHEDULABLE_AND_UNRESOLVABLE}, {VB_REASON_BIND_CONFLICT}};

    put_classes(w);
    /* too small */
    put_pvc(w, "pvc-a", "wait-sc", NULL, "10Gi", ",'accessModes':['ReadWriteOnce']");
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "5Gi", ",'accessModes':['ReadWriteOnce']");
    check_row(w, pod, &n, 1, &no);
    /* fits */
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "10Gi",
           ",'accessModes':['ReadWriteOnce','ReadOnlyMany']");
    check_row(w, pod, &n, 1, &ok);
    /* access mode not offered */
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "10Gi", ",'accessModes':['ReadOnlyMany']");
    check_row(w, pod, &n, 1, &no);
    /* volume mode mismatch */
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "10Gi",
           ",'accessModes':['ReadWriteOnce'],'volumeMode':'Block'");
    check_row(w, pod, &n, 1, &no);
    /* not Available */
    put_pv(w, "pv-1", "wait-sc", "Released", "node-a", "10Gi", ",'accessModes':['ReadWriteOnce']");
    check_row(w, pod, &n, 1, &no);
    /* another class */
    put_pv(w, "pv-1", "wait-hdd-sc", "Available", "node-a", "10Gi",
           ",'accessModes':['ReadWriteOnce']");
    check_row(w, pod, &n, 1, &no);
    /* node affinity elsewhere */
    put_pv(w, "pv-1", "wait-sc", "Available", "node-b", "10Gi", ",'accessModes':['ReadWriteOnce']");
    check_row(w, pod, &n, 1, &no);
    /* claimed by another claim */
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "10Gi",
           ",'accessModes':['ReadWriteOnce'],'claimRef':{'namespace':'default','name':'other'}");
    check_row(w, pod, &n, 1, &no);
    /* pre-bound to this claim: any phase and access modes (same class: ListPVs) */
    put_pv(w, "pv-1", "wait-sc", "Pending", "node-a", "10Gi",
           ",'claimRef':{'namespace':'default','name':'pvc-a'}");
    check_row(w, pod, &n, 1, &ok);
    /* pre-bound but the node affinity does not match */
    put_pv(w, "pv-1", "wait-sc", "Available", "node-b", "10Gi",
           ",'claimRef':{'namespace':'default','name':'pvc-a'}");
    check_row(w, pod, &n, 1, &no);
    /* claim selector */
    put_pvc(w, "pvc-a", "wait-sc", NULL, "10Gi",
            ",'accessModes':['ReadWriteOnce'],'selector':{'matchLabels':{'tier':'gold'}}");
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "10Gi", ",'accessModes':['ReadWriteOnce']");
    check_row(w, pod, &n, 1, &no);
    vt_putf(w, PLUGIN_VOL_PV,
            "{'metadata':{'name':'pv-1','labels':{'tier':'gold'}},'spec':{"
            "'storageClassName':'wait-sc','capacity':{'storage':'10Gi'},"
            "'accessModes':['ReadWriteOnce']},'status':{'phase':'Available'}}");
    check_row(w, pod, &n, 1, &ok);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_provisioning(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n[2] = {node("node-a", "'zone':'z1'"), node("node-b", "'zone':'z2'")};
    row both = {FW_SUCCESS, NULL, NULL, {FW_SUCCESS, FW_SUCCESS}, {NULL, NULL}};
    row only_a = {FW_SUCCESS,
                  NULL,
                  NULL,
                  {FW_SUCCESS, FW_UNSCHEDULABLE_AND_UNRESOLVABLE},
                  {NULL, VB_REASON_BIND_CONFLICT}};
    row only_b = {FW_SUCCESS,
                  NULL,
                  NULL,
                  {FW_UNSCHEDULABLE_AND_UNRESOLVABLE, FW_SUCCESS},
                  {VB_REASON_BIND_CONFLICT, NULL}};
    row no_class = {FW_SUCCESS, NULL, NULL, {FW_ERROR}, {"failed to find storage class \"gone\""}};

    put_classes(w);
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'prov'},'provisioner':'csi.example.com',"
           "'volumeBindingMode':'WaitForFirstConsumer'}");
    put_pvc(w, "pvc-a", "prov", NULL, "1Gi", NULL);
    check_row(w, pod, n, 2, &both);
    /* allowedTopologies restricts the nodes */
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'prov'},'provisioner':'csi.example.com',"
           "'volumeBindingMode':'WaitForFirstConsumer','allowedTopologies':"
           "[{'matchLabelExpressions':[{'key':'zone','values':['z1']}]}]}");
    check_row(w, pod, n, 2, &only_a);
    /* a selected node keeps the claim there */
    put_pvc(w, "pvc-a", "prov", NULL, "1Gi", NULL);
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'pvc-a','annotations':{"
           "'volume.kubernetes.io/selected-node':'node-b'}},'spec':{"
           "'storageClassName':'prov'}}");
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'prov'},'provisioner':'csi.example.com',"
           "'volumeBindingMode':'WaitForFirstConsumer'}");
    check_row(w, pod, n, 2, &only_b);
    /* a WaitForFirstConsumer class that cannot provision */
    put_pvc(w, "pvc-a", "wait-sc", NULL, "1Gi", NULL);
    row none = {FW_SUCCESS,
                NULL,
                NULL,
                {FW_UNSCHEDULABLE_AND_UNRESOLVABLE, FW_UNSCHEDULABLE_AND_UNRESOLVABLE},
                {VB_REASON_BIND_CONFLICT, VB_REASON_BIND_CONFLICT}};
    check_row(w, pod, n, 2, &none);
    /* the class disappears between PreFilter (delay mode read) and Filter */
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'gone'},'provisioner':'p',"
           "'volumeBindingMode':'WaitForFirstConsumer'}");
    put_pvc(w, "pvc-a", "gone", NULL, "1Gi", NULL);
    run r;
    run_pre_filter(&r, w, pod);
    tp_assert_status(r.pre, FW_SUCCESS, NULL);
    r.pre = NULL;
    vt_delete(w, PLUGIN_VOL_SC, "", "gone");
    tp_assert_status(run_filter(&r, pod, n[0]), no_class.filter_code[0], no_class.filter_msg[0]);
    run_free(&r);
    for (int i = 0; i < 2; i++)
        fw_node_info_free(n[i]);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

static void test_class_without_binding_mode(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    row want = {FW_ERROR, "VolumeBindingMode not set for StorageClass \"bare\"", NULL, {0}, {0}};

    vt_put(w, PLUGIN_VOL_SC, "{'metadata':{'name':'bare'},'provisioner':'p'}");
    put_pvc(w, "pvc-a", "bare", NULL, NULL, NULL);
    check_row(w, pod, NULL, 0, &want);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* ------------------------------------------------------------------ */
/* Generic ephemeral volumes                                           */
/* ------------------------------------------------------------------ */

static void test_ephemeral(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'pod-a','uid':'pod-uid'},'spec':{'volumes':"
                              "[{'name':'scratch','ephemeral':{'volumeClaimTemplate':{}}}]}}");
    fw_node_info *n = node("node-a", NULL);
    row waiting = {FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                   "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                   "\"pod-a-scratch\"",
                   NULL,
                   {0},
                   {0}};
    row foreign = {FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                   "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not "
                   "owner)",
                   NULL,
                   {0},
                   {0}};
    row ok = {FW_SUCCESS, NULL, NULL, {FW_SUCCESS}, {NULL}};

    put_classes(w);
    check_row(w, pod, &n, 1, &waiting);
    put_pvc(w, "pod-a-scratch", "wait-sc", "pv-a", NULL, NULL);
    check_row(w, pod, &n, 1, &foreign);
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'pod-a-scratch','annotations':{"
           "'pv.kubernetes.io/bind-completed':'yes'},'ownerReferences':[{'apiVersion':'v1',"
           "'kind':'Pod','name':'pod-a','uid':'pod-uid','controller':true}]},'spec':{"
           "'storageClassName':'wait-sc','volumeName':'pv-a'}}");
    put_pv(w, "pv-a", "wait-sc", "Bound", NULL, NULL, NULL);
    check_row(w, pod, &n, 1, &ok);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* ------------------------------------------------------------------ */
/* Reserve / Unreserve (AssumePodVolumes / RevertAssumedPodVolumes)    */
/* ------------------------------------------------------------------ */

static void test_assume_and_revert(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims_a[] = {"pvc-a", NULL}, *claims_b[] = {"pvc-b", NULL};
    fw_pod_info *pod_a = pod_with(claims_a), *pod_b = pod_with(claims_b);
    fw_node_info *n = node("node-a", NULL);
    fw_snapshot *snap = NULL;
    row ok = {FW_SUCCESS, NULL, NULL, {FW_SUCCESS}, {NULL}};
    row taken = {
        FW_SUCCESS, NULL, NULL, {FW_UNSCHEDULABLE_AND_UNRESOLVABLE}, {VB_REASON_BIND_CONFLICT}};
    run r;

    assert_int_equal(fw_snapshot_from_nodes(&n, 1, &snap), KUBE_OK);
    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", NULL, "1Gi", NULL);
    put_pvc(w, "pvc-b", "wait-sc", NULL, "1Gi", NULL);
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "1Gi", NULL);

    memset(&r, 0, sizeof(r));
    r.p = vt_plugin(&plugin_volume_binding, w, NULL, snap);
    r.cs = fw_cycle_state_new();
    tp_assert_status(r.p->desc->pre_filter(r.p->self, r.cs, pod_a, &r.result), FW_SUCCESS, NULL);
    tp_assert_status(run_filter(&r, pod_a, n), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->reserve(r.p->self, r.cs, pod_a, "node-a"), FW_SUCCESS, NULL);

    /* pod-b, in the same plugin instance, sees pv-1 assumed for pvc-a */
    fw_cycle_state *cs_b = fw_cycle_state_new();
    fw_pre_filter_result *res_b = NULL;
    tp_assert_status(r.p->desc->pre_filter(r.p->self, cs_b, pod_b, &res_b), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->filter(r.p->self, cs_b, pod_b, n), taken.filter_code[0],
                     taken.filter_msg[0]);
    fw_cycle_state_free(cs_b);

    /* PreBind needs the API: without a client it fails, the pod is retried */
    tp_assert_status(r.p->desc->pre_bind(r.p->self, r.cs, pod_a, "node-a"), FW_ERROR,
                     "binding volumes: no API client");
    r.p->desc->unreserve(r.p->self, r.cs, pod_a, "node-a");
    r.p->desc->unreserve(r.p->self, r.cs, pod_a, "node-a"); /* idempotent */

    /* reverted: pod-b can have it now */
    cs_b = fw_cycle_state_new();
    tp_assert_status(r.p->desc->pre_filter(r.p->self, cs_b, pod_b, &res_b), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->filter(r.p->self, cs_b, pod_b, n), ok.filter_code[0], NULL);
    fw_cycle_state_free(cs_b);
    run_free(&r);
    fw_snapshot_free(snap);
    fw_node_info_free(n);
    fw_pod_info_unref(pod_a);
    fw_pod_info_unref(pod_b);
    vt_world_free(w);
}

/* An informer update newer than the assumption replaces it. */
static void test_assume_superseded(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims_a[] = {"pvc-a", NULL}, *claims_b[] = {"pvc-b", NULL};
    fw_pod_info *pod_a = pod_with(claims_a), *pod_b = pod_with(claims_b);
    fw_node_info *n = node("node-a", NULL);
    run r;

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", NULL, "1Gi", NULL);
    put_pvc(w, "pvc-b", "wait-sc", NULL, "1Gi", NULL);
    put_pv(w, "pv-1", "wait-sc", "Available", "node-a", "1Gi", NULL);
    run_pre_filter(&r, w, pod_a);
    tp_assert_status(run_filter(&r, pod_a, n), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->reserve(r.p->self, r.cs, pod_a, "node-a"), FW_SUCCESS, NULL);
    /* the API server now says pv-1 is Available again at a newer version */
    vt_put(w, PLUGIN_VOL_PV,
           "{'metadata':{'name':'pv-1','resourceVersion':'7'},'spec':{'storageClassName':"
           "'wait-sc','capacity':{'storage':'1Gi'}},'status':{'phase':'Available'}}");
    fw_cycle_state *cs_b = fw_cycle_state_new();
    fw_pre_filter_result *res_b = NULL;
    tp_assert_status(r.p->desc->pre_filter(r.p->self, cs_b, pod_b, &res_b), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->filter(r.p->self, cs_b, pod_b, n), FW_SUCCESS, NULL);
    fw_cycle_state_free(cs_b);
    r.p->desc->unreserve(r.p->self, r.cs, pod_a, "node-a");
    run_free(&r);
    fw_node_info_free(n);
    fw_pod_info_unref(pod_a);
    fw_pod_info_unref(pod_b);
    vt_world_free(w);
}

/* All claims bound: Reserve marks allBound and PreBind makes no call. */
static void test_prebind_all_bound(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    run r;

    put_classes(w);
    put_pvc(w, "pvc-a", "wait-sc", "pv-a", NULL, NULL);
    put_pv(w, "pv-a", "wait-sc", "Bound", NULL, NULL, NULL);
    run_pre_filter(&r, w, pod);
    tp_assert_status(run_filter(&r, pod, n), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->reserve(r.p->self, r.cs, pod, "node-a"), FW_SUCCESS, NULL);
    tp_assert_status(r.p->desc->pre_bind(r.p->self, r.cs, pod, "node-a"), FW_SUCCESS, NULL);
    run_free(&r);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

static void test_args(void **state)
{
    char err[1024];
    char *s = tp_defaulted(&plugin_volume_binding, NULL);

    assert_string_equal(s, "{\"bindTimeoutSeconds\":600}");
    free(s);
    s = tp_defaulted(&plugin_volume_binding, "{'bindTimeoutSeconds':300}");
    assert_string_equal(s, "{\"bindTimeoutSeconds\":300}");
    free(s);
    assert_int_equal(
        tp_default_args(&plugin_volume_binding, "{'bindTimeoutSeconds':-10}", err, sizeof(err)),
        KUBE_ECONFIG);
    assert_string_equal(err, "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, "
                             "should not be a negative value");
    assert_int_equal(tp_default_args(&plugin_volume_binding,
                                     "{'shape':[{'utilization':0,'score':0},{'utilization':100,"
                                     "'score':10}]}",
                                     err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "shape: Invalid value: []config.UtilizationShapePoint{config."
                             "UtilizationShapePoint{Utilization:0, Score:0}, config."
                             "UtilizationShapePoint{Utilization:100, Score:10}}: unsupported "
                             "when VolumeCapacityPriority feature is disabled");
    assert_int_equal(tp_default_args(&plugin_volume_binding, "{'bindTimeout':1}", err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "unknown field \"bindTimeout\"");
}

static void test_events(void **state)
{
    const fw_cluster_event_with_hint *ev;
    size_t n = plugin_volume_binding.events_to_register(NULL, &ev);
    const char *want[] = {FW_GVK_STORAGE_CLASS, FW_GVK_PVC, FW_GVK_PV, FW_GVK_NODE,
                          FW_GVK_CSI_NODE};

    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(ev[i].event.resource, want[i]);
    assert_int_equal(ev[3].event.action,
                     FW_ACT_ADD | FW_ACT_UPDATE_NODE_LABEL | FW_ACT_UPDATE_NODE_TAINT);
}

/* Filter errors count as "predicate" stage errors, PreBind's as "bind". */
static void test_stage_error_metric(void **state)
{
    vt_world *w = vt_world_new();
    const char *claims[] = {"pvc-a", NULL};
    fw_pod_info *pod = pod_with(claims);
    fw_node_info *n = node("node-a", NULL);
    kube_metrics *reg = NULL;
    tp_plugin p = {&plugin_volume_binding, NULL, {0}};
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *r = NULL;
    const char *predicate[] = {"predicate"}, *bind[] = {"bind"};
    char err[256];

    assert_int_equal(kube_metrics_new(&reg), KUBE_OK);
    p.handle.svc.metrics_registry = reg;
    assert_int_equal(plugin_volume_binding_new(NULL, &p.handle, w->l, &p.self, err, sizeof(err)),
                     KUBE_OK);
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'gone'},'provisioner':'p',"
           "'volumeBindingMode':'WaitForFirstConsumer'}");
    put_pvc(w, "pvc-a", "gone", NULL, NULL, NULL);
    tp_assert_status(p.desc->pre_filter(p.self, cs, pod, &r), FW_SUCCESS, NULL);
    vt_delete(w, PLUGIN_VOL_SC, "", "gone");
    tp_assert_status(p.desc->filter(p.self, cs, pod, n), FW_ERROR, NULL);
    assert_true(kube_metric_value(kube_metrics_find(reg, "scheduler_volume_scheduling_stage_"
                                                         "error_total"),
                                  predicate) == 1);
    /* provisionable again: Reserve assumes, PreBind fails without a client */
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'gone'},'provisioner':'p',"
           "'volumeBindingMode':'WaitForFirstConsumer'}");
    tp_assert_status(p.desc->filter(p.self, cs, pod, n), FW_SUCCESS, NULL);
    tp_assert_status(p.desc->reserve(p.self, cs, pod, "node-a"), FW_SUCCESS, NULL);
    tp_assert_status(p.desc->pre_bind(p.self, cs, pod, "node-a"), FW_ERROR, NULL);
    assert_true(kube_metric_value(kube_metrics_find(reg, "scheduler_volume_scheduling_stage_"
                                                         "error_total"),
                                  bind) == 1);
    p.desc->unreserve(p.self, cs, pod, "node-a");
    fw_cycle_state_free(cs);
    p.desc->destroy(p.self);
    kube_metrics_free(reg);
    fw_node_info_free(n);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* ------------------------------------------------------------------ */
/* Listers: the factory's events, change generation                   */
/* ------------------------------------------------------------------ */

typedef struct seen {
    int adds, updates, deletes;
    plugin_vol_kind last;
} seen;

/* A handler's ud: which kind, and where to count. */
typedef struct seen_tag {
    seen *s;
    plugin_vol_kind k;
} seen_tag;

static void seen_add(void *ud, kube_object *obj)
{
    seen_tag *t = ud;
    t->s->last = t->k;
    t->s->adds++;
}

static void seen_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    seen_tag *t = ud;
    t->s->last = t->k;
    t->s->updates++;
}

static void seen_delete(void *ud, kube_object *obj)
{
    seen_tag *t = ud;
    t->s->last = t->k;
    t->s->deletes++;
}

/* Counts the events of every volume lister of f in s. */
static void watch_all(kube_factory *f, seen_tag tags[PLUGIN_VOL_KINDS], seen *s)
{
    for (int k = 0; k < PLUGIN_VOL_KINDS; k++) {
        kube_lister *l;
        kube_informer_handlers h = {seen_add, seen_update, seen_delete, &tags[k]};
        tags[k] = (seen_tag){s, (plugin_vol_kind)k};
        assert_int_equal(plugin_vol_lister_of(f, (plugin_vol_kind)k, &l), KUBE_OK);
        assert_int_equal(kube_lister_add_handlers(l, &h), KUBE_OK);
    }
}

static void test_listers_events(void **state)
{
    vt_world *w = vt_world_new();
    seen s = {0, 0, 0, PLUGIN_VOL_PV};
    seen_tag tags[PLUGIN_VOL_KINDS], other_tags[PLUGIN_VOL_KINDS];
    uint64_t gen = plugin_vol_listers_generation(w->l);

    watch_all(w->informers, tags, &s);
    put_pvc(w, "pvc-a", "wait-sc", NULL, NULL, NULL);
    assert_int_equal(s.adds, 1);
    assert_int_equal(s.last, PLUGIN_VOL_PVC);
    /* a PVC change bumps the generation PreBind waits on */
    assert_true(plugin_vol_listers_wait(w->l, &gen, 0));
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'pvc-a','uid':'uid-pvc-a','resourceVersion':"
           "'2'},'spec':{}}");
    assert_int_equal(s.updates, 1);
    gen = plugin_vol_listers_generation(w->l);
    put_classes(w);
    assert_int_equal(s.adds, 4);
    assert_int_equal(s.last, PLUGIN_VOL_SC);
    /* a StorageClass does not move the generation */
    assert_false(plugin_vol_listers_wait(w->l, &gen, 0));
    vt_delete(w, PLUGIN_VOL_PVC, "default", "pvc-a");
    assert_int_equal(s.deletes, 1);
    /* another factory's handlers are not called */
    vt_world *other_w = vt_world_new();
    seen other = {0, 0, 0, PLUGIN_VOL_PV};
    watch_all(other_w->informers, other_tags, &other);
    vt_put(w, PLUGIN_VOL_CSINODE, "{'metadata':{'name':'node-a'},'spec':{}}");
    assert_int_equal(s.adds, 5);
    assert_int_equal(other.adds, 0);
    /* handlers are added before the factory starts only */
    assert_int_equal(kube_factory_start(w->informers), KUBE_OK);
    kube_informer_handlers h = {seen_add, NULL, NULL, &tags[0]};
    kube_lister *pv;
    assert_int_equal(plugin_vol_lister_of(w->informers, PLUGIN_VOL_PV, &pv), KUBE_OK);
    assert_int_equal(kube_lister_add_handlers(pv, &h), KUBE_EINVAL);
    vt_world_free(other_w);
    vt_world_free(w);
}

int test_group_plugin_volume_binding(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_pvcs),
        cmocka_unit_test(test_all_bound),
        cmocka_unit_test(test_all_bound_local_volumes),
        cmocka_unit_test(test_local_volumes_disjoint),
        cmocka_unit_test(test_pvc_missing),
        cmocka_unit_test(test_immediate_unbound),
        cmocka_unit_test(test_unbound_no_matches),
        cmocka_unit_test(test_bound_and_unbound_unsatisfied),
        cmocka_unit_test(test_pv_missing),
        cmocka_unit_test(test_close_capacity),
        cmocka_unit_test(test_matching_rules),
        cmocka_unit_test(test_provisioning),
        cmocka_unit_test(test_class_without_binding_mode),
        cmocka_unit_test(test_ephemeral),
        cmocka_unit_test(test_assume_and_revert),
        cmocka_unit_test(test_assume_superseded),
        cmocka_unit_test(test_prebind_all_bound),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_stage_error_metric),
        cmocka_unit_test(test_listers_events),
    };
    return cmocka_run_group_tests_name("plugin_volume_binding", tests, NULL, NULL);
}
