/*
 * scheduler/plugins/node_name.c - NodeName (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/nodename): a pod with spec.nodeName fits
 * only the node of that name.
 */
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define ERR_REASON "node(s) didn't match the requested node name"

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

int plugin_node_name_fits(const kube_pod *p, const kube_node *node)
{
    return !p->node_name[0] || strcmp(p->node_name, node->base.meta.name) == 0;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    if (!ni->node)
        return fw_status_new(FW_ERROR, "node not found");
    if (!plugin_node_name_fits(pod->pod, ni->node))
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON);
    return NULL;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_node_name = {
    .name = "NodeName",
    .create = create,
    .filter = filter,
    .events_to_register = events_to_register,
};
