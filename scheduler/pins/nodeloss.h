/*
 * scheduler/pins/nodeloss.h - the opt-in node-loss policy of the pin
 * controller (scheduler/pins/controller.h, which builds it and calls its
 * reconcile for every queued VM, on the leader).
 *
 * The VM's annotation stickyvm.io/on-node-loss says what happens when its
 * pinned node is lost: Wait (the default, also when absent) = nothing
 * moves; Unpin = the pin is removed once the node has been lost for longer
 * than StickyVM's nodeLossGracePeriod (default 10m; 0s: at once). Any
 * other value counts as Wait, with one Warning event InvalidOnNodeLoss per
 * VM and value: a typo never moves a VM.
 *
 * Lost, and since when: by this replica's own observation, on its own
 * monotonic clock (kube/util/clock.h), as kube's node lifecycle controller
 * judges nodes by its own probeTimestamp, never by the kubelet's times:
 *  - NotReady or Unknown (the Node's Ready condition False or Unknown):
 *    since this replica's Node informer first showed it so. The
 *    condition's lastTransitionTime (a kubelet's clock, possibly years off)
 *    is never compared with ours; it only tells transitions apart: a lost
 *    node showing another lastTransitionTime with the same status went
 *    Ready and back unseen, and its count starts again. A server-written
 *    time thus only ever makes the count later. A node Ready again is
 *    forgotten. A node without a Ready condition is not lost (the node
 *    lifecycle controller sets Unknown when its kubelet never posts).
 *    NoExecute taints are not the signal.
 *  - Missing (no Node object of that name): since this replica's Node
 *    informer saw it deleted (or, lost before, since it was first seen
 *    lost); a node it never saw, since the first reconcile that found a VM
 *    pinned to it.
 *  - Never before this replica started leading: a new leader starts its
 *    own count (a fresh leader waits a full grace period: the safe side).
 *
 * The unpin never happens when a PersistentVolume the VM's claims are bound
 * to (kube/types/localvolumes.h, the rule of the API server's /pin guard,
 * over the scheduler's PVC, PV and Node informers) allows no node but the
 * lost one: the VM keeps its pin (logged once per VM and node). The write
 * is kube_pin_set() with no node, pin-reason NodeLost (recording in
 * seen-pods the launcher pods bound then, so the first-pin rule never pins
 * the VM back to the lost node, and its next pod, one the decision did not
 * see, is placed anywhere and pinned there by PostBind), through the
 * controller's client (fenced by leader election); each one writes a
 * Warning event on the VM, reason Unpinned (as every unpin), action Unpin:
 * "Unpinned from node N, NotReady for 10m3s (reason NodeLost;
 * stickyvm.io/on-node-loss: Unpin, nodeLossGracePeriod 10m0s)", and counts in
 * stickyvm_node_loss_unpins_total.
 *
 * Level-triggered: a Node added lost, a Ready status change and a deletion
 * queue (through the enqueue callback, while leading) every VM pinned to
 * that node with the annotation; a VM lost but within its grace asks to be
 * queued again when the grace ends (a node Ready by then: nothing happens).
 *
 * What it remembers stays bounded by what exists: a record per lost node,
 * kept for a deleted node only while some VM is pinned to it (found by the
 * VM informer's index of VMs by pinned node, scheduler/pins/pinned_index.h),
 * and what each VM was told (an invalid value, a volume hold), forgotten
 * when the VM is deleted.
 *
 * Memory: sched_pins_nodeloss_new() copies its strings; the client, factory,
 * recorder and registry are borrowed and outlive it; the factory must be
 * stopped before sched_pins_nodeloss_free() (its handlers point here).
 * Threads: the handlers run on the informers' thread; reconcile and
 * sched_pins_nodeloss_leading() on the controller's worker; the count from any
 * thread.
 */
#ifndef SCHED_PINS_NODELOSS_H
#define SCHED_PINS_NODELOSS_H

#include <stdint.h>

#include "framework/framework.h"
#include "kube/machinery/factory.h"
#include "kube/transport/client.h"

#define SCHED_PINS_NODELOSS_ANN "stickyvm.io/on-node-loss"
#define SCHED_PINS_NODELOSS_WAIT "Wait"
#define SCHED_PINS_NODELOSS_UNPIN "Unpin"

struct kube_recorder;
struct kube_metrics;

typedef struct sched_pins_nodeloss sched_pins_nodeloss;

typedef struct sched_pins_nodeloss_options {
    kube_client *client;
    kube_factory *informers;        /* Node, PVC, PV and VM listers are asked from it */
    struct kube_recorder *recorder; /* NULL: no events */
    const char *key;                /* the pin annotation */
    const char *pinned_by;          /* pinned-by of the unpins */
    int64_t grace_ms;               /* nodeLossGracePeriod (>= 0) */
    fw_leadership leadership;       /* NULL is_leader: always leading */
    struct kube_metrics *registry;  /* NULL: no metric */
    /* queues VM ns/name in the controller */
    void (*enqueue)(void *ud, const char *ns, const char *name);
    void *enqueue_ud;
} sched_pins_nodeloss_options;

/* What the policy left for a VM. */
typedef enum sched_pins_nodeloss_verdict {
    SCHED_PINS_NODELOSS_NONE,  /* no Unpin VM pinned to a lost node: the other rules apply */
    SCHED_PINS_NODELOSS_DONE,  /* unpinned, held by a local volume, or not leading */
    SCHED_PINS_NODELOSS_LATER, /* lost within its grace (or caches not synced): again in *wait_ms */
    SCHED_PINS_NODELOSS_RETRY, /* the write failed: retry with backoff */
} sched_pins_nodeloss_verdict;

/* Allocates it, adds its handlers to the factory's Node and VM listers
 * (before the factory starts) and the VM lister's index of pinned nodes. KUBE_OK, KUBE_EINVAL
 * (missing client, factory, key or enqueue; negative grace) or KUBE_ENOMEM; freed by
 * sched_pins_nodeloss_free(). */
int sched_pins_nodeloss_new(const sched_pins_nodeloss_options *o, sched_pins_nodeloss **out);

/* This replica started (leading 1: no node counts as lost from before
 * now) or stopped (0) leading. */
void sched_pins_nodeloss_leading(sched_pins_nodeloss *nl, int leading);

/* The policy for vm (the cached VirtualMachine) and vmi (its instance, or
 * NULL): unpins it when due, on the leader. *wait_ms set for LATER. */
sched_pins_nodeloss_verdict sched_pins_nodeloss_reconcile(sched_pins_nodeloss *nl,
                                                          const kube_object *vm,
                                                          const kube_object *vmi, int64_t *wait_ms);

/* The unpins written so far. */
unsigned long sched_pins_nodeloss_unpins(sched_pins_nodeloss *nl);

/* NULL-safe. */
void sched_pins_nodeloss_free(sched_pins_nodeloss *nl);

#endif
