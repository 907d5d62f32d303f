/*
 * scheduler/eventhandlers.c - informer handlers feeding the queue and the
 * cache (eventhandlers.h).
 */
#include "eventhandlers.h"

#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/codec/selector.h"
#include "kube/types/storage.h"
#include "plugins/volumebinding/volume_binding.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static fw_framework *framework_for(const sched_event_ctx *c, const kube_pod *pod)
{
    for (size_t i = 0; i < c->n_frameworks; i++)
        if (!strcmp(fw_framework_profile_name(c->frameworks[i]), pod->scheduler_name))
            return c->frameworks[i];
    return NULL;
}

static int assigned(const kube_pod *pod)
{
    return pod->node_name[0] != '\0';
}

static void log_err(int rc, const char *what, const kube_meta *m)
{
    if (rc != KUBE_OK && rc != KUBE_ECANCELED)
        KLOG_ERROR("%s %s/%s: %s", what, m->namespace_, m->name, kube_strerror(rc));
}

/* ------------------------------------------------------------------ */
/* Assigned pods: the cache                                            */
/* ------------------------------------------------------------------ */

static void add_pod_to_cache(sched_event_ctx *c, kube_pod *pod)
{
    KLOG_V(3, "add event for scheduled pod %s/%s", pod->base.meta.namespace_, pod->base.meta.name);
    log_err(sched_cache_add_pod(c->cache, pod), "scheduler cache AddPod failed for",
            &pod->base.meta);
    sched_queue_assigned_pod_added(c->queue, pod);
}

static void update_pod_in_cache(sched_event_ctx *c, kube_pod *old_pod, kube_pod *new_pod)
{
    log_err(sched_cache_update_pod(c->cache, old_pod, new_pod),
            "scheduler cache UpdatePod failed for", &new_pod->base.meta);
    sched_queue_assigned_pod_updated(c->queue, old_pod, new_pod);
}

static void delete_pod_from_cache(sched_event_ctx *c, kube_pod *pod)
{
    KLOG_V(3, "delete event for scheduled pod %s/%s", pod->base.meta.namespace_,
           pod->base.meta.name);
    log_err(sched_cache_remove_pod(c->cache, pod), "scheduler cache RemovePod failed for",
            &pod->base.meta);
    sched_queue_move_all(c->queue, &SCHED_EV_ASSIGNED_POD_DELETE, &pod->base, NULL, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Unassigned pods: the queue                                          */
/* ------------------------------------------------------------------ */

static void add_pod_to_queue(sched_event_ctx *c, kube_pod *pod)
{
    KLOG_V(3, "add event for unscheduled pod %s/%s", pod->base.meta.namespace_,
           pod->base.meta.name);
    log_err(sched_queue_add(c->queue, pod), "unable to queue", &pod->base.meta);
}

static void update_pod_in_queue(sched_event_ctx *c, kube_pod *old_pod, kube_pod *new_pod)
{
    /* identical objects (a resync) would let a duplicate through (#96071) */
    if (!strcmp(old_pod->base.meta.resource_version, new_pod->base.meta.resource_version))
        return;
    if (sched_cache_is_assumed(c->cache, new_pod->base.meta.uid))
        return;
    log_err(sched_queue_update(c->queue, old_pod, new_pod), "unable to update queued pod",
            &new_pod->base.meta);
}

static void delete_pod_from_queue(sched_event_ctx *c, kube_pod *pod)
{
    fw_framework *fw = framework_for(c, pod);

    KLOG_V(3, "delete event for unscheduled pod %s/%s", pod->base.meta.namespace_,
           pod->base.meta.name);
    sched_queue_delete(c->queue, pod);
    /* a pod waiting on Permit was assumed: free its place at once */
    if (fw && fw_framework_reject_waiting_pod(fw, pod->base.meta.uid, "", "removed"))
        sched_queue_move_all(c->queue, &SCHED_EV_ASSIGNED_POD_DELETE, &pod->base, NULL, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Pod handlers (two filtered handlers in kube-scheduler, merged)       */
/* ------------------------------------------------------------------ */

static void on_pod_add(void *ud, kube_object *obj)
{
    sched_event_ctx *c = ud;
    kube_pod *pod = (kube_pod *)kube_pod_from(obj);

    if (!pod)
        return;
    if (assigned(pod))
        add_pod_to_cache(c, pod);
    else if (framework_for(c, pod))
        add_pod_to_queue(c, pod);
}

static void on_pod_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    sched_event_ctx *c = ud;
    kube_pod *o = (kube_pod *)kube_pod_from(old_obj);
    kube_pod *n = (kube_pod *)kube_pod_from(new_obj);
    int old_queued, new_queued;

    if (!o || !n)
        return;
    /* the cache's filter: assigned pods */
    if (assigned(o) && assigned(n))
        update_pod_in_cache(c, o, n);
    else if (assigned(o))
        delete_pod_from_cache(c, o);
    /* the queue's filter: unassigned pods of our profiles */
    old_queued = !assigned(o) && framework_for(c, o);
    new_queued = !assigned(n) && framework_for(c, n);
    if (old_queued && new_queued)
        update_pod_in_queue(c, o, n);
    else if (old_queued)
        delete_pod_from_queue(c, o);
    else if (new_queued)
        add_pod_to_queue(c, n);
    if (!assigned(o) && assigned(n))
        add_pod_to_cache(c, n);
}

static void on_pod_delete(void *ud, kube_object *obj)
{
    sched_event_ctx *c = ud;
    kube_pod *pod = (kube_pod *)kube_pod_from(obj);

    if (!pod)
        return;
    if (assigned(pod))
        delete_pod_from_cache(c, pod);
    else if (framework_for(c, pod))
        delete_pod_from_queue(c, pod);
}

kube_informer_handlers sched_pod_handlers(sched_event_ctx *ctx)
{
    kube_informer_handlers h = {on_pod_add, on_pod_update, on_pod_delete, ctx};
    return h;
}

/* ------------------------------------------------------------------ */
/* preCheckForNode                                                     */
/* ------------------------------------------------------------------ */

/* noderesources.Fits: no insufficient resource. */
static int fits_resources(const fw_node_info *ni, const fw_pod_info *pi)
{
    const fw_resource *req = &pi->request, *alloc = &ni->allocatable, *used = &ni->requested;

    if ((int64_t)ni->n_pods + 1 > alloc->allowed_pod_number)
        return 0;
    if (req->milli_cpu == 0 && req->memory == 0 && req->ephemeral_storage == 0 &&
        req->n_scalars == 0)
        return 1;
    if (req->milli_cpu > 0 && alloc->milli_cpu < req->milli_cpu + used->milli_cpu)
        return 0;
    if (req->memory > 0 && alloc->memory < req->memory + used->memory)
        return 0;
    if (req->ephemeral_storage > 0 &&
        alloc->ephemeral_storage < req->ephemeral_storage + used->ephemeral_storage)
        return 0;
    for (uint32_t i = 0; i < req->n_scalars; i++) {
        const fw_scalar *s = &req->scalars[i];
        if (s->value == 0)
            continue;
        if (fw_resource_scalar(alloc, s->name) < s->value + fw_resource_scalar(used, s->name))
            return 0;
    }
    return 1;
}

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node). */
static int matches_required_affinity(const kube_node *node, const kube_pod *pod)
{
    const kube_meta *m = &node->base.meta;

    for (size_t i = 0; i < pod->n_node_selector; i++) {
        const char *v = kube_meta_label(m, pod->node_selector[i].key);
        if (!v || strcmp(v, pod->node_selector[i].value))
            return 0;
    }
    if (!pod->affinity || !pod->affinity->node_required)
        return 1;
    return kube_node_selector_matches(pod->affinity->node_required, m->name, m->labels,
                                      m->n_labels);
}

static int fits_ports(const fw_node_info *ni, const kube_pod *pod)
{
    for (size_t i = 0; i < pod->n_host_ports; i++) {
        const kube_host_port *hp = &pod->host_ports[i];
        if (fw_host_ports_conflict(&ni->used_ports, hp->host_ip, hp->protocol, hp->port))
            return 0;
    }
    return 1;
}

static int tolerates_no_schedule_taints(const kube_node *node, const kube_pod *pod)
{
    for (size_t i = 0; i < node->n_taints; i++) {
        const kube_taint *t = &node->taints[i];
        size_t k;
        if (t->effect != KUBE_EFFECT_NO_SCHEDULE)
            continue;
        for (k = 0; k < pod->n_tolerations; k++)
            if (kube_toleration_tolerates(&pod->tolerations[k], t))
                break;
        if (k == pod->n_tolerations)
            return 0;
    }
    return 1;
}

int sched_node_admits_pod(const fw_node_info *ni, const fw_pod_info *pi)
{
    const kube_node *node = ni->node;
    const kube_pod *pod = pi->pod;

    if (!node)
        return 0;
    if (*pod->node_name && strcmp(pod->node_name, node->base.meta.name))
        return 0;
    return fits_resources(ni, pi) && matches_required_affinity(node, pod) && fits_ports(ni, pod) &&
           tolerates_no_schedule_taints(node, pod);
}

static int pre_check_node(void *ud, const fw_pod_info *pi)
{
    return sched_node_admits_pod(ud, pi);
}

/* ------------------------------------------------------------------ */
/* Node changes                                                        */
/* ------------------------------------------------------------------ */

static int taints_equal(const kube_node *a, const kube_node *b)
{
    if (a->n_taints != b->n_taints)
        return 0;
    for (size_t i = 0; i < a->n_taints; i++)
        if (strcmp(a->taints[i].key, b->taints[i].key) ||
            strcmp(a->taints[i].value, b->taints[i].value) ||
            a->taints[i].effect != b->taints[i].effect)
            return 0;
    return 1;
}

const fw_cluster_event *sched_node_change_event(const kube_node *o, const kube_node *n)
{
    const kube_meta *mo = &o->base.meta, *mn = &n->base.meta;

    if (o->unschedulable != n->unschedulable && !n->unschedulable)
        return &SCHED_EV_NODE_SPEC_UNSCHEDULABLE_CHANGE;
    if (!kube_resources_equal(&o->allocatable, &n->allocatable))
        return &SCHED_EV_NODE_ALLOCATABLE_CHANGE;
    if (!kube_kv_set_equal(mo->labels, mo->n_labels, mn->labels, mn->n_labels))
        return &SCHED_EV_NODE_LABEL_CHANGE;
    if (!taints_equal(o, n))
        return &SCHED_EV_NODE_TAINT_CHANGE;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Node handlers                                                       */
/* ------------------------------------------------------------------ */

static void on_node_add(void *ud, kube_object *obj)
{
    sched_event_ctx *c = ud;
    kube_node *node = (kube_node *)kube_node_from(obj);
    fw_node_info *info = NULL;
    int rc;

    if (!node)
        return;
    KLOG_V(3, "add event for node %s", node->base.meta.name);
    rc = sched_cache_add_node(c->cache, node, &info);
    log_err(rc, "scheduler cache AddNode failed for", &node->base.meta);
    if (info)
        sched_queue_move_all(c->queue, &SCHED_EV_NODE_ADD, NULL, obj, pre_check_node, info);
    fw_node_info_free(info);
}

static void on_node_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    sched_event_ctx *c = ud;
    kube_node *o = (kube_node *)kube_node_from(old_obj);
    kube_node *n = (kube_node *)kube_node_from(new_obj);
    const fw_cluster_event *ev;
    fw_node_info *info = NULL;

    if (!o || !n)
        return;
    log_err(sched_cache_update_node(c->cache, o, n, &info), "scheduler cache UpdateNode failed for",
            &n->base.meta);
    ev = sched_node_change_event(o, n);
    if (ev && info)
        sched_queue_move_all(c->queue, ev, old_obj, new_obj, pre_check_node, info);
    fw_node_info_free(info);
}

static void on_node_delete(void *ud, kube_object *obj)
{
    sched_event_ctx *c = ud;
    kube_node *node = (kube_node *)kube_node_from(obj);

    if (!node)
        return;
    KLOG_V(3, "delete event for node %s", node->base.meta.name);
    log_err(sched_cache_remove_node(c->cache, node), "scheduler cache RemoveNode failed for",
            &node->base.meta);
}

kube_informer_handlers sched_node_handlers(sched_event_ctx *ctx)
{
    kube_informer_handlers h = {on_node_add, on_node_update, on_node_delete, ctx};
    return h;
}

/* ------------------------------------------------------------------ */
/* Plugin-watched resources                                            */
/* ------------------------------------------------------------------ */

static void on_plugin_event(void *ud, const fw_cluster_event *ev, const kube_object *old_obj,
                            const kube_object *new_obj)
{
    sched_event_ctx *c = ud;

    if (c->queue)
        sched_queue_move_all(c->queue, ev, old_obj, new_obj, NULL, NULL);
}

fw_event_sink sched_event_sink(sched_event_ctx *ctx)
{
    fw_event_sink sink = {on_plugin_event, ctx};
    return sink;
}

/* ------------------------------------------------------------------ */
/* Volumes                                                             */
/* ------------------------------------------------------------------ */

static const fw_cluster_event ev_pv_add = {FW_GVK_PV, FW_ACT_ADD, "PvAdd"};
static const fw_cluster_event ev_pv_update = {FW_GVK_PV, FW_ACT_UPDATE, "PvUpdate"};
static const fw_cluster_event ev_pvc_add = {FW_GVK_PVC, FW_ACT_ADD, "PvcAdd"};
static const fw_cluster_event ev_pvc_update = {FW_GVK_PVC, FW_ACT_UPDATE, "PvcUpdate"};
static const fw_cluster_event ev_sc_add = {FW_GVK_STORAGE_CLASS, FW_ACT_ADD, "StorageClassAdd"};
static const fw_cluster_event ev_sc_update = {FW_GVK_STORAGE_CLASS, FW_ACT_UPDATE,
                                              "StorageClassUpdate"};
static const fw_cluster_event ev_csinode_add = {FW_GVK_CSI_NODE, FW_ACT_ADD, "CSINodeAdd"};
static const fw_cluster_event ev_csinode_update = {FW_GVK_CSI_NODE, FW_ACT_UPDATE, "CSINodeUpdate"};

/* {add, update} per kind; deletes raise nothing (as v1.28). */
static const fw_cluster_event *const vol_events[PLUGIN_VOL_KINDS][2] = {
    [PLUGIN_VOL_PV] = {&ev_pv_add, &ev_pv_update},
    [PLUGIN_VOL_PVC] = {&ev_pvc_add, &ev_pvc_update},
    [PLUGIN_VOL_SC] = {&ev_sc_add, &ev_sc_update},
    [PLUGIN_VOL_CSINODE] = {&ev_csinode_add, &ev_csinode_update},
};

/* onStorageClassAdd: only a WaitForFirstConsumer class can help (pods
 * with unbound immediate claims are not cached). */
static int sc_add_matters(const kube_object *obj)
{
    const kube_storage_class *sc = kube_storage_class_from(obj);
    return sc && sc->binding_mode == KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER;
}

static void on_vol_event(void *ud, plugin_vol_kind k, kube_object *old_obj, kube_object *new_obj)
{
    sched_event_ctx *c = ud;

    if (!new_obj || (unsigned)k >= PLUGIN_VOL_KINDS || !c->queue)
        return;
    if (!old_obj && k == PLUGIN_VOL_SC && !sc_add_matters(new_obj))
        return;
    sched_queue_move_all(c->queue, vol_events[k][old_obj != NULL], old_obj, new_obj, NULL, NULL);
}

int sched_volume_events_subscribe(sched_event_ctx *ctx, const void *hub)
{
    return plugin_vol_listers_subscribe(hub, on_vol_event, ctx);
}

void sched_volume_events_unsubscribe(sched_event_ctx *ctx, const void *hub)
{
    plugin_vol_listers_unsubscribe(hub, on_vol_event, ctx);
}
