/*
 * scheduler/pins/lost_testing.h - what only tests use of the
 * PinnedNodeDeleted warnings (scheduler/pins/lost.h): the size of what it
 * remembers.
 */
#ifndef SCHED_PINS_LOST_TESTING_H
#define SCHED_PINS_LOST_TESTING_H

#include <stddef.h>

#include "pins/lost.h"

/* The VMs remembered as warned now (each still pinned to the deleted node
 * it was warned about). Thread-safe. */
size_t sched_pins_lost_entries(sched_pins_lost *l);

#endif
