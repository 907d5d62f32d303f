/*
 * scheduler/pins/lost.h - a pinned node deleted: the leader writes a
 * Warning event PinnedNodeDeleted on each VM pinned to a Node object that
 * is deleted (from the Node informer's delete handler), once per deletion
 * (remembered in memory by VM and the node's UID while the VM stays
 * pinned to that node, forgotten when its pin moves or the VM is deleted;
 * a new leader does not repeat a deletion it did not see). The VMs of a
 * node are found by the VM informer's index (scheduler/pins/pinned_index.h). Part of the pin
 * controller (scheduler/pins/controller.h), which builds it.
 *
 * Memory: sched_pins_lost_new() copies the key; the factory and recorder
 * are borrowed and outlive it; the factory must be stopped before
 * sched_pins_lost_free() (its handler points here).
 * Threads: the handler runs on the informers' thread; the count may be
 * read from any thread.
 */
#ifndef SCHED_PINS_LOST_H
#define SCHED_PINS_LOST_H

#include "framework/framework.h"
#include "kube/machinery/factory.h"

struct kube_recorder;

typedef struct sched_pins_lost sched_pins_lost;

/* Allocates it and adds its handlers to the factory's Node and VM listers
 * (before the factory starts). recorder NULL: no events. KUBE_OK, KUBE_EINVAL or
 * KUBE_ENOMEM; caller frees with sched_pins_lost_free(). */
int sched_pins_lost_new(kube_factory *informers, const char *key, struct kube_recorder *recorder,
                        fw_leadership leadership, sched_pins_lost **out);
/* The PinnedNodeDeleted events written so far. */
unsigned long sched_pins_lost_warnings(sched_pins_lost *l);
/* NULL-safe. */
void sched_pins_lost_free(sched_pins_lost *l);

#endif
