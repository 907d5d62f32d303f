/*
 * scheduler/plugins/defaultpreemption/internal.h - DefaultPreemption's
 * instance, shared by default_preemption.c (the plugin, PostFilter and
 * the preparation of the chosen candidate) and
 * default_preemption_candidates.c (the dry runs and the choice). Not for
 * other plugins.
 *
 * Memory: dp_list_pdbs() returns new references in a malloc'd array the
 * caller frees with dp_pdbs_free().
 */
#ifndef PLUGIN_DEFAULT_PREEMPTION_INT_H
#define PLUGIN_DEFAULT_PREEMPTION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kube/machinery/factory.h"
#include "kube/types/pdb.h"
#include "kube/machinery/store.h"
#include "metrics.h"
#include "plugins/defaultpreemption/default_preemption.h"

typedef struct default_preemption {
    fw_handle *h;
    int32_t min_pct;              /* minCandidateNodesPercentage */
    int32_t min_abs;              /* minCandidateNodesAbsolute */
    kube_lister *pdb_lister;      /* the informer factory's, or NULL */
    struct kube_store *pdb_store; /* borrowed, or NULL */
    uint64_t rng;                 /* offset RNG (scheduling thread only) */
    int32_t fixed_offset;         /* >= 0: the offset (tests) */
    kube_metric *attempts;        /* scheduler_preemption_attempts_total, or NULL */
    kube_metric *victims;         /* scheduler_preemption_victims, or NULL */
} default_preemption;

/* Every PodDisruptionBudget (getPodDisruptionBudgets). KUBE_OK or
 * KUBE_ENOMEM. */
int dp_list_pdbs(default_preemption *pl, kube_object ***out, size_t *n);
void dp_pdbs_free(kube_object **pdbs, size_t n);

/* util.ClearNominatedNodeName for one pod: patches its status when it has
 * a nominated node (errors logged, not returned). */
void dp_clear_nomination(default_preemption *pl, const fw_pod_info *pi);

/* util.GetPodStartTime in nanoseconds. */
int64_t dp_pod_start_ns(const fw_pod_info *pi);

#endif
