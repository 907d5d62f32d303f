/*
 * scheduler/queue/requeue.c - the scheduling queue's informer side (Add,
 * Update, Delete of pending pods) and the moves of unschedulable pods on
 * cluster events, through the plugins' queueing hints (queue.h).
 */
#include "queue/queue_int.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pod.h"

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
        if (!sq_has_plugin(in->unschedulable_plugins, in->n_unschedulable_plugins, h->plugin) &&
            !sq_has_plugin(in->pending_plugins, in->n_pending_plugins, h->plugin))
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
    if (hint == FW_QUEUE_AFTER_BACKOFF && sq_backing_off(q, qp)) {
        if (sq_attach(q, qp, SCHED_Q_BACKOFF) == KUBE_OK) {
            sq_count_incoming(q, "backoff", event);
            return 0;
        }
        KLOG_ERROR("out of memory adding pod %s/%s to backoffQ; keeping it unschedulable",
                   qp->info.pi->namespace_, qp->info.pi->name);
        sq_attach(q, qp, SCHED_Q_UNSCHEDULABLE);
        return 0;
    }
    if (sq_add_to_active(q, qp)) {
        sq_count_incoming(q, "active", event);
        return 1;
    }
    sq_count_incoming(q, "unschedulable", event);
    return 0;
}

/* movePodsToActiveOrBackoffQueue over pods in unschedulablePods. */
void sq_move_pods(sched_queue *q, sched_queued_pod **pods, size_t n, const fw_cluster_event *ev,
                  const kube_object *old_obj, const kube_object *new_obj)
{
    int activated = 0;

    for (size_t i = 0; i < n; i++) {
        sched_queued_pod *qp = pods[i];
        fw_queueing_hint hint = worth_requeuing(q, qp, ev, old_obj, new_obj);
        if (hint == FW_QUEUE_SKIP)
            continue;
        sq_detach(q, qp);
        if (requeue_via_hint(q, qp, hint, ev->label))
            activated = 1;
        KLOG_V(5, "pod %s/%s moved by event %s", qp->info.pi->namespace_, qp->info.pi->name,
               ev->label);
    }
    q->move_request_cycle = q->cycle;
    if (activated)
        pthread_cond_broadcast(&q->cond);
    sq_update_gauges(q);
}

/* The unschedulable pods for which pred answers 1 (pred NULL: all), as a
 * new array (NULL with *n 0 when none or out of memory). */
sched_queued_pod **sq_collect_unsched(sched_queue *q,
                                      int (*pred)(void *ud, const sched_queued_pod *qp), void *ud,
                                      size_t *n)
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

static void move_all_locked(sched_queue *q, const fw_cluster_event *ev, const kube_object *old_obj,
                            const kube_object *new_obj,
                            int (*pre_check)(void *ud, const fw_pod_info *pi), void *ud)
{
    pre_check_ctx c = {pre_check, ud};
    sched_queued_pod **l;
    size_t n;

    if (!event_of_interest(q, ev))
        return;
    l = sq_collect_unsched(q, pre_check ? pre_check_pred : NULL, &c, &n);
    sq_move_pods(q, l, n, ev, old_obj, new_obj);
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

static void assigned_pod_event(sched_queue *q, const fw_cluster_event *ev, struct kube_pod *old_pod,
                               struct kube_pod *pod)
{
    sched_queued_pod **l;
    size_t n;

    pthread_mutex_lock(&q->mu);
    if (!q->closed) {
        l = sq_collect_unsched(q, affinity_pred, pod, &n);
        sq_move_pods(q, l, n, ev, old_pod ? &old_pod->base : NULL, &pod->base);
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
    fw_framework *fw = sq_framework_for(q, pod);
    fw_pod_info *pi = NULL;
    int rc;

    *out = NULL;
    if (!fw)
        return KUBE_EINVAL;
    rc = fw_pod_info_new(pod, &pi);
    if (rc != KUBE_OK)
        return rc;
    *out = sq_qpod_new(fw, pi, sq_now_ns(q));
    fw_pod_info_unref(pi);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* Adds a fresh pod to `all` and activeQ (or gated). */
static int add_new_locked(sched_queue *q, sched_queued_pod *qp, const char *event)
{
    char key[KEY_MAX];
    sched_queued_pod *old = kube_strmap_get(&q->all, sq_qkey(qp, key));

    if (old) {
        KLOG_V(4, "pod %s was already queued; replacing it", key);
        sq_drop(q, old);
    }
    if (kube_strmap_put(&q->all, key, qp, NULL) != KUBE_OK) {
        sched_queued_pod_free(qp);
        return KUBE_ENOMEM;
    }
    if (sq_add_to_active(q, qp)) {
        sq_count_incoming(q, "active", event);
        sched_nominator_add_logged(q->nominator, qp->info.pi);
        pthread_cond_broadcast(&q->cond);
    } else {
        sq_count_incoming(q, "unschedulable", event);
    }
    sq_update_gauges(q);
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

/* isPodUpdated: anything but status and resourceVersion changed. The
 * mutable parts of a pod are compared; the rest of a pod spec is immutable
 * in Kubernetes. */
static int pod_updated(const kube_pod *a, const kube_pod *b)
{
    const kube_meta *ma = &a->base.meta, *mb = &b->base.meta;

    return !(
        kube_kv_set_equal(ma->labels, ma->n_labels, mb->labels, mb->n_labels) &&
        kube_kv_set_equal(ma->annotations, ma->n_annotations, mb->annotations, mb->n_annotations) &&
        ma->deleting == mb->deleting && ma->n_owners == mb->n_owners &&
        strs_equal(a->scheduling_gates, a->n_scheduling_gates, b->scheduling_gates,
                   b->n_scheduling_gates) &&
        kube_kv_set_equal(a->node_selector, a->n_node_selector, b->node_selector,
                          b->n_node_selector) &&
        affinity_equal(a->affinity, b->affinity) && tolerations_equal(a, b) &&
        a->priority == b->priority && strs_equal(a->images, a->n_images, b->images, b->n_images) &&
        strs_equal(a->init_images, a->n_init_images, b->init_images, b->n_init_images) &&
        kube_resources_equal(&a->requests, &b->requests) && a->n_host_ports == b->n_host_ports &&
        a->n_spread == b->n_spread && a->n_volumes == b->n_volumes);
}

/* Update of a pod in unschedulablePods. */
static int update_unschedulable(sched_queue *q, sched_queued_pod *qp,
                                const struct kube_pod *old_pod, const struct kube_pod *new_pod)
{
    if (old_pod && !pod_updated(old_pod, new_pod))
        return KUBE_OK;
    if (sq_backing_off(q, qp)) {
        sq_detach(q, qp);
        if (sq_attach(q, qp, SCHED_Q_BACKOFF) != KUBE_OK) {
            sq_attach(q, qp, SCHED_Q_UNSCHEDULABLE);
            return KUBE_ENOMEM;
        }
        sq_count_incoming(q, "backoff", EV_POD_UPDATE);
        return KUBE_OK;
    }
    sq_detach(q, qp);
    if (sq_add_to_active(q, qp)) {
        sq_count_incoming(q, "active", EV_POD_UPDATE);
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

    sq_key_of(new_pod->base.meta.namespace_, new_pod->base.meta.name, key, sizeof(key));
    qp = kube_strmap_get(&q->all, key);
    if (!qp) {
        sched_queued_pod *fresh = sq_qpod_new(sq_framework_for(q, new_pod), pi, sq_now_ns(q));
        if (!fresh)
            return KUBE_ENOMEM;
        return add_new_locked(q, fresh, EV_POD_UPDATE);
    }
    sched_queued_pod_set_pod_info(qp, pi);
    sched_nominator_update(q->nominator, old_pod, pi);
    if (qp->where == SCHED_Q_ACTIVE) {
        sched_heap_fix(&q->active, qp);
    } else if (qp->where == SCHED_Q_UNSCHEDULABLE) {
        rc = update_unschedulable(q, qp, old_pod, new_pod);
    }
    sq_update_gauges(q);
    return rc;
}

int sched_queue_update(sched_queue *q, struct kube_pod *old_pod, struct kube_pod *new_pod)
{
    fw_pod_info *pi = NULL;
    int rc;

    if (!sq_framework_for(q, new_pod))
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

    sq_key_of(pod->base.meta.namespace_, pod->base.meta.name, key, sizeof(key));
    pthread_mutex_lock(&q->mu);
    sched_nominator_delete(q->nominator, pod->base.meta.uid);
    qp = kube_strmap_get(&q->all, key);
    if (qp) {
        sq_drop(q, qp);
        sq_update_gauges(q);
    }
    pthread_mutex_unlock(&q->mu);
}
