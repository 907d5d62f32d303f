/*
 * kube/types/pdb.h - policy/v1 PodDisruptionBudget as kube-scheduler's preemption
 * reads it: the selector, the budget (minAvailable / maxUnavailable, each
 * an int or a percentage string) and the status the disruption controller
 * maintains (disruptionsAllowed, disruptedPods).
 *
 * Memory: a kube_pdb is one allocation owned through its reference count
 * (kube/codec/object.h); every pointer inside lives as long as the object.
 */
#ifndef KUBE_PDB_H
#define KUBE_PDB_H

#include <stddef.h>
#include <stdint.h>

#include "kube/transport/api.h"
#include "kube/codec/object.h"
#include "kube/codec/selector.h"

extern const kube_resource KUBE_RES_PDBS; /* policy/v1 poddisruptionbudgets */

/* An IntOrString budget field. */
typedef enum kube_int_or_string_type {
    KUBE_IOS_UNSET = 0, /* absent */
    KUBE_IOS_INT,       /* int_val */
    KUBE_IOS_STRING     /* str_val, e.g. "50%" */
} kube_int_or_string_type;

typedef struct kube_int_or_string {
    kube_int_or_string_type type;
    int32_t int_val;
    const char *str_val; /* "" unless KUBE_IOS_STRING */
} kube_int_or_string;

typedef struct kube_pdb {
    kube_object base;
    /* spec.selector; NULL when nil. A nil or empty selector matches no pod
     * (for preemption). */
    const kube_label_selector *selector;
    kube_int_or_string min_available;
    kube_int_or_string max_unavailable;
    int32_t disruptions_allowed;       /* status.disruptionsAllowed */
    const char *const *disrupted_pods; /* keys of status.disruptedPods */
    size_t n_disrupted_pods;
} kube_pdb;

extern const kube_codec kube_pdb_codec;

/* The kube_pdb behind obj, or NULL when obj is NULL or another kind.
 * Borrowed. */
const kube_pdb *kube_pdb_from(const kube_object *obj);

/* 1 when status.disruptedPods has the pod name. */
int kube_pdb_has_disrupted_pod(const kube_pdb *pdb, const char *pod_name);

#endif
