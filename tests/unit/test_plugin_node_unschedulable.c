/*
 * tests/unit/test_plugin_node_unschedulable.c - NodeUnschedulable: the
 * Filter cases of kube-scheduler's node_unschedulable_test.go plus
 * toleration variants, and its events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

#define REASON "node(s) were unschedulable"

static fw_status *run(tp_plugin *p, const char *tolerations, const char *node_spec)
{
    fw_pod_info *pod = tp_podf("{'metadata':{'name':'p'},'spec':{'tolerations':%s}}", tolerations);
    char json[512];
    snprintf(json, sizeof(json), "{'metadata':{'name':'n1'},'spec':%s}", node_spec);
    fw_node_info *ni = tp_node(json, NULL, 0);
    fw_status *st = tp_filter(p, pod, ni, NULL);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    return st;
}

static void filters_unschedulable_nodes(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_unschedulable, NULL, NULL);

    /* Does not schedule pod to unschedulable node */
    tp_assert_status(run(p, "[]", "{'unschedulable':true}"), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     REASON);
    /* Schedule pod to normal node */
    tp_assert_status(run(p, "[]", "{'unschedulable':false}"), FW_SUCCESS, NULL);
    tp_assert_status(run(p, "[]", "{}"), FW_SUCCESS, NULL);
    /* Schedule pod with toleration to unschedulable node */
    tp_assert_status(run(p, "[{'key':'node.kubernetes.io/unschedulable','effect':'NoSchedule'}]",
                         "{'unschedulable':true}"),
                     FW_SUCCESS, NULL);
    tp_assert_status(run(p, "[{'key':'node.kubernetes.io/unschedulable','operator':'Exists'}]",
                         "{'unschedulable':true}"),
                     FW_SUCCESS, NULL);
    tp_assert_status(run(p, "[{'operator':'Exists'}]", "{'unschedulable':true}"), FW_SUCCESS, NULL);
    /* a toleration for another effect or key does not count */
    tp_assert_status(run(p, "[{'key':'node.kubernetes.io/unschedulable','effect':'NoExecute'}]",
                         "{'unschedulable':true}"),
                     FW_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON);
    tp_assert_status(run(p, "[{'key':'other','operator':'Exists'}]", "{'unschedulable':true}"),
                     FW_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON);
    tp_plugin_free(p);
}

static void node_info_without_node(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_unschedulable, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{}}");
    fw_node_info *ni = fw_node_info_new();

    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "node(s) had unknown conditions");
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

static void registers_node_add_and_taint_updates(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {
        {FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE_NODE_TAINT, NULL},
    };
    tp_plugin *p = tp_plugin_new(&plugin_node_unschedulable, NULL, NULL);

    tp_assert_events(p, want, 1);
    tp_plugin_free(p);
}

int test_group_plugin_node_unschedulable(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filters_unschedulable_nodes),
        cmocka_unit_test(node_info_without_node),
        cmocka_unit_test(registers_node_add_and_taint_updates),
    };
    return cmocka_run_group_tests_name("plugin_node_unschedulable", tests, NULL, NULL);
}
