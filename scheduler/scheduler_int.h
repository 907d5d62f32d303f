/*
 * scheduler/scheduler_int.h - the scheduler's state, shared by its files:
 * scheduler.c (construction, lifecycle, leadership, housekeeping),
 * schedule_one.c (the scheduling and binding cycles) and binders.c (the
 * binding threads). Not a public header.
 */
#ifndef SCHED_SCHEDULER_INT_H
#define SCHED_SCHEDULER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "cache/debugger.h"
#include "eventhandlers.h"
#include "extender.h"
#include "kube/machinery/factory.h"
#include "kube/machinery/leader.h"
#include "kube/machinery/recorder.h"
#include "pin_controller.h"
#include "scheduler.h"

#define DEFAULT_BINDING_WORKERS 8
/* Pods assumed and waiting for a binding thread, per thread: the
 * scheduling thread waits beyond that (each holds its cycle state). */
#define BIND_BACKLOG_PER_WORKER 4
#define PLUGIN_METRICS_SAMPLE_PERCENT 10
#define POP_POLL_MS 200
#define HOUSEKEEPING_MS 1000
#define NOTE_LENGTH_LIMIT 1024
#define EVENT_STOP_DEADLINE_MS 2000

/* A pod handed from the scheduling thread to a binding thread. */
typedef struct bind_job {
    struct bind_job *next;
    struct sched_scheduler *s;
    sched_queued_pod *qp;
    fw_cycle_state *cs;
    char node[254];
    int64_t start_ns;
    fw_status *bind_failure; /* owned: an asynchronous Bind failed; a binding
                                thread handles it (handleBindingCycleError) */
} bind_job;

/* A pod a Permit plugin made wait gets a thread of its own (kube-scheduler
 * runs every binding cycle in its own goroutine): waiting pods must not
 * hold the pool's threads, or pods they wait for could never bind. */
typedef struct waiter {
    struct waiter *next;
    struct sched_scheduler *s;
    bind_job *job;
    pthread_t thread;
    int done;
} waiter;

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

    pthread_mutex_t mu;      /* guards the flags' waits and the bind queue */
    pthread_cond_t cv;       /* leadership, stop */
    pthread_cond_t bind_cv;  /* bind jobs queued, stop */
    pthread_cond_t space_cv; /* the pool's backlog shrank */
    pthread_cond_t idle_cv;  /* in_flight reached 0 */
    atomic_int active;       /* leading (or no election) */
    atomic_int stopping;
    int started, stopped;
    pthread_t sched_thread, house_thread;
    pthread_t *binders;
    size_t n_binders;
    int64_t max_in_unschedulable_ms; /* the option's value */
    bind_job *jobs_head, *jobs_tail;
    size_t in_flight; /* jobs queued or running, waiters included */
    size_t pool_jobs; /* jobs queued or running in the pool, or binding without a thread */
    waiter *waiters;  /* permit-waiting pods' threads */
    int binders_exit;
    int in_cycle; /* the scheduling thread is in scheduleOne */
    int fenced;   /* leadership lost: nothing more is bound (fence.c) */

    atomic_uint_fast64_t n_attempts, n_scheduled, n_unschedulable, n_errors;
};

/* Waits up to ms on s->cv (leadership changes and stop wake it). */
void sched_wait_ms(sched_scheduler *s, long ms);

/* schedule_one.c */

/* The scheduling thread: pops pods while active and schedules each. */
void *sched_cycle_main(void *arg);
/* bindingCycle: WaitOnPermit, PreBind, Bind (+FinishBinding), PostBind;
 * a failure goes through handleBindingCycleError. Frees or requeues the
 * job's pod; the job itself is the caller's. */
void sched_binding_cycle(sched_scheduler *s, bind_job *job);

/* Frees a bind job's pod without binding it (Unreserve, forget the
 * assumed pod): a deposed leader's queued bindings. The job itself is the
 * caller's. */
void sched_binding_drop(sched_scheduler *s, bind_job *job);

/* binders.c */

/* Starts s->n_binders pool threads. KUBE_OK or KUBE_ENOMEM. */
int sched_binders_start(sched_scheduler *s);
/* Drops a job sched_binders_admit refused (the scheduler is fenced):
 * sched_binding_drop, then frees it. */
void sched_binders_drop(sched_scheduler *s, bind_job *job);
/* Takes a place in the pool's backlog for a job about to bind (by the pool
 * or without a thread), waiting while it is full. 1 when taken; 0 when the
 * scheduler is fenced (nothing taken). */
int sched_binders_admit(sched_scheduler *s);
/* Queues an admitted job for a binding thread (ownership passes). Never
 * waits: for any thread, the client's I/O thread included. */
void sched_binders_push(sched_scheduler *s, bind_job *job);
/* Frees an admitted job and gives its place back. */
void sched_binders_release(sched_scheduler *s, bind_job *job);
/* A binding thread of its own for a pod waiting on Permit (ownership of
 * job passes on success); 0 when none could be started (the caller then
 * uses the pool). */
int sched_binders_submit_waiting(sched_scheduler *s, bind_job *job);
/* Joins waiter threads that ended (all of them when all is set). */
void sched_binders_reap(sched_scheduler *s, int all);
/* Waits up to timeout_ms for the jobs in flight; past it rejects pods
 * still waiting on Permit and waits for the rest (a request ends by its
 * own timeout, as a blocked binding thread's did); then ends and joins
 * every binding thread. */
void sched_binders_stop(sched_scheduler *s, long timeout_ms);
/* Drops every job queued for the pool (sched_binding_drop). */
void sched_binders_drop_queued(sched_scheduler *s);
/* Rejects every pod waiting on Permit, so their binding threads end. */
void sched_binders_reject_waiting(sched_scheduler *s);

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
