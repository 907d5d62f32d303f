/*
 * scheduler/scheduler.h - the scheduler: informers feeding the queue and
 * the cache (eventhandlers.c, as kube-scheduler's eventhandlers.go), one
 * scheduling thread running scheduleOne serially, a pool of binding
 * threads, one event recorder per profile, optional leader election, and
 * housekeeping (cache expiry, gauges), as kube-scheduler v1.28's
 * scheduler.go and schedule_one.go.
 *
 * scheduleOne: pop a pod; skip it when it is being deleted or already
 * assumed; update the snapshot from the cache; fw_framework_schedule_pod
 * with the pod's profile; on a fit, assume it in the cache, run Reserve and
 * Permit, and hand it to a binding thread (WaitOnPermit, PreBind, Bind -
 * through a binding extender interested in the pod when the configuration
 * has one (extender.h), else the Bind plugins -, FinishBinding,
 * "Scheduled" event, PostBind). On any failure: Unreserve,
 * forget, requeue with the rejecting plugins (handleSchedulingFailure), a
 * "FailedScheduling" Warning event with the FitError message, and the pod
 * condition PodScheduled=False (reason Unschedulable or SchedulerError)
 * patched on pods/status only when it changed, with nominatedNodeName when
 * PostFilter nominated a node.
 *
 * SIGUSR2 (while started): the cache debugger compares the cache with the
 * informers and dumps it to the log (cache/debugger.h).
 *
 * Leadership: with leaderElection.leaderElect and a leader client, pods
 * are scheduled only while leading (informers, queue and cache run from
 * the start). Every write only a leader makes (bindings, pod status,
 * preemption's deletes, StickyVM's pins, the migration follower's, calls
 * to extenders) goes through the client's fence, which lets it leave only
 * while the elector says we lead (kube_leader_is_leader: not past the
 * renew deadline); each attempt is checked, retries included. Losing the
 * Lease fences before the elector releases it: the scheduling thread
 * stops, requests in flight are aborted (the client is shut down), queued
 * bindings are dropped (their pods forgotten), pods waiting on Permit are
 * rejected; then the release, then the "stopped leading" Event (sent by
 * the elector's own recorder on the leader client, given up to 1 s), then
 * on_leadership_lost (kube-scheduler exits 1 then). Without leader election, scheduling starts once
 * the informers have synced and nothing is fenced.
 *
 * Threads: sched_scheduler_new/start/stop/free from one controlling
 * thread; the getters from any thread.
 *
 * Memory: sched_scheduler_new() allocates the scheduler and everything it
 * runs; sched_scheduler_free() stops and frees it. The options' pointers
 * are borrowed and must outlive the scheduler.
 */
#ifndef SCHED_SCHEDULER_H
#define SCHED_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "config/config.h"
#include "framework/framework.h"
#include "kube/machinery/leader.h"
#include "kube/transport/client.h"
#include "metrics.h"
#include "queue/queue.h"

typedef struct sched_scheduler sched_scheduler;

typedef struct sched_scheduler_options {
    const sched_config *config; /* defaulted configuration. Required */
    /* Informers, bindings, status, events. Required. With leader election
     * the scheduler installs its fence on it (kube_client_set_fence: only
     * reads, Events, reviews and Lease writes leave while not leading) and
     * shuts it down when the Lease is lost: one client per scheduler. */
    kube_client *client;
    /* The elector's own client (kube_leader_client_options()), which
     * also sends the Lease's LeaderElection Events; shut down once the
     * Lease is lost (after the "stopped leading" Event): one per
     * scheduler. Leader election runs when
     * config->leader_election.leader_elect is set; NULL then is
     * KUBE_EINVAL. */
    kube_client *leader_client;
    const char *identity;        /* leader identity; NULL: "<hostname>_<uuid>" */
    const fw_registry *registry; /* NULL: plugin_registry_in_tree() */
    kube_metrics *metrics;       /* registry to register into; NULL: a private one */
    int binding_workers;         /* binding threads (each keeps one API connection); 0: 8 */
    /* --pod-max-in-unschedulable-pods-duration: the longest a pod stays in
     * unschedulablePods before the 30 s flush moves it; 0: 5 min. */
    int64_t pod_max_in_unschedulable_ms;
    /* Called once, on the elector's thread, when leadership is lost (not
     * on a stop). May be NULL. */
    void (*on_leadership_lost)(void *ud);
    void *ud;
} sched_scheduler_options;

/* Builds frameworks for every profile (fw_framework_new), the queue, the
 * cache, the informers (pods with fieldSelector status.phase!=Succeeded,
 * status.phase!=Failed; nodes), the recorders and the parallelizer.
 * Nothing runs yet. KUBE_OK, KUBE_EINVAL, KUBE_ECONFIG (a profile's
 * framework, or an extender's URL or TLS material: extender.h; message in
 * err), KUBE_EIO (an extender's TLS file), KUBE_ENOMEM. */
int sched_scheduler_new(const sched_scheduler_options *o, sched_scheduler **out, char *err,
                        size_t errlen);

/* Starts informers, housekeeping, the binding pool, then leader election
 * or the scheduling thread. KUBE_OK, KUBE_EINVAL (started twice),
 * KUBE_ENOMEM. */
int sched_scheduler_start(sched_scheduler *s);

/* Graceful stop: no more pops, in-flight bindings finish (waiting at most
 * timeout_ms, then their permits are rejected), the Lease is released,
 * events are flushed, informers stop. Idempotent. */
void sched_scheduler_stop(sched_scheduler *s, long timeout_ms);

/* Stops (timeout 0 if still running) and frees. NULL-safe. */
void sched_scheduler_free(sched_scheduler *s);

/* 1 once every informer has synced (/readyz). */
int sched_scheduler_synced(sched_scheduler *s);
/* The registry the scheduler's metrics are in (borrowed). */
kube_metrics *sched_scheduler_metrics(sched_scheduler *s);
/* The leader elector; NULL without leader election (borrowed). */
kube_leader *sched_scheduler_leader(sched_scheduler *s);
/* The one informer factory (borrowed; started by sched_scheduler_start()):
 * the secure port watches its authentication ConfigMap there. */
struct kube_factory *sched_scheduler_informers(sched_scheduler *s);
/* Calls fn for every pod of the pod informer (not Succeeded/Failed), under
 * the informer's lock (kube_lister_foreach: fn must not block). */
void sched_scheduler_foreach_pod(sched_scheduler *s, void (*fn)(void *ud, kube_object *obj),
                                 void *ud);

typedef struct sched_scheduler_stats {
    uint64_t attempts;      /* scheduling cycles run */
    uint64_t scheduled;     /* pods bound */
    uint64_t unschedulable; /* attempts ending Unschedulable */
    uint64_t errors;        /* attempts ending in an error (bind failures included) */
    uint64_t binding_in_flight;
    sched_queue_counts queue;
    sched_cache_counts cache;
} sched_scheduler_stats;

#endif
