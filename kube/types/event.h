/*
 * kube/types/event.h - events.k8s.io/v1 Event.
 *
 * Memory: a kube_event is one allocation owned through its reference count
 * (kube/codec/object.h); every pointer inside lives as long as the object.
 */
#ifndef KUBE_EVENT_H
#define KUBE_EVENT_H

#include <stdint.h>

#include "kube/codec/object.h"

/* An ObjectReference (regarding / related). Strings "" when unset. */
typedef struct kube_object_reference {
    const char *kind;
    const char *namespace_;
    const char *name;
    const char *uid;
    const char *api_version;
} kube_object_reference;

typedef struct kube_event {
    kube_object base;
    const char *reason; /* strings: "" when unset */
    const char *note;
    const char *type; /* "Normal" / "Warning" */
    const char *action;
    const char *reporting_controller;
    const char *reporting_instance;
    kube_object_reference regarding;
    int64_t event_time_us; /* eventTime, unix microseconds; 0 when unset */
    int32_t series_count;  /* series.count; 0 without a series */
} kube_event;

extern const kube_codec kube_event_codec;

#endif
