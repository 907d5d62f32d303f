/*
 * scheduler/pins/status.h - what the nodes of pinned VMs look like, as the
 * scheduler's metrics, so that a lost node is measured (docs/operations.md,
 * "When a node is lost"):
 *
 *   stickyvm_pinned_vms{node_status}: VMs pinned, by their node's status:
 *     Ready, NotReady, Unknown, Missing, SchedulingDisabled (a Ready node
 *     that is cordoned; a cordoned NotReady or Unknown node counts by its
 *     readiness).
 *   stickyvm_pinned_pods_waiting{reason}: pending pods of pinned VMs the
 *     scheduler found unschedulable, by why: NodeNotReady, NodeMissing,
 *     NodeUnschedulable, NodeTainted, Insufficient.
 *
 *   stickyvm_pinned_vms_on_unready_node{node, node_status}: VMs pinned to
 *     each node that is NotReady, Unknown or Missing; a node that is Ready
 *     (cordoned or not) has no series, so a healthy cluster has none.
 *
 * Every series of the first two is always present (0 when none). Each replica
 * computes them from its own caches (leader or not), on refresh.
 *
 * A pod waits when it is pending with PodScheduled=False (reason
 * Unschedulable) and its VM is pinned to a node that cannot take it. Why
 * is computed from the caches with the Filter plugins' own predicates, in
 * the default profile's order, so it is the reason FailedScheduling names
 * for that node: NodeMissing (no Node object: StickyVM's PreFilter),
 * NodeUnschedulable (NodeUnschedulable: cordoned, not tolerated), then
 * TaintToleration's first untolerated NoSchedule/NoExecute taint,
 * NodeNotReady for node.kubernetes.io/not-ready or /unreachable and
 * NodeTainted for any other, then Insufficient (NodeResourcesFit, against
 * the pods the informer has bound there). A pod whose node passes all of
 * them (it waits for something else, or for its retry after the node
 * recovered) is not counted. Nothing is read from the condition's message,
 * whose words may be another scheduler's; every replica sees the same
 * caches (the queue's unschedulable plugins exist only on the replica that
 * tried).
 *
 * Memory: sched_pins_status_new() copies the key; listers and registry are
 * borrowed and outlive it. Threads: refresh from one thread at a time.
 */
#ifndef SCHED_PINS_STATUS_H
#define SCHED_PINS_STATUS_H

#include "kube/machinery/factory.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"

struct kube_metrics;

typedef struct sched_pins_status sched_pins_status;

/* Allocates the status over the factory's VM, VMI, Node and Pod listers
 * (asked from informers before it starts; pods is its pod lister) and
 * registers both gauges, every series at 0 (registry NULL: no metrics).
 * KUBE_OK, KUBE_EINVAL or KUBE_ENOMEM; caller frees with
 * sched_pins_status_free(). */
int sched_pins_status_new(kube_factory *informers, kube_lister *pods, const char *key,
                          struct kube_metrics *registry, sched_pins_status **out);
/* Recounts from the caches and sets the gauges. */
void sched_pins_status_refresh(sched_pins_status *ps);
/* NULL-safe. */
void sched_pins_status_free(sched_pins_status *ps);

#endif
