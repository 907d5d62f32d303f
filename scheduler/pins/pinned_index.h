/*
 * scheduler/pins/pinned_index.h - the VirtualMachine informer indexes VMs by the
 * node their pin annotation names, so what happens to one node (lost,
 * deleted, back) reaches its VMs without walking every VM, and a record
 * kept for a node can be dropped once no VM is pinned to it
 * (scheduler/pins/nodeloss.c, scheduler/pins/lost.c).
 *
 * The index is named after the pin key ("stickyvm.io/vms-by-pin=" KEY): a
 * VM's key is the value of its annotation KEY (kube_pin_get()); a VM
 * without a pin is not indexed.
 *
 * Memory: the index reads the pin key of its first registrant (borrowed:
 * it must outlive the factory's hub, as handlers' ud do); nothing else is
 * allocated here beyond the lister's index. Threads: as
 * kube_lister_by_index().
 */
#ifndef SCHED_PINS_PINNED_INDEX_H
#define SCHED_PINS_PINNED_INDEX_H

#include <stddef.h>

#include "kube/machinery/factory.h"

/* Adds the index of pin key (borrowed, see above) to vms (the factory's VM
 * lister), at any time (built from the cache when added late). KUBE_OK
 * (also when there), KUBE_EINVAL (vms or key NULL, key too long),
 * KUBE_ENOMEM. */
int sched_pins_pinned_index_add(kube_lister *vms, const char *key);

/* Calls fn for each VM of vms whose annotation key names node, under the
 * store's read lock (fn must not call back into vms; its VM is borrowed
 * for the call). Adds the index first when vms lacks it (key borrowed as
 * there). Costs the VMs pinned to node. KUBE_OK (also for vms NULL:
 * nothing listed), or sched_pins_pinned_index_add()'s error (fn not called). */
int sched_pins_pinned_foreach(kube_lister *vms, const char *key, const char *node,
                              void (*fn)(void *ud, kube_object *vm), void *ud);

/* The number of VMs of vms pinned to node by key (0 on error). */
size_t sched_pins_pinned_count(kube_lister *vms, const char *key, const char *node);

#endif
