/*
 * scheduler/scheduler_int.h - the scheduler's state, shared by its files:
 * scheduler.c (construction, lifecycle, leadership, housekeeping),
 * schedule_one.c (the scheduling and binding cycles) and fence.c (only the
 * leader writes). The binding pipeline is an object of its own
 * (binders.h), reached through s->binders. Not a public header.
 */
#ifndef SCHED_SCHEDULER_INT_H
#define SCHED_SCHEDULER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "binders.h"
#include "cache/debugger.h"
#include "kube/util/clock.h"
#include "eventhandlers.h"
#include "extender.h"
#include "kube/machinery/factory.h"
#include "kube/machinery/leader.h"
#include "kube/machinery/recorder.h"
#include "pins/controller.h"
#include "plugins/registry.h"
#include "scheduler.h"

#define DEFAULT_BINDING_WORKERS 8
#define PLUGIN_METRICS_SAMPLE_PERCENT 10
#define POP_POLL_MS 200
#define HOUSEKEEPING_MS 1000
#define NOTE_LENGTH_LIMIT 1024
#define EVENT_STOP_DEADLINE_MS 2000

struct sched_scheduler {
    const sched_config *cfg;
    kube_client *client, *leader_client;
    char *identity;
    void (*on_lost)(void *ud);
    void *ud;

    kube_metrics *metrics;
    int own_metrics;
    sched_core_metrics cm;
    kube_factory *informers; /* the one shared informer factory */
    kube_lister *pods, *nodes;
    fw_parallelizer *par;
    fw_snapshot *snap;
    kube_recorder **recorders;      /* one per profile */
    kube_recorder *leader_recorder; /* the elector's, on leader_client: not fenced */
    fw_framework **fws;
    size_t n_fws;
    sched_queue *queue;
    sched_nominator *nominator; /* built before the frameworks and the queue */
    sched_cache *cache;
    sched_event_ctx ev;
    sched_cache_debugger debugger; /* SIGUSR2 while started */
    int debugger_listening;
    fw_sched_state st;
    kube_leader *leader;
    sched_extenders *extenders; /* NULL: none configured */
    sched_pins *pins;           /* NULL: no profile enables StickyVM */
    /* What the plugins' factories close over (StickyVM's hand-off to pins),
     * and the registry the frameworks were built from, closing over it. */
    plugin_factory_args factory_args;
    plugin_registry registry;

    sched_binders *binders; /* the binding pipeline (binders.h): its own lock */

    pthread_mutex_t mu;      /* guards the waits on active, stopping and in_cycle */
    pthread_cond_t cv;       /* leadership, stop */
    pthread_cond_t cycle_cv; /* in_cycle cleared */
    atomic_int active;       /* leading (or no election) */
    atomic_int stopping;
    int started, stopped;
    pthread_t sched_thread, house_thread;
    int64_t max_in_unschedulable_ms; /* the option's value */
    int in_cycle;                    /* the scheduling thread is in scheduleOne */

    atomic_uint_fast64_t n_attempts, n_scheduled, n_unschedulable, n_errors;
};

/* Waits up to ms on s->cv (leadership changes and stop wake it). Inline,
 * for the scheduling thread and housekeeping alike. */
static inline void sched_wait_ms(sched_scheduler *s, long ms)
{
    struct timespec ts;

    kube_deadline_after(&ts, CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->stopping))
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    pthread_mutex_unlock(&s->mu);
}

/* schedule_one.c */

/* The scheduling thread: pops pods while active and schedules each. */
void *sched_cycle_main(void *arg);
/* bindingCycle: WaitOnPermit, PreBind, Bind (+FinishBinding), PostBind;
 * a failure goes through handleBindingCycleError. Frees or requeues the
 * job's pod; the job itself is the caller's. */
void sched_binding_cycle(sched_scheduler *s, bind_job *job);

/* Rejects every pod waiting on Permit in every profile, so their binding
 * threads end (the pipeline's reject_waiting, the fence). */
void sched_reject_waiting(sched_scheduler *s);

/* Frees a bind job's pod without binding it (Unreserve, forget the
 * assumed pod): a deposed leader's queued bindings. The job itself is the
 * caller's. */
void sched_binding_drop(sched_scheduler *s, bind_job *job);

/* fence.c */

/* The scheduler client's fence (kube_client_fence_fn, ud the scheduler):
 * reads, Events, authentication/authorization reviews and Lease writes
 * always pass; every other request only while the elector says we lead. */
const char *sched_fence_check(void *ud, const char *method, const char *path);
/* The elector's on_fence: after a lost Lease, stops scheduling, aborts
 * every request in flight of the scheduler's client and extenders (no
 * later one is sent), drops queued bindings, rejects pods waiting on
 * Permit, and waits a bounded time for the threads to let go. Nothing on
 * a stop. */
void sched_fence(void *ud, int lost);

#endif
