/*
 * scheduler/metrics_resources.c - kube-scheduler's pod resource metrics,
 * written through a registry built for each scrape (kube/util/metrics.h
 * gives the exposition format and escaping). The contract is in
 * metrics_resources.h.
 */
#include "metrics_resources.h"

#include <stdio.h>
#include <string.h>

#include "kube/types/pod.h"
#include "kube/util/errors.h"
#include "kube/util/metrics.h"

#define N_LABELS 7

static const char *const labels[N_LABELS] = {"namespace", "node",      "pod", "priority",
                                             "resource",  "scheduler", "unit"};

static const kube_metric_opts request_opts = {
    "kube_pod_resource_request",
    "Resources requested by workloads on the cluster, broken down by pod. This shows the resource "
    "usage the scheduler and kubelet expect per pod for resources along with the unit for the "
    "resource if any.",
    KUBE_METRIC_GAUGE,
    KUBE_STABILITY_ALPHA,
    labels,
    N_LABELS,
    NULL,
    0};

static const kube_metric_opts limit_opts = {
    "kube_pod_resource_limit",
    "Resources limit for workloads on the cluster, broken down by pod. This shows the resource "
    "usage the scheduler and kubelet expect per pod for resources along with the unit for the "
    "resource if any.",
    KUBE_METRIC_GAUGE,
    KUBE_STABILITY_ALPHA,
    labels,
    N_LABELS,
    NULL,
    0};

typedef struct walk_state {
    kube_metric *request, *limit;
} walk_state;

/* The unit kube gives a resource name (recordMetricWithUnit). */
static const char *unit_of(const char *name)
{
    if (!strcmp(name, "memory") || !strcmp(name, "ephemeral-storage") || !strcmp(name, "storage") ||
        !strncmp(name, "hugepages-", 10))
        return "bytes";
    if (!strncmp(name, "attachable-volumes-", 19))
        return "integer";
    return "";
}

/* One sample of m: the pod's labels with resource and unit. */
static void sample(kube_metric *m, const kube_object *obj, const kube_pod *p, const char *resource,
                   double value)
{
    char priority[16];
    const char *values[N_LABELS] = {
        obj->meta.namespace_, p->node_name,     obj->meta.name, priority, resource,
        p->scheduler_name,    unit_of(resource)};

    snprintf(priority, sizeof(priority), "%d", (int)p->priority);
    if (!strcmp(resource, "cpu"))
        values[6] = "cores";
    kube_metric_set(m, values, value);
}

/* A sample of m for every non-zero resource of r. */
static void samples(kube_metric *m, const kube_object *obj, const kube_pod *p,
                    const kube_resources *r)
{
    if (r->milli_cpu)
        sample(m, obj, p, "cpu", (double)r->milli_cpu / 1000.0);
    if (r->memory)
        sample(m, obj, p, "memory", (double)r->memory);
    if (r->ephemeral_storage)
        sample(m, obj, p, "ephemeral-storage", (double)r->ephemeral_storage);
    if (r->allowed_pods)
        sample(m, obj, p, "pods", (double)r->allowed_pods);
    for (size_t i = 0; i < r->n_scalars; i++)
        if (r->scalars[i].value)
            sample(m, obj, p, r->scalars[i].name, (double)r->scalars[i].value);
}

static void each_pod(void *ud, kube_object *obj)
{
    walk_state *w = ud;
    const kube_pod *p = kube_pod_from(obj);

    if (!p || kube_pod_is_terminal(p))
        return;
    samples(w->request, obj, p, &p->requests);
    if (p->limits)
        samples(w->limit, obj, p, p->limits);
}

int sched_resource_metrics_write(sched_pod_walk walk, void *walk_ud, kube_buf *out)
{
    kube_metrics *reg = NULL;
    walk_state w = {0};
    int rc = kube_metrics_new(&reg);

    if (rc == KUBE_OK)
        rc = kube_metrics_register(reg, &request_opts, &w.request);
    if (rc == KUBE_OK)
        rc = kube_metrics_register(reg, &limit_opts, &w.limit);
    if (rc == KUBE_OK && walk)
        walk(walk_ud, each_pod, &w);
    if (rc == KUBE_OK)
        rc = kube_metrics_write(reg, out);
    kube_metrics_free(reg);
    return rc;
}
