/*
 * scheduler/plugins/defaultpreemption/default_preemption.h - what DefaultPreemption exports
 * besides its descriptor: a constructor reading PodDisruptionBudgets from a
 * caller's store (no informer factory), and the candidate search and choice
 * (kube-scheduler v1.28 framework/preemption.Evaluator with
 * defaultpreemption's SelectVictimsOnNode), for tests.
 *
 * Threads: the functions run on the scheduling thread (PostFilter), the dry
 * runs on the handle's parallelizer.
 * Memory: candidates are owned by the caller (plugin_preemption_candidates_free).
 */
#ifndef PLUGIN_DEFAULT_PREEMPTION_H
#define PLUGIN_DEFAULT_PREEMPTION_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"

struct kube_store;

#define PREEMPTION_NAME "DefaultPreemption"
#define PREEMPTION_DEFAULT_MIN_PCT 10
#define PREEMPTION_DEFAULT_MIN_ABS 100

/* One node where preempting victims lets the pod fit (the framework's
 * type, which scheduler extenders also take). */
typedef fw_preemption_candidate plugin_preemption_candidate;

void plugin_preemption_candidates_free(plugin_preemption_candidate *c, size_t n);

/* calculateNumCandidates for n potential nodes. */
int32_t plugin_default_preemption_num_candidates(const void *self, int32_t n);

/* findCandidates: the dry runs over the nodes where preemption might help
 * (d's status not UnschedulableAndUnresolvable). *out / *n the candidates
 * (non-PDB-violating first), statuses receives the status of every node
 * that is not a candidate (fw_diagnosis_add_node). Returns NULL or an
 * FW_ERROR status (then *out may still hold candidates). */
fw_status *plugin_default_preemption_find_candidates(void *self, fw_cycle_state *cs,
                                                     const fw_pod_info *pod, const fw_diagnosis *d,
                                                     plugin_preemption_candidate **out, size_t *n,
                                                     fw_diagnosis *statuses);

/* SelectCandidate / pickOneNodeForPreemption: the index of the best
 * candidate (fewest PDB violations, lowest highest-priority victim,
 * smallest sum of priorities, fewest victims, latest start time of the
 * highest-priority victims, then the first), or -1 when n == 0. */
long plugin_default_preemption_select(const plugin_preemption_candidate *c, size_t n);

#endif
