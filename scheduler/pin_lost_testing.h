/*
 * scheduler/pin_lost_testing.h - what only tests use of the
 * PinnedNodeDeleted warnings (scheduler/pin_lost.h): the size of what it
 * remembers.
 */
#ifndef SCHED_PIN_LOST_TESTING_H
#define SCHED_PIN_LOST_TESTING_H

#include <stddef.h>

#include "pin_lost.h"

/* The VMs remembered as warned now (each still pinned to the deleted node
 * it was warned about). Thread-safe. */
size_t sched_pin_lost_entries(sched_pin_lost *l);

#endif
