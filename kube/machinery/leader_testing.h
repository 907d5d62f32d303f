/*
 * kube/machinery/leader_testing.h - the test hooks of leader.h: entry points only the
 * tests and benchmarks call, never the daemons.
 */
#ifndef KUBE_MACHINERY_LEADER_TESTING_H
#define KUBE_MACHINERY_LEADER_TESTING_H

#include "kube/machinery/leader.h"

/* Copies the last observed holder identity ("" when none yet) into out.
 * KUBE_ERANGE when truncated. Thread-safe. */
int kube_leader_get_leader(kube_leader *le, char *out, size_t n);

/* Our identity; lives as long as the elector. */
const char *kube_leader_identity(const kube_leader *le);

#endif
