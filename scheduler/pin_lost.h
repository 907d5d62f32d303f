/*
 * scheduler/pin_lost.h - a pinned node deleted: the leader writes a
 * Warning event PinnedNodeDeleted on each VM pinned to a Node object that
 * is deleted (from the Node informer's delete handler), once per deletion
 * (remembered in memory by VM and the node's UID while the VM stays
 * pinned to that node, forgotten when its pin moves or the VM is deleted;
 * a new leader does not repeat a deletion it did not see). The VMs of a
 * node are found by the VM informer's index (scheduler/pinned_index.h). Part of the pin controller
 * (scheduler/pin_controller.h), which builds it.
 *
 * Memory: sched_pin_lost_new() copies the key; the factory and recorder
 * are borrowed and outlive it; the factory must be stopped before
 * sched_pin_lost_free() (its handler points here).
 * Threads: the handler runs on the informers' thread; the count may be
 * read from any thread.
 */
#ifndef SCHED_PIN_LOST_H
#define SCHED_PIN_LOST_H

#include "framework/framework.h"
#include "kube/machinery/factory.h"

struct kube_recorder;

typedef struct sched_pin_lost sched_pin_lost;

/* Allocates it and adds its handlers to the factory's Node and VM listers
 * (before the factory starts). recorder NULL: no events. KUBE_OK, KUBE_EINVAL or
 * KUBE_ENOMEM; caller frees with sched_pin_lost_free(). */
int sched_pin_lost_new(kube_factory *informers, const char *key, struct kube_recorder *recorder,
                       fw_leadership leadership, sched_pin_lost **out);
/* The PinnedNodeDeleted events written so far. */
unsigned long sched_pin_lost_warnings(sched_pin_lost *l);
/* NULL-safe. */
void sched_pin_lost_free(sched_pin_lost *l);

#endif
