/*
 * scheduler/pin_nodeloss_testing.h - what only tests use of the node-loss
 * policy (scheduler/pin_nodeloss.h): the size of what it remembers.
 */
#ifndef SCHED_PIN_NODELOSS_TESTING_H
#define SCHED_PIN_NODELOSS_TESTING_H

#include <stddef.h>

#include "pin_nodeloss.h"

/* The entries kept now: *told, VMs told something (an invalid value, a
 * volume hold), forgotten with the VM; *lost, nodes seen lost, forgotten
 * when Ready again, or once deleted and no VM is pinned to them.
 * Thread-safe. */
void sched_nodeloss_entries(sched_nodeloss *nl, size_t *told, size_t *lost);

#endif
