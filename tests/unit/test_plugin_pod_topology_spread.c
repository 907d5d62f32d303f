/*
 * tests/unit/test_plugin_pod_topology_spread.c - PodTopologySpread, with
 * the cases of kube-scheduler v1.28's podtopologyspread filtering_test.go
 * and scoring_test.go (same pods, nodes and expected codes / scores), the
 * v1.28 inclusion policies, minDomains and matchLabelKeys, PreFilter
 * AddPod/RemovePod, args validation messages, and the default profile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "framework/framework.h"
#include "kube/errors.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_topology_util.h"

#define HOST "kubernetes.io/hostname"
#define EXISTS(k) "{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"Exists\"}]}"
#define TSC(skew, key, when, sel) \
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
    assert_int_equal(desc()->create(NULL, &e->h, &e->pl, err, sizeof(err)), KUBE_OK);
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
        {"ns1/p-a1", "node-a", "foo=", NULL, 0}, {"ns2/p-b1", "node-a", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0}, {"p-y1", "node-y", "foo=", NULL, 0},
    };
    static const tt_node_def no_zone_b[] = {
        {"node-a", "zone=zone1,node=node-a", NULL}, {"node-b", "zon=zone1,node=node-b", NULL},
        {"node-x", "zone=zone2,node=node-x", NULL}, {"node-y", "zone=zone2,node=node-y", NULL},
    };
    static const tt_pod_def one_each[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-b1", "node-b", "foo=", NULL, 0},
        {"p-x1", "node-x", "foo=", NULL, 0}, {"p-y1", "node-y", "foo=", NULL, 0},
    };
    static const tt_node_def two[] = {{"node-a", "node=node-a", NULL},
                                      {"node-b", "node=node-b", NULL}};
    static const tt_pod_def terminating[] = {
        {"p-a", "node-a", "foo=", NULL, 1}, {"p-b", "node-b", "foo=", NULL, 0},
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
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 SPREAD(HARD(1, "zone", EXISTS("foo"))), "SSSS");
    /* pods spread across zones as 1/2 due to absence of label 'zone' on node-b */
    check_filter(no_zone_b, 4, one_each, N(one_each), "foo=",
                 SPREAD(HARD(1, "zone", EXISTS("foo"))), "SRUU");
    /* pod cannot be scheduled as all nodes don't have label 'rack' */
    check_filter(zones4, 4, NULL, 0, "foo=", SPREAD(HARD(1, "rack", EXISTS("foo"))), "RRRR");
    /* pods spread across nodes as 2/1/0/3, only node-x fits */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "UUSU");
    /* ... maxSkew is 2, node-b and node-x fit */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 SPREAD(HARD(2, "node", EXISTS("foo"))), "USSU");
    /* ... but pod doesn't match itself */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "bar=",
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "USSU");
    /* incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                 "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"node\",\"operator\":"
                 "\"In\",\"values\":[\"node-a\",\"node-y\"]}]}]}}},"
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "SSSU");
    /* terminating Pods should be excluded */
    check_filter(two, 2, terminating, N(terminating), "foo=",
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "SU");
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
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 SPREAD(HARD(1, "zone", EXISTS("foo")) "," HARD(1, "node", EXISTS("foo"))),
                 "UUSU");
    /* two Constraints on zone and node, with different labelSelectors:
     * zone (foo) 2/2, node (bar) 0/0/0/2 - the zone allows all, node-y is
     * 2+1-0 over the node skew */
    check_filter(zones4, 4, mixed, N(mixed), "foo=,bar=",
                 SPREAD(HARD(1, "zone", EXISTS("foo")) "," HARD(1, "node", EXISTS("bar"))),
                 "SSSU");
    /* the incoming pod matches only the zone selector: zone1 1 (+1), zone2
     * 2: everything fits the zone; the node selector (bar) does not count
     * the pod itself */
    check_filter(zones4, 4, mixed, N(mixed), "foo=",
                 SPREAD(HARD(1, "zone", EXISTS("foo")) "," HARD(1, "node", EXISTS("bar"))),
                 "SSSU");
}

/* minDomains: fewer domains than minDomains makes the global minimum 0. */
static void filter_min_domains(void **state)
{
    static const tt_pod_def zone_2_1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-b1", "node-b", "foo=", NULL, 0},
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

#define NODE_AFFINITY_A_Y                                                                      \
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"      \
    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"node\",\"operator\":\"In\","    \
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
                 NODE_AFFINITY_A_Y SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo"))
                                              ",\"nodeAffinityPolicy\":\"Ignore\"}"),
                 "UUSU");
    /* nodeSelector honoured the same way as required node affinity */
    check_filter(zones4, 4, spread_2103, N(spread_2103), "foo=",
                 "\"nodeSelector\":{\"zone\":\"zone2\"}," SPREAD(HARD(1, "node", EXISTS("foo"))),
                 "SSSU");
    /* nodeTaintsPolicy Ignore (default): the tainted empty node-x counts */
    check_filter(tainted_x, 4, spread_2103, N(spread_2103), "foo=",
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "UUSU");
    /* nodeTaintsPolicy Honor: node-x does not count, minimum 1 */
    check_filter(tainted_x, 4, spread_2103, N(spread_2103), "foo=",
                 SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo"))
                            ",\"nodeTaintsPolicy\":\"Honor\"}"),
                 "USSU");
    /* Honor with a toleration: node-x counts again */
    check_filter(tainted_x, 4, spread_2103, N(spread_2103), "foo=",
                 "\"tolerations\":[{\"key\":\"foo\",\"operator\":\"Exists\"}],"
                 SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo"))
                            ",\"nodeTaintsPolicy\":\"Honor\"}"),
                 "UUSU");
}

/* matchLabelKeys adds the pod's own values to the selector. */
static void filter_match_label_keys(void **state)
{
    static const tt_pod_def versions[] = {
        {"p-a1", "node-a", "foo=,bar=a", NULL, 0}, {"p-a2", "node-a", "foo=,bar=b", NULL, 0},
        {"p-b1", "node-b", "foo=,bar=b", NULL, 0}, {"p-y1", "node-y", "foo=,bar=a", NULL, 0},
    };
    (void)state;
    /* only bar=a pods count: 1/0/0/1 */
    check_filter(zones4, 4, versions, N(versions), "foo=,bar=a",
                 SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo"))
                            ",\"matchLabelKeys\":[\"bar\"]}"),
                 "USSU");
    /* without matchLabelKeys: 2/1/0/1 */
    check_filter(zones4, 4, versions, N(versions), "foo=,bar=a",
                 SPREAD(HARD(1, "node", EXISTS("foo"))), "UUSU");
    /* a key the pod lacks leaves the selector as it is */
    check_filter(zones4, 4, versions, N(versions), "foo=,bar=a",
                 SPREAD(TSC(1, "node", "DoNotSchedule", EXISTS("foo"))
                            ",\"matchLabelKeys\":[\"baz\"]}"),
                 "UUSU");
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
    {"node-a", HOST "=node-a", NULL}, {"node-b", HOST "=node-b", NULL},
    {"node-c", HOST "=node-c", NULL}, {"node-d", HOST "=node-d", NULL},
};
static const char *const abcd[] = {"node-a", "node-b", "node-c", "node-d"};

static void score_one_constraint_on_node(void **state)
{
    static const tt_pod_def a2b1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0},
    };
    static const tt_pod_def a1b1[] = {
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-b1", "node-b", "foo=", NULL, 0},
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
        {"node-a", HOST "=node-a", NULL}, {"node-b", HOST "=node-b", NULL},
        {"node-x", HOST "=node-x", NULL}, {"node-y", HOST "=node-y", NULL},
    };
    static const tt_node_def b_no_key[] = {
        {"node-a", HOST "=node-a", NULL}, {"node-b", "n=node-b", NULL},
        {"node-x", HOST "=node-x", NULL}, {"node-y", HOST "=node-y", NULL},
    };
    static const tt_node_def zones_abxy[] = {
        {"node-a", "zone=zone1," HOST "=node-a", NULL}, {"node-b", "zone=zone1," HOST "=node-b", NULL},
        {"node-x", "zone=zone2," HOST "=node-x", NULL}, {"node-y", "zone=zone2," HOST "=node-y", NULL},
    };
    (void)state;
    /* one constraint on node, 3 out of 4 nodes are candidates (4/2/1/~3~) */
    check_score(hosts_abxy, 4, s4213, N(s4213), abx, 3, "foo=",
                SPREAD(SOFT(1, HOST, EXISTS("foo"))), "node-a=33 node-b=83 node-x=100");
    /* ... one node doesn't match topology key (4/?2?/1/~3~) */
    check_score(b_no_key, 4, s4213, N(s4213), abx, 3, "foo=", SPREAD(SOFT(1, HOST, EXISTS("foo"))),
                "node-a=16 node-b=0 node-x=100");
    /* one constraint on zone, 3 out of 4 nodes are candidates */
    check_score(zones_abxy, 4, s4213, N(s4213), abx, 3, "foo=",
                SPREAD(SOFT(1, "zone", EXISTS("foo"))), "node-a=75 node-b=75 node-x=100");
}

static const tt_node_def zones_hosts[] = {
    {"node-a", "zone=zone1," HOST "=node-a", NULL}, {"node-b", "zone=zone1," HOST "=node-b", NULL},
    {"node-x", "zone=zone2," HOST "=node-x", NULL}, {"node-y", "zone=zone2," HOST "=node-y", NULL},
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
        {"p-a1", "node-a", "foo=", NULL, 0}, {"p-b1", "node-b", "foo=,bar=", NULL, 0},
        {"p-y1", "node-y", "foo=", NULL, 0}, {"p-y2", "node-y", "bar=", NULL, 0},
    };
    static const tt_pod_def some_zero[] = {
        {"p-b1", "node-b", "bar=", NULL, 0}, {"p-x1", "node-x", "foo=", NULL, 0},
        {"p-y1", "node-y", "foo=,bar=", NULL, 0},
    };
    static const char *const ax[] = {"node-a", "node-x"};
    static const tt_node_def ax_first[] = {
        {"node-a", "zone=zone1," HOST "=node-a", NULL}, {"node-x", "zone=zone2," HOST "=node-x", NULL},
        {"node-b", "zone=zone1," HOST "=node-b", NULL}, {"node-y", "zone=zone2," HOST "=node-y", NULL},
    };
    (void)state;
    /* two Constraints on zone and node, 2 out of 4 nodes are candidates */
    check_score(ax_first, 4, s2124, N(s2124), ax, 2, "foo=",
                SPREAD(SOFT(1, "zone", EXISTS("foo")) "," SOFT(1, HOST, EXISTS("foo"))),
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
        {"node-a", "zone=zone1", NULL}, {"node-x", "zone=zone2", NULL},
        {"node-b", "zone=zone1", NULL}, {"node-y", "zone=zone2", NULL},
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
        {"ns1/p-a1", "node-a", "foo=", NULL, 0}, {"p-a2", "node-a", "foo=", NULL, 0},
        {"p-b1", "node-b", "foo=", NULL, 0}, {"p-b2", "node-b", "foo=", NULL, 0},
    };
    static const tt_pod_def terminating[] = {
        {"p-a", "node-a", "foo=", NULL, 1}, {"p-b", "node-b", "foo=", NULL, 0},
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
    check_score(hosts4, 2, other_ns, N(other_ns), abcd, 2, "foo=",
                SPREAD(SOFT(1, HOST, EXISTS("foo"))), "node-a=100 node-b=33");
    /* terminating Pods should be excluded */
    check_score(hosts4, 2, terminating, N(terminating), abcd, 2, "foo=",
                SPREAD(SOFT(1, HOST, EXISTS("foo"))), "node-a=100 node-b=0");
    /* nodeTaintsPolicy Ignore: node-y's pod counts for zone2 */
    check_score(tainted, 3, on_y, N(on_y), ax, 2, "foo=", SPREAD(SOFT(1, "zone", EXISTS("foo"))),
                "node-a=100 node-x=0");
    /* nodeTaintsPolicy Honor: it does not */
    check_score(tainted, 3, on_y, N(on_y), ax, 2, "foo=",
                SPREAD(TSC(1, "zone", "ScheduleAnyway", EXISTS("foo"))
                           ",\"nodeTaintsPolicy\":\"Honor\"}"),
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
    check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":["
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

    assert_int_equal(sched_config_default(NULL, &cfg, err, sizeof(err)), KUBE_OK);
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
        cmocka_unit_test(pre_filter_skip_and_messages),
        cmocka_unit_test(pre_filter_add_remove_pod),
        cmocka_unit_test(pre_filter_follows_node_changes),
        cmocka_unit_test(score_one_constraint_on_node),
        cmocka_unit_test(score_candidates_and_keys),
        cmocka_unit_test(score_two_constraints),
        cmocka_unit_test(score_same_key_shares_pairs),
        cmocka_unit_test(score_namespace_terminating_policies),
        cmocka_unit_test(pre_score_skip),
        cmocka_unit_test(args_defaults_and_validation),
        cmocka_unit_test(events_and_default_profile),
    };
    return cmocka_run_group_tests_name("plugin_pod_topology_spread", tests, NULL, NULL);
}
