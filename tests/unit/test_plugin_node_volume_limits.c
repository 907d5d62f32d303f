/*
 * tests/unit/test_plugin_node_volume_limits.c - NodeVolumeLimits, with the
 * cases of kube-scheduler v1.28's csi_test.go TestCSILimits: limits from
 * CSINode and from the node's attachable-volumes-csi-* allocatable, volumes
 * shared with pods already on the node counted once, drivers without
 * limits, pending claims counted under their class's provisioner, claims
 * whose PV is missing, claims without class, generic ephemeral volumes
 * (missing, not owned, owned), in-tree volumes migrated to CSI, PreFilter's
 * Skip, and the attach limit key of long driver names.
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
#include "unit/test_plugin_volume_util.h"

#define EBS "ebs.csi.aws.com"
#define GCE "pd.csi.storage.gke.io"
#define ERR_MAX "node(s) exceed max volume count"

/* A bound claim with a CSI PV of driver/handle. */
static void put_csi_volume(vt_world *w, const char *claim, const char *driver, const char *handle)
{
    vt_putf(w, PLUGIN_VOL_PV,
            "{'metadata':{'name':'pv-%s'},'spec':{'csi':{'driver':'%s',"
            "'volumeHandle':'%s'}}}",
            claim, driver, handle);
    vt_putf(w, PLUGIN_VOL_PVC, "{'metadata':{'name':'%s'},'spec':{'volumeName':'pv-%s'}}", claim,
            claim);
}

static void put_csi_node(vt_world *w, const char *driver, int limit)
{
    if (limit < 0)
        vt_putf(w, PLUGIN_VOL_CSINODE,
                "{'metadata':{'name':'node'},'spec':{'drivers':["
                "{'name':'%s','nodeID':'n'}]}}",
                driver);
    else
        vt_putf(w, PLUGIN_VOL_CSINODE,
                "{'metadata':{'name':'node'},'spec':{'drivers':["
                "{'name':'%s','nodeID':'n','allocatable':{'count':%d}}]}}",
                driver, limit);
}

/* A pod using claims (comma-separated names). */
static fw_pod_info *pod_claims(const char *name, const char *claims)
{
    char vols[2048] = "", list[256];
    size_t off = 0;
    int i = 0;

    snprintf(list, sizeof(list), "%s", claims);
    for (char *sp = NULL, *c = strtok_r(list, ",", &sp); c; c = strtok_r(NULL, ",", &sp))
        off += (size_t)snprintf(vols + off, sizeof(vols) - off,
                                "%s{'name':'v%d','persistentVolumeClaim':{'claimName':'%s'}}",
                                i ? "," : "", i, c),
            i++;
    return tp_podf("{'metadata':{'name':'%s'},'spec':{'volumes':[%s]}}", name, vols);
}

/* Filter of new_claims on a node whose pod uses existing_claims. */
static void expect(vt_world *w, const char *new_claims, const char *existing_claims,
                   const char *allocatable, fw_code code, const char *msg)
{
    fw_pod_info *pod = pod_claims("new", new_claims);
    fw_pod_info *ex = existing_claims ? pod_claims("existing", existing_claims) : NULL;
    fw_node_info *ni = tp_node_simple("node", allocatable, NULL, NULL);
    tp_plugin *p = vt_plugin(&plugin_node_volume_limits, w, NULL, NULL);

    if (ex)
        tp_node_add(ni, ex);
    tp_assert_status(tp_filter(p, pod, ni, NULL), code, msg);
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(ex);
}

static vt_world *ebs_world(void)
{
    vt_world *w = vt_world_new();
    put_csi_volume(w, "csi-ebs.csi.aws.com-0", EBS, "ebs-0");
    put_csi_volume(w, "csi-ebs.csi.aws.com-1", EBS, "ebs-1");
    put_csi_volume(w, "csi-ebs.csi.aws.com-2", EBS, "ebs-2");
    put_csi_volume(w, "csi-ebs.csi.aws.com-3", EBS, "ebs-3");
    put_csi_volume(w, "csi-gce-0", GCE, "gce-0");
    vt_put(w, PLUGIN_VOL_SC, "{'metadata':{'name':'csi-sc'},'provisioner':'" EBS "'}");
    return w;
}

#define C0 "csi-ebs.csi.aws.com-0"
#define C1 "csi-ebs.csi.aws.com-1"
#define C2 "csi-ebs.csi.aws.com-2"
#define C3 "csi-ebs.csi.aws.com-3"

static void test_csinode_limits(void **state)
{
    vt_world *w = ebs_world();

    put_csi_node(w, EBS, 4);
    /* fits when node volume limit >= new pod's CSI volumes */
    expect(w, C2 "," C3, C0 "," C1, NULL, FW_SUCCESS, NULL);
    put_csi_node(w, EBS, 2);
    /* doesn't when node volume limit <= pods CSI volume */
    expect(w, C2, C0 "," C1, NULL, FW_UNSCHEDULABLE, ERR_MAX);
    /* a volume the node's pods already use is not counted again */
    expect(w, C0, C0 "," C1, NULL, FW_SUCCESS, NULL);
    /* another driver has no limit */
    expect(w, "csi-gce-0", C0 "," C1, NULL, FW_SUCCESS, NULL);
    /* no limit for the driver */
    put_csi_node(w, EBS, -1);
    expect(w, C2 "," C3, C0 "," C1, NULL, FW_SUCCESS, NULL);
    vt_world_free(w);
}

static void test_node_allocatable_limits(void **state)
{
    vt_world *w = ebs_world();
    const char *alloc = "{'attachable-volumes-csi-" EBS "':'2'}";

    /* no CSINode: the node's attachable-volumes-csi-* allocatable */
    expect(w, C2, C0 "," C1, alloc, FW_UNSCHEDULABLE, ERR_MAX);
    expect(w, C1, C0, alloc, FW_SUCCESS, NULL);
    /* CSINode's count overrides the allocatable */
    put_csi_node(w, EBS, 3);
    expect(w, C2, C0 "," C1, alloc, FW_SUCCESS, NULL);
    vt_world_free(w);
}

static void test_pending_claims(void **state)
{
    vt_world *w = ebs_world();

    put_csi_node(w, EBS, 2);
    /* a pending claim counts under its class's provisioner */
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'pending'},'spec':{'storageClassName':"
           "'csi-sc'}}");
    expect(w, "pending", C0 "," C1, NULL, FW_UNSCHEDULABLE, ERR_MAX);
    /* so does a claim whose PV is missing */
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'no-pv'},'spec':{'storageClassName':"
           "'csi-sc','volumeName':'gone'}}");
    expect(w, "no-pv", C0 "," C1, NULL, FW_UNSCHEDULABLE, ERR_MAX);
    /* a claim without class is not counted */
    vt_put(w, PLUGIN_VOL_PVC, "{'metadata':{'name':'no-sc'},'spec':{}}");
    expect(w, "no-sc", C0 "," C1, NULL, FW_SUCCESS, NULL);
    /* nor one of a class that does not exist */
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'bad-sc'},'spec':{'storageClassName':"
           "'nope'}}");
    expect(w, "bad-sc", C0 "," C1, NULL, FW_SUCCESS, NULL);
    /* the existing pod's missing claim is not counted */
    expect(w, C2, C0 ",missing", NULL, FW_SUCCESS, NULL);
    /* the new pod's missing claim is unresolvable */
    expect(w, "missing", C0, NULL, FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
           "looking up PVC default/missing: persistentvolumeclaim \"missing\" not found");
    vt_world_free(w);
}

static void test_ephemeral(void **state)
{
    vt_world *w = ebs_world();
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'abc','uid':'12345'},'spec':{'volumes':["
                              "{'name':'xyz','ephemeral':{'volumeClaimTemplate':{}}}]}}");
    fw_pod_info *ex = pod_claims("existing", C0 "," C1);
    fw_node_info *ni = tp_node_simple("node", NULL, NULL, NULL);
    tp_plugin *p = vt_plugin(&plugin_node_volume_limits, w, NULL, NULL);

    put_csi_node(w, EBS, 2);
    tp_node_add(ni, ex);
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "looking up PVC default/abc-xyz: persistentvolumeclaim \"abc-xyz\" not "
                     "found");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'abc-xyz'},'spec':{'storageClassName':"
           "'csi-sc'}}");
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_ERROR,
                     "PVC default/abc-xyz was not created for pod default/abc (pod is not "
                     "owner)");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'abc-xyz','ownerReferences':[{'apiVersion':"
           "'v1','kind':'Pod','name':'abc','uid':'12345','controller':true}]},"
           "'spec':{'storageClassName':'csi-sc'}}");
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE, ERR_MAX);
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(ex);
    vt_world_free(w);
}

/* In-tree AWS EBS volumes count as ebs.csi.aws.com once the node has a
 * CSINode (CSI migration is on for AWS EBS in v1.28). */
static void test_migrated_in_tree(void **state)
{
    vt_world *w = ebs_world();
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'inline'},'spec':{'volumes':[{'name':'v',"
                              "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/vol-1'}}]}}");
    fw_pod_info *ex = pod_claims("existing", C0 "," C1);
    fw_node_info *ni = tp_node_simple("node", NULL, NULL, NULL);
    tp_plugin *p = vt_plugin(&plugin_node_volume_limits, w, NULL, NULL);

    tp_node_add(ni, ex);
    /* no CSINode, no limits */
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_SUCCESS, NULL);
    put_csi_node(w, EBS, 2);
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE, ERR_MAX);
    put_csi_node(w, EBS, 3);
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_SUCCESS, NULL);
    /* an in-tree PV too */
    vt_put(w, PLUGIN_VOL_PV,
           "{'metadata':{'name':'pv-intree'},'spec':{'awsElasticBlockStore':{"
           "'volumeID':'vol-2'}}}");
    vt_put(w, PLUGIN_VOL_PVC, "{'metadata':{'name':'intree'},'spec':{'volumeName':'pv-intree'}}");
    tp_plugin_free(p);
    fw_pod_info_unref(pod);
    pod = pod_claims("new", "intree," C2);
    p = vt_plugin(&plugin_node_volume_limits, w, NULL, NULL);
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE, ERR_MAX);
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(ex);
    vt_world_free(w);
}

static void test_prefilter_skip(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'c',"
                              "'configMap':{'name':'x'}}]}}");
    tp_plugin *p = vt_plugin(&plugin_node_volume_limits, w, NULL, NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *r = NULL;

    tp_assert_status(p->desc->pre_filter(p->self, cs, pod, &r), FW_SKIP, NULL);
    fw_cycle_state_free(cs);
    tp_plugin_free(p);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* A driver name too long for a resource name is cut and hashed
 * (GetCSIAttachLimitKey): the node's allocatable under that key limits it. */
static void test_long_driver_name(void **state)
{
    vt_world *w = vt_world_new();
    const char *driver = "a-very-long-csi-driver-name.storage.example.com";

    put_csi_volume(w, "c0", driver, "h0");
    put_csi_volume(w, "c1", driver, "h1");
    /* prefix + first 23 characters + the first 16 hex digits of its SHA-1 */
    expect(w, "c1", "c0", "{'attachable-volumes-csi-a-very-long-csi-driver-86bf5f46bc6f1680':'1'}",
           FW_UNSCHEDULABLE, ERR_MAX);
    expect(w, "c1", "c0", "{'attachable-volumes-csi-a-very-long-csi-driver-86bf5f46bc6f1680':'2'}",
           FW_SUCCESS, NULL);
    vt_world_free(w);
}

int test_group_plugin_node_volume_limits(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csinode_limits),   cmocka_unit_test(test_node_allocatable_limits),
        cmocka_unit_test(test_pending_claims),   cmocka_unit_test(test_ephemeral),
        cmocka_unit_test(test_migrated_in_tree), cmocka_unit_test(test_prefilter_skip),
        cmocka_unit_test(test_long_driver_name),
    };
    return cmocka_run_group_tests_name("plugin_node_volume_limits", tests, NULL, NULL);
}
