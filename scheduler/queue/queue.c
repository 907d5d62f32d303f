/*
 * scheduler/queue/queue.c - the scheduling queue (queue.h): where a queued
 * pod is (activeQ, backoffQ, unschedulablePods), construction, Pop and the
 * flushes. The informer side and the moves on cluster events are in
 * requeue.c; the nominator is nominator.c.
 */
#include "queue/queue_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/util/clock.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pod.h"
#include "queue/queue_testing.h"

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
const fw_cluster_event SCHED_EV_NODE_CONDITION_CHANGE = {FW_GVK_NODE, FW_ACT_UPDATE_NODE_CONDITION,
                                                         "NodeConditionChange"};
const fw_cluster_event SCHED_EV_UNSCHEDULABLE_TIMEOUT = {FW_GVK_WILDCARD, FW_ACT_ALL,
                                                         "UnschedulableTimeout"};

#define FLUSH_BACKOFF_PERIOD_MS 1000
#define FLUSH_UNSCHEDULABLE_EVERY 30 /* backoff periods */

int64_t sq_now_ns(const sched_queue *q)
{
    return q->now_ns ? q->now_ns(q->clock_ud) : kube_now_ns();
}

/* ------------------------------------------------------------------ */
/* Queued pods                                                         */
/* ------------------------------------------------------------------ */

void sq_key_of(const char *ns, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", ns, name);
}

/* The "namespace/name" key of a queued pod, in buf (KEY_MAX bytes). */
const char *sq_qkey(const sched_queued_pod *qp, char *buf)
{
    sq_key_of(qp->info.pi->namespace_, qp->info.pi->name, buf, KEY_MAX);
    return buf;
}

sched_queued_pod *sq_qpod_new(fw_framework *fw, fw_pod_info *pi, int64_t now)
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

int sq_has_plugin(const char *const *set, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == name || !strcmp(set[i], name))
            return 1;
    return 0;
}

/* Inserts plugin into the set: 1 when added, 0 when present, KUBE_ENOMEM. */
static int add_unschedulable_plugin(sched_queued_pod *qp, const char *plugin)
{
    fw_queued_pod_info *in = &qp->info;

    if (sq_has_plugin(in->unschedulable_plugins, in->n_unschedulable_plugins, plugin))
        return 0;
    if (KUBE_ARRAY_RESERVE(in->unschedulable_plugins, in->cap_unschedulable_plugins,
                           in->n_unschedulable_plugins + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    in->unschedulable_plugins[in->n_unschedulable_plugins++] = plugin;
    return 1;
}

int sched_queued_pod_set_unschedulable_plugins(sched_queued_pod *qp, const char *const *plugins,
                                               size_t n)
{
    free(qp->info.unschedulable_plugins);
    qp->info.unschedulable_plugins = NULL;
    qp->info.n_unschedulable_plugins = qp->info.cap_unschedulable_plugins = 0;
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
/* Backoff and the heaps' orders                                      */
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

/* backoffQ's order: the earlier backoff expiry first. */
static int backoff_less(void *ud, const sched_queued_pod *a, const sched_queued_pod *b)
{
    return backoff_expiry(ud, a) < backoff_expiry(ud, b);
}

/* activeQ's order: the QueueSort plugin of the first profile. */
static int active_less(void *ud, const sched_queued_pod *a, const sched_queued_pod *b)
{
    const sched_queue *q = ud;
    return fw_framework_queue_sort_less(q->fws[0], &a->info, &b->info);
}

/* ------------------------------------------------------------------ */
/* Placement: every queued pod is in `all` and in exactly one place    */
/* ------------------------------------------------------------------ */

void sq_update_gauges(sched_queue *q)
{
    sched_core_metrics *m = q->metrics;

    if (!m)
        return;
    kube_metric_child_set(m->pending[SCHED_PENDING_ACTIVE], (double)q->active.n);
    kube_metric_child_set(m->pending[SCHED_PENDING_BACKOFF], (double)q->backoff.n);
    kube_metric_child_set(m->pending[SCHED_PENDING_UNSCHEDULABLE],
                          (double)(q->n_unsched - q->n_gated));
    kube_metric_child_set(m->pending[SCHED_PENDING_GATED], (double)q->n_gated);
}

void sq_count_incoming(sched_queue *q, const char *queue, const char *event)
{
    const char *v[2] = {queue, event};

    if (q->metrics)
        kube_metric_add(q->metrics->queue_incoming_pods, v, 1);
}

static void count_reasons(sched_queue *q, const sched_queued_pod *qp, double delta)
{
    const char *v[2];

    if (!q->metrics)
        return;
    v[1] = fw_framework_profile_name(qp->fw);
    for (size_t i = 0; i < qp->info.n_unschedulable_plugins; i++) {
        v[0] = qp->info.unschedulable_plugins[i];
        kube_metric_add(q->metrics->unschedulable_pods, v, delta);
    }
}

/* Removes qp from its place (not from `all`). */
void sq_detach(sched_queue *q, sched_queued_pod *qp)
{
    switch (qp->where) {
    case SCHED_Q_ACTIVE:
        sched_heap_remove(&q->active, qp);
        break;
    case SCHED_Q_BACKOFF:
        sched_heap_remove(&q->backoff, qp);
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
int sq_attach(sched_queue *q, sched_queued_pod *qp, sched_qwhere where)
{
    int rc = KUBE_OK;

    switch (where) {
    case SCHED_Q_ACTIVE:
        rc = sched_heap_push(&q->active, qp);
        break;
    case SCHED_Q_BACKOFF:
        rc = sched_heap_push(&q->backoff, qp);
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
void sq_drop(sched_queue *q, sched_queued_pod *qp)
{
    char key[KEY_MAX];

    sq_detach(q, qp);
    kube_strmap_del(&q->all, sq_qkey(qp, key));
    count_reasons(q, qp, -1);
    sched_queued_pod_free(qp);
}

/* ------------------------------------------------------------------ */
/* Entering activeQ                                                    */
/* ------------------------------------------------------------------ */

/* isPodBackingoff; a gated pod never tried does not back off. */
int sq_backing_off(const sched_queue *q, const sched_queued_pod *qp)
{
    return !qp->info.gated && backoff_expiry(q, qp) > sq_now_ns(q);
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
        kube_metric_add(q->metrics->unschedulable_pods, v, 1);
    }
    fw_status_message(st, msg, sizeof(msg));
    if (fw_status_code(st) == FW_ERROR)
        KLOG_ERROR("unexpected error running PreEnqueue plugin %s for pod %s/%s: %s",
                   st->plugin ? st->plugin : "?", qp->info.pi->namespace_, qp->info.pi->name, msg);
    else
        KLOG_V(4, "pod %s/%s gated by PreEnqueue plugin %s: %s", qp->info.pi->namespace_,
               qp->info.pi->name, st->plugin ? st->plugin : "?", msg);
    fw_status_free(st);
    return 0;
}

/* addToActiveQ on a detached pod: activeQ, or unschedulablePods as gated.
 * Returns 1 when it entered activeQ. */
int sq_add_to_active(sched_queue *q, sched_queued_pod *qp)
{
    qp->info.gated = !pre_enqueue(q, qp);
    if (!qp->info.gated) {
        if (qp->info.initial_attempt_ns == 0)
            qp->info.initial_attempt_ns = sq_now_ns(q);
        if (sq_attach(q, qp, SCHED_Q_ACTIVE) == KUBE_OK)
            return 1;
        KLOG_ERROR("out of memory adding pod %s/%s to activeQ; keeping it unschedulable",
                   qp->info.pi->namespace_, qp->info.pi->name);
    }
    sq_attach(q, qp, SCHED_Q_UNSCHEDULABLE);
    return 0;
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
    if (KUBE_ARRAY_RESERVE(q->hints, q->cap_hints, q->n_hints + 1) != KUBE_OK) {
        c->rc = KUBE_ENOMEM;
        return;
    }
    q->hints[q->n_hints++] = (hint_entry){c->fw, plugin, self, ev->event, ev->hint};
}

int sched_queue_new(const sched_queue_options *o, sched_queue **out)
{
    sched_queue *q;
    pthread_condattr_t ca;
    hint_ctx hc;

    *out = NULL;
    if (!o || !o->frameworks || o->n_frameworks == 0 || !o->nominator)
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
    q->initial_ns = (o->initial_backoff_ms > 0 ? o->initial_backoff_ms : 1000) * 1000000;
    q->max_ns = (o->max_backoff_ms > 0 ? o->max_backoff_ms : 10000) * 1000000;
    q->max_unsched_ns =
        (o->max_in_unschedulable_ms > 0 ? o->max_in_unschedulable_ms : 300000) * 1000000LL;
    q->now_ns = o->now_ns;
    q->clock_ud = o->clock_ud;
    q->nominator = o->nominator;
    sched_heap_init(&q->active, active_less, q);
    sched_heap_init(&q->backoff, backoff_less, q);
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
    sq_update_gauges(q);
    *out = q;
    return KUBE_OK;
}

static void free_entry(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    sched_queued_pod_free(value);
}

void sched_queue_free(sched_queue *q)
{
    if (!q)
        return;
    sched_queue_close(q);
    kube_strmap_foreach(&q->all, free_entry, NULL);
    kube_strmap_free(&q->all);
    sched_heap_free(&q->active);
    sched_heap_free(&q->backoff);
    free(q->hints);
    free(q->fws);
    pthread_cond_destroy(&q->tick);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

fw_framework *sq_framework_for(const sched_queue *q, const struct kube_pod *pod)
{
    return fw_framework_for(q->fws, q->n_fws, pod->scheduler_name);
}

/* ------------------------------------------------------------------ */
/* Scheduling side                                                     */
/* ------------------------------------------------------------------ */

static sched_queued_pod *pop_locked(sched_queue *q)
{
    sched_queued_pod *qp = sched_heap_peek(&q->active);
    char key[KEY_MAX];

    sq_detach(q, qp);
    kube_strmap_del(&q->all, sq_qkey(qp, key));
    qp->info.attempts++;
    q->cycle++;
    count_reasons(q, qp, -1);
    free(qp->info.unschedulable_plugins);
    qp->info.unschedulable_plugins = NULL;
    qp->info.n_unschedulable_plugins = qp->info.cap_unschedulable_plugins = 0;
    free(qp->info.pending_plugins);
    qp->info.pending_plugins = NULL;
    qp->info.n_pending_plugins = 0;
    sq_update_gauges(q);
    return qp;
}

static void deadline_after(struct timespec *ts, long ms)
{
    kube_deadline_after(ts, CLOCK_MONOTONIC, ms);
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

    sq_qkey(qp, key);
    pthread_mutex_lock(&q->mu);
    if (q->closed) {
        rc = KUBE_ECANCELED;
    } else if (kube_strmap_get(&q->all, key)) {
        KLOG_V(4, "pod %s is already queued; dropping the returned copy", key);
        rc = KUBE_EEXIST;
    } else {
        qp->info.timestamp_ns = sq_now_ns(q);
        count_reasons(q, qp, 1);
        where = (q->move_request_cycle >= cycle ||
                 (qp->info.n_unschedulable_plugins == 0 && qp->info.n_pending_plugins == 0))
                    ? SCHED_Q_BACKOFF
                    : SCHED_Q_UNSCHEDULABLE;
        rc = kube_strmap_put(&q->all, key, qp, NULL);
        if (rc == KUBE_OK && sq_attach(q, qp, where) != KUBE_OK) {
            where = SCHED_Q_UNSCHEDULABLE;
            sq_attach(q, qp, where);
        }
        if (rc != KUBE_OK)
            count_reasons(q, qp, -1);
    }
    if (rc == KUBE_OK) {
        sq_count_incoming(q, where == SCHED_Q_BACKOFF ? "backoff" : "unschedulable",
                          EV_ATTEMPT_FAILURE);
        sched_nominator_add_logged(q->nominator, qp->info.pi);
        sq_update_gauges(q);
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
    while (!q->closed && q->backoff.n > 0 && !sq_backing_off(q, sched_heap_peek(&q->backoff))) {
        sched_queued_pod *qp = sched_heap_peek(&q->backoff);
        sq_detach(q, qp);
        if (sq_add_to_active(q, qp)) {
            sq_count_incoming(q, "active", EV_BACKOFF_COMPLETE);
            activated = 1;
        }
    }
    if (activated)
        pthread_cond_broadcast(&q->cond);
    sq_update_gauges(q);
    pthread_mutex_unlock(&q->mu);
}

static int leftover_pred(void *ud, const sched_queued_pod *qp)
{
    const sched_queue *q = ud;
    return sq_now_ns(q) - qp->info.timestamp_ns > q->max_unsched_ns;
}

void sched_queue_flush_unschedulable_leftover(sched_queue *q)
{
    sched_queued_pod **l;
    size_t n;

    pthread_mutex_lock(&q->mu);
    if (!q->closed) {
        l = sq_collect_unsched(q, leftover_pred, q, &n);
        if (n > 0)
            sq_move_pods(q, l, n, &SCHED_EV_UNSCHEDULABLE_TIMEOUT, NULL, NULL);
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

    sq_key_of(ns, name, key, sizeof(key));
    pthread_mutex_lock(&q->mu);
    qp = kube_strmap_get(&q->all, key);
    w = qp ? qp->where : SCHED_Q_NONE;
    if (gated)
        *gated = qp ? qp->info.gated : 0;
    pthread_mutex_unlock(&q->mu);
    return w;
}

typedef struct pending_ctx {
    void (*fn)(void *ud, const fw_pod_info *pi);
    void *ud;
} pending_ctx;

static void pending_one(void *ud, const char *key, void *value)
{
    const pending_ctx *c = ud;
    const sched_queued_pod *qp = value;
    (void)key;
    c->fn(c->ud, qp->info.pi);
}

void sched_queue_foreach_pending(sched_queue *q, void (*fn)(void *ud, const fw_pod_info *pi),
                                 void *ud)
{
    pending_ctx c = {fn, ud};

    pthread_mutex_lock(&q->mu);
    kube_strmap_foreach(&q->all, pending_one, &c);
    pthread_mutex_unlock(&q->mu);
}
