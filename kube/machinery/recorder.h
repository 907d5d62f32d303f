/*
 * kube/machinery/recorder.h - an events.k8s.io/v1 event recorder, as kube-scheduler
 * uses client-go's tools/events (NewBroadcaster + NewRecorder + Eventf).
 *
 * kube_recorder_eventf() never blocks on the network: it formats the event
 * (name "<regarding name>.<hex unix nanoseconds>", namespace the regarding
 * object's or "default", eventTime now as MicroTime) and appends it to a
 * bounded queue (1000, client-go's maxQueuedEvents). When the queue is full
 * the event is dropped, counted (stats, and stickyvm_events_dropped_total
 * {reason="queue_full"} when the options name a registry), and a warning
 * logged with the count since the last one (at most every 10 s).
 *
 * One background thread sends them. Creates go out without waiting for
 * each other, as many in flight as a window that grows while the server
 * answers quickly (within 1 s; or at all while the queue is half full)
 * and halves when it says it is overloaded (429, 5xx, timeouts, transport
 * errors; AIMD, 1 to 48, starting at 8; kube/machinery/recorder_int.h); a series
 * PATCH waits for its event's create. Sharing with the rest of the
 * client: the requests run on the client's I/O thread and connection (one
 * HTTP/2 connection) and pass its fence, but wait on a token bucket of the
 * recorder's own with the client's qps and burst (as kube-scheduler's
 * event clientset has its own), so events never take a binding's token. Repeats aggregate into an
 * EventSeries, as client-go's eventBroadcasterImpl: events are isomorphic when type, action,
 * reason, reportingController, reportingInstance, regarding and related are equal, and also (unlike
 * client-go, whose later notes are lost) the note. The first is created (POST). The second makes it
 * a series {count: 2, lastObservedTime} sent at once as a strategic-merge PATCH of
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

struct kube_metrics;
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
    struct kube_metrics *metrics;     /* default NULL; borrowed: where the recorder
                                         registers (or finds) stickyvm_events_dropped_total
                                         {reason}: queue_full, shutdown (unwritten at a
                                         stop's deadline, or the client shut down or
                                         fenced), rejected (a Status answer),
                                         retries (max_tries transport errors) */
} kube_recorder_options;

typedef struct kube_recorder_stats {
    unsigned long queued;        /* accepted by eventf */
    unsigned long dropped;       /* not written: the sum of the metric's reasons */
    unsigned long created;       /* successful POSTs */
    unsigned long patched;       /* successful series PATCHes */
    unsigned long failed;        /* writes abandoned after errors (rejected, retries, and
                                    an AlreadyExists on a create, which is not dropped) */
    unsigned long aggregated;    /* occurrences folded into a series */
    unsigned long max_in_flight; /* the most creates in flight at once */
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
 * would send; sends pending series counts now. Keeps running. KUBE_OK,
 * KUBE_ETIMEDOUT after timeout_ms (what is left stays queued), or
 * KUBE_ECANCELED when the recorder stopped first. */
int kube_recorder_flush(kube_recorder *r, long timeout_ms);

/* Stops accepting events, sends what is queued and the final counts of open
 * series within deadline_ms (retry sleeps are cut short; a request in
 * flight ends within the client's timeout), then ends the thread. What is
 * left is counted as dropped. Idempotent. */
void kube_recorder_stop(kube_recorder *r, long deadline_ms);

/* Stops (deadline 0 if not yet stopped) and frees. NULL-safe. */
void kube_recorder_free(kube_recorder *r);

#endif
