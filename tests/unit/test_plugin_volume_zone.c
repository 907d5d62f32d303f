/*
 * tests/unit/test_plugin_volume_zone.c - VolumeZone, with the cases of
 * kube-scheduler v1.28's volume_zone_test.go: TestSingleZone (beta and GA
 * zone/region labels matched or not, nodes without labels, a PV's beta
 * label matched by the node's GA label), TestMultiZone ("__"-separated
 * zone lists) and TestWithBinding (unbound claims of WaitForFirstConsumer
 * and Immediate classes, missing claims, classes and PVs).
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

#define ERR_ZONE "node(s) had no available volume zone"
#define BZ "failure-domain.beta.kubernetes.io/zone"
#define BR "failure-domain.beta.kubernetes.io/region"
#define GZ "topology.kubernetes.io/zone"
#define GR "topology.kubernetes.io/region"

static void put_pv(vt_world *w, const char *name, const char *labels)
{
    vt_putf(w, PLUGIN_VOL_PV, "{'metadata':{'name':'%s','labels':{%s}},'spec':{}}", name, labels);
}

static void put_bound_pvc(vt_world *w, const char *name, const char *pv)
{
    vt_putf(w, PLUGIN_VOL_PVC, "{'metadata':{'name':'%s'},'spec':{'volumeName':'%s'}}", name, pv);
}

static fw_pod_info *pod_claim(const char *claim)
{
    if (!claim)
        return tp_pod("{'metadata':{'name':'pod'},'spec':{}}");
    return tp_podf("{'metadata':{'name':'pod'},'spec':{'volumes':[{'name':'v',"
                   "'persistentVolumeClaim':{'claimName':'%s'}}]}}",
                   claim);
}

typedef struct zone_case {
    const char *name;
    const char *claim;       /* NULL: no volume */
    const char *node_labels; /* single-quoted members, "" none */
    fw_code want;
    const char *msg;
} zone_case;

static void run_cases(vt_world *w, const zone_case *cases, size_t n)
{
    tp_plugin *p = vt_plugin(&plugin_volume_zone, w, NULL, NULL);

    for (size_t i = 0; i < n; i++) {
        char labels[512];
        fw_pod_info *pod = pod_claim(cases[i].claim);
        snprintf(labels, sizeof(labels), "{%s}", cases[i].node_labels);
        fw_node_info *ni = tp_node_simple("host1", NULL, labels, NULL);
        print_message("case %s\n", cases[i].name);
        tp_assert_status(tp_filter(p, pod, ni, NULL), cases[i].want,
                         cases[i].msg                  ? cases[i].msg
                         : cases[i].want == FW_SUCCESS ? NULL
                                                       : ERR_ZONE);
        fw_node_info_free(ni);
        fw_pod_info_unref(pod);
    }
    tp_plugin_free(p);
}

static void single_zone_world(vt_world *w)
{
    put_pv(w, "Vol_1", "'" BZ "':'us-west1-a'");
    put_pv(w, "Vol_2", "'" BR "':'us-west1-b','uselessLabel':'none'");
    put_pv(w, "Vol_3", "'" BR "':'us-west1-c'");
    put_pv(w, "Vol_Stable_1", "'" GZ "':'us-west1-a'");
    put_pv(w, "Vol_Stable_2", "'" GR "':'us-west1-b','uselessLabel':'none'");
    put_pv(w, "Vol_Stable_3", "'" GZ "':'us-west1-a','" GR "':'us-west1-b'");
    put_bound_pvc(w, "PVC_1", "Vol_1");
    put_bound_pvc(w, "PVC_2", "Vol_2");
    put_bound_pvc(w, "PVC_3", "Vol_3");
    put_bound_pvc(w, "PVC_4", "Vol_not_exist");
    put_bound_pvc(w, "PVC_Stable_1", "Vol_Stable_1");
    put_bound_pvc(w, "PVC_Stable_2", "Vol_Stable_2");
    put_bound_pvc(w, "PVC_Stable_3", "Vol_Stable_3");
}

static void test_single_zone(void **state)
{
    vt_world *w = vt_world_new();
    const zone_case cases[] = {
        {"pod without volume", NULL, "'" BZ "':'us-west1-a'", FW_SUCCESS, NULL},
        {"node without labels", "PVC_Stable_1", "", FW_SUCCESS, NULL},
        {"beta zone label matched", "PVC_1", "'" BZ "':'us-west1-a','uselessLabel':'none'",
         FW_SUCCESS, NULL},
        {"beta region label matched", "PVC_2", "'" BR "':'us-west1-b','uselessLabel':'none'",
         FW_SUCCESS, NULL},
        {"beta region label doesn't match", "PVC_2", "'" BR "':'no_us-west1-b'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"beta zone label doesn't match", "PVC_1", "'" BZ "':'no_us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"zone label matched", "PVC_Stable_1", "'" GZ "':'us-west1-a','uselessLabel':'none'",
         FW_SUCCESS, NULL},
        {"region label matched", "PVC_Stable_2", "'" GR "':'us-west1-b','uselessLabel':'none'",
         FW_SUCCESS, NULL},
        {"region label doesn't match", "PVC_Stable_2", "'" GR "':'no_us-west1-b'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"zone label doesn't match", "PVC_Stable_1", "'" GZ "':'no_us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"pv with zone and region, node with only zone", "PVC_Stable_3", "'" GZ "':'us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"pv with zone, node with beta zone labels", "PVC_Stable_1", "'" BZ "':'us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"pv with beta label, node with ga label, matched", "PVC_1", "'" GZ "':'us-west1-a'",
         FW_SUCCESS, NULL},
        {"pv with beta label, node with ga label, don't match", "PVC_1", "'" GZ "':'us-west1-b'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"pv not found", "PVC_4", "'" GZ "':'us-west1-a'", FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "persistentvolume \"Vol_not_exist\" not found"},
    };

    single_zone_world(w);
    run_cases(w, cases, sizeof(cases) / sizeof(cases[0]));
    vt_world_free(w);
}

static void test_multi_zone(void **state)
{
    vt_world *w = vt_world_new();
    const zone_case cases[] = {
        {"node without labels", "PVC_Stable_1", "", FW_SUCCESS, NULL},
        {"beta zone list matched", "PVC_1", "'" BZ "':'us-west1-c','uselessLabel':'none'",
         FW_SUCCESS, NULL},
        {"beta zone list doesn't match", "PVC_1", "'" BZ "':'us-west1-a','uselessLabel':'none'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"zone list matched", "PVC_Stable_2", "'" GZ "':'us-west1-b','uselessLabel':'none'",
         FW_SUCCESS, NULL},
        {"zone list doesn't match", "PVC_Stable_2", "'" GZ "':'us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL},
        {"a label with an empty element is ignored", "PVC_Bad", "'" GZ "':'anything'", FW_SUCCESS,
         NULL},
    };

    put_pv(w, "Vol_2", "'" BZ "':'us-west1-b__us-west1-c'");
    put_pv(w, "Vol_Stable_1", "'" GZ "':'us-west1-a'");
    put_pv(w, "Vol_Stable_2", "'" GZ "':'us-west1-c__us-west1-b'");
    put_pv(w, "Vol_Bad", "'" GZ "':'us-west1-a____us-west1-b'");
    put_bound_pvc(w, "PVC_1", "Vol_2");
    put_bound_pvc(w, "PVC_Stable_1", "Vol_Stable_1");
    put_bound_pvc(w, "PVC_Stable_2", "Vol_Stable_2");
    put_bound_pvc(w, "PVC_Bad", "Vol_Bad");
    run_cases(w, cases, sizeof(cases) / sizeof(cases[0]));
    vt_world_free(w);
}

static void test_with_binding(void **state)
{
    vt_world *w = vt_world_new();
    const zone_case cases[] = {
        {"label zone failure domain matched", "PVC_1", "'" BZ "':'us-west1-a'", FW_SUCCESS, NULL},
        {"unbound volume empty storage class", "PVC_EmptySC", "'" BZ "':'us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolumeClaim had no pv name and storageClass name"},
        {"unbound volume no storage class", "PVC_NoSC", "'" BZ "':'us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "storageclass.storage.k8s.io \"Class_0\" not found"},
        {"unbound volume immediate binding mode", "PVC_ImmediateSC", "'" BZ "':'us-west1-a'",
         FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name"},
        {"unbound volume wait binding mode", "PVC_WaitSC", "'" BZ "':'us-west1-a'", FW_SUCCESS,
         NULL},
        {"missing claim", "PVC_missing", "'" BZ "':'us-west1-a'", FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "persistentvolumeclaim \"PVC_missing\" not found"},
    };

    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'Class_Immediate'},'provisioner':'p',"
           "'volumeBindingMode':'Immediate'}");
    vt_put(w, PLUGIN_VOL_SC,
           "{'metadata':{'name':'Class_Wait'},'provisioner':'p',"
           "'volumeBindingMode':'WaitForFirstConsumer'}");
    put_pv(w, "Vol_1", "'" BZ "':'us-west1-a'");
    put_bound_pvc(w, "PVC_1", "Vol_1");
    vt_put(w, PLUGIN_VOL_PVC, "{'metadata':{'name':'PVC_EmptySC'},'spec':{}}");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'PVC_NoSC'},'spec':{'storageClassName':"
           "'Class_0'}}");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'PVC_ImmediateSC'},'spec':{"
           "'storageClassName':'Class_Immediate'}}");
    vt_put(w, PLUGIN_VOL_PVC,
           "{'metadata':{'name':'PVC_WaitSC'},'spec':{'storageClassName':"
           "'Class_Wait'}}");
    run_cases(w, cases, sizeof(cases) / sizeof(cases[0]));
    vt_world_free(w);
}

/* Without PreFilter's state Filter computes the topologies itself. */
static void test_filter_without_prefilter(void **state)
{
    vt_world *w = vt_world_new();
    fw_pod_info *pod = pod_claim("PVC_1");
    fw_node_info *ni = tp_node_simple("host1", NULL, "{'" GZ "':'us-west1-b'}", NULL);
    tp_plugin *p;
    fw_cycle_state *cs = fw_cycle_state_new();

    single_zone_world(w);
    p = vt_plugin(&plugin_volume_zone, w, NULL, NULL);
    tp_assert_status(p->desc->filter(p->self, cs, pod, ni), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     ERR_ZONE);
    fw_cycle_state_free(cs);
    tp_plugin_free(p);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    vt_world_free(w);
}

int test_group_plugin_volume_zone(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_zone),
        cmocka_unit_test(test_multi_zone),
        cmocka_unit_test(test_with_binding),
        cmocka_unit_test(test_filter_without_prefilter),
    };
    return cmocka_run_group_tests_name("plugin_volume_zone", tests, NULL, NULL);
}
