/*
 * tests/unit/test_plugin_taint_toleration.c - TaintToleration: the Filter
 * and Score tables of kube-scheduler v1.28's taint_toleration_test.go
 * (v1.28 reports the first untolerated taint as "{key: value}"), toleration
 * operators and effects, and the events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

static fw_pod_info *pod_with(const char *tolerations)
{
    return tp_podf("{'metadata':{'name':'pod1'},'spec':{'tolerations':%s}}", tolerations);
}

typedef struct filter_case {
    const char *name;
    const char *tolerations;
    const char *taints;
    const char *want; /* NULL: fits */
} filter_case;

static const filter_case filter_cases[] = {
    {"no tolerations, node with a NoSchedule taint", "[]",
     "[{'key':'dedicated','value':'user1','effect':'NoSchedule'}]",
     "node(s) had untolerated taint {dedicated: user1}"},
    {"dedicated node of user1, NoSchedule",
     "[{'key':'dedicated','value':'user1','effect':'NoSchedule'}]",
     "[{'key':'dedicated','value':'user1','effect':'NoSchedule'}]", NULL},
    {"dedicated node of user1, pod of user2",
     "[{'key':'dedicated','operator':'Equal','value':'user2','effect':'NoSchedule'}]",
     "[{'key':'dedicated','value':'user1','effect':'NoSchedule'}]",
     "node(s) had untolerated taint {dedicated: user1}"},
    {"operator Exists tolerates the taint",
     "[{'key':'foo','operator':'Exists','effect':'NoSchedule'}]",
     "[{'key':'foo','value':'bar','effect':'NoSchedule'}]", NULL},
    {"multiple tolerations, all taints tolerated",
     "[{'key':'dedicated','operator':'Equal','value':'user2','effect':'NoSchedule'},"
     "{'key':'foo','operator':'Exists','effect':'NoSchedule'}]",
     "[{'key':'dedicated','value':'user2','effect':'NoSchedule'},"
     "{'key':'foo','value':'bar','effect':'NoSchedule'}]",
     NULL},
    {"key and value match but the (non-empty) effect does not",
     "[{'key':'foo','operator':'Equal','value':'bar','effect':'PreferNoSchedule'}]",
     "[{'key':'foo','value':'bar','effect':'NoSchedule'}]",
     "node(s) had untolerated taint {foo: bar}"},
    {"empty toleration effect matches every effect",
     "[{'key':'foo','operator':'Equal','value':'bar'}]",
     "[{'key':'foo','value':'bar','effect':'NoSchedule'}]", NULL},
    {"PreferNoSchedule taints do not filter",
     "[{'key':'dedicated','operator':'Equal','value':'user2','effect':'NoSchedule'}]",
     "[{'key':'dedicated','value':'user1','effect':'PreferNoSchedule'}]", NULL},
    {"no tolerations, PreferNoSchedule taint", "[]",
     "[{'key':'dedicated','value':'user1','effect':'PreferNoSchedule'}]", NULL},
    {"NoExecute taints filter", "[]", "[{'key':'gone','effect':'NoExecute'}]",
     "node(s) had untolerated taint {gone: }"},
    {"the first untolerated taint is reported", "[{'key':'a','operator':'Exists'}]",
     "[{'key':'a','value':'1','effect':'NoSchedule'},{'key':'b','value':'2','effect':'NoExecute'},"
     "{'key':'c','value':'3','effect':'NoSchedule'}]",
     "node(s) had untolerated taint {b: 2}"},
    {"empty key with Exists tolerates everything", "[{'operator':'Exists'}]",
     "[{'key':'a','value':'1','effect':'NoSchedule'},{'key':'b','effect':'NoExecute'}]", NULL},
    {"empty key with Equal compares only the value", "[{'operator':'Equal','value':'1'}]",
     "[{'key':'a','value':'1','effect':'NoSchedule'},{'key':'b','value':'2','effect':'NoSchedule'}"
     "]",
     "node(s) had untolerated taint {b: 2}"},
    {"unknown operator tolerates nothing", "[{'key':'a','operator':'Gt','value':'0'}]",
     "[{'key':'a','value':'1','effect':'NoSchedule'}]", "node(s) had untolerated taint {a: 1}"},
};

static void filter_table(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_taint_toleration, NULL, NULL);

    for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++) {
        const filter_case *c = &filter_cases[i];
        fw_pod_info *pod = pod_with(c->tolerations);
        fw_node_info *ni = tp_node_simple("nodeA", NULL, NULL, c->taints);
        print_message("case: %s\n", c->name);
        tp_assert_status(tp_filter(p, pod, ni, NULL),
                         c->want ? FW_UNSCHEDULABLE_AND_UNRESOLVABLE : FW_SUCCESS, c->want);
        fw_node_info_free(ni);
        fw_pod_info_unref(pod);
    }
    tp_plugin_free(p);
}

typedef struct score_case {
    const char *name;
    const char *tolerations;
    const char *taints[3];
    int64_t want[3];
} score_case;

static const score_case score_cases[] = {
    {"tolerated taints score higher than intolerable ones",
     "[{'key':'foo','operator':'Equal','value':'bar','effect':'PreferNoSchedule'}]",
     {"[{'key':'foo','value':'bar','effect':'PreferNoSchedule'}]",
      "[{'key':'foo','value':'blah','effect':'PreferNoSchedule'}]", NULL},
     {100, 0}},
    {"all taints tolerated: same score whatever their number",
     "[{'key':'cpu-type','operator':'Equal','value':'arm64','effect':'PreferNoSchedule'},"
     "{'key':'disk-type','operator':'Equal','value':'ssd','effect':'PreferNoSchedule'}]",
     {"[]", "[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}]",
      "[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'},"
      "{'key':'disk-type','value':'ssd','effect':'PreferNoSchedule'}]"},
     {100, 100, 100}},
    {"the more intolerable taints, the lower the score",
     "[{'key':'foo','operator':'Equal','value':'bar','effect':'PreferNoSchedule'}]",
     {"[]", "[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}]",
      "[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'},"
      "{'key':'disk-type','value':'ssd','effect':'PreferNoSchedule'}]"},
     {100, 50, 0}},
    {"only PreferNoSchedule taints and tolerations count",
     "[{'key':'cpu-type','operator':'Equal','value':'arm64','effect':'NoSchedule'},"
     "{'key':'disk-type','operator':'Equal','value':'ssd','effect':'NoSchedule'}]",
     {"[]", "[{'key':'cpu-type','value':'arm64','effect':'NoSchedule'}]",
      "[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'},"
      "{'key':'disk-type','value':'ssd','effect':'PreferNoSchedule'}]"},
     {100, 100, 0}},
    {"no taints and tolerations: lands on the node without taints",
     "[]",
     {"[]", "[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}]", NULL},
     {100, 0}},
    {"a toleration with an empty effect counts",
     "[{'key':'cpu-type','operator':'Exists'}]",
     {"[{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}]",
      "[{'key':'x','value':'y','effect':'PreferNoSchedule'}]", NULL},
     {100, 0}},
    {"no node has intolerable taints: all MaxNodeScore", "[]", {"[]", "[]", NULL}, {100, 100}},
};

static void score_table(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_taint_toleration, NULL, NULL);

    for (size_t i = 0; i < sizeof(score_cases) / sizeof(score_cases[0]); i++) {
        const score_case *c = &score_cases[i];
        fw_node_info *nodes[3];
        int64_t got[3];
        size_t n = 0;
        char name[32];
        print_message("case: %s\n", c->name);
        for (; n < 3 && c->taints[n]; n++) {
            snprintf(name, sizeof(name), "node%zu", n);
            nodes[n] = tp_node_simple(name, NULL, NULL, c->taints[n]);
        }
        fw_pod_info *pod = pod_with(c->tolerations);
        assert_int_equal(tp_score(p, pod, nodes, n, 1, got), FW_SUCCESS);
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(got[k], c->want[k]);
            fw_node_info_free(nodes[k]);
        }
        fw_pod_info_unref(pod);
    }
    tp_plugin_free(p);
}

static void score_needs_pre_score(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_taint_toleration, NULL, NULL);
    fw_pod_info *pod = pod_with("[]");
    fw_node_info *ni = tp_node_simple("n", NULL, NULL, NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    int64_t s = 7;

    tp_assert_status(p->desc->score(p->self, cs, pod, ni, &s), FW_ERROR,
                     "failed to read \"PreScoreTaintToleration\" from cycleState: not found");
    /* PreScore over no nodes writes nothing and succeeds */
    tp_assert_status(p->desc->pre_score(p->self, cs, pod, NULL, 0), FW_SUCCESS, NULL);
    assert_null(fw_cycle_state_read(cs, "PreScoreTaintToleration"));
    /* the state survives a clone (preemption) */
    const fw_node_info *one[] = {ni};
    tp_assert_status(p->desc->pre_score(p->self, cs, pod, one, 1), FW_SUCCESS, NULL);
    fw_cycle_state *clone = fw_cycle_state_clone(cs);
    assert_non_null(clone);
    tp_assert_status(p->desc->score(p->self, clone, pod, ni, &s), FW_SUCCESS, NULL);
    assert_int_equal(s, 0);
    fw_cycle_state_free(clone);
    fw_cycle_state_free(cs);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

static void registers_node_add_and_update(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, NULL}};
    tp_plugin *p = tp_plugin_new(&plugin_taint_toleration, NULL, NULL);

    tp_assert_events(p, want, 1);
    tp_plugin_free(p);
}

int test_group_plugin_taint_toleration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_table),
        cmocka_unit_test(score_table),
        cmocka_unit_test(score_needs_pre_score),
        cmocka_unit_test(registers_node_add_and_update),
    };
    return cmocka_run_group_tests_name("plugin_taint_toleration", tests, NULL, NULL);
}
