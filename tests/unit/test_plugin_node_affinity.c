/*
 * tests/unit/test_plugin_node_affinity.c - NodeAffinity: the Filter /
 * PreFilter table of kube-scheduler v1.28's node_affinity_test.go
 * (nodeSelector, In/NotIn/Exists/DoesNotExist/Gt/Lt, ANDed expressions,
 * ORed terms, matchFields metadata.name and the PreFilterResult, added
 * affinity), the Score table with addedAffinity, and args validation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

#define ERR_POD "node(s) didn't match Pod's node affinity/selector"
#define ERR_ENFORCED "node(s) didn't match scheduler-enforced node affinity"

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
 * with these nodeSelectorTerms. */
#define REQ(terms)                                                                  \
    "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':" \
    "{'nodeSelectorTerms':" terms "}}}"
#define EXPR(key, op, values) "{'key':'" key "','operator':'" op "','values':" values "}"
#define NAME_IN(node) "{'key':'metadata.name','operator':'In','values':['" node "']}"
#define ADDED_ZONE_FOO                                                                         \
    "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':" \
    "[{'matchExpressions':[" EXPR("zone", "In", "['foo']") "]}]}}}"

typedef struct filter_case {
    const char *name;
    const char *spec;   /* pod spec members */
    const char *node;   /* node name */
    const char *labels; /* node labels */
    const char *args;   /* NodeAffinityArgs or NULL */
    fw_code pre_code;   /* PreFilter status */
    const char *pre_msg;
    const char *result;   /* PreFilterResult names joined with ",", NULL: all nodes */
    const char *want;     /* Filter message, NULL: fits */
    const char *enforced; /* Filter message when addedAffinity rejects */
} filter_case;

static const filter_case cases[] = {
    {"no selector: PreFilter skips", "", "node1", "{}", NULL, FW_SKIP, NULL, NULL, NULL, NULL},
    {"missing labels", "'nodeSelector':{'foo':'bar'}", "node1", "{}", NULL, FW_SUCCESS, NULL, NULL,
     ERR_POD, NULL},
    {"same labels", "'nodeSelector':{'foo':'bar'}", "node1", "{'foo':'bar'}", NULL, FW_SUCCESS,
     NULL, NULL, NULL, NULL},
    {"node labels are superset", "'nodeSelector':{'foo':'bar'}", "node1",
     "{'foo':'bar','baz':'blah'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"node labels are subset", "'nodeSelector':{'foo':'bar','baz':'blah'}", "node1",
     "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"In matches", REQ("[{'matchExpressions':[" EXPR("foo", "In", "['bar','value2']") "]}]"),
     "node1", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"Gt matches", REQ("[{'matchExpressions':[" EXPR("kernel-version", "Gt", "['0204']") "]}]"),
     "node1", "{'kernel-version':'0206'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"Lt does not match",
     REQ("[{'matchExpressions':[" EXPR("kernel-version", "Lt", "['0204']") "]}]"), "node1",
     "{'kernel-version':'0206'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"NotIn matches",
     REQ("[{'matchExpressions':[" EXPR("mem-type", "NotIn", "['DDR','DDR2']") "]}]"), "node1",
     "{'mem-type':'DDR3'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"Exists matches", REQ("[{'matchExpressions':[{'key':'GPU','operator':'Exists'}]}]"), "node1",
     "{'GPU':'NVIDIA-GRID-K1'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"DoesNotExist fails when the label exists",
     REQ("[{'matchExpressions':[{'key':'GPU','operator':'DoesNotExist'}]}]"), "node1",
     "{'GPU':'NVIDIA-GRID-K1'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"In does not match the node's labels",
     REQ("[{'matchExpressions':[" EXPR("foo", "In", "['value1','value2']") "]}]"), "node1",
     "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"nil nodeSelectorTerms match nothing", REQ("null"), "node1", "{'foo':'bar'}", NULL, FW_SUCCESS,
     NULL, NULL, ERR_POD, NULL},
    {"empty nodeSelectorTerms match nothing", REQ("[]"), "node1", "{'foo':'bar'}", NULL, FW_SUCCESS,
     NULL, NULL, ERR_POD, NULL},
    {"empty matchExpressions match nothing", REQ("[{'matchExpressions':[]}]"), "node1",
     "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"affinity without nodeAffinity fits", "'affinity':{}", "node1", "{'foo':'bar'}", NULL, FW_SKIP,
     NULL, NULL, NULL, NULL},
    {"nodeAffinity without required fits", "'affinity':{'nodeAffinity':{}}", "node1",
     "{'foo':'bar'}", NULL, FW_SKIP, NULL, NULL, NULL, NULL},
    {"ANDed expressions match",
     REQ("[{'matchExpressions':[{'key':'GPU','operator':'Exists'}," EXPR("GPU", "NotIn",
                                                                         "['AMD','INTER']") "]}]"),
     "node1", "{'GPU':'NVIDIA-GRID-K1'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"ANDed expressions do not match",
     REQ("[{'matchExpressions':[{'key':'GPU','operator':'Exists'}," EXPR("GPU", "In",
                                                                         "['AMD','INTER']") "]}]"),
     "node1", "{'GPU':'NVIDIA-GRID-K1'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"ORed terms match",
     REQ("[{'matchExpressions':[" EXPR(
         "foo", "In", "['bar','value2']") "]},"
                                          "{'matchExpressions':[" EXPR("diffkey", "In",
                                                                       "['wrong','value2']") "]}]"),
     "node1", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"affinity and nodeSelector both satisfied",
     "'nodeSelector':{'foo':'bar'}," REQ(
         "[{'matchExpressions':[{'key':'foo','operator':'Exists'}]}]"),
     "node1", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"affinity satisfied, nodeSelector not",
     "'nodeSelector':{'foo':'bar'}," REQ(
         "[{'matchExpressions':[{'key':'foo','operator':'Exists'}]}]"),
     "node1", "{'foo':'barrrrrr'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"invalid value in a term matches nothing",
     REQ("[{'matchExpressions':[" EXPR("foo", "NotIn", "['invalid value: ___@#$%^']") "]}]"),
     "node1", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"matchFields In matches", REQ("[{'matchFields':[" NAME_IN("node1") "]}]"), "node1", "{}", NULL,
     FW_SUCCESS, NULL, "node1", NULL, NULL},
    {"matchFields In does not match", REQ("[{'matchFields':[" NAME_IN("node1") "]}]"), "node2",
     "{}", NULL, FW_SUCCESS, NULL, "node1", ERR_POD, NULL},
    {"two terms: matchFields misses, matchExpressions matches",
     REQ("[{'matchFields':[" NAME_IN("node1") "]},{'matchExpressions':[" EXPR("foo", "In",
                                                                              "['bar']") "]}]"),
     "node2", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"one term: matchFields misses, matchExpressions matches",
     REQ("[{'matchFields':[" NAME_IN("node1") "],'matchExpressions':[" EXPR("foo", "In",
                                                                            "['bar']") "]}]"),
     "node2", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, "node1", ERR_POD, NULL},
    {"one term: both match",
     REQ("[{'matchFields':[" NAME_IN("node1") "],'matchExpressions':[" EXPR("foo", "In",
                                                                            "['bar']") "]}]"),
     "node1", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, "node1", NULL, NULL},
    {"two terms: neither matches",
     REQ("[{'matchFields':[" NAME_IN("node1") "]},{'matchFields':[" NAME_IN(
         "node1") "],"
                  "'matchExpressions':[" EXPR("foo", "In", "['not-match-to-bar']") "]}]"),
     "node2", "{'foo':'bar'}", NULL, FW_SUCCESS, NULL, "node1", ERR_POD, NULL},
    {"two terms of node names",
     REQ("[{'matchFields':[" NAME_IN("node1") "]},{'matchFields':[" NAME_IN("node2") "]}]"),
     "node2", "{}", NULL, FW_SUCCESS, NULL, "node1,node2", NULL, NULL},
    {"conflicting matchFields requirements",
     REQ("[{'matchFields':[" NAME_IN("node1") "," NAME_IN("node2") "]}]"), "node2", "{}", NULL,
     FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "pod affinity terms conflict", NULL, ERR_POD, NULL},
    {"matchFields NotIn gives no result",
     REQ("[{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['node1']}]}]"),
     "node2", "{}", NULL, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"added affinity and the pod's affinity both match",
     REQ("[{'matchExpressions':[" EXPR("foo", "In", "['bar']") "]}]"), "node1",
     "{'zone':'foo','foo':'bar'}", ADDED_ZONE_FOO, FW_SUCCESS, NULL, NULL, NULL, NULL},
    {"added affinity matches, the pod's affinity does not",
     REQ("[{'matchExpressions':[" EXPR("foo", "In", "['bar']") "]}]"), "node1", "{'zone':'foo'}",
     ADDED_ZONE_FOO, FW_SUCCESS, NULL, NULL, ERR_POD, NULL},
    {"added affinity does not match",
     REQ("[{'matchExpressions':[" EXPR("foo", "In", "['bar']") "]}]"), "node1",
     "{'zone':'bar','foo':'bar'}", ADDED_ZONE_FOO, FW_SUCCESS, NULL, NULL, NULL, ERR_ENFORCED},
    {"added affinity alone: no skip", "", "node1", "{'zone':'bar'}", ADDED_ZONE_FOO, FW_SUCCESS,
     NULL, NULL, NULL, ERR_ENFORCED},
};

static void assert_result(const fw_pre_filter_result *r, const char *want)
{
    char got[256] = "";
    size_t len = 0;

    if (!want) {
        assert_null(r);
        return;
    }
    assert_non_null(r);
    for (size_t i = 0; i < r->n; i++)
        len +=
            (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", i ? "," : "", r->node_names[i]);
    assert_string_equal(got, want);
}

static void filter_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const filter_case *c = &cases[i];
        tp_plugin *p = tp_plugin_new(&plugin_node_affinity, c->args, NULL);
        fw_pod_info *pod = tp_podf("{'metadata':{'name':'p'},'spec':{%s}}", c->spec);
        fw_node_info *ni = tp_node_simple(c->node, NULL, c->labels, NULL);
        fw_cycle_state *cs = fw_cycle_state_new();
        fw_pre_filter_result *r = NULL;

        print_message("case: %s\n", c->name);
        tp_assert_status(p->desc->pre_filter(p->self, cs, pod, &r), c->pre_code, c->pre_msg);
        assert_result(r, c->result);
        const char *want = c->enforced ? c->enforced : c->want;
        tp_assert_status(p->desc->filter(p->self, cs, pod, ni),
                         want ? FW_UNSCHEDULABLE_AND_UNRESOLVABLE : FW_SUCCESS, want);
        fw_pre_filter_result_free(r);
        fw_cycle_state_free(cs);
        fw_node_info_free(ni);
        fw_pod_info_unref(pod);
        tp_plugin_free(p);
    }
}

/* ---- Score ---- */

#define PREFER(w, exprs) "{'weight':" #w ",'preference':{'matchExpressions':[" exprs "]}}"
#define AFFINITY1 "[" PREFER(2, EXPR("foo", "In", "['bar']")) "]"
#define AFFINITY2                                                                            \
    "[" PREFER(2, EXPR("foo", "In", "['bar']")) "," PREFER(                                  \
        4, EXPR("key", "In", "['value']")) "," PREFER(5,                                     \
                                                      EXPR("foo", "In", "['bar']") "," EXPR( \
                                                          "key", "In",                       \
                                                          "['value']") "," EXPR("az", "In",  \
                                                                                "['az1']")) "]"
#define PREFERRED(terms) \
    "'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':" terms "}}"

#define LABEL1 "{'foo':'bar'}"
#define LABEL2 "{'key':'value'}"
#define LABEL3 "{'az':'az1'}"
#define LABEL4 "{'abc':'az11','def':'az22'}"
#define LABEL5 "{'foo':'bar','key':'value','az':'az1'}"

typedef struct score_case {
    const char *name;
    const char *spec;
    const char *labels[3];
    const char *args;
    fw_code pre_code;
    int64_t want[3];
} score_case;

static const score_case score_cases[] = {
    {"all nodes are same priority as NodeAffinity is nil",
     "",
     {LABEL1, LABEL2, LABEL3},
     NULL,
     FW_SKIP,
     {0, 0, 0}},
    {"no node matches the preferred terms",
     PREFERRED(AFFINITY1),
     {LABEL4, LABEL2, LABEL3},
     NULL,
     FW_SUCCESS,
     {0, 0, 0}},
    {"only node1 matches",
     PREFERRED(AFFINITY1),
     {LABEL1, LABEL2, LABEL3},
     NULL,
     FW_SUCCESS,
     {100, 0, 0}},
    {"all nodes match with different priorities",
     PREFERRED(AFFINITY2),
     {LABEL1, LABEL5, LABEL2},
     NULL,
     FW_SUCCESS,
     {18, 100, 36}},
    {"added affinity",
     "",
     {LABEL1, LABEL2, NULL},
     "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':" AFFINITY1 "}}",
     FW_SUCCESS,
     {100, 0}},
    {"added affinity and pod has default affinity",
     PREFERRED(AFFINITY1),
     {LABEL1, LABEL2, LABEL5},
     "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[" PREFER(
         3, EXPR("key", "In", "['value']")) "]}}",
     FW_SUCCESS,
     {40, 60, 100}},
    {"weight 0 and empty preferences do not count",
     PREFERRED("[{'weight':0,'preference':{'matchExpressions':[" EXPR(
         "foo", "In",
         "['bar']") "]}},"
                    "{'weight':7,'preference':{}}," PREFER(1, EXPR("key", "In", "['value']")) "]"),
     {LABEL1, LABEL2, NULL},
     NULL,
     FW_SUCCESS,
     {0, 100}},
    {"preferred matchFields",
     PREFERRED("[{'weight':3,'preference':{'matchFields':[" NAME_IN("node1") "]}}]"),
     {LABEL1, LABEL1, NULL},
     NULL,
     FW_SUCCESS,
     {0, 100}},
};

static void score_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(score_cases) / sizeof(score_cases[0]); i++) {
        const score_case *c = &score_cases[i];
        tp_plugin *p = tp_plugin_new(&plugin_node_affinity, c->args, NULL);
        fw_pod_info *pod = tp_podf("{'metadata':{'name':'p'},'spec':{%s}}", c->spec);
        fw_node_info *nodes[3];
        int64_t got[3];
        size_t n = 0;
        char name[32];

        print_message("case: %s\n", c->name);
        for (; n < 3 && c->labels[n]; n++) {
            snprintf(name, sizeof(name), "node%zu", n);
            nodes[n] = tp_node_simple(name, NULL, c->labels[n], NULL);
        }
        assert_int_equal(tp_score(p, pod, nodes, n, 1, got), c->pre_code);
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(got[k], c->want[k]);
            fw_node_info_free(nodes[k]);
        }
        fw_pod_info_unref(pod);
        tp_plugin_free(p);
    }
}

static void invalid_preferred_term_fails_pre_score(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_affinity, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{" PREFERRED(
        "[" PREFER(1, "{'key':'foo','operator':'In','values':[]}") "]") "}}");
    fw_node_info *ni = tp_node_simple("n", NULL, LABEL1, NULL);
    const fw_node_info *nodes[] = {ni};
    fw_cycle_state *cs = fw_cycle_state_new();
    int64_t s;

    tp_assert_status(p->desc->pre_score(p->self, cs, pod, nodes, 1), FW_ERROR, NULL);
    tp_assert_status(p->desc->score(p->self, cs, pod, ni, &s), FW_ERROR, NULL);
    fw_cycle_state_free(cs);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

/* ---- Args ---- */

static void args_default_and_validate(void **state)
{
    (void)state;
    char err[1024], *s;

    s = tp_defaulted(&plugin_node_affinity, NULL);
    assert_string_equal(s, "{}");
    free(s);
    s = tp_defaulted(&plugin_node_affinity, ADDED_ZONE_FOO);
    assert_non_null(strstr(s, "\"zone\""));
    free(s);
    assert_int_equal(tp_default_args(&plugin_node_affinity, ADDED_ZONE_FOO, err, sizeof(err)),
                     KUBE_OK);

    assert_int_equal(
        tp_default_args(
            &plugin_node_affinity,
            "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
            "{'nodeSelectorTerms':[{'matchExpressions':[" EXPR("foo", "Foo", "['x']") "]}]}}}",
            err, sizeof(err)),
        KUBE_ECONFIG);
    assert_string_equal(err, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                             "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported "
                             "value: \"Foo\": supported values: \"DoesNotExist\", \"Exists\", "
                             "\"Gt\", \"In\", \"Lt\", \"NotIn\"");

    assert_int_equal(
        tp_default_args(&plugin_node_affinity,
                        "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                        "{'weight':1,'preference':{'matchExpressions':["
                        "{'key':'foo','operator':'In'}],'matchFields':["
                        "{'key':'metadata.name','operator':'In','values':['a','b']}]}}]}}",
                        err, sizeof(err)),
        KUBE_ECONFIG);
    assert_string_equal(err, "[addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
                             "matchExpressions[0].values: Invalid value: []string(nil): for "
                             "'in', 'notin' operators, values set can't be empty, "
                             "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
                             "matchFields[0].values: Invalid value: []string{\"a\", \"b\"}: must "
                             "have one element]");

    /* weight 0 terms are not validated; empty terms neither */
    assert_int_equal(
        tp_default_args(&plugin_node_affinity,
                        "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                        "{'weight':0,'preference':{'matchExpressions':[{'key':'foo','operator':"
                        "'Bad'}]}},{'weight':3,'preference':{}}]}}",
                        err, sizeof(err)),
        KUBE_OK);

    assert_int_equal(tp_default_args(&plugin_node_affinity,
                                     "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuring"
                                     "Execution':{'nodeSelectorTerms':[{'matchExpressions':[" EXPR(
                                         "k", "Gt", "['x']") "]}]}}}",
                                     err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                             "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "
                             "\"x\": for 'Gt', 'Lt' operators, the value must be an integer");

    assert_int_equal(
        tp_default_args(&plugin_node_affinity, "{'addedAffinity':{},'foo':1}", err, sizeof(err)),
        KUBE_ECONFIG);
    assert_string_equal(err, "unknown field \"foo\"");
    assert_int_equal(tp_default_args(&plugin_node_affinity, "[]", err, sizeof(err)), KUBE_ECONFIG);
}

static void registers_node_add_and_update(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, NULL}};
    tp_plugin *p = tp_plugin_new(&plugin_node_affinity, NULL, NULL);

    tp_assert_events(p, want, 1);
    tp_plugin_free(p);
}

int test_group_plugin_node_affinity(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_table),
        cmocka_unit_test(score_table),
        cmocka_unit_test(invalid_preferred_term_fails_pre_score),
        cmocka_unit_test(args_default_and_validate),
        cmocka_unit_test(registers_node_add_and_update),
    };
    return cmocka_run_group_tests_name("plugin_node_affinity", tests, NULL, NULL);
}
