/*
 * kube/machinery/recorder_int.h - what the recorder's files share: the event as the
 * recorder holds it (recorder_event.c builds and encodes it, the
 * aggregation cache of recorder_cache.c folds it, recorder.c sends it).
 * Not a public header.
 */
#ifndef KUBE_RECORDER_INT_H
#define KUBE_RECORDER_INT_H

#include "kube/machinery/recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define NOTE_MAX 1024
#define TIME_MAX 40
#define DROP_LOG_PERIOD_MS 10000
#define REF_FIELDS 7

/* An ObjectReference: its fields in the order of ref_keys (owned). */
typedef struct event_ref {
    char *f[REF_FIELDS];
} event_ref;

struct cache_entry;

/* An event: owned strings, its aggregation key, and the cache entry that
 * holds it while it is cached (recorder_cache.c). */
struct kube_recorder_event {
    char *name;
    char *ns;
    char *type;
    char *reason;
    char *action;
    char *note;
    char *controller;
    char *instance;
    char *key;
    char event_time[TIME_MAX];
    event_ref regarding;
    event_ref related;
    int has_related;
    int64_t series_count;
    char series_last[TIME_MAX];
    struct cache_entry *entry;
};

/* The wall clock in nanoseconds (CLOCK_REALTIME). */
int64_t kube_recorder_wall_now_ns(void);

#endif
