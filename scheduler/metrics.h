/*
 * scheduler/metrics.h - the metric set of kube-scheduler v1.28
 * (pkg/scheduler/metrics/metrics.go) on the shared registry (kube/util/metrics.h),
 * with the framework's metrics hooks (fw_metrics_hooks).
 *
 * Threads: every function is thread-safe.
 * Memory: the families belong to the registry they are registered into.
 */
#ifndef SCHED_METRICS_H
#define SCHED_METRICS_H

#include "framework/framework.h"
#include "kube/util/metrics.h"

/*
 * kube-scheduler's metric set. Names, help texts, labels, buckets and
 * stability as pkg/scheduler/metrics v1.28.
 */
enum {
    SCHED_PENDING_ACTIVE = 0,
    SCHED_PENDING_BACKOFF,
    SCHED_PENDING_UNSCHEDULABLE,
    SCHED_PENDING_GATED,
    SCHED_PENDING_COUNT
};

typedef struct sched_core_metrics {
    /* scheduler_schedule_attempts_total{result,profile} */
    kube_metric *schedule_attempts;
    /* scheduler_scheduling_attempt_duration_seconds{result,profile} */
    kube_metric *scheduling_attempt_duration;
    /* scheduler_scheduling_algorithm_duration_seconds */
    kube_metric *scheduling_algorithm_duration;
    /* scheduler_pending_pods{queue}, and its children active, backoff,
     * unschedulable and gated */
    kube_metric *pending_pods;
    kube_metric_child *pending[SCHED_PENDING_COUNT];
    /* scheduler_queue_incoming_pods_total{queue,event} */
    kube_metric *queue_incoming_pods;
    /* scheduler_pod_scheduling_attempts */
    kube_metric *pod_scheduling_attempts;
    /* scheduler_pod_scheduling_sli_duration_seconds{attempts} */
    kube_metric *pod_scheduling_sli_duration;
    /* scheduler_framework_extension_point_duration_seconds
     * {extension_point,status,profile} */
    kube_metric *framework_extension_point_duration;
    /* scheduler_plugin_execution_duration_seconds
     * {plugin,extension_point,status} */
    kube_metric *plugin_execution_duration;
    uint64_t plugin_execution_id; /* its kube_metric_id, read once */
    /* scheduler_permit_wait_duration_seconds{result} */
    kube_metric *permit_wait_duration;
    /* scheduler_unschedulable_pods{plugin,profile} */
    kube_metric *unschedulable_pods;
    /* scheduler_scheduler_cache_size{type} */
    kube_metric *cache_size;
    /* scheduler_goroutines{operation} */
    kube_metric *goroutines;
} sched_core_metrics;

/* Registers the set into r and fills m (pointers owned by r). KUBE_OK,
 * KUBE_EEXIST when already registered there, KUBE_ENOMEM. */
int sched_core_metrics_register(kube_metrics *r, sched_core_metrics *m);

/* Hooks for fw_services.metrics feeding the set (ud = m, borrowed).
 * plugin_defer keeps plugin durations in a per-thread buffer (no atomics)
 * until plugin_flush on the same thread adds them: buckets and counts then
 * equal per-call observation, the sum up to floating-point rounding. A
 * thread that deferred must flush before the registry is freed. */
fw_metrics_hooks sched_core_metrics_hooks(sched_core_metrics *m);

/* scheduler_schedule_attempts_total and
 * scheduler_scheduling_attempt_duration_seconds for one attempt; result is
 * "scheduled", "unschedulable" or "error". m may be NULL. */
void sched_core_metrics_attempt(sched_core_metrics *m, const char *result, const char *profile,
                                double seconds);

#endif
