/*
 * tests/unit/test_node_tree.c - scheduler/cache/node_tree.c, kube-scheduler's
 * nodeTree, after upstream's internal/cache/node_tree_test.go (TestNodeTree_
 * AddNode, RemoveNode, UpdateNode, List): names grouped by zone (region
 * and zone labels, topology.kubernetes.io or failure-domain.beta), listed
 * round robin across zones in the order the zones appeared; an emptied
 * zone leaves the rotation; a node whose zone changed moves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cache/node_tree.h"
#include "kube/codec/object.h"
#include "kube/types/node.h"
#include "kube/util/errors.h"

/* A node named name with the zone label zone (NULL: none) and, when
 * beta, the failure-domain.beta labels instead of topology.kubernetes.io. */
static struct kube_node *node(const char *name, const char *region, const char *zone, int beta)
{
    char json[512], labels[256] = "";
    const char *pfx = beta ? "failure-domain.beta.kubernetes.io" : "topology.kubernetes.io";
    kube_object *o = NULL;
    if (zone)
        snprintf(labels, sizeof(labels), "\"%s/region\":\"%s\",\"%s/zone\":\"%s\"", pfx,
                 region ? region : "", pfx, zone);
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}", name, labels);
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    assert_int_equal(kube_node_codec.decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return (struct kube_node *)o;
}

/* The tree's list, joined with ','. */
static void expect_list(sched_node_tree *t, const char *want)
{
    const char *const *names;
    size_t n;
    char got[512] = "";
    assert_int_equal(sched_node_tree_list(t, &names, &n), KUBE_OK);
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "", names[i]);
    assert_string_equal(got, want);
}

static void unref_all(struct kube_node **nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kube_object_unref((kube_object *)nodes[i]);
}

/* AddNode and List: round robin over zones in the order they appeared; a
 * node added twice is listed once; the beta labels count as the zone. */
static void lists_round_robin_across_zones(void **state)
{
    (void)state;
    sched_node_tree t = {0};
    struct kube_node *n[] = {node("n1", "r1", "z1", 0), node("n2", "r1", "z1", 0),
                             node("n3", "r1", "z2", 0), node("n4", NULL, NULL, 0),
                             node("n5", "r1", "z2", 1), node("n6", "r2", "z1", 0)};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(sched_node_tree_add(&t, n[i]), KUBE_OK);
    assert_int_equal(sched_node_tree_add(&t, n[0]), KUBE_OK); /* once */
    assert_int_equal(t.n_nodes, 6);
    /* zones r1/z1, r1/z2, "", r2/z1: the region is part of the zone */
    expect_list(&t, "n1,n3,n4,n6,n2,n5");
    sched_node_tree_free(&t);
    unref_all(n, 6);
}

/* RemoveNode: an emptied zone leaves the rotation; an unknown node changes
 * nothing. UpdateNode: a node whose zone changed moves to the new zone's
 * end; the same zone keeps its place. */
static void removes_and_moves_nodes(void **state)
{
    (void)state;
    sched_node_tree t = {0};
    struct kube_node *n[] = {node("n1", "r", "z1", 0), node("n2", "r", "z1", 0),
                             node("n3", "r", "z2", 0), node("n4", "r", "z3", 0),
                             node("n2", "r", "z3", 0), node("n9", "r", "z1", 0),
                             node("n3", "r", "z2", 0)};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(sched_node_tree_add(&t, n[i]), KUBE_OK);
    expect_list(&t, "n1,n3,n4,n2");
    sched_node_tree_remove(&t, n[5]); /* not in the tree */
    assert_int_equal(t.n_nodes, 4);
    sched_node_tree_remove(&t, n[2]); /* z2 empties */
    expect_list(&t, "n1,n4,n2");
    assert_int_equal(sched_node_tree_update(&t, n[1], n[4]), KUBE_OK); /* n2: z1 -> z3 */
    expect_list(&t, "n1,n4,n2");
    assert_int_equal(t.n_nodes, 3);
    assert_int_equal(sched_node_tree_update(&t, NULL, n[6]), KUBE_OK); /* NULL old: adds */
    expect_list(&t, "n1,n4,n3,n2");
    sched_node_tree_remove(&t, n[0]);
    sched_node_tree_remove(&t, n[3]);
    sched_node_tree_remove(&t, n[4]);
    sched_node_tree_remove(&t, n[6]);
    assert_int_equal(t.n_nodes, 0);
    expect_list(&t, "");
    sched_node_tree_free(&t);
    unref_all(n, 7);
}

int test_group_node_tree(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_round_robin_across_zones),
        cmocka_unit_test(removes_and_moves_nodes),
    };
    return cmocka_run_group_tests_name("node_tree", tests, NULL, NULL);
}
