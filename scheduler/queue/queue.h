/*
 * scheduler/queue/queue.h - the scheduling queue of kube-scheduler v1.28
 * (pkg/scheduler/internal/queue/scheduling_queue.go).
 *
 * Three places hold a pending pod:
 *   - activeQ: a heap ordered by the QueueSort plugin of the first profile
 *     (kube-scheduler requires every profile to use the same one); Pop()
 *     takes its head, blocking while it is empty;
 *   - backoffQ: a heap ordered by backoff expiry; a pod's backoff is
 *     podInitialBackoff * 2^(attempts-1) capped at podMaxBackoff, counted
 *     from its last (re-)queue time; flush_backoff_completed() (every 1 s)
 *     moves expired ones to activeQ;
 *   - unschedulablePods: pods that failed, with the plugins that rejected
 *     them, and pods a PreEnqueue plugin gated. A cluster event moves a pod
 *     out only when one of its rejecting plugins registered a matching
 *     event (EnqueueExtensions) whose queueing hint does not answer Skip;
 *     a pod rejected by no plugin (an error) moves on any event.
 *     flush_unschedulable_leftover() (every 30 s) moves pods that stayed
 *     longer than podMaxInUnschedulablePodsDuration (5 min).
 * A pod enters activeQ only through its profile's PreEnqueue plugins; a
 * rejected one is kept in unschedulablePods as gated.
 *
 * Pods are keyed by namespace/name. A pod returned by Pop() belongs to the
 * caller until it is handed back with
 * sched_queue_add_unschedulable_if_not_present() or freed with
 * sched_queued_pod_free() (it was bound). While it is out, an informer
 * update adds the pod anew (as kube-scheduler v1.28 without queueing-hint
 * in-flight tracking); the later hand-back then finds it present and drops
 * the returned copy.
 *
 * The queue records in the nominator (queue/nominator.h, built before the
 * frameworks and the queue) the status.nominatedNodeName of the pods it
 * adds, and forgets the nominations of pods deleted.
 *
 * Clock: everything reads o->now_ns (monotonic nanoseconds), injectable
 * for tests.
 *
 * Threads: every function is thread-safe (one lock, taken before the
 * nominator's lock). PreEnqueue plugins, QueueSort and queueing hints run
 * under the queue's lock: they must not call back into the queue.
 *
 * Memory: sched_queue_new() allocates a queue freed with sched_queue_free()
 * (after sched_queue_close(); no call may be running). Pods passed in
 * (struct kube_pod *) are borrowed: the queue takes its own references.
 * A sched_queued_pod is owned by the queue while queued, by the caller
 * after Pop().
 */
#ifndef SCHED_QUEUE_H
#define SCHED_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "metrics.h"
#include "queue/nominator.h"
#include "kube/util/clock.h"

struct kube_pod;

typedef struct sched_queue sched_queue;

/* The cluster events the scheduler raises (kube-scheduler's
 * internal/queue/events.go), static storage. */
extern const fw_cluster_event SCHED_EV_ASSIGNED_POD_ADD;               /* Pod Add */
extern const fw_cluster_event SCHED_EV_ASSIGNED_POD_UPDATE;            /* Pod Update */
extern const fw_cluster_event SCHED_EV_ASSIGNED_POD_DELETE;            /* Pod Delete */
extern const fw_cluster_event SCHED_EV_NODE_ADD;                       /* Node Add */
extern const fw_cluster_event SCHED_EV_NODE_SPEC_UNSCHEDULABLE_CHANGE; /* Node UpdateNodeTaint */
extern const fw_cluster_event SCHED_EV_NODE_ALLOCATABLE_CHANGE;
extern const fw_cluster_event SCHED_EV_NODE_LABEL_CHANGE;
extern const fw_cluster_event SCHED_EV_NODE_TAINT_CHANGE;
extern const fw_cluster_event SCHED_EV_NODE_CONDITION_CHANGE;
extern const fw_cluster_event SCHED_EV_UNSCHEDULABLE_TIMEOUT; /* wildcard */

/* Where a queued pod is. */
typedef enum sched_qwhere {
    SCHED_Q_NONE = 0, /* popped, or not queued */
    SCHED_Q_ACTIVE,
    SCHED_Q_BACKOFF,
    SCHED_Q_UNSCHEDULABLE, /* includes gated pods */
} sched_qwhere;

/* A queued pod: kube-scheduler's QueuedPodInfo plus the queue's
 * bookkeeping. Fields marked "queue" are private to queue.c. */
typedef struct sched_queued_pod {
    /* What plugins see. info.pi holds one reference; info.unschedulable_
     * plugins / pending_plugins are arrays owned here of static names. */
    fw_queued_pod_info info;
    fw_framework *fw;        /* the pod's profile (borrowed) */
    uint64_t condition_hash; /* for the scheduler: hash of the last
                                PodScheduled message it wrote, 0 none */
    /* queue */
    sched_qwhere where;
    size_t heap_index;
    struct sched_queued_pod *prev, *next; /* unschedulablePods list */
} sched_queued_pod;

typedef struct sched_queue_options {
    /* Profiles (borrowed, outlive the queue). frameworks[0]'s QueueSort
     * orders activeQ; a pod's profile is the one named by its
     * spec.schedulerName. n_frameworks >= 1. */
    fw_framework *const *frameworks;
    size_t n_frameworks;
    int64_t initial_backoff_ms;      /* 0: 1000 (podInitialBackoffSeconds) */
    int64_t max_backoff_ms;          /* 0: 10000 (podMaxBackoffSeconds) */
    int64_t max_in_unschedulable_ms; /* 0: 300000 */
    int64_t (*now_ns)(void *ud);     /* NULL: kube_now_ns() */
    void *clock_ud;
    /* The nominator (borrowed, outlives the queue; required). */
    sched_nominator *nominator;
    /* Metrics (borrowed, may be NULL): scheduler_pending_pods,
     * scheduler_queue_incoming_pods_total, scheduler_unschedulable_pods. */
    sched_core_metrics *metrics;
} sched_queue_options;

/* Allocates a queue. Builds the per-profile map of (event, plugin, hint)
 * from fw_framework_foreach_event(). KUBE_OK, KUBE_EINVAL (no frameworks or
 * no nominator),
 * KUBE_ENOMEM. */
int sched_queue_new(const sched_queue_options *o, sched_queue **out);
/* Frees the queue and every queued pod. NULL-safe. */
void sched_queue_free(sched_queue *q);

/* Starts the flush thread (backoffQ every 1 s, unschedulablePods every
 * 30 s). KUBE_OK, KUBE_EINVAL when running or closed, KUBE_ENOMEM. */
int sched_queue_run(sched_queue *q);
/* Closes the queue: Pop() returns KUBE_ECANCELED, the flush thread ends
 * (joined here), later adds are ignored. Idempotent. */
void sched_queue_close(sched_queue *q);

/* ---- informer side (kube-scheduler's eventhandlers) ---- */

/* Add: a new unassigned pod of one of our profiles. Runs PreEnqueue and
 * puts it in activeQ (or gated in unschedulablePods); records its
 * nomination. KUBE_OK (also when the pod is already queued: updated),
 * KUBE_EINVAL (no profile of that name), KUBE_ENOMEM, KUBE_ECANCELED. */
int sched_queue_add(sched_queue *q, struct kube_pod *pod);
/* Update (old may be NULL): refreshes the queued pod in place; a pod in
 * unschedulablePods whose spec or metadata changed (status-only changes do
 * not count) moves to backoffQ or activeQ; a pod in no queue is added. */
int sched_queue_update(sched_queue *q, struct kube_pod *old_pod, struct kube_pod *new_pod);
/* Delete: drops the pod from every queue and the nominator. */
void sched_queue_delete(sched_queue *q, const struct kube_pod *pod);
/* AssignedPodAdded / AssignedPodUpdated: moves unschedulable pods with a
 * required pod-affinity term matching the assigned pod
 * (event AssignedPodAdd / AssignedPodUpdate). old_pod may be NULL. */
void sched_queue_assigned_pod_added(sched_queue *q, struct kube_pod *pod);
void sched_queue_assigned_pod_updated(sched_queue *q, struct kube_pod *old_pod,
                                      struct kube_pod *new_pod);
/* MoveAllToActiveOrBackoffQueue: every unschedulable pod for which
 * pre_check (may be NULL) answers 1 and the event is worth requeuing (see
 * the top of this file). old_obj / new_obj are handed to the hints
 * (borrowed, may be NULL). */
void sched_queue_move_all(sched_queue *q, const fw_cluster_event *ev, const kube_object *old_obj,
                          const kube_object *new_obj,
                          int (*pre_check)(void *ud, const fw_pod_info *pi), void *ud);

/* ---- scheduling side ---- */

/* Like pop but returns KUBE_ETIMEDOUT after timeout_ms. */
int sched_queue_pop_timeout(sched_queue *q, long timeout_ms, sched_queued_pod **out);
/* The number of pods popped so far (schedulingCycle). */
int64_t sched_queue_scheduling_cycle(sched_queue *q);
/* AddUnschedulableIfNotPresent: takes qp back (ownership passes, always).
 * The timestamp is refreshed; a pod rejected by no plugin, or one whose
 * cycle started before the last move request (cycle <= moveRequestCycle),
 * goes to backoffQ, others to unschedulablePods. Its nomination is
 * recorded. KUBE_OK, KUBE_EEXIST (already queued: qp freed), KUBE_ECANCELED
 * (closed: qp freed). */
int sched_queue_add_unschedulable_if_not_present(sched_queue *q, sched_queued_pod *qp,
                                                 int64_t cycle);
/* Frees a popped pod that does not come back (bound or deleted). NULL-safe. */
void sched_queued_pod_free(sched_queued_pod *qp);
/* Sets the rejecting plugins (static names, copied as a set). KUBE_OK or
 * KUBE_ENOMEM. */
int sched_queued_pod_set_unschedulable_plugins(sched_queued_pod *qp, const char *const *plugins,
                                               size_t n);
/* Replaces the pod info (a new reference is taken, the old dropped). */
void sched_queued_pod_set_pod_info(sched_queued_pod *qp, fw_pod_info *pi);
/* The backoff this pod serves after its current attempts (ms). */
int64_t sched_queue_backoff_duration_ms(const sched_queue *q, const sched_queued_pod *qp);

/* ---- housekeeping and introspection ---- */

/* flushBackoffQCompleted / flushUnschedulablePodsLeftover, once. */
void sched_queue_flush_backoff_completed(sched_queue *q);
void sched_queue_flush_unschedulable_leftover(sched_queue *q);

typedef struct sched_queue_counts {
    size_t active, backoff, unschedulable, gated; /* unschedulable excludes gated */
} sched_queue_counts;
void sched_queue_get_counts(sched_queue *q, sched_queue_counts *out);
/* PendingPods: fn for every pod in activeQ, backoffQ and the unschedulable
 * pods (gated ones included), under the queue's lock (fn must not call
 * into the queue; pi borrowed for the call). */
void sched_queue_foreach_pending(sched_queue *q, void (*fn)(void *ud, const fw_pod_info *pi),
                                 void *ud);

#endif
