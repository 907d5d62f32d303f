/*
 * kube/machinery/workqueue_testing.h - the test hooks of workqueue.h: entry points only the
 * tests and benchmarks call, never the daemons.
 */
#ifndef KUBE_MACHINERY_WORKQUEUE_TESTING_H
#define KUBE_MACHINERY_WORKQUEUE_TESTING_H

#include "kube/machinery/workqueue.h"

/* Keys queued or held back (not those processing). */
size_t kube_workqueue_len(kube_workqueue *q);

#endif
