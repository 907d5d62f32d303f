/*
 * kube/types/node_target.h - whether a node can take a pinned VM's next
 * pod: the one rule stickyvm-apiserver's pin guard (apiserver/pintarget.h)
 * and the scheduler's count of waiting pods (scheduler/pins/status.h) share,
 * as kube/types/localvolumes.h is the one rule of local volumes.
 *
 * In the order the default profile's Filter plugins refuse a node, so the
 * first refusal is the one FailedScheduling names: no Node object
 * (StickyVM's PreFilter), cordoned (NodeUnschedulable, unless the
 * tolerations tolerate node.kubernetes.io/unschedulable:NoSchedule), a
 * NoSchedule or NoExecute taint no toleration tolerates (TaintToleration;
 * the node lifecycle controller's node.kubernetes.io/not-ready and
 * /unreachable included), then a Ready condition that is not True
 * (NotReady, or Unknown: the node lifecycle controller taints such a node,
 * but a pin made before it did would still wait).
 *
 * Threads: pure. Memory: everything is borrowed from the caller.
 */
#ifndef KUBE_NODE_TARGET_H
#define KUBE_NODE_TARGET_H

#include <stddef.h>

#include "kube/types/node.h"
#include "kube/types/pod.h"

typedef enum kube_node_refusal {
    KUBE_NODE_TAKES = 0, /* nothing above refuses it */
    KUBE_NODE_MISSING,   /* no Node object */
    KUBE_NODE_CORDONED,  /* spec.unschedulable, not tolerated */
    KUBE_NODE_TAINTED,   /* an untolerated NoSchedule/NoExecute taint */
    KUBE_NODE_NOT_READY, /* Ready False */
    KUBE_NODE_UNKNOWN    /* Ready Unknown or absent */
} kube_node_refusal;

/* The first of node's taints with effect NoSchedule or NoExecute that none
 * of the n tolerations tolerates (v1helper.FindMatchingUntoleratedTaint),
 * or NULL. Borrowed from node. */
const kube_taint *kube_node_untolerated_taint(const kube_node *node, const kube_toleration *tols,
                                              size_t n);

/* Why node (NULL: no such Node) cannot take a pod with the n tolerations
 * tols, by the order above, or KUBE_NODE_TAKES. *taint (may be NULL)
 * receives the taint of KUBE_NODE_TAINTED (borrowed from node), else NULL. */
kube_node_refusal kube_node_refuses(const kube_node *node, const kube_toleration *tols, size_t n,
                                    const kube_taint **taint);

/* 1 when t is one the node lifecycle controller owns for a node that is
 * not Ready (node.kubernetes.io/not-ready or /unreachable), else 0. */
int kube_taint_is_not_ready(const kube_taint *t);

/* "NoSchedule", "PreferNoSchedule", "NoExecute" or "" (static). */
const char *kube_taint_effect_name(kube_taint_effect e);

#endif
