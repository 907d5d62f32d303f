/*
 * tests/unit/test_plugin_node_name.c - NodeName: the Filter cases of
 * kube-scheduler's node_name_test.go, and its events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

static fw_status *run(tp_plugin *p, const char *pod_spec, const char *node)
{
    fw_pod_info *pod = tp_podf("{'metadata':{'name':'p'},'spec':%s}", pod_spec);
    fw_node_info *ni = tp_node_simple(node, NULL, NULL, NULL);
    fw_status *st = tp_filter(p, pod, ni, NULL);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    return st;
}

static void matches_the_requested_node_name(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_name, NULL, NULL);

    /* no host specified */
    tp_assert_status(run(p, "{}", "foo"), FW_SUCCESS, NULL);
    /* host matches */
    tp_assert_status(run(p, "{'nodeName':'foo'}", "foo"), FW_SUCCESS, NULL);
    /* host doesn't match */
    tp_assert_status(run(p, "{'nodeName':'bar'}", "foo"), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "node(s) didn't match the requested node name");
    tp_plugin_free(p);
}

static void node_info_without_node_is_an_error(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_name, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{'nodeName':'foo'}}");
    fw_node_info *ni = fw_node_info_new();

    tp_assert_status(tp_filter(p, pod, ni, NULL), FW_ERROR, "node not found");
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

static void registers_node_add_and_update(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, NULL}};
    tp_plugin *p = tp_plugin_new(&plugin_node_name, NULL, NULL);

    tp_assert_events(p, want, 1);
    tp_plugin_free(p);
}

int test_group_plugin_node_name(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_the_requested_node_name),
        cmocka_unit_test(node_info_without_node_is_an_error),
        cmocka_unit_test(registers_node_add_and_update),
    };
    return cmocka_run_group_tests_name("plugin_node_name", tests, NULL, NULL);
}
