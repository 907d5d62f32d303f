/*
 * kube/machinery/recorder_testing.h - test hooks of the event recorder: the
 * pure event and aggregation-cache pieces of recorder_int.h, and what tests
 * read of them. Not for production code.
 */
#ifndef KUBE_RECORDER_TESTING_H
#define KUBE_RECORDER_TESTING_H

#include "kube/machinery/recorder_int.h"

/* The event's metadata.name and namespace (borrowed from ev). */
const char *kube_recorder_event_name(const kube_recorder_event *ev);
const char *kube_recorder_event_namespace(const kube_recorder_event *ev);
/* Series count: 0 for a single event, >= 2 for a series. */
int64_t kube_recorder_event_series_count(const kube_recorder_event *ev);
/* 1 when a and b aggregate together (the key of recorder_int.h). */
int kube_recorder_event_isomorphic(const kube_recorder_event *a, const kube_recorder_event *b);
/* Entries in the cache. */
size_t kube_recorder_cache_size(const kube_recorder_cache *c);

void kube_recorder_stats_get(kube_recorder *r, kube_recorder_stats *out);

#endif
