/*
 * scheduler/pins/controller_testing.h - the pin controller's counters, for
 * tests (the daemon exports them as metrics: pins/controller.h).
 *
 * Memory: nothing is allocated. Threads: thread-safe.
 */
#ifndef SCHED_PINS_CONTROLLER_TESTING_H
#define SCHED_PINS_CONTROLLER_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "kube/machinery/factory.h"
#include "pins/controller.h"
#include "plugins/registry.h"

typedef struct sched_pins_stats {
    unsigned long first_pins_written;    /* durable first pins the controller wrote */
    unsigned long migration_pins_moved;  /* pins that followed a live migration */
    unsigned long write_retries;         /* failed writes queued again */
    unsigned long node_deleted_warnings; /* PinnedNodeDeleted events written */
    unsigned long node_loss_unpins;      /* on-node-loss: Unpin unpins written */
    size_t pending;                      /* VMs due a first pin, not written yet */
    size_t written;                      /* VMs whose last write the cache may not show */
    int leading;           /* the worker's last view: leading, with the caches synced */
    unsigned long resyncs; /* leaderships gained: every VM queued again */
    size_t busy;           /* VM keys queued, held back or being reconciled */
} sched_pins_stats;

/* Copies c's counters into *out. */
void sched_pins_stats_get(sched_pins *c, sched_pins_stats *out);

/* The VMI lister c reads (owned by c's informer factory). For a test to see how far c's informers
 * got: handlers run on the hub thread one event at a time, so once the lister holds a later change
 * to a VMI, c's handler of every earlier one has returned. */
kube_lister *sched_pins_vmi_lister(sched_pins *c);

/* StickyVM's hand-off (its factory's argument, plugin_factory_args.pins),
 * bound to c. */
plugin_pin_handoff sched_pins_handoff(sched_pins *c);

/* Every controller's refresh period of scheduler/pins/status.h's gauges
 * from now on (ms <= 0: SCHED_PINS_STATUS_REFRESH_MS again). */
void sched_pins_status_refresh_ms_set(int64_t ms);

#endif
