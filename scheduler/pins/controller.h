/*
 * scheduler/pins/controller.h - the pin controller: StickyVM's pins made
 * durable and moved after live migrations, by ONE level-triggered
 * controller of the scheduler, on the leader (started once by scheduler.c
 * when any profile enables StickyVM; docs/architecture.md, "The pin
 * controller").
 *
 * Its reconcile of a VirtualMachine (key "namespace/name") applies two
 * rules, reading the VM, its VMI (same name, controlled by the VM) and the
 * VMI's virt-launcher pods from the scheduler's informer factory:
 *
 *  1. Follow a completed live migration (sched_pins_migration_target()):
 *     the VMI's migration completed without failure on target ==
 *     status.nodeName, the VM is pinned to its sourceNode, and neither its
 *     stickyvm.io/followed-migration nor its stickyvm.io/seen-migration
 *     (the migration the last /pin, /unpin or node-loss unpin saw) is that
 *     migration's UID: the pin moves to targetNode, the UID recorded, in
 *     one patch (reason Migration; the event Repinned). The migration is
 *     judged on the VMI read from kube-apiserver right before the write,
 *     never on the cache alone, so an older migration state a lagging
 *     cache shows again cannot move the pin back. A migration once
 *     followed, or completed before a decision, is never applied again, so
 *     a deliberate re-pin to the source node stays.
 *  2. The durable first pin (sched_pins_first_pin_due()): the VM has no
 *     pin, and the VMI's current launcher pod (sched_pins_placement_find():
 *     a pod of one of StickyVM's profiles, spec.schedulerName, bound, not
 *     terminal, on the VMI's status.nodeName; a migration target once the
 *     migration completed onto that node; without a nodeName, the pod that
 *     is not a migration target) was not seen bound by the VM's last
 *     decision (its UID is not in stickyvm.io/seen-pods, kube/types/pin.h):
 *     it is pinned to that pod's node (reason FirstPlacement; the event
 *     Pinned). A pod the last unpin saw is never pinned again, so a
 *     deliberate unpin is never undone; a pod bound after it is a newer
 *     placement and always pinned, whatever the clocks say. No clock
 *     orders anything: a decision recorded before seen-pods existed
 *     (pinned-at and pin-reason API or NodeLost, no seen-pods) is never
 *     undone either. The plugin's PostBind writes this pin at once (the
 *     fast path); the controller waits until SCHED_PINS_SETTLE_S after
 *     the pod's PodScheduled time before writing it (a delay, no
 *     ordering: a pod without that condition, or one this clock sees in
 *     the future, waits not at all), and hands-offs
 *     (sched_pins_enqueue(), PostBind's write failed) go through the same
 *     rule.
 *
 * A Node deleted while VMs are pinned to it: the leader writes a Warning
 * event PinnedNodeDeleted on each such VM, once per deletion
 * (scheduler/pins/lost.h). A VM annotated stickyvm.io/on-node-loss: Unpin
 * whose pinned node is lost (NotReady, Unknown or Missing) longer than
 * nodeLossGracePeriod is unpinned (scheduler/pins/nodeloss.h; checked
 * between rules 1 and 2; node events queue the VMs pinned to the node).
 *
 * Writes go through kube/types/pin.h (a patch carrying the VM's
 * resourceVersion; conflicts re-read and decide anew). A write that fails
 * for any reason (429, 5xx, connection error, timeout) is retried with
 * exponential backoff and jitter (kube/machinery/workqueue.h: 5 ms doubling
 * to 1000 s), forever, until it lands or is no longer needed (VM gone,
 * pinned, unpinned by a newer decision, leadership lost).
 *
 * Level-triggered: VMI, VM and launcher-pod adds and updates queue the VM
 * (handlers on the factory's listers, while leading), and every time
 * leadership is acquired (asked every SCHED_PINS_LEADER_POLL_MS; it counts
 * once the VMI, VM and pod informers have synced) every cached VM is
 * queued again, so what happened while no replica led (failover, restart)
 * is done by the next leader. One worker thread ("stickyvm-pin") drains
 * the queue, deduplicated; it writes only while leading (asked before each
 * write); losing leadership drops the queue.
 *
 * Metrics (on the scheduler's registry): stickyvm_pin_reconcile_pending
 * (gauge: VMs that should be pinned and are not, as this leader knows),
 * stickyvm_pin_write_retries_total, and the plugin's
 * stickyvm_pins_recorded_total, stickyvm_migration_pins_moved_total and
 * stickyvm_pin_record_errors_total; the worker also refreshes
 * scheduler/pins/status.h's gauges on every replica.
 *
 * Memory: sched_pins_new() copies the strings of its options; the factory,
 * pod lister, client, recorder and registry are borrowed and must outlive
 * the controller. The factory must be stopped before sched_pins_free()
 * (its handlers point at the controller).
 * Threads: new/start/stop/free from the owner's thread; sched_pins_enqueue
 * from any thread; the handlers run on the informers' threads.
 */
#ifndef SCHED_PINS_CONTROLLER_H
#define SCHED_PINS_CONTROLLER_H

#include <stdint.h>

#include "config/config.h"
#include "framework/framework.h"
#include "kube/machinery/factory.h"
#include "kube/types/kubevirt.h"
#include "kube/types/pin.h"
#include "kube/types/pod.h"

#define SCHED_PINS_LEADER_POLL_MS 500
/* Seconds after a pod's bind before the controller writes its first pin
 * (PostBind writes it meanwhile). */
#define SCHED_PINS_SETTLE_S 2
/* How often the worker recounts stickyvm_pinned_vms and
 * stickyvm_pinned_pods_waiting (scheduler/pins/status.h), leader or not. */
#define SCHED_PINS_STATUS_REFRESH_MS 10000

struct kube_recorder;
struct kube_metrics;

typedef struct sched_pins sched_pins;

typedef struct sched_pins_options {
    kube_client *client;
    kube_factory *informers;        /* the VMI and VM listers are asked from it */
    kube_lister *pods;              /* the same factory's pod lister */
    struct kube_recorder *recorder; /* NULL: no events */
    const char *key;                /* the pin annotation */
    const char *pinned_by;          /* pinned-by of its writes; NULL: the default */
    /* The schedulerNames of the profiles enabling StickyVM (n of them):
     * only their pods are first-pinned. */
    const char *const *scheduler_names;
    size_t n_scheduler_names;
    fw_leadership leadership;      /* NULL is_leader: always leading */
    struct kube_metrics *registry; /* NULL: no metrics */
    int64_t node_loss_grace_ms;    /* nodeLossGracePeriod (scheduler/pins/nodeloss.h) */
} sched_pins_options;

/* The node a completed live migration moves vm's pin (under key) to, or
 * NULL: vmi's migration completed without failure on target ==
 * status.nodeName, with a source node and a UID; vm pinned to that source;
 * vm's followed-migration is not that UID. Borrowed from vmi. Pure. */
const char *sched_pins_migration_target(const kube_vmi *vmi, const kube_vm *vm, const char *key);

/* Whether vm, pinned (under key) to source, still follows the completed
 * migration uid: its followed-migration and seen-migration are not uid.
 * Pure. */
int sched_pins_migration_due(const kube_vm *vm, const char *key, const char *source,
                             const char *uid);

/* Whether vm (pin under key) takes its first pin over its launcher pod
 * pod_uid: no pin, and its last decision did not see that pod bound
 * (kube_pin_saw_pod() == 0). Pure; reads no clock. */
int sched_pins_first_pin_due(const kube_vm *vm, const char *key, const char *pod_uid);

/* The launcher pod a first pin follows. */
typedef struct sched_pins_placement {
    int found;
    char node[254];
    char pod_uid[KUBE_PIN_UID_MAX + 1];
    int64_t bind_s;  /* its PodScheduled time (whole seconds); 0: none */
    int on_vmi_node; /* on the VMI's status.nodeName */
} sched_pins_placement;

/* The current launcher pod of vmi among pods (rule 2 above; names: the
 * n_names schedulerNames of StickyVM's profiles) into *out (found 0:
 * none). Visits the VMI's pods only (scheduler/pins/launcher_index.h). */
void sched_pins_placement_find(kube_lister *pods, const char *const *names, size_t n_names,
                               const kube_object *vmi, sched_pins_placement *out);

/* Milliseconds until SCHED_PINS_SETTLE_S have passed since bind_s (the
 * apiserver's clock); 0 when they have, when bind_s is 0, or when it lies
 * in this clock's future. A delay only: nothing is decided by it. */
int64_t sched_pins_settle_ms(int64_t bind_s);

/* What the profiles enabling StickyVM configure for the one controller. */
typedef struct sched_pins_profile_set {
    const char *key;    /* their annotationKey; NULL: no profile enables StickyVM */
    const char **names; /* their schedulerNames (the caller's array, room for n) */
    size_t n_names;
    int64_t node_loss_grace_ms; /* their nodeLossGracePeriod */
} sched_pins_profile_set;

/* The profiles of cfg that enable StickyVM (fws[i] built from
 * cfg->profiles[i], n of them), into out (its strings borrowed from cfg).
 * KUBE_OK, or KUBE_ECONFIG with err naming both profiles when two
 * configure different annotationKey or nodeLossGracePeriod values. */
int sched_pins_profiles(const sched_config *cfg, fw_framework *const *fws, size_t n,
                        sched_pins_profile_set *out, char *err, size_t errlen);

/* Allocates the controller and adds its handlers to the factory's VMI,
 * VM and pod listers (before the factory starts). KUBE_OK, KUBE_EINVAL
 * (missing client, factory, pod lister or key; the factory started) or
 * KUBE_ENOMEM. */
int sched_pins_new(const sched_pins_options *o, sched_pins **out);
/* Starts the worker. KUBE_OK, KUBE_EINVAL (started) or KUBE_ENOMEM. */
int sched_pins_start(sched_pins *c);
/* Stops the worker (after the write in flight). NULL-safe, idempotent. */
void sched_pins_stop(sched_pins *c);
/* Stops and frees. NULL-safe. */
void sched_pins_free(sched_pins *c);

/* Queues VM ns/name (the plugin's hand-off when its write failed). */
void sched_pins_enqueue(sched_pins *c, const char *ns, const char *name);

#endif
