/*
 * scheduler/queue/queue_testing.h - the test hooks of queue.h: entry points
 * the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_QUEUE_QUEUE_TESTING_H
#define SCHEDULER_QUEUE_QUEUE_TESTING_H

#include "queue/queue.h"

/* Blocks until activeQ has a pod and pops it: attempts + 1, the rejecting
 * plugins cleared, the scheduling cycle advanced. *out is the caller's.
 * KUBE_OK, or KUBE_ECANCELED once closed. */
int sched_queue_pop(sched_queue *q, sched_queued_pod **out);

/* Where the pod ns/name is queued (SCHED_Q_NONE when not). When gated is
 * non-NULL it receives 1 for a gated pod. */
sched_qwhere sched_queue_where(sched_queue *q, const char *ns, const char *name, int *gated);

#endif
