/*
 * tests/unit/test_cache.c - the scheduler cache (scheduler/cache/cache.h):
 * assume / confirm / forget / expire, resource accounting (init
 * containers, non-zero requests), incremental snapshots (only changed node
 * infos copied, stable zone-interleaved order, affinity lists, deleted
 * nodes), image states.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/cache_testing.h"
#include "framework/types_testing.h"
#include "framework/framework.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"

typedef struct fixture {
    int64_t now;
    sched_cache *c;
    fw_snapshot *s;
} fixture;

static int64_t fake_now(void *ud)
{
    return ((fixture *)ud)->now;
}

static int setup_ttl(void **state, int64_t ttl)
{
    fixture *f = calloc(1, sizeof(*f));
    sched_cache_options o = {ttl, fake_now, f, NULL};
    f->now = 100000;
    assert_int_equal(sched_cache_new(&o, &f->c), KUBE_OK);
    f->s = fw_snapshot_new();
    assert_non_null(f->s);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_ttl(state, 0);
}

static int setup_expiring(void **state)
{
    return setup_ttl(state, 1000);
}

static int teardown(void **state)
{
    fixture *f = *state;
    fw_snapshot_free(f->s);
    sched_cache_free(f->c);
    free(f);
    return 0;
}

static kube_object *decode(const kube_codec *codec, const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *obj = NULL;
    assert_non_null(j);
    assert_int_equal(codec->decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

/* A node in zone (NULL: no zone label) with 4 cpu; images "" or a JSON
 * array body. */
static struct kube_node *make_node(const char *name, const char *zone, const char *images)
{
    char json[1024], labels[256] = "";
    if (zone)
        snprintf(labels, sizeof(labels), "\"topology.kubernetes.io/zone\":\"%s\"", zone);
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":{%s}},\"status\":{"
             "\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},"
             "\"images\":[%s]}}",
             name, name, labels, images ? images : "");
    return (struct kube_node *)decode(&kube_node_codec, json);
}

/* A pod on node (NULL: unassigned); spec is the containers' JSON. */
static struct kube_pod *make_pod(const char *name, const char *node, const char *spec)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},"
             "\"spec\":{\"nodeName\":\"%s\",%s}}",
             name, name, node ? node : "",
             spec ? spec
                  : "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
                    "\"100m\",\"memory\":\"100Mi\"}}}]");
    return (struct kube_pod *)decode(&kube_pod_codec, json);
}

static fw_pod_info *make_pi(const char *name, const char *spec)
{
    struct kube_pod *p = make_pod(name, NULL, spec);
    fw_pod_info *pi = NULL;
    assert_int_equal(fw_pod_info_new(p, &pi), KUBE_OK);
    kube_object_unref(&p->base);
    return pi;
}

static void add_node(fixture *f, const char *name, const char *zone)
{
    struct kube_node *n = make_node(name, zone, NULL);
    assert_int_equal(sched_cache_add_node(f->c, n, NULL), KUBE_OK);
    kube_object_unref(&n->base);
}

static const fw_node_info *snap_node(fixture *f, const char *name)
{
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    return fw_snapshot_get(f->s, name);
}

static int64_t snap_cpu(fixture *f, const char *name)
{
    const fw_node_info *ni = snap_node(f, name);
    assert_non_null(ni);
    return ni->requested.milli_cpu;
}

/* ------------------------------------------------------------------ */

static void assume_then_confirm(void **state)
{
    fixture *f = *state;
    fw_pod_info *pi = make_pi("p", NULL);
    sched_cache_counts c;

    add_node(f, "n1", "a");
    assert_int_equal(snap_cpu(f, "n1"), 0);
    assert_int_equal(sched_cache_assume_pod(f->c, pi, "n1"), KUBE_OK);
    assert_int_equal(sched_cache_assume_pod(f->c, pi, "n1"), KUBE_EEXIST);
    assert_true(sched_cache_is_assumed(f->c, "uid-p"));
    /* the next cycle sees it before the bind completes */
    assert_int_equal(snap_cpu(f, "n1"), 100);
    assert_int_equal(sched_cache_finish_binding(f->c, pi), KUBE_OK);

    struct kube_pod *bound = make_pod("p", "n1", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, bound), KUBE_OK);
    assert_false(sched_cache_is_assumed(f->c, "uid-p"));
    assert_int_equal(snap_cpu(f, "n1"), 100);
    assert_int_equal(snap_node(f, "n1")->n_pods, 1);
    assert_int_equal(sched_cache_add_pod(f->c, bound), KUBE_EEXIST);
    sched_cache_get_counts(f->c, &c);
    assert_int_equal(c.pods, 1);
    assert_int_equal(c.assumed, 0);
    assert_int_equal(c.nodes, 1);

    /* update then remove a confirmed pod */
    struct kube_pod *bigger =
        make_pod("p", "n1",
                 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]");
    assert_int_equal(sched_cache_update_pod(f->c, bound, bigger), KUBE_OK);
    assert_int_equal(snap_cpu(f, "n1"), 1000);
    assert_int_equal(sched_cache_remove_pod(f->c, bigger), KUBE_OK);
    assert_int_equal(snap_cpu(f, "n1"), 0);
    assert_int_equal(sched_cache_remove_pod(f->c, bigger), KUBE_ENOTFOUND);
    kube_object_unref(&bound->base);
    kube_object_unref(&bigger->base);
    fw_pod_info_unref(pi);
}

static void confirm_on_other_node_moves_pod(void **state)
{
    fixture *f = *state;
    fw_pod_info *pi = make_pi("p", NULL);
    char node[64];

    add_node(f, "n1", "a");
    add_node(f, "n2", "a");
    assert_int_equal(sched_cache_assume_pod(f->c, pi, "n1"), KUBE_OK);
    struct kube_pod *bound = make_pod("p", "n2", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, bound), KUBE_OK);
    assert_int_equal(snap_cpu(f, "n1"), 0);
    assert_int_equal(snap_cpu(f, "n2"), 100);
    assert_int_equal(sched_cache_pod_node(f->c, "uid-p", node, sizeof(node)), 1);
    assert_string_equal(node, "n2");
    /* an update of an assumed pod is refused */
    fw_pod_info *q = make_pi("q", NULL);
    struct kube_pod *qb = make_pod("q", "n1", NULL);
    assert_int_equal(sched_cache_assume_pod(f->c, q, "n1"), KUBE_OK);
    assert_int_equal(sched_cache_update_pod(f->c, qb, qb), KUBE_ENOTFOUND);
    kube_object_unref(&qb->base);
    kube_object_unref(&bound->base);
    fw_pod_info_unref(pi);
    fw_pod_info_unref(q);
}

static void forget_assumed_only(void **state)
{
    fixture *f = *state;
    fw_pod_info *pi = make_pi("p", NULL);

    add_node(f, "n1", NULL);
    assert_int_equal(sched_cache_forget_pod(f->c, pi, "n1"), KUBE_ENOTFOUND);
    assert_int_equal(sched_cache_assume_pod(f->c, pi, "n1"), KUBE_OK);
    assert_int_equal(sched_cache_forget_pod(f->c, pi, "n2"), KUBE_EINVAL);
    assert_int_equal(snap_cpu(f, "n1"), 100);
    assert_int_equal(sched_cache_forget_pod(f->c, pi, "n1"), KUBE_OK);
    assert_int_equal(snap_cpu(f, "n1"), 0);
    assert_false(sched_cache_is_assumed(f->c, "uid-p"));
    /* a confirmed pod cannot be forgotten */
    struct kube_pod *bound = make_pod("p", "n1", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, bound), KUBE_OK);
    assert_int_equal(sched_cache_forget_pod(f->c, pi, "n1"), KUBE_ENOTFOUND);
    kube_object_unref(&bound->base);
    fw_pod_info_unref(pi);
}

static void never_expires_without_ttl(void **state)
{
    fixture *f = *state;
    fw_pod_info *pi = make_pi("p", NULL);

    add_node(f, "n1", NULL);
    assert_int_equal(sched_cache_assume_pod(f->c, pi, "n1"), KUBE_OK);
    assert_int_equal(sched_cache_finish_binding(f->c, pi), KUBE_OK);
    f->now += 24LL * 3600 * 1000;
    assert_int_equal(sched_cache_cleanup_assumed(f->c), 0);
    assert_true(sched_cache_is_assumed(f->c, "uid-p"));
    fw_pod_info_unref(pi);
}

static void expires_after_binding_and_ttl(void **state)
{
    fixture *f = *state;
    fw_pod_info *pi = make_pi("p", NULL);

    add_node(f, "n1", NULL);
    assert_int_equal(sched_cache_assume_pod(f->c, pi, "n1"), KUBE_OK);
    f->now += 5000;
    /* binding not finished: never expires */
    assert_int_equal(sched_cache_cleanup_assumed(f->c), 0);
    assert_int_equal(sched_cache_finish_binding(f->c, pi), KUBE_OK);
    f->now += 1000;
    assert_int_equal(sched_cache_cleanup_assumed(f->c), 0);
    f->now += 1;
    assert_int_equal(sched_cache_cleanup_assumed(f->c), 1);
    assert_false(sched_cache_is_assumed(f->c, "uid-p"));
    assert_int_equal(snap_cpu(f, "n1"), 0);
    /* the informer confirming it later re-adds it */
    struct kube_pod *bound = make_pod("p", "n1", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, bound), KUBE_OK);
    assert_int_equal(snap_cpu(f, "n1"), 100);
    kube_object_unref(&bound->base);
    fw_pod_info_unref(pi);
}

static void init_containers_and_non_zero(void **state)
{
    fixture *f = *state;
    add_node(f, "n1", NULL);
    /* containers 100m + 200m (second has no memory), init container 500m:
     * request = max(300m, 500m) = 500m; non-zero memory counts 200Mi for the
     * container without memory */
    struct kube_pod *p = make_pod(
        "p", "n1",
        "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}],"
        "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"100m\","
        "\"memory\":\"1Gi\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}}]");
    assert_int_equal(sched_cache_add_pod(f->c, p), KUBE_OK);
    const fw_node_info *ni = snap_node(f, "n1");
    assert_int_equal(ni->requested.milli_cpu, 500);
    assert_int_equal(ni->requested.memory, 1024LL * 1024 * 1024);
    assert_int_equal(ni->non_zero_requested.memory, 1024LL * 1024 * 1024 + 200LL * 1024 * 1024);
    assert_int_equal(ni->allocatable.milli_cpu, 4000);
    kube_object_unref(&p->base);

    /* a pod with no requests counts only in the non-zero totals */
    struct kube_pod *bare = make_pod("bare", "n1", "\"containers\":[{\"name\":\"c\"}]");
    assert_int_equal(sched_cache_add_pod(f->c, bare), KUBE_OK);
    ni = snap_node(f, "n1");
    assert_int_equal(ni->requested.milli_cpu, 500);
    assert_int_equal(ni->non_zero_requested.milli_cpu, 500 + 100);
    kube_object_unref(&bare->base);
}

static void snapshot_is_incremental(void **state)
{
    fixture *f = *state;
    add_node(f, "a1", "a");
    add_node(f, "a2", "a");
    add_node(f, "b1", "b");
    add_node(f, "c1", "c");
    add_node(f, "b2", "b");
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    /* round robin across zones in first-seen order */
    const char *want[] = {"a1", "b1", "c1", "a2", "b2"};
    assert_int_equal(f->s->n_list, 5);
    for (int i = 0; i < 5; i++)
        assert_string_equal(f->s->list[i]->name, want[i]);

    const fw_node_info *b1 = fw_snapshot_get(f->s, "b1");
    int64_t b1_gen = b1->generation;
    fw_node_info **list_before = f->s->list;
    struct kube_pod *p = make_pod("p", "a2", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, p), KUBE_OK);
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    /* only a2 was copied; the list and other node infos are untouched */
    assert_ptr_equal(fw_snapshot_get(f->s, "b1"), b1);
    assert_int_equal(b1->generation, b1_gen);
    assert_ptr_equal(f->s->list, list_before);
    assert_int_equal(fw_snapshot_get(f->s, "a2")->n_pods, 1);
    assert_true(fw_snapshot_get(f->s, "a2")->generation > b1_gen);
    assert_int_equal(f->s->n_have_pods_with_affinity, 0);

    /* a pod with affinity puts its node in the affinity list */
    struct kube_pod *aff = make_pod(
        "aff", "c1",
        "\"containers\":[{\"name\":\"c\"}],\"affinity\":{\"podAntiAffinity\":{"
        "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{\"matchLabels\":"
        "{\"app\":\"x\"}},\"topologyKey\":\"zone\"}]}}");
    assert_int_equal(sched_cache_add_pod(f->c, aff), KUBE_OK);
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    assert_int_equal(f->s->n_have_pods_with_affinity, 1);
    assert_int_equal(f->s->n_have_pods_with_required_anti_affinity, 1);
    assert_string_equal(f->s->have_pods_with_required_anti_affinity[0]->name, "c1");
    assert_int_equal(sched_cache_remove_pod(f->c, aff), KUBE_OK);
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    assert_int_equal(f->s->n_have_pods_with_affinity, 0);

    /* a deleted node leaves the snapshot; order stays stable */
    struct kube_node *gone = make_node("b1", "b", NULL);
    assert_int_equal(sched_cache_remove_node(f->c, gone), KUBE_OK);
    assert_int_equal(sched_cache_remove_node(f->c, gone), KUBE_ENOTFOUND);
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    const char *want2[] = {"a1", "b2", "c1", "a2"};
    assert_int_equal(f->s->n_list, 4);
    for (int i = 0; i < 4; i++)
        assert_string_equal(f->s->list[i]->name, want2[i]);
    assert_null(fw_snapshot_get(f->s, "b1"));
    kube_object_unref(&gone->base);
    kube_object_unref(&p->base);
    kube_object_unref(&aff->base);
}

static void deleted_node_with_pods(void **state)
{
    fixture *f = *state;
    sched_cache_counts c;

    add_node(f, "n1", NULL);
    struct kube_pod *p = make_pod("p", "n1", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, p), KUBE_OK);
    struct kube_node *n1 = make_node("n1", NULL, NULL);
    assert_int_equal(sched_cache_remove_node(f->c, n1), KUBE_OK);
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    assert_int_equal(f->s->n_list, 0);
    sched_cache_get_counts(f->c, &c);
    assert_int_equal(c.nodes, 0);
    assert_int_equal(c.pods, 1);
    /* the node comes back: its pods are still counted */
    assert_int_equal(sched_cache_add_node(f->c, n1, NULL), KUBE_OK);
    assert_int_equal(snap_cpu(f, "n1"), 100);
    /* a pod whose node is unknown yet: counted once the node appears */
    struct kube_pod *early = make_pod("early", "n9", NULL);
    assert_int_equal(sched_cache_add_pod(f->c, early), KUBE_OK);
    assert_int_equal(sched_cache_update_snapshot(f->c, f->s), KUBE_OK);
    assert_null(fw_snapshot_get(f->s, "n9"));
    fw_node_info *clone = NULL;
    struct kube_node *n9 = make_node("n9", NULL, NULL);
    assert_int_equal(sched_cache_add_node(f->c, n9, &clone), KUBE_OK);
    assert_non_null(clone);
    assert_int_equal(clone->requested.milli_cpu, 100);
    fw_node_info_free(clone);
    assert_int_equal(snap_cpu(f, "n9"), 100);
    kube_object_unref(&n1->base);
    kube_object_unref(&n9->base);
    kube_object_unref(&p->base);
    kube_object_unref(&early->base);
}

static void zone_change_reorders(void **state)
{
    fixture *f = *state;
    add_node(f, "x", "a");
    add_node(f, "y", "a");
    struct kube_node *old = make_node("x", "a", NULL);
    struct kube_node *moved = make_node("x", "b", NULL);
    assert_int_equal(sched_cache_update_node(f->c, old, moved, NULL), KUBE_OK);
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(sched_cache_node_order(f->c, &names, &n), KUBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "y");
    assert_string_equal(names[1], "x");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    kube_object_unref(&old->base);
    kube_object_unref(&moved->base);
}

static void image_states_count_nodes(void **state)
{
    fixture *f = *state;
    const char *img = "{\"names\":[\"registry.invalid/app:1\"],\"sizeBytes\":1000}";
    struct kube_node *n1 = make_node("n1", NULL, img);
    struct kube_node *n2 = make_node("n2", NULL, img);
    assert_int_equal(sched_cache_add_node(f->c, n1, NULL), KUBE_OK);
    assert_int_equal(sched_cache_add_node(f->c, n2, NULL), KUBE_OK);
    const fw_node_info *ni = snap_node(f, "n2");
    const fw_image_state *st = fw_node_info_image(ni, "registry.invalid/app:1");
    assert_non_null(st);
    assert_int_equal(st->size, 1000);
    assert_int_equal(st->num_nodes, 2);
    /* removing one node drops it from the image's node set */
    assert_int_equal(sched_cache_remove_node(f->c, n1), KUBE_OK);
    assert_int_equal(sched_cache_update_node(f->c, n2, n2, NULL), KUBE_OK);
    ni = snap_node(f, "n2");
    assert_int_equal(fw_node_info_image(ni, "registry.invalid/app:1")->num_nodes, 1);
    kube_object_unref(&n1->base);
    kube_object_unref(&n2->base);
}

/* The UID table through growth and tombstones. */
static void many_pods(void **state)
{
    fixture *f = *state;
    enum { N = 600 };
    struct kube_pod *pods[N];
    sched_cache_counts c;
    char name[32];

    add_node(f, "n1", NULL);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        pods[i] = make_pod(name, "n1",
                           "\"containers\":[{\"name\":\"c\",\"resources\":"
                           "{\"requests\":{\"cpu\":\"1m\"}}}]");
        assert_int_equal(sched_cache_add_pod(f->c, pods[i]), KUBE_OK);
    }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i += 2)
            assert_int_equal(sched_cache_remove_pod(f->c, pods[i]), KUBE_OK);
        for (int i = 0; i < N; i += 2)
            assert_int_equal(sched_cache_add_pod(f->c, pods[i]), KUBE_OK);
    }
    sched_cache_get_counts(f->c, &c);
    assert_int_equal(c.pods, N);
    for (int i = 0; i < N; i++) {
        char uid[40];
        snprintf(uid, sizeof(uid), "uid-p%d", i);
        assert_int_equal(sched_cache_pod_node(f->c, uid, name, sizeof(name)), 1);
        assert_string_equal(name, "n1");
    }
    assert_int_equal(snap_cpu(f, "n1"), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(sched_cache_remove_pod(f->c, pods[i]), KUBE_OK);
        kube_object_unref(&pods[i]->base);
    }
    sched_cache_get_counts(f->c, &c);
    assert_int_equal(c.pods, 0);
    assert_int_equal(snap_cpu(f, "n1"), 0);
}

int test_group_cache(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(assume_then_confirm),
        T(confirm_on_other_node_moves_pod),
        T(forget_assumed_only),
        T(never_expires_without_ttl),
        cmocka_unit_test_setup_teardown(expires_after_binding_and_ttl, setup_expiring, teardown),
        T(init_containers_and_non_zero),
        T(snapshot_is_incremental),
        T(deleted_node_with_pods),
        T(zone_change_reorders),
        T(image_states_count_nodes),
        T(many_pods),
    };
#undef T
    return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
