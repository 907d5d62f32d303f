/*
 * tests/unit/test_plugin_volume_restrictions.c - VolumeRestrictions, with
 * the cases of kube-scheduler v1.28's volume_restrictions_test.go
 * (TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
 * TestISCSIDiskConflicts with their read-only variants, and
 * TestAccessModeConflicts for ReadWriteOncePod claims, including the
 * AddPod/RemovePod adjustments preemption relies on) and PreFilter's Skip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature_gates.h"
#include "feature_gates_testing.h"
#include "framework/framework.h"
#include "kube/util/errors.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_volume_util.h"
#include "framework/types_testing.h"

#define ERR_DISK "node(s) had no available disk"
#define ERR_RWOP \
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

/* A pod with one volume source (single-quoted JSON members of the
 * volume), or none when vol is NULL. */
static fw_pod_info *pod_vol(const char *name, const char *vol)
{
    if (!vol)
        return tp_podf("{'metadata':{'name':'%s'},'spec':{}}", name);
    return tp_podf("{'metadata':{'name':'%s'},'spec':{'volumes':[{'name':'v',%s}]}}", name, vol);
}

typedef struct disk_case {
    const char *name;
    const char *pod;      /* volume of the pod to schedule */
    const char *existing; /* volume of the pod on the node */
    fw_code want;
} disk_case;

static void run_disk_cases(const disk_case *cases, size_t n)
{
    vt_world *w = vt_world_new();
    tp_plugin *p = vt_plugin(&plugin_volume_restrictions, w, NULL, NULL);

    for (size_t i = 0; i < n; i++) {
        fw_pod_info *pod = pod_vol("pod", cases[i].pod);
        fw_pod_info *ex = pod_vol("existing", cases[i].existing);
        fw_node_info *ni = tp_node_simple("node", NULL, NULL, NULL);
        tp_node_add(ni, ex);
        print_message("case %s\n", cases[i].name);
        tp_assert_status(tp_filter(p, pod, ni, NULL), cases[i].want,
                         cases[i].want == FW_SUCCESS ? NULL : ERR_DISK);
        fw_node_info_free(ni);
        fw_pod_info_unref(pod);
        fw_pod_info_unref(ex);
    }
    tp_plugin_free(p);
    vt_world_free(w);
}

#define GCE(pd, ro) "'gcePersistentDisk':{'pdName':'" pd "','readOnly':" ro "}"
#define AWS(id) "'awsElasticBlockStore':{'volumeID':'" id "'}"
#define RBD(mons, pool, image, ro) \
    "'rbd':{'monitors':[" mons "],'pool':'" pool "','image':'" image "','readOnly':" ro "}"
#define ISCSI(iqn, ro) \
    "'iscsi':{'targetPortal':'127.0.0.1:3260','iqn':'" iqn "','lun':0,'readOnly':" ro "}"

static void test_gce_disk_conflicts(void **state)
{
    const disk_case cases[] = {
        {"nothing", NULL, NULL, FW_SUCCESS},
        {"one state", NULL, GCE("foo", "false"), FW_SUCCESS},
        {"same state", GCE("foo", "false"), GCE("foo", "false"), FW_UNSCHEDULABLE},
        {"different state", GCE("bar", "false"), GCE("foo", "false"), FW_SUCCESS},
        {"same state, both read-only", GCE("foo", "true"), GCE("foo", "true"), FW_SUCCESS},
        {"same state, one read-only", GCE("foo", "true"), GCE("foo", "false"), FW_UNSCHEDULABLE},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_aws_disk_conflicts(void **state)
{
    const disk_case cases[] = {
        {"nothing", NULL, NULL, FW_SUCCESS},
        {"one state", NULL, AWS("foo"), FW_SUCCESS},
        {"same state", AWS("foo"), AWS("foo"), FW_UNSCHEDULABLE},
        {"different state", AWS("bar"), AWS("foo"), FW_SUCCESS},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_rbd_disk_conflicts(void **state)
{
    const disk_case cases[] = {
        {"nothing", NULL, NULL, FW_SUCCESS},
        {"one state", NULL, RBD("'a','b'", "foo", "bar", "false"), FW_SUCCESS},
        {"same state", RBD("'a','b'", "foo", "bar", "false"), RBD("'a','b'", "foo", "bar", "false"),
         FW_UNSCHEDULABLE},
        {"different state", RBD("'c','d'", "foo", "bar", "false"),
         RBD("'a','b'", "foo", "bar", "false"), FW_SUCCESS},
        {"one monitor shared", RBD("'b','c'", "foo", "bar", "false"),
         RBD("'a','b'", "foo", "bar", "false"), FW_UNSCHEDULABLE},
        {"other pool", RBD("'a','b'", "baz", "bar", "false"), RBD("'a','b'", "foo", "bar", "false"),
         FW_SUCCESS},
        {"both read-only", RBD("'a','b'", "foo", "bar", "true"),
         RBD("'a','b'", "foo", "bar", "true"), FW_SUCCESS},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_iscsi_disk_conflicts(void **state)
{
    const disk_case cases[] = {
        {"nothing", NULL, NULL, FW_SUCCESS},
        {"one state", NULL, ISCSI("iqn.2016-12.server:storage.target01", "false"), FW_SUCCESS},
        {"same state", ISCSI("iqn.2016-12.server:storage.target01", "false"),
         ISCSI("iqn.2016-12.server:storage.target01", "false"), FW_UNSCHEDULABLE},
        {"different state", ISCSI("iqn.2016-12.server:storage.target02", "false"),
         ISCSI("iqn.2016-12.server:storage.target01", "false"), FW_SUCCESS},
        {"both read-only", ISCSI("iqn.2016-12.server:storage.target01", "true"),
         ISCSI("iqn.2016-12.server:storage.target01", "true"), FW_SUCCESS},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* ------------------------------------------------------------------ */
/* ReadWriteOncePod                                                    */
/* ------------------------------------------------------------------ */

static fw_pod_info *pod_claim(const char *name, const char *node, const char *claim)
{
    return tp_podf("{'metadata':{'name':'%s'},'spec':{'nodeName':'%s','volumes':[{'name':'v',"
                   "'persistentVolumeClaim':{'claimName':'%s'}}]}}",
                   name, node, claim);
}

static void put_claims(vt_world *w)
{
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'claim-with-rwop-1'},'spec':{'accessModes':"
           "['ReadWriteOncePod']}}");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'claim-with-rwop-2'},'spec':{'accessModes':"
           "['ReadWriteOncePod']}}");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'claim-rwo'},'spec':{'accessModes':"
           "['ReadWriteOnce']}}");
}

static void test_access_mode_conflicts(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = pod_claim("pod", "", "claim-with-rwop-1");
    fw_pod_info *other = pod_claim("other", "node", "claim-with-rwop-2");
    fw_pod_info *same = pod_claim("same", "node", "claim-with-rwop-1");
    fw_pod_info *rwo = pod_claim("rwo", "", "claim-rwo");
    fw_node_info *n1 = tp_node_simple("node", NULL, NULL, NULL);
    fw_node_info *n2 = tp_node_simple("node2", NULL, NULL, NULL);
    fw_snapshot *snap = NULL;
    tp_plugin *p;

    put_claims(w);
    /* no conflict: the node's pod uses another claim */
    tp_node_add(n1, other);
    assert_int_equal(fw_snapshot_from_nodes(&n1, 1, &snap), KUBE_OK);
    p = vt_plugin(&plugin_volume_restrictions, w, NULL, snap);
    tp_assert_status(tp_filter(p, pod, n1, NULL), FW_SUCCESS, NULL);
    tp_plugin_free(p);
    fw_snapshot_free(snap);
    /* conflict: a scheduled pod (on any node) uses the same RWOP claim */
    tp_node_add(n1, same);
    assert_int_equal(fw_snapshot_from_nodes(&n1, 1, &snap), KUBE_OK);
    p = vt_plugin(&plugin_volume_restrictions, w, NULL, snap);
    tp_assert_status(tp_filter(p, pod, n1, NULL), FW_UNSCHEDULABLE, ERR_RWOP);
    tp_assert_status(tp_filter(p, pod, n2, NULL), FW_UNSCHEDULABLE, ERR_RWOP);
    /* an RWO claim has no such restriction, and no disks: Skip */
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *r = NULL;
    tp_assert_status(p->desc->pre_filter(p->self, cs, rwo, &r), FW_SKIP, NULL);
    fw_cycle_state_free(cs);
    tp_plugin_free(p);
    fw_snapshot_free(snap);
    fw_node_info_free(n1);
    fw_node_info_free(n2);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(other);
    fw_pod_info_unref(same);
    fw_pod_info_unref(rwo);
    vt_world_free(w);
}

static void test_missing_claim(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = pod_claim("pod", "", "claim-with-rwop-1");
    fw_node_info *ni = tp_node_simple("node", NULL, NULL, NULL);
    tp_plugin *p = vt_plugin(&plugin_volume_restrictions, w, NULL, NULL);

    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "persistentvolumeclaim \"claim-with-rwop-1\" not found");
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

/* With the ReadWriteOncePod feature gate off, claims are not looked at:
 * neither a conflict nor a missing claim stops the pod. */
static void test_rwop_without_the_feature(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = pod_claim("pod", "", "claim-with-rwop-1");
    fw_pod_info *missing = pod_claim("missing", "", "no-such-claim");
    fw_pod_info *holder = pod_claim("holder", "node", "claim-with-rwop-1");
    fw_node_info *ni = tp_node_simple("node", NULL, NULL, NULL);
    fw_snapshot *snap = NULL;
    char err[256];
    tp_plugin *p;

    put_claims(w);
    tp_node_add(ni, holder);
    assert_int_equal(fw_snapshot_from_nodes(&ni, 1, &snap), KUBE_OK);
    p = vt_plugin(&plugin_volume_restrictions, w, NULL, snap);
    assert_int_equal(sched_features_apply("ReadWriteOncePod=false", err, sizeof(err)), KUBE_OK);
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_SUCCESS, NULL);
    tp_assert_status(tp_filter(p, missing, ni, NULL), FW_SUCCESS, NULL);
    sched_features_reset();
    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE, ERR_RWOP);
    tp_plugin_free(p);
    fw_snapshot_free(snap);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(missing);
    fw_pod_info_unref(holder);
    vt_world_free(w);
}

/* Preemption removes the pod holding the claim: RemovePod clears the
 * conflict on the cloned state, AddPod restores it. */
static void test_add_remove_pod(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = pod_claim("pod", "", "claim-with-rwop-1");
    fw_pod_info *holder = pod_claim("holder", "node", "claim-with-rwop-1");
    fw_node_info *ni = tp_node_simple("node", NULL, NULL, NULL);
    fw_snapshot *snap = NULL;
    fw_pre_filter_result *r = NULL;
    fw_cycle_state *cs = fw_cycle_state_new();
    tp_plugin *p;

    put_claims(w);
    tp_node_add(ni, holder);
    assert_int_equal(fw_snapshot_from_nodes(&ni, 1, &snap), KUBE_OK);
    p = vt_plugin(&plugin_volume_restrictions, w, NULL, snap);
    tp_assert_status(p->desc->pre_filter(p->self, cs, pod, &r), FW_SUCCESS, NULL);
    tp_assert_status(p->desc->filter(p->self, cs, pod, ni), FW_UNSCHEDULABLE, ERR_RWOP);
    fw_cycle_state *clone = fw_cycle_state_clone(cs);
    tp_assert_status(p->desc->pre_filter_remove_pod(p->self, clone, pod, holder, ni), FW_SUCCESS,
                     NULL);
    tp_assert_status(p->desc->filter(p->self, clone, pod, ni), FW_SUCCESS, NULL);
    /* the original state is untouched */
    tp_assert_status(p->desc->filter(p->self, cs, pod, ni), FW_UNSCHEDULABLE, ERR_RWOP);
    tp_assert_status(p->desc->pre_filter_add_pod(p->self, clone, pod, holder, ni), FW_SUCCESS,
                     NULL);
    tp_assert_status(p->desc->filter(p->self, clone, pod, ni), FW_UNSCHEDULABLE, ERR_RWOP);
    fw_cycle_state_free(clone);
    fw_cycle_state_free(cs);
    tp_plugin_free(p);
    fw_snapshot_free(snap);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(holder);
    vt_world_free(w);
}

static void test_events(void **state)
{
    const fw_cluster_event_with_hint *ev;
    size_t n = plugin_volume_restrictions.events_to_register(NULL, &ev);

    assert_int_equal(n, 3);
    assert_string_equal(ev[0].event.resource, FW_GVK_POD);
    assert_int_equal(ev[0].event.action, FW_ACT_DELETE);
    assert_string_equal(ev[1].event.resource, FW_GVK_NODE);
    assert_int_equal(ev[1].event.action, FW_ACT_ADD);
    assert_string_equal(ev[2].event.resource, FW_GVK_PVC);
    assert_int_equal(ev[2].event.action, FW_ACT_ADD | FW_ACT_UPDATE);
}

int test_group_plugin_volume_restrictions(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gce_disk_conflicts),
        cmocka_unit_test(test_aws_disk_conflicts),
        cmocka_unit_test(test_rbd_disk_conflicts),
        cmocka_unit_test(test_iscsi_disk_conflicts),
        cmocka_unit_test(test_access_mode_conflicts),
        cmocka_unit_test(test_missing_claim),
        cmocka_unit_test(test_add_remove_pod),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_rwop_without_the_feature),
    };
    return cmocka_run_group_tests_name("plugin_volume_restrictions", tests, NULL, NULL);
}
