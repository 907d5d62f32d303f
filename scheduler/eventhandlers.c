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
#include "kube/types/storage.h"
#include "kube/types/kubevirt.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define SCHED_POD_FIELD_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static fw_framework *framework_for(const sched_event_ctx *c, const kube_pod *pod)
{
    return fw_framework_for(c->frameworks, c->n_frameworks, pod->scheduler_name);
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

/* ------------------------------------------------------------------ */
/* preCheckForNode                                                     */
/* ------------------------------------------------------------------ */

/* AdmissionCheck (schedule_one.go): the plugins' own predicates. */
static int admission_check(const fw_node_info *ni, const fw_pod_info *pi)
{
    return plugin_node_resources_fits(pi, ni) &&
           plugin_node_affinity_required_matches(pi->pod, ni->node) &&
           plugin_node_name_fits(pi->pod, ni->node) && plugin_node_ports_fits(pi->pod, ni);
}

/* preCheckForNode: the pod could pass the node's admission checks and
 * tolerates its NoSchedule taints. ud is the node's fw_node_info. */
static int pre_check_node(void *ud, const fw_pod_info *pi)
{
    const fw_node_info *ni = ud;

    return ni->node && admission_check(ni, pi) &&
           !plugin_find_untolerated_taint(ni->node, pi->pod,
                                          PLUGIN_EFFECT(KUBE_EFFECT_NO_SCHEDULE));
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
    if (o->ready != n->ready) /* conditions, heartbeats aside: the Ready status */
        return &SCHED_EV_NODE_CONDITION_CHANGE;
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

/* ------------------------------------------------------------------ */
/* Plugin-registered resources                                         */
/* ------------------------------------------------------------------ */

/* A resource whose events only requeue: its informer and what each change
 * raises (NULL: nothing). */
typedef struct sched_route_def {
    const char *gvk;
    const kube_resource *res;
    const kube_codec *codec;
    const fw_cluster_event *add, *update, *del;
    int (*add_matters)(const kube_object *obj); /* NULL: every add */
} sched_route_def;

static const fw_cluster_event ev_pv_add = {FW_GVK_PV, FW_ACT_ADD, "PvAdd"};
static const fw_cluster_event ev_pv_update = {FW_GVK_PV, FW_ACT_UPDATE, "PvUpdate"};
static const fw_cluster_event ev_pvc_add = {FW_GVK_PVC, FW_ACT_ADD, "PvcAdd"};
static const fw_cluster_event ev_pvc_update = {FW_GVK_PVC, FW_ACT_UPDATE, "PvcUpdate"};
static const fw_cluster_event ev_sc_add = {FW_GVK_STORAGE_CLASS, FW_ACT_ADD, "StorageClassAdd"};
static const fw_cluster_event ev_sc_update = {FW_GVK_STORAGE_CLASS, FW_ACT_UPDATE,
                                              "StorageClassUpdate"};
static const fw_cluster_event ev_csinode_add = {FW_GVK_CSI_NODE, FW_ACT_ADD, "CSINodeAdd"};
static const fw_cluster_event ev_csinode_update = {FW_GVK_CSI_NODE, FW_ACT_UPDATE, "CSINodeUpdate"};
static const fw_cluster_event ev_vmi_add = {FW_GVK_VMI, FW_ACT_ADD, "VirtualMachineInstanceAdd"};
static const fw_cluster_event ev_vmi_update = {FW_GVK_VMI, FW_ACT_UPDATE,
                                               "VirtualMachineInstanceUpdate"};
static const fw_cluster_event ev_vmi_delete = {FW_GVK_VMI, FW_ACT_DELETE,
                                               "VirtualMachineInstanceDelete"};
static const fw_cluster_event ev_vm_add = {FW_GVK_VM, FW_ACT_ADD, "VirtualMachineAdd"};
static const fw_cluster_event ev_vm_update = {FW_GVK_VM, FW_ACT_UPDATE, "VirtualMachineUpdate"};
static const fw_cluster_event ev_vm_delete = {FW_GVK_VM, FW_ACT_DELETE, "VirtualMachineDelete"};

/* onStorageClassAdd: only a WaitForFirstConsumer class can help (pods
 * with unbound immediate claims are not cached). */
static int sc_add_matters(const kube_object *obj)
{
    const kube_storage_class *sc = kube_storage_class_from(obj);
    return sc && sc->binding_mode == KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER;
}

/* Volume deletes raise nothing (as v1.28). */
static const sched_route_def route_defs[SCHED_EVENT_ROUTES] = {
    {FW_GVK_PV, &KUBE_RES_PVS, &kube_pv_codec, &ev_pv_add, &ev_pv_update, NULL, NULL},
    {FW_GVK_PVC, &KUBE_RES_PVCS, &kube_pvc_codec, &ev_pvc_add, &ev_pvc_update, NULL, NULL},
    {FW_GVK_STORAGE_CLASS, &KUBE_RES_STORAGECLASSES, &kube_storage_class_codec, &ev_sc_add,
     &ev_sc_update, NULL, sc_add_matters},
    {FW_GVK_CSI_NODE, &KUBE_RES_CSINODES, &kube_csi_node_codec, &ev_csinode_add, &ev_csinode_update,
     NULL, NULL},
    {FW_GVK_VMI, &KUBE_RES_VMIS, &kube_vmi_codec, &ev_vmi_add, &ev_vmi_update, &ev_vmi_delete,
     NULL},
    {FW_GVK_VM, &KUBE_RES_VMS, &kube_vm_codec, &ev_vm_add, &ev_vm_update, &ev_vm_delete, NULL},
};

static void route_move(const sched_event_route *r, const fw_cluster_event *ev,
                       const kube_object *old_obj, const kube_object *new_obj)
{
    if (ev && r->ctx->queue)
        sched_queue_move_all(r->ctx->queue, ev, old_obj, new_obj, NULL, NULL);
}

static void on_route_add(void *ud, kube_object *obj)
{
    const sched_event_route *r = ud;

    if (!r->def->add_matters || r->def->add_matters(obj))
        route_move(r, r->def->add, NULL, obj);
}

static void on_route_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    const sched_event_route *r = ud;
    route_move(r, r->def->update, old_obj, new_obj);
}

static void on_route_delete(void *ud, kube_object *obj)
{
    const sched_event_route *r = ud;
    route_move(r, r->def->del, obj, NULL);
}

/* fw_framework_foreach_event() callback: marks the routes registered. */
static void mark_registered(void *ud, const char *plugin, void *self,
                            const fw_cluster_event_with_hint *ev)
{
    int *wanted = ud;

    for (size_t i = 0; i < SCHED_EVENT_ROUTES; i++)
        if (!strcmp(ev->event.resource, route_defs[i].gvk))
            wanted[i] = 1;
}

/* The informer of one route, with the route's handlers. */
static int add_route(sched_event_ctx *ctx, kube_factory *f, size_t i)
{
    kube_informer_options o = {.resource = route_defs[i].res, .codec = route_defs[i].codec};
    kube_informer_handlers h = {on_route_add, on_route_update, on_route_delete, &ctx->routes[i]};
    kube_lister *l;
    int rc = kube_factory_lister(f, &o, &l);

    ctx->routes[i] = (sched_event_route){ctx, &route_defs[i]};
    return rc == KUBE_OK ? kube_lister_add_handlers(l, &h) : rc;
}

/* ------------------------------------------------------------------ */
/* addAllEventHandlers                                                 */
/* ------------------------------------------------------------------ */

static int add_handlers_to(kube_factory *f, const kube_informer_options *o,
                           const kube_informer_handlers *h, kube_lister **out)
{
    int rc = kube_factory_lister(f, o, out);
    return rc == KUBE_OK ? kube_lister_add_handlers(*out, h) : rc;
}

int sched_add_all_event_handlers(sched_event_ctx *ctx, kube_factory *f, kube_lister **pods,
                                 kube_lister **nodes)
{
    kube_informer_options po = {.resource = &KUBE_RES_PODS, .codec = &kube_pod_codec};
    kube_informer_options no = {.resource = &KUBE_RES_NODES, .codec = &kube_node_codec};
    kube_informer_handlers ph = {on_pod_add, on_pod_update, on_pod_delete, ctx};
    kube_informer_handlers nh = {on_node_add, on_node_update, on_node_delete, ctx};
    int wanted[SCHED_EVENT_ROUTES] = {0};
    int rc;

    po.field_selector = SCHED_POD_FIELD_SELECTOR;
    rc = add_handlers_to(f, &no, &nh, nodes);
    if (rc == KUBE_OK)
        rc = add_handlers_to(f, &po, &ph, pods);
    for (size_t i = 0; i < ctx->n_frameworks; i++)
        fw_framework_foreach_event(ctx->frameworks[i], mark_registered, wanted);
    for (size_t i = 0; rc == KUBE_OK && i < SCHED_EVENT_ROUTES; i++)
        if (wanted[i])
            rc = add_route(ctx, f, i);
    return rc;
}
