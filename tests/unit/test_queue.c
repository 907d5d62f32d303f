/*
 * tests/unit/test_queue.c - the scheduling queue (scheduler/queue/queue.h) with
 * fake plugins and an injected clock: activeQ ordering, backoff timing,
 * requeueing on cluster events only for the plugins that rejected a pod
 * (and their queueing hints), PreEnqueue gating, the nominator, flushes,
 * Pop blocking and close, and the pending-pods gauges.
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

#include "framework/framework.h"
#include "kube/util/errors.h"
#include "eventhandlers.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "metrics.h"
#include "queue/queue.h"
#include "queue/queue_testing.h"
#include "kube/util/metrics_testing.h"
#include "queue/nominator_testing.h"

#define PROFILE "test-sched"
#define SEC 1000000000LL

/* ------------------------------------------------------------------ */
/* Fake plugins                                                        */
/* ------------------------------------------------------------------ */

static int fake_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                       size_t n)
{
    (void)args;
    (void)h;
    (void)err;
    (void)n;
    *self = NULL;
    return KUBE_OK;
}

/* PrioritySort: higher priority first, then the older timestamp. */
static int sort_less(void *self, const fw_queued_pod_info *a, const fw_queued_pod_info *b)
{
    (void)self;
    if (a->pi->priority != b->pi->priority)
        return a->pi->priority > b->pi->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

static fw_status *bind_ok(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *n)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)n;
    return NULL;
}

static fw_status *filter_ok(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *ni)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)ni;
    return NULL;
}

/* SchedulingGates-like: gated while the pod has gates. */
static fw_status *gate_pre_enqueue(void *self, const fw_pod_info *pod)
{
    (void)self;
    if (pod->pod->n_scheduling_gates == 0)
        return NULL;
    return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates");
}

static size_t gate_events(void *self, const fw_cluster_event_with_hint **out)
{
    static const fw_cluster_event_with_hint evs[] = {
        {{FW_GVK_POD, FW_ACT_UPDATE, "PodUpdate"}, NULL}};
    (void)self;
    *out = evs;
    return 1;
}

static size_t node_add_events(void *self, const fw_cluster_event_with_hint **out)
{
    static const fw_cluster_event_with_hint evs[] = {{{FW_GVK_NODE, FW_ACT_ADD, "NodeAdd"}, NULL}};
    (void)self;
    *out = evs;
    return 1;
}

/* Pod delete hint: Skip when the deleted pod is named "skipme". */
static fw_queueing_hint pod_del_hint(void *self, const fw_pod_info *pod, const kube_object *old_obj,
                                     const kube_object *new_obj)
{
    (void)self;
    (void)pod;
    (void)new_obj;
    if (old_obj && !strcmp(old_obj->meta.name, "skipme"))
        return FW_QUEUE_SKIP;
    return FW_QUEUE_IMMEDIATELY;
}

static size_t pod_del_events(void *self, const fw_cluster_event_with_hint **out)
{
    static const fw_cluster_event_with_hint evs[] = {
        {{FW_GVK_POD, FW_ACT_DELETE, "AssignedPodDelete"}, pod_del_hint},
        {{FW_GVK_POD, FW_ACT_ADD, "AssignedPodAdd"}, NULL}};
    (void)self;
    *out = evs;
    return 2;
}

static const fw_plugin_desc p_sort = {.name = "TSort", .create = fake_create, .less = sort_less};
static const fw_plugin_desc p_bind = {.name = "TBind", .create = fake_create, .bind = bind_ok};
static const fw_plugin_desc p_gate = {.name = "TGate",
                                      .create = fake_create,
                                      .pre_enqueue = gate_pre_enqueue,
                                      .events_to_register = gate_events};
static const fw_plugin_desc p_node = {.name = "TNodeAdd",
                                      .create = fake_create,
                                      .filter = filter_ok,
                                      .events_to_register = node_add_events};
static const fw_plugin_desc p_poddel = {.name = "TPodDel",
                                        .create = fake_create,
                                        .filter = filter_ok,
                                        .events_to_register = pod_del_events};

static const fw_plugin_desc *const fake_list[] = {&p_sort, &p_bind, &p_gate, &p_node, &p_poddel};
static const fw_registry fake_registry = {fake_list, sizeof(fake_list) / sizeof(fake_list[0]),
                                          NULL};

static void prof_add(sched_profile *p, sched_ext_point ep, const char *name)
{
    sched_plugin_set *s = &p->plugins[ep];
    s->enabled = realloc(s->enabled, (s->n_enabled + 1) * sizeof(sched_plugin));
    s->enabled[s->n_enabled].name = strdup(name);
    s->enabled[s->n_enabled].weight = 0;
    s->n_enabled++;
}

static void prof_free(sched_profile *p)
{
    for (int e = 0; e < SCHED_EP_COUNT; e++) {
        for (size_t i = 0; i < p->plugins[e].n_enabled; i++)
            free(p->plugins[e].enabled[i].name);
        free(p->plugins[e].enabled);
    }
    free(p->scheduler_name);
}

static fw_framework *make_framework(const fw_services *svc)
{
    sched_profile p;
    fw_framework *fw = NULL;
    char err[256] = "";

    memset(&p, 0, sizeof(p));
    p.resolved = 1; /* built in code, no args */
    p.scheduler_name = strdup(PROFILE);
    prof_add(&p, SCHED_EP_QUEUE_SORT, "TSort");
    prof_add(&p, SCHED_EP_BIND, "TBind");
    prof_add(&p, SCHED_EP_PRE_ENQUEUE, "TGate");
    prof_add(&p, SCHED_EP_FILTER, "TNodeAdd");
    prof_add(&p, SCHED_EP_FILTER, "TPodDel");
    if (fw_framework_new(&p, &fake_registry, svc, &fw, err, sizeof(err)) != KUBE_OK)
        fail_msg("fw_framework_new: %s", err);
    prof_free(&p);
    return fw;
}

/* ------------------------------------------------------------------ */
/* Fixture: a queue on a fake clock                                    */
/* ------------------------------------------------------------------ */

typedef struct fixture {
    int64_t now;
    fw_framework *fw;
    sched_queue *q;
    sched_nominator *nom;
    kube_metrics *reg;
    sched_core_metrics m;
    int lister_answer;
} fixture;

static int64_t fake_now(void *ud)
{
    return ((fixture *)ud)->now;
}

static int fake_lister(void *ud, const char *ns, const char *name)
{
    (void)ns;
    (void)name;
    return ((fixture *)ud)->lister_answer;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    sched_queue_options o;

    f->now = 1000 * SEC;
    f->lister_answer = 1;
    assert_int_equal(kube_metrics_new(&f->reg), KUBE_OK);
    assert_int_equal(sched_core_metrics_register(f->reg, &f->m), KUBE_OK);
    f->fw = make_framework(NULL);
    memset(&o, 0, sizeof(o));
    o.frameworks = &f->fw;
    o.n_frameworks = 1;
    o.now_ns = fake_now;
    o.clock_ud = f;
    assert_int_equal(sched_nominator_new(fake_lister, f, &f->nom), KUBE_OK);
    o.nominator = f->nom;
    o.metrics = &f->m;
    assert_int_equal(sched_queue_new(&o, &f->q), KUBE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sched_queue_free(f->q);
    sched_nominator_free(f->nom);
    fw_framework_free(f->fw);
    kube_metrics_free(f->reg);
    free(f);
    return 0;
}

static struct kube_pod *pod_json(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *obj = NULL;
    assert_non_null(j);
    assert_int_equal(kube_pod_codec.decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return (struct kube_pod *)obj;
}

/* A pending pod of our profile; extra_spec / status / labels may be "". */
static struct kube_pod *make_pod(const char *name, int priority, const char *extra_spec,
                                 const char *status, const char *labels)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
             "\"resourceVersion\":\"1\",\"labels\":{%s}},\"spec\":{\"schedulerName\":\"" PROFILE
             "\",\"priority\":%d,\"containers\":[{\"name\":\"c\"}]%s},\"status\":{%s}}",
             name, name, labels ? labels : "", priority, extra_spec ? extra_spec : "",
             status ? status : "");
    return pod_json(json);
}

static void add(fixture *f, const char *name, int priority)
{
    struct kube_pod *p = make_pod(name, priority, NULL, NULL, NULL);
    assert_int_equal(sched_queue_add(f->q, p), KUBE_OK);
    kube_object_unref(&p->base);
}

static sched_queued_pod *pop(fixture *f)
{
    sched_queued_pod *qp = NULL;
    assert_int_equal(sched_queue_pop_timeout(f->q, 0, &qp), KUBE_OK);
    assert_non_null(qp);
    return qp;
}

static void expect_pop(fixture *f, const char *name)
{
    sched_queued_pod *qp = pop(f);
    assert_string_equal(qp->info.pi->name, name);
    sched_queued_pod_free(qp);
}

static void expect_empty(fixture *f)
{
    sched_queued_pod *qp = NULL;
    assert_int_equal(sched_queue_pop_timeout(f->q, 0, &qp), KUBE_ETIMEDOUT);
    assert_null(qp);
}

static sched_qwhere where(fixture *f, const char *name)
{
    return sched_queue_where(f->q, "default", name, NULL);
}

/* Pops name and hands it back as rejected by plugin (NULL: by none). */
static void fail_with(fixture *f, const char *name, const char *plugin)
{
    sched_queued_pod *qp = pop(f);
    int64_t cycle = sched_queue_scheduling_cycle(f->q);
    assert_string_equal(qp->info.pi->name, name);
    if (plugin)
        assert_int_equal(sched_queued_pod_set_unschedulable_plugins(qp, &plugin, 1), KUBE_OK);
    assert_int_equal(sched_queue_add_unschedulable_if_not_present(f->q, qp, cycle), KUBE_OK);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void orders_by_queue_sort(void **state)
{
    fixture *f = *state;
    add(f, "low", 1);
    f->now += SEC;
    add(f, "high", 10);
    f->now += SEC;
    add(f, "mid", 5);
    f->now += SEC;
    add(f, "mid-later", 5);
    expect_pop(f, "high");
    expect_pop(f, "mid");
    expect_pop(f, "mid-later");
    expect_pop(f, "low");
    expect_empty(f);
    assert_int_equal(sched_queue_scheduling_cycle(f->q), 4);
}

static void backoff_grows_and_caps(void **state)
{
    fixture *f = *state;
    sched_queued_pod qp;
    memset(&qp, 0, sizeof(qp));
    int64_t want[] = {1000, 1000, 2000, 4000, 8000, 10000, 10000};
    for (int a = 0; a < 7; a++) {
        qp.info.attempts = a;
        assert_int_equal(sched_queue_backoff_duration_ms(f->q, &qp), want[a]);
    }
}

static void backoff_flush_waits_for_expiry(void **state)
{
    fixture *f = *state;
    add(f, "p", 0);
    fail_with(f, "p", NULL); /* no rejecting plugin: straight to backoffQ */
    assert_int_equal(where(f, "p"), SCHED_Q_BACKOFF);
    f->now += SEC / 2;
    sched_queue_flush_backoff_completed(f->q);
    assert_int_equal(where(f, "p"), SCHED_Q_BACKOFF);
    f->now += SEC / 2 + 1;
    sched_queue_flush_backoff_completed(f->q);
    assert_int_equal(where(f, "p"), SCHED_Q_ACTIVE);
    /* second failure: attempts 2 -> 2 s */
    fail_with(f, "p", NULL);
    f->now += SEC + SEC / 2;
    sched_queue_flush_backoff_completed(f->q);
    assert_int_equal(where(f, "p"), SCHED_Q_BACKOFF);
    f->now += SEC / 2 + 1;
    sched_queue_flush_backoff_completed(f->q);
    assert_int_equal(where(f, "p"), SCHED_Q_ACTIVE);
    sched_queued_pod *qp = pop(f);
    assert_int_equal(qp->info.attempts, 3);
    sched_queued_pod_free(qp);
}

static void requeues_only_for_registered_plugins(void **state)
{
    fixture *f = *state;
    add(f, "node-wait", 0);
    add(f, "pod-wait", 0);
    fail_with(f, "node-wait", "TNodeAdd");
    fail_with(f, "pod-wait", "TPodDel");
    assert_int_equal(where(f, "node-wait"), SCHED_Q_UNSCHEDULABLE);
    assert_int_equal(where(f, "pod-wait"), SCHED_Q_UNSCHEDULABLE);

    /* a node update interests nobody: nothing moves */
    sched_queue_move_all(f->q, &SCHED_EV_NODE_LABEL_CHANGE, NULL, NULL, NULL, NULL);
    assert_int_equal(where(f, "node-wait"), SCHED_Q_UNSCHEDULABLE);
    assert_int_equal(where(f, "pod-wait"), SCHED_Q_UNSCHEDULABLE);

    /* NodeAdd moves only the pod TNodeAdd rejected; still backing off */
    sched_queue_move_all(f->q, &SCHED_EV_NODE_ADD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(f, "node-wait"), SCHED_Q_BACKOFF);
    assert_int_equal(where(f, "pod-wait"), SCHED_Q_UNSCHEDULABLE);

    /* the hint skips the deletion of "skipme" */
    struct kube_pod *skip = make_pod("skipme", 0, NULL, NULL, NULL);
    sched_queue_move_all(f->q, &SCHED_EV_ASSIGNED_POD_DELETE, &skip->base, NULL, NULL, NULL);
    assert_int_equal(where(f, "pod-wait"), SCHED_Q_UNSCHEDULABLE);
    kube_object_unref(&skip->base);

    /* QueueImmediately bypasses the backoff */
    struct kube_pod *other = make_pod("other", 0, NULL, NULL, NULL);
    sched_queue_move_all(f->q, &SCHED_EV_ASSIGNED_POD_DELETE, &other->base, NULL, NULL, NULL);
    assert_int_equal(where(f, "pod-wait"), SCHED_Q_ACTIVE);
    kube_object_unref(&other->base);

    const char *v[] = {"active", "AssignedPodDelete"};
    assert_true(kube_metric_value(f->m.queue_incoming_pods, v) == 1);
}

static int reject_all(void *ud, const fw_pod_info *pi)
{
    (void)ud;
    (void)pi;
    return 0;
}

static void pre_check_and_wildcard(void **state)
{
    fixture *f = *state;
    add(f, "a", 0);
    fail_with(f, "a", "TNodeAdd");
    sched_queue_move_all(f->q, &SCHED_EV_NODE_ADD, NULL, NULL, reject_all, NULL);
    assert_int_equal(where(f, "a"), SCHED_Q_UNSCHEDULABLE);
    /* the wildcard event (UnschedulableTimeout) moves anything */
    f->now += 2 * SEC;
    sched_queue_move_all(f->q, &SCHED_EV_UNSCHEDULABLE_TIMEOUT, NULL, NULL, NULL, NULL);
    assert_int_equal(where(f, "a"), SCHED_Q_ACTIVE);
}

static void move_during_cycle_goes_to_backoff(void **state)
{
    fixture *f = *state;
    add(f, "a", 0);
    sched_queued_pod *qp = pop(f);
    int64_t cycle = sched_queue_scheduling_cycle(f->q);
    /* an event while "a" is being scheduled */
    sched_queue_move_all(f->q, &SCHED_EV_NODE_ADD, NULL, NULL, NULL, NULL);
    const char *plugin = "TPodDel";
    assert_int_equal(sched_queued_pod_set_unschedulable_plugins(qp, &plugin, 1), KUBE_OK);
    assert_int_equal(sched_queue_add_unschedulable_if_not_present(f->q, qp, cycle), KUBE_OK);
    assert_int_equal(where(f, "a"), SCHED_Q_BACKOFF);
}

static void readd_of_queued_pod_is_refused(void **state)
{
    fixture *f = *state;
    add(f, "a", 0);
    sched_queued_pod *qp = pop(f);
    /* an informer update while it was out re-adds it */
    struct kube_pod *p = make_pod("a", 0, NULL, NULL, "\"x\":\"y\"");
    assert_int_equal(sched_queue_update(f->q, NULL, p), KUBE_OK);
    kube_object_unref(&p->base);
    assert_int_equal(where(f, "a"), SCHED_Q_ACTIVE);
    assert_int_equal(sched_queue_add_unschedulable_if_not_present(f->q, qp, 1), KUBE_EEXIST);
    assert_int_equal(where(f, "a"), SCHED_Q_ACTIVE);
}

static void gating_and_ungating(void **state)
{
    fixture *f = *state;
    struct kube_pod *gated =
        make_pod("g", 0, ",\"schedulingGates\":[{\"name\":\"wait\"}]", NULL, NULL);
    struct kube_pod *open = make_pod("g", 0, NULL, NULL, NULL);
    sched_queue_counts c;
    int is_gated = 0;

    assert_int_equal(sched_queue_add(f->q, gated), KUBE_OK);
    assert_int_equal(sched_queue_where(f->q, "default", "g", &is_gated), SCHED_Q_UNSCHEDULABLE);
    assert_true(is_gated);
    sched_queue_get_counts(f->q, &c);
    assert_int_equal(c.gated, 1);
    assert_int_equal(c.unschedulable, 0);
    assert_true(kube_metric_child_value(f->m.pending[SCHED_PENDING_GATED]) == 1);
    expect_empty(f);
    const char *v[] = {"TGate", PROFILE};
    assert_true(kube_metric_value(f->m.unschedulable_pods, v) == 1);

    /* a status-only update changes nothing */
    struct kube_pod *status = make_pod("g", 0, ",\"schedulingGates\":[{\"name\":\"wait\"}]",
                                       "\"phase\":\"Pending\"", NULL);
    assert_int_equal(sched_queue_update(f->q, gated, status), KUBE_OK);
    assert_int_equal(where(f, "g"), SCHED_Q_UNSCHEDULABLE);

    /* removing the gate admits it at once (no backoff for a never-tried pod) */
    assert_int_equal(sched_queue_update(f->q, status, open), KUBE_OK);
    assert_int_equal(sched_queue_where(f->q, "default", "g", &is_gated), SCHED_Q_ACTIVE);
    assert_false(is_gated);
    sched_queue_get_counts(f->q, &c);
    assert_int_equal(c.gated, 0);
    assert_int_equal(c.active, 1);
    assert_true(kube_metric_child_value(f->m.pending[SCHED_PENDING_ACTIVE]) == 1);
    sched_queued_pod *qp = pop(f);
    assert_int_equal(qp->info.attempts, 1);
    assert_int_equal(qp->info.n_unschedulable_plugins, 0);
    sched_queued_pod_free(qp);
    assert_true(kube_metric_value(f->m.unschedulable_pods, v) == 0);
    kube_object_unref(&gated->base);
    kube_object_unref(&status->base);
    kube_object_unref(&open->base);
}

static void spec_update_moves_unschedulable_pod(void **state)
{
    fixture *f = *state;
    add(f, "u", 0);
    fail_with(f, "u", "TNodeAdd");
    struct kube_pod *old = make_pod("u", 0, NULL, NULL, NULL);
    struct kube_pod *relabeled = make_pod("u", 0, NULL, NULL, "\"tier\":\"db\"");
    f->now += 5 * SEC;
    assert_int_equal(sched_queue_update(f->q, old, relabeled), KUBE_OK);
    assert_int_equal(where(f, "u"), SCHED_Q_ACTIVE);
    kube_object_unref(&old->base);
    kube_object_unref(&relabeled->base);
}

static void delete_removes_everywhere(void **state)
{
    fixture *f = *state;
    add(f, "a", 0);
    add(f, "b", 0);
    fail_with(f, "a", "TNodeAdd");
    struct kube_pod *a = make_pod("a", 0, NULL, NULL, NULL);
    struct kube_pod *b = make_pod("b", 0, NULL, NULL, NULL);
    sched_queue_delete(f->q, a);
    sched_queue_delete(f->q, b);
    assert_int_equal(where(f, "a"), SCHED_Q_NONE);
    assert_int_equal(where(f, "b"), SCHED_Q_NONE);
    expect_empty(f);
    kube_object_unref(&a->base);
    kube_object_unref(&b->base);
}

static void nominator_tracks_nominations(void **state)
{
    fixture *f = *state;
    struct kube_pod *p = make_pod("n", 5, NULL, "\"nominatedNodeName\":\"node-1\"", NULL);
    fw_nominator nom = sched_nominator_view(f->nom);
    fw_pod_info **pis = NULL;
    size_t n = 0;
    char node[64];

    assert_int_equal(sched_queue_add(f->q, p), KUBE_OK);
    assert_int_equal(nom.pods_for_node(nom.ud, "node-1", &pis, &n), KUBE_OK);
    assert_int_equal(n, 1);
    assert_string_equal(pis[0]->name, "n");
    fw_pod_info_unref(pis[0]);
    free(pis);

    /* override moves it, "" clears it */
    sched_queued_pod *qp = pop(f);
    assert_int_equal(sched_nominator_add(f->nom, qp->info.pi, FW_NOMINATING_OVERRIDE, "node-2"),
                     KUBE_OK);
    assert_int_equal(sched_nominator_node_of(f->nom, "uid-n", node, sizeof(node)), 1);
    assert_string_equal(node, "node-2");
    assert_int_equal(nom.pods_for_node(nom.ud, "node-1", &pis, &n), KUBE_OK);
    assert_int_equal(n, 0);
    assert_null(pis);

    /* an update where neither version carries a nomination keeps it */
    struct kube_pod *plain = make_pod("n", 5, NULL, NULL, NULL);
    fw_pod_info *pi = fw_pod_info_ref(qp->info.pi);
    assert_int_equal(sched_queue_add_unschedulable_if_not_present(f->q, qp, 1), KUBE_OK);
    /* handing it back re-reads status.nominatedNodeName (NOOP) */
    assert_int_equal(sched_nominator_node_of(f->nom, "uid-n", node, sizeof(node)), 1);
    assert_string_equal(node, "node-1");
    assert_int_equal(sched_nominator_add(f->nom, pi, FW_NOMINATING_OVERRIDE, "node-2"), KUBE_OK);
    fw_pod_info_unref(pi);
    assert_int_equal(sched_queue_update(f->q, plain, plain), KUBE_OK);
    assert_int_equal(sched_nominator_node_of(f->nom, "uid-n", node, sizeof(node)), 1);
    assert_string_equal(node, "node-2");

    /* the lister refuses pods that are gone or assigned */
    f->lister_answer = 0;
    assert_int_equal(sched_queue_add(f->q, p), KUBE_OK);
    assert_int_equal(sched_nominator_node_of(f->nom, "uid-n", NULL, 0), 0);
    f->lister_answer = 1;

    /* delete clears the nomination */
    assert_int_equal(sched_queue_add(f->q, p), KUBE_OK);
    assert_int_equal(sched_nominator_node_of(f->nom, "uid-n", NULL, 0), 1);
    sched_queue_delete(f->q, p);
    assert_int_equal(sched_nominator_node_of(f->nom, "uid-n", NULL, 0), 0);
    kube_object_unref(&p->base);
    kube_object_unref(&plain->base);
}

static void unschedulable_leftover_flush(void **state)
{
    fixture *f = *state;
    add(f, "old", 0);
    fail_with(f, "old", "TNodeAdd");
    f->now += 299 * SEC;
    sched_queue_flush_unschedulable_leftover(f->q);
    assert_int_equal(where(f, "old"), SCHED_Q_UNSCHEDULABLE);
    f->now += 2 * SEC;
    sched_queue_flush_unschedulable_leftover(f->q);
    assert_int_equal(where(f, "old"), SCHED_Q_ACTIVE);
}

static void assigned_pod_with_matching_affinity(void **state)
{
    fixture *f = *state;
    struct kube_pod *aff = make_pod(
        "aff", 0,
        ",\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":["
        "{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"zone\"}]}}",
        NULL, NULL);
    assert_int_equal(sched_queue_add(f->q, aff), KUBE_OK);
    fail_with(f, "aff", "TPodDel");
    struct kube_pod *web = make_pod("web", 0, NULL, NULL, "\"app\":\"web\"");
    struct kube_pod *db = make_pod("db", 0, NULL, NULL, "\"app\":\"db\"");
    /* only an assigned pod matching the required affinity term helps */
    sched_queue_assigned_pod_added(f->q, web);
    assert_int_equal(where(f, "aff"), SCHED_Q_UNSCHEDULABLE);
    sched_queue_assigned_pod_added(f->q, db);
    assert_int_equal(where(f, "aff"), SCHED_Q_BACKOFF);
    kube_object_unref(&aff->base);
    kube_object_unref(&web->base);
    kube_object_unref(&db->base);
}

typedef struct popper {
    sched_queue *q;
    int rc;
    sched_queued_pod *qp;
} popper;

static void *pop_thread(void *arg)
{
    popper *p = arg;
    p->rc = sched_queue_pop(p->q, &p->qp);
    return NULL;
}

static void pop_blocks_until_add_or_close(void **state)
{
    fixture *f = *state;
    popper p = {f->q, 1, NULL};
    pthread_t t;

    assert_int_equal(pthread_create(&t, NULL, pop_thread, &p), 0);
    add(f, "late", 0);
    pthread_join(t, NULL);
    assert_int_equal(p.rc, KUBE_OK);
    assert_string_equal(p.qp->info.pi->name, "late");
    sched_queued_pod_free(p.qp);

    p.rc = 1;
    p.qp = NULL;
    assert_int_equal(pthread_create(&t, NULL, pop_thread, &p), 0);
    sched_queue_close(f->q);
    pthread_join(t, NULL);
    assert_int_equal(p.rc, KUBE_ECANCELED);
    assert_null(p.qp);
    struct kube_pod *x = make_pod("x", 0, NULL, NULL, NULL);
    assert_int_equal(sched_queue_add(f->q, x), KUBE_ECANCELED);
    kube_object_unref(&x->base);
}

static void flush_thread_runs(void **state)
{
    fixture *f = *state;
    assert_int_equal(sched_queue_run(f->q), KUBE_OK);
    assert_int_equal(sched_queue_run(f->q), KUBE_EINVAL);
    sched_queue_close(f->q);
}

static void unknown_profile_is_refused(void **state)
{
    fixture *f = *state;
    struct kube_pod *p = pod_json("{\"metadata\":{\"name\":\"o\",\"namespace\":\"default\","
                                  "\"uid\":\"u\"},\"spec\":{\"schedulerName\":\"other\"}}");
    assert_int_equal(sched_queue_add(f->q, p), KUBE_EINVAL);
    kube_object_unref(&p->base);
}

static struct kube_node *node_json(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *o = NULL;
    assert_non_null(j);
    assert_int_equal(kube_node_codec.decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return (struct kube_node *)o;
}

/* nodeSchedulingPropertiesChange: which update raises which event, in
 * upstream's order; a heartbeat alone raises none. */
static void node_update_events(void **state)
{
    (void)state;
    static const char *const base = "{\"metadata\":{\"name\":\"n\"},\"status\":{\"conditions\":["
                                    "{\"type\":\"Ready\",\"status\":\"%s\","
                                    "\"lastHeartbeatTime\":\"%s\"}]}}";
    char a[512], b[512], c[512];
    snprintf(a, sizeof(a), base, "True", "2026-01-01T00:00:00Z");
    snprintf(b, sizeof(b), base, "True", "2026-01-01T00:00:10Z");
    snprintf(c, sizeof(c), base, "False", "2026-01-01T00:00:20Z");
    struct kube_node *ready = node_json(a), *beat = node_json(b), *lost = node_json(c);
    struct kube_node *labeled = node_json("{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"b\"}},"
                                          "\"status\":{\"conditions\":[{\"type\":\"Ready\","
                                          "\"status\":\"False\"}]}}");
    assert_null(sched_node_change_event(ready, beat));
    assert_ptr_equal(sched_node_change_event(beat, lost), &SCHED_EV_NODE_CONDITION_CHANGE);
    assert_ptr_equal(sched_node_change_event(lost, ready), &SCHED_EV_NODE_CONDITION_CHANGE);
    assert_ptr_equal(sched_node_change_event(lost, labeled), &SCHED_EV_NODE_LABEL_CHANGE);
    kube_object_unref(&ready->base);
    kube_object_unref(&beat->base);
    kube_object_unref(&lost->base);
    kube_object_unref(&labeled->base);
}

int test_group_queue(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(orders_by_queue_sort),
        T(backoff_grows_and_caps),
        T(backoff_flush_waits_for_expiry),
        T(requeues_only_for_registered_plugins),
        T(pre_check_and_wildcard),
        T(move_during_cycle_goes_to_backoff),
        T(readd_of_queued_pod_is_refused),
        T(gating_and_ungating),
        T(spec_update_moves_unschedulable_pod),
        T(delete_removes_everywhere),
        T(nominator_tracks_nominations),
        T(unschedulable_leftover_flush),
        T(assigned_pod_with_matching_affinity),
        T(pop_blocks_until_add_or_close),
        T(flush_thread_runs),
        T(unknown_profile_is_refused),
        cmocka_unit_test(node_update_events),
    };
#undef T
    return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
