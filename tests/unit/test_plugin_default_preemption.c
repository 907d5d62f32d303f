/*
 * tests/unit/test_plugin_default_preemption.c - DefaultPreemption, with the
 * cases of kube-scheduler v1.28's default_preemption_test.go
 * (TestCalculateNumCandidates, TestDryRunPreemption /
 * TestSelectNodesForPreemption with resources and PodDisruptionBudgets,
 * TestSelectBestCandidate, TestPodEligibleToPreemptOthers, TestPostFilter's
 * messages) and validation_pluginargs_test.go
 * (TestValidateDefaultPreemptionArgs). The dry runs run the default
 * profile's filters through a real framework.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "plugins/registry.h"
#include "framework/framework.h"
#include "framework/framework_testing.h"
#include "kube/util/errors.h"
#include "kube/codec/jsonstream.h"
#include "kube/types/pdb.h"
#include "kube/machinery/store.h"
#include "metrics.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "plugins/defaultpreemption/default_preemption_testing.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"
#include "kube/util/metrics_testing.h"
#include "framework/types_testing.h"

#define LOW 0
#define MID 100
#define HIGH 1000

/* ------------------------------------------------------------------ */
/* A cluster: nodes, pods, PDBs and the default profile's framework    */
/* ------------------------------------------------------------------ */

typedef struct cluster {
    fw_node_info *nodes[4];
    size_t n_nodes;
    fw_pod_info *pods[16];
    size_t n_pods;
    fw_snapshot *snap;
    sched_config *cfg;
    fw_framework *fw;
    kube_store *pdbs;
    kube_metrics *metrics;
    void *preemption;
} cluster;

/* A pod requesting cpu (cores) with priority, on node (NULL: pending),
 * created at second created, with labels (single-quoted members, "" none). */
static fw_pod_info *mkpod(const char *name, const char *cpu, int prio, const char *node,
                          int created, const char *labels)
{
    return tp_podf("{'metadata':{'name':'%s','creationTimestamp':'2023-01-01T00:00:%02dZ',"
                   "'labels':{%s}},'spec':{'priority':%d%s%s%s,'containers':[{'name':'c',"
                   "'resources':{'requests':{'cpu':'%s','memory':'100Mi'}}}]}}",
                   name, created, labels, prio, node ? ",'nodeName':'" : "", node ? node : "",
                   node ? "'" : "", cpu);
}

static void add_node(cluster *c, const char *name, const char *cpu)
{
    char alloc[128];
    snprintf(alloc, sizeof(alloc), "{'cpu':'%s','memory':'10Gi','pods':'110'}", cpu);
    c->nodes[c->n_nodes++] = tp_node_simple(name, alloc, "{}", NULL);
}

static fw_pod_info *add_pod(cluster *c, size_t node, const char *name, const char *cpu, int prio,
                            int created, const char *labels)
{
    fw_pod_info *pi = mkpod(name, cpu, prio, c->nodes[node]->name, created, labels);
    tp_node_add(c->nodes[node], pi);
    c->pods[c->n_pods++] = pi;
    return pi;
}

static void add_pdb(cluster *c, const char *name, const char *app, int allowed,
                    const char *disrupted)
{
    char json[1024];
    cJSON *j;
    kube_object *obj = NULL;

    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default'},'spec':{'selector':{'matchLabels':"
             "{'app':'%s'}}},'status':{'disruptionsAllowed':%d,'disruptedPods':{%s}}}",
             name, app, allowed, disrupted ? disrupted : "");
    j = cJSON_Parse(tp_json(json));
    assert_non_null(j);
    assert_int_equal(kube_pdb_codec.decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    assert_int_equal(kube_store_apply(c->pdbs, KUBE_WATCH_ADDED, obj, NULL), KUBE_OK);
    kube_object_unref(obj);
}

/* Builds the snapshot, the default profile's framework and a
 * DefaultPreemption instance with args (single-quoted, NULL: defaults). */
static void start(cluster *c, const char *args)
{
    fw_services svc;
    char err[512];
    cJSON *in = args ? cJSON_Parse(tp_json(args)) : NULL, *def = NULL;

    assert_int_equal(fw_snapshot_from_nodes(c->nodes, c->n_nodes, &c->snap), KUBE_OK);
    memset(&svc, 0, sizeof(svc));
    svc.snapshot = c->snap;
    assert_int_equal(kube_metrics_new(&c->metrics), KUBE_OK);
    svc.metrics_registry = c->metrics;
    assert_int_equal(tp_config_load(NULL, NULL, NULL, &c->cfg, err, sizeof(err)), KUBE_OK);
    assert_int_equal(fw_framework_new(&c->cfg->profiles[0], plugin_registry_in_tree(), &svc, &c->fw,
                                      err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(plugin_default_preemption.default_args(in, &def, err, sizeof(err)), KUBE_OK);
    assert_int_equal(plugin_default_preemption_new(def, fw_framework_handle(c->fw), c->pdbs,
                                                   &c->preemption, err, sizeof(err)),
                     KUBE_OK);
    plugin_default_preemption_fix_offset(c->preemption, 0);
    cJSON_Delete(in);
    cJSON_Delete(def);
}

static cluster *cluster_new(void)
{
    cluster *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    assert_int_equal(kube_store_new(&c->pdbs), KUBE_OK);
    return c;
}

static void cluster_free(cluster *c)
{
    plugin_default_preemption.destroy(c->preemption);
    fw_framework_free(c->fw);
    kube_metrics_free(c->metrics);
    sched_config_free(c->cfg);
    fw_snapshot_free(c->snap);
    for (size_t i = 0; i < c->n_nodes; i++)
        fw_node_info_free(c->nodes[i]);
    for (size_t i = 0; i < c->n_pods; i++)
        fw_pod_info_unref(c->pods[i]);
    kube_store_free(c->pdbs);
    free(c);
}

/* Schedules pod (it must fit nowhere): cs and d as PostFilter sees them. */
static void schedule(cluster *c, const fw_pod_info *pod, fw_cycle_state **cs, fw_diagnosis *d)
{
    fw_sched_state ss = {0};
    fw_schedule_result res;
    fw_status *st;

    *cs = fw_cycle_state_new();
    assert_non_null(*cs);
    st = fw_framework_schedule_pod(c->fw, *cs, pod, c->snap, &ss, d, &res);
    assert_true(fw_status_is_unschedulable(st));
    fw_status_free(st);
}

/* "node:victim,victim/violations;node:..." of the candidates. */
static void describe(const plugin_preemption_candidate *cand, size_t n, char *out, size_t len)
{
    size_t off = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        off += (size_t)snprintf(out + off, len - off, "%s%s:", i ? ";" : "", cand[i].node);
        for (size_t j = 0; j < cand[i].n_victims; j++)
            off += (size_t)snprintf(out + off, len - off, "%s%s", j ? "," : "",
                                    cand[i].victims[j]->name);
        off +=
            (size_t)snprintf(out + off, len - off, "/%lld", (long long)cand[i].num_pdb_violations);
    }
}

/* Finds the candidates of pod; checks them and the non-candidates' FitError. */
static void expect_candidates(cluster *c, const fw_pod_info *pod, const char *want,
                              const char *want_fit)
{
    fw_diagnosis d = FW_DIAGNOSIS_INIT, statuses = FW_DIAGNOSIS_INIT;
    plugin_preemption_candidate *cand = NULL;
    fw_cycle_state *cs;
    size_t n = 0;
    char got[1024];

    schedule(c, pod, &cs, &d);
    tp_assert_status(
        plugin_default_preemption_find_candidates(c->preemption, cs, pod, &d, &cand, &n, &statuses),
        FW_SUCCESS, NULL);
    describe(cand, n, got, sizeof(got));
    assert_string_equal(got, want);
    if (want_fit) {
        char *msg = fw_fit_error_message((int)statuses.n_nodes, &statuses);
        assert_string_equal(msg, want_fit);
        free(msg);
    }
    plugin_preemption_candidates_free(cand, n);
    fw_diagnosis_clear(&statuses);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
}

/* ------------------------------------------------------------------ */
/* Dry runs (TestSelectNodesForPreemption / TestDryRunPreemption)      */
/* ------------------------------------------------------------------ */

static void test_fits_on_both_nodes(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "5");
    add_node(c, "node2", "5");
    add_pod(c, 0, "p1", "3", MID, 1, "");
    add_pod(c, 1, "p2", "3", MID, 1, "");
    start(c, NULL);
    fw_pod_info *pod = mkpod("p", "3", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1/0;node2:p2/0", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

static void test_higher_priority_pods_running(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "5");
    add_node(c, "node2", "5");
    add_pod(c, 0, "p1", "3", HIGH, 1, "");
    add_pod(c, 1, "p2", "3", HIGH, 1, "");
    start(c, NULL);
    fw_pod_info *pod = mkpod("p", "3", MID, NULL, 9, "");
    expect_candidates(c, pod, "",
                      "0/2 nodes are available: 2 No preemption victims found for incoming pod.");
    fw_pod_info_unref(pod);
    cluster_free(c);
}

/* Removing every lower-priority pod is not enough: the filter's reason. */
static void test_does_not_fit_after_removal(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "5");
    add_pod(c, 0, "p1", "1", LOW, 1, "");
    add_pod(c, 0, "p2", "3", HIGH, 1, "");
    start(c, NULL);
    fw_pod_info *pod = mkpod("p", "4", MID, NULL, 9, "");
    expect_candidates(c, pod, "", "0/1 nodes are available: 1 Insufficient cpu.");
    fw_pod_info_unref(pod);
    cluster_free(c);
}

static void test_medium_preempted_low_stays(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "5");
    add_pod(c, 0, "p1.1", "1", LOW, 1, "");
    add_pod(c, 0, "p1.2", "3", MID, 1, "");
    start(c, NULL);
    fw_pod_info *pod = mkpod("p", "3", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1.2/0", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

static void test_mixed_priorities(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "6");
    add_pod(c, 0, "p1.1", "1", MID, 1, "");
    add_pod(c, 0, "p1.2", "1", LOW, 1, "");
    add_pod(c, 0, "p1.3", "3", MID, 1, "");
    add_pod(c, 0, "p1.4", "1", HIGH, 1, "");
    start(c, NULL);
    /* needs 4 of the 6; the most important are reprieved first: p1.1 stays,
     * p1.3 does not fit back, and then neither does the low p1.2 */
    fw_pod_info *pod = mkpod("p", "4", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1.3,p1.2/0", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

static void test_pdb_violation(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "4");
    add_pod(c, 0, "p1.1", "2", LOW, 1, "'app':'foo'");
    add_pod(c, 0, "p1.2", "2", LOW, 2, "'app':'foo'");
    add_pdb(c, "pdb", "foo", 1, NULL);
    start(c, NULL);
    /* p1.2 is the one over the budget: reprieved first, it is the first victim */
    fw_pod_info *pod = mkpod("p", "4", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1.2,p1.1/1", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

/* A pod in the PDB's disruptedPods was already counted by the API server. */
static void test_pdb_disrupted_pod(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "4");
    add_pod(c, 0, "p1.1", "2", LOW, 1, "'app':'foo'");
    add_pod(c, 0, "p1.2", "2", LOW, 2, "'app':'foo'");
    add_pdb(c, "pdb", "foo", 1, "'p1.2':'2023-01-01T00:00:00Z'");
    start(c, NULL);
    fw_pod_info *pod = mkpod("p", "4", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1.1,p1.2/0", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

/* The PDB-violating victims are reprieved first; a PDB protects only the
 * pods its selector matches. */
static void test_pdb_scope(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "4");
    add_pod(c, 0, "p1.1", "2", LOW, 1, "'app':'foo'");
    add_pod(c, 0, "p1.2", "2", LOW, 2, "'app':'bar'");
    add_pdb(c, "pdb", "foo", 0, NULL);
    start(c, NULL);
    /* needs 2: p1.1 would violate the PDB, so it is reprieved first and
     * p1.2 is the victim */
    fw_pod_info *pod = mkpod("p", "2", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1.2/0", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

/* Nodes that are UnschedulableAndUnresolvable are not tried. */
static void test_unresolvable_nodes_skipped(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "4");
    add_node(c, "node2", "4");
    add_pod(c, 0, "p1", "4", LOW, 1, "");
    add_pod(c, 1, "p2", "4", LOW, 1, "");
    start(c, NULL);
    fw_pod_info *pod = tp_podf("{'metadata':{'name':'p'},'spec':{'priority':%d,'nodeName':'',"
                               "'nodeSelector':{'no':'such'},'containers':[{'name':'c',"
                               "'resources':{'requests':{'cpu':'4'}}}]}}",
                               HIGH);
    expect_candidates(c, pod, "",
                      "0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
    fw_pod_info_unref(pod);
    cluster_free(c);
}

/* Enough candidates stop the dry runs; the offset picks where they start. */
static void test_offset_and_num_candidates(void **state)
{
    cluster *c = cluster_new();
    add_node(c, "node1", "5");
    add_node(c, "node2", "5");
    add_pod(c, 0, "p1", "3", MID, 1, "");
    add_pod(c, 1, "p2", "3", MID, 1, "");
    start(c, "{'minCandidateNodesPercentage':0,'minCandidateNodesAbsolute':1}");
    fw_pod_info *pod = mkpod("p", "3", HIGH, NULL, 9, "");
    expect_candidates(c, pod, "node1:p1/0", NULL);
    plugin_default_preemption_fix_offset(c->preemption, 1);
    expect_candidates(c, pod, "node2:p2/0", NULL);
    fw_pod_info_unref(pod);
    cluster_free(c);
}

static void test_calculate_num_candidates(void **state)
{
    static const struct {
        int32_t nodes, pct, abs_, want;
    } cases[] = {
        {0, 10, 100, 0},      {10, 10, 100, 10},     {1000, 10, 100, 100}, {1000, 20, 100, 200},
        {1000, 10, 500, 500}, {1000, 100, 10, 1000}, {50, 0, 20, 20},      {50, 50, 0, 25},
    };
    char args[128], err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        void *self = NULL;
        cJSON *j;
        fw_handle h;
        memset(&h, 0, sizeof(h));
        snprintf(args, sizeof(args),
                 "{\"minCandidateNodesPercentage\":%d,\"minCandidateNodesAbsolute\":%d}",
                 cases[i].pct, cases[i].abs_);
        j = cJSON_Parse(args);
        assert_int_equal(plugin_default_preemption_new(j, &h, NULL, &self, err, sizeof(err)),
                         KUBE_OK);
        assert_int_equal(plugin_default_preemption_num_candidates(self, cases[i].nodes),
                         cases[i].want);
        plugin_default_preemption.destroy(self);
        cJSON_Delete(j);
    }
}

/* ------------------------------------------------------------------ */
/* SelectCandidate (TestSelectBestCandidate)                           */
/* ------------------------------------------------------------------ */

/* A candidate from "prio@second,prio@second" victims. */
static plugin_preemption_candidate mkcand(const char *node, const char *victims, int pdb)
{
    plugin_preemption_candidate c = {strdup(node), calloc(8, sizeof(fw_pod_info *)), 0, pdb};
    char list[256], name[64];

    snprintf(list, sizeof(list), "%s", victims);
    for (char *sp = NULL, *v = strtok_r(list, ",", &sp); v; v = strtok_r(NULL, ",", &sp)) {
        int prio, at;
        assert_int_equal(sscanf(v, "%d@%d", &prio, &at), 2);
        snprintf(name, sizeof(name), "%s-v%zu", node, c.n_victims);
        c.victims[c.n_victims++] = mkpod(name, "1", prio, node, at, "");
    }
    return c;
}

static void expect_pick(const char *const *specs, size_t n, const int *pdbs, const char *want)
{
    plugin_preemption_candidate *c = calloc(n, sizeof(*c));
    long best;

    for (size_t i = 0; i < n; i++) {
        char node[32];
        snprintf(node, sizeof(node), "node%zu", i + 1);
        c[i] = mkcand(node, specs[i], pdbs ? pdbs[i] : 0);
    }
    best = plugin_default_preemption_select(c, n);
    assert_true(best >= 0);
    assert_string_equal(c[best].node, want);
    plugin_preemption_candidates_free(c, n);
}

static void test_select_best_candidate(void **state)
{
    /* fewest PDB violations first */
    const char *pdb[] = {"0@1", "0@1"};
    const int pdbs[] = {1, 0};
    expect_pick(pdb, 2, pdbs, "node2");
    /* node with min highest priority victim is picked */
    const char *highest[] = {"100@1,0@1", "1000@1", "200@1,10@1"};
    expect_pick(highest, 3, NULL, "node1");
    /* same highest priority: minimum sum of priorities */
    const char *sum[] = {"100@1,50@1", "100@1,10@1", "100@1,60@1"};
    expect_pick(sum, 3, NULL, "node2");
    /* same highest and sum: fewest victims */
    const char *count[] = {"100@1,0@1,0@1", "100@1,0@1", "100@1,0@1,0@1"};
    expect_pick(count, 3, NULL, "node2");
    /* sum of adjusted priorities: negative priorities still add up */
    const char *neg[] = {"-10@1,-10@1", "-10@1", "-10@1,-20@1"};
    expect_pick(neg, 3, NULL, "node2");
    /* same priority and count: the latest start time of the top victims */
    const char *start[] = {"100@1,0@1", "100@5,0@1", "100@3,0@1"};
    expect_pick(start, 3, NULL, "node2");
    /* earliest start among the highest-priority victims decides */
    const char *earliest[] = {"100@9,100@2", "100@4,100@3"};
    expect_pick(earliest, 2, NULL, "node2");
    /* full tie: the first */
    const char *tie[] = {"100@1", "100@1"};
    expect_pick(tie, 2, NULL, "node1");
    assert_int_equal(plugin_default_preemption_select(NULL, 0), -1);
}

/* ------------------------------------------------------------------ */
/* PostFilter                                                          */
/* ------------------------------------------------------------------ */

static fw_status *post_filter(cluster *c, const fw_pod_info *pod, fw_post_filter_result *res)
{
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    fw_cycle_state *cs;
    fw_status *st;

    schedule(c, pod, &cs, &d);
    res->mode = FW_NOMINATING_NOOP;
    res->node[0] = '\0';
    st = plugin_default_preemption.post_filter(c->preemption, cs, pod, &d, res);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
    return st;
}

static void test_post_filter(void **state)
{
    cluster *c = cluster_new();
    fw_post_filter_result res;

    add_node(c, "node1", "4");
    add_node(c, "node2", "4");
    add_pod(c, 0, "p1", "4", LOW, 1, "");
    add_pod(c, 1, "p2", "4", HIGH, 1, "");
    start(c, NULL);

    /* preemptionPolicy Never */
    fw_pod_info *never = tp_podf("{'metadata':{'name':'never'},'spec':{'priority':%d,"
                                 "'preemptionPolicy':'Never','containers':[{'name':'c',"
                                 "'resources':{'requests':{'cpu':'4'}}}]}}",
                                 HIGH);
    tp_assert_status(post_filter(c, never, &res), FW_UNSCHEDULABLE,
                     "preemption: not eligible due to preemptionPolicy=Never.");
    assert_int_equal(res.mode, FW_NOMINATING_NOOP);

    /* no victims anywhere: the dry runs' FitError, nomination cleared */
    fw_pod_info *low = mkpod("low", "4", LOW, NULL, 9, "");
    tp_assert_status(post_filter(c, low, &res), FW_UNSCHEDULABLE,
                     "preemption: 0/2 nodes are available: 2 No preemption victims found for "
                     "incoming pod.");
    assert_int_equal(res.mode, FW_NOMINATING_OVERRIDE);
    assert_string_equal(res.node, "");

    /* a candidate, but deleting victims needs the API */
    fw_pod_info *mid = mkpod("mid", "4", MID, NULL, 9, "");
    tp_assert_status(post_filter(c, mid, &res), FW_ERROR,
                     "preemption: no API client to preempt pods with");
    assert_int_equal(res.mode, FW_NOMINATING_NOOP);

    /* every PostFilter counts as an attempt */
    assert_true(
        kube_metric_value(kube_metrics_find(c->metrics, "scheduler_preemption_attempts_total"),
                          NULL) == 3);
    fw_pod_info_unref(never);
    fw_pod_info_unref(low);
    fw_pod_info_unref(mid);
    cluster_free(c);
}

/* PodEligibleToPreemptOthers with a nominated node. */
static void test_eligible_with_nominated_node(void **state)
{
    cluster *c = cluster_new();
    fw_post_filter_result res;

    add_node(c, "node1", "4");
    fw_pod_info *terminating = tp_podf(
        "{'metadata':{'name':'t','deletionTimestamp':'2023-01-01T00:00:00Z'},'spec':{"
        "'priority':%d,'nodeName':'node1','containers':[{'name':'c','resources':{'requests':"
        "{'cpu':'4'}}}]}}",
        LOW);
    tp_node_add(c->nodes[0], terminating);
    c->pods[c->n_pods++] = terminating;
    start(c, NULL);
    fw_pod_info *pod = tp_podf("{'metadata':{'name':'p'},'spec':{'priority':%d,'containers':"
                               "[{'name':'c','resources':{'requests':{'cpu':'4'}}}]},'status':"
                               "{'nominatedNodeName':'node1'}}",
                               HIGH);
    tp_assert_status(post_filter(c, pod, &res), FW_UNSCHEDULABLE,
                     "preemption: not eligible due to a terminating pod on the nominated node.");
    fw_pod_info_unref(pod);
    /* the terminating pod has a higher priority: eligible again */
    pod = tp_podf("{'metadata':{'name':'p'},'spec':{'priority':-5,'containers':[{'name':'c',"
                  "'resources':{'requests':{'cpu':'4'}}}]},'status':{'nominatedNodeName':"
                  "'node1'}}");
    tp_assert_status(post_filter(c, pod, &res), FW_UNSCHEDULABLE,
                     "preemption: 0/1 nodes are available: 1 No preemption victims found for "
                     "incoming pod.");
    fw_pod_info_unref(pod);
    cluster_free(c);
}

/* ------------------------------------------------------------------ */
/* Args (TestValidateDefaultPreemptionArgs)                            */
/* ------------------------------------------------------------------ */

static void test_args(void **state)
{
    char err[1024];
    char *s = tp_defaulted(&plugin_default_preemption, NULL);

    assert_string_equal(s,
                        "{\"minCandidateNodesPercentage\":10,\"minCandidateNodesAbsolute\":100}");
    free(s);
    s = tp_defaulted(&plugin_default_preemption, "{'minCandidateNodesPercentage':50}");
    assert_string_equal(s,
                        "{\"minCandidateNodesPercentage\":50,\"minCandidateNodesAbsolute\":100}");
    free(s);
    assert_int_equal(tp_default_args(&plugin_default_preemption,
                                     "{'minCandidateNodesPercentage':-1,"
                                     "'minCandidateNodesAbsolute':-1}",
                                     err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "[minCandidateNodesPercentage: Invalid value: -1: not in valid range "
                             "[0, 100], minCandidateNodesAbsolute: Invalid value: -1: not in valid "
                             "range [0, inf)]");
    assert_int_equal(tp_default_args(&plugin_default_preemption,
                                     "{'minCandidateNodesPercentage':0,"
                                     "'minCandidateNodesAbsolute':0}",
                                     err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at "
                             "the same time as minCandidateNodesAbsolute, "
                             "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the "
                             "same time as minCandidateNodesPercentage]");
    assert_int_equal(tp_default_args(&plugin_default_preemption,
                                     "{'minCandidateNodesPercentage':900}", err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "minCandidateNodesPercentage: Invalid value: 900: not in valid range "
                             "[0, 100]");
    assert_int_equal(tp_default_args(&plugin_default_preemption, "{'extra':1}", err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "unknown field \"extra\"");
}

int test_group_plugin_default_preemption(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits_on_both_nodes),
        cmocka_unit_test(test_higher_priority_pods_running),
        cmocka_unit_test(test_does_not_fit_after_removal),
        cmocka_unit_test(test_medium_preempted_low_stays),
        cmocka_unit_test(test_mixed_priorities),
        cmocka_unit_test(test_pdb_violation),
        cmocka_unit_test(test_pdb_disrupted_pod),
        cmocka_unit_test(test_pdb_scope),
        cmocka_unit_test(test_unresolvable_nodes_skipped),
        cmocka_unit_test(test_offset_and_num_candidates),
        cmocka_unit_test(test_calculate_num_candidates),
        cmocka_unit_test(test_select_best_candidate),
        cmocka_unit_test(test_post_filter),
        cmocka_unit_test(test_eligible_with_nominated_node),
        cmocka_unit_test(test_args),
    };
    return cmocka_run_group_tests_name("plugin_default_preemption", tests, NULL, NULL);
}
