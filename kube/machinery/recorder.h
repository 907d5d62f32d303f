/*
 * kube/machinery/recorder.h - an events.k8s.io/v1 event recorder, as kube-scheduler
 * uses client-go's tools/events (NewBroadcaster + NewRecorder + Eventf).
 *
 * kube_recorder_eventf() never blocks on the network: it formats the event
 * (name "<regarding name>.<hex unix nanoseconds>", namespace the regarding
 * object's or "default", eventTime now as MicroTime) and appends it to a
 * bounded queue (1000, client-go's maxQueuedEvents). When the queue is full
 * the event is dropped, counted, and a warning logged (at most every 10 s).
 *
 * One background thread sends them. Repeats aggregate into an EventSeries,
 * as client-go's eventBroadcasterImpl: events are isomorphic when type,
 * action, reason, reportingController, reportingInstance, regarding and
 * related are equal, and also (unlike client-go, whose later notes are lost)
 * the note. The first is created (POST). The second makes it a series
 * {count: 2, lastObservedTime} sent at once as a strategic-merge PATCH of
 * {"series": ...} on the first event's name. Later repeats only count in the
 * cache and are sent at most every series_heartbeat_ms (default 30 s). An
 * entry ends series_window_ms (6 min, client-go's finishTime) after its last
 * occurrence; a series with unsent counts gets its final PATCH then, and a
 * repeat after that starts a new event. A PATCH answered 404 creates the
 * event whole (series included).
 *
 * Failures, as client-go's recordEvent: transport errors are retried, up to
 * 12 tries, sleeping ~10 s (jittered +25 %) between; a 409 AlreadyExists on
 * re-creating a series is retried; any other answer from the server
 * (4xx/5xx Status) abandons the write with an error logged. Retries and the
 * sending of one event happen on the one thread, so a dead server fills the
 * queue and later events are dropped (counted), never blocking callers.
 *
 * The note is cut to 1024 bytes (events.k8s.io validation's limit, on a
 * UTF-8 boundary) rather than having the server reject the event.
 *
 * Threads: kube_recorder_eventf() and kube_recorder_stats() may be called
 * from any thread.
 * Memory: kube_recorder_new() allocates the recorder, freed by
 * kube_recorder_free() (which stops it first). The client is borrowed and
 * must outlive the recorder. eventf copies everything it is given.
 */
#ifndef KUBE_RECORDER_H
#define KUBE_RECORDER_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/transport/client.h"

typedef struct kube_recorder kube_recorder;

/* A core/v1 ObjectReference. NULL or "" fields are omitted. */
typedef struct kube_recorder_ref {
    const char *kind;        /* "Pod" */
    const char *api_version; /* "v1" */
    const char *namespace_;
    const char *name; /* required for regarding */
    const char *uid;
    const char *resource_version;
    const char *field_path;
} kube_recorder_ref;

#define KUBE_RECORDER_NORMAL "Normal"
#define KUBE_RECORDER_WARNING "Warning"

typedef struct kube_recorder_options {
    const char *reporting_controller; /* default "stickyvm-scheduler" */
    const char *reporting_instance;   /* default "<controller>-<hostname>" as client-go;
                                         kube-scheduler passes its identity */
    size_t queue_capacity;            /* default 1000 */
    long series_heartbeat_ms;         /* default 30000 */
    long series_window_ms;            /* default 360000 */
    long retry_sleep_ms;              /* default 10000 */
    int max_tries;                    /* default 12 */
} kube_recorder_options;

typedef struct kube_recorder_stats {
    unsigned long queued;     /* accepted by eventf */
    unsigned long dropped;    /* queue full, or still queued at a stop deadline */
    unsigned long created;    /* successful POSTs */
    unsigned long patched;    /* successful series PATCHes */
    unsigned long failed;     /* writes abandoned after errors */
    unsigned long aggregated; /* occurrences folded into a series */
} kube_recorder_stats;

/* Fills o with the defaults above. */
void kube_recorder_options_default(kube_recorder_options *o);

/* Allocates a recorder and starts its thread. opts may be NULL (defaults).
 * KUBE_EINVAL for a zero capacity or non-positive periods. */
int kube_recorder_new(kube_client *client, const kube_recorder_options *opts, kube_recorder **out);

/* Queues one event. regarding (name required) and type ("Normal" or
 * "Warning"), reason and action are required; related may be NULL. Returns
 * KUBE_OK when queued, KUBE_EINVAL for bad arguments (logged), KUBE_ETOOMANY
 * when dropped because the queue is full, KUBE_ECANCELED after stop,
 * KUBE_ENOMEM. */
int kube_recorder_eventf(kube_recorder *r, const kube_recorder_ref *regarding,
                         const kube_recorder_ref *related, const char *type, const char *reason,
                         const char *action, const char *note_fmt, ...)
    __attribute__((format(printf, 7, 8)));
int kube_recorder_eventv(kube_recorder *r, const kube_recorder_ref *regarding,
                         const kube_recorder_ref *related, const char *type, const char *reason,
                         const char *action, const char *note_fmt, va_list ap)
    __attribute__((format(printf, 7, 0)));

/* Waits until every event queued before the call has been written (or
 * abandoned) and no series has unsent counts older than the heartbeat
 * would send; sends pending series counts now. KUBE_ETIMEDOUT after
 * timeout_ms. */
int kube_recorder_flush(kube_recorder *r, long timeout_ms);

/* Stops accepting events, sends what is queued and the final counts of open
 * series within deadline_ms (retry sleeps are cut short; a request in
 * flight ends within the client's timeout), then ends the thread. What is
 * left is counted as dropped. Idempotent. */
void kube_recorder_stop(kube_recorder *r, long deadline_ms);

/* Stops (deadline 0 if not yet stopped) and frees. NULL-safe. */
void kube_recorder_free(kube_recorder *r);

void kube_recorder_stats_get(kube_recorder *r, kube_recorder_stats *out);

/*
 * Pure pieces, exposed for tests. A kube_recorder_event is one Event as sent; the
 * cache is the aggregation state. Nothing here does I/O or reads a clock.
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

const char *kube_recorder_event_name(const kube_recorder_event *ev);
const char *kube_recorder_event_namespace(const kube_recorder_event *ev);
/* Series count: 0 for a single event, >= 2 for a series. */
int64_t kube_recorder_event_series_count(const kube_recorder_event *ev);

/* 1 when a and b aggregate together (the key above). */
int kube_recorder_event_isomorphic(const kube_recorder_event *a, const kube_recorder_event *b);

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
size_t kube_recorder_cache_size(const kube_recorder_cache *c);

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
