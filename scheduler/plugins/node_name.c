/*
 * scheduler/plugins/node_name.c - NodeName (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/nodename): a pod with spec.nodeName fits
 * only the node of that name.
 */
#include <string.h>

#include "kube/errors.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "plugins/plugins.h"

#define ERR_REASON "node(s) didn't match the requested node name"

static int create(const cJSON *args, fw_handle *h, void **self, char *err, size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const char *want = pod->pod->node_name;

    if (!ni->node)
        return fw_status_new(FW_ERROR, "node not found");
    if (want[0] && strcmp(want, ni->node->base.meta.name) != 0)
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON);
    return NULL;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

static size_t events_to_register(void *self, const fw_cluster_event_with_hint **out)
{
    *out = events;
    return sizeof(events) / sizeof(events[0]);
}

const fw_plugin_desc plugin_node_name = {
    .name = "NodeName",
    .create = create,
    .filter = filter,
    .events_to_register = events_to_register,
};
