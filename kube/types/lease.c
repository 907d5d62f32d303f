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

static int lease_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_lease_codec, sizeof(kube_lease), json, lease_fill, out);
}

const kube_codec kube_lease_codec = {"Lease", lease_decode, kube_object_free_block};

const kube_lease *kube_lease_from(const kube_object *obj)
{
    return obj && obj->codec == &kube_lease_codec ? (const kube_lease *)obj : NULL;
}
