/*
 * scheduler/plugins/interpodaffinity/internal.h - what InterPodAffinity's
 * files share: the plugin's state, the incoming pod's merged terms and the
 * term matching filtering and scoring both use. Not a public header: only
 * this folder includes it.
 */
#ifndef SCHED_PLUGINS_IPA_INTERNAL_H
#define SCHED_PLUGINS_IPA_INTERNAL_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/codec/selector.h"
#include "plugins/helper.h"
#include "plugins/interpodaffinity/inter_pod_affinity.h"
#include "plugins/plugins.h"
#include "plugins/podtopologyspread/pairs.h"

#define NAME "InterPodAffinity"
#define PRE_FILTER_KEY "PreFilter" NAME
#define PRE_SCORE_KEY "PreScore" NAME
#define ERR_EXISTING_ANTI "node(s) didn't satisfy existing pods anti-affinity rules"
#define ERR_AFFINITY "node(s) didn't match pod affinity rules"
#define ERR_ANTI "node(s) didn't match pod anti-affinity rules"
#define DEFAULT_HARD_WEIGHT 1
#define MAX_HARD_WEIGHT 100

typedef struct inter_pod_affinity {
    fw_handle *h;
    int32_t hard_weight;
    int ignore_preferred_of_existing;
    plugin_ns_lister *ns; /* NULL: no namespace known */
} inter_pod_affinity;

/* Shared, immutable after build (refcounted): the incoming pod, its
 * namespace (for its labels) and its merged terms of one kind. */
typedef struct incoming {
    atomic_int refs;
    fw_pod_info *pod;
    kube_object *ns; /* the pod's namespace, or NULL */
    kube_arena arena;
    fw_affinity_term *affinity, *anti; /* required (PreFilter) */
    size_t n_affinity, n_anti;
    fw_weighted_affinity_term *pref, *pref_anti; /* preferred (PreScore) */
    size_t n_pref, n_pref_anti;
} incoming;

/* The cycle's snapshot; a handle without one (tests) has no nodes. */
const fw_snapshot *ipa_snapshot_of(const inter_pod_affinity *pl);

/* Drops a reference; the last frees it. NULL-safe. */
void ipa_incoming_unref(incoming *in);

/* Takes a reference; returns in. */
incoming *ipa_incoming_ref(incoming *in);

/* The incoming pod with its required (preferred == 0) or preferred terms
 * merged. *out NULL on error (KUBE_ENOMEM). */
int ipa_incoming_new(const inter_pod_affinity *pl, const fw_pod_info *pi, int preferred,
                     incoming **out);

/* Matching the existing pods' terms against the incoming pod uses the
 * labels of its namespace (GetNamespaceLabelsSnapshot). */
int ipa_existing_term_matches_incoming(const fw_affinity_term *t, const incoming *in);

/* The incoming pod's merged terms match without namespace labels. */
int ipa_incoming_term_matches(const fw_affinity_term *t, const kube_pod *pod);

/* podMatchesAllAffinityTerms: at least one term, all matching. */
int ipa_matches_all_terms(const fw_affinity_term *terms, size_t n, const kube_pod *pod);

/* The status of a term whose label selector does not parse. */
fw_status *ipa_parse_error_status(fw_code code, const char *prefix);

/* The extension points (filtering.c, scoring.c), with the framework's
 * contracts (framework.h). */
fw_status *ipa_pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                          fw_pre_filter_result **result);

fw_status *ipa_pre_filter_add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_pod_info *pod_to_add, const fw_node_info *ni);

fw_status *ipa_pre_filter_remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_remove, const fw_node_info *ni);

fw_status *ipa_filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                      const fw_node_info *ni);

fw_status *ipa_pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *const *nodes, size_t n);

fw_status *ipa_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                     const fw_node_info *ni, int64_t *out);

/* Score for a whole list at once (the descriptor's score_nodes). */
fw_status *ipa_score_nodes(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                           const fw_node_info *const *nodes, size_t n, fw_node_score *scores);

fw_status *ipa_normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                               fw_node_score *scores, size_t n);

#endif
