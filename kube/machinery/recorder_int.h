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
#include "kube/transport/ratelimit.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/metrics.h"

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
    int64_t wall_ns; /* what name and event_time were made of */
    event_ref regarding;
    event_ref related;
    int has_related;
    int64_t series_count;
    char series_last[TIME_MAX];
    struct cache_entry *entry;
    int writing; /* its create is in flight: the cache keeps it (sender thread) */
};

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
 * longer unsent; an ended entry is removed (ev is then freed). A single
 * event (no series) is then kept slim: only its name, namespace, wall time
 * and key hashes, for a repeat to become its series (ev is then freed). */
void kube_recorder_cache_sent(kube_recorder_cache *c, kube_recorder_event *ev, int64_t now_ms);

/* Milliseconds until kube_recorder_cache_next_due() has work, -1 if never. */
int64_t kube_recorder_cache_next_deadline(const kube_recorder_cache *c, int64_t now_ms);

/* ---- the window of creates in flight (recorder_send.c) ------------------ */

#define KUBE_RECORDER_WINDOW_MIN 1
#define KUBE_RECORDER_WINDOW_INIT 8
/* With the binders' 40 requests in flight, under libcurl's 100 streams per
 * HTTP/2 connection (more would open a second connection). */
#define KUBE_RECORDER_WINDOW_MAX 48
/* A create answered within this is quick: the window may grow. */
#define KUBE_RECORDER_SLOW_MS 1000

/* AIMD, as TCP's congestion window: every create the server answers
 * quickly adds 1/size (one more per window's round trip), and so does a
 * slower answer while the queue is at least half full (dropping is the
 * last resort: a slow server gets more creates at once before the queue
 * overflows); a failure that says the server or the way to it is
 * overloaded (a transport error, a timeout, 429, 5xx) halves it, at most
 * once per round trip (creates sent before the last cut do not cut
 * again). Other refusals (409, 403, ...) change nothing. Pure. */
typedef struct kube_recorder_window {
    double size;
    int64_t cut_ms; /* when it was last halved */
} kube_recorder_window;

void kube_recorder_window_init(kube_recorder_window *w);
/* Creates that may be in flight now (>= KUBE_RECORDER_WINDOW_MIN). */
size_t kube_recorder_window_allowed(const kube_recorder_window *w);
/* A create sent at sent_ms ended at now_ms with rc (a KUBE_E* code);
 * pressed: the queue is at least half full. */
void kube_recorder_window_update(kube_recorder_window *w, int rc, int64_t sent_ms, int64_t now_ms,
                                 int pressed);

/* ---- the recorder (recorder.c: queue and thread; recorder_send.c: writes) */

typedef struct queued {
    kube_recorder_event *ev;
    int64_t mono_ms;
    int64_t wall_ns;
    struct queued *next;
} queued;

/* One create sent without waiting; when it ends (on the client's I/O
 * thread) it joins the recorder's list of ended creates, which the sender
 * settles. */
typedef struct recorder_call {
    struct kube_recorder *r;
    kube_recorder_event *ev; /* the cache's; kept while ev->writing */
    int64_t sent_ms;
    int rc;
    struct recorder_call *next;
} recorder_call;

/* Why an event was not written: the label values of
 * stickyvm_events_dropped_total{reason}. */
typedef enum recorder_drop_reason {
    RECORDER_DROP_QUEUE_FULL,
    RECORDER_DROP_SHUTDOWN,
    RECORDER_DROP_REJECTED,
    RECORDER_DROP_RETRIES,
    RECORDER_DROP_REASONS
} recorder_drop_reason;

struct kube_recorder {
    kube_client *client;
    kube_ratelimit *rl; /* the recorder's own token bucket (the client's qps) */
    char *controller;
    char *instance;
    kube_recorder_options opts;
    kube_recorder_cache *cache;                        /* sender thread only */
    kube_recorder_window window;                       /* sender thread only */
    kube_metric_child *dropped[RECORDER_DROP_REASONS]; /* NULL without a registry */

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* to the sender: work, an ended create, flush or stop */
    pthread_cond_t progress; /* to flush waiters */
    queued *head, *tail;
    size_t len;
    size_t in_flight;                  /* creates sent and not yet ended */
    recorder_call *ended, *ended_tail; /* ended creates, in the order they ended */
    int stopping;
    int exited;
    int joined;
    int64_t stop_deadline_ms;
    uint64_t enq_seq, done_seq;
    uint64_t flush_req, flush_done;
    int64_t last_wall_ns;
    int64_t last_drop_log_ms;
    unsigned long drops_unlogged; /* queue-full drops since the last warning */
    int drop_logged;              /* a warning was logged (at last_drop_log_ms) */
    char last_drop[256];          /* the last of them, for the warning */
    kube_recorder_stats stats;
};

/* Counts n events not written, for why (stats and metric). Takes r->mu
 * unless locked says the caller holds it. */
void kube_recorder_count_drop(kube_recorder *r, recorder_drop_reason why, unsigned long n,
                              int locked);
/* Adds n to a stats field under r->mu. */
void kube_recorder_stat_add(kube_recorder *r, unsigned long *field, unsigned long n);
/* Whether a stop's deadline has passed. */
int kube_recorder_past_deadline(kube_recorder *r);

/* Sender thread. Sends ev's create (the cache's event) once the window
 * has room, settling ended creates meanwhile. */
void kube_recorder_send_create(kube_recorder *r, kube_recorder_event *ev);
/* Settles the creates that ended (the window, stats, retries of failed
 * ones, the cache). Does not wait for any. */
void kube_recorder_settle(kube_recorder *r);
/* Waits until ev's create (if in flight) has been settled. */
void kube_recorder_wait_create(kube_recorder *r, const kube_recorder_event *ev);
/* Waits until every create in flight has been settled. */
void kube_recorder_drain(kube_recorder *r);
/* Writes send (a PATCH, or a create) and waits for it, with retries, then
 * tells the cache. A SEND_NONE does nothing. */
void kube_recorder_perform(kube_recorder *r, const kube_recorder_send *send);

#endif
