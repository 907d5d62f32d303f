/*
 * tests/unit/test_framework.c - the scheduling framework: statuses and the
 * FailedScheduling message, cycle state, node info accounting, the
 * parallelizer, and the runtime's extension-point semantics with fake
 * plugins.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "framework/framework.h"
#include "framework/framework_testing.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "framework/types_testing.h"
#include "framework/cycle_state_testing.h"
#include "framework/status_testing.h"
#include "plugins/plugins.h"
#include "plugins/registry.h"

/* ------------------------------------------------------------------ */
/* Helpers: decoded pods and nodes                                     */
/* ------------------------------------------------------------------ */

static kube_object *decode(const kube_codec *codec, const char *json)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    kube_object *obj = NULL;
    assert_int_equal(codec->decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

static fw_pod_info *make_pod(const char *name, int priority, const char *cpu,
                             const char *extra_spec)
{
    char json[1024], cpu_req[64] = "";
    if (cpu)
        snprintf(cpu_req, sizeof(cpu_req), "\"cpu\":\"%s\",", cpu);
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},"
             "\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\",\"resources\":"
             "{\"requests\":{%s\"memory\":\"1Gi\",\"example.com/gpu\":\"1\"}}}]%s}}",
             name, name, priority, cpu_req, extra_spec ? extra_spec : "");
    kube_object *obj = decode(&kube_pod_codec, json);
    fw_pod_info *pi = NULL;
    assert_int_equal(fw_pod_info_new((struct kube_pod *)obj, &pi), KUBE_OK);
    kube_object_unref(obj);
    return pi;
}

static fw_node_info *make_node(const char *name)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"zone\":\"a\"}},\"status\":"
             "{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\","
             "\"example.com/gpu\":\"2\"}}}",
             name);
    kube_object *obj = decode(&kube_node_codec, json);
    fw_node_info *ni = fw_node_info_new();
    assert_non_null(ni);
    assert_int_equal(fw_node_info_set_node(ni, (struct kube_node *)obj), KUBE_OK);
    kube_object_unref(obj);
    return ni;
}

static fw_snapshot *make_snapshot(size_t n)
{
    fw_node_info **nodes = calloc(n, sizeof(*nodes));
    char name[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "n%zu", i);
        nodes[i] = make_node(name);
    }
    fw_snapshot *s = NULL;
    assert_int_equal(fw_snapshot_from_nodes(nodes, n, &s), KUBE_OK);
    for (size_t i = 0; i < n; i++)
        fw_node_info_free(nodes[i]);
    free(nodes);
    return s;
}

/* "n17" -> 17 */
static int node_index(const char *name)
{
    int64_t v = -1;
    kube_parse_int64(name + 1, 0, 1000000, &v);
    return (int)v;
}

/* ------------------------------------------------------------------ */
/* Status and FitError                                                 */
/* ------------------------------------------------------------------ */

static void status_basics(void **state)
{
    (void)state;
    assert_null(fw_status_new(FW_SUCCESS, NULL));
    assert_true(fw_status_is_success(NULL));
    assert_false(fw_status_is_unschedulable(NULL));
    fw_status *st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "a");
    assert_int_equal(fw_status_add_reason(st, "b"), KUBE_OK);
    assert_true(fw_status_is_unschedulable(st));
    char msg[64];
    fw_status_message(st, msg, sizeof(msg));
    assert_string_equal(msg, "a, b");
    fw_status_set_plugin(st, "P");
    fw_status *c = fw_status_clone(st);
    fw_status_free(st);
    assert_string_equal(c->reasons[1], "b");
    assert_string_equal(c->plugin, "P");
    fw_status_free(c);
    st = fw_status_error(KUBE_ENOTFOUND, "x %d", 7);
    assert_int_equal(st->code, FW_ERROR);
    assert_int_equal(st->err, KUBE_ENOTFOUND);
    assert_string_equal(st->reasons[0], "x 7");
    fw_status_free(st);
    assert_string_equal(fw_code_string(FW_UNSCHEDULABLE_AND_UNRESOLVABLE),
                        "UnschedulableAndUnresolvable");
    assert_string_equal(fw_code_string(FW_SKIP), "Skip");

    fw_status *parts[3] = {fw_status_new(FW_UNSCHEDULABLE, "u"), NULL,
                           fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "uu")};
    fw_status_set_plugin(parts[2], "P2");
    fw_status *m = fw_status_merge(parts, 3);
    assert_int_equal(m->code, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_string_equal(m->plugin, "P2");
    assert_int_equal(m->n_reasons, 2);
    fw_status_free(m);
    fw_status_free(parts[0]);
    fw_status_free(parts[2]);
    assert_null(fw_status_merge(NULL, 0));
}

static void add_failures(fw_diagnosis *d, const char *reason, int from, int to)
{
    char name[16];
    for (int i = from; i < to; i++) {
        snprintf(name, sizeof(name), "node%d", i);
        assert_int_equal(fw_diagnosis_add_node(d, name, fw_status_new(FW_UNSCHEDULABLE, reason)),
                         KUBE_OK);
    }
}

static void fit_error(int n, fw_diagnosis *d, const char *want)
{
    char *msg = fw_fit_error_message(n, d);
    assert_non_null(msg);
    assert_string_equal(msg, want);
    free(msg);
    fw_diagnosis_clear(d);
}

/* Cases of kube-scheduler's TestFitError plus the histogram ordering. */
static void fit_error_messages(void **state)
{
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    (void)state;
    add_failures(&d, "Node(s) failed PreFilter plugin FalsePreFilter", 0, 3);
    fw_diagnosis_set_pre_filter_msg(&d, "Node(s) failed PreFilter plugin FalsePreFilter");
    fit_error(3, &d, "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.");

    add_failures(&d, "Node(s) failed PreFilter plugin FalsePreFilter", 0, 3);
    fw_diagnosis_set_pre_filter_msg(&d, "Node(s) failed PreFilter plugin FalsePreFilter");
    fw_diagnosis_set_post_filter_msg(&d, "Error running PostFilter plugin FailedPostFilter");
    fit_error(3, &d,
              "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. Error "
              "running PostFilter plugin FailedPostFilter.");

    add_failures(&d, "Node(s) failed Filter plugin FalseFilter-1", 0, 3);
    fit_error(3, &d, "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1.");

    add_failures(&d, "Node(s) failed Filter plugin FalseFilter-1", 0, 3);
    fw_diagnosis_set_post_filter_msg(&d, "Error running PostFilter plugin FailedPostFilter");
    fit_error(3, &d,
              "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. Error "
              "running PostFilter plugin FailedPostFilter.");

    add_failures(&d, "Node(s) failed Filter plugin FalseFilter-1", 0, 2);
    add_failures(&d, "Node(s) failed Filter plugin FalseFilter-2", 2, 3);
    fit_error(3, &d,
              "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, 2 Node(s) "
              "failed Filter plugin FalseFilter-1.");

    /* Sorted as strings: "10 ..." before "2 ...". */
    add_failures(&d, "Insufficient cpu", 0, 2);
    add_failures(&d, "node(s) had untolerated taint {a: b}", 2, 12);
    fit_error(12, &d,
              "0/12 nodes are available: 10 node(s) had untolerated taint {a: b}, 2 "
              "Insufficient cpu.");

    /* A status with two reasons counts both; no reasons, no histogram. */
    fw_status *two = fw_status_new(FW_UNSCHEDULABLE, "Insufficient cpu");
    fw_status_add_reason(two, "Insufficient memory");
    fw_diagnosis_add_node(&d, "a", two);
    add_failures(&d, "Insufficient cpu", 1, 2);
    fit_error(5, &d, "0/5 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.");
    fw_diagnosis_add_node(&d, "a", fw_status_new(FW_UNSCHEDULABLE, NULL));
    fit_error(1, &d, "0/1 nodes are available:");

    /* The preemption suffix: kube-scheduler v1.28 appends the PostFilter
     * message with " %v." too, so a preemption message (itself a FitError
     * text ending in ".") ends in "..", as real FailedScheduling events do. */
    add_failures(&d, "Insufficient cpu", 0, 5);
    fw_diagnosis_set_post_filter_msg(
        &d, "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.");
    fit_error(5, &d,
              "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available: "
              "5 No preemption victims found for incoming pod..");
}

/* A PreFilterResult's explanation: the nodes it left out count with its
 * reason (also against the PreFilter-rejection form, which ignores it), the
 * note follows the summary and precedes the preemption suffix; merged
 * results keep the first explanation. */
static void fit_error_explained(void **state)
{
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    (void)state;
    add_failures(&d, "node(s) were unschedulable", 0, 1);
    assert_int_equal(fw_diagnosis_set_explanation(&d, "node(s) didn't match X", "X says so"),
                     KUBE_OK);
    fw_diagnosis_set_post_filter_msg(&d, "preemption: none.");
    fit_error(4, &d,
              "0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match X. "
              "X says so. preemption: none..");

    add_failures(&d, "a", 0, 2);
    assert_int_equal(fw_diagnosis_set_explanation(&d, "b", NULL), KUBE_OK);
    fit_error(2, &d, "0/2 nodes are available: 2 a.");

    const char *one = "n1", *two[] = {"n1", "n2"};
    fw_pre_filter_result *a = fw_pre_filter_result_new(&one, 1);
    fw_pre_filter_result *b = fw_pre_filter_result_new(two, 2);
    int err = KUBE_OK;
    assert_int_equal(fw_pre_filter_result_explain(b, "r", "note"), KUBE_OK);
    fw_pre_filter_result *m = fw_pre_filter_result_merge(a, b, &err);
    assert_int_equal(err, KUBE_OK);
    assert_int_equal(m->n, 1);
    assert_string_equal(m->excluded_reason, "r");
    assert_string_equal(m->note, "note");
    fw_pre_filter_result_free(m);
    fw_pre_filter_result_free(a);
    fw_pre_filter_result_free(b);
}

/* ------------------------------------------------------------------ */
/* Cycle state                                                         */
/* ------------------------------------------------------------------ */

typedef struct counter {
    int value;
} counter;

static int counters_freed;

static void *counter_clone(const void *p)
{
    counter *c = malloc(sizeof(*c));
    if (c)
        *c = *(const counter *)p;
    return c;
}

static void counter_free(void *p)
{
    counters_freed++;
    free(p);
}

static const fw_state_ops counter_ops = {counter_clone, counter_free};

/* Keys match by content whatever pointer writes or reads them, including a
 * reused buffer that once held another key. */
static void cycle_state_keys_match_by_content(void **state)
{
    (void)state;
    fw_cycle_state *cs = fw_cycle_state_new();
    char buf[32] = "PreFilterNodeAffinity";
    int a = 1, b = 2;

    assert_int_equal(fw_cycle_state_write(cs, buf, &a, NULL), KUBE_OK);
    assert_int_equal(fw_cycle_state_write(cs, "PreFilterNodePorts", &b, NULL), KUBE_OK);
    assert_ptr_equal(fw_cycle_state_read(cs, "PreFilterNodeAffinity"), &a);
    memcpy(buf, "PreFilterNodePorts", sizeof("PreFilterNodePorts"));
    assert_ptr_equal(fw_cycle_state_read(cs, buf), &b);
    memcpy(buf, "PreFilterNodeNothing", sizeof("PreFilterNodeNothing"));
    assert_null(fw_cycle_state_read(cs, buf));
    fw_cycle_state_free(cs);
}

/* read_static finds a key written through its own address, and by content
 * one written through another pointer (a buffer, a clone) or absent. */
static void cycle_state_read_static(void **state)
{
    (void)state;
    static const char key_a[] = "PreFilterA", key_b[] = "PreScoreB";
    fw_cycle_state *cs = fw_cycle_state_new();
    char buf[32] = "PreScoreB";
    int a = 1, b = 2, b2 = 3;

    assert_int_equal(fw_cycle_state_write(cs, key_a, &a, NULL), KUBE_OK);
    assert_int_equal(fw_cycle_state_write(cs, buf, &b, NULL), KUBE_OK);
    assert_ptr_equal(fw_cycle_state_read_static(cs, key_a), &a);
    assert_ptr_equal(fw_cycle_state_read_static(cs, key_b), &b);
    memcpy(buf, "PreFilterA", sizeof("PreFilterA"));
    assert_ptr_equal(fw_cycle_state_read_static(cs, key_b), &b);
    assert_int_equal(fw_cycle_state_write(cs, key_b, &b2, NULL), KUBE_OK);
    assert_ptr_equal(fw_cycle_state_read_static(cs, key_b), &b2);
    fw_cycle_state *cl = fw_cycle_state_clone(cs);
    assert_non_null(cl);
    assert_ptr_equal(fw_cycle_state_read_static(cl, key_a), &a);
    fw_cycle_state_delete(cs, key_a);
    assert_null(fw_cycle_state_read_static(cs, key_a));
    assert_null(fw_cycle_state_read_static(cs, "PreFilterNothing"));
    assert_ptr_equal(fw_cycle_state_read_static(cs, key_b), &b2);
    fw_cycle_state_free(cl);
    fw_cycle_state_free(cs);
}

/* Static reads stay right with more keys than the lookup hints hold (slot
 * collisions, entries past 255), after deletes and in clones. */
static void cycle_state_read_static_many(void **state)
{
    (void)state;
    static char keys[300][16];
    static int vals[300];
    fw_cycle_state *cs = fw_cycle_state_new();
    for (int i = 0; i < 300; i++) {
        snprintf(keys[i], sizeof(keys[i]), "PreFilterK%d", i);
        vals[i] = i;
        assert_int_equal(fw_cycle_state_write(cs, keys[i], &vals[i], NULL), KUBE_OK);
    }
    for (int i = 0; i < 300; i += 2)
        fw_cycle_state_delete(cs, keys[i]);
    fw_cycle_state *cl = fw_cycle_state_clone(cs);
    for (int i = 0; i < 300; i++) {
        assert_ptr_equal(fw_cycle_state_read_static(cs, keys[i]), i % 2 ? &vals[i] : NULL);
        assert_ptr_equal(fw_cycle_state_read_static(cl, keys[i]), i % 2 ? &vals[i] : NULL);
    }
    fw_cycle_state_free(cl);
    fw_cycle_state_free(cs);
}

static void cycle_state_clone(void **state)
{
    (void)state;
    counters_freed = 0;
    fw_cycle_state *cs = fw_cycle_state_new();
    counter *c = malloc(sizeof(*c));
    c->value = 1;
    assert_int_equal(fw_cycle_state_write(cs, "PreFilterA", c, &counter_ops), KUBE_OK);
    assert_ptr_equal(fw_cycle_state_read(cs, "PreFilterA"), c);
    assert_null(fw_cycle_state_read(cs, "PreFilterB"));
    fw_cycle_state_skip_filter_add(cs, "A");
    fw_cycle_state_set_record_plugin_metrics(cs, 1);

    fw_cycle_state *cl = fw_cycle_state_clone(cs);
    counter *cc = fw_cycle_state_read(cl, "PreFilterA");
    assert_non_null(cc);
    assert_ptr_not_equal(cc, c);
    cc->value = 2;
    assert_int_equal(c->value, 1);
    assert_true(fw_cycle_state_skip_filter_has(cl, "A"));
    assert_false(fw_cycle_state_skip_score_has(cl, "A"));
    assert_true(fw_cycle_state_record_plugin_metrics(cl));

    counter *c2 = malloc(sizeof(*c2));
    c2->value = 3;
    assert_int_equal(fw_cycle_state_write(cs, "PreFilterA", c2, &counter_ops), KUBE_OK);
    assert_int_equal(counters_freed, 1);
    fw_cycle_state_delete(cs, "PreFilterA");
    assert_int_equal(counters_freed, 2);
    assert_null(fw_cycle_state_read(cs, "PreFilterA"));
    fw_cycle_state_free(cs);
    fw_cycle_state_free(cl);
    assert_int_equal(counters_freed, 3);
}

/* ------------------------------------------------------------------ */
/* NodeInfo, Snapshot                                                  */
/* ------------------------------------------------------------------ */

static void node_info_accounting(void **state)
{
    (void)state;
    fw_node_info *ni = make_node("n1");
    assert_string_equal(ni->name, "n1");
    assert_int_equal(ni->allocatable.milli_cpu, 4000);
    assert_int_equal(ni->allocatable.allowed_pod_number, 110);
    assert_int_equal(fw_resource_scalar(&ni->allocatable, "example.com/gpu"), 2);
    fw_pod_info *a = make_pod("a", 0, "500m",
                              ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringScheduling"
                              "IgnoredDuringExecution\":[{\"labelSelector\":{},\"topologyKey\":"
                              "\"zone\"}]}}");
    fw_pod_info *b = make_pod("b", 0, NULL, NULL);
    assert_int_equal(a->n_required_anti_affinity_terms, 1);
    assert_string_equal(a->required_anti_affinity_terms[0].namespaces[0], "default");
    int64_t g0 = ni->generation;
    assert_int_equal(fw_node_info_add_pod(ni, a), KUBE_OK);
    assert_int_equal(fw_node_info_add_pod(ni, b), KUBE_OK);
    assert_true(ni->generation > g0);
    assert_int_equal(ni->n_pods, 2);
    assert_int_equal(ni->n_pods_with_affinity, 1);
    assert_int_equal(ni->n_pods_with_required_anti_affinity, 1);
    assert_int_equal(ni->requested.milli_cpu, 500);
    assert_int_equal(ni->requested.memory, 2LL << 30);
    assert_int_equal(fw_resource_scalar(&ni->requested, "example.com/gpu"), 2);
    /* b requests no cpu: the non-zero total counts the 100m default. */
    assert_int_equal(ni->non_zero_requested.milli_cpu, 600);

    fw_node_info *cl = fw_node_info_clone(ni);
    assert_int_equal(cl->generation, ni->generation);
    assert_int_equal(fw_node_info_remove_pod(ni, "uid-a"), KUBE_OK);
    assert_int_equal(fw_node_info_remove_pod(ni, "uid-a"), KUBE_ENOTFOUND);
    assert_int_equal(ni->n_pods, 1);
    assert_int_equal(ni->n_pods_with_affinity, 0);
    assert_int_equal(ni->requested.milli_cpu, 0);
    assert_int_equal(fw_resource_scalar(&ni->requested, "example.com/gpu"), 1);
    assert_int_equal(cl->n_pods, 2);
    assert_int_equal(cl->requested.milli_cpu, 500);

    fw_host_ports hp = {0};
    fw_host_ports_add(&hp, "", "", 8080);
    assert_true(fw_host_ports_conflict(&hp, "10.0.0.1", "TCP", 8080));
    assert_false(fw_host_ports_conflict(&hp, "10.0.0.1", "UDP", 8080));
    fw_host_ports_remove(&hp, "0.0.0.0", "TCP", 8080);
    fw_host_ports_add(&hp, "10.0.0.1", "TCP", 80);
    assert_true(fw_host_ports_conflict(&hp, "0.0.0.0", "TCP", 80));
    assert_false(fw_host_ports_conflict(&hp, "10.0.0.2", "TCP", 80));
    fw_host_ports_free(&hp);

    fw_pod_info_unref(a);
    fw_pod_info_unref(b);
    fw_node_info_free(ni);
    fw_node_info_free(cl);
}

static void snapshot_incremental(void **state)
{
    (void)state;
    fw_snapshot *s = make_snapshot(3);
    assert_int_equal(fw_snapshot_num_nodes(s), 3);
    assert_string_equal(s->list[1]->name, "n1");
    const fw_node_info *n1 = fw_snapshot_get(s, "n1");
    assert_non_null(n1);

    fw_node_info *src = fw_node_info_clone(n1);
    fw_pod_info *a = make_pod("a", 0, "1",
                              ",\"affinity\":{\"podAffinity\":{\"requiredDuring"
                              "SchedulingIgnoredDuringExecution\":[{\"labelSelector\":"
                              "{},\"topologyKey\":\"zone\"}]}}");
    fw_node_info_add_pod(src, a);
    int added = -1, aff = -1, anti = -1;
    assert_int_equal(fw_snapshot_upsert(s, src, &added, &aff, &anti), KUBE_OK);
    assert_int_equal(added, 0);
    assert_int_equal(aff, 1);
    assert_int_equal(anti, 0);
    /* The snapshot keeps its node info object: list pointers stay valid. */
    assert_ptr_equal(fw_snapshot_get(s, "n1"), n1);
    assert_int_equal(n1->n_pods, 1);
    assert_int_equal(s->generation, src->generation);
    assert_int_equal(fw_snapshot_rebuild_affinity_lists(s), KUBE_OK);
    assert_int_equal(s->n_have_pods_with_affinity, 1);

    fw_snapshot_remove(s, "n0");
    const char *order[] = {"n2", "n1", "n0"};
    assert_int_equal(fw_snapshot_rebuild_lists(s, order, 3), KUBE_OK);
    assert_int_equal(s->n_list, 2);
    assert_string_equal(s->list[0]->name, "n2");
    fw_pod_info_unref(a);
    fw_node_info_free(src);
    fw_snapshot_free(s);
}

/* ------------------------------------------------------------------ */
/* Parallelizer                                                        */
/* ------------------------------------------------------------------ */

typedef struct par_job {
    atomic_int *hits;
    atomic_int count;
} par_job;

static void par_piece(void *ud, size_t i)
{
    par_job *j = ud;
    atomic_fetch_add(&j->hits[i], 1);
    atomic_fetch_add(&j->count, 1);
}

static void parallelize_covers_all(void **state)
{
    (void)state;
    assert_int_equal(fw_chunk_size_for(5000, 16), 70);
    assert_int_equal(fw_chunk_size_for(10, 16), 1);
    assert_int_equal(fw_chunk_size_for(100, 16), 7);
    fw_parallelizer *p;
    assert_int_equal(fw_parallelizer_new(0, &p), KUBE_EINVAL);
    assert_int_equal(fw_parallelizer_new(4, &p), KUBE_OK);
    static const size_t sizes[] = {
        0, 1, 37, 299, FW_PARALLEL_MIN_PIECES - 1, FW_PARALLEL_MIN_PIECES, 5000};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        par_job j;
        j.hits = calloc(n + 1, sizeof(atomic_int));
        atomic_init(&j.count, 0);
        fw_parallelize(p, n, par_piece, &j, NULL);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(atomic_load(&j.hits[i]), 1);
        free(j.hits);
    }
    /* A set stop flag runs no chunk. */
    atomic_int stop;
    atomic_init(&stop, 1);
    par_job j;
    j.hits = calloc(100, sizeof(atomic_int));
    atomic_init(&j.count, 0);
    fw_parallelize(p, 100, par_piece, &j, &stop);
    assert_int_equal(atomic_load(&j.count), 0);
    free(j.hits);
    fw_parallelizer_free(p);
}

static _Thread_local size_t pieces_here; /* pieces this thread ran, not yet reported */

static void count_piece(void *ud, size_t i)
{
    (void)ud;
    (void)i;
    pieces_here++;
}

/* done: reports this thread's pieces. */
static void report_pieces(void *ud)
{
    atomic_fetch_add((atomic_size_t *)ud, pieces_here);
    pieces_here = 0;
}

/* fw_parallelize_done() runs done on every thread that ran pieces, after
 * them and before it returns; serial and empty jobs call it once. */
static void parallelize_done_per_thread(void **state)
{
    (void)state;
    fw_parallelizer *p;
    assert_int_equal(fw_parallelizer_new(4, &p), KUBE_OK);
    static const size_t sizes[] = {0, 37, FW_PARALLEL_MIN_PIECES, 3 * FW_PARALLEL_MIN_PIECES};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        atomic_size_t reported;
        atomic_init(&reported, 0);
        fw_parallelize_done(p, sizes[k], count_piece, &reported, NULL, report_pieces);
        assert_int_equal(atomic_load(&reported), sizes[k]);
        assert_int_equal(pieces_here, 0);
    }
    fw_parallelizer_free(p);
}

/* kube-scheduler's TestNumFeasibleNodesToFind. */
static void num_feasible_nodes(void **state)
{
    (void)state;
    assert_int_equal(fw_num_feasible_nodes_to_find(-1, 0, 10), 10);
    assert_int_equal(fw_num_feasible_nodes_to_find(40, 0, 10), 10);
    assert_int_equal(fw_num_feasible_nodes_to_find(-1, 0, 1000), 420);
    assert_int_equal(fw_num_feasible_nodes_to_find(40, 0, 1000), 400);
    assert_int_equal(fw_num_feasible_nodes_to_find(40, 100, 1000), 400);
    assert_int_equal(fw_num_feasible_nodes_to_find(-1, 40, 1000), 400);
    assert_int_equal(fw_num_feasible_nodes_to_find(-1, 0, 6000), 300);
    assert_int_equal(fw_num_feasible_nodes_to_find(40, 0, 6000), 2400);
    assert_int_equal(fw_num_feasible_nodes_to_find(-1, 0, 5000), 500);
    assert_int_equal(fw_num_feasible_nodes_to_find(-1, 1, 1000), 100);
}

static void pre_filter_result_merge(void **state)
{
    (void)state;
    const char *a[] = {"n3", "n1", "n2", "n1"};
    const char *b[] = {"n4", "n2", "n3"};
    fw_pre_filter_result *ra = fw_pre_filter_result_new(a, 4);
    fw_pre_filter_result *rb = fw_pre_filter_result_new(b, 3);
    assert_int_equal(ra->n, 3);
    int err;
    fw_pre_filter_result *m = fw_pre_filter_result_merge(NULL, NULL, &err);
    assert_null(m);
    m = fw_pre_filter_result_merge(ra, NULL, &err);
    assert_int_equal(m->n, 3);
    fw_pre_filter_result_free(m);
    m = fw_pre_filter_result_merge(ra, rb, &err);
    assert_int_equal(m->n, 2);
    assert_string_equal(m->node_names[0], "n2");
    assert_string_equal(m->node_names[1], "n3");
    assert_true(fw_pre_filter_result_has(m, "n3"));
    assert_false(fw_pre_filter_result_has(m, "n1"));
    assert_true(fw_pre_filter_result_has(NULL, "n1"));
    fw_pre_filter_result_free(m);
    fw_pre_filter_result_free(ra);
    fw_pre_filter_result_free(rb);
}

/* ------------------------------------------------------------------ */
/* Fake plugins                                                        */
/* ------------------------------------------------------------------ */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char call_log[1024];

static void log_call(const char *what)
{
    pthread_mutex_lock(&log_mu);
    size_t len = strlen(call_log);
    snprintf(call_log + len, sizeof(call_log) - len, "%s%s", len ? "," : "", what);
    pthread_mutex_unlock(&log_mu);
}

static int fake_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                       size_t errlen)
{
    *self = h;
    return KUBE_OK;
}

static int sort_less(void *self, const fw_queued_pod_info *a, const fw_queued_pod_info *b)
{
    return a->pi->priority > b->pi->priority;
}

static int bind1_skip;
static fw_status *bind1(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    log_call("Bind1");
    return bind1_skip ? fw_status_new(FW_SKIP, NULL) : NULL;
}

static fw_status *bind2(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    log_call("Bind2");
    return NULL;
}

static fw_status *result_of(fw_pre_filter_result **r, const char *const *names, size_t n)
{
    *r = fw_pre_filter_result_new(names, n);
    return NULL;
}

static fw_status *pf_a(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                       fw_pre_filter_result **r)
{
    return result_of(r, (const char *const[]){"n1", "n2", "n3"}, 3);
}

static fw_status *pf_b(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                       fw_pre_filter_result **r)
{
    return result_of(r, (const char *const[]){"n2", "n3", "n4"}, 3);
}

static fw_status *pf_c(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                       fw_pre_filter_result **r)
{
    return result_of(r, (const char *const[]){"n9"}, 1);
}

static fw_status *pf_empty(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                           fw_pre_filter_result **r)
{
    return result_of(r, NULL, 0);
}

static fw_status *pf_skip(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                          fw_pre_filter_result **r)
{
    return fw_status_new(FW_SKIP, NULL);
}

static fw_status *pf_reject(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            fw_pre_filter_result **r)
{
    return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "rejected by PreFilter");
}

static fw_status *filter_all(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                             const fw_node_info *ni)
{
    return fw_status_new(FW_UNSCHEDULABLE, "rejects everything");
}

/* The first calls of FilterThree ('3') and Fit ('F'), in order (tests
 * without a parallelizer, which filter on one thread). */
static char filter_trace[9];
static size_t filter_trace_n;

static void trace_filter(char c)
{
    if (filter_trace_n < sizeof(filter_trace) - 1)
        filter_trace[filter_trace_n++] = c;
}

static fw_status *filter_three(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                               const fw_node_info *ni)
{
    trace_filter('3');
    if (node_index(ni->name) % 3 == 0)
        return fw_status_new(FW_UNSCHEDULABLE, "node(s) were divisible by three");
    return NULL;
}

static fw_status *filter_fit(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                             const fw_node_info *ni)
{
    trace_filter('F');
    if (ni->requested.milli_cpu + pod->request.milli_cpu > ni->allocatable.milli_cpu)
        return fw_status_new(FW_UNSCHEDULABLE, "Insufficient cpu");
    return NULL;
}

static fw_status *score_idx(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *ni, int64_t *score)
{
    *score = node_index(ni->name);
    return NULL;
}

static fw_status *normalize_max(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                fw_node_score *scores, size_t n)
{
    int64_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max)
            max = scores[i].score;
    for (size_t i = 0; i < n && max; i++)
        scores[i].score = scores[i].score * FW_MAX_NODE_SCORE / max;
    return NULL;
}

static fw_status *score_const(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_node_info *ni, int64_t *score)
{
    *score = 10;
    return NULL;
}

/* ScoreList: score_idx node by node, and the same for a whole list;
 * counts both and fails the list when score_list_fails. */
static atomic_int score_list_calls, score_node_calls;
static int score_list_fails;

static fw_status *score_idx_counted(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                    const fw_node_info *ni, int64_t *score)
{
    atomic_fetch_add(&score_node_calls, 1);
    return score_idx(self, cs, pod, ni, score);
}

static fw_status *score_idx_list(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                 const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    atomic_fetch_add(&score_list_calls, 1);
    if (score_list_fails)
        return fw_status_new(FW_ERROR, "not as a list");
    for (size_t i = 0; i < n; i++)
        scores[i].score = node_index(nodes[i]->name);
    return NULL;
}

static fw_status *score_bad(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *ni, int64_t *score)
{
    *score = 101;
    return NULL;
}

static int reserve_fail_r2;
static fw_status *reserve_named(const char *name)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "Reserve:%s", name);
    log_call(buf);
    if (reserve_fail_r2 && strcmp(name, "R2") == 0)
        return fw_status_new(FW_UNSCHEDULABLE, "no room");
    return NULL;
}

static void unreserve_named(const char *name)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "Unreserve:%s", name);
    log_call(buf);
}

#define RESERVE_PLUGIN(N)                                                                 \
    static fw_status *reserve_##N(void *self, fw_cycle_state *cs, const fw_pod_info *pod, \
                                  const char *node)                                       \
    {                                                                                     \
        return reserve_named(#N);                                                         \
    }                                                                                     \
    static void unreserve_##N(void *self, fw_cycle_state *cs, const fw_pod_info *pod,     \
                              const char *node)                                           \
    {                                                                                     \
        unreserve_named(#N);                                                              \
    }
RESERVE_PLUGIN(R1)
RESERVE_PLUGIN(R2)
RESERVE_PLUGIN(R3)

static int64_t permit_timeout_ms = 10000;
static fw_status *permit_wait(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                              const char *node, int64_t *timeout_ms)
{
    *timeout_ms = permit_timeout_ms;
    return fw_status_new(FW_WAIT, NULL);
}

static fw_status *permit_deny(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                              const char *node, int64_t *timeout_ms)
{
    return fw_status_new(FW_UNSCHEDULABLE, "denied");
}

static const fw_cluster_event_with_hint node_events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE_NODE_LABEL, "NodeAdd"}, NULL},
};

static size_t three_events(void *self, const fw_cluster_event_with_hint **out)
{
    *out = node_events;
    return 1;
}

static const fw_plugin_desc p_sort = {.name = "Sort", .create = fake_create, .less = sort_less};
static const fw_plugin_desc p_bind1 = {.name = "Bind1", .create = fake_create, .bind = bind1};
static const fw_plugin_desc p_bind2 = {.name = "Bind2", .create = fake_create, .bind = bind2};
static const fw_plugin_desc p_pfa = {.name = "PFA", .create = fake_create, .pre_filter = pf_a};
static const fw_plugin_desc p_pfb = {.name = "PFB", .create = fake_create, .pre_filter = pf_b};
static const fw_plugin_desc p_pfc = {.name = "PFC", .create = fake_create, .pre_filter = pf_c};
static const fw_plugin_desc p_pfempty = {
    .name = "PFEmpty", .create = fake_create, .pre_filter = pf_empty};
static const fw_plugin_desc p_pfskip = {
    .name = "PFSkip", .create = fake_create, .pre_filter = pf_skip, .filter = filter_all};
static const fw_plugin_desc p_pfreject = {
    .name = "PFReject", .create = fake_create, .pre_filter = pf_reject};
static const fw_plugin_desc p_all = {
    .name = "FilterAll", .create = fake_create, .filter = filter_all};
static const fw_plugin_desc p_three = {.name = "FilterThree",
                                       .create = fake_create,
                                       .filter = filter_three,
                                       .events_to_register = three_events};
static const fw_plugin_desc p_fit = {.name = "Fit", .create = fake_create, .filter = filter_fit};
static const fw_plugin_desc p_sidx = {.name = "ScoreIdx",
                                      .create = fake_create,
                                      .score = score_idx,
                                      .normalize_score = normalize_max};
static const fw_plugin_desc p_sconst = {
    .name = "ScoreConst", .create = fake_create, .score = score_const};
static const fw_plugin_desc p_slist = {.name = "ScoreList",
                                       .create = fake_create,
                                       .score = score_idx_counted,
                                       .score_nodes = score_idx_list};
static const fw_plugin_desc p_sbad = {
    .name = "ScoreBad", .create = fake_create, .score = score_bad};
static const fw_plugin_desc p_r1 = {
    .name = "R1", .create = fake_create, .reserve = reserve_R1, .unreserve = unreserve_R1};
static const fw_plugin_desc p_r2 = {
    .name = "R2", .create = fake_create, .reserve = reserve_R2, .unreserve = unreserve_R2};
static const fw_plugin_desc p_r3 = {
    .name = "R3", .create = fake_create, .reserve = reserve_R3, .unreserve = unreserve_R3};
static const fw_plugin_desc p_pwait = {
    .name = "PermitWait", .create = fake_create, .permit = permit_wait};
static const fw_plugin_desc p_pwait2 = {
    .name = "PermitWait2", .create = fake_create, .permit = permit_wait};
static const fw_plugin_desc p_pdeny = {
    .name = "PermitDeny", .create = fake_create, .permit = permit_deny};

/* Asynchronous Bind and the binding_may_block hooks. */
static int async_fail, async_refuse, pre_bind_blocks;

static fw_status *async_bind(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             const char *node, void (*done)(void *ud, fw_status *st), void *ud)
{
    log_call("AsyncBind");
    if (async_refuse)
        return fw_status_error(KUBE_ECANCELED, "not started");
    done(ud, async_fail ? fw_status_error(KUBE_EIO, "boom") : NULL);
    return NULL;
}

static fw_status *pre_bind_ok(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                              const char *node)
{
    log_call("PreBindLight");
    return NULL;
}

static int pre_bind_may_block(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const char *node)
{
    return pre_bind_blocks;
}

static void post_bind_plain(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const char *node)
{
    log_call("PostBindPlain");
}

static const fw_plugin_desc p_abind = {
    .name = "AsyncBind", .create = fake_create, .bind = bind2, .bind_async = async_bind};
static const fw_plugin_desc p_prebind = {.name = "PreBindLight",
                                         .create = fake_create,
                                         .pre_bind = pre_bind_ok,
                                         .binding_may_block = pre_bind_may_block};
static const fw_plugin_desc p_postbind = {
    .name = "PostBindPlain", .create = fake_create, .post_bind = post_bind_plain};

static const fw_plugin_desc *const fake_list[] = {
    &p_abind, &p_prebind, &p_postbind, &p_sort,     &p_bind1, &p_bind2, &p_pfa,
    &p_pfb,   &p_pfc,     &p_pfskip,   &p_pfreject, &p_all,   &p_three, &p_fit,
    &p_sidx,  &p_sconst,  &p_sbad,     &p_slist,    &p_r1,    &p_r2,    &p_r3,
    &p_pwait, &p_pwait2,  &p_pdeny,    &p_pfempty,
};
static const fw_registry fake_registry = {fake_list, sizeof(fake_list) / sizeof(fake_list[0]),
                                          NULL};

/* Profiles built in code: Sort and Bind1 are always there. */
static void prof_add(sched_profile *p, sched_ext_point ep, int disabled, const char *name,
                     int weight)
{
    sched_plugin_set *s = &p->plugins[ep];
    sched_plugin **l = disabled ? &s->disabled : &s->enabled;
    size_t *n = disabled ? &s->n_disabled : &s->n_enabled;
    *l = realloc(*l, (*n + 1) * sizeof(sched_plugin));
    (*l)[*n].name = strdup(name);
    (*l)[*n].weight = weight;
    (*n)++;
}

/* Built in code with no args, a profile is resolved by construction. */
static sched_profile *prof_new(void)
{
    sched_profile *p = calloc(1, sizeof(*p));
    p->resolved = 1;
    p->scheduler_name = strdup("test-scheduler");
    prof_add(p, SCHED_EP_QUEUE_SORT, 0, "Sort", 0);
    prof_add(p, SCHED_EP_BIND, 0, "Bind1", 0);
    return p;
}

static void prof_free(sched_profile *p)
{
    for (int e = 0; e < SCHED_EP_COUNT; e++) {
        for (size_t i = 0; i < p->plugins[e].n_enabled; i++)
            free(p->plugins[e].enabled[i].name);
        for (size_t i = 0; i < p->plugins[e].n_disabled; i++)
            free(p->plugins[e].disabled[i].name);
        free(p->plugins[e].enabled);
        free(p->plugins[e].disabled);
    }
    free(p->scheduler_name);
    free(p);
}

static fw_framework *fw_from(sched_profile *p, const fw_services *svc)
{
    fw_framework *fw = NULL;
    char err[512] = "";
    int rc = fw_framework_new(p, &fake_registry, svc, &fw, err, sizeof(err));
    if (rc != KUBE_OK)
        fail_msg("fw_framework_new: %s", err);
    prof_free(p);
    return fw;
}

static void expect_build_error(sched_profile *p, const char *want)
{
    fw_framework *fw = NULL;
    char err[512] = "";
    assert_int_equal(fw_framework_new(p, &fake_registry, NULL, &fw, err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_null(fw);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
    prof_free(p);
}

static void plugins_at(fw_framework *fw, fw_point pt, const char *want)
{
    const char *names[16];
    size_t n = fw_framework_plugins_at(fw, pt, names, 16);
    char got[256] = "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(got);
        snprintf(got + len, sizeof(got) - len, "%s%s", i ? "," : "", names[i]);
    }
    assert_string_equal(got, want);
}

/* ------------------------------------------------------------------ */
/* Runtime tests                                                       */
/* ------------------------------------------------------------------ */

static void build_errors(void **state)
{
    (void)state;
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "Sort", 0);
    expect_build_error(p, "plugin \"Sort\" does not extend FilterPlugin plugin");

    p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterAll", 0);
    prof_add(p, SCHED_EP_FILTER, 0, "FilterAll", 0);
    expect_build_error(p, "plugin \"FilterAll\" already registered as \"FilterPlugin\"");

    p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "Nope", 0);
    expect_build_error(p, "plugin \"Nope\" does not exist");

    p = prof_new();
    prof_add(p, SCHED_EP_QUEUE_SORT, 0, "Sort", 0);
    expect_build_error(p, "already registered");

    p = calloc(1, sizeof(*p));

    p->resolved = 1;
    p->scheduler_name = strdup("x");
    prof_add(p, SCHED_EP_BIND, 0, "Bind1", 0);
    expect_build_error(p, "only one queue sort plugin required for profile with scheduler name "
                          "\"x\", but got 0");

    p = calloc(1, sizeof(*p));

    p->resolved = 1;
    p->scheduler_name = strdup("x");
    prof_add(p, SCHED_EP_QUEUE_SORT, 0, "Sort", 0);
    expect_build_error(p,
                       "at least one bind plugin is needed for profile with scheduler name \"x\"");

    p = prof_new();
    prof_add(p, SCHED_EP_MULTI_POINT, 0, "FilterThree", 0);
    prof_add(p, SCHED_EP_MULTI_POINT, 0, "FilterThree", 0);
    expect_build_error(p, "plugin \"FilterThree\" already registered as \"FilterPlugin\"");
}

static void multi_point_expansion(void **state)
{
    (void)state;
    sched_profile *p = calloc(1, sizeof(*p));
    p->resolved = 1;
    p->scheduler_name = strdup("mp");
    const char *mp[] = {"Sort",       "Bind1", "FilterThree", "ScoreIdx",
                        "ScoreConst", "Fit",   "R1",          "R2"};
    int weights[] = {0, 0, 0, 3, 0, 0, 0, 0};
    for (size_t i = 0; i < 8; i++)
        prof_add(p, SCHED_EP_MULTI_POINT, 0, mp[i], weights[i]);
    /* Explicit filter list: FilterThree overrides its multiPoint entry and
     * keeps its explicit position first; FilterAll is explicit only. */
    prof_add(p, SCHED_EP_FILTER, 0, "FilterAll", 0);
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    prof_add(p, SCHED_EP_FILTER, 1, "Fit", 0);
    /* Score: ScoreConst re-configured with weight 5. */
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreConst", 5);
    /* Reserve: "*" disables every multiPoint plugin there. */
    prof_add(p, SCHED_EP_RESERVE, 1, "*", 0);
    prof_add(p, SCHED_EP_RESERVE, 0, "R3", 0);
    fw_framework *fw = fw_from(p, NULL);
    plugins_at(fw, FW_PT_QUEUE_SORT, "Sort");
    plugins_at(fw, FW_PT_BIND, "Bind1");
    plugins_at(fw, FW_PT_FILTER, "FilterThree,FilterAll");
    plugins_at(fw, FW_PT_SCORE, "ScoreConst,ScoreIdx");
    plugins_at(fw, FW_PT_RESERVE, "R3");
    assert_int_equal(fw_framework_score_weight(fw, "ScoreConst"), 5);
    assert_int_equal(fw_framework_score_weight(fw, "ScoreIdx"), 3);
    assert_true(fw_framework_has_plugin(fw, "Fit"));
    assert_true(fw_framework_has_plugin(fw, "R1"));
    fw_framework_free(fw);

    /* A score plugin enabled without weight gets 1. */
    p = prof_new();
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreIdx", 0);
    fw = fw_from(p, NULL);
    assert_int_equal(fw_framework_score_weight(fw, "ScoreIdx"), 1);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreIdx", INT32_MAX);
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreConst", INT32_MAX);
    fw_framework *none = NULL;
    char err[256];
    /* 2 * (2^31-1) * 100 fits in int64: no overflow error. */
    assert_int_equal(fw_framework_new(p, &fake_registry, NULL, &none, err, sizeof(err)), KUBE_OK);
    fw_framework_free(none);
    prof_free(p);
}

typedef struct ev_count {
    int wildcard, node_add;
} ev_count;

static void count_event(void *ud, const char *plugin, void *self,
                        const fw_cluster_event_with_hint *ev)
{
    ev_count *c = ud;
    if (strcmp(ev->event.resource, FW_GVK_WILDCARD) == 0 && ev->event.action == FW_ACT_ALL)
        c->wildcard++;
    if (strcmp(plugin, "FilterThree") == 0 && strcmp(ev->event.resource, FW_GVK_NODE) == 0)
        c->node_add++;
}

static void events_to_register(void **state)
{
    (void)state;
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    fw_framework *fw = fw_from(p, NULL);
    ev_count c = {0, 0};
    fw_framework_foreach_event(fw, count_event, &c);
    assert_int_equal(c.node_add, 1);
    assert_int_equal(c.wildcard, 2); /* Sort and Bind1 have no hook */
    fw_framework_free(fw);
}

static void pre_filter_semantics(void **state)
{
    (void)state;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *r = NULL;

    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFA", 0);
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFB", 0);
    fw_framework *fw = fw_from(p, NULL);
    assert_null(fw_framework_run_pre_filter(fw, cs, pod, &r));
    assert_non_null(r);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->node_names[0], "n2");
    fw_pre_filter_result_free(r);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFA", 0);
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFB", 0);
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFC", 0);
    fw = fw_from(p, NULL);
    fw_status *st = fw_framework_run_pre_filter(fw, cs, pod, &r);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(st->reasons[0],
                        "node(s) didn't satisfy plugin(s) [PFA PFB PFC] simultaneously");
    assert_null(r);
    fw_status_free(st);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFEmpty", 0);
    fw = fw_from(p, NULL);
    st = fw_framework_run_pre_filter(fw, cs, pod, &r);
    assert_string_equal(st->reasons[0], "node(s) didn't satisfy plugin PFEmpty");
    assert_null(st->plugin);
    fw_status_free(st);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFSkip", 0);
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFA", 0);
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFC", 0);
    prof_add(p, SCHED_EP_FILTER, 0, "PFSkip", 0);
    fw = fw_from(p, NULL);
    st = fw_framework_run_pre_filter(fw, cs, pod, &r);
    assert_string_equal(st->reasons[0],
                        "node(s) didn't satisfy plugin(s) [PFA PFC] simultaneously");
    fw_status_free(st);
    assert_true(fw_cycle_state_skip_filter_has(cs, "PFSkip"));
    fw_node_info *ni = make_node("n1");
    /* PFSkip's Filter (which rejects everything) is skipped. */
    assert_null(fw_framework_run_filter(fw, cs, pod, ni));
    /* ... and runs again once the skip set no longer names it. */
    fw_cycle_state_skip_filter_clear(cs);
    st = fw_framework_run_filter(fw, cs, pod, ni);
    assert_non_null(st);
    assert_string_equal(st->plugin, "PFSkip");
    fw_status_free(st);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFReject", 0);
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFA", 0);
    fw = fw_from(p, NULL);
    st = fw_framework_run_pre_filter(fw, cs, pod, &r);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_string_equal(st->plugin, "PFReject");
    assert_null(r);
    assert_false(fw_cycle_state_skip_filter_has(cs, "PFSkip"));
    fw_status_free(st);
    fw_framework_free(fw);

    /* Filters stop at the first failure, which names its plugin. */
    p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    prof_add(p, SCHED_EP_FILTER, 0, "FilterAll", 0);
    fw = fw_from(p, NULL);
    fw_node_info *n3 = make_node("n3");
    st = fw_framework_run_filter(fw, cs, pod, n3);
    assert_string_equal(st->plugin, "FilterThree");
    assert_int_equal(st->n_reasons, 1);
    fw_status_free(st);
    st = fw_framework_run_filter(fw, cs, pod, ni);
    assert_string_equal(st->plugin, "FilterAll");
    fw_status_free(st);
    fw_framework_free(fw);

    fw_node_info_free(ni);
    fw_node_info_free(n3);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
}

static void names_of(const fw_node_info **nodes, size_t n, kube_buf *out)
{
    kube_buf_reset(out);
    for (size_t i = 0; i < n; i++)
        kube_buf_printf(out, "%s,", nodes[i]->name);
}

static void filter_parallel_equals_serial(void **state)
{
    (void)state;
    fw_parallelizer *par;
    assert_int_equal(fw_parallelizer_new(4, &par), KUBE_OK);
    fw_services svc = {0};
    svc.parallelizer = par;
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    fw_framework *fw_par = fw_from(p, &svc);
    p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    fw_framework *fw_ser = fw_from(p, NULL);

    fw_snapshot *snap = make_snapshot(300);
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_sched_state st_par = {0}, st_ser = {0};
    kube_buf a = KUBE_BUF_INIT, b = KUBE_BUF_INIT;
    for (int round = 0; round < 4; round++) {
        fw_cycle_state *cs = fw_cycle_state_new();
        fw_diagnosis d1 = FW_DIAGNOSIS_INIT, d2 = FW_DIAGNOSIS_INIT;
        const fw_node_info **f1, **f2;
        size_t n1, n2;
        assert_null(
            fw_framework_find_nodes_that_fit(fw_par, cs, pod, snap, &st_par, &d1, &f1, &n1));
        assert_null(
            fw_framework_find_nodes_that_fit(fw_ser, cs, pod, snap, &st_ser, &d2, &f2, &n2));
        /* 300 nodes: 48% -> 144 feasible nodes wanted. */
        assert_int_equal(n1, 144);
        assert_int_equal(n2, 144);
        names_of(f1, n1, &a);
        names_of(f2, n2, &b);
        assert_string_equal(a.data, b.data);
        for (size_t i = 0; i < n1; i++)
            assert_true(node_index(f1[i]->name) % 3 != 0);
        assert_int_equal(d1.n_nodes, d2.n_nodes);
        assert_int_equal(st_par.next_start_node_index, st_ser.next_start_node_index);
        assert_int_equal(d1.n_unschedulable_plugins, 1);
        assert_string_equal(d1.unschedulable_plugins[0], "FilterThree");
        assert_string_equal(d1.nodes[0].status->plugin, "FilterThree");
        if (round == 0) {
            /* From index 0: n0..n215 hold 144 non-multiples of three. */
            assert_int_equal(d1.n_nodes, 72);
            assert_int_equal(st_par.next_start_node_index, 216);
            assert_string_equal(f1[0]->name, "n1");
        }
        free(f1);
        free(f2);
        fw_diagnosis_clear(&d1);
        fw_diagnosis_clear(&d2);
        fw_cycle_state_free(cs);
    }
    kube_buf_free(&a);
    kube_buf_free(&b);
    fw_pod_info_unref(pod);
    fw_snapshot_free(snap);
    fw_framework_free(fw_par);
    fw_framework_free(fw_ser);
    fw_parallelizer_free(par);
}

/* Test metrics hooks: direct plugin observations, and deferred ones kept
 * per thread until flushed. */
static atomic_int obs_direct, obs_deferred, obs_flushed;
static _Thread_local int obs_pending;

static void obs_plugin(void *ud, const char *plugin, const char *point, const char *status,
                       double seconds)
{
    (void)ud, (void)plugin, (void)status;
    assert_true(seconds >= 0);
    if (strcmp(point, "Filter") == 0 || strcmp(point, "Score") == 0)
        atomic_fetch_add(&obs_direct, 1);
}

static void obs_defer(void *ud, const char *plugin, const char *point, const char *status,
                      double seconds)
{
    (void)ud, (void)plugin, (void)status;
    assert_true(seconds >= 0);
    assert_true(strcmp(point, "Filter") == 0 || strcmp(point, "Score") == 0);
    atomic_fetch_add(&obs_deferred, 1);
    obs_pending++;
}

static void obs_flush(void *ud)
{
    (void)ud;
    atomic_fetch_add(&obs_flushed, obs_pending);
    obs_pending = 0;
}

/* In a sampled cycle the Filter and Score loops defer their plugin
 * durations, one per plugin run, and flush them all - on every thread of
 * a parallel filter - before returning; outside the scheduling loop (e.g.
 * preemption's dry runs) Filter observes directly. */
static void plugin_metrics_deferred_and_flushed(void **state)
{
    (void)state;
    fw_parallelizer *par;
    assert_int_equal(fw_parallelizer_new(4, &par), KUBE_OK);
    fw_services svc = {0};
    svc.parallelizer = par;
    svc.metrics = (fw_metrics_hooks){
        .plugin = obs_plugin, .plugin_defer = obs_defer, .plugin_flush = obs_flush};
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreIdx", 1);
    fw_framework *fw = fw_from(p, &svc);
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_cycle_state_set_record_plugin_metrics(cs, 1);
    static const size_t sizes[] = {300, 2 * FW_PARALLEL_MIN_PIECES};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        fw_snapshot *snap = make_snapshot(sizes[k]);
        fw_sched_state ss = {0};
        fw_diagnosis d = FW_DIAGNOSIS_INIT;
        fw_schedule_result res;
        atomic_store(&obs_deferred, 0);
        atomic_store(&obs_flushed, 0);
        assert_null(fw_framework_schedule_pod(fw, cs, pod, snap, &ss, &d, &res));
        /* one Filter per evaluated node (and the rest of the cut-off
         * node's chunk), one Score per feasible node */
        assert_true(atomic_load(&obs_deferred) >= res.evaluated_nodes + res.feasible_nodes);
        assert_int_equal(atomic_load(&obs_flushed), atomic_load(&obs_deferred));
        assert_int_equal(atomic_load(&obs_direct), 0);
        fw_diagnosis_clear(&d);
        fw_snapshot_free(snap);
    }
    fw_snapshot *snap = make_snapshot(2);
    assert_null(fw_framework_run_filter_with_nominated_pods(fw, cs, pod, snap->list[1]));
    assert_int_equal(atomic_load(&obs_direct), 1);
    fw_snapshot_free(snap);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
    fw_framework_free(fw);
    fw_parallelizer_free(par);
}

static void find_nodes_with_pre_filter_result(void **state)
{
    (void)state;
    fw_snapshot *snap = make_snapshot(5);
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_sched_state st = {0};
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFA", 0);
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    fw_framework *fw = fw_from(p, NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    const fw_node_info **f;
    size_t n;
    assert_null(fw_framework_find_nodes_that_fit(fw, cs, pod, snap, &st, &d, &f, &n));
    assert_int_equal(n, 2);
    assert_string_equal(f[0]->name, "n1");
    assert_string_equal(f[1]->name, "n2");
    assert_int_equal(d.n_nodes, 1);
    assert_string_equal(d.nodes[0].node, "n3");
    assert_int_equal(st.next_start_node_index, 0); /* 3 processed, modulo 3 */
    free(f);
    fw_diagnosis_clear(&d);
    fw_framework_free(fw);

    /* A PreFilterResult naming a node the snapshot lacks is an error. */
    p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFC", 0);
    fw = fw_from(p, NULL);
    fw_status *s = fw_framework_find_nodes_that_fit(fw, cs, pod, snap, &st, &d, &f, &n);
    assert_int_equal(fw_status_code(s), FW_ERROR);
    assert_string_equal(s->reasons[0], "nodeinfo not found for node name \"n9\"");
    fw_status_free(s);
    fw_diagnosis_clear(&d);
    fw_framework_free(fw);

    /* An unschedulable PreFilter marks every node and sets the message. */
    p = prof_new();
    prof_add(p, SCHED_EP_PRE_FILTER, 0, "PFReject", 0);
    fw = fw_from(p, NULL);
    fw_schedule_result res;
    s = fw_framework_schedule_pod(fw, cs, pod, snap, &st, &d, &res);
    assert_int_equal(fw_status_code(s), FW_UNSCHEDULABLE);
    assert_string_equal(s->reasons[0], "0/5 nodes are available: rejected by PreFilter.");
    assert_int_equal(d.n_nodes, 5);
    assert_string_equal(d.unschedulable_plugins[0], "PFReject");
    fw_status_free(s);
    fw_diagnosis_clear(&d);
    fw_framework_free(fw);

    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
    fw_snapshot_free(snap);
}

/* The nominator of a test: one pod nominated to n1 (any_nominated says
 * so when nominated_any is set); counts the questions per node. */
static fw_pod_info *nominated_pod;
static int nominated_any, nominated_asked;
static int nominated_for(void *ud, const char *node, fw_pod_info ***out, size_t *n)
{
    nominated_asked++;
    *out = NULL;
    *n = 0;
    if (strcmp(node, "n1") != 0)
        return KUBE_OK;
    *out = malloc(sizeof(**out));
    (*out)[0] = fw_pod_info_ref(nominated_pod);
    *n = 1;
    return KUBE_OK;
}

static int any_nominated(void *ud)
{
    (void)ud;
    return nominated_any;
}

/* The Filter pass asks for each node's nominated pods only when the
 * nominator's cheap check says some pod is nominated. */
static void filter_pass_asks_nominator_only_when_any(void **state)
{
    (void)state;
    nominated_pod = make_pod("nom", 10, "3", NULL);
    fw_services svc = {0};
    svc.nominator.pods_for_node = nominated_for;
    svc.nominator.any = any_nominated;
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "Fit", 0);
    fw_framework *fw = fw_from(p, &svc);
    fw_snapshot *snap = make_snapshot(3);
    fw_pod_info *low = make_pod("low", 0, "2", NULL);
    for (nominated_any = 0; nominated_any < 2; nominated_any++) {
        fw_cycle_state *cs = fw_cycle_state_new();
        fw_sched_state ss = {0};
        fw_diagnosis d = FW_DIAGNOSIS_INIT;
        const fw_node_info **f;
        size_t nf;
        nominated_asked = 0;
        assert_null(fw_framework_find_nodes_that_fit(fw, cs, low, snap, &ss, &d, &f, &nf));
        /* with the nomination n1 lacks cpu for low */
        assert_int_equal(nf, nominated_any ? 2 : 3);
        assert_int_equal(nominated_asked, nominated_any ? 3 : 0);
        free(f);
        fw_diagnosis_clear(&d);
        fw_cycle_state_free(cs);
    }
    fw_pod_info_unref(low);
    fw_pod_info_unref(nominated_pod);
    fw_snapshot_free(snap);
    fw_framework_free(fw);
}

static void filter_with_nominated_pods(void **state)
{
    (void)state;
    nominated_pod = make_pod("nom", 10, "3", NULL);
    fw_services svc = {0};
    svc.nominator.pods_for_node = nominated_for;
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "Fit", 0);
    fw_framework *fw = fw_from(p, &svc);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_node_info *n1 = make_node("n1"), *n2 = make_node("n2");
    fw_pod_info *low = make_pod("low", 0, "2", NULL), *high = make_pod("high", 20, "2", NULL);
    fw_status *st = fw_framework_run_filter_with_nominated_pods(fw, cs, low, n1);
    assert_string_equal(st->reasons[0], "Insufficient cpu");
    fw_status_free(st);
    assert_null(fw_framework_run_filter_with_nominated_pods(fw, cs, low, n2));
    assert_null(fw_framework_run_filter_with_nominated_pods(fw, cs, high, n1));
    /* The node info itself is untouched. */
    assert_int_equal(n1->n_pods, 0);
    fw_pod_info_unref(low);
    fw_pod_info_unref(high);
    fw_pod_info_unref(nominated_pod);
    fw_node_info_free(n1);
    fw_node_info_free(n2);
    fw_cycle_state_free(cs);
    fw_framework_free(fw);
}

/* findNodesThatFitPod over snap from start (timed: a sampled cycle) into
 * the feasible names (joined, in order) and the diagnosis' "node: reason"
 * lines; returns the next start index. */
static size_t fit_from(fw_framework *fw, const fw_pod_info *pod, const fw_snapshot *snap,
                       size_t start, int timed, kube_buf *feasible, kube_buf *failed)
{
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_sched_state ss = {.next_start_node_index = start};
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    const fw_node_info **nodes = NULL;
    size_t n = 0;

    fw_cycle_state_set_record_plugin_metrics(cs, timed);
    memset(filter_trace, 0, sizeof(filter_trace));
    filter_trace_n = 0;
    assert_null(fw_framework_find_nodes_that_fit(fw, cs, pod, snap, &ss, &d, &nodes, &n));
    /* untimed: FilterThree over a whole batch first; timed: node by node */
    char want[sizeof(filter_trace)] = "33333333";
    for (size_t i = start, k = 0; timed && k < sizeof(want) - 1; i = (i + 1) % snap->n_list) {
        want[k++] = '3';
        if (i % 3 != 0 && k < sizeof(want) - 1)
            want[k++] = 'F';
    }
    assert_string_equal(filter_trace, want);
    for (size_t i = 0; i < n; i++)
        kube_buf_printf(feasible, "%s,", nodes[i]->name);
    for (size_t i = 0; i < d.n_nodes; i++) {
        char *msg = fw_status_message_dup(d.nodes[i].status);
        kube_buf_printf(failed, "%s: %s [%s]\n", d.nodes[i].node, msg, d.nodes[i].status->plugin);
        free(msg);
    }
    free(nodes);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
    return ss.next_start_node_index;
}

/* In a cycle that times no plugin, Filter runs FW_FILTER_BATCH nodes at a
 * time, one plugin after the other: the feasible nodes, their order, the
 * failures and the next start index are those of the node-by-node run of a
 * timed cycle, from any start (the cut-off lands mid-batch too). */
static void filter_in_batches_matches_node_by_node(void **state)
{
    (void)state;
    fw_services svc = {0};
    svc.metrics = (fw_metrics_hooks){.plugin = obs_plugin};
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    prof_add(p, SCHED_EP_FILTER, 0, "Fit", 0);
    fw_framework *fw = fw_from(p, &svc);
    fw_snapshot *snap = make_snapshot(307); /* 147 to find: not a multiple of the batch */
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    static const size_t starts[] = {0, 5, 200, 306};

    for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
        kube_buf fa = {0}, fb = {0}, xa = {0}, xb = {0};
        size_t na = fit_from(fw, pod, snap, starts[k], 0, &fa, &xa);
        size_t nb = fit_from(fw, pod, snap, starts[k], 1, &fb, &xb);
        assert_non_null(fa.data);
        assert_non_null(xa.data); /* every third node fails FilterThree */
        assert_string_equal(fa.data, fb.data);
        assert_string_equal(xa.data, xb.data);
        assert_int_equal(na, nb);
        kube_buf_free(&fa);
        kube_buf_free(&fb);
        kube_buf_free(&xa);
        kube_buf_free(&xb);
    }
    fw_pod_info_unref(pod);
    fw_snapshot_free(snap);
    fw_framework_free(fw);
}

/* Runs Score over 5 nodes (ScoreList weight 1, ScoreConst weight 1) and
 * checks every node's total: its index + 10. */
static void assert_list_scores(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                               const fw_node_info *const *nodes)
{
    fw_score_list l;

    atomic_store(&score_list_calls, 0);
    atomic_store(&score_node_calls, 0);
    assert_null(fw_framework_run_score(fw, cs, pod, nodes, 5, &l));
    assert_int_equal(l.n, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(l.nodes[i].name, nodes[i]->name);
        assert_int_equal(l.nodes[i].scores[0].score, (int64_t)i);
        assert_int_equal(l.nodes[i].total, (int64_t)i + 10);
    }
    fw_score_list_free(&l);
}

/* A plugin with score_nodes scores the list in one call in a cycle that
 * times no plugin; node by node (score) in a timed one, and when the list
 * call fails. */
static void scores_whole_list_when_untimed(void **state)
{
    (void)state;
    fw_snapshot *snap = make_snapshot(5);
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_services svc = {0};
    svc.metrics = (fw_metrics_hooks){.plugin = obs_plugin};
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreList", 1);
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreConst", 1);
    fw_framework *fw = fw_from(p, &svc);

    assert_list_scores(fw, cs, pod, nodes);
    assert_int_equal(atomic_load(&score_list_calls), 1);
    assert_int_equal(atomic_load(&score_node_calls), 0);
    fw_cycle_state_set_record_plugin_metrics(cs, 1); /* a sampled cycle */
    assert_list_scores(fw, cs, pod, nodes);
    assert_int_equal(atomic_load(&score_list_calls), 0);
    assert_int_equal(atomic_load(&score_node_calls), 5);
    fw_cycle_state_set_record_plugin_metrics(cs, 0);
    score_list_fails = 1;
    assert_list_scores(fw, cs, pod, nodes);
    assert_int_equal(atomic_load(&score_list_calls), 1);
    assert_int_equal(atomic_load(&score_node_calls), 5);
    score_list_fails = 0;
    fw_framework_free(fw);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
    fw_snapshot_free(snap);
}

static void score_and_select(void **state)
{
    (void)state;
    fw_snapshot *snap = make_snapshot(5);
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreIdx", 2);
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreConst", 1);
    fw_framework *fw = fw_from(p, NULL);
    fw_score_list l;
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    assert_null(fw_framework_run_score(fw, cs, pod, nodes, 5, &l));
    assert_int_equal(l.n, 5);
    for (size_t i = 0; i < 5; i++) {
        /* ScoreIdx normalized to i*100/4, weight 2; ScoreConst 10, weight 1. */
        assert_int_equal(l.nodes[i].n_scores, 2);
        assert_int_equal(l.nodes[i].scores[0].score, (int64_t)(i * 100 / 4) * 2);
        assert_int_equal(l.nodes[i].total, (int64_t)(i * 100 / 4) * 2 + 10);
    }
    uint64_t rng = 1;
    assert_string_equal(fw_select_host(l.nodes, l.n, &rng), "n4");
    fw_score_list_free(&l);

    /* A skipped score plugin is left out. */
    fw_cycle_state_skip_score_add(cs, "ScoreIdx");
    assert_null(fw_framework_run_score(fw, cs, pod, nodes, 5, &l));
    assert_int_equal(l.nodes[0].n_scores, 1);
    assert_int_equal(l.nodes[0].total, 10);
    /* Ties: every top node is picked sometimes. */
    int seen[5] = {0};
    for (int k = 0; k < 200; k++)
        seen[node_index(fw_select_host(l.nodes, l.n, &rng))]++;
    for (int i = 0; i < 5; i++)
        assert_true(seen[i] > 0);
    fw_score_list_free(&l);
    fw_cycle_state_skip_clear(cs);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreBad", 1);
    fw = fw_from(p, NULL);
    fw_status *st = fw_framework_run_score(fw, cs, pod, nodes, 5, &l);
    assert_string_equal(st->reasons[0],
                        "applying score defaultWeights on Score plugins: plugin \"ScoreBad\" "
                        "returns an invalid score 101, it should in the range of [0, 100] after "
                        "normalizing");
    fw_status_free(st);
    fw_framework_free(fw);

    /* schedulePod end to end: n1, n2, n4 fit; n4 scores highest. */
    p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterThree", 0);
    prof_add(p, SCHED_EP_SCORE, 0, "ScoreIdx", 1);
    fw = fw_from(p, NULL);
    fw_sched_state ss = {0};
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    fw_schedule_result res;
    assert_null(fw_framework_schedule_pod(fw, cs, pod, snap, &ss, &d, &res));
    assert_string_equal(res.suggested_host, "n4");
    assert_int_equal(res.evaluated_nodes, 5);
    assert_int_equal(res.feasible_nodes, 3);
    fw_diagnosis_clear(&d);
    fw_snapshot *empty = fw_snapshot_new();
    st = fw_framework_schedule_pod(fw, cs, pod, empty, &ss, &d, &res);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_string_equal(st->reasons[0], "no nodes available to schedule pods");
    fw_status_free(st);
    fw_snapshot_free(empty);
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_FILTER, 0, "FilterAll", 0);
    fw = fw_from(p, NULL);
    st = fw_framework_schedule_pod(fw, cs, pod, snap, &ss, &d, &res);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(st->reasons[0], "0/5 nodes are available: 5 rejects everything.");
    fw_status_free(st);
    fw_diagnosis_clear(&d);
    fw_framework_free(fw);

    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
    fw_snapshot_free(snap);
}

static void reserve_unreserve_order(void **state)
{
    (void)state;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_RESERVE, 0, "R1", 0);
    prof_add(p, SCHED_EP_RESERVE, 0, "R2", 0);
    prof_add(p, SCHED_EP_RESERVE, 0, "R3", 0);
    fw_framework *fw = fw_from(p, NULL);
    call_log[0] = '\0';
    reserve_fail_r2 = 0;
    assert_null(fw_framework_run_reserve(fw, cs, pod, "n1"));
    fw_framework_run_unreserve(fw, cs, pod, "n1");
    assert_string_equal(call_log, "Reserve:R1,Reserve:R2,Reserve:R3,Unreserve:R3,Unreserve:R2,"
                                  "Unreserve:R1");
    call_log[0] = '\0';
    reserve_fail_r2 = 1;
    fw_status *st = fw_framework_run_reserve(fw, cs, pod, "n1");
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(st->plugin, "R2");
    assert_string_equal(call_log, "Reserve:R1,Reserve:R2");
    fw_status_free(st);
    reserve_fail_r2 = 0;
    fw_framework_free(fw);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
}

static void bind_first_non_skip(void **state)
{
    (void)state;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_BIND, 0, "Bind2", 0);
    fw_framework *fw = fw_from(p, NULL);
    call_log[0] = '\0';
    bind1_skip = 1;
    assert_null(fw_framework_run_bind(fw, cs, pod, "n1"));
    assert_string_equal(call_log, "Bind1,Bind2");
    call_log[0] = '\0';
    bind1_skip = 0;
    assert_null(fw_framework_run_bind(fw, cs, pod, "n1"));
    assert_string_equal(call_log, "Bind1");
    fw_framework_free(fw);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
}

/* A profile whose only Bind plugin is AsyncBind, plus the extra points. */
static fw_framework *async_fw(int pre_bind, int post_bind)
{
    sched_profile *p = prof_new();
    free(p->plugins[SCHED_EP_BIND].enabled[0].name);
    p->plugins[SCHED_EP_BIND].enabled[0].name = strdup("AsyncBind");
    if (pre_bind)
        prof_add(p, SCHED_EP_PRE_BIND, 0, "PreBindLight", 0);
    if (post_bind)
        prof_add(p, SCHED_EP_POST_BIND, 0, "PostBindPlain", 0);
    return fw_from(p, NULL);
}

static void record_bind_done(void *ud, fw_status *st)
{
    fw_status **out = ud;
    log_call("done");
    *out = st;
}

static void binding_is_light_only_when_nothing_blocks(void **state)
{
    (void)state;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_framework *fw = async_fw(1, 0);

    pre_bind_blocks = 0;
    assert_true(fw_framework_binding_is_light(fw, cs, pod, "n1"));
    pre_bind_blocks = 1;
    assert_false(fw_framework_binding_is_light(fw, cs, pod, "n1"));
    pre_bind_blocks = 0;
    fw_framework_free(fw);
    fw = async_fw(0, 1); /* a PostBind plugin without the hook may block */
    assert_false(fw_framework_binding_is_light(fw, cs, pod, "n1"));
    fw_framework_free(fw);
    sched_profile *p = prof_new(); /* Bind1 first: it only binds blocking */
    prof_add(p, SCHED_EP_BIND, 0, "AsyncBind", 0);
    fw = fw_from(p, NULL);
    assert_false(fw_framework_binding_is_light(fw, cs, pod, "n1"));
    fw_framework_free(fw);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
}

/* st is an FW_ERROR saying msg; frees it. */
static void assert_error_status(fw_status *st, const char *msg)
{
    char *got = fw_status_message_dup(st);
    assert_int_equal(fw_status_code(st), FW_ERROR);
    assert_string_equal(got, msg);
    free(got);
    fw_status_free(st);
}

static void bind_async_reports_once(void **state)
{
    (void)state;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_framework *fw = async_fw(0, 0);
    fw_status *got = NULL, *st;

    call_log[0] = '\0';
    assert_null(fw_framework_run_bind_async(fw, cs, pod, "n1", record_bind_done, &got));
    assert_string_equal(call_log, "AsyncBind,done");
    assert_null(got);

    call_log[0] = '\0';
    async_fail = 1; /* the failure is the Bind point's, naming the plugin */
    assert_null(fw_framework_run_bind_async(fw, cs, pod, "n1", record_bind_done, &got));
    assert_string_equal(call_log, "AsyncBind,done");
    assert_error_status(got, "running Bind plugin \"AsyncBind\": boom");
    async_fail = 0;

    call_log[0] = '\0';
    async_refuse = 1; /* not started: the caller gets the status, done never runs */
    st = fw_framework_run_bind_async(fw, cs, pod, "n1", record_bind_done, &got);
    assert_string_equal(call_log, "AsyncBind");
    assert_error_status(st, "running Bind plugin \"AsyncBind\": not started");
    async_refuse = 0;
    fw_framework_free(fw);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
}

typedef struct releaser {
    fw_framework *fw;
    const char *uid;
    const char *plugin;
    int reject;
} releaser;

static void *release_later(void *arg)
{
    releaser *r = arg;
    usleep(20000);
    if (r->reject)
        fw_framework_reject_waiting_pod(r->fw, r->uid, r->plugin, "changed my mind");
    else
        fw_framework_allow_waiting_pod(r->fw, r->uid, r->plugin);
    return NULL;
}

static void count_waiting(void *ud, const fw_pod_info *pod, const char *const *pending, size_t n)
{
    *(size_t *)ud += n;
}

static void permit_wait_allow_reject_timeout(void **state)
{
    (void)state;
    fw_pod_info *pod = make_pod("p", 0, "1", NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    sched_profile *p = prof_new();
    prof_add(p, SCHED_EP_PERMIT, 0, "PermitWait", 0);
    prof_add(p, SCHED_EP_PERMIT, 0, "PermitWait2", 0);
    fw_framework *fw = fw_from(p, NULL);
    assert_null(fw_framework_wait_on_permit(fw, pod)); /* not waiting */

    /* Allowed by both plugins, one now and one from another thread. */
    permit_timeout_ms = 10000;
    fw_status *st = fw_framework_run_permit(fw, cs, pod, "n1");
    assert_int_equal(fw_status_code(st), FW_WAIT);
    assert_string_equal(st->reasons[0],
                        "one or more plugins asked to wait and no plugin rejected pod \"p\"");
    fw_status_free(st);
    size_t pending = 0;
    fw_framework_foreach_waiting_pod(fw, count_waiting, &pending);
    assert_int_equal(pending, 2);
    assert_true(fw_framework_allow_waiting_pod(fw, "uid-p", "PermitWait"));
    pthread_t t;
    releaser r = {fw, "uid-p", "PermitWait2", 0};
    pthread_create(&t, NULL, release_later, &r);
    assert_null(fw_framework_wait_on_permit(fw, pod));
    pthread_join(t, NULL);
    assert_false(fw_framework_allow_waiting_pod(fw, "uid-p", "PermitWait"));

    /* Rejected from another thread. */
    fw_status_free(fw_framework_run_permit(fw, cs, pod, "n1"));
    r.reject = 1;
    pthread_create(&t, NULL, release_later, &r);
    st = fw_framework_wait_on_permit(fw, pod);
    pthread_join(t, NULL);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(st->reasons[0], "changed my mind");
    assert_string_equal(st->plugin, "PermitWait2");
    fw_status_free(st);

    /* Timed out. */
    permit_timeout_ms = 30;
    fw_status_free(fw_framework_run_permit(fw, cs, pod, "n1"));
    st = fw_framework_wait_on_permit(fw, pod);
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(st->reasons[0],
                        "rejected due to timeout after waiting 30ms at plugin PermitWait");
    fw_status_free(st);
    permit_timeout_ms = 10000;

    /* A pod left waiting is freed with the framework. */
    fw_status_free(fw_framework_run_permit(fw, cs, pod, "n1"));
    fw_framework_free(fw);

    p = prof_new();
    prof_add(p, SCHED_EP_PERMIT, 0, "PermitWait", 0);
    prof_add(p, SCHED_EP_PERMIT, 0, "PermitDeny", 0);
    fw = fw_from(p, NULL);
    st = fw_framework_run_permit(fw, cs, pod, "n1");
    assert_int_equal(fw_status_code(st), FW_UNSCHEDULABLE);
    assert_string_equal(st->plugin, "PermitDeny");
    fw_status_free(st);
    assert_null(fw_framework_wait_on_permit(fw, pod));
    fw_framework_free(fw);
    fw_cycle_state_free(cs);
    fw_pod_info_unref(pod);
}

/* A plugin gets what its registry entry closes over (kube-scheduler's
 * PluginFactory closure) as create's deps, and no other plugin gets it;
 * the in-tree registry built with plugin_registry_with_args gives StickyVM
 * the pin hand-off and every other plugin nothing. */
static void *got_deps;

static int deps_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                       size_t errlen)
{
    got_deps = deps;
    *self = NULL;
    return KUBE_OK;
}

static fw_status *deps_bind(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const char *node)
{
    return NULL;
}

static void factories_get_their_deps(void **state)
{
    (void)state;
    static const fw_plugin_desc sort = {.name = "Sort", .create = fake_create, .less = sort_less};
    static const fw_plugin_desc bind = {.name = "Bind1", .create = deps_create, .bind = deps_bind};
    static const fw_plugin_desc *const list[] = {&sort, &bind};
    int marker = 42;
    void *deps[] = {NULL, &marker};
    fw_registry reg = {list, 2, deps};
    assert_ptr_equal(fw_registry_deps(&reg, &bind), &marker);
    assert_null(fw_registry_deps(&reg, &sort));
    fw_framework *fw = NULL;
    char err[256] = "";
    sched_profile *p = prof_new();
    assert_int_equal(fw_framework_new(p, &reg, NULL, &fw, err, sizeof(err)), KUBE_OK);
    prof_free(p);
    assert_ptr_equal(got_deps, &marker);
    fw_framework_free(fw);

    plugin_factory_args fa = {{NULL, NULL}};
    plugin_registry r;
    assert_int_equal(plugin_registry_with_args(plugin_registry_in_tree(), &fa, &r), KUBE_OK);
    assert_ptr_equal(fw_registry_deps(&r.reg, &plugin_stickyvm), &fa.pins);
    assert_null(fw_registry_deps(&r.reg, &plugin_node_affinity));
    assert_int_equal(r.reg.n, plugin_registry_in_tree()->n);
}

int test_group_framework(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(factories_get_their_deps),
        cmocka_unit_test(status_basics),
        cmocka_unit_test(fit_error_messages),
        cmocka_unit_test(fit_error_explained),
        cmocka_unit_test(cycle_state_keys_match_by_content),
        cmocka_unit_test(cycle_state_read_static),
        cmocka_unit_test(cycle_state_read_static_many),
        cmocka_unit_test(cycle_state_clone),
        cmocka_unit_test(node_info_accounting),
        cmocka_unit_test(snapshot_incremental),
        cmocka_unit_test(parallelize_covers_all),
        cmocka_unit_test(parallelize_done_per_thread),
        cmocka_unit_test(num_feasible_nodes),
        cmocka_unit_test(pre_filter_result_merge),
        cmocka_unit_test(build_errors),
        cmocka_unit_test(multi_point_expansion),
        cmocka_unit_test(events_to_register),
        cmocka_unit_test(pre_filter_semantics),
        cmocka_unit_test(filter_parallel_equals_serial),
        cmocka_unit_test(plugin_metrics_deferred_and_flushed),
        cmocka_unit_test(find_nodes_with_pre_filter_result),
        cmocka_unit_test(filter_with_nominated_pods),
        cmocka_unit_test(filter_pass_asks_nominator_only_when_any),
        cmocka_unit_test(score_and_select),
        cmocka_unit_test(scores_whole_list_when_untimed),
        cmocka_unit_test(filter_in_batches_matches_node_by_node),
        cmocka_unit_test(reserve_unreserve_order),
        cmocka_unit_test(bind_first_non_skip),
        cmocka_unit_test(binding_is_light_only_when_nothing_blocks),
        cmocka_unit_test(bind_async_reports_once),
        cmocka_unit_test(permit_wait_allow_reject_timeout),
    };
    return cmocka_run_group_tests_name("framework", tests, NULL, NULL);
}
