/*
 * kube/types/lease.c - coordination.k8s.io/v1 Lease decoding.
 */
#include "kube/types/lease.h"

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

static int lease_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_lease *l = (kube_lease *)obj;
    const cJSON *spec;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_str(spec, "holderIdentity", a, NULL, &l->holder_identity)) ||
        (rc = kube_json_int32(spec, "leaseDurationSeconds", 0, &l->lease_duration_seconds)) ||
        (rc = kube_json_int32(spec, "leaseTransitions", 0, &l->lease_transitions)) ||
        (rc = kube_json_time(spec, "acquireTime", &l->acquire_time_us)))
        return rc;
    return kube_json_time(spec, "renewTime", &l->renew_time_us);
}

KUBE_KIND_DEFINE(lease, "Lease", kube_lease, lease_fill)
