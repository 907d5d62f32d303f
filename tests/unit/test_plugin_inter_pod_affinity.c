/*
 * tests/unit/test_plugin_inter_pod_affinity.c - InterPodAffinity, with the
 * cases of kube-scheduler v1.28's interpodaffinity filtering_test.go and
 * scoring_test.go (required affinity / anti-affinity on one and several
 * nodes, the symmetric check of existing pods' anti-affinity, pods with
 * affinity to themselves, namespaces and namespaceSelector, preferred
 * terms both ways, hardPodAffinityWeight, ignorePreferredTermsOfExisting-
 * Pods), PreFilter AddPod/RemovePod, args validation and the default
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
#include "unit/test_plugin_util.h"
#include "framework/framework.h"
#include "kube/util/errors.h"
#include "kube/codec/jsonstream.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/machinery/store.h"
#include "plugins/interpodaffinity/inter_pod_affinity.h"
#include "plugins/interpodaffinity/inter_pod_affinity_testing.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_topology_util.h"

#define IN(k, ...)                                                                                 \
    "{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"In\",\"values\":[" __VA_ARGS__ "]}]" \
    "}"
#define NOT_IN(k, ...)                                                                          \
    "{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"NotIn\",\"values\":[" __VA_ARGS__ \
    "]}]}"
#define TERM(sel, key) "{\"labelSelector\":" sel ",\"topologyKey\":\"" key "\"}"
#define TERM_X(sel, key, extra) "{\"labelSelector\":" sel ",\"topologyKey\":\"" key "\"," extra "}"
#define WTERM(w, term) "{\"weight\":" #w ",\"podAffinityTerm\":" term "}"
#define REQ(...) "\"requiredDuringSchedulingIgnoredDuringExecution\":[" __VA_ARGS__ "]"
#define PREF(...) "\"preferredDuringSchedulingIgnoredDuringExecution\":[" __VA_ARGS__ "]"
#define AFFINITY(...) "\"affinity\":{\"podAffinity\":{" __VA_ARGS__ "}}"
#define ANTI(...) "\"affinity\":{\"podAntiAffinity\":{" __VA_ARGS__ "}}"
#define BOTH(a, b) "\"affinity\":{\"podAffinity\":{" a "},\"podAntiAffinity\":{" b "}}"
#define NS_SEL(k, v) "\"namespaceSelector\":{\"matchLabels\":{\"" k "\":\"" v "\"}}"

/* ------------------------------------------------------------------ */
/* Fixtures: nodes and pods decoded from small JSON                    */
/* ------------------------------------------------------------------ */

/* Namespaces known to the plugin: "name|k=v,k=v" entries. */
typedef struct env {
    fw_snapshot *snap;
    fw_handle h;
    void *pl;
    fw_cycle_state *cs;
    kube_store *namespaces;
} env;

static const fw_plugin_desc *desc(void)
{
    return &plugin_inter_pod_affinity;
}

static void add_namespace(kube_store *s, const char *def)
{
    char name[64], labels[256], json[512];
    const char *bar = strchr(def, '|');
    snprintf(name, sizeof(name), "%.*s", (int)(bar ? bar - def : (long)strlen(def)), def);
    tt_labels_json(bar ? bar + 1 : "", labels, sizeof(labels));
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"ns-%s\",\"labels\":%s}}",
             name, name, labels);
    kube_object *obj = tt_decode(&plugin_namespace_codec, json);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, obj, NULL), KUBE_OK);
    kube_object_unref(obj);
}

static const char *const default_namespaces[] = {
    "default", "subteam|team=team1", "other|team=team2", "plain", NULL,
};

static void env_init_args(env *e, const tt_node_def *nodes, size_t nn, const tt_pod_def *pods,
                          size_t np, const char *args_json)
{
    char err[256] = "";
    plugin_ns_lister *ns = NULL;
    cJSON *args = args_json ? cJSON_Parse(args_json) : NULL;

    memset(e, 0, sizeof(*e));
    e->snap = tt_make_snapshot(nodes, nn, pods, np);
    e->h.svc.snapshot = e->snap;
    assert_int_equal(kube_store_new(&e->namespaces), KUBE_OK);
    for (size_t i = 0; default_namespaces[i]; i++)
        add_namespace(e->namespaces, default_namespaces[i]);
    assert_int_equal(plugin_ns_lister_from_store(e->namespaces, &ns), KUBE_OK);
    assert_int_equal(plugin_inter_pod_affinity_new(args, &e->h, ns, &e->pl, err, sizeof(err)),
                     KUBE_OK);
    cJSON_Delete(args);
    e->cs = fw_cycle_state_new();
    assert_non_null(e->cs);
}

static void env_init(env *e, const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np)
{
    env_init_args(e, nodes, nn, pods, np, NULL);
}

static void env_free(env *e)
{
    fw_cycle_state_free(e->cs);
    desc()->destroy(e->pl);
    kube_store_free(e->namespaces);
    fw_snapshot_free(e->snap);
}

/* Filter on every node, one letter per node; *msgs gets the last failure's
 * message. */
static void filter_codes(env *e, const fw_cycle_state *cs, const fw_pod_info *pod, char *out,
                         char *msg, size_t msglen)
{
    size_t i;
    for (i = 0; i < e->snap->n_list; i++) {
        fw_status *st = desc()->filter(e->pl, cs, pod, e->snap->list[i]);
        out[i] = tt_code_char(st);
        if (st && msg)
            fw_status_message(st, msg, msglen);
        fw_status_free(st);
    }
    out[i] = '\0';
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* PreFilter then Filter; a skipped PreFilter means every node passes.
 * want: "SUR.." in node order; want_msg (may be NULL): the message of the
 * failing nodes. */
static void check_filter_ns(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np,
                            const char *pod_name, const char *pod_labels, const char *pod_spec,
                            const char *want, const char *want_msg)
{
    env e;
    char got[64], msg[256] = "";
    fw_pre_filter_result *res = NULL;
    tt_pod_def d = {pod_name, NULL, pod_labels, pod_spec, 0};
    fw_pod_info *pod = tt_make_pod(&d);

    env_init(&e, nodes, nn, pods, np);
    fw_status *st = desc()->pre_filter(e.pl, e.cs, pod, &res);
    assert_null(res);
    if (fw_status_is_skip(st)) {
        memset(got, 'S', nn);
        got[nn] = '\0';
    } else {
        assert_true(fw_status_is_success(st));
        filter_codes(&e, e.cs, pod, got, msg, sizeof(msg));
    }
    fw_status_free(st);
    assert_string_equal(got, want);
    if (want_msg)
        assert_string_equal(msg, want_msg);
    fw_pod_info_unref(pod);
    env_free(&e);
}

static void check_filter(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np,
                         const char *pod_labels, const char *pod_spec, const char *want,
                         const char *want_msg)
{
    check_filter_ns(nodes, nn, pods, np, "p", pod_labels, pod_spec, want, want_msg);
}

#define ERR_AFF "node(s) didn't match pod affinity rules"
#define ERR_ANTI "node(s) didn't match pod anti-affinity rules"
#define ERR_EXISTING "node(s) didn't satisfy existing pods anti-affinity rules"

/* ------------------------------------------------------------------ */
/* Filter: TestRequiredAffinitySingleNode                              */
/* ------------------------------------------------------------------ */

static const tt_node_def node1[] = {{"machine1", "region=r1,zone=z11", NULL}};
static const tt_pod_def securityscan[] = {{"p-1", "machine1", "service=securityscan", NULL, 0}};

static void filter_single_node_affinity(void **state)
{
    static const tt_pod_def other_ns[] = {
        {"DiffNameSpace/p-1", "machine1", "service=securityscan", NULL, 0}};
    (void)state;
    /* a pod without pod affinity terms schedules onto an empty node */
    check_filter(node1, 1, NULL, 0, "", NULL, "S", NULL);
    /* required affinity In operator that matches the existing pod */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\",\"value2\""), "region"))), "S",
                 NULL);
    /* NotIn operator in labelSelector that matches the existing pod */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM(NOT_IN("service", "\"securityscan3\",\"value3\""), "region"))),
                 "S", NULL);
    /* the term's namespaces do not include the existing pod's */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM_X(IN("service", "\"securityscan\",\"value2\""), "region",
                                     "\"namespaces\":[\"DiffNameSpace\"]"))),
                 "R", ERR_AFF);
    /* ... and do, when the existing pod is in that namespace */
    check_filter(node1, 1, other_ns, 1, "",
                 AFFINITY(REQ(TERM_X(IN("service", "\"securityscan\""), "region",
                                     "\"namespaces\":[\"DiffNameSpace\"]"))),
                 "S", NULL);
    /* unmatching labelSelector with the existing pod */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM(IN("service", "\"antivirusscan\",\"value2\""), "region"))), "R",
                 ERR_AFF);
    /* several terms, all matching the same pod */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""), "region") "," TERM(
                     NOT_IN("service", "\"wrongValue\""), "region"))),
                 "S", NULL);
    /* one of several terms does not match */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""),
                                   "region") "," TERM(IN("service", "\"wrongValue\""), "region"))),
                 "R", ERR_AFF);
    /* the node lacks the term's topology key */
    check_filter(node1, 1, securityscan, 1, "",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""), "rack"))), "R", ERR_AFF);
}

static void filter_single_node_anti_affinity(void **state)
{
    static const tt_pod_def existing_anti[] = {{"p-1", "machine1", "service=securityscan",
                                                ANTI(REQ(TERM(IN("security", "\"S1\""), "zone"))),
                                                0}};
    static const tt_pod_def existing_anti_rack[] = {
        {"p-1", "machine1", "service=securityscan",
         ANTI(REQ(TERM(IN("security", "\"S1\""), "rack"))), 0}};
    (void)state;
    /* affinity satisfied, anti-affinity does not match the existing pod */
    check_filter(node1, 1, securityscan, 1, "",
                 BOTH(REQ(TERM(IN("service", "\"securityscan\""), "region")),
                      REQ(TERM(IN("service", "\"antivirusscan\""), "zone"))),
                 "S", NULL);
    /* anti-affinity matches the existing pod */
    check_filter(node1, 1, securityscan, 1, "",
                 ANTI(REQ(TERM(IN("service", "\"securityscan\""), "zone"))), "U", ERR_ANTI);
    /* the existing pod's anti-affinity is respected (symmetry) */
    check_filter(node1, 1, existing_anti, 1, "security=S1", NULL, "U", ERR_EXISTING);
    /* ... it does not match the incoming pod */
    check_filter(node1, 1, existing_anti, 1, "security=S2", NULL, "S", NULL);
    /* ... its topology key is not on the node */
    check_filter(node1, 1, existing_anti_rack, 1, "security=S1", NULL, "S", NULL);
    /* affinity fails first: UnschedulableAndUnresolvable */
    check_filter(node1, 1, existing_anti, 1, "security=S1",
                 AFFINITY(REQ(TERM(IN("service", "\"nothing\""), "region"))), "R", ERR_AFF);
}

/* A pod with affinity to itself may go first (nothing matches anywhere). */
static void filter_affinity_to_itself(void **state)
{
    static const tt_node_def two[] = {{"machine1", "region=r1,zone=z11", NULL},
                                      {"machine2", "region=r2,zone=z21", NULL},
                                      {"machine3", "zone=z31", NULL}};
    static const tt_pod_def elsewhere[] = {{"p-2", "machine2", "service=securityscan", NULL, 0}};
    static const tt_pod_def other_ns[] = {
        {"other/p-2", "machine2", "service=securityscan", NULL, 0}};
    (void)state;
    check_filter(two, 3, NULL, 0, "service=securityscan",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""), "region"))), "SSR", ERR_AFF);
    /* a matching pod exists in another topology: only there */
    check_filter(two, 3, elsewhere, 1, "service=securityscan",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""), "region"))), "RSR", ERR_AFF);
    /* a pod of another namespace does not count */
    check_filter(two, 3, other_ns, 1, "service=securityscan",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""), "region"))), "SSR", ERR_AFF);
    /* the pod does not match its own terms: nowhere */
    check_filter(two, 3, NULL, 0, "service=other",
                 AFFINITY(REQ(TERM(IN("service", "\"securityscan\""), "region"))), "RRR", ERR_AFF);
}

static void filter_invalid_selector(void **state)
{
    env e;
    fw_pre_filter_result *res = NULL;
    fw_pod_info *pod = tt_incoming(
        "", AFFINITY(REQ(TERM("{\"matchExpressions\":[{\"key\":\"service\",\"operator\":"
                              "\"WrongOp\",\"values\":[\"securityscan\"]}]}",
                              "region"))));
    (void)state;
    env_init(&e, node1, 1, securityscan, 1);
    fw_status *st = desc()->pre_filter(e.pl, e.cs, pod, &res);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    fw_status_free(st);
    /* Filter without PreFilter state is an error */
    st = desc()->filter(e.pl, e.cs, pod, e.snap->list[0]);
    assert_int_equal(fw_status_code(st), FW_ERROR);
    fw_status_free(st);
    fw_pod_info_unref(pod);
    env_free(&e);
}

/* ------------------------------------------------------------------ */
/* Filter: TestRequiredAffinityMultipleNodes, namespaceSelector        */
/* ------------------------------------------------------------------ */

static const tt_node_def machines3[] = {
    {"machine1", "region=r1,zone=z11", NULL},
    {"machine2", "region=r1,zone=z12", NULL},
    {"machine3", "region=r2,zone=z21", NULL},
};

static void filter_multiple_nodes(void **state)
{
    static const tt_pod_def foo_bar[] = {{"p-1", "machine1", "foo=bar", NULL, 0}};
    static const tt_node_def same_zone[] = {{"nodeA", "zone=az1,hostname=h1", NULL},
                                            {"nodeB", "zone=az1,hostname=h2", NULL}};
    static const tt_pod_def abc_on_a[] = {{"p-1", "nodeA", "foo=abc", NULL, 0}};
    static const tt_pod_def anti_on_a[] = {
        {"p-1", "nodeA", "foo=abc", ANTI(REQ(TERM(IN("foo", "\"abc\""), "zone"))), 0}};
    (void)state;
    /* every node with the same region as the matching pod */
    check_filter(machines3, 3, foo_bar, 1, "", AFFINITY(REQ(TERM(IN("foo", "\"bar\""), "region"))),
                 "SSR", ERR_AFF);
    /* NodeA and NodeB share the zone of a pod the anti-affinity matches */
    check_filter(same_zone, 2, abc_on_a, 1, "", ANTI(REQ(TERM(IN("foo", "\"abc\""), "zone"))), "UU",
                 ERR_ANTI);
    /* ... the same through the existing pod's anti-affinity */
    check_filter(same_zone, 2, anti_on_a, 1, "foo=abc", NULL, "UU", ERR_EXISTING);
    /* ... a hostname term keeps only nodeA out */
    check_filter(same_zone, 2, abc_on_a, 1, "", ANTI(REQ(TERM(IN("foo", "\"abc\""), "hostname"))),
                 "US", ERR_ANTI);
}

static void filter_namespace_selector(void **state)
{
    static const tt_pod_def in_subteam[] = {{"subteam/p-1", "machine1", "foo=bar", NULL, 0}};
    static const tt_pod_def anti_ns_sel[] = {
        {"other/p-1", "machine1", "app=db",
         ANTI(REQ(TERM_X(IN("foo", "\"bar\""), "region", NS_SEL("team", "team1")))), 0}};
    (void)state;
    /* the incoming pod's namespaceSelector selects the existing pod's namespace */
    check_filter(machines3, 3, in_subteam, 1, "",
                 AFFINITY(REQ(TERM_X(IN("foo", "\"bar\""), "region", NS_SEL("team", "team1")))),
                 "SSR", ERR_AFF);
    /* ... it does not */
    check_filter(machines3, 3, in_subteam, 1, "",
                 AFFINITY(REQ(TERM_X(IN("foo", "\"bar\""), "region", NS_SEL("team", "team2")))),
                 "RRR", ERR_AFF);
    /* an empty namespaceSelector selects every namespace */
    check_filter(machines3, 3, in_subteam, 1, "",
                 AFFINITY(REQ(TERM_X(IN("foo", "\"bar\""), "region", "\"namespaceSelector\":{}"))),
                 "SSR", ERR_AFF);
    /* anti-affinity through the namespaceSelector */
    check_filter(machines3, 3, in_subteam, 1, "",
                 ANTI(REQ(TERM_X(IN("foo", "\"bar\""), "region", NS_SEL("team", "team1")))), "UUS",
                 ERR_ANTI);
    /* an existing pod's anti-affinity matches with the incoming pod's
     * namespace labels */
    check_filter_ns(machines3, 3, anti_ns_sel, 1, "subteam/p", "foo=bar", NULL, "UUS",
                    ERR_EXISTING);
    check_filter_ns(machines3, 3, anti_ns_sel, 1, "plain/p", "foo=bar", NULL, "SSS", NULL);
    /* a namespace the lister does not know has no labels */
    check_filter_ns(machines3, 3, anti_ns_sel, 1, "unknown/p", "foo=bar", NULL, "SSS", NULL);
}

/* AddPod / RemovePod on cloned states (preemption's "what if"). */
static void pre_filter_add_remove_pod(void **state)
{
    static const tt_pod_def existing[] = {
        {"p-1", "machine1", "app=db", ANTI(REQ(TERM(IN("foo", "\"bar\""), "region"))), 0},
        {"p-2", "machine2", "app=web", NULL, 0},
    };
    env e;
    char got[8];
    fw_pre_filter_result *res = NULL;
    tt_pod_def d = {
        "p", NULL, "foo=bar",
        BOTH(REQ(TERM(IN("app", "\"web\""), "region")), REQ(TERM(IN("app", "\"cache\""), "zone"))),
        0};
    tt_pod_def cache = {"p-3", "machine3", "app=cache", NULL, 0};
    fw_pod_info *pod = tt_make_pod(&d), *pc = tt_make_pod(&cache);
    (void)state;

    env_init(&e, machines3, 3, existing, N(existing));
    assert_null(desc()->pre_filter(e.pl, e.cs, pod, &res));
    filter_codes(&e, e.cs, pod, got, NULL, 0);
    assert_string_equal(got, "UUR"); /* p-1's anti-affinity on r1; web only in r1 */
    fw_pod_info *p1 = e.snap->list[0]->pods[0], *p2 = e.snap->list[1]->pods[0];

    /* without p-1 its anti-affinity is gone */
    fw_cycle_state *c = fw_cycle_state_clone(e.cs);
    assert_null(desc()->pre_filter_remove_pod(e.pl, c, pod, p1, e.snap->list[0]));
    filter_codes(&e, c, pod, got, NULL, 0);
    assert_string_equal(got, "SSR");
    /* a cache pod in zone z12 repels the incoming pod there */
    assert_null(desc()->pre_filter_add_pod(e.pl, c, pod, pc, e.snap->list[1]));
    filter_codes(&e, c, pod, got, NULL, 0);
    assert_string_equal(got, "SUR");
    /* without p-2 nothing matches the affinity and the pod does not match
     * its own terms */
    assert_null(desc()->pre_filter_remove_pod(e.pl, c, pod, p2, e.snap->list[1]));
    filter_codes(&e, c, pod, got, NULL, 0);
    assert_string_equal(got, "RRR");
    /* p-1 back */
    assert_null(desc()->pre_filter_add_pod(e.pl, c, pod, p1, e.snap->list[0]));
    assert_null(desc()->pre_filter_add_pod(e.pl, c, pod, p2, e.snap->list[1]));
    filter_codes(&e, c, pod, got, NULL, 0);
    assert_string_equal(got, "UUR");
    fw_cycle_state_free(c);

    /* the original state is untouched */
    filter_codes(&e, e.cs, pod, got, NULL, 0);
    assert_string_equal(got, "UUR");
    fw_pod_info_unref(pc);
    fw_pod_info_unref(pod);
    env_free(&e);
}

/* PreFilter skips when nothing can reject the pod. */
static void pre_filter_skip(void **state)
{
    static const tt_pod_def anti_other[] = {
        {"p-1", "machine1", "", ANTI(REQ(TERM(IN("foo", "\"bar\""), "region"))), 0}};
    env e;
    fw_pre_filter_result *res = NULL;
    fw_pod_info *plain = tt_incoming("foo=baz", NULL), *matching = tt_incoming("foo=bar", NULL);
    (void)state;
    env_init(&e, machines3, 3, anti_other, 1);
    fw_status *st = desc()->pre_filter(e.pl, e.cs, plain, &res);
    assert_true(fw_status_is_skip(st));
    fw_status_free(st);
    assert_null(desc()->pre_filter(e.pl, e.cs, matching, &res));
    fw_pod_info_unref(plain);
    fw_pod_info_unref(matching);
    env_free(&e);
}

/* ------------------------------------------------------------------ */
/* Scoring: TestPreferredAffinity                                      */
/* ------------------------------------------------------------------ */

static const tt_node_def rg3[] = {
    {"machine1", "region=China", NULL},
    {"machine2", "region=India", NULL},
    {"machine3", "az=az1", NULL},
};

/* PreScore on every node, Score, NormalizeScore: "name=score ..." (or
 * "skip" when PreScore skipped). */
static void check_score_args(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np,
                             const char *pod_name, const char *pod_labels, const char *pod_spec,
                             const char *args, const char *want)
{
    env e;
    char got[256] = "";
    size_t used = 0;
    fw_node_score scores[16];
    tt_pod_def d = {pod_name, NULL, pod_labels, pod_spec, 0};
    fw_pod_info *pod = tt_make_pod(&d);

    env_init_args(&e, nodes, nn, pods, np, args);
    const fw_node_info *const *all = (const fw_node_info *const *)e.snap->list;
    fw_status *st = desc()->pre_score(e.pl, e.cs, pod, all, nn);
    if (fw_status_is_skip(st)) {
        snprintf(got, sizeof(got), "skip");
    } else {
        assert_true(fw_status_is_success(st));
        for (size_t i = 0; i < nn; i++) {
            scores[i].name = all[i]->name;
            assert_null(desc()->score(e.pl, e.cs, pod, all[i], &scores[i].score));
        }
        assert_null(desc()->normalize_score(e.pl, e.cs, pod, scores, nn));
        for (size_t i = 0; i < nn; i++)
            used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s=%lld", i ? " " : "",
                                     scores[i].name, (long long)scores[i].score);
    }
    fw_status_free(st);
    assert_string_equal(got, want);
    fw_pod_info_unref(pod);
    env_free(&e);
}

static void check_score(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods, size_t np,
                        const char *pod_labels, const char *pod_spec, const char *want)
{
    check_score_args(nodes, nn, pods, np, "p", pod_labels, pod_spec, NULL, want);
}

static const tt_pod_def s1_s2[] = {
    {"p-1", "machine1", "security=S1", NULL, 0},
    {"p-2", "machine2", "security=S2", NULL, 0},
};

static void score_preferred_affinity(void **state)
{
    static const tt_node_def china2[] = {
        {"machine1", "region=China", NULL},
        {"machine2", "region=China,az=az1", NULL},
        {"machine3", "region=India", NULL},
    };
    static const tt_pod_def s1[] = {{"p-1", "machine1", "security=S1", NULL, 0}};
    (void)state;
    /* all machines are same priority as Affinity is nil */
    check_score(rg3, 3, s1_s2, 2, "security=S1", NULL, "machine1=0 machine2=0 machine3=0");
    /* pod that matches topology key & pods in nodes gets the high score */
    check_score(rg3, 3, s1_s2, 2, "security=S1",
                AFFINITY(PREF(WTERM(5, TERM(IN("security", "\"S1\""), "region")))),
                "machine1=100 machine2=0 machine3=0");
    /* every node in the matching pod's topology scores the same */
    check_score(china2, 3, s1, 1, "",
                AFFINITY(PREF(WTERM(5, TERM(IN("security", "\"S1\""), "region")))),
                "machine1=100 machine2=100 machine3=0");
    /* weights of several terms add up, per topology */
    check_score(rg3, 3, s1_s2, 2, "",
                AFFINITY(PREF(WTERM(8, TERM(IN("security", "\"S1\""), "region")) "," WTERM(
                    2, TERM(IN("security", "\"S2\""), "region")))),
                "machine1=100 machine2=25 machine3=0");
}

static void score_preferred_anti_affinity(void **state)
{
    (void)state;
    /* pod that does not match existing pods in node gets the high score */
    check_score(rg3, 3, s1_s2, 2, "",
                ANTI(PREF(WTERM(5, TERM(IN("security", "\"S1\""), "region")))),
                "machine1=0 machine2=100 machine3=100");
    /* affinity and anti-affinity: 8, -5, 0 */
    check_score(rg3, 3, s1_s2, 2, "",
                BOTH(PREF(WTERM(8, TERM(IN("security", "\"S1\""), "region"))),
                     PREF(WTERM(5, TERM(IN("security", "\"S2\""), "region")))),
                "machine1=100 machine2=0 machine3=38");
}

/* Existing pods' terms against the incoming pod (symmetry). */
static void score_existing_pods_terms(void **state)
{
    static const tt_pod_def hard[] = {
        {"p-1", "machine1", "app=a", AFFINITY(REQ(TERM(IN("security", "\"S1\""), "region"))), 0},
        {"p-2", "machine2", "security=S2", NULL, 0},
    };
    static const tt_pod_def soft[] = {
        {"p-1", "machine1", "app=a", ANTI(PREF(WTERM(5, TERM(IN("security", "\"S1\""), "region")))),
         0},
        {"p-2", "machine2", "app=b",
         AFFINITY(PREF(WTERM(5, TERM(IN("security", "\"S1\""), "region")))), 0},
    };
    (void)state;
    /* an existing pod's required affinity counts hardPodAffinityWeight */
    check_score(rg3, 3, hard, 2, "security=S1", NULL, "machine1=100 machine2=0 machine3=0");
    check_score_args(rg3, 3, hard, 2, "p", "security=S1", NULL, "{\"hardPodAffinityWeight\":0}",
                     "machine1=0 machine2=0 machine3=0");
    /* ... unless the incoming pod does not match it */
    check_score(rg3, 3, hard, 2, "security=S2", NULL, "machine1=0 machine2=0 machine3=0");
    /* existing pods' preferred affinity (+5) and anti-affinity (-5) */
    check_score(rg3, 3, soft, 2, "security=S1", NULL, "machine1=0 machine2=100 machine3=50");
    /* ignorePreferredTermsOfExistingPods: skipped without the pod's own
     * preferred terms */
    check_score_args(rg3, 3, soft, 2, "p", "security=S1", NULL,
                     "{\"ignorePreferredTermsOfExistingPods\":true}", "skip");
    check_score_args(rg3, 3, soft, 2, "p", "security=S1",
                     AFFINITY(PREF(WTERM(5, TERM(IN("app", "\"none\""), "region")))),
                     "{\"ignorePreferredTermsOfExistingPods\":true}",
                     "machine1=0 machine2=100 machine3=50");
}

static void score_namespaces(void **state)
{
    static const tt_pod_def in_subteam[] = {{"subteam/p-1", "machine1", "security=S1", NULL, 0}};
    static const tt_pod_def ns_sel_term[] = {
        {"p-2", "machine2", "app=b",
         AFFINITY(
             PREF(WTERM(5, TERM_X(IN("security", "\"S1\""), "region", NS_SEL("team", "team1"))))),
         0}};
    (void)state;
    /* the incoming pod's namespaceSelector */
    check_score(rg3, 3, in_subteam, 1, "",
                AFFINITY(PREF(
                    WTERM(5, TERM_X(IN("security", "\"S1\""), "region", NS_SEL("team", "team1"))))),
                "machine1=100 machine2=0 machine3=0");
    /* the term defaults to the pod's own namespace */
    check_score(rg3, 3, in_subteam, 1, "",
                AFFINITY(PREF(WTERM(5, TERM(IN("security", "\"S1\""), "region")))),
                "machine1=0 machine2=0 machine3=0");
    /* an existing pod's namespaceSelector against the incoming pod's
     * namespace labels */
    check_score_args(rg3, 3, ns_sel_term, 1, "subteam/p", "security=S1", NULL, NULL,
                     "machine1=0 machine2=100 machine3=0");
    check_score_args(rg3, 3, ns_sel_term, 1, "plain/p", "security=S1", NULL, NULL,
                     "machine1=0 machine2=0 machine3=0");
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
    fw_handle h = {0};
    void *pl = NULL;
    char err[256] = "";
    cJSON *bad = cJSON_Parse("{\"hardPodAffinityWeight\":-1}");
    (void)state;
    check_args(NULL, NULL,
               "{\"hardPodAffinityWeight\":1,\"ignorePreferredTermsOfExistingPods\":false}");
    check_args("{\"hardPodAffinityWeight\":100,\"ignorePreferredTermsOfExistingPods\":true}", NULL,
               "{\"hardPodAffinityWeight\":100,\"ignorePreferredTermsOfExistingPods\":true}");
    check_args("{\"hardPodAffinityWeight\":0}", NULL,
               "{\"hardPodAffinityWeight\":0,\"ignorePreferredTermsOfExistingPods\":false}");
    check_args("{\"hardPodAffinityWeight\":-1}",
               "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]", NULL);
    check_args("{\"hardPodAffinityWeight\":110}",
               "hardPodAffinityWeight: Invalid value: 110: not in valid range [0-100]", NULL);
    check_args("{\"hardPodAffinityWeight\":\"x\"}", "hardPodAffinityWeight: expected an integer",
               NULL);
    check_args("{\"weight\":1}", "unknown field \"weight\"", NULL);
    /* create validates too */
    assert_int_equal(desc()->create(bad, &h, NULL, &pl, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err,
                        "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]");
    assert_null(pl);
    cJSON_Delete(bad);
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
    assert_int_equal(ev[1].event.action, FW_ACT_ADD | FW_ACT_UPDATE_NODE_LABEL);

    assert_int_equal(tp_config_load(NULL, NULL, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    const sched_plugin_set *mp = &cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT];
    for (size_t i = 0; i < mp->n_enabled; i++)
        if (strcmp(mp->enabled[i].name, "InterPodAffinity") == 0) {
            assert_int_equal(mp->enabled[i].weight, 2);
            found = 1;
        }
    assert_true(found);
    const cJSON *args = sched_profile_args(&cfg->profiles[0], "InterPodAffinity");
    assert_non_null(args);
    assert_int_equal(cJSON_GetObjectItem(args, "hardPodAffinityWeight")->valueint, 1);
    sched_config_free(cfg);
}

int test_group_plugin_inter_pod_affinity(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_single_node_affinity),
        cmocka_unit_test(filter_single_node_anti_affinity),
        cmocka_unit_test(filter_affinity_to_itself),
        cmocka_unit_test(filter_invalid_selector),
        cmocka_unit_test(filter_multiple_nodes),
        cmocka_unit_test(filter_namespace_selector),
        cmocka_unit_test(pre_filter_add_remove_pod),
        cmocka_unit_test(pre_filter_skip),
        cmocka_unit_test(score_preferred_affinity),
        cmocka_unit_test(score_preferred_anti_affinity),
        cmocka_unit_test(score_existing_pods_terms),
        cmocka_unit_test(score_namespaces),
        cmocka_unit_test(args_defaults_and_validation),
        cmocka_unit_test(events_and_default_profile),
    };
    return cmocka_run_group_tests_name("plugin_inter_pod_affinity", tests, NULL, NULL);
}
