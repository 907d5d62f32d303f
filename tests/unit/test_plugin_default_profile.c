/*
 * tests/unit/test_plugin_default_profile.c - the built-in plugins inside
 * the framework: the defaulted kube-scheduler v1.28 profile builds with
 * every plugin at its points and weights (the in-tree volume limits
 * plugins included), and schedulePod picks the node and writes the
 * FailedScheduling message kube-scheduler would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "plugins/registry.h"
#include "kube/util/errors.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"
#include "framework/types_testing.h"
#include "framework/framework_testing.h"

static int has(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static void default_profile_points_and_weights(void **state)
{
    (void)state;
    /* kube-scheduler v1.28's Filter order */
    static const char *const filters[] = {
        "NodeUnschedulable", "NodeName",          "TaintToleration",    "NodeAffinity",
        "NodePorts",         "NodeResourcesFit",  "VolumeRestrictions", "EBSLimits",
        "GCEPDLimits",       "NodeVolumeLimits",  "AzureDiskLimits",    "VolumeBinding",
        "VolumeZone",        "PodTopologySpread", "InterPodAffinity",
    };
    sched_config *cfg = NULL;
    fw_framework *fw = NULL;
    const char *names[32];
    char err[512];
    size_t n;

    assert_int_equal(tp_config_load(NULL, NULL, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    assert_int_equal(
        fw_framework_new(&cfg->profiles[0], plugin_registry_in_tree(), NULL, &fw, err, sizeof(err)),
        KUBE_OK);
    n = fw_framework_plugins_at(fw, FW_PT_QUEUE_SORT, names, 32);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "PrioritySort");
    n = fw_framework_plugins_at(fw, FW_PT_PRE_ENQUEUE, names, 32);
    assert_true(has(names, n, "SchedulingGates"));
    n = fw_framework_plugins_at(fw, FW_PT_PRE_FILTER, names, 32);
    assert_true(has(names, n, "NodeAffinity") && has(names, n, "NodePorts") &&
                has(names, n, "NodeResourcesFit"));
    assert_true(has(names, n, "EBSLimits") && has(names, n, "GCEPDLimits") &&
                has(names, n, "AzureDiskLimits"));
    n = fw_framework_plugins_at(fw, FW_PT_FILTER, names, 32);
    assert_int_equal(n, 15);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(names[i], filters[i]);
    n = fw_framework_plugins_at(fw, FW_PT_BIND, names, 32);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "DefaultBinder");
    assert_int_equal(fw_framework_score_weight(fw, "TaintToleration"), 3);
    assert_int_equal(fw_framework_score_weight(fw, "NodeAffinity"), 2);
    assert_int_equal(fw_framework_score_weight(fw, "NodeResourcesFit"), 1);
    assert_int_equal(fw_framework_score_weight(fw, "NodeResourcesBalancedAllocation"), 1);
    assert_int_equal(fw_framework_score_weight(fw, "ImageLocality"), 1);
    /* the defaulted args the config carries */
    assert_non_null(sched_profile_args(&cfg->profiles[0], "NodeResourcesFit"));
    assert_non_null(sched_profile_args(&cfg->profiles[0], "NodeResourcesBalancedAllocation"));
    assert_non_null(sched_profile_args(&cfg->profiles[0], "NodeAffinity"));
    fw_framework_free(fw);
    sched_config_free(cfg);
}

static void schedules_like_kube_scheduler(void **state)
{
    (void)state;
    sched_config *cfg = NULL;
    fw_framework *fw = NULL;
    fw_snapshot *snap = NULL;
    fw_services svc;
    char err[512];

    fw_pod_info *busy = tp_pod_requests("busy", "[{'cpu':'3','memory':'1Gi'}]", NULL);
    fw_node_info *nodes[4] = {
        tp_node_simple("node1", "{'cpu':'4','memory':'16Gi','pods':'110'}", "{'disk':'ssd'}", NULL),
        tp_node_simple("node2", "{'cpu':'8','memory':'16Gi','pods':'110'}", "{'disk':'hdd'}", NULL),
        tp_node_simple("node3", "{'cpu':'8','memory':'16Gi','pods':'110'}", "{'disk':'ssd'}", NULL),
        tp_node_simple("node4", "{'cpu':'16','memory':'32Gi','pods':'110'}", "{'disk':'ssd'}",
                       NULL),
    };
    tp_node_add(nodes[0], busy);
    assert_int_equal(fw_snapshot_from_nodes(nodes, 4, &snap), KUBE_OK);
    memset(&svc, 0, sizeof(svc));
    svc.snapshot = snap;
    assert_int_equal(tp_config_load(NULL, NULL, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    assert_int_equal(
        fw_framework_new(&cfg->profiles[0], plugin_registry_in_tree(), &svc, &fw, err, sizeof(err)),
        KUBE_OK);

    /* node1 lacks cpu, node2 the label; node4 is the least allocated and
     * the most balanced */
    fw_pod_info *pod =
        tp_pod_requests("web", "[{'cpu':'2','memory':'1Gi'}]", ",'nodeSelector':{'disk':'ssd'}");
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_sched_state ss = {0};
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    fw_schedule_result res;
    tp_assert_status(fw_framework_schedule_pod(fw, cs, pod, snap, &ss, &d, &res), FW_SUCCESS, NULL);
    assert_string_equal(res.suggested_host, "node4");
    assert_int_equal(res.feasible_nodes, 2);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);

    /* nothing fits: the FitError histogram */
    fw_pod_info *big = tp_pod_requests("big", "[{'cpu':'100'}]", ",'nodeSelector':{'disk':'ssd'}");
    cs = fw_cycle_state_new();
    fw_status *st = fw_framework_schedule_pod(fw, cs, big, snap, &ss, &d, &res);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    fw_status_free(st);
    char *msg = fw_fit_error_message(4, &d);
    assert_string_equal(msg, "0/4 nodes are available: 1 node(s) didn't match Pod's node "
                             "affinity/selector, 3 Insufficient cpu.");
    free(msg);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);

    fw_pod_info_unref(big);
    fw_pod_info_unref(pod);
    fw_framework_free(fw);
    sched_config_free(cfg);
    fw_snapshot_free(snap);
    for (int i = 0; i < 4; i++)
        fw_node_info_free(nodes[i]);
    fw_pod_info_unref(busy);
}

/* The in-tree volume limits plugins run in the default profile: a pod
 * with an AWS EBS volume avoids the node whose attachable-volumes-aws-ebs
 * is used up, and is told why when every node is. */
static void default_profile_limits_in_tree_volumes(void **state)
{
    (void)state;
    sched_config *cfg = NULL;
    fw_framework *fw = NULL;
    fw_snapshot *snap = NULL;
    fw_services svc;
    char err[512];
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'db'},'spec':{'containers':[{'name':'c'}],"
                              "'volumes':[{'name':'d','awsElasticBlockStore':{'volumeID':"
                              "'vol-1'}}]}}");
    fw_node_info *nodes[2] = {
        tp_node_simple("full", "{'cpu':'4','pods':'110','attachable-volumes-aws-ebs':'0'}", NULL,
                       NULL),
        tp_node_simple("room", "{'cpu':'4','pods':'110','attachable-volumes-aws-ebs':'1'}", NULL,
                       NULL),
    };
    fw_cycle_state *cs;
    fw_sched_state ss = {0};
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    fw_schedule_result res;

    assert_int_equal(fw_snapshot_from_nodes(nodes, 2, &snap), KUBE_OK);
    memset(&svc, 0, sizeof(svc));
    svc.snapshot = snap;
    assert_int_equal(tp_config_load(NULL, NULL, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    assert_int_equal(
        fw_framework_new(&cfg->profiles[0], plugin_registry_in_tree(), &svc, &fw, err, sizeof(err)),
        KUBE_OK);
    cs = fw_cycle_state_new();
    tp_assert_status(fw_framework_schedule_pod(fw, cs, pod, snap, &ss, &d, &res), FW_SUCCESS, NULL);
    assert_string_equal(res.suggested_host, "room");
    assert_int_equal(res.feasible_nodes, 1);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
    fw_framework_free(fw);
    fw_snapshot_free(snap);

    /* no room anywhere */
    fw_node_info_free(nodes[1]);
    nodes[1] = tp_node_simple("room", "{'cpu':'4','pods':'110','attachable-volumes-aws-ebs':'0'}",
                              NULL, NULL);
    assert_int_equal(fw_snapshot_from_nodes(nodes, 2, &snap), KUBE_OK);
    svc.snapshot = snap;
    assert_int_equal(
        fw_framework_new(&cfg->profiles[0], plugin_registry_in_tree(), &svc, &fw, err, sizeof(err)),
        KUBE_OK);
    cs = fw_cycle_state_new();
    fw_status *st = fw_framework_schedule_pod(fw, cs, pod, snap, &ss, &d, &res);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    fw_status_free(st);
    char *msg = fw_fit_error_message(2, &d);
    assert_string_equal(msg, "0/2 nodes are available: 2 node(s) exceed max volume count.");
    free(msg);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);

    fw_framework_free(fw);
    sched_config_free(cfg);
    fw_snapshot_free(snap);
    fw_node_info_free(nodes[0]);
    fw_node_info_free(nodes[1]);
    fw_pod_info_unref(pod);
}

int test_group_plugin_default_profile(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_profile_points_and_weights),
        cmocka_unit_test(schedules_like_kube_scheduler),
        cmocka_unit_test(default_profile_limits_in_tree_volumes),
    };
    return cmocka_run_group_tests_name("plugin_default_profile", tests, NULL, NULL);
}
