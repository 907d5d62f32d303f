/*
 * scheduler/pins/launcher_index.h - the scheduler's pod informer indexes
 * virt-launcher pods by their VirtualMachineInstance, so the pin controller
 * finds a VMI's pods without walking every pod in the cluster: a VM that
 * is not StickyVM's costs O(1) per VMI event, whatever the cluster's pod
 * count.
 *
 * A pod's key is "namespace/name" of its controller ownerReference when
 * that is a kubevirt.io VirtualMachineInstance (stickyvm_vmi_owner(), the
 * test the pin controller's launcher scan applies); a pod without one is
 * not indexed. The owner's uid is not part of the key: a caller that must
 * tell a recreated VMI apart checks the reference's uid itself, as it did
 * while walking.
 *
 * Memory: nothing is allocated here beyond the lister's index (freed with
 * the factory). Threads: as kube_lister_by_index() (any thread).
 */
#ifndef SCHED_PINS_LAUNCHER_INDEX_H
#define SCHED_PINS_LAUNCHER_INDEX_H

#include "kube/machinery/factory.h"

/* The index's name on the pod lister. */
#define SCHED_PINS_LAUNCHER_INDEX "stickyvm.io/launchers-by-vmi"

/* Adds the index to pods (the scheduler's pod lister), before or after the
 * factory starts (after, it is built from the cache at once). KUBE_OK (also
 * when already there), KUBE_EINVAL (pods NULL), KUBE_ENOMEM. */
int sched_pins_launcher_index_add(kube_lister *pods);

/* Calls fn for each pod of pods whose controller is the VMI ns/name (any
 * uid), under the store's read lock (fn must not call back into pods; its
 * pod is borrowed for the call). The index is added first when pods lacks
 * it. Costs the VMI's pods, not the cluster's. KUBE_OK (also when none),
 * or sched_pins_launcher_index_add()'s error (then fn was not called). */
int sched_pins_launchers_foreach(kube_lister *pods, const char *ns, const char *name,
                                 void (*fn)(void *ud, kube_object *pod), void *ud);

#endif
