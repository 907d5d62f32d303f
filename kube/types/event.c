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

KUBE_KIND_DEFINE(event, "Event", kube_event, event_fill)
