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
 * preCheckForNode (resources, node name, required node affinity, host
 * ports, untolerated NoSchedule taints). Node conditions are not decoded by
 * kube/types/node.h, so NodeConditionChange is never raised.
 *
 * plugin-watched resources: a plugin that registered events of a resource
 * it watches with its own informers (StickyVM: VirtualMachine,
 * VirtualMachineInstance) hands them to sched_event_sink(), which moves the
 * pods as for any other event (the plugin's hints decide).
 * volumes: the volume plugins' shared PV, PVC, StorageClass and CSINode
 * informers (plugin_vol_listers_subscribe on the hub) raise PvAdd,
 * PvUpdate, PvcAdd, PvcUpdate, StorageClassAdd (WaitForFirstConsumer
 * classes only), StorageClassUpdate, CSINodeAdd, CSINodeUpdate.
 *
 * Threads: the handlers run on the informer hub's thread.
 * Memory: nothing is retained beyond what the queue and cache keep.
 */
#ifndef SCHED_EVENTHANDLERS_H
#define SCHED_EVENTHANDLERS_H

#include <stddef.h>

#include "cache/cache.h"
#include "framework/framework.h"
#include "kube/machinery/informer.h"
#include "queue/queue.h"

struct kube_node;

typedef struct sched_event_ctx {
    sched_queue *queue;              /* borrowed; set before the hub starts */
    sched_cache *cache;              /* borrowed */
    fw_framework *const *frameworks; /* borrowed: the profiles */
    size_t n_frameworks;
} sched_event_ctx;

/* Handlers whose ud is ctx (borrowed; must outlive the hub). */
kube_informer_handlers sched_pod_handlers(sched_event_ctx *ctx);
kube_informer_handlers sched_node_handlers(sched_event_ctx *ctx);

/* The sink given to plugins as fw_services.events (ud is ctx; events
 * before ctx->queue is set are dropped). */
fw_event_sink sched_event_sink(sched_event_ctx *ctx);
/* Feeds the volume events of hub's volume listers to ctx's queue until
 * unsubscribed (call that after the hub stopped, before ctx goes). Both
 * borrowed. KUBE_OK or KUBE_ENOMEM. */
int sched_volume_events_subscribe(sched_event_ctx *ctx, const void *hub);
void sched_volume_events_unsubscribe(sched_event_ctx *ctx, const void *hub);

/* preCheckForNode: 1 when pod could pass the node's admission checks and
 * tolerates its NoSchedule taints. */
int sched_node_admits_pod(const fw_node_info *ni, const fw_pod_info *pi);

/* nodeSchedulingPropertiesChange: the event an update raises, or NULL. */
const fw_cluster_event *sched_node_change_event(const struct kube_node *old_node,
                                                const struct kube_node *new_node);

#endif
