/*
 * scheduler/queue/nominator_testing.h - the test hooks of nominator.h: entry
 * points the tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_QUEUE_NOMINATOR_TESTING_H
#define SCHEDULER_QUEUE_NOMINATOR_TESTING_H

#include "queue/nominator.h"

/* The node a pod (by uid) is nominated to, copied into out (len bytes; out
 * may be NULL); 1 when it is nominated, 0 when not. */
int sched_nominator_node_of(sched_nominator *n, const char *uid, char *out, size_t len);

#endif
