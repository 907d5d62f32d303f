/*
 * scheduler/plugins/registry.c - the in-tree registry (registry.h).
 */
#include "plugins/registry.h"

#include "plugins/plugins.h"

#include <string.h>

#include "kube/util/errors.h"
#include "plugins/stickyvm/stickyvm.h"

static const fw_plugin_desc *const in_tree[] = {
    &plugin_priority_sort,
    &plugin_scheduling_gates,
    &plugin_node_unschedulable,
    &plugin_node_name,
    &plugin_taint_toleration,
    &plugin_node_affinity,
    &plugin_node_ports,
    &plugin_node_resources_fit,
    &plugin_node_resources_balanced_allocation,
    &plugin_image_locality,
    &plugin_default_binder,
    &plugin_stickyvm,
    &plugin_pod_topology_spread,
    &plugin_inter_pod_affinity,
    &plugin_volume_binding,
    &plugin_volume_restrictions,
    &plugin_volume_zone,
    &plugin_node_volume_limits,
    &plugin_default_preemption,
    &plugin_ebs_limits,
    &plugin_gce_pd_limits,
    &plugin_azure_disk_limits,
};

static const fw_registry in_tree_registry = {in_tree, sizeof(in_tree) / sizeof(in_tree[0]), NULL};

const fw_registry *plugin_registry_in_tree(void)
{
    return &in_tree_registry;
}

int plugin_registry_with_args(const fw_registry *base, const plugin_factory_args *fa,
                              plugin_registry *out)
{
    memset(out, 0, sizeof(*out));
    if (base->n > PLUGIN_REGISTRY_MAX)
        return KUBE_ERANGE;
    for (size_t i = 0; i < base->n; i++)
        if (strcmp(base->plugins[i]->name, STICKYVM_NAME) == 0)
            out->deps[i] = (void *)&fa->pins;
    out->reg = (fw_registry){base->plugins, base->n, out->deps};
    return KUBE_OK;
}
