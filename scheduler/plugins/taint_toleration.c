/*
 * scheduler/plugins/taint_toleration.c - TaintToleration (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/tainttoleration).
 *
 * Filter: the first NoSchedule/NoExecute taint of the node that no
 * toleration of the pod tolerates rejects the node ("node(s) had
 * untolerated taint {key: value}").
 * Score: the number of PreferNoSchedule taints the pod does not tolerate
 * (counting only its tolerations with an empty or PreferNoSchedule
 * effect, collected once per cycle in PreScore), normalised in reverse so
 * fewer intolerable taints score higher.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define PRE_SCORE_KEY "PreScoreTaintToleration"

/* The pod's tolerations that can tolerate a PreferNoSchedule taint (copies
 * whose strings point into the pod being scheduled, which outlives the
 * cycle). */
typedef struct pre_score_state {
    size_t n;
    kube_toleration tols[];
} pre_score_state;

static size_t state_size(size_t n)
{
    return sizeof(pre_score_state) + n * sizeof(kube_toleration);
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const kube_taint *t;

    if (!ni->node)
        return fw_status_error(KUBE_EINVAL, "invalid nodeInfo");
    t = plugin_find_untolerated_taint(ni->node, pod->pod,
                                      PLUGIN_EFFECT(KUBE_EFFECT_NO_SCHEDULE) |
                                          PLUGIN_EFFECT(KUBE_EFFECT_NO_EXECUTE));
    if (t)
        return fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                              "node(s) had untolerated taint {%s: %s}", t->key, t->value);
    return NULL;
}

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n)
{
    const kube_pod *p = pod->pod;
    pre_score_state *s;

    if (n == 0)
        return NULL;
    s = fw_flat_state_alloc(state_size(p->n_tolerations));
    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    s->n = 0;
    for (size_t i = 0; i < p->n_tolerations; i++) {
        kube_taint_effect e = p->tolerations[i].effect;
        if (e == KUBE_EFFECT_ALL || e == KUBE_EFFECT_PREFER_NO_SCHEDULE)
            s->tols[s->n++] = p->tolerations[i];
    }
    int rc = fw_cycle_state_write(cs, PRE_SCORE_KEY, s, &fw_flat_state_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

/* The taints of node with effect PreferNoSchedule that the pod's
 * PreferNoSchedule tolerations (s) do not tolerate. */
static int64_t intolerable_count(const pre_score_state *s, const kube_node *node)
{
    int64_t count = 0;

    for (size_t i = 0; i < node->n_taints; i++) {
        const kube_taint *t = &node->taints[i];
        if (t->effect == KUBE_EFFECT_PREFER_NO_SCHEDULE &&
            !plugin_tolerations_tolerate(s->tols, s->n, t))
            count++;
    }
    return count;
}

static fw_status *node_not_found(const fw_node_info *ni)
{
    return fw_status_error(KUBE_ENOTFOUND, "getting node %s from Snapshot: not found",
                           ni->name ? ni->name : "");
}

static fw_status *state_not_found(void)
{
    return fw_status_error(KUBE_ENOTFOUND, "failed to read \"%s\" from cycleState: not found",
                           PRE_SCORE_KEY);
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    const pre_score_state *s = fw_cycle_state_read_static(cs, PRE_SCORE_KEY);

    *out = 0;
    if (!ni->node)
        return node_not_found(ni);
    if (!s)
        return state_not_found();
    *out = intolerable_count(s, ni->node);
    return NULL;
}

static fw_status *score_nodes(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    const pre_score_state *s = fw_cycle_state_read_static(cs, PRE_SCORE_KEY);

    if (!s)
        return state_not_found();
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i]->node)
            return node_not_found(nodes[i]);
        scores[i].score = intolerable_count(s, nodes[i]->node);
    }
    return NULL;
}

static fw_status *normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                  fw_node_score *scores, size_t n)
{
    plugin_default_normalize_score(FW_MAX_NODE_SCORE, 1, scores, n);
    return NULL;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_taint_toleration = {
    .name = "TaintToleration",
    .create = create,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .normalize_score = normalize_score,
    .events_to_register = events_to_register,
};
