/*
 * kube/machinery/leader.h - leader election on a coordination.k8s.io/v1 Lease, with the
 * semantics of client-go's tools/leaderelection LeaderElector + LeaseLock.
 *
 * One elector thread per kube_leader:
 *  - acquire: every retry_period (jittered up to x2.2, as JitterUntil with
 *    JitterFactor 1.2) it GETs the Lease; a missing Lease is created with us
 *    as holder. An existing Lease held by someone else is taken over only
 *    when it has not changed for the record's leaseDurationSeconds as
 *    measured by OUR monotonic clock since we last saw it change (the remote
 *    renewTime is never compared with our clock). A takeover is a PUT of the
 *    last read object (carrying its resourceVersion) with holderIdentity =
 *    us, acquireTime = renewTime = now and leaseTransitions + 1. An empty
 *    holderIdentity (a released Lease) is taken over at once.
 *  - renew: every retry_period the leader PUTs the Lease it last wrote
 *    (optimistic fast path, with that resourceVersion) with a new renewTime;
 *    when that fails (409 Conflict: someone else wrote) it falls back to a
 *    GET and the full decision above. Renewal attempts repeat every
 *    retry_period; when none succeeds within renew_deadline of the start of
 *    the round, leadership is lost and the thread ends after the steps
 *    below (kube-scheduler exits then; the elector never re-acquires, as
 *    client-go's Run returns).
 *  - stop (kube_leader_stop): waits are on a condition variable, so the
 *    thread stops at once, or when its in-flight request returns (bounded
 *    by the client's timeout).
 *  - end of leadership, lost or stopped, in this order: (1) the leading
 *    flag drops (is_leader() is 0 from here on); (2) on_fence(lost): the
 *    holder makes sure no leader-only write of its own can leave any more;
 *    (3) with release_on_cancel, the release: holderIdentity "",
 *    leaseDurationSeconds 1, acquireTime = renewTime = now,
 *    leaseTransitions unchanged (client-go's release), so a candidate takes
 *    over at its next try; (4) the "stopped leading" event, which after a
 *    lost Lease gets up to KUBE_LEADER_EVENT_FLUSH_MS to be written, as the
 *    holder exits next (client-go only queues it, and kube-scheduler exits
 *    without waiting for it); (5) on_stopped_leading(lost). client-go
 *    releases before the leading context is canceled; fencing first means
 *    a successor never overlaps writes of ours.
 *
 * Times written are MicroTime: RFC 3339 UTC with microseconds.
 *
 * Differences from client-go, all on the safe side:
 *  - a record change is detected on the full-precision fields (client-go
 *    compares a JSON rendering with whole seconds, so it can miss renewals
 *    within one second and take over earlier);
 *  - kube_leader_is_leader() turns false as soon as our last successful
 *    write was STARTED more than renew_deadline ago, even while a hung
 *    request keeps the thread from noticing; a candidate cannot take over
 *    before lease_duration (> renew_deadline) after that write. The flag
 *    drops, and on_fence runs, before the release request is sent.
 *
 * Callbacks run on the elector thread, one at a time, and must return
 * promptly (client-go runs them as goroutines): start work elsewhere.
 * on_fence is the exception: it blocks the release until it returns, so
 * it should bound its own wait (a few seconds).
 * on_stopped_leading fires exactly once when the thread ends, whether or
 * not we ever led (as client-go's Run does in its defer); lost says why.
 * Callbacks must not call kube_leader_stop() or kube_leader_free().
 *
 * The elector should have its own client, made with
 * kube_leader_client_options() (kube-scheduler does the same).
 *
 * Memory: kube_leader_new() copies the config strings and allocates the
 * elector, freed by kube_leader_free() (which stops it first). The client
 * is borrowed and must outlive the elector.
 */
#ifndef KUBE_LEADER_H
#define KUBE_LEADER_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/transport/client.h"

struct kube_recorder;

typedef struct kube_leader kube_leader;

typedef struct kube_leader_callbacks {
    /* We became the leader. Required. */
    void (*on_started_leading)(void *ud);
    /* The elector thread ended: lost = 1 when renewal failed for
     * renew_deadline (kube-scheduler exits 1), 0 when stopped. Required. */
    void (*on_stopped_leading)(void *ud, int lost);
    /* The observed holder changed (including the first one seen, and
     * ourselves). identity is valid during the call only. Optional. */
    void (*on_new_leader)(void *ud, const char *identity);
    void *ud;
    /* Leadership ended (lost as for on_stopped_leading): is_leader() is
     * already 0 and the Lease not yet released. The holder stops every
     * write only a leader may make and returns only once none can leave
     * any more; the release follows. Only after we led. Optional. */
    void (*on_fence)(void *ud, int lost);
} kube_leader_callbacks;

typedef struct kube_leader_config {
    const char *namespace_; /* Lease namespace, e.g. "kube-system". Required */
    const char *name;       /* Lease name. Required */
    const char *identity;   /* NULL: "<hostname>_<uuid v4>" as kube-scheduler */
    long lease_duration_ms; /* 15000; written as whole seconds, >= 1000 */
    long renew_deadline_ms; /* 10000; < lease_duration_ms */
    long retry_period_ms;   /* 2000; renew_deadline_ms > 1.2 * retry_period_ms */
    int release_on_cancel;  /* release the Lease on kube_leader_stop() */
    /* Optional: records "<identity> became leader" / "stopped leading"
     * events on the Lease (reason LeaderElection), as the LeaseLock does.
     * It should send through a client on_fence leaves working (the
     * elector's own), or the "stopped leading" of a lost Lease cannot
     * leave. Borrowed; must outlive the elector. */
    struct kube_recorder *recorder;
} kube_leader_config;

/* How long the elector waits for its recorder to write the "stopped
 * leading" event of a lost Lease before on_stopped_leading. */
#define KUBE_LEADER_EVENT_FLUSH_MS 1000

/* Fills c with the defaults above (namespace_ and name NULL). */
void kube_leader_config_default(kube_leader_config *c);

/* Adjusts o (holding the caller's options) for the elector's own client,
 * as client-go's resourcelock.NewFromKubeconfig does: every request times
 * out after renew_deadline / 2 (at least 1 s), so a hung request cannot
 * outlast the renew deadline, and no client-side retries (the elector
 * retries every retry_period itself). */
void kube_leader_client_options(const kube_leader_config *cfg, kube_client_options *o);

/* Validates cfg as client-go's NewLeaderElector does (KUBE_EINVAL with a
 * logged reason otherwise) and allocates an elector, not yet running.
 * *out is freed with kube_leader_free(). */
int kube_leader_new(kube_client *client, const kube_leader_config *cfg,
                    const kube_leader_callbacks *cb, kube_leader **out);

/* Starts the elector thread. KUBE_EINVAL if already started, KUBE_ENOMEM
 * when the thread cannot be created. */
int kube_leader_start(kube_leader *le);

/* Stops the thread (releasing the Lease when configured and leading) and
 * waits for it; on_stopped_leading has run when this returns. Idempotent.
 * Not from a callback. */
void kube_leader_stop(kube_leader *le);

/* Stops, then frees. NULL-safe. */
void kube_leader_free(kube_leader *le);

/* 1 when we hold the Lease (see the renew_deadline guard above). Thread-safe. */
int kube_leader_is_leader(kube_leader *le);

/* The health check of client-go's HealthzAdaptor (LeaderElector.Check):
 * KUBE_OK when this elector does not believe it leads (the observed holder
 * is not us) or last saw its Lease change (its own renewals included)
 * within lease_duration + max_tolerable_expired_ms; else KUBE_ETIMEDOUT
 * with "failed election to renew leadership on lease <name>" in msg.
 * kube-scheduler tolerates 20 s. Thread-safe. */
#define KUBE_LEADER_HEALTHZ_TIMEOUT_MS 20000
int kube_leader_check(kube_leader *le, long max_tolerable_expired_ms, char *msg, size_t n);

/*
 * Pure pieces of the election, exposed for tests. No I/O, no clock: times
 * are passed in. A kube_leader_record is client-go's LeaderElectionRecord
 * as a Lease spec holds it; absent fields are 0 / "".
 */
#define KUBE_LEADER_HOLDER_MAX 256
#define KUBE_LEADER_TIME_MAX 40

typedef struct kube_leader_record {
    char holder[KUBE_LEADER_HOLDER_MAX];
    int64_t lease_duration_s;
    char acquire_time[KUBE_LEADER_TIME_MAX]; /* MicroTime text, "" if absent */
    char renew_time[KUBE_LEADER_TIME_MAX];
    int64_t transitions;
} kube_leader_record;

typedef enum kube_leader_decision {
    KUBE_LEADER_WAIT,     /* held by someone else and not expired */
    KUBE_LEADER_RENEW,    /* ours: keep acquireTime and transitions */
    KUBE_LEADER_TAKEOVER, /* free or expired: transitions + 1 */
} kube_leader_decision;

/* Reads a Lease object's spec (a missing spec reads as all absent).
 * KUBE_EPARSE when lease is not an object or a field has the wrong type,
 * KUBE_ERANGE when a string does not fit. */
int kube_leader_record_decode(const cJSON *lease, kube_leader_record *out);

/* 1 when every field is equal. */
int kube_leader_record_equal(const kube_leader_record *a, const kube_leader_record *b);

/* 1 while observed (seen changing last at our monotonic observed_ms) is
 * within its leaseDurationSeconds at now_ms. */
int kube_leader_lease_valid(const kube_leader_record *observed, int64_t observed_ms,
                            int64_t now_ms);

/* What a candidate named identity does with the current record. */
kube_leader_decision kube_leader_decide(const kube_leader_record *observed, int64_t observed_ms,
                                        int64_t now_ms, const char *identity);

/* The record to write for a RENEW or TAKEOVER decision (old is the current
 * record; now is a MicroTime string). */
void kube_leader_next_record(kube_leader_decision d, const kube_leader_record *old,
                             const char *identity, int64_t lease_duration_s, const char *now,
                             kube_leader_record *out);

/* The record client-go's release writes over observed. */
void kube_leader_release_record(const kube_leader_record *observed, const char *now,
                                kube_leader_record *out);

/* The POST body creating the Lease. *out is freed with cJSON_Delete(). */
int kube_leader_create_body(const char *ns, const char *name, const kube_leader_record *rec,
                            cJSON **out);

/* The PUT body: a copy of the last Lease read or written (metadata and its
 * resourceVersion kept) with the spec replaced by rec. *out is freed with
 * cJSON_Delete(). */
int kube_leader_update_body(const cJSON *lease, const kube_leader_record *rec, cJSON **out);

/* A default identity "<hostname>_<uuid v4>" into out (at least 128 bytes
 * recommended). KUBE_ERANGE when it does not fit, KUBE_EIO when no
 * randomness is available. */
int kube_leader_default_identity(char *out, size_t n);

#endif
