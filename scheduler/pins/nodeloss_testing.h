/*
 * scheduler/pins/nodeloss_testing.h - what only tests use of the node-loss
 * policy (scheduler/pins/nodeloss.h): the size of what it remembers.
 */
#ifndef SCHED_PINS_NODELOSS_TESTING_H
#define SCHED_PINS_NODELOSS_TESTING_H

#include <stddef.h>

#include "pins/nodeloss.h"

/* The entries kept now: *told, VMs told something (an invalid value, a
 * volume hold), forgotten with the VM; *lost, nodes seen lost, forgotten
 * when Ready again, or once deleted and no VM is pinned to them.
 * Thread-safe. */
void sched_pins_nodeloss_entries(sched_pins_nodeloss *nl, size_t *told, size_t *lost);

#endif
