/*
 * scheduler/metrics.h - a small Prometheus registry (counters, gauges and
 * histograms with labels, text exposition format 0.0.4) and the metric set
 * of kube-scheduler v1.28 (pkg/scheduler/metrics/metrics.go) registered
 * into it, with the framework's metrics hooks (fw_metrics_hooks).
 *
 * Anyone may register more families into the scheduler's registry (the
 * StickyVM plugin's stickyvm_* counters, ...): names must be unique and
 * valid Prometheus names, label names valid label names.
 *
 *     sched_metric *m;
 *     static const char *const labels[] = {"result"};
 *     sched_metric_opts o = {.name = "stickyvm_pins_total", .help = "...",
 *                            .type = SCHED_METRIC_COUNTER,
 *                            .labels = labels, .n_labels = 1};
 *     sched_metrics_register(reg, &o, &m);
 *     const char *v[] = {"ok"};
 *     sched_metric_add(m, v, 1);
 *
 * Exposition follows client_golang: families sorted by name, children by
 * label values, "# HELP <name> [STABLE] <help>" (kube's component-base
 * prefixes the stability level), floats as Go's strconv 'g' -1, histogram
 * buckets cumulative with le="+Inf", then _sum and _count. A family with
 * no children is not written.
 *
 * Threads: every function is thread-safe. Observations are lock-free
 * (atomics) once a child exists; sched_metric_with() creates children under
 * the family's lock and caches lookups per thread, so hot paths (Filter
 * plugin durations from many threads) do not contend.
 *
 * Memory: sched_metrics_new() allocates a registry freed (with every
 * family and child) by sched_metrics_free(). Families and children are
 * owned by the registry: their pointers stay valid until it is freed.
 * Registration copies names, help, label names and buckets.
 */
#ifndef SCHED_METRICS_H
#define SCHED_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "kube/buf.h"

typedef struct sched_metrics sched_metrics;
typedef struct sched_metric sched_metric;
typedef struct sched_metric_child sched_metric_child;

typedef enum sched_metric_type {
    SCHED_METRIC_COUNTER = 0,
    SCHED_METRIC_GAUGE,
    SCHED_METRIC_HISTOGRAM,
} sched_metric_type;

/* component-base stability levels (the HELP prefix). */
typedef enum sched_stability {
    SCHED_STABILITY_ALPHA = 0,
    SCHED_STABILITY_BETA,
    SCHED_STABILITY_STABLE,
} sched_stability;

#define SCHED_METRIC_MAX_LABELS 8
#define SCHED_METRIC_MAX_BUCKETS 64

typedef struct sched_metric_opts {
    const char *name;                 /* full name, e.g. "scheduler_pending_pods" */
    const char *help;
    sched_metric_type type;
    sched_stability stability;
    const char *const *labels;        /* label names, n_labels <= SCHED_METRIC_MAX_LABELS */
    size_t n_labels;
    const double *buckets;            /* histograms: strictly increasing upper bounds,
                                         +Inf implied; n_buckets <= SCHED_METRIC_MAX_BUCKETS */
    size_t n_buckets;
} sched_metric_opts;

/* Allocates an empty registry. KUBE_OK or KUBE_ENOMEM. */
int sched_metrics_new(sched_metrics **out);
/* Frees the registry and everything registered. NULL-safe. No observation
 * may be running. */
void sched_metrics_free(sched_metrics *r);

/* Registers a family. *out (may be NULL) receives it, owned by r. Returns
 * KUBE_OK, KUBE_EEXIST (name taken), KUBE_EINVAL (bad name, label name,
 * bucket list, or too many labels/buckets) or KUBE_ENOMEM. */
int sched_metrics_register(sched_metrics *r, const sched_metric_opts *o, sched_metric **out);
/* The family of that name, or NULL. */
sched_metric *sched_metrics_find(sched_metrics *r, const char *name);

/* The child for these label values (one per label name, NULL-free; values
 * are copied at creation). Created on first use. Owned by the registry;
 * NULL only when memory runs out (observations on NULL are no-ops). */
sched_metric_child *sched_metric_with(sched_metric *m, const char *const *values);
/* The same for label values of static storage (string literals, plugin
 * names), which are never freed: the per-thread cache then trusts their
 * addresses without comparing contents (hot paths). */
sched_metric_child *sched_metric_with_static(sched_metric *m, const char *const *values);

/* Counter: add v >= 0 (negative is ignored). Gauge: add v (any sign). */
void sched_metric_child_add(sched_metric_child *c, double v);
/* Gauge: set. */
void sched_metric_child_set(sched_metric_child *c, double v);
/* Histogram: observe one value. */
void sched_metric_child_observe(sched_metric_child *c, double v);
/* Counter/gauge value, or a histogram's sample count. 0 for NULL. */
double sched_metric_child_value(const sched_metric_child *c);
/* Histogram: the sum of observations. */
double sched_metric_child_sum(const sched_metric_child *c);

/* Shorthands: sched_metric_with() then the operation (NULL m is a no-op). */
void sched_metric_add(sched_metric *m, const char *const *values, double v);
void sched_metric_set(sched_metric *m, const char *const *values, double v);
void sched_metric_observe(sched_metric *m, const char *const *values, double v);
/* The value of a child, 0 when it does not exist (for tests). */
double sched_metric_value(sched_metric *m, const char *const *values);

/* Appends the text exposition of every family to out. KUBE_OK or
 * KUBE_ENOMEM. */
int sched_metrics_write(sched_metrics *r, kube_buf *out);

/* prometheus.ExponentialBuckets(start, factor, n) into out[0..n). */
void sched_metrics_exp_buckets(double start, double factor, size_t n, double *out);
/* Formats v as Go's strconv.FormatFloat(v, 'g', -1, 64) (what client_golang
 * writes: "0.001", "1.5e-05", "+Inf", "NaN"). out has n bytes (>= 32). */
void sched_metrics_format_float(double v, char *out, size_t n);

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
    sched_metric *schedule_attempts;             /* scheduler_schedule_attempts_total{result,profile} */
    sched_metric *scheduling_attempt_duration;   /* scheduler_scheduling_attempt_duration_seconds{result,profile} */
    sched_metric *scheduling_algorithm_duration; /* scheduler_scheduling_algorithm_duration_seconds */
    sched_metric *pending_pods;                  /* scheduler_pending_pods{queue} */
    sched_metric_child *pending[SCHED_PENDING_COUNT]; /* active, backoff, unschedulable, gated */
    sched_metric *queue_incoming_pods;           /* scheduler_queue_incoming_pods_total{queue,event} */
    sched_metric *pod_scheduling_attempts;       /* scheduler_pod_scheduling_attempts */
    sched_metric *pod_scheduling_sli_duration;   /* scheduler_pod_scheduling_sli_duration_seconds{attempts} */
    sched_metric *framework_extension_point_duration; /* {extension_point,status,profile} */
    sched_metric *plugin_execution_duration;     /* {plugin,extension_point,status} */
    sched_metric *permit_wait_duration;          /* scheduler_permit_wait_duration_seconds{result} */
    sched_metric *unschedulable_pods;            /* scheduler_unschedulable_pods{plugin,profile} */
    sched_metric *cache_size;                    /* scheduler_scheduler_cache_size{type} */
    sched_metric *goroutines;                    /* scheduler_goroutines{operation} */
} sched_core_metrics;

/* Registers the set into r and fills m (pointers owned by r). KUBE_OK,
 * KUBE_EEXIST when already registered there, KUBE_ENOMEM. */
int sched_core_metrics_register(sched_metrics *r, sched_core_metrics *m);

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
