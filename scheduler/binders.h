/*
 * scheduler/binders.h - the binding pipeline: the binding cycles of
 * assumed pods run off the scheduling thread (kube-scheduler runs each in
 * a goroutine). A fixed pool of threads (`sched-bind`) runs queued jobs; a
 * pod a Permit plugin makes wait gets a thread of its own (`sched-permit`),
 * so waiting pods never hold the pool; a light job binds without a thread
 * (its Bind ends on the client's I/O thread), yet holds a place in the same
 * bounded backlog, so the scheduling thread waits when the server falls
 * behind. The scheduling cycle hands the pipeline a finished cycle (a
 * bind_job) and never touches the pipeline's state.
 *
 * Threads and locks: the pipeline has its own lock, held only around its
 * own fields, never while a job runs and never together with another lock
 * of the scheduler. Every function is thread-safe: push and release are
 * called from the client's I/O thread too, and never wait.
 *
 * Memory: the scheduling cycle allocates a bind_job (calloc) and fills it;
 * from admit/submit on the pipeline owns it and frees it (its cycle state
 * and its bind_failure with it) when the job ends or is dropped. The
 * pipeline itself: sched_binders_new() allocates, sched_binders_free()
 * frees, after sched_binders_stop().
 */
#ifndef SCHED_BINDERS_H
#define SCHED_BINDERS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "framework/framework.h"
#include "kube/util/metrics.h"
#include "queue/queue.h"

struct sched_scheduler;

/* A pod handed from the scheduling thread to the binding pipeline. */
typedef struct bind_job {
    struct bind_job *next; /* the pipeline's queue */
    struct sched_scheduler *s;
    sched_queued_pod *qp;
    fw_cycle_state *cs; /* owned */
    char node[254];
    int64_t start_ns;
    fw_status *bind_failure; /* owned: an asynchronous Bind failed; a binding
                                thread handles it (handleBindingCycleError) */
} bind_job;

/* What the pipeline runs, given by the scheduler (ud is passed back). */
typedef struct sched_binders_ops {
    /* The binding cycle of job (frees or requeues its pod; the job itself
     * stays the pipeline's). */
    void (*run)(void *ud, bind_job *job);
    /* Frees job's pod without binding it (the scheduler is fenced). */
    void (*drop)(void *ud, bind_job *job);
    /* Rejects every pod waiting on Permit, so their threads end. */
    void (*reject_waiting)(void *ud);
    void *ud;
    kube_metric *goroutines; /* scheduler_goroutines{operation}; may be NULL */
} sched_binders_ops;

typedef struct sched_binders sched_binders;

/* A pipeline of n_threads pool threads (not started) running ops (copied).
 * KUBE_OK with *out, or KUBE_ENOMEM. */
int sched_binders_new(size_t n_threads, const sched_binders_ops *ops, sched_binders **out);
/* Starts the pool's threads. KUBE_OK or KUBE_ENOMEM (those started run). */
int sched_binders_start(sched_binders *b);
/* Frees a stopped (or never started) pipeline. NULL-safe. */
void sched_binders_free(sched_binders *b);

/* Takes a place in the backlog for a job about to bind (by the pool or
 * without a thread), waiting while it is full. 1 when taken; 0 when the
 * pipeline is fenced (nothing taken). */
int sched_binders_admit(sched_binders *b);
/* Queues an admitted job for a pool thread (ownership passes). Never
 * waits. */
void sched_binders_push(sched_binders *b, bind_job *job);
/* Frees an admitted job whose binding ended, and gives its place back. */
void sched_binders_release(sched_binders *b, bind_job *job);
/* Drops a job that was never admitted (fenced): ops.drop, then frees it. */
void sched_binders_drop(sched_binders *b, bind_job *job);
/* Runs job on a thread of its own (a pod waiting on Permit; ownership
 * passes on success). 0 when none could be started or the pipeline is
 * fenced: the caller keeps job. */
int sched_binders_submit_waiting(sched_binders *b, bind_job *job);
/* Joins the Permit threads that ended (all of them when all is set). */
void sched_binders_reap(sched_binders *b, int all);

/* Jobs queued or running, Permit waiters and bindings without a thread
 * included. */
size_t sched_binders_in_flight(sched_binders *b);
/* Waits until no job is in flight or the CLOCK_REALTIME deadline passes.
 * 1 when none is left. */
int sched_binders_wait_idle(sched_binders *b, const struct timespec *deadline);
/* Leadership lost: refuses every admission from now on and wakes the
 * scheduling thread if it waits for room. */
void sched_binders_fence(sched_binders *b);
/* Drops every job queued for the pool (ops.drop), giving their places
 * back. */
void sched_binders_drop_queued(sched_binders *b);
/* Waits up to timeout_ms for the jobs in flight; past it rejects the pods
 * waiting on Permit (ops.reject_waiting) and waits for the rest (a request
 * ends by its own timeout); then ends and joins every thread. */
void sched_binders_stop(sched_binders *b, long timeout_ms);

#endif
