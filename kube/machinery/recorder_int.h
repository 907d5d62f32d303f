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

/*
 * Pure pieces (recorder_event.c, recorder_cache.c) that recorder.c drives. A kube_recorder_event is
 * one Event as sent; the cache is the aggregation state. Nothing here does I/O or reads a clock.
 */
typedef struct kube_recorder_event kube_recorder_event;

/* Builds an event. wall_ns is the Unix time in nanoseconds (it names the
 * event and is its eventTime). note is copied (and cut to 1024 bytes).
 * *out is freed with kube_recorder_event_free(). KUBE_EINVAL as eventf. */
int kube_recorder_event_new(const kube_recorder_ref *regarding, const kube_recorder_ref *related,
                            const char *type, const char *reason, const char *action,
                            const char *note, const char *controller, const char *instance,
                            int64_t wall_ns, kube_recorder_event **out);
void kube_recorder_event_free(kube_recorder_event *ev);

/* The POST body (series included when count >= 2). cJSON_Delete() it. */
int kube_recorder_event_body(const kube_recorder_event *ev, cJSON **out);
/* The strategic-merge PATCH body {"series":{"count","lastObservedTime"}}. */
int kube_recorder_event_series_patch(const kube_recorder_event *ev, cJSON **out);

/* Formats Unix nanoseconds as MicroTime ("2026-11-21T10:00:00.000000Z"). */
void kube_recorder_format_micro(int64_t wall_ns, char *out, size_t n);

typedef struct kube_recorder_cache kube_recorder_cache;

typedef enum kube_recorder_op {
    KUBE_RECORDER_SEND_NONE,   /* counted only */
    KUBE_RECORDER_SEND_CREATE, /* POST the event */
    KUBE_RECORDER_SEND_PATCH,  /* PATCH the series of the event */
} kube_recorder_op;

/* One write the cache asks for. ev is the cached event (owned by the
 * cache; valid until the next cache call). */
typedef struct kube_recorder_send {
    kube_recorder_op op;
    kube_recorder_event *ev;
} kube_recorder_send;

/* window_ms: an entry ends that long after its last occurrence;
 * heartbeat_ms: minimum spacing of series PATCHes. */
int kube_recorder_cache_new(int64_t window_ms, int64_t heartbeat_ms, kube_recorder_cache **out);
/* Frees the cache and every cached event. NULL-safe. */
void kube_recorder_cache_free(kube_recorder_cache *c);

/* Records one occurrence of ev (ownership taken, even on error) at our
 * monotonic now_ms and wall_ns; *send tells what to write now. */
int kube_recorder_cache_observe(kube_recorder_cache *c, kube_recorder_event *ev, int64_t now_ms,
                                int64_t wall_ns, kube_recorder_send *send);

/* Work due at now_ms, one item per call: a heartbeat or final PATCH of a
 * series with unsent counts (force: regardless of the heartbeat), or the
 * removal of ended entries (done silently). Returns 1 with *send filled
 * (then the caller writes it and calls kube_recorder_cache_sent()), 0 when
 * nothing is due. */
int kube_recorder_cache_next_due(kube_recorder_cache *c, int64_t now_ms, int force,
                                 kube_recorder_send *send);

/* Marks the write of ev done (ok or abandoned) at now_ms: its counts are no
 * longer unsent; an ended entry is removed (ev is then freed). */
void kube_recorder_cache_sent(kube_recorder_cache *c, kube_recorder_event *ev, int64_t now_ms);

/* Milliseconds until kube_recorder_cache_next_due() has work, -1 if never. */
int64_t kube_recorder_cache_next_deadline(const kube_recorder_cache *c, int64_t now_ms);

#endif
