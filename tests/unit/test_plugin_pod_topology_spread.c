/*
 * tests/unit/test_plugin_pod_topology_spread.c - PodTopologySpread, with
 * the cases of kube-scheduler v1.28's podtopologyspread filtering_test.go
 * and scoring_test.go (same pods, nodes and expected codes / scores), the
 * v1.28 inclusion policies, minDomains and matchLabelKeys, PreFilter
 * AddPod/RemovePod, the default constraints (helper.DefaultSelector over
 * Services and controllers, buildDefaultConstraints, requireAllTopologies
 * with System defaulting), args validation messages, and the default
 * profile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "feature_gates.h"
#include "feature_gates_testing.h"
#include "framework/framework.h"
#include "kube/codec/arena.h"
#include "kube/util/errors.h"
#include "kube/codec/jsonstream.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/machinery/store.h"
#include "kube/types/workload.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/podtopologyspread/pairs.h"
#include "unit/test_plugin_util.h"
#include "unit/test_plugin_topology_util.h"

#define HOST "kubernetes.io/hostname"
#define EXISTS(k) "{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"Exists\"}]}"
#define TSC(skew, key, when, sel)                                                      \
    "{\"maxSkew\":" #skew ",\"topologyKey\":\"" key "\",\"whenUnsatisfiable\":\"" when \
    "\",\"labelSelector\":" sel
#define HARD(skew, key, sel) TSC(skew, key, "DoNotSchedule", sel) "}"
#define SOFT(skew, key, sel) TSC(skew, key, "ScheduleAnyway", sel) "}"
#define SPREAD(...) "\"topologySpreadConstraints\":[" __VA_ARGS__ "]"

/* ------------------------------------------------------------------ */
/* Fixtures: nodes and pods decoded from small JSON                    */
/* ------------------------------------------------------------------ */

/* A plugin instance over a snapshot. */
typedef struct env {
    fw_snapshot *snap;
    fw_handle h;
    void *pl;
    fw_cycle_state *cs;
} env;

static const fw_plugin_desc *desc(void)
{
    return &plugin_pod_topology_spread;
}

static void env_init(env *e, const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np)
{
    char err[256] = "";
    memset(e, 0, sizeof(*e));
    e->snap = tt_make_snapshot(nodes, nn, pods, np);
    e->h.svc.snapshot = e->snap;
    assert_int_equal(desc()->create(NULL, &e->h, NULL, &e->pl, err, sizeof(err)), KUBE_OK);
    e->cs = fw_cycle_state_new();
    assert_non_null(e->cs);
}

static void env_free(env *e)
{
    fw_cycle_state_free(e->cs);
    desc()->destroy(e->pl);
    fw_snapshot_free(e->snap);
}

/* Filter on every node of the snapshot, one code letter per node. */
static void filter_codes(env *e, const fw_cycle_state *cs, const fw_pod_info *pod, char *out)
{
    size_t i;
    for (i = 0; i < e->snap->n_list; i++) {
        fw_status *st = desc()->filter(e->pl, cs, pod, e->snap->list[i]);
        out[i] = tt_code_char(st);
        fw_status_free(st);
    }
    out[i] = '\0';
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* PreFilter then Filter on each node; want: "SUR.." in node order. */
static void check_filter(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np,
                         const char *pod_labels, const char *pod_spec, const char *want)
{
    env e;
    char got[64];
    fw_pre_filter_result *res = NULL;
    fw_pod_info *pod = tt_incoming(pod_labels, pod_spec);

    env_init(&e, nodes, nn, pods, np);
    fw_status *st = desc()->pre_filter(e.pl, e.cs, pod, &res);
    assert_true(fw_status_is_success(st));
    assert_null(res);
    filter_codes(&e, e.cs, pod, got);
    assert_string_equal(got, want);
    fw_pod_info_unref(pod);
    env_free(&e);
}

/* ------------------------------------------------------------------ */
/* Filter: TestSingleConstraint / TestMultipleConstraints              */
/* ------------------------------------------------------------------ */

static const tt_node_def zones4[] = {
    {"node-a", "zone=zone1,node=node-a", NULL},
    {"node-b", "zone=zone1,node=node-b", NULL},
    {"node-x", "zone=zone2,node=node-x", NULL},
    {"node-y", "zone=zone2,node=node-y", NULL},
};

/* Matching pods spread over the nodes as 2/1/0/3. */
static const tt_pod_def spread_2103[] = {
    {"p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
    {"p-b1", "node-b", "foo=", NULL, 0}, {"p-y1", "node-y", "foo=", NULL, 0},
    {"p-y2", "node-y", "foo=", NULL, 0}, {"p-y3", "node-y", "foo=", NULL, 0},
};

static void filter_single_constraint(void **state)
{
    static const tt_pod_def other_ns[] = {
        {"ns1/p-a1", "node-a", "foo=", NULL, 0},
        {"ns2/p-b1", "node-a", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0},
        {"p-y1", "node-y", "foo=", NULL, 0},
    };
    static const tt_node_def no_zone_b[] = {
        {"node-a", "zone=zone1,node=node-a", NULL},
        {"node-b", "zon=zone1,node=node-b", NULL},
        {"node-x", "zone=zone2,node=node-x", NULL},
        {"node-y", "zone=zone2,node=node-y", NULL},
    };
    static const tt_pod_def one_each[] = {
        {"p-a1", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0},
        {"p-y1", "node-y", "foo=", NULL, 0},
    };
    static const tt_node_def two[] = {{"node-a", "node=node-a", NULL},
                                      {"node-b", "node=node-b", NULL}};
    static const tt_pod_def terminating[] = {
        {"p-a", "node-a", "foo=", NULL, 1},
        {"p-b", "node-b", "foo=", NULL, 0},
    };
    (void)state;
    /* no existing pods */
    check_filter(zones4, 4, NULL, 0, "foo=", SPREAD(HARD(1, "zone", EXISTS("foo"))), "SSSS");
    /* no existing pods, incoming pod doesn't match itself */
    check_filter(zones4, 4, NULL, 0, "foo=", SPREAD(HARD(1, "zone", EXISTS("bar"))), "SSSS");
    /* existing pods in a different namespace do not count */
    check_filter(zones4, 4, other_ns, N(other_ns), "foo=", SPREAD(HARD(1, "zone", EXISTS("foo"))),
                 "SSUU");
    /* pods spread across zones as 3/3, all nodes fit */
    check_filter(zones4, 4, spread_2103, N(spread_2103),
                 "foo=", SPREAD(HARD(1, "zone", EXISTS("foo"))), "SSSS");
    /* pods spread across zones as 1/2 due to absence of label 'zone' on node-b */
    check_filter(no_zone_b, 4, one_each, N(one_each),
                 "foo=", SPREAD(HARD(1, "zone", EXISTS("foo"))), "SRUU");
    /* pod cannot be scheduled as all nodes don't have label 'rack' */
    check_filter(zones4, 4, NULL, 0, "foo=", SPREAD(HARD(1, "rack", EXISTS("foo"))), "RRRR");
    /* pods spread across nodes as 2/1/0/3, only node-x fits */
    check_filter(zones4, 4, spread_2103, N(spread_2103),
                 "foo=", SPREAD(HARD(1, "node", EXISTS("foo"))), "UUSU");
    /* ... maxSkew is 2, node-b and node-x fit */
    check_filter(zones4, 4, spread_2103, N(spread_2103),
                 "foo=", SPREAD(HARD(2, "node", EXISTS("foo"))), "USSU");
    /* ... but pod doesn't match itself */
    check_filter(zones4, 4, spread_2103, N(spread_2103),
                 "bar=", SPREAD(HARD(1, "node", EXISTS("foo"))), "USSU");
    /* incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits */
    check_filter(
        zones4, 4, spread_2103, N(spread_2103), "foo=",
        "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
        "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"node\",\"operator\":"
        "\"In\",\"values\":[\"node-a\",\"node-y\"]}]}]}}}," SPREAD(HARD(1, "node", EXISTS("foo"))),
        "SSSU");
    /* terminating Pods should be excluded */
    check_filter(two, 2, terminating, N(terminating),
                 "foo=", SPREAD(HARD(1, "node", EXISTS("foo"))), "SU");
}

static void filter_multiple_constraints(void **state)
{
    /* matching pods for zone 3/3, for node 2/1/0/3: only node-x */
    static const tt_pod_def mixed[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-b1", "node-b", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0}, {"p-x2", "node-x", "foo=", NULL, 0},
        {"p-y1", "node-y", "bar=", NULL, 0}, {"p-y2", "node-y", "bar=", NULL, 0},
    };
    (void)state;
    /* two Constraints on zone and node, spreads = [3/3, 2/1/0/3] */
    check_filter(zones4, 4, spread_2103, N(spread_2103),
                 "foo=", SPREAD(HARD(1, "zone", EXISTS("foo")) "," HARD(1, "node", EXISTS("foo"))),
                 "UUSU");
    /* two Constraints on zone and node, with different labelSelectors:
     * zone (foo) 2/2, node (bar) 0/0/0/2 - the zone allows all, node-y is
     * 2+1-0 over the node skew */
    check_filter(zones4, 4, mixed, N(mixed), "foo=,bar=",
                 SPREAD(HARD(1, "zone", EXISTS("foo")) "," HARD(1, "node", EXISTS("bar"))), "SSSU");
    /* the incoming pod matches only the zone selector: zone1 1 (+1), zone2
     * 2: everything fits the zone; the node selector (bar) does not count
     * the pod itself */
    check_filter(zones4, 4, mixed, N(mixed),
                 "foo=", SPREAD(HARD(1, "zone", EXISTS("foo")) "," HARD(1, "node", EXISTS("bar"))),
                 "SSSU");
}

/* minDomains: fewer domains than minDomains makes the global minimum 0. */
static void filter_min_domains(void **state)
{
    static const tt_pod_def zone_2_1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0},
    };
    (void)state;
    /* 2/1 over two zones: zone2 fits with the real minimum 1 */
    check_filter(zones4, 4, zone_2_1, N(zone_2_1), "foo=",
                 SPREAD(TSC(1, "zone", "DoNotSchedule", EXISTS("foo")) ",\"minDomains\":2}"),
                 "UUSS");
    /* minDomains 3 > 2 domains: minimum 0, zone2 would reach skew 2 */
    check_filter(zones4, 4, zone_2_1, N(zone_2_1), "foo=",
                 SPREAD(TSC(1, "zone", "DoNotSchedule", EXISTS("foo")) ",\"minDomains\":3}"),
                 "UUUU");
    /* maxSkew 2 with minDomains 3: zone2 1+1-0 fits, zone1 2+1-0 does not */
    check_filter(zones4, 4, zone_2_1, N(zone_2_1), "foo=",
                 SPREAD(TSC(2, "zone", "DoNotSchedule", EXISTS("foo")) ",\"minDomains\":3}"),
                 "UUSS");
}

#define NODE_AFFINITY_A_Y                                                                   \
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"   \
    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"node\",\"operator\":\"In\"," \
    "\"values\":[\"node-a\",\"node-y\"]}]}]}}},"

/* nodeAffinityPolicy / nodeTaintsPolicy (NodeInclusionPolicy cases). */
static void filter_inclusion_policies(void **state)
{
    static const tt_node_def tainted_x[] = {
        {"node-a", "zone=zone1,node=node-a", NULL},
        {"node-b", "zone=zone1,node=node-b", NULL},
        {"node-x", "zone=zone2,node=node-x",
         "\"taints\":[{\"key\":\"foo\",\"value\":\"bar\",\"effect\":\"NoSchedule\"}]"},
        {"node-y", "zone=zone2,node=node-y", NULL},
    };
    (void)state;
    /* nodeAffinityPolicy Ignore: every node counts, 2/1/0/3 -> only node-x */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 NODE_AFFINITY_A_Y SPREAD(TSC(1, "node", "DoNotSchedule",
                                              EXISTS("foo")) ",\"nodeAffinityPolicy\":\"Ignore\"}"),
                 "UUSU");
    /* nodeSelector honoured the same way as required node affinity */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 "\"nodeSelector\":{\"zone\":\"zone2\"}," SPREAD(HARD(1, "node", EXISTS("foo"))),
                 "SSSU");
    /* nodeTaintsPolicy Ignore (default): the tainted empty node-x counts */
    check_filter(tainted_x, 4, spread_2103, N(spread_2103),
                 "foo=", SPREAD(HARD(1, "node", EXISTS("foo"))), "UUSU");
    /* nodeTaintsPolicy Honor: node-x does not count, minimum 1 */
    check_filter(
        tainted_x, 4, spread_2103, N(spread_2103), "foo=",
        SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo")) ",\"nodeTaintsPolicy\":\"Honor\"}"),
        "USSU");
    /* Honor with a toleration: node-x counts again */
    check_filter(tainted_x, 4, spread_2103, N(spread_2103), "foo=",
                 "\"tolerations\":[{\"key\":\"foo\",\"operator\":\"Exists\"}]," SPREAD(TSC(
                     1, "node", "DoNotSchedule", EXISTS("foo")) ",\"nodeTaintsPolicy\":\"Honor\"}"),
                 "UUSU");
}

/* matchLabelKeys adds the pod's own values to the selector. */
static void filter_match_label_keys(void **state)
{
    static const tt_pod_def versions[] = {
        {"p-a1", "node-a", "foo=,bar=a", NULL, 0},
        {"p-a2", "node-a", "foo=,bar=b", NULL, 0},
        {"p-b1", "node-b", "foo=,bar=b", NULL, 0},
        {"p-y1", "node-y", "foo=,bar=a", NULL, 0},
    };
    (void)state;
    /* only bar=a pods count: 1/0/0/1 */
    check_filter(
        zones4, 4, versions, N(versions), "foo=,bar=a",
        SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo")) ",\"matchLabelKeys\":[\"bar\"]}"),
        "USSU");
    /* without matchLabelKeys: 2/1/0/1 */
    check_filter(zones4, 4, versions, N(versions), "foo=,bar=a",
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "UUSU");
    /* a key the pod lacks leaves the selector as it is */
    check_filter(
        zones4, 4, versions, N(versions), "foo=,bar=a",
        SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo")) ",\"matchLabelKeys\":[\"baz\"]}"),
        "UUSU");
}

/* With their feature gates off, minDomains, the inclusion policies and
 * matchLabelKeys are ignored (the cases above, answered as without them). */
static void filter_without_the_feature_gates(void **state)
{
    static const tt_pod_def zone_2_1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0},
    };
    static const tt_pod_def versions[] = {
        {"p-a1", "node-a", "foo=,bar=a", NULL, 0},
        {"p-a2", "node-a", "foo=,bar=b", NULL, 0},
        {"p-b1", "node-b", "foo=,bar=b", NULL, 0},
        {"p-y1", "node-y", "foo=,bar=a", NULL, 0},
    };
    char err[256];
    (void)state;

    assert_int_equal(sched_features_apply("MinDomainsInPodTopologySpread=false,"
                                          "NodeInclusionPolicyInPodTopologySpread=false,"
                                          "MatchLabelKeysInPodTopologySpread=false",
                                          err, sizeof(err)),
                     KUBE_OK);
    check_filter(zones4, 4, zone_2_1, N(zone_2_1), "foo=",
                 SPREAD(TSC(1, "zone", "DoNotSchedule", EXISTS("foo")) ",\"minDomains\":3}"),
                 "UUSS");
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 NODE_AFFINITY_A_Y SPREAD(TSC(1, "node", "DoNotSchedule",
                                              EXISTS("foo")) ",\"nodeAffinityPolicy\":\"Ignore\"}"),
                 "SSSU"); /* Honor: only node-a (2) and node-y (3) count */
    check_filter(
        zones4, 4, versions, N(versions), "foo=,bar=a",
        SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo")) ",\"matchLabelKeys\":[\"bar\"]}"),
        "UUSU");
    sched_features_reset();
}

static void pre_filter_skip_and_messages(void **state)
{
    env e;
    fw_pre_filter_result *res = NULL;
    fw_pod_info *none = tt_incoming("foo=", NULL);
    fw_pod_info *soft = tt_incoming("foo=", SPREAD(SOFT(1, "zone", EXISTS("foo"))));
    fw_pod_info *hard = tt_incoming("foo=", SPREAD(HARD(1, "rack", EXISTS("foo"))));
    fw_pod_info *skew = tt_incoming("foo=", SPREAD(HARD(1, "node", EXISTS("foo"))));
    char msg[256];
    (void)state;

    env_init(&e, zones4, 4, spread_2103, N(spread_2103));
    fw_status *st = desc()->pre_filter(e.pl, e.cs, none, &res);
    assert_true(fw_status_is_skip(st)); /* no constraints, no default selector */
    fw_status_free(st);
    st = desc()->pre_filter(e.pl, e.cs, soft, &res);
    assert_true(fw_status_is_skip(st)); /* only ScheduleAnyway constraints */
    fw_status_free(st);
    /* Filter without PreFilter state is an error */
    st = desc()->filter(e.pl, e.cs, hard, e.snap->list[0]);
    assert_int_equal(fw_status_code(st), FW_ERROR);
    fw_status_message(st, msg, sizeof(msg));
    assert_string_equal(msg, "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
    fw_status_free(st);

    assert_null(desc()->pre_filter(e.pl, e.cs, hard, &res));
    st = desc()->filter(e.pl, e.cs, hard, e.snap->list[0]);
    fw_status_message(st, msg, sizeof(msg));
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_string_equal(msg, "node(s) didn't match pod topology spread constraints "
                             "(missing required label)");
    fw_status_free(st);
    assert_null(desc()->pre_filter(e.pl, e.cs, skew, &res));
    st = desc()->filter(e.pl, e.cs, skew, e.snap->list[0]);
    fw_status_message(st, msg, sizeof(msg));
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(msg, "node(s) didn't match pod topology spread constraints");
    fw_status_free(st);
    fw_pod_info_unref(none);
    fw_pod_info_unref(soft);
    fw_pod_info_unref(hard);
    fw_pod_info_unref(skew);
    env_free(&e);
}

/* AddPod / RemovePod on a cloned state (preemption's "what if"). */
static void pre_filter_add_remove_pod(void **state)
{
    env e;
    char got[8];
    fw_pre_filter_result *res = NULL;
    fw_pod_info *pod = tt_incoming("foo=", SPREAD(HARD(1, "node", EXISTS("foo"))));
    tt_pod_def add_x = {"p-x9", "node-x", "foo=", NULL, 0};
    tt_pod_def other_ns = {"ns1/p-x9", "node-x", "foo=", NULL, 0};
    fw_pod_info *px = tt_make_pod(&add_x), *pns = tt_make_pod(&other_ns);
    (void)state;

    env_init(&e, zones4, 4, spread_2103, N(spread_2103));
    assert_null(desc()->pre_filter(e.pl, e.cs, pod, &res));
    const fw_node_info *b = e.snap->list[1], *x = e.snap->list[2];

    /* a matching pod added to node-x: 2/1/1/3, minimum 1 */
    fw_cycle_state *c1 = fw_cycle_state_clone(e.cs);
    assert_null(desc()->pre_filter_add_pod(e.pl, c1, pod, px, x));
    filter_codes(&e, c1, pod, got);
    assert_string_equal(got, "USSU");
    /* and removed again */
    assert_null(desc()->pre_filter_remove_pod(e.pl, c1, pod, px, x));
    filter_codes(&e, c1, pod, got);
    assert_string_equal(got, "UUSU");
    fw_cycle_state_free(c1);

    /* p-b1 removed from node-b: 2/0/0/3 */
    fw_cycle_state *c2 = fw_cycle_state_clone(e.cs);
    fw_pod_info *pb1 = e.snap->list[1]->pods[0];
    assert_null(desc()->pre_filter_remove_pod(e.pl, c2, pod, pb1, b));
    filter_codes(&e, c2, pod, got);
    assert_string_equal(got, "USSU");
    /* a pod of another namespace changes nothing */
    assert_null(desc()->pre_filter_add_pod(e.pl, c2, pod, pns, x));
    filter_codes(&e, c2, pod, got);
    assert_string_equal(got, "USSU");
    fw_cycle_state_free(c2);

    /* the original state is untouched */
    filter_codes(&e, e.cs, pod, got);
    assert_string_equal(got, "UUSU");
    fw_pod_info_unref(px);
    fw_pod_info_unref(pns);
    fw_pod_info_unref(pod);
    env_free(&e);
}

/* Counts are cached per node across cycles: a node whose pods changed is
 * recounted, the others are not. */
static void pre_filter_follows_node_changes(void **state)
{
    env e;
    char got[8];
    fw_pre_filter_result *res = NULL;
    fw_pod_info *pod = tt_incoming("foo=", SPREAD(HARD(1, "node", EXISTS("foo"))));
    fw_pod_info *other = tt_incoming("foo=", SPREAD(HARD(1, "node", EXISTS("bar"))));
    tt_pod_def add_x = {"p-x1", "node-x", "foo=", NULL, 0};
    fw_pod_info *px = tt_make_pod(&add_x);
    (void)state;

    env_init(&e, zones4, 4, spread_2103, N(spread_2103));
    assert_null(desc()->pre_filter(e.pl, e.cs, pod, &res));
    filter_codes(&e, e.cs, pod, got);
    assert_string_equal(got, "UUSU");

    /* a matching pod lands on node-x: 2/1/1/3 */
    fw_node_info *x = fw_node_info_clone(e.snap->list[2]);
    assert_int_equal(fw_node_info_add_pod(x, px), KUBE_OK);
    assert_int_equal(fw_snapshot_upsert(e.snap, x, NULL, NULL, NULL), KUBE_OK);
    fw_node_info_free(x);
    /* another selector in between does not disturb the first one's counts */
    fw_cycle_state *cs = fw_cycle_state_new();
    assert_null(desc()->pre_filter(e.pl, cs, other, &res));
    fw_cycle_state_free(cs);
    cs = fw_cycle_state_new();
    assert_null(desc()->pre_filter(e.pl, cs, pod, &res));
    filter_codes(&e, cs, pod, got);
    assert_string_equal(got, "USSU");
    fw_cycle_state_free(cs);

    /* node-y loses its pods: 2/1/1/0 */
    fw_node_info *y = fw_node_info_clone(e.snap->list[3]);
    for (int i = 1; i <= 3; i++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "uid-default-p-y%d", i);
        assert_int_equal(fw_node_info_remove_pod(y, uid), KUBE_OK);
    }
    assert_int_equal(fw_snapshot_upsert(e.snap, y, NULL, NULL, NULL), KUBE_OK);
    fw_node_info_free(y);
    cs = fw_cycle_state_new();
    assert_null(desc()->pre_filter(e.pl, cs, pod, &res));
    filter_codes(&e, cs, pod, got);
    assert_string_equal(got, "UUUS");
    fw_cycle_state_free(cs);
    fw_pod_info_unref(px);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(other);
    env_free(&e);
}

/* ------------------------------------------------------------------ */
/* Scoring: TestPodTopologySpreadScore                                 */
/* ------------------------------------------------------------------ */

/* PreScore over the feasible nodes (the first n_feasible names of the
 * snapshot order given by `feasible`), Score, NormalizeScore; compares
 * "name=score" pairs joined by spaces. */
static void check_score(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np,
                        const char *const *feasible, size_t nf, const char *pod_labels,
                        const char *pod_spec, const char *want)
{
    env e;
    char got[256] = "";
    size_t used = 0;
    const fw_node_info *fn[16];
    fw_node_score scores[16];
    fw_pod_info *pod = tt_incoming(pod_labels, pod_spec);

    env_init(&e, nodes, nn, pods, np);
    for (size_t i = 0; i < nf; i++)
        assert_non_null(fn[i] = fw_snapshot_get(e.snap, feasible[i]));
    fw_status *st = desc()->pre_score(e.pl, e.cs, pod, fn, nf);
    assert_true(fw_status_is_success(st));
    for (size_t i = 0; i < nf; i++) {
        scores[i].name = fn[i]->name;
        assert_null(desc()->score(e.pl, e.cs, pod, fn[i], &scores[i].score));
    }
    assert_null(desc()->normalize_score(e.pl, e.cs, pod, scores, nf));
    for (size_t i = 0; i < nf; i++)
        used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s=%lld", i ? " " : "",
                                 scores[i].name, (long long)scores[i].score);
    assert_string_equal(got, want);
    fw_pod_info_unref(pod);
    env_free(&e);
}

static const tt_node_def hosts4[] = {
    {"node-a", HOST "=node-a", NULL},
    {"node-b", HOST "=node-b", NULL},
    {"node-c", HOST "=node-c", NULL},
    {"node-d", HOST "=node-d", NULL},
};
static const char *const abcd[] = {"node-a", "node-b", "node-c", "node-d"};

static void score_one_constraint_on_node(void **state)
{
    static const tt_pod_def a2b1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0},
        {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
    };
    static const tt_pod_def a1b1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
    };
    static const tt_pod_def s2103[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0}, {"p-d1", "node-d", "foo=", NULL, 0},
        {"p-d2", "node-d", "foo=", NULL, 0}, {"p-d3", "node-d", "foo=", NULL, 0},
    };
    static const tt_pod_def s4321[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-a3", "node-a", "foo=", NULL, 0}, {"p-a4", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0}, {"p-b2", "node-b", "foo=", NULL, 0},
        {"p-b3", "node-b", "foo=", NULL, 0}, {"p-c1", "node-c", "foo=", NULL, 0},
        {"p-c2", "node-c", "foo=", NULL, 0}, {"p-d1", "node-d", "foo=", NULL, 0},
    };
    (void)state;
    check_score(hosts4, 2, NULL, 0, abcd, 2, "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))),
                "node-a=100 node-b=100");
    /* only one node is candidate */
    check_score(hosts4, 2, a2b1, N(a2b1), abcd, 1, "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))),
                "node-a=100");
    /* all nodes have the same number of matching pods */
    check_score(hosts4, 2, a1b1, N(a1b1), abcd, 2, "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))),
                "node-a=100 node-b=100");
    /* all 4 nodes are candidates, 2/1/0/3 */
    check_score(hosts4, 4, s2103, N(s2103), abcd, 4, "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))),
                "node-a=20 node-b=60 node-c=100 node-d=0");
    /* null selector */
    check_score(hosts4, 4, s2103, N(s2103), abcd, 4, "foo=", SPREAD(SOFT(1, HOST, "null")),
                "node-a=100 node-b=100 node-c=100 node-d=100");
    /* maxSkew=2 */
    check_score(hosts4, 4, s2103, N(s2103), abcd, 4, "foo=", SPREAD(SOFT(2, HOST, EXISTS("foo"))),
                "node-a=33 node-b=66 node-c=100 node-d=16");
    /* maxSkew=3, 4/3/2/1 */
    check_score(hosts4, 4, s4321, N(s4321), abcd, 4, "foo=", SPREAD(SOFT(3, HOST, EXISTS("foo"))),
                "node-a=44 node-b=66 node-c=77 node-d=100");
}

static const tt_pod_def s4213[] = {
    {"p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
    {"p-a3", "node-a", "foo=", NULL, 0}, {"p-a4", "node-a", "foo=", NULL, 0},
    {"p-b1", "node-b", "foo=", NULL, 0}, {"p-b2", "node-b", "foo=", NULL, 0},
    {"p-x1", "node-x", "foo=", NULL, 0}, {"p-y1", "node-y", "foo=", NULL, 0},
    {"p-y2", "node-y", "foo=", NULL, 0}, {"p-y3", "node-y", "foo=", NULL, 0},
};
static const char *const abx[] = {"node-a", "node-b", "node-x"};

static void score_candidates_and_keys(void **state)
{
    static const tt_node_def hosts_abxy[] = {
        {"node-a", HOST "=node-a", NULL},
        {"node-b", HOST "=node-b", NULL},
        {"node-x", HOST "=node-x", NULL},
        {"node-y", HOST "=node-y", NULL},
    };
    static const tt_node_def b_no_key[] = {
        {"node-a", HOST "=node-a", NULL},
        {"node-b", "n=node-b", NULL},
        {"node-x", HOST "=node-x", NULL},
        {"node-y", HOST "=node-y", NULL},
    };
    static const tt_node_def zones_abxy[] = {
        {"node-a", "zone=zone1," HOST "=node-a", NULL},
        {"node-b", "zone=zone1," HOST "=node-b", NULL},
        {"node-x", "zone=zone2," HOST "=node-x", NULL},
        {"node-y", "zone=zone2," HOST "=node-y", NULL},
    };
    (void)state;
    /* one constraint on node, 3 out of 4 nodes are candidates (4/2/1/~3~) */
    check_score(hosts_abxy, 4, s4213, N(s4213), abx, 3,
                "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))), "node-a=33 node-b=83 node-x=100");
    /* ... one node doesn't match topology key (4/?2?/1/~3~) */
    check_score(b_no_key, 4, s4213, N(s4213), abx, 3, "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))),
                "node-a=16 node-b=0 node-x=100");
    /* one constraint on zone, 3 out of 4 nodes are candidates */
    check_score(zones_abxy, 4, s4213, N(s4213), abx, 3,
                "foo=", SPREAD(SOFT(1, "zone", EXISTS("foo"))), "node-a=75 node-b=75 node-x=100");
}

static const tt_node_def zones_hosts[] = {
    {"node-a", "zone=zone1," HOST "=node-a", NULL},
    {"node-b", "zone=zone1," HOST "=node-b", NULL},
    {"node-x", "zone=zone2," HOST "=node-x", NULL},
    {"node-y", "zone=zone2," HOST "=node-y", NULL},
};
static const char *const abxy[] = {"node-a", "node-b", "node-x", "node-y"};

static void score_two_constraints(void **state)
{
    static const tt_pod_def s2124[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0}, {"p-x1", "node-x", "foo=", NULL, 0},
        {"p-x2", "node-x", "foo=", NULL, 0}, {"p-y1", "node-y", "foo=", NULL, 0},
        {"p-y2", "node-y", "foo=", NULL, 0}, {"p-y3", "node-y", "foo=", NULL, 0},
        {"p-y4", "node-y", "foo=", NULL, 0},
    };
    static const tt_pod_def diff_sel[] = {
        {"p-a1", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=,bar=", NULL, 0},
        {"p-y1", "node-y", "foo=", NULL, 0},
        {"p-y2", "node-y", "bar=", NULL, 0},
    };
    static const tt_pod_def some_zero[] = {
        {"p-b1", "node-b", "bar=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0},
        {"p-y1", "node-y", "foo=,bar=", NULL, 0},
    };
    static const char *const ax[] = {"node-a", "node-x"};
    static const tt_node_def ax_first[] = {
        {"node-a", "zone=zone1," HOST "=node-a", NULL},
        {"node-x", "zone=zone2," HOST "=node-x", NULL},
        {"node-b", "zone=zone1," HOST "=node-b", NULL},
        {"node-y", "zone=zone2," HOST "=node-y", NULL},
    };
    (void)state;
    /* two Constraints on zone and node, 2 out of 4 nodes are candidates */
    check_score(ax_first, 4, s2124, N(s2124), ax, 2,
                "foo=", SPREAD(SOFT(1, "zone", EXISTS("foo")) "," SOFT(1, HOST, EXISTS("foo"))),
                "node-a=100 node-x=63");
    /* with different labelSelectors */
    check_score(zones_hosts, 4, diff_sel, N(diff_sel), abxy, 4, "foo=,bar=",
                SPREAD(SOFT(1, "zone", EXISTS("foo")) "," SOFT(1, HOST, EXISTS("bar"))),
                "node-a=60 node-b=20 node-x=100 node-y=60");
    /* ... some nodes have 0 pods */
    check_score(zones_hosts, 4, some_zero, N(some_zero), abxy, 4, "foo=,bar=",
                SPREAD(SOFT(1, "zone", EXISTS("foo")) "," SOFT(1, HOST, EXISTS("bar"))),
                "node-a=100 node-b=60 node-x=40 node-y=0");
    /* ... 3 out of 4 nodes are candidates */
    check_score(zones_hosts, 4, diff_sel, N(diff_sel), abx, 3, "foo=,bar=",
                SPREAD(SOFT(1, "zone", EXISTS("foo")) "," SOFT(1, HOST, EXISTS("bar"))),
                "node-a=50 node-b=25 node-x=100");
}

/* v1.28 keys the counts by topology pair: two constraints on the same key
 * add up into the same domains, and the second one's normalizing weight
 * sees no new domain (log(2)). zone1 5 (3 foo + 2 bar), zone2 4 (3 + 1):
 * node-a round(5*log4 + 5*log2) = 10, node-x round(4*log4 + 4*log2) = 8. */
static void score_same_key_shares_pairs(void **state)
{
    static const tt_node_def zones[] = {
        {"node-a", "zone=zone1", NULL},
        {"node-x", "zone=zone2", NULL},
        {"node-b", "zone=zone1", NULL},
        {"node-y", "zone=zone2", NULL},
    };
    static const tt_pod_def pods[] = {
        {"p-a1", "node-a", "foo=,bar=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=,bar=", NULL, 0}, {"p-y1", "node-y", "foo=", NULL, 0},
        {"p-y2", "node-y", "foo=,bar=", NULL, 0}, {"p-y3", "node-y", "foo=", NULL, 0},
    };
    static const char *const ax[] = {"node-a", "node-x"};
    (void)state;
    check_score(zones, 4, pods, N(pods), ax, 2, "foo=,bar=",
                SPREAD(SOFT(1, "zone", EXISTS("foo")) "," SOFT(1, "zone", EXISTS("bar"))),
                "node-a=80 node-x=100");
}

static void score_namespace_terminating_policies(void **state)
{
    static const tt_pod_def other_ns[] = {
        {"ns1/p-a1", "node-a", "foo=", NULL, 0},
        {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
        {"p-b2", "node-b", "foo=", NULL, 0},
    };
    static const tt_pod_def terminating[] = {
        {"p-a", "node-a", "foo=", NULL, 1},
        {"p-b", "node-b", "foo=", NULL, 0},
    };
    static const tt_node_def tainted[] = {
        {"node-a", "zone=zone1," HOST "=node-a", NULL},
        {"node-x", "zone=zone2," HOST "=node-x", NULL},
        {"node-y", "zone=zone2," HOST "=node-y",
         "\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]"},
    };
    static const tt_pod_def on_y[] = {{"p-y1", "node-y", "foo=", NULL, 0}};
    static const char *const ax[] = {"node-a", "node-x"};
    (void)state;
    /* existing pods in a different namespace do not count */
    check_score(hosts4, 2, other_ns, N(other_ns), abcd, 2,
                "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))), "node-a=100 node-b=33");
    /* terminating Pods should be excluded */
    check_score(hosts4, 2, terminating, N(terminating), abcd, 2,
                "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))), "node-a=100 node-b=0");
    /* nodeTaintsPolicy Ignore: node-y's pod counts for zone2 */
    check_score(tainted, 3, on_y, N(on_y), ax, 2, "foo=", SPREAD(SOFT(1, "zone", EXISTS("foo"))),
                "node-a=100 node-x=0");
    /* nodeTaintsPolicy Honor: it does not */
    check_score(
        tainted, 3, on_y, N(on_y), ax, 2, "foo=",
        SPREAD(TSC(1, "zone", "ScheduleAnyway", EXISTS("foo")) ",\"nodeTaintsPolicy\":\"Honor\"}"),
        "node-a=100 node-x=100");
}

static void pre_score_skip(void **state)
{
    env e;
    fw_pod_info *none = tt_incoming("foo=", NULL);
    fw_pod_info *hard = tt_incoming("foo=", SPREAD(HARD(1, "zone", EXISTS("foo"))));
    const fw_node_info *n0;
    (void)state;

    env_init(&e, zones4, 4, NULL, 0);
    n0 = e.snap->list[0];
    fw_status *st = desc()->pre_score(e.pl, e.cs, none, &n0, 1);
    assert_true(fw_status_is_skip(st));
    fw_status_free(st);
    st = desc()->pre_score(e.pl, e.cs, hard, &n0, 1);
    assert_true(fw_status_is_skip(st));
    fw_status_free(st);
    st = desc()->pre_score(e.pl, e.cs, hard, &n0, 0);
    assert_true(fw_status_is_skip(st));
    fw_status_free(st);
    fw_pod_info_unref(none);
    fw_pod_info_unref(hard);
    env_free(&e);
}

/* ------------------------------------------------------------------ */
/* Default constraints: DefaultSelector (helper/spread_test.go's        */
/* GetPodServices cases plus the controller kinds) and                  */
/* buildDefaultConstraints (scoring_test.go's TestPreScoreStateEmptyNodes */
/* and TestPreScoreSkip default-constraint cases)                       */
/* ------------------------------------------------------------------ */

/* The four listers over plain stores. */
typedef struct wl_env {
    kube_store *stores[KUBE_WORKLOAD_KINDS];
    kube_workload_listers l;
} wl_env;

static void wl_init(wl_env *w)
{
    memset(w, 0, sizeof(*w));
    for (int k = 0; k < KUBE_WORKLOAD_KINDS; k++) {
        assert_int_equal(kube_store_new(&w->stores[k]), KUBE_OK);
        w->l.store[k] = w->stores[k];
    }
}

static void wl_free(wl_env *w)
{
    for (int k = 0; k < KUBE_WORKLOAD_KINDS; k++)
        kube_store_free(w->stores[k]);
}

/* Adds an object of kind k: "ns/name" and the members of spec (JSON). */
static void wl_add(wl_env *w, kube_workload_kind k, const char *ns, const char *name,
                   const char *spec)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
             "\"uid\":\"uid-%s\"},\"spec\":{%s}}",
             name, ns, name, spec);
    kube_object *obj = tt_decode(&kube_workload_codecs[k], json);
    assert_int_equal(kube_store_apply(w->stores[k], KUBE_WATCH_ADDED, obj, NULL), KUBE_OK);
    kube_object_unref(obj);
}

/* Pod "p" of namespace ns with labels (JSON object), ownerReferences
 * (JSON array, may be NULL) and spec members (may be NULL). */
static fw_pod_info *owned_pod(const char *ns, const char *labels, const char *owners,
                              const char *spec)
{
    char json[2048];
    fw_pod_info *pi = NULL;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"%s\","
             "\"uid\":\"uid-p\",\"labels\":%s,\"ownerReferences\":%s},\"spec\":{\"containers\":"
             "[{\"name\":\"c\"}]%s%s}}",
             ns, labels, owners ? owners : "[]", spec ? "," : "", spec ? spec : "");
    kube_object *obj = tt_decode(&kube_pod_codec, json);
    assert_int_equal(fw_pod_info_new((kube_pod *)obj, &pi), KUBE_OK);
    kube_object_unref(obj);
    return pi;
}

#define OWNER(api, kind, name, ctl)                                                           \
    "[{\"apiVersion\":\"" api "\",\"kind\":\"" kind "\",\"name\":\"" name "\",\"uid\":\"u\"," \
    "\"controller\":" ctl "}]"

static const char *const op_text[] = {" in ", " notin ", " exists", " !exists", ">", "<", "?"};

/* The selector as "key in (v1 v2),key exists,..." into out. */
static const char *sel_text(const kube_label_selector *s, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->n_reqs; i++) {
        const kube_requirement *r = &s->reqs[i];
        used +=
            (size_t)snprintf(out + used, n - used, "%s%s%s", i ? "," : "", r->key, op_text[r->op]);
        for (size_t v = 0; v < r->n_values; v++)
            used += (size_t)snprintf(out + used, n - used, "%s%s%s", v ? " " : "(", r->values[v],
                                     v + 1 == r->n_values ? ")" : "");
    }
    return out;
}

/* plugin_default_selector of pod over w, as sel_text; frees the pod. */
static void check_selector(wl_env *w, fw_pod_info *pod, const char *want)
{
    kube_arena a;
    const kube_label_selector *sel = NULL;
    char got[512];

    kube_arena_init(&a, NULL, 0);
    assert_int_equal(plugin_default_selector(pod->pod, &w->l, &a, &sel), KUBE_OK);
    assert_non_null(sel);
    assert_true(sel->valid);
    assert_string_equal(sel_text(sel, got, sizeof(got)), want);
    kube_arena_release(&a);
    fw_pod_info_unref(pod);
}

/* TestGetPodServices: services app=test-0..2; pods app=test-0..4. */
static void default_selector_services(void **state)
{
    wl_env w;
    char name[32], spec[128], labels[128];
    (void)state;

    wl_init(&w);
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "service-%d", i);
        snprintf(spec, sizeof(spec), "\"selector\":{\"app\":\"test-%d\"}", i);
        wl_add(&w, KUBE_WORKLOAD_SERVICE, "test", name, spec);
    }
    for (int i = 0; i < 5; i++) {
        char want[64] = "";
        snprintf(labels, sizeof(labels), "{\"app\":\"test-%d\",\"label\":\"label-%d\"}", i, i);
        if (i < 3)
            snprintf(want, sizeof(want), "app in (test-%d)", i);
        check_selector(&w, owned_pod("test", labels, NULL, NULL), want);
    }
    /* another namespace's services do not count */
    check_selector(&w, owned_pod("default", "{\"app\":\"test-0\"}", NULL, NULL), "");
    wl_free(&w);
}

/* Selectors merged as a label set (later values win), nil skipped, {}
 * selects but adds nothing; sorted by key. */
static void default_selector_service_merge(void **state)
{
    wl_env w;
    (void)state;

    wl_init(&w);
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "ns", "nil", "\"type\":\"ExternalName\"");
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "ns", "empty", "\"selector\":{}");
    check_selector(&w, owned_pod("ns", "{\"foo\":\"bar\",\"baz\":\"sup\"}", NULL, NULL), "");
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "ns", "s1", "\"selector\":{\"foo\":\"bar\"}");
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "ns", "s2", "\"selector\":{\"foo\":\"bar\",\"baz\":\"sup\"}");
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "ns", "s3", "\"selector\":{\"foo\":\"other\"}");
    check_selector(&w, owned_pod("ns", "{\"foo\":\"bar\",\"baz\":\"sup\"}", NULL, NULL),
                   "baz in (sup),foo in (bar)");
    wl_free(&w);
}

/* The controller owner: RC merged into the set; RS/SS requirements added;
 * non-controller, other group versions and missing objects ignored. */
static void default_selector_controllers(void **state)
{
    const char *labels = "{\"foo\":\"bar\",\"baz\":\"sup\",\"tier\":\"a\"}";
    wl_env w;
    (void)state;

    wl_init(&w);
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "ns", "s", "\"selector\":{\"foo\":\"bar\"}");
    wl_add(&w, KUBE_WORKLOAD_RC, "ns", "rc", "\"selector\":{\"baz\":\"sup\",\"foo\":\"bar\"}");
    wl_add(
        &w, KUBE_WORKLOAD_RS, "ns", "rs",
        "\"selector\":{\"matchLabels\":{\"baz\":\"sup\"},"
        "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}");
    wl_add(&w, KUBE_WORKLOAD_SS, "ns", "ss",
           "\"selector\":{\"matchExpressions\":[{\"key\":"
           "\"foo\",\"operator\":\"Exists\"}]}");
    wl_add(&w, KUBE_WORKLOAD_RS, "ns", "nil", "\"replicas\":1");
    wl_add(&w, KUBE_WORKLOAD_RS, "ns", "bad",
           "\"selector\":{\"matchExpressions\":[{\"key\":"
           "\"foo\",\"operator\":\"Bogus\"}]}");
    check_selector(
        &w, owned_pod("ns", labels, OWNER("v1", "ReplicationController", "rc", "true"), NULL),
        "baz in (sup),foo in (bar)");
    check_selector(&w, owned_pod("ns", labels, OWNER("apps/v1", "ReplicaSet", "rs", "true"), NULL),
                   "baz in (sup),foo in (bar),tier in (a b)");
    check_selector(&w, owned_pod("ns", labels, OWNER("apps/v1", "StatefulSet", "ss", "true"), NULL),
                   "foo in (bar),foo exists");
    check_selector(&w, owned_pod("ns", labels, OWNER("apps/v1", "ReplicaSet", "rs", "false"), NULL),
                   "foo in (bar)");
    check_selector(
        &w, owned_pod("ns", labels, OWNER("extensions/v1beta1", "ReplicaSet", "rs", "true"), NULL),
        "foo in (bar)");
    check_selector(&w,
                   owned_pod("ns", labels, OWNER("apps/v1", "ReplicaSet", "gone", "true"), NULL),
                   "foo in (bar)");
    check_selector(&w, owned_pod("ns", labels, OWNER("apps/v1", "ReplicaSet", "nil", "true"), NULL),
                   "foo in (bar)");
    check_selector(&w, owned_pod("ns", labels, OWNER("apps/v1", "ReplicaSet", "bad", "true"), NULL),
                   "foo in (bar)");
    check_selector(&w, owned_pod("ns", labels, OWNER("apps/v1", "StatefulSet", "rs", "true"), NULL),
                   "foo in (bar)");
    check_selector(
        &w, owned_pod("other", labels, OWNER("v1", "ReplicationController", "rc", "true"), NULL),
        "");
    wl_free(&w);
}

/* A plugin instance with args (JSON, NULL: System) reading w. */
static void env_init_defaults(env *e, const tt_node_def *nodes, size_t nn, const tt_pod_def *pods,
                              size_t np, const char *args_json, const wl_env *w)
{
    char err[256] = "";
    cJSON *args = args_json ? cJSON_Parse(args_json) : NULL;

    memset(e, 0, sizeof(*e));
    e->snap = tt_make_snapshot(nodes, nn, pods, np);
    e->h.svc.snapshot = e->snap;
    assert_int_equal(plugin_pod_topology_spread_new(args, &e->h, &w->l, &e->pl, err, sizeof(err)),
                     KUBE_OK);
    cJSON_Delete(args);
    assert_non_null(e->cs = fw_cycle_state_new());
}

/* PreScore over all nodes (asserting want_code), then Score and
 * NormalizeScore when it succeeded, as "name=score ..." into out. */
static void score_all(env *e, const fw_pod_info *pod, int want_code, char *out, size_t n)
{
    fw_node_score scores[8];
    size_t used = 0, nn = e->snap->n_list;
    fw_status *st =
        desc()->pre_score(e->pl, e->cs, pod, (const fw_node_info *const *)e->snap->list, nn);

    assert_int_equal(fw_status_code(st), want_code);
    fw_status_free(st);
    out[0] = '\0';
    if (want_code != FW_SUCCESS)
        return;
    for (size_t i = 0; i < nn; i++) {
        scores[i].name = e->snap->list[i]->name;
        assert_null(desc()->score(e->pl, e->cs, pod, e->snap->list[i], &scores[i].score));
    }
    assert_null(desc()->normalize_score(e->pl, e->cs, pod, scores, nn));
    for (size_t i = 0; i < nn; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s=%lld", i ? " " : "", scores[i].name,
                                 (long long)scores[i].score);
}

#define ZONE "topology.kubernetes.io/zone"

/* "system default constraints and a replicaset": hostname maxSkew 3 and
 * zone maxSkew 5; nodes without a zone are not ignored (a "" zone). One
 * matching pod on node-a: hostname weight log(4+2), zone log(2+2);
 * a: 1*1.79+2 + 1*1.39+4 = 9, b: 2 + 5.39 = 7, c, d: 2 (no zone label);
 * normalized 100*(9+2-s)/9. */
static void system_defaults_replicaset(void **state)
{
    static const tt_node_def nodes[] = {
        {"node-a", HOST "=node-a," ZONE "=mars", NULL},
        {"node-b", HOST "=node-b," ZONE "=mars", NULL},
        {"node-c", HOST "=node-c", NULL},
        {"node-d", HOST "=node-d", NULL},
    };
    static const tt_pod_def pods[] = {{"p-a1", "node-a", "foo=x", NULL, 0},
                                      {"p-a2", "node-a", "bar=x", NULL, 0}};
    const char *labels = "{\"foo\":\"tar\",\"baz\":\"sup\"}";
    fw_pod_info *pod =
        owned_pod("default", labels, OWNER("apps/v1", "ReplicaSet", "rs1", "true"), NULL);
    fw_pod_info *stray =
        owned_pod("default", labels, OWNER("apps/v1", "ReplicaSet", "rs2", "true"), NULL);
    fw_pre_filter_result *res = NULL;
    wl_env w;
    env e;
    char got[256];
    (void)state;

    wl_init(&w);
    wl_add(&w, KUBE_WORKLOAD_RS, "default", "rs1", "\"selector\":" EXISTS("foo"));
    env_init_defaults(&e, nodes, N(nodes), pods, N(pods), NULL, &w);
    score_all(&e, pod, FW_SUCCESS, got, sizeof(got));
    assert_string_equal(got, "node-a=22 node-b=44 node-c=100 node-d=100");
    /* ScheduleAnyway only: nothing to filter */
    tp_assert_status(desc()->pre_filter(e.pl, e.cs, pod, &res), FW_SKIP, NULL);
    /* no such ReplicaSet: an empty selector, no default constraint */
    score_all(&e, stray, FW_SKIP, got, sizeof(got));
    env_free(&e);
    fw_pod_info_unref(pod);
    fw_pod_info_unref(stray);
    wl_free(&w);
}

/* A Service selecting the pod is enough; with List defaulting the nodes
 * lacking a key are ignored again (requireAllTopologies). */
static void list_defaults_service(void **state)
{
    static const tt_node_def nodes[] = {
        {"node-a", HOST "=node-a,planet=mars", NULL},
        {"node-b", HOST "=node-b,planet=venus", NULL},
        {"node-c", HOST "=node-c", NULL},
    };
    static const tt_pod_def pods[] = {{"p-a1", "node-a", "app=web", NULL, 0}};
    fw_pod_info *pod = owned_pod("default", "{\"app\":\"web\"}", NULL, NULL);
    wl_env w;
    env e;
    char got[256];
    (void)state;

    wl_init(&w);
    wl_add(&w, KUBE_WORKLOAD_SERVICE, "default", "web", "\"selector\":{\"app\":\"web\"}");
    env_init_defaults(&e, nodes, N(nodes), pods, N(pods),
                      "{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,"
                      "\"topologyKey\":\"planet\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
                      &w);
    /* two planets, weight log(2+2): a: 1*1.39+0 = 1, b: 0; c ignored */
    score_all(&e, pod, FW_SUCCESS, got, sizeof(got));
    assert_string_equal(got, "node-a=0 node-b=100 node-c=0");
    env_free(&e);
    fw_pod_info_unref(pod);
    wl_free(&w);
}

/* "default constraints and a replicaset": the DoNotSchedule default
 * (rack) filters, the ScheduleAnyway ones (hostname, planet) score. */
static void list_defaults_filter(void **state)
{
    static const tt_node_def nodes[] = {
        {"node-a", "rack=rack1," HOST "=node-a,planet=mars", NULL},
        {"node-b", "rack=rack1," HOST "=node-b,planet=mars", NULL},
        {"node-c", "rack=rack2," HOST "=node-c,planet=mars", NULL},
        {"node-x", HOST "=node-x,planet=mars", NULL},
    };
    static const tt_pod_def pods[] = {{"p-a1", "node-a", "foo=1", NULL, 0},
                                      {"p-b1", "node-b", "foo=2", NULL, 0},
                                      {"p-b2", "node-b", "foo=3", NULL, 0}};
    fw_pod_info *pod = owned_pod("default", "{\"foo\":\"tar\",\"baz\":\"sup\"}",
                                 OWNER("apps/v1", "ReplicaSet", "rs1", "true"), NULL);
    fw_pre_filter_result *res = NULL;
    wl_env w;
    env e;
    char got[64];
    (void)state;

    wl_init(&w);
    wl_add(&w, KUBE_WORKLOAD_RS, "default", "rs1", "\"selector\":" EXISTS("foo"));
    env_init_defaults(&e, nodes, N(nodes), pods, N(pods),
                      "{\"defaultingType\":\"List\",\"defaultConstraints\":["
                      "{\"maxSkew\":1,\"topologyKey\":\"" HOST "\",\"whenUnsatisfiable\":"
                      "\"ScheduleAnyway\"},{\"maxSkew\":2,\"topologyKey\":\"rack\","
                      "\"whenUnsatisfiable\":\"DoNotSchedule\"},{\"maxSkew\":2,\"topologyKey\":"
                      "\"planet\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
                      &w);
    tp_assert_status(desc()->pre_filter(e.pl, e.cs, pod, &res), FW_SUCCESS, NULL);
    /* rack1 has 3, rack2 0: rack1 + 1 - 0 > 2; node-x lacks rack */
    filter_codes(&e, e.cs, pod, got);
    assert_string_equal(got, "UUSR");
    env_free(&e);
    fw_pod_info_unref(pod);
    wl_free(&w);
}

/* "default constraints and a replicaset, but pod has constraints": only
 * the pod's own apply (node-a lacks the default's galaxy key yet is
 * scored); a pod with only hard constraints gets no soft defaults. */
static void pod_constraints_win(void **state)
{
    static const tt_node_def nodes[] = {{"node-a", "planet=mars", NULL}};
    fw_pod_info *own =
        owned_pod("default", "{\"foo\":\"bar\",\"baz\":\"sup\"}",
                  OWNER("apps/v1", "ReplicaSet", "rs1", "true"),
                  SPREAD(HARD(1, "zone", EXISTS("bar")) "," SOFT(2, "planet", EXISTS("baz"))));
    fw_pod_info *hard =
        owned_pod("default", "{\"foo\":\"bar\"}", OWNER("apps/v1", "ReplicaSet", "rs1", "true"),
                  SPREAD(HARD(1, "planet", EXISTS("bar"))));
    wl_env w;
    env e;
    char got[64];
    (void)state;

    wl_init(&w);
    wl_add(&w, KUBE_WORKLOAD_RS, "default", "rs1", "\"selector\":" EXISTS("foo"));
    env_init_defaults(&e, nodes, N(nodes), NULL, 0,
                      "{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":2,"
                      "\"topologyKey\":\"galaxy\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
                      &w);
    score_all(&e, own, FW_SUCCESS, got, sizeof(got));
    assert_string_equal(got, "node-a=100");
    score_all(&e, hard, FW_SKIP, got, sizeof(got));
    env_free(&e);
    fw_pod_info_unref(own);
    fw_pod_info_unref(hard);
    wl_free(&w);
}

/* ------------------------------------------------------------------ */
/* Args, events, default profile                                       */
/* ------------------------------------------------------------------ */

static void check_args(const char *json, const char *want_err, const char *want_out)
{
    tt_check_args(desc(), json, want_err, want_out);
}

static void args_defaults_and_validation(void **state)
{
    (void)state;
    check_args(NULL, NULL, "{\"defaultingType\":\"System\"}");
    check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,"
               "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
               NULL,
               "{\"defaultConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
               "\"whenUnsatisfiable\":\"ScheduleAnyway\"}],\"defaultingType\":\"List\"}");
    check_args("{\"defaultingType\":\"List\"}", NULL, "{\"defaultingType\":\"List\"}");
    /* wrong constraints */
    check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":0,"
               "\"whenUnsatisfiable\":\"Unknown\"}]}",
               "[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
               "defaultConstraints[0].topologyKey: Required value: can not be empty, "
               "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Unknown\": "
               "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"]",
               NULL);
    /* repeated constraints */
    check_args(
        "{\"defaultingType\":\"List\",\"defaultConstraints\":["
        "{\"maxSkew\":1,\"topologyKey\":\"node\",\"whenUnsatisfiable\":\"ScheduleAnyway\"},"
        "{\"maxSkew\":2,\"topologyKey\":\"node\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
        "defaultConstraints[1]: Duplicate value: \"{node, ScheduleAnyway}\"", NULL);
    /* unknown whenUnsatisfiable and empty */
    check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,"
               "\"topologyKey\":\"node\"}]}",
               "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty", NULL);
    /* label selector present */
    check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,"
               "\"topologyKey\":\"key\",\"whenUnsatisfiable\":\"ScheduleAnyway\","
               "\"labelSelector\":{\"matchLabels\":{\"a\":\"b\"}}}]}",
               "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
               "selector, as they deduced for each pod",
               NULL);
    /* system defaulting with constraints */
    check_args("{\"defaultingType\":\"System\",\"defaultConstraints\":[{\"maxSkew\":1,"
               "\"topologyKey\":\"key\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
               "defaultingType: Invalid value: \"System\": when .defaultConstraints are not "
               "empty",
               NULL);
    check_args("{\"defaultingType\":\"Other\"}",
               "defaultingType: Unsupported value: \"Other\": supported values: \"System\", "
               "\"List\"",
               NULL);
    /* invalid topology key */
    check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,"
               "\"topologyKey\":\"bad key\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
               "defaultConstraints[0].topologyKey: Invalid value: \"bad key\": name part must "
               "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
               "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
               "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
               NULL);
    check_args("{\"defaultingtype\":\"List\"}", "unknown field \"defaultingtype\"", NULL);
}

static void events_and_default_profile(void **state)
{
    const fw_cluster_event_with_hint *ev = NULL;
    sched_config *cfg = NULL;
    char err[256] = "";
    int found = 0;
    (void)state;

    assert_int_equal(desc()->events_to_register(NULL, &ev), 2);
    assert_string_equal(ev[0].event.resource, FW_GVK_POD);
    assert_int_equal(ev[0].event.action, FW_ACT_ALL);
    assert_string_equal(ev[1].event.resource, FW_GVK_NODE);
    assert_int_equal(ev[1].event.action, FW_ACT_ADD | FW_ACT_DELETE | FW_ACT_UPDATE_NODE_LABEL);

    assert_int_equal(tp_config_load(NULL, NULL, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    const sched_plugin_set *mp = &cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT];
    for (size_t i = 0; i < mp->n_enabled; i++)
        if (strcmp(mp->enabled[i].name, "PodTopologySpread") == 0) {
            assert_int_equal(mp->enabled[i].weight, 2);
            found = 1;
        }
    assert_true(found);
    const cJSON *args = sched_profile_args(&cfg->profiles[0], "PodTopologySpread");
    assert_non_null(args);
    assert_string_equal(cJSON_GetObjectItem(args, "defaultingType")->valuestring, "System");
    sched_config_free(cfg);
}

int test_group_plugin_pod_topology_spread(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_single_constraint),
        cmocka_unit_test(filter_multiple_constraints),
        cmocka_unit_test(filter_min_domains),
        cmocka_unit_test(filter_inclusion_policies),
        cmocka_unit_test(filter_match_label_keys),
        cmocka_unit_test(filter_without_the_feature_gates),
        cmocka_unit_test(pre_filter_skip_and_messages),
        cmocka_unit_test(pre_filter_add_remove_pod),
        cmocka_unit_test(pre_filter_follows_node_changes),
        cmocka_unit_test(score_one_constraint_on_node),
        cmocka_unit_test(score_candidates_and_keys),
        cmocka_unit_test(score_two_constraints),
        cmocka_unit_test(score_same_key_shares_pairs),
        cmocka_unit_test(score_namespace_terminating_policies),
        cmocka_unit_test(pre_score_skip),
        cmocka_unit_test(default_selector_services),
        cmocka_unit_test(default_selector_service_merge),
        cmocka_unit_test(default_selector_controllers),
        cmocka_unit_test(system_defaults_replicaset),
        cmocka_unit_test(list_defaults_service),
        cmocka_unit_test(list_defaults_filter),
        cmocka_unit_test(pod_constraints_win),
        cmocka_unit_test(args_defaults_and_validation),
        cmocka_unit_test(events_and_default_profile),
    };
    return cmocka_run_group_tests_name("plugin_pod_topology_spread", tests, NULL, NULL);
}
