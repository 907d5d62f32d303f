/*
 * kube/util/metrics.h - the Prometheus registry both daemons use (counters,
 * gauges and histograms with labels, text exposition format 0.0.4), as
 * client_golang with component-base's stability levels.
 *
 * A daemon registers its families (kube-scheduler's set,
 * scheduler/metrics.h; the StickyVM plugin's stickyvm_* counters;
 * stickyvm-apiserver's, apiserver/metrics.h) into one registry and serves
 * kube_metrics_write() at /metrics: names must be unique and valid
 * Prometheus names, label names valid label names.
 *
 *     kube_metric *m;
 *     static const char *const labels[] = {"result"};
 *     kube_metric_opts o = {.name = "stickyvm_pins_total", .help = "...",
 *                            .type = KUBE_METRIC_COUNTER,
 *                            .labels = labels, .n_labels = 1};
 *     kube_metrics_register(reg, &o, &m);
 *     const char *v[] = {"ok"};
 *     kube_metric_add(m, v, 1);
 *
 * Exposition follows client_golang: families sorted by name, children by
 * label values, "# HELP <name> [STABLE] <help>" (kube's component-base
 * prefixes the stability level), floats as Go's strconv 'g' -1, histogram
 * buckets cumulative with le="+Inf", then _sum and _count. A family with
 * no children is not written.
 *
 * Threads: every function is thread-safe. Observations are lock-free
 * (atomics) once a child exists; kube_metric_with() creates children under
 * the family's lock and caches lookups per thread, so hot paths (Filter
 * plugin durations from many threads) do not contend.
 *
 * Memory: kube_metrics_new() allocates a registry freed (with every
 * family and child) by kube_metrics_free(). Families and children are
 * owned by the registry: their pointers stay valid until it is freed.
 * Registration copies names, help, label names and buckets.
 */
#ifndef KUBE_METRICS_H
#define KUBE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "kube/util/buf.h"

typedef struct kube_metrics kube_metrics;
typedef struct kube_metric kube_metric;
typedef struct kube_metric_child kube_metric_child;

typedef enum kube_metric_type {
    KUBE_METRIC_COUNTER = 0,
    KUBE_METRIC_GAUGE,
    KUBE_METRIC_HISTOGRAM,
} kube_metric_type;

/* component-base stability levels (the HELP prefix). */
typedef enum kube_stability {
    KUBE_STABILITY_ALPHA = 0,
    KUBE_STABILITY_BETA,
    KUBE_STABILITY_STABLE,
} kube_stability;

#define KUBE_METRIC_MAX_LABELS 8
#define KUBE_METRIC_MAX_BUCKETS 64

typedef struct kube_metric_opts {
    const char *name; /* full name, e.g. "scheduler_pending_pods" */
    const char *help;
    kube_metric_type type;
    kube_stability stability;
    const char *const *labels; /* label names, n_labels <= KUBE_METRIC_MAX_LABELS */
    size_t n_labels;
    const double *buckets; /* histograms: strictly increasing upper bounds,
                              +Inf implied; n_buckets <= KUBE_METRIC_MAX_BUCKETS */
    size_t n_buckets;
} kube_metric_opts;

/* Allocates an empty registry. KUBE_OK or KUBE_ENOMEM. */
int kube_metrics_new(kube_metrics **out);
/* Frees the registry and everything registered. NULL-safe. No observation
 * may be running. */
void kube_metrics_free(kube_metrics *r);

/* Registers a family. *out (may be NULL) receives it, owned by r. Returns
 * KUBE_OK, KUBE_EEXIST (name taken), KUBE_EINVAL (bad name, label name,
 * bucket list, or too many labels/buckets) or KUBE_ENOMEM. */
int kube_metrics_register(kube_metrics *r, const kube_metric_opts *o, kube_metric **out);
/* The family of that name, or NULL. */
kube_metric *kube_metrics_find(kube_metrics *r, const char *name);
/* The label-less family o describes, registered now or found registered
 * already (by another user of the same family: several plugin instances,
 * a plugin and a controller), its child created so that it is exported
 * from 0. Owned by r; NULL when r is NULL or registering failed. */
kube_metric *kube_metrics_ensure(kube_metrics *r, const kube_metric_opts *o);

/* The child for these label values (one per label name, NULL-free; values
 * are copied at creation). Created on first use. Owned by the registry;
 * NULL only when memory runs out (observations on NULL are no-ops). */
kube_metric_child *kube_metric_with(kube_metric *m, const char *const *values);
/* The same for label values of static storage (string literals, plugin
 * names), which are never freed: the per-thread cache then trusts their
 * addresses without comparing contents (hot paths). */
kube_metric_child *kube_metric_with_static(kube_metric *m, const char *const *values);

/* Counter: add v >= 0 (negative is ignored). Gauge: add v (any sign). */
void kube_metric_child_add(kube_metric_child *c, double v);
/* Gauge: set. */
void kube_metric_child_set(kube_metric_child *c, double v);
/* Histogram: observe one value. */
void kube_metric_child_observe(kube_metric_child *c, double v);
/* Histogram: count observations at once, per_bucket[i] of them in bucket
 * i (not cumulative; one entry per bucket bound, those above the last
 * bound counted in none), their values summing to sum. The counts then
 * equal count calls of kube_metric_child_observe(). */
void kube_metric_child_observe_many(kube_metric_child *c, const uint32_t *per_bucket,
                                    uint64_t count, double sum);
/* Histogram: the bucket upper bounds of the child's family (*n of them,
 * +Inf not included); NULL with *n 0 for NULL. Owned by the registry. */
const double *kube_metric_child_buckets(const kube_metric_child *c, size_t *n);
/* The family's id, unique in the process and never reused (0 for NULL):
 * a key for callers' caches of children. */
uint64_t kube_metric_id(const kube_metric *m);
/* Counter/gauge value, or a histogram's sample count. 0 for NULL. */
double kube_metric_child_value(const kube_metric_child *c);

/* Shorthands: kube_metric_with() then the operation (NULL m is a no-op). */
void kube_metric_add(kube_metric *m, const char *const *values, double v);
void kube_metric_set(kube_metric *m, const char *const *values, double v);
void kube_metric_observe(kube_metric *m, const char *const *values, double v);

/* Gauge m's series become exactly these n: series i has the label values
 * values[i * n_labels .. (i + 1) * n_labels) and the value v[i]; every
 * other series of m leaves the exposition (client_golang's Reset() then
 * Set()s, done at once: a scrape sees the old set or the new one). The
 * children of series left out are kept (hidden) for the pointers callers
 * hold. A no-op on NULL or another type. KUBE_OK or KUBE_ENOMEM (the
 * series that could not be created are missing). */
int kube_metric_replace(kube_metric *m, const char *const *values, const double *v, size_t n);

/* Appends the text exposition of every family to out. KUBE_OK or
 * KUBE_ENOMEM. */
int kube_metrics_write(kube_metrics *r, kube_buf *out);

/* prometheus.ExponentialBuckets(start, factor, n) into out[0..n). */
void kube_metrics_exp_buckets(double start, double factor, size_t n, double *out);
/* Formats v as Go's strconv.FormatFloat(v, 'g', -1, 64) (what client_golang
 * writes: "0.001", "1.5e-05", "+Inf", "NaN"). out has n bytes (>= 32). */
void kube_metrics_format_float(double v, char *out, size_t n);

#endif
