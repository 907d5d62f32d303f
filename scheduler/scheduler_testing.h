/*
 * scheduler/scheduler_testing.h - the test hooks of scheduler.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_SCHEDULER_TESTING_H
#define SCHEDULER_SCHEDULER_TESTING_H

#include "scheduler.h"

/* Waits for the informers. KUBE_OK, KUBE_ETIMEDOUT, KUBE_ECANCELED. */
int sched_scheduler_wait_synced(sched_scheduler *s, long timeout_ms);

/* 1 while pods are being scheduled (leading, or no leader election). */
int sched_scheduler_active(sched_scheduler *s);

void sched_scheduler_stats_get(sched_scheduler *s, sched_scheduler_stats *out);

struct sched_pins;
/* The scheduler's pin controller (scheduler/pins/controller.h), NULL when
 * no profile enables StickyVM. Owned by s. */
struct sched_pins *sched_scheduler_pins(sched_scheduler *s);

#endif
