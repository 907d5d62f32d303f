/*
 * scheduler/eventhandlers.h - the informer handlers that feed the queue
 * and the cache, as kube-scheduler v1.28's eventhandlers.go:
 *
 * pods (listed with fieldSelector status.phase!=Succeeded,
 * status.phase!=Failed):
 *   - assigned pods (spec.nodeName set) go to the cache; an add or update
 *     also moves unschedulable pods whose required pod affinity matches it
 *     (AssignedPodAdd / AssignedPodUpdate), a delete moves every pod a
 *     plugin registered for AssignedPodDelete;
 *   - unassigned pods whose spec.schedulerName is one of our profiles go to
 *     the queue (add / update / delete); an update with the same
 *     resourceVersion, or of a pod the cache assumed, is ignored; a pod
 *     deleted while waiting on Permit is rejected there and AssignedPodDelete
 *     raised;
 *   - a pod moving from unassigned to assigned leaves the queue and enters
 *     the cache (client-go's FilteringResourceEventHandler semantics).
 * nodes: add / update / delete update the cache; an add raises NodeAdd, an
 * update the first of NodeSpecUnschedulableChange (only when the node
 * became schedulable), NodeAllocatableChange, NodeLabelChange,
 * NodeTaintChange that applies; the queue's pre-check is kube-scheduler's
 * preCheckForNode: the admission predicates the plugins export
 * (plugins/plugins.h: resources, node name, required node affinity, host
 * ports) and no untolerated NoSchedule taint. Node conditions are not decoded by
 * kube/types/node.h, so NodeConditionChange is never raised.
 *
 * the other resources (kube-scheduler's addAllEventHandlers for the GVKs
 * the plugins registered): for every GVK some enabled plugin registered
 * in events_to_register (EnqueueExtensions), and only for those, the
 * factory's informer of that resource gets handlers raising its events:
 * PersistentVolume (PvAdd, PvUpdate), PersistentVolumeClaim (PvcAdd,
 * PvcUpdate), StorageClass (StorageClassAdd for WaitForFirstConsumer
 * classes only, StorageClassUpdate), CSINode (CSINodeAdd, CSINodeUpdate),
 * VirtualMachineInstance and VirtualMachine (...Add, ...Update,
 * ...Delete); volume deletes raise nothing (as v1.28). The queue then
 * moves the pods the registering plugins rejected (their hints decide).
 * This is the one route from an informer to the queue: plugins only read
 * the factory's listers.
 *
 * Threads: the handlers run on the informer hub's thread.
 * Memory: nothing is retained beyond what the queue and cache keep.
 */
#ifndef SCHED_EVENTHANDLERS_H
#define SCHED_EVENTHANDLERS_H

#include <stddef.h>

#include "cache/cache.h"
#include "framework/framework.h"
#include "kube/machinery/factory.h"
#include "queue/queue.h"

struct kube_node;

/* The plugin-registered resources an informer route exists for. */
#define SCHED_EVENT_ROUTES 6

typedef struct sched_event_ctx sched_event_ctx;

/* One plugin-registered resource's handlers' ud. */
typedef struct sched_event_route {
    sched_event_ctx *ctx;
    const struct sched_route_def *def; /* static */
} sched_event_route;

struct sched_event_ctx {
    sched_queue *queue;              /* borrowed */
    sched_cache *cache;              /* borrowed */
    fw_framework *const *frameworks; /* borrowed: the profiles */
    size_t n_frameworks;
    sched_event_route routes[SCHED_EVENT_ROUTES];
};

/* addAllEventHandlers: asks f for the pod informer (fieldSelector
 * status.phase!=Succeeded,status.phase!=Failed), the node informer and
 * the informer of every GVK a profile's plugins registered, and adds ctx's
 * handlers to them. ctx (borrowed, its queue, cache and frameworks set)
 * must outlive f's hub. *pods and *nodes receive the listers (owned by f).
 * Before f starts. KUBE_OK, KUBE_ENOMEM or the factory's error. */
int sched_add_all_event_handlers(sched_event_ctx *ctx, kube_factory *f, kube_lister **pods,
                                 kube_lister **nodes);

/* nodeSchedulingPropertiesChange: the event an update raises, or NULL. */
const fw_cluster_event *sched_node_change_event(const struct kube_node *old_node,
                                                const struct kube_node *new_node);

#endif
