/*
 * tests/unit/test_plugin_node_resources_balanced_allocation.c -
 * NodeResourcesBalancedAllocation: the score table of kube-scheduler
 * v1.28's balanced_allocation_test.go (two resources, three with a scalar,
 * a scalar the pod does not request, Score without PreScore), and args
 * defaulting and validation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/util/errors.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

/* the pod specs of the upstream table */
#define CPU_AND_MEMORY "[{'cpu':'1000m','memory':'2000'},{'cpu':'2000m','memory':'3000'}]"
#define CPU_ONLY "[{'cpu':'1000m','memory':'0'},{'cpu':'2000m','memory':'0'}]"
#define CPU_AND_MEMORY_AND_GPU \
    "[{'cpu':'1000m','memory':'2000'},{'cpu':'2000m','memory':'3000','nvidia.com/gpu':'3'}]"
#define GPU_RES                                                             \
    "{'resources':[{'name':'cpu','weight':1},{'name':'memory','weight':1}," \
    "{'name':'nvidia.com/gpu','weight':1}]}"

typedef struct ba_case {
    const char *name;
    const char *pod;
    const char *alloc[2];
    const char *existing[2]; /* one pod per node, or NULL */
    const char *args;
    int pre_score;
    int64_t want[2];
} ba_case;

static const ba_case cases[] = {
    {"nothing scheduled, nothing requested",
     "[]",
     {"{'cpu':'4000m','memory':'10000'}", "{'cpu':'4000m','memory':'10000'}"},
     {NULL, NULL},
     NULL,
     1,
     {100, 100}},
    {"nothing scheduled, resources requested, differently sized nodes",
     CPU_AND_MEMORY,
     {"{'cpu':'4000m','memory':'10000'}", "{'cpu':'6000m','memory':'10000'}"},
     {NULL, NULL},
     NULL,
     1,
     {87, 100}},
    {"resources requested, pods scheduled with resources",
     CPU_AND_MEMORY,
     {"{'cpu':'10000m','memory':'20000'}", "{'cpu':'10000m','memory':'20000'}"},
     {CPU_ONLY, CPU_AND_MEMORY},
     NULL,
     1,
     {82, 95}},
    {"resources requested, pods scheduled with resources, differently sized nodes",
     CPU_AND_MEMORY,
     {"{'cpu':'10000m','memory':'20000'}", "{'cpu':'10000m','memory':'50000'}"},
     {CPU_ONLY, CPU_AND_MEMORY},
     NULL,
     1,
     {82, 80}},
    {"requested resources at node capacity",
     CPU_ONLY,
     {"{'cpu':'6000m','memory':'10000'}", "{'cpu':'6000m','memory':'10000'}"},
     {CPU_ONLY, CPU_AND_MEMORY},
     NULL,
     1,
     {50, 75}},
    {"include scalar resource on a node for balanced resource allocation",
     "[{'memory':'0','nvidia.com/gpu':'1'}]",
     {"{'cpu':'3500m','memory':'40000','nvidia.com/gpu':'8'}",
      "{'cpu':'3500m','memory':'40000','nvidia.com/gpu':'8'}"},
     {CPU_AND_MEMORY_AND_GPU, CPU_AND_MEMORY},
     GPU_RES,
     1,
     {70, 65}},
    {"node without the scalar resource should skip the scalar resource",
     CPU_AND_MEMORY,
     {"{'cpu':'3500m','memory':'40000','nvidia.com/gpu':'8'}", "{'cpu':'3500m','memory':'40000'}"},
     {NULL, NULL},
     GPU_RES,
     1,
     {63, 63}},
    {"resources requested, pods scheduled with resources if PreScore not called",
     CPU_AND_MEMORY,
     {"{'cpu':'10000m','memory':'20000'}", "{'cpu':'10000m','memory':'20000'}"},
     {CPU_ONLY, CPU_AND_MEMORY},
     NULL,
     0,
     {82, 95}},
    {"a single resource has no deviation",
     CPU_AND_MEMORY,
     {"{'cpu':'10000m','memory':'20000'}", "{'cpu':'10000m'}"},
     {NULL, NULL},
     NULL,
     1,
     {97, 100}},
};

static void score_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const ba_case *c = &cases[i];
        tp_plugin *p = tp_plugin_new(&plugin_node_resources_balanced_allocation, c->args, NULL);
        fw_pod_info *pod = tp_pod_requests("pod", c->pod, NULL);
        fw_pod_info *existing[2] = {NULL, NULL};
        fw_node_info *nodes[2];
        fw_cycle_state *cs = fw_cycle_state_new();
        char name[32];

        print_message("case: %s\n", c->name);
        for (int k = 0; k < 2; k++) {
            snprintf(name, sizeof(name), "node%d", k + 1);
            nodes[k] = tp_node_simple(name, c->alloc[k], NULL, NULL);
            if (c->existing[k]) {
                snprintf(name, sizeof(name), "existing%d", k + 1);
                existing[k] = tp_pod_requests(name, c->existing[k], NULL);
                tp_node_add(nodes[k], existing[k]);
            }
        }
        if (c->pre_score)
            tp_assert_status(
                p->desc->pre_score(p->self, cs, pod, (const fw_node_info *const *)nodes, 2),
                FW_SUCCESS, NULL);
        for (int k = 0; k < 2; k++) {
            int64_t got = -1;
            tp_assert_status(p->desc->score(p->self, cs, pod, nodes[k], &got), FW_SUCCESS, NULL);
            assert_int_equal(got, c->want[k]);
            fw_node_info_free(nodes[k]);
            fw_pod_info_unref(existing[k]);
        }
        fw_cycle_state_free(cs);
        fw_pod_info_unref(pod);
        tp_plugin_free(p);
    }
}

static void args_default_and_validate(void **state)
{
    (void)state;
    const fw_plugin_desc *d = &plugin_node_resources_balanced_allocation;
    char err[1024], *s;

    s = tp_defaulted(d, NULL);
    assert_string_equal(s, tp_json("{'resources':[{'name':'cpu','weight':1},"
                                   "{'name':'memory','weight':1}]}"));
    free(s);
    s = tp_defaulted(d, "{'resources':[{'name':'cpu'},{'name':'nvidia.com/gpu','weight':0}]}");
    assert_string_equal(s, tp_json("{'resources':[{'name':'cpu','weight':1},"
                                   "{'name':'nvidia.com/gpu','weight':1}]}"));
    free(s);
    s = tp_defaulted(d, "{'resources':[]}");
    assert_string_equal(s, tp_json("{'resources':[{'name':'cpu','weight':1},"
                                   "{'name':'memory','weight':1}]}"));
    free(s);

    assert_int_equal(tp_default_args(d,
                                     "{'resources':[{'name':'cpu','weight':2},"
                                     "{'name':'cpu','weight':1}]}",
                                     err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "[resources[0].weight: Invalid value: 2: must be 1, "
                             "resources[1].name: Duplicate value: \"cpu\"]");
    assert_int_equal(
        tp_default_args(d, "{'resources':[{'name':'memory','weight':-1}]}", err, sizeof(err)),
        KUBE_ECONFIG);
    assert_string_equal(err, "resources[0].weight: Invalid value: -1: must be 1");
    assert_int_equal(tp_default_args(d, "{'resources':{}}", err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "resources: expected an array");
    assert_int_equal(tp_default_args(d, "{'shape':[]}", err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "unknown field \"shape\"");
}

static void score_errors(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_balanced_allocation, NULL, NULL);
    fw_pod_info *pod = tp_pod_requests("pod", CPU_AND_MEMORY, NULL);
    fw_node_info *ni = fw_node_info_new();
    fw_cycle_state *cs = fw_cycle_state_new();
    int64_t s;

    tp_assert_status(p->desc->score(p->self, cs, pod, ni, &s), FW_ERROR, "node not found");
    assert_null(p->desc->events_to_register);
    assert_null(p->desc->filter);
    fw_cycle_state_free(cs);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

int test_group_plugin_node_resources_balanced_allocation(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(score_table),
        cmocka_unit_test(args_default_and_validate),
        cmocka_unit_test(score_errors),
    };
    return cmocka_run_group_tests_name("plugin_node_resources_balanced_allocation", tests, NULL,
                                       NULL);
}
