/*
 * scheduler/plugins/podtopologyspread/internal.h - what PodTopologySpread's
 * files share: the plugin's state, its constraints, and the helpers common
 * to filtering and scoring. Not a public header: only this folder
 * includes it.
 */
#ifndef SCHED_PLUGINS_PTS_INTERNAL_H
#define SCHED_PLUGINS_PTS_INTERNAL_H

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/codec/selector.h"
#include "kube/types/workload.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/podtopologyspread/pairs.h"

#define NAME "PodTopologySpread"
#define PRE_FILTER_KEY "PreFilter" NAME
#define PRE_SCORE_KEY "PreScore" NAME
#define ERR_REASON_CONSTRAINTS_NOT_MATCH "node(s) didn't match pod topology spread constraints"
#define ERR_REASON_NODE_LABEL_NOT_MATCH ERR_REASON_CONSTRAINTS_NOT_MATCH " (missing required label)"
#define LABEL_HOSTNAME "kubernetes.io/hostname"
#define INVALID_SCORE (-1)
#define MAX_PATH_NUM ((int64_t)2147483647) /* math.MaxInt32 */

/* Matching pods per node for one (namespace, selector), valid while the
 * node info's generation is unchanged: PreFilter recounts only the nodes
 * that changed since a pod with the same selector was last scheduled. */
typedef struct node_count {
    const fw_node_info *ni; /* NULL: empty slot */
    int64_t generation;
    int64_t count;
} node_count;

typedef struct count_cache {
    char *sig;         /* owned "namespace\x1fselector"; NULL: unused */
    uint64_t used;     /* LRU tick */
    node_count *slots; /* open addressing on ni */
    size_t cap, len;
} count_cache;

#define CACHE_SELECTORS 16

/* One default constraint (args.defaultConstraints or the system ones). */
typedef struct pts_default {
    const char *topology_key; /* static or in the plugin's arena */
    int32_t max_skew;
    int32_t min_domains; /* 1 unless set */
    kube_unsatisfiable when;
    kube_inclusion_policy affinity_policy, taints_policy;
} pts_default;

/* The caches are plugin state across cycles, read and written only by
 * PreFilter (the scheduling thread; its parallel counting touches one
 * node's slots per task); Filter and Score never see them. The defaults
 * and listers are immutable after create(). */
typedef struct pod_topology_spread {
    fw_handle *h;
    count_cache caches[CACHE_SELECTORS];
    uint64_t tick;
    const pts_default *defaults;
    size_t n_defaults;
    int system_defaulted; /* defaultingType System */
    kube_arena arena;     /* the List defaults */
    kube_workload_listers listers;
} pod_topology_spread;

typedef struct pts_constraint {
    const char *topology_key;            /* borrowed from the pod */
    const kube_label_selector *selector; /* the pod's, or merged in the arena */
    int32_t max_skew;
    int32_t min_domains;
    kube_inclusion_policy affinity_policy, taints_policy;
    size_t key;     /* index into keys[] */
    int self_match; /* the selector matches the pod itself */
} pts_constraint;

/* Constraints of one action, immutable once built and shared by clones
 * (refcounted). The pod is referenced: its strings back the constraints. */
typedef struct pts_constraints {
    atomic_int refs;
    fw_pod_info *pod;
    kube_arena arena;
    pts_constraint *items;
    size_t n;
    const char **keys; /* distinct topology keys */
    size_t n_keys;
} pts_constraints;

/* The cycle's snapshot; a handle without one (tests) has no nodes. */
const fw_snapshot *pts_snapshot_of(const pod_topology_spread *pl);

/* Drops a reference; the last frees the constraints and their pod. NULL-safe. */
void pts_constraints_unref(pts_constraints *c);

/* Takes a reference (c may be NULL); returns c. */
pts_constraints *pts_constraints_ref(pts_constraints *c);

/* The pod's constraints with this action into *out (NULL when there are
 * none); a pod with no constraints of either action gets the default ones
 * (default_constraints). KUBE_OK, KUBE_EINVAL (a selector of the pod's
 * does not parse) or KUBE_ENOMEM. */
int pts_get_constraints(const pod_topology_spread *pl, fw_pod_info *pi, kube_unsatisfiable action,
                        pts_constraints **out);

/* The node's value of label key, or NULL. */
const char *pts_node_label(const kube_node *node, const char *key);

/* nodeLabelsMatchSpreadConstraints: the node has every topology key. */
int pts_node_has_all_keys(const kube_node *node, const pts_constraints *c);

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node). */
int pts_required_node_affinity_matches(const kube_pod *pod, const kube_node *node);

/* matchNodeInclusionPolicies; affinity_ok is the node's
 * required_node_affinity_matches(), computed once per node. */
int pts_match_inclusion_policies(const pts_constraint *t, const kube_pod *pod,
                                 const kube_node *node, int affinity_ok);

/* The selector matches the pod's labels. */
int pts_selector_matches_pod(const kube_label_selector *s, const kube_pod *p);

/* countPodsMatchSelector: pods of namespace ns, not terminating. */
int64_t pts_count_matching_pods(const fw_node_info *ni, const kube_label_selector *s,
                                const char *ns);

/* The extension points (filtering.c, scoring.c), with the framework's
 * contracts (framework.h). */
fw_status *pts_pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                          fw_pre_filter_result **result);

fw_status *pts_pre_filter_add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_pod_info *pod_to_add, const fw_node_info *ni);

fw_status *pts_pre_filter_remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_remove, const fw_node_info *ni);

fw_status *pts_filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                      const fw_node_info *ni);

fw_status *pts_pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *const *nodes, size_t n);

fw_status *pts_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                     const fw_node_info *ni, int64_t *out);

fw_status *pts_normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                               fw_node_score *scores, size_t n);

#endif
