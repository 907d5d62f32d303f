/*
 * tests/unit/test_plugin_scheduling_gates.c - SchedulingGates: PreEnqueue
 * as kube-scheduler's scheduling_gates_test.go, and its events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "feature_gates.h"
#include "feature_gates_testing.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

static void gates_keep_the_pod_out(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_scheduling_gates, NULL, NULL);
    fw_pod_info *free_pod = tp_pod("{'metadata':{'name':'p'},'spec':{}}");
    fw_pod_info *empty = tp_pod("{'metadata':{'name':'p'},'spec':{'schedulingGates':[]}}");
    fw_pod_info *one = tp_pod("{'metadata':{'name':'p'},'spec':{'schedulingGates':"
                              "[{'name':'foo'}]}}");
    fw_pod_info *two = tp_pod("{'metadata':{'name':'p'},'spec':{'schedulingGates':"
                              "[{'name':'foo'},{'name':'bar'}]}}");

    /* pod does not carry scheduling gates */
    tp_assert_status(p->desc->pre_enqueue(p->self, free_pod), FW_SUCCESS, NULL);
    tp_assert_status(p->desc->pre_enqueue(p->self, empty), FW_SUCCESS, NULL);
    /* pod carries scheduling gates */
    tp_assert_status(p->desc->pre_enqueue(p->self, one), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "waiting for scheduling gates: [foo]");
    tp_assert_status(p->desc->pre_enqueue(p->self, two), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "waiting for scheduling gates: [foo bar]");

    fw_pod_info_unref(free_pod);
    fw_pod_info_unref(empty);
    fw_pod_info_unref(one);
    fw_pod_info_unref(two);
    tp_plugin_free(p);
}

/* PodSchedulingReadiness off: the gates are ignored. */
static void gates_ignored_without_the_feature(void **state)
{
    (void)state;
    char err[256];
    tp_plugin *p = tp_plugin_new(&plugin_scheduling_gates, NULL, NULL);
    fw_pod_info *one = tp_pod("{'metadata':{'name':'p'},'spec':{'schedulingGates':"
                              "[{'name':'foo'}]}}");

    assert_int_equal(sched_features_apply("PodSchedulingReadiness=false", err, sizeof(err)), 0);
    tp_assert_status(p->desc->pre_enqueue(p->self, one), FW_SUCCESS, NULL);
    sched_features_reset();
    tp_assert_status(p->desc->pre_enqueue(p->self, one), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "waiting for scheduling gates: [foo]");
    fw_pod_info_unref(one);
    tp_plugin_free(p);
}

static void registers_pod_updates(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {{FW_GVK_POD, FW_ACT_UPDATE, NULL}};
    tp_plugin *p = tp_plugin_new(&plugin_scheduling_gates, NULL, NULL);

    const fw_cluster_event_with_hint *ev = tp_assert_events(p, want, 1);
    assert_null(ev[0].hint);
    assert_null(p->desc->default_args);
    tp_plugin_free(p);
}

int test_group_plugin_scheduling_gates(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gates_keep_the_pod_out),
        cmocka_unit_test(gates_ignored_without_the_feature),
        cmocka_unit_test(registers_pod_updates),
    };
    return cmocka_run_group_tests_name("plugin_scheduling_gates", tests, NULL, NULL);
}
