/*
 * scheduler/plugins/node_unschedulable.c - NodeUnschedulable (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/nodeunschedulable): filters out
 * nodes with spec.unschedulable unless the pod tolerates the
 * node.kubernetes.io/unschedulable:NoSchedule taint.
 */
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define ERR_REASON_UNKNOWN_CONDITION "node(s) had unknown conditions"
#define ERR_REASON_UNSCHEDULABLE "node(s) were unschedulable"

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

int plugin_node_unschedulable_fits(const kube_pod *pod, const kube_node *node)
{
    static const kube_taint unschedulable = {"node.kubernetes.io/unschedulable", "",
                                             KUBE_EFFECT_NO_SCHEDULE};

    return !node->unschedulable ||
           plugin_tolerations_tolerate(pod->tolerations, pod->n_tolerations, &unschedulable);
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    if (!ni->node)
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_CONDITION);
    if (plugin_node_unschedulable_fits(pod->pod, ni->node))
        return NULL;
    return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE);
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE_NODE_TAINT, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_node_unschedulable = {
    .name = "NodeUnschedulable",
    .create = create,
    .filter = filter,
    .events_to_register = events_to_register,
};
