/*
 * kube/types/lease.h - coordination.k8s.io/v1 Lease (leader election).
 *
 * Memory: a kube_lease is one allocation owned through its reference count
 * (kube/codec/object.h); every pointer inside lives as long as the object.
 */
#ifndef KUBE_LEASE_H
#define KUBE_LEASE_H

#include <stdint.h>

#include "kube/codec/object.h"

typedef struct kube_lease {
    kube_object base;
    const char *holder_identity;    /* NULL when unset */
    int32_t lease_duration_seconds; /* 0 when unset */
    int32_t lease_transitions;      /* 0 when unset */
    int64_t acquire_time_us;        /* unix microseconds; 0 when unset */
    int64_t renew_time_us;          /* unix microseconds; 0 when unset */
} kube_lease;

extern const kube_codec kube_lease_codec;

#endif
