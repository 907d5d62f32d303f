/*
 * tests/integration/test_topology_integration.c - the scheduler in-process
 * (default profile) against the API emulator, with InterPodAffinity and
 * PodTopologySpread:
 *   - replicas with required pod anti-affinity on kubernetes.io/hostname
 *     take one node each of five identical nodes; a sixth stays Pending
 *     with kube-scheduler's "node(s) didn't match pod anti-affinity rules";
 *   - nine pods with a zone spread constraint (maxSkew 1, DoNotSchedule)
 *     end 3/3/3 over three zones, although one zone's nodes are eight times
 *     larger (without the plugin, resource scoring would put them all
 *     there); with the small zone-c cordoned, zone-c still counts as a
 *     domain (v1.28: nodeTaintsPolicy defaults to Ignore and
 *     spec.unschedulable is no inclusion criterion), so a tenth and an
 *     eleventh pod go one to zone-a and one to zone-b, and a twelfth stays
 *     Pending with "node(s) didn't match pod topology spread constraints"
 *     although zone-a has room for dozens more;
 *   - the pods of a ReplicaSet, without constraints of their own, spread
 *     over a big node (zone-a) and a small one (zone-b) by the system
 *     default constraints with the ReplicaSet's selector, where pods no
 *     controller owns all go to the big node.
 * Nodes exist before the scheduler starts (its cache sees every domain
 * from the first cycle). Waits use deadlines; nothing asserts speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "harness.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "scheduler.h"
#include "sched_fixture.h"

#define PODS "/api/v1/namespaces/default/pods"
#define ZONE_KEY "topology.kubernetes.io/zone"

/* ------------------------------------------------------------------ */
/* API helpers                                                         */
/* ------------------------------------------------------------------ */

/* A node with cpu cores and mem of allocatable; zone NULL: no zone label. */
static void create_node(sf_fixture *fx, const char *name, const char *zone, const char *cpu,
                        const char *mem)
{
    char zone_label[128] = "";

    if (zone)
        snprintf(zone_label, sizeof(zone_label), ",\"" ZONE_KEY "\":\"%s\"", zone);
    sf_create(fx->h, "/api/v1/nodes",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
              "\"kubernetes.io/hostname\":\"%s\"%s}},\"status\":{\"capacity\":{\"cpu\":\"%s\","
              "\"memory\":\"%s\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"%s\",\"memory\":"
              "\"%s\",\"pods\":\"110\"}}}",
              name, name, zone_label, cpu, mem, cpu, mem);
}

/* A 100m/64Mi pod with labels (JSON members) and extra spec members. */
static void create_pod(sf_fixture *fx, const char *name, const char *labels, const char *extra_spec)
{
    sf_create(fx->h, PODS,
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
              "\"default\",\"labels\":{%s}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
              "\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"100m\","
              "\"memory\":\"64Mi\"}}}]%s}}",
              name, labels, extra_spec ? extra_spec : "");
}

static void cordon(sf_fixture *fx, const char *node)
{
    char path[256];
    harness_response r;

    snprintf(path, sizeof(path), "/api/v1/nodes/%s", node);
    assert_int_equal(harness_request(fx->h, NULL, "PATCH", path, "application/merge-patch+json",
                                     "{\"spec\":{\"unschedulable\":true}}", &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
}

/* Fails unless msg begins with prefix. */
static void assert_prefix(const char *msg, const char *prefix)
{
    if (strncmp(msg, prefix, strlen(prefix)))
        fail_msg("message \"%s\" does not begin with \"%s\"", msg, prefix);
}

/* The pod's node is still node (it was not moved or deleted). */
static void assert_still_on(sf_fixture *fx, const char *pod, const char *node)
{
    cJSON *p = sf_get(fx->h, PODS "/%s", pod);
    assert_string_equal(sf_str_at(p, "spec", "nodeName"), node);
    cJSON_Delete(p);
}

/* ------------------------------------------------------------------ */
/* Fixture                                                             */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Required pod anti-affinity                                          */
/* ------------------------------------------------------------------ */

#define DB_LABELS "\"app\":\"db\""
#define DB_ANTI_AFFINITY                                                                        \
    ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{" \
    "\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":"                     \
    "\"kubernetes.io/hostname\"}]}}"
#define DB_NODES 5

/* Creates replicas db-first..db-(last) and records their nodes at
 * nodes[first..last]. */
static void create_db_replicas(sf_fixture *fx, int first, int last, char **nodes)
{
    char name[32];

    for (int i = first; i <= last; i++) {
        snprintf(name, sizeof(name), "db-%d", i);
        create_pod(fx, name, DB_LABELS, DB_ANTI_AFFINITY);
    }
    for (int i = first; i <= last; i++) {
        snprintf(name, sizeof(name), "db-%d", i);
        nodes[i] = sf_wait_bound(fx->h, name);
    }
}

static void assert_all_distinct(char **nodes, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!strcmp(nodes[i], nodes[j]))
                fail_msg("db-%d and db-%d share node %s", i, j, nodes[i]);
}

static void anti_affinity_one_replica_per_node(void **state)
{
    sf_fixture *fx = *state;
    char *nodes[DB_NODES] = {NULL};
    char name[32];

    for (int i = 0; i < DB_NODES; i++) {
        snprintf(name, sizeof(name), "node-%d", i);
        create_node(fx, name, NULL, "4", "16Gi");
    }
    sf_start_scheduler(fx);

    create_db_replicas(fx, 0, 2, nodes);
    assert_all_distinct(nodes, 3);
    create_db_replicas(fx, 3, 4, nodes);
    assert_all_distinct(nodes, DB_NODES);

    /* every node holds a replica: the sixth has nowhere to go */
    create_pod(fx, "db-5", DB_LABELS, DB_ANTI_AFFINITY);
    char *msg =
        sf_wait_unschedulable(fx->h, "db-5", "node(s) didn't match pod anti-affinity rules");
    assert_prefix(msg, "0/5 nodes are available: 5 node(s) didn't match pod anti-affinity "
                       "rules.");
    free(msg);
    cJSON *p = sf_get(fx->h, PODS "/db-5");
    assert_null(sf_str_at(p, "spec", "nodeName"));
    cJSON_Delete(p);
    for (int i = 0; i < DB_NODES; i++) {
        snprintf(name, sizeof(name), "db-%d", i);
        assert_still_on(fx, name, nodes[i]);
        free(nodes[i]);
    }
}

/* ------------------------------------------------------------------ */
/* Topology spread over zones                                          */
/* ------------------------------------------------------------------ */

#define WEB_LABELS "\"app\":\"web\""
#define WEB_SPREAD                                                                         \
    ",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"" ZONE_KEY "\","     \
    "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":" \
    "\"web\"}}}]"
#define ZONES 3

static const char *const zone_names[ZONES] = {"zone-a", "zone-b", "zone-c"};

/* Index of the zone of node (named "<zone>-<n>"). */
static int zone_of(const char *node)
{
    for (int z = 0; z < ZONES; z++)
        if (!strncmp(node, zone_names[z], strlen(zone_names[z])))
            return z;
    fail_msg("node %s is in no zone", node);
    return -1;
}

/* Creates web-first..web-(last), waits for them all to be bound and adds
 * each to counts[zone]. */
static void create_web_pods(sf_fixture *fx, int first, int last, int counts[ZONES])
{
    char name[32];

    for (int i = first; i <= last; i++) {
        snprintf(name, sizeof(name), "web-%d", i);
        create_pod(fx, name, WEB_LABELS, WEB_SPREAD);
    }
    for (int i = first; i <= last; i++) {
        snprintf(name, sizeof(name), "web-%d", i);
        char *node = sf_wait_bound(fx->h, name);
        counts[zone_of(node)]++;
        free(node);
    }
}

static void assert_counts(const int counts[ZONES], int a, int b, int c)
{
    if (counts[0] != a || counts[1] != b || counts[2] != c)
        fail_msg("pods per zone a/b/c: %d/%d/%d, expected %d/%d/%d", counts[0], counts[1],
                 counts[2], a, b, c);
}

/* zone-a: two 32-core nodes; zone-b and zone-c: two 4-core nodes each. */
static void create_zone_nodes(sf_fixture *fx)
{
    char name[32];

    for (int z = 0; z < ZONES; z++)
        for (int n = 1; n <= 2; n++) {
            snprintf(name, sizeof(name), "%s-%d", zone_names[z], n);
            create_node(fx, name, zone_names[z], z == 0 ? "32" : "4", z == 0 ? "128Gi" : "16Gi");
        }
}

/* Cordons zone-c and waits until the scheduler saw both nodes cordoned:
 * a pod only zone-c's nodes could take is refused by NodeUnschedulable on
 * both of them. */
static void cordon_zone_c(sf_fixture *fx)
{
    cordon(fx, "zone-c-1");
    cordon(fx, "zone-c-2");
    create_pod(fx, "probe", "\"app\":\"probe\"", ",\"nodeSelector\":{\"" ZONE_KEY "\":\"zone-c\"}");
    char *msg = sf_wait_unschedulable(fx->h, "probe", "2 node(s) were unschedulable");
    assert_prefix(msg, "0/6 nodes are available: 2 node(s) were unschedulable, 4 node(s) didn't "
                       "match Pod's node affinity/selector.");
    free(msg);
}

static void spread_over_zones(void **state)
{
    sf_fixture *fx = *state;
    int counts[ZONES] = {0, 0, 0};

    create_zone_nodes(fx);
    sf_start_scheduler(fx);

    /* maxSkew 1: a pod may only join a zone holding the fewest */
    create_web_pods(fx, 0, 8, counts);
    assert_counts(counts, 3, 3, 3);

    /* zone-c (3 pods) stays a domain while cordoned: the minimum stays 3,
     * so zone-a and zone-b take one more pod each, and then none */
    cordon_zone_c(fx);
    create_web_pods(fx, 9, 9, counts);
    create_web_pods(fx, 10, 10, counts);
    assert_counts(counts, 4, 4, 3);
    create_pod(fx, "web-11", WEB_LABELS, WEB_SPREAD);
    char *msg = sf_wait_unschedulable(fx->h, "web-11",
                                      "node(s) didn't match pod topology spread constraints");
    assert_prefix(msg, "0/6 nodes are available: 2 node(s) were unschedulable, 4 node(s) didn't "
                       "match pod topology spread constraints.");
    free(msg);
    cJSON *p = sf_get(fx->h, PODS "/web-11");
    assert_null(sf_str_at(p, "spec", "nodeName"));
    cJSON_Delete(p);
}

/* ------------------------------------------------------------------ */
/* System default constraints (no topologySpreadConstraints in pods)   */
/* ------------------------------------------------------------------ */

#define RS_PATH "/apis/apps/v1/namespaces/default/replicasets"

/* The ReplicaSet "web" selecting app=web; returns its uid (caller frees). */
static char *create_web_replicaset(sf_fixture *fx)
{
    sf_create(fx->h, RS_PATH,
              "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web\","
              "\"namespace\":\"default\"},\"spec\":{\"replicas\":6,\"selector\":{\"matchLabels\":"
              "{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
              "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/pause:3.9\""
              "}]}}}}");
    cJSON *rs = sf_get(fx->h, RS_PATH "/web");
    const char *uid = sf_str_at(rs, "metadata", "uid");
    assert_non_null(uid);
    char *copy = strdup(uid);
    cJSON_Delete(rs);
    assert_non_null(copy);
    return copy;
}

/* Creates pods prefix-0..prefix-(n-1) with labels and extra metadata
 * members, waits until all are bound and returns how many went to node. */
static int create_bound_pods(sf_fixture *fx, const char *prefix, int n, const char *labels,
                             const char *meta, const char *node)
{
    char name[32];
    int on_node = 0;

    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        sf_create(fx->h, PODS,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                  "\"namespace\":\"default\",\"labels\":{%s}%s},\"spec\":{\"containers\":[{"
                  "\"name\":\"c\",\"image\":\"registry.invalid/pause:3.9\",\"resources\":{"
                  "\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]}}",
                  name, labels, meta);
    }
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        char *bound = sf_wait_bound(fx->h, name);
        on_node += strcmp(bound, node) == 0;
        free(bound);
    }
    return on_node;
}

/* zone-a: one 64-core node, zone-b: one 2-core node. Resource scoring
 * (LeastAllocated, BalancedAllocation) prefers the big node for every pod,
 * as the pods no controller owns show; the six pods of the ReplicaSet get
 * the system default constraints (hostname maxSkew 3, zone maxSkew 5,
 * ScheduleAnyway) with the ReplicaSet's selector and alternate, 3/3. */
static void system_defaults_spread_replicaset(void **state)
{
    sf_fixture *fx = *state;
    char meta[512];

    create_node(fx, "big-a", "zone-a", "64", "256Gi");
    create_node(fx, "small-b", "zone-b", "2", "4Gi");
    char *uid = create_web_replicaset(fx);
    sf_start_scheduler(fx);

    assert_int_equal(create_bound_pods(fx, "solo", 3, "\"app\":\"solo\"", "", "big-a"), 3);
    snprintf(meta, sizeof(meta),
             ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
             "\"ReplicaSet\",\"name\":\"web\",\"uid\":\"%s\",\"controller\":true,"
             "\"blockOwnerDeletion\":true}]",
             uid);
    int on_small = create_bound_pods(fx, "web", 6, "\"app\":\"web\"", meta, "small-b");
    if (on_small != 3)
        fail_msg("ReplicaSet pods on small-b: %d of 6, expected 3", on_small);
    free(uid);
}

int test_group_topology_integration(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, sf_setup, sf_teardown)
    const struct CMUnitTest tests[] = {
        T(anti_affinity_one_replica_per_node),
        T(spread_over_zones),
        T(system_defaults_spread_replicaset),
    };
#undef T
    return cmocka_run_group_tests_name("topology_integration", tests, NULL, NULL);
}
