/*
 * kube/machinery/workqueue_testing.h - the test hooks of workqueue.h: entry points only the
 * tests and benchmarks call, never the daemons.
 */
#ifndef KUBE_MACHINERY_WORKQUEUE_TESTING_H
#define KUBE_MACHINERY_WORKQUEUE_TESTING_H

#include "kube/machinery/workqueue.h"

/* Keys queued or held back (not those processing). */
size_t kube_workqueue_len(kube_workqueue *q);
/* Keys queued, held back or processing: 0 once every key added so far has
 * been handled (kube_workqueue_done) and none waits. */
size_t kube_workqueue_busy(kube_workqueue *q);

#endif
