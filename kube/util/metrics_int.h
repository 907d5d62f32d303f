/*
 * kube/util/metrics_int.h - the registry's structures, shared by its two
 * files: kube/util/metrics.c (families, children, observations) and
 * kube/util/metrics_text.c (the text exposition). Not a public header.
 */
#ifndef KUBE_METRICS_INT_H
#define KUBE_METRICS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "kube/util/metrics.h"
#include "kube/util/strmap.h"

struct kube_metric_child {
    kube_metric *family;
    char **values;             /* n_labels owned strings */
    _Atomic uint64_t bits;     /* counter/gauge value (double bits) */
    _Atomic uint64_t count;    /* histogram samples */
    _Atomic uint64_t sum_bits; /* histogram sum (double bits) */
    _Atomic uint64_t *buckets; /* per-bucket (not cumulative) counts */
    int hidden;                /* out of the exposition (kube_metric_replace); under
                                  the family's lock */
};

struct kube_metric {
    uint64_t id;
    char *name, *help;
    kube_metric_type type;
    kube_stability stability;
    char *labels[KUBE_METRIC_MAX_LABELS];
    size_t n_labels;
    double *buckets;
    size_t n_buckets;
    pthread_mutex_t mu;   /* guards children and list */
    kube_strmap children; /* joined values -> child */
    kube_metric_child **list;
    size_t n_list, cap_list;
};

struct kube_metrics {
    pthread_mutex_t mu;
    kube_strmap by_name;
    kube_metric **fams;
    size_t n, cap;
};

/* A double from the bits an atomic holds. */
static inline double kube_metrics_u2d(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

#endif
