/*
 * kube/types/event.c - events.k8s.io/v1 Event decoding.
 */
#include "kube/types/event.h"

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

static int decode_reference(const cJSON *j, kube_arena *a, kube_object_reference *r)
{
    int rc;

    if ((rc = kube_json_str(j, "kind", a, "", &r->kind)) ||
        (rc = kube_json_str(j, "namespace", a, "", &r->namespace_)) ||
        (rc = kube_json_str(j, "name", a, "", &r->name)) ||
        (rc = kube_json_str(j, "uid", a, "", &r->uid)))
        return rc;
    return kube_json_str(j, "apiVersion", a, "", &r->api_version);
}

static int event_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_event *e = (kube_event *)obj;
    const cJSON *regarding, *series;
    int rc;

    if ((rc = kube_json_str(json, "reason", a, "", &e->reason)) ||
        (rc = kube_json_str(json, "note", a, "", &e->note)) ||
        (rc = kube_json_str(json, "type", a, "", &e->type)) ||
        (rc = kube_json_str(json, "action", a, "", &e->action)) ||
        (rc = kube_json_str(json, "reportingController", a, "", &e->reporting_controller)) ||
        (rc = kube_json_str(json, "reportingInstance", a, "", &e->reporting_instance)) ||
        (rc = kube_json_time(json, "eventTime", &e->event_time_us)) ||
        (rc = kube_json_object(json, "regarding", &regarding)) ||
        (rc = kube_json_object(json, "series", &series)) ||
        (rc = kube_json_int32(series, "count", 0, &e->series_count)))
        return rc;
    return decode_reference(regarding, a, &e->regarding);
}

static int event_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_event_codec, sizeof(kube_event), json, event_fill, out);
}

const kube_codec kube_event_codec = {"Event", event_decode, kube_object_free_block};

const kube_event *kube_event_from(const kube_object *obj)
{
    return obj && obj->codec == &kube_event_codec ? (const kube_event *)obj : NULL;
}
