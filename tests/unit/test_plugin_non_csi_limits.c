/*
 * tests/unit/test_plugin_non_csi_limits.c - EBSLimits, GCEPDLimits and
 * AzureDiskLimits, with the cases of kube-scheduler v1.28's
 * non_csi_test.go (TestEBSLimits, TestGCEPDLimits, TestAzureDiskLimits,
 * TestEphemeralLimits, TestGetMaxVols) run for each of the three kinds:
 * inline volumes, claims bound to PVs of the kind, volumes shared with the
 * node's pods counted once, missing claims and PVs, unbound claims of the
 * in-tree provisioner, other volume kinds ignored, generic ephemeral
 * volumes; plus the limit (allocatable, defaults, Nitro instance types,
 * KUBE_MAX_PD_VOLS), the CSI migration pass, PreFilter's Skip and the
 * registered events.
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
#include "plugins/plugins.h"
#include "plugins/registry.h"
#include "unit/test_plugin_volume_util.h"

#define ERR_MAX "node(s) exceed max volume count"

/* What differs between the three plugins. */
typedef struct kind {
    const fw_plugin_desc *desc;
    const char *source;      /* volume source member */
    const char *id_key;      /* its id member */
    const char *provisioner; /* in-tree provisioner */
    const char *alloc_key;   /* node allocatable key */
    int default_max;
} kind;

static const kind kinds[] = {
    {&plugin_ebs_limits, "awsElasticBlockStore", "volumeID", "kubernetes.io/aws-ebs",
     "attachable-volumes-aws-ebs", 39},
    {&plugin_gce_pd_limits, "gcePersistentDisk", "pdName", "kubernetes.io/gce-pd",
     "attachable-volumes-gce-pd", 16},
    {&plugin_azure_disk_limits, "azureDisk", "diskName", "kubernetes.io/azure-disk",
     "attachable-volumes-azure-disk", 16},
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* The kind after k (its volumes are "another kind" for k). */
static const kind *other_kind(const kind *k)
{
    return &kinds[(size_t)(k - kinds + 1) % N_KINDS];
}

/* non_csi_test.go's fake listers, the PV of the kind for k. */
static vt_world *world(const kind *k)
{
    static const char *const in_tree_claims[] = {"pvcWithDeletedPV:pvcWithDeletedPV",
                                                 "anotherPVCWithDeletedPV:anotherPVCWithDeletedPV",
                                                 "unboundPVC:", "anotherUnboundPVC:"};
    const kind *o = other_kind(k);
    vt_world *w = vt_world_new();

    vt_putf(w, PLUGIN_VOL_SC, "{'metadata':{'name':'in-tree'},'provisioner':'%s'}", k->provisioner);
    vt_put(w, PLUGIN_VOL_SC, "{'metadata':{'name':'standard-sc'},'provisioner':'example.com/x'}");
    vt_putf(w, PLUGIN_VOL_PV, "{'metadata':{'name':'someVol'},'spec':{'%s':{'%s':'kindVol'}}}",
            k->source, k->id_key);
    vt_put(w, PLUGIN_VOL_PV,
           "{'metadata':{'name':'someNonVol'},'spec':{'hostPath':{'path':"
           "'/x'}}}");
    vt_putf(w, PLUGIN_VOL_PV,
            "{'metadata':{'name':'otherKindVol'},'spec':{'%s':{'%s':"
            "'kindVol'}}}",
            o->source, o->id_key);
    for (size_t i = 0; i < 3; i++) {
        static const char *const bound[] = {"someVol", "someNonVol", "otherKindVol"};
        vt_putf(w, PLUGIN_VOL_PVC,
                "{'metadata':{'name':'%s'},'spec':{'volumeName':'%s',"
                "'storageClassName':'in-tree'}}",
                bound[i], bound[i]);
    }
    for (size_t i = 0; i < sizeof(in_tree_claims) / sizeof(in_tree_claims[0]); i++) {
        const char *colon = strchr(in_tree_claims[i], ':');
        vt_putf(w, PLUGIN_VOL_PVC,
                "{'metadata':{'name':'%.*s'},'spec':{'volumeName':'%s',"
                "'storageClassName':'in-tree'}}",
                (int)(colon - in_tree_claims[i]), in_tree_claims[i], colon + 1);
    }
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'unboundPVCWithDefaultSC'},'spec':{"
           "'storageClassName':'standard-sc'}}");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'unboundPVCWithInvalidSC'},'spec':{"
           "'storageClassName':'invalid-sc'}}");
    vt_put(w, PLUGIN_VOL_PVC, "{'metadata':{'name':'unboundPVCWithoutSC'},'spec':{}}");
    return w;
}

/* Appends the volume of token (k's kind): "v=ID" an inline volume of the
 * kind, "x=ID" one of another kind, "c=CLAIM" a claim, "h" a hostPath. */
static void volume_json(const kind *k, const char *tok, int i, char *out, size_t n)
{
    const kind *o = other_kind(k);
    const char *arg = tok + 2;

    if (tok[0] == 'v')
        snprintf(out, n, "{'name':'v%d','%s':{'%s':'%s'}}", i, k->source, k->id_key, arg);
    else if (tok[0] == 'x')
        snprintf(out, n, "{'name':'v%d','%s':{'%s':'%s'}}", i, o->source, o->id_key, arg);
    else if (tok[0] == 'c')
        snprintf(out, n, "{'name':'v%d','persistentVolumeClaim':{'claimName':'%s'}}", i, arg);
    else
        snprintf(out, n, "{'name':'v%d','hostPath':{'path':'/h'}}", i);
}

/* A pod whose volumes are the comma-separated tokens of spec ("" none). */
static fw_pod_info *pod_of(const kind *k, const char *name, const char *spec)
{
    char vols[8192] = "", list[1024], one[256];
    size_t off = 0;
    int i = 0;

    snprintf(list, sizeof(list), "%s", spec);
    for (char *sp = NULL, *t = strtok_r(list, ",", &sp); t; t = strtok_r(NULL, ",", &sp), i++) {
        volume_json(k, t, i, one, sizeof(one));
        off += (size_t)snprintf(vols + off, sizeof(vols) - off, "%s%s", i ? "," : "", one);
    }
    return tp_podf("{'metadata':{'name':'%s'},'spec':{'volumes':[%s]}}", name, vols);
}

/* A node "node" with labels (may be NULL), allocatable k's key = max
 * (none when max < 0) and one pod per '|'-separated spec of existing. */
static fw_node_info *node_of(const kind *k, const char *existing, int max, const char *labels)
{
    char alloc[128], list[1024];
    fw_node_info *ni;
    int i = 0;

    snprintf(alloc, sizeof(alloc), "{'%s':'%d'}", k->alloc_key, max);
    ni = tp_node_simple("node", max < 0 ? NULL : alloc, labels, NULL);
    snprintf(list, sizeof(list), "%s", existing);
    for (char *save = NULL, *t = strtok_r(list, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        char name[32];
        snprintf(name, sizeof(name), "existing-%d", i++);
        fw_pod_info *pi = pod_of(k, name, strcmp(t, "-") == 0 ? "" : t);
        tp_node_add(ni, pi);
        fw_pod_info_unref(pi);
    }
    return ni;
}

/* An instance of k's plugin reading w (freed with tp_plugin_free). */
static tp_plugin *new_plugin(const kind *k, vt_world *w)
{
    tp_plugin *p = calloc(1, sizeof(*p));

    assert_non_null(p);
    p->desc = k->desc;
    assert_int_equal(plugin_non_csi_limits_new(k->desc, w->l, &p->self), KUBE_OK);
    return p;
}

/* PreFilter + Filter of the pod new_spec on node_of(existing, max) for
 * kind k of world w: asserts code (and msg when non-NULL). */
static void expect_on(const kind *k, vt_world *w, const char *new_spec, const char *existing,
                      int max, fw_code code, const char *msg)
{
    fw_pod_info *pod = pod_of(k, "new", new_spec);
    fw_node_info *ni = node_of(k, existing, max, NULL);
    tp_plugin *p = new_plugin(k, w);

    tp_assert_status(tp_filter(p, pod, ni, NULL), code, msg);
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
}

/* expect_on for every kind, each in its own world. */
static void expect_all(const char *new_spec, const char *existing, int max, fw_code code)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        vt_world *w = world(&kinds[i]);
        expect_on(&kinds[i], w, new_spec, existing, max, code, code == FW_SUCCESS ? NULL : ERR_MAX);
        vt_world_free(w);
    }
}

#define ONE_VOL "v=ovp"
#define TWO_VOL "v=tvp1,v=tvp2"
#define SPLIT_VOLS "h,v=svp"
#define NON_APPLICABLE "h"
#define EMPTY "-"
#define ONE_PVC "c=someVol"
#define SPLIT_PVC "c=someNonVol,c=someVol"

static void test_inline_volumes(void **state)
{
    /* fits when node capacity >= new pod's volumes */
    expect_all(ONE_VOL, TWO_VOL "|" ONE_VOL, 4, FW_SUCCESS);
    /* doesn't fit when node capacity < new pod's volumes */
    expect_all(TWO_VOL, ONE_VOL, 2, FW_UNSCHEDULABLE);
    expect_all(TWO_VOL, ONE_VOL, 3, FW_SUCCESS);
    /* new pod's count ignores volumes of other types */
    expect_all(SPLIT_VOLS, TWO_VOL, 3, FW_SUCCESS);
    expect_all(SPLIT_VOLS, TWO_VOL, 2, FW_UNSCHEDULABLE);
    /* existing pods' counts ignore volumes of other types */
    expect_all(TWO_VOL, SPLIT_VOLS "|" NON_APPLICABLE "|" EMPTY, 3, FW_SUCCESS);
    /* already-mounted volumes are always ok to allow */
    expect_all(TWO_VOL, ONE_VOL "|" TWO_VOL "|" ONE_PVC, 4, FW_SUCCESS);
    /* the same volumes are not counted multiple times */
    expect_all(SPLIT_VOLS, ONE_VOL "|" ONE_VOL "|" ONE_PVC, 3, FW_SUCCESS);
    /* as upstream, the node's volumes alone can exceed the limit */
    expect_all(ONE_VOL, TWO_VOL "|" ONE_VOL, 2, FW_UNSCHEDULABLE);
}

static void test_other_kinds_ignored(void **state)
{
    /* volumes of another in-tree kind, inline or through a PV, are not
     * counted: limit 0 and still fits */
    expect_all("x=a,x=b", "x=c", 0, FW_SUCCESS);
    expect_all("c=otherKindVol,c=someNonVol", "x=c", 0, FW_SUCCESS);
    /* while one of the kind does not */
    expect_all("c=otherKindVol,v=a", "x=c", 0, FW_UNSCHEDULABLE);
}

static void test_bound_claims(void **state)
{
    /* new pod's count considers PVCs backed by volumes of the kind */
    expect_all(ONE_PVC, SPLIT_VOLS "|" NON_APPLICABLE "|" EMPTY, 2, FW_SUCCESS);
    expect_all(ONE_PVC, SPLIT_VOLS "|" NON_APPLICABLE "|" EMPTY, 1, FW_UNSCHEDULABLE);
    /* new pod's count ignores PVCs not backed by volumes of the kind */
    expect_all(SPLIT_PVC, SPLIT_VOLS "|" ONE_VOL, 3, FW_SUCCESS);
    /* existing pods' counts consider PVCs backed by volumes of the kind */
    expect_all(TWO_VOL, ONE_VOL "|" ONE_PVC, 3, FW_UNSCHEDULABLE);
    expect_all(TWO_VOL, ONE_VOL "|" ONE_PVC, 4, FW_SUCCESS);
    /* a claim's PV and an inline volume with the same id are one volume */
    expect_all("v=kindVol", ONE_VOL "|" ONE_PVC, 2, FW_SUCCESS);
}

static void test_missing_claims_and_pvs(void **state)
{
    /* missing PVC of an existing pod is not counted towards the PV limit */
    expect_all(ONE_PVC, ONE_VOL "|c=deletedPVC", 1, FW_UNSCHEDULABLE);
    expect_all(ONE_PVC, ONE_VOL "|c=deletedPVC", 2, FW_SUCCESS);
    expect_all(ONE_PVC, ONE_VOL "|c=deletedPVC,c=anotherDeletedPVC", 2, FW_SUCCESS);
    /* a missing PV of an in-tree class is counted towards the PV limit */
    expect_all(ONE_PVC, ONE_VOL "|c=pvcWithDeletedPV", 2, FW_UNSCHEDULABLE);
    expect_all(ONE_PVC, ONE_VOL "|c=pvcWithDeletedPV", 3, FW_SUCCESS);
    /* two pods missing the same PV are counted only once */
    expect_all("c=pvcWithDeletedPV", ONE_VOL "|c=pvcWithDeletedPV", 2, FW_SUCCESS);
    /* two pods missing different PVs are counted twice */
    expect_all("c=anotherPVCWithDeletedPV", ONE_VOL "|c=pvcWithDeletedPV", 2, FW_UNSCHEDULABLE);
}

static void test_new_pod_missing_claim(void **state)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        vt_world *w = world(&kinds[i]);
        expect_on(&kinds[i], w, "c=deletedPVC", ONE_VOL, 5, FW_ERROR,
                  "looking up PVC default/deletedPVC: persistentvolumeclaim \"deletedPVC\" not "
                  "found");
        vt_world_free(w);
    }
}

static void test_unbound_claims(void **state)
{
    /* a pod with an unbound PVC of the in-tree class is counted */
    expect_all(ONE_PVC, ONE_VOL "|c=unboundPVC", 2, FW_UNSCHEDULABLE);
    expect_all(ONE_PVC, ONE_VOL "|c=unboundPVC", 3, FW_SUCCESS);
    /* the same unbound PVC in multiple pods is counted only once */
    expect_all("c=unboundPVC", ONE_VOL "|c=unboundPVC", 2, FW_SUCCESS);
    /* two different unbound PVCs are counted as two volumes */
    expect_all("c=anotherUnboundPVC", ONE_VOL "|c=unboundPVC", 2, FW_UNSCHEDULABLE);
    /* unbound PVCs of another provisioner, a missing class or no class are
     * not counted */
    expect_all("c=unboundPVCWithDefaultSC", ONE_VOL, 1, FW_SUCCESS);
    expect_all("c=unboundPVCWithInvalidSC", ONE_VOL, 1, FW_SUCCESS);
    expect_all("c=unboundPVCWithoutSC", ONE_VOL, 1, FW_SUCCESS);
}

/* TestEphemeralLimits (with each kind's in-tree class). */
static void test_ephemeral(void **state)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        const kind *k = &kinds[i];
        vt_world *w = world(k);
        fw_pod_info *pod = tp_pod("{'metadata':{'name':'abc','namespace':'test','uid':'12345'},"
                                  "'spec':{'volumes':[{'name':'xyz','ephemeral':{}}]}}");
        tp_plugin *p = new_plugin(k, w);
        fw_node_info *nodes[2] = {node_of(k, "", 1, NULL), node_of(k, "", 0, NULL)};

        tp_assert_status(tp_filter(p, pod, nodes[0], NULL), FW_ERROR,
                         "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not "
                         "found");
        vt_put(w, PLUGIN_VOL_PVC,
               "{'metadata':{'name':'abc-xyz','namespace':'test'},'spec':{"
               "'volumeName':'missing','storageClassName':'in-tree'}}");
        tp_assert_status(tp_filter(p, pod, nodes[0], NULL), FW_ERROR,
                         "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)");
        vt_put(w, PLUGIN_VOL_PVC,
               "{'metadata':{'name':'abc-xyz','namespace':'test',"
               "'ownerReferences':[{'apiVersion':'v1','kind':'Pod','name':"
               "'abc','uid':'12345','controller':true}]},'spec':{'volumeName':"
               "'missing','storageClassName':'in-tree'}}");
        tp_assert_status(tp_filter(p, pod, nodes[0], NULL), FW_SUCCESS, NULL);
        tp_assert_status(tp_filter(p, pod, nodes[1], NULL), FW_UNSCHEDULABLE, ERR_MAX);
        tp_plugin_free(p);
        fw_node_info_free(nodes[0]);
        fw_node_info_free(nodes[1]);
        fw_pod_info_unref(pod);
        vt_world_free(w);
    }
}

/* A spec of n inline volumes of the kind named prefix0.. */
static const char *n_volumes(const char *prefix, int n)
{
    static char buf[2][4096];
    static int which;
    char *out = buf[which++ % 2];
    size_t off = 0;

    out[0] = '\0';
    for (int i = 0; i < n; i++)
        off +=
            (size_t)snprintf(out + off, sizeof(buf[0]) - off, "%sv=%s%d", i ? "," : "", prefix, i);
    return out;
}

/* Filter of one new volume on a node (labels, no allocatable) already
 * holding existing volumes of the kind. */
static fw_code fit_default(const kind *k, vt_world *w, int existing, const char *labels)
{
    fw_pod_info *pod = pod_of(k, "new", "v=fresh");
    fw_node_info *ni = node_of(k, n_volumes("old", existing), -1, labels);
    tp_plugin *p = new_plugin(k, w);
    fw_status *st;
    fw_code code;

    st = tp_filter(p, pod, ni, NULL);
    code = fw_status_code(st);
    fw_status_free(st);
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    return code;
}

static void test_default_limits(void **state)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        const kind *k = &kinds[i];
        vt_world *w = world(k);
        assert_int_equal(fit_default(k, w, k->default_max - 1, NULL), FW_SUCCESS);
        assert_int_equal(fit_default(k, w, k->default_max, NULL), FW_UNSCHEDULABLE);
        vt_world_free(w);
    }
}

/* EBS: 25 on Nitro instance types ("^[cmr]5.*|t3|z1d"), 39 otherwise. */
static void test_ebs_nitro(void **state)
{
    static const struct {
        const char *labels;
        int max;
    } cases[] = {
        {"{'node.kubernetes.io/instance-type':'m5.large'}", 25},
        {"{'beta.kubernetes.io/instance-type':'c5.xlarge'}", 25},
        {"{'node.kubernetes.io/instance-type':'t3.medium'}", 25},
        {"{'node.kubernetes.io/instance-type':'z1d.large'}", 25},
        {"{'node.kubernetes.io/instance-type':'c4.large'}", 39},
        {"{'node.kubernetes.io/instance-type':'a5.large'}", 39},
        {"{'other':'m5.large'}", 39},
    };
    vt_world *w = world(&kinds[0]);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(fit_default(&kinds[0], w, cases[i].max - 1, cases[i].labels), FW_SUCCESS);
        assert_int_equal(fit_default(&kinds[0], w, cases[i].max, cases[i].labels),
                         FW_UNSCHEDULABLE);
    }
    /* Nitro does not apply to GCE PD */
    vt_world_free(w);
    w = world(&kinds[1]);
    assert_int_equal(fit_default(&kinds[1], w, 15,
                                 "{'node.kubernetes.io/instance-type':"
                                 "'m5.large'}"),
                     FW_SUCCESS);
    vt_world_free(w);
}

/* TestGetMaxVols: a positive KUBE_MAX_PD_VOLS replaces the default (read
 * when the plugin is created); the node's allocatable still wins. */
static void test_env_limit(void **state)
{
    vt_world *w = world(&kinds[1]);

    setenv("KUBE_MAX_PD_VOLS", "3", 1);
    assert_int_equal(fit_default(&kinds[1], w, 2, NULL), FW_SUCCESS);
    assert_int_equal(fit_default(&kinds[1], w, 3, NULL), FW_UNSCHEDULABLE);
    expect_on(&kinds[1], w, "v=a", "v=b,v=c,v=d", 4, FW_SUCCESS, NULL);
    setenv("KUBE_MAX_PD_VOLS", "-2", 1);
    assert_int_equal(fit_default(&kinds[1], w, 15, NULL), FW_SUCCESS);
    setenv("KUBE_MAX_PD_VOLS", "invalid", 1);
    assert_int_equal(fit_default(&kinds[1], w, 15, NULL), FW_SUCCESS);
    assert_int_equal(fit_default(&kinds[1], w, 16, NULL), FW_UNSCHEDULABLE);
    unsetenv("KUBE_MAX_PD_VOLS");
    vt_world_free(w);
}

/* With a CSINode, CSI migration is on for the three in-tree plugins in
 * v1.28: they pass and leave the count to NodeVolumeLimits. */
static void test_csi_migration(void **state)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        const kind *k = &kinds[i];
        vt_world *w = world(k);

        expect_on(k, w, TWO_VOL, ONE_VOL, 2, FW_UNSCHEDULABLE, ERR_MAX);
        vt_put(w, PLUGIN_VOL_CSINODE, "{'metadata':{'name':'other-node'},'spec':{'drivers':[]}}");
        expect_on(k, w, TWO_VOL, ONE_VOL, 2, FW_UNSCHEDULABLE, ERR_MAX);
        vt_putf(w, PLUGIN_VOL_CSINODE,
                "{'metadata':{'name':'node','annotations':{"
                "'storage.alpha.kubernetes.io/migrated-plugins':'%s'}},"
                "'spec':{'drivers':[]}}",
                k->provisioner);
        expect_on(k, w, TWO_VOL, ONE_VOL, 2, FW_SUCCESS, NULL);
        /* isCSIMigrationOn returns true for these plugins before reading
         * the annotation */
        vt_put(w, PLUGIN_VOL_CSINODE, "{'metadata':{'name':'node'},'spec':{'drivers':[]}}");
        expect_on(k, w, TWO_VOL, ONE_VOL, 2, FW_SUCCESS, NULL);
        /* the new pod's errors still come first */
        expect_on(k, w, "c=deletedPVC", ONE_VOL, 2, FW_ERROR, NULL);
        vt_world_free(w);
    }
}

static void test_pre_filter(void **state)
{
    static const struct {
        const char *spec;
        fw_code want;
    } cases[] = {
        {"h", FW_SKIP},        {"x=a,h", FW_SKIP},        {"", FW_SKIP},
        {"h,v=a", FW_SUCCESS}, {"c=someVol", FW_SUCCESS},
    };
    for (size_t i = 0; i < N_KINDS; i++) {
        vt_world *w = world(&kinds[i]);
        tp_plugin *p = new_plugin(&kinds[i], w);
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            fw_pod_info *pod = pod_of(&kinds[i], "p", cases[c].spec);
            tp_assert_status(p->desc->pre_filter(p->self, NULL, pod, NULL), cases[c].want, NULL);
            fw_pod_info_unref(pod);
        }
        fw_pod_info *eph = tp_pod("{'metadata':{'name':'e'},'spec':{'volumes':[{'name':'x',"
                                  "'ephemeral':{}}]}}");
        tp_assert_status(p->desc->pre_filter(p->self, NULL, eph, NULL), FW_SUCCESS, NULL);
        fw_pod_info_unref(eph);
        tp_plugin_free(p);
        vt_world_free(w);
    }
}

static void test_events_and_names(void **state)
{
    static const fw_cluster_event want[] = {
        {FW_GVK_NODE, FW_ACT_ADD, NULL},
        {FW_GVK_POD, FW_ACT_DELETE, NULL},
    };
    static const char *const names[] = {"EBSLimits", "GCEPDLimits", "AzureDiskLimits"};

    for (size_t i = 0; i < N_KINDS; i++) {
        tp_plugin *p = tp_plugin_new(kinds[i].desc, NULL, NULL);
        assert_string_equal(kinds[i].desc->name, names[i]);
        assert_ptr_equal(fw_registry_find(plugin_registry_in_tree(), names[i]), kinds[i].desc);
        tp_assert_events(p, want, 2);
        tp_plugin_free(p);
    }
    assert_int_equal(plugin_non_csi_limits_new(&plugin_node_volume_limits, NULL, &(void *){0}),
                     KUBE_EINVAL);
}

int test_group_plugin_non_csi_limits(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_volumes),
        cmocka_unit_test(test_other_kinds_ignored),
        cmocka_unit_test(test_bound_claims),
        cmocka_unit_test(test_missing_claims_and_pvs),
        cmocka_unit_test(test_new_pod_missing_claim),
        cmocka_unit_test(test_unbound_claims),
        cmocka_unit_test(test_ephemeral),
        cmocka_unit_test(test_default_limits),
        cmocka_unit_test(test_ebs_nitro),
        cmocka_unit_test(test_env_limit),
        cmocka_unit_test(test_csi_migration),
        cmocka_unit_test(test_pre_filter),
        cmocka_unit_test(test_events_and_names),
    };
    return cmocka_run_group_tests_name("plugin_non_csi_limits", tests, NULL, NULL);
}
