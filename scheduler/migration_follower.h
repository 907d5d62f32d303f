/*
 * scheduler/migration_follower.h - the pin follows a completed live
 * migration: a small level-triggered controller that runs only on the
 * leader.
 *
 * For each VirtualMachineInstance it compares the VMI's completed migration
 * (status.migrationState completed and not failed, targetNode equal to
 * status.nodeName) with its VirtualMachine (the VMI's controller): when the
 * VM is pinned to the migration's sourceNode and its
 * stickyvm.io/followed-migration annotation is not that migration's UID,
 * the pin moves to targetNode and the UID is recorded, in one patch
 * (kube/types/pin.h, reason Migration). A migration once followed is never
 * applied again, so a deliberate re-pin to the source node stays.
 *
 * Level-triggered: VMI adds and updates (a handler the follower adds to
 * the VMI lister of the scheduler's informer factory, as a controller
 * does) queue the VMI (only while this replica leads), and every time leadership is acquired (the
 * follower asks leadership every SCHED_FOLLOWER_LEADER_POLL_MS; it counts once both informers have
 * synced) every cached VMI is queued again, so a migration completed while no replica led
 * (failover, restart) is followed by the next leader. A worker thread
 * ("stickyvm-pin") drains the queue (one entry per VMI, deduplicated),
 * reading VMIs and VMs from the factory's listers; it writes only while
 * leading. A followed migration records the event Repinned on the VM.
 *
 * Memory: sched_follower_new() copies the strings of its options; the
 * listers, client, recorder and the done callback's ud are borrowed and
 * must outlive the follower. The factory must be stopped before
 * sched_follower_free() (its handler points at the follower), which stops
 * and frees.
 * Threads: from the owner's thread; the handler runs on the hub's.
 */
#ifndef SCHED_MIGRATION_FOLLOWER_H
#define SCHED_MIGRATION_FOLLOWER_H

#include "framework/framework.h"
#include "kube/machinery/factory.h"
#include "kube/types/kubevirt.h"
#include "kube/types/pin.h"

#define SCHED_FOLLOWER_LEADER_POLL_MS 500

struct kube_recorder;

typedef struct sched_follower sched_follower;

typedef struct sched_follower_options {
    kube_client *client;
    kube_lister *vmis, *vms;        /* the informer factory's VMI and VM listers */
    struct kube_recorder *recorder; /* NULL: no events */
    const char *key;                /* the pin annotation */
    const char *pinned_by;          /* pinned-by of the follower's writes */
    fw_leadership leadership;       /* NULL is_leader: always leading */
    /* Called on the worker after each write the follower attempted: rc and
     * res as kube_pin_set() left them (res->vm the VM afterwards).
     * Optional. */
    void (*done)(void *ud, const kube_vm *vm, int rc, const kube_pin_result *res);
    void *ud;
} sched_follower_options;

/* The node a completed live migration moves vm's pin (under key) to, or
 * NULL: vmi's migration completed without failure on target ==
 * status.nodeName, with a source node and a UID; vm pinned to that source;
 * vm's followed-migration is not that UID. Borrowed from vmi. Pure. */
const char *sched_follower_target(const kube_vmi *vmi, const kube_vm *vm, const char *key);

/* Allocates the follower, adds its handler to o->vmis (before the factory
 * starts) and starts its worker. KUBE_OK, KUBE_EINVAL (missing client,
 * listers or key; the factory started) or KUBE_ENOMEM. */
int sched_follower_new(const sched_follower_options *o, sched_follower **out);

/* Stops the worker (after the write in flight) and frees. NULL-safe. */
void sched_follower_free(sched_follower *f);

#endif
