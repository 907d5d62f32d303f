/*
 * scheduler/queue.c - the scheduling queue and the nominator (queue.h).
 */
#include "queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framework/strmap.h"
#include "kube/buf.h"
#include "kube/errors.h"
#include "kube/log.h"
#include "kube/pod.h"

const fw_cluster_event SCHED_EV_ASSIGNED_POD_ADD = {FW_GVK_POD, FW_ACT_ADD, "AssignedPodAdd"};
const fw_cluster_event SCHED_EV_ASSIGNED_POD_UPDATE = {FW_GVK_POD, FW_ACT_UPDATE,
                                                       "AssignedPodUpdate"};
const fw_cluster_event SCHED_EV_ASSIGNED_POD_DELETE = {FW_GVK_POD, FW_ACT_DELETE,
                                                       "AssignedPodDelete"};
const fw_cluster_event SCHED_EV_NODE_ADD = {FW_GVK_NODE, FW_ACT_ADD, "NodeAdd"};
const fw_cluster_event SCHED_EV_NODE_SPEC_UNSCHEDULABLE_CHANGE = {
    FW_GVK_NODE, FW_ACT_UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange"};
const fw_cluster_event SCHED_EV_NODE_ALLOCATABLE_CHANGE = {
    FW_GVK_NODE, FW_ACT_UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange"};
const fw_cluster_event SCHED_EV_NODE_LABEL_CHANGE = {FW_GVK_NODE, FW_ACT_UPDATE_NODE_LABEL,
                                                     "NodeLabelChange"};
const fw_cluster_event SCHED_EV_NODE_TAINT_CHANGE = {FW_GVK_NODE, FW_ACT_UPDATE_NODE_TAINT,
                                                     "NodeTaintChange"};
const fw_cluster_event SCHED_EV_NODE_CONDITION_CHANGE = {
    FW_GVK_NODE, FW_ACT_UPDATE_NODE_CONDITION, "NodeConditionChange"};
const fw_cluster_event SCHED_EV_UNSCHEDULABLE_TIMEOUT = {FW_GVK_WILDCARD, FW_ACT_ALL,
                                                         "UnschedulableTimeout"};

/* Labels of scheduler_queue_incoming_pods_total that are not events. */
#define EV_POD_ADD "PodAdd"
#define EV_POD_UPDATE "PodUpdate"
#define EV_ATTEMPT_FAILURE "ScheduleAttemptFailure"
#define EV_BACKOFF_COMPLETE "BackoffComplete"

#define FLUSH_BACKOFF_PERIOD_MS 1000
#define FLUSH_UNSCHEDULABLE_EVERY 30 /* backoff periods */

/* One (profile, plugin, event) a pod may be requeued on. */
typedef struct hint_entry {
    fw_framework *fw;
    const char *plugin;
    void *self;
    fw_cluster_event event;
    fw_queueing_hint_fn hint;
} hint_entry;

typedef struct pod_heap {
    sched_queued_pod **a;
    size_t n, cap;
} pod_heap;

/* Pods nominated to one node. */
typedef struct nom_list {
    fw_pod_info **pis;
    size_t n, cap;
} nom_list;

struct sched_queue {
    pthread_mutex_t mu;
    pthread_cond_t cond;        /* activeQ became non-empty, or closed */
    pthread_cond_t tick;        /* wakes the flush thread on close */
    fw_framework **fws;
    size_t n_fws;
    hint_entry *hints;
    size_t n_hints, cap_hints;
    int64_t initial_ns, max_ns, max_unsched_ns;
    int64_t (*now_ns)(void *ud);
    void *clock_ud;
    pod_heap active, backoff;
    fw_strmap all;              /* key -> queued pod, every queue */
    sched_queued_pod *unsched;  /* list head */
    size_t n_unsched, n_gated;
    int64_t cycle, move_request_cycle;
    int closed, running;
    pthread_t flusher;
    sched_core_metrics *metrics;
    /* nominator */
    pthread_rwlock_t nlock;
    atomic_size_t n_nominated;  /* entries of nom_node_of, read without nlock */
    fw_strmap nom_node_of;      /* uid -> char *node (owned) */
    fw_strmap nom_pods;         /* node -> nom_list * (owned) */
    int (*pod_pending)(void *ud, const char *ns, const char *name);
    void *lister_ud;
};

static int64_t now_ns(const sched_queue *q)
{
    return q->now_ns ? q->now_ns(q->clock_ud) : kube_now_ns();
}

/* ------------------------------------------------------------------ */
/* Queued pods                                                         */
/* ------------------------------------------------------------------ */

#define KEY_MAX 512 /* namespace (63) + "/" + name (253) fit */

static void key_of(const char *ns, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", ns, name);
}

/* The "namespace/name" key of a queued pod, in buf (KEY_MAX bytes). */
static const char *qkey(const sched_queued_pod *qp, char *buf)
{
    key_of(qp->info.pi->namespace_, qp->info.pi->name, buf, KEY_MAX);
    return buf;
}

static sched_queued_pod *qpod_new(fw_framework *fw, fw_pod_info *pi, int64_t now)
{
    sched_queued_pod *qp = calloc(1, sizeof(*qp));

    if (!qp)
        return NULL;
    qp->fw = fw;
    qp->info.pi = fw_pod_info_ref(pi);
    qp->info.timestamp_ns = now;
    return qp;
}

void sched_queued_pod_free(sched_queued_pod *qp)
{
    if (!qp)
        return;
    fw_pod_info_unref(qp->info.pi);
    free(qp->info.unschedulable_plugins);
    free(qp->info.pending_plugins);
    free(qp);
}

static int has_plugin(const char *const *set, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == name || !strcmp(set[i], name))
            return 1;
    return 0;
}

/* Inserts plugin into the set: 1 when added, 0 when present, KUBE_ENOMEM. */
static int add_unschedulable_plugin(sched_queued_pod *qp, const char *plugin)
{
    const char **l;

    if (has_plugin(qp->info.unschedulable_plugins, qp->info.n_unschedulable_plugins, plugin))
        return 0;
    l = realloc(qp->info.unschedulable_plugins,
                (qp->info.n_unschedulable_plugins + 1) * sizeof(*l));
    if (!l)
        return KUBE_ENOMEM;
    l[qp->info.n_unschedulable_plugins++] = plugin;
    qp->info.unschedulable_plugins = l;
    return 1;
}

int sched_queued_pod_set_unschedulable_plugins(sched_queued_pod *qp, const char *const *plugins,
                                               size_t n)
{
    free(qp->info.unschedulable_plugins);
    qp->info.unschedulable_plugins = NULL;
    qp->info.n_unschedulable_plugins = 0;
    for (size_t i = 0; i < n; i++)
        if (add_unschedulable_plugin(qp, plugins[i]) < 0)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

void sched_queued_pod_set_pod_info(sched_queued_pod *qp, fw_pod_info *pi)
{
    fw_pod_info *old = qp->info.pi;

    qp->info.pi = fw_pod_info_ref(pi);
    fw_pod_info_unref(old);
}

/* ------------------------------------------------------------------ */
/* Heaps                                                               */
/* ------------------------------------------------------------------ */

int64_t sched_queue_backoff_duration_ms(const sched_queue *q, const sched_queued_pod *qp)
{
    int64_t d = q->initial_ns;

    for (int i = 1; i < qp->info.attempts; i++) {
        if (d > q->max_ns - d)
            return q->max_ns / 1000000;
        d += d;
    }
    return d / 1000000;
}

static int64_t backoff_expiry(const sched_queue *q, const sched_queued_pod *qp)
{
    return qp->info.timestamp_ns + sched_queue_backoff_duration_ms(q, qp) * 1000000;
}

static int heap_less(const sched_queue *q, const pod_heap *h, const sched_queued_pod *a,
                     const sched_queued_pod *b)
{
    if (h == &q->backoff)
        return backoff_expiry(q, a) < backoff_expiry(q, b);
    return fw_framework_queue_sort_less(q->fws[0], &a->info, &b->info);
}

static void heap_set(pod_heap *h, size_t i, sched_queued_pod *qp)
{
    h->a[i] = qp;
    qp->heap_index = i;
}

static void heap_up(const sched_queue *q, pod_heap *h, size_t i)
{
    sched_queued_pod *qp = h->a[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_less(q, h, qp, h->a[parent]))
            break;
        heap_set(h, i, h->a[parent]);
        i = parent;
    }
    heap_set(h, i, qp);
}

static void heap_down(const sched_queue *q, pod_heap *h, size_t i)
{
    sched_queued_pod *qp = h->a[i];

    for (;;) {
        size_t l = 2 * i + 1, best = i;
        const sched_queued_pod *bp = qp;
        if (l < h->n && heap_less(q, h, h->a[l], bp)) {
            best = l;
            bp = h->a[l];
        }
        if (l + 1 < h->n && heap_less(q, h, h->a[l + 1], bp))
            best = l + 1;
        if (best == i)
            break;
        heap_set(h, i, h->a[best]);
        i = best;
    }
    heap_set(h, i, qp);
}

static int heap_push(const sched_queue *q, pod_heap *h, sched_queued_pod *qp)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        sched_queued_pod **a = realloc(h->a, cap * sizeof(*a));
        if (!a)
            return KUBE_ENOMEM;
        h->a = a;
        h->cap = cap;
    }
    h->a[h->n] = qp;
    qp->heap_index = h->n++;
    heap_up(q, h, qp->heap_index);
    return KUBE_OK;
}

static void heap_remove(const sched_queue *q, pod_heap *h, sched_queued_pod *qp)
{
    size_t i = qp->heap_index;

    h->n--;
    if (i == h->n)
        return;
    heap_set(h, i, h->a[h->n]);
    heap_down(q, h, i);
    heap_up(q, h, i);
}

/* ------------------------------------------------------------------ */
/* Placement: every queued pod is in `all` and in exactly one place    */
/* ------------------------------------------------------------------ */

static void update_gauges(sched_queue *q)
{
    sched_core_metrics *m = q->metrics;

    if (!m)
        return;
    sched_metric_child_set(m->pending[SCHED_PENDING_ACTIVE], (double)q->active.n);
    sched_metric_child_set(m->pending[SCHED_PENDING_BACKOFF], (double)q->backoff.n);
    sched_metric_child_set(m->pending[SCHED_PENDING_UNSCHEDULABLE],
                           (double)(q->n_unsched - q->n_gated));
    sched_metric_child_set(m->pending[SCHED_PENDING_GATED], (double)q->n_gated);
}

static void count_incoming(sched_queue *q, const char *queue, const char *event)
{
    const char *v[2] = {queue, event};

    if (q->metrics)
        sched_metric_add(q->metrics->queue_incoming_pods, v, 1);
}

static void count_reasons(sched_queue *q, const sched_queued_pod *qp, double delta)
{
    const char *v[2];

    if (!q->metrics)
        return;
    v[1] = fw_framework_profile_name(qp->fw);
    for (size_t i = 0; i < qp->info.n_unschedulable_plugins; i++) {
        v[0] = qp->info.unschedulable_plugins[i];
        sched_metric_add(q->metrics->unschedulable_pods, v, delta);
    }
}

/* Removes qp from its place (not from `all`). */
static void detach(sched_queue *q, sched_queued_pod *qp)
{
    switch (qp->where) {
    case SCHED_Q_ACTIVE:
        heap_remove(q, &q->active, qp);
        break;
    case SCHED_Q_BACKOFF:
        heap_remove(q, &q->backoff, qp);
        break;
    case SCHED_Q_UNSCHEDULABLE:
        if (qp->prev)
            qp->prev->next = qp->next;
        else
            q->unsched = qp->next;
        if (qp->next)
            qp->next->prev = qp->prev;
        qp->prev = qp->next = NULL;
        q->n_unsched--;
        if (qp->info.gated)
            q->n_gated--;
        break;
    case SCHED_Q_NONE:
        break;
    }
    qp->where = SCHED_Q_NONE;
}

/* Puts a detached qp somewhere. KUBE_ENOMEM leaves it detached. */
static int attach(sched_queue *q, sched_queued_pod *qp, sched_qwhere where)
{
    int rc = KUBE_OK;

    switch (where) {
    case SCHED_Q_ACTIVE:
        rc = heap_push(q, &q->active, qp);
        break;
    case SCHED_Q_BACKOFF:
        rc = heap_push(q, &q->backoff, qp);
        break;
    case SCHED_Q_UNSCHEDULABLE:
        qp->prev = NULL;
        qp->next = q->unsched;
        if (q->unsched)
            q->unsched->prev = qp;
        q->unsched = qp;
        q->n_unsched++;
        if (qp->info.gated)
            q->n_gated++;
        break;
    case SCHED_Q_NONE:
        break;
    }
    if (rc == KUBE_OK)
        qp->where = where;
    return rc;
}

/* Removes qp from the queue entirely and frees it. */
static void drop(sched_queue *q, sched_queued_pod *qp)
{
    char key[KEY_MAX];

    detach(q, qp);
    fw_strmap_del(&q->all, qkey(qp, key));
    count_reasons(q, qp, -1);
    sched_queued_pod_free(qp);
}

/* ------------------------------------------------------------------ */
/* Nominator                                                           */
/* ------------------------------------------------------------------ */

static void nom_delete_locked(sched_queue *q, const char *uid)
{
    char *node = fw_strmap_del(&q->nom_node_of, uid);
    nom_list *l;

    if (!node)
        return;
    atomic_fetch_sub(&q->n_nominated, 1);
    l = fw_strmap_get(&q->nom_pods, node);
    for (size_t i = 0; l && i < l->n; i++) {
        if (strcmp(l->pis[i]->uid, uid))
            continue;
        fw_pod_info_unref(l->pis[i]);
        memmove(&l->pis[i], &l->pis[i + 1], (l->n - i - 1) * sizeof(*l->pis));
        l->n--;
        break;
    }
    if (l && l->n == 0) {
        fw_strmap_del(&q->nom_pods, node);
        free(l->pis);
        free(l);
    }
    free(node);
}

static int nom_append(sched_queue *q, const char *node, fw_pod_info *pi)
{
    nom_list *l = fw_strmap_get(&q->nom_pods, node);

    if (!l) {
        l = calloc(1, sizeof(*l));
        if (!l || fw_strmap_put(&q->nom_pods, node, l, NULL) != KUBE_OK) {
            free(l);
            return KUBE_ENOMEM;
        }
    }
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->pis[i]->uid, pi->uid))
            return KUBE_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        fw_pod_info **a = realloc(l->pis, cap * sizeof(*a));
        if (!a)
            return KUBE_ENOMEM;
        l->pis = a;
        l->cap = cap;
    }
    l->pis[l->n++] = fw_pod_info_ref(pi);
    return KUBE_OK;
}

/* addNominatedPodUnlocked (nominator lock held). */
static int nom_add_locked(sched_queue *q, fw_pod_info *pi, fw_nominating_mode mode,
                          const char *node)
{
    char *copy;
    int rc;

    nom_delete_locked(q, pi->uid);
    if (mode == FW_NOMINATING_NOOP)
        node = pi->pod->nominated_node_name;
    if (!node || !*node)
        return KUBE_OK;
    if (q->pod_pending && !q->pod_pending(q->lister_ud, pi->namespace_, pi->name)) {
        KLOG_V(4, "pod %s/%s is gone or already scheduled: not nominating it", pi->namespace_,
               pi->name);
        return KUBE_OK;
    }
    copy = strdup(node);
    if (!copy)
        return KUBE_ENOMEM;
    rc = fw_strmap_put(&q->nom_node_of, pi->uid, copy, NULL);
    if (rc == KUBE_OK)
        rc = nom_append(q, copy, pi);
    if (rc != KUBE_OK) {
        fw_strmap_del(&q->nom_node_of, pi->uid);
        free(copy);
        return rc;
    }
    atomic_fetch_add(&q->n_nominated, 1);
    return KUBE_OK;
}

int sched_queue_add_nominated(sched_queue *q, fw_pod_info *pi, fw_nominating_mode mode,
                              const char *node)
{
    int rc;

    pthread_rwlock_wrlock(&q->nlock);
    rc = nom_add_locked(q, pi, mode, node);
    pthread_rwlock_unlock(&q->nlock);
    return rc;
}

void sched_queue_delete_nominated(sched_queue *q, const fw_pod_info *pi)
{
    pthread_rwlock_wrlock(&q->nlock);
    nom_delete_locked(q, pi->uid);
    pthread_rwlock_unlock(&q->nlock);
}

/* updateNominatedPodUnlocked: keeps an in-memory nomination when neither
 * version of the pod carries one. */
static void nom_update(sched_queue *q, const struct kube_pod *old_pod, fw_pod_info *new_pi)
{
    const char *old_uid = old_pod ? old_pod->base.meta.uid : new_pi->uid;
    const char *old_nnn = old_pod ? old_pod->nominated_node_name : "";
    char keep[256] = "";

    pthread_rwlock_wrlock(&q->nlock);
    if (!*old_nnn && !*new_pi->pod->nominated_node_name) {
        const char *node = fw_strmap_get(&q->nom_node_of, old_uid);
        if (node)
            kube_strlcpy(keep, node, sizeof(keep));
    }
    nom_delete_locked(q, old_uid);
    if (nom_add_locked(q, new_pi, *keep ? FW_NOMINATING_OVERRIDE : FW_NOMINATING_NOOP, keep) !=
        KUBE_OK)
        KLOG_ERROR("out of memory recording the nomination of %s/%s", new_pi->namespace_,
                   new_pi->name);
    pthread_rwlock_unlock(&q->nlock);
}

int sched_queue_nominated_node(sched_queue *q, const char *uid, char *out, size_t n)
{
    const char *node;
    int found;

    pthread_rwlock_rdlock(&q->nlock);
    node = fw_strmap_get(&q->nom_node_of, uid);
    found = node != NULL;
    if (found && out)
        kube_strlcpy(out, node, n);
    pthread_rwlock_unlock(&q->nlock);
    return found;
}

static int nom_pods_for_node(void *ud, const char *node, fw_pod_info ***out, size_t *n)
{
    sched_queue *q = ud;
    const nom_list *l;
    int rc = KUBE_OK;

    *out = NULL;
    *n = 0;
    /* Filter asks for every node: skip the lock when nobody is nominated */
    if (atomic_load_explicit(&q->n_nominated, memory_order_acquire) == 0)
        return KUBE_OK;
    pthread_rwlock_rdlock(&q->nlock);
    l = fw_strmap_get(&q->nom_pods, node);
    if (l && l->n) {
        *out = malloc(l->n * sizeof(**out));
        if (*out) {
            for (size_t i = 0; i < l->n; i++)
                (*out)[i] = fw_pod_info_ref(l->pis[i]);
            *n = l->n;
        } else {
            rc = KUBE_ENOMEM;
        }
    }
    pthread_rwlock_unlock(&q->nlock);
    return rc;
}

static int nom_add_cb(void *ud, fw_pod_info *pi, const char *node)
{
    return sched_queue_add_nominated(ud, pi, node && *node ? FW_NOMINATING_OVERRIDE
                                                           : FW_NOMINATING_NOOP, node);
}

static void nom_remove_cb(void *ud, const fw_pod_info *pi)
{
    sched_queue_delete_nominated(ud, pi);
}

/* fw_nominator.any: whether any pod is nominated (no lock). */
static int nom_any_cb(void *ud)
{
    const sched_queue *q = ud;
    return atomic_load_explicit(&q->n_nominated, memory_order_acquire) != 0;
}

fw_nominator sched_queue_nominator(sched_queue *q)
{
    fw_nominator n = {nom_pods_for_node, nom_add_cb, nom_remove_cb, q, nom_any_cb};
    return n;
}

static void nom_add_logged(sched_queue *q, fw_pod_info *pi)
{
    if (sched_queue_add_nominated(q, pi, FW_NOMINATING_NOOP, NULL) != KUBE_OK)
        KLOG_ERROR("out of memory recording the nomination of %s/%s", pi->namespace_, pi->name);
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

typedef struct hint_ctx {
    sched_queue *q;
    fw_framework *fw;
    int rc;
} hint_ctx;

static void collect_hint(void *ud, const char *plugin, void *self,
                         const fw_cluster_event_with_hint *ev)
{
    hint_ctx *c = ud;
    sched_queue *q = c->q;

    if (c->rc != KUBE_OK)
        return;
    if (q->n_hints == q->cap_hints) {
        size_t cap = q->cap_hints ? q->cap_hints * 2 : 32;
        hint_entry *h = realloc(q->hints, cap * sizeof(*h));
        if (!h) {
            c->rc = KUBE_ENOMEM;
            return;
        }
        q->hints = h;
        q->cap_hints = cap;
    }
    q->hints[q->n_hints++] = (hint_entry){c->fw, plugin, self, ev->event, ev->hint};
}

int sched_queue_new(const sched_queue_options *o, sched_queue **out)
{
    sched_queue *q;
    pthread_condattr_t ca;
    hint_ctx hc;

    *out = NULL;
    if (!o || !o->frameworks || o->n_frameworks == 0)
        return KUBE_EINVAL;
    q = calloc(1, sizeof(*q));
    if (!q)
        return KUBE_ENOMEM;
    q->fws = malloc(o->n_frameworks * sizeof(*q->fws));
    if (!q->fws) {
        free(q);
        return KUBE_ENOMEM;
    }
    memcpy(q->fws, o->frameworks, o->n_frameworks * sizeof(*q->fws));
    q->n_fws = o->n_frameworks;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cond, &ca);
    pthread_cond_init(&q->tick, &ca);
    pthread_condattr_destroy(&ca);
    pthread_rwlock_init(&q->nlock, NULL);
    q->initial_ns = (o->initial_backoff_ms > 0 ? o->initial_backoff_ms : 1000) * 1000000;
    q->max_ns = (o->max_backoff_ms > 0 ? o->max_backoff_ms : 10000) * 1000000;
    q->max_unsched_ns =
        (o->max_in_unschedulable_ms > 0 ? o->max_in_unschedulable_ms : 300000) * 1000000LL;
    q->now_ns = o->now_ns;
    q->clock_ud = o->clock_ud;
    q->pod_pending = o->pod_pending;
    q->lister_ud = o->lister_ud;
    q->metrics = o->metrics;
    q->move_request_cycle = -1;
    hc = (hint_ctx){q, NULL, KUBE_OK};
    for (size_t i = 0; i < q->n_fws && hc.rc == KUBE_OK; i++) {
        hc.fw = q->fws[i];
        fw_framework_foreach_event(q->fws[i], collect_hint, &hc);
    }
    if (hc.rc != KUBE_OK) {
        sched_queue_free(q);
        return hc.rc;
    }
    update_gauges(q);
    *out = q;
    return KUBE_OK;
}

static void free_entry(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    sched_queued_pod_free(value);
}

static void free_nom_node(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    free(value);
}

static void free_nom_list(void *ud, const char *key, void *value)
{
    nom_list *l = value;

    (void)ud;
    (void)key;
    for (size_t i = 0; i < l->n; i++)
        fw_pod_info_unref(l->pis[i]);
    free(l->pis);
    free(l);
}

void sched_queue_free(sched_queue *q)
{
    if (!q)
        return;
    sched_queue_close(q);
    fw_strmap_foreach(&q->all, free_entry, NULL);
    fw_strmap_free(&q->all);
    fw_strmap_foreach(&q->nom_node_of, free_nom_node, NULL);
    fw_strmap_free(&q->nom_node_of);
    fw_strmap_foreach(&q->nom_pods, free_nom_list, NULL);
    fw_strmap_free(&q->nom_pods);
    free(q->active.a);
    free(q->backoff.a);
    free(q->hints);
    free(q->fws);
    pthread_rwlock_destroy(&q->nlock);
    pthread_cond_destroy(&q->tick);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static fw_framework *framework_for(const sched_queue *q, const struct kube_pod *pod)
{
    for (size_t i = 0; i < q->n_fws; i++)
        if (!strcmp(fw_framework_profile_name(q->fws[i]), pod->scheduler_name))
            return q->fws[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Moving pods                                                         */
/* ------------------------------------------------------------------ */

/* isPodBackingoff; a gated pod never tried does not back off. */
static int backing_off(const sched_queue *q, const sched_queued_pod *qp)
{
    return !qp->info.gated && backoff_expiry(q, qp) > now_ns(q);
}

/* runPreEnqueuePlugins: 1 when the pod may enter activeQ. */
static int pre_enqueue(sched_queue *q, sched_queued_pod *qp)
{
    fw_status *st = fw_framework_run_pre_enqueue(qp->fw, qp->info.pi);
    char msg[512];
    int added = 0;

    if (fw_status_is_success(st))
        return 1;
    if (st->plugin)
        added = add_unschedulable_plugin(qp, st->plugin);
    if (added < 0)
        KLOG_ERROR("out of memory recording PreEnqueue plugin %s", st->plugin);
    if (q->metrics && added > 0) {
        const char *v[2] = {st->plugin, fw_framework_profile_name(qp->fw)};
        sched_metric_add(q->metrics->unschedulable_pods, v, 1);
    }
    fw_status_message(st, msg, sizeof(msg));
    if (fw_status_code(st) == FW_ERROR)
        KLOG_ERROR("unexpected error running PreEnqueue plugin %s for pod %s/%s: %s",
                   st->plugin ? st->plugin : "?", qp->info.pi->namespace_, qp->info.pi->name,
                   msg);
    else
        KLOG_V(4, "pod %s/%s gated by PreEnqueue plugin %s: %s", qp->info.pi->namespace_,
               qp->info.pi->name, st->plugin ? st->plugin : "?", msg);
    fw_status_free(st);
    return 0;
}

/* addToActiveQ on a detached pod: activeQ, or unschedulablePods as gated.
 * Returns 1 when it entered activeQ. */
static int add_to_active(sched_queue *q, sched_queued_pod *qp)
{
    qp->info.gated = !pre_enqueue(q, qp);
    if (!qp->info.gated) {
        if (qp->info.initial_attempt_ns == 0)
            qp->info.initial_attempt_ns = now_ns(q);
        if (attach(q, qp, SCHED_Q_ACTIVE) == KUBE_OK)
            return 1;
        KLOG_ERROR("out of memory adding pod %s/%s to activeQ; keeping it unschedulable",
                   qp->info.pi->namespace_, qp->info.pi->name);
    }
    attach(q, qp, SCHED_Q_UNSCHEDULABLE);
    return 0;
}

static int is_wildcard(const fw_cluster_event *ev)
{
    return !strcmp(ev->resource, FW_GVK_WILDCARD) && ev->action == FW_ACT_ALL;
}

/* ClusterEvent.Match: reg (registered) matches ev (happened). */
static int event_match(const fw_cluster_event *reg, const fw_cluster_event *ev)
{
    if (is_wildcard(reg))
        return 1;
    return (!strcmp(reg->resource, FW_GVK_WILDCARD) || !strcmp(reg->resource, ev->resource)) &&
           (reg->action & ev->action) != 0;
}

static int event_of_interest(const sched_queue *q, const fw_cluster_event *ev)
{
    if (is_wildcard(ev))
        return 1;
    for (size_t i = 0; i < q->n_hints; i++)
        if (event_match(&q->hints[i].event, ev))
            return 1;
    return 0;
}

/* isPodWorthRequeuing. */
static fw_queueing_hint worth_requeuing(const sched_queue *q, const sched_queued_pod *qp,
                                        const fw_cluster_event *ev, const kube_object *old_obj,
                                        const kube_object *new_obj)
{
    const fw_queued_pod_info *in = &qp->info;
    fw_queueing_hint strategy = FW_QUEUE_SKIP;

    if (in->n_unschedulable_plugins == 0 && in->n_pending_plugins == 0)
        return FW_QUEUE_AFTER_BACKOFF;
    if (is_wildcard(ev))
        return FW_QUEUE_AFTER_BACKOFF;
    for (size_t i = 0; i < q->n_hints; i++) {
        const hint_entry *h = &q->hints[i];
        fw_queueing_hint hint;
        if (h->fw != qp->fw || !event_match(&h->event, ev))
            continue;
        if (!has_plugin(in->unschedulable_plugins, in->n_unschedulable_plugins, h->plugin) &&
            !has_plugin(in->pending_plugins, in->n_pending_plugins, h->plugin))
            continue;
        hint = h->hint ? h->hint(h->self, in->pi, old_obj, new_obj) : FW_QUEUE_AFTER_BACKOFF;
        if (hint == FW_QUEUE_SKIP)
            continue;
        if (hint == FW_QUEUE_IMMEDIATELY)
            return FW_QUEUE_IMMEDIATELY;
        strategy = FW_QUEUE_AFTER_BACKOFF;
    }
    return strategy;
}

/* requeuePodViaQueueingHint on a detached pod. Returns 1 when it went to
 * activeQ. */
static int requeue_via_hint(sched_queue *q, sched_queued_pod *qp, fw_queueing_hint hint,
                            const char *event)
{
    if (hint == FW_QUEUE_AFTER_BACKOFF && backing_off(q, qp)) {
        if (attach(q, qp, SCHED_Q_BACKOFF) == KUBE_OK) {
            count_incoming(q, "backoff", event);
            return 0;
        }
        KLOG_ERROR("out of memory adding pod %s/%s to backoffQ; keeping it unschedulable",
                   qp->info.pi->namespace_, qp->info.pi->name);
        attach(q, qp, SCHED_Q_UNSCHEDULABLE);
        return 0;
    }
    if (add_to_active(q, qp)) {
        count_incoming(q, "active", event);
        return 1;
    }
    count_incoming(q, "unschedulable", event);
    return 0;
}

/* movePodsToActiveOrBackoffQueue over pods in unschedulablePods. */
static void move_pods(sched_queue *q, sched_queued_pod **pods, size_t n,
                      const fw_cluster_event *ev, const kube_object *old_obj,
                      const kube_object *new_obj)
{
    int activated = 0;

    for (size_t i = 0; i < n; i++) {
        sched_queued_pod *qp = pods[i];
        fw_queueing_hint hint = worth_requeuing(q, qp, ev, old_obj, new_obj);
        if (hint == FW_QUEUE_SKIP)
            continue;
        detach(q, qp);
        if (requeue_via_hint(q, qp, hint, ev->label))
            activated = 1;
        KLOG_V(5, "pod %s/%s moved by event %s", qp->info.pi->namespace_, qp->info.pi->name,
               ev->label);
    }
    q->move_request_cycle = q->cycle;
    if (activated)
        pthread_cond_broadcast(&q->cond);
    update_gauges(q);
}

/* The unschedulable pods for which pred answers 1 (pred NULL: all), as a
 * new array (NULL with *n 0 when none or out of memory). */
static sched_queued_pod **collect_unsched(sched_queue *q,
                                          int (*pred)(void *ud, const sched_queued_pod *qp),
                                          void *ud, size_t *n)
{
    sched_queued_pod **l;

    *n = 0;
    if (q->n_unsched == 0)
        return NULL;
    l = malloc(q->n_unsched * sizeof(*l));
    if (!l) {
        KLOG_ERROR("out of memory collecting unschedulable pods");
        return NULL;
    }
    for (sched_queued_pod *qp = q->unsched; qp; qp = qp->next)
        if (!pred || pred(ud, qp))
            l[(*n)++] = qp;
    return l;
}

typedef struct pre_check_ctx {
    int (*fn)(void *ud, const fw_pod_info *pi);
    void *ud;
} pre_check_ctx;

static int pre_check_pred(void *ud, const sched_queued_pod *qp)
{
    pre_check_ctx *c = ud;
    return c->fn(c->ud, qp->info.pi);
}

static void move_all_locked(sched_queue *q, const fw_cluster_event *ev,
                            const kube_object *old_obj, const kube_object *new_obj,
                            int (*pre_check)(void *ud, const fw_pod_info *pi), void *ud)
{
    pre_check_ctx c = {pre_check, ud};
    sched_queued_pod **l;
    size_t n;

    if (!event_of_interest(q, ev))
        return;
    l = collect_unsched(q, pre_check ? pre_check_pred : NULL, &c, &n);
    move_pods(q, l, n, ev, old_obj, new_obj);
    free(l);
}

void sched_queue_move_all(sched_queue *q, const fw_cluster_event *ev, const kube_object *old_obj,
                          const kube_object *new_obj,
                          int (*pre_check)(void *ud, const fw_pod_info *pi), void *ud)
{
    pthread_mutex_lock(&q->mu);
    if (!q->closed)
        move_all_locked(q, ev, old_obj, new_obj, pre_check, ud);
    pthread_mutex_unlock(&q->mu);
}

/* getUnschedulablePodsWithMatchingAffinityTerm. */
static int affinity_pred(void *ud, const sched_queued_pod *qp)
{
    const struct kube_pod *pod = ud;
    const fw_pod_info *pi = qp->info.pi;

    for (size_t i = 0; i < pi->n_required_affinity_terms; i++)
        if (fw_affinity_term_matches(&pi->required_affinity_terms[i], pod, NULL, 0))
            return 1;
    return 0;
}

static void assigned_pod_event(sched_queue *q, const fw_cluster_event *ev,
                               struct kube_pod *old_pod, struct kube_pod *pod)
{
    sched_queued_pod **l;
    size_t n;

    pthread_mutex_lock(&q->mu);
    if (!q->closed) {
        l = collect_unsched(q, affinity_pred, pod, &n);
        move_pods(q, l, n, ev, old_pod ? &old_pod->base : NULL, &pod->base);
        free(l);
    }
    pthread_mutex_unlock(&q->mu);
}

void sched_queue_assigned_pod_added(sched_queue *q, struct kube_pod *pod)
{
    assigned_pod_event(q, &SCHED_EV_ASSIGNED_POD_ADD, NULL, pod);
}

void sched_queue_assigned_pod_updated(sched_queue *q, struct kube_pod *old_pod,
                                      struct kube_pod *new_pod)
{
    assigned_pod_event(q, &SCHED_EV_ASSIGNED_POD_UPDATE, old_pod, new_pod);
}

/* ------------------------------------------------------------------ */
/* Informer side                                                       */
/* ------------------------------------------------------------------ */

/* A new queued pod for pod with its profile, or an error. */
static int make_qpod(sched_queue *q, struct kube_pod *pod, sched_queued_pod **out)
{
    fw_framework *fw = framework_for(q, pod);
    fw_pod_info *pi = NULL;
    int rc;

    *out = NULL;
    if (!fw)
        return KUBE_EINVAL;
    rc = fw_pod_info_new(pod, &pi);
    if (rc != KUBE_OK)
        return rc;
    *out = qpod_new(fw, pi, now_ns(q));
    fw_pod_info_unref(pi);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* Adds a fresh pod to `all` and activeQ (or gated). */
static int add_new_locked(sched_queue *q, sched_queued_pod *qp, const char *event)
{
    char key[KEY_MAX];
    sched_queued_pod *old = fw_strmap_get(&q->all, qkey(qp, key));

    if (old) {
        KLOG_V(4, "pod %s was already queued; replacing it", key);
        drop(q, old);
    }
    if (fw_strmap_put(&q->all, key, qp, NULL) != KUBE_OK) {
        sched_queued_pod_free(qp);
        return KUBE_ENOMEM;
    }
    if (add_to_active(q, qp)) {
        count_incoming(q, "active", event);
        nom_add_logged(q, qp->info.pi);
        pthread_cond_broadcast(&q->cond);
    } else {
        count_incoming(q, "unschedulable", event);
    }
    update_gauges(q);
    return KUBE_OK;
}

int sched_queue_add(sched_queue *q, struct kube_pod *pod)
{
    sched_queued_pod *qp;
    int rc = make_qpod(q, pod, &qp);

    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&q->mu);
    if (q->closed) {
        sched_queued_pod_free(qp);
        rc = KUBE_ECANCELED;
    } else {
        rc = add_new_locked(q, qp, EV_POD_ADD);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

static int kv_set_equal(const kube_kv *a, size_t na, const kube_kv *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        size_t k;
        for (k = 0; k < nb; k++)
            if (!strcmp(a[i].key, b[k].key))
                break;
        if (k == nb || strcmp(a[i].value, b[k].value))
            return 0;
    }
    return 1;
}

static int strs_equal(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]))
            return 0;
    return 1;
}

static int reqs_equal(const kube_requirement *a, size_t na, const kube_requirement *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].op != b[i].op || strcmp(a[i].key, b[i].key) ||
            !strs_equal(a[i].values, a[i].n_values, b[i].values, b[i].n_values))
            return 0;
    return 1;
}

static int term_equal(const kube_node_selector_term *a, const kube_node_selector_term *b)
{
    return a->valid == b->valid &&
           reqs_equal(a->match_expressions, a->n_match_expressions, b->match_expressions,
                      b->n_match_expressions) &&
           reqs_equal(a->match_fields, a->n_match_fields, b->match_fields, b->n_match_fields);
}

static int node_selector_equal(const kube_node_selector *a, const kube_node_selector *b)
{
    if (!a || !b)
        return a == b;
    if (a->n_terms != b->n_terms)
        return 0;
    for (size_t i = 0; i < a->n_terms; i++)
        if (!term_equal(&a->terms[i], &b->terms[i]))
            return 0;
    return 1;
}

static int affinity_equal(const kube_affinity *a, const kube_affinity *b)
{
    if (!a || !b)
        return a == b;
    if (!node_selector_equal(a->node_required, b->node_required) ||
        a->n_node_preferred != b->n_node_preferred)
        return 0;
    for (size_t i = 0; i < a->n_node_preferred; i++)
        if (a->node_preferred[i].weight != b->node_preferred[i].weight ||
            !term_equal(&a->node_preferred[i].preference, &b->node_preferred[i].preference))
            return 0;
    return a->pod_affinity.n_required == b->pod_affinity.n_required &&
           a->pod_affinity.n_preferred == b->pod_affinity.n_preferred &&
           a->pod_anti_affinity.n_required == b->pod_anti_affinity.n_required &&
           a->pod_anti_affinity.n_preferred == b->pod_anti_affinity.n_preferred;
}

static int tolerations_equal(const kube_pod *a, const kube_pod *b)
{
    if (a->n_tolerations != b->n_tolerations)
        return 0;
    for (size_t i = 0; i < a->n_tolerations; i++) {
        const kube_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (strcmp(x->key, y->key) || strcmp(x->value, y->value) || x->op != y->op ||
            x->effect != y->effect || x->has_seconds != y->has_seconds || x->seconds != y->seconds)
            return 0;
    }
    return 1;
}

static int resources_equal(const kube_resources *a, const kube_resources *b)
{
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
        a->ephemeral_storage != b->ephemeral_storage || a->allowed_pods != b->allowed_pods ||
        a->n_scalars != b->n_scalars)
        return 0;
    for (size_t i = 0; i < a->n_scalars; i++)
        if (kube_resources_scalar(b, a->scalars[i].name) != a->scalars[i].value)
            return 0;
    return 1;
}

/* isPodUpdated: anything but status and resourceVersion changed. The
 * mutable parts of a pod are compared; the rest of a pod spec is immutable
 * in Kubernetes. */
static int pod_updated(const kube_pod *a, const kube_pod *b)
{
    const kube_meta *ma = &a->base.meta, *mb = &b->base.meta;

    return !(kv_set_equal(ma->labels, ma->n_labels, mb->labels, mb->n_labels) &&
             kv_set_equal(ma->annotations, ma->n_annotations, mb->annotations,
                          mb->n_annotations) &&
             ma->deleting == mb->deleting && ma->n_owners == mb->n_owners &&
             strs_equal(a->scheduling_gates, a->n_scheduling_gates, b->scheduling_gates,
                        b->n_scheduling_gates) &&
             kv_set_equal(a->node_selector, a->n_node_selector, b->node_selector,
                          b->n_node_selector) &&
             affinity_equal(a->affinity, b->affinity) && tolerations_equal(a, b) &&
             a->priority == b->priority &&
             strs_equal(a->images, a->n_images, b->images, b->n_images) &&
             strs_equal(a->init_images, a->n_init_images, b->init_images, b->n_init_images) &&
             resources_equal(&a->requests, &b->requests) &&
             a->n_host_ports == b->n_host_ports && a->n_spread == b->n_spread &&
             a->n_volumes == b->n_volumes);
}

/* Update of a pod in unschedulablePods. */
static int update_unschedulable(sched_queue *q, sched_queued_pod *qp,
                                const struct kube_pod *old_pod, const struct kube_pod *new_pod)
{
    if (old_pod && !pod_updated(old_pod, new_pod))
        return KUBE_OK;
    if (backing_off(q, qp)) {
        detach(q, qp);
        if (attach(q, qp, SCHED_Q_BACKOFF) != KUBE_OK) {
            attach(q, qp, SCHED_Q_UNSCHEDULABLE);
            return KUBE_ENOMEM;
        }
        count_incoming(q, "backoff", EV_POD_UPDATE);
        return KUBE_OK;
    }
    detach(q, qp);
    if (add_to_active(q, qp)) {
        count_incoming(q, "active", EV_POD_UPDATE);
        pthread_cond_broadcast(&q->cond);
    }
    return KUBE_OK;
}

static int update_locked(sched_queue *q, struct kube_pod *old_pod, struct kube_pod *new_pod,
                         fw_pod_info *pi)
{
    char key[512];
    sched_queued_pod *qp;
    int rc = KUBE_OK;

    key_of(new_pod->base.meta.namespace_, new_pod->base.meta.name, key, sizeof(key));
    qp = fw_strmap_get(&q->all, key);
    if (!qp) {
        sched_queued_pod *fresh = qpod_new(framework_for(q, new_pod), pi, now_ns(q));
        if (!fresh)
            return KUBE_ENOMEM;
        return add_new_locked(q, fresh, EV_POD_UPDATE);
    }
    sched_queued_pod_set_pod_info(qp, pi);
    nom_update(q, old_pod, pi);
    if (qp->where == SCHED_Q_ACTIVE) {
        heap_down(q, &q->active, qp->heap_index);
        heap_up(q, &q->active, qp->heap_index);
    } else if (qp->where == SCHED_Q_UNSCHEDULABLE) {
        rc = update_unschedulable(q, qp, old_pod, new_pod);
    }
    update_gauges(q);
    return rc;
}

int sched_queue_update(sched_queue *q, struct kube_pod *old_pod, struct kube_pod *new_pod)
{
    fw_pod_info *pi = NULL;
    int rc;

    if (!framework_for(q, new_pod))
        return KUBE_EINVAL;
    rc = fw_pod_info_new(new_pod, &pi);
    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&q->mu);
    rc = q->closed ? KUBE_ECANCELED : update_locked(q, old_pod, new_pod, pi);
    pthread_mutex_unlock(&q->mu);
    fw_pod_info_unref(pi);
    return rc;
}

void sched_queue_delete(sched_queue *q, const struct kube_pod *pod)
{
    char key[512];
    sched_queued_pod *qp;

    key_of(pod->base.meta.namespace_, pod->base.meta.name, key, sizeof(key));
    pthread_mutex_lock(&q->mu);
    pthread_rwlock_wrlock(&q->nlock);
    nom_delete_locked(q, pod->base.meta.uid);
    pthread_rwlock_unlock(&q->nlock);
    qp = fw_strmap_get(&q->all, key);
    if (qp) {
        drop(q, qp);
        update_gauges(q);
    }
    pthread_mutex_unlock(&q->mu);
}

/* ------------------------------------------------------------------ */
/* Scheduling side                                                     */
/* ------------------------------------------------------------------ */

static sched_queued_pod *pop_locked(sched_queue *q)
{
    sched_queued_pod *qp = q->active.a[0];
    char key[KEY_MAX];

    detach(q, qp);
    fw_strmap_del(&q->all, qkey(qp, key));
    qp->info.attempts++;
    q->cycle++;
    count_reasons(q, qp, -1);
    free(qp->info.unschedulable_plugins);
    qp->info.unschedulable_plugins = NULL;
    qp->info.n_unschedulable_plugins = 0;
    free(qp->info.pending_plugins);
    qp->info.pending_plugins = NULL;
    qp->info.n_pending_plugins = 0;
    update_gauges(q);
    return qp;
}

static void deadline_after(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int sched_queue_pop_timeout(sched_queue *q, long timeout_ms, sched_queued_pod **out)
{
    struct timespec dl;
    int rc = KUBE_OK;

    *out = NULL;
    if (timeout_ms >= 0)
        deadline_after(&dl, timeout_ms);
    pthread_mutex_lock(&q->mu);
    while (q->active.n == 0 && !q->closed && rc == KUBE_OK) {
        if (timeout_ms < 0)
            pthread_cond_wait(&q->cond, &q->mu);
        else if (pthread_cond_timedwait(&q->cond, &q->mu, &dl) == ETIMEDOUT)
            rc = KUBE_ETIMEDOUT;
    }
    if (q->closed) {
        rc = KUBE_ECANCELED;
    } else if (q->active.n > 0) {
        rc = KUBE_OK;
        *out = pop_locked(q);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int sched_queue_pop(sched_queue *q, sched_queued_pod **out)
{
    return sched_queue_pop_timeout(q, -1, out);
}

int64_t sched_queue_scheduling_cycle(sched_queue *q)
{
    int64_t c;

    pthread_mutex_lock(&q->mu);
    c = q->cycle;
    pthread_mutex_unlock(&q->mu);
    return c;
}

int sched_queue_add_unschedulable_if_not_present(sched_queue *q, sched_queued_pod *qp,
                                                 int64_t cycle)
{
    int rc = KUBE_OK;
    sched_qwhere where = SCHED_Q_NONE;
    char key[KEY_MAX];

    qkey(qp, key);
    pthread_mutex_lock(&q->mu);
    if (q->closed) {
        rc = KUBE_ECANCELED;
    } else if (fw_strmap_get(&q->all, key)) {
        KLOG_V(4, "pod %s is already queued; dropping the returned copy", key);
        rc = KUBE_EEXIST;
    } else {
        qp->info.timestamp_ns = now_ns(q);
        count_reasons(q, qp, 1);
        where = (q->move_request_cycle >= cycle || (qp->info.n_unschedulable_plugins == 0 &&
                                                     qp->info.n_pending_plugins == 0))
                    ? SCHED_Q_BACKOFF
                    : SCHED_Q_UNSCHEDULABLE;
        rc = fw_strmap_put(&q->all, key, qp, NULL);
        if (rc == KUBE_OK && attach(q, qp, where) != KUBE_OK) {
            where = SCHED_Q_UNSCHEDULABLE;
            attach(q, qp, where);
        }
        if (rc != KUBE_OK)
            count_reasons(q, qp, -1);
    }
    if (rc == KUBE_OK) {
        count_incoming(q, where == SCHED_Q_BACKOFF ? "backoff" : "unschedulable",
                       EV_ATTEMPT_FAILURE);
        nom_add_logged(q, qp->info.pi);
        update_gauges(q);
    }
    pthread_mutex_unlock(&q->mu);
    if (rc != KUBE_OK)
        sched_queued_pod_free(qp);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Housekeeping                                                        */
/* ------------------------------------------------------------------ */

void sched_queue_flush_backoff_completed(sched_queue *q)
{
    int activated = 0;

    pthread_mutex_lock(&q->mu);
    while (!q->closed && q->backoff.n > 0 && !backing_off(q, q->backoff.a[0])) {
        sched_queued_pod *qp = q->backoff.a[0];
        detach(q, qp);
        if (add_to_active(q, qp)) {
            count_incoming(q, "active", EV_BACKOFF_COMPLETE);
            activated = 1;
        }
    }
    if (activated)
        pthread_cond_broadcast(&q->cond);
    update_gauges(q);
    pthread_mutex_unlock(&q->mu);
}

static int leftover_pred(void *ud, const sched_queued_pod *qp)
{
    const sched_queue *q = ud;
    return now_ns(q) - qp->info.timestamp_ns > q->max_unsched_ns;
}

void sched_queue_flush_unschedulable_leftover(sched_queue *q)
{
    sched_queued_pod **l;
    size_t n;

    pthread_mutex_lock(&q->mu);
    if (!q->closed) {
        l = collect_unsched(q, leftover_pred, q, &n);
        if (n > 0)
            move_pods(q, l, n, &SCHED_EV_UNSCHEDULABLE_TIMEOUT, NULL, NULL);
        free(l);
    }
    pthread_mutex_unlock(&q->mu);
}

static void *flush_main(void *arg)
{
    sched_queue *q = arg;

    pthread_setname_np(pthread_self(), "sched-flush");
    unsigned ticks = 0;
    struct timespec dl;

    pthread_mutex_lock(&q->mu);
    while (!q->closed) {
        deadline_after(&dl, FLUSH_BACKOFF_PERIOD_MS);
        while (!q->closed && pthread_cond_timedwait(&q->tick, &q->mu, &dl) != ETIMEDOUT)
            ;
        if (q->closed)
            break;
        pthread_mutex_unlock(&q->mu);
        sched_queue_flush_backoff_completed(q);
        if (++ticks % FLUSH_UNSCHEDULABLE_EVERY == 0)
            sched_queue_flush_unschedulable_leftover(q);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

int sched_queue_run(sched_queue *q)
{
    int rc = KUBE_OK;

    pthread_mutex_lock(&q->mu);
    if (q->running || q->closed)
        rc = KUBE_EINVAL;
    else if (pthread_create(&q->flusher, NULL, flush_main, q) != 0)
        rc = KUBE_ENOMEM;
    else
        q->running = 1;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void sched_queue_close(sched_queue *q)
{
    int join;

    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    join = q->running;
    q->running = 0;
    pthread_cond_broadcast(&q->cond);
    pthread_cond_broadcast(&q->tick);
    pthread_mutex_unlock(&q->mu);
    if (join)
        pthread_join(q->flusher, NULL);
}

void sched_queue_get_counts(sched_queue *q, sched_queue_counts *out)
{
    pthread_mutex_lock(&q->mu);
    out->active = q->active.n;
    out->backoff = q->backoff.n;
    out->unschedulable = q->n_unsched - q->n_gated;
    out->gated = q->n_gated;
    pthread_mutex_unlock(&q->mu);
}

sched_qwhere sched_queue_where(sched_queue *q, const char *ns, const char *name, int *gated)
{
    char key[512];
    const sched_queued_pod *qp;
    sched_qwhere w;

    key_of(ns, name, key, sizeof(key));
    pthread_mutex_lock(&q->mu);
    qp = fw_strmap_get(&q->all, key);
    w = qp ? qp->where : SCHED_Q_NONE;
    if (gated)
        *gated = qp ? qp->info.gated : 0;
    pthread_mutex_unlock(&q->mu);
    return w;
}
