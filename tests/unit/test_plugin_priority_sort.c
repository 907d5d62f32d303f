/*
 * tests/unit/test_plugin_priority_sort.c - PrioritySort: the QueueSort
 * order of kube-scheduler's priority_sort_test.go (priority first, then
 * the queue timestamp).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>

#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

static fw_queued_pod_info queued(fw_pod_info *pi, int64_t ts)
{
    fw_queued_pod_info q = {0};
    q.pi = pi;
    q.timestamp_ns = ts;
    return q;
}

static void orders_by_priority_then_timestamp(void **state)
{
    (void)state;
    fw_pod_info *low = tp_pod("{'metadata':{'name':'low'},'spec':{'priority':10}}");
    fw_pod_info *high = tp_pod("{'metadata':{'name':'high'},'spec':{'priority':100}}");
    fw_pod_info *high2 = tp_pod("{'metadata':{'name':'high2'},'spec':{'priority':100}}");
    fw_pod_info *none = tp_pod("{'metadata':{'name':'none'},'spec':{}}");
    fw_pod_info *neg = tp_pod("{'metadata':{'name':'neg'},'spec':{'priority':-5}}");
    tp_plugin *p = tp_plugin_new(&plugin_priority_sort, NULL, NULL);
    fw_queued_pod_info a, b;

    /* p1.priority less than p2.priority */
    a = queued(low, 1), b = queued(high, 2);
    assert_false(p->desc->less(p->self, &a, &b));
    /* p1.priority greater than p2.priority */
    a = queued(high, 2), b = queued(low, 1);
    assert_true(p->desc->less(p->self, &a, &b));
    /* equal priority, p1 added to the queue earlier than p2 */
    a = queued(high, 1), b = queued(high2, 2);
    assert_true(p->desc->less(p->self, &a, &b));
    /* equal priority, p2 added earlier */
    a = queued(high, 3), b = queued(high2, 2);
    assert_false(p->desc->less(p->self, &a, &b));
    /* same timestamp: neither goes first */
    a = queued(high, 2), b = queued(high2, 2);
    assert_false(p->desc->less(p->self, &a, &b));
    assert_false(p->desc->less(p->self, &b, &a));
    /* unset priority is 0, above negative ones */
    a = queued(none, 9), b = queued(neg, 1);
    assert_true(p->desc->less(p->self, &a, &b));

    assert_null(p->desc->default_args);
    assert_null(p->desc->events_to_register);
    tp_plugin_free(p);
    fw_pod_info_unref(low);
    fw_pod_info_unref(high);
    fw_pod_info_unref(high2);
    fw_pod_info_unref(none);
    fw_pod_info_unref(neg);
}

int test_group_plugin_priority_sort(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(orders_by_priority_then_timestamp),
    };
    return cmocka_run_group_tests_name("plugin_priority_sort", tests, NULL, NULL);
}
