/*
 * scheduler/plugins/noderesources/resource_allocation.h - the resource allocation scorer
 * NodeResourcesFit (LeastAllocated, MostAllocated,
 * RequestedToCapacityRatio) and NodeResourcesBalancedAllocation share
 * (kube-scheduler v1.28 noderesources/resource_allocation.go).
 *
 * For each configured resource the scorer takes the node's allocatable and
 * the node's requested amount plus the pod's request: cpu and memory from
 * NodeInfo.Requested (use_requested) or NodeInfo.NonZeroRequested, the
 * rest from NodeInfo.Requested. A scalar resource the pod does not request,
 * and any resource the node does not offer, is left out (0, 0). The
 * strategy's function then turns the vectors into a score.
 *
 * The pod's request of each resource (calculatePodResourceRequestList) is
 * computed once per cycle in PreScore and kept in the cycle state; Score
 * falls back to computing it when PreScore did not run.
 *
 * Args: the resources list ({name, weight}) both plugins decode.
 *
 * Memory: a plugin_res_scorer owns its resources and shape arrays
 * (plugin_res_scorer_free). Scoring allocates nothing for up to
 * PLUGIN_RES_STACK resources.
 * Threads: plugin_res_score_node may run concurrently on one scorer.
 */
#ifndef PLUGIN_RESOURCE_ALLOCATION_H
#define PLUGIN_RESOURCE_ALLOCATION_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "plugins/helper.h"

#define PLUGIN_RES_STACK 16

typedef enum plugin_res_kind {
    PLUGIN_RES_CPU = 0,
    PLUGIN_RES_MEMORY,
    PLUGIN_RES_EPHEMERAL_STORAGE,
    PLUGIN_RES_SCALAR, /* schedutil.IsScalarResourceName */
    PLUGIN_RES_OTHER   /* never offered by a node: always left out */
} plugin_res_kind;

/* config.ResourceSpec, classified once. */
typedef struct plugin_res_spec {
    const char *name; /* interned (kube_intern_name): never freed */
    int64_t weight;
    plugin_res_kind kind;
} plugin_res_spec;

/* helper.FunctionShapePoint, score already on the 0..100 scale. */
typedef struct plugin_shape_point {
    int64_t utilization;
    int64_t score;
} plugin_shape_point;

typedef struct plugin_res_scorer plugin_res_scorer;

/* A strategy: the node score from the per-resource requested and
 * allocatable amounts (s->n entries each). */
typedef int64_t (*plugin_res_score_fn)(const plugin_res_scorer *s, const int64_t *requested,
                                       const int64_t *allocatable);

struct plugin_res_scorer {
    plugin_res_spec *resources; /* owned */
    size_t n;
    int use_requested; /* cpu/memory from Requested, not NonZeroRequested */
    plugin_res_score_fn fn;
    plugin_shape_point *shape; /* owned; RequestedToCapacityRatio only */
    size_t n_shape;
};

/* config.ResourceSpec lists (args resources). *out is allocated here and
 * freed by the caller with free(), also on error (it may then be partly
 * filled, *n counting the entries begun). KUBE_OK or KUBE_ENOMEM. */
/* The default list: cpu and memory, weight 1 each. */
int plugin_res_specs_default(plugin_res_spec **out, size_t *n);
/* The list decoded from arr ([{name, weight}], a weight of 0 defaulting to
 * 1; each element reported under "<path>[i]"), or the default list when
 * arr is NULL or empty. *n must be 0 on entry. */
int plugin_res_specs_parse(const cJSON *arr, const char *path, plugin_res_spec **out, size_t *n,
                           plugin_field_errs *e);

/* Frees the arrays of s and zeroes it. NULL-safe. */
void plugin_res_scorer_free(plugin_res_scorer *s);

/* PreScore: stores the pod's request of each resource of s in cs under key
 * (calculatePodResourceRequestList: cpu/memory are PodRequests with
 * 100m/200Mi for containers lacking them unless s->use_requested). NULL or
 * an error status (caller owns). */
fw_status *plugin_res_pre_score(const plugin_res_scorer *s, fw_cycle_state *cs, const char *key,
                                const fw_pod_info *pod);

/* Score of one node: reads the requests stored under key (computing them
 * when absent) and applies s->fn. Errors: "node not found" for a node info
 * without a node, "resources not found" when s has no resources. key is
 * of static storage (fw_cycle_state_read_static). */
fw_status *plugin_res_score_node(const plugin_res_scorer *s, const fw_cycle_state *cs,
                                 const char *key, const fw_pod_info *pod, const fw_node_info *ni,
                                 int64_t *score);

/* plugin_res_score_node for every node of nodes[0..n) at once, into
 * scores[i].score (a plugin's score_nodes): the requests are read once.
 * NULL, or an error status (caller owns) when a node would fail, or s has
 * more than PLUGIN_RES_STACK resources or none (the framework then scores
 * node by node). */
fw_status *plugin_res_score_nodes(const plugin_res_scorer *s, const fw_cycle_state *cs,
                                  const char *key, const fw_pod_info *pod,
                                  const fw_node_info *const *nodes, size_t n,
                                  fw_node_score *scores);

/* a * b with Go's two's-complement wrap-around (no UB on overflow). */
static inline int64_t plugin_mul_wrap(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

#endif
