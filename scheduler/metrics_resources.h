/*
 * scheduler/metrics_resources.h - kube-scheduler's pod resource metrics
 * (/metrics/resources, upstream pkg/scheduler/metrics/resources), computed
 * at scrape time from the scheduler's pod informer:
 *
 *   kube_pod_resource_request{namespace,node,pod,priority,resource,
 *                             scheduler,unit}                     gauge
 *   kube_pod_resource_limit{...}                                   gauge
 *
 * One sample per pod and non-zero resource: cpu in "cores", memory,
 * ephemeral-storage and hugepages-* in "bytes", attachable-volumes-* as
 * "integer", other resources without a unit. node is spec.nodeName ("" for
 * a pending pod), scheduler spec.schedulerName, priority spec.priority.
 * Requests are the pod's PodRequests and limits its PodLimits
 * (kube/types/pod.h: init containers, sidecars and overhead included).
 * priority is spec.priority, "0" when unset (an admitted pod always has
 * one). A family without samples is not written.
 *
 * Threads: any thread. Memory: appends to a caller-owned kube_buf.
 */
#ifndef SCHED_METRICS_RESOURCES_H
#define SCHED_METRICS_RESOURCES_H

#include "kube/codec/object.h"
#include "kube/util/buf.h"

/* Calls fn on every pod (the scheduler's pod lister). */
typedef void (*sched_pod_walk)(void *walk_ud, void (*fn)(void *ud, kube_object *obj), void *ud);

/* Appends the Prometheus text of the metrics above for the pods walk
 * visits. KUBE_OK or KUBE_ENOMEM. */
int sched_resource_metrics_write(sched_pod_walk walk, void *walk_ud, kube_buf *out);

#endif
