/*
 * tests/unit/test_cache_debugger.c - the cache comparer (cache/debugger.h)
 * on a fake informer factory, a cache and a queue: missed and redundant
 * nodes and pods, the queue's pending pods counted as cached, another
 * scheduler's pending pods left out, nothing reported when they agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/debugger.h"
#include "framework/framework.h"
#include "kube/codec/jsonstream.h"
#include "kube/machinery/factory_testing.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/util/errors.h"
#include "plugins/registry.h"
#include "queue/nominator.h"
#include "queue/queue.h"
#include "unit/test_plugin_util.h"

typedef struct world {
    kube_factory *informers;
    kube_lister *nodes, *pods;
    sched_config *cfg;
    fw_framework *fw;
    sched_nominator *nom;
    sched_queue *q;
    sched_cache *cache;
    sched_cache_debugger d;
} world;

static kube_object *decode(const kube_codec *codec, const char *json)
{
    cJSON *j = cJSON_Parse(tp_json(json));
    kube_object *obj = NULL;

    assert_non_null(j);
    assert_int_equal(codec->decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

static kube_object *node(const char *name)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'n-%s','resourceVersion':'1'},"
             "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'110'}}}",
             name, name);
    return decode(&kube_node_codec, json);
}

/* A pod on node_name ("" unassigned) for scheduler sched. */
static kube_object *pod(const char *name, const char *node_name, const char *sched)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s','resourceVersion':'1'},"
             "'spec':{'nodeName':'%s','schedulerName':'%s','containers':[{'name':'c'}]}}",
             name, name, node_name, sched);
    return decode(&kube_pod_codec, json);
}

/* Puts obj in the informer (lister) only. */
static void informer_has(kube_lister *l, kube_object *obj)
{
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_ADDED, obj), KUBE_OK);
}

static int never_pending(void *ud, const char *ns, const char *name)
{
    return 0;
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof(*w));
    kube_informer_options no = {.resource = &KUBE_RES_NODES, .codec = &kube_node_codec};
    kube_informer_options po = {.resource = &KUBE_RES_PODS, .codec = &kube_pod_codec};
    fw_services svc;
    sched_queue_options qo;
    char err[512] = "";

    assert_non_null(w);
    assert_int_equal(kube_factory_new(NULL, &w->informers), KUBE_OK);
    assert_int_equal(kube_factory_lister(w->informers, &no, &w->nodes), KUBE_OK);
    assert_int_equal(kube_factory_lister(w->informers, &po, &w->pods), KUBE_OK);
    if (tp_config_load("apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "kind: KubeSchedulerConfiguration\n"
                       "profiles:\n"
                       "- schedulerName: default-scheduler\n",
                       "test.yaml", plugin_registry_in_tree(), &w->cfg, err,
                       sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    memset(&svc, 0, sizeof(svc));
    if (fw_framework_new(&w->cfg->profiles[0], plugin_registry_in_tree(), &svc, &w->fw, err,
                         sizeof(err)) != KUBE_OK)
        fail_msg("framework: %s", err);
    memset(&qo, 0, sizeof(qo));
    qo.frameworks = &w->fw;
    qo.n_frameworks = 1;
    assert_int_equal(sched_nominator_new(never_pending, NULL, &w->nom), KUBE_OK);
    qo.nominator = w->nom;
    assert_int_equal(sched_queue_new(&qo, &w->q), KUBE_OK);
    assert_int_equal(sched_cache_new(NULL, &w->cache), KUBE_OK);
    w->d = (sched_cache_debugger){w->cache, w->q, w->nodes, w->pods, &w->fw, 1, NULL};
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    sched_queue_free(w->q);
    sched_nominator_free(w->nom);
    sched_cache_free(w->cache);
    fw_framework_free(w->fw);
    sched_config_free(w->cfg);
    kube_factory_free(w->informers);
    free(w);
    return 0;
}

/* obj in the informer and, as the event handlers would put it, in the
 * cache (assigned) or the queue (unassigned). */
static void both_have(world *w, kube_object *obj)
{
    const kube_pod *p = kube_pod_from(obj);

    if (p) {
        informer_has(w->pods, obj);
        if (p->node_name[0])
            assert_int_equal(sched_cache_add_pod(w->cache, (struct kube_pod *)p), KUBE_OK);
        else
            assert_int_equal(sched_queue_add(w->q, (struct kube_pod *)p), KUBE_OK);
    } else {
        informer_has(w->nodes, obj);
        assert_int_equal(sched_cache_add_node(w->cache, (struct kube_node *)obj, NULL), KUBE_OK);
    }
    kube_object_unref(obj);
}

static void assert_names(const sched_name_list *l, const char *const *want, size_t n)
{
    assert_int_equal(l->n, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(l->v[i], want[i]);
}

static void agreeing_cache_reports_nothing(void **state)
{
    world *w = *state;
    sched_cache_mismatch m;

    both_have(w, node("n1"));
    both_have(w, pod("a", "n1", "default-scheduler"));
    both_have(w, pod("b", "", "default-scheduler"));      /* pending in the queue */
    kube_object *other = pod("c", "", "other-scheduler"); /* not ours, not queued */
    informer_has(w->pods, other);
    kube_object_unref(other);
    assert_int_equal(sched_cache_compare(&w->d, &m), KUBE_OK);
    assert_int_equal(m.missed_nodes.n + m.redundant_nodes.n, 0);
    assert_int_equal(m.missed_pods.n + m.redundant_pods.n, 0);
    sched_cache_mismatch_clear(&m);
}

static void finds_missed_and_redundant(void **state)
{
    world *w = *state;
    sched_cache_mismatch m;
    kube_object *obj;
    static const char *const missed_nodes[] = {"n2"}, *const redundant_nodes[] = {"n3"};
    static const char *const missed_pods[] = {"uid-d", "uid-f"};
    static const char *const redundant_pods[] = {"uid-e"};

    both_have(w, node("n1"));
    both_have(w, pod("a", "n1", "default-scheduler"));
    obj = node("n2"); /* the informer's, never cached */
    informer_has(w->nodes, obj);
    kube_object_unref(obj);
    obj = node("n3"); /* cached, gone from the informer */
    assert_int_equal(sched_cache_add_node(w->cache, (struct kube_node *)obj, NULL), KUBE_OK);
    kube_object_unref(obj);
    obj = pod("d", "n1", "someone-else"); /* assigned by another scheduler, not cached */
    informer_has(w->pods, obj);
    kube_object_unref(obj);
    obj = pod("f", "", "default-scheduler"); /* ours, pending, never queued */
    informer_has(w->pods, obj);
    kube_object_unref(obj);
    obj = pod("e", "n1", "default-scheduler"); /* cached, gone from the informer */
    assert_int_equal(sched_cache_add_pod(w->cache, (struct kube_pod *)obj), KUBE_OK);
    kube_object_unref(obj);
    assert_int_equal(sched_cache_compare(&w->d, &m), KUBE_OK);
    assert_names(&m.missed_nodes, missed_nodes, 1);
    assert_names(&m.redundant_nodes, redundant_nodes, 1);
    assert_names(&m.missed_pods, missed_pods, 2);
    assert_names(&m.redundant_pods, redundant_pods, 1);
    sched_cache_mismatch_clear(&m);
    assert_null(m.missed_pods.v);
    /* without the out argument it only logs */
    assert_int_equal(sched_cache_compare(&w->d, NULL), KUBE_OK);
    assert_int_equal(sched_cache_dump(&w->d), KUBE_OK);
}

int test_group_cache_debugger(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(agreeing_cache_reports_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(finds_missed_and_redundant, setup, teardown),
    };
    return cmocka_run_group_tests_name("cache_debugger", tests, NULL, NULL);
}
