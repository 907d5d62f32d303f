/*
 * scheduler/metrics.c - kube-scheduler's metric set on the registry, and
 * the framework's hooks that feed it (metrics.h).
 */
#include "metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"

static const char *const L_RESULT_PROFILE[] = {"result", "profile"};
static const char *const L_QUEUE[] = {"queue"};
static const char *const L_QUEUE_EVENT[] = {"queue", "event"};
static const char *const L_ATTEMPTS[] = {"attempts"};
static const char *const L_POINT[] = {"extension_point", "status", "profile"};
static const char *const L_PLUGIN[] = {"plugin", "extension_point", "status"};
static const char *const L_RESULT[] = {"result"};
static const char *const L_PLUGIN_PROFILE[] = {"plugin", "profile"};
static const char *const L_TYPE[] = {"type"};
static const char *const L_OPERATION[] = {"operation"};

typedef struct core_def {
    size_t offset; /* of the kube_metric * in sched_core_metrics */
    const char *name, *help;
    kube_metric_type type;
    kube_stability stability;
    const char *const *labels;
    size_t n_labels;
    double start, factor; /* exponential buckets */
    size_t n_buckets;
} core_def;

#define CORE(field) offsetof(sched_core_metrics, field)

static const core_def core_defs[] = {
    {CORE(schedule_attempts), "scheduler_schedule_attempts_total",
     "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
     "not be scheduled, while 'error' means an internal scheduler problem.",
     KUBE_METRIC_COUNTER, KUBE_STABILITY_STABLE, L_RESULT_PROFILE, 2, 0, 0, 0},
    {CORE(scheduling_attempt_duration), "scheduler_scheduling_attempt_duration_seconds",
     "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
     KUBE_METRIC_HISTOGRAM, KUBE_STABILITY_STABLE, L_RESULT_PROFILE, 2, 0.001, 2, 15},
    {CORE(scheduling_algorithm_duration), "scheduler_scheduling_algorithm_duration_seconds",
     "Scheduling algorithm latency in seconds", KUBE_METRIC_HISTOGRAM, KUBE_STABILITY_ALPHA, NULL,
     0, 0.001, 2, 15},
    {CORE(pending_pods), "scheduler_pending_pods",
     "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
     "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
     "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
     "number of unschedulable pods that the scheduler never attempted to schedule because "
     "they are gated.",
     KUBE_METRIC_GAUGE, KUBE_STABILITY_STABLE, L_QUEUE, 1, 0, 0, 0},
    {CORE(queue_incoming_pods), "scheduler_queue_incoming_pods_total",
     "Number of pods added to scheduling queues by event and queue type.", KUBE_METRIC_COUNTER,
     KUBE_STABILITY_STABLE, L_QUEUE_EVENT, 2, 0, 0, 0},
    {CORE(pod_scheduling_attempts), "scheduler_pod_scheduling_attempts",
     "Number of attempts to successfully schedule a pod.", KUBE_METRIC_HISTOGRAM,
     KUBE_STABILITY_STABLE, NULL, 0, 1, 2, 5},
    {CORE(pod_scheduling_sli_duration), "scheduler_pod_scheduling_sli_duration_seconds",
     "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
     "queue an d might involve multiple scheduling attempts.",
     KUBE_METRIC_HISTOGRAM, KUBE_STABILITY_BETA, L_ATTEMPTS, 1, 0.01, 2, 20},
    {CORE(framework_extension_point_duration),
     "scheduler_framework_extension_point_duration_seconds",
     "Latency for running all plugins of a specific extension point.", KUBE_METRIC_HISTOGRAM,
     KUBE_STABILITY_STABLE, L_POINT, 3, 0.0001, 2, 12},
    {CORE(plugin_execution_duration), "scheduler_plugin_execution_duration_seconds",
     "Duration for running a plugin at a specific extension point.", KUBE_METRIC_HISTOGRAM,
     KUBE_STABILITY_ALPHA, L_PLUGIN, 3, 0.00001, 1.5, 20},
    {CORE(permit_wait_duration), "scheduler_permit_wait_duration_seconds",
     "Duration of waiting on permit.", KUBE_METRIC_HISTOGRAM, KUBE_STABILITY_ALPHA, L_RESULT, 1,
     0.001, 2, 15},
    {CORE(unschedulable_pods), "scheduler_unschedulable_pods",
     "The number of unschedulable pods broken down by plugin name. A pod will increment the "
     "gauge for all plugins that caused it to not schedule and so this metric have meaning "
     "only when broken down by plugin.",
     KUBE_METRIC_GAUGE, KUBE_STABILITY_ALPHA, L_PLUGIN_PROFILE, 2, 0, 0, 0},
    {CORE(cache_size), "scheduler_scheduler_cache_size",
     "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", KUBE_METRIC_GAUGE,
     KUBE_STABILITY_ALPHA, L_TYPE, 1, 0, 0, 0},
    {CORE(goroutines), "scheduler_goroutines",
     "Number of running goroutines split by the work they do such as binding.", KUBE_METRIC_GAUGE,
     KUBE_STABILITY_ALPHA, L_OPERATION, 1, 0, 0, 0},
};

static int register_def(kube_metrics *r, const core_def *d, kube_metric **out)
{
    double buckets[KUBE_METRIC_MAX_BUCKETS];
    kube_metric_opts o = {d->name, d->help, d->type, d->stability, d->labels, d->n_labels, NULL, 0};

    if (d->type == KUBE_METRIC_HISTOGRAM) {
        kube_metrics_exp_buckets(d->start, d->factor, d->n_buckets, buckets);
        o.buckets = buckets;
        o.n_buckets = d->n_buckets;
    }
    return kube_metrics_register(r, &o, out);
}

int sched_core_metrics_register(kube_metrics *r, sched_core_metrics *m)
{
    static const char *const queues[SCHED_PENDING_COUNT] = {"active", "backoff", "unschedulable",
                                                            "gated"};
    int rc = KUBE_OK;

    memset(m, 0, sizeof(*m));
    for (size_t i = 0; rc == KUBE_OK && i < sizeof(core_defs) / sizeof(core_defs[0]); i++)
        rc = register_def(r, &core_defs[i], (kube_metric **)((char *)m + core_defs[i].offset));
    for (int i = 0; rc == KUBE_OK && i < SCHED_PENDING_COUNT; i++) {
        m->pending[i] = kube_metric_with(m->pending_pods, &queues[i]);
        if (!m->pending[i])
            rc = KUBE_ENOMEM;
    }
    m->plugin_execution_id = kube_metric_id(m->plugin_execution_duration);
    return rc;
}

static void hook_point(void *ud, const char *point, const char *status, const char *profile,
                       double seconds)
{
    sched_core_metrics *m = ud;
    const char *v[3] = {point, status, profile ? profile : ""};

    kube_metric_observe(m->framework_extension_point_duration, v, seconds);
}

/* hook_plugin's per-thread cache, the one beside kube/util/metrics.c's
 * general cache, kept for the hottest observation of the scheduler: the
 * framework passes static names, so the child for (family id, plugin,
 * point, status) is found by the four words alone, inline, without
 * metric_with()'s general checks and loops (sampled cycles record one
 * duration per plugin per node), and the slot carries its deferred
 * observations and bucket bounds. A miss or collision falls back to
 * kube_metric_with_static(). pend: the slot's entry in the thread's
 * deferred observations (below), NULL when it has none. */
#define PLUGIN_SLOTS 128

struct pending_obs;

typedef struct plugin_slot {
    uint64_t id;
    const char *v[3];
    kube_metric_child *child;
    struct pending_obs *pend;
    const double *buckets; /* the child's bucket bounds */
    size_t n_buckets;
} plugin_slot;

/* hook_plugin_defer's per-thread buffer: a child's observations counted
 * without atomics (bucket counts, sum, count) until hook_plugin_flush adds
 * them to the child. An entry is reached through the cache slot pointing at
 * it; a slot taken over by another key leaves its entry to the flush (the
 * key then gets a second entry). The framework flushes before an extension
 * point returns, so no entry outlives its registry. */
#define PENDING_SLOTS 32
#define PENDING_MAX_COUNT UINT32_MAX

typedef struct pending_obs {
    kube_metric_child *child;
    plugin_slot *slot;
    uint64_t count;
    double sum;
    uint32_t buckets[KUBE_METRIC_MAX_BUCKETS]; /* per bucket, +Inf not kept */
} pending_obs;

/* A thread's cache and deferred observations, allocated on its first
 * plugin observation: as static __thread arrays they were 17 KB of every
 * thread's start-up (static TLS is copied and zeroed when a thread
 * starts), though only the scheduling threads observe plugins. */
typedef struct plugin_tls {
    plugin_slot cache[PLUGIN_SLOTS];
    pending_obs pending[PENDING_SLOTS];
    size_t n_pending;
} plugin_tls;

static __thread plugin_tls *plugin_tl;
static pthread_key_t plugin_key;
static int plugin_key_ok;

/* Installed before main, while the process has one thread. */
__attribute__((constructor)) static void plugin_key_init(void)
{
    plugin_key_ok = pthread_key_create(&plugin_key, free) == 0;
}

/* The exiting thread (main) gets no key destructor call. */
__attribute__((destructor)) static void plugin_tls_free_main(void)
{
    if (plugin_key_ok)
        pthread_setspecific(plugin_key, NULL);
    free(plugin_tl);
    plugin_tl = NULL;
}

/* Allocates the calling thread's block; NULL when memory runs out (the
 * observation is then lost, as when the child cannot be made). */
static plugin_tls *plugin_tls_new(void)
{
    if (!plugin_key_ok)
        return NULL;
    plugin_tl = calloc(1, sizeof(*plugin_tl));
    if (plugin_tl && pthread_setspecific(plugin_key, plugin_tl) != 0) {
        free(plugin_tl);
        plugin_tl = NULL;
    }
    return plugin_tl;
}

/* Fills slot e with the child of v in m (id: kube_metric_id(m)). Returns e,
 * or NULL when m is NULL or memory runs out. */
static plugin_slot *plugin_slot_fill(kube_metric *m, uint64_t id, const char *const v[3],
                                     plugin_slot *e)
{
    kube_metric_child *c = m ? kube_metric_with_static(m, v) : NULL;
    size_t n;
    const double *b;

    if (!c)
        return NULL;
    b = kube_metric_child_buckets(c, &n);
    *e = (plugin_slot){id, {v[0], v[1], v[2]}, c, NULL, b, n};
    return e;
}

/* The cache slot holding the child of v in m (id: kube_metric_id(m)),
 * filled on a miss; NULL when m is NULL or memory runs out. Inline: the
 * hit is a few compares, once per plugin per node in sampled cycles. */
static inline plugin_slot *plugin_slot_for(kube_metric *m, uint64_t id, const char *const v[3])
{
    uintptr_t h = ((uintptr_t)v[0] * 31u + (uintptr_t)v[1]) * 31u + (uintptr_t)v[2];
    plugin_tls *t = plugin_tl ? plugin_tl : plugin_tls_new();
    plugin_slot *e;

    if (!t)
        return NULL;
    e = &t->cache[(h >> 3) % PLUGIN_SLOTS];

    if (e->child && e->id == id && e->v[0] == v[0] && e->v[1] == v[1] && e->v[2] == v[2])
        return e;
    return plugin_slot_fill(m, id, v, e);
}

static void hook_plugin(void *ud, const char *plugin, const char *point, const char *status,
                        double seconds)
{
    sched_core_metrics *m = ud;
    const char *v[3] = {plugin, point, status};
    plugin_slot *e = plugin_slot_for(m->plugin_execution_duration, m->plugin_execution_id, v);

    /* the framework passes static names here (framework.h) */
    if (e)
        kube_metric_child_observe(e->child, seconds);
}

/* Adds entry p to its child and empties it. */
static void pending_merge(pending_obs *p)
{
    size_t n;

    kube_metric_child_observe_many(p->child, p->buckets, p->count, p->sum);
    kube_metric_child_buckets(p->child, &n);
    memset(p->buckets, 0, n * sizeof(p->buckets[0]));
    p->slot->pend = NULL;
    p->count = 0;
    p->sum = 0;
}

static void hook_plugin_flush(void *ud)
{
    plugin_tls *t = plugin_tl;

    (void)ud;
    if (!t)
        return;
    for (size_t i = 0; i < t->n_pending; i++)
        pending_merge(&t->pending[i]);
    t->n_pending = 0;
}

/* The thread's pending entry for slot e, taken (after a flush when the
 * buffer is full) when it has none. */
static pending_obs *pending_for(plugin_slot *e)
{
    plugin_tls *t = plugin_tl; /* set: e is one of its slots */

    if (e->pend)
        return e->pend;
    if (t->n_pending == PENDING_SLOTS)
        hook_plugin_flush(NULL);
    e->pend = &t->pending[t->n_pending++];
    e->pend->child = e->child;
    e->pend->slot = e;
    return e->pend;
}

static void hook_plugin_defer(void *ud, const char *plugin, const char *point, const char *status,
                              double seconds)
{
    sched_core_metrics *m = ud;
    const char *v[3] = {plugin, point, status};
    plugin_slot *e = plugin_slot_for(m->plugin_execution_duration, m->plugin_execution_id, v);
    pending_obs *p;
    size_t b;

    if (!e)
        return;
    p = pending_for(e);
    /* a plugin call mostly lands in the first buckets: scan from there */
    for (b = 0; b < e->n_buckets && seconds > e->buckets[b]; b++)
        ;
    if (b < e->n_buckets)
        p->buckets[b]++;
    p->sum += seconds;
    if (++p->count == PENDING_MAX_COUNT)
        hook_plugin_flush(ud);
}

static void hook_permit(void *ud, const char *result, double seconds)
{
    sched_core_metrics *m = ud;

    kube_metric_observe(m->permit_wait_duration, &result, seconds);
}

fw_metrics_hooks sched_core_metrics_hooks(sched_core_metrics *m)
{
    fw_metrics_hooks h = {hook_point, hook_plugin,       hook_permit,
                          m,          hook_plugin_defer, hook_plugin_flush};
    return h;
}

void sched_core_metrics_attempt(sched_core_metrics *m, const char *result, const char *profile,
                                double seconds)
{
    const char *v[2] = {result, profile};

    if (!m)
        return;
    kube_metric_add(m->schedule_attempts, v, 1);
    kube_metric_observe(m->scheduling_attempt_duration, v, seconds);
}
