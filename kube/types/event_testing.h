/*
 * kube/types/event_testing.h - the test hooks of event.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_TYPES_EVENT_TESTING_H
#define KUBE_TYPES_EVENT_TESTING_H

#include "kube/types/event.h"

/* The kube_event behind obj, or NULL. Borrowed. */
const kube_event *kube_event_from(const kube_object *obj);

#endif
