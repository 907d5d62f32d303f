/*
 * kube/types/lease_testing.h - the test hooks of lease.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TYPES_LEASE_TESTING_H
#define KUBE_TYPES_LEASE_TESTING_H

#include "kube/types/lease.h"

/* The kube_lease behind obj, or NULL. Borrowed. */
const kube_lease *kube_lease_from(const kube_object *obj);

#endif
